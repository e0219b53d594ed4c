//! drop7: Drop7 Hardcore exactly as the drop7-bench reference engines play it,
//! on a packed 28-byte board, with the fair expectimax player.
pub mod board;
pub mod cascade;
pub mod error;
pub mod formats;
pub mod frames;
#[doc(hidden)]
pub mod fuzzing;
pub mod game;
pub mod gravity;
pub mod input;
pub mod latent;
pub mod leaf;
pub mod parallel;
pub mod player;
pub mod policy;
pub mod position;
pub mod records;
pub mod reference;
pub mod rng;
pub mod round;
pub mod runner;
pub mod runspec;
pub mod search;
pub mod strata;
pub mod table;
pub mod tape;

pub use board::Board;
pub use error::{BoardError, MoveError};
pub use game::{Game, GameState, MoveOutcome, TerminalReason};
pub use position::Position;

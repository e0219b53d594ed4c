//! The public state a player (and the search) sees: board, visible next disc,
//! drops left before the rise, and whether the game is over (search.md §2).

use crate::board::Board;

/// Drops per level in Hardcore (rules.md §2).
pub const DROPS_PER_LEVEL: u8 = 5;

/// Public game position: what a policy may look at.
///
/// `next_disc` is 1..=7; `moves_remaining` is 1..=5 (0 only after a blocked rise,
/// which ends the game).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Position {
    /// The packed board.
    pub board: Board,
    /// The disc that will be dropped next (1..=7).
    pub next_disc: u8,
    /// Drops left before the next rise (1..=5).
    pub moves_remaining: u8,
    /// Whether the game is over.
    pub game_over: bool,
}

impl Position {
    /// The opening position with the given first disc.
    pub const fn initial(next_disc: u8) -> Position {
        Position {
            board: Board::initial(),
            next_disc,
            moves_remaining: DROPS_PER_LEVEL,
            game_over: false,
        }
    }
}

//! stub
use crate::position::Position;
pub use crate::reference::leaf::{FAIR_TERMINAL_UTILITY, FAIR_WEIGHTS};
pub trait Leaf { fn evaluate(&mut self, pos: &Position) -> f64; }
#[derive(Clone, Copy, Debug, Default)] pub struct FairLeaf;
impl Leaf for FairLeaf { fn evaluate(&mut self, pos: &Position) -> f64 { Self::value(pos) } }
impl FairLeaf {
  pub fn value(pos: &Position) -> f64 { crate::reference::leaf::fair_leaf(&pos.board.to_cells(), pos.next_disc, pos.moves_remaining, pos.game_over) }
  pub fn terms(pos: &Position) -> [f64;19] { crate::reference::leaf::fair_leaf_terms(&pos.board.to_cells(), pos.next_disc, pos.moves_remaining) }
}

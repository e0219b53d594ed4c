//! Simple policies used by the golden traces and cohort runs (rules.md §10).

use crate::board::Board;
use crate::rng::{Mulberry32, random_policy_seed};

/// Center-out column order `[3, 2, 4, 1, 5, 0, 6]`, used by the center policy,
/// the search's root and max nodes, and tie-breaks.
pub const COLUMN_ORDER: [usize; 7] = [3, 2, 4, 1, 5, 0, 6];

/// The center policy: first legal column in order 3, 2, 4, 1, 5, 0, 6;
/// `None` if every column is full.
#[inline]
pub fn center_first(board: &Board) -> Option<usize> {
    COLUMN_ORDER.into_iter().find(|&c| board.is_legal(c))
}

/// The repository's random parity policy: its own Mulberry32 stream seeded with
/// `mix32(seed ^ 0x54524143)`; per move one draw `b`, then
/// `legal[(b * |legal|) >> 32]` over the legal columns in ascending order.
#[derive(Clone, Copy, Debug)]
pub struct RandomPolicy {
    rng: Mulberry32,
}

impl RandomPolicy {
    /// The policy stream of game `seed`.
    pub const fn new(seed: u32) -> RandomPolicy {
        RandomPolicy {
            rng: Mulberry32::new(random_policy_seed(seed)),
        }
    }

    /// Chooses a column (draws once); `None` if no column is legal.
    pub fn choose(&mut self, board: &Board) -> Option<usize> {
        let b = self.rng.next_bits();
        let mut legal = [0usize; 7];
        let mut n = 0;
        for c in 0..7 {
            if board.is_legal(c) {
                legal[n] = c;
                n += 1;
            }
        }
        if n == 0 {
            return None;
        }
        Some(legal[((u64::from(b) * n as u64) >> 32) as usize])
    }
}

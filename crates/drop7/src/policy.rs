//! Simple policies used by the golden traces and cohort runs (rules.md §10).

use crate::board::Board;
use crate::game::apply_move;
use crate::gravity::Portable;
use crate::position::Position;
use crate::rng::{Mulberry32, random_policy_seed};
use crate::runner::{EngineGame, Policy};

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

    /// The random choice for `pos` alone (no stream carried from move to
    /// move): one draw of the stream of [`RandomPolicy::new`] seeded with a
    /// hash of the board, next disc and moves to the rise, so the same
    /// position always gets the same column, whatever was asked before.
    /// `drop7 d7p --policy random` answers with this (a D7P policy is a
    /// function of the position); `None` if no column is legal.
    pub fn choose_for_position(pos: &Position) -> Option<usize> {
        let h = crate::table::Key::new(pos, 0).hash();
        RandomPolicy::new((h ^ (h >> 32)) as u32).choose(&pos.board)
    }
}

/// The greedy **test-data** policy (rules.md §10): the column with the best
/// immediate `scoreDelta`, preferring moves that do not end the game, ties to
/// the earlier column in center order 3, 2, 4, 1, 5, 0, 6.
///
/// Not a public-information player: it plays every candidate move on a copy
/// of the real game, so it peeks at that move's real randomness (reveal values,
/// hidden gray values). It exists so that the reference's greedy games can be
/// regenerated from the policy itself. Given only a position
/// ([`Policy::choose`], e.g. under D7P), it rates moves with every reveal
/// taken as a 4 instead.
#[derive(Clone, Copy, Debug, Default)]
pub struct GreedyPolicy;

impl GreedyPolicy {
    /// The greedy choice among the legal columns, rating each with `try_move`
    /// (`Some((scoreDelta, ends the game))`, `None` if illegal).
    pub fn pick(mut try_move: impl FnMut(usize) -> Option<(u64, bool)>) -> Option<usize> {
        let mut best: Option<(usize, bool, u64)> = None;
        for c in COLUMN_ORDER {
            let Some((delta, terminal)) = try_move(c) else {
                continue;
            };
            let better = match best {
                None => true,
                Some((_, bt, bd)) => (!terminal, delta) > (!bt, bd),
            };
            if better {
                best = Some((c, terminal, delta));
            }
        }
        best.map(|b| b.0)
    }
}

impl Policy for GreedyPolicy {
    fn new_game(&mut self, _seed: u32) {}

    fn choose(&mut self, pos: &Position) -> Option<usize> {
        if pos.game_over {
            return None;
        }
        GreedyPolicy::pick(|c| {
            if !pos.board.is_legal(c) {
                return None;
            }
            let mut p = *pos;
            let s = apply_move(
                Portable,
                &mut p,
                c,
                false,
                &mut crate::latent::ConstDisc(4),
                &mut (),
            );
            Some((s.score_delta, s.terminal.is_some()))
        })
    }

    fn choose_in<G: EngineGame>(&mut self, game: &G) -> Option<usize> {
        if game.position().game_over {
            return None;
        }
        GreedyPolicy::pick(|c| {
            let mut copy = game.clone();
            copy.play_move(c, &mut ())
                .ok()
                .map(|s| (s.score_delta, s.terminal.is_some()))
        })
    }

    fn may_time_choices(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The position's random choice depends on the position alone: asked
    /// again (after other positions) it is the same column; the positions
    /// of one opening do not all get the same column; a full board gets none.
    #[test]
    fn random_choice_for_a_position_is_a_function_of_it() {
        let positions: Vec<Position> = (1..=7)
            .flat_map(|d| {
                (1..=5).map(move |r| Position {
                    moves_remaining: r,
                    ..Position::initial(d)
                })
            })
            .collect();
        let first: Vec<Option<usize>> = positions
            .iter()
            .map(RandomPolicy::choose_for_position)
            .collect();
        let again: Vec<Option<usize>> = positions
            .iter()
            .rev()
            .map(RandomPolicy::choose_for_position)
            .collect();
        assert!(first.iter().eq(again.iter().rev()));
        assert!(first.iter().all(|c| c.is_some_and(|c| c < 7)));
        assert!(first.iter().any(|c| *c != first[0]), "{first:?}");
        let full = Position {
            board: Board::from_cells(&[1; crate::board::CELLS]),
            ..Position::initial(4)
        };
        assert_eq!(RandomPolicy::choose_for_position(&full), None);
    }
}

//! Property tests of the split move ([`drop7::game::begin_move`] then
//! [`drop7::game::finish_move`], what the search's chance nodes use to play
//! a revealing move's draw-free part once) against the plain one-piece
//! [`drop7::game::apply_move`]: same afterstate, summary, waves, and the same
//! calls on the source of reveal values (each reveal's column and covered
//! cells below, each rise), for several sources finishing one prefix, on
//! both gravity paths.

use drop7::board::{Board, CELLS, Cells, SIZE};
use drop7::cascade::Wave;
use drop7::game::{Driver, Game, MoveStart, apply_move, begin_move, finish_move};
use drop7::gravity::{Bmi2, Gravity, Portable};
use drop7::position::Position;
use drop7::rng::{DiscSource, Mulberry32};
use drop7::strata::StratifiedRandom;
use proptest::prelude::*;

/// A source that logs every call it gets: `(column, covered below)` per reveal,
/// `(9, 9)` per rise.
struct Logged {
    inner: Box<dyn DiscSource>,
    calls: Vec<(usize, u32)>,
}

impl DiscSource for Logged {
    fn draw_disc(&mut self) -> u8 {
        self.calls.push((8, 8));
        self.inner.draw_disc()
    }
    fn reveal_disc(&mut self, column: usize, covered_below: u32) -> u8 {
        self.calls.push((column, covered_below));
        self.inner.draw_disc()
    }
    fn rise(&mut self) {
        self.calls.push((9, 9));
    }
}

/// Plays `column` of `pos` both ways with each of a few sources; asserts
/// equal results. Returns whether the move paused at a reveal.
fn same_move<G: Gravity>(
    g: G,
    pos: &Position,
    column: usize,
    settled: bool,
    seed: u32,
) -> Result<bool, TestCaseError> {
    let mut head: Vec<Wave> = Vec::new();
    let start = begin_move(g, pos, column, settled, &mut head);
    let sources: Vec<Box<dyn Fn() -> Box<dyn DiscSource>>> = vec![
        Box::new(move || Box::new(Mulberry32::new(seed))),
        Box::new(move || Box::new(Mulberry32::new(seed ^ 0x5555))),
        Box::new(move || Box::new(StratifiedRandom::new(seed, 0, 7))),
        Box::new(move || Box::new(StratifiedRandom::new(seed, 6, 7))),
        Box::new(move || Box::new(StratifiedRandom::new(seed, 3, 5))),
    ];
    for make in &sources {
        let mut want_pos = *pos;
        let mut want_rng = Logged {
            inner: make(),
            calls: Vec::new(),
        };
        let mut want_waves: Vec<Wave> = Vec::new();
        let want = apply_move(
            g,
            &mut want_pos,
            column,
            settled,
            &mut want_rng,
            &mut want_waves,
        );
        let mut got_rng = Logged {
            inner: make(),
            calls: Vec::new(),
        };
        let mut got_waves = head.clone();
        let (got_pos, got) = match &start {
            MoveStart::Done(p, m) => (*p, *m),
            MoveStart::Paused(prefix) => finish_move(g, prefix, &mut got_rng, &mut got_waves),
        };
        prop_assert_eq!(want, got);
        prop_assert_eq!(want_pos, got_pos);
        prop_assert_eq!(want_waves, got_waves);
        // A finished move reveals nothing and draws nothing; its rise (if
        // any) is not reported.
        let want_calls: Vec<(usize, u32)> = match start {
            MoveStart::Done(..) => Vec::new(),
            MoveStart::Paused(_) => want_rng.calls.clone(),
        };
        prop_assert_eq!(&want_calls, &got_rng.calls);
        if matches!(start, MoveStart::Done(..)) {
            prop_assert!(want_rng.calls.iter().all(|&c| c == (9, 9)));
        }
        // The next move: the same board whatever the route.
        prop_assert!(drop7::cascade::is_settled(&got_pos.board));
    }
    Ok(matches!(start, MoveStart::Paused(_)))
}

fn both_paths(
    pos: &Position,
    column: usize,
    settled: bool,
    seed: u32,
) -> Result<bool, TestCaseError> {
    let paused = same_move(Portable, pos, column, settled, seed)?;
    if let Some(b) = Bmi2::detect() {
        prop_assert_eq!(paused, same_move(b, pos, column, settled, seed)?);
    }
    Ok(paused)
}

/// An arbitrary bottom-packed board, gray-heavy: per column a height and
/// cell codes 1..=9.
fn arb_cells() -> impl Strategy<Value = Cells> {
    (
        proptest::collection::vec(0usize..=7, SIZE),
        proptest::collection::vec(prop_oneof![1u8..=9, 8u8..=9], CELLS),
    )
        .prop_map(|(h, v)| {
            let mut cells = [0u8; CELLS];
            for c in 0..SIZE {
                for k in 0..h[c] {
                    cells[(SIZE - 1 - k) * SIZE + c] = v[k * SIZE + c];
                }
            }
            cells
        })
}

fn legal_column(board: &Board, c: usize) -> Option<usize> {
    (0..7).map(|k| (c + k) % 7).find(|&k| board.is_legal(k))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// Arbitrary boards (mostly unsettled, first wave looked for everywhere)
    /// and the same boards cascaded to rest (drop-local first wave).
    #[test]
    fn split_move_equals_apply_move_on_arbitrary_boards(
        cells in arb_cells(), next in 1u8..=7, moves in 1u8..=5, c in 0usize..7, seed: u32,
    ) {
        let mut pos = Position::initial(next);
        pos.board = Board::from_cells(&cells);
        pos.moves_remaining = moves;
        if let Some(column) = legal_column(&pos.board, c) {
            both_paths(&pos, column, false, seed)?;
        }
        drop7::cascade::resolve(Portable, &mut pos.board, 1, &mut Mulberry32::new(seed ^ 1), &mut ());
        if let Some(column) = legal_column(&pos.board, c) {
            both_paths(&pos, column, true, seed)?;
        }
    }

    /// Reachable positions: a random prefix of a stream game, then every
    /// legal column.
    #[test]
    fn split_move_equals_apply_move_on_reachable_positions(
        game_seed: u32, prefix in 0usize..100, choices in proptest::collection::vec(0usize..7, 100),
        seed: u32,
    ) {
        let mut game = Game::new(Driver::stream(game_seed));
        for &c in choices.iter().take(prefix) {
            if game.is_over() { break; }
            let col = legal_column(game.board(), c).unwrap();
            game.play(col).unwrap();
        }
        let pos = game.state().position;
        if !pos.game_over {
            for column in 0..SIZE {
                if pos.board.is_legal(column) {
                    both_paths(&pos, column, true, seed)?;
                }
            }
        }
    }
}

/// The generators reach both outcomes, and pauses in the rise cascade.
#[test]
fn split_move_covers_every_stop() {
    let (mut done, mut first, mut rise) = (0, 0, 0);
    let mut x = 0x1234_5678u32;
    for _ in 0..20_000 {
        x = x.wrapping_mul(0x9E37_79B9).wrapping_add(0x7F4A_7C15);
        let mut r = Mulberry32::new(x);
        let mut cols = [0u32; SIZE];
        for w in cols.iter_mut() {
            let h = r.draw_disc() as u32 - 1;
            for k in 0..h {
                let v = match r.draw_disc() {
                    7 => 8,
                    6 => 9,
                    d => u32::from(d),
                };
                *w |= v << (4 * k);
            }
        }
        let mut pos = Position::initial(r.draw_disc());
        pos.board = Board::from_columns(cols);
        drop7::cascade::resolve(Portable, &mut pos.board, 1, &mut r, &mut ());
        pos.moves_remaining = 1 + (x % 5) as u8;
        let Some(column) = legal_column(&pos.board, (x >> 8) as usize % 7) else {
            continue;
        };
        match begin_move(Portable, &pos, column, true, &mut ()) {
            MoveStart::Done(..) => done += 1,
            MoveStart::Paused(p) => {
                let mut after = pos;
                apply_move(
                    Portable,
                    &mut after,
                    column,
                    true,
                    &mut Mulberry32::new(1),
                    &mut (),
                );
                let (q, _) = finish_move(Portable, &p, &mut Mulberry32::new(1), &mut ());
                assert_eq!(after, q);
                // Paused in the rise cascade iff the position rose before any reveal.
                if format!("{p:?}").contains("in_rise: true") {
                    rise += 1;
                } else {
                    first += 1;
                }
            }
        }
    }
    assert!(
        done > 1000 && first > 1000 && rise > 10,
        "{done} {first} {rise}"
    );
}

/// Moves that empty the board (clear bonus after the first cascade and, with
/// a rise, after the rise cascade), with and without reveals.
#[test]
fn split_move_clears() {
    let boards = [
        "0000000000000000000000000000000000000000000000000",
        "0000000000000000000000000000000000000000000002000",
        "0000000000000000000000000000000000000000000022000",
        "0000000000000000000000000000000000000000000982000",
        "0000000000000000000000000000000000000000000899000",
    ];
    for text in boards {
        let board: Board = text.parse().unwrap();
        for next in 1..=7 {
            for moves in 1..=5 {
                for column in 0..SIZE {
                    let pos = Position {
                        board,
                        next_disc: next,
                        moves_remaining: moves,
                        game_over: false,
                    };
                    both_paths(&pos, column, false, 7).unwrap();
                    if drop7::cascade::is_settled(&board) {
                        both_paths(&pos, column, true, 7).unwrap();
                    }
                }
            }
        }
    }
}

/// The search's exact use: one prefix per chance node finished by all 7
/// samples with [`StratifiedDraws`] sharing the node's [`RevealRotations`],
/// against the plain [`apply_move`] with [`StratifiedRandom`], on random
/// settled boards, every legal column and every disc, both gravity paths.
#[test]
fn chance_node_samples_equal_apply_move() {
    use drop7::strata::{RevealRotations, StratifiedDraws};
    fn node<G: Gravity>(g: G, pos: &Position, column: usize, seed: u32) -> bool {
        let start = begin_move(g, pos, column, true, &mut ());
        let rotations = RevealRotations::new(seed, 7);
        for s in 0..7 {
            let mut want_pos = *pos;
            let mut want_waves: Vec<Wave> = Vec::new();
            let mut plain = StratifiedRandom::new(seed, s, 7);
            let want = apply_move(g, &mut want_pos, column, true, &mut plain, &mut want_waves);
            let (got_pos, got) = match &start {
                MoveStart::Done(p, m) => (*p, *m),
                MoveStart::Paused(prefix) => {
                    let mut draws = StratifiedDraws::with_rotations(seed, s, 7, rotations);
                    finish_move(g, prefix, &mut draws, &mut ())
                }
            };
            assert_eq!(
                (want_pos, want),
                (got_pos, got),
                "{pos:?} column {column} sample {s}"
            );
        }
        matches!(start, MoveStart::Paused(_))
    }
    let mut r = Mulberry32::new(0xC4A2_CE07);
    let mut paused = 0;
    for _ in 0..3000 {
        let mut cols = [0u32; SIZE];
        for w in cols.iter_mut() {
            let h = r.next_bits() % 7;
            for k in 0..h {
                let v = match r.next_bits() % 10 {
                    8 | 9 => 8 + (r.next_bits() & 1),
                    _ => 1 + r.next_bits() % 7,
                };
                *w |= v << (4 * k);
            }
        }
        let mut pos = Position::initial(1);
        pos.board = Board::from_columns(cols);
        drop7::cascade::resolve(Portable, &mut pos.board, 1, &mut r, &mut ());
        pos.moves_remaining = 1 + (r.next_bits() % 5) as u8;
        let seed = r.next_bits();
        for disc in 1..=7 {
            pos.next_disc = disc;
            for column in (0..SIZE).filter(|&c| pos.board.is_legal(c)) {
                paused += usize::from(node(Portable, &pos, column, seed));
                if let Some(b) = Bmi2::detect() {
                    node(b, &pos, column, seed);
                }
            }
        }
    }
    assert!(paused > 10_000, "{paused}");
}

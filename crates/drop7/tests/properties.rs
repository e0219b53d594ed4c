//! Property tests: the packed engine against the plain reference engine on
//! random reachable states and on arbitrary bottom-packed boards — board,
//! waves, score, flags and random draws consumed must be identical on both
//! gravity paths.

use drop7::board::{Board, CELLS, Cells, SIZE, format_cells};
use drop7::cascade::Wave;
use drop7::game::{Driver, Game, GameState};
use drop7::gravity::{Bmi2, Gravity, Portable};
use drop7::position::Position;
use drop7::reference::engine::{RefGame, RefState};
use drop7::rng::{CountingSource, Mulberry32};
use proptest::prelude::*;

/// Plays `column` from the same state on the packed engine (gravity `g`) and
/// the reference engine with the same Mulberry32 seed; asserts equal results.
fn same_move<G: Gravity>(
    g: G,
    st: &RefState,
    column: usize,
    seed: u32,
) -> Result<(), TestCaseError> {
    let mut r = *st;
    let mut rr = CountingSource {
        inner: Mulberry32::new(seed),
        draws: 0,
    };
    let want = r.play(column, &mut rr);
    let pos = Position {
        board: Board::from_cells(&st.board),
        next_disc: st.next_disc,
        moves_remaining: st.moves_remaining,
        game_over: st.game_over,
    };
    let mut p = GameState::from_position(pos, st.score, st.level, st.moves_played);
    let mut pr = CountingSource {
        inner: Mulberry32::new(seed),
        draws: 0,
    };
    let mut waves: Vec<Wave> = Vec::new();
    let got = p.play_with(g, column, &mut pr, &mut waves);
    match (want, got) {
        (Err(a), Err(b)) => prop_assert_eq!(a, b),
        (Ok(a), Ok(b)) => {
            prop_assert_eq!(&a.waves, &waves);
            prop_assert_eq!(a.score_delta, b.score_delta);
            prop_assert_eq!(a.cleared_board, b.cleared_board);
            prop_assert_eq!(a.level_advanced, b.level_advanced);
            prop_assert_eq!(a.terminal, b.terminal);
        }
        (a, b) => prop_assert!(false, "reference {:?} vs packed {:?}", a, b),
    }
    prop_assert_eq!(format_cells(&r.board), p.position.board.to_string());
    prop_assert_eq!(r.next_disc, p.position.next_disc);
    prop_assert_eq!(r.moves_remaining, p.position.moves_remaining);
    prop_assert_eq!(r.game_over, p.position.game_over);
    prop_assert_eq!(
        (r.score, r.level, r.moves_played),
        (p.score, p.level, p.moves_played)
    );
    prop_assert_eq!(rr.draws, pr.draws);
    Ok(())
}

fn both_paths(st: &RefState, column: usize, seed: u32) -> Result<(), TestCaseError> {
    same_move(Portable, st, column, seed)?;
    if let Some(b) = Bmi2::detect() {
        same_move(b, st, column, seed)?;
    }
    Ok(())
}

/// An arbitrary bottom-packed board: per column a height and cell codes 1..=9.
fn arb_cells() -> impl Strategy<Value = Cells> {
    (
        proptest::collection::vec(0usize..=7, SIZE),
        proptest::collection::vec(1u8..=9, CELLS),
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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// Arbitrary boards (mostly unreachable): every rule path, including
    /// multi-wave chains with reveals, rises and clears.
    #[test]
    fn packed_equals_reference_on_arbitrary_boards(
        cells in arb_cells(), next in 1u8..=7, moves in 1u8..=5, column in 0usize..8, seed: u32,
    ) {
        let mut st = RefState::new(next);
        st.board = cells;
        st.moves_remaining = moves;
        both_paths(&st, column, seed)?;
    }

    /// Settled arbitrary boards (cascaded to rest first): the packed engine's
    /// drop-local first wave must find exactly the reference's poppers.
    #[test]
    fn packed_equals_reference_on_settled_boards(
        cells in arb_cells(), next in 1u8..=7, moves in 1u8..=5, column in 0usize..7, seed: u32,
    ) {
        let mut board = Board::from_cells(&cells);
        drop7::cascade::resolve(Portable, &mut board, 1, &mut Mulberry32::new(seed ^ 1), &mut ());
        prop_assert!(drop7::cascade::is_settled(&board));
        let mut st = RefState::new(next);
        st.board = board.to_cells();
        st.moves_remaining = moves;
        both_paths(&st, column, seed)?;
    }

    /// Reachable states: a random prefix of a stream game, then one move.
    #[test]
    fn packed_equals_reference_on_reachable_states(
        game_seed: u32, prefix in 0usize..120, choices in proptest::collection::vec(0usize..7, 120),
        column in 0usize..7, seed: u32,
    ) {
        let mut packed = Game::new(Driver::stream(game_seed));
        let mut reference = RefGame::new(Driver::stream(game_seed));
        for &c in choices.iter().take(prefix) {
            if packed.is_over() { break; }
            let col = (0..7).map(|k| (c + k) % 7).find(|&k| packed.board().is_legal(k)).unwrap();
            let a = packed.play(col).unwrap();
            let b = reference.play(col).unwrap();
            prop_assert_eq!(a.waves, b.waves);
            prop_assert_eq!(packed.board().to_string(), format_cells(&reference.state.board));
        }
        both_paths(&reference.state, column, seed)?;
    }
}

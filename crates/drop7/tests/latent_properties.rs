//! Property test: in latent-board mode (rules.md §8) the packed engine (both
//! gravity paths) and the plain reference engine play identical games from
//! random scripted luck (discs, hidden rows) and random column choices —
//! position, score, level, waves, hidden values of every covered cell and
//! covered rows consumed, move by move.

use drop7::cascade::Wave;
use drop7::gravity::{Bmi2, Gravity, Portable};
use drop7::latent::TrackedGame;
use drop7::runner::{EngineGame, PackedEngine, ReferenceEngine};
use proptest::prelude::*;

fn same_game<G: Gravity>(
    g: G,
    discs: &[u8],
    rows: &[[u8; 7]],
    picks: &[u8],
) -> Result<(), TestCaseError> {
    let mut a = TrackedGame::latent(PackedEngine(g), rows.to_vec(), discs.to_vec());
    let mut b = TrackedGame::latent(ReferenceEngine, rows.to_vec(), discs.to_vec());
    for &pick in picks {
        if a.position().game_over {
            break;
        }
        let legal: Vec<usize> = (0..7).filter(|&c| a.position().board.is_legal(c)).collect();
        let c = legal[usize::from(pick) % legal.len()];
        let (mut wa, mut wb): (Vec<Wave>, Vec<Wave>) = (Vec::new(), Vec::new());
        let sa = a.play_move(c, &mut wa).unwrap();
        let sb = b.play_move(c, &mut wb).unwrap();
        prop_assert_eq!(sa, sb);
        prop_assert_eq!(wa, wb);
        prop_assert_eq!(a.position(), b.position());
        prop_assert_eq!((a.score(), a.level()), (b.score(), b.level()));
        prop_assert_eq!(a.latent_string(), b.latent_string());
        prop_assert_eq!(a.grays().rows_used(), b.grays().rows_used());
        prop_assert!(a.grays().fault().is_none());
        // Every covered cell has a hidden value, and only covered cells do.
        let cells = a.position().board.to_cells();
        for (i, ch) in a.latent_string().bytes().enumerate() {
            prop_assert_eq!(cells[i] >= 8, ch != b'0', "cell {}", i);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn packed_equals_reference_in_latent_mode(
        discs in prop::collection::vec(1u8..=7, 400),
        rows in prop::collection::vec(prop::array::uniform7(1u8..=7), 90),
        picks in prop::collection::vec(any::<u8>(), 400),
    ) {
        same_game(Portable, &discs, &rows, &picks)?;
        if let Some(b) = Bmi2::detect() {
            same_game(b, &discs, &rows, &picks)?;
        }
    }
}

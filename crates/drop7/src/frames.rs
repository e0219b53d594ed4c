//! A plain cell engine that records the frames of a move (the disc landing,
//! each wave's pops, cracks and reveals, each fall, the rise) for animations:
//! the web page's and the terminal viewer's (`drop7 show`). It draws nothing and knows no hidden values: a move is first
//! played by the core engine ([`crate::latent::TrackedGame`], whatever its
//! luck: seeded driver, scripted round or tape), which reports the values its
//! reveals took, and the frames are then drawn with those values.
//!
//! The rules are those of rules.md §4–§5 (the same order as the core's plain
//! reference engine, reveals in row-major order as there). The game's
//! authoritative state is the core's; these frames are checked against it
//! after every move.

use crate::board::{CELLS, CRACKED, Cells, SIZE, SOLID};
use crate::game::{CLEAR_BONUS, LEVEL_BONUS};
use crate::reference::engine::{apply_gravity, run_length};
use serde::Serialize;

/// One picture of the board during a move.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Frame {
    /// `drop`, `pop`, `fall` or `rise`.
    pub kind: &'static str,
    /// Board, 49 trace characters, row 0 first.
    pub board: String,
    /// Chain depth of a `pop` frame (0 otherwise).
    pub depth: u32,
    /// Cells that popped in a `pop` frame (row-major indexes).
    pub popped: Vec<usize>,
    /// Cells that cracked or were revealed in a `pop` frame.
    pub changed: Vec<usize>,
}

/// What a move did, with its frames.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MoveFrames {
    /// Frames in order; the last one's board is the board after the move.
    pub frames: Vec<Frame>,
    /// Points earned.
    pub score_delta: u64,
    /// A rise happened.
    pub level_advanced: bool,
    /// A clear bonus was paid.
    pub cleared_board: bool,
    /// The move ended the game (`blocked-rise` or `no-legal-column`).
    pub terminal: Option<&'static str>,
    /// Deepest wave of the move (0 if nothing popped).
    pub max_depth: u32,
}

impl MoveFrames {
    /// A move shown without animation, worth `score_delta`.
    pub fn bare(score_delta: u64) -> MoveFrames {
        MoveFrames {
            frames: Vec::new(),
            score_delta,
            level_advanced: false,
            cleared_board: false,
            terminal: None,
            max_depth: 0,
        }
    }
}

/// Formats cells as the 49-character trace board.
pub fn board_text(cells: &Cells) -> String {
    crate::board::format_cells(cells)
}

/// Resolves a cascade from `depth`; returns (points, waves).
fn cascade(
    b: &mut Cells,
    mut depth: u32,
    reveals: &mut impl Iterator<Item = u8>,
    frames: &mut Vec<Frame>,
) -> (u64, u32) {
    let mut points = 0;
    let mut waves = 0;
    loop {
        let start = *b;
        let mut popper = [false; CELLS];
        for (i, p) in popper.iter_mut().enumerate() {
            let v = start[i];
            if (1..=7).contains(&v) {
                let (r, c) = (i / SIZE, i % SIZE);
                *p = run_length(&start, r, c, 0, 1) == v || run_length(&start, r, c, 1, 0) == v;
            }
        }
        let popped: Vec<usize> = (0..CELLS).filter(|&i| popper[i]).collect();
        if popped.is_empty() {
            return (points, waves);
        }
        for &i in &popped {
            b[i] = 0;
        }
        let mut changed = Vec::new();
        for i in 0..CELLS {
            if start[i] != SOLID && start[i] != CRACKED {
                continue;
            }
            let (r, c) = (i / SIZE, i % SIZE);
            let hits = [
                r > 0 && popper[i - SIZE],
                r < 6 && popper[i + SIZE],
                c > 0 && popper[i - 1],
                c < 6 && popper[i + 1],
            ]
            .iter()
            .filter(|&&h| h)
            .count();
            match (start[i], hits) {
                (_, 0) => continue,
                (SOLID, 1) => b[i] = CRACKED,
                // A reveal the core did not report would be a bug; the frames
                // are checked against the core's board after the move.
                _ => b[i] = reveals.next().unwrap_or(SOLID),
            }
            changed.push(i);
        }
        points += popped.len() as u64 * crate::cascade::wave_points(depth);
        waves += 1;
        frames.push(Frame {
            kind: "pop",
            board: board_text(b),
            depth,
            popped,
            changed,
        });
        apply_gravity(b);
        frames.push(Frame {
            kind: "fall",
            board: board_text(b),
            depth,
            popped: Vec::new(),
            changed: Vec::new(),
        });
        depth += 1;
    }
}

/// The frames of `disc` dropped into `column` of `b` with `moves_remaining`
/// drops left before the rise (1..=5), the move's reveals taking the values
/// `reveals` (in the core's reveal order). `None` if the column is full.
pub fn play(
    b: &Cells,
    moves_remaining: u8,
    column: usize,
    disc: u8,
    reveals: &[u8],
) -> Option<MoveFrames> {
    let mut b = *b;
    let b = &mut b;
    let mut reveals = reveals.iter().copied();
    let mut moves_remaining = moves_remaining;
    let mut frames = Vec::new();
    let row = (0..SIZE).rev().find(|&r| b[r * SIZE + column] == 0)?;
    b[row * SIZE + column] = disc;
    frames.push(Frame {
        kind: "drop",
        board: board_text(b),
        depth: 0,
        popped: vec![row * SIZE + column],
        changed: Vec::new(),
    });
    let (mut delta, first_waves) = cascade(b, 1, &mut reveals, &mut frames);
    let mut max_depth = first_waves;
    let mut cleared_board = false;
    if b.iter().all(|&v| v == 0) {
        delta += CLEAR_BONUS;
        cleared_board = true;
    }
    let mut level_advanced = false;
    let mut terminal = None;
    moves_remaining -= 1;
    if moves_remaining == 0 {
        if b[..SIZE].iter().any(|&v| v != 0) {
            terminal = Some("blocked-rise");
        } else {
            b.copy_within(SIZE.., 0);
            b[6 * SIZE..].fill(SOLID);
            frames.push(Frame {
                kind: "rise",
                board: board_text(b),
                depth: 0,
                popped: Vec::new(),
                changed: Vec::new(),
            });
            delta += LEVEL_BONUS;
            level_advanced = true;
            let (pts, rise_waves) = cascade(b, first_waves + 1, &mut reveals, &mut frames);
            delta += pts;
            max_depth += rise_waves;
            if b.iter().all(|&v| v == 0) {
                delta += CLEAR_BONUS;
                cleared_board = true;
            }
        }
    }
    if terminal.is_none() && b[..SIZE].iter().all(|&v| v != 0) {
        terminal = Some("no-legal-column");
    }
    Some(MoveFrames {
        frames,
        score_delta: delta,
        level_advanced,
        cleared_board,
        terminal,
        max_depth,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gravity::Portable;
    use crate::latent::TrackedGame;
    use crate::runner::{EngineGame, PackedEngine};

    /// The frames' last board and score equal the core engine's, move by move,
    /// on headless and stream games.
    #[test]
    fn frames_follow_the_core_engine() {
        for seed in 1..40u32 {
            let mut g = if seed % 2 == 0 {
                TrackedGame::headless(PackedEngine(Portable), seed)
            } else {
                TrackedGame::stream(PackedEngine(Portable), seed)
            };
            let mut reveals = Vec::new();
            while !g.position().game_over {
                let pos = g.position();
                let col = crate::policy::center_first(&pos.board).unwrap();
                let out = g.play_move_logged(col, &mut (), &mut reveals).unwrap();
                let f = play(
                    &pos.board.to_cells(),
                    pos.moves_remaining,
                    col,
                    pos.next_disc,
                    &reveals,
                )
                .unwrap();
                assert_eq!(f.score_delta, out.score_delta);
                assert_eq!(
                    f.frames.last().unwrap().board,
                    board_text(&g.position().board.to_cells())
                );
            }
        }
    }
}

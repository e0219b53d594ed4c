//! A plain cell engine that records the frames of a move (the disc landing,
//! each wave's pops, cracks and reveals, each fall, the rise) for the page's
//! animation, and that can play a tape: reveals then take the hidden value of
//! the revealed cell instead of a random draw (formats.md, recorded game tape).
//!
//! The rules are those of rules.md §4–§5 (the same order as the core's plain
//! reference engine). The live game's authoritative state comes from the core
//! packed engine; these frames are checked against it after every move.

use drop7::board::{CELLS, CRACKED, Cells, SIZE, SOLID};
use drop7::game::{CLEAR_BONUS, LEVEL_BONUS};
use serde::Serialize;

/// Where revealed values and risen rows' hidden values come from.
pub trait RevealSource {
    /// The value of the revealed cell `cell`, whose hidden value is `hidden`.
    fn reveal(&mut self, cell: usize, hidden: u8) -> u8;
    /// Hidden values of the covered row that comes up at a rise.
    fn rise_row(&mut self) -> Result<[u8; SIZE], String>;
}

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

/// Formats cells as the 49-character trace board.
pub fn board_text(cells: &Cells) -> String {
    cells.iter().map(|&v| char::from(b'0' + v)).collect()
}

fn wave_points(depth: u32) -> u64 {
    drop7::cascade::wave_points(depth)
}

fn run_length(b: &Cells, row: usize, col: usize, dr: isize, dc: isize) -> u8 {
    let mut len = 1u8;
    for sign in [-1isize, 1] {
        let (mut r, mut c) = (row as isize + sign * dr, col as isize + sign * dc);
        while (0..7).contains(&r) && (0..7).contains(&c) && b[(r * 7 + c) as usize] != 0 {
            len += 1;
            r += sign * dr;
            c += sign * dc;
        }
    }
    len
}

/// Gravity on cells and their hidden values together.
fn fall(b: &mut Cells, hidden: &mut Cells) {
    for c in 0..SIZE {
        let mut write = SIZE;
        for r in (0..SIZE).rev() {
            let i = r * SIZE + c;
            if b[i] != 0 {
                write -= 1;
                let j = write * SIZE + c;
                if j != i {
                    b[j] = b[i];
                    hidden[j] = hidden[i];
                    b[i] = 0;
                    hidden[i] = 0;
                }
            }
        }
    }
}

/// Resolves a cascade from `depth`; returns (points, waves).
fn cascade(
    b: &mut Cells,
    hidden: &mut Cells,
    mut depth: u32,
    src: &mut impl RevealSource,
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
            hidden[i] = 0;
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
                _ => {
                    b[i] = src.reveal(i, hidden[i]);
                    hidden[i] = 0;
                }
            }
            changed.push(i);
        }
        points += popped.len() as u64 * wave_points(depth);
        waves += 1;
        frames.push(Frame {
            kind: "pop",
            board: board_text(b),
            depth,
            popped,
            changed,
        });
        fall(b, hidden);
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

/// Plays `disc` into the legal `column` (checked by the caller), with
/// `moves_remaining` drops left before the rise (1..=5). Updates `b`,
/// `hidden` and `moves_remaining`.
///
/// # Errors
/// Only from [`RevealSource::rise_row`] (a tape without the row to rise).
pub fn play(
    b: &mut Cells,
    hidden: &mut Cells,
    moves_remaining: &mut u8,
    column: usize,
    disc: u8,
    src: &mut impl RevealSource,
) -> Result<MoveFrames, String> {
    let mut frames = Vec::new();
    let row = (0..SIZE)
        .rev()
        .find(|&r| b[r * SIZE + column] == 0)
        .ok_or_else(|| format!("column {column} is full"))?;
    b[row * SIZE + column] = disc;
    hidden[row * SIZE + column] = 0;
    frames.push(Frame {
        kind: "drop",
        board: board_text(b),
        depth: 0,
        popped: vec![row * SIZE + column],
        changed: Vec::new(),
    });
    let (mut delta, first_waves) = cascade(b, hidden, 1, src, &mut frames);
    let mut max_depth = first_waves;
    let mut cleared_board = false;
    if b.iter().all(|&v| v == 0) {
        delta += CLEAR_BONUS;
        cleared_board = true;
    }
    let mut level_advanced = false;
    let mut terminal = None;
    *moves_remaining -= 1;
    if *moves_remaining == 0 {
        if b[..SIZE].iter().any(|&v| v != 0) {
            terminal = Some("blocked-rise");
        } else {
            let row = src.rise_row()?;
            b.copy_within(SIZE.., 0);
            hidden.copy_within(SIZE.., 0);
            for c in 0..SIZE {
                b[6 * SIZE + c] = SOLID;
                hidden[6 * SIZE + c] = row[c];
            }
            frames.push(Frame {
                kind: "rise",
                board: board_text(b),
                depth: 0,
                popped: Vec::new(),
                changed: Vec::new(),
            });
            *moves_remaining = 5;
            delta += LEVEL_BONUS;
            level_advanced = true;
            let (pts, rise_waves) = cascade(b, hidden, first_waves + 1, src, &mut frames);
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
    Ok(MoveFrames {
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
    use drop7::game::{Driver, Game};
    use drop7::rng::{Mulberry32, headless_reveal_seed};

    struct Draws(Mulberry32);
    impl RevealSource for Draws {
        fn reveal(&mut self, _cell: usize, _hidden: u8) -> u8 {
            use drop7::rng::DiscSource;
            self.0.draw_disc()
        }
        fn rise_row(&mut self) -> Result<[u8; SIZE], String> {
            Ok([0; SIZE])
        }
    }

    /// The frames' last board and score equal the core engine's, move by move.
    #[test]
    fn frames_follow_the_core_engine() {
        for seed in 1..40u32 {
            let mut g = Game::new(Driver::headless(seed));
            let mut cells = g.board().to_cells();
            let mut hidden = [0u8; CELLS];
            let mut rise = 5u8;
            let mut m = 0u32;
            while !g.is_over() {
                let col = drop7::policy::center_first(g.board()).unwrap();
                let disc = g.state().position.next_disc;
                let mut src = Draws(Mulberry32::new(headless_reveal_seed(seed, m)));
                let f = play(&mut cells, &mut hidden, &mut rise, col, disc, &mut src).unwrap();
                let out = g.play(col).unwrap();
                assert_eq!(f.score_delta, out.score_delta);
                assert_eq!(
                    f.frames.last().unwrap().board,
                    board_text(&g.board().to_cells())
                );
                assert_eq!(rise, g.state().position.moves_remaining);
                m += 1;
            }
        }
    }
}

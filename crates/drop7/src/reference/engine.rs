//! The plain reference engine: the rules of rules.md §4–§5 on 49 row-major cell
//! bytes, cell by cell, in the order the spec states them. Slow on purpose;
//! the packed engine ([`crate::game`]) is tested against it.

use crate::board::{CELLS, CRACKED, Cells, SIZE, SOLID};
use crate::cascade::Wave;
use crate::error::MoveError;
use crate::game::{CLEAR_BONUS, Driver, LEVEL_BONUS, TerminalReason};
use crate::rng::{DiscSource, Mulberry32, headless_disc, headless_reveal_seed};

/// The initial board: empty but for a bottom row of solid grays.
pub fn initial_cells() -> Cells {
    let mut b = [0u8; CELLS];
    for c in 0..SIZE {
        b[6 * SIZE + c] = SOLID;
    }
    b
}

/// The full state, row-major.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RefState {
    /// Cells, index `row * 7 + column`, row 0 = top.
    pub board: Cells,
    /// Next disc 1..=7.
    pub next_disc: u8,
    /// Drops left before the rise.
    pub moves_remaining: u8,
    /// 1 + successful rises.
    pub level: u32,
    /// Cumulative score.
    pub score: u64,
    /// Moves played.
    pub moves_played: u32,
    /// Game over flag.
    pub game_over: bool,
}

/// Everything a reference move reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefMove {
    /// Points earned.
    pub score_delta: u64,
    /// Waves, first cascade then rise cascade.
    pub waves: Vec<Wave>,
    /// A clear bonus was paid.
    pub cleared_board: bool,
    /// A rise happened.
    pub level_advanced: bool,
    /// Why the game ended, if it did.
    pub terminal: Option<TerminalReason>,
}

fn wave_points(depth: u32) -> u64 {
    (7.0 * f64::from(depth).powf(2.5)).floor() as u64
}

fn is_numbered(v: u8) -> bool {
    (1..=7).contains(&v)
}

fn is_covered(v: u8) -> bool {
    v == SOLID || v == CRACKED
}

/// Length of the run of occupied cells through (row, col) along (dr, dc)
/// (a numbered disc pops when its value equals the run of its row or column:
/// rules.md §5).
pub fn run_length(b: &Cells, row: usize, col: usize, dr: isize, dc: isize) -> u8 {
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

/// Gravity: every column's discs fall to the bottom, keeping their order.
pub fn apply_gravity(b: &mut Cells) {
    for c in 0..SIZE {
        let stack: Vec<u8> = (0..SIZE)
            .rev()
            .map(|r| b[r * SIZE + c])
            .filter(|&v| v != 0)
            .collect();
        for r in 0..SIZE {
            b[r * SIZE + c] = 0;
        }
        for (i, v) in stack.into_iter().enumerate() {
            b[(SIZE - 1 - i) * SIZE + c] = v;
        }
    }
}

/// Resolves a cascade from `depth`, pushing waves; returns the points.
fn cascade(b: &mut Cells, mut depth: u32, rng: &mut impl DiscSource, waves: &mut Vec<Wave>) -> u64 {
    let mut points = 0;
    loop {
        let start = *b;
        let mut popper = [false; CELLS];
        for i in 0..CELLS {
            let v = start[i];
            if is_numbered(v) {
                let (r, c) = (i / SIZE, i % SIZE);
                if run_length(&start, r, c, 0, 1) == v || run_length(&start, r, c, 1, 0) == v {
                    popper[i] = true;
                }
            }
        }
        let cleared = popper.iter().filter(|&&p| p).count() as u32;
        if cleared == 0 {
            return points;
        }
        for i in 0..CELLS {
            if popper[i] {
                b[i] = 0;
            }
        }
        let mut revealed_cells = Vec::new();
        for i in 0..CELLS {
            if !is_covered(start[i]) {
                continue;
            }
            let (r, c) = (i / SIZE, i % SIZE);
            let mut hits = 0;
            if r > 0 && popper[i - SIZE] {
                hits += 1;
            }
            if r < 6 && popper[i + SIZE] {
                hits += 1;
            }
            if c > 0 && popper[i - 1] {
                hits += 1;
            }
            if c < 6 && popper[i + 1] {
                hits += 1;
            }
            match (start[i], hits) {
                (_, 0) => {}
                (SOLID, 1) => b[i] = CRACKED,
                _ => revealed_cells.push(i),
            }
        }
        for &i in &revealed_cells {
            let (r, c) = (i / SIZE, i % SIZE);
            let below = (r + 1..SIZE)
                .filter(|&r2| is_covered(b[r2 * SIZE + c]))
                .count();
            b[i] = rng.reveal_disc(c, below as u32);
        }
        let wave_pts = u64::from(cleared) * wave_points(depth);
        points += wave_pts;
        waves.push(Wave {
            depth,
            cleared,
            revealed: revealed_cells.len() as u32,
            points: wave_pts,
        });
        apply_gravity(b);
        depth += 1;
    }
}

impl RefState {
    /// The opening state with the given first disc.
    pub fn new(first_disc: u8) -> RefState {
        RefState {
            board: initial_cells(),
            next_disc: first_disc,
            moves_remaining: 5,
            level: 1,
            score: 0,
            moves_played: 0,
            game_over: false,
        }
    }

    /// `playMove` (rules.md §4): on error nothing changes and nothing is drawn.
    ///
    /// # Errors
    /// Game over, column out of range, or column full.
    pub fn play(&mut self, column: usize, rng: &mut impl DiscSource) -> Result<RefMove, MoveError> {
        if self.game_over {
            return Err(MoveError::GameOver);
        }
        if column >= SIZE {
            return Err(MoveError::OutOfRange(column));
        }
        if self.board[column] != 0 {
            return Err(MoveError::ColumnFull(column));
        }
        let b = &mut self.board;
        // 1. Drop at the lowest empty cell.
        let row = (0..SIZE)
            .rev()
            .find(|&r| b[r * SIZE + column] == 0)
            .ok_or(MoveError::ColumnFull(column))?;
        b[row * SIZE + column] = self.next_disc;
        // 2. First cascade.
        let mut waves = Vec::new();
        let mut delta = cascade(b, 1, rng, &mut waves);
        // 3. Clear bonus.
        let mut cleared_board = false;
        if b.iter().all(|&v| v == 0) {
            delta += CLEAR_BONUS;
            cleared_board = true;
        }
        // 4. Rise.
        let mut level_advanced = false;
        let mut terminal = None;
        self.moves_remaining -= 1;
        if self.moves_remaining == 0 {
            if b[..SIZE].iter().any(|&v| v != 0) {
                terminal = Some(TerminalReason::BlockedRise);
            } else {
                for r in 0..SIZE - 1 {
                    for c in 0..SIZE {
                        b[r * SIZE + c] = b[(r + 1) * SIZE + c];
                    }
                }
                for c in 0..SIZE {
                    b[6 * SIZE + c] = SOLID;
                }
                rng.rise();
                self.level += 1;
                self.moves_remaining = 5;
                delta += LEVEL_BONUS;
                level_advanced = true;
                let start = waves.len() as u32 + 1;
                delta += cascade(b, start, rng, &mut waves);
                if b.iter().all(|&v| v == 0) {
                    delta += CLEAR_BONUS;
                    cleared_board = true;
                }
            }
        }
        // 5. No legal column.
        if terminal.is_none() && b[..SIZE].iter().all(|&v| v != 0) {
            terminal = Some(TerminalReason::NoLegalColumn);
        }
        self.game_over = terminal.is_some();
        // 6. Next disc, only if the game goes on.
        if !self.game_over {
            self.next_disc = rng.draw_disc();
        }
        // 7. Score and move count.
        self.score += delta;
        self.moves_played += 1;
        Ok(RefMove {
            score_delta: delta,
            waves,
            cleared_board,
            level_advanced,
            terminal,
        })
    }
}

/// A reference game: state plus driver.
#[derive(Clone, Debug)]
pub struct RefGame {
    /// The state.
    pub state: RefState,
    /// The driver.
    pub driver: Driver,
}

impl RefGame {
    /// A new game (first disc from the driver).
    pub fn new(mut driver: Driver) -> RefGame {
        let first = match &mut driver {
            Driver::Headless { seed } => headless_disc(*seed, 0),
            Driver::Stream { rng, .. } => rng.draw_disc(),
        };
        RefGame {
            state: RefState::new(first),
            driver,
        }
    }

    /// Plays `column` with the driver's randomness.
    ///
    /// # Errors
    /// As [`RefState::play`].
    pub fn play(&mut self, column: usize) -> Result<RefMove, MoveError> {
        match &mut self.driver {
            Driver::Headless { seed } => {
                let seed = *seed;
                let mut rng = Mulberry32::new(headless_reveal_seed(seed, self.state.moves_played));
                let m = self.state.play(column, &mut rng)?;
                if !self.state.game_over {
                    self.state.next_disc = headless_disc(seed, self.state.moves_played);
                }
                Ok(m)
            }
            Driver::Stream { rng, .. } => self.state.play(column, rng),
        }
    }
}

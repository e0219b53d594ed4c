//! Latent-board mode (spec: rules.md §8): every gray disc carries a hidden
//! value 1..=7 that moves with it through gravity and rises; a reveal yields
//! that value and consumes no random draw; each successful rise brings in the
//! next covered row of hidden values.
//!
//! Representation: gray discs never change order within a column (gravity
//! keeps order; grays enter only at the bottom, by a rise), so the hidden
//! values are kept as one stack per column, bottom first, each entry naming
//! the covered row the disc came in with ([`Grays`]). A reveal names its disc
//! by column and the number of covered cells beneath it
//! ([`DiscSource::reveal_disc`]), which both engines report.
//!
//! [`Grays`] works in two modes:
//! * **replay**: the hidden values are given (a scripted round's `latentRows`,
//!   a tape's `coveredRows`); reveals take them;
//! * **recording**: an ordinary game (headless or stream driver) draws reveal
//!   values as usual and the values are written down per disc, so that the
//!   game can be saved as a recorded tape (`crate::tape`).
//!
//! [`TrackedGame`] plays a whole game in either mode on the packed or the
//! reference engine.
//!
//! ```
//! use drop7::latent::{Grays, TrackedGame};
//! use drop7::runner::{EngineGame, PackedEngine};
//! use drop7::gravity::Portable;
//! let rows = vec![[1, 4, 6, 1, 5, 7, 4]; 3];
//! let mut g = TrackedGame::latent(PackedEngine(Portable), rows, vec![2, 6, 5, 1, 7, 1]);
//! assert_eq!(g.latent_string(), "0000000000000000000000000000000000000000001461574");
//! g.play_move(3, &mut ()).unwrap();
//! assert_eq!(g.position().next_disc, 6);
//! assert_eq!(g.grays().rows_used(), 1);
//! ```

use crate::board::{Board, CELLS, SIZE};
use crate::cascade::WaveSink;
use crate::error::MoveError;
use crate::game::{GameState, MoveSummary};
use crate::gravity::Gravity;
use crate::position::Position;
use crate::reference::engine::RefState;
use crate::rng::{DiscSource, Mulberry32, headless_disc, headless_reveal_seed};
use crate::runner::{EngineGame, PackedEngine, ReferenceEngine};

/// Something wrong with the hidden values met during play.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GrayFault {
    /// A rise needed covered row `row` (0-based) but none was given.
    MissingRow(usize),
    /// A revealed gray had no hidden value (inconsistent start state).
    MissingValue {
        /// Column of the revealed disc.
        column: usize,
    },
}

impl std::fmt::Display for GrayFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GrayFault::MissingRow(r) => {
                write!(f, "a rise needs covered row {r} but none was given")
            }
            GrayFault::MissingValue { column } => {
                write!(
                    f,
                    "a gray disc revealed in column {column} has no hidden value"
                )
            }
        }
    }
}

/// The hidden values of the gray discs on a board (per-column stacks, bottom
/// first, of covered-row indexes) and the covered rows themselves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grays {
    stacks: [[u16; SIZE]; SIZE],
    lens: [u8; SIZE],
    rows: Vec<[u8; SIZE]>,
    used: usize,
    recording: bool,
    fault: Option<GrayFault>,
}

impl Grays {
    /// Replay mode: the opening covered row is `rows[0]`, the row brought in
    /// by the r-th successful rise is `rows[r]` (values 1..=7, column order).
    pub fn replay(rows: Vec<[u8; SIZE]>) -> Grays {
        let mut g = Grays {
            stacks: [[0; SIZE]; SIZE],
            lens: [1; SIZE],
            rows,
            used: 1,
            recording: false,
            fault: None,
        };
        if g.rows.is_empty() {
            g.fault = Some(GrayFault::MissingRow(0));
            g.rows.push([0; SIZE]);
        }
        g
    }

    /// Recording mode: reveal values are drawn by the game's own source and
    /// written down; a never-revealed disc keeps the value 0 (unknown).
    pub fn recording() -> Grays {
        Grays {
            stacks: [[0; SIZE]; SIZE],
            lens: [1; SIZE],
            rows: vec![[0; SIZE]],
            used: 1,
            recording: true,
            fault: None,
        }
    }

    /// Covered rows in use: the opening row plus one per successful rise
    /// (the trace's `coveredRowsConsumed`).
    pub const fn rows_used(&self) -> usize {
        self.used
    }

    /// The covered rows given (replay) or written down so far (recording;
    /// 0 = never revealed).
    pub fn rows(&self) -> &[[u8; SIZE]] {
        &self.rows
    }

    /// The first problem met, if any (the game goes on with value 1 for a
    /// missing value).
    pub const fn fault(&self) -> Option<GrayFault> {
        self.fault
    }

    /// The hidden value of every covered cell of `board` (row-major, 0 for
    /// cells that are not covered), as the trace's `latentBefore/latentAfter`.
    pub fn cells(&self, board: &Board) -> [u8; CELLS] {
        let cells = board.to_cells();
        let mut out = [0u8; CELLS];
        for c in 0..SIZE {
            let mut k = 0usize;
            for r in (0..SIZE).rev() {
                let i = r * SIZE + c;
                if cells[i] >= 8 {
                    if k < usize::from(self.lens[c]) {
                        let row = usize::from(self.stacks[c][k]);
                        out[i] = self.rows.get(row).map_or(0, |v| v[c]);
                    }
                    k += 1;
                }
            }
        }
        out
    }

    /// Removes the disc of `column` with `below` covered cells beneath it;
    /// returns its covered-row index.
    fn take(&mut self, column: usize, below: u32) -> Option<usize> {
        let len = usize::from(self.lens[column]);
        let k = below as usize;
        if k >= len {
            return None;
        }
        let row = self.stacks[column][k];
        self.stacks[column].copy_within(k + 1..len, k);
        self.lens[column] -= 1;
        Some(usize::from(row))
    }

    fn reveal(&mut self, column: usize, below: u32, draw: impl FnOnce() -> u8) -> u8 {
        let Some(row) = self.take(column, below) else {
            self.fault.get_or_insert(GrayFault::MissingValue { column });
            return if self.recording { draw() } else { 1 };
        };
        if self.recording {
            let v = draw();
            self.rows[row][column] = v;
            return v;
        }
        match self.rows.get(row).map(|r| r[column]) {
            Some(v @ 1..=7) => v,
            _ => {
                self.fault.get_or_insert(GrayFault::MissingValue { column });
                1
            }
        }
    }

    fn rise(&mut self) {
        let row = self.used;
        self.used += 1;
        if row >= self.rows.len() {
            if !self.recording {
                self.fault.get_or_insert(GrayFault::MissingRow(row));
            }
            self.rows.push([0; SIZE]);
        }
        for c in 0..SIZE {
            let len = usize::from(self.lens[c]);
            if len < SIZE {
                self.stacks[c].copy_within(0..len, 1);
                self.lens[c] += 1;
            }
            self.stacks[c][0] = row as u16;
        }
    }
}

/// The random source of one latent or recorded move: reveals go through
/// [`Grays`], every other draw to `inner`.
pub struct LatentSource<'a, S> {
    /// The hidden values.
    pub grays: &'a mut Grays,
    /// The move's own source (reveals in recording mode, the next-disc draw).
    pub inner: S,
}

impl<S: DiscSource> DiscSource for LatentSource<'_, S> {
    #[inline]
    fn draw_disc(&mut self) -> u8 {
        self.inner.draw_disc()
    }
    fn reveal_disc(&mut self, column: usize, covered_below: u32) -> u8 {
        let inner = &mut self.inner;
        self.grays
            .reveal(column, covered_below, || inner.draw_disc())
    }
    fn rise(&mut self) {
        self.grays.rise();
    }
}

/// A source that always yields the same disc (the reference runners'
/// `() => 0.5` and `() => 0`: discs 4 and 1; their draws are overwritten).
#[derive(Clone, Copy, Debug)]
pub struct ConstDisc(pub u8);

impl DiscSource for ConstDisc {
    #[inline]
    fn draw_disc(&mut self) -> u8 {
        self.0
    }
}

/// One engine's bare game state, driven with an explicit random source.
pub trait EngineCore: Clone {
    /// The public position.
    fn position(&self) -> Position;
    /// Score, level, moves played.
    fn totals(&self) -> (u64, u32, u32);
    /// Plays `column` with `rng` (reveals, then the next-disc draw if the
    /// game goes on).
    ///
    /// # Errors
    /// An illegal column or a move after game over; nothing changes then.
    fn play_src<R: DiscSource, S: WaveSink>(
        &mut self,
        column: usize,
        rng: &mut R,
        sink: &mut S,
    ) -> Result<MoveSummary, MoveError>;
    /// Overwrites the visible next disc.
    fn set_next_disc(&mut self, disc: u8);
}

/// The packed engine's state on gravity path `G`.
#[derive(Clone, Copy, Debug)]
pub struct PackedCore<G: Gravity> {
    state: GameState,
    gravity: G,
}

impl<G: Gravity> EngineCore for PackedCore<G> {
    fn position(&self) -> Position {
        self.state.position
    }
    fn totals(&self) -> (u64, u32, u32) {
        (self.state.score, self.state.level, self.state.moves_played)
    }
    fn play_src<R: DiscSource, S: WaveSink>(
        &mut self,
        column: usize,
        rng: &mut R,
        sink: &mut S,
    ) -> Result<MoveSummary, MoveError> {
        self.state.play_with(self.gravity, column, rng, sink)
    }
    fn set_next_disc(&mut self, disc: u8) {
        self.state.position.next_disc = disc;
    }
}

impl EngineCore for RefState {
    fn position(&self) -> Position {
        Position {
            board: Board::from_cells(&self.board),
            next_disc: self.next_disc,
            moves_remaining: self.moves_remaining,
            game_over: self.game_over,
        }
    }
    fn totals(&self) -> (u64, u32, u32) {
        (self.score, self.level, self.moves_played)
    }
    fn play_src<R: DiscSource, S: WaveSink>(
        &mut self,
        column: usize,
        rng: &mut R,
        sink: &mut S,
    ) -> Result<MoveSummary, MoveError> {
        let m = self.play(column, rng)?;
        for &w in &m.waves {
            sink.push(w);
        }
        Ok(MoveSummary {
            score_delta: m.score_delta,
            cleared_board: m.cleared_board,
            level_advanced: m.level_advanced,
            terminal: m.terminal,
            waves: m.waves.len() as u32,
        })
    }
    fn set_next_disc(&mut self, disc: u8) {
        self.next_disc = disc;
    }
}

/// Engines whose bare state a [`TrackedGame`] can drive.
pub trait CoreEngine: Copy {
    /// The state type.
    type Core: EngineCore;
    /// The opening state with `first_disc` next.
    fn core(self, first_disc: u8) -> Self::Core;
}

impl<G: Gravity> CoreEngine for PackedEngine<G> {
    type Core = PackedCore<G>;
    fn core(self, first_disc: u8) -> PackedCore<G> {
        PackedCore {
            state: GameState::new(first_disc),
            gravity: self.0,
        }
    }
}

impl CoreEngine for ReferenceEngine {
    type Core = RefState;
    fn core(self, first_disc: u8) -> RefState {
        RefState::new(first_disc)
    }
}

/// Where a tracked game's discs and reveal values come from.
#[derive(Clone, Debug)]
enum Luck {
    /// Scripted: `discs[m]` is dropped at move m; reveals from the hidden values.
    Latent { discs: Vec<u8>, filler: u8 },
    /// Headless driver (rules.md §6a), reveal values written down.
    Headless { seed: u32 },
    /// Stream driver (rules.md §6b), reveal values written down.
    Stream { rng: Mulberry32 },
}

/// A whole game with tracked gray discs: a latent game (scripted round, tape
/// replay) or an ordinary seeded game whose reveal values are written down.
#[derive(Clone, Debug)]
pub struct TrackedGame<C: EngineCore> {
    core: C,
    grays: Grays,
    luck: Luck,
    /// The disc dropped at each move so far.
    discs_played: Vec<u8>,
    /// The column of each move so far.
    columns: Vec<u8>,
}

impl<C: EngineCore> TrackedGame<C> {
    /// A latent game (scripted round runner, rules.md §8): hidden values from
    /// `rows`, disc `discs[m]` at move m; the engine's own next-disc draw is
    /// the runner's `() => 0.5` (overwritten after every move).
    pub fn latent<E: CoreEngine<Core = C>>(
        engine: E,
        rows: Vec<[u8; SIZE]>,
        discs: Vec<u8>,
    ) -> TrackedGame<C> {
        Self::latent_with(engine, rows, discs, 4)
    }

    /// As [`TrackedGame::latent`] with the engine's own (overwritten) draw
    /// yielding `filler` (tape replay: `() => 0`, disc 1).
    pub fn latent_with<E: CoreEngine<Core = C>>(
        engine: E,
        rows: Vec<[u8; SIZE]>,
        discs: Vec<u8>,
        filler: u8,
    ) -> TrackedGame<C> {
        let first = discs.first().copied().unwrap_or(filler);
        TrackedGame {
            core: engine.core(first),
            grays: Grays::replay(rows),
            luck: Luck::Latent { discs, filler },
            discs_played: Vec::new(),
            columns: Vec::new(),
        }
    }

    /// An ordinary headless-driver game of `seed` with its reveal values written down.
    pub fn headless<E: CoreEngine<Core = C>>(engine: E, seed: u32) -> TrackedGame<C> {
        TrackedGame {
            core: engine.core(headless_disc(seed, 0)),
            grays: Grays::recording(),
            luck: Luck::Headless { seed },
            discs_played: Vec::new(),
            columns: Vec::new(),
        }
    }

    /// An ordinary stream-driver game of `seed` with its reveal values written down.
    pub fn stream<E: CoreEngine<Core = C>>(engine: E, seed: u32) -> TrackedGame<C> {
        let mut rng = Mulberry32::new(seed);
        let first = rng.draw_disc();
        TrackedGame {
            core: engine.core(first),
            grays: Grays::recording(),
            luck: Luck::Stream { rng },
            discs_played: Vec::new(),
            columns: Vec::new(),
        }
    }

    /// The hidden values.
    pub const fn grays(&self) -> &Grays {
        &self.grays
    }

    /// The hidden values of the board's covered cells as 49 digits (the
    /// trace's `latentBefore/latentAfter`; `0` = not a covered cell).
    pub fn latent_string(&self) -> String {
        self.grays
            .cells(&self.core.position().board)
            .iter()
            .map(|&v| char::from(b'0' + v))
            .collect()
    }

    /// Discs dropped so far, move by move.
    pub fn discs_played(&self) -> &[u8] {
        &self.discs_played
    }

    /// Columns played so far, move by move.
    pub fn columns_played(&self) -> &[u8] {
        &self.columns
    }
}

/// A source that writes down the value of every reveal it answers.
struct Logged<'a, R> {
    src: R,
    log: Option<&'a mut Vec<u8>>,
}

impl<R: DiscSource> DiscSource for Logged<'_, R> {
    #[inline]
    fn draw_disc(&mut self) -> u8 {
        self.src.draw_disc()
    }
    fn reveal_disc(&mut self, column: usize, covered_below: u32) -> u8 {
        let v = self.src.reveal_disc(column, covered_below);
        if let Some(log) = self.log.as_deref_mut() {
            log.push(v);
        }
        v
    }
    fn rise(&mut self) {
        self.src.rise();
    }
}

impl<C: EngineCore> TrackedGame<C> {
    /// As [`EngineGame::play_move`], also writing down in `reveals` (after
    /// clearing it) the value of every gray disc the move revealed, in reveal
    /// order (wave by wave, each wave in row-major order, top row first: the
    /// order of rules.md §5). The game is the same as with `play_move`.
    ///
    /// # Errors
    /// An illegal column or a move after game over; nothing changes then.
    pub fn play_move_logged<S: WaveSink>(
        &mut self,
        column: usize,
        sink: &mut S,
        reveals: &mut Vec<u8>,
    ) -> Result<MoveSummary, MoveError> {
        reveals.clear();
        self.play_logged(column, sink, Some(reveals))
    }

    fn play_logged<S: WaveSink>(
        &mut self,
        column: usize,
        sink: &mut S,
        log: Option<&mut Vec<u8>>,
    ) -> Result<MoveSummary, MoveError> {
        let disc = self.core.position().next_disc;
        let moves = self.core.totals().2;
        let s = match &mut self.luck {
            Luck::Latent { filler, .. } => {
                let src = LatentSource {
                    grays: &mut self.grays,
                    inner: ConstDisc(*filler),
                };
                self.core.play_src(column, &mut Logged { src, log }, sink)?
            }
            Luck::Headless { seed } => {
                let src = LatentSource {
                    grays: &mut self.grays,
                    inner: Mulberry32::new(headless_reveal_seed(*seed, moves)),
                };
                self.core.play_src(column, &mut Logged { src, log }, sink)?
            }
            Luck::Stream { rng } => {
                let src = LatentSource {
                    grays: &mut self.grays,
                    inner: rng,
                };
                self.core.play_src(column, &mut Logged { src, log }, sink)?
            }
        };
        self.discs_played.push(disc);
        self.columns.push(column as u8);
        if s.terminal.is_none() {
            let m = moves + 1;
            match &self.luck {
                Luck::Latent { discs, .. } => {
                    if let Some(&d) = discs.get(m as usize) {
                        self.core.set_next_disc(d);
                    }
                }
                Luck::Headless { seed } => self.core.set_next_disc(headless_disc(*seed, m)),
                Luck::Stream { .. } => {}
            }
        }
        Ok(s)
    }
}

impl<C: EngineCore> EngineGame for TrackedGame<C> {
    fn position(&self) -> Position {
        self.core.position()
    }
    fn score(&self) -> u64 {
        self.core.totals().0
    }
    fn level(&self) -> u32 {
        self.core.totals().1
    }
    fn moves_played(&self) -> u32 {
        self.core.totals().2
    }
    fn play_move<S: WaveSink>(
        &mut self,
        column: usize,
        sink: &mut S,
    ) -> Result<MoveSummary, MoveError> {
        self.play_logged(column, sink, None)
    }
}

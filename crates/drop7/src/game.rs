//! One move and one game of Drop7 Hardcore on the packed board (spec: rules.md
//! §3, §4, §6, §9).
//!
//! * [`apply_move`]: the move itself (drop, first cascade, clear bonus, rise
//!   with its level bonus and continued-depth cascade, game over), without the
//!   final next-disc draw. Shared by games and the search; allocation-free.
//! * [`begin_move`] / [`finish_move`]: the same move in two parts, split at
//!   its first reveal draw, so several samples of one chance node play the
//!   draw-free part once (tests/move_prefix.rs checks it against
//!   [`apply_move`]).
//! * [`GameState`]: the full state (position, score, level, moves played) with
//!   [`GameState::play_with`], the reference engine's `playMove`.
//! * [`Game`]: a state plus its [`Driver`] (headless or stream randomness), with
//!   [`Game::play`] returning a [`MoveOutcome`].
//!
//! ```
//! use drop7::game::{Game, Driver};
//! let mut g = Game::new(Driver::headless(1));
//! assert_eq!(g.state().position.next_disc, 5);
//! let out = g.play(3).unwrap();
//! assert_eq!(out.score_delta, 0);
//! assert!(g.play(9).is_err()); // out of range: nothing changes
//! assert_eq!(g.state().moves_played, 1);
//! ```

use std::fmt;

use crate::board::Board;
use crate::cascade::{self, Wave, WaveSink};
use crate::error::MoveError;
use crate::gravity::{Gravity, PLAIN, Portable};
use crate::position::{DROPS_PER_LEVEL, Position};
use crate::rng::{DiscSource, Mulberry32, headless_disc, headless_reveal_seed};

/// Bonus for emptying the board (paid after the first cascade and again after a
/// rise cascade that empties it).
pub const CLEAR_BONUS: u64 = 70_000;
/// Bonus for a successful rise (Hardcore).
pub const LEVEL_BONUS: u64 = 17_000;

/// Why a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TerminalReason {
    /// The 5th drop found the top row occupied: no rise, no level bonus.
    BlockedRise,
    /// After the move (possibly after a successful rise) every column is full.
    NoLegalColumn,
}

impl TerminalReason {
    /// `"blocked-rise"` or `"no-legal-column"` (trace-format.md).
    pub const fn as_str(self) -> &'static str {
        match self {
            TerminalReason::BlockedRise => "blocked-rise",
            TerminalReason::NoLegalColumn => "no-legal-column",
        }
    }
}

impl fmt::Display for TerminalReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What [`apply_move`] reports (no wave list: waves went to the sink).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MoveSummary {
    /// Points earned by the move (waves and bonuses).
    pub score_delta: u64,
    /// A 70,000 clear bonus was paid (after either cascade).
    pub cleared_board: bool,
    /// A rise happened (17,000 paid).
    pub level_advanced: bool,
    /// `Some` when the move ended the game.
    pub terminal: Option<TerminalReason>,
    /// Total waves (first and rise cascade).
    pub waves: u32,
}

/// Plays `disc` into `column` of `pos` (already checked legal, game not over):
/// drop, cascade, clear bonus, rise, game over. Updates `pos.board`,
/// `pos.moves_remaining` and `pos.game_over`; does **not** draw the next disc
/// (callers do, or overwrite it). Reveal values come from `rng`.
///
/// `settled` promises that no cell of `pos.board` would pop before the drop
/// (true for every board a move leaves behind; see [`cascade::is_settled`]):
/// the first wave then looks for poppers only where the drop changed a run.
/// Pass `false` for a board of unknown origin. Either way the result is the
/// same; the afterstate is always settled.
#[inline]
pub fn apply_move<G: Gravity, R: DiscSource, S: WaveSink>(
    gravity: G,
    pos: &mut Position,
    column: usize,
    settled: bool,
    rng: &mut R,
    sink: &mut S,
) -> MoveSummary {
    apply_move_inline(gravity, pos, column, settled, rng, sink)
}

/// [`apply_move`], always inlined (the headless game move: no call, the
/// summary stays in registers).
#[inline(always)]
fn apply_move_inline<G: Gravity, R: DiscSource, S: WaveSink>(
    gravity: G,
    pos: &mut Position,
    column: usize,
    settled: bool,
    rng: &mut R,
    sink: &mut S,
) -> MoveSummary {
    // The drop counts before the cascade, which never reads it (see
    // `begin_move`).
    pos.moves_remaining -= 1;
    let board = &mut pos.board;
    board.drop_disc(column, pos.next_disc);
    let first = if settled {
        cascade::resolve_after_drop(gravity, board, column, rng, sink)
    } else {
        cascade::resolve(gravity, board, 1, rng, sink)
    };
    let mut s = first_summary(board, first);
    if pos.moves_remaining == 0 {
        if pos.board.top_row_occupied() {
            s.terminal = Some(TerminalReason::BlockedRise);
        } else {
            start_rise(pos, &mut s);
            rng.rise();
            // The first cascade left the board settled.
            let rise =
                cascade::resolve_after_rise(gravity, &mut pos.board, first.waves + 1, rng, sink);
            add_rise(&pos.board, &mut s, rise);
        }
    }
    end_move(pos, &mut s);
    s
}

/// A move stopped at its first reveal (see [`begin_move`]): the position mid-wave
/// and what the move earned so far. Everything up to that point draws nothing,
/// so it is the same for every source of reveal values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MovePrefix {
    /// The position mid-wave (`moves_remaining` already counted down, and the
    /// rise done when the stop is in the rise cascade).
    pos: Position,
    /// The stopped cascade.
    pending: cascade::PendingReveal,
    /// Whether the stop is in the rise cascade (else in the first one).
    in_rise: bool,
    /// The summary so far (the first cascade and bonuses when `in_rise`).
    summary: MoveSummary,
}

/// What [`begin_move`] did.
// The prefix stays on the stack: the move path never allocates.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MoveStart {
    /// The move revealed nothing: it is done, with this afterstate and summary
    /// (exactly [`apply_move`]'s, which draws nothing for such a move; a
    /// source that follows rises, as latent mode's does, was not told of one).
    Done(Position, MoveSummary),
    /// The move reveals a gray: finish it with [`finish_move`], once per
    /// source of reveal values.
    Paused(MovePrefix),
}

/// [`apply_move`] up to its first draw: plays `column` of `pos` (legal, game not
/// over) until the first wave that reveals a gray (search.md §3.2: the reveal
/// draws are a move's only randomness). Waves before that point go to `sink`.
/// `begin_move` then [`finish_move`] with a source `rng` gives the same
/// afterstate, summary, waves and draws as `apply_move` with `rng`.
#[inline]
pub fn begin_move<G: Gravity, S: WaveSink>(
    gravity: G,
    pos: &Position,
    column: usize,
    settled: bool,
    sink: &mut S,
) -> MoveStart {
    begin_move_in::<PLAIN, G, S>(gravity, pos, column, settled, sink)
}

/// [`begin_move`] in the search's copy `B` of the code (see
/// [`crate::gravity::built_copies`]).
#[inline(always)]
pub(crate) fn begin_move_in<const B: u8, G: Gravity, S: WaveSink>(
    gravity: G,
    pos: &Position,
    column: usize,
    settled: bool,
    sink: &mut S,
) -> MoveStart {
    let mut pos = *pos;
    // The drop counts before the cascade (which never reads it), so that
    // this one-byte store is long done when `pos` is copied out below (see
    // `end_move`).
    pos.moves_remaining -= 1;
    let board = &mut pos.board;
    board.drop_disc(column, pos.next_disc);
    let start = if settled {
        cascade::CascadeStart::AfterDrop(column)
    } else {
        cascade::CascadeStart::Any
    };
    let first = match cascade::resolve_until_reveal_in::<B, G, S>(gravity, board, 1, start, sink) {
        Ok(first) => first,
        Err(pending) => {
            return MoveStart::Paused(MovePrefix {
                pos,
                pending,
                in_rise: false,
                summary: MoveSummary::default(),
            });
        }
    };
    let mut s = first_summary(board, first);
    if pos.moves_remaining == 0 {
        if board.top_row_occupied() {
            s.terminal = Some(TerminalReason::BlockedRise);
        } else {
            start_rise(&mut pos, &mut s);
            let start = cascade::CascadeStart::AfterRise;
            match cascade::resolve_until_reveal_in::<B, G, S>(
                gravity,
                &mut pos.board,
                first.waves + 1,
                start,
                sink,
            ) {
                Ok(rise) => add_rise(&pos.board, &mut s, rise),
                Err(pending) => {
                    return MoveStart::Paused(MovePrefix {
                        pos,
                        pending,
                        in_rise: true,
                        summary: s,
                    });
                }
            }
        }
    }
    end_move(&mut pos, &mut s);
    MoveStart::Done(pos, s)
}

/// Finishes a move stopped by [`begin_move`], drawing its reveal values from
/// `rng` (and telling `rng` of the rise, if any, before the first reveal, as
/// [`apply_move`] does) and reporting the waves from the stop on to `sink`.
/// Returns the afterstate and the whole move's summary.
#[inline]
pub fn finish_move<G: Gravity, R: DiscSource, S: WaveSink>(
    gravity: G,
    prefix: &MovePrefix,
    rng: &mut R,
    sink: &mut S,
) -> (Position, MoveSummary) {
    finish_move_inline::<PLAIN, G, R, S>(gravity, prefix, rng, sink)
}

/// [`finish_move`], always inlined (the search's revealing samples: the
/// afterstate is not returned through memory and copied again).
#[inline(always)]
pub(crate) fn finish_move_inline<const B: u8, G: Gravity, R: DiscSource, S: WaveSink>(
    gravity: G,
    prefix: &MovePrefix,
    rng: &mut R,
    sink: &mut S,
) -> (Position, MoveSummary) {
    let mut pos = prefix.pos;
    let mut s = prefix.summary;
    if prefix.in_rise {
        rng.rise();
        let rise =
            cascade::resume_in::<B, G, R, S>(gravity, &mut pos.board, &prefix.pending, rng, sink);
        add_rise(&pos.board, &mut s, rise);
    } else {
        let first =
            cascade::resume_in::<B, G, R, S>(gravity, &mut pos.board, &prefix.pending, rng, sink);
        s = first_summary(&pos.board, first);
        if pos.moves_remaining == 0 {
            if pos.board.top_row_occupied() {
                s.terminal = Some(TerminalReason::BlockedRise);
            } else {
                start_rise(&mut pos, &mut s);
                rng.rise();
                let waves = first.waves + 1;
                let rise = cascade::resolve_after_rise(gravity, &mut pos.board, waves, rng, sink);
                add_rise(&pos.board, &mut s, rise);
            }
        }
    }
    end_move(&mut pos, &mut s);
    (pos, s)
}

/// The summary after the first cascade `first`, with its clear bonus.
#[inline(always)]
fn first_summary(board: &Board, first: cascade::CascadeResult) -> MoveSummary {
    let mut s = MoveSummary {
        score_delta: first.points,
        waves: first.waves,
        ..MoveSummary::default()
    };
    // Without a wave the dropped disc is still there.
    if first.waves > 0 && board.is_empty() {
        s.score_delta += CLEAR_BONUS;
        s.cleared_board = true;
    }
    s
}

/// The rise of a move (its top row empty): new covered bottom row, level bonus.
#[inline(always)]
fn start_rise(pos: &mut Position, s: &mut MoveSummary) {
    pos.board.rise();
    s.level_advanced = true;
    pos.moves_remaining = DROPS_PER_LEVEL;
    s.score_delta += LEVEL_BONUS;
}

/// Adds the rise cascade `rise` and its clear bonus.
#[inline(always)]
fn add_rise(board: &Board, s: &mut MoveSummary, rise: cascade::CascadeResult) {
    s.score_delta += rise.points;
    s.waves += rise.waves;
    // Without a wave the new bottom row is still there.
    if rise.waves > 0 && board.is_empty() {
        s.score_delta += CLEAR_BONUS;
        s.cleared_board = true;
    }
}

/// The game-over rules at the end of a move.
#[inline(always)]
fn end_move(pos: &mut Position, s: &mut MoveSummary) {
    if s.terminal.is_none() && pos.board.is_full() {
        s.terminal = Some(TerminalReason::NoLegalColumn);
    }
    // Stored only when it changes (rarely: the move starts from a position
    // that is not over): the callers copy `pos` out next, and a wide load
    // over a one-byte store made just before waits for it (see
    // `Board::word_pairs`).
    let over = s.terminal.is_some();
    if pos.game_over != over {
        pos.game_over = over;
    }
}

/// Checks that `column` can be played in `pos`.
///
/// # Errors
/// [`MoveError::GameOver`], [`MoveError::OutOfRange`], [`MoveError::ColumnFull`].
pub fn check_move(pos: &Position, column: usize) -> Result<(), MoveError> {
    if pos.game_over {
        Err(MoveError::GameOver)
    } else if column >= 7 {
        Err(MoveError::OutOfRange(column))
    } else if !pos.board.is_legal(column) {
        Err(MoveError::ColumnFull(column))
    } else {
        Ok(())
    }
}

/// The full game state of the reference engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GameState {
    /// Board, next disc, drops to the rise, game-over flag.
    pub position: Position,
    /// Cumulative score.
    pub score: u64,
    /// 1 + successful rises.
    pub level: u32,
    /// Moves played so far.
    pub moves_played: u32,
    /// Whether the board is known to be settled (no cell would pop): true from
    /// the opening and after every move; a state built from arbitrary parts is
    /// checked once.
    settled: bool,
}

impl GameState {
    /// The opening state with the given first disc (rules.md §3).
    pub const fn new(first_disc: u8) -> GameState {
        GameState {
            position: Position::initial(first_disc),
            score: 0,
            level: 1,
            moves_played: 0,
            settled: true,
        }
    }

    /// A state from its parts (e.g. a fixture's "before" state); the board may
    /// hold poppers (they pop in the first wave of the next move).
    pub fn from_position(
        position: Position,
        score: u64,
        level: u32,
        moves_played: u32,
    ) -> GameState {
        let settled = cascade::is_settled(&position.board);
        GameState {
            position,
            score,
            level,
            moves_played,
            settled,
        }
    }

    /// The reference `playMove`: plays the next disc into `column`, drawing
    /// reveal values and then (if the game goes on) the new next disc from `rng`.
    ///
    /// # Errors
    /// See [`check_move`]; on error nothing changes and nothing is drawn.
    #[inline]
    pub fn play_with<G: Gravity, R: DiscSource, S: WaveSink>(
        &mut self,
        gravity: G,
        column: usize,
        rng: &mut R,
        sink: &mut S,
    ) -> Result<MoveSummary, MoveError> {
        check_move(&self.position, column)?;
        let s = apply_move(gravity, &mut self.position, column, self.settled, rng, sink);
        self.settled = true;
        if s.level_advanced {
            self.level += 1;
        }
        if !self.position.game_over {
            self.position.next_disc = rng.draw_disc();
        }
        self.score += s.score_delta;
        self.moves_played += 1;
        Ok(s)
    }
}

/// The headless driver's reveal stream of one move (rules.md §6a): the
/// Mulberry32 stream seeded with `headless_reveal_seed(seed, moves_played)`,
/// seeded on the first reveal (most moves reveal nothing).
struct HeadlessReveals {
    seed: u32,
    moves_played: u32,
    stream: Option<Mulberry32>,
}

impl HeadlessReveals {
    #[inline(always)]
    const fn new(seed: u32, moves_played: u32) -> HeadlessReveals {
        HeadlessReveals {
            seed,
            moves_played,
            stream: None,
        }
    }
}

impl DiscSource for HeadlessReveals {
    #[inline]
    fn draw_disc(&mut self) -> u8 {
        let (seed, k) = (self.seed, self.moves_played);
        self.stream
            .get_or_insert_with(|| Mulberry32::new(headless_reveal_seed(seed, k)))
            .draw_disc()
    }
}

/// Where a game's randomness comes from (rules.md §6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Driver {
    /// Next disc and reveal seed as functions of (seed, move number); the
    /// research runs' driver.
    Headless {
        /// Game seed.
        seed: u32,
    },
    /// One Mulberry32 stream for the whole game.
    Stream {
        /// Game seed.
        seed: u32,
        /// The game's stream.
        rng: Mulberry32,
    },
}

impl Driver {
    /// The headless driver for `seed`.
    pub const fn headless(seed: u32) -> Driver {
        Driver::Headless { seed }
    }

    /// The stream driver for `seed`.
    pub const fn stream(seed: u32) -> Driver {
        Driver::Stream {
            seed,
            rng: Mulberry32::new(seed),
        }
    }

    /// The game seed.
    pub const fn seed(&self) -> u32 {
        match *self {
            Driver::Headless { seed } | Driver::Stream { seed, .. } => seed,
        }
    }
}

/// Which driver, by name (`headless` or `stream`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DriverKind {
    /// [`Driver::Headless`].
    #[default]
    Headless,
    /// [`Driver::Stream`].
    Stream,
}

impl DriverKind {
    /// The driver of this kind for `seed`.
    pub const fn driver(self, seed: u32) -> Driver {
        match self {
            DriverKind::Headless => Driver::headless(seed),
            DriverKind::Stream => Driver::stream(seed),
        }
    }

    /// `"headless"` or `"stream"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            DriverKind::Headless => "headless",
            DriverKind::Stream => "stream",
        }
    }
}

/// Everything observable about one move (trace-format.md, block 1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoveOutcome {
    /// Disc dropped.
    pub disc: u8,
    /// Column played.
    pub column: usize,
    /// Points earned.
    pub score_delta: u64,
    /// Waves, first cascade then rise cascade.
    pub waves: Vec<Wave>,
    /// A 70,000 clear bonus was paid.
    pub cleared_board: bool,
    /// A rise happened.
    pub level_advanced: bool,
    /// Why the game ended, if it did.
    pub terminal: Option<TerminalReason>,
    /// Draws consumed from the move's random source (reveals + the next-disc draw).
    pub stream_draws: u32,
}

/// A game: state, driver and gravity path.
#[derive(Clone, Debug)]
pub struct Game<G: Gravity = Portable> {
    state: GameState,
    driver: Driver,
    gravity: G,
}

impl Game<Portable> {
    /// A new game on the portable gravity path.
    pub fn new(driver: Driver) -> Game<Portable> {
        Game::with_gravity(driver, Portable)
    }
}

impl<G: Gravity> Game<G> {
    /// A new game with the given gravity path (rules.md §3: the first next disc
    /// is `headlessDisc(seed, 0)` or the stream's first draw).
    pub fn with_gravity(mut driver: Driver, gravity: G) -> Game<G> {
        let first = match &mut driver {
            Driver::Headless { seed } => headless_disc(*seed, 0),
            Driver::Stream { rng, .. } => rng.draw_disc(),
        };
        Game {
            state: GameState::new(first),
            driver,
            gravity,
        }
    }

    /// A game resumed from `state` (e.g. a position built from a board) with
    /// `driver`. A headless driver draws the next move's reveals and next disc
    /// from `(seed, state.moves_played)`, exactly as a game that reached
    /// `state`; a stream driver continues from the stream as given.
    pub const fn from_state(state: GameState, driver: Driver, gravity: G) -> Game<G> {
        Game {
            state,
            driver,
            gravity,
        }
    }

    /// The current state.
    pub const fn state(&self) -> &GameState {
        &self.state
    }

    /// The driver.
    pub const fn driver(&self) -> &Driver {
        &self.driver
    }

    /// Plays `column`, sending waves to `sink`; allocation-free.
    ///
    /// Inlined into its caller (the headless move is the whole-game loop's
    /// body; the stream driver's move is a call).
    ///
    /// # Errors
    /// See [`check_move`]; nothing changes on error.
    #[inline(always)]
    pub fn play_into<S: WaveSink>(
        &mut self,
        column: usize,
        sink: &mut S,
    ) -> Result<MoveSummary, MoveError> {
        match &mut self.driver {
            Driver::Headless { seed } => {
                let seed = *seed;
                let st = &mut self.state;
                check_move(&st.position, column)?;
                // The move's reveal stream, seeded only if a gray is revealed;
                // the next disc is the headless one (no draw from the stream).
                let mut rng = HeadlessReveals::new(seed, st.moves_played);
                let s = apply_move_inline(
                    self.gravity,
                    &mut st.position,
                    column,
                    st.settled,
                    &mut rng,
                    sink,
                );
                st.settled = true;
                if s.level_advanced {
                    st.level += 1;
                }
                st.score += s.score_delta;
                st.moves_played += 1;
                if !st.position.game_over {
                    st.position.next_disc = headless_disc(seed, st.moves_played);
                }
                Ok(s)
            }
            Driver::Stream { .. } => self.play_stream(column, sink),
        }
    }

    /// [`Game::play_into`] with the stream driver.
    #[inline(never)]
    fn play_stream<S: WaveSink>(
        &mut self,
        column: usize,
        sink: &mut S,
    ) -> Result<MoveSummary, MoveError> {
        match &mut self.driver {
            Driver::Stream { rng, .. } => self.state.play_with(self.gravity, column, rng, sink),
            Driver::Headless { .. } => unreachable!("play_stream is called for the stream driver"),
        }
    }

    /// Plays `column` and reports everything observable.
    ///
    /// # Errors
    /// See [`check_move`]; nothing changes on error.
    pub fn play(&mut self, column: usize) -> Result<MoveOutcome, MoveError> {
        let disc = self.state.position.next_disc;
        let mut waves = Vec::new();
        let s = self.play_into(column, &mut waves)?;
        let revealed: u32 = waves.iter().map(|w| w.revealed).sum();
        Ok(MoveOutcome {
            disc,
            column,
            score_delta: s.score_delta,
            waves,
            cleared_board: s.cleared_board,
            level_advanced: s.level_advanced,
            terminal: s.terminal,
            stream_draws: revealed + u32::from(s.terminal.is_none()),
        })
    }

    /// Whether the game is over.
    pub const fn is_over(&self) -> bool {
        self.state.position.game_over
    }

    /// The board.
    pub const fn board(&self) -> &Board {
        &self.state.position.board
    }
}

//! Playing whole games and cohorts of games: one engine (packed or reference),
//! one policy per worker, seeds in order, deterministic whatever the thread
//! count (games share nothing; results are collected in seed order).

use std::collections::BTreeMap;
use std::io;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::board::{Board, format_cells};
use crate::cascade::{Wave, WaveSink, WaveStats};
use crate::error::MoveError;
use crate::formats::{GameRecord, StopReason, TraceRecord, seed_hex};
use crate::game::{Driver, DriverKind, Game, MoveSummary, TerminalReason};
use crate::gravity::{Gravity, LoopBuild};
use crate::policy::{RandomPolicy, center_first};
use crate::position::Position;
use crate::reference::engine::RefGame;

/// A game as the runner drives it: the packed [`Game`] or the plain [`RefGame`].
/// `Clone` so that a test-data policy may try moves on a copy (greedy, rules.md §10).
pub trait EngineGame: Clone {
    /// The public position.
    fn position(&self) -> Position;
    /// Score so far.
    fn score(&self) -> u64;
    /// Current level.
    fn level(&self) -> u32;
    /// Moves played.
    fn moves_played(&self) -> u32;
    /// Plays a move, reporting waves to `sink`.
    ///
    /// # Errors
    /// An illegal column or a move after game over; nothing changes then.
    fn play_move<S: WaveSink>(
        &mut self,
        column: usize,
        sink: &mut S,
    ) -> Result<MoveSummary, MoveError>;
    /// The bit instructions [`play_moves`] builds this game's loop for
    /// where the CPU has them; `None`: baseline code only.
    const LOOP_BUILD: Option<LoopBuild> = None;
}

/// Starts games of one engine.
pub trait Engine: Copy + Send + Sync {
    /// The game type.
    type Game: EngineGame;
    /// A new game with `driver`.
    fn start(self, driver: Driver) -> Self::Game;
}

/// The packed engine on gravity path `G`.
#[derive(Clone, Copy, Debug)]
pub struct PackedEngine<G: Gravity>(pub G);

/// The plain reference engine.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReferenceEngine;

impl<G: Gravity> Engine for PackedEngine<G> {
    type Game = Game<G>;
    fn start(self, driver: Driver) -> Game<G> {
        Game::with_gravity(driver, self.0)
    }
}

impl Engine for ReferenceEngine {
    type Game = RefGame;
    fn start(self, driver: Driver) -> RefGame {
        RefGame::new(driver)
    }
}

impl<G: Gravity> EngineGame for Game<G> {
    const LOOP_BUILD: Option<LoopBuild> = Some(G::LOOP_BUILD);
    #[inline]
    fn position(&self) -> Position {
        self.state().position
    }
    fn score(&self) -> u64 {
        self.state().score
    }
    fn level(&self) -> u32 {
        self.state().level
    }
    fn moves_played(&self) -> u32 {
        self.state().moves_played
    }
    // Inlined: the move is the body of the whole-game loop.
    #[inline(always)]
    fn play_move<S: WaveSink>(
        &mut self,
        column: usize,
        sink: &mut S,
    ) -> Result<MoveSummary, MoveError> {
        self.play_into(column, sink)
    }
}

impl EngineGame for RefGame {
    fn position(&self) -> Position {
        Position {
            board: Board::from_cells(&self.state.board),
            next_disc: self.state.next_disc,
            moves_remaining: self.state.moves_remaining,
            game_over: self.state.game_over,
        }
    }
    fn score(&self) -> u64 {
        self.state.score
    }
    fn level(&self) -> u32 {
        self.state.level
    }
    fn moves_played(&self) -> u32 {
        self.state.moves_played
    }
    fn play_move<S: WaveSink>(
        &mut self,
        column: usize,
        sink: &mut S,
    ) -> Result<MoveSummary, MoveError> {
        let m = self.play(column)?;
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
}

/// A policy: picks a column from the public position. One instance per worker
/// thread; [`Policy::new_game`] is called before each game.
pub trait Policy {
    /// Prepares for the game with `seed` (e.g. seeds the random policy's stream).
    fn new_game(&mut self, seed: u32);
    /// A legal column, or `None` when no column is legal.
    fn choose(&mut self, pos: &Position) -> Option<usize>;
    /// Search counters of the last [`Policy::choose`]; `None` for policies
    /// that do not search (their records carry no `work`, `nodes` or
    /// decision latencies).
    fn last_search(&self) -> Option<crate::search::SearchStats> {
        None
    }
    /// Whether the last [`Policy::choose`] was a decision whose latency a
    /// detailed record keeps (`decisionMsP50/P95/P99`): a search's (the
    /// default: when [`Policy::last_search`] has counters) or an external
    /// engine's answer.
    fn last_choice_timed(&self) -> bool {
        self.last_search().is_some()
    }
    /// Whether any [`Policy::choose`] may be timed
    /// ([`Policy::last_choice_timed`]): `false` lets a detailed run skip
    /// reading the clock around each move of a policy that never is (the
    /// center and random policies: a clock read is a tenth of their
    /// recorded game's time). The default, `true`, is always correct.
    fn may_time_choices(&self) -> bool {
        true
    }
    /// An external engine's tallies of the current game (since
    /// [`Policy::new_game`]): `(engine failures, illegal choices)`, the moves
    /// for which it died, timed out or answered garbage, and those for which
    /// it chose an illegal column (the policy then played the first legal
    /// one). A detailed record carries them as `engineFailures` and
    /// `illegalChoices`. `None` (the default) for the built-in policies.
    fn game_tallies(&self) -> Option<(u32, u32)> {
        None
    }

    /// Chooses with the whole engine game at hand. Every public-information
    /// policy looks only at the position (the default); the greedy test-data
    /// policy tries each move on a copy of the game.
    fn choose_in<G: EngineGame>(&mut self, game: &G) -> Option<usize> {
        self.choose(&game.position())
    }

    /// Installs (or removes) a flag that, once set (e.g. by a signal
    /// handler), cuts a [`Policy::choose`] in progress short; its answer
    /// must then not be played (the game loops abandon the game when their
    /// stop flag is the same). The fair policies hand it to their search
    /// ([`crate::search::FairSearch::set_interrupt`]: polled every few
    /// thousand work units, nothing else changes); the default ignores it
    /// (the other policies choose in microseconds).
    fn set_interrupt_flag(&mut self, _flag: Option<std::sync::Arc<AtomicBool>>) {}
}

/// The policy factory `make` with `stop` installed in each policy it makes
/// as its interrupt ([`Policy::set_interrupt_flag`]): a run whose game
/// loops stop on `stop` (a signal) then also cuts a long decision short.
pub fn interruptible<P: Policy>(
    make: impl Fn() -> P + Sync,
    stop: &std::sync::Arc<AtomicBool>,
) -> impl Fn() -> P + Sync {
    move || {
        let mut p = make();
        p.set_interrupt_flag(Some(std::sync::Arc::clone(stop)));
        p
    }
}

/// The center policy (rules.md §10).
#[derive(Clone, Copy, Debug, Default)]
pub struct CenterPolicy;

impl Policy for CenterPolicy {
    fn new_game(&mut self, _seed: u32) {}
    #[inline]
    fn choose(&mut self, pos: &Position) -> Option<usize> {
        center_first(&pos.board)
    }
    fn may_time_choices(&self) -> bool {
        false
    }
}

/// The random parity policy (rules.md §10).
#[derive(Clone, Copy, Debug)]
pub struct RandomParityPolicy(RandomPolicy);

impl Default for RandomParityPolicy {
    fn default() -> Self {
        RandomParityPolicy(RandomPolicy::new(0))
    }
}

impl Policy for RandomParityPolicy {
    fn new_game(&mut self, seed: u32) {
        self.0 = RandomPolicy::new(seed);
    }
    fn choose(&mut self, pos: &Position) -> Option<usize> {
        self.0.choose(&pos.board)
    }
    fn may_time_choices(&self) -> bool {
        false
    }
}

/// Names of the record's policy and driver.
#[derive(Clone, Debug)]
pub struct RunLabels {
    /// Policy name for the record.
    pub policy: String,
    /// Driver.
    pub driver: DriverKind,
}

/// A whole game's result without any allocation (the facts behind a
/// [`GameRecord`], plus the wave count).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GameOutcome {
    /// Game seed.
    pub seed: u32,
    /// Final score.
    pub score: u64,
    /// Moves played.
    pub moves: u32,
    /// Final level.
    pub levels: u32,
    /// Moves that paid a clear bonus.
    pub clears: u32,
    /// Waves of the whole game (total length of all the moves' `waves` lists),
    /// gray discs revealed, deepest wave.
    pub stats: WaveStats,
    /// Why the game stopped.
    pub reason: StopReason,
}

impl GameOutcome {
    /// The per-game record of `drop7 play --out`.
    pub fn record(&self, labels: &RunLabels) -> GameRecord {
        GameRecord {
            seed: seed_hex(self.seed),
            policy: labels.policy.clone(),
            driver: labels.driver.as_str().to_string(),
            score: self.score,
            moves: self.moves,
            levels: self.levels,
            clears: self.clears,
            reveals: self.stats.reveals,
            chain_max_depth: self.stats.max_depth,
            terminal_reason: self.reason,
            censored: self.reason == StopReason::MoveCap,
            ..GameRecord::default()
        }
    }
}

/// What a whole-game loop does beyond choosing and playing. Every game loop
/// of the crate ([`play_game_outcome`], [`play_game_detailed`],
/// [`trace_game`], [`crate::round::play_round`]) is [`play_moves`] with hooks
/// of its own; the hooks are the moves' wave sink, and the defaults cost
/// nothing (the allocation-free loop of the benchmarks is the default hooks
/// on [`WaveStats`]).
pub trait MoveHooks<G: EngineGame>: WaveSink {
    /// Raised: the game is abandoned before its next move.
    #[inline]
    fn stopped(&self) -> bool {
        false
    }
    /// The column to play; `None` ends the game with `no-legal-column`. By
    /// default the policy's choice (a scripted round replaces an illegal one).
    #[inline]
    fn choose<P: Policy>(&mut self, policy: &mut P, game: &G) -> Option<usize> {
        policy.choose_in(game)
    }
    /// After each move; `game` is the game after it.
    #[inline]
    fn after_move(&mut self, _game: &G, _column: usize, _summary: &MoveSummary) {}
}

impl<G: EngineGame> MoveHooks<G> for WaveStats {}

/// How a game loop ended: the moves that paid a clear bonus, and why it stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoopEnd {
    /// Moves that paid a clear bonus.
    pub clears: u32,
    /// Why the game stopped.
    pub reason: StopReason,
}

/// Plays `game` with `policy` until it ends or has `max_moves` moves
/// (`move-cap`), through `hooks` (the moves' wave sink, the choice, a stop
/// check). `None` when `hooks` raised its stop before the game ended.
///
/// A packed game's loop runs as code built for the bit instructions of its
/// gravity path ([`EngineGame::LOOP_BUILD`]) where the CPU has them: a
/// column's height is a leading-zeros count, which baseline x86-64 makes a
/// `BSR` with a fallback (slow on AMD CPUs). Integer work only: the same
/// games, move for move.
#[inline]
pub fn play_moves<G: EngineGame, P: Policy, H: MoveHooks<G>>(
    game: &mut G,
    policy: &mut P,
    max_moves: u32,
    hooks: &mut H,
) -> Option<LoopEnd> {
    #[cfg(target_arch = "x86_64")]
    match G::LOOP_BUILD {
        Some(LoopBuild::AllBits) if LoopBuild::AllBits.detected() => {
            // SAFETY: the CPU has POPCNT, BMI1, BMI2 and LZCNT (detected
            // just above).
            return unsafe { play_moves_all_bits(game, policy, max_moves, hooks) };
        }
        Some(LoopBuild::CountBits) if LoopBuild::CountBits.detected() => {
            // SAFETY: the CPU has POPCNT and LZCNT (detected just above).
            return unsafe { play_moves_count_bits(game, policy, max_moves, hooks) };
        }
        _ => {}
    }
    play_moves_body(game, policy, max_moves, hooks)
}

/// A copy of [`play_moves_body`] built for the bit instructions `$features`.
macro_rules! built_loop {
    ($name:ident, $features:literal, $doc:literal) => {
        #[doc = $doc]
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $features)]
        fn $name<G: EngineGame, P: Policy, H: MoveHooks<G>>(
            game: &mut G,
            policy: &mut P,
            max_moves: u32,
            hooks: &mut H,
        ) -> Option<LoopEnd> {
            play_moves_body(game, policy, max_moves, hooks)
        }
    };
}

built_loop!(
    play_moves_all_bits,
    "popcnt,bmi1,bmi2,lzcnt",
    "[`play_moves`] built for POPCNT, BMI1, BMI2 and LZCNT."
);
built_loop!(
    play_moves_count_bits,
    "popcnt,lzcnt",
    "[`play_moves`] built for POPCNT and LZCNT."
);

/// The loop of [`play_moves`] (as baseline code where the caller is: the
/// fallback, and the tests' reference for the built copies).
#[inline(always)]
pub(crate) fn play_moves_body<G: EngineGame, P: Policy, H: MoveHooks<G>>(
    game: &mut G,
    policy: &mut P,
    max_moves: u32,
    hooks: &mut H,
) -> Option<LoopEnd> {
    let mut clears = 0u32;
    while game.moves_played() < max_moves {
        if hooks.stopped() {
            return None;
        }
        // `None` is unreachable for a built-in policy: a live game always
        // has a legal column.
        let choice = hooks.choose(policy, game);
        // A stop raised during the choice (e.g. a signal that also killed a
        // D7P engine, whose policy then falls back to the first legal
        // column) abandons the game before that choice is played.
        if hooks.stopped() {
            return None;
        }
        let Some(column) = choice else {
            return Some(LoopEnd {
                clears,
                reason: StopReason::NoLegalColumn,
            });
        };
        let Ok(s) = game.play_move(column, hooks) else {
            return Some(LoopEnd {
                clears,
                reason: StopReason::NoLegalColumn,
            });
        };
        hooks.after_move(game, column, &s);
        clears += u32::from(s.cleared_board);
        if let Some(t) = s.terminal {
            let reason = match t {
                TerminalReason::BlockedRise => StopReason::BlockedRise,
                TerminalReason::NoLegalColumn => StopReason::NoLegalColumn,
            };
            return Some(LoopEnd { clears, reason });
        }
    }
    Some(LoopEnd {
        clears,
        reason: StopReason::MoveCap,
    })
}

impl GameOutcome {
    /// The outcome of `game` (seed `seed`) whose loop ended with `end`, its
    /// waves summed in `stats`.
    pub fn of<G: EngineGame>(seed: u32, game: &G, end: LoopEnd, stats: WaveStats) -> GameOutcome {
        GameOutcome {
            seed,
            score: game.score(),
            moves: game.moves_played(),
            levels: game.level(),
            clears: end.clears,
            stats,
            reason: end.reason,
        }
    }
}

/// Plays one whole game of `seed` with `driver` to game over or `max_moves`
/// moves; allocation-free (the benchmark loop and the parity figures use it).
#[inline]
pub fn play_game_outcome<E: Engine, P: Policy>(
    engine: E,
    policy: &mut P,
    driver: DriverKind,
    seed: u32,
    max_moves: u32,
) -> GameOutcome {
    let mut game = engine.start(driver.driver(seed));
    policy.new_game(seed);
    let mut stats = WaveStats::default();
    let end = play_moves(&mut game, policy, max_moves, &mut stats)
        .expect("the default hooks never stop a game");
    GameOutcome::of(seed, &game, end, stats)
}

/// Plays one whole game of `seed` to game over or `max_moves` moves.
pub fn play_game<E: Engine, P: Policy>(
    engine: E,
    policy: &mut P,
    labels: &RunLabels,
    seed: u32,
    max_moves: u32,
) -> GameRecord {
    play_game_outcome(engine, policy, labels.driver, seed, max_moves).record(labels)
}

/// What a cohort run does beyond playing: detailed records, a stop flag, a
/// live move counter. `RunControl::default()` is the plain, fastest run.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunControl<'a> {
    /// Fill the records' per-game detail (see [`play_game_detailed`]).
    pub detail: bool,
    /// When set (e.g. by a signal handler), no new game starts and games in
    /// flight are abandoned at their next move; finished games are still
    /// handed over in seed order up to the first abandoned one.
    pub stop: Option<&'a AtomicBool>,
    /// Incremented once per move played (for live progress of slow policies).
    pub moves: Option<&'a AtomicU64>,
}

impl RunControl<'_> {
    #[inline]
    fn stopped(&self) -> bool {
        // Acquire: a worker that saw the effects of a signal handler's later
        // steps (a D7P engine killed after the flag was raised) sees the flag.
        self.stop.is_some_and(|s| s.load(Ordering::Acquire))
    }
}

/// The hooks of [`play_game_detailed`]: wave statistics, the current move's
/// deepest wave, the trajectory hash, search counters and decision latencies.
struct DetailHooks<'c, 'a> {
    ctl: &'c RunControl<'a>,
    stats: WaveStats,
    move_depth: u32,
    hash: crate::records::TrajectoryHash,
    popping_moves: u64,
    depth_sum: u64,
    work: u64,
    nodes: u64,
    searched: bool,
    latencies: Vec<f64>,
    /// A scripted round's rule: an illegal or missing choice is counted here
    /// and replaced by the first legal column. `None` in a seed run (its
    /// built-in policies always choose a legal column; a `d7p:` engine's
    /// illegal choices are counted by its policy).
    illegal: Option<u32>,
}

impl WaveSink for DetailHooks<'_, '_> {
    #[inline]
    fn push(&mut self, wave: Wave) {
        self.stats.push(wave);
        self.move_depth = self.move_depth.max(wave.depth);
    }
}

impl<G: EngineGame> MoveHooks<G> for DetailHooks<'_, '_> {
    fn stopped(&self) -> bool {
        self.ctl.stopped()
    }
    fn choose<P: Policy>(&mut self, policy: &mut P, game: &G) -> Option<usize> {
        // The latencies and the trajectory hash go only into detailed
        // records: a run without them (a stop flag only) skips both.
        let t = (self.ctl.detail && policy.may_time_choices()).then(Instant::now);
        let choice = policy.choose_in(game);
        if let Some(t) = t
            && policy.last_choice_timed()
        {
            self.latencies
                .push(round_us(t.elapsed().as_secs_f64() * 1e3));
        }
        if let Some(s) = policy.last_search() {
            self.work += s.work;
            self.nodes += s.nodes;
            self.searched = true;
        }
        self.move_depth = 0;
        match (&mut self.illegal, choice) {
            (None, _) => choice,
            (Some(_), Some(c)) if c < crate::board::SIZE && game.position().board.is_legal(c) => {
                choice
            }
            (Some(n), _) => {
                *n += 1;
                (0..crate::board::SIZE).find(|&c| game.position().board.is_legal(c))
            }
        }
    }
    fn after_move(&mut self, game: &G, column: usize, _summary: &MoveSummary) {
        if let Some(m) = self.ctl.moves {
            m.fetch_add(1, Ordering::Relaxed);
        }
        if self.ctl.detail {
            self.hash.push(column, &game.position().board);
        }
        if self.move_depth > 0 {
            self.popping_moves += 1;
            self.depth_sum += u64::from(self.move_depth);
        }
    }
}

/// Plays one whole game like [`play_game`] and fills the record's per-game
/// detail: `ruleset`, `maxMoves`, `engineVersion`, `chainMeanDepth`,
/// `trajectorySha256`, `wallMs`, for searching policies `work` and `nodes`,
/// and for searching policies and external engines the decision latencies
/// `decisionMsP50/P95/P99` (nearest rank over the game's timed decisions,
/// see [`Policy::last_choice_timed`]). The run-level fields (`table`, `maxWork`, cohort, shard)
/// are the caller's (see [`crate::runspec::stamp_record`]). `None` when
/// `ctl.stop` was raised before the game ended (the game is abandoned; a
/// resumed run replays it).
pub fn play_game_detailed<E: Engine, P: Policy>(
    engine: E,
    policy: &mut P,
    labels: &RunLabels,
    seed: u32,
    max_moves: u32,
    ctl: &RunControl<'_>,
) -> Option<GameRecord> {
    let ctl = RunControl {
        detail: true,
        ..*ctl
    };
    play_game_controlled(engine, policy, labels, seed, max_moves, &ctl)
}

/// [`play_game_detailed`] under `ctl` as it is: without `ctl.detail` the
/// trajectory hash and the decision latencies are not computed (their
/// record fields are `None`), which is most of the time of a fast policy's
/// game.
fn play_game_controlled<E: Engine, P: Policy>(
    engine: E,
    policy: &mut P,
    labels: &RunLabels,
    seed: u32,
    max_moves: u32,
    ctl: &RunControl<'_>,
) -> Option<GameRecord> {
    let started = Instant::now();
    let mut game = engine.start(labels.driver.driver(seed));
    policy.new_game(seed);
    play_detailed(
        &mut game, policy, labels, seed, max_moves, ctl, None, started,
    )
}

/// The body of [`play_game_detailed`] on a started `game` (also a scripted
/// round's, with `illegal` `Some(0)`: see [`DetailHooks::illegal`]); the
/// record's `illegalChoices` counts the choices replaced here and the
/// policy's own (see [`Policy::game_tallies`]).
#[allow(clippy::too_many_arguments)]
pub(crate) fn play_detailed<G: EngineGame, P: Policy>(
    game: &mut G,
    policy: &mut P,
    labels: &RunLabels,
    seed: u32,
    max_moves: u32,
    ctl: &RunControl<'_>,
    illegal: Option<u32>,
    started: Instant,
) -> Option<GameRecord> {
    let mut h = DetailHooks {
        ctl,
        stats: WaveStats::default(),
        move_depth: 0,
        hash: crate::records::TrajectoryHash::default(),
        popping_moves: 0,
        depth_sum: 0,
        work: 0,
        nodes: 0,
        searched: false,
        latencies: Vec::new(),
        illegal,
    };
    let end = play_moves(game, policy, max_moves, &mut h)?;
    let mut rec = GameOutcome::of(seed, game, end, h.stats).record(labels);
    rec.ruleset = Some(crate::records::RULESET.to_string());
    rec.max_moves = Some(max_moves);
    rec.engine_version = Some(crate::records::ENGINE_VERSION.to_string());
    rec.chain_mean_depth =
        (h.popping_moves > 0).then(|| h.depth_sum as f64 / h.popping_moves as f64);
    // (Hashed only for detailed records: see `DetailHooks::choose`.)
    rec.trajectory_sha256 = ctl.detail.then(|| h.hash.finish());
    if h.searched {
        rec.work = Some(h.work);
        rec.nodes = Some(h.nodes);
    }
    let mut latencies = h.latencies;
    latencies.sort_by(f64::total_cmp);
    if !latencies.is_empty() {
        let q = |p| Some(crate::records::nearest_rank(&latencies, p));
        rec.decision_ms_p50 = q(0.50);
        rec.decision_ms_p95 = q(0.95);
        rec.decision_ms_p99 = q(0.99);
    }
    rec.wall_ms = Some(round_us(started.elapsed().as_secs_f64() * 1e3));
    // An external engine's own tallies, per game (a tally kept by seed
    // mixed up two rounds that share a generator seed).
    rec.illegal_choices = match policy.game_tallies() {
        Some((failures, chosen)) => {
            rec.engine_failures = Some(failures);
            Some(h.illegal.unwrap_or(0) + chosen)
        }
        None => h.illegal,
    };
    Some(rec)
}

/// Milliseconds rounded to whole microseconds (records stay short).
fn round_us(ms: f64) -> f64 {
    (ms * 1e3).round() / 1e3
}

/// The seed of game `index` of a range starting at `seed_start` (seeds wrap
/// mod 2^32).
#[inline]
pub const fn nth_seed(seed_start: u32, index: u64) -> u32 {
    seed_start.wrapping_add(index as u32)
}

/// Largest batch of games a worker claims at once.
const MAX_BATCH: u64 = 1024;
/// A worker doubles its batch while a batch takes less than this...
const BATCH_GROW_BELOW: Duration = Duration::from_millis(2);
/// ...and halves it when a batch takes more than this.
const BATCH_SHRINK_ABOVE: Duration = Duration::from_millis(50);

/// A cohort: `games` games with consecutive seeds from `seed_start`.
#[derive(Clone, Debug)]
pub struct CohortConfig {
    /// Seed of the first game.
    pub seed_start: u32,
    /// Number of games (seeds wrap mod 2^32).
    pub games: u64,
    /// Move cap per game (reaching it censors the game).
    pub max_moves: u32,
    /// Worker threads (0 = all available cores). With one thread the games
    /// run on the calling thread; without the `threads` feature (e.g. on
    /// wasm32) always one.
    pub threads: usize,
    /// Policy name and driver of the records.
    pub labels: RunLabels,
}

impl CohortConfig {
    /// The number of workers actually used: `threads` (0 = all cores),
    /// at most one per game, at least one.
    pub fn workers(&self) -> usize {
        let t = if !cfg!(feature = "threads") {
            1
        } else if self.threads == 0 {
            available_threads()
        } else {
            self.threads
        };
        let cap = usize::try_from(self.games).unwrap_or(usize::MAX).max(1);
        t.clamp(1, cap)
    }
}

/// Most worker threads one run may ask for (`drop7 play --threads`, with or
/// without `--round`, and Python's `drop7.play(threads=…)`).
pub const MAX_THREADS: usize = 1024;

/// The machine's available parallelism (1 if unknown).
pub fn available_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Running totals over game records: games, moves, and a count per distinct
/// score (exact median; memory grows with the number of distinct scores, not
/// with the number of games).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CohortStats {
    /// Games counted.
    pub games: u64,
    /// Moves of all games.
    pub moves: u64,
    /// Games stopped by the move cap.
    pub censored: u64,
    /// Sum of the scores.
    pub score_sum: u128,
    /// Games per distinct score.
    pub score_counts: BTreeMap<u64, u64>,
    /// A D7P engine's failures and illegal choices (the records'
    /// `engineFailures`, `illegalChoices`): moves drop7 played in the first
    /// legal column for it, …
    pub engine_failures: u64,
    /// … see `engine_failures`, …
    pub illegal_choices: u64,
    /// … and the games with any.
    pub fallback_games: u64,
}

impl CohortStats {
    /// Counts one game.
    pub fn add(&mut self, rec: &GameRecord) {
        self.games += 1;
        self.moves += u64::from(rec.moves);
        self.censored += u64::from(rec.censored);
        self.score_sum += u128::from(rec.score);
        *self.score_counts.entry(rec.score).or_insert(0) += 1;
        let failures = u64::from(rec.engine_failures.unwrap_or(0));
        let illegal = u64::from(rec.illegal_choices.unwrap_or(0));
        self.engine_failures += failures;
        self.illegal_choices += illegal;
        self.fallback_games += u64::from(failures + illegal > 0);
    }

    /// Adds the games of `other`.
    pub fn merge(&mut self, other: &CohortStats) {
        self.games += other.games;
        self.moves += other.moves;
        self.censored += other.censored;
        self.score_sum += other.score_sum;
        self.engine_failures += other.engine_failures;
        self.illegal_choices += other.illegal_choices;
        self.fallback_games += other.fallback_games;
        for (&s, &c) in &other.score_counts {
            *self.score_counts.entry(s).or_insert(0) += c;
        }
    }

    /// The `k`-th smallest score (0-based), `k < games`.
    fn kth_score(&self, k: u64) -> u64 {
        let mut seen = 0;
        for (&s, &c) in &self.score_counts {
            seen += c;
            if k < seen {
                return s;
            }
        }
        0
    }

    /// Mean score (0 for no games).
    pub fn mean_score(&self) -> f64 {
        if self.games == 0 {
            return 0.0;
        }
        self.score_sum as f64 / self.games as f64
    }

    /// Median score (mean of the two middle scores for an even count; 0 for no games).
    pub fn median_score(&self) -> f64 {
        let n = self.games;
        if n == 0 {
            return 0.0;
        }
        if n % 2 == 1 {
            self.kth_score(n / 2) as f64
        } else {
            (self.kth_score(n / 2 - 1) as f64 + self.kth_score(n / 2) as f64) / 2.0
        }
    }

    /// Mean moves per game (0 for no games).
    pub fn mean_moves(&self) -> f64 {
        if self.games == 0 {
            0.0
        } else {
            self.moves as f64 / self.games as f64
        }
    }
}

/// What [`run_cohort`] reports.
#[derive(Clone, Debug)]
pub struct CohortSummary {
    /// Totals over the games played.
    pub stats: CohortStats,
    /// Wall time of the run.
    pub elapsed: Duration,
    /// Worker threads used.
    pub threads: usize,
    /// The run was stopped by [`RunControl::stop`] before its last game.
    pub interrupted: bool,
}

impl CohortSummary {
    /// Moves per second of wall time.
    pub fn moves_per_second(&self) -> f64 {
        let s = self.elapsed.as_secs_f64();
        if s > 0.0 {
            self.stats.moves as f64 / s
        } else {
            0.0
        }
    }
}

/// Plays a cohort on `cfg.threads` shared-nothing workers and hands every
/// game's record to `on_record` **in seed order**, as soon as all earlier
/// games are done. The records do not depend on the thread count.
///
/// Each worker builds its own policy with `make_policy` (once per worker, so a
/// policy with an expensive table is built `threads` times, not per game),
/// then pulls batches of game indices from a shared atomic cursor (a batch
/// grows while its games are cheap, so slow games go one at a time). Results
/// travel over a bounded channel to the calling thread, which buffers the
/// batches that arrive early (when `on_record` is slower than the workers,
/// they wait: memory does not grow with the cohort).
///
/// # Errors
/// The first error of `on_record`; the workers then stop after their current game.
pub fn run_cohort<E, P, F>(
    engine: E,
    make_policy: F,
    cfg: &CohortConfig,
    on_record: impl FnMut(GameRecord) -> io::Result<()>,
) -> io::Result<CohortSummary>
where
    E: Engine,
    P: Policy,
    F: Fn() -> P + Sync,
{
    run_cohort_with(engine, make_policy, cfg, &RunControl::default(), on_record)
}

/// [`run_cohort`] with a [`RunControl`]: detailed records, a stop flag (the
/// summary then says `interrupted`; the records handed over are the
/// finished games up to the first abandoned one), a live move counter.
///
/// # Errors
/// The first error of `on_record`; the workers then stop after their current game.
pub fn run_cohort_with<E, P, F>(
    engine: E,
    make_policy: F,
    cfg: &CohortConfig,
    ctl: &RunControl<'_>,
    on_record: impl FnMut(GameRecord) -> io::Result<()>,
) -> io::Result<CohortSummary>
where
    E: Engine,
    P: Policy,
    F: Fn() -> P + Sync,
{
    let start = cfg.seed_start;
    run_games(
        engine,
        make_policy,
        cfg,
        &|i| nth_seed(start, i),
        ctl,
        on_record,
    )
}

/// [`run_cohort_with`] over a list of seeds (any order, repeats allowed):
/// game `i` has seed `seeds[i]`, and the records come in list order, whatever
/// the thread count. `cfg.seed_start` and `cfg.games` are not used (the
/// games are `seeds`).
///
/// # Errors
/// The first error of `on_record`; the workers then stop after their current game.
pub fn run_seeds_with<E, P, F>(
    engine: E,
    make_policy: F,
    seeds: &[u32],
    cfg: &CohortConfig,
    ctl: &RunControl<'_>,
    on_record: impl FnMut(GameRecord) -> io::Result<()>,
) -> io::Result<CohortSummary>
where
    E: Engine,
    P: Policy,
    F: Fn() -> P + Sync,
{
    let cfg = CohortConfig {
        games: seeds.len() as u64,
        ..cfg.clone()
    };
    run_games(
        engine,
        make_policy,
        &cfg,
        &|i| seeds[i as usize],
        ctl,
        on_record,
    )
}

/// The cohort loop of [`run_cohort_with`] and [`run_seeds_with`]: game `i`
/// (`i < cfg.games`) has seed `seed_of(i)`.
fn run_games<E, P, F>(
    engine: E,
    make_policy: F,
    cfg: &CohortConfig,
    seed_of: &(dyn Fn(u64) -> u32 + Sync),
    ctl: &RunControl<'_>,
    mut on_record: impl FnMut(GameRecord) -> io::Result<()>,
) -> io::Result<CohortSummary>
where
    E: Engine,
    P: Policy,
    F: Fn() -> P + Sync,
{
    let play_one = |policy: &mut P, seed: u32| -> ControlFlow<(), GameRecord> {
        if ctl.detail || ctl.stop.is_some() || ctl.moves.is_some() {
            match play_game_controlled(engine, policy, &cfg.labels, seed, cfg.max_moves, ctl) {
                Some(mut rec) if !ctl.detail => {
                    rec = GameRecord {
                        ruleset: None,
                        max_moves: None,
                        engine_version: None,
                        chain_mean_depth: None,
                        trajectory_sha256: None,
                        work: None,
                        nodes: None,
                        wall_ms: None,
                        decision_ms_p50: None,
                        decision_ms_p95: None,
                        decision_ms_p99: None,
                        ..rec
                    };
                    ControlFlow::Continue(rec)
                }
                Some(rec) => ControlFlow::Continue(rec),
                None => ControlFlow::Break(()),
            }
        } else {
            ControlFlow::Continue(play_game(engine, policy, &cfg.labels, seed, cfg.max_moves))
        }
    };
    let started = Instant::now();
    let mut interrupted = false;
    let threads = cfg.workers();
    let mut stats = CohortStats::default();
    let mut emit = |rec: GameRecord| {
        stats.add(&rec);
        on_record(rec)
    };
    if threads == 1 {
        let mut policy = make_policy();
        for i in 0..cfg.games {
            let seed = seed_of(i);
            match play_one(&mut policy, seed) {
                ControlFlow::Continue(rec) => emit(rec)?,
                ControlFlow::Break(()) => {
                    interrupted = true;
                    break;
                }
            }
            if ctl.stopped() && i + 1 < cfg.games {
                interrupted = true;
                break;
            }
        }
    } else {
        let cursor = AtomicU64::new(0);
        let stop = AtomicBool::new(false);
        // Bounded: when `on_record` falls behind (a slow reader of `--out`,
        // such as `>(gzip -9 …)`), the workers wait instead of piling up
        // finished records in memory, and a stop leaves at most this many
        // batches to hand over. The collector never waits on a worker but
        // in `recv`, so a full channel cannot deadlock.
        let (tx, rx) = mpsc::sync_channel::<(u64, Vec<GameRecord>)>(2 * threads);
        std::thread::scope(|scope| -> io::Result<()> {
            for _ in 0..threads {
                let tx = tx.clone();
                let (cursor, stop, make_policy, play_one) =
                    (&cursor, &stop, &make_policy, &play_one);
                scope.spawn(move || {
                    let mut policy = make_policy();
                    // Games are claimed in batches whose size adapts to the
                    // game cost: one at a time for slow policies, up to
                    // `MAX_BATCH` for cheap ones (fewer wake-ups, same records).
                    let mut batch = 1u64;
                    while !stop.load(Ordering::Relaxed) && !ctl.stopped() {
                        let first = cursor.fetch_add(batch, Ordering::Relaxed);
                        if first >= cfg.games {
                            break;
                        }
                        let end = cfg.games.min(first + batch);
                        let t = Instant::now();
                        let mut recs: Vec<GameRecord> = Vec::new();
                        for i in first..end {
                            let seed = seed_of(i);
                            match play_one(&mut policy, seed) {
                                ControlFlow::Continue(rec) => recs.push(rec),
                                ControlFlow::Break(()) => break,
                            }
                        }
                        // A short batch (stopped) still hands over its
                        // finished games; the collector stops at the gap.
                        let short = recs.len() as u64 != end - first;
                        if tx.send((first, recs)).is_err() || short {
                            break;
                        }
                        let took = t.elapsed();
                        if took < BATCH_GROW_BELOW {
                            batch = (batch * 2).min(MAX_BATCH);
                        } else if took > BATCH_SHRINK_ABOVE {
                            batch = (batch / 2).max(1);
                        }
                    }
                });
            }
            drop(tx);
            let mut next = 0u64;
            let mut early: BTreeMap<u64, Vec<GameRecord>> = BTreeMap::new();
            let result = (|| {
                for (first, recs) in &rx {
                    if recs.is_empty() {
                        continue;
                    }
                    if first != next {
                        early.insert(first, recs);
                        continue;
                    }
                    let mut ready = Some(recs);
                    while let Some(recs) = ready {
                        next += recs.len() as u64;
                        for rec in recs {
                            emit(rec)?;
                        }
                        ready = early.remove(&next);
                    }
                }
                Ok(())
            })();
            if result.is_err() {
                stop.store(true, Ordering::Relaxed);
            }
            drop(rx);
            if result.is_ok() && next < cfg.games {
                interrupted = true;
            }
            result
        })?;
    }
    Ok(CohortSummary {
        stats,
        elapsed: started.elapsed(),
        threads,
        interrupted,
    })
}

/// Facts of a traced move beyond the trace line's first block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceExtras {
    /// Visible next disc after the move; `None` once the game is over.
    pub next_disc: Option<u8>,
    /// Why the game ended, if it did.
    pub terminal: Option<TerminalReason>,
}

/// The hooks of [`trace_game`]: the move's waves and disc, one record per move.
struct TraceHooks<F> {
    seed: u32,
    disc: u8,
    waves: Vec<Wave>,
    emit: F,
}

impl<F> WaveSink for TraceHooks<F> {
    #[inline]
    fn push(&mut self, wave: Wave) {
        self.waves.push(wave);
    }
}

impl<G: EngineGame, F: FnMut(TraceRecord, TraceExtras)> MoveHooks<G> for TraceHooks<F> {
    fn choose<P: Policy>(&mut self, policy: &mut P, game: &G) -> Option<usize> {
        self.disc = game.position().next_disc;
        policy.choose_in(game)
    }
    fn after_move(&mut self, game: &G, column: usize, s: &MoveSummary) {
        let after = game.position();
        (self.emit)(
            TraceRecord {
                seed: self.seed,
                move_number: game.moves_played(),
                disc: self.disc,
                column,
                score_delta: s.score_delta,
                score: game.score(),
                level: game.level(),
                moves_remaining: after.moves_remaining,
                game_over: after.game_over,
                cleared_board: s.cleared_board,
                level_advanced: s.level_advanced,
                waves: std::mem::take(&mut self.waves),
                board: format_cells(&after.board.to_cells()),
            },
            TraceExtras {
                next_disc: (!after.game_over).then_some(after.next_disc),
                terminal: s.terminal,
            },
        );
    }
}

/// Traces one game: one [`TraceRecord`] (and its [`TraceExtras`]) per move, to `emit`.
pub fn trace_game<E: Engine, P: Policy>(
    engine: E,
    policy: &mut P,
    driver: DriverKind,
    seed: u32,
    max_moves: u32,
    emit: impl FnMut(TraceRecord, TraceExtras),
) {
    let mut game = engine.start(driver.driver(seed));
    policy.new_game(seed);
    let mut hooks = TraceHooks {
        seed,
        disc: 0,
        waves: Vec::new(),
        emit,
    };
    play_moves(&mut game, policy, max_moves, &mut hooks);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gravity::{Bmi2, Portable};

    /// Every move of a game: column, summary, waves and the position after.
    #[derive(Default, PartialEq)]
    struct Moves(Vec<(usize, MoveSummary, Position)>, Vec<Wave>);

    impl WaveSink for Moves {
        fn push(&mut self, wave: Wave) {
            self.1.push(wave);
        }
    }

    impl<G: EngineGame> MoveHooks<G> for Moves {
        fn after_move(&mut self, game: &G, column: usize, summary: &MoveSummary) {
            self.0.push((column, *summary, game.position()));
        }
    }

    /// Game `seed` with `policy`, through `play_moves` (the copy built for
    /// the CPU's bit instructions, where it has them) or, if `baseline`,
    /// `play_moves_body` as baseline code: its end, every move, the score
    /// and the level.
    #[allow(clippy::type_complexity)]
    fn moves_of<E: Engine, P: Policy>(
        engine: E,
        mut policy: P,
        driver: DriverKind,
        seed: u32,
        baseline: bool,
    ) -> (Option<LoopEnd>, Moves, u64, u32) {
        let mut game = engine.start(driver.driver(seed));
        let mut hooks = Moves::default();
        policy.new_game(seed);
        let end = if baseline {
            play_moves_body(&mut game, &mut policy, 2000, &mut hooks)
        } else {
            play_moves(&mut game, &mut policy, 2000, &mut hooks)
        };
        (end, hooks, game.score(), game.level())
    }

    /// 2,000 center-policy and 2,000 random-policy games on `engine`, both
    /// drivers, the same move by move in both builds.
    fn same_games_in_both_builds<E: Engine>(engine: E) {
        for i in 0..4_000u32 {
            let seed = 0xA527_0000u32.wrapping_add(i);
            let driver = if i % 2 == 0 {
                DriverKind::Headless
            } else {
                DriverKind::Stream
            };
            let same = if i < 2_000 {
                moves_of(engine, CenterPolicy, driver, seed, false)
                    == moves_of(engine, CenterPolicy, driver, seed, true)
            } else {
                let p = RandomParityPolicy::default();
                moves_of(engine, p, driver, seed, false) == moves_of(engine, p, driver, seed, true)
            };
            assert!(same, "seed {seed:#x}: the builds differ");
        }
    }

    #[test]
    fn loop_builds_play_the_same_games() {
        eprintln!(
            "this CPU: {} {}, {} {}",
            LoopBuild::CountBits.instructions(),
            LoopBuild::CountBits.detected(),
            LoopBuild::AllBits.instructions(),
            LoopBuild::AllBits.detected()
        );
        same_games_in_both_builds(PackedEngine(Portable));
        if let Some(b) = Bmi2::detect() {
            same_games_in_both_builds(PackedEngine(b));
        }
    }

    fn cfg(games: u64, threads: usize) -> CohortConfig {
        CohortConfig {
            seed_start: u32::MAX - 2,
            games,
            max_moves: 2000,
            threads,
            labels: RunLabels {
                policy: "center".into(),
                driver: DriverKind::Headless,
            },
        }
    }

    #[test]
    fn records_in_seed_order_whatever_the_threads() {
        let mut want = Vec::new();
        run_cohort(
            PackedEngine(Portable),
            || CenterPolicy,
            &cfg(500, 1),
            |r| {
                want.push(r);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(want.len(), 500);
        assert_eq!(want[0].seed, "0xfffffffd");
        assert_eq!(want[3].seed, "0x00000000");
        for threads in [2, 3, 7] {
            let mut got = Vec::new();
            let s = run_cohort(
                PackedEngine(Portable),
                || CenterPolicy,
                &cfg(500, threads),
                |r| {
                    got.push(r);
                    Ok(())
                },
            )
            .unwrap();
            assert_eq!(got, want, "{threads} threads");
            assert_eq!(s.threads, threads);
            assert_eq!(s.stats.games, 500);
            assert_eq!(
                s.stats.moves,
                want.iter().map(|r| u64::from(r.moves)).sum::<u64>()
            );
        }
    }

    #[test]
    fn seed_lists_in_list_order_whatever_the_threads() {
        let seeds = [5, 1, 9, 1, u32::MAX, 0, 77];
        let c = cfg(0, 1);
        let want: Vec<GameRecord> = seeds
            .iter()
            .map(|&s| {
                play_game(
                    PackedEngine(Portable),
                    &mut CenterPolicy,
                    &c.labels,
                    s,
                    2000,
                )
            })
            .collect();
        for threads in [1, 3] {
            let mut got = Vec::new();
            let s = run_seeds_with(
                PackedEngine(Portable),
                || CenterPolicy,
                &seeds,
                &cfg(0, threads),
                &RunControl::default(),
                |r| {
                    got.push(r);
                    Ok(())
                },
            )
            .unwrap();
            assert_eq!(got, want, "{threads} threads");
            assert_eq!(s.stats.games, seeds.len() as u64);
        }
    }

    #[test]
    fn a_failing_sink_stops_the_run() {
        for threads in [1, 2] {
            let mut seen = 0;
            let r = run_cohort(
                PackedEngine(Portable),
                || CenterPolicy,
                &cfg(100_000, threads),
                |_| {
                    seen += 1;
                    if seen == 10 {
                        Err(io::Error::other("disk full"))
                    } else {
                        Ok(())
                    }
                },
            );
            assert_eq!(r.unwrap_err().to_string(), "disk full");
            assert_eq!(seen, 10);
        }
    }

    #[test]
    fn stats_and_workers() {
        let mut s = CohortStats::default();
        assert_eq!(
            (s.mean_score(), s.median_score(), s.mean_moves()),
            (0.0, 0.0, 0.0)
        );
        for (score, moves) in [(10, 2), (30, 4), (20, 6), (40, 8)] {
            let mut r = GameOutcome {
                seed: 0,
                score,
                moves,
                levels: 1,
                clears: 0,
                stats: WaveStats::default(),
                reason: StopReason::BlockedRise,
            }
            .record(&cfg(1, 1).labels);
            r.censored = moves == 8;
            s.add(&r);
        }
        assert_eq!(
            (s.mean_score(), s.median_score(), s.mean_moves()),
            (25.0, 25.0, 5.0)
        );
        assert_eq!((s.games, s.moves, s.censored), (4, 20, 1));
        assert_eq!(cfg(3, 8).workers(), 3);
        assert_eq!(cfg(0, 8).workers(), 1);
        assert!(cfg(100, 0).workers() >= 1);
    }
}

//! Playing whole games and cohorts of games: one engine (packed or reference),
//! one policy per worker, seeds in order, deterministic whatever the thread
//! count (games share nothing; results are collected in seed order).

use std::collections::BTreeMap;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::board::{Board, format_cells};
use crate::cascade::{WaveSink, WaveStats};
use crate::error::MoveError;
use crate::formats::{GameRecord, StopReason, TraceRecord, seed_hex};
use crate::game::{Driver, DriverKind, Game, MoveSummary, TerminalReason};
use crate::gravity::Gravity;
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
    #[inline]
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
    /// Chooses with the whole engine game at hand. Every public-information
    /// policy looks only at the position (the default); the greedy test-data
    /// policy tries each move on a copy of the game.
    fn choose_in<G: EngineGame>(&mut self, game: &G) -> Option<usize> {
        self.choose(&game.position())
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
            round: None,
            illegal_choices: None,
            engine_failures: None,
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
    let mut clears = 0u32;
    let mut reason = StopReason::MoveCap;
    while game.moves_played() < max_moves {
        let Some(column) = policy.choose_in(&game) else {
            // Unreachable: a live game always has a legal column.
            reason = StopReason::NoLegalColumn;
            break;
        };
        let Ok(s) = game.play_move(column, &mut stats) else {
            reason = StopReason::NoLegalColumn;
            break;
        };
        clears += u32::from(s.cleared_board);
        if let Some(t) = s.terminal {
            reason = match t {
                TerminalReason::BlockedRise => StopReason::BlockedRise,
                TerminalReason::NoLegalColumn => StopReason::NoLegalColumn,
            };
            break;
        }
    }
    GameOutcome {
        seed,
        score: game.score(),
        moves: game.moves_played(),
        levels: game.level(),
        clears,
        stats,
        reason,
    }
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

/// The machine's available parallelism (1 if unknown).
pub fn available_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Running totals over game records: games, moves, scores (kept for the median).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CohortStats {
    /// Games counted.
    pub games: u64,
    /// Moves of all games.
    pub moves: u64,
    /// Games stopped by the move cap.
    pub censored: u64,
    /// Every game's score, in the order added.
    pub scores: Vec<u64>,
}

impl CohortStats {
    /// Counts one game.
    pub fn add(&mut self, rec: &GameRecord) {
        self.games += 1;
        self.moves += u64::from(rec.moves);
        self.censored += u64::from(rec.censored);
        self.scores.push(rec.score);
    }

    /// Adds the games of `other`.
    pub fn merge(&mut self, other: &CohortStats) {
        self.games += other.games;
        self.moves += other.moves;
        self.censored += other.censored;
        self.scores.extend_from_slice(&other.scores);
    }

    /// Mean score (0 for no games).
    pub fn mean_score(&self) -> f64 {
        if self.games == 0 {
            return 0.0;
        }
        let sum: u128 = self.scores.iter().map(|&s| u128::from(s)).sum();
        sum as f64 / self.games as f64
    }

    /// Median score (mean of the two middle scores for an even count; 0 for no games).
    pub fn median_score(&self) -> f64 {
        if self.scores.is_empty() {
            return 0.0;
        }
        let mut s = self.scores.clone();
        s.sort_unstable();
        let n = s.len();
        if n % 2 == 1 {
            s[n / 2] as f64
        } else {
            (s[n / 2 - 1] as f64 + s[n / 2] as f64) / 2.0
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
/// travel over a channel to the calling thread, which buffers the batches that
/// arrive early.
///
/// # Errors
/// The first error of `on_record`; the workers then stop after their current game.
pub fn run_cohort<E, P, F>(
    engine: E,
    make_policy: F,
    cfg: &CohortConfig,
    mut on_record: impl FnMut(GameRecord) -> io::Result<()>,
) -> io::Result<CohortSummary>
where
    E: Engine,
    P: Policy,
    F: Fn() -> P + Sync,
{
    let started = Instant::now();
    let threads = cfg.workers();
    let mut stats = CohortStats::default();
    let mut emit = |rec: GameRecord| {
        stats.add(&rec);
        on_record(rec)
    };
    if threads == 1 {
        let mut policy = make_policy();
        for i in 0..cfg.games {
            let seed = nth_seed(cfg.seed_start, i);
            emit(play_game(
                engine,
                &mut policy,
                &cfg.labels,
                seed,
                cfg.max_moves,
            ))?;
        }
    } else {
        let cursor = AtomicU64::new(0);
        let stop = AtomicBool::new(false);
        let (tx, rx) = mpsc::channel::<(u64, Vec<GameRecord>)>();
        std::thread::scope(|scope| -> io::Result<()> {
            for _ in 0..threads {
                let tx = tx.clone();
                let (cursor, stop, make_policy) = (&cursor, &stop, &make_policy);
                scope.spawn(move || {
                    let mut policy = make_policy();
                    // Games are claimed in batches whose size adapts to the
                    // game cost: one at a time for slow policies, up to
                    // `MAX_BATCH` for cheap ones (fewer wake-ups, same records).
                    let mut batch = 1u64;
                    while !stop.load(Ordering::Relaxed) {
                        let first = cursor.fetch_add(batch, Ordering::Relaxed);
                        if first >= cfg.games {
                            break;
                        }
                        let end = cfg.games.min(first + batch);
                        let t = Instant::now();
                        let recs: Vec<GameRecord> = (first..end)
                            .map(|i| {
                                let seed = nth_seed(cfg.seed_start, i);
                                play_game(engine, &mut policy, &cfg.labels, seed, cfg.max_moves)
                            })
                            .collect();
                        if tx.send((first, recs)).is_err() {
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
            result
        })?;
    }
    Ok(CohortSummary {
        stats,
        elapsed: started.elapsed(),
        threads,
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

/// Traces one game: one [`TraceRecord`] (and its [`TraceExtras`]) per move, to `emit`.
pub fn trace_game<E: Engine, P: Policy>(
    engine: E,
    policy: &mut P,
    driver: DriverKind,
    seed: u32,
    max_moves: u32,
    mut emit: impl FnMut(TraceRecord, TraceExtras),
) {
    let mut game = engine.start(driver.driver(seed));
    policy.new_game(seed);
    while game.moves_played() < max_moves {
        let pos = game.position();
        let Some(column) = policy.choose_in(&game) else {
            break;
        };
        let mut waves = Vec::new();
        let Ok(s) = game.play_move(column, &mut waves) else {
            break;
        };
        let after = game.position();
        emit(
            TraceRecord {
                seed,
                move_number: game.moves_played(),
                disc: pos.next_disc,
                column,
                score_delta: s.score_delta,
                score: game.score(),
                level: game.level(),
                moves_remaining: after.moves_remaining,
                game_over: after.game_over,
                cleared_board: s.cleared_board,
                level_advanced: s.level_advanced,
                waves,
                board: format_cells(&after.board.to_cells()),
            },
            TraceExtras {
                next_disc: (!after.game_over).then_some(after.next_disc),
                terminal: s.terminal,
            },
        );
        if after.game_over {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gravity::Portable;

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

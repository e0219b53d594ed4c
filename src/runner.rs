//! Playing whole games and cohorts of games: one engine (packed or reference),
//! one policy per worker, seeds in order, deterministic whatever the thread
//! count (games share nothing; results are collected in seed order).

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
pub trait EngineGame {
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
    fn play_move<S: WaveSink>(&mut self, column: usize, sink: &mut S) -> Result<MoveSummary, MoveError>;
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
    fn play_move<S: WaveSink>(&mut self, column: usize, sink: &mut S) -> Result<MoveSummary, MoveError> {
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
    fn play_move<S: WaveSink>(&mut self, column: usize, sink: &mut S) -> Result<MoveSummary, MoveError> {
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

/// A per-game record sink that counts clears (the wave stats are the sink).
#[derive(Default)]
struct GameTally {
    stats: WaveStats,
}

impl WaveSink for GameTally {
    #[inline(always)]
    fn push(&mut self, wave: crate::cascade::Wave) {
        self.stats.push(wave);
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

/// Plays one whole game of `seed` to game over or `max_moves` moves.
pub fn play_game<E: Engine, P: Policy>(
    engine: E,
    policy: &mut P,
    labels: &RunLabels,
    seed: u32,
    max_moves: u32,
) -> GameRecord {
    let mut game = engine.start(labels.driver.driver(seed));
    policy.new_game(seed);
    let mut tally = GameTally::default();
    let mut clears = 0u32;
    let mut reason = StopReason::MoveCap;
    while game.moves_played() < max_moves {
        let pos = game.position();
        let Some(column) = policy.choose(&pos) else {
            // Unreachable: a live game always has a legal column.
            reason = StopReason::NoLegalColumn;
            break;
        };
        let Ok(s) = game.play_move(column, &mut tally) else {
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
    GameRecord {
        seed: seed_hex(seed),
        policy: labels.policy.clone(),
        driver: labels.driver.as_str().to_string(),
        score: game.score(),
        moves: game.moves_played(),
        levels: game.level(),
        clears,
        reveals: tally.stats.reveals,
        chain_max_depth: tally.stats.max_depth,
        terminal_reason: reason,
        censored: reason == StopReason::MoveCap,
    }
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
        let Some(column) = policy.choose(&pos) else { break };
        let mut waves = Vec::new();
        let Ok(s) = game.play_move(column, &mut waves) else { break };
        let after = game.position();
        emit(TraceRecord {
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
        }, TraceExtras {
            next_disc: (!after.game_over).then_some(after.next_disc),
            terminal: s.terminal,
        });
        if after.game_over {
            break;
        }
    }
}

//! drop7 for the web page: the core engine, the fair player and replay of
//! tapes and traces, behind a small wasm-bindgen interface. Every function
//! speaks JSON strings (shapes below) so the page's TypeScript stays thin.
//!
//! * [`WebGame`]: a live game (headless or stream driver, or a scripted
//!   round in latent board mode) whose moves report animation frames; state,
//!   legality and luck come from the core ([`drop7::latent::TrackedGame`] on
//!   the packed engine).
//! * [`decide`]: per-column values of a position under the fair search.
//! * [`replay_file`]: a dropped `drop7-recorded-game-v2` tape (replayed and
//!   checked by the core's [`drop7::tape`]) or `drop7 trace` JSON-lines file,
//!   turned into replay steps.
//! * [`trace_lines`], [`decide_golden`]: what the parity test in Node compares
//!   against the golden files.

pub use drop7::frames;
pub mod replay;

use std::rc::Rc;

use drop7::formats::{DecideRecord, position_from_parts};
use drop7::game::DriverKind;
use drop7::gravity::Portable;
use drop7::latent::{PackedCore, TrackedGame};
use drop7::leaf::FairLeaf;
use drop7::player::TableSpec;
use drop7::round::{ROUND_FORMAT, ScriptedRound};
use drop7::runner::{EngineGame, PackedEngine, Policy, trace_game};
use drop7::search::{FairSearch, MAX_DEPTH, MAX_STRATA, SearchConfig};
use drop7::table::{NoTable, SetAssociative, StrictLru};
use serde::Serialize;
use wasm_bindgen::prelude::*;

use frames::MoveFrames;

/// The core's game with tracked gray discs, on the packed engine.
pub type CoreGame = TrackedGame<PackedCore<Portable>>;

/// The public state of a game, as the page shows it.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StateView {
    /// Board, 49 trace characters, row 0 first.
    pub board: String,
    /// Next disc 1..=7; `null` once the game is over (or unknown).
    pub next: Option<u8>,
    /// Cumulative score.
    pub score: u64,
    /// Level (1 + rises).
    pub level: u32,
    /// Drops left before the rise.
    pub moves_remaining: u8,
    /// Moves played.
    pub moves: u32,
    /// Whether the game is over (for a scripted round, also once its move
    /// cap is reached).
    pub game_over: bool,
}

impl StateView {
    /// The state of `game` after `moves` moves; `capped`: a round's move cap
    /// stopped it.
    pub fn of(game: &CoreGame, capped: bool) -> StateView {
        let p = game.position();
        let over = p.game_over || capped;
        StateView {
            board: frames::board_text(&p.board.to_cells()),
            next: (!over).then_some(p.next_disc),
            score: game.score(),
            level: game.level(),
            moves_remaining: p.moves_remaining,
            moves: game.moves_played(),
            game_over: over,
        }
    }
}

/// One played move: what the page animates and then shows.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Step {
    /// Column played 0..=6.
    pub column: usize,
    /// Disc dropped.
    pub disc: u8,
    /// Frames and summary of the move.
    #[serde(flatten)]
    pub detail: MoveFrames,
    /// The state after the move.
    pub state: StateView,
    /// The move's waves, as a trace line has them (for checking a replayed
    /// trace; not sent to the page).
    #[serde(skip)]
    pub waves: Vec<drop7::cascade::Wave>,
}

/// Plays `column` on `game` (checked legal by the caller) and returns the
/// step: the core engine's move and state, with the frames drawn with the
/// values its reveals took.
///
/// # Errors
/// The core's refusal (full column, game over), worded for the page.
pub fn core_step(game: &mut CoreGame, column: usize, capped: bool) -> Result<Step, String> {
    let before = game.position();
    let mut reveals = Vec::new();
    let mut waves = Vec::new();
    let out = game
        .play_move_logged(column, &mut waves, &mut reveals)
        .map_err(|e| match e {
            drop7::MoveError::GameOver => "the game is over: start a new game or undo".to_string(),
            drop7::MoveError::ColumnFull(c) => format!("column {} is full", c + 1),
            drop7::MoveError::OutOfRange(c) => format!("column {c} is out of range"),
        })?;
    let state = StateView::of(game, capped);
    let disc = before.next_disc;
    let mut detail = frames::play(
        &before.board.to_cells(),
        before.moves_remaining,
        column,
        disc,
        &reveals,
    )
    .unwrap_or_else(|| MoveFrames::bare(0));
    if detail.frames.last().map(|f| f.board.as_str()) != Some(state.board.as_str()) {
        // Never expected (unit-tested); the core engine's state wins.
        detail.frames.clear();
    }
    detail.score_delta = out.score_delta;
    detail.level_advanced = out.level_advanced;
    detail.cleared_board = out.cleared_board;
    Ok(Step {
        column,
        disc,
        detail,
        state,
        waves,
    })
}

/// Where a game's luck comes from.
#[derive(Clone, Debug)]
enum Origin {
    /// A seeded game on the headless or stream driver (rules.md §6).
    Seed { seed: u32, stream: bool },
    /// A scripted round (formats.md): discs and hidden gray values fixed.
    Round(Rc<ScriptedRound>),
}

impl Origin {
    fn start(&self) -> CoreGame {
        let engine = PackedEngine(Portable);
        match self {
            Origin::Seed {
                seed,
                stream: false,
            } => TrackedGame::headless(engine, *seed),
            Origin::Seed { seed, stream: true } => TrackedGame::stream(engine, *seed),
            Origin::Round(r) => r.start(engine),
        }
    }
}

/// A live game of Drop7 Hardcore: a seeded game (headless or stream driver)
/// or a scripted round (latent board mode).
#[wasm_bindgen]
pub struct WebGame {
    game: CoreGame,
    origin: Origin,
}

impl WebGame {
    fn fresh(origin: Origin) -> WebGame {
        WebGame {
            game: origin.start(),
            origin,
        }
    }

    fn cap(&self) -> Option<u32> {
        match &self.origin {
            Origin::Round(r) => Some(r.maximum_moves),
            Origin::Seed { .. } => None,
        }
    }

    fn capped(&self) -> bool {
        self.cap().is_some_and(|c| self.game.moves_played() >= c)
    }

    fn view(&self) -> StateView {
        StateView::of(&self.game, self.capped())
    }

    /// Plays `column`, returning the step (core engine state, frames).
    ///
    /// # Errors
    /// A full or out-of-range column, a finished game or a round's move cap.
    pub fn play_step(&mut self, column: usize) -> Result<Step, String> {
        if let Some(cap) = self.cap().filter(|_| self.capped()) {
            return Err(format!(
                "the round's move cap ({cap} moves) is reached: restart or undo"
            ));
        }
        let p = self.game.position();
        drop7::game::check_move(&p, column).map_err(|e| match e {
            drop7::MoveError::GameOver => "the game is over: start a new game or undo".to_string(),
            drop7::MoveError::ColumnFull(c) => format!("column {} is full", c + 1),
            drop7::MoveError::OutOfRange(c) => format!("column {c} is out of range"),
        })?;
        let capped = self
            .cap()
            .is_some_and(|c| self.game.moves_played() + 1 >= c);
        core_step(&mut self.game, column, capped)
    }

    /// A new game of `seed` on the given driver, with `columns` replayed.
    ///
    /// # Errors
    /// Names the first move that cannot be played.
    pub fn with_moves(seed: u32, stream: bool, columns: &[u8]) -> Result<WebGame, String> {
        WebGame::fresh(Origin::Seed { seed, stream }).replayed(columns)
    }

    fn replayed(mut self, columns: &[u8]) -> Result<WebGame, String> {
        for (m, &c) in columns.iter().enumerate() {
            self.play_step(usize::from(c))
                .map_err(|e| format!("move {}: {e}", m + 1))?;
        }
        Ok(self)
    }

    /// A scripted round's game (latent board mode) from the round file's text.
    ///
    /// # Errors
    /// A file that is not a `drop7-scripted-round-v1` round, or the round's
    /// first problem ([`ScriptedRound::parse`]).
    pub fn round_from_text(text: &str) -> Result<WebGame, String> {
        let round = ScriptedRound::parse(text.trim_start_matches('\u{feff}'))
            .map_err(|e| format!("not a playable {ROUND_FORMAT} round: {e}"))?;
        Ok(WebGame::fresh(Origin::Round(Rc::new(round))))
    }
}

#[wasm_bindgen]
impl WebGame {
    /// A new headless-driver game of `seed` (rules.md §6).
    #[wasm_bindgen(constructor)]
    pub fn new(seed: u32) -> WebGame {
        WebGame::fresh(Origin::Seed {
            seed,
            stream: false,
        })
    }

    /// A headless game of `seed` with `columns` (0..=6 each) already played.
    ///
    /// # Errors
    /// Names the first move that cannot be played.
    #[wasm_bindgen(js_name = withMoves)]
    pub fn with_moves_js(seed: u32, columns: &[u8]) -> Result<WebGame, JsError> {
        WebGame::with_moves(seed, false, columns).map_err(|e| JsError::new(&e))
    }

    /// A game of a `drop7-scripted-round-v1` round file (formats.md; latent
    /// board mode: the round fixes every disc and every hidden gray value,
    /// and its `maximumMoves` caps the game).
    ///
    /// # Errors
    /// Not a round file, or what is wrong with it (field and index).
    #[wasm_bindgen(js_name = fromRound)]
    pub fn from_round_js(text: &str) -> Result<WebGame, JsError> {
        WebGame::round_from_text(text).map_err(|e| JsError::new(&e))
    }

    /// A new game with the same luck (seed and driver, or round), no move played.
    pub fn restarted(&self) -> WebGame {
        WebGame::fresh(self.origin.clone())
    }

    /// Plays `column` (0..=6): the step as JSON `{column, disc, frames,
    /// scoreDelta, levelAdvanced, clearedBoard, terminal, maxDepth, state}`.
    ///
    /// # Errors
    /// A full column, an out-of-range column, a finished game or a round's
    /// move cap; nothing changes.
    pub fn play(&mut self, column: u32) -> Result<String, JsError> {
        let step = self
            .play_step(column as usize)
            .map_err(|e| JsError::new(&e))?;
        Ok(serde_json::to_string(&step).unwrap_or_default())
    }

    /// The state as JSON `{board, next, score, level, movesRemaining, moves, gameOver}`.
    pub fn state(&self) -> String {
        serde_json::to_string(&self.view()).unwrap_or_default()
    }

    /// Takes back the last move (replays the game without it); false if none.
    pub fn undo(&mut self) -> bool {
        let Some((_, rest)) = self.game.columns_played().split_last() else {
            return false;
        };
        let rest = rest.to_vec();
        match WebGame::fresh(self.origin.clone()).replayed(&rest) {
            Ok(g) => {
                *self = g;
                true
            }
            Err(_) => false,
        }
    }

    /// The columns played so far.
    pub fn columns(&self) -> Vec<u8> {
        self.game.columns_played().to_vec()
    }

    /// The game seed (a round's `generatorSeedHex`).
    pub fn seed(&self) -> u32 {
        match &self.origin {
            Origin::Seed { seed, .. } => *seed,
            Origin::Round(r) => r.generator_seed,
        }
    }

    /// The round's id (`gauntlet-01`, …), or `undefined` for a seeded game.
    #[wasm_bindgen(js_name = roundId)]
    pub fn round_id(&self) -> Option<String> {
        match &self.origin {
            Origin::Round(r) => Some(r.id.clone()),
            Origin::Seed { .. } => None,
        }
    }

    /// The round's move cap (`maximumMoves`), or `undefined` for a seeded game.
    #[wasm_bindgen(js_name = moveCap)]
    pub fn move_cap(&self) -> Option<u32> {
        self.cap()
    }

    /// Legal columns as a 7-bit mask (bit c = column c); 0 once the game is
    /// over or a round's move cap is reached.
    #[wasm_bindgen(js_name = legalMask)]
    pub fn legal_mask(&self) -> u8 {
        let p = self.game.position();
        if p.game_over || self.capped() {
            0
        } else {
            p.board.legal_mask()
        }
    }
}

/// Whether `text` is a scripted round file (a JSON object whose `format` is
/// `drop7-scripted-round-v1`), to be played rather than replayed.
#[wasm_bindgen(js_name = isRoundFile)]
pub fn is_round_file(text: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(text.trim_start_matches('\u{feff}'))
        .ok()
        .and_then(|v| {
            v.get("format")
                .and_then(|f| f.as_str())
                .map(|f| f == ROUND_FORMAT)
        })
        .unwrap_or(false)
}

/// Parses a seed in decimal or `0x` hex (a u32).
///
/// # Errors
/// A message naming the text.
#[wasm_bindgen(js_name = parseSeed)]
pub fn parse_seed(text: &str) -> Result<u32, JsError> {
    drop7::formats::parse_seed(text).map_err(|e| JsError::new(&e))
}

/// The fair search's decision on a position, as `drop7 decide` prints it:
/// JSON `{action, completedDepth, values (16-hex-digit bit patterns or null),
/// valuesDecimal, work, nodes, cacheHits, cacheEntries, evictions, leafCalls,
/// moveCalls, ms}` (`ms` is 0: the caller times it). Table: the CLI's default
/// ([`TableSpec::default_for_depth`]: set-associative, 4 ways, 65,536 entries
/// up to depth 4 and 2^20 from depth 5), so the counters are `drop7 decide`'s
/// too. Spec: search.md.
///
/// # Errors
/// A malformed board, `next` outside 1..=7, `rise` outside 1..=5, depth
/// outside 1..=8 or strata outside 1..=32, or a table the browser cannot allocate.
#[wasm_bindgen]
pub fn decide(
    board: &str,
    next: u32,
    rise: u32,
    depth: u32,
    strata: u32,
) -> Result<String, JsError> {
    if !(1..=MAX_DEPTH).contains(&depth) {
        return Err(JsError::new(&format!(
            "depth must be 1-{MAX_DEPTH}, got {depth}"
        )));
    }
    if !(1..=MAX_STRATA).contains(&strata) {
        return Err(JsError::new(&format!(
            "strata must be 1-{MAX_STRATA}, got {strata}"
        )));
    }
    let pos = position_from_parts(board, u64::from(next), u64::from(rise), false)
        .map_err(|e| JsError::new(&e.to_string()))?;
    let (entries, ways) = match TableSpec::default_for_depth(depth) {
        TableSpec::SetAssociative { entries, ways } => (entries, ways),
        _ => (1 << 16, 4),
    };
    // Fallible: a browser may refuse the 46 MB of the deep table (a message, not a trap).
    let table = SetAssociative::try_new(entries, ways).map_err(|e| JsError::new(&e.to_string()))?;
    let mut s = FairSearch::new(FairLeaf, table, Portable, SearchConfig::new(depth, strata));
    let d = s.decide(&pos);
    Ok(serde_json::to_string(&DecideRecord::new(&d, 0.0)).unwrap_or_default())
}

/// Runs one golden search record (a `search.jsonl` line) with its own
/// config and the strict-LRU table at its capacity (0 = none), as the native
/// parity gate does; returns the decision as [`decide`] formats it, plus
/// `expectedScores`.
///
/// # Errors
/// A record without the root or config fields.
#[wasm_bindgen(js_name = decideGolden)]
pub fn decide_golden(record: &str) -> Result<String, JsError> {
    golden_decision(record).map_err(|e| JsError::new(&e))
}

fn golden_decision(record: &str) -> Result<String, String> {
    let g: serde_json::Value = serde_json::from_str(record).map_err(|e| e.to_string())?;
    let num = |v: &serde_json::Value, what: &str| {
        v.as_u64().ok_or_else(|| format!("missing or bad {what}"))
    };
    let pos = position_from_parts(
        g["board"].as_str().ok_or("missing board")?,
        num(&g["next"], "next")?,
        num(&g["movesRemaining"], "movesRemaining")?,
        false,
    )
    .map_err(|e| e.to_string())?;
    let c = &g["config"];
    let config = SearchConfig {
        depth: num(&c["depth"], "config.depth")? as u32,
        strata: num(&c["strata"], "config.strata")? as u32,
        max_work: num(&c["maxWork"], "config.maxWork")?,
    };
    let d = match num(&c["cacheCapacity"], "config.cacheCapacity")? {
        0 => FairSearch::new(FairLeaf, NoTable, Portable, config).decide(&pos),
        cap => {
            FairSearch::new(FairLeaf, StrictLru::new(cap as usize), Portable, config).decide(&pos)
        }
    };
    let mut v = serde_json::to_value(DecideRecord::new(&d, 0.0)).map_err(|e| e.to_string())?;
    v["expectedScores"] = serde_json::to_value(d.expected_scores).map_err(|e| e.to_string())?;
    Ok(v.to_string())
}

/// Plays the given columns in order, as a policy (stops when they run out).
struct Columns<'a>(&'a [u8], usize);

impl Policy for Columns<'_> {
    fn new_game(&mut self, _seed: u32) {
        self.1 = 0;
    }
    fn choose(&mut self, _pos: &drop7::Position) -> Option<usize> {
        let c = self.0.get(self.1).map(|&c| usize::from(c));
        self.1 += 1;
        c
    }
}

/// `drop7 trace`'s lines (trace-format.md block 1, one JSON object a line,
/// `\n`-terminated) for the game of `seed` on the headless (or, if `stream`,
/// stream) driver playing `columns` in order; stops at the first illegal
/// column or at game over.
#[wasm_bindgen(js_name = traceLines)]
pub fn trace_lines(seed: u32, stream: bool, columns: &[u8]) -> String {
    let kind = if stream {
        DriverKind::Stream
    } else {
        DriverKind::Headless
    };
    let mut out = String::new();
    let mut policy = Columns(columns, 0);
    trace_game(
        PackedEngine(Portable),
        &mut policy,
        kind,
        seed,
        u32::MAX,
        |rec, _| {
            out.push_str(&serde_json::to_string(&rec).unwrap_or_default());
            out.push('\n');
        },
    );
    out
}

/// Validates a dropped file and turns it into replay steps: JSON
/// `{kind: "tape"|"trace", title, seed, start: state, steps: [step],
/// failure, note}` (see [`replay::Replay`]).
///
/// # Errors
/// A message naming what is wrong and where (line, field, move).
#[wasm_bindgen(js_name = replayFile)]
pub fn replay_file(text: &str) -> Result<String, JsError> {
    let r = replay::replay_text(text).map_err(|e| JsError::new(&e))?;
    Ok(serde_json::to_string(&r).unwrap_or_default())
}

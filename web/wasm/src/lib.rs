//! drop7 for the web page: the core engine, the fair player and replay of
//! tapes and traces, behind a small wasm-bindgen interface. Every function
//! speaks JSON strings (shapes below) so the page's TypeScript stays thin.
//!
//! * [`WebGame`]: a live game (headless or stream driver) whose moves report
//!   animation frames; state and legality come from the core packed engine.
//! * [`decide`]: per-column values of a position under the fair search.
//! * [`replay_file`]: a dropped `drop7-recorded-game-v2` tape or `drop7 trace`
//!   JSON-lines file, validated and turned into replay steps.
//! * [`trace_lines`], [`decide_golden`]: what the parity test in Node compares
//!   against the golden files.

pub mod frames;
pub mod replay;

use drop7::board::{CELLS, SIZE};
use drop7::formats::{DecideRecord, position_from_parts};
use drop7::game::{Driver, DriverKind, Game};
use drop7::gravity::Portable;
use drop7::leaf::FairLeaf;
use drop7::rng::{DiscSource, Mulberry32, headless_reveal_seed};
use drop7::runner::{PackedEngine, Policy, trace_game};
use drop7::search::{FairSearch, MAX_DEPTH, MAX_STRATA, SearchConfig};
use drop7::table::{NoTable, SetAssociative, StrictLru};
use serde::Serialize;
use wasm_bindgen::prelude::*;

use frames::{MoveFrames, RevealSource};

/// Reveals drawn from a copy of the move's random stream (the live game's).
struct Draws(Mulberry32);

impl RevealSource for Draws {
    fn reveal(&mut self, _cell: usize, _hidden: u8) -> u8 {
        self.0.draw_disc()
    }
    fn rise_row(&mut self) -> Result<[u8; SIZE], String> {
        Ok([0; SIZE])
    }
}

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
    /// Whether the game is over.
    pub game_over: bool,
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
}

/// A live game of Drop7 Hardcore.
#[wasm_bindgen]
pub struct WebGame {
    game: Game<Portable>,
    kind: DriverKind,
    columns: Vec<u8>,
}

impl WebGame {
    fn view(&self) -> StateView {
        let s = self.game.state();
        StateView {
            board: frames::board_text(&s.position.board.to_cells()),
            next: (!s.position.game_over).then_some(s.position.next_disc),
            score: s.score,
            level: s.level,
            moves_remaining: s.position.moves_remaining,
            moves: s.moves_played,
            game_over: s.position.game_over,
        }
    }

    /// Plays `column`, returning the step (core engine state, cell-engine frames).
    pub fn play_step(&mut self, column: usize) -> Result<Step, String> {
        let before = *self.game.state();
        drop7::game::check_move(&before.position, column).map_err(|e| match e {
            drop7::MoveError::GameOver => "the game is over: start a new game or undo".to_string(),
            drop7::MoveError::ColumnFull(c) => format!("column {} is full", c + 1),
            drop7::MoveError::OutOfRange(c) => format!("column {c} is out of range"),
        })?;
        let rng = match self.game.driver() {
            Driver::Headless { seed } => {
                Mulberry32::new(headless_reveal_seed(*seed, before.moves_played))
            }
            Driver::Stream { rng, .. } => *rng,
        };
        let mut cells = before.position.board.to_cells();
        let mut hidden = [0u8; CELLS];
        let mut rise = before.position.moves_remaining;
        let disc = before.position.next_disc;
        let mut detail = frames::play(
            &mut cells,
            &mut hidden,
            &mut rise,
            column,
            disc,
            &mut Draws(rng),
        )?;
        let out = self.game.play(column).map_err(|e| e.to_string())?;
        self.columns.push(column as u8);
        let state = self.view();
        if detail.frames.last().map(|f| f.board.as_str()) != Some(state.board.as_str()) {
            // Never expected (unit-tested); the core engine's state wins.
            detail.frames.clear();
        }
        detail.score_delta = out.score_delta;
        Ok(Step {
            column,
            disc,
            detail,
            state,
        })
    }

    /// A new game of `seed` on the given driver, with `columns` replayed.
    pub fn with_moves(seed: u32, stream: bool, columns: &[u8]) -> Result<WebGame, String> {
        let kind = if stream {
            DriverKind::Stream
        } else {
            DriverKind::Headless
        };
        let mut g = WebGame {
            game: Game::new(kind.driver(seed)),
            kind,
            columns: Vec::new(),
        };
        for (m, &c) in columns.iter().enumerate() {
            g.play_step(usize::from(c))
                .map_err(|e| format!("move {}: {e}", m + 1))?;
        }
        Ok(g)
    }
}

#[wasm_bindgen]
impl WebGame {
    /// A new headless-driver game of `seed` (rules.md §6).
    #[wasm_bindgen(constructor)]
    pub fn new(seed: u32) -> WebGame {
        WebGame {
            game: Game::new(Driver::headless(seed)),
            kind: DriverKind::Headless,
            columns: Vec::new(),
        }
    }

    /// A headless game of `seed` with `columns` (0..=6 each) already played.
    ///
    /// # Errors
    /// Names the first move that cannot be played.
    #[wasm_bindgen(js_name = withMoves)]
    pub fn with_moves_js(seed: u32, columns: &[u8]) -> Result<WebGame, JsError> {
        WebGame::with_moves(seed, false, columns).map_err(|e| JsError::new(&e))
    }

    /// Plays `column` (0..=6): the step as JSON `{column, disc, frames,
    /// scoreDelta, levelAdvanced, clearedBoard, terminal, maxDepth, state}`.
    ///
    /// # Errors
    /// A full column, an out-of-range column, or a finished game; nothing changes.
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
        let Some((_, rest)) = self.columns.split_last() else {
            return false;
        };
        let rest = rest.to_vec();
        let stream = self.kind == DriverKind::Stream;
        match WebGame::with_moves(self.seed(), stream, &rest) {
            Ok(g) => {
                *self = g;
                true
            }
            Err(_) => false,
        }
    }

    /// The columns played so far.
    pub fn columns(&self) -> Vec<u8> {
        self.columns.clone()
    }

    /// The game seed.
    pub fn seed(&self) -> u32 {
        self.game.driver().seed()
    }

    /// Legal columns as a 7-bit mask (bit c = column c); 0 once the game is over.
    #[wasm_bindgen(js_name = legalMask)]
    pub fn legal_mask(&self) -> u8 {
        let p = &self.game.state().position;
        if p.game_over { 0 } else { p.board.legal_mask() }
    }
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
/// (set-associative, 65,536 entries, 4 ways). Spec: search.md.
///
/// # Errors
/// A malformed board, `next` outside 1..=7, `rise` outside 1..=5, depth
/// outside 1..=8 or strata outside 1..=32.
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
    let mut s = FairSearch::new(
        FairLeaf,
        SetAssociative::new(1 << 16, 4),
        Portable,
        SearchConfig::new(depth, strata),
    );
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

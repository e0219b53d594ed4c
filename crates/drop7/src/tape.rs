//! Recorded game tapes, `drop7-recorded-game-v2` (spec: formats.md "Recorded
//! game tape", rules.md §8): a finished game's columns, discs and the hidden
//! values of every covered row, replayable with zero random draws.
//!
//! * [`Tape::of_game`] writes any [`TrackedGame`] (scripted round, or a seeded
//!   headless/stream game whose reveal values were written down) as a tape.
//! * [`replay`] verifies a tape move by move, trusting nothing in it, and
//!   reports [`Replay`]: `valid`, `complete`, `failure` (`invalid-format`,
//!   `illegal-column`, `trailing-move`, `incomplete-game`,
//!   `invalid-configuration`: formats.md's words, nothing else), score,
//!   level, moves, covered rows consumed and the move number where it failed.
//!
//! drop7 adds optional fields the reference ignores: `score`, `level`,
//! `moves` (claimed totals), `scores` and `boards` (score and board after each
//! move: one entry per column), `seed`/`round`/`policy`/`driver`
//! (provenance). When present they are checked against the replay; a
//! difference makes the tape `invalid-format` (a self-contradicting object;
//! the error starts with `tampered:`) at the first move that differs. A
//! `scores` or `boards` array of another length than `columns`, or an object
//! that repeats a key, is `invalid-format` before any move is replayed.

use serde::{Deserialize, Serialize};

use crate::board::{SIZE, format_cells};
use crate::game::MoveSummary;
use crate::gravity::Portable;
use crate::latent::{CoreEngine, EngineCore, TrackedGame};
use crate::position::Position;
use crate::round::{FormatError, array, field, int_in, json_object, rows7};
use crate::runner::{EngineGame, PackedEngine};

/// The format string of a tape.
pub const TAPE_FORMAT: &str = "drop7-recorded-game-v2";
/// The Hardcore ruleset id.
pub const HARDCORE: &str = "drop7-hardcore-5-v1";
/// Most moves a tape may hold.
pub const MAX_TAPE_MOVES: usize = 20_000;

/// A recorded tape as drop7 writes it (the reference's fields, then drop7's).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tape {
    /// `"drop7-recorded-game-v2"`.
    pub format: String,
    /// `"drop7-hardcore-5-v1"`.
    pub ruleset: String,
    /// Column of each move, 0..=6.
    pub columns: Vec<u8>,
    /// Disc dropped at each move, 1..=7.
    pub discs: Vec<u8>,
    /// Hidden value of a dropped gray (Classic only): all `null` in Hardcore.
    pub drop_latent_values: Vec<Option<u8>>,
    /// Hidden values of the opening covered row, then of each row that rose.
    pub covered_rows: Vec<[u8; SIZE]>,
    /// Claimed final score (drop7; checked on replay).
    pub score: u64,
    /// Claimed final level (drop7; checked).
    pub level: u32,
    /// Claimed number of moves (drop7; checked).
    pub moves: u32,
    /// Score after each move (drop7; checked move by move).
    pub scores: Vec<u64>,
    /// Board after each move, 49 digits (drop7; checked move by move).
    pub boards: Vec<String>,
    /// Game seed as `0x…` (drop7 provenance; not checked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<String>,
    /// Scripted round id (drop7 provenance; not checked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<String>,
    /// Policy name (drop7 provenance; not checked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
    /// Driver the game was played with (drop7 provenance; not checked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
}

impl Tape {
    /// The tape of `game` so far. Hidden values of covered discs that were
    /// never revealed in a recorded (seeded) game are written as 1 (they
    /// never influence the replay).
    pub fn of_game<C: EngineCore>(game: &TrackedGame<C>) -> Tape {
        let used = game.grays().rows_used();
        let covered_rows: Vec<[u8; SIZE]> = game.grays().rows()[..used]
            .iter()
            .map(|r| r.map(|v| if v == 0 { 1 } else { v }))
            .collect();
        let columns = game.columns_played().to_vec();
        let discs = game.discs_played().to_vec();
        // The per-move trail, from a replay of the tape itself.
        let mut again = TrackedGame::latent_with(
            PackedEngine(Portable),
            covered_rows.clone(),
            discs.clone(),
            1,
        );
        let (mut scores, mut boards) = (Vec::new(), Vec::new());
        for &c in &columns {
            if again.play_move(usize::from(c), &mut ()).is_err() {
                break;
            }
            scores.push(again.score());
            boards.push(format_cells(&again.position().board.to_cells()));
        }
        Tape {
            format: TAPE_FORMAT.to_string(),
            ruleset: HARDCORE.to_string(),
            drop_latent_values: vec![None; columns.len()],
            columns,
            discs,
            covered_rows,
            score: game.score(),
            level: game.level(),
            moves: game.moves_played(),
            scores,
            boards,
            seed: None,
            round: None,
            policy: None,
            driver: None,
        }
    }
}

/// The outcome of replaying one tape (one JSON line of `drop7 replay`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Replay {
    /// Every check passed.
    pub valid: bool,
    /// The replay reached game over.
    pub complete: bool,
    /// `invalid-format`, `illegal-column`, `trailing-move`,
    /// `incomplete-game`, `invalid-configuration` (formats.md's words), or
    /// `null`. A tape whose own `score`/`scores`/`boards` disagree with the
    /// replay is `invalid-format`, its error starting with `tampered:`.
    pub failure: Option<String>,
    /// Score recomputed by the replay (up to the failure).
    pub score: u64,
    /// Level recomputed by the replay.
    pub level: u32,
    /// Moves replayed.
    pub moves: u32,
    /// Covered rows consumed (opening row + successful rises).
    pub covered_rows_consumed: usize,
    /// 1-based move number where the tape failed, when a move is to blame.
    pub failed_at_move: Option<u32>,
    /// What was wrong, in words.
    pub error: Option<String>,
}

fn fail(kind: &str, at: Option<u32>, error: String) -> Replay {
    Replay {
        valid: false,
        complete: false,
        failure: Some(kind.to_string()),
        score: 0,
        level: 1,
        moves: 0,
        covered_rows_consumed: 0,
        failed_at_move: at,
        error: Some(error),
    }
}

struct Parsed {
    columns: Vec<u8>,
    discs: Vec<u8>,
    rows: Vec<[u8; SIZE]>,
    claimed: Vec<(&'static str, u64)>,
    scores: Option<Vec<u64>>,
    boards: Option<Vec<String>>,
}

fn parse(text: &str) -> Result<Parsed, (FormatError, Option<u32>)> {
    let obj = json_object(text).map_err(|e| (e, None))?;
    let g = |k: &str| field(&obj, k).map_err(|e| (e, None));
    let format = g("format")?;
    if format.as_str() != Some(TAPE_FORMAT) {
        return Err((
            FormatError(format!("format must be \"{TAPE_FORMAT}\", got {format}")),
            None,
        ));
    }
    let ruleset = g("ruleset")?;
    if ruleset.as_str() != Some(HARDCORE) {
        return Err((
            FormatError(format!(
                "ruleset {ruleset} is not supported (drop7 plays \"{HARDCORE}\")"
            )),
            None,
        ));
    }
    let columns_v = array(g("columns")?, "columns").map_err(|e| (e, None))?;
    let n = columns_v.len();
    if n == 0 || n > MAX_TAPE_MOVES {
        return Err((
            FormatError(format!(
                "columns must hold 1 to {MAX_TAPE_MOVES} moves, got {n}"
            )),
            None,
        ));
    }
    let mut columns = Vec::with_capacity(n);
    for (i, c) in columns_v.iter().enumerate() {
        let c = int_in(c, &format!("columns[{i}] (move {})", i + 1), 0, 6)
            .map_err(|e| (e, Some(i as u32 + 1)))?;
        columns.push(c as u8);
    }
    let discs_v = array(g("discs")?, "discs").map_err(|e| (e, None))?;
    if discs_v.len() != n {
        return Err((
            FormatError(format!(
                "discs has {} entries but columns has {n}",
                discs_v.len()
            )),
            None,
        ));
    }
    let mut discs = Vec::with_capacity(n);
    for (i, d) in discs_v.iter().enumerate() {
        let d = int_in(d, &format!("discs[{i}] (move {})", i + 1), 1, 7)
            .map_err(|e| (e, Some(i as u32 + 1)))?;
        discs.push(d as u8);
    }
    let drops = array(g("dropLatentValues")?, "dropLatentValues").map_err(|e| (e, None))?;
    if drops.len() != n {
        return Err((
            FormatError(format!(
                "dropLatentValues has {} entries but columns has {n}",
                drops.len()
            )),
            None,
        ));
    }
    if let Some(i) = drops.iter().position(|v| !v.is_null()) {
        return Err((
            FormatError(format!(
                "dropLatentValues[{i}] (move {}) must be null in Hardcore (no gray drops)",
                i + 1
            )),
            Some(i as u32 + 1),
        ));
    }
    let rows = rows7(g("coveredRows")?, "coveredRows").map_err(|e| (e, None))?;
    let mut claimed = Vec::new();
    for key in ["score", "level", "moves"] {
        if let Some(v) = obj.get(key) {
            let x = v.as_u64().ok_or_else(|| {
                (
                    FormatError(format!(
                        "{key} must be an integer 0-18446744073709551615, got {v}"
                    )),
                    None,
                )
            })?;
            claimed.push((key, x));
        }
    }
    // `scores` and `boards`, when present, hold one entry per move: a shorter
    // or longer trail is a malformed tape, not a partial claim.
    let per_move = |key: &str| -> Result<Option<&Vec<serde_json::Value>>, _> {
        let Some(v) = obj.get(key) else {
            return Ok(None);
        };
        let a = array(v, key).map_err(|e| (e, None))?;
        if a.len() != n {
            return Err((
                FormatError(format!(
                    "{key} has {} entries but columns has {n} (one per move)",
                    a.len()
                )),
                None,
            ));
        }
        Ok(Some(a))
    };
    let scores = match per_move("scores")? {
        None => None,
        Some(a) => Some(
            a.iter()
                .enumerate()
                .map(|(i, x)| {
                    x.as_u64().ok_or_else(|| {
                        (
                            FormatError(format!(
                                "scores[{i}] must be an integer 0-18446744073709551615, got {x}"
                            )),
                            Some(i as u32 + 1),
                        )
                    })
                })
                .collect::<Result<Vec<u64>, _>>()?,
        ),
    };
    let boards = match per_move("boards")? {
        None => None,
        Some(a) => Some(
            a.iter()
                .enumerate()
                .map(|(i, x)| {
                    x.as_str().map(str::to_string).ok_or_else(|| {
                        (
                            FormatError(format!("boards[{i}] must be a string, got {x}")),
                            Some(i as u32 + 1),
                        )
                    })
                })
                .collect::<Result<Vec<String>, _>>()?,
        ),
    };
    Ok(Parsed {
        columns,
        discs,
        rows,
        claimed,
        scores,
        boards,
    })
}

/// Sees every move of a tape replay ([`replay_observed`]).
pub trait ReplayObserver<C: EngineCore> {
    /// Called after each move that passed every check: `before` is the
    /// position the move was played from, `reveals` the values of the gray
    /// discs it revealed (in reveal order), `game` the game after it.
    fn moved(
        &mut self,
        before: &Position,
        column: usize,
        summary: &MoveSummary,
        reveals: &[u8],
        game: &TrackedGame<C>,
    );
}

impl<C: EngineCore> ReplayObserver<C> for () {
    fn moved(&mut self, _: &Position, _: usize, _: &MoveSummary, _: &[u8], _: &TrackedGame<C>) {}
}

/// Replays a tape's text on `engine` (spec: formats.md "Recorded game tape";
/// the reference replays with `() => 0`, so the engine's own next-disc draw
/// is a 1, overwritten by the tape's next disc).
pub fn replay<E: CoreEngine>(engine: E, text: &str) -> Replay {
    replay_observed(engine, text, &mut ())
}

/// [`replay`], showing every move that passed its checks to `observer` (the
/// web page builds its replay steps this way). The result is the same.
pub fn replay_observed<E: CoreEngine, O: ReplayObserver<E::Core>>(
    engine: E,
    text: &str,
    observer: &mut O,
) -> Replay {
    let p = match parse(text) {
        Ok(p) => p,
        Err((e, at)) => return fail("invalid-format", at, e.0),
    };
    if p.rows.is_empty() {
        return fail(
            "invalid-configuration",
            None,
            "coveredRows is empty: the opening covered row is missing".into(),
        );
    }
    let n_rows = p.rows.len();
    let mut game = TrackedGame::latent_with(engine, p.rows, p.discs, 1);
    let mut out = Replay {
        valid: false,
        complete: false,
        failure: None,
        score: 0,
        level: 1,
        moves: 0,
        covered_rows_consumed: 1,
        failed_at_move: None,
        error: None,
    };
    let mut failure: Option<(&str, Option<u32>, String)> = None;
    // What the replay reports: score, level, moves and covered rows consumed.
    let counts = |g: &TrackedGame<E::Core>| {
        (
            g.score(),
            g.level(),
            g.moves_played(),
            g.grays().rows_used(),
        )
    };
    // The counts before a move that was played but failed (on the covered
    // rows, or against the tape's claims): such a move is not counted.
    let mut failed_move = None;
    let mut reveals = Vec::new();
    for (i, &c) in p.columns.iter().enumerate() {
        let m = i as u32 + 1;
        let pos = game.position();
        if pos.game_over {
            failure = Some((
                "trailing-move",
                Some(m),
                format!("move {m} comes after the game ended at move {i}"),
            ));
            break;
        }
        if !pos.board.is_legal(usize::from(c)) {
            failure = Some((
                "illegal-column",
                Some(m),
                format!("move {m}: column {c} is full"),
            ));
            break;
        }
        // What a move that fails reports: the game before it (its rows
        // consumed are 1 + the successful rises, trace-format.md).
        let before = counts(&game);
        let summary = match game.play_move_logged(usize::from(c), &mut (), &mut reveals) {
            Ok(s) => s,
            Err(_) => {
                failure = Some(("illegal-column", Some(m), format!("move {m}: column {c}")));
                break;
            }
        };
        if let Some(f) = game.grays().fault() {
            failure = Some((
                "invalid-configuration",
                Some(m),
                format!("move {m}: {f} (coveredRows has {n_rows} rows)"),
            ));
            failed_move = Some(before);
            break;
        }
        if let Some(s) = p.scores.as_ref().and_then(|s| s.get(i))
            && *s != game.score()
        {
            failure = Some((
                "invalid-format",
                Some(m),
                format!(
                    "tampered: move {m}: the tape claims score {s} but the replay scores {}",
                    game.score()
                ),
            ));
            failed_move = Some(before);
            break;
        }
        if let Some(b) = p.boards.as_ref().and_then(|b| b.get(i)) {
            let got = format_cells(&game.position().board.to_cells());
            if *b != got {
                failure = Some((
                    "invalid-format",
                    Some(m),
                    format!(
                        "tampered: move {m}: the tape claims board {b} but the replay gives {got}"
                    ),
                ));
                failed_move = Some(before);
                break;
            }
        }
        observer.moved(&pos, usize::from(c), &summary, &reveals, &game);
    }
    (out.score, out.level, out.moves, out.covered_rows_consumed) =
        failed_move.unwrap_or_else(|| counts(&game));
    out.complete = failed_move.is_none() && game.position().game_over;
    if failure.is_none() {
        if !out.complete {
            failure = Some((
                "incomplete-game",
                Some(out.moves),
                format!("the game is not over after the last move ({})", out.moves),
            ));
        } else if out.covered_rows_consumed != n_rows {
            failure = Some((
                "invalid-configuration",
                None,
                format!(
                    "coveredRows has {n_rows} rows but the game consumed {}",
                    out.covered_rows_consumed
                ),
            ));
        } else {
            for (key, claim) in &p.claimed {
                let got = match *key {
                    "score" => out.score,
                    "level" => u64::from(out.level),
                    _ => u64::from(out.moves),
                };
                if *claim != got {
                    failure = Some((
                        "invalid-format",
                        None,
                        format!(
                            "tampered: the tape claims {key} {claim} but the replay gives {got}"
                        ),
                    ));
                    break;
                }
            }
        }
    }
    match failure {
        None => out.valid = true,
        Some((kind, at, error)) => {
            out.failure = Some(kind.to_string());
            out.failed_at_move = at;
            out.error = Some(error);
        }
    }
    out
}

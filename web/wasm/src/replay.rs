//! Replay of a dropped file: a `drop7-recorded-game-v2` tape (formats.md),
//! replayed and checked by the core ([`drop7::tape::replay_observed`]: zero
//! random draws, its discs and covered rows), or a `drop7 trace` JSON-lines
//! file (trace-format.md block 1, read as [`TraceRecord`]s), re-played on the
//! headless or stream driver when that reproduces it, shown as recorded
//! otherwise. Either becomes a list of [`Step`]s the page steps through.

use drop7::board::Board;
use drop7::formats::TraceRecord;
use drop7::game::MoveSummary;
use drop7::gravity::Portable;
use drop7::latent::PackedCore;
use drop7::position::Position;
use drop7::runner::PackedEngine;
use drop7::tape::{self, MAX_TAPE_MOVES, ReplayObserver};
use serde::Serialize;

use crate::frames::{self, MoveFrames};
use crate::{CoreGame, StateView, Step, WebGame};

/// A file ready to replay.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Replay {
    /// `tape` or `trace`.
    pub kind: &'static str,
    /// One line describing the file.
    pub title: String,
    /// The game seed of a trace (`null` for a tape).
    pub seed: Option<u32>,
    /// The state before the first move.
    pub start: StateView,
    /// One step per move.
    pub steps: Vec<Step>,
    /// Tape validity failure as `drop7 replay` names it (`illegal-column`,
    /// `trailing-move`, `incomplete-game`, `invalid-configuration`, and
    /// `invalid-format` with a `tampered:` error when the tape's own scores or
    /// boards disagree) with what and where; the steps then stop before it.
    pub failure: Option<String>,
    /// A remark on how the file was checked.
    pub note: String,
}

/// Replays a tape or a trace.
///
/// # Errors
/// Empty, non-JSON or foreign content, or a malformed field, named with its place.
pub fn replay_text(text: &str) -> Result<Replay, String> {
    let t = text.trim_start_matches('\u{feff}').trim();
    if t.is_empty() {
        return Err("the file is empty".into());
    }
    if t.starts_with('[') {
        return Err(
            "not a drop7 tape or trace: a JSON array (expected a drop7-recorded-game-v2 object or trace lines)"
                .into(),
        );
    }
    if !t.starts_with('{') {
        return Err(
            "not a drop7 tape or trace: expected JSON (a drop7-recorded-game-v2 object or trace lines)"
                .into(),
        );
    }
    // A whole-file object is a tape; otherwise JSON lines (a trace).
    match serde_json::from_str::<serde_json::Value>(t) {
        Ok(v) if v.get("format").is_some() || v.get("columns").is_some() => tape(t),
        Ok(v) if v.get("board").is_some() => trace(t),
        Ok(_) => {
            Err("not a drop7 tape or trace: a JSON object without \"format\" or \"board\"".into())
        }
        // A tape that is not valid JSON (a number out of range, a cut file)
        // is named as the tape it says it is; no trace line holds its format.
        // JSON nested too deeply to read is named so (as `drop7 replay`
        // names it), not as a trace line missing its fields.
        Err(_) if t.contains("drop7-recorded-game") => tape(t),
        Err(e) if e.to_string().starts_with("recursion limit exceeded") => tape(t),
        Err(_) => trace(t),
    }
}

fn opening_view(next: Option<u8>) -> StateView {
    StateView {
        board: frames::board_text(&Board::initial().to_cells()),
        next,
        score: 0,
        level: 1,
        moves_remaining: 5,
        moves: 0,
        game_over: false,
    }
}

/// Collects the steps of a tape replay.
#[derive(Default)]
struct Steps {
    first_disc: Option<u8>,
    steps: Vec<Step>,
}

impl ReplayObserver<PackedCore<Portable>> for Steps {
    fn moved(
        &mut self,
        before: &Position,
        column: usize,
        summary: &MoveSummary,
        reveals: &[u8],
        game: &CoreGame,
    ) {
        self.first_disc.get_or_insert(before.next_disc);
        let state = StateView::of(game, false);
        let mut detail = frames::play(
            &before.board.to_cells(),
            before.moves_remaining,
            column,
            before.next_disc,
            reveals,
        )
        .filter(|f| f.frames.last().map(|x| x.board.as_str()) == Some(state.board.as_str()))
        .unwrap_or_else(|| MoveFrames::bare(0));
        detail.score_delta = summary.score_delta;
        detail.level_advanced = summary.level_advanced;
        detail.cleared_board = summary.cleared_board;
        self.steps.push(Step {
            column,
            disc: before.next_disc,
            detail,
            state,
            waves: Vec::new(),
        });
    }
}

fn tape(text: &str) -> Result<Replay, String> {
    let mut seen = Steps::default();
    let r = tape::replay_observed(PackedEngine(Portable), text, &mut seen);
    let failure = r
        .failure
        .as_ref()
        .map(|k| format!("{k}: {}", r.error.as_deref().unwrap_or("")));
    if let Some(f) = &failure
        && seen.steps.is_empty()
        && (r.failure.as_deref() == Some("invalid-format") || r.failed_at_move.is_none())
    {
        // Nothing to show: the file itself is wrong (a field, empty rows).
        return Err(f.clone());
    }
    let mut steps = seen.steps;
    if let Some(last) = steps.last_mut()
        && !last.state.game_over
    {
        // The tape holds no disc after its last move.
        last.state.next = None;
    }
    let last = steps.last().map(|s| &s.state);
    let title = format!(
        "tape: {} moves, score {}, level {}{}",
        steps.len(),
        last.map_or(0, |s| s.score),
        last.map_or(1, |s| s.level),
        if r.valid { ", valid and complete" } else { "" }
    );
    Ok(Replay {
        kind: "tape",
        title,
        seed: None,
        start: opening_view(seen.first_disc),
        steps,
        failure,
        note: format!(
            "replayed by the core engine from the tape's discs and {} covered row{} consumed, no random draws",
            r.covered_rows_consumed,
            if r.covered_rows_consumed == 1 {
                ""
            } else {
                "s"
            }
        ),
    })
}

/// One trace line, read as the core's [`TraceRecord`] and checked.
fn trace_line(n: usize, text: &str) -> Result<TraceRecord, String> {
    let rec: TraceRecord = serde_json::from_str(text).map_err(|e| {
        let e = drop7::formats::with_kind_hint(e.to_string(), text, "a trace line");
        format!("line {n}: not a trace line ({e})")
    })?;
    if rec.column > 6 {
        return Err(format!(
            "line {n}: \"column\" must be 0-6, got {}",
            rec.column
        ));
    }
    if !(1..=7).contains(&rec.disc) {
        return Err(format!("line {n}: \"disc\" must be 1-7, got {}", rec.disc));
    }
    rec.board
        .parse::<Board>()
        .map_err(|e| format!("line {n}: board: {e}"))?;
    if rec.moves_remaining > 5 {
        return Err(format!(
            "line {n}: \"movesRemaining\" must be 0-5, got {}",
            rec.moves_remaining
        ));
    }
    Ok(rec)
}

fn recorded_state(l: &TraceRecord, next: Option<u8>) -> StateView {
    StateView {
        board: l.board.clone(),
        next: if l.game_over { None } else { next },
        score: l.score,
        level: l.level,
        moves_remaining: l.moves_remaining,
        moves: l.move_number,
        game_over: l.game_over,
    }
}

fn trace(text: &str) -> Result<Replay, String> {
    let mut lines: Vec<TraceRecord> = Vec::new();
    let mut games = 0;
    for (i, l) in text.lines().enumerate() {
        if l.trim().is_empty() {
            continue;
        }
        let line = trace_line(i + 1, l)?;
        // Move 1 starts a game, of the same seed or another (a file may hold
        // the same seed on both drivers, or under two policies).
        if line.move_number == 1 {
            games += 1;
        }
        if games > 1 {
            // Only the first game is shown: the rest of a long file is not read.
            break;
        }
        let want = lines.len() as u32 + 1;
        if line.move_number != want {
            return Err(format!(
                "line {}: move {} out of order (expected move {want})",
                i + 1,
                line.move_number
            ));
        }
        lines.push(line);
        if lines.len() > MAX_TAPE_MOVES {
            return Err(format!("more than {MAX_TAPE_MOVES} moves in one game"));
        }
    }
    let seed = lines[0].seed;
    let title = |steps: &[Step]| {
        let last = &steps[steps.len() - 1].state;
        format!(
            "trace of seed 0x{seed:08x}: {} moves, score {}, level {}",
            steps.len(),
            last.score,
            last.level
        )
    };
    // Re-play on each driver; keep the one that reproduces every line.
    for (stream, name) in [(false, "headless"), (true, "stream")] {
        let Ok(mut g) = WebGame::with_moves(seed, stream, &[]) else {
            continue;
        };
        let start = g.view();
        let mut steps = Vec::new();
        for l in &lines {
            match g.play_step(l.column) {
                Ok(s)
                    if s.disc == l.disc
                        && s.detail.score_delta == l.score_delta
                        && s.detail.cleared_board == l.cleared_board
                        && s.detail.level_advanced == l.level_advanced
                        && s.waves == l.waves
                        && s.state.board == l.board
                        && s.state.score == l.score
                        && s.state.level == l.level
                        && s.state.moves_remaining == l.moves_remaining
                        && s.state.game_over == l.game_over =>
                {
                    steps.push(s)
                }
                _ => break,
            }
        }
        if steps.len() == lines.len() {
            return Ok(Replay {
                kind: "trace",
                title: title(&steps),
                seed: Some(seed),
                start,
                steps,
                failure: None,
                note: format!(
                    "every line reproduced by the {name} driver{}",
                    if games > 1 {
                        " (first game of the file shown)"
                    } else {
                        ""
                    }
                ),
            });
        }
    }
    // Not reproduced: show the recorded boards as they are.
    let steps: Vec<Step> = lines
        .iter()
        .enumerate()
        .map(|(k, l)| Step {
            column: l.column,
            disc: l.disc,
            detail: MoveFrames::bare(l.score_delta),
            state: recorded_state(l, lines.get(k + 1).map(|n| n.disc)),
            waves: l.waves.clone(),
        })
        .collect();
    Ok(Replay {
        kind: "trace",
        title: title(&steps),
        seed: Some(seed),
        start: opening_view(Some(lines[0].disc)),
        steps,
        failure: None,
        note: "not reproduced by the headless or stream driver: showing the recorded boards".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn foreign_and_corrupt_files_are_named() {
        assert!(replay_text("").unwrap_err().contains("empty"));
        assert!(
            replay_text("PK\u{3}\u{4}")
                .unwrap_err()
                .contains("not a drop7")
        );
        assert!(replay_text("{\"a\":1}").unwrap_err().contains("without"));
        let e = replay_text("{\"format\":\"x\",\"columns\":[]}").unwrap_err();
        assert!(e.starts_with("invalid-format: format must be"), "{e}");
        let e = replay_text(r#"{"seed":1,"move":1,"disc":5,"column":9,"board":"x"}"#).unwrap_err();
        assert!(e.contains("line 1"), "{e}");
        // A tape whose JSON does not parse is named as a tape, not a trace.
        let huge = format!(
            r#"{{"format":"drop7-recorded-game-v2","x":{}}}"#,
            "9".repeat(500)
        );
        let e = replay_text(&huge).unwrap_err();
        assert!(
            e.starts_with("invalid-format: invalid JSON (number out of range"),
            "{e}"
        );
        let deep = format!(r#"{{"format":{}{}}}"#, "[".repeat(5000), "]".repeat(5000));
        let e = replay_text(&deep).unwrap_err();
        assert!(
            e.starts_with("invalid-format: invalid JSON (recursion limit exceeded"),
            "{e}"
        );
    }

    #[test]
    fn a_trace_replays_on_its_driver() {
        let text = crate::trace_lines(7, false, &[3, 3, 2, 4, 1, 5, 0, 6, 3, 3]);
        let r = replay_text(&text).unwrap();
        assert!(r.note.contains("headless"), "{}", r.note);
        assert_eq!(r.steps.len(), text.lines().count());
    }

    /// A trace line whose board and score match but whose scoreDelta,
    /// waves, clearedBoard or levelAdvanced do not is not reproduced (the
    /// page said "every line reproduced" of such a file).
    #[test]
    fn a_trace_with_a_wrong_move_summary_is_not_reproduced() {
        let text = crate::trace_lines(7, false, &[3, 3, 2, 4, 1, 5, 0, 6, 3, 3]);
        let mut lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let popping = lines
            .iter()
            .position(|l| !l["waves"].as_array().unwrap().is_empty())
            .expect("a move that pops");
        let edits: [(&str, serde_json::Value); 4] = [
            ("scoreDelta", serde_json::json!(5)),
            ("waves", serde_json::json!([])),
            ("clearedBoard", serde_json::json!(true)),
            ("levelAdvanced", serde_json::json!(true)),
        ];
        for (field, value) in edits {
            let mut doctored = lines.clone();
            let k = if field == "waves" { popping } else { 2 };
            doctored[k][field] = value;
            let text: String = doctored.iter().map(|l| format!("{l}\n")).collect();
            let r = replay_text(&text).unwrap();
            assert!(r.note.starts_with("not reproduced"), "{field}: {}", r.note);
        }
        lines.truncate(3);
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        assert!(
            replay_text(&text)
                .unwrap()
                .note
                .contains("every line reproduced")
        );
    }

    /// A file of several games shows the first; what follows it is not read
    /// (a long file stays quick to open).
    #[test]
    fn a_multi_game_trace_shows_its_first_game() {
        let first = crate::trace_lines(7, false, &[3, 3, 2, 4, 1]);
        let second = crate::trace_lines(8, false, &[3, 2]);
        let text = format!("{first}{second}not json at all\n");
        let r = replay_text(&text).unwrap();
        assert_eq!(r.seed, Some(7));
        assert_eq!(r.steps.len(), 5);
        assert!(
            r.note.contains("first game of the file shown"),
            "{}",
            r.note
        );
    }

    /// Two games of one seed (here its headless and stream traces) are two
    /// games: the first is shown, not a "move 1 out of order" error.
    #[test]
    fn a_file_of_two_games_of_one_seed_shows_the_first() {
        let first = crate::trace_lines(7, false, &[3, 3, 2, 4, 1]);
        let second = crate::trace_lines(7, true, &[3, 2]);
        let r = replay_text(&format!("{first}{second}")).unwrap();
        assert_eq!((r.seed, r.steps.len()), (Some(7), 5));
        assert!(
            r.note
                .contains("headless driver (first game of the file shown)"),
            "{}",
            r.note
        );
    }

    /// A tape that stops before game over replays its moves and fails as
    /// incomplete, never panics.
    #[test]
    fn short_tape_is_incomplete() {
        let tape = r#"{"format":"drop7-recorded-game-v2","ruleset":"drop7-hardcore-5-v1",
            "columns":[3,3],"discs":[2,5],"dropLatentValues":[null,null],
            "coveredRows":[[1,2,3,4,5,6,7]]}"#;
        let r = replay_text(tape).unwrap();
        assert_eq!(r.steps.len(), 2);
        assert!(r.failure.unwrap().starts_with("incomplete-game"));
        assert_eq!(r.steps[1].state.next, None);
    }
}

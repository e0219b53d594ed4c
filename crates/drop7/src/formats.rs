//! Community file formats: the per-move trace line (trace-format.md, block 1)
//! and the per-game record of `drop7 play --out`.

use serde::{Deserialize, Serialize};

use crate::cascade::Wave;

/// One trace line: the golden files' first block of keys, in their order
/// (trace-format.md). Serialises to exactly the golden key order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceRecord {
    /// Game seed (u32).
    pub seed: u32,
    /// Moves played after this move (1-based move number).
    #[serde(rename = "move")]
    pub move_number: u32,
    /// Disc dropped.
    pub disc: u8,
    /// Column played, 0..6.
    pub column: usize,
    /// Points earned by this move.
    pub score_delta: u64,
    /// Score after the move.
    pub score: u64,
    /// Level after the move.
    pub level: u32,
    /// Drops left before the next rise, after the move.
    pub moves_remaining: u8,
    /// Terminal flag after the move.
    pub game_over: bool,
    /// A clear bonus was paid.
    pub cleared_board: bool,
    /// A rise happened.
    pub level_advanced: bool,
    /// Waves, first cascade then rise cascade.
    pub waves: Vec<Wave>,
    /// Board after the move, 49 chars, row 0 first.
    pub board: String,
}

/// Why a cohort game stopped: in JSON the strings `"blocked-rise"`,
/// `"no-legal-column"` and `"move-cap"` (and nothing else: serde's derived
/// form would also read `{"blocked-rise":null}`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    /// Row 0 occupied at the rise.
    #[default]
    BlockedRise,
    /// Every column full after the move.
    NoLegalColumn,
    /// The move cap stopped the game (censored).
    MoveCap,
}

impl StopReason {
    /// The record's string: `"blocked-rise"`, `"no-legal-column"` or
    /// `"move-cap"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            StopReason::BlockedRise => "blocked-rise",
            StopReason::NoLegalColumn => "no-legal-column",
            StopReason::MoveCap => "move-cap",
        }
    }
}

impl<'de> Deserialize<'de> for StopReason {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<StopReason, D::Error> {
        struct Reason;
        impl serde::de::Visitor<'_> for Reason {
            type Value = StopReason;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("one of \"blocked-rise\", \"no-legal-column\", \"move-cap\"")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<StopReason, E> {
                [
                    StopReason::BlockedRise,
                    StopReason::NoLegalColumn,
                    StopReason::MoveCap,
                ]
                .into_iter()
                .find(|r| r.as_str() == v)
                .ok_or_else(|| E::invalid_value(serde::de::Unexpected::Str(v), &self))
            }
        }
        d.deserialize_str(Reason)
    }
}

/// One line of `drop7 play --out`: a whole game's result.
///
/// The first block of fields is the original record; the second block
/// (issue 6, all optional so files of older versions still parse) makes a
/// record self-describing: what can change the game, per-game search
/// counters and timings, and a hash of the whole trajectory. See
/// [`crate::records`] for the identity rules and the parser.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GameRecord {
    /// Game seed as `"0x…"` hex.
    pub seed: String,
    /// Policy name (`center`, `random`, `fair:d4s7`, …).
    pub policy: String,
    /// Driver name (`headless` or `stream`).
    pub driver: String,
    /// Final score.
    pub score: u64,
    /// Moves played.
    pub moves: u32,
    /// Final level (1 + successful rises).
    pub levels: u32,
    /// Moves that paid a clear bonus.
    pub clears: u32,
    /// Gray discs revealed.
    pub reveals: u64,
    /// Deepest wave of the game (0 if nothing ever popped).
    pub chain_max_depth: u32,
    /// `blocked-rise`, `no-legal-column` or `move-cap`.
    pub terminal_reason: StopReason,
    /// True when the move cap stopped the game.
    pub censored: bool,

    // --- Self-describing record (issue 6). Optional: absent in older files. ---
    /// Rules id, `"drop7-hardcore-5-v1"` (as in the recorded-tape format).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ruleset: Option<String>,
    /// Transposition table of a fair policy (`"sa:65536:4"`, …); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<String>,
    /// Work budget per decision of a fair policy (the effective value); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_work: Option<u64>,
    /// Move cap of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_moves: Option<u32>,
    /// First seed of the whole cohort (`"0x…"`), the same in every shard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cohort_seed_start: Option<String>,
    /// Games of the whole cohort, the same in every shard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cohort_games: Option<u64>,
    /// `"I/N"` when written by `play --shard I/N`; absent for a single run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// Version of the engine that played (`"drop7 0.2.0"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_version: Option<String>,
    /// Mean chain depth over the moves that popped anything (a move's chain
    /// depth is its deepest wave); `null` when nothing ever popped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chain_mean_depth: Option<f64>,
    /// Search work (moves applied + leaves evaluated) summed over the game's
    /// decisions; absent for policies without a search.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work: Option<u64>,
    /// Search nodes summed over the game's decisions; absent without a search.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<u64>,
    /// Wall time of the game in milliseconds (differs between runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_ms: Option<f64>,
    /// Median decision latency of the game in ms (nearest rank); `null` for
    /// policies without decisions (differs between runs).
    #[serde(default, rename = "decisionMsP50")]
    pub decision_ms_p50: Option<f64>,
    /// 95th percentile decision latency in ms (nearest rank); `null` without decisions.
    #[serde(default, rename = "decisionMsP95")]
    pub decision_ms_p95: Option<f64>,
    /// 99th percentile decision latency in ms (nearest rank); `null` without decisions.
    #[serde(default, rename = "decisionMsP99")]
    pub decision_ms_p99: Option<f64>,
    /// SHA-256 (lowercase hex) over the moves in order, each move contributing
    /// 50 ASCII bytes: its column digit `0`-`6` then the 49-character board
    /// after the move (the trace line's `board`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trajectory_sha256: Option<String>,
    /// Scripted round id (`drop7 play --round`); absent for seeded games.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<String>,
    /// Policy choices that were illegal or missing (the first legal column
    /// was played instead); present for scripted rounds and D7P policies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub illegal_choices: Option<u32>,
    /// Moves for which an external D7P engine died, timed out or answered
    /// garbage (`--policy d7p:…`); absent for built-in policies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_failures: Option<u32>,
}

/// Formats a seed as the record's `"0x…"` string (lowercase, 8 digits).
pub fn seed_hex(seed: u32) -> String {
    format!("0x{seed:08x}")
}

/// Parses a seed given in decimal or `0x` hex (digits only: no sign, no
/// `_`; spaces around it are ignored).
///
/// # Errors
/// A message naming the text when it is not a u32 in either form.
pub fn parse_seed(text: &str) -> Result<u32, String> {
    parse_decimal_or_hex(text)
        .and_then(|v| u32::try_from(v).ok())
        .ok_or_else(|| format!("invalid seed {text:?}: expected a whole number 0-4294967295 in decimal or 0x0-0xffffffff in hex"))
}

/// A whole number 0..2^64 in decimal or `0x` hex, digits only (no sign, no
/// `_`; spaces around it are ignored); `None` otherwise. Behind
/// [`parse_seed`] and the CLI's 64-bit seeds.
pub fn parse_decimal_or_hex(text: &str) -> Option<u64> {
    let t = text.trim();
    match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        // `from_str_radix` alone would read a sign (`0x+1`, `+5`).
        Some(hex) if hex.bytes().all(|b| b.is_ascii_hexdigit()) => {
            u64::from_str_radix(hex, 16).ok()
        }
        None if t.bytes().all(|b| b.is_ascii_digit()) => t.parse::<u64>().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds() {
        assert_eq!(parse_seed("0xA5270000"), Ok(0xA527_0000));
        assert_eq!(parse_seed("17"), Ok(17));
        assert!(parse_seed("0xZZ").is_err());
        assert!(parse_seed("4294967296").is_err());
        assert_eq!(parse_seed(" 0xffffffff "), Ok(u32::MAX));
        for signed in ["+5", "-0", "0x+1", "0x-1", "0x", "", "1_000", "0x 5"] {
            assert!(parse_seed(signed).is_err(), "{signed:?}");
        }
        assert_eq!(seed_hex(0xA5), "0x000000a5");
    }

    const BOARD: &str = "0000000000000000000000000000000000000000008888888";

    #[test]
    fn d7p_position_errors_use_the_protocols_words() {
        let e = parse_d7p_command(&format!("position board {BOARD} next 2 rise 9")).unwrap_err();
        assert_eq!(e, "rise must be 1-5, got 9; position unchanged");
        let e = parse_d7p_command("position startpos next 8 rise 5").unwrap_err();
        assert_eq!(e, "next must be 1-7, got 8; position unchanged");
        let e =
            parse_d7p_command(&format!("position board {BOARD} next 2 rise 2 extra")).unwrap_err();
        assert_eq!(
            e,
            "unexpected \"extra\" after `rise <1-5>`; position unchanged"
        );
        for (line, bad) in [
            (
                "position startpos next 04 rise 5",
                "next must be a number, got \"04\"",
            ),
            (
                "position startpos next +4 rise 5",
                "next must be a number, got \"+4\"",
            ),
            (
                "position startpos next 4 rise 05",
                "rise must be a number, got \"05\"",
            ),
            (
                "position startpos next 4 rise",
                "expected `next <1-7> rise <1-5>`",
            ),
            // The bad board first, then what is missing after it.
            (
                "position board 00 next 2",
                "board must have 49 characters, got 2",
            ),
            (
                &format!("position board {BOARD} next 2"),
                "expected `next <1-7> rise <1-5>` after the board",
            ),
        ] {
            let e = parse_d7p_command(line).unwrap_err();
            assert!(e.contains(bad), "{line}: {e}");
        }
        let e = parse_d7p_command("position startpos next 4").unwrap_err();
        assert_eq!(
            e,
            "expected `next <1-7> rise <1-5>` after startpos; position unchanged"
        );
        let e = parse_d7p_command("position board 123 next 4 rise 5").unwrap_err();
        assert_eq!(
            e,
            "board must have 49 characters, got 3; position unchanged"
        );
    }

    #[test]
    fn d7p_commands_without_arguments_and_bestmove_columns() {
        assert_eq!(
            parse_d7p_command("isready please").unwrap_err(),
            "isready takes no arguments, got \"please\""
        );
        assert_eq!(
            parse_d7p_command("stop now").unwrap_err(),
            "stop takes no arguments, got \"now\""
        );
        assert_eq!(
            parse_d7p_command("isready!").unwrap_err(),
            "unknown command \"isready!\""
        );
        // Any integer is an answer (an illegal one outside 0..=6: past 6,
        // negative, or of any size); a word is not.
        assert_eq!(parse_d7p_bestmove("bestmove 9"), Ok(Some(9)));
        assert_eq!(parse_d7p_bestmove(" bestmove 3 "), Ok(Some(3)));
        assert_eq!(parse_d7p_bestmove("bestmove +3"), Ok(Some(3)));
        assert_eq!(parse_d7p_bestmove("bestmove 003"), Ok(Some(3)));
        assert_eq!(parse_d7p_bestmove("bestmove -0"), Ok(Some(0)));
        assert_eq!(parse_d7p_bestmove("bestmove none"), Ok(None));
        for illegal in [
            "bestmove -1",
            "bestmove -7",
            "bestmove 99999999999999999999",
            "bestmove -99999999999999999999",
            &format!("bestmove {}", "9".repeat(500)),
        ] {
            let c = parse_d7p_bestmove(illegal);
            assert!(matches!(c, Ok(Some(c)) if c > 6), "{illegal}: {c:?}");
        }
        for garbled in [
            "bestmove",
            "bestmove -",
            "bestmove +",
            "bestmove 3.0",
            "bestmove 1e3",
            "bestmove three",
            "bestmove --1",
            "bestmove ３",
            "bestmoves 3",
        ] {
            assert!(parse_d7p_bestmove(garbled).is_err(), "{garbled}");
        }
    }

    #[test]
    fn root_line_errors_name_the_problem_once() {
        let e = parse_root_line(r#"{"board":"12","next":4,"movesRemaining":5}"#).unwrap_err();
        assert_eq!(e.to_string(), "board must have 49 characters, got 2");
        // A game-over root may have `"next": null` (Python's position()).
        let p = parse_root_line(&format!(
            r#"{{"board":"{BOARD}","next":null,"movesRemaining":0,"gameOver":true}}"#
        ))
        .unwrap();
        assert!(p.game_over);
        assert!(
            parse_root_line(&format!(
                r#"{{"board":"{BOARD}","next":null,"movesRemaining":3}}"#
            ))
            .is_err()
        );
        // A bad board is named before a missing key.
        let e = parse_root_line(r#"{"board":"x"}"#).unwrap_err();
        assert_eq!(e.to_string(), "board must have 49 characters, got 1");
        let floating = "1".to_string() + &"0".repeat(48);
        let e = parse_root_line(&format!(
            r#"{{"board":"{floating}","next":4,"movesRemaining":5}}"#
        ))
        .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("board column 0 is not bottom-packed"),
            "{e}"
        );
        // A `drop7 trace` move line points to `--roots`.
        let e = parse_root_line(&format!(
            r#"{{"seed":1,"move":1,"disc":4,"column":3,"movesRemaining":4,"board":"{BOARD}"}}"#
        ))
        .unwrap_err();
        assert!(e.to_string().contains("drop7 trace --roots"), "{e}");
    }

    #[test]
    fn json_values_are_counted() {
        // An array and MAX_JSON_VALUES - 1 numbers: accepted; one more: refused.
        let array = |n: u64| format!("[{}0]", "0,".repeat(n as usize - 1));
        let ok = parse_json_strict(&array(MAX_JSON_VALUES - 1)).unwrap();
        assert_eq!(ok.as_array().unwrap().len() as u64, MAX_JSON_VALUES - 1);
        let err = parse_json_strict(&array(MAX_JSON_VALUES)).unwrap_err();
        assert!(err.starts_with(TOO_MANY_VALUES), "{err}");
        assert_eq!(
            TOO_MANY_VALUES,
            format!("more than {MAX_JSON_VALUES} JSON value units")
        );
        // An object counts 1 + OBJECT_UNITS and 1 a key (with its value, 1).
        let objects = |n: u64| format!("[{}{{}}]", "{\"a\":0},".repeat(n as usize - 1));
        let per = 1 + OBJECT_UNITS + 2;
        let fit = (MAX_JSON_VALUES - 1) / per;
        assert!(parse_json_strict(&objects(fit)).is_ok());
        assert!(parse_json_strict(&objects(fit + 2)).is_err());
        // Nested values count too.
        let rows = format!("{{\"rows\":[{}[1]]}}", "[1,1,1],".repeat(4_000_000));
        assert!(parse_json_strict(&rows).is_err());
    }

    #[test]
    fn duplicate_keys_are_named() {
        let e = parse_root_line(&format!(
            r#"{{"board":"{BOARD}","next":4,"movesRemaining":5,"next":3}}"#
        ))
        .unwrap_err();
        assert!(e.to_string().contains("duplicate key \"next\""), "{e}");
        // One line of text: the column, not serde_json's "line 1" (the
        // callers name the file's line).
        assert!(e.to_string().ends_with(" at column 95"), "{e}");
        let multi = parse_json_strict("{\n\"a\":1,\n\"a\":2}").unwrap_err();
        assert!(multi.contains("at line 3 column"), "{multi}");
        assert!(
            parse_json_strict(r#"{"a":{"b":1,"b":2}}"#)
                .unwrap_err()
                .contains("duplicate key \"b\"")
        );
        assert!(parse_json_strict(r#"[{"a":1},{"a":2}] x"#).is_err());
        assert_eq!(
            parse_json_strict(r#"[{"a":1.5},{"a":-2}]"#).unwrap(),
            serde_json::json!([{"a":1.5},{"a":-2}])
        );
    }

    #[test]
    fn game_over_roots() {
        let p = parse_root_line(&format!(
            r#"{{"board":"{BOARD}","movesRemaining":0,"gameOver":true,"score":5}}"#
        ))
        .unwrap();
        assert!(p.game_over);
        assert_eq!(p.moves_remaining, 0);
        assert!(parse_root_line(&format!(r#"{{"board":"{BOARD}","movesRemaining":0}}"#)).is_err());
        assert!(
            parse_root_line(&format!(
                r#"{{"board":"{BOARD}","next":4,"movesRemaining":0}}"#
            ))
            .is_err()
        );
        assert!(
            parse_root_line(&format!(
                r#"{{"board":"{BOARD}","next":9,"movesRemaining":0,"gameOver":true}}"#
            ))
            .is_err()
        );
    }
}

/// Why a root line was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RootError {
    /// Not a JSON object with the required keys and types.
    #[error("invalid JSON root: {0}")]
    Json(String),
    /// The board text is malformed (the message starts with "board").
    #[error("{0}")]
    Board(crate::error::BoardError),
    /// `next` outside 1..=7.
    #[error("next must be 1-7, got {0}")]
    Next(u64),
    /// `movesRemaining` outside 1..=5 (0..=5 for a game-over root).
    #[error("movesRemaining must be 1-5 (0-5 when gameOver), got {0}")]
    MovesRemaining(u64),
}

/// What a JSON line of one of drop7's line formats is, told by its keys, for
/// an error message that names a likely mix-up of files: `"a trace line (as
/// drop7 trace writes)"`, `"a game record (as drop7 play --out writes)"`,
/// `"a decision (as drop7 decide writes)"`, `"a root position (as drop7
/// decide reads)"`, `"a recorded tape (formats.md)"`; `None` for anything
/// else (not JSON, not an object, or other keys).
///
/// ```
/// use drop7::formats::json_line_kind;
/// let kind = json_line_kind(r#"{"seed":1,"move":1,"column":3,"waves":[],"board":"0"}"#);
/// assert_eq!(kind, Some("a trace line (as drop7 trace writes)"));
/// assert_eq!(json_line_kind("{}"), None);
/// assert_eq!(json_line_kind("not json"), None);
/// ```
pub fn json_line_kind(line: &str) -> Option<&'static str> {
    let v: serde_json::Value = serde_json::from_str(line.trim()).ok()?;
    let o = v.as_object()?;
    let has = |keys: &[&str]| keys.iter().all(|k| o.contains_key(*k));
    if has(&["move", "column", "waves", "board"]) {
        Some("a trace line (as drop7 trace writes)")
    } else if has(&["policy", "terminalReason", "seed"]) {
        Some("a game record (as drop7 play --out writes)")
    } else if has(&["values", "action"]) {
        Some("a decision (as drop7 decide writes)")
    } else if has(&["discs", "columns"]) {
        Some("a recorded tape (formats.md)")
    } else if has(&["board", "next", "movesRemaining"]) {
        Some("a root position (as drop7 decide reads)")
    } else {
        None
    }
}

/// `error`, followed by what `line` looks like when it is one of drop7's
/// other line formats than `expected` (see [`json_line_kind`]): "…; this line
/// looks like a trace line (as drop7 trace writes)".
pub fn with_kind_hint(error: String, line: &str, expected: &str) -> String {
    match json_line_kind(line) {
        Some(kind) if !kind.starts_with(expected) => {
            format!("{error}; this line looks like {kind}")
        }
        _ => error,
    }
}

/// Parses one JSON value, refusing an object (at any nesting level) that
/// repeats a key: the error names the key. serde_json alone keeps the last
/// of two equal keys silently.
///
/// # Errors
/// The JSON error message, or `duplicate key "K"`.
pub fn parse_json_strict(text: &str) -> Result<serde_json::Value, String> {
    strict_json(text).map_err(|e| json_error_text(&e))
}

/// serde_json's message for an error in one line of text, without its
/// "line 1": callers name the line of the file themselves, and a second,
/// always-1 line number read as a contradiction ("line 4: … at line 1
/// column 95" becomes "line 4: … at column 95").
pub fn json_error_text(e: &serde_json::Error) -> String {
    // serde names the Rust type a field has ("expected u32"): said in words.
    let mut text = e.to_string();
    for (rust, words) in [
        ("expected u64", "expected an integer 0-18446744073709551615"),
        ("expected u32", "expected an integer 0-4294967295"),
        ("expected u16", "expected an integer 0-65535"),
        ("expected u8", "expected an integer 0-255"),
        ("expected i64", "expected an integer"),
        ("expected f64", "expected a number"),
    ] {
        text = text.replace(rust, words);
    }
    if e.line() == 1 {
        let tail = format!(" at line 1 column {}", e.column());
        if let Some(head) = text.strip_suffix(&tail) {
            return format!("{head} at column {}", e.column());
        }
    }
    text
}

/// The size of the JSON value [`parse_json_strict`] builds, at most, in
/// units of about 40 bytes of memory: a number, string, null, boolean or
/// array is 1, an object [`OBJECT_UNITS`] and each of its keys 1 more (a
/// one-key object takes about 700 bytes). The formats set only the least a
/// file holds: a scripted round at the largest move cap, 1,000,000, needs
/// about 2.6 M units (its discs and latent rows), a tape (at most 20,000
/// moves) about 130 k; 16,000,000 allows six times the round's, spare discs
/// and rows included, and stops a padded file before it takes more than
/// about 700 MB (a 243 MB tape of padded rows took 5 GB before this limit).
pub const MAX_JSON_VALUES: u64 = 16_000_000;

/// What an object counts against [`MAX_JSON_VALUES`], its keys apart.
pub const OBJECT_UNITS: u64 = 19;

/// The start of [`strict_json`]'s error for a text over [`MAX_JSON_VALUES`].
pub(crate) const TOO_MANY_VALUES: &str = "more than 16000000 JSON value units";

/// [`parse_json_strict`] keeping serde_json's error (so a caller can tell a
/// truncated text, [`serde_json::Error::is_eof`], from a malformed one).
pub(crate) fn strict_json(text: &str) -> Result<serde_json::Value, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let budget = std::cell::Cell::new(MAX_JSON_VALUES);
    let v = serde::de::DeserializeSeed::deserialize(Strict(&budget), &mut de)?;
    de.end()?;
    Ok(v)
}

/// Builds a JSON value whose objects have distinct keys, counting each value
/// against a budget of [`MAX_JSON_VALUES`].
#[derive(Clone, Copy)]
struct Strict<'b>(&'b std::cell::Cell<u64>);

impl<'de> serde::de::DeserializeSeed<'de> for Strict<'_> {
    type Value = serde_json::Value;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        self.charge(1)?;
        d.deserialize_any(self)
    }
}

impl Strict<'_> {
    /// Counts `units` against the budget: an error once it is spent.
    fn charge<E: serde::de::Error>(self, units: u64) -> Result<(), E> {
        match self.0.get().checked_sub(units) {
            Some(left) => {
                self.0.set(left);
                Ok(())
            }
            None => Err(E::custom(format!(
                "{TOO_MANY_VALUES} (a value 1, an object {} and a key 1): the limit for a \
                 tape or round file",
                OBJECT_UNITS + 1
            ))),
        }
    }
}

impl<'de> serde::de::Visitor<'de> for Strict<'_> {
    type Value = serde_json::Value;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(serde_json::Value::Null, Into::into))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(serde_json::Value::Null)
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(serde_json::Value::Null)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(v) = a.next_element_seed(self)? {
            items.push(v);
        }
        Ok(serde_json::Value::Array(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
        let mut map = serde_json::Map::new();
        self.charge(OBJECT_UNITS)?;
        while let Some(key) = a.next_key::<String>()? {
            self.charge(1)?;
            if map.contains_key(&key) {
                return Err(serde::de::Error::custom(format!("duplicate key {key:?}")));
            }
            let v = a.next_value_seed(self)?;
            map.insert(key, v);
        }
        Ok(serde_json::Value::Object(map))
    }
}

/// Parses and validates one root line, as `drop7 decide` and `drop7 leaf` read
/// them: a JSON object `{"board","next","movesRemaining"}` with an optional
/// boolean `"gameOver"`; unknown keys are ignored (search-golden-format.md),
/// a repeated key is refused. A game-over root (`"gameOver": true`), such as
/// a line of `drop7 trace` after a blocked rise, may have `movesRemaining` 0
/// and may omit `next` (it is then 1, and never used: a game-over root
/// decides to no action and its leaf is -2,500,000; search.md §7, §9).
///
/// # Errors
/// [`RootError`] naming the first problem found.
pub fn parse_root_line(line: &str) -> Result<crate::position::Position, RootError> {
    use serde_json::Value;
    let v = parse_json_strict(line).map_err(RootError::Json)?;
    let obj = v
        .as_object()
        .ok_or_else(|| RootError::Json("expected a JSON object".into()))?;
    let board = match obj.get("board") {
        Some(Value::String(b)) => b.as_str(),
        Some(_) => {
            return Err(RootError::Json(
                "\"board\" must be a 49-character string".into(),
            ));
        }
        None => return Err(RootError::Json("missing key \"board\"".into())),
    };
    // The board's own error first (`{"board":"x"}` is a bad board before
    // it is a line without `next`).
    let board: crate::board::Board = board.parse().map_err(RootError::Board)?;
    let game_over = match obj.get("gameOver") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(RootError::Json("\"gameOver\" must be a boolean".into())),
    };
    let integer = |key: &str, range: &str| match obj.get(key) {
        Some(n) => n.as_u64().ok_or_else(|| {
            RootError::Json(format!("\"{key}\" must be an integer {range}, got {n}"))
        }),
        None => Err(RootError::Json(format!("missing key \"{key}\""))),
    };
    let next = match obj.get("next") {
        // (`null`: Python's `Game.position()` of a finished game.)
        None | Some(Value::Null) if game_over => 1,
        // A move line of `drop7 trace` has its disc but no next disc.
        None if obj.contains_key("column") && obj.contains_key("disc") => {
            return Err(RootError::Json(
                "missing key \"next\" (a `drop7 trace` move line? `drop7 trace --roots` \
                 prints the position before each move as a root line)"
                    .into(),
            ));
        }
        _ => integer("next", "1-7")?,
    };
    let moves = integer("movesRemaining", if game_over { "0-5" } else { "1-5" })?;
    position_from_board(board, next, moves, game_over)
}

/// Builds a validated position from its parts.
///
/// # Errors
/// [`RootError`] for a malformed board, `next` outside 1..=7 or
/// `moves_remaining` outside 1..=5 (0..=5 when `game_over`).
pub fn position_from_parts(
    board: &str,
    next: u64,
    moves_remaining: u64,
    game_over: bool,
) -> Result<crate::position::Position, RootError> {
    position_from_board(
        board.parse().map_err(RootError::Board)?,
        next,
        moves_remaining,
        game_over,
    )
}

/// [`position_from_parts`] with the board already parsed.
fn position_from_board(
    board: crate::board::Board,
    next: u64,
    moves_remaining: u64,
    game_over: bool,
) -> Result<crate::position::Position, RootError> {
    if !(1..=7).contains(&next) {
        return Err(RootError::Next(next));
    }
    if !(u64::from(!game_over)..=5).contains(&moves_remaining) {
        return Err(RootError::MovesRemaining(moves_remaining));
    }
    Ok(crate::position::Position {
        board,
        next_disc: next as u8,
        moves_remaining: moves_remaining as u8,
        game_over,
    })
}

/// An f64 as 16 lowercase hex digits of its bit pattern.
pub fn f64_hex(v: f64) -> String {
    format!("{:016x}", v.to_bits())
}

/// One output object of `drop7 decide`, with the golden file's field names.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DecideRecord {
    /// Chosen column (source orientation); `null` for a game-over root.
    pub action: Option<usize>,
    /// Last completed iterative-deepening depth.
    pub completed_depth: u32,
    /// Per-column values as 16-hex-digit bit patterns, `null` if illegal.
    pub values: [Option<String>; 7],
    /// The same values as shortest round-trip decimals (compare bits, not these).
    pub values_decimal: [Option<f64>; 7],
    /// Per-column mean immediate score delta over the S samples of the
    /// completed iteration (points; `null` for an illegal column; a
    /// diagnostic, not used by the decision; search.md §1).
    pub expected_scores: [Option<f64>; 7],
    /// The decision's counters: `work`, `nodes`, `cacheHits`, `cacheEntries`,
    /// `evictions`, `leafCalls`, `moveCalls`.
    #[serde(flatten)]
    pub stats: crate::search::SearchStats,
    /// Wall time of the decision in milliseconds.
    pub ms: f64,
}

impl DecideRecord {
    /// The record of `d`, timed at `ms` milliseconds.
    pub fn new(d: &crate::search::Decision, ms: f64) -> DecideRecord {
        DecideRecord {
            action: d.action,
            completed_depth: d.completed_depth,
            values: d.values.map(|v| v.map(f64_hex)),
            values_decimal: d.values,
            expected_scores: d.expected_scores,
            stats: d.stats,
            ms,
        }
    }
}

/// One output object of `drop7 leaf`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LeafRecord {
    /// The fair-leaf value.
    pub value: f64,
    /// Its bit pattern, 16 lowercase hex digits.
    pub bits: String,
}

/// The answer to a malformed input line: `{"line": k, "error": "…"}` (1-based `k`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LineError {
    /// 1-based line number.
    pub line: usize,
    /// What was wrong.
    pub error: String,
}

/// One D7P command line as a D7P engine reads it (spec: formats.md "D7P").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum D7pCommand {
    /// `d7p`: identify (`id …` lines, then `d7pok`).
    Hello,
    /// `isready`: answer `readyok`.
    IsReady,
    /// `stop`: answer the running search at once.
    Stop,
    /// `quit`: exit.
    Quit,
    /// `position startpos|board B next N rise R`.
    Position(crate::position::Position),
    /// `go …`: answer `bestmove C|none` for the last position.
    Go,
}

/// Shortens `s` to 40 characters for a message, control characters as `?`.
pub fn d7p_shorten(s: &str) -> String {
    let mut t: String = s.chars().take(40).collect();
    if t.len() < s.len() {
        t.push('…');
    }
    t.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// Parses one D7P command line (surrounding whitespace ignored).
///
/// # Errors
/// A message naming the problem: an empty line, an unknown command, words
/// after `d7p`, `isready`, `stop` or `quit`, a malformed `position` (board,
/// `next` 1-7, `rise` 1-5).
pub fn parse_d7p_command(line: &str) -> Result<D7pCommand, String> {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    match tokens.as_slice() {
        [] => Err("empty line".into()),
        ["d7p"] => Ok(D7pCommand::Hello),
        ["isready"] => Ok(D7pCommand::IsReady),
        ["stop"] => Ok(D7pCommand::Stop),
        ["quit"] => Ok(D7pCommand::Quit),
        ["position", rest @ ..] => d7p_position(rest)
            .map(D7pCommand::Position)
            .map_err(|e| format!("{e}; position unchanged")),
        ["go", ..] => Ok(D7pCommand::Go),
        [cmd @ ("d7p" | "isready" | "stop" | "quit"), extra, ..] => Err(format!(
            "{cmd} takes no arguments, got {:?}",
            d7p_shorten(extra)
        )),
        [cmd, ..] => Err(format!("unknown command {:?}", d7p_shorten(cmd))),
    }
}

/// Parses the words after `position`: `startpos|board B next N rise R`.
fn d7p_position(tokens: &[&str]) -> Result<crate::position::Position, String> {
    // (`after`: how the error below names what came before `next`.)
    let (board, rest, after) = match tokens {
        ["startpos", rest @ ..] => (
            "0000000000000000000000000000000000000000008888888",
            rest,
            "startpos",
        ),
        ["board", b, rest @ ..] => (*b, rest, "the board"),
        ["board"] => return Err("position board needs 49 cell digits".into()),
        _ => return Err("expected `position startpos …` or `position board <49 digits> …`".into()),
    };
    let (next, rise) = match rest {
        ["next", n, "rise", r] => (*n, *r),
        ["next", _, "rise", _, extra, ..] => {
            return Err(format!(
                "unexpected {:?} after `rise <1-5>`",
                d7p_shorten(extra)
            ));
        }
        _ => {
            // A bad board is named first (`position board 00 next 2`), as
            // in a full line.
            if let Err(e) = board.parse::<crate::board::Board>() {
                return Err(RootError::Board(e).to_string());
            }
            return Err(format!("expected `next <1-7> rise <1-5>` after {after}"));
        }
    };
    // Plain decimal only: no sign and no leading zero (`04`, `+4` are not
    // the protocol's `<1-7>`).
    let num = |t: &str, what: &str| {
        let plain = t.bytes().all(|b| b.is_ascii_digit()) && (t.len() == 1 || !t.starts_with('0'));
        plain
            .then(|| t.parse::<u64>().ok())
            .flatten()
            .ok_or_else(|| format!("{what} must be a number, got {:?}", d7p_shorten(t)))
    };
    position_from_parts(board, num(next, "next")?, num(rise, "rise")?, false).map_err(|e| match e {
        // The protocol's word, not the JSON key.
        RootError::MovesRemaining(r) => format!("rise must be 1-5, got {r}"),
        e => e.to_string(),
    })
}

/// Parses an engine's `bestmove C|none` answer (a D7P client reads it). Any
/// integer is a column: one outside 0..=6 (past 6, negative, or too large
/// for a `usize`) is an illegal choice, as a full column is, for the caller
/// to check; it is returned as itself when it is a `usize`, else as
/// `usize::MAX`.
///
/// # Errors
/// Any other line (a column that is not an integer, a missing column).
pub fn parse_d7p_bestmove(line: &str) -> Result<Option<usize>, String> {
    let mut words = line.split_whitespace();
    let bad = || format!("engine answered {:?}", d7p_shorten(line.trim()));
    if words.next() != Some("bestmove") {
        return Err(bad());
    }
    let t = match words.next() {
        Some("none") => return Ok(None),
        Some(t) => t,
        None => return Err(bad()),
    };
    let (negative, digits) = match t.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    if digits.bytes().all(|b| b == b'0') {
        return Ok(Some(0));
    }
    if negative {
        return Ok(Some(usize::MAX));
    }
    Ok(Some(digits.parse::<usize>().unwrap_or(usize::MAX)))
}

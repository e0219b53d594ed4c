//! Scripted rounds, `drop7-scripted-round-v1` (spec: formats.md "Scripted
//! round", rules.md §8): every disc and every hidden gray value fixed in
//! advance, so that every policy faces the same luck.
//!
//! * [`ScriptedRound::parse`] reads and checks a round file (errors name the
//!   field and index, or the JSON line and column).
//! * [`play_round`] plays it with any policy, as the reference runner does:
//!   latent mode, `discs[movesPlayed]` after every move, the move cap from the
//!   file, an illegal or missing choice recorded and replaced by the first
//!   legal column (0..6 ascending); the random policy is seeded with the
//!   round's `generatorSeedHex`.

use serde_json::Value;

use crate::board::SIZE;
use crate::formats::GameRecord;
use crate::latent::{CoreEngine, TrackedGame};
use crate::runner::{Policy, RunLabels};
use crate::tape::Tape;

/// The format string of a scripted round.
pub const ROUND_FORMAT: &str = "drop7-scripted-round-v1";

/// The `driver` a scripted round's record and tape name (the round's discs
/// and reveals come from its file's latent board, not from a seed driver).
pub const LATENT_DRIVER: &str = "latent";

/// A checked scripted round.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptedRound {
    /// Identifier, e.g. `gauntlet-01`.
    pub id: String,
    /// Display name.
    pub name: String,
    /// The generator seed (`generatorSeedHex`), which also seeds the random policy.
    pub generator_seed: u32,
    /// Move cap.
    pub maximum_moves: u32,
    /// `discs[m]`: the disc dropped at absolute move m (1..=7).
    pub discs: Vec<u8>,
    /// Hidden values: row 0 the opening covered row, row r the row brought in
    /// by the r-th successful rise (1..=7, column order).
    pub latent_rows: Vec<[u8; SIZE]>,
}

/// What is wrong with a round or tape file: `what` names the field (and
/// index) or the JSON position.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FormatError(pub String);

/// A round's `generatorSeedHex`: 1-8 hexadecimal digits, with or without a
/// `0x` (or `0X`) prefix (`"0x5eed0001"`, `"5eed0001"`; `"12345"` is
/// 0x12345, never decimal).
fn parse_seed_hex(text: &str) -> Result<u32, FormatError> {
    let digits = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))
        .unwrap_or(text);
    if (1..=8).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        // 1-8 hex digits always fit a u32.
        Ok(u32::from_str_radix(digits, 16).unwrap_or_default())
    } else {
        err(format!(
            "generatorSeedHex: expected 1-8 hexadecimal digits (e.g. \"0x5eed0001\"), got {text:?}"
        ))
    }
}

fn err<T>(msg: impl Into<String>) -> Result<T, FormatError> {
    Err(FormatError(msg.into()))
}

/// Parses JSON text into an object, naming the line and column of a syntax
/// error; an object (at any depth) that repeats a key is refused naming the
/// key, as record files are (serde_json alone keeps the last of two).
pub(crate) fn json_object(text: &str) -> Result<serde_json::Map<String, Value>, FormatError> {
    // A UTF-8 byte-order mark at the start of the file is accepted.
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
    if text.trim().is_empty() {
        return err(if text.is_empty() {
            "the file is empty"
        } else {
            "the file holds only whitespace"
        });
    }
    match crate::formats::strict_json(text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => err("not a JSON object"),
        Err(e) if e.is_eof() => err(format!("truncated JSON ({e})")),
        // Not malformed: too large.
        Err(e) if e.to_string().starts_with(crate::formats::TOO_MANY_VALUES) => err(e.to_string()),
        Err(e) if e.line() > 1 && looks_like_json_lines(text, e.line()) => err(format!(
            "invalid JSON ({e}): one JSON object per line, as in a JSON-lines file (records or a trace), not one JSON document"
        )),
        Err(e) => err(format!("invalid JSON ({e})")),
    }
}

/// Whether the text looks like a JSON-lines file: its first line alone is
/// a JSON object, and the line the parser stopped at starts another.
fn looks_like_json_lines(text: &str, error_line: usize) -> bool {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("");
    matches!(serde_json::from_str::<Value>(first), Ok(Value::Object(_)))
        && lines
            .nth(error_line.saturating_sub(2))
            .is_some_and(|l| l.trim_start().starts_with('{'))
}

pub(crate) fn field<'a>(
    obj: &'a serde_json::Map<String, Value>,
    key: &str,
) -> Result<&'a Value, FormatError> {
    obj.get(key)
        .ok_or_else(|| FormatError(format!("missing field `{key}`")))
}

pub(crate) fn int_in(v: &Value, what: &str, lo: u64, hi: u64) -> Result<u64, FormatError> {
    match v.as_u64() {
        Some(n) if (lo..=hi).contains(&n) => Ok(n),
        _ => err(format!("{what} must be an integer {lo}-{hi}, got {v}")),
    }
}

pub(crate) fn array<'a>(v: &'a Value, what: &str) -> Result<&'a Vec<Value>, FormatError> {
    v.as_array()
        .ok_or_else(|| FormatError(format!("{what} must be an array")))
}

pub(crate) fn rows7(v: &Value, what: &str) -> Result<Vec<[u8; SIZE]>, FormatError> {
    let mut rows = Vec::new();
    for (r, row) in array(v, what)?.iter().enumerate() {
        let cells = array(row, &format!("{what}[{r}]"))?;
        if cells.len() != SIZE {
            return err(format!(
                "{what}[{r}] must have 7 values, got {}",
                cells.len()
            ));
        }
        let mut out = [0u8; SIZE];
        for (c, x) in cells.iter().enumerate() {
            out[c] = int_in(x, &format!("{what}[{r}][{c}]"), 1, 7)? as u8;
        }
        rows.push(out);
    }
    Ok(rows)
}

impl ScriptedRound {
    /// Parses and checks a round file's text.
    ///
    /// # Errors
    /// [`FormatError`] naming the first problem: invalid or truncated JSON, a
    /// missing field, a wrong `format`, a disc or hidden value outside 1..=7
    /// (with its index), too few discs or rows for `maximumMoves`.
    pub fn parse(text: &str) -> Result<ScriptedRound, FormatError> {
        let obj = json_object(text)?;
        let format = field(&obj, "format")?;
        if format.as_str() != Some(ROUND_FORMAT) {
            return err(format!("format must be \"{ROUND_FORMAT}\", got {format}"));
        }
        let text_field = |k: &str| -> Result<String, FormatError> {
            field(&obj, k)?
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| FormatError(format!("{k} must be a string")))
        };
        let id = text_field("id")?;
        let name = text_field("name")?;
        let seed_text = text_field("generatorSeedHex")?;
        let generator_seed = parse_seed_hex(&seed_text)?;
        let maximum_moves =
            int_in(field(&obj, "maximumMoves")?, "maximumMoves", 1, 1_000_000)? as u32;
        let mut discs = Vec::new();
        for (m, d) in array(field(&obj, "discs")?, "discs")?.iter().enumerate() {
            discs.push(int_in(d, &format!("discs[{m}]"), 1, 7)? as u8);
        }
        if discs.len() < maximum_moves as usize {
            return err(format!(
                "discs has {} entries, fewer than maximumMoves {maximum_moves}",
                discs.len()
            ));
        }
        let latent_rows = rows7(field(&obj, "latentRows")?, "latentRows")?;
        let need = (maximum_moves as usize).div_ceil(5) + 1;
        if latent_rows.len() < need {
            return err(format!(
                "latentRows has {} rows, fewer than ceil(maximumMoves/5)+1 = {need}",
                latent_rows.len()
            ));
        }
        Ok(ScriptedRound {
            id,
            name,
            generator_seed,
            maximum_moves,
            discs,
            latent_rows,
        })
    }

    /// A new latent game of this round on `engine`.
    pub fn start<E: CoreEngine>(&self, engine: E) -> TrackedGame<E::Core> {
        TrackedGame::latent(engine, self.latent_rows.clone(), self.discs.clone())
    }
}

/// A played round: its per-game record and its recorded tape.
#[derive(Clone, Debug)]
pub struct RoundResult {
    /// The per-game record (`driver` `latent`, `round` the round id,
    /// `illegalChoices` the policy's illegal or missing choices).
    pub record: GameRecord,
    /// The game as a recorded tape.
    pub tape: Tape,
}

/// Plays `round` with `policy` on `engine` (spec: formats.md "Scripted round").
pub fn play_round<E: CoreEngine, P: Policy>(
    engine: E,
    policy: &mut P,
    round: &ScriptedRound,
    labels: &RunLabels,
) -> RoundResult {
    play_round_until(engine, policy, round, labels, None)
        .expect("a round without a stop flag is never stopped")
}

/// [`play_round`] with a stop flag, checked before each move: `None` when
/// `stop` was raised before the round ended (the round is abandoned: no
/// record, no tape).
pub fn play_round_until<E: CoreEngine, P: Policy>(
    engine: E,
    policy: &mut P,
    round: &ScriptedRound,
    labels: &RunLabels,
    stop: Option<&std::sync::atomic::AtomicBool>,
) -> Option<RoundResult> {
    let started = std::time::Instant::now();
    let mut game = round.start(engine);
    policy.new_game(round.generator_seed);
    // A round's record always carries the per-game detail.
    let ctl = crate::runner::RunControl {
        detail: true,
        stop,
        ..Default::default()
    };
    let mut record = crate::runner::play_detailed(
        &mut game,
        policy,
        labels,
        round.generator_seed,
        round.maximum_moves,
        &ctl,
        Some(0),
        started,
    )?;
    record.driver = LATENT_DRIVER.to_string();
    record.round = Some(round.id.clone());
    let mut tape = Tape::of_game(&game);
    tape.round = Some(round.id.clone());
    tape.policy = Some(labels.policy.clone());
    tape.driver = Some(LATENT_DRIVER.to_string());
    Some(RoundResult { record, tape })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generator_seed_is_hexadecimal() {
        for (text, seed) in [
            ("0x5eed0001", 0x5eed_0001),
            ("0X5EED0001", 0x5eed_0001),
            ("5eed0001", 0x5eed_0001),
            ("12345", 0x12345),
            ("0", 0),
            ("ffffffff", u32::MAX),
        ] {
            assert_eq!(parse_seed_hex(text), Ok(seed), "{text}");
        }
        for bad in ["", "0x", "123456789", "0x1g", "-1", "+1", " 1", "0x-1"] {
            let e = parse_seed_hex(bad).unwrap_err().to_string();
            assert!(
                e.starts_with("generatorSeedHex: expected 1-8 hexadecimal digits"),
                "{bad}: {e}"
            );
        }
    }

    /// A JSON-lines file given where one JSON document is read (a tape, a
    /// round) is named as such; other syntax errors are not.
    #[test]
    fn a_json_lines_file_is_named() {
        let e = json_object("{\"seed\":1}\n{\"seed\":2}\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("invalid JSON (trailing characters at line 2"),
            "{e}"
        );
        assert!(e.ends_with("as in a JSON-lines file (records or a trace), not one JSON document"));
        let e = json_object("{\n  \"seed\": 1,\n  x\n}")
            .unwrap_err()
            .to_string();
        assert!(!e.contains("JSON-lines"), "{e}");
        assert!(json_object("{\"seed\":1}\n").is_ok());
        // An empty file is named as one (not "truncated JSON").
        assert_eq!(json_object("").unwrap_err().0, "the file is empty");
        assert_eq!(json_object("\u{FEFF}").unwrap_err().0, "the file is empty");
        assert_eq!(
            json_object(" \r\n\n").unwrap_err().0,
            "the file holds only whitespace"
        );
        let e = json_object("{\"seed\":1}\ngarbage\n")
            .unwrap_err()
            .to_string();
        assert!(!e.contains("JSON-lines"), "{e}");
    }
}

//! Per-game records of `drop7 play --out` as research data: the public
//! record-line parser, the run identity that `--resume`, `merge` and `compare`
//! check, the incremental trajectory hash, and the shard slices.
//!
//! A record file is one JSON object ([`GameRecord`]) per line, one line per
//! game, in seed order, no header. Two runs of the same cohort write
//! identical records except for the wall-clock fields (`wallMs`,
//! `decisionMsP50/P95/P99`), `engineVersion` and `shard`.

use sha2::{Digest, Sha256};

use crate::board::Board;
pub use crate::formats::GameRecord;
use crate::formats::{StopReason, parse_seed};
use crate::game::DriverKind;

/// The rules id written in every record (rules.md, recorded-tape format).
pub const RULESET: &str = "drop7-hardcore-5-v1";

/// The engine version written in every record: `"drop7 <crate version>"`.
pub const ENGINE_VERSION: &str = concat!("drop7 ", env!("CARGO_PKG_VERSION"));

/// Why a record line was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    /// An empty or whitespace-only line (a record file has no blank lines).
    #[error("a blank line, not a game record (a record file has one JSON record on every line)")]
    Blank,
    /// Not a JSON object with the record's keys and types.
    #[error("not a game record: {0}")]
    Json(String),
    /// `seed` is not a `0x…` u32.
    #[error("bad seed: {0}")]
    Seed(String),
    /// `shard` is not `I/N` with 1 <= I <= N.
    #[error("bad shard {0:?}: expected I/N with 1 <= I <= N")]
    Shard(String),
    /// A measured field (`wallMs`, `decisionMsP50/P95/P99`,
    /// `chainMeanDepth`) outside `0..=`[`MAX_MEASURED`]: the field and the
    /// value as written back (shortest round trip).
    #[error("bad {0}: {1} (expected a number from 0 to 1e12)")]
    Measured(&'static str, String),
    /// `score` above [`MAX_SCORE`].
    #[error("bad score: {0} (expected at most 2^53 = 9007199254740992)")]
    Score(u64),
    /// `cohortSeedStart` not spelled as `play` writes a seed.
    #[error(
        "bad cohortSeedStart {0:?}: expected \"0x\" and 8 lowercase hex digits (e.g. \"0x00000001\")"
    )]
    CohortSeedStart(String),
    /// `censored` disagrees with `terminalReason` (a game is censored
    /// exactly when the move cap stopped it).
    #[error(
        "censored is {0} but terminalReason is {1:?} (a game is censored exactly when the move cap stopped it: \"move-cap\")"
    )]
    Censored(bool, &'static str),
    /// `driver` is none of drop7's: `headless`, `stream` (seed runs) or
    /// `latent` (scripted rounds).
    #[error("bad driver {0:?}: expected \"headless\", \"stream\" or \"latent\"")]
    Driver(String),
    /// `ruleset` is present and not [`RULESET`].
    #[error("bad ruleset {0:?}: drop7 plays \"drop7-hardcore-5-v1\" only")]
    Ruleset(String),
    /// `maxMoves` is 0, or `moves` disagrees with it: above the cap, or
    /// below it in a censored game (a censored game stopped at the cap).
    #[error("{0}")]
    MoveCap(String),
}

/// The largest `score` a record may hold: 2^53, the largest below which every
/// integer is an `f64`, so that `summary` and `compare` print each score
/// exactly (a real game scores far less).
pub const MAX_SCORE: u64 = 1 << 53;

/// The largest value of a measured field that a record may hold: 10^12 (ms:
/// about 31 years). Above it a sum over a cohort could overflow to infinity.
pub const MAX_MEASURED: f64 = 1e12;

/// Refuses a measured field outside `0..=MAX_MEASURED` (a hand-edited or
/// foreign record): `summary` and `compare` would print a negative time or
/// a mean of infinity or NaN.
fn check_measured(rec: &GameRecord) -> Result<(), RecordError> {
    let fields = [
        ("wallMs", rec.wall_ms),
        ("decisionMsP50", rec.decision_ms_p50),
        ("decisionMsP95", rec.decision_ms_p95),
        ("decisionMsP99", rec.decision_ms_p99),
        ("chainMeanDepth", rec.chain_mean_depth),
    ];
    for (name, v) in fields {
        if let Some(v) = v
            && !(0.0..=MAX_MEASURED).contains(&v)
        {
            return Err(RecordError::Measured(name, format!("{v:?}")));
        }
    }
    Ok(())
}

/// Refuses a `maxMoves` of 0 (`play` refuses `--max-moves 0`), `moves`
/// above `maxMoves`, and a censored game that stopped short of it.
fn check_move_cap(rec: &GameRecord) -> Result<(), RecordError> {
    let Some(cap) = rec.max_moves else {
        return Ok(());
    };
    let why = if cap == 0 {
        "maxMoves is 0 (a move cap is at least 1)".to_string()
    } else if rec.moves > cap {
        format!("moves {} is above maxMoves {cap}", rec.moves)
    } else if rec.censored && rec.moves != cap {
        format!(
            "censored is true but moves {} is not maxMoves {cap} (a censored game stopped at the move cap)",
            rec.moves
        )
    } else {
        return Ok(());
    };
    Err(RecordError::MoveCap(why))
}

/// Parses one line of a record file (a trailing `\r` is ignored) and checks
/// the fields whose syntax matters: `seed` must be a u32 (`0x…` or decimal),
/// `shard`, when present, `I/N`, `score` at most [`MAX_SCORE`], `driver`
/// one of drop7's, `ruleset` (when present) drop7's, `moves` within
/// `maxMoves` (when present; equal to it in a censored game), and the
/// measured fields (`wallMs`, `decisionMsP50/P95/P99`, `chainMeanDepth`)
/// numbers from 0 to [`MAX_MEASURED`].
///
/// ```
/// let r = drop7::records::parse_record_line(r#"{"seed":"0x00000001","policy":"center","driver":"headless","score":7,"moves":3,"levels":1,"clears":0,"reveals":0,"chainMaxDepth":1,"terminalReason":"blocked-rise","censored":false}"#).unwrap();
/// assert_eq!((r.score, r.moves), (7, 3));
/// assert!(drop7::records::parse_record_line("{}").is_err());
/// assert_eq!(
///     drop7::records::parse_record_line(" \r"),
///     Err(drop7::records::RecordError::Blank)
/// );
/// ```
///
/// # Errors
/// [`RecordError`] naming the problem (serde's message gives the column).
pub fn parse_record_line(line: &str) -> Result<GameRecord, RecordError> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    if line.trim().is_empty() {
        return Err(RecordError::Blank);
    }
    let json = |e: &serde_json::Error, field: Option<String>| {
        let text = crate::formats::json_error_text(e);
        RecordError::Json(crate::formats::with_kind_hint(
            match field {
                Some(f) => format!("{f}: {text}"),
                None => text,
            },
            line,
            "a game record",
        ))
    };
    // A record is an object (serde would also take its fields as an array,
    // and would name the Rust struct for anything else).
    if !line.trim_start().starts_with('{') {
        return Err(RecordError::Json(crate::formats::with_kind_hint(
            "expected a JSON object {…} at column 1".into(),
            line,
            "a game record",
        )));
    }
    // Through serde_path_to_error, so that a field's bad value is named
    // with the field (`score: invalid value: integer `-5`, …`).
    let mut de = serde_json::Deserializer::from_str(line);
    let rec: GameRecord = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        // Only a bad value has a field to name: a syntax error's path is
        // where the parser was (`?` after a value), and `[0]` is a record
        // written as an array.
        let path = e.path().to_string();
        let named = e.inner().classify() == serde_json::error::Category::Data
            && path.starts_with(|c: char| c.is_ascii_alphabetic());
        json(e.inner(), named.then_some(path))
    })?;
    de.end().map_err(|e| json(&e, None))?;
    record_seed(&rec)?;
    check_measured(&rec)?;
    if rec.score > MAX_SCORE {
        return Err(RecordError::Score(rec.score));
    }
    if rec.censored != (rec.terminal_reason == StopReason::MoveCap) {
        return Err(RecordError::Censored(
            rec.censored,
            rec.terminal_reason.as_str(),
        ));
    }
    if let Some(s) = &rec.shard {
        parse_shard(s).map_err(|_| RecordError::Shard(s.clone()))?;
    }
    let drivers = [
        DriverKind::Headless.as_str(),
        DriverKind::Stream.as_str(),
        crate::round::LATENT_DRIVER,
    ];
    if !drivers.contains(&rec.driver.as_str()) {
        return Err(RecordError::Driver(rec.driver.clone()));
    }
    if let Some(r) = rec.ruleset.as_ref().filter(|r| *r != RULESET) {
        return Err(RecordError::Ruleset(r.clone()));
    }
    check_move_cap(&rec)?;
    // Spelled as `seed` is (see `record_seed`): `--resume` and `merge`
    // compare it as written.
    if let Some(start) = &rec.cohort_seed_start
        && parse_seed(start).map(crate::formats::seed_hex).as_ref() != Ok(start)
    {
        return Err(RecordError::CohortSeedStart(start.clone()));
    }
    Ok(rec)
}

/// One line of a record file, as [`RecordLines`] reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordLine<'a> {
    /// 1-based line number.
    pub number: u64,
    /// The line's bytes without its `\n`.
    pub bytes: &'a [u8],
    /// Whether the line ends with `\n` (only an interrupted last line does not).
    pub complete: bool,
    /// Bytes the line takes in the file, its `\n` included.
    pub len: u64,
}

impl<'a> RecordLine<'a> {
    /// The line as text, `None` when it is not UTF-8.
    pub fn text(&self) -> Option<&'a str> {
        std::str::from_utf8(self.bytes).ok()
    }
}

/// Longest record line read, in bytes with its `\n`: 1 MiB (a record is
/// under 2 kB; the limit `--resume` also sets on trace lines). A longer line
/// (or an endless one, `/dev/zero`) is an error, not a line held in memory.
pub const MAX_RECORD_LINE_BYTES: u64 = 1 << 20;

/// The one reader of record files (`summary`, `compare`, `merge`, `play
/// --resume`): line by line, each at most [`MAX_RECORD_LINE_BYTES`], reporting an
/// unfinished last line (no `\n`: an interrupted run) as not `complete`
/// rather than dropping it. A UTF-8 byte-order mark before the first line is
/// skipped. Parse each line with [`parse_record_line`].
///
/// ```
/// use drop7::records::RecordLines;
/// let mut r = RecordLines::new(&b"{\"a\":1}\n{\"b\""[..]);
/// let first = r.next_line().unwrap().unwrap();
/// assert_eq!((first.number, first.text(), first.complete, first.len), (1, Some("{\"a\":1}"), true, 8));
/// let last = r.next_line().unwrap().unwrap();
/// assert_eq!((last.number, last.complete), (2, false));
/// assert!(r.next_line().unwrap().is_none());
/// ```
#[derive(Debug)]
pub struct RecordLines<R> {
    reader: R,
    buf: Vec<u8>,
    number: u64,
}

impl<R: std::io::BufRead> RecordLines<R> {
    /// Reads the lines of `reader`.
    pub fn new(reader: R) -> Self {
        RecordLines {
            reader,
            buf: Vec::new(),
            number: 0,
        }
    }

    /// The next line; `Ok(None)` at the end of the file.
    ///
    /// # Errors
    /// An I/O error of the reader; `InvalidData` naming the line when it is
    /// longer than [`MAX_RECORD_LINE_BYTES`].
    pub fn next_line(&mut self) -> std::io::Result<Option<RecordLine<'_>>> {
        use std::io::{BufRead, Read};
        self.buf.clear();
        let n = (&mut self.reader)
            .take(MAX_RECORD_LINE_BYTES)
            .read_until(b'\n', &mut self.buf)?;
        if n == 0 {
            return Ok(None);
        }
        self.number += 1;
        if n as u64 == MAX_RECORD_LINE_BYTES && self.buf.last() != Some(&b'\n') {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "line {} is longer than {MAX_RECORD_LINE_BYTES} bytes (not a game record)",
                    self.number
                ),
            ));
        }
        let complete = self.buf.last() == Some(&b'\n');
        let bytes = if complete {
            &self.buf[..n - 1]
        } else {
            &self.buf[..]
        };
        // A UTF-8 byte-order mark at the start of the file is accepted
        // (`len` still counts it: it is in the file).
        let bytes = match bytes.strip_prefix(b"\xEF\xBB\xBF") {
            Some(rest) if self.number == 1 => rest,
            _ => bytes,
        };
        Ok(Some(RecordLine {
            number: self.number,
            bytes,
            complete,
            len: n as u64,
        }))
    }
}

/// The record's seed as a u32.
///
/// # Errors
/// [`RecordError::Seed`] when `seed` is not a u32 in `0x` hex or decimal.
pub fn record_seed(rec: &GameRecord) -> Result<u32, RecordError> {
    let seed = parse_seed(&rec.seed).map_err(RecordError::Seed)?;
    // One spelling, as `play` writes it: `--resume` and `merge` compare
    // seeds as written, `summary` and `compare` as numbers.
    if crate::formats::seed_hex(seed) != rec.seed {
        return Err(RecordError::Seed(format!(
            "{:?} is not written as a record writes it: expected \"0x\" and 8 lowercase hex digits ({:?})",
            rec.seed,
            crate::formats::seed_hex(seed)
        )));
    }
    Ok(seed)
}

/// Parses a shard `I/N` (1 <= I <= N <= 2^32), as `--shard` takes it.
///
/// # Errors
/// A message naming the text.
pub fn parse_shard(text: &str) -> Result<(u64, u64), String> {
    let bad = || format!("invalid shard {text:?}: expected I/N with 1 <= I <= N (e.g. 2/7)");
    let (i, n) = text.split_once('/').ok_or_else(bad)?;
    let i: u64 = i.trim().parse().map_err(|_| bad())?;
    let n: u64 = n.trim().parse().map_err(|_| bad())?;
    if i == 0 || n == 0 || i > n || n > 1 << 32 {
        return Err(bad());
    }
    Ok((i, n))
}

/// The game indices of shard `i` of `n` (1-based) of a cohort of `games`
/// games: the contiguous range `floor((i-1)·games/n) .. floor(i·games/n)`.
/// The shards are disjoint and cover `0..games` in order.
pub fn shard_range(games: u64, i: u64, n: u64) -> std::ops::Range<u64> {
    let at = |k: u64| (u128::from(games) * u128::from(k) / u128::from(n)) as u64;
    at(i - 1)..at(i)
}

/// The fields that name a run: two records belong to the same run exactly
/// when these agree (shard aside). In order of the message naming a difference.
pub fn identity(rec: &GameRecord) -> [(&'static str, String); 8] {
    fn opt<T: ToString>(v: &Option<T>) -> String {
        v.as_ref()
            .map_or_else(|| "(absent)".to_string(), T::to_string)
    }
    [
        ("ruleset", opt(&rec.ruleset)),
        ("policy", rec.policy.clone()),
        ("table", opt(&rec.table)),
        ("maxWork", opt(&rec.max_work)),
        ("driver", rec.driver.clone()),
        // A scripted round's cap is its file's (`maximumMoves`), not the run's.
        (
            "maxMoves",
            match rec.round {
                Some(_) => "(per round)".to_string(),
                None => opt(&rec.max_moves),
            },
        ),
        ("cohortSeedStart", opt(&rec.cohort_seed_start)),
        ("cohortGames", opt(&rec.cohort_games)),
    ]
}

/// The first identity field where `found` differs from `want`:
/// `(field, found value, wanted value)`.
pub fn identity_difference(
    want: &GameRecord,
    found: &GameRecord,
) -> Option<(&'static str, String, String)> {
    identity(want)
        .into_iter()
        .zip(identity(found))
        .find(|(w, f)| w.1 != f.1)
        .map(|((name, w), (_, f))| (name, f, w))
}

/// Incremental `trajectorySha256`: feed every move's column and the board
/// after it; 50 ASCII bytes per move (column digit, 49 board characters).
#[derive(Clone, Debug, Default)]
pub struct TrajectoryHash {
    hasher: Sha256,
}

impl TrajectoryHash {
    /// Adds one move.
    #[inline]
    pub fn push(&mut self, column: usize, board: &Board) {
        let cells = board.to_cells();
        let mut bytes = [0u8; 50];
        bytes[0] = b'0' + column as u8;
        for (b, &c) in bytes[1..].iter_mut().zip(cells.iter()) {
            *b = b'0' + c;
        }
        self.hasher.update(bytes);
    }

    /// The hash as 64 lowercase hex digits.
    pub fn finish(self) -> String {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut hex = String::with_capacity(64);
        for b in self.hasher.finalize() {
            hex.push(char::from(HEX[usize::from(b >> 4)]));
            hex.push(char::from(HEX[usize::from(b & 15)]));
        }
        hex
    }
}

/// Nearest-rank quantile `q` in (0, 1] of `sorted` (ascending, non-empty):
/// the `ceil(q·n)`-th smallest value.
pub fn nearest_rank(sorted: &[f64], q: f64) -> f64 {
    let n = sorted.len();
    let rank = ((q * n as f64).ceil() as usize).clamp(1, n);
    sorted[rank - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hash is SHA-256 of each move's column digit and 49 cell digits,
    /// as 64 lowercase hex digits.
    #[test]
    fn trajectory_hash_is_lowercase_sha256_hex() {
        let mut h = TrajectoryHash::default();
        let board = Board::from_cells(&[8; 49]);
        h.push(3, &board);
        h.push(6, &Board::default());
        let mut text = String::from("3");
        text.push_str(&"8".repeat(49));
        text.push('6');
        text.push_str(&"0".repeat(49));
        let want: String = Sha256::digest(text.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(h.finish(), want);
    }

    #[test]
    fn scores_above_2_pow_53_are_refused() {
        let line = |score: u64| {
            format!(
                r#"{{"seed":"0x00000001","policy":"center","driver":"headless","score":{score},"moves":3,"levels":1,"clears":0,"reveals":0,"chainMaxDepth":1,"terminalReason":"blocked-rise","censored":false}}"#
            )
        };
        assert_eq!(
            parse_record_line(&line(MAX_SCORE)).unwrap().score,
            MAX_SCORE
        );
        let err = parse_record_line(&line(MAX_SCORE + 1)).unwrap_err();
        assert_eq!(err, RecordError::Score(MAX_SCORE + 1));
        assert_eq!(
            err.to_string(),
            "bad score: 9007199254740993 (expected at most 2^53 = 9007199254740992)"
        );
        assert!(parse_record_line(&line(u64::MAX)).is_err());
    }

    #[test]
    fn driver_ruleset_and_move_cap_are_checked() {
        let with = |extra: &str, moves: u32, reason: &str, censored: bool| {
            parse_record_line(&format!(
                r#"{{"seed":"0x00000001","policy":"center","driver":"headless","score":7,"moves":{moves},"levels":1,"clears":0,"reveals":0,"chainMaxDepth":1,"terminalReason":"{reason}","censored":{censored}{extra}}}"#
            ))
        };
        assert!(with(r#","maxMoves":3"#, 3, "blocked-rise", false).is_ok());
        assert!(with(r#","maxMoves":3"#, 3, "move-cap", true).is_ok());
        assert!(
            with(
                r#","maxMoves":2000,"ruleset":"drop7-hardcore-5-v1""#,
                3,
                "no-legal-column",
                false
            )
            .is_ok()
        );
        let message = |r: Result<GameRecord, RecordError>| r.unwrap_err().to_string();
        assert_eq!(
            message(with(r#","maxMoves":0"#, 3, "blocked-rise", false)),
            "maxMoves is 0 (a move cap is at least 1)"
        );
        assert_eq!(
            message(with(r#","maxMoves":2000"#, 2500, "blocked-rise", false)),
            "moves 2500 is above maxMoves 2000"
        );
        assert_eq!(
            message(with(r#","maxMoves":2000"#, 1999, "move-cap", true)),
            "censored is true but moves 1999 is not maxMoves 2000 (a censored game stopped at the move cap)"
        );
        assert_eq!(
            message(with(r#","ruleset":"x""#, 3, "blocked-rise", false)),
            r#"bad ruleset "x": drop7 plays "drop7-hardcore-5-v1" only"#
        );
        for driver in ["stream", "latent"] {
            let line = with("", 3, "blocked-rise", false).unwrap();
            let text = serde_json::to_string(&GameRecord {
                driver: driver.into(),
                ..line
            })
            .unwrap();
            assert!(parse_record_line(&text).is_ok(), "{driver}");
        }
        let bogus = r#"{"seed":"0x00000001","policy":"center","driver":"bo\u001bgus","score":7,"moves":3,"levels":1,"clears":0,"reveals":0,"chainMaxDepth":1,"terminalReason":"blocked-rise","censored":false}"#;
        assert_eq!(
            message(parse_record_line(bogus)),
            r#"bad driver "bo\u{1b}gus": expected "headless", "stream" or "latent""#
        );
    }

    #[test]
    fn measured_fields_are_checked() {
        let base = r#"{"seed":"0x00000001","policy":"center","driver":"headless","score":7,"moves":3,"levels":1,"clears":0,"reveals":0,"chainMaxDepth":1,"terminalReason":"blocked-rise","censored":false"#;
        let with = |field: &str| parse_record_line(&format!("{base},{field}}}"));
        assert!(with(r#""wallMs":0"#).is_ok());
        assert!(with(r#""wallMs":12.5,"decisionMsP99":null"#).is_ok());
        assert!(with(r#""chainMeanDepth":1e12"#).is_ok());
        for (field, name, value) in [
            (r#""wallMs":-1"#, "wallMs", "-1.0"),
            (r#""wallMs":1e308"#, "wallMs", "1e308"),
            (r#""decisionMsP50":-0.5"#, "decisionMsP50", "-0.5"),
            (
                r#""decisionMsP95":2e12"#,
                "decisionMsP95",
                "2000000000000.0",
            ),
            (
                r#""decisionMsP99":1e13"#,
                "decisionMsP99",
                "10000000000000.0",
            ),
            (r#""chainMeanDepth":-3"#, "chainMeanDepth", "-3.0"),
        ] {
            assert_eq!(
                with(field),
                Err(RecordError::Measured(name, value.to_string())),
                "{field}"
            );
        }
        let e = with(r#""wallMs":-1"#).unwrap_err().to_string();
        assert_eq!(e, "bad wallMs: -1.0 (expected a number from 0 to 1e12)");
    }

    #[test]
    fn seeds_are_spelled_as_play_writes_them() {
        let with = |seed: &str, reason: &str, censored: bool| {
            parse_record_line(&format!(
                r#"{{"seed":{seed},"policy":"center","driver":"headless","score":7,"moves":3,"levels":1,"clears":0,"reveals":0,"chainMaxDepth":1,"terminalReason":"{reason}","censored":{censored}}}"#
            ))
        };
        assert!(with(r#""0x0000000a""#, "blocked-rise", false).is_ok());
        // `resume` and `merge` compare seeds as written: other spellings of
        // the same number were paired by `compare` but not by them.
        for other in [
            r#""0x1""#,
            r#""0X0000000A""#,
            r#""0x0000000A""#,
            r#""10""#,
            r#"" 0x0000000a""#,
        ] {
            let e = with(other, "blocked-rise", false).unwrap_err().to_string();
            assert!(
                e.starts_with("bad seed: ")
                    && e.contains("expected \"0x\" and 8 lowercase hex digits"),
                "{other}: {e}"
            );
        }
        // So is the cohort's first seed.
        let rec = r#"{"seed":"0x00000001","policy":"center","driver":"headless","score":7,"moves":3,"levels":1,"clears":0,"reveals":0,"chainMaxDepth":1,"terminalReason":"blocked-rise","censored":false,"cohortSeedStart":"START","cohortGames":5}"#;
        assert!(parse_record_line(&rec.replace("START", "0x00000001")).is_ok());
        for other in ["0x1", "1", "0X00000001", "zzz"] {
            assert_eq!(
                parse_record_line(&rec.replace("START", other)),
                Err(RecordError::CohortSeedStart(other.into()))
            );
        }
        // `censored` says whether the move cap stopped the game.
        assert!(with(r#""0x00000001""#, "move-cap", true).is_ok());
        for (reason, censored) in [
            (StopReason::BlockedRise, true),
            (StopReason::NoLegalColumn, true),
            (StopReason::MoveCap, false),
        ] {
            let r = with(r#""0x00000001""#, reason.as_str(), censored);
            assert_eq!(r, Err(RecordError::Censored(censored, reason.as_str())));
        }
        let e = with(r#""0x00000001""#, "blocked-rise", true)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            r#"censored is true but terminalReason is "blocked-rise" (a game is censored exactly when the move cap stopped it: "move-cap")"#
        );
    }

    #[test]
    fn terminal_reason_is_one_of_three_strings() {
        let with = |reason: &str| {
            let censored = reason.contains("move-cap");
            parse_record_line(&format!(
                r#"{{"seed":"0x00000001","policy":"center","driver":"headless","score":7,"moves":3,"levels":1,"clears":0,"reveals":0,"chainMaxDepth":1,"terminalReason":{reason},"censored":{censored}}}"#
            ))
        };
        for (text, reason) in [
            (r#""blocked-rise""#, StopReason::BlockedRise),
            (r#""no-legal-column""#, StopReason::NoLegalColumn),
            (r#""move-cap""#, StopReason::MoveCap),
        ] {
            assert_eq!(with(text).unwrap().terminal_reason, reason);
        }
        for bad in [r#"{"blocked-rise":null}"#, "3", r#""blocked_rise""#, "null"] {
            let e = with(bad).unwrap_err().to_string();
            assert!(e.contains("terminalReason"), "{bad}: {e}");
            assert!(
                e.contains(r#"expected one of "blocked-rise", "no-legal-column", "move-cap""#),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn a_line_of_another_format_is_named() {
        let trace = r#"{"seed":1,"move":1,"disc":3,"column":3,"scoreDelta":0,"score":0,"level":1,"movesRemaining":4,"gameOver":false,"clearedBoard":false,"levelAdvanced":false,"waves":[],"board":"0"}"#;
        let e = parse_record_line(trace).unwrap_err().to_string();
        assert!(e.starts_with("not a game record: "), "{e}");
        assert!(
            e.ends_with("; this line looks like a trace line (as drop7 trace writes)"),
            "{e}"
        );
        // A record with one bad field is not told it looks like a record.
        let bad = r#"{"seed":"0x00000001","policy":"center","driver":"headless","score":"7","moves":3,"levels":1,"clears":0,"reveals":0,"chainMaxDepth":1,"terminalReason":"blocked-rise","censored":false}"#;
        let e = parse_record_line(bad).unwrap_err().to_string();
        assert!(!e.contains("looks like"), "{e}");
        let e = parse_record_line(r#"{"values":[],"action":null}"#)
            .unwrap_err()
            .to_string();
        assert!(
            e.ends_with("looks like a decision (as drop7 decide writes)"),
            "{e}"
        );
        let e = parse_record_line("[1, 2]").unwrap_err().to_string();
        assert!(!e.contains("looks like"), "{e}");
    }

    #[test]
    fn shards_cover_in_order() {
        for games in [0u64, 1, 5, 7, 100, 1 << 32] {
            for n in [1u64, 2, 3, 7, 13] {
                let mut next = 0;
                for i in 1..=n {
                    let r = shard_range(games, i, n);
                    assert_eq!(r.start, next);
                    next = r.end;
                }
                assert_eq!(next, games);
            }
        }
        assert_eq!(parse_shard("2/7"), Ok((2, 7)));
        for bad in ["0/3", "4/3", "1", "a/b", "1/0", ""] {
            assert!(parse_shard(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn parser_and_identity() {
        let line = r#"{"seed":"0x00000001","policy":"center","driver":"headless","score":7,"moves":3,"levels":1,"clears":0,"reveals":0,"chainMaxDepth":1,"terminalReason":"blocked-rise","censored":false}"#;
        let old = parse_record_line(line).unwrap();
        assert_eq!(old.ruleset, None);
        let mut new = old.clone();
        new.ruleset = Some(RULESET.into());
        new.max_moves = Some(2000);
        let text = serde_json::to_string(&new).unwrap();
        assert_eq!(parse_record_line(&text).unwrap(), new);
        assert_eq!(
            identity_difference(&new, &old),
            Some(("ruleset", "(absent)".into(), RULESET.into()))
        );
        assert!(parse_record_line(r#"{"seed":"0xZZ"}"#).is_err());
        assert!(parse_record_line("[1,2]").is_err());
        // A bad value is named with its field, in words; a syntax error and
        // a line that is no object have no field to name.
        let err = |l: &str| parse_record_line(l).unwrap_err().to_string();
        assert_eq!(
            err(&line.replace("\"score\":7", "\"score\":-5")),
            "not a game record: score: invalid value: integer `-5`, expected an integer \
             0-18446744073709551615 at column 69"
        );
        assert!(
            err(&line.replace("\"moves\":3", "\"moves\":3.5"))
                .starts_with("not a game record: moves: invalid type: floating point `3.5`, expected an integer 0-4294967295")
        );
        assert_eq!(
            err(&line.replace("\"score\":7", "\"score\":7x")),
            "not a game record: expected `,` or `}` at column 69"
        );
        for not_object in ["null", "[\"0x00000001\",\"center\"]", "\"text\""] {
            assert_eq!(
                err(not_object),
                "not a game record: expected a JSON object {…} at column 1",
                "{not_object}"
            );
        }
        assert!(parse_record_line("").is_err());
        let bad_seed = line.replace("0x00000001", "0x1000000000");
        assert!(matches!(
            parse_record_line(&bad_seed),
            Err(RecordError::Seed(_))
        ));
    }

    #[test]
    fn ranks() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(nearest_rank(&v, 0.5), 2.0);
        assert_eq!(nearest_rank(&v, 0.99), 4.0);
        assert_eq!(nearest_rank(&[5.0], 0.5), 5.0);
    }
}

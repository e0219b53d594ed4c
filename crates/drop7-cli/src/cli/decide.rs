//! `drop7 decide`: per-column values of positions under the fair search, and
//! `drop7 leaf`: fair-leaf values. Both read JSON lines on stdin (or, for
//! `decide`, one root from flags) and answer each line in its place; a
//! malformed line gets `{"line": k, "error": "…"}` and the exit code is 1 if any
//! line failed (spec: search.md, search-golden-format.md).

use std::io::{self, BufWriter, IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;
use drop7::formats::{
    DecideRecord, LeafRecord, LineError, RootError, f64_hex, parse_root_line, position_from_parts,
};
use drop7::gravity::GravityChoice;
use drop7::input::{LineProblem, LineReader, MAX_LINE_BYTES};
use drop7::leaf::FairLeaf;
use drop7::parallel::{MAX_SEARCH_THREADS, ParallelSearch};
use drop7::player::{FairSpec, TableSpec};
use drop7::position::Position;
use drop7::reference::search::ReferenceSearch;
use drop7::search::{Decide, FairSearch, MAX_DEPTH, MAX_STRATA, SearchProgress, worst_case_work};

/// Context of a failed write to stdout.
const STDOUT: &str = "writing to stdout";

/// Worst-case work (search.md §5) from which `decide` warns before it starts
/// and shows progress: 10^8 work units, a few seconds of the fast search
/// (minutes of the plain reference search) or more.
pub const BIG_WORK: u64 = 100_000_000;

/// Options of `drop7 decide`.
#[derive(Args, Debug, Clone)]
#[command(after_help = "Examples:\n  \
    drop7 decide --board 0000000000000000000000000000000000000000000000000 --next 3 --rise 5\n  \
    echo '{\"board\":\"0000000000000000000000000000000000000000000000000\",\"next\":3,\"movesRemaining\":5}' | drop7 decide --depth 2")]
pub struct DecideArgs {
    /// Search depth D (1-8): moves of look-ahead.
    #[arg(
        long,
        default_value_t = 4,
        value_name = "D",
        allow_negative_numbers = true
    )]
    pub depth: u32,
    /// Strata S (1-32): samples per chance node.
    #[arg(
        long,
        default_value_t = 5,
        value_name = "S",
        allow_negative_numbers = true
    )]
    pub strata: u32,
    /// Transposition table: none, lru:C (reference semantics), dm:N or sa:N[:W]
    /// (N entries, a power of two; W ways, 2 or 4)
    /// [default: sa:65536:4 up to depth 4, sa:1048576:4 (46 MB) from depth 5;
    /// with --search reference: lru:200000].
    #[arg(long, value_name = "TABLE")]
    pub table: Option<String>,
    /// Work budget [default: W(D,S)+1, which never binds].
    #[arg(long, value_name = "W", allow_negative_numbers = true)]
    pub max_work: Option<u64>,
    /// One root from flags instead of stdin: the 49-character board…
    #[arg(long, value_name = "BOARD", requires_all = ["next", "rise"])]
    pub board: Option<String>,
    /// …its next disc (1-7)…
    #[arg(
        long,
        value_name = "N",
        requires = "board",
        allow_negative_numbers = true
    )]
    pub next: Option<String>,
    /// …and the moves remaining before the rise (1-5).
    #[arg(
        long,
        value_name = "R",
        requires = "board",
        allow_negative_numbers = true
    )]
    pub rise: Option<String>,
    /// Search implementation: fast, or the plain reference oracle (slow; its
    /// table is the strict LRU, so --table must be none or lru:C).
    #[arg(long, default_value = "fast", value_name = "IMPL")]
    pub search: String,
    /// Gravity path of the fast search: auto, bmi2 or portable
    /// [default: $DROP7_GRAVITY, else auto].
    #[arg(long, value_name = "PATH")]
    pub gravity: Option<String>,
    /// Threads splitting each decision (fast search only): values, action and
    /// completed depth are those of one thread; the threads share one table
    /// (behind a lock), and with a table the counters differ (docs/commands.md).
    #[arg(
        long,
        default_value_t = 1,
        value_name = "N",
        allow_negative_numbers = true
    )]
    pub threads: usize,
}

/// Runs `drop7 decide`.
pub fn run(args: &DecideArgs) -> Result<bool> {
    if !(1..=MAX_DEPTH).contains(&args.depth) {
        bail!("--depth must be 1-{MAX_DEPTH}, got {}", args.depth);
    }
    if !(1..=MAX_STRATA).contains(&args.strata) {
        bail!("--strata must be 1-{MAX_STRATA}, got {}", args.strata);
    }
    if !(1..=MAX_SEARCH_THREADS).contains(&args.threads) {
        bail!(
            "--threads must be 1-{MAX_SEARCH_THREADS}, got {}",
            args.threads
        );
    }
    if args.threads > 1 && args.search != "fast" {
        bail!("--threads applies to --search fast only");
    }
    exit_on_signals("decide")?;
    let table: TableSpec = match (&args.table, args.search.as_str()) {
        (Some(t), _) => t.parse().context("--table")?,
        (None, "reference") => TableSpec::Lru(200_000),
        (None, _) => TableSpec::default_for_depth(args.depth),
    };
    let config = FairSpec {
        depth: args.depth,
        strata: args.strata,
    }
    .config(args.max_work);
    let single = match &args.board {
        Some(b) => Some(root_from_flags(
            b,
            args.next.as_deref().unwrap_or(""),
            args.rise.as_deref().unwrap_or(""),
        )?),
        None => None,
    };
    let bound = worst_case_work(config.depth, config.strata).min(config.max_work);
    let big = bound >= BIG_WORK;
    if big {
        eprintln!(
            "{}",
            big_work_warning(args, bound, io::stderr().is_terminal())
        );
    }
    match args.search.as_str() {
        "fast" => {
            let choice = match &args.gravity {
                Some(g) => g.parse::<GravityChoice>().context("--gravity")?,
                None => GravityChoice::from_env().context("DROP7_GRAVITY")?,
            };
            let path = choice.resolve()?;
            drop7::with_gravity!(path, |g| drop7::with_table!(table, |t| {
                let mut s = FairSearch::new(FairLeaf, t, g, config);
                let progress = big.then(|| {
                    let p = Arc::new(SearchProgress::default());
                    s.set_progress(p.clone());
                    (p, bound)
                });
                let max_work = config.max_work;
                let report = Report { max_work, progress };
                if args.threads > 1 {
                    answer(&mut ParallelSearch::new(s, args.threads), single, report)
                } else {
                    answer(&mut s, single, report)
                }
            }))
            .map_err(|e| anyhow::anyhow!("--table: {e}"))?
        }
        "reference" => {
            let capacity = match table {
                TableSpec::None => 0,
                TableSpec::Lru(c) => c,
                other => bail!("--search reference supports --table none or lru:C, not {other}"),
            };
            let report = Report {
                max_work: config.max_work,
                progress: None,
            };
            answer(&mut ReferenceSearch::new(config, capacity), single, report)
        }
        other => bail!("unknown --search {other:?} (expected fast or reference)"),
    }
}

/// The warning before a search of `bound` worst-case work units; it mentions
/// the progress bar only when one is drawn (`shown`: stderr is a terminal,
/// [`with_progress`]) and only for the fast search, the one that reports it.
fn big_work_warning(args: &DecideArgs, bound: u64, shown: bool) -> String {
    let progress = if shown && args.search == "fast" {
        "; progress on stderr"
    } else {
        ""
    };
    // The rough time is the fast search's (the plain reference search is
    // tens of times slower: no figure rather than a wrong one).
    let time = if args.search == "fast" {
        format!("; {}", rough_time(bound))
    } else {
        String::new()
    };
    format!(
        "warning: --depth {} --strata {} may take up to {} work units per position \
         (the smaller of W(D,S) and --max-work{time}){progress}",
        args.depth,
        args.strata,
        grouped(bound)
    )
}

/// Work units a fast d4s7 search does per second on one core (about 25 M in
/// `drop7 bench` on the project's 2-vCPU VMs, 2026-12-03; a table's hits
/// make real searches do less than W(D,S)).
const WORK_PER_SECOND: f64 = 25e6;

/// `bound` work units as a rough time at [`WORK_PER_SECOND`], for a warning
/// ("at most about 3 hours on one core at 25M work/s").
fn rough_time(bound: u64) -> String {
    let seconds = bound as f64 / WORK_PER_SECOND;
    let (value, unit) = [
        (1.0, "second"),
        (60.0, "minute"),
        (3600.0, "hour"),
        (86_400.0, "day"),
        (31_557_600.0, "year"),
    ]
    .into_iter()
    .rev()
    // (0.95: 59.6 seconds reads "1 minute", not "60 seconds".)
    .find(|&(size, _)| seconds >= 0.95 * size)
    .map_or((seconds, "second"), |(size, unit)| (seconds / size, unit));
    // (u64::MAX work units is about 23,000 years: no exponent needed.)
    let amount = format!("{:.0}", value.max(1.0));
    let plural = if amount == "1" { "" } else { "s" };
    format!("at most about {amount} {unit}{plural} on one core at 25M work/s")
}

/// `n` with its digits in groups of three (`12,762,329,762,212,784,096`).
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() * 4 / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The root of `--board B --next N --rise R`; an error names the flag at
/// fault (not the JSON key of a stdin line, such as `movesRemaining`). Any
/// text that is not a number in range (negative, too large for any integer
/// type, not a number) gets the flag's range error, exit 1, as 0 does.
fn root_from_flags(board: &str, next_given: &str, rise_given: &str) -> Result<Position> {
    let next_range = || anyhow::anyhow!("--next must be 1-7, got {next_given}");
    let rise_range = || {
        anyhow::anyhow!(
            "--rise (the moves remaining before the rise) must be 1-5, got {rise_given}"
        )
    };
    let next: u64 = next_given.trim().parse().map_err(|_| next_range())?;
    let rise: u64 = rise_given.trim().parse().map_err(|_| rise_range())?;
    position_from_parts(board, next, rise, false).map_err(|e| match e {
        RootError::Board(b) => anyhow::anyhow!("--board: {b}"),
        RootError::Next(_) => next_range(),
        RootError::MovesRemaining(_) => rise_range(),
        other => anyhow::anyhow!("--board/--next/--rise: {other}"),
    })
}

/// How `decide` reports: the work budget (for the no-iteration warning) and,
/// for a big decision, the search's progress counter and the work bound.
struct Report {
    max_work: u64,
    progress: Option<(Arc<SearchProgress>, u64)>,
}

/// `at` names the root in messages: `line N` of stdin, or `--board`.
fn decide_json<D: Decide>(d: &mut D, pos: &Position, at: &str, report: &Report) -> Result<String> {
    let t0 = Instant::now();
    let decision = match &report.progress {
        Some((p, bound)) => with_progress(p, *bound, at, || d.decide_position(pos)),
        None => d.decide_position(pos),
    };
    // Whole microseconds: the clock's noise below that is not a figure.
    let ms = (t0.elapsed().as_secs_f64() * 1e6).round() / 1e3;
    // A root with no legal column has no iteration to complete (search.md §4:
    // action null, values null, depth 0): nothing to warn about.
    if decision.completed_depth == 0 && !pos.game_over && pos.board.legal_mask() != 0 {
        eprintln!(
            "warning: {at}: --max-work {} let no iteration complete: the action is \
             the fallback (first legal column of 3,2,4,1,5,0,6), values are null",
            report.max_work
        );
    }
    Ok(serde_json::to_string(&DecideRecord::new(&decision, ms))?)
}

/// Runs `f` while a progress bar on stderr (hidden when stderr is not a
/// terminal) shows the work done against the bound.
fn with_progress<T>(p: &SearchProgress, bound: u64, at: &str, f: impl FnOnce() -> T) -> T {
    p.work.store(0, Ordering::Relaxed);
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let watcher = scope.spawn(|| {
            let bar = indicatif::ProgressBar::new(bound).with_style(
                indicatif::ProgressStyle::with_template(
                    "{msg} [{elapsed_precise}] {wide_bar} {human_pos}/{human_len} work",
                )
                .expect("a valid template"),
            );
            while !done.load(Ordering::Relaxed) {
                bar.set_message(format!("{at}: depth {}", p.depth.load(Ordering::Relaxed)));
                bar.set_position(p.work.load(Ordering::Relaxed));
                std::thread::park_timeout(Duration::from_millis(100));
            }
            bar.finish_and_clear();
        });
        let out = f();
        done.store(true, Ordering::Relaxed);
        watcher.thread().unpark();
        out
    })
}

/// Answers the single root or every stdin line; `Ok(false)` if a line failed.
fn answer<D: Decide>(d: &mut D, single: Option<Position>, report: Report) -> Result<bool> {
    let mut out = BufWriter::new(io::stdout().lock());
    if let Some(pos) = single {
        writeln!(out, "{}", decide_json(d, &pos, "--board", &report)?).context(STDOUT)?;
        out.flush().context(STDOUT)?;
        return Ok(true);
    }
    stdin_hint("decide");
    for_each_line(&mut out, |number, line| {
        let pos = parse_root_line(line).map_err(|e| e.to_string())?;
        decide_json(d, &pos, &format!("line {number}"), &report).map_err(|e| e.to_string())
    })
}

/// On a terminal, says what the command reads (a new user typing `drop7
/// decide` would otherwise see nothing happen).
fn stdin_hint(command: &str) {
    if io::stdin().is_terminal() {
        eprintln!(
            "drop7 {command}: reading positions from stdin, one JSON object per line: \
             {{\"board\":\"<49 cells 0-9, row 0 first>\",\"next\":1-7,\"movesRemaining\":1-5}} \
             (Ctrl-D ends; see drop7 {command} --help)"
        );
    }
}

/// Reads stdin with the shared line reader ([`drop7::input`]: BOM and CRLF
/// accepted, lines over [`MAX_LINE_BYTES`] refused unread); writes `f(line)`
/// or a [`LineError`] for each non-blank line, flushing after each;
/// `Ok(false)` if any line failed.
fn for_each_line(
    out: &mut impl Write,
    mut f: impl FnMut(usize, &str) -> Result<String, String>,
) -> Result<bool> {
    let mut ok = true;
    let mut lines = LineReader::new(io::stdin().lock());
    while let Some(line) = lines.next_line().context("reading stdin")? {
        let id = line.text.as_deref().ok().and_then(input_echo);
        let answer = match &line.text {
            Ok(text) if text.trim().is_empty() => continue,
            Ok(text) => f(line.number, text),
            Err(LineProblem::TooLong { .. }) => Err(format!(
                "line is longer than {MAX_LINE_BYTES} bytes (the limit of an input line)"
            )),
            Err(e) => Err(e.to_string()),
        };
        let json = match answer {
            Ok(json) => json,
            Err(error) => {
                ok = false;
                let err = LineError {
                    line: line.number,
                    error,
                };
                serde_json::to_string(&err)?
            }
        };
        match id {
            // `json` is an object with at least one key: `{"id":…,` + the rest.
            Some(id) => writeln!(out, "{{{id},{}", &json[1..]),
            None => writeln!(out, "{json}"),
        }
        .context(STDOUT)?;
        out.flush().context(STDOUT)?;
    }
    out.flush().context(STDOUT)?;
    Ok(ok)
}

/// The keys of an input object copied into its answer, first, in this order:
/// a caller's `"id"`, and the `"seed"` and `"move"` that `drop7 trace
/// --roots` writes (so that its roots' answers join back to their games).
const ECHOED: [&str; 3] = ["id", "seed", "move"];

/// The [`ECHOED`] keys of an input line that is a JSON object (any values),
/// as `"key":text` joined with commas, each value's text as in the line (to
/// be copied verbatim into the line's answer: `123456789012345678901234567890`
/// and `-0` stay as they are); `None` when it has none of them.
fn input_echo(text: &str) -> Option<String> {
    use serde::{Deserialize, Deserializer};
    use serde_json::value::RawValue;
    /// Keeps `"id": null` as the text `null` (an `Option` field reads it as `None`).
    fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
        <&RawValue>::deserialize(d).map(Some)
    }
    #[derive(Deserialize)]
    struct Echoed<'a> {
        #[serde(default, borrow, deserialize_with = "present")]
        id: Option<&'a RawValue>,
        #[serde(default, borrow, deserialize_with = "present")]
        seed: Option<&'a RawValue>,
        #[serde(default, borrow, deserialize_with = "present", rename = "move")]
        move_number: Option<&'a RawValue>,
    }
    // Only an object (a derived struct also reads an array), and only values
    // that are themselves readable JSON (the answer must stay a JSON line).
    if !ECHOED.iter().any(|k| text.contains(&format!("\"{k}\"")))
        || !text.trim_start().starts_with('{')
    {
        return None;
    }
    #[derive(Deserialize)]
    struct IdOnly<'a> {
        #[serde(default, borrow, deserialize_with = "present")]
        id: Option<&'a RawValue>,
    }
    // A line that repeats "seed" or "move" (its answer is an error) still
    // gets its "id".
    let values = match serde_json::from_str::<Echoed<'_>>(text) {
        Ok(line) => [line.id, line.seed, line.move_number],
        Err(_) => [
            serde_json::from_str::<IdOnly<'_>>(text).ok()?.id,
            None,
            None,
        ],
    };
    let mut echoed = Vec::new();
    for (key, value) in ECHOED.iter().zip(values) {
        let Some(raw) = value.map(RawValue::get) else {
            continue;
        };
        if serde_json::from_str::<serde_json::Value>(raw).is_ok() {
            echoed.push(format!("\"{key}\":{raw}"));
        }
    }
    (!echoed.is_empty()).then(|| echoed.join(","))
}

/// Options of `drop7 leaf` (none: it reads stdin).
#[derive(Args, Debug, Clone)]
#[command(after_help = "Example:\n  \
    echo '{\"board\":\"0000000000000000000000000000000000000000000000000\",\"next\":3,\"movesRemaining\":5}' | drop7 leaf")]
pub struct LeafArgs {}

/// SIGINT (Ctrl-C) and SIGTERM end a `decide` at once (a decision may take
/// minutes): one line on stderr, exit status 130 or 143. The answers already
/// written (stdout is flushed after each) stay; the line being read (a line
/// that never ends, such as `/dev/zero`'s, is read until a signal) or
/// searched is abandoned.
fn exit_on_signals(command: &'static str) -> Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])
        .context("installing signal handlers")?;
    std::thread::spawn(move || {
        if let Some(sig) = signals.forever().next() {
            let (name, code) = if sig == SIGTERM {
                ("SIGTERM", 143)
            } else {
                ("SIGINT", 130)
            };
            eprintln!(
                "interrupted by {name}: drop7 {command} stopped; the answers written so far are \
                 on stdout; the line being read or searched has none"
            );
            std::process::exit(code);
        }
    });
    Ok(())
}

/// Runs `drop7 leaf`: `{"board","next","movesRemaining","gameOver"}` lines in,
/// `{"value","bits"}` lines out.
pub fn run_leaf(_args: &LeafArgs) -> Result<bool> {
    exit_on_signals("leaf")?;
    let mut out = BufWriter::new(io::stdout().lock());
    stdin_hint("leaf");
    for_each_line(&mut out, |_, line| {
        let pos = parse_root_line(line).map_err(|e| e.to_string())?;
        let value = FairLeaf::value(&pos);
        serde_json::to_string(&LeafRecord {
            value,
            bits: f64_hex(value),
        })
        .map_err(|e| e.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn decide_args(words: &[&str]) -> DecideArgs {
        #[derive(Parser)]
        struct Wrap {
            #[command(flatten)]
            args: DecideArgs,
        }
        Wrap::try_parse_from(std::iter::once("decide").chain(words.iter().copied()))
            .unwrap()
            .args
    }

    #[test]
    fn grouped_digits() {
        for (n, want) in [
            (0, "0"),
            (999, "999"),
            (1_000, "1,000"),
            (582_727_796, "582,727,796"),
            (u64::MAX, "18,446,744,073,709,551,615"),
        ] {
            assert_eq!(grouped(n), want);
        }
    }

    #[test]
    fn rough_times() {
        for (bound, want) in [
            (100_000_000, "4 seconds"),
            (582_727_797, "23 seconds"),
            (25_000_000 * 60, "1 minute"),
            (25_000_000 * 3599, "1 hour"),
            (25_000_000 * 30, "30 seconds"),
            (25_000_000 * 3600 * 5, "5 hours"),
            (12_762_329_762_212_784_096, "16177 years"),
            (u64::MAX, "23382 years"),
        ] {
            assert_eq!(
                rough_time(bound),
                format!("at most about {want} on one core at 25M work/s")
            );
        }
    }

    /// "progress on stderr" only when the bar is drawn.
    #[test]
    fn the_big_work_warning_mentions_progress_only_when_shown() {
        let fast = decide_args(&["--depth", "8", "--strata", "32"]);
        let shown = big_work_warning(&fast, BIG_WORK, true);
        assert!(shown.ends_with("on one core at 25M work/s); progress on stderr"));
        let hidden = big_work_warning(&fast, BIG_WORK, false);
        assert!(
            hidden.ends_with("(the smaller of W(D,S) and --max-work; at most about 4 seconds on one core at 25M work/s)"),
            "{hidden}"
        );
        let reference = decide_args(&["--depth", "8", "--strata", "32", "--search", "reference"]);
        let for_reference = big_work_warning(&reference, BIG_WORK, true);
        assert!(!for_reference.contains("progress") && !for_reference.contains("work/s"));
    }

    /// Errors of `--board/--next/--rise` name the flag, not a JSON key.
    #[test]
    fn root_flag_errors_name_the_flag() {
        const B: &str = "0000000000000000000000000000000000000000008888888";
        let e = |b: &str, n: i128, r: i128| {
            root_from_flags(b, &n.to_string(), &r.to_string())
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            e(B, 3, 9),
            "--rise (the moves remaining before the rise) must be 1-5, got 9"
        );
        assert_eq!(
            e(B, 3, 0),
            "--rise (the moves remaining before the rise) must be 1-5, got 0"
        );
        assert_eq!(e(B, 0, 5), "--next must be 1-7, got 0");
        // Negative numbers: the same range errors (exit 1), not parse errors.
        assert_eq!(e(B, -1, 5), "--next must be 1-7, got -1");
        assert_eq!(
            e(B, 3, -1),
            "--rise (the moves remaining before the rise) must be 1-5, got -1"
        );
        assert_eq!(
            e("123", 3, 5),
            "--board: board must have 49 characters, got 3"
        );
        // Beyond any u64, and not a number: the same range errors.
        assert_eq!(
            e(B, 1 << 64, 5),
            "--next must be 1-7, got 18446744073709551616"
        );
        assert_eq!(
            root_from_flags(B, "3", "x").unwrap_err().to_string(),
            "--rise (the moves remaining before the rise) must be 1-5, got x"
        );
        assert!(root_from_flags(B, "3", "5").is_ok());
    }
}

//! `drop7 decide`: per-column values of positions under the fair search, and
//! `drop7 leaf`: fair-leaf values. Both read JSON lines on stdin (or, for
//! `decide`, one root from flags) and answer each line in its place; a
//! malformed line gets `{"line": k, "error": "…"}` and the exit code is 1 if any
//! line failed (spec: search.md, search-golden-format.md).

use std::io::{self, BufRead, BufWriter, Write};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::Args;
use drop7::formats::{
    DecideRecord, LeafRecord, LineError, f64_hex, parse_root_line, position_from_parts,
};
use drop7::gravity::GravityChoice;
use drop7::leaf::FairLeaf;
use drop7::parallel::{MAX_SEARCH_THREADS, ParallelSearch};
use drop7::player::{FairSpec, TableSpec};
use drop7::position::Position;
use drop7::reference::search::ReferenceSearch;
use drop7::search::{Decide, FairSearch, MAX_DEPTH, MAX_STRATA};

/// Options of `drop7 decide`.
#[derive(Args, Debug, Clone)]
pub struct DecideArgs {
    /// Search depth D (1-8): moves of look-ahead.
    #[arg(long, default_value_t = 4, value_name = "D")]
    pub depth: u32,
    /// Strata S (1-32): samples per chance node.
    #[arg(long, default_value_t = 5, value_name = "S")]
    pub strata: u32,
    /// Transposition table: none, lru:C (reference semantics), dm:N or sa:N[:W]
    /// (N entries, a power of two; W ways, 2 or 4)
    /// [default: sa:65536:4 up to depth 4, sa:1048576:4 (46 MB) from depth 5;
    /// with --search reference: lru:200000].
    #[arg(long, value_name = "TABLE")]
    pub table: Option<String>,
    /// Work budget [default: W(D,S)+1, which never binds].
    #[arg(long, value_name = "W")]
    pub max_work: Option<u64>,
    /// One root from flags instead of stdin: the 49-character board…
    #[arg(long, value_name = "BOARD", requires_all = ["next", "rise"])]
    pub board: Option<String>,
    /// …its next disc (1-7)…
    #[arg(long, value_name = "N", requires = "board")]
    pub next: Option<u64>,
    /// …and the moves remaining before the rise (1-5).
    #[arg(long, value_name = "R", requires = "board")]
    pub rise: Option<u64>,
    /// Search implementation: fast, or the plain reference oracle (slow; its
    /// table is the strict LRU, so --table must be none or lru:C).
    #[arg(long, default_value = "fast", value_name = "IMPL")]
    pub search: String,
    /// Gravity path of the fast search: auto, bmi2 or portable
    /// [default: $DROP7_GRAVITY, else auto].
    #[arg(long, value_name = "PATH")]
    pub gravity: Option<String>,
    /// Threads splitting each decision (fast search only): values, action and
    /// completed depth are those of one thread; each thread has its own copy
    /// of the table, and with a table the counters differ (README).
    #[arg(long, default_value_t = 1, value_name = "N")]
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
        Some(b) => Some(
            position_from_parts(b, args.next.unwrap_or(0), args.rise.unwrap_or(0), false)
                .context("--board/--next/--rise")?,
        ),
        None => None,
    };
    match args.search.as_str() {
        "fast" => {
            let choice = match &args.gravity {
                Some(g) => g.parse::<GravityChoice>().context("--gravity")?,
                None => GravityChoice::from_env().context("DROP7_GRAVITY")?,
            };
            let path = choice.resolve()?;
            drop7::with_gravity!(path, |g| drop7::with_table!(table, |t| {
                let mut s = FairSearch::new(FairLeaf, t, g, config);
                if args.threads > 1 {
                    answer(&mut ParallelSearch::new(s, args.threads), single)
                } else {
                    answer(&mut s, single)
                }
            }))
        }
        "reference" => {
            let capacity = match table {
                TableSpec::None => 0,
                TableSpec::Lru(c) => c,
                other => bail!("--search reference supports --table none or lru:C, not {other}"),
            };
            answer(&mut ReferenceSearch::new(config, capacity), single)
        }
        other => bail!("unknown --search {other:?} (expected fast or reference)"),
    }
}

fn decide_json<D: Decide>(d: &mut D, pos: &Position) -> Result<String> {
    let t0 = Instant::now();
    let decision = d.decide_position(pos);
    let ms = t0.elapsed().as_secs_f64() * 1e3;
    Ok(serde_json::to_string(&DecideRecord::new(&decision, ms))?)
}

/// Answers the single root or every stdin line; `Ok(false)` if a line failed.
fn answer<D: Decide>(d: &mut D, single: Option<Position>) -> Result<bool> {
    let mut out = BufWriter::new(io::stdout().lock());
    if let Some(pos) = single {
        writeln!(out, "{}", decide_json(d, &pos)?)?;
        out.flush()?;
        return Ok(true);
    }
    for_each_line(&mut out, |line| {
        let pos = parse_root_line(line).map_err(|e| e.to_string())?;
        decide_json(d, &pos).map_err(|e| e.to_string())
    })
}

/// Reads stdin line by line; writes `f(line)` or a [`LineError`] for each
/// non-blank line, flushing after each; `Ok(false)` if any line failed.
fn for_each_line(
    out: &mut impl Write,
    mut f: impl FnMut(&str) -> Result<String, String>,
) -> Result<bool> {
    let mut ok = true;
    for (i, line) in io::stdin().lock().lines().enumerate() {
        let line = match line {
            Ok(l) => l,
            Err(e) if e.kind() == io::ErrorKind::InvalidData => {
                ok = false;
                let err = LineError {
                    line: i + 1,
                    error: "line is not valid UTF-8".into(),
                };
                writeln!(out, "{}", serde_json::to_string(&err)?)?;
                continue;
            }
            Err(e) => return Err(e).context("reading stdin"),
        };
        if line.trim().is_empty() {
            continue;
        }
        match f(&line) {
            Ok(json) => writeln!(out, "{json}")?,
            Err(error) => {
                ok = false;
                writeln!(
                    out,
                    "{}",
                    serde_json::to_string(&LineError { line: i + 1, error })?
                )?;
            }
        }
        out.flush()?;
    }
    out.flush()?;
    Ok(ok)
}

/// Options of `drop7 leaf` (none: it reads stdin).
#[derive(Args, Debug, Clone)]
pub struct LeafArgs {}

/// Runs `drop7 leaf`: `{"board","next","movesRemaining","gameOver"}` lines in,
/// `{"value","bits"}` lines out.
pub fn run_leaf(_args: &LeafArgs) -> Result<bool> {
    let mut out = BufWriter::new(io::stdout().lock());
    for_each_line(&mut out, |line| {
        let pos = parse_root_line(line).map_err(|e| e.to_string())?;
        let value = FairLeaf::value(&pos);
        serde_json::to_string(&LeafRecord {
            value,
            bits: f64_hex(value),
        })
        .map_err(|e| e.to_string())
    })
}

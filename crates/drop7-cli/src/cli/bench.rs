//! `drop7 bench`: the published benchmark workloads, every arm of a suite side
//! by side in one run (the figures that matter are ratios). Suites:
//!
//! * `engine`: whole games, center policy, headless driver, seeds from
//!   0xA5270000, one thread: packed/BMI2, packed/portable and the reference
//!   engine, then packed throughput at 1 and 2 threads.
//! * `leaf`: ns per fair-leaf evaluation over the states of `leaf.jsonl.gz`,
//!   the fast [`FairLeaf`] against the plain `reference::leaf::fair_leaf`
//!   (checked bit-identical on every state first).
//! * `search`: fair-search decisions on real roots (`bench-roots-105.txt`):
//!   d4s7 on the 21-root timing set for each transposition table, the
//!   default table split over 2 threads, and the plain reference search;
//!   d3s7 on all 105 roots; d5s7 on roots 0, 2, 4 and 8 with the depth-5
//!   default table (1 and 2 threads) and the depth-4 one. Every arm must give
//!   the values of the first arm bit for bit.
//! * `cohort`: whole fair d4s7 games (8 seeds from 0xA52E1300, headless, cap
//!   2000) on 1 and 2 threads, games per hour; records must be identical.
//!
//! The report names the machine (CPU model, BMI2, gravity path) and samples
//! the 1-minute load before every arm: a ratio whose arms ran with a load
//! above their thread count is flagged instead of printed.
//! `all` runs the four. `--quick` shrinks every workload (for tests).

use std::fs;
use std::hint::black_box;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use drop7::board::{Cells, parse_cells};
use drop7::formats::{parse_seed, position_from_parts, seed_hex};
use drop7::game::DriverKind;
use drop7::gravity::{Bmi2, GravityChoice, GravityPath, Portable};
use drop7::leaf::FairLeaf;
use drop7::parallel::ParallelSearch;
use drop7::player::{FairSpec, TableSpec};
use drop7::position::Position;
use drop7::reference::leaf::fair_leaf;
use drop7::reference::search::ReferenceSearch;
use drop7::runner::{
    CenterPolicy, CohortConfig, Engine, PackedEngine, ReferenceEngine, RunLabels, nth_seed,
    play_game_outcome, run_cohort,
};
use drop7::search::{Decide, Decision, FairSearch, SearchConfig};
use serde::{Deserialize, Serialize};

/// The human table goes to stdout best-effort: a closed or full stdout (e.g.
/// `| head`) must not abort a long run before its JSON report is written. The
/// first failure other than a closed pipe is kept and reported (exit 1) once
/// the report is written.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!(std::io::stdout(), $($arg)*) {
            stdout_failed(e);
        }
    }};
}

/// The first failed stdout write of this run (a closed pipe excluded).
static STDOUT_FAILURE: std::sync::Mutex<Option<std::io::Error>> = std::sync::Mutex::new(None);

fn stdout_failed(e: std::io::Error) {
    if e.kind() != std::io::ErrorKind::BrokenPipe
        && let Ok(mut first) = STDOUT_FAILURE.lock()
    {
        first.get_or_insert(e);
    }
}

/// The kept stdout failure, as the run's error.
fn check_stdout() -> Result<()> {
    use std::io::Write as _;
    if let Err(e) = std::io::stdout().flush() {
        stdout_failed(e);
    }
    match STDOUT_FAILURE.lock().ok().and_then(|mut f| f.take()) {
        Some(e) => Err(anyhow::Error::new(e).context("writing to stdout")),
        None => Ok(()),
    }
}

/// Move cap of the benchmark games (never reached by the center policy).
const MAX_MOVES: u32 = 2000;

/// Default leaf states: the golden leaf file, built into the binary so that
/// the bench runs from any copy of it (`cargo install`, a container image),
/// not only beside its source tree (source: testdata/leaf.jsonl.gz).
const BUILTIN_LEAF: &[u8] = include_bytes!("../../../../testdata/leaf.jsonl.gz");
/// Default search roots: 105 real positions, the first 21 the d4s7 timing
/// set; built in as the leaf states are (source: testdata/bench-roots-105.txt).
const BUILTIN_ROOTS: &[u8] = include_bytes!("../../../../testdata/bench-roots-105.txt");

/// An input of the bench: a file given on the command line, or a built-in copy.
#[derive(Clone, Debug)]
enum DataFile {
    Path(PathBuf),
    /// Its name (as reports show it) and bytes.
    Builtin(&'static str, &'static [u8]),
}

impl DataFile {
    fn of(flag: Option<&PathBuf>, name: &'static str, bytes: &'static [u8]) -> DataFile {
        flag.map_or(DataFile::Builtin(name, bytes), |p| {
            DataFile::Path(p.clone())
        })
    }

    /// How an error names it: `FLAG PATH` for a file given with `flag`,
    /// else the built-in copy's name.
    fn named(&self, flag: &str) -> String {
        match self {
            DataFile::Path(p) => format!("{flag} {}", p.display()),
            DataFile::Builtin(..) => self.to_string(),
        }
    }

    /// The reader of its (decompressed, if gzipped) contents; errors name
    /// it as `shown`.
    fn open(&self, shown: &str) -> Result<Box<dyn BufRead>> {
        match self {
            DataFile::Path(p) => open_maybe_gz(p, shown),
            DataFile::Builtin(name, bytes) => {
                gunzip_if_gzipped(*bytes).with_context(|| format!("cannot read {name}"))
            }
        }
    }
}

impl std::fmt::Display for DataFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DataFile::Path(p) => write!(f, "{}", p.display()),
            DataFile::Builtin(name, _) => write!(f, "{name} (built in)"),
        }
    }
}

/// Roots (0-based lines of the roots file) of the d5s7 section.
const D5_ROOTS: [usize; 4] = [0, 2, 4, 8];

/// Capacity of the strict-LRU arms (the repo gates' cap; never evicts at d4s7).
const LRU_CAPACITY: usize = 200_000;

/// Options of `drop7 bench`.
#[derive(Args, Debug)]
#[command(after_help = "Example:\n  drop7 bench --quick --out bench-quick.json")]
pub struct BenchArgs {
    /// Suite: engine, leaf, search, cohort or all.
    #[arg(long, default_value = "engine", value_name = "SUITE")]
    suite: String,
    /// Shrink every workload to seconds (smoke tests; figures are not meaningful).
    #[arg(long)]
    quick: bool,
    /// Engine: games per packed arm and per thread-scaling run [default: 262144; 4096 with --quick].
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    games: Option<u64>,
    /// Engine: games of the (slow) reference arm, the first N of the same
    /// seeds [default: 16384; 1024 with --quick].
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    reference_games: Option<u64>,
    /// Engine and leaf: runs per arm; the median (by time) is reported [default: 3; 1 with --quick].
    #[arg(long, value_name = "R", allow_negative_numbers = true)]
    repeats: Option<u32>,
    /// Engine: first seed of the workload.
    #[arg(
        long,
        default_value = "0xA5270000",
        value_name = "SEED",
        allow_negative_numbers = true
    )]
    seed_start: String,
    /// Leaf: JSON lines (optionally gzipped) of `{board, next, movesRemaining, gameOver}`
    /// states [default: a built-in copy of testdata/leaf.jsonl.gz].
    #[arg(long, value_name = "FILE")]
    leaf_file: Option<PathBuf>,
    /// Leaf: target seconds of one timed run of an arm (whole passes over the
    /// states; at most 3600) [default: 0.5; 0.01 with --quick].
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    leaf_seconds: Option<f64>,
    /// Search: roots file, lines `s <board49> <next> <movesRemaining> <level> <gameOver>`
    /// [default: a built-in copy of testdata/bench-roots-105.txt].
    #[arg(long, value_name = "FILE")]
    roots_file: Option<PathBuf>,
    /// Search: d4s7 roots (the first N of the file; all of them if it has fewer) [default: 21; 2 with --quick].
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    search_roots: Option<usize>,
    /// Search: d4s7 roots of the table-less arm (about 4x slower) [default: 3; 1 with --quick].
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    search_roots_none: Option<usize>,
    /// Search: d4s7 roots of the plain reference search [default: 3; 1 with --quick].
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    reference_roots: Option<usize>,
    /// Search: d3s7 roots [default: 105 (all); 10 with --quick].
    #[arg(long, value_name = "N")]
    d3_roots: Option<usize>,
    /// Search: table of the d3s7 run.
    #[arg(long, default_value = "sa:65536:4", value_name = "TABLE")]
    d3_table: String,
    /// Search: d5s7 roots, the first N (0..4) of roots 0, 2, 4 and 8 of the file (0-based), 0 to skip [default: 4; 0 with --quick].
    #[arg(long, value_name = "N")]
    d5_roots: Option<usize>,
    /// Search: gravity path of the fast search: auto, bmi2 or portable
    /// [default: $DROP7_GRAVITY, else auto].
    #[arg(long, value_name = "PATH")]
    gravity: Option<String>,
    /// Cohort: games (seeds from 0xA52E1300) [default: 8; 2 with --quick].
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    cohort_games: Option<u64>,
    /// Cohort: fair policy [default: fair:d4s7; fair:d2s5 with --quick].
    #[arg(long, value_name = "POLICY")]
    cohort_policy: Option<String>,
    /// JSON report [default: bench-SUITE.json].
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Print the ratios of arms run under load too, each marked as such
    /// (by default such a ratio is replaced by a note, and the engine's and
    /// the cohort's 2/1-thread `scaling` in the JSON is null; with this
    /// flag it is filled). The arms' figures and `underLoad` are in the
    /// JSON either way.
    #[arg(long)]
    ratios_under_load: bool,
}

/// The options with `--quick` and the defaults applied.
#[derive(Clone, Debug)]
struct Plan {
    games: u64,
    reference_games: u64,
    repeats: u32,
    leaf_file: DataFile,
    leaf_seconds: f64,
    roots_file: DataFile,
    search_roots: usize,
    search_roots_none: usize,
    reference_roots: usize,
    d3_roots: usize,
    d3_table: TableSpec,
    d5_roots: usize,
    cohort_games: u64,
    cohort_policy: FairSpec,
    gravity: GravityPath,
    /// What was asked for: `auto`, `bmi2` or `portable`, and where
    /// (`--gravity`, `DROP7_GRAVITY` or the default).
    gravity_request: String,
}

impl Plan {
    fn new(args: &BenchArgs) -> Result<Plan> {
        let q = args.quick;
        let pick =
            |v: Option<usize>, full: usize, quick: usize| v.unwrap_or(if q { quick } else { full });
        let (choice, source) = match &args.gravity {
            Some(g) => (
                g.parse::<GravityChoice>().context("--gravity")?,
                "--gravity",
            ),
            None => match std::env::var("DROP7_GRAVITY") {
                Ok(v) if !v.is_empty() => (
                    GravityChoice::from_env().context("DROP7_GRAVITY")?,
                    "DROP7_GRAVITY",
                ),
                _ => (GravityChoice::Auto, "default"),
            },
        };
        let requested = match choice {
            GravityChoice::Auto => "auto",
            GravityChoice::Bmi2 => "bmi2",
            GravityChoice::Portable => "portable",
        };
        let plan = Plan {
            games: args.games.unwrap_or(if q { 4096 } else { 262_144 }),
            reference_games: args
                .reference_games
                .unwrap_or(if q { 1024 } else { 16_384 }),
            repeats: args.repeats.unwrap_or(if q { 1 } else { 3 }),
            leaf_file: DataFile::of(args.leaf_file.as_ref(), "leaf.jsonl.gz", BUILTIN_LEAF),
            leaf_seconds: args.leaf_seconds.unwrap_or(if q { 0.01 } else { 0.5 }),
            roots_file: DataFile::of(
                args.roots_file.as_ref(),
                "bench-roots-105.txt",
                BUILTIN_ROOTS,
            ),
            search_roots: pick(args.search_roots, 21, 2),
            search_roots_none: pick(args.search_roots_none, 3, 1),
            reference_roots: pick(args.reference_roots, 3, 1),
            d3_roots: pick(args.d3_roots, 105, 10),
            d3_table: args.d3_table.parse().context("--d3-table")?,
            d5_roots: pick(args.d5_roots, 4, 0),
            cohort_games: args.cohort_games.unwrap_or(if q { 2 } else { 8 }),
            cohort_policy: match &args.cohort_policy {
                Some(p) => p.parse().context("--cohort-policy")?,
                None if q => FairSpec {
                    depth: 2,
                    strata: 5,
                },
                None => FairSpec {
                    depth: 4,
                    strata: 7,
                },
            },
            gravity: choice.resolve()?,
            gravity_request: format!("{requested} ({source})"),
        };
        if plan.games == 0 || plan.reference_games == 0 {
            bail!("--games and --reference-games must be at least 1");
        }
        if plan.repeats == 0 {
            bail!("--repeats must be at least 1");
        }
        if !(plan.leaf_seconds.is_finite()
            && plan.leaf_seconds > 0.0
            && plan.leaf_seconds <= 3600.0)
        {
            bail!("--leaf-seconds must be a positive number of seconds, at most 3600");
        }
        if plan.d5_roots > D5_ROOTS.len() {
            bail!(
                "--d5-roots must be 0..{} (roots 0, 2, 4 and 8 of the file), got {}",
                D5_ROOTS.len(),
                plan.d5_roots
            );
        }
        if plan.cohort_games == 0 {
            bail!("--cohort-games must be at least 1");
        }
        if plan.search_roots == 0 || plan.d3_roots == 0 {
            bail!("--search-roots and --d3-roots must be at least 1");
        }
        Ok(plan)
    }
}

/// A benchmark suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Suite {
    Engine,
    Leaf,
    Search,
    Cohort,
}

impl Suite {
    const ALL: [Suite; 4] = [Suite::Engine, Suite::Leaf, Suite::Search, Suite::Cohort];

    fn name(self) -> &'static str {
        match self {
            Suite::Engine => "engine",
            Suite::Leaf => "leaf",
            Suite::Search => "search",
            Suite::Cohort => "cohort",
        }
    }
}

/// Runs `drop7 bench`.
pub fn run(args: &BenchArgs) -> Result<()> {
    RATIOS_UNDER_LOAD.store(args.ratios_under_load, std::sync::atomic::Ordering::Relaxed);
    let suites: Vec<Suite> = match args.suite.as_str() {
        "all" => Suite::ALL.to_vec(),
        name => vec![
            Suite::ALL
                .into_iter()
                .find(|s| s.name() == name)
                .ok_or_else(|| {
                    anyhow!(
                        "unknown --suite {name:?} (expected engine, leaf, search, cohort or all)"
                    )
                })?,
        ],
    };
    let plan = Plan::new(args)?;
    let seed_start = parse_seed(&args.seed_start).map_err(|e| anyhow!("--seed-start: {e}"))?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("bench-{}.json", args.suite)));
    // Read the inputs first: a bad file fails before anything is written.
    let leaf_states = if suites.contains(&Suite::Leaf) {
        Some(read_leaf_states(&plan.leaf_file)?)
    } else {
        None
    };
    let roots = if suites.contains(&Suite::Search) {
        Some(read_roots(&plan.roots_file)?)
    } else {
        None
    };

    // The report must not replace an input file (read by this suite or not).
    let inputs = [
        ("--leaf-file", &plan.leaf_file),
        ("--roots-file", &plan.roots_file),
    ];
    for (flag, input) in inputs {
        if let DataFile::Path(input) = input
            && super::same::same_file(&out, input)
        {
            bail!(
                "{} (nothing was written)",
                super::same::both_name("--out", &out, flag, input)
            );
        }
    }
    // Fail on an unwritable path before minutes of measuring (a FIFO, device
    // or directory would be replaced by the final rename: refused).
    super::cohort::output_target("--out ", &out)?;
    super::cohort::refuse_locked("--out ", &out)?;
    super::cohort::refuse_foreign("--out ", &out, "a drop7 bench report", |head| {
        head.starts_with(b"{") && head.windows(9).any(|w| w == b"\"machine\"")
    })?;
    fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&out)
        .with_context(|| format!("cannot write --out {}", out.display()))?;
    let machine = machine(&plan);
    print_machine(&machine);
    let mut report = Report {
        machine,
        quick: args.quick,
        engine: None,
        leaf: None,
        search: None,
        cohort: None,
    };
    for suite in &suites {
        match suite {
            Suite::Engine => report.engine = Some(engine_suite(&plan, seed_start)?),
            Suite::Leaf => {
                let states = leaf_states.as_deref().expect("read above");
                report.leaf = Some(leaf_suite(&plan, states)?);
            }
            Suite::Search => {
                let roots = roots.as_deref().expect("read above");
                report.search = Some(search_suite(&plan, roots)?);
            }
            Suite::Cohort => report.cohort = Some(cohort_suite(&plan)?),
        }
    }
    let text = serde_json::to_string_pretty(&report)? + "\n";
    // Temporary file beside it, then rename: a reader never sees half a report.
    super::cohort::write_whole("--out ", &out, |w| {
        use std::io::Write as _;
        w.write_all(text.as_bytes())
            .with_context(|| format!("cannot write --out {}", out.display()))
    })?;
    outln!("wrote {}", out.display());
    check_stdout()
}

/// The JSON report: the machine, then one section per suite run.
#[derive(Serialize)]
struct Report {
    machine: Machine,
    /// Whether `--quick` shrank the workloads.
    quick: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    engine: Option<EngineReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    leaf: Option<LeafReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    search: Option<SearchReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cohort: Option<CohortReport>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Machine {
    cpu: Option<String>,
    logical_cpus: usize,
    bmi2: bool,
    /// Which of POPCNT, LZCNT, BMI1 and BMI2 this CPU has (the engine's game
    /// loops, the search and the leaf run code built for them where it has
    /// them: the portable path's loop and search for POPCNT and LZCNT, the
    /// BMI2 path's loop and search and the leaf for all four).
    bit_instructions: Vec<&'static str>,
    /// What `--gravity auto` picks on this CPU.
    auto_gravity: &'static str,
    /// The gravity path of the search and cohort suites (the engine suite
    /// times both paths).
    gravity: &'static str,
    /// What chose it: `auto`, `bmi2` or `portable`, then `(--gravity)`,
    /// `(DROP7_GRAVITY)` or `(default)`.
    gravity_request: String,
    arch: &'static str,
    os: &'static str,
    drop7: &'static str,
    /// 1-minute load average when the run started.
    load1_at_start: Option<f64>,
}

/// What the report says about the machine.
fn machine(plan: &Plan) -> Machine {
    let cpu = fs::read_to_string("/proc/cpuinfo").ok().and_then(|t| {
        t.lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split(':').nth(1))
            .map(|m| m.trim().to_string())
    });
    Machine {
        cpu,
        logical_cpus: drop7::runner::available_threads(),
        bmi2: Bmi2::detect().is_some(),
        bit_instructions: detected_bit_instructions(),
        auto_gravity: GravityChoice::Auto
            .resolve()
            .map_or("portable", |p| p.name()),
        gravity: plan.gravity.name(),
        gravity_request: plan.gravity_request.clone(),
        arch: std::env::consts::ARCH,
        os: std::env::consts::OS,
        drop7: env!("CARGO_PKG_VERSION"),
        load1_at_start: load1(),
    }
}

/// Which of POPCNT, LZCNT, BMI1 and BMI2 this CPU has.
fn detected_bit_instructions() -> Vec<&'static str> {
    #[cfg(target_arch = "x86_64")]
    {
        let mut found = Vec::new();
        if std::arch::is_x86_feature_detected!("popcnt") {
            found.push("POPCNT");
        }
        if std::arch::is_x86_feature_detected!("lzcnt") {
            found.push("LZCNT");
        }
        if std::arch::is_x86_feature_detected!("bmi1") {
            found.push("BMI1");
        }
        if std::arch::is_x86_feature_detected!("bmi2") {
            found.push("BMI2");
        }
        found
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        Vec::new()
    }
}

fn print_machine(m: &Machine) {
    outln!(
        "machine: {}, {} logical CPUs, BMI2 {}, bit instructions {}, gravity path {} (requested {}; auto = {}), {}/{}, 1-minute load {}",
        m.cpu.as_deref().unwrap_or("unknown CPU"),
        m.logical_cpus,
        if m.bmi2 { "yes" } else { "no" },
        if m.bit_instructions.is_empty() {
            "none".to_string()
        } else {
            m.bit_instructions.join(" ")
        },
        m.gravity,
        m.gravity_request,
        m.auto_gravity,
        m.arch,
        m.os,
        m.load1_at_start
            .map_or("unknown".into(), |l| format!("{l:.2}"))
    );
}

/// The 1-minute load average (`/proc/loadavg`), if the OS reports one.
fn load1() -> Option<f64> {
    fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Load an otherwise idle machine shows besides the bench's own threads
/// (kernel threads, a shell; 0.0–0.3 on this project's VMs). A sample above
/// the bench's threads plus this says another process was running.
const LOAD_MARGIN: f64 = 0.5;

/// How long a run's threads stay in the 1-minute load average: it decays
/// by `e^(-t/60 s)`, so two minutes after a run ends its threads add at
/// most 0.14 per thread to it.
const OWN_LOAD_WINDOW: std::time::Duration = std::time::Duration::from_secs(120);

/// When the bench last ran each number of threads (`(threads, when)`).
static OWN_RUNS: std::sync::Mutex<Vec<(usize, Instant)>> = std::sync::Mutex::new(Vec::new());

/// Notes that the bench has just run `threads` threads (call after each
/// timed run).
fn ran_threads(threads: usize) {
    let mut runs = OWN_RUNS.lock().unwrap_or_else(|e| e.into_inner());
    runs.retain(|&(t, _)| t != threads);
    runs.push((threads, Instant::now()));
}

/// The threads of the bench's own that count in a load sampled now before
/// a run of `threads`: `threads`, or more if the bench ran more within
/// [`OWN_LOAD_WINDOW`] (e.g. a 2-thread arm interleaved with 1-thread arms).
fn own_threads(threads: usize) -> usize {
    let runs = OWN_RUNS.lock().unwrap_or_else(|e| e.into_inner());
    runs.iter()
        .filter(|(_, when)| when.elapsed() < OWN_LOAD_WINDOW)
        .map(|&(t, _)| t)
        .fold(threads, usize::max)
}

/// A load sample taken now, before a run of `threads`: `(1-minute load,
/// the bench's own threads in it)` ([`load1`], [`own_threads`]).
fn load_sample(threads: usize) -> (Option<f64>, usize) {
    (load1(), own_threads(threads))
}

/// Whether a 1-minute load `load` taken before a run says that something
/// besides the bench was running: above `own` (the bench's own threads in
/// the load, [`own_threads`]) plus [`LOAD_MARGIN`]. Its timing then says
/// more about the other processes than about the code.
fn under_load(load: Option<f64>, own: usize) -> bool {
    load.is_some_and(|l| l > own as f64 + LOAD_MARGIN)
}

/// `speedup` (baseline time over arm time) in words: "1.23x faster" or
/// "1.18x slower" (never "0.85x faster").
fn speed_words(speedup: f64) -> String {
    if speedup >= 1.0 {
        format!("{speedup:.2}x faster")
    } else {
        format!("{:.2}x slower", 1.0 / speedup)
    }
}

/// The larger of two load samples.
fn max_load(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

/// Of load samples `(load, own threads)`, the one furthest above its own
/// threads (the one a flag names; `(None, 1)` for none with a load).
fn worst_sample(samples: &[(Option<f64>, usize)]) -> (Option<f64>, usize) {
    let excess = |&(load, own): &(Option<f64>, usize)| load.map(|l| l - own as f64);
    samples
        .iter()
        .filter(|x| excess(x).is_some())
        .max_by(|x, y| {
            excess(x)
                .unwrap_or(0.0)
                .total_cmp(&excess(y).unwrap_or(0.0))
        })
        .copied()
        .unwrap_or((None, 1))
}

/// `--ratios-under-load`: print ratios measured under load, marked.
static RATIOS_UNDER_LOAD: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether a ratio whose arms ran `under` load is withheld (replaced by
/// [`load_flag`]); with `--ratios-under-load` it is printed with
/// [`load_mark`] instead.
fn withheld(under: bool) -> bool {
    under && !RATIOS_UNDER_LOAD.load(std::sync::atomic::Ordering::Relaxed)
}

/// What follows a ratio printed although its arms ran `under` load:
/// nothing if they did not.
fn load_mark(under: bool, load: Option<f64>, own: usize) -> String {
    if under {
        format!(
            " (UNDER LOAD: 1-minute load {:.2} above {:.1}; not a measurement)",
            load.unwrap_or(0.0),
            own as f64 + LOAD_MARGIN
        )
    } else {
        String::new()
    }
}

/// The words after a ratio's label: `text()` (marked when its arms ran
/// `under` load), or [`load_flag`] in its place when it is [`withheld`].
fn ratio_words(
    under: bool,
    load: Option<f64>,
    own: usize,
    text: impl FnOnce() -> String,
) -> String {
    if withheld(under) {
        load_flag(load, own)
    } else {
        format!("{}{}", text(), load_mark(under, load, own))
    }
}

/// The flag printed instead of a ratio measured under load (`own`: the
/// bench's own threads in the load, see [`under_load`]).
fn load_flag(load: Option<f64>, own: usize) -> String {
    format!(
        "ratio not reported: 1-minute load {:.2} above {:.1} (the bench's own {own} thread(s) + {LOAD_MARGIN}; run under load)",
        load.unwrap_or(0.0),
        own as f64 + LOAD_MARGIN
    )
}

/// Median of a non-empty list.
fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Opens a file, transparently gunzipping it when it starts with the gzip magic.
fn open_maybe_gz(path: &Path, shown: &str) -> Result<Box<dyn BufRead>> {
    let file = fs::File::open(path).with_context(|| format!("cannot open {shown}"))?;
    gunzip_if_gzipped(BufReader::new(file)).with_context(|| format!("cannot read {shown}"))
}

/// `r`, gunzipped when it starts with the gzip magic (read from its buffer,
/// nothing consumed), else as it is.
fn gunzip_if_gzipped<R: BufRead + 'static>(mut r: R) -> std::io::Result<Box<dyn BufRead>> {
    Ok(if drop7::input::is_gzip(r.fill_buf()?) {
        Box::new(BufReader::new(flate2::bufread::GzDecoder::new(r)))
    } else {
        Box::new(r)
    })
}

// ---------------------------------------------------------------------------
// leaf suite

/// One state of the leaf file.
struct LeafState {
    pos: Position,
    cells: Cells,
    /// The golden `bits`, when the file has them.
    golden: Option<u64>,
    /// 1-based line number in the file.
    line: usize,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LeafLine {
    board: String,
    next: u64,
    moves_remaining: u64,
    #[serde(default)]
    game_over: bool,
    #[serde(default)]
    bits: Option<String>,
}

/// Every line of `r` through the shared reader ([`drop7::input`]: BOM and
/// CRLF accepted, a line over the limit or not UTF-8 refused), 0-based index
/// and text.
fn read_lines(r: impl BufRead, shown: &str) -> Result<Vec<(usize, String)>> {
    let mut lines = Vec::new();
    let mut reader = drop7::input::LineReader::new(r).stopping_at_long_lines();
    while let Some(line) = reader
        .next_line()
        .with_context(|| format!("reading {shown}"))?
    {
        let text = line
            .text
            .with_context(|| format!("{shown} line {}", line.number))?;
        lines.push((line.number - 1, text));
    }
    Ok(lines)
}

fn read_leaf_states(data: &DataFile) -> Result<Vec<LeafState>> {
    let shown = data.named("--leaf-file");
    let mut states = Vec::new();
    for (i, line) in read_lines(data.open(&shown)?, &shown)? {
        if line.trim().is_empty() {
            continue;
        }
        let at = || format!("{shown} line {}", i + 1);
        let value = drop7::formats::parse_json_strict(&line)
            .map_err(|e| anyhow!(e))
            .with_context(at)?;
        let rec: LeafLine = serde_json::from_value(value).with_context(at)?;
        let pos = position_from_parts(&rec.board, rec.next, rec.moves_remaining, rec.game_over)
            .with_context(at)?;
        let cells = parse_cells(&rec.board).with_context(at)?;
        let golden = match &rec.bits {
            Some(b) => Some(u64::from_str_radix(b, 16).with_context(at)?),
            None => None,
        };
        states.push(LeafState {
            pos,
            cells,
            golden,
            line: i + 1,
        });
    }
    if states.is_empty() {
        bail!("{shown}: no leaf states");
    }
    Ok(states)
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LeafReport {
    file: String,
    /// States in the file.
    states: usize,
    /// Non-game-over states: the timed workload of one pass.
    timed_states: usize,
    /// States on which fast and plain were checked bit-identical (all of them).
    verified: usize,
    /// States also checked against the file's golden `bits`.
    golden_checked: usize,
    target_seconds: f64,
    repeats: u32,
    statistic: &'static str,
    arms: Vec<LeafArm>,
    ratio: LeafRatio,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LeafArm {
    arm: &'static str,
    what: &'static str,
    /// Passes over the timed states per run (calibrated to --leaf-seconds).
    passes: u64,
    /// Leaf evaluations per run.
    leaves: u64,
    /// Seconds of the median run.
    seconds: f64,
    ns_per_leaf: f64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LeafRatio {
    arm: &'static str,
    baseline: &'static str,
    /// fast ns/leaf over plain ns/leaf.
    ns_per_leaf_ratio: f64,
    /// plain ns/leaf over fast ns/leaf.
    speedup: f64,
    /// The 1-minute load sampled before the two arms.
    load1: Option<f64>,
    /// `load1` above the bench's own thread plus 0.5 (see [`under_load`]).
    under_load: bool,
}

/// `passes` passes of the fast leaf over `positions`; returns seconds.
fn time_fast_leaf(positions: &[Position], passes: u64) -> f64 {
    let t = Instant::now();
    let mut acc = 0u64;
    for _ in 0..passes {
        for p in black_box(positions) {
            acc ^= FairLeaf::value(black_box(p)).to_bits();
        }
    }
    black_box(acc);
    t.elapsed().as_secs_f64()
}

/// `passes` passes of the plain leaf over `plain`; returns seconds.
fn time_plain_leaf(plain: &[(Cells, u8, u8)], passes: u64) -> f64 {
    let t = Instant::now();
    let mut acc = 0u64;
    for _ in 0..passes {
        for (cells, next, mr) in black_box(plain) {
            acc ^= fair_leaf(black_box(cells), *next, *mr, false).to_bits();
        }
    }
    black_box(acc);
    t.elapsed().as_secs_f64()
}

fn leaf_suite(plan: &Plan, states: &[LeafState]) -> Result<LeafReport> {
    // Bitwise agreement first (every state, game over included).
    let mut golden_checked = 0;
    for s in states {
        let fast = FairLeaf::value(&s.pos).to_bits();
        let plain = fair_leaf(
            &s.cells,
            s.pos.next_disc,
            s.pos.moves_remaining,
            s.pos.game_over,
        )
        .to_bits();
        if fast != plain {
            bail!(
                "leaf bench: fast and plain leaf disagree on {} line {}: {fast:016x} vs {plain:016x}",
                plan.leaf_file,
                s.line
            );
        }
        if let Some(g) = s.golden {
            if fast != g {
                bail!(
                    "leaf bench: leaf value {fast:016x} differs from the golden bits {g:016x} on {} line {}",
                    plan.leaf_file,
                    s.line
                );
            }
            golden_checked += 1;
        }
    }
    let timed: Vec<&LeafState> = states.iter().filter(|s| !s.pos.game_over).collect();
    if timed.is_empty() {
        bail!("leaf bench: every state of {} is game over", plan.leaf_file);
    }
    let positions: Vec<Position> = timed.iter().map(|s| s.pos).collect();
    let plain: Vec<(Cells, u8, u8)> = timed
        .iter()
        .map(|s| (s.cells, s.pos.next_disc, s.pos.moves_remaining))
        .collect();
    let n = positions.len() as u64;

    // Calibrate whole passes per run to about --leaf-seconds (one warm-up pass each).
    let passes_for = |one: f64| ((plan.leaf_seconds / one.max(1e-9)).ceil() as u64).max(1);
    let fast_passes = passes_for(time_fast_leaf(&positions, 1));
    let plain_passes = passes_for(time_plain_leaf(&plain, 1));
    outln!(
        "leaf suite: {} ({} timed, {} checked against golden bits), median of {}",
        super::count(states.len(), "state"),
        n,
        golden_checked,
        plan.repeats
    );
    let (mut fast_runs, mut plain_runs) = (Vec::new(), Vec::new());
    let (leaf_load, leaf_own) = load_sample(1);
    for _ in 0..plan.repeats {
        // Alternate the arms so that drift in machine load hits both.
        fast_runs.push(time_fast_leaf(&positions, fast_passes));
        plain_runs.push(time_plain_leaf(&plain, plain_passes));
    }
    let arm = |arm, what, passes: u64, runs: &[f64]| {
        let seconds = median(runs);
        let leaves = passes * n;
        LeafArm {
            arm,
            what,
            passes,
            leaves,
            seconds,
            ns_per_leaf: seconds * 1e9 / leaves as f64,
        }
    };
    let arms = vec![
        arm(
            "fast",
            "drop7::leaf::FairLeaf (packed board)",
            fast_passes,
            &fast_runs,
        ),
        arm(
            "plain",
            "drop7::reference::leaf::fair_leaf (cells)",
            plain_passes,
            &plain_runs,
        ),
    ];
    outln!(
        "{:<8} {:>7} {:>12} {:>9} {:>9}",
        "arm",
        "passes",
        "leaves",
        "seconds",
        "ns/leaf"
    );
    for a in &arms {
        outln!(
            "{:<8} {:>7} {:>12} {:>9.3} {:>9.1}",
            a.arm,
            a.passes,
            a.leaves,
            a.seconds,
            a.ns_per_leaf
        );
    }
    let leaf_under = under_load(leaf_load, leaf_own);
    let ratio = LeafRatio {
        arm: "fast",
        baseline: "plain",
        ns_per_leaf_ratio: arms[0].ns_per_leaf / arms[1].ns_per_leaf,
        speedup: arms[1].ns_per_leaf / arms[0].ns_per_leaf,
        load1: leaf_load,
        under_load: leaf_under,
    };
    ran_threads(1);
    if withheld(leaf_under) {
        outln!("fast leaf vs plain: {}", load_flag(leaf_load, leaf_own));
    } else {
        outln!(
            "fast leaf {} than plain{}",
            speed_words(ratio.speedup),
            load_mark(leaf_under, leaf_load, leaf_own)
        );
    }
    Ok(LeafReport {
        file: plan.leaf_file.to_string(),
        states: states.len(),
        timed_states: positions.len(),
        verified: states.len(),
        golden_checked,
        target_seconds: plan.leaf_seconds,
        repeats: plan.repeats,
        statistic: "median",
        arms,
        ratio,
    })
}

// ---------------------------------------------------------------------------
// search suite

/// Reads `s <board49> <next> <movesRemaining> <level> <gameOver>` lines
/// (blank lines and `#` comments skipped; anything after the sixth field ignored).
fn read_roots(data: &DataFile) -> Result<Vec<Position>> {
    let shown = data.named("--roots-file");
    let mut roots = Vec::new();
    for (i, line) in read_lines(data.open(&shown)?, &shown)? {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = || format!("{shown} line {}", i + 1);
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 6 || f[0] != "s" {
            bail!(
                "{}: expected `s <board> <next> <movesRemaining> <level> <gameOver>`",
                at()
            );
        }
        let num = |k: usize| f[k].parse::<u64>().with_context(at);
        let game_over = match f[5] {
            "0" => false,
            "1" => true,
            other => bail!("{}: gameOver must be 0 or 1, got {other:?}", at()),
        };
        roots.push(position_from_parts(f[1], num(2)?, num(3)?, game_over).with_context(at)?);
    }
    if roots.is_empty() {
        bail!("{shown}: no roots");
    }
    Ok(roots)
}

/// A fast searcher with `table`, splitting each decision over `threads`.
fn fast_decider(
    path: GravityPath,
    table: TableSpec,
    config: SearchConfig,
    threads: usize,
) -> Box<dyn Decide> {
    drop7::with_gravity!(path, |g| drop7::with_table!(table, |t| {
        let one = FairSearch::new(FairLeaf, t, g, config);
        if threads > 1 {
            Box::new(ParallelSearch::new(one, threads)) as Box<dyn Decide>
        } else {
            Box::new(one) as Box<dyn Decide>
        }
    }))
    .unwrap_or_else(|e| {
        eprintln!("error: bench: {e}");
        std::process::exit(1)
    })
}

/// An arm of a search section.
struct SearchArmPlan {
    /// Arm name (the table spec, or `reference`).
    name: String,
    table: String,
    implementation: &'static str,
    /// It runs on the first `roots` roots of the section.
    roots: usize,
    /// Threads splitting each decision.
    threads: usize,
    /// Largest 1-minute load sampled before one of its decisions.
    max_load: Option<f64>,
    /// Of those samples `(load, the bench's own threads in it)`, the one
    /// furthest above its own threads ([`worst_sample`]).
    worst: (Option<f64>, usize),
    decider: Box<dyn Decide>,
    /// `(decision, ms)` per root run.
    runs: Vec<(Decision, f64)>,
    /// Largest table footprint seen.
    table_bytes: Option<usize>,
    /// Whether its decisions run iteration D alone (a fast search over an
    /// `sa:`/`dm:` table: `FairSearch::first_iteration`), not 1..=D.
    deepest_only: bool,
}

impl SearchArmPlan {
    fn fast(path: GravityPath, table: TableSpec, roots: usize, config: SearchConfig) -> Self {
        Self::fast_threads(path, table, roots, config, 1)
    }

    /// Named `TABLE x2` etc. for more than one thread.
    fn fast_threads(
        path: GravityPath,
        table: TableSpec,
        roots: usize,
        config: SearchConfig,
        threads: usize,
    ) -> Self {
        SearchArmPlan {
            name: if threads > 1 {
                format!("{table} x{threads}")
            } else {
                table.to_string()
            },
            table: table.to_string(),
            implementation: "fast",
            roots,
            threads,
            max_load: None,
            worst: (None, 1),
            decider: fast_decider(path, table, config, threads),
            runs: Vec::new(),
            table_bytes: None,
            deepest_only: matches!(
                table,
                TableSpec::DirectMapped(_) | TableSpec::SetAssociative { .. }
            ) && config.max_work
                > drop7::search::worst_case_work(config.depth, config.strata),
        }
    }

    fn reference(capacity: usize, roots: usize, config: SearchConfig) -> Self {
        SearchArmPlan {
            name: "reference".into(),
            table: TableSpec::Lru(capacity).to_string(),
            implementation: "reference",
            roots,
            threads: 1,
            max_load: None,
            worst: (None, 1),
            decider: Box::new(ReferenceSearch::new(config, capacity)),
            runs: Vec::new(),
            table_bytes: None,
            deepest_only: false,
        }
    }
}

/// Values (as bits), action and completed depth: what every table must agree on.
fn outcome(d: &Decision) -> (Option<usize>, u32, [Option<u64>; 7]) {
    (
        d.action,
        d.completed_depth,
        d.values.map(|v| v.map(f64::to_bits)),
    )
}

/// The counters two strict-LRU searches must agree on.
fn counts(d: &Decision) -> [u64; 7] {
    let s = &d.stats;
    [
        s.work,
        s.nodes,
        s.cache_hits,
        s.cache_entries,
        s.evictions,
        s.leaf_calls,
        s.move_calls,
    ]
}

/// Runs every arm on its roots, interleaved root by root (so that drift in
/// machine load hits every arm alike), checking each against arm 0 (which
/// must cover every root) as it goes. Progress on stderr.
fn run_section(label: &str, roots: &[Position], arms: &mut [SearchArmPlan]) -> Result<()> {
    let total = arms
        .iter()
        .map(|a| a.roots)
        .max()
        .unwrap_or(0)
        .min(roots.len());
    debug_assert!(arms[0].roots >= total);
    let section_start = Instant::now();
    for (i, root) in roots.iter().enumerate().take(total) {
        let mut line = format!("{label} root {}/{total}:", i + 1);
        for arm in arms.iter_mut().filter(|a| i < a.roots) {
            let (load, own) = load_sample(arm.threads);
            arm.max_load = max_load(arm.max_load, load);
            arm.worst = worst_sample(&[arm.worst, (load, own)]);
            let t = Instant::now();
            let d = black_box(arm.decider.decide_position(black_box(root)));
            let ms = t.elapsed().as_secs_f64() * 1e3;
            ran_threads(arm.threads);
            arm.runs.push((d, ms));
            arm.table_bytes = arm.decider.table_bytes().max(arm.table_bytes);
            line.push_str(&format!(" {} {ms:.0} ms,", arm.name));
        }
        let base = outcome(&arms[0].runs[i].0);
        for arm in arms.iter().skip(1).filter(|a| i < a.roots) {
            if outcome(&arm.runs[i].0) != base {
                bail!(
                    "search bench: {label} arm {} disagrees with {} on root {} (values/action/depth)",
                    arm.name,
                    arms[0].name,
                    i + 1
                );
            }
        }
        line.pop();
        eprintln!("{line} [{:.0} s]", section_start.elapsed().as_secs_f64());
    }
    Ok(())
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SearchReport {
    gravity: &'static str,
    roots_file: String,
    statistic: &'static str,
    d4s7: SearchSection,
    d3s7: SearchSection,
    #[serde(skip_serializing_if = "Option::is_none")]
    d5s7: Option<SearchSection>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SearchSection {
    config: String,
    depth: u32,
    strata: u32,
    max_work: u64,
    /// Roots of the section (arms may run on a prefix).
    roots: usize,
    /// The arm every other arm was checked against (values, action, depth).
    baseline: String,
    arms: Vec<SearchArm>,
    ratios: Vec<SearchRatio>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SearchArm {
    arm: String,
    table: String,
    implementation: &'static str,
    /// Threads splitting each decision.
    threads: usize,
    /// Largest 1-minute load sampled before one of its decisions.
    max_load1: Option<f64>,
    roots: usize,
    ms_per_decision: f64,
    ms_median: f64,
    ms_total: f64,
    work_per_decision: f64,
    nodes_per_decision: f64,
    hits_per_decision: f64,
    entries_per_decision: f64,
    evictions_per_decision: f64,
    /// Iterations its decisions run: `"1..D"`, or `"D"` alone (a fast
    /// search over an `sa:`/`dm:` table; its work and hits then count
    /// iteration D only).
    iterations: &'static str,
    /// This arm's hits over the strict-LRU arm's hits on the same roots;
    /// `None` when the two run different iterations (not comparable).
    hits_vs_lru: Option<f64>,
    /// Logical work per microsecond.
    work_per_us: f64,
    table_bytes: Option<usize>,
}

/// `arm` against `baseline` on the same roots.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SearchRatio {
    arm: String,
    baseline: String,
    roots: usize,
    arm_ms_per_decision: f64,
    baseline_ms_per_decision: f64,
    /// `arm` ms over `baseline` ms.
    ms_ratio: f64,
    /// `baseline` ms over `arm` ms.
    speedup: f64,
    /// The 1-minute load before one of either arm's decisions exceeded the
    /// bench's own threads plus 0.5 (see `underLoad` in the README): the
    /// ratio is not to be trusted (and is not printed, unless
    /// `--ratios-under-load`).
    under_load: bool,
    /// The largest load sampled before either arm's decisions.
    max_load1: Option<f64>,
    /// Threads of the busier arm.
    threads: usize,
    /// The arms' load sample furthest above the bench's own threads (the
    /// one a flag names).
    #[serde(skip)]
    worst: (Option<f64>, usize),
}

fn mean(xs: impl Iterator<Item = f64>) -> f64 {
    let (mut s, mut n) = (0.0, 0usize);
    for x in xs {
        s += x;
        n += 1;
    }
    if n == 0 { 0.0 } else { s / n as f64 }
}

fn summarize(arm: &SearchArmPlan, lru: Option<&SearchArmPlan>) -> SearchArm {
    let runs = &arm.runs;
    let ms: Vec<f64> = runs.iter().map(|r| r.1).collect();
    let per = |f: fn(&Decision) -> u64| mean(runs.iter().map(|r| f(&r.0) as f64));
    let hits: u64 = runs.iter().map(|r| r.0.stats.cache_hits).sum();
    let hits_vs_lru = lru
        .filter(|l| l.deepest_only == arm.deepest_only)
        .and_then(|l| {
            let base: u64 = l
                .runs
                .iter()
                .take(runs.len())
                .map(|r| r.0.stats.cache_hits)
                .sum();
            (base > 0).then(|| hits as f64 / base as f64)
        });
    let work: u64 = runs.iter().map(|r| r.0.stats.work).sum();
    let ms_total: f64 = ms.iter().sum();
    SearchArm {
        arm: arm.name.clone(),
        table: arm.table.clone(),
        implementation: arm.implementation,
        threads: arm.threads,
        max_load1: arm.max_load,
        roots: runs.len(),
        ms_per_decision: ms_total / runs.len().max(1) as f64,
        ms_median: if ms.is_empty() { 0.0 } else { median(&ms) },
        ms_total,
        work_per_decision: per(|d| d.stats.work),
        nodes_per_decision: per(|d| d.stats.nodes),
        hits_per_decision: per(|d| d.stats.cache_hits),
        entries_per_decision: per(|d| d.stats.cache_entries),
        evictions_per_decision: per(|d| d.stats.evictions),
        iterations: if arm.deepest_only { "D" } else { "1..D" },
        hits_vs_lru,
        work_per_us: work as f64 / (ms_total * 1e3).max(1e-9),
        table_bytes: arm.table_bytes,
    }
}

/// `arm` against `baseline` on the roots both ran (the shorter prefix).
fn ratio(arm: &SearchArmPlan, baseline: &SearchArmPlan) -> SearchRatio {
    let n = arm.runs.len().min(baseline.runs.len());
    let a = mean(arm.runs.iter().take(n).map(|r| r.1));
    let b = mean(baseline.runs.iter().take(n).map(|r| r.1));
    let worst = worst_sample(&[arm.worst, baseline.worst]);
    SearchRatio {
        arm: arm.name.clone(),
        baseline: baseline.name.clone(),
        roots: n,
        arm_ms_per_decision: a,
        baseline_ms_per_decision: b,
        ms_ratio: a / b,
        speedup: b / a,
        under_load: under_load(worst.0, worst.1),
        max_load1: max_load(arm.max_load, baseline.max_load),
        threads: arm.threads.max(baseline.threads),
        worst,
    }
}

fn print_section(s: &SearchSection) {
    outln!(
        "{}: depth {}, strata {}, max work {} (W+1), {}, values checked against {}",
        s.config,
        s.depth,
        s.strata,
        s.max_work,
        super::count(s.roots, "root"),
        s.baseline
    );
    outln!(
        "{:<20} {:>5} {:>5} {:>9} {:>9} {:>8} {:>11} {:>10} {:>9} {:>7} {:>9}",
        "arm",
        "iters",
        "roots",
        "ms/dec",
        "ms med",
        "total s",
        "work/dec",
        "nodes/dec",
        "hits/dec",
        "vs lru",
        "table MB"
    );
    for a in &s.arms {
        outln!(
            "{:<20} {:>5} {:>5} {:>9.1} {:>9.1} {:>8.1} {:>11.0} {:>10.0} {:>9.0} {:>7} {:>9}",
            a.arm,
            a.iterations,
            a.roots,
            a.ms_per_decision,
            a.ms_median,
            a.ms_total / 1e3,
            a.work_per_decision,
            a.nodes_per_decision,
            a.hits_per_decision,
            a.hits_vs_lru.map_or("-".into(), |h| format!("{h:.3}")),
            a.table_bytes
                .map_or("-".into(), |b| format!("{:.1}", b as f64 / 1e6)),
        );
    }
    if s.arms.iter().any(|a| a.iterations == "D") {
        outln!(
            "iters D: iteration D alone, as `decide` over an sa:/dm: table (its work and hits count only that; no \"vs lru\")"
        );
    }
    for r in &s.ratios {
        outln!(
            "{} vs {} on {}: {}",
            r.arm,
            r.baseline,
            super::count(r.roots, "root"),
            ratio_words(r.under_load, r.worst.0, r.worst.1, || format!(
                "{:.1} vs {:.1} ms per decision, {}",
                r.arm_ms_per_decision,
                r.baseline_ms_per_decision,
                speed_words(r.speedup)
            ))
        );
    }
}

fn section(
    config_name: &str,
    config: SearchConfig,
    roots: usize,
    arms: &[SearchArmPlan],
    lru: Option<usize>,
    ratios: Vec<SearchRatio>,
) -> SearchSection {
    let lru = lru.map(|i| &arms[i]);
    SearchSection {
        config: config_name.into(),
        depth: config.depth,
        strata: config.strata,
        max_work: config.max_work,
        roots,
        baseline: arms[0].name.clone(),
        arms: arms.iter().map(|a| summarize(a, lru)).collect(),
        ratios,
    }
}

fn search_suite(plan: &Plan, all_roots: &[Position]) -> Result<SearchReport> {
    let path = plan.gravity;
    let n4 = plan.search_roots.min(all_roots.len());
    let n_none = plan.search_roots_none.min(n4);
    let n_ref = plan.reference_roots.min(n4);
    if n4 < plan.search_roots {
        eprintln!(
            "note: --search-roots {}: the roots file has {} roots, all of them are used",
            plan.search_roots,
            all_roots.len()
        );
    }
    outln!(
        "search suite: gravity {}, one thread (arms named xN: N threads), one decision per root and arm",
        path.name()
    );

    // d4s7: every table, interleaved root by root.
    let c4 = SearchConfig::new(4, 7);
    let sa4 = TableSpec::SetAssociative {
        entries: 1 << 16,
        ways: 4,
    };
    let mut arms = vec![
        SearchArmPlan::fast(path, TableSpec::Lru(LRU_CAPACITY), n4, c4),
        SearchArmPlan::fast(path, TableSpec::DirectMapped(1 << 16), n4, c4),
        SearchArmPlan::fast(
            path,
            TableSpec::SetAssociative {
                entries: 1 << 16,
                ways: 2,
            },
            n4,
            c4,
        ),
        SearchArmPlan::fast(path, sa4, n4, c4),
        SearchArmPlan::fast_threads(path, sa4, n4, c4, 2),
    ];
    if n_none > 0 {
        arms.push(SearchArmPlan::fast(path, TableSpec::None, n_none, c4));
    }
    if n_ref > 0 {
        arms.push(SearchArmPlan::reference(LRU_CAPACITY, n_ref, c4));
    }
    run_section("d4s7", &all_roots[..n4], &mut arms)?;
    let find = |arms: &[SearchArmPlan], name: &str| arms.iter().position(|a| a.name == name);
    let (lru_i, sa4_i) = (0, 3);
    // The reference's strict LRU is the fast one's.
    if let Some(r) = find(&arms, "reference") {
        for (i, (a, b)) in arms[r].runs.iter().zip(&arms[lru_i].runs).enumerate() {
            if counts(&a.0) != counts(&b.0) {
                bail!(
                    "search bench: d4s7 reference and {} counters disagree on root {}",
                    arms[lru_i].name,
                    i + 1
                );
            }
        }
    }
    let mut ratios = Vec::new();
    if let Some(r) = find(&arms, "reference") {
        ratios.push(ratio(&arms[sa4_i], &arms[r]));
        ratios.push(ratio(&arms[lru_i], &arms[r]));
    }
    ratios.push(ratio(&arms[sa4_i], &arms[lru_i]));
    ratios.push(ratio(&arms[sa4_i + 1], &arms[sa4_i]));
    if let Some(none) = find(&arms, "none") {
        ratios.push(ratio(&arms[none], &arms[sa4_i]));
    }
    let d4s7 = section("d4s7", c4, n4, &arms, Some(lru_i), ratios);
    print_section(&d4s7);
    drop(arms);

    // d3s7 on all roots, one table.
    let c3 = SearchConfig::new(3, 7);
    let n3 = plan.d3_roots.min(all_roots.len());
    let mut arms = vec![SearchArmPlan::fast(path, plan.d3_table, n3, c3)];
    let t = Instant::now();
    for (i, root) in all_roots.iter().enumerate().take(n3) {
        let t1 = Instant::now();
        let d = black_box(arms[0].decider.decide_position(black_box(root)));
        arms[0].runs.push((d, t1.elapsed().as_secs_f64() * 1e3));
        if (i + 1) % 21 == 0 || i + 1 == n3 {
            eprintln!(
                "d3s7 {}/{n3} roots [{:.1} s]",
                i + 1,
                t.elapsed().as_secs_f64()
            );
        }
    }
    arms[0].table_bytes = arms[0].decider.table_bytes();
    let d3s7 = section("d3s7", c3, n3, &arms, None, Vec::new());
    print_section(&d3s7);
    drop(arms);

    // d5s7 on roots 0, 2, 4 and 8 (0-based; the first --d5-roots of them):
    // the depth-5 default table on one and two threads, and the depth-4
    // default (a strict LRU would need far more than 200,000 entries).
    let d5_roots: Vec<Position> = D5_ROOTS
        .iter()
        .filter_map(|&i| all_roots.get(i).copied())
        .take(plan.d5_roots)
        .collect();
    let n5 = d5_roots.len();
    if n5 < plan.d5_roots {
        eprintln!(
            "note: --d5-roots {}: the roots file has {} roots, so {n5} of roots 0, 2, 4 and 8 are used",
            plan.d5_roots,
            all_roots.len()
        );
    }
    let d5s7 = if n5 > 0 {
        let c5 = SearchConfig::new(5, 7);
        let deep = TableSpec::DEFAULT_DEEP;
        let mut arms = vec![
            SearchArmPlan::fast(path, deep, n5, c5),
            SearchArmPlan::fast_threads(path, deep, n5, c5, 2),
            SearchArmPlan::fast(path, sa4, n5, c5),
        ];
        run_section("d5s7", &d5_roots, &mut arms)?;
        let ratios = vec![ratio(&arms[1], &arms[0]), ratio(&arms[0], &arms[2])];
        let s = section("d5s7", c5, n5, &arms, None, ratios);
        print_section(&s);
        Some(s)
    } else if plan.d5_roots == 0 {
        outln!("d5s7: skipped (--d5-roots 0)");
        None
    } else {
        outln!("d5s7: skipped (the roots file has no root 0)");
        None
    };

    Ok(SearchReport {
        gravity: path.name(),
        roots_file: plan.roots_file.to_string(),
        statistic: "one decision per root and arm; mean and median over roots",
        d4s7,
        d3s7,
        d5s7,
    })
}

// ---------------------------------------------------------------------------
// engine suite

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EngineReport {
    workload: Workload,
    arms: Vec<Arm>,
    skipped: Vec<Skipped>,
    ratios: Vec<Ratio>,
    threads: Vec<ThreadRun>,
    /// Moves/s on 2 threads over 1 thread; `None` when either run was
    /// under load (unless `--ratios-under-load`).
    scaling: Option<f64>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Workload {
    policy: &'static str,
    driver: &'static str,
    seed_start: String,
    games: u64,
    reference_games: u64,
    max_moves: u32,
    repeats: u32,
    statistic: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Arm {
    arm: &'static str,
    /// 1-minute load average sampled before the arm.
    load1: Option<f64>,
    games: u64,
    moves: u64,
    seconds: f64,
    moves_per_second: f64,
    ns_per_move: f64,
}

#[derive(Serialize)]
struct Skipped {
    arm: &'static str,
    reason: &'static str,
}

/// `arm` against `baseline`, per move.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Ratio {
    arm: &'static str,
    baseline: &'static str,
    /// `arm` ns/move over `baseline` ns/move.
    ns_per_move_ratio: f64,
    /// `baseline` ns/move over `arm` ns/move.
    speedup: f64,
    /// The 1-minute load before either arm exceeded the bench's own threads
    /// plus 0.5: the ratio is not to be trusted (and is not printed).
    under_load: bool,
    /// The arms' load sample furthest above the bench's own threads.
    #[serde(skip)]
    worst: (Option<f64>, usize),
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ThreadRun {
    /// 1-minute load average sampled before the run.
    load1: Option<f64>,
    /// `load1` above the bench's own threads plus 0.5.
    under_load: bool,
    threads: usize,
    gravity: &'static str,
    games: u64,
    moves: u64,
    seconds: f64,
    moves_per_second: f64,
    ns_per_move: f64,
    games_per_second: f64,
}

/// One timed run of an arm: totals over all games, and over the first
/// `prefix` games (to cross-check the shorter reference arm).
#[derive(Clone, Copy, Debug)]
struct ArmRun {
    /// 1-minute load average sampled before the arm.
    load1: Option<f64>,
    /// The bench's own threads counted in it ([`own_threads`]).
    own: usize,
    seconds: f64,
    moves: u64,
    score: u64,
    prefix_moves: u64,
    prefix_score: u64,
}

/// Plays `games` center/headless games single-threaded with `engine`,
/// `repeats` times; returns the median run by time.
fn time_arm<E: Engine>(
    engine: E,
    seed_start: u32,
    games: u64,
    prefix: u64,
    repeats: u32,
) -> ArmRun {
    let (load, own) = load_sample(1);
    let mut runs: Vec<ArmRun> = (0..repeats)
        .map(|_| {
            let mut policy = CenterPolicy;
            let (mut moves, mut score) = (0u64, 0u64);
            let (mut prefix_moves, mut prefix_score) = (0u64, 0u64);
            let t = Instant::now();
            for i in 0..games {
                let o = play_game_outcome(
                    engine,
                    &mut policy,
                    DriverKind::Headless,
                    nth_seed(seed_start, i),
                    MAX_MOVES,
                );
                let o = black_box(o);
                moves += u64::from(o.moves);
                score = score.wrapping_add(o.score);
                if i + 1 == prefix {
                    (prefix_moves, prefix_score) = (moves, score);
                }
            }
            let seconds = t.elapsed().as_secs_f64();
            ran_threads(1);
            ArmRun {
                load1: load,
                own,
                seconds,
                moves,
                score,
                prefix_moves,
                prefix_score,
            }
        })
        .collect();
    runs.sort_by(|a, b| a.seconds.total_cmp(&b.seconds));
    runs[runs.len() / 2]
}

fn per_move(seconds: f64, moves: u64) -> (f64, f64) {
    (moves as f64 / seconds, seconds * 1e9 / moves as f64)
}

fn arm(arm: &'static str, games: u64, r: &ArmRun) -> Arm {
    let (moves_per_second, ns_per_move) = per_move(r.seconds, r.moves);
    Arm {
        arm,
        load1: r.load1,
        games,
        moves: r.moves,
        seconds: r.seconds,
        moves_per_second,
        ns_per_move,
    }
}

fn engine_suite(plan: &Plan, seed_start: u32) -> Result<EngineReport> {
    let games = plan.games;
    let ref_games = plan.reference_games.min(games);
    let repeats = plan.repeats;
    outln!(
        "engine suite: whole games, center policy, headless driver, seeds {}.., one thread, median of {repeats}",
        seed_hex(seed_start)
    );
    outln!(
        "{:<16} {:>8} {:>10} {:>9} {:>12} {:>8}",
        "arm",
        "games",
        "moves",
        "seconds",
        "moves/s",
        "ns/move"
    );
    let mut arms = Vec::new();
    let mut add = |a: Arm| {
        outln!(
            "{:<16} {:>8} {:>10} {:>9.3} {:>12.0} {:>8.1}",
            a.arm,
            a.games,
            a.moves,
            a.seconds,
            a.moves_per_second,
            a.ns_per_move
        );
        arms.push(a);
    };

    let mut skipped = Vec::new();
    let bmi2 =
        Bmi2::detect().map(|b| time_arm(PackedEngine(b), seed_start, games, ref_games, repeats));
    match &bmi2 {
        Some(r) => add(arm("packed-bmi2", games, r)),
        None => {
            outln!("{:<16} skipped: this CPU has no BMI2", "packed-bmi2");
            skipped.push(Skipped {
                arm: "packed-bmi2",
                reason: "this CPU has no BMI2",
            });
        }
    }
    let portable = time_arm(
        PackedEngine(Portable),
        seed_start,
        games,
        ref_games,
        repeats,
    );
    add(arm("packed-portable", games, &portable));
    let reference = time_arm(ReferenceEngine, seed_start, ref_games, ref_games, repeats);
    add(arm("reference", ref_games, &reference));

    // The arms must have played the same games.
    if let Some(b) = &bmi2
        && (b.moves, b.score) != (portable.moves, portable.score)
    {
        bail!("bench arms disagree: packed-bmi2 and packed-portable played different games");
    }
    if (reference.moves, reference.score) != (portable.prefix_moves, portable.prefix_score) {
        bail!("bench arms disagree: reference and packed played different games");
    }

    let ns = |r: &ArmRun| per_move(r.seconds, r.moves).1;
    let ratio = |arm: &'static str, a: &ArmRun, baseline: &'static str, b: &ArmRun| {
        let worst = worst_sample(&[(a.load1, a.own), (b.load1, b.own)]);
        Ratio {
            arm,
            baseline,
            ns_per_move_ratio: ns(a) / ns(b),
            speedup: ns(b) / ns(a),
            under_load: under_load(worst.0, worst.1),
            worst,
        }
    };
    let mut ratios = Vec::new();
    if let Some(b) = &bmi2 {
        ratios.push(ratio("packed-bmi2", b, "reference", &reference));
    }
    ratios.push(ratio("packed-portable", &portable, "reference", &reference));
    if let Some(b) = &bmi2 {
        ratios.push(ratio("packed-bmi2", b, "packed-portable", &portable));
    }
    for r in &ratios {
        let (load, own) = r.worst;
        if withheld(r.under_load) {
            outln!("{:<16} vs {}: {}", r.arm, r.baseline, load_flag(load, own));
        } else {
            outln!(
                "{:<16} {} per move than {}{}",
                r.arm,
                speed_words(r.speedup),
                r.baseline,
                load_mark(r.under_load, load, own)
            );
        }
    }

    // Whole-game throughput through the cohort runner at 1 and 2 threads.
    let path = GravityChoice::Auto.resolve()?;
    let mut threads = Vec::new();
    let mut samples = Vec::new();
    for t in [1usize, 2] {
        let cfg = CohortConfig {
            seed_start,
            games,
            max_moves: MAX_MOVES,
            threads: t,
            labels: RunLabels {
                policy: "center".into(),
                driver: DriverKind::Headless,
            },
        };
        let mut runs = Vec::new();
        let (load, own) = load_sample(t);
        samples.push((load, own));
        for _ in 0..repeats {
            let s = drop7::with_gravity!(path, |g| run_cohort(
                PackedEngine(g),
                || CenterPolicy,
                &cfg,
                |r| {
                    black_box(r);
                    Ok(())
                }
            ))?;
            runs.push((s.elapsed.as_secs_f64(), s.stats.moves, s.threads));
            ran_threads(t);
        }
        runs.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (seconds, moves, used) = runs[runs.len() / 2];
        let (moves_per_second, ns_per_move) = per_move(seconds, moves);
        let run = ThreadRun {
            load1: load,
            under_load: under_load(load, own),
            threads: used,
            gravity: path.name(),
            games,
            moves,
            seconds,
            moves_per_second,
            ns_per_move,
            games_per_second: games as f64 / seconds,
        };
        outln!(
            "threads {t} (packed, {}): {} in {seconds:.3} s, {moves_per_second:.0} moves/s, {:.0} games/s",
            run.gravity,
            super::count(moves, "move"),
            run.games_per_second
        );
        threads.push(run);
    }
    let scaling_under = threads.iter().any(|r| r.under_load);
    let (scaling_load, scaling_own) = worst_sample(&samples);
    let scaling = (!withheld(scaling_under))
        .then(|| threads[1].moves_per_second / threads[0].moves_per_second);
    outln!(
        "scaling 2 threads / 1 thread: {}",
        ratio_words(scaling_under, scaling_load, scaling_own, || format!(
            "{:.2}x moves per second",
            scaling.unwrap_or_default()
        ))
    );

    Ok(EngineReport {
        workload: Workload {
            policy: "center",
            driver: "headless",
            seed_start: seed_hex(seed_start),
            games,
            reference_games: ref_games,
            max_moves: MAX_MOVES,
            repeats,
            statistic: "median",
        },
        arms,
        skipped,
        ratios,
        threads,
        scaling,
    })
}

// ---------------------------------------------------------------------------
// cohort suite

/// First seed of the cohort suite's games (the published fair-cohort seeds).
const COHORT_SEED: u32 = 0xA52E_1300;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CohortReport {
    policy: String,
    table: String,
    driver: &'static str,
    seed_start: String,
    games: u64,
    max_moves: u32,
    gravity: &'static str,
    runs: Vec<CohortRun>,
    /// Games per hour on 2 threads over 1 thread (`None` when under load,
    /// unless `--ratios-under-load`).
    scaling: Option<f64>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CohortRun {
    threads: usize,
    /// 1-minute load average sampled before the run.
    load1: Option<f64>,
    under_load: bool,
    moves: u64,
    mean_score: f64,
    seconds: f64,
    games_per_hour: f64,
    decisions_per_second: f64,
}

/// Whole fair games (headless, seeds from 0xA52E1300, cap 2000) on 1 and 2
/// threads: games run on separate threads, and when there are fewer games
/// than threads each decision is split. The records must be identical.
fn cohort_suite(plan: &Plan) -> Result<CohortReport> {
    let spec = plan.cohort_policy;
    let table = TableSpec::default_for_depth(spec.depth);
    let config = spec.config(None);
    let games = plan.cohort_games;
    outln!(
        "cohort suite: {} of {spec} (table {table}), headless, seeds {}.., cap {MAX_MOVES}, gravity {}",
        super::count(games, "game"),
        seed_hex(COHORT_SEED),
        plan.gravity.name()
    );
    let mut runs = Vec::new();
    let mut first: Option<Vec<String>> = None;
    let mut samples = Vec::new();
    for threads in [1usize, 2] {
        let split = if (games as usize) < threads {
            threads / games as usize
        } else {
            1
        };
        let cfg = CohortConfig {
            seed_start: COHORT_SEED,
            games,
            max_moves: MAX_MOVES,
            threads,
            labels: RunLabels {
                policy: spec.to_string(),
                driver: DriverKind::Headless,
            },
        };
        let (load, own) = load_sample(threads);
        samples.push((load, own));
        let mut records = Vec::new();
        let summary = drop7::with_gravity!(plan.gravity, |g| drop7::with_table!(table, |t| {
            // (NoTable is Copy; the other tables are cloned per worker.)
            #[allow(clippy::clone_on_copy)]
            let make =
                || ParallelSearch::new(FairSearch::new(FairLeaf, t.clone(), g, config), split);
            run_cohort(PackedEngine(g), make, &cfg, |r| {
                records.push(serde_json::to_string(&r).map_err(std::io::Error::other)?);
                Ok(())
            })
        }))??;
        ran_threads(threads);
        match &first {
            None => first = Some(records),
            Some(f) if *f != records => {
                bail!("cohort bench: the {threads}-thread run played different games")
            }
            Some(_) => {}
        }
        let seconds = summary.elapsed.as_secs_f64();
        let run = CohortRun {
            threads,
            load1: load,
            under_load: under_load(load, own),
            moves: summary.stats.moves,
            mean_score: summary.stats.mean_score(),
            seconds,
            games_per_hour: games as f64 * 3600.0 / seconds,
            decisions_per_second: summary.stats.moves as f64 / seconds,
        };
        outln!(
            "threads {threads}: {}, {}, mean score {:.1}, {seconds:.1} s, {:.1} games/hour, {:.2} decisions/s (1-minute load before: {})",
            super::count(games, "game"),
            super::count(run.moves, "move"),
            run.mean_score,
            run.games_per_hour,
            run.decisions_per_second,
            load.map_or("unknown".into(), |l| format!("{l:.2}"))
        );
        runs.push(run);
    }
    let scaling_under = runs.iter().any(|r| r.under_load);
    let (scaling_load, scaling_own) = worst_sample(&samples);
    let scaling =
        (!withheld(scaling_under)).then(|| runs[1].games_per_hour / runs[0].games_per_hour);
    outln!(
        "2 threads / 1 thread: {}",
        ratio_words(scaling_under, scaling_load, scaling_own, || format!(
            "{:.2}x games per hour",
            scaling.unwrap_or_default()
        ))
    );
    Ok(CohortReport {
        policy: spec.to_string(),
        table: table.to_string(),
        driver: "headless",
        seed_start: seed_hex(COHORT_SEED),
        games,
        max_moves: MAX_MOVES,
        gravity: plan.gravity.name(),
        runs,
        scaling,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_read_faster_or_slower_never_below_one() {
        assert_eq!(speed_words(1.234), "1.23x faster");
        assert_eq!(speed_words(1.0), "1.00x faster");
        assert_eq!(speed_words(0.85), "1.18x slower");
        assert_eq!(speed_words(0.5), "2.00x slower");
    }

    #[test]
    fn ratios_under_load_are_withheld_unless_asked_for() {
        use std::sync::atomic::Ordering;
        assert!(!withheld(false) && withheld(true));
        assert_eq!(load_mark(false, Some(3.0), 1), "");
        RATIOS_UNDER_LOAD.store(true, Ordering::Relaxed);
        assert!(!withheld(true));
        assert_eq!(
            load_mark(true, Some(2.62), 1),
            " (UNDER LOAD: 1-minute load 2.62 above 1.5; not a measurement)"
        );
        RATIOS_UNDER_LOAD.store(false, Ordering::Relaxed);
    }

    #[test]
    fn load_above_the_benchs_own_threads_is_flagged() {
        assert!(!under_load(None, 1));
        assert!(!under_load(Some(0.4), 1));
        // The bench's own thread, with the idle machine's background.
        assert!(!under_load(Some(1.0), 1));
        assert!(!under_load(Some(1.2), 1));
        assert!(!under_load(Some(1.5), 1));
        // Another process on a core.
        assert!(under_load(Some(1.51), 1));
        assert!(under_load(Some(2.0), 1));
        // The bench's own second thread counts in the load.
        assert!(!under_load(Some(2.3), 2));
        assert!(under_load(Some(2.6), 2));
        assert_eq!(max_load(Some(0.5), Some(3.0)), Some(3.0));
        assert_eq!(max_load(None, Some(3.0)), Some(3.0));
        assert_eq!(max_load(Some(0.5), None), Some(0.5));
        // A run of 2 threads a moment ago still counts before a 1-thread run.
        ran_threads(2);
        assert_eq!(own_threads(1), 2);
        assert_eq!(own_threads(3), 3);
        // A flag names the sample furthest above its own threads: 2.42
        // before a 1-thread run, not 2.5 before a 2-thread one.
        assert_eq!(
            worst_sample(&[(Some(2.42), 1), (Some(2.5), 2)]),
            (Some(2.42), 1)
        );
        assert_eq!(worst_sample(&[(None, 2), (Some(0.9), 1)]), (Some(0.9), 1));
        assert_eq!(worst_sample(&[(None, 2)]), (None, 1));
        let flag = load_flag(Some(3.25), 2);
        assert!(
            flag.contains("3.25") && flag.contains("above 2.5") && flag.contains("own 2 thread(s)"),
            "{flag}"
        );
        assert!(flag.contains("not reported"), "{flag}");
    }

    #[test]
    fn d5_roots_are_the_published_ones() {
        assert_eq!(D5_ROOTS, [0, 2, 4, 8]);
        assert_eq!(COHORT_SEED, 0xA52E_1300);
    }
}

//! `drop7 bench`: the published benchmark workloads. Suites: `engine` (whole
//! games, center policy, headless driver, seeds from 0xA5270000, one thread:
//! packed/BMI2, packed/portable and the reference engine side by side, then
//! packed throughput at 1 and 2 threads). `leaf` and `search` are placeholders
//! for the search benchmarks; `all` runs every available suite.

use std::fs;
use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use drop7::formats::{parse_seed, seed_hex};
use drop7::game::DriverKind;
use drop7::gravity::{Bmi2, GravityChoice, Portable};
use drop7::runner::{
    CenterPolicy, CohortConfig, Engine, PackedEngine, ReferenceEngine, RunLabels, nth_seed,
    play_game_outcome, run_cohort,
};
use serde::Serialize;

/// Move cap of the benchmark games (never reached by the center policy).
const MAX_MOVES: u32 = 2000;

/// Options of `drop7 bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Suite: engine, leaf, search or all (leaf and search: not yet available).
    #[arg(long, default_value = "engine", value_name = "SUITE")]
    suite: String,
    /// Games per packed arm and per thread-scaling run.
    #[arg(long, default_value_t = 262_144, value_name = "N")]
    games: u64,
    /// Games of the (slow) reference arm: the first N of the same seeds.
    #[arg(long, default_value_t = 16_384, value_name = "N")]
    reference_games: u64,
    /// Runs per arm; the median (by time) is reported.
    #[arg(long, default_value_t = 3, value_name = "R")]
    repeats: u32,
    /// First seed of the workload.
    #[arg(long, default_value = "0xA5270000", value_name = "SEED")]
    seed_start: String,
    /// JSON report [default: bench-SUITE.json].
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

/// A benchmark suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Suite {
    Engine,
    Leaf,
    Search,
}

impl Suite {
    const ALL: [Suite; 3] = [Suite::Engine, Suite::Leaf, Suite::Search];

    fn name(self) -> &'static str {
        match self {
            Suite::Engine => "engine",
            Suite::Leaf => "leaf",
            Suite::Search => "search",
        }
    }

    /// Whether the suite is implemented (the lead adds leaf and search).
    fn available(self) -> bool {
        matches!(self, Suite::Engine)
    }
}

/// Runs `drop7 bench`.
pub fn run(args: &BenchArgs) -> Result<()> {
    let suites: Vec<Suite> = match args.suite.as_str() {
        "all" => Suite::ALL.into_iter().filter(|s| s.available()).collect(),
        name => {
            let s = Suite::ALL
                .into_iter()
                .find(|s| s.name() == name)
                .ok_or_else(|| {
                    anyhow!("unknown --suite {name:?} (expected engine, leaf, search or all)")
                })?;
            if !s.available() {
                bail!("bench suite {name} is not yet available (use --suite engine)");
            }
            vec![s]
        }
    };
    if args.games == 0 || args.reference_games == 0 {
        bail!("--games and --reference-games must be at least 1");
    }
    if args.repeats == 0 {
        bail!("--repeats must be at least 1");
    }
    let seed_start = parse_seed(&args.seed_start).map_err(|e| anyhow!("--seed-start: {e}"))?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("bench-{}.json", args.suite)));
    // Fail on an unwritable path before minutes of measuring.
    fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&out)
        .with_context(|| format!("cannot write --out {}", out.display()))?;

    let mut report = Report {
        machine: machine(),
        engine: None,
    };
    for suite in &suites {
        match suite {
            Suite::Engine => report.engine = Some(engine_suite(args, seed_start)?),
            Suite::Leaf | Suite::Search => unreachable!("unavailable suites were rejected"),
        }
    }
    let text = serde_json::to_string_pretty(&report)? + "\n";
    fs::write(&out, text).with_context(|| format!("cannot write --out {}", out.display()))?;
    println!("wrote {}", out.display());
    Ok(())
}

/// The JSON report: the machine, then one section per suite run.
#[derive(Serialize)]
struct Report {
    machine: Machine,
    #[serde(skip_serializing_if = "Option::is_none")]
    engine: Option<EngineReport>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Machine {
    cpu: Option<String>,
    logical_cpus: usize,
    bmi2: bool,
    auto_gravity: &'static str,
    arch: &'static str,
    os: &'static str,
    drop7: &'static str,
}

/// What the report says about the machine.
fn machine() -> Machine {
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
        auto_gravity: GravityChoice::Auto
            .resolve()
            .map_or("portable", |p| p.name()),
        arch: std::env::consts::ARCH,
        os: std::env::consts::OS,
        drop7: env!("CARGO_PKG_VERSION"),
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EngineReport {
    workload: Workload,
    arms: Vec<Arm>,
    skipped: Vec<Skipped>,
    ratios: Vec<Ratio>,
    threads: Vec<ThreadRun>,
    scaling: f64,
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
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ThreadRun {
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
            ArmRun {
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
        games,
        moves: r.moves,
        seconds: r.seconds,
        moves_per_second,
        ns_per_move,
    }
}

fn engine_suite(args: &BenchArgs, seed_start: u32) -> Result<EngineReport> {
    let games = args.games;
    let ref_games = args.reference_games.min(games);
    let repeats = args.repeats;
    println!(
        "engine suite: whole games, center policy, headless driver, seeds {}.., one thread, median of {repeats}",
        seed_hex(seed_start)
    );
    println!(
        "{:<16} {:>8} {:>10} {:>9} {:>12} {:>8}",
        "arm", "games", "moves", "seconds", "moves/s", "ns/move"
    );
    let mut arms = Vec::new();
    let mut add = |a: Arm| {
        println!(
            "{:<16} {:>8} {:>10} {:>9.3} {:>12.0} {:>8.1}",
            a.arm, a.games, a.moves, a.seconds, a.moves_per_second, a.ns_per_move
        );
        arms.push(a);
    };

    let mut skipped = Vec::new();
    let bmi2 =
        Bmi2::detect().map(|b| time_arm(PackedEngine(b), seed_start, games, ref_games, repeats));
    match &bmi2 {
        Some(r) => add(arm("packed-bmi2", games, r)),
        None => {
            println!("{:<16} skipped: this CPU has no BMI2", "packed-bmi2");
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
    let ratio = |arm: &'static str, a: &ArmRun, baseline: &'static str, b: &ArmRun| Ratio {
        arm,
        baseline,
        ns_per_move_ratio: ns(a) / ns(b),
        speedup: ns(b) / ns(a),
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
        println!(
            "{:<16} {:.2}x faster per move than {}",
            r.arm, r.speedup, r.baseline
        );
    }

    // Whole-game throughput through the cohort runner at 1 and 2 threads.
    let path = GravityChoice::Auto.resolve()?;
    let mut threads = Vec::new();
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
        }
        runs.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (seconds, moves, used) = runs[runs.len() / 2];
        let (moves_per_second, ns_per_move) = per_move(seconds, moves);
        let run = ThreadRun {
            threads: used,
            gravity: path.name(),
            games,
            moves,
            seconds,
            moves_per_second,
            ns_per_move,
            games_per_second: games as f64 / seconds,
        };
        println!(
            "threads {t} (packed, {}): {moves} moves in {seconds:.3} s, {moves_per_second:.0} moves/s, {:.0} games/s",
            run.gravity, run.games_per_second
        );
        threads.push(run);
    }
    let scaling = threads[1].moves_per_second / threads[0].moves_per_second;
    println!("scaling 2 threads / 1 thread: {scaling:.2}x");

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

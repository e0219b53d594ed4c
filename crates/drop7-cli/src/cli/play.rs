//! `drop7 play`: whole games on worker threads, records (JSON lines of
//! `GameRecord`) to `--out` strictly in seed order, a human summary on stdout.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, IsTerminal, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;
use drop7::formats::{GameRecord, seed_hex};
use drop7::runner::{
    CohortConfig, CohortStats, CohortSummary, RunLabels, available_threads, nth_seed, run_cohort,
};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::spec::{GameArgs, GameSetup, PolicySpec, with_engine, with_policy};

/// Options of `drop7 play`.
#[derive(Args, Debug)]
pub struct PlayArgs {
    #[command(flatten)]
    game: GameArgs,
    /// Number of games (consecutive seeds).
    #[arg(long, default_value_t = 1000, value_name = "N")]
    games: u64,
    /// Worker threads [default: all cores]; a fair run with fewer games than
    /// threads splits each decision over the spare ones. Results do not depend on it.
    #[arg(long, value_name = "T")]
    threads: Option<usize>,
    /// Write one JSON line per game (in seed order) to FILE.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Continue an interrupted run: keep the complete records already in
    /// --out that continue this seed range, play only the rest.
    #[arg(long)]
    resume: bool,
}

/// Most worker threads a run may ask for.
const MAX_THREADS: usize = 1024;

/// How often the record file is flushed while games complete.
const FLUSH_EVERY: Duration = Duration::from_millis(100);
/// The progress bar appears only once a run has taken this long.
const BAR_DELAY: Duration = Duration::from_millis(800);

/// Runs `drop7 play`.
pub fn run(args: &PlayArgs) -> Result<()> {
    let mut setup = args.game.resolve(args.games)?;
    match args.threads {
        Some(0) => bail!("--threads must be at least 1"),
        Some(t) if t > MAX_THREADS => bail!("--threads {t} exceeds the limit of {MAX_THREADS}"),
        _ => {}
    }
    if args.resume && args.out.is_none() {
        bail!("--resume needs --out FILE");
    }
    let labels = RunLabels {
        policy: setup.policy.to_string(),
        driver: setup.driver,
    };

    // Open the record file (keeping a resumable prefix) before playing anything.
    let mut kept = Kept::default();
    let mut writer = match &args.out {
        None => None,
        Some(path) if args.resume => {
            let (file, k) = open_resume(path, &setup, &labels)?;
            kept = k;
            Some(BufWriter::with_capacity(1 << 16, file))
        }
        Some(path) => {
            let file = File::create(path)
                .with_context(|| format!("cannot create --out {}", path.display()))?;
            Some(BufWriter::with_capacity(1 << 16, file))
        }
    };

    let cfg = CohortConfig {
        seed_start: nth_seed(setup.seed_start, kept.stats.games),
        games: setup.games - kept.stats.games,
        max_moves: setup.max_moves,
        threads: args.threads.unwrap_or(0),
        labels,
    };
    // Fewer fair games than threads: the spare threads split each decision
    // (same records: a split decision is the one-thread decision).
    let total_threads = match cfg.threads {
        0 => available_threads(),
        t => t,
    };
    if matches!(setup.policy, PolicySpec::Fair(_)) && cfg.games > 0 {
        let games = usize::try_from(cfg.games).unwrap_or(usize::MAX);
        if games < total_threads {
            setup.search_threads = total_threads / games;
        }
    }
    let bar = progress_bar(cfg.games);
    let started = Instant::now();
    let mut last_flush = Instant::now();
    // Shown only on a terminal, and only once the run has lasted BAR_DELAY.
    let mut bar_pending = io::stderr().is_terminal();
    let mut on_record = |rec: GameRecord| -> io::Result<()> {
        if let Some(w) = writer.as_mut() {
            serde_json::to_writer(&mut *w, &rec)?;
            w.write_all(b"\n")?;
            if last_flush.elapsed() >= FLUSH_EVERY {
                w.flush()?;
                last_flush = Instant::now();
            }
        }
        bar.inc(1);
        if bar_pending && started.elapsed() >= BAR_DELAY {
            bar.set_draw_target(ProgressDrawTarget::stderr());
            bar_pending = false;
        }
        Ok(())
    };
    let summary = if cfg.games == 0 {
        CohortSummary {
            stats: CohortStats::default(),
            elapsed: Duration::ZERO,
            threads: 0,
        }
    } else {
        with_engine!(setup.engine, |engine| with_policy!(setup, |make| {
            run_cohort(engine, make, &cfg, &mut on_record)
        }))?
        .with_context(|| match &args.out {
            Some(p) => format!("writing --out {}", p.display()),
            None => "playing".to_string(),
        })?
    };
    bar.finish_and_clear();
    if let Some(mut w) = writer {
        w.flush()
            .with_context(|| format!("writing --out {}", args.out.as_ref().unwrap().display()))?;
    }
    print_summary(&setup, &cfg, &kept, args.out.as_deref(), &summary).context("writing stdout")
}

fn progress_bar(games: u64) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(games), ProgressDrawTarget::hidden());
    if let Ok(style) = ProgressStyle::with_template(
        "{spinner} {human_pos}/{human_len} games [{elapsed}] {wide_bar} eta {eta}",
    ) {
        bar.set_style(style);
    }
    bar
}

/// What `--resume` found in the record file.
#[derive(Default)]
struct Kept {
    /// Totals of the records kept.
    stats: CohortStats,
    /// Bytes of partial or corrupt tail dropped.
    dropped_bytes: u64,
}

/// Opens `path` for a resumed run: keeps the longest prefix of complete,
/// well-formed records that are this run's games (seed by seed, same policy
/// and driver), truncates what follows, and positions at the end.
fn open_resume(path: &Path, setup: &GameSetup, labels: &RunLabels) -> Result<(File, Kept)> {
    let shown = path.display();
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e).with_context(|| format!("cannot read --out {shown} to resume")),
    };
    let mut kept = Kept::default();
    let mut pos = 0usize;
    while let Some(len) = bytes[pos..].iter().position(|&b| b == b'\n') {
        let index = kept.stats.games;
        let line = index + 1;
        let Ok(rec) = serde_json::from_slice::<GameRecord>(&bytes[pos..pos + len]) else {
            bail!(
                "--out {shown} line {line} is not a game record; not resuming (nothing was changed)"
            );
        };
        if index == setup.games {
            bail!(
                "--out {shown} already holds more than the requested {} games; not resuming",
                setup.games
            );
        }
        let want = seed_hex(nth_seed(setup.seed_start, index));
        let driver = labels.driver.as_str();
        if rec.seed != want || rec.policy != labels.policy || rec.driver != driver {
            bail!(
                "--out {shown} line {line} is game {} ({}/{}) but this run's game {line} is {want} ({}/{driver}); not resuming another run",
                rec.seed,
                rec.policy,
                rec.driver,
                labels.policy
            );
        }
        kept.stats.add(&rec);
        pos += len + 1;
    }
    // Only an interrupted last record (no newline yet) may be dropped.
    let tail = &bytes[pos..];
    const START: &[u8] = b"{\"seed\":\"0x";
    if !(tail.starts_with(START) || START.starts_with(tail)) {
        bail!(
            "--out {shown} ends with {} bytes that are not the start of a game record; not resuming (nothing was changed)",
            tail.len()
        );
    }
    kept.dropped_bytes = tail.len() as u64;
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .with_context(|| format!("cannot open --out {shown} to resume"))?;
    file.set_len(pos as u64)
        .with_context(|| format!("cannot truncate --out {shown}"))?;
    file.seek(SeekFrom::End(0))
        .with_context(|| format!("cannot seek --out {shown}"))?;
    Ok((file, kept))
}

fn print_summary(
    setup: &GameSetup,
    cfg: &CohortConfig,
    kept: &Kept,
    out: Option<&Path>,
    run: &CohortSummary,
) -> io::Result<()> {
    let mut all = kept.stats.clone();
    all.merge(&run.stats);
    let last = nth_seed(setup.seed_start, setup.games - 1);
    let mut o = io::stdout().lock();
    writeln!(
        o,
        "games      {} (seeds {}..{}, policy {}, driver {}, move cap {})",
        all.games,
        seed_hex(setup.seed_start),
        seed_hex(last),
        setup.policy,
        setup.driver.as_str(),
        setup.max_moves
    )?;
    writeln!(
        o,
        "score      mean {:.1}, median {:.1}",
        all.mean_score(),
        all.median_score()
    )?;
    writeln!(
        o,
        "moves      mean {:.2}, total {}",
        all.mean_moves(),
        all.moves
    )?;
    if all.censored > 0 {
        writeln!(o, "censored   {} games reached the move cap", all.censored)?;
    }
    if let Some(p) = out {
        if kept.stats.games > 0 || kept.dropped_bytes > 0 {
            writeln!(
                o,
                "resumed    kept {} games from {}, dropped {} bytes of incomplete tail, played {}",
                kept.stats.games,
                p.display(),
                kept.dropped_bytes,
                run.stats.games
            )?;
        }
        writeln!(o, "records    {}", p.display())?;
    }
    let secs = run.elapsed.as_secs_f64();
    writeln!(
        o,
        "elapsed    {secs:.3} s for {} games played now ({:.0} moves/s)",
        run.stats.games,
        run.moves_per_second()
    )?;
    let split = if setup.search_threads > 1 && cfg.games > 0 {
        format!(" (each decision split over {})", setup.search_threads)
    } else {
        String::new()
    };
    writeln!(
        o,
        "threads    {}{split}",
        if cfg.games == 0 { 0 } else { run.threads }
    )?;
    writeln!(
        o,
        "engine     {} (gravity {})",
        setup.engine.name(),
        setup.engine.gravity_name()
    )?;
    o.flush()
}

//! `drop7 play`: whole games on worker threads, records (JSON lines of
//! `GameRecord`) to `--out` strictly in seed order, a human summary on stdout.

use std::fs::{File, OpenOptions};
use std::io::{self, BufReader, BufWriter, IsTerminal, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use drop7::formats::{GameRecord, parse_seed, seed_hex};
use drop7::records::{
    RecordLines, identity_difference, parse_record_line, parse_shard, shard_range,
};
use drop7::runner::{
    CohortConfig, CohortStats, CohortSummary, RunControl, RunLabels, available_threads,
    interruptible, nth_seed, run_cohort_with,
};
use drop7::runspec::{record_template, stamp_record};
use fs4::fs_std::FileExt;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM, SIGXFSZ};

use super::same::{both_name, same_file};
use super::spec::{GameArgs, GameSetup, PolicySpec, with_engine, with_policy};
use super::trace::file::{Noting, TraceCheck, TraceOut};

/// Options of `drop7 play`.
#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    drop7 play --games 1000 --out center.jsonl\n  \
    drop7 play --policy fair:d2s3 --games 8 --out fair.jsonl --resume\n  \
    drop7 play --games 100000 --shard 2/7 --out part2.jsonl --resume")]
pub struct PlayArgs {
    #[command(flatten)]
    game: GameArgs,
    /// Number of games of the whole cohort (consecutive seeds).
    #[arg(
        long,
        default_value_t = 1000,
        value_name = "N",
        allow_negative_numbers = true
    )]
    games: u64,
    /// Worker threads [default: all cores]; a fair run with fewer games than
    /// threads splits each decision over the spare ones. Results do not depend on it.
    #[arg(long, value_name = "T", allow_negative_numbers = true)]
    threads: Option<usize>,
    /// Write one JSON line per game (in seed order) to FILE; the file is
    /// locked while the run writes it.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Continue an interrupted run: keep the complete records already in
    /// --out (they must be this run's: same rules, policy, table, work
    /// budget, driver, move cap, cohort and shard), play only the rest. A
    /// missing or empty file starts the run fresh.
    #[arg(long)]
    resume: bool,
    /// Overwrite a non-empty --out or --trace, and existing tapes in --tapes
    /// (without --resume, an existing non-empty file is refused).
    #[arg(long)]
    force: bool,
    /// Play only shard I of N (1 <= I <= N): the I-th of N contiguous,
    /// disjoint slices of the cohort's games; `drop7 merge` joins the shards.
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
    /// No progress display on stderr (it is also off when stderr is not a terminal).
    #[arg(long)]
    quiet: bool,
    /// Play scripted rounds (`drop7-scripted-round-v1` files) instead of
    /// seeds: one record per round, in the order given; the move cap comes
    /// from each file (--games, --seed-start, --driver, --max-moves, --shard
    /// and --resume do not apply: giving one is a usage error).
    #[arg(
        long,
        num_args = 1..,
        value_name = "FILE",
        conflicts_with_all = ["resume", "games", "seed_start", "driver", "max_moves", "shard"]
    )]
    round: Vec<PathBuf>,
    /// Also write every game as a recorded tape (`drop7-recorded-game-v2`)
    /// into DIR, one file per game: `SEED.tape.json` (e.g. 0x00000001) or
    /// `ROUND-ID.tape.json` (the id a plain file name), each just before its
    /// record. A tape already there is refused without --force; the folder
    /// is locked for the run, as --out is.
    #[arg(long, value_name = "DIR")]
    tapes: Option<PathBuf>,
    /// Also write every move of every game in the trace format (the lines
    /// `drop7 trace` prints for the same flags) to FILE, games in seed order
    /// whatever --threads; locked like --out. With --resume the lines of the
    /// games kept in --out are checked against their records and kept, the
    /// rest is replayed.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
}

/// Most worker threads a run may ask for.
pub(crate) use drop7::runner::MAX_THREADS;

/// How often the record file is flushed while games complete.
const FLUSH_EVERY: Duration = Duration::from_millis(100);
/// The progress display appears only once a run has taken this long.
const BAR_DELAY: Duration = Duration::from_millis(800);

/// The identity fields every record of this run carries (and a resumed file
/// must carry): see `drop7::records::identity` and `drop7::runspec::record_template`.
fn run_template(setup: &GameSetup, labels: &RunLabels, shard: Option<&str>) -> GameRecord {
    let fair = match setup.policy {
        PolicySpec::Fair(f) => Some(f),
        _ => None,
    };
    let settings = setup.fair_settings();
    record_template(
        labels,
        fair.map(|f| (f, &settings)),
        setup.max_moves,
        Some((setup.seed_start, setup.games)),
        shard,
    )
}

/// Runs `drop7 play`.
pub fn run(args: &PlayArgs) -> Result<()> {
    if !args.round.is_empty() {
        return super::rounds::run(
            &args.game,
            &args.round,
            args.threads,
            args.out.as_deref(),
            args.tapes.as_deref(),
            args.trace.as_deref(),
            args.force,
        );
    }
    let mut setup = args.game.resolve(args.games)?;
    // A file or folder created while setting up is removed if the run
    // cannot start (see `NewFiles`).
    let mut new = NewFiles::default();
    if let Some(dir) = &args.tapes {
        for (flag, path) in [("--out", &args.out), ("--trace", &args.trace)] {
            if let Some(p) = path {
                super::rounds::refuse_output_among_tapes(dir, flag, p)?;
            }
        }
        new.create_dir(dir, "--tapes")?;
    }
    // Held to the end of the run: no other drop7 writes tapes there meanwhile.
    let _tapes_lock = match &args.tapes {
        Some(dir) => super::rounds::lock_tapes(dir, &mut new)?,
        None => None,
    };
    match args.threads {
        Some(0) => bail!("--threads must be at least 1"),
        Some(t) if t > MAX_THREADS => bail!("--threads {t} exceeds the limit of {MAX_THREADS}"),
        _ => {}
    }
    if args.resume && args.out.is_none() {
        bail!("--resume needs --out FILE");
    }
    let shard = match &args.shard {
        Some(text) => Some(parse_shard(text).map_err(|e| anyhow!("--shard: {e}"))?),
        None => None,
    };
    let (first_index, shard_games) = match shard {
        Some((i, n)) => {
            let r = shard_range(setup.games, i, n);
            (r.start, r.end - r.start)
        }
        None => (0, setup.games),
    };
    let labels = RunLabels {
        policy: setup.policy.to_string(),
        driver: setup.driver,
    };
    let shard_text = shard.map(|(i, n)| format!("{i}/{n}"));
    let template = run_template(&setup, &labels, shard_text.as_deref());
    let range = ShardRange {
        seed_start: nth_seed(setup.seed_start, first_index),
        games: shard_games,
    };

    // Open and lock the trace and record files (keeping a resumable prefix)
    // before playing anything; a file created here is removed if the run
    // cannot start, and none is emptied or cut before the policy is ready
    // (`NewFiles::start`, in the policy's body below).
    let mut tracer = None;
    let mut trace_check = None;
    // Whether --out was there before this run: a --resume without it starts
    // fresh, and its --trace and tapes are treated as a plain run's (a
    // non-empty trace is refused without --force: it is not this run's).
    let out_existed = args.out.as_deref().is_some_and(Path::exists);
    if let Some(path) = &args.trace {
        // Before either is opened (and locked): the message says why.
        if let Some(out) = args.out.as_deref().filter(|o| same_file(o, path)) {
            bail!(
                "{} (nothing was changed)",
                both_name("--trace", path, "--out", out)
            );
        }
        if args.resume
            && !out_existed
            && !args.force
            && std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() > 0)
        {
            bail!(
                "--trace {} is not empty but --out {} does not exist yet: this --resume has no run to continue; add --force to overwrite the trace (nothing was changed)",
                path.display(),
                args.out.as_deref().unwrap_or(Path::new("")).display()
            );
        }
        let (t, c) = TraceOut::open(
            path,
            args.resume && out_existed,
            args.force,
            setup.driver,
            setup.max_moves,
            &mut new,
        )?;
        tracer = Some(t);
        trace_check = c;
    }
    let mut kept = Kept::default();
    let mut writer = match &args.out {
        None => None,
        Some(path) => {
            let (file, k) = open_out(
                path,
                args,
                &template,
                &range,
                trace_check.as_mut(),
                &mut new,
            )?;
            kept = k;
            Some(BufWriter::with_capacity(1 << 16, file))
        }
    };
    if let Some(dir) = &args.tapes {
        // The tapes of the games this run plays (with --resume, those of the
        // games it plays again are its own: replaced).
        let (start, games) = (
            nth_seed(range.seed_start, kept.stats.games),
            range.games - kept.stats.games,
        );
        // A tape of seed S is `seed_hex(S)`'s file (rounds::tape_file).
        let ours = |name: &str| {
            name.strip_suffix(".tape.json")
                .and_then(|h| parse_seed(h).ok().filter(|&seed| seed_hex(seed) == h))
                .is_some_and(|seed| u64::from(seed.wrapping_sub(start)) < games)
        };
        // A resume continues an earlier run (whose tapes may be ahead of
        // its records) when its --out exists, even with no record kept (an
        // interrupted run whose first game was abandoned may have taped
        // later games). Its records say nothing of the folder, so a tape it
        // would replace must name this run's policy and driver (another
        // run's, or a file that is no tape, is refused without --force).
        // One that starts fresh (no --out yet) is refused an existing tape
        // as a plain run is.
        use super::rounds::ExistingTapes;
        let existing = if args.force {
            ExistingTapes::Replace
        } else if args.resume && out_existed {
            ExistingTapes::ReplaceOwn {
                policy: &labels.policy,
                driver: setup.driver.as_str(),
            }
        } else {
            ExistingTapes::Refuse
        };
        super::rounds::refuse_existing_tapes(dir, existing, ours)?;
    }
    if let Some(t) = tracer.as_mut() {
        let next = (
            nth_seed(range.seed_start, kept.stats.games),
            range.games - kept.stats.games,
        );
        t.begin(trace_check.take(), next, &mut new)?;
    }
    // Each game's columns, noted by the workers, for its trace lines and its
    // tape, both written with its record, in seed order, on this thread.
    let book = match (&tracer, &args.tapes) {
        (Some(t), _) => Some(t.book.clone()),
        (None, Some(_)) => Some(super::trace::file::ColumnBook::default()),
        (None, None) => None,
    };

    let cfg = CohortConfig {
        seed_start: nth_seed(range.seed_start, kept.stats.games),
        games: range.games - kept.stats.games,
        max_moves: setup.max_moves,
        threads: args.threads.unwrap_or(0),
        labels,
    };
    // Fewer fair games than threads: the spare threads split each decision
    // (same actions and values). Decided on the run's whole range, not on the
    // games left after --resume, so a resumed run splits exactly as the
    // uninterrupted one did and its search counters (`work`, `nodes`) match.
    let total_threads = match cfg.threads {
        0 => available_threads(),
        t => t,
    };
    // A work budget that can bind keeps each decision on one thread
    // (`drop7::parallel`): the summary then says no split.
    let budget_binds = match setup.policy {
        PolicySpec::Fair(f) => {
            let c = f.config(setup.max_work);
            c.max_work <= drop7::search::worst_case_work(c.depth, c.strata)
        }
        _ => false,
    };
    if let Ok(p) = setup.policy.builtin()
        && !budget_binds
    {
        setup.search_threads = p.search_threads(range.games, total_threads);
    }
    setup.workers = cfg.workers();
    let signals = Signals::install()?;
    // A signal also stops the allocation of large tables (gigabytes per
    // worker can take many seconds to fill).
    drop7::table::stop_allocating_on(Arc::clone(&signals.stop));
    let fair = matches!(setup.policy, PolicySpec::Fair(_));
    let moves_live = AtomicU64::new(0);
    let ctl = RunControl {
        detail: writer.is_some(),
        stop: Some(&signals.stop),
        moves: fair.then_some(&moves_live),
    };
    let show = !args.quiet && io::stderr().is_terminal();
    let progress = Progress::new(cfg.games, show, fair);
    let mut last_flush = Instant::now();
    // Which file a write failed on (named in the error).
    let failed_file: std::cell::Cell<Option<Failed>> = std::cell::Cell::new(None);
    let mut line = Vec::with_capacity(1024);
    let tape_policy = setup.policy.to_string();
    let mut on_record = |mut rec: GameRecord| -> io::Result<()> {
        // The tape first, then the trace: a record never reaches --out
        // before its game's tape and lines (a failed tape stops the run
        // there, and --resume plays that game again).
        if let (Some(dir), Some(book)) = (&args.tapes, &book) {
            let seed = drop7::formats::parse_seed(&rec.seed).map_err(io::Error::other)?;
            let columns = if tracer.is_some() {
                book.columns(seed)
            } else {
                book.take(seed)
            };
            if let Err(e) =
                super::rounds::write_seed_tape(dir, seed, &columns, setup.driver, &tape_policy)
            {
                // The games before this one are whole (tape, lines, record):
                // their buffered lines and records go to disk now, so that
                // the error's note on --resume sees them.
                if let Some(t) = tracer.as_mut() {
                    t.flush()
                        .inspect_err(|_| failed_file.set(Some(Failed::Trace)))?;
                }
                if let Some(w) = writer.as_mut() {
                    w.flush()
                        .inspect_err(|_| failed_file.set(Some(Failed::Out)))?;
                }
                failed_file.set(Some(Failed::Tape));
                return Err(io::Error::other(e));
            }
        }
        if let Some(t) = tracer.as_mut() {
            t.write_game(&rec)
                .inspect_err(|_| failed_file.set(Some(Failed::Trace)))?;
        }
        if let Some(w) = writer.as_mut() {
            stamp_record(&mut rec, &template);
            line.clear();
            serde_json::to_writer(&mut line, &rec)?;
            line.push(b'\n');
            let flush = last_flush.elapsed() >= FLUSH_EVERY;
            if let Some(t) = tracer.as_mut()
                && (flush || w.buffer().len() + line.len() > w.capacity())
            {
                t.flush()
                    .inspect_err(|_| failed_file.set(Some(Failed::Trace)))?;
            }
            w.write_all(&line)
                .inspect_err(|_| failed_file.set(Some(Failed::Out)))?;
            if flush {
                w.flush()
                    .inspect_err(|_| failed_file.set(Some(Failed::Out)))?;
                last_flush = Instant::now();
            }
        } else if let Some(t) = tracer.as_mut()
            && last_flush.elapsed() >= FLUSH_EVERY
        {
            t.flush()
                .inspect_err(|_| failed_file.set(Some(Failed::Trace)))?;
            last_flush = Instant::now();
        }
        progress.game_done(rec.score, rec.moves);
        Ok(())
    };
    let out_shown = args.out.as_ref().map(|p| p.display().to_string());
    let trace_shown = args.trace.as_ref().map(|p| p.display().to_string());
    let io_context = |e: io::Error| -> anyhow::Error {
        // Flattened to text: a closed pipe here is a failed write, not a quiet end.
        let failed = failed_file.get();
        let note = args.out.as_deref().map(|out| {
            let trace = args.trace.as_deref();
            after_failed_write(out, trace, matches!(failed, Some(Failed::Trace)))
        });
        match (failed, &out_shown, &trace_shown, note) {
            (Some(Failed::Tape), _, _, Some(note)) => anyhow::Error::new(FailedWrite {
                failure: e.to_string(),
                note,
            }),
            (Some(Failed::Tape), _, _, None) => anyhow!("{e}"),
            (Some(Failed::Trace), _, Some(t), Some(note)) => anyhow::Error::new(FailedWrite {
                failure: format!("writing --trace {t}: {e}"),
                note,
            }),
            (_, Some(p), _, Some(note)) => anyhow::Error::new(FailedWrite {
                failure: format!("writing --out {p}: {e}"),
                note,
            }),
            (_, None, Some(t), _) => anyhow!("writing --trace {t}: {e}"),
            _ => anyhow!("playing: {e}"),
        }
    };
    // The --out file when its writer was dropped unflushed (a failed trace write).
    let mut out_file: Option<File> = None;
    let summary = if cfg.games == 0 {
        new.start()?;
        Ok(CohortSummary {
            stats: CohortStats::default(),
            elapsed: Duration::ZERO,
            threads: 0,
            interrupted: false,
        })
    } else {
        let r = std::thread::scope(|scope| {
            let ticker = progress.spawn_ticker(scope, &moves_live);
            // The policy is ready (a D7P engine passed its handshake, the
            // tables are allocated): only now are the files emptied or cut.
            // In a closure: a policy that cannot start still stops the ticker.
            let r = (|| {
                with_engine!(setup.engine, |engine| with_policy!(setup, |make| {
                    // A signal also cuts a long decision short (the game is
                    // abandoned either way).
                    let make = interruptible(make, &signals.stop);
                    new.start().map(|()| {
                        let noting = || Noting::new(make(), book.clone());
                        run_cohort_with(engine, noting, &cfg, &ctl, &mut on_record)
                    })
                }))
                .and_then(|r| r)
            })();
            progress.finish();
            drop(ticker);
            r
        })
        .map_err(|e| {
            // A signal while the policy was starting (tables being filled,
            // engines in their handshake): the run ends as interrupted, with
            // no game played and its new files removed.
            // (A D7P engine's start says so itself: an `ExitWith` already.)
            if signals.stop.load(Ordering::SeqCst) && e.downcast_ref::<super::ExitWith>().is_none()
            {
                let (name, status) = signals.name_and_status();
                anyhow::Error::new(super::ExitWith {
                    status,
                    message: format!(
                        "interrupted by {name} while the run was starting (no game played): {e:#}"
                    ),
                })
            } else {
                e
            }
        })?;
        if r.is_err()
            && matches!(failed_file.get(), Some(Failed::Trace))
            && let Some(w) = writer.take()
        {
            // The trace did not take the lines of the records still buffered
            // for --out: they are dropped (not flushed), so every record in
            // --out keeps its game's lines in the trace and --resume continues.
            out_file = Some(w.into_parts().0);
        }
        r.map_err(io_context)
    };
    let finished = summary.and_then(|summary| {
        if let Some(t) = tracer.as_mut() {
            failed_file.set(Some(Failed::Trace));
            t.finish().map_err(io_context)?;
        }
        if let Some(w) = writer.as_mut() {
            failed_file.set(Some(Failed::Out));
            w.flush().map_err(io_context)?;
            super::trace::file::sync(w.get_ref()).map_err(io_context)?;
        }
        Ok(summary)
    });
    // What an interrupted run says first, and its exit status (128 + the
    // signal's number).
    let interruption = |s: &CohortSummary| {
        let (name, status) = signals.name_and_status();
        let done = kept.stats.games + s.stats.games;
        let said = format!(
            "interrupted by {name}: {done} of {} done",
            super::count(range.games, "game")
        );
        (said, status)
    };
    let stopped = finished
        .as_ref()
        .ok()
        .filter(|s| s.interrupted)
        .map(interruption);
    // Also after a failed write: what the run wrote to a file renamed over
    // meanwhile is rescued, and the error says where it is (and, in an
    // interrupted run, that it was interrupted).
    let out_ref = writer
        .as_ref()
        .map(BufWriter::get_ref)
        .or(out_file.as_ref());
    let rescued = finish_with_rescue(finished, out_ref.zip(args.out.as_deref()), tracer.as_ref());
    let summary = rescued.map_err(|e| match stopped {
        Some((said, status)) => anyhow::Error::new(super::ExitWith {
            status,
            message: format!("{said}; {e:#}"),
        }),
        None => e,
    })?;
    if summary.interrupted {
        let (said, status) = interruption(&summary);
        eprintln!(
            "{said}{}",
            match &out_shown {
                Some(p) => format!(", records in {p}"),
                None => String::new(),
            }
        );
        if let Some(t) = &trace_shown {
            eprintln!("trace of the games done in {t}");
        }
        if let Some(out) = &args.out {
            match not_resumable(out, args.trace.as_deref()) {
                None => eprintln!("resume with: {}", resume_command()),
                Some((flag, path)) => eprintln!(
                    "{flag} {} is not a regular file: --resume cannot continue this run",
                    path.display()
                ),
            }
        }
        std::process::exit(i32::from(status));
    }
    print_summary(&setup, &cfg, &range, &kept, args, &summary).context("writing to stdout")?;
    if let PolicySpec::D7p(cmd) = &setup.policy {
        super::d7p::check_gave_up(cmd)?;
    }
    Ok(())
}

/// The file of a run writing `--out out` (and `--trace trace`) that keeps
/// `--resume` from continuing it: the first that is not a regular file, as
/// `(flag, path)`. `None` when it can.
fn not_resumable<'p>(out: &'p Path, trace: Option<&'p Path>) -> Option<(&'static str, &'p Path)> {
    let regular = |p: &Path| std::fs::metadata(p).is_ok_and(|m| m.is_file());
    if !regular(out) {
        return Some(("--out", out));
    }
    trace.filter(|t| !regular(t)).map(|t| ("--trace", t))
}

/// What a failed write of a run with `--out out` leaves (the note after the
/// error, which names the file that failed): `--resume` is suggested only
/// when it can continue the run (the files are regular) and records reached
/// `out` (else a rerun starts over). `trace_failed`: the write that failed was
/// the trace's, so `out` is named.
fn after_failed_write(out: &Path, trace: Option<&Path>, trace_failed: bool) -> String {
    let shown = out.display();
    if let Some((flag, path)) = not_resumable(out, trace) {
        let failed = if trace_failed { trace } else { Some(out) };
        return if failed == Some(path) {
            "not a regular file: --resume cannot continue this run".into()
        } else {
            format!(
                "{flag} {} is not a regular file: --resume cannot continue this run",
                path.display()
            )
        };
    }
    let written = std::fs::metadata(out).is_ok_and(|m| m.len() > 0);
    match (written, trace_failed) {
        (true, false) => {
            "the complete records written so far are kept; rerun with --resume to continue".into()
        }
        (true, true) => format!(
            "the complete records written so far to --out {shown} are kept; rerun with --resume to continue"
        ),
        (false, false) => "no record was written to it: nothing to resume".into(),
        // The trace may hold the first game's lines: a rerun without
        // --resume would refuse it, and --resume drops them and starts again.
        (false, true) => format!(
            "no record was written to --out {shown} yet; rerun with --resume to start again from the first game"
        ),
    }
}

/// The command line that resumes this run (the same arguments plus `--resume`).
fn resume_command() -> String {
    let mut words: Vec<String> = std::env::args().collect();
    if !words.iter().any(|w| w == "--resume") {
        words.push("--resume".into());
    }
    words.retain(|w| w != "--force");
    words
        .iter()
        .map(|w| {
            if !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./:=,+@%".contains(c))
            {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// SIGINT/SIGTERM/SIGHUP handling of a run: the first signal raises `stop`
/// (no new games; games in flight are abandoned; finished records are
/// written); a second one exits at once, with a line saying so (130 for SIGINT, 143 for SIGTERM, 129
/// for SIGHUP). SIGHUP left ignored (`nohup`) stays so.
pub(super) struct Signals {
    pub(super) stop: Arc<AtomicBool>,
    which: Arc<AtomicUsize>,
}

impl Signals {
    pub(super) fn install() -> Result<Signals> {
        let stop = Arc::new(AtomicBool::new(false));
        let which = Arc::new(AtomicUsize::new(0));
        for (sig, code) in [(SIGINT, 130), (SIGTERM, 143), (SIGHUP, 129)] {
            if sig == SIGHUP && super::d7p::signal_ignored(sig) {
                // Under `nohup` the run goes on when the terminal closes.
                continue;
            }
            // Registered first: exits at once, with a line saying so, when
            // `stop` is already set (a second signal).
            let name = super::signal_name(sig).unwrap_or("a signal");
            let line: &'static [u8] = format!(
                "\ninterrupted again by {name}: drop7 play exits at once; what was not yet \
                 written is lost\n"
            )
            .leak()
            .as_bytes();
            let again = Arc::clone(&stop);
            let action = move || {
                if again.load(Ordering::SeqCst) {
                    // SAFETY: write(2) of a static buffer to stderr and
                    // _exit(2) are async-signal-safe; a failed write is
                    // ignored (the exit status still tells).
                    unsafe {
                        libc::write(2, line.as_ptr().cast(), line.len());
                        libc::_exit(code);
                    }
                }
            };
            // SAFETY: the action is async-signal-safe: an atomic load, then
            // write(2) and _exit(2) only.
            unsafe { signal_hook::low_level::register(sig, action) }
                .context("installing signal handlers")?;
            signal_hook::flag::register_usize(sig, Arc::clone(&which), sig as usize)
                .context("installing signal handlers")?;
            signal_hook::flag::register(sig, Arc::clone(&stop))
                .context("installing signal handlers")?;
        }
        // Registered after the handlers above (they run in that order):
        // `d7p:` engines, in process groups of their own, are killed at the
        // first signal once `stop` is raised, so that a worker whose engine
        // dies sees `stop` and abandons its game instead of finishing it
        // with fallback columns.
        super::d7p::kill_engines_on_signals(false)?;
        ignore_file_size_signal()?;
        Ok(Signals { stop, which })
    }

    /// The signal that stopped the run and the exit status it asks for
    /// (128 + its number).
    pub(super) fn name_and_status(&self) -> (&'static str, u8) {
        match self.which.load(Ordering::SeqCst) as i32 {
            SIGTERM => ("SIGTERM", 143),
            SIGHUP => ("SIGHUP", 129),
            _ => ("SIGINT", 130),
        }
    }
}

/// A file grown past the size limit (RLIMIT_FSIZE) fails the write (EFBIG:
/// an error naming the file, resumable) instead of killing the process with
/// SIGXFSZ. For seed and round runs.
pub(super) fn ignore_file_size_signal() -> Result<()> {
    signal_hook::flag::register(SIGXFSZ, Arc::new(AtomicBool::new(false)))
        .context("installing signal handlers")?;
    Ok(())
}

/// A failed write, with what it means for `--resume` (`note`, worked out
/// from the paths; left out when the run's files were rescued instead).
#[derive(Debug, thiserror::Error)]
#[error("{failure} ({note})")]
pub(super) struct FailedWrite {
    failure: String,
    note: String,
}

/// The file a failed write was meant for.
#[derive(Clone, Copy)]
enum Failed {
    Out,
    Trace,
    /// A tape of `--tapes` (its error names it).
    Tape,
}

/// The games of this process's slice of the cohort.
struct ShardRange {
    seed_start: u32,
    games: u64,
}

/// Live progress on stderr: games done / total, moves/s, running mean, ETA,
/// and for searching policies decisions/s and the moves of games in flight.
struct Progress {
    bar: ProgressBar,
    show: bool,
    fair: bool,
    started: Instant,
    done: AtomicBool,
    games: AtomicU64,
    moves_done: AtomicU64,
    score_sum: AtomicU64,
    estimate_said: AtomicBool,
}

impl Progress {
    fn new(total: u64, show: bool, fair: bool) -> Progress {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        if let Ok(style) =
            ProgressStyle::with_template("{human_pos}/{human_len} games [{elapsed}] {bar:20} {msg}")
        {
            bar.set_style(style);
        }
        Progress {
            bar,
            show,
            fair,
            started: Instant::now(),
            done: AtomicBool::new(false),
            games: AtomicU64::new(0),
            moves_done: AtomicU64::new(0),
            score_sum: AtomicU64::new(0),
            estimate_said: AtomicBool::new(false),
        }
    }

    fn game_done(&self, score: u64, moves: u32) {
        self.games.fetch_add(1, Ordering::Relaxed);
        self.moves_done
            .fetch_add(u64::from(moves), Ordering::Relaxed);
        self.score_sum.fetch_add(score, Ordering::Relaxed);
        self.bar.inc(1);
    }

    /// Refreshes the message twice a second (only when shown).
    fn spawn_ticker<'s>(
        &'s self,
        scope: &'s std::thread::Scope<'s, '_>,
        moves_live: &'s AtomicU64,
    ) -> Option<std::thread::ScopedJoinHandle<'s, ()>> {
        if !self.show {
            return None;
        }
        Some(scope.spawn(move || {
            let mut shown = false;
            while !self.done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(100));
                let t = self.started.elapsed();
                if t < BAR_DELAY {
                    continue;
                }
                if !shown {
                    self.bar.set_draw_target(ProgressDrawTarget::stderr());
                    shown = true;
                }
                self.tick(t, moves_live);
                for _ in 0..4 {
                    if self.done.load(Ordering::Relaxed) {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        }))
    }

    fn tick(&self, t: Duration, moves_live: &AtomicU64) {
        let secs = t.as_secs_f64().max(1e-9);
        let games = self.games.load(Ordering::Relaxed);
        let total = self.bar.length().unwrap_or(0);
        let mean_eta = if games > 0 {
            let mean = self.score_sum.load(Ordering::Relaxed) as f64 / games as f64;
            let eta = secs / games as f64 * total.saturating_sub(games) as f64;
            format!("mean {mean:.1} | eta {}", human_duration(eta))
        } else {
            "no game finished yet".to_string()
        };
        let msg = if self.fair {
            let decisions = moves_live.load(Ordering::Relaxed);
            let in_flight = decisions.saturating_sub(self.moves_done.load(Ordering::Relaxed));
            format!(
                "| {:.1} decisions/s | {} in flight | {mean_eta}",
                decisions as f64 / secs,
                super::count(in_flight, "move")
            )
        } else {
            format!(
                "| {:.0} moves/s | {mean_eta}",
                self.moves_done.load(Ordering::Relaxed) as f64 / secs
            )
        };
        self.bar.set_message(msg);
        // One line with the estimate once a long run's rate is known.
        if games > 0
            && t > Duration::from_secs(5)
            && !self.estimate_said.swap(true, Ordering::Relaxed)
        {
            let eta = secs / games as f64 * total.saturating_sub(games) as f64;
            if eta > 60.0 {
                self.bar.println(format!(
                    "estimate: about {} for the remaining {} at the current rate",
                    human_duration(eta),
                    super::count(total - games, "game")
                ));
            }
        }
    }

    fn finish(&self) {
        self.done.store(true, Ordering::Relaxed);
        self.bar.finish_and_clear();
    }
}

fn human_duration(secs: f64) -> String {
    if secs < 120.0 {
        format!("{secs:.0} s")
    } else if secs < 7200.0 {
        format!("{:.0} min", secs / 60.0)
    } else {
        format!("{:.1} h", secs / 3600.0)
    }
}

/// What `--resume` found in the record file.
#[derive(Default)]
struct Kept {
    /// Totals of the records kept.
    stats: CohortStats,
    /// Bytes of partial or corrupt tail dropped.
    dropped_bytes: u64,
}

/// The files a run opened while setting up (`--out`, `--trace`) and the
/// folders it made (`--tapes`): a file or folder it created is removed if
/// the run cannot start (dropped before [`NewFiles::start`]), so a refused
/// run leaves nothing behind (one that existed before is never listed); and no file is emptied or cut (`--force`,
/// `--resume`) before [`NewFiles::start`], which runs once the policy (a D7P
/// engine's handshake, a transposition table) is ready: a run that cannot
/// start loses nothing already written.
#[derive(Default)]
pub struct NewFiles {
    /// (With a handle: a path that no longer names the file made, e.g.
    /// another process's file renamed over it, is not removed.)
    created: Vec<(PathBuf, Option<File>)>,
    /// Folders created for the run (a new `--tapes` folder and its new
    /// parents, outermost first): removed, if still empty, when it cannot start.
    created_dirs: Vec<PathBuf>,
    /// Files to cut to a length (and position at their end) when the run starts.
    cuts: Vec<Cut>,
}

struct Cut {
    file: File,
    len: u64,
    flag: &'static str,
    path: PathBuf,
}

impl NewFiles {
    /// Cuts `file` (of option `flag`) to `len` bytes when the run starts,
    /// leaving it positioned at its end (`file` shares its offset with the
    /// handle the run writes through).
    pub(super) fn cut_at_start(
        &mut self,
        file: &File,
        len: u64,
        flag: &'static str,
        path: &Path,
    ) -> Result<()> {
        let file = file
            .try_clone()
            .with_context(|| format!("cannot open {flag} {}", path.display()))?;
        self.cuts.push(Cut {
            file,
            len,
            flag,
            path: path.to_path_buf(),
        });
        Ok(())
    }

    /// Creates the folder `dir` and its missing parents (as `create_dir_all`),
    /// noting the ones it creates, so that a run that cannot start leaves
    /// no new empty folder behind. `flag` names the option in the error.
    pub(super) fn create_dir(&mut self, dir: &Path, flag: &str) -> Result<()> {
        let mut missing = Vec::new();
        let mut at = Some(dir);
        while let Some(d) = at.filter(|d| !d.as_os_str().is_empty() && !d.exists()) {
            missing.push(d.to_path_buf());
            at = d.parent();
        }
        // Without a trailing `/` (stat calls "afile/" no folder, not a file).
        let plain: PathBuf = dir.components().collect();
        if let Some(file) = std::iter::successors(Some(plain.as_path()), |d| d.parent())
            .find(|d| d.exists() && !d.is_dir())
        {
            let what = if file == plain { "" } else { " in its path" };
            anyhow::bail!(
                "cannot create {flag} directory {}: {}{what} is a file, not a folder",
                dir.display(),
                file.display()
            );
        }
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create {flag} directory {}", dir.display()))?;
        self.created_dirs.extend(missing.into_iter().rev());
        Ok(())
    }

    /// The folders created so far are kept whatever happens (another run
    /// holds them: see `rounds::lock_tapes`).
    pub(super) fn keep_dirs(&mut self) {
        self.created_dirs.clear();
    }

    /// The run starts: the pending cuts are made, and the files stay,
    /// whatever happens next.
    pub(super) fn start(&mut self) -> Result<()> {
        self.created.clear();
        self.created_dirs.clear();
        for mut c in self.cuts.drain(..) {
            let shown = c.path.display();
            c.file
                .set_len(c.len)
                .with_context(|| format!("cannot truncate {} {shown}", c.flag))?;
            c.file
                .seek(SeekFrom::End(0))
                .with_context(|| format!("cannot seek {} {shown}", c.flag))?;
        }
        Ok(())
    }
}

impl Drop for NewFiles {
    fn drop(&mut self) {
        for (path, file) in self.created.drain(..) {
            if file.as_ref().is_none_or(|f| still_named(f, &path)) {
                let _ = std::fs::remove_file(path);
            }
        }
        // Innermost first; `remove_dir` leaves a folder that is not empty.
        for dir in self.created_dirs.drain(..).rev() {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// Opens the file of option `flag` (`--out`, `--trace`) for writing without
/// truncating it, and takes the exclusive lock a writer holds for the whole
/// run: a second writer is refused, with nothing changed. A file it creates
/// is listed in `new`. Shared by seed runs, round runs and `--trace`.
pub(super) fn open_locked(path: &Path, flag: &str, new: &mut NewFiles) -> Result<File> {
    let shown = path.display();
    let mut options = OpenOptions::new();
    options.read(true).write(true);
    // A new file is known to be this run's own; anything else (an existing
    // file, a device, a link to a file) is opened as before and never removed.
    let listed = new.created.len();
    let file = match options.clone().create_new(true).open(path) {
        Ok(f) => {
            new.created.push((path.to_path_buf(), f.try_clone().ok()));
            f
        }
        Err(_) if is_fifo(path) => open_fifo_with_reader(path, flag)?,
        Err(_) => {
            // A dangling symlink of this user's: the file is made where the
            // link points, as a new file (so known to be this run's own,
            // listed under that name), if the path then names it.
            let made = dangling_own_link_end(path).and_then(|end| {
                let f = options.clone().create_new(true).open(&end).ok()?;
                if still_named(&f, path) {
                    new.created.push((end, f.try_clone().ok()));
                    Some(f)
                } else {
                    // The link changed meanwhile: this file is nobody's.
                    if still_named(&f, &end) {
                        let _ = std::fs::remove_file(&end);
                    }
                    None
                }
            });
            match made {
                Some(f) => f,
                None => options
                    .create(true)
                    .truncate(false)
                    .open(path)
                    .map_err(|e| match super::cohort::missing_folder(path) {
                        Some(why) => {
                            anyhow!("cannot open {flag} {shown}: {why} (nothing was written)")
                        }
                        None => {
                            anyhow::Error::new(e).context(format!("cannot open {flag} {shown}"))
                        }
                    })?,
            }
        }
    };
    match file.try_lock_exclusive() {
        Ok(true) => {}
        Ok(false) => {
            // Another drop7 writes the file now: not this run's to remove.
            new.created.truncate(listed);
            bail!(
                "{flag} {shown} is locked by another running drop7 (a second writer is refused; nothing was changed)"
            )
        }
        Err(e) => return Err(e).with_context(|| format!("cannot lock {flag} {shown}")),
    }
    // Another process may have renamed a file over the path (or removed it)
    // between the open and the lock, e.g. a `ray_cohort.py` placing its
    // records over an empty --out: this run would write into a file that no
    // longer has a name.
    // (The file it made stays listed: `NewFiles` removes a file only if its
    // name still names it.)
    if !still_named(&file, path) {
        bail!(
            "{flag} {shown} was replaced or removed by another process while this run opened it (nothing was written; run again)"
        );
    }
    Ok(file)
}

/// Where `path`, a symlink (or a chain of them) owned by this user that
/// names no file, points: the name an open through it would create. `None`
/// for anything else, a link of another user's included (the kernel's
/// `fs.protected_symlinks` may refuse to follow those: they are left to an
/// open through the link, which applies it).
#[cfg(unix)]
fn dangling_own_link_end(path: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    let mut at = path.to_path_buf();
    // At most 40 links, as Linux follows (ELOOP past that).
    for _ in 0..40 {
        let link = std::fs::symlink_metadata(&at).ok()?;
        if !link.is_symlink() || link.uid() != me {
            return None;
        }
        let to = std::fs::read_link(&at).ok()?;
        at = if to.is_absolute() {
            to
        } else {
            at.parent()?.join(to)
        };
        match std::fs::symlink_metadata(&at) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Some(at),
            Err(_) => return None,
            Ok(_) => {}
        }
    }
    None
}

#[cfg(not(unix))]
fn dangling_own_link_end(_path: &Path) -> Option<PathBuf> {
    None
}

/// At the end of a run: if another process renamed a file over `path` (the
/// run's `flag`, `--out` or `--trace`) or removed it during the run (`mv
/// other.jsonl OUT`), what this run wrote went to a file that no longer has
/// any name (no link left). It is copied to a new file beside `path` (else,
/// e.g. when that folder is gone, in the working directory) so that nothing
/// this run wrote is lost, and the returned message names both. A file
/// that still has a name (moved, behind a retargeted symlink, a device or
/// FIFO) is left alone: `None`.
pub(super) fn rescue_if_unlinked(file: &File, flag: &str, path: &Path) -> Option<String> {
    if !unlinked(file) {
        return None;
    }
    let shown = path.display();
    let what = if flag == "--trace" {
        "trace lines"
    } else {
        "records"
    };
    // Replaced when the path reaches another file now; removed when it
    // reaches nothing, or only this file (`/proc/self/fd/1` of a removed
    // file: `--out /dev/stdout > FILE`, then `rm FILE`).
    let happened = if std::fs::metadata(path).is_ok() && !still_named(file, path) {
        "was replaced by another process during the run: its file is kept as it is, and"
    } else {
        "was removed by another process during the run;"
    };
    let len = match file.metadata() {
        Ok(m) if m.len() == 0 => {
            return Some(format!(
                "{flag} {shown} {happened} this run had written none of its {what} to it yet"
            ));
        }
        Ok(m) => m.len(),
        Err(e) => {
            return Some(format!(
                "{flag} {shown} {happened} this run's {what} could not be read back ({e})"
            ));
        }
    };
    let (saved, rescued) = save_copy(file, len, flag, path);
    Some(match saved {
        Ok(()) => format!(
            "{flag} {shown} {happened} this run's {what} are in {}",
            rescued.display()
        ),
        Err(e) if rescued.as_os_str().is_empty() => format!(
            "{flag} {shown} {happened} this run's {what} could not be saved beside it or in the working directory ({e})"
        ),
        Err(e) => format!(
            "{flag} {shown} {happened} this run's {what} could be copied only in part, to {} ({e})",
            rescued.display()
        ),
    })
}

/// Copies the `len` bytes of `file` to a new file named after `path`
/// (`NAME.rescued-PID[-N].jsonl`): beside `path`, else in the working
/// directory (also for a path under /dev or /proc), else there under a
/// short name (`out.rescued-PID.jsonl`, for a name too long to extend).
/// Returns the outcome and the copy's name (empty if none was made).
fn save_copy(file: &File, len: u64, flag: &str, path: &Path) -> (io::Result<()>, PathBuf) {
    let name = path
        .file_name()
        .map_or_else(|| "out".to_string(), |n| n.to_string_lossy().into_owned());
    let short = flag.trim_start_matches('-');
    let special = path.starts_with("/dev") || path.starts_with("/proc");
    let (beside, here) = (path.parent().unwrap_or(Path::new("")), Path::new(""));
    let mut places = vec![(here, name.as_str()), (here, short)];
    if !special {
        places.insert(0, (beside, name.as_str()));
    }
    let mut last = io::Error::other("no free name");
    for (dir, base) in places {
        for n in 0..100u32 {
            let suffix = if n == 0 {
                String::new()
            } else {
                format!("-{n}")
            };
            let copy = dir.join(format!(
                "{base}.rescued-{}{suffix}.jsonl",
                std::process::id()
            ));
            match OpenOptions::new().write(true).create_new(true).open(&copy) {
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    last = e;
                    break;
                }
                Ok(mut f) => {
                    let mut reader = file;
                    let copied = reader
                        .seek(SeekFrom::Start(0))
                        .and_then(|_| io::copy(&mut io::Read::take(reader, len), &mut f));
                    // A copy of a file at the size limit may end in EFBIG
                    // once all of it is written: complete all the same.
                    let whole = f.metadata().is_ok_and(|m| m.len() == len);
                    let saved = match copied {
                        Ok(n) if n == len => f.sync_all(),
                        Ok(n) => Err(io::Error::other(format!("{n} of {len} bytes copied"))),
                        Err(_) if whole => f.sync_all(),
                        Err(e) => Err(e),
                    };
                    return (saved, copy);
                }
            }
        }
    }
    (Err(last), PathBuf::new())
}

/// The end of a run that wrote its `--out` file (`out`: the open file and
/// its path) and its `--trace`, whether its writing `finished` or failed:
/// [`rescue_if_unlinked`] for each file, then `finished`, or one error that
/// names the failure (if any) and every rescued copy.
pub(super) fn finish_with_rescue<T>(
    finished: Result<T>,
    out: Option<(&File, &Path)>,
    trace: Option<&TraceOut>,
) -> Result<T> {
    let out = out.map(|(file, path)| (file, "--out", path));
    let trace = trace.map(|t| {
        let (file, path) = t.file();
        (file, "--trace", path)
    });
    let mut lost: Vec<String> = [out, trace]
        .into_iter()
        .flatten()
        .filter_map(|(file, flag, path)| rescue_if_unlinked(file, flag, path))
        .collect();
    match finished {
        Ok(v) if lost.is_empty() => Ok(v),
        Ok(_) => bail!("{}", lost.join("; ")),
        Err(e) if lost.is_empty() => Err(e),
        Err(e) => {
            // The failed write's note on --resume is about the paths, which
            // no longer name this run's files: the copies are what to resume.
            let failure = match e.downcast_ref::<FailedWrite>() {
                Some(w) => w.failure.clone(),
                None => format!("{e:#}"),
            };
            lost.insert(0, failure);
            bail!("{}", lost.join("; "))
        }
    }
}

/// Whether the open `file` has no name left (a regular file whose last
/// link was removed or renamed over).
fn unlinked(file: &File) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        file.metadata().is_ok_and(|m| m.is_file() && m.nlink() == 0)
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        false
    }
}

/// Where a run's summary goes, and that stream's name: standard output,
/// but standard error when one of the run's `outputs` (`--out`, `--trace`)
/// is standard output (`--out /dev/stdout > FILE`), whose records a summary
/// written there too would overwrite.
pub(super) fn summary_sink<'a>(
    outputs: impl IntoIterator<Item = Option<&'a Path>>,
) -> (Box<dyn Write>, &'static str) {
    if outputs.into_iter().flatten().any(is_stdout) {
        (Box::new(io::stderr().lock()), "stderr")
    } else {
        (Box::new(io::stdout().lock()), "stdout")
    }
}

/// Whether `path` is this process's standard output (same device and
/// inode: `/dev/stdout`, `/proc/self/fd/1`, or the file stdout is
/// redirected to).
pub(super) fn is_stdout(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        io::stdout()
            .as_fd()
            .try_clone_to_owned()
            .is_ok_and(|fd| still_named(&File::from(fd), path))
            && std::fs::metadata(path).is_ok()
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// Whether `path` still names the open `file` (same device and inode).
fn still_named(file: &File, path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (file.metadata(), std::fs::metadata(path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            (Ok(_), Err(e)) => e.kind() != std::io::ErrorKind::NotFound,
            (Err(_), _) => true,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (file, path);
        true
    }
}

fn is_fifo(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo())
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// Opens a FIFO (e.g. a `>(gzip > x.gz)` process substitution) for writing
/// only when a reader has it open: opened for reading and writing as a file
/// is, a FIFO with no reader would take the records into its buffer and
/// lose them, then block the run once the buffer is full.
#[cfg(unix)]
fn open_fifo_with_reader(path: &Path, flag: &str) -> Result<File> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let shown = path.display();
    let file = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ENXIO) {
                anyhow!("{flag} {shown} is a FIFO with no reader: start its reader first (nothing was written)")
            } else {
                anyhow::Error::new(e).context(format!("cannot open {flag} {shown}"))
            }
        })?;
    let fd = file.as_raw_fd();
    // SAFETY: `fd` is the open descriptor of `file`, alive for these calls;
    // F_GETFL/F_SETFL only read and set its status flags (back to blocking
    // writes, as for a regular file).
    let cleared = unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        flags >= 0 && libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) == 0
    };
    if !cleared {
        return Err(std::io::Error::last_os_error())
            .with_context(|| format!("cannot open {flag} {shown}"));
    }
    Ok(file)
}

#[cfg(not(unix))]
fn open_fifo_with_reader(path: &Path, flag: &str) -> Result<File> {
    bail!("cannot open {flag} {}: a FIFO", path.display())
}

/// Opens and locks `--out`. Without `--resume`: refuses an existing non-empty
/// file unless `--force`, else empties it when the run starts. With
/// `--resume`: streams the file and keeps the longest prefix of complete
/// records of this run (seed by seed, identity field by field), drops only an
/// interrupted last record and positions at the end, when the run starts. Anything else is refused with the file untouched.
fn open_out(
    path: &Path,
    args: &PlayArgs,
    template: &GameRecord,
    range: &ShardRange,
    mut trace: Option<&mut TraceCheck>,
    new: &mut NewFiles,
) -> Result<(File, Kept)> {
    let shown = path.display();
    let file = open_locked(path, "--out", new)?;
    let len = file
        .metadata()
        .with_context(|| format!("cannot read --out {shown}"))?
        .len();
    let regular = file
        .metadata()
        .with_context(|| format!("cannot read --out {shown}"))?
        .is_file();
    if !args.resume {
        if len > 0 && !args.force {
            bail!(
                "--out {shown} exists and is not empty: add --resume to continue it (if it holds this run's records) or --force to overwrite it (nothing was changed)"
            );
        }
        // A device or pipe (e.g. /dev/null) is written as it is.
        if regular {
            new.cut_at_start(&file, 0, "--out", path)?;
        }
        return Ok((file, Kept::default()));
    }
    if !regular {
        bail!("--out {shown} is not a regular file: --resume needs one");
    }
    let mut kept = Kept::default();
    let mut lines = RecordLines::new(BufReader::with_capacity(1 << 16, &file));
    let mut tail = Vec::new();
    let mut pos = 0u64;
    while let Some(l) = lines
        .next_line()
        .with_context(|| format!("cannot read --out {shown} to resume"))?
    {
        if !l.complete {
            tail = l.bytes.to_vec();
            break;
        }
        let index = kept.stats.games;
        let line = index + 1;
        let Some(text) = l.text() else {
            let what = super::not_utf8(l.bytes);
            bail!("--out {shown} line {line}: {what}; not resuming (nothing was changed)");
        };
        let rec = match parse_record_line(text) {
            Ok(r) => r,
            Err(e) => bail!("--out {shown} line {line}: {e}; not resuming (nothing was changed)"),
        };
        if let Some((field, found, want)) = identity_difference(template, &rec) {
            let (found, want) = (super::shown(&found), super::shown(&want));
            bail!(
                "--out {shown} line {line} was written by another run: {field} is {found} there but {want} here; not resuming (nothing was changed)"
            );
        }
        if rec.shard != template.shard {
            bail!(
                "--out {shown} line {line} was written by another run: shard is {} there but {} here; not resuming (nothing was changed)",
                rec.shard.as_deref().unwrap_or("(none)"),
                template.shard.as_deref().unwrap_or("(none)")
            );
        }
        if index == range.games {
            bail!(
                "--out {shown} already holds more than this run's {}; not resuming (nothing was changed)",
                super::count(range.games, "game")
            );
        }
        let want = seed_hex(nth_seed(range.seed_start, index));
        if rec.seed != want {
            bail!(
                "--out {shown} line {line} is game {} but this run's game {line} is {want}; not resuming (nothing was changed)",
                rec.seed
            );
        }
        if let Some(t) = trace.as_mut() {
            t.game(&rec, line)?;
        }
        kept.stats.add(&rec);
        pos += l.len;
    }
    // Only an interrupted last record (no newline yet) may be dropped.
    if !super::interrupted_tail(&tail, b"{\"seed\":\"0x") {
        bail!(
            "--out {shown} ends with {} that {} not the start of a game record; not resuming (nothing was changed)",
            super::count(tail.len(), "byte"),
            if tail.len() == 1 { "is" } else { "are" }
        );
    }
    drop(lines);
    kept.dropped_bytes = len - pos;
    new.cut_at_start(&file, pos, "--out", path)?;
    Ok((file, kept))
}

fn print_summary(
    setup: &GameSetup,
    cfg: &CohortConfig,
    range: &ShardRange,
    kept: &Kept,
    args: &PlayArgs,
    run: &CohortSummary,
) -> io::Result<()> {
    let out = args.out.as_deref();
    let mut all = kept.stats.clone();
    all.merge(&run.stats);
    // This run's seeds: the shard's with --shard, else the cohort's.
    let seeds = match range.games {
        0 => "none".to_string(),
        n => format!(
            "{}..{}",
            seed_hex(range.seed_start),
            seed_hex(nth_seed(range.seed_start, n - 1))
        ),
    };
    // As parsed (and written in the records): `01/02` is shard 1/2.
    let shard = args
        .shard
        .as_deref()
        .and_then(|s| parse_shard(s).ok())
        .map_or_else(String::new, |(i, n)| format!("shard {i}/{n}, "));
    let (mut o, _) = summary_sink([out, args.trace.as_deref()]);
    writeln!(
        o,
        "games      {} ({shard}seeds {seeds}, policy {}, driver {}, move cap {})",
        all.games,
        setup.policy,
        setup.driver.as_str(),
        setup.max_moves
    )?;
    if all.games == 0 {
        // A shard or a resumed run with no game: no statistics to make up.
        writeln!(o, "score      none (no game)")?;
        writeln!(o, "moves      none (no game)")?;
    } else {
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
    }
    if all.censored > 0 {
        writeln!(
            o,
            "censored   {} reached the move cap",
            super::count(all.censored, "game")
        )?;
    }
    if all.fallback_games > 0 {
        // A D7P engine that failed or chose an illegal column: drop7 played
        // those moves (their records count them; `drop7 summary` too).
        writeln!(
            o,
            "fallbacks  {} of {} had {} and {}: drop7 played the first legal column there",
            all.fallback_games,
            super::count(all.games, "game"),
            super::count(all.engine_failures, "engine failure"),
            super::count(all.illegal_choices, "illegal choice"),
        )?;
    }
    if let Some(p) = out {
        if kept.stats.games > 0 || kept.dropped_bytes > 0 {
            writeln!(
                o,
                "resumed    kept {} from {}, dropped {} of incomplete tail, played {}",
                super::count(kept.stats.games, "game"),
                p.display(),
                super::count(kept.dropped_bytes, "byte"),
                run.stats.games
            )?;
        }
        writeln!(o, "records    {}", p.display())?;
    }
    if let Some(t) = &args.trace {
        writeln!(o, "trace      {}", t.display())?;
    }
    let secs = run.elapsed.as_secs_f64();
    writeln!(
        o,
        "elapsed    {secs:.3} s for the {} played in this run ({:.0} moves/s)",
        super::count(run.stats.games, "game"),
        run.moves_per_second()
    )?;
    if cfg.games == 0 {
        writeln!(o, "threads    none (no game to play)")?;
    } else if setup.search_threads > 1 {
        writeln!(
            o,
            "threads    {} ({} at a time, each decision split over {} threads: records' work and nodes vary)",
            run.threads * setup.search_threads,
            super::count(run.threads as u64, "game"),
            setup.search_threads
        )?;
    } else {
        writeln!(o, "threads    {}", run.threads)?;
    }
    writeln!(
        o,
        "engine     {} (gravity {})",
        setup.engine.name(),
        setup.engine.gravity_name()
    )?;
    o.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An empty scratch folder for one test.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("drop7-play-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// `--resume` is suggested only for regular files that records reached.
    #[test]
    fn a_failed_write_suggests_resume_only_when_it_can() {
        let dir = scratch("note");
        let (empty, full) = (dir.join("empty.jsonl"), dir.join("full.jsonl"));
        std::fs::write(&empty, "").unwrap();
        std::fs::write(&full, "{\"seed\":\"0x00000001\"}\n").unwrap();
        let device = Path::new("/dev/null");
        assert_eq!(
            after_failed_write(&full, None, false),
            "the complete records written so far are kept; rerun with --resume to continue"
        );
        assert_eq!(
            after_failed_write(&empty, None, false),
            "no record was written to it: nothing to resume"
        );
        assert_eq!(
            after_failed_write(&empty, Some(&full), true),
            format!(
                "no record was written to --out {} yet; rerun with --resume to start again from the first game",
                empty.display()
            )
        );
        assert_eq!(
            after_failed_write(device, None, false),
            "not a regular file: --resume cannot continue this run"
        );
        assert_eq!(
            after_failed_write(&full, Some(device), false),
            "--trace /dev/null is not a regular file: --resume cannot continue this run"
        );
        assert_eq!(
            after_failed_write(&full, Some(device), true),
            "not a regular file: --resume cannot continue this run"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A path that another process renamed a file over, or removed, after
    /// this run opened it no longer names the open file.
    #[test]
    fn a_replaced_out_is_noticed() {
        let dir = scratch("named");
        let (out, other) = (dir.join("out.jsonl"), dir.join("other.jsonl"));
        std::fs::write(&out, "").unwrap();
        let file = File::open(&out).unwrap();
        assert!(still_named(&file, &out));
        assert!(still_named(
            &File::open("/dev/null").unwrap(),
            Path::new("/dev/null")
        ));
        std::fs::write(&other, "theirs\n").unwrap();
        std::fs::rename(&other, &out).unwrap();
        assert_eq!(still_named(&file, &out), !cfg!(unix));
        std::fs::remove_file(&out).unwrap();
        assert_eq!(still_named(&file, &out), !cfg!(unix));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A run that cannot start, given a dangling symlink, removes the file
    /// its open made at the link's target and keeps the link; one that
    /// starts keeps the file.
    #[cfg(unix)]
    #[test]
    fn a_failed_start_through_a_dangling_symlink_leaves_the_link_alone() {
        let dir = scratch("dangling");
        let (link, target) = (dir.join("out.jsonl"), dir.join("target.jsonl"));
        std::os::unix::fs::symlink("target.jsonl", &link).unwrap();
        let mut new = NewFiles::default();
        drop(open_locked(&link, "--out", &mut new).unwrap());
        assert!(target.is_file());
        drop(new);
        assert!(!target.exists());
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
        let mut new = NewFiles::default();
        drop(open_locked(&link, "--out", &mut new).unwrap());
        new.start().unwrap();
        drop(new);
        assert!(target.is_file());
        // A chain of links (relative, into a folder) ends at its last name;
        // a link to an existing file is not dangling, and that file is kept.
        std::fs::create_dir(dir.join("sub")).unwrap();
        std::os::unix::fs::symlink("sub/b", dir.join("a")).unwrap();
        std::os::unix::fs::symlink("../c.jsonl", dir.join("sub/b")).unwrap();
        assert_eq!(
            dangling_own_link_end(&dir.join("a")),
            Some(dir.join("sub/../c.jsonl"))
        );
        assert_eq!(dangling_own_link_end(&link), None);
        assert_eq!(dangling_own_link_end(&target), None);
        let mut new = NewFiles::default();
        drop(open_locked(&dir.join("a"), "--out", &mut new).unwrap());
        assert!(dir.join("c.jsonl").is_file());
        drop(new);
        assert!(!dir.join("c.jsonl").exists());
        std::fs::write(dir.join("c.jsonl"), "theirs\n").unwrap();
        let mut new = NewFiles::default();
        drop(open_locked(&dir.join("a"), "--out", &mut new).unwrap());
        drop(new);
        assert_eq!(
            std::fs::read_to_string(dir.join("c.jsonl")).unwrap(),
            "theirs\n"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Records written to an --out that was renamed over during the run are
    /// copied beside it at the end; the other process's file is untouched.
    #[cfg(unix)]
    #[test]
    fn records_of_a_replaced_out_are_rescued() {
        // (A file that was only moved keeps its records: no rescue.)
        let dir = scratch("rescue");
        let (out, other) = (dir.join("out.jsonl"), dir.join("other.jsonl"));
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&out)
            .unwrap();
        file.write_all(b"{\"seed\":\"0x00000001\"}\n").unwrap();
        assert_eq!(rescue_if_unlinked(&file, "--out", &out), None);
        let moved = dir.join("moved.jsonl");
        std::fs::rename(&out, &moved).unwrap();
        assert_eq!(rescue_if_unlinked(&file, "--out", &out), None);
        std::fs::rename(&moved, &out).unwrap();
        std::fs::write(&other, "theirs\n").unwrap();
        std::fs::rename(&other, &out).unwrap();
        let e = rescue_if_unlinked(&file, "--out", &out).unwrap();
        let rescued = dir.join(format!("out.jsonl.rescued-{}.jsonl", std::process::id()));
        assert!(
            e.starts_with(&format!("--out {} was replaced", out.display()))
                && e.ends_with(&format!("this run's records are in {}", rescued.display())),
            "{e}"
        );
        assert_eq!(
            std::fs::read_to_string(&rescued).unwrap(),
            "{\"seed\":\"0x00000001\"}\n"
        );
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "theirs\n");
        // Nothing written yet: nothing to copy, and said so.
        let empty = dir.join("empty.jsonl");
        let none = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&empty)
            .unwrap();
        std::fs::remove_file(&empty).unwrap();
        assert_eq!(
            rescue_if_unlinked(&none, "--out", &empty).unwrap(),
            format!(
                "--out {} was removed by another process during the run; this run had written none of its records to it yet",
                empty.display()
            )
        );
        // Removed, not replaced: said so; a second copy takes a new name.
        std::fs::remove_file(&out).unwrap();
        let e = rescue_if_unlinked(&file, "--trace", &out).unwrap();
        let second = dir.join(format!("out.jsonl.rescued-{}-1.jsonl", std::process::id()));
        assert_eq!(
            e,
            format!(
                "--trace {} was removed by another process during the run; this run's trace lines are in {}",
                out.display(),
                second.display()
            )
        );
        assert_eq!(
            std::fs::read(&second).unwrap(),
            std::fs::read(&rescued).unwrap()
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

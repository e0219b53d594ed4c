//! `drop7 play --round FILE...` (scripted rounds, formats.md) and `--tapes DIR`
//! (recorded tapes of every game played).

use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use anyhow::{Context, Result, anyhow, bail};
use drop7::formats::{GameRecord, seed_hex};
use drop7::game::DriverKind;
use drop7::gravity::Portable;
use drop7::latent::{CoreEngine, TrackedGame};
use drop7::round::{RoundResult, ScriptedRound, play_round_until};
use drop7::runner::{EngineGame, PackedEngine, Policy, RunLabels, available_threads};
use drop7::runspec::{record_template, stamp_record};
use drop7::tape::Tape;

use super::spec::{GameArgs, PolicySpec, with_engine, with_policy};

/// Takes the `--tapes` folder `dir` for this run: an exclusive lock on the
/// folder itself (`flock`, as `--out` is locked; no file is made), held as
/// long as the handle returned. A second run given the same folder is
/// refused before it writes anything: each would write over the other's
/// tapes. (Not on other systems than Unix: `None`.)
pub fn lock_tapes(dir: &Path, new: &mut super::play::NewFiles) -> Result<Option<fs::File>> {
    #[cfg(unix)]
    {
        use fs4::fs_std::FileExt;
        let shown = dir.display();
        let folder = fs::File::open(dir)
            .with_context(|| format!("cannot open --tapes directory {shown}"))?;
        match folder.try_lock_exclusive() {
            Ok(true) => Ok(Some(folder)),
            Ok(false) => {
                // The folder is the other run's even if this run made it
                // too (both started together): it is not removed.
                new.keep_dirs();
                bail!(
                    "--tapes {shown} is in use by another running drop7 (a second run writing \
                     tapes there is refused; nothing was changed)"
                )
            }
            Err(e) => Err(e).with_context(|| format!("cannot lock --tapes directory {shown}")),
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (dir, new);
        Ok(None)
    }
}

fn write_tape(dir: &Path, name: &str, tape: &Tape) -> Result<(), String> {
    let path = dir.join(tape_file(name));
    // (Checked before the run too; a FIFO put there since would block.)
    // (`symlink_metadata`: a symlink is not a regular file here.)
    if fs::symlink_metadata(&path).is_ok_and(|m| !m.is_file()) {
        return Err(format!(
            "writing tape {}: not a regular file",
            path.display()
        ));
    }
    let text = serde_json::to_string(tape).map_err(|e| e.to_string())?;
    // Whole or not at all: written beside it, then renamed over it, so that
    // a run killed mid-write (kill -9) leaves no half tape, which a resume
    // could not tell from another run's file.
    let partial = dir.join(format!(".{}.partial", tape_file(name)));
    let failed = |e: io::Error| {
        format!(
            "writing tape {} (through {}): {e}",
            path.display(),
            partial.display()
        )
    };
    // Whatever is at the temporary name (a stale partial tape, or a symlink,
    // FIFO or device put there) is removed, not opened: the tape is made as
    // a new file (`create_new`: O_EXCL, which follows no symlink), so it
    // never writes through a link to another file nor blocks on a FIFO. A
    // folder there stays, and the create fails naming it.
    let _ = fs::remove_file(&partial);
    let written = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&partial)
        .and_then(|mut f| f.write_all((text + "\n").as_bytes()));
    if let Err(e) = written {
        // (A folder there is left: `remove_file` does not remove one.)
        let _ = fs::remove_file(&partial);
        return Err(failed(e));
    }
    fs::rename(&partial, &path).map_err(|e| {
        let _ = fs::remove_file(&partial);
        failed(e)
    })
}

/// The file name of the tape of `name` (a seed's `0x…` or a round's id).
pub fn tape_file(name: &str) -> String {
    format!("{name}.tape.json")
}

/// Refuses `--out`/`--trace` (`flag`) at a tape's name (`*.tape.json`)
/// inside the `--tapes` folder `dir`: the run would write its records or
/// trace and a tape into one file (each writer over the other's bytes).
pub(super) fn refuse_output_among_tapes(dir: &Path, flag: &str, path: &Path) -> Result<()> {
    let is_tape_name = path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(".tape.json"));
    if !is_tape_name {
        return Ok(());
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if super::same::same_file(parent, dir) {
        bail!(
            "{flag} {} is a tape's name in --tapes {}: the run would write both into one file; \
             pick another name (nothing was changed)",
            path.display(),
            dir.display()
        );
    }
    Ok(())
}

/// Longest round `id` written as a tape file name (`ID.tape.json`), in bytes.
pub const MAX_TAPE_ID_BYTES: usize = 200;

/// Why a round's `id` cannot name its tape file `DIR/ID.tape.json` (the
/// format allows any string; `--tapes` takes only a plain file name).
fn tape_id_problem(id: &str) -> Option<String> {
    if id.is_empty() {
        Some("it is empty".into())
    } else if id == "." || id == ".." {
        Some(format!("{id} names a folder"))
    } else if id.contains(['/', '\\']) {
        Some("it contains a / or \\".into())
    } else if id.chars().any(super::hides_text) {
        Some("it contains a control or bidirectional-control character".into())
    } else if id.len() > MAX_TAPE_ID_BYTES {
        Some(format!(
            "it is {} bytes long (limit {MAX_TAPE_ID_BYTES})",
            id.len()
        ))
    } else {
        None
    }
}

/// What a run may do with a tape of its own name already in `--tapes`.
#[derive(Clone, Copy, Debug)]
pub enum ExistingTapes<'a> {
    /// Refuse the run (no `--force`): `--tapes` overwrites only with
    /// `--force`, as `--out` and `--trace` do.
    Refuse,
    /// Replace it (`--force`).
    Replace,
    /// Replace it only if it names this `policy` and `driver` (a `--resume`:
    /// its `--out` proves nothing about the folder's files); another run's,
    /// or a file that is no tape, is refused.
    ReplaceOwn {
        /// This run's policy label.
        policy: &'a str,
        /// This run's driver name.
        driver: &'a str,
    },
}

/// Refuses (nothing changed) a tape in `dir` that this run would write
/// (`ours` says which file names are) unless `existing` lets it be
/// replaced, and always one that is not a regular file.
pub fn refuse_existing_tapes(
    dir: &Path,
    existing: ExistingTapes<'_>,
    ours: impl Fn(&str) -> bool,
) -> Result<()> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => {
            return Err(e)
                .with_context(|| format!("cannot read --tapes directory {}", dir.display()));
        }
    };
    let mut found: Vec<String> = Vec::new();
    for entry in entries {
        let entry =
            entry.with_context(|| format!("cannot read --tapes directory {}", dir.display()))?;
        if let Some(name) = entry.file_name().to_str()
            && ours(name)
        {
            // Even with --force: a FIFO, device or folder in a tape's place
            // would block the run or take the tape, and a symlink would have
            // the tape written over whatever file it points to.
            // (The entry's own type: a symlink is not followed.)
            let kind = entry.file_type().ok();
            if kind.is_some_and(|k| k.is_symlink()) {
                bail!(
                    "--tapes {} is a symlink (a tape would replace the file it points to): nothing was written",
                    entry.path().display()
                );
            }
            if !kind.is_some_and(|k| k.is_file()) {
                bail!(
                    "--tapes {} is not a regular file: nothing was written",
                    entry.path().display()
                );
            }
            if let ExistingTapes::ReplaceOwn { policy, driver } = existing {
                refuse_foreign_tape(&entry.path(), policy, driver)?;
            }
            found.push(name.to_string());
        }
    }
    if !matches!(existing, ExistingTapes::Refuse) {
        return Ok(());
    }
    found.sort();
    let Some(first) = found.first() else {
        return Ok(());
    };
    let more = match found.len() - 1 {
        0 => String::new(),
        n => format!(" (and {n} more that this run would write)"),
    };
    bail!(
        "--tapes {} exists{more}: add --force to overwrite (nothing was changed)",
        dir.join(first).display()
    )
}

/// Refuses the tape at `path` unless it names this `policy` and `driver`
/// (see [`ExistingTapes::ReplaceOwn`]).
fn refuse_foreign_tape(path: &Path, policy: &str, driver: &str) -> Result<()> {
    let field = |v: &serde_json::Value, k: &str| v[k].as_str().map(str::to_string);
    let theirs = super::read_capped(path)
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .map(|v| (field(&v, "policy"), field(&v, "driver")));
    if theirs == Some((Some(policy.to_string()), Some(driver.to_string()))) {
        return Ok(());
    }
    let what = match theirs {
        Some((Some(p), Some(d))) => format!("was written by policy {p}, driver {d}"),
        _ => "is not a tape of this run".to_string(),
    };
    bail!(
        "--tapes {} {what} (this run: policy {policy}, driver {driver}): add --force to overwrite it (nothing was changed)",
        path.display()
    )
}

/// Refuses a round given twice (the same id and generator seed, whether
/// the same file or a copy): its two records would be one game counted
/// twice, which `summary` and `compare` refuse.
fn refuse_repeated_rounds(files: &[PathBuf], rounds: &[ScriptedRound]) -> Result<()> {
    let mut seen: std::collections::HashMap<(&str, u32), &Path> = std::collections::HashMap::new();
    for (f, r) in files.iter().zip(rounds) {
        if let Some(other) = seen.insert((r.id.as_str(), r.generator_seed), f) {
            let which = if other == f.as_path() {
                format!("round file {} is given twice", f.display())
            } else {
                format!(
                    "round files {} and {} are the same round",
                    other.display(),
                    f.display()
                )
            };
            bail!(
                "{which} (id {:?}, generator seed {}): its records would count one game twice (nothing was changed)",
                r.id,
                drop7::formats::seed_hex(r.generator_seed)
            );
        }
    }
    Ok(())
}

/// Checks the tape names of `rounds` (read from `files`) before anything is
/// written: each `id` a plain file name, no two alike, none already in `dir`
/// unless `force`.
fn check_round_tapes(
    dir: &Path,
    files: &[PathBuf],
    rounds: &[ScriptedRound],
    force: bool,
) -> Result<()> {
    let mut names: std::collections::HashMap<String, &Path> = std::collections::HashMap::new();
    for (f, r) in files.iter().zip(rounds) {
        if let Some(why) = tape_id_problem(&r.id) {
            bail!(
                "round file {}: id {:?} cannot name its tape file with --tapes: {why} (nothing was changed)",
                f.display(),
                r.id
            );
        }
        let name = tape_file(&r.id);
        // (A file given twice was refused before: `refuse_repeated_rounds`.)
        if let Some(other) = names.insert(name.clone(), f) {
            bail!(
                "round files {} and {} both have id {:?}: both tapes would be {} (nothing was changed)",
                other.display(),
                f.display(),
                r.id,
                dir.join(&name).display()
            );
        }
    }
    let existing = if force {
        ExistingTapes::Replace
    } else {
        ExistingTapes::Refuse
    };
    refuse_existing_tapes(dir, existing, |n| names.contains_key(n))
}

/// Writes the tape of the finished seed game `seed` (played with `columns`
/// under `driver` by `policy`) into `dir` as `SEED.tape.json`: the game is
/// replayed on the packed engine and its reveal values written down. Whole
/// or not at all; `Err` names the tape.
pub fn write_seed_tape(
    dir: &Path,
    seed: u32,
    columns: &[u8],
    driver: DriverKind,
    policy: &str,
) -> Result<(), String> {
    let mut g = match driver {
        DriverKind::Headless => TrackedGame::headless(PackedEngine(Portable), seed),
        DriverKind::Stream => TrackedGame::stream(PackedEngine(Portable), seed),
    };
    for &c in columns {
        if g.play_move(usize::from(c), &mut ()).is_err() {
            break;
        }
    }
    let mut tape = Tape::of_game(&g);
    tape.seed = Some(seed_hex(seed));
    tape.policy = Some(policy.to_string());
    tape.driver = Some(driver.as_str().to_string());
    write_tape(dir, &seed_hex(seed), &tape)
}

/// Plays `rounds` on up to `threads` workers and hands each result to
/// `deliver` on the calling thread, in the order given (a round finished
/// early waits for the ones before it), `None` for a round abandoned or not
/// started once `stop` was raised. When `deliver` returns false (a failed
/// write) no new round starts and nothing more is delivered.
fn play_all<E, P, F>(
    engine: E,
    make: F,
    rounds: &[ScriptedRound],
    labels: &RunLabels,
    threads: usize,
    stop: &AtomicBool,
    deliver: &mut dyn FnMut(usize, Option<RoundResult>) -> bool,
) where
    E: CoreEngine + Send + Sync,
    P: Policy,
    F: Fn() -> P + Sync,
{
    let failed = AtomicBool::new(false);
    let halted = || stop.load(Ordering::Relaxed) || failed.load(Ordering::Relaxed);
    let threads = threads.clamp(1, rounds.len().max(1));
    if threads == 1 {
        let mut policy = make();
        for (i, r) in rounds.iter().enumerate() {
            let res = if halted() {
                None
            } else {
                play_round_until(engine, &mut policy, r, labels, Some(stop))
            };
            if !deliver(i, res) {
                return;
            }
        }
        return;
    }
    let cursor = AtomicUsize::new(0);
    std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::channel::<(usize, Option<RoundResult>)>();
        for _ in 0..threads {
            let tx = tx.clone();
            let (cursor, make, halted) = (&cursor, &make, &halted);
            s.spawn(move || {
                let mut policy = make();
                while !halted() {
                    let i = cursor.fetch_add(1, Ordering::Relaxed);
                    let Some(r) = rounds.get(i) else { break };
                    let res = play_round_until(engine, &mut policy, r, labels, Some(stop));
                    if tx.send((i, res)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        // Results wait here until the rounds before them are delivered.
        let mut pending = std::collections::BTreeMap::new();
        let mut next = 0;
        for (i, res) in rx {
            pending.insert(i, res);
            while let Some(res) = pending.remove(&next) {
                if failed.load(Ordering::Relaxed) {
                    break;
                }
                if !deliver(next, res) {
                    failed.store(true, Ordering::Relaxed);
                }
                next += 1;
            }
        }
        // The rounds never started (stopped) or never received.
        while next < rounds.len() && !failed.load(Ordering::Relaxed) {
            if !deliver(next, pending.remove(&next).flatten()) {
                break;
            }
            next += 1;
        }
    });
}

/// Runs `drop7 play --round FILE...`.
/// Opens `--out` of a round run as `play --out` does: locked while the run
/// writes it (a second writer is refused), a non-empty file refused without
/// `--force` (nothing changed), a device or pipe written as it is.
fn open_round_out(path: &Path, force: bool, new: &mut super::play::NewFiles) -> Result<fs::File> {
    let shown = path.display();
    let file = super::play::open_locked(path, "--out", new)?;
    let meta = file
        .metadata()
        .with_context(|| format!("cannot read --out {shown}"))?;
    if meta.len() > 0 && !force {
        bail!(
            "--out {shown} exists and is not empty: add --force to overwrite it (a round run is not resumable; nothing was changed)"
        );
    }
    // Emptied when the run starts; a device or pipe is written as it is.
    if meta.is_file() {
        new.cut_at_start(&file, 0, "--out", path)?;
    }
    Ok(file)
}

pub fn run(
    game: &GameArgs,
    files: &[PathBuf],
    threads: Option<usize>,
    out: Option<&Path>,
    tapes: Option<&Path>,
    trace: Option<&Path>,
    force: bool,
) -> Result<()> {
    let setup = game.resolve(1)?;
    let mut rounds = Vec::new();
    for f in files {
        let text = super::read_capped(f)
            .with_context(|| format!("cannot read round file {}", f.display()))?;
        let text = String::from_utf8(text).map_err(|e| {
            let what = super::not_utf8(e.as_bytes());
            anyhow!("round file {}: {what}", f.display())
        })?;
        let r =
            ScriptedRound::parse(&text).map_err(|e| anyhow!("round file {}: {e}", f.display()))?;
        rounds.push(r);
    }
    refuse_repeated_rounds(files, &rounds)?;
    // Ctrl-C/SIGTERM/SIGHUP: no new round starts, rounds in flight are abandoned,
    // the finished ones are written (a second signal exits at once). Not
    // before the round files are read: a signal while one is opened or read
    // (a FIFO with no writer yet blocks in its open) ends drop7 at once,
    // with nothing written.
    let signals = super::play::Signals::install()?;
    // A file or folder created while setting up is removed if the run
    // cannot start.
    let mut new = super::play::NewFiles::default();
    if let Some(dir) = tapes {
        for (flag, path) in [("--out", out), ("--trace", trace)] {
            if let Some(p) = path {
                refuse_output_among_tapes(dir, flag, p)?;
            }
        }
        check_round_tapes(dir, files, &rounds, force)?;
        new.create_dir(dir, "--tapes")?;
    }
    // Held to the end of the run: no other drop7 writes tapes there meanwhile.
    let _tapes_lock = match tapes {
        Some(dir) => lock_tapes(dir, &mut new)?,
        None => None,
    };
    let mut tracer = match trace {
        None => None,
        Some(path) => {
            if let Some(out) = out.filter(|o| super::same::same_file(o, path)) {
                bail!(
                    "{} (nothing was changed)",
                    super::same::both_name("--trace", path, "--out", out)
                );
            }
            let (mut t, _) = super::trace::file::TraceOut::open(
                path,
                false,
                force,
                DriverKind::Headless,
                u32::MAX,
                &mut new,
            )?;
            t.begin(None, (0, 0), &mut new)?;
            Some(t)
        }
    };
    let mut writer = match out {
        None => None,
        Some(p) => Some(BufWriter::new(open_round_out(p, force, &mut new)?)),
    };
    let labels = RunLabels {
        policy: setup.policy.to_string(),
        driver: DriverKind::Headless,
    };
    let threads = match threads {
        Some(0) => bail!("--threads must be at least 1"),
        Some(t) if t > super::play::MAX_THREADS => bail!(
            "--threads {t} exceeds the limit of {}",
            super::play::MAX_THREADS
        ),
        Some(t) => t,
        None => available_threads(),
    };
    let setup = super::spec::GameSetup {
        workers: threads.clamp(1, rounds.len().max(1)),
        ..setup
    };
    let started = std::time::Instant::now();
    // A fair policy's `table` and `maxWork`, as in a seed run's records.
    let fair = match setup.policy {
        PolicySpec::Fair(f) => Some(f),
        _ => None,
    };
    let settings = setup.fair_settings();
    let template = record_template(&labels, fair.map(|f| (f, &settings)), 0, None, None);
    // The summary is printed once every file is written: a failed write to
    // stdout (`> /dev/full`) loses no record, tape or trace line.
    let mut o = String::new();
    let out_shown = || format!("writing --out {}", out.unwrap_or(Path::new("")).display());
    let mut total = 0u128;
    // Whether each round's tape, trace lines and record were written.
    let mut written = vec![false; rounds.len()];
    let mut failed_write: Option<anyhow::Error> = None;
    // Each round's tape, trace lines and record are written (and flushed) as
    // soon as the rounds before it are: a second Ctrl-C, which exits at
    // once, or a kill loses only the rounds not yet written. The record goes
    // last, as in a seed run: a record in --out always has the others.
    let mut write_round = |r: &ScriptedRound, res: RoundResult| -> Result<()> {
        if let Some(dir) = tapes {
            write_tape(dir, &r.id, &res.tape).map_err(|e| anyhow!(e))?;
        }
        if let Some(t) = tracer.as_mut() {
            t.write_round(r, &res.tape.columns)
                .and_then(|()| t.flush())
                .map_err(|e| anyhow!("writing --trace {}: {e}", t.shown()))?;
        }
        let mut rec: GameRecord = res.record;
        stamp_record(&mut rec, &template);
        if let Some(w) = writer.as_mut() {
            serde_json::to_writer(&mut *w, &rec).with_context(out_shown)?;
            w.write_all(b"\n").with_context(out_shown)?;
            w.flush().with_context(out_shown)?;
        }
        total += u128::from(rec.score);
        let mut extra = String::new();
        if rec.censored {
            extra.push_str(", censored at the move cap");
        }
        if let Some(n) = rec.illegal_choices.filter(|&n| n > 0) {
            extra.push_str(&format!(", {}", super::count(n, "illegal choice")));
        }
        if let Some(n) = rec.engine_failures.filter(|&n| n > 0) {
            extra.push_str(&format!(", {}", super::count(n, "engine failure")));
        }
        o.push_str(&format!(
            "round      {} score {} moves {} level {} ({}){extra}\n",
            super::shown(&r.id),
            rec.score,
            rec.moves,
            rec.levels,
            rec.terminal_reason.as_str()
        ));
        Ok(())
    };
    // Rounds are delivered in order; a signal's abandoned ones are `None`.
    let mut deliver = |i: usize, res: Option<RoundResult>| match res {
        None => true,
        Some(res) => match write_round(&rounds[i], res) {
            Ok(()) => {
                written[i] = true;
                true
            }
            Err(e) => {
                failed_write = Some(e);
                false
            }
        },
    };
    // The files are emptied only once the policy is ready (a D7P engine
    // passed its handshake, the tables are allocated).
    with_engine!(setup.engine, |engine| with_policy!(setup, |make| {
        // A signal also cuts a long decision short (the round is abandoned
        // either way).
        let make = drop7::runner::interruptible(make, &signals.stop);
        new.start().map(|()| {
            play_all(
                engine,
                make,
                &rounds,
                &labels,
                threads,
                &signals.stop,
                &mut deliver,
            )
        })
    }))
    .and_then(|r| r)?;
    // Also after a failed write: what the run wrote to a file renamed over
    // meanwhile is rescued, and the error says where it is.
    let finished = match failed_write {
        // A round run has no --resume: the way on is to run it again.
        Some(e) => Err(e.context(format!(
            "the round run stopped with {} of {} written (it cannot be resumed: run it again)",
            written.iter().filter(|&&w| w).count(),
            super::count(rounds.len(), "round")
        ))),
        None => (|| -> Result<()> {
            if let Some(t) = tracer.as_mut() {
                t.finish()
                    .map_err(|e| anyhow!("writing --trace {}: {e}", t.shown()))?;
            }
            if let Some(w) = writer.as_mut() {
                w.flush().with_context(out_shown)?;
            }
            Ok(())
        })(),
    };
    // The rounds not written: a signal's (abandoned in flight or never
    // started), or those after a failed write.
    let not_played: Vec<&ScriptedRound> = rounds
        .iter()
        .zip(&written)
        .filter(|&(_, &w)| !w)
        .map(|(r, _)| r)
        .collect();
    // What an interrupted run says (after the rounds it finished), and its
    // exit status (128 + the signal's number).
    let interrupted = signals.stop.load(Ordering::SeqCst) && !not_played.is_empty();
    let interruption = interrupted.then(|| {
        let (name, status) = signals.name_and_status();
        let done = rounds.len() - not_played.len();
        let mut ids: Vec<String> = not_played
            .iter()
            .take(10)
            .map(|r| super::shown(&r.id).into_owned())
            .collect();
        if not_played.len() > 10 {
            ids.push(format!("and {} more", not_played.len() - 10));
        }
        let said = format!(
            "interrupted by {name}: {done} of {} done (not played: {})",
            super::count(rounds.len() as u64, "round"),
            ids.join(", ")
        );
        (said, status)
    });
    super::play::finish_with_rescue(
        finished,
        writer.as_ref().map(BufWriter::get_ref).zip(out),
        tracer.as_ref(),
    )
    .map_err(|e| match &interruption {
        Some((said, status)) => anyhow::Error::new(super::ExitWith {
            status: *status,
            message: format!("{said}; {e:#}"),
        }),
        None => e,
    })?;
    let played = rounds.len() - not_played.len();
    let mean = match played {
        0 => String::new(),
        n => format!(", mean score {:.1}", total as f64 / n as f64),
    };
    o.push_str(&format!(
        "rounds     {played} (policy {}, engine {}){mean}, {:.3} s\n",
        setup.policy,
        setup.engine.name(),
        started.elapsed().as_secs_f64()
    ));
    if let Some(p) = out {
        o.push_str(&format!("records    {}\n", p.display()));
    }
    if let Some(d) = tapes {
        o.push_str(&format!("tapes      {}\n", d.display()));
    }
    if let Some(t) = trace {
        o.push_str(&format!("trace      {}\n", t.display()));
    }
    let (mut sink, name) = super::play::summary_sink([out, trace]);
    let shown = sink
        .write_all(o.as_bytes())
        .and_then(|()| sink.flush())
        .with_context(|| format!("writing to {name}"));
    // An interrupted run says so and exits 130/143 (as a seed run does)
    // whatever became of the summary (a closed or full stdout).
    if let Some((said, status)) = interruption {
        if let Some(e) = shown.as_ref().err().filter(|e| !super::is_broken_pipe(e)) {
            eprintln!("error: {e:#}");
        }
        eprintln!("{said}");
        std::process::exit(i32::from(status));
    }
    shown?;
    if let PolicySpec::D7p(cmd) = &setup.policy {
        super::d7p::check_gave_up(cmd)?;
    }
    Ok(())
}

//! D7P, the Drop7 policy protocol (spec: formats.md "D7P"), both ways:
//!
//! * `drop7 d7p [--policy P]`: a D7P engine on stdin/stdout. A reader thread
//!   takes lines as they come (through the shared line reader: a line over
//!   [`MAX_LINE`] is measured, not held) and acts on `stop` (every search
//!   read and not yet answered answers at once from its deepest completed
//!   iteration; with none pending it does nothing) and `quit` during a search
//!   (a `go` read and not yet answered: that search stops and is not
//!   answered); every command is handled in order by the main thread, after
//!   the running search, so everything read before `quit` is answered (at
//!   most [`QUEUED_LINES`] wait: past that the reader stops reading; a main
//!   thread blocked on a full stdout never stops the reader before that). Bad
//!   lines get `info string error line N: …` and change nothing; the session
//!   ends with exit status 0 (1 when stdout cannot be written, or when stdin
//!   cannot be read: `error: reading stdin: …`, after answering the lines
//!   read before the failure).
//! * `--policy d7p:"COMMAND"` ([`D7pPolicy`]): an external D7P engine as a
//!   policy, one process per worker, started with `sh -c COMMAND`, restarted
//!   when it dies, with a per-move timeout (`DROP7_D7P_TIMEOUT_MS`, default
//!   10,000 ms, checked at every line, so a flood of lines cannot extend it;
//!   the lines wait in a bounded channel, and one over [`MAX_LINE`] is a
//!   garbled answer). Each move sends `position`, `isready` and `go` together
//!   and reads `readyok`, then `bestmove` (one round trip; an engine handles
//!   commands in order): a `bestmove` read before `readyok` answered no `go`
//!   of this move and is discarded (reported once per engine process). A dead, silent or confused engine never hangs a run: the move
//!   is played in the first legal column and counted (`engineFailures`,
//!   `illegalChoices` in the game's record). An engine that fails its
//!   handshake before any game is an error; after 3 failures in a row the
//!   engine is given up (the rest of the run plays the fallback, then exits 1).

use std::io::{self, BufRead, BufReader, IsTerminal, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args;
use drop7::board::format_cells;
use drop7::formats::{D7pCommand, parse_d7p_bestmove, parse_d7p_command};
use drop7::gravity::Gravity;
use drop7::input::{LineProblem, LineReader};
use drop7::leaf::FairLeaf;
use drop7::parallel::{MAX_SEARCH_THREADS, ParallelSearch};
use drop7::player::TableSpec;
use drop7::policy::{GreedyPolicy, RandomPolicy, center_first};
use drop7::position::Position;
use drop7::runner::Policy;
use drop7::search::{Decision, FairSearch};
use drop7::table::{NoTable, Table};

use super::spec::{PolicySpec, resolve_engine};

/// Longest D7P line accepted, in bytes without its line end (a longer line
/// is refused without being held in memory).
pub const MAX_LINE: usize = 64 * 1024;

/// Options of `drop7 d7p`.
#[derive(Args, Debug, Clone)]
#[command(
    after_help = "The protocol (one command per line on stdin, answers on stdout): \
d7p, isready, position startpos|board B next N rise R, go, stop, quit; \
see docs/community-formats.md (\"D7P engine\") and spec/formats.md in drop7's repository.\n\
Example:\n  \
printf 'd7p\\nisready\\nposition startpos next 4 rise 5\\ngo\\n' | drop7 d7p   # ends with bestmove 2"
)]
pub struct D7pArgs {
    /// Policy served: center, random, greedy, fair (the reference d4s5) or fair:dDsS.
    #[arg(long, default_value = "fair", value_name = "POLICY")]
    pub policy: String,
    /// Transposition table of a fair policy: none, lru:C, dm:N or sa:N[:W]
    /// [default: sa:65536:4, at depth 5 and more sa:1048576:4, as `decide`].
    #[arg(long, value_name = "TABLE")]
    pub table: Option<String>,
    /// Work budget per decision of a fair policy [default: W(D,S)+1, never binds].
    #[arg(long, value_name = "W", allow_negative_numbers = true)]
    pub max_work: Option<u64>,
    /// Gravity path of the search: auto, bmi2 or portable [default: $DROP7_GRAVITY, else auto].
    #[arg(long, value_name = "PATH")]
    pub gravity: Option<String>,
    /// Threads splitting each decision of a fair policy: the same bestmove
    /// and `info depth` values as one thread; the threads share one table,
    /// and with a table the `work` of `info depth` lines differs (docs/commands.md).
    #[arg(
        long,
        default_value_t = 1,
        value_name = "N",
        allow_negative_numbers = true
    )]
    pub threads: usize,
}

/// Lines the reader may hold for the main thread while a search runs (each
/// parsed, so a few dozen bytes): past that it stops reading stdin until the
/// search ends, so a harness that floods the engine is held up by the pipe
/// instead of filling memory (a `stop` or `quit` behind the flood is read
/// once the queue has room).
const QUEUED_LINES: usize = 16_384;

/// One line as the reader thread passes it on: parsed, so that what waits
/// in the queue is small whatever the line's length.
enum Line {
    /// A command, with its 1-based line number and, for `go`, its first
    /// word of arguments (shortened; D7P's `go` takes none).
    Command(usize, D7pCommand, Option<String>),
    /// A line that could not be used, with its number and why.
    Bad(usize, String),
    /// Reading stdin failed (not its end: stdin is a directory, say): the
    /// session ends there, with `error: reading stdin: …`, exit status 1.
    ReadError(io::Error),
}

/// Writes whole lines to stdout (the main thread) and keeps the session's
/// state shared with the reader: the counts of `go` commands read and
/// answered. Two locks: the reader takes only the state's, so a main thread
/// blocked on a full stdout pipe (a harness not reading yet) never holds up
/// the reader, which goes on reading commands until its queue is full.
#[derive(Clone)]
struct Out {
    state: Arc<Mutex<OutState>>,
    stdout: Arc<Mutex<io::Stdout>>,
}

struct OutState {
    /// `go` commands forwarded by the reader whose answer is not decided yet.
    unanswered: usize,
    /// `go` commands read so far (the searches are numbered from 1 in
    /// reading order, which is the order they are handled in).
    gos_read: u64,
    /// The searches numbered up to this one are stopped: a `stop` was read
    /// while they were pending.
    stop_through: u64,
    /// `quit` was read while a `go` not stopped by a `stop` was unanswered:
    /// the searches numbered above this one end without a `bestmove` and
    /// the session ends at the first of them (those up to it, stopped by a
    /// `stop` read before the `quit`, answer as a `stop` promises).
    quit_after: Option<u64>,
}

impl OutState {
    /// Whether a `quit` cut off the search numbered `search`.
    fn cut_off(&self, search: u64) -> bool {
        self.quit_after.is_some_and(|q| search > q)
    }
}

impl Out {
    fn lock(&self) -> std::sync::MutexGuard<'_, OutState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn line(&self, text: &str) {
        write_line(
            &mut self.stdout.lock().unwrap_or_else(|p| p.into_inner()),
            text,
        );
    }

    /// Whether a `quit` cut off the search numbered `search` (see
    /// [`OutState::quit_after`]): it writes nothing more.
    fn cut_off(&self, search: u64) -> bool {
        self.lock().cut_off(search)
    }

    /// Writes the answer of the `go` numbered `search` and counts it
    /// answered; `false` (nothing written) when a `quit` cut it off (see
    /// [`OutState::quit_after`]). The count drops before the write: a
    /// `stop` or `quit` read after that finds no search pending (the search
    /// is over; its answer follows, as for any command before them).
    fn answer(&self, search: u64, text: &str) -> bool {
        {
            let mut g = self.lock();
            if g.cut_off(search) {
                return false;
            }
            g.unanswered = g.unanswered.saturating_sub(1);
        }
        self.line(text);
        true
    }
}

/// A closed stdout (broken pipe) ends nothing here: the session still reads
/// to the end. Any other write failure (a full disk, `/dev/full`) ends the
/// engine with `error: writing to stdout: …`, exit status 1.
fn write_line(stdout: &mut io::Stdout, text: &str) {
    let written = writeln!(stdout, "{text}").and_then(|()| stdout.flush());
    if let Err(e) = written
        && e.kind() != io::ErrorKind::BrokenPipe
    {
        eprintln!("error: writing to stdout: {e}");
        std::process::exit(1);
    }
}

/// Reads stdin lines into `tx` through the shared line reader (a BOM on
/// line 1 and `\r\n` accepted; an over-long line is measured, not held);
/// `stop` and `quit` during a search set the stop flag.
fn reader(tx: SyncSender<Line>, stop: Arc<AtomicBool>, out: Out) {
    let mut input = LineReader::with_limit(io::stdin().lock(), MAX_LINE);
    // A `go` before any `position` is an error line, not a search: it is
    // not counted, so a `quit` after it neither stops nor hides anything.
    let mut has_position = false;
    loop {
        let read = match input.next_line() {
            Ok(Some(read)) => read,
            Ok(None) => break,
            Err(e) => {
                let _ = tx.send(Line::ReadError(e));
                break;
            }
        };
        let n = read.number;
        let line = match read.text {
            // The length reported excludes the line end (\n or \r\n).
            Err(LineProblem::TooLong { .. }) => Line::Bad(
                n,
                format!("line is {} bytes long (limit {MAX_LINE})", read.len),
            ),
            Err(LineProblem::NotUtf8) => Line::Bad(n, "line is not UTF-8 text".into()),
            Err(p @ LineProblem::Gzip) => Line::Bad(n, p.to_string()),
            Ok(t) => {
                let t = t.trim();
                let command = parse_d7p_command(t);
                match command {
                    Ok(D7pCommand::Quit) => {
                        let mut g = out.lock();
                        if g.unanswered > 0 && g.stop_through < g.gos_read {
                            // During a search (a `go` read, its `bestmove`
                            // not yet written) that no `stop` stopped: it
                            // stops now and is not answered; the commands
                            // before it are (a search a `stop` stopped
                            // answers, as a `stop` promises).
                            g.quit_after = Some(g.stop_through);
                            stop.store(true, Ordering::SeqCst);
                        }
                    }
                    Ok(D7pCommand::Stop) => {
                        // Stops every search read and not yet answered (the
                        // running one, and one whose `go` waits its turn);
                        // with no search pending it does nothing.
                        let mut g = out.lock();
                        if g.unanswered > 0 {
                            g.stop_through = g.gos_read;
                            stop.store(true, Ordering::SeqCst);
                        }
                    }
                    Ok(D7pCommand::Go) if has_position => {
                        let mut g = out.lock();
                        g.unanswered += 1;
                        g.gos_read += 1;
                    }
                    Ok(D7pCommand::Position(_)) => has_position = true,
                    _ => {}
                }
                match command {
                    Ok(c) => {
                        let extra = matches!(c, D7pCommand::Go)
                            .then(|| t.split_whitespace().nth(1).map(drop7::formats::d7p_shorten))
                            .flatten();
                        Line::Command(n, c, extra)
                    }
                    Err(e) => Line::Bad(n, e),
                }
            }
        };
        if tx.send(line).is_err() {
            break;
        }
    }
    // The session finishes what it read (the channel ends once it has),
    // unless no one can read its answers any more.
    drop(tx);
    exit_once_stdout_is_gone();
}

/// At the end of input: ends the process (exit status 0) as soon as stdout
/// is a pipe or socket whose reader has gone (the harness crashed or was
/// killed), instead of finishing searches no one will read (a deep one
/// could run for hours). Checked every 100 ms; returns at once elsewhere
/// than on Unix.
fn exit_once_stdout_is_gone() {
    #[cfg(unix)]
    loop {
        let mut p = libc::pollfd {
            fd: libc::STDOUT_FILENO,
            events: 0,
            revents: 0,
        };
        // SAFETY: one valid `pollfd` (count 1), no wait: poll only reads
        // and writes that struct. (No std API reports a pipe's reader gone
        // without writing to it.)
        let ready = unsafe { libc::poll(&mut p, 1, 0) };
        if ready > 0 && p.revents & (libc::POLLERR | libc::POLLHUP) != 0 {
            std::process::exit(0);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `info depth d values v0 … v6 work w`.
fn info_line(depth: u32, values: &[Option<f64>; 7], work: u64) -> String {
    let mut s = format!("info depth {depth} values");
    for v in values {
        match v {
            Some(x) => s.push_str(&format!(" {x}")),
            None => s.push_str(" none"),
        }
    }
    s.push_str(&format!(" work {work}"));
    s
}

/// The policy a D7P engine serves.
type Decider<'a> = Box<dyn FnMut(&Position, &mut dyn FnMut(String)) -> Option<usize> + 'a>;

/// Runs `drop7 d7p`.
pub fn run(args: &D7pArgs) -> Result<()> {
    let spec: PolicySpec = args.policy.parse()?;
    if matches!(spec, PolicySpec::D7p(_)) {
        anyhow::bail!("drop7 d7p cannot serve a d7p: policy");
    }
    let table: TableSpec = match (&args.table, spec) {
        (Some(t), _) => t.parse().context("--table")?,
        (None, PolicySpec::Fair(fair)) => TableSpec::default_for_depth(fair.depth),
        (None, _) => TableSpec::DEFAULT,
    };
    if !(1..=MAX_SEARCH_THREADS).contains(&args.threads) {
        anyhow::bail!(
            "--threads must be 1-{MAX_SEARCH_THREADS}, got {}",
            args.threads
        );
    }
    if args.threads > 1 && !matches!(spec, PolicySpec::Fair(_)) {
        anyhow::bail!("--threads applies to a fair policy only");
    }
    super::spec::note_fair_only_flags(
        &spec,
        &args.policy,
        args.table.is_some(),
        args.max_work.is_some(),
    );
    let threads = args.threads;
    let path = match resolve_engine("packed", args.gravity.as_deref())? {
        super::spec::EngineSel::Packed(p) => p,
        super::spec::EngineSel::Reference => drop7::gravity::GravityPath::Portable,
    };
    let stop = Arc::new(AtomicBool::new(false));
    let name = spec.to_string();
    match spec {
        PolicySpec::Fair(fair) => {
            let config = fair.config(args.max_work);
            drop7::with_gravity!(path, |g| {
                let made = drop7::with_table!(table, |t| {
                    serve_search(
                        FairSearch::new(FairLeaf, t, g, config),
                        threads,
                        &name,
                        stop.clone(),
                    )
                });
                match made {
                    Ok(served) => served,
                    // A table too large for memory: said once, and the
                    // session searches without one (the same values).
                    Err(e) => {
                        let mut out = io::stdout().lock();
                        writeln!(out, "info string error {e}; searching without a table")
                            .and_then(|()| out.flush())
                            .context("writing to stdout")?;
                        drop(out);
                        serve_search(
                            FairSearch::new(FairLeaf, NoTable, g, config),
                            threads,
                            &name,
                            stop,
                        )
                    }
                }
            })
        }
        PolicySpec::Center => serve(
            Box::new(|pos, _| center_first(&pos.board)),
            &name,
            "center",
            true,
            stop,
        ),
        // A function of the position alone (not one stream for the
        // session): an answer never depends on the positions asked before,
        // so a run gives the same games on any threads or shard split.
        PolicySpec::Random => serve(
            Box::new(|pos, _| RandomPolicy::choose_for_position(pos)),
            &name,
            "random",
            true,
            stop,
        ),
        PolicySpec::Greedy => {
            let mut g = GreedyPolicy;
            serve(
                Box::new(move |pos, _| g.choose(pos)),
                &name,
                "greedy",
                false,
                stop,
            )
        }
        PolicySpec::D7p(_) => unreachable!("refused above"),
    }
}

/// Serves the fair search `search`, each decision split over `threads`
/// threads when there are several.
fn serve_search<T: Table + Send, G: Gravity>(
    mut search: FairSearch<FairLeaf, T, G>,
    threads: usize,
    name: &str,
    stop: Arc<AtomicBool>,
) -> Result<()> {
    // A budget that let no iteration complete (without a `stop`) is said, as
    // `drop7 decide` warns of it: the answer is the fallback column.
    let max_work = search.config().max_work;
    let flag = stop.clone();
    let answer = move |d: Decision, info: &mut dyn FnMut(String)| {
        if d.completed_depth == 0 && !flag.load(Ordering::SeqCst) {
            info(format!(
                "info string warning: --max-work {max_work} let no iteration complete: bestmove is \
                 the fallback (first legal column of 3,2,4,1,5,0,6)"
            ));
        }
        d.action
    };
    let decide: Decider = if threads > 1 {
        let mut split = ParallelSearch::new(search, threads);
        split.set_stop(Some(stop.clone()));
        Box::new(move |pos, info| {
            let d = split.decide_reporting(pos, |d, v, w| info(info_line(d, v, w)));
            answer(d, info)
        })
    } else {
        search.set_stop(Some(stop.clone()));
        Box::new(move |pos, info| {
            let d = search.decide_reporting(pos, |d, v, w| info(info_line(d, v, w)));
            answer(d, info)
        })
    };
    serve(decide, name, "fair-expectimax", true, stop)
}

fn serve(
    mut decide: Decider,
    name: &str,
    family: &str,
    public: bool,
    stop: Arc<AtomicBool>,
) -> Result<()> {
    // On a terminal, say what is expected (a new user would otherwise see
    // nothing happen); a harness's pipe gets nothing extra.
    if std::io::IsTerminal::is_terminal(&io::stdin()) {
        eprintln!(
            "drop7 d7p: speaking D7P on stdin/stdout, e.g. `d7p`, `position startpos next 3 rise 5`, \
             `go`, `quit` (see drop7 d7p --help and docs/community-formats.md)"
        );
    }
    let out = Out {
        state: Arc::new(Mutex::new(OutState {
            unanswered: 0,
            gos_read: 0,
            stop_through: 0,
            quit_after: None,
        })),
        stdout: Arc::new(Mutex::new(io::stdout())),
    };
    let (tx, rx) = mpsc::sync_channel(QUEUED_LINES);
    {
        let (stop, out) = (stop.clone(), out.clone());
        std::thread::spawn(move || reader(tx, stop, out));
    }
    let mut position: Option<Position> = None;
    // The `go` commands handled so far (numbered as the reader counts them).
    let mut searches = 0u64;
    for line in rx {
        let (n, command, extra) = match line {
            Line::Bad(n, why) => {
                out.line(&format!("info string error line {n}: {why}"));
                continue;
            }
            Line::Command(n, command, extra) => (n, command, extra),
            // After answering every line read before it.
            Line::ReadError(e) => return Err(anyhow::Error::new(e).context("reading stdin")),
        };
        let err = |msg: String| out.line(&format!("info string error line {n}: {msg}"));
        match command {
            // Every command read before it is answered; the session ends.
            D7pCommand::Quit => return Ok(()),
            D7pCommand::Hello => {
                out.line(&format!(
                    "id name drop7 {} {name}",
                    env!("CARGO_PKG_VERSION")
                ));
                out.line(&format!("id family {family}"));
                out.line(&format!("id public-information {public}"));
                out.line("d7pok");
            }
            D7pCommand::IsReady => out.line("readyok"),
            // Handled by the reader when read (see `OutState::stop_through`).
            D7pCommand::Stop => {}
            D7pCommand::Position(p) => position = Some(p),
            D7pCommand::Go => {
                // Before any position: an error line, not a search (the
                // reader did not count it either).
                let Some(pos) = position else {
                    err("go before any position; send `position …` first".to_string());
                    continue;
                };
                searches += 1;
                // D7P's `go` takes no arguments (a UCI habit such as `go
                // depth 3` would otherwise pass silently): say so, then
                // search as configured.
                if let Some(extra) = extra {
                    out.line(&format!(
                        "info string line {n}: go takes no arguments, ignoring {extra:?} and what follows (the search is set by --policy)"
                    ));
                }
                // This search runs stopped when a `stop` (or `quit`) was read
                // since its `go`; a later `stop` sets the flag as it comes.
                {
                    let g = out.lock();
                    stop.store(
                        g.quit_after.is_some() || g.stop_through >= searches,
                        Ordering::SeqCst,
                    );
                }
                let col = if pos.board.legal_mask() == 0 {
                    None
                } else {
                    // A search a `quit` cut off says nothing more.
                    let mut info = |s: String| {
                        if !out.cut_off(searches) {
                            out.line(&s);
                        }
                    };
                    decide(&pos, &mut info)
                };
                let answer = match col {
                    Some(c) => format!("bestmove {c}"),
                    None => "bestmove none".to_string(),
                };
                if !out.answer(searches, &answer) {
                    return Ok(());
                }
            }
        }
    }
    Ok(())
}

/// The per-move timeout: `DROP7_D7P_TIMEOUT_MS` (default 10,000 ms).
pub fn move_timeout() -> Result<Duration> {
    match std::env::var("DROP7_D7P_TIMEOUT_MS") {
        Err(_) => Ok(Duration::from_millis(10_000)),
        Ok(v) => match v.trim().parse::<u64>() {
            Ok(ms) if ms > 0 => Ok(Duration::from_millis(ms)),
            _ => anyhow::bail!(
                "DROP7_D7P_TIMEOUT_MS must be a positive number of milliseconds, got {v:?}"
            ),
        },
    }
}

/// Lines an engine may send ahead of the harness reading them: a flooding
/// engine then waits (its writes block) instead of filling memory.
const ENGINE_LINES_BUFFERED: usize = 64;

/// One line from an engine: its text (trimmed, not-UTF-8 bytes replaced),
/// or why reading stopped there.
type EngineLine = Result<String, String>;

/// Lines the harness may send ahead of an engine reading them (beyond what
/// its input pipe holds): past that the engine is not reading its input,
/// a failure, instead of a write that blocks the run for ever.
const ENGINE_INPUT_QUEUED: usize = 16;

/// How long an engine told to `quit` may take to exit by itself before its
/// process group is killed.
const QUIT_GRACE: Duration = Duration::from_millis(200);

struct Proc {
    child: Child,
    /// To the thread that writes the engine's stdin ([`engine_writer`]).
    input: SyncSender<String>,
    lines: Receiver<EngineLine>,
    /// Its exit was collected ([`Proc::wait_for`]; its group killed first).
    reaped: bool,
    /// It sent a `bestmove` that answered no `go` (discarded), and that was
    /// reported: said once per engine process.
    stale_reported: bool,
    /// Its slot in [`groups`] (unix; `None` when every slot was taken).
    #[cfg(unix)]
    slot: Option<usize>,
}

impl Drop for Proc {
    /// Sends `quit`, gives the engine [`QUIT_GRACE`] to exit, then kills
    /// everything it started (on unix its whole process group: the `sh -c`
    /// and whatever it ran, so nothing keeps running or holds drop7's
    /// stderr) and reaps it.
    fn drop(&mut self) {
        // Never blocks: an engine that does not read gets no `quit`, nor
        // any grace.
        if !self.reaped {
            // When drop7 is stopping (a signal) it is killed at once.
            let quit = !stopping() && self.input.try_send("quit".to_string()).is_ok();
            let deadline = Instant::now() + QUIT_GRACE;
            while quit && !self.exited() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            // The leader is not reaped yet, so its pid (the group's id)
            // cannot have been reused.
            #[cfg(unix)]
            groups::kill(self.child.id());
            #[cfg(not(unix))]
            let _ = self.child.kill();
        }
        // Out of the signal handler's sight before the leader is reaped.
        #[cfg(unix)]
        if let Some(slot) = self.slot.take() {
            groups::unregister(slot);
        }
        if !self.reaped {
            let _ = self.child.wait();
        }
    }
}

/// The process groups of the running engines (unix): each engine is started
/// in a group of its own and its whole group is killed when it is dropped,
/// or when drop7 is stopped by a signal ([`kill_engines_on_signals`]). A
/// group of its own also means the terminal's Ctrl-C reaches drop7 only:
/// drop7 then kills the engines itself.
#[cfg(unix)]
mod groups {
    use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

    /// Room for this many engines at once (one per worker); one started
    /// beyond that is still killed when dropped, not on a signal.
    const SLOTS: usize = 1024;

    /// The group ids of the running engines (0: a free slot). Atomics, so
    /// that a signal handler may read them.
    static GROUPS: [AtomicI32; SLOTS] = [const { AtomicI32::new(0) }; SLOTS];

    /// Set by a stopping signal: no engine is started any more.
    pub static STOPPING: AtomicBool = AtomicBool::new(false);

    /// The first stopping signal's number (0 before any).
    pub static SIGNAL: AtomicI32 = AtomicI32::new(0);

    pub fn register(pid: u32) -> Option<usize> {
        let pgid = i32::try_from(pid).ok()?;
        GROUPS.iter().position(|g| {
            g.compare_exchange(0, pgid, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
        })
    }

    pub fn unregister(slot: usize) {
        GROUPS[slot].store(0, Ordering::SeqCst);
    }

    /// SIGKILL to the process group `pgid` (async-signal-safe).
    pub fn kill(pgid: u32) {
        if let Ok(pgid) = i32::try_from(pgid)
            && pgid > 1
        {
            // SAFETY: kill(2) takes plain integers and touches no memory of
            // ours; a negative pid names the process group of the engine
            // (started with process_group(0), so it leads its own group).
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
    }

    /// Stops starting engines and kills every running one's group; only
    /// atomics and kill(2), so it may run in a signal handler.
    pub fn kill_all(sig: i32) {
        let _ = SIGNAL.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
        STOPPING.store(true, Ordering::SeqCst);
        for g in &GROUPS {
            let pgid = g.load(Ordering::SeqCst);
            if pgid > 1 {
                kill(pgid.unsigned_abs());
            }
        }
    }

    /// Whether process `pid` (a child not yet reaped) has exited, without
    /// reaping it.
    #[cfg(target_os = "linux")]
    pub fn exited(pid: u32) -> bool {
        // SAFETY: siginfo_t is plain data, for which all zeroes is valid.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is a valid siginfo_t to write to; WNOWAIT leaves
        // the child waitable (std's wait reaps it later), WNOHANG returns
        // at once.
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            )
        };
        // SAFETY: waitid filled `info` (or left it zeroed: si_pid 0).
        r == 0 && unsafe { info.si_pid() } != 0
    }

    /// Whether signal `sig` is ignored (as `nohup` leaves SIGHUP).
    pub fn ignored(sig: i32) -> bool {
        // SAFETY: sigaction is plain data, for which all zeroes is valid.
        let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
        // SAFETY: a null new action only reads the current one into `old`,
        // a valid sigaction to write to.
        let r = unsafe { libc::sigaction(sig, std::ptr::null(), &mut old) };
        r == 0 && old.sa_sigaction == libc::SIG_IGN
    }

    /// Elsewhere the grace period is waited out in full.
    #[cfg(not(target_os = "linux"))]
    pub fn exited(_pid: u32) -> bool {
        false
    }
}

/// Kills every `d7p:` engine (its whole process group) when drop7 gets
/// SIGINT, SIGTERM or SIGHUP, and from then on starts none; the engines run
/// in process groups of their own, so the terminal's Ctrl-C no longer
/// reaches them. `then_exit`: the signal then does what it does by default
/// (for a command without handlers of its own); otherwise the signal is left
/// to the handlers registered before this (`play`'s). Installed once.
pub fn kill_engines_on_signals(then_exit: bool) -> Result<()> {
    #[cfg(unix)]
    {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        static INSTALLED: AtomicBool = AtomicBool::new(false);
        if INSTALLED.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        for sig in [SIGINT, SIGTERM, SIGHUP] {
            let exit = then_exit;
            if (exit || sig == SIGHUP) && groups::ignored(sig) {
                // Ignored (nohup, a background job): it stays so.
                continue;
            }
            let action = move || {
                groups::kill_all(sig);
                if exit {
                    let _ = signal_hook::low_level::emulate_default_handler(sig);
                }
            };
            // SAFETY: the action is async-signal-safe: atomics, kill(2) and
            // signal-hook's emulate_default_handler (documented as such).
            unsafe { signal_hook::low_level::register(sig, action) }
                .context("installing signal handlers")?;
        }
    }
    #[cfg(not(unix))]
    let _ = then_exit;
    Ok(())
}

/// For a command that plays `policy` and has no signal handling of its own
/// (`trace`, `play --round`, `show`): with a `d7p:` policy, whose engines run
/// in process groups of their own out of the terminal's Ctrl-C, installs
/// [`kill_engines_on_signals`] so that drop7 kills them on its way out.
pub fn kill_engines_of(policy: &super::spec::PolicySpec) -> Result<()> {
    match policy {
        super::spec::PolicySpec::D7p(_) => kill_engines_on_signals(true),
        _ => Ok(()),
    }
}

/// Whether signal `sig` is ignored (as `nohup` leaves SIGHUP); false off Unix.
pub fn signal_ignored(sig: i32) -> bool {
    #[cfg(unix)]
    return groups::ignored(sig);
    #[cfg(not(unix))]
    {
        let _ = sig;
        false
    }
}

/// A signal asked drop7 to stop: engines are neither started nor restarted.
fn stopping() -> bool {
    #[cfg(unix)]
    return groups::STOPPING.load(Ordering::SeqCst);
    #[cfg(not(unix))]
    false
}

/// Writes the lines from `rx` to an engine's stdin, each flushed, until the
/// channel closes (the [`Proc`] is dropped) or a write fails (the engine
/// closed its input). A write into the full pipe of an engine that does not
/// read blocks only this thread.
fn engine_writer(mut stdin: ChildStdin, rx: Receiver<String>) {
    for text in rx {
        if writeln!(stdin, "{text}")
            .and_then(|()| stdin.flush())
            .is_err()
        {
            break;
        }
    }
}

/// Reads an engine's stdout into `tx`, a line at a time and at most
/// [`MAX_LINE`] bytes of it (and its line end): a longer line is a garbled
/// answer, reported as such, and reading ends there (unread).
fn engine_reader(stdout: impl io::Read, tx: SyncSender<EngineLine>) {
    let mut input = BufReader::new(stdout);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let limit = MAX_LINE as u64 + 2;
        match (&mut input).take(limit).read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let body = buf.strip_suffix(b"\n").unwrap_or(&buf);
        let body = body.strip_suffix(b"\r").unwrap_or(body);
        if body.len() > MAX_LINE {
            let _ = tx.send(Err(format!(
                "engine sent a line longer than {MAX_LINE} bytes"
            )));
            break;
        }
        let line = String::from_utf8_lossy(body).trim().to_string();
        if tx.send(Ok(line)).is_err() {
            break;
        }
    }
}

impl Proc {
    /// Starts `sh -c cmd` (on unix in a process group of its own, see
    /// [`groups`]) and checks its handshake.
    fn start(cmd: &str, timeout: Duration) -> Result<Proc, String> {
        if stopping() {
            return Err("drop7 is stopping".into());
        }
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(cmd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command
            .spawn()
            .map_err(|e| format!("cannot start {cmd:?}: {e}"))?;
        // Owned (so killed when dropped) before anything can fail.
        let (input, rx) = mpsc::sync_channel(ENGINE_INPUT_QUEUED);
        let (tx, lines) = mpsc::sync_channel(ENGINE_LINES_BUFFERED);
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        #[cfg(unix)]
        let slot = groups::register(child.id());
        let mut p = Proc {
            child,
            input,
            lines,
            reaped: false,
            stale_reported: false,
            #[cfg(unix)]
            slot,
        };
        // A signal that came while it started has killed the engines
        // registered then: this one is killed here (dropped).
        if stopping() {
            return Err("drop7 is stopping".into());
        }
        let (stdin, stdout) = stdin.zip(stdout).ok_or("no pipes to the engine")?;
        std::thread::spawn(move || engine_reader(stdout, tx));
        std::thread::spawn(move || engine_writer(stdin, rx));
        p.send("d7p")?;
        p.wait_for("d7pok", |l| l == "d7pok", timeout)?;
        p.send("isready")?;
        p.wait_for("readyok", |l| l == "readyok", timeout)?;
        Ok(p)
    }

    /// Whether the engine has exited (not reaped: see [`groups::exited`]).
    fn exited(&mut self) -> bool {
        #[cfg(unix)]
        return groups::exited(self.child.id());
        #[cfg(not(unix))]
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// Queues `text` for the engine's stdin without blocking.
    fn send(&mut self, text: &str) -> Result<(), String> {
        self.input.try_send(text.to_string()).map_err(|e| match e {
            mpsc::TrySendError::Full(_) => "engine is not reading its input".to_string(),
            mpsc::TrySendError::Disconnected(_) => "engine input closed".to_string(),
        })
    }

    /// Waits at most `timeout` for a line satisfying `want` (named `what`
    /// in the error); returns it. Lines that do not count cannot extend the
    /// wait: the deadline is checked at every line.
    fn wait_for(
        &mut self,
        what: &str,
        want: impl FnMut(&str) -> bool,
        timeout: Duration,
    ) -> Result<String, String> {
        self.wait_until(what, want, Instant::now() + timeout, timeout)
    }

    /// [`Proc::wait_for`] up to `deadline` (`timeout` after the start of
    /// the wait it belongs to, as the error names it); `want` sees every
    /// line read.
    fn wait_until(
        &mut self,
        what: &str,
        mut want: impl FnMut(&str) -> bool,
        deadline: Instant,
        timeout: Duration,
    ) -> Result<String, String> {
        // The last line heard, shortened, for the timeout's message (an
        // engine that echoes its input, or speaks another protocol, shows
        // what it sends instead).
        let mut heard: Option<String> = None;
        let late = |heard: &Option<String>| {
            let ms = timeout.as_millis();
            match heard {
                Some(last) => format!(
                    "engine sent no {what} within {ms} ms (its last line: {:?})",
                    drop7::formats::d7p_shorten(last)
                ),
                None => format!("engine silent for {ms} ms"),
            }
        };
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(late(&heard));
            }
            match self.lines.recv_timeout(left) {
                Ok(Ok(l)) if want(&l) => return Ok(l),
                Ok(Ok(l)) => heard = Some(l),
                Ok(Err(garbled)) => return Err(garbled),
                Err(RecvTimeoutError::Timeout) => return Err(late(&heard)),
                Err(RecvTimeoutError::Disconnected) => {
                    // Its output closed: name how it ended if it has (a
                    // command not found exits 127), waiting a little.
                    for _ in 0..20 {
                        if self.exited() {
                            // Whatever it started goes too, before the
                            // leader is reaped (its pid is the group's id).
                            #[cfg(unix)]
                            groups::kill(self.child.id());
                            if let Ok(Some(status)) = self.child.try_wait() {
                                self.reaped = true;
                                return Err(format!("engine exited ({status})"));
                            }
                        }
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    return Err("engine exited".into());
                }
            }
        }
    }
}

/// Whether an engine's line is a `bestmove` answer (well formed or not).
fn is_bestmove(line: &str) -> bool {
    line.starts_with("bestmove")
}

/// Consecutive engine failures after which a [`D7pPolicy`] gives up.
pub const MAX_CONSECUTIVE_FAILURES: u32 = 3;

/// Set once any worker's engine failed [`MAX_CONSECUTIVE_FAILURES`] times in
/// a row: from then on no engine is started and every move is the fallback.
static GAVE_UP: AtomicBool = AtomicBool::new(false);

/// The signal that stopped drop7 while it started an engine, before any
/// game, if one did: an error that makes `drop7` exit with 128 + the
/// signal's number, as an interrupted run does.
#[cfg(unix)]
fn interrupted() -> Option<super::ExitWith> {
    let sig = groups::SIGNAL.load(Ordering::SeqCst);
    // (Only SIGINT, SIGTERM and SIGHUP are recorded there; 0 is none.)
    let name = super::signal_name(sig)?;
    Some(super::ExitWith {
        status: 128 + sig as u8,
        message: format!("interrupted by {name} while starting the d7p engine: no game was played"),
    })
}

/// No signals are caught off unix.
#[cfg(not(unix))]
fn interrupted() -> Option<super::ExitWith> {
    None
}

/// Starts `cmd` once and checks its handshake (`d7p` … `d7pok`, `isready` …
/// `readyok`) before any game: an engine that cannot run is an error
/// (an [`super::ExitWith`] when a signal stopped drop7 meanwhile).
pub fn preflight(cmd: &str, timeout: Duration) -> Result<()> {
    match Proc::start(cmd, timeout) {
        Ok(p) => {
            drop(p);
            Ok(())
        }
        Err(e) => match interrupted() {
            Some(i) => Err(i.into()),
            None => anyhow::bail!("d7p engine {cmd:?} failed its handshake: {e}"),
        },
    }
}

/// Prints a warning line on stderr; on a terminal it first clears the line,
/// so that it replaces a progress line (`show`'s) instead of running on
/// after it.
fn warn(message: std::fmt::Arguments<'_>) {
    let clear = if io::stderr().is_terminal() {
        super::CLEAR_LINE
    } else {
        ""
    };
    eprintln!("{clear}{message}");
}

/// After the games' records are written: an error if an engine was given up.
pub fn check_gave_up(cmd: &str) -> Result<()> {
    if GAVE_UP.load(Ordering::SeqCst) {
        anyhow::bail!(
            "d7p engine {cmd:?} failed {MAX_CONSECUTIVE_FAILURES} times in a row and was given up: \
             the moves after that played the first legal column (counted in engineFailures)"
        );
    }
    Ok(())
}

/// An external D7P engine as a policy (one process per worker).
pub struct D7pPolicy {
    cmd: &'static str,
    timeout: Duration,
    proc: Option<Proc>,
    /// This game's `(engine failures, illegal choices)` ([`Policy::game_tallies`]).
    tallies: (u32, u32),
    /// Failures since the last good answer.
    failures_in_a_row: u32,
    /// The last `choose` got the engine's answer (its latency is recorded).
    answered: bool,
}

impl D7pPolicy {
    /// A policy that runs `cmd` (started on first use).
    pub fn new(cmd: &'static str, timeout: Duration) -> D7pPolicy {
        D7pPolicy {
            cmd,
            timeout,
            proc: None,
            tallies: (0, 0),
            failures_in_a_row: 0,
            answered: false,
        }
    }

    /// Sends the position, `isready` and `go` together, then resynchronises
    /// (`readyok`: a `bestmove` read before it answers no `go` of this move,
    /// so it is discarded, and reported once per engine process) and reads
    /// the answer; the whole move has one timeout.
    fn ask(&mut self, pos: &Position) -> Result<Option<usize>, String> {
        if self.proc.is_none() {
            self.proc = Some(Proc::start(self.cmd, self.timeout)?);
        }
        let p = self.proc.as_mut().ok_or("no engine")?;
        let deadline = Instant::now() + self.timeout;
        p.send(&format!(
            "position board {} next {} rise {}",
            format_cells(&pos.board.to_cells()),
            pos.next_disc,
            pos.moves_remaining
        ))?;
        p.send("isready")?;
        // Sent at once: an engine handles commands in order (formats.md,
        // D7P), so its `readyok` comes before the answer to this `go`, and
        // one round trip per move does it (waiting for `readyok` before
        // sending `go` doubled the time of a `d7p:` run).
        p.send("go")?;
        let mut stale = false;
        let synced = p.wait_until(
            "readyok",
            |l| {
                stale |= is_bestmove(l);
                l == "readyok"
            },
            deadline,
            self.timeout,
        );
        if stale && !p.stale_reported {
            p.stale_reported = true;
            warn(format_args!(
                "warning: d7p engine {:?}: sent `bestmove` when no `go` was waiting for it \
                 (ignored; said once per engine start)",
                self.cmd
            ));
        }
        synced?;
        let line = p.wait_until("bestmove", is_bestmove, deadline, self.timeout)?;
        parse_d7p_bestmove(&line)
    }
}

impl Policy for D7pPolicy {
    fn new_game(&mut self, _seed: u32) {
        self.tallies = (0, 0);
        // Start the engine before the game, so that its start-up is not
        // timed as the first decision's latency (a failure here is retried,
        // counted and reported by the first `choose`).
        if self.proc.is_none() && !GAVE_UP.load(Ordering::SeqCst) {
            self.proc = Proc::start(self.cmd, self.timeout).ok();
        }
    }

    fn choose(&mut self, pos: &Position) -> Option<usize> {
        let first_legal = (0..7).find(|&c| pos.board.is_legal(c));
        self.answered = false;
        if GAVE_UP.load(Ordering::SeqCst) {
            self.proc = None;
            self.tallies.0 += 1;
            return first_legal;
        }
        let answer = self.ask(pos);
        if answer.is_ok() {
            self.failures_in_a_row = 0;
            self.answered = true;
        }
        match answer {
            Ok(Some(c)) if pos.board.is_legal(c) => Some(c),
            Ok(_) => {
                if first_legal.is_some() {
                    self.tallies.1 += 1;
                }
                first_legal
            }
            Err(e) => {
                self.proc = None;
                self.tallies.0 += 1;
                if stopping() {
                    // Killed by drop7 on a signal: the game is abandoned.
                    return first_legal;
                }
                self.failures_in_a_row += 1;
                if self.failures_in_a_row < MAX_CONSECUTIVE_FAILURES {
                    warn(format_args!(
                        "warning: d7p engine {:?}: {e}; restarting it",
                        self.cmd
                    ));
                } else if !GAVE_UP.swap(true, Ordering::SeqCst) {
                    warn(format_args!(
                        "warning: d7p engine {:?}: {e}; {MAX_CONSECUTIVE_FAILURES} failures in a \
                         row: giving it up, the remaining moves play the first legal column",
                        self.cmd
                    ));
                }
                first_legal
            }
        }
    }

    /// The engine's answers are timed (`decisionMsP50/P95/P99`: the round
    /// trip from `position` to `bestmove`); a move played for a dead
    /// engine is not.
    fn last_choice_timed(&self) -> bool {
        self.answered
    }
    fn game_tallies(&self) -> Option<(u32, u32)> {
        Some(self.tallies)
    }
}

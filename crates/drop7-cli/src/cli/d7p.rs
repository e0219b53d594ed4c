//! D7P, the Drop7 policy protocol (spec: formats.md "D7P"), both ways:
//!
//! * `drop7 d7p [--policy P]`: a D7P engine on stdin/stdout. A reader thread
//!   takes lines as they come and acts on `stop` (the running search answers
//!   at once from its deepest completed iteration) and `quit` (exit at once);
//!   every other command is handled in order by the main thread, after the
//!   running search. Bad lines get `info string error line N: …` and change
//!   nothing; the session always ends with exit status 0.
//! * `--policy d7p:"COMMAND"` ([`D7pPolicy`]): an external D7P engine as a
//!   policy, one process per worker, started with `sh -c COMMAND`, restarted
//!   when it dies, with a per-move timeout (`DROP7_D7P_TIMEOUT_MS`, default
//!   10,000 ms). A dead, silent or confused engine never hangs a run: the move
//!   is played in the first legal column and counted (`engineFailures`,
//!   `illegalChoices` in the game's record).

use std::collections::BTreeMap;
use std::io::{self, BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args;
use drop7::board::format_cells;
use drop7::formats::{D7pCommand, parse_d7p_bestmove, parse_d7p_command};
use drop7::leaf::FairLeaf;
use drop7::player::TableSpec;
use drop7::policy::{GreedyPolicy, RandomPolicy, center_first};
use drop7::position::Position;
use drop7::runner::Policy;
use drop7::search::FairSearch;

use super::spec::{PolicySpec, resolve_engine};

/// Longest D7P line accepted (longer lines are read, then refused).
pub const MAX_LINE: usize = 64 * 1024;

/// Options of `drop7 d7p`.
#[derive(Args, Debug, Clone)]
pub struct D7pArgs {
    /// Policy served: center, random, greedy, fair (the reference d4s5) or fair:dDsS.
    #[arg(long, default_value = "fair", value_name = "POLICY")]
    pub policy: String,
    /// Transposition table of a fair policy: none, lru:C, dm:N or sa:N[:W].
    #[arg(long, default_value = "sa:65536:4", value_name = "TABLE")]
    pub table: String,
    /// Work budget per decision of a fair policy [default: W(D,S)+1, never binds].
    #[arg(long, value_name = "W")]
    pub max_work: Option<u64>,
    /// Gravity path of the search: auto, bmi2 or portable [default: $DROP7_GRAVITY, else auto].
    #[arg(long, value_name = "PATH")]
    pub gravity: Option<String>,
}

/// One line as the reader thread passes it on.
enum Line {
    /// A UTF-8 line (trimmed), with its 1-based number.
    Text(usize, String),
    /// A line that could not be used, with its number and why.
    Bad(usize, String),
}

/// Writes whole lines to stdout (shared by the reader and the main thread).
#[derive(Clone)]
struct Out(Arc<Mutex<io::Stdout>>);

impl Out {
    fn line(&self, text: &str) {
        let guard = self.0.lock();
        let mut o = match guard {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        // A closed stdout ends nothing here: the session still reads to the end.
        let _ = writeln!(o, "{text}");
        let _ = o.flush();
    }
}

/// Reads stdin lines into `tx`; `stop` sets the flag, `quit` exits at once.
fn reader(tx: mpsc::Sender<Line>, stop: Arc<AtomicBool>, out: Out) {
    let mut input = io::stdin().lock();
    let mut buf = Vec::new();
    let mut n = 0usize;
    loop {
        buf.clear();
        match input.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        n += 1;
        let line = if buf.len() > MAX_LINE {
            Line::Bad(
                n,
                format!("line is {} bytes long (limit {MAX_LINE})", buf.len()),
            )
        } else {
            match std::str::from_utf8(&buf) {
                Err(_) => Line::Bad(n, "line is not UTF-8 text".into()),
                Ok(t) => {
                    let t = t.trim();
                    match t {
                        "quit" => {
                            // Hold the output lock so no line is cut in half.
                            let _g = out.0.lock();
                            std::process::exit(0);
                        }
                        "stop" => stop.store(true, Ordering::SeqCst),
                        _ => {}
                    }
                    Line::Text(n, t.to_string())
                }
            }
        };
        if tx.send(line).is_err() {
            break;
        }
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
    let table: TableSpec = args.table.parse().context("--table")?;
    let path = match resolve_engine("packed", args.gravity.as_deref())? {
        super::spec::EngineSel::Packed(p) => p,
        super::spec::EngineSel::Reference => drop7::gravity::GravityPath::Portable,
    };
    let stop = Arc::new(AtomicBool::new(false));
    let name = spec.to_string();
    match spec {
        PolicySpec::Fair(fair) => {
            let config = fair.config(args.max_work);
            drop7::with_gravity!(path, |g| drop7::with_table!(table, |t| {
                let mut search = FairSearch::new(FairLeaf, t, g, config);
                search.set_stop(Some(stop.clone()));
                let decide: Decider = Box::new(move |pos, info| {
                    search
                        .decide_reporting(pos, |d, v, w| info(info_line(d, v, w)))
                        .action
                });
                serve(decide, &name, "fair-expectimax", true, stop)
            }))
        }
        PolicySpec::Center => serve(
            Box::new(|pos, _| center_first(&pos.board)),
            &name,
            "center",
            true,
            stop,
        ),
        PolicySpec::Random => {
            let mut r = RandomPolicy::new(0);
            serve(
                Box::new(move |pos, _| r.choose(&pos.board)),
                &name,
                "random",
                true,
                stop,
            )
        }
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

fn serve(
    mut decide: Decider,
    name: &str,
    family: &str,
    public: bool,
    stop: Arc<AtomicBool>,
) -> Result<()> {
    let out = Out(Arc::new(Mutex::new(io::stdout())));
    let (tx, rx) = mpsc::channel();
    {
        let (stop, out) = (stop.clone(), out.clone());
        std::thread::spawn(move || reader(tx, stop, out));
    }
    let mut position: Option<Position> = None;
    for line in rx {
        let (n, text) = match line {
            Line::Bad(n, why) => {
                out.line(&format!("info string error line {n}: {why}"));
                continue;
            }
            Line::Text(n, t) => (n, t),
        };
        let err = |msg: String| out.line(&format!("info string error line {n}: {msg}"));
        match parse_d7p_command(&text) {
            Err(e) => err(e),
            // Handled by the reader thread (`quit` exits there).
            Ok(D7pCommand::Quit) => {}
            Ok(D7pCommand::Hello) => {
                out.line(&format!(
                    "id name drop7 {} {name}",
                    env!("CARGO_PKG_VERSION")
                ));
                out.line(&format!("id family {family}"));
                out.line(&format!("id public-information {public}"));
                out.line("d7pok");
            }
            Ok(D7pCommand::IsReady) => out.line("readyok"),
            // Idle: a stop that arrived after the search it was meant for.
            Ok(D7pCommand::Stop) => stop.store(false, Ordering::SeqCst),
            Ok(D7pCommand::Position(p)) => position = Some(p),
            Ok(D7pCommand::Go) => match position {
                None => err("go before any position; send `position …` first".into()),
                Some(pos) => {
                    let col = if pos.board.legal_mask() == 0 {
                        None
                    } else {
                        let mut info = |s: String| out.line(&s);
                        decide(&pos, &mut info)
                    };
                    match col {
                        Some(c) => out.line(&format!("bestmove {c}")),
                        None => out.line("bestmove none"),
                    }
                }
            },
        }
    }
    Ok(())
}

/// Per-seed counts of a [`D7pPolicy`]: `(engine failures, illegal choices)`.
static COUNTS: Mutex<BTreeMap<u32, (u32, u32)>> = Mutex::new(BTreeMap::new());

/// Takes the counts of the game with `seed` (0, 0 if none were recorded).
pub fn take_counts(seed: u32) -> (u32, u32) {
    let mut m = COUNTS.lock().unwrap_or_else(|p| p.into_inner());
    m.remove(&seed).unwrap_or((0, 0))
}

fn count(seed: u32, failure: bool) {
    let mut m = COUNTS.lock().unwrap_or_else(|p| p.into_inner());
    let e = m.entry(seed).or_insert((0, 0));
    if failure {
        e.0 += 1;
    } else {
        e.1 += 1;
    }
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

struct Proc {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.stdin.flush();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Proc {
    fn start(cmd: &str, timeout: Duration) -> Result<Proc, String> {
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(cmd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start {cmd:?}: {e}"))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut p = Proc {
            child,
            stdin,
            lines,
        };
        p.send("d7p")?;
        p.wait_for(|l| l == "d7pok", timeout)?;
        p.send("isready")?;
        p.wait_for(|l| l == "readyok", timeout)?;
        Ok(p)
    }

    fn send(&mut self, text: &str) -> Result<(), String> {
        writeln!(self.stdin, "{text}")
            .and_then(|()| self.stdin.flush())
            .map_err(|e| format!("engine input closed: {e}"))
    }

    /// Waits for a line satisfying `want`; returns it.
    fn wait_for(
        &mut self,
        want: impl Fn(&str) -> bool,
        timeout: Duration,
    ) -> Result<String, String> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) if want(l.trim()) => return Ok(l.trim().to_string()),
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => {
                    return Err(format!("engine silent for {} ms", timeout.as_millis()));
                }
                Err(RecvTimeoutError::Disconnected) => return Err("engine exited".into()),
            }
        }
    }
}

/// An external D7P engine as a policy (one process per worker).
pub struct D7pPolicy {
    cmd: &'static str,
    timeout: Duration,
    proc: Option<Proc>,
    seed: u32,
}

impl D7pPolicy {
    /// A policy that runs `cmd` (started on first use).
    pub fn new(cmd: &'static str, timeout: Duration) -> D7pPolicy {
        D7pPolicy {
            cmd,
            timeout,
            proc: None,
            seed: 0,
        }
    }

    fn ask(&mut self, pos: &Position) -> Result<Option<usize>, String> {
        if self.proc.is_none() {
            self.proc = Some(Proc::start(self.cmd, self.timeout)?);
        }
        let p = self.proc.as_mut().ok_or("no engine")?;
        p.send(&format!(
            "position board {} next {} rise {}",
            format_cells(&pos.board.to_cells()),
            pos.next_disc,
            pos.moves_remaining
        ))?;
        p.send("go")?;
        let line = p.wait_for(|l| l.starts_with("bestmove"), self.timeout)?;
        parse_d7p_bestmove(&line)
    }
}

impl Policy for D7pPolicy {
    fn new_game(&mut self, seed: u32) {
        self.seed = seed;
    }

    fn choose(&mut self, pos: &Position) -> Option<usize> {
        let first_legal = (0..7).find(|&c| pos.board.is_legal(c));
        match self.ask(pos) {
            Ok(Some(c)) if pos.board.is_legal(c) => Some(c),
            Ok(_) => {
                if first_legal.is_some() {
                    count(self.seed, false);
                }
                first_legal
            }
            Err(e) => {
                eprintln!("warning: d7p engine {:?}: {e}; restarting it", self.cmd);
                self.proc = None;
                count(self.seed, true);
                first_legal
            }
        }
    }
}

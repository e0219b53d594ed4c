//! The `drop7` command line (clap): `play`, `trace`, `bench`, `decide`, `leaf`,
//! `merge`, `summary`, `compare`. Options are
//! checked and resolved once here; the work runs in generic library code
//! (`drop7::runner`). Data goes to stdout or files, progress to stderr, and any
//! error is one `error: …` line on stderr with a non-zero exit.

pub mod bench;
pub mod cohort;
pub mod d7p;
pub mod decide;
pub mod play;
pub mod replay;
pub mod rounds;
pub mod same;
pub mod serve;
pub mod show;
pub mod spec;
pub mod trace;

use std::io;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Exact, fast Drop7 Hardcore engine: play cohorts, trace games, benchmark.
#[derive(Parser, Debug)]
#[command(name = "drop7", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Play whole games on worker threads; summary on stdout, records to --out.
    Play(play::PlayArgs),
    /// Print one JSON line per move (the golden trace's first block) on stdout;
    /// --roots: the position before each move (decide/leaf input).
    Trace(trace::TraceArgs),
    /// Run the published benchmark workloads; JSON to --out, a table on stdout.
    Bench(bench::BenchArgs),
    /// Per-column values of positions under the fair search (JSON lines in and out).
    Decide(decide::DecideArgs),
    /// Fair-leaf values of positions (JSON lines in and out).
    Leaf(decide::LeafArgs),
    /// Join the shard files of one run (`play --shard I/N`) into one record file.
    Merge(cohort::MergeArgs),
    /// Describe a cohort's record files: score with a 95% CI, quantiles, latencies.
    Summary(cohort::SummaryArgs),
    /// Compare two cohorts seed by seed: paired deltas, bound, detection floor.
    Compare(cohort::CompareArgs),
    /// Speak D7P (the Drop7 policy protocol) on stdin/stdout as a policy engine.
    D7p(d7p::D7pArgs),
    /// Verify recorded tapes move by move; one JSON line per tape.
    Replay(replay::ReplayArgs),
    /// Show a game move by move in the terminal (a tape, or --seed S --policy P).
    Show(show::ShowArgs),
    /// Serve the web page (play, advice, replay) on 127.0.0.1 and print its URL.
    Serve(serve::ServeArgs),
}

/// An error that ends drop7 with its own exit status (an interrupted run's
/// 130 or 143) instead of 1.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct ExitWith {
    /// The exit status.
    pub status: u8,
    /// The error's text.
    pub message: String,
}

/// Parses the command line, runs it, and reports errors as one line.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    let result = match &cli.command {
        Command::Play(a) => play::run(a).map(|()| true),
        Command::Trace(a) => trace::run(a).map(|()| true),
        Command::Bench(a) => bench::run(a).map(|()| true),
        // `false`: some input line was answered with an error object.
        Command::Decide(a) => decide::run(a),
        Command::Leaf(a) => decide::run_leaf(a),
        Command::Merge(a) => cohort::run_merge(a).map(|()| true),
        Command::Summary(a) => cohort::run_summary(a).map(|()| true),
        Command::Compare(a) => cohort::run_compare(a).map(|()| true),
        Command::D7p(a) => d7p::run(a).map(|()| true),
        // `false`: some tape is not valid and complete.
        Command::Replay(a) => replay::run(a),
        Command::Show(a) => show::run(a).map(|()| true),
        Command::Serve(a) => serve::run(a).map(|()| true),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            let msg = format!("{e:#}").replace('\n', " ");
            eprintln!("error: {msg}");
            // Stopped by a signal (128 + its number): an interrupted run.
            match e.downcast_ref::<ExitWith>() {
                Some(x) => ExitCode::from(x.status),
                None => ExitCode::FAILURE,
            }
        }
    }
}

/// Carriage return and "erase to the end of the line" (ANSI): a progress
/// line on stderr is cleared with it before a warning or when it is done.
pub const CLEAR_LINE: &str = "\r\x1b[K";

/// `text` as shown on a line of a terminal or a message: `{:?}`-quoted
/// (escaped) if it holds a character that [`hides_text`], else as it is
/// (a record's policy, a round id: a newline cannot split the line, an ESC
/// cannot restyle it, a U+202E cannot reorder it).
pub fn shown(text: &str) -> std::borrow::Cow<'_, str> {
    if text.chars().any(hides_text) {
        std::borrow::Cow::Owned(format!("{text:?}"))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// A character that must not reach a terminal line or a file name as it is:
/// a control character (a newline would split the line), or a bidirectional
/// control (U+202E and the others reorder the text shown around them).
pub fn hides_text(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
        )
}

/// The name of a signal drop7 catches (SIGHUP, SIGINT, SIGQUIT, SIGTERM);
/// `None` for any other number.
#[cfg(unix)]
pub fn signal_name(sig: i32) -> Option<&'static str> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
    match sig {
        SIGHUP => Some("SIGHUP"),
        SIGINT => Some("SIGINT"),
        SIGQUIT => Some("SIGQUIT"),
        SIGTERM => Some("SIGTERM"),
        _ => None,
    }
}

/// Whether `tail`, the bytes after a file's last newline, is what an
/// interrupted write of lines beginning with `start` leaves: the start of
/// such a line (possibly empty), then any number of zero bytes (a host that
/// crashes or loses power while a file grows can leave its new length
/// filled with zeros). Such a tail is dropped by a resume.
pub fn interrupted_tail(tail: &[u8], start: &[u8]) -> bool {
    let end = tail.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    let line = &tail[..end];
    line.starts_with(start) || start.starts_with(line)
}

/// "not UTF-8 text", saying so when the bytes are gzip-compressed (a
/// `.gz` file given where its text is read: gunzip it first).
pub fn not_utf8(start: &[u8]) -> &'static str {
    if drop7::input::is_gzip(start) {
        "not UTF-8 text (gzip-compressed: gunzip it first)"
    } else {
        "not UTF-8 text"
    }
}

/// Largest file read whole (a tape, a scripted round, `show`'s tape): 256 MiB,
/// eight times the web page's limit for a dropped file (`MAX_FILE_BYTES`,
/// 32 MiB, in web/src/main.ts) and far above any real one (a round or tape of
/// a million moves is a few MB). Checked while reading, so an endless input
/// (`/dev/zero`, a FIFO) is refused without filling the memory.
pub const MAX_FILE_BYTES: u64 = 256 << 20;

/// Reads `path` whole, refusing more than [`MAX_FILE_BYTES`] (an
/// `InvalidData` error: "larger than 256 MiB (the limit for a file read whole)").
pub fn read_capped(path: &std::path::Path) -> io::Result<Vec<u8>> {
    read_capped_from(std::fs::File::open(path)?)
}

/// Reads `source` to its end as [`read_capped`] reads a file (`replay -`
/// reads standard input this way).
pub fn read_capped_from(source: impl io::Read) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    source.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "larger than {} MiB (the limit for a file read whole)",
                MAX_FILE_BYTES >> 20
            ),
        ));
    }
    Ok(bytes)
}

/// Help and version go out as clap prints them (a failed write to stdout is an
/// error, exit status 1; a closed pipe ends quietly); a usage error becomes
/// one `error: …` line (the usage text is left to `--help`), exit status 2.
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            use std::io::Write;
            let written = e.print().and_then(|()| io::stdout().flush());
            match written {
                Ok(()) => ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2)),
                Err(err) if err.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
                Err(err) => {
                    eprintln!("error: writing to stdout: {err}");
                    ExitCode::FAILURE
                }
            }
        }
        _ => {
            let text = e.render().to_string();
            eprintln!("{}", usage_line(&text, &help_command()));
            ExitCode::from(2)
        }
    }
}

/// One line from clap's rendered usage error: its message and tips (not the
/// usage, nor clap's own `For more information, try '--help'.`), then one
/// pointer to the help of the command given (`drop7 play --help`). Lines are
/// joined with "; " (with a space after a line ending in ':', whose list
/// follows), so "found" and "tip:" do not run together.
fn usage_line(rendered: &str, command: &str) -> String {
    let mut line = String::new();
    for part in rendered
        .lines()
        .take_while(|l| !l.starts_with("Usage:"))
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("For more information"))
    {
        if !line.is_empty() {
            line.push_str(if line.ends_with(':') { " " } else { "; " });
        }
        line.push_str(part);
    }
    format!("{line} (see {command} --help)")
}

/// `drop7 SUBCOMMAND` when the command line names one, else `drop7`.
fn help_command() -> String {
    use clap::CommandFactory;
    let cli = Cli::command();
    // The top level takes no option with a value: the first word that is not
    // a flag is the subcommand.
    std::env::args_os()
        .skip(1)
        .find(|a| !a.to_string_lossy().starts_with('-'))
        .and_then(|a| a.to_str().map(str::to_string))
        .filter(|a| cli.find_subcommand(a).is_some())
        .map_or_else(|| "drop7".to_string(), |s| format!("drop7 {s}"))
}

/// `noun` as the count `n` takes it: the singular for 1, else the plural
/// (`s` added, `es` after an `s`: "loss", "losses").
pub(crate) fn noun<N: PartialEq + From<u8>>(n: N, noun: &str) -> String {
    if n == N::from(1) {
        noun.to_string()
    } else if noun.ends_with('s') {
        format!("{noun}es")
    } else {
        format!("{noun}s")
    }
}

/// `n` and its noun: `count(1, "game")` is "1 game", `count(3, "game")` "3 games".
pub(crate) fn count<N: std::fmt::Display + Copy + PartialEq + From<u8>>(
    n: N,
    singular: &str,
) -> String {
    format!("{n} {}", noun(n, singular))
}

/// A closed stdout (e.g. `drop7 trace | head`) ends the run quietly.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interrupted_tails() {
        let start = b"{\"seed\":";
        for tail in [
            &b""[..],
            b"{",
            b"{\"seed\":12",
            b"\0\0\0",
            b"{\"se\0\0",
            b"{\"seed\":1\0",
        ] {
            assert!(interrupted_tail(tail, start), "{tail:?}");
        }
        for tail in [
            &b"x"[..],
            b"\0x\0",
            b"{\"move\":",
            b" {\"seed\":",
            b"\0{\"seed\":",
        ] {
            assert!(!interrupted_tail(tail, start), "{tail:?}");
        }
    }

    #[test]
    fn counts_of_one_are_singular() {
        assert_eq!(count(1, "game"), "1 game");
        assert_eq!(count(0usize, "game"), "0 games");
        assert_eq!(count(2, "shard file"), "2 shard files");
        assert_eq!(count(1, "loss"), "1 loss");
        assert_eq!(count(7, "loss"), "7 losses");
        assert_eq!(noun(1, "byte"), "byte");
    }

    /// clap's own hint is dropped: the line points to the help once.
    #[test]
    fn a_usage_error_points_to_the_help_once() {
        let rendered = "error: invalid value 'x' for '--rise <R>': invalid digit found in string\n\n\
                        For more information, try '--help'.\n";
        assert_eq!(
            usage_line(rendered, "drop7 decide"),
            "error: invalid value 'x' for '--rise <R>': invalid digit found in string (see drop7 decide --help)"
        );
        let rendered = "error: unexpected argument '--bogus' found\n\n  \
                        tip: to pass '--bogus' as a value, use '-- --bogus'\n\n\
                        Usage: drop7 play [OPTIONS]\n\nFor more information, try '--help'.\n";
        assert_eq!(
            usage_line(rendered, "drop7 play"),
            "error: unexpected argument '--bogus' found; tip: to pass '--bogus' as a value, use '-- --bogus' (see drop7 play --help)"
        );
        // A list after a colon follows it with a space.
        let rendered = "error: the following required arguments were not provided:\n  \
                        <CANDIDATE>\n\nUsage: drop7 compare <BASE> <CANDIDATE>\n\n\
                        For more information, try '--help'.\n";
        assert_eq!(
            usage_line(rendered, "drop7 compare"),
            "error: the following required arguments were not provided: <CANDIDATE> (see drop7 compare --help)"
        );
    }
}

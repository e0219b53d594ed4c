//! Shared helpers for the integration tests: loading the golden files copied
//! into `testdata/` (repository root) (see its README for their provenance).
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;

use serde_json::Value;

/// Makes a FIFO at `path` (with `mkfifo`).
pub fn mkfifo(path: &std::path::Path) {
    assert!(
        std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .unwrap()
            .success()
    );
}

/// Path of a file under `testdata/` (repository root).
pub fn data_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(name)
}

/// All JSON lines of a gzipped `testdata/` (repository root) file.
pub fn read_jsonl_gz(name: &str) -> Vec<Value> {
    let file = std::fs::File::open(data_path(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    let reader = BufReader::new(flate2::read::GzDecoder::new(file));
    reader
        .lines()
        .map(|l| l.expect("readable line"))
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(&l).expect("valid JSON line"))
        .collect()
}

/// The golden first-block keys of a trace line, in order (trace-format.md).
pub const TRACE_KEYS: [&str; 13] = [
    "seed",
    "move",
    "disc",
    "column",
    "scoreDelta",
    "score",
    "level",
    "movesRemaining",
    "gameOver",
    "clearedBoard",
    "levelAdvanced",
    "waves",
    "board",
];

/// All raw lines of a gzipped `testdata/` (repository root) file.
pub fn read_lines_gz(name: &str) -> Vec<String> {
    let file = std::fs::File::open(data_path(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    BufReader::new(flate2::read::GzDecoder::new(file))
        .lines()
        .map(|l| l.expect("readable line"))
        .filter(|l| !l.trim().is_empty())
        .collect()
}

/// A golden trace line's first block (up to and including `"board":"…"`), closed
/// with `}`: byte-comparable with `drop7 trace` output.
pub fn first_block(line: &str) -> String {
    let at = line.find("\"board\":\"").expect("a board key") + "\"board\":\"".len() + 49 + 1;
    format!("{}}}", &line[..at])
}

/// A command running the `drop7` binary under test, prefixed by the runner in
/// `DROP7_TEST_RUNNER` when set (e.g. `qemu-x86_64 -cpu Westmere`, as
/// `scripts/test-qemu.sh` sets it: a program started by an emulated test
/// binary would otherwise run natively).
pub fn drop7_command() -> std::process::Command {
    let exe = env!("CARGO_BIN_EXE_drop7");
    match std::env::var("DROP7_TEST_RUNNER") {
        Ok(runner) if !runner.trim().is_empty() => {
            let mut words = runner.split_whitespace();
            let mut cmd = std::process::Command::new(words.next().expect("a runner"));
            cmd.args(words).arg(exe);
            cmd
        }
        _ => std::process::Command::new(exe),
    }
}

/// A command running the `drop7` binary under test directly (no
/// `DROP7_TEST_RUNNER`), with `DROP7_GRAVITY` unset.
pub fn drop7_cmd() -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_drop7"));
    c.env_remove("DROP7_GRAVITY");
    c
}

/// Runs `drop7 ARGS` ([`drop7_cmd`]) to the end.
pub fn drop7(args: &[&str]) -> std::process::Output {
    drop7_cmd().args(args).output().expect("drop7 runs")
}

/// Runs `drop7 ARGS`, which must succeed; its output.
pub fn ok_output(args: &[&str]) -> std::process::Output {
    let out = drop7(args);
    assert!(
        out.status.success(),
        "drop7 {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Runs `drop7 ARGS`, which must succeed; its stdout.
pub fn ok(args: &[&str]) -> String {
    String::from_utf8(ok_output(args).stdout).unwrap()
}

/// Runs a command that must fail (exit 1) with one `error: …` line holding
/// every `needle`; returns the line.
pub fn fails(args: &[&str], needles: &[&str]) -> String {
    let out = drop7(args);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(1), "drop7 {args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "drop7 {args:?}: {err}");
    for n in needles {
        assert!(err.contains(n), "drop7 {args:?}: {err:?} lacks {n:?}");
    }
    err
}

/// A fresh, empty scratch folder `PREFIX-NAME` under the target's tmp dir.
pub fn scratch_in(prefix: &str, name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{prefix}-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A path as `&str` (test paths are UTF-8).
pub fn s(p: &std::path::Path) -> &str {
    p.to_str().unwrap()
}

//! `play --trace` (the trace of every game, equal to `drop7 trace`, resumable
//! in whole games), write failures (full disk, file-size limit) that end a
//! run with a clear error and a resumable file, and SIGINT/SIGTERM of long
//! `play` and `decide` runs.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

mod common;
use common::{drop7_cmd, fails, ok, s};

fn scratch(name: &str) -> PathBuf {
    common::scratch_in("harden", name)
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

/// A record file's lines without the fields that may differ between two runs
/// of one cohort (wall clock, engine version).
fn stable(path: &Path) -> Vec<Value> {
    read(path)
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            let o = v.as_object_mut().unwrap();
            for k in [
                "wallMs",
                "decisionMsP50",
                "decisionMsP95",
                "decisionMsP99",
                "engineVersion",
            ] {
                o.remove(k);
            }
            v
        })
        .collect()
}

/// Each record's `trajectorySha256` recomputed from the trace: SHA-256 over
/// (column digit, 49-character board) of every move, games in record order.
fn check_hashes(records: &Path, trace: &str) {
    use sha2::{Digest, Sha256};
    let recs = stable(records);
    let mut lines = trace.lines().peekable();
    for r in &recs {
        let seed = u64::from_str_radix(&r["seed"].as_str().unwrap()[2..], 16).unwrap();
        let mut h = Sha256::new();
        let mut moves = 0;
        while let Some(l) = lines.peek() {
            let v: Value = serde_json::from_str(l).unwrap();
            if v["seed"].as_u64() != Some(seed) {
                break;
            }
            moves += 1;
            assert_eq!(v["move"], moves);
            h.update(v["column"].as_u64().unwrap().to_string());
            h.update(v["board"].as_str().unwrap());
            lines.next();
        }
        assert_eq!(r["moves"], moves, "game {seed}");
        let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(r["trajectorySha256"], hex.as_str(), "game {seed}");
    }
    assert!(lines.next().is_none(), "trace lines after the last record");
}

/// `play --trace` writes exactly what `drop7 trace` prints for the same
/// flags and seeds, whatever the threads, for a shard, both drivers, the
/// fair policy; every record's hash matches its game's lines.
#[test]
fn play_trace_equals_drop7_trace() {
    let dir = scratch("equal");
    let cases: [(&[&str], &[&str]); 4] = [
        (
            &["--games", "12", "--seed-start", "70", "--policy", "random"],
            &["--games", "12", "--seed-start", "70", "--policy", "random"],
        ),
        (
            &[
                "--games",
                "9",
                "--driver",
                "stream",
                "--max-moves",
                "15",
                "--seed-start",
                "0xfffffffe",
            ],
            &[
                "--games",
                "9",
                "--driver",
                "stream",
                "--max-moves",
                "15",
                "--seed-start",
                "0xfffffffe",
            ],
        ),
        // Shard 2 of 3 of 12 games from seed 70: seeds 74..=77.
        (
            &[
                "--games",
                "12",
                "--seed-start",
                "70",
                "--policy",
                "random",
                "--shard",
                "2/3",
            ],
            &["--games", "4", "--seed-start", "74", "--policy", "random"],
        ),
        (
            &["--games", "3", "--policy", "fair:d1s2", "--max-moves", "40"],
            &["--games", "3", "--policy", "fair:d1s2", "--max-moves", "40"],
        ),
    ];
    for (k, (play, trace)) in cases.iter().enumerate() {
        let want = ok(&[&["trace"], *trace].concat());
        assert!(!want.is_empty());
        for threads in ["1", "3"] {
            let out = dir.join(format!("r{k}-{threads}.jsonl"));
            let tr = dir.join(format!("t{k}-{threads}.jsonl"));
            let mut a = vec!["play", "--threads", threads, "--out", s(&out)];
            a.extend(["--trace", s(&tr)]);
            a.extend_from_slice(play);
            let summary = ok(&a);
            assert!(summary.contains(&format!("trace      {}", tr.display())));
            assert_eq!(read(&tr), want, "case {k} threads {threads}");
            check_hashes(&out, &want);
        }
    }
    // Without --out too.
    let tr = dir.join("alone.jsonl");
    ok(&["play", "--games", "5", "--quiet", "--trace", s(&tr)]);
    assert_eq!(read(&tr), ok(&["trace", "--games", "5"]));
    // Scripted rounds: one game per round, its moves as the record says.
    let tr = dir.join("round.jsonl");
    let out = dir.join("round-r.jsonl");
    let round = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/rounds/gauntlet-01.json"
    );
    ok(&[
        "play",
        "--round",
        round,
        "--policy",
        "random",
        "--out",
        s(&out),
        "--trace",
        s(&tr),
    ]);
    let rec = &stable(&out)[0];
    let lines: Vec<Value> = read(&tr)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rec["moves"], lines.len());
    let last = lines.last().unwrap();
    assert_eq!(last["score"], rec["score"]);
    assert_eq!(last["level"], rec["levels"]);
}

/// A trace is resumed with its records: the kept games' lines are checked
/// (seed, moves, hash), later lines dropped; whatever cannot be this run's
/// trace is refused with the file untouched.
#[test]
fn play_trace_resumes_and_refuses() {
    let dir = scratch("resume");
    let run = |out: &Path, tr: &Path, extra: &[&str]| {
        let mut a = vec!["play", "--games", "30", "--policy", "random", "--quiet"];
        a.extend(["--out", s(out), "--trace", s(tr)]);
        a.extend_from_slice(extra);
        a.iter().map(|x| x.to_string()).collect::<Vec<String>>()
    };
    fn args(v: &[String]) -> Vec<&str> {
        v.iter().map(String::as_str).collect()
    }
    let (out, tr) = (dir.join("r.jsonl"), dir.join("t.jsonl"));
    ok(&args(&run(&out, &tr, &[])));
    let want_trace = read(&tr);
    let want = stable(&out);
    // A run killed after 11 records, its trace ahead by a game and a half.
    let rec_text = read(&out);
    let recs: Vec<&str> = rec_text.lines().collect();
    let kept: String = rec_text
        .lines()
        .take(11)
        .map(|l| format!("{l}\n"))
        .collect();
    let (o2, t2) = (dir.join("r2.jsonl"), dir.join("t2.jsonl"));
    std::fs::write(&o2, format!("{kept}{}", &recs[11][..40])).unwrap();
    let games_lines: usize = want[..12]
        .iter()
        .map(|r| r["moves"].as_u64().unwrap() as usize)
        .sum();
    let partial: String = want_trace
        .lines()
        .take(games_lines + 2)
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&t2, format!("{partial}{{\"seed\":1")).unwrap();
    let said = ok(&args(&run(&o2, &t2, &["--resume"])));
    assert!(said.contains("kept 11 games"), "{said}");
    assert_eq!(read(&t2), want_trace);
    assert_eq!(stable(&o2), want);
    // A host that crashed while the files grew: their new lengths filled
    // with zero bytes, after a whole line or a part of one. Dropped as an
    // interrupted tail (the zeros alone were refused, with no way out).
    for cut in [0, 40] {
        let zeros = "\0".repeat(4096);
        std::fs::write(&o2, format!("{kept}{}{zeros}", &recs[11][..cut])).unwrap();
        std::fs::write(&t2, format!("{partial}{zeros}")).unwrap();
        let said = ok(&args(&run(&o2, &t2, &["--resume"])));
        assert!(said.contains("kept 11 games"), "{said}");
        assert!(
            said.contains(&format!("dropped {} bytes of incomplete tail", cut + 4096)),
            "{said}"
        );
        assert_eq!(read(&t2), want_trace);
        assert_eq!(stable(&o2), want);
    }

    // Refusals, each leaving both files as they were.
    let (o3, t3) = (dir.join("r3.jsonl"), dir.join("t3.jsonl"));
    std::fs::write(&o3, &kept).unwrap();
    let short: String = want_trace
        .lines()
        .take(20)
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&t3, &short).unwrap();
    fails(
        &args(&run(&o3, &t3, &["--resume"])),
        &[
            "--trace",
            "t3.jsonl",
            "does not hold the moves of game",
            "nothing was changed",
        ],
    );
    assert_eq!(read(&o3), kept);
    assert_eq!(read(&t3), short);
    // Another run's trace (other seeds).
    let other = ok(&["trace", "--games", "20", "--seed-start", "500"]);
    std::fs::write(&t3, &other).unwrap();
    fails(
        &args(&run(&o3, &t3, &["--resume"])),
        &["t3.jsonl", "not this run's trace"],
    );
    assert_eq!(read(&t3), other);
    // A tampered move: the hash differs.
    let mut lines: Vec<String> = want_trace.lines().map(str::to_string).collect();
    let mut v: Value = serde_json::from_str(&lines[3]).unwrap();
    let c = v["column"].as_u64().unwrap();
    v["column"] = Value::from((c + 1) % 7);
    lines[3] = serde_json::to_string(&v).unwrap();
    let bad: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&t3, &bad).unwrap();
    fails(
        &args(&run(&o3, &t3, &["--resume"])),
        &["t3.jsonl", "trajectorySha256", "nothing was changed"],
    );
    assert_eq!(read(&t3), bad);
    // A tampered field the hash does not cover (score, level, game over):
    // the kept lines are compared with their columns replayed.
    for (field, value) in [
        ("score", Value::from(1)),
        ("level", Value::from(77)),
        ("gameOver", Value::from(true)),
    ] {
        let mut lines: Vec<String> = want_trace.lines().map(str::to_string).collect();
        let mut v: Value = serde_json::from_str(&lines[3]).unwrap();
        assert_ne!(v[field], value);
        v[field] = value;
        lines[3] = serde_json::to_string(&v).unwrap();
        let bad: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&t3, &bad).unwrap();
        let seed = v["seed"].as_u64().unwrap();
        fails(
            &args(&run(&o3, &t3, &["--resume"])),
            &[
                "t3.jsonl",
                &format!(
                    "game 0x{seed:08x} move {} is not what its columns play",
                    v["move"]
                ),
                "nothing was changed",
            ],
        );
        assert_eq!(read(&t3), bad);
        assert_eq!(read(&o3), kept);
    }
    // A record whose score was edited: its trace's last line disagrees.
    let mut first: Value = serde_json::from_str(recs[0]).unwrap();
    let score = first["score"].as_u64().unwrap();
    first["score"] = Value::from(score + 7);
    let edited = format!(
        "{}\n{}",
        serde_json::to_string(&first).unwrap(),
        kept.split_once('\n').unwrap().1
    );
    std::fs::write(&o3, &edited).unwrap();
    std::fs::write(&t3, &want_trace).unwrap();
    fails(
        &args(&run(&o3, &t3, &["--resume"])),
        &[
            "t3.jsonl",
            &format!(
                "ends with score {score} but its record (line 1 of --out) has {}",
                score + 7
            ),
        ],
    );
    assert_eq!(read(&o3), edited);
    std::fs::write(&o3, &kept).unwrap();
    // Not a trace at all.
    std::fs::write(&t3, "hello\n").unwrap();
    fails(
        &args(&run(&o3, &t3, &["--resume"])),
        &["t3.jsonl", "not a trace line"],
    );
    // A non-empty trace without --resume or --force; the same file twice.
    fails(
        &args(&run(&dir.join("fresh.jsonl"), &t3, &[])),
        &["--trace", "t3.jsonl", "not empty", "--force"],
    );
    assert_eq!(read(&t3), "hello\n");
    // A --resume with no --out yet starts fresh: another run's non-empty
    // trace (here one of these very seeds) is refused as in a plain run.
    std::fs::write(&t3, &want_trace).unwrap();
    let missing = dir.join("missing.jsonl");
    fails(
        &args(&run(&missing, &t3, &["--resume"])),
        &[
            "--trace",
            "t3.jsonl",
            "is not empty but --out",
            "does not exist yet",
            "--force",
        ],
    );
    assert_eq!(read(&t3), want_trace);
    assert!(!missing.exists());
    std::fs::write(&t3, "hello\n").unwrap();
    fails(
        &args(&run(&o3, &o3, &[])),
        &["--trace and --out name the same file", "r3.jsonl"],
    );
    assert_eq!(read(&o3), kept);
}

/// `--trace` and `--out` naming one file under two spellings (`./x/../f`, a
/// symlink, a round run) are refused as the same file, not as a file locked
/// by another drop7, and no file is left behind.
#[test]
fn trace_and_out_are_one_file_under_any_name() {
    let dir = scratch("samefile");
    std::fs::create_dir(dir.join("x")).unwrap();
    let same = dir.join("same2.jsonl");
    let dotted = dir.join("x").join("..").join("same2.jsonl");
    let play = |out: &Path, trace: &Path, extra: &[&str]| {
        let mut a = vec!["play", "--policy", "random"];
        a.extend(if extra.is_empty() {
            &["--games", "3"]
        } else {
            extra
        });
        a.extend(["--out", s(out), "--trace", s(trace)]);
        fails(&a, &["name the same file", "nothing was changed"])
    };
    let err = play(&dotted, &same, &[]);
    assert!(
        err.contains(&format!(
            "--trace {} and --out {} name the same file",
            same.display(),
            dotted.display()
        )),
        "{err}"
    );
    assert!(!err.contains("locked"), "{err}");
    assert!(!same.exists());
    let round = common::data_path("rounds/gauntlet-01.json");
    let err = play(&same, &dotted, &["--round", s(&round)]);
    assert!(!err.contains("locked"), "{err}");
    assert!(!same.exists());
    // A symlink to an existing file: that file is kept as it was.
    std::fs::write(&same, "kept\n").unwrap();
    let link = dir.join("link.jsonl");
    std::os::unix::fs::symlink(&same, &link).unwrap();
    play(&link, &same, &["--games", "3", "--force"]);
    assert_eq!(read(&same), "kept\n");
}

/// Spawns `drop7 args` with piped output.
fn spawn(args: &[&str]) -> Child {
    drop7_cmd()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for `child` (a hang guard, not a timing check: 60 s).
fn finish(mut child: Child) -> Output {
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("drop7 did not stop");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().unwrap()
}

fn signal(child: &Child, sig: &str) {
    let ok = Command::new("kill")
        .args([&format!("-{sig}"), &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
}

/// A full disk (`/dev/full`) or a file-size limit (`prlimit --fsize`, EFBIG)
/// while writing `--out` or `--trace`: exit 1, one error naming the file;
/// `--resume` then continues to an uninterrupted run's records and trace.
#[test]
fn write_failures_end_the_run_resumably() {
    let dir = scratch("full");
    // Nothing can be resumed from a device: --resume is not suggested.
    let err = fails(
        &["play", "--games", "50", "--out", "/dev/full"],
        &[
            "writing --out /dev/full",
            "No space left on device",
            "not a regular file: --resume cannot continue this run",
        ],
    );
    assert!(!err.contains("rerun with --resume"), "{err}");
    fails(
        &["play", "--games", "50", "--trace", "/dev/full"],
        &["writing --trace /dev/full", "No space left on device"],
    );
    let base = ["play", "--games", "400", "--policy", "random", "--quiet"];
    let (want_r, want_t) = (dir.join("want.jsonl"), dir.join("want.trace"));
    let mut a = base.to_vec();
    a.extend(["--out", s(&want_r), "--trace", s(&want_t)]);
    ok(&a);
    // Limits that land inside the record file (records only) and inside the
    // trace (records and trace).
    for (k, (limit, with_trace)) in [
        (9000, false),
        (150_000, false),
        (60_000, true),
        (400_000, true),
    ]
    .into_iter()
    .enumerate()
    {
        let (r, t) = (
            dir.join(format!("r{k}.jsonl")),
            dir.join(format!("t{k}.trace")),
        );
        let mut a = base.to_vec();
        a.extend(["--out", s(&r)]);
        if with_trace {
            a.extend(["--trace", s(&t)]);
        }
        let o = Command::new("prlimit")
            .arg(format!("--fsize={limit}"))
            .arg(env!("CARGO_BIN_EXE_drop7"))
            .args(&a)
            .env_remove("DROP7_GRAVITY")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "limit {limit}: {err}");
        let named = if with_trace { s(&t) } else { s(&r) };
        assert!(
            err.contains(named) && err.contains("File too large"),
            "limit {limit}: {err}"
        );
        // --resume is suggested when records reached --out (a trace limit
        // may be hit before the first records are flushed).
        let written = std::fs::metadata(&r).unwrap().len() > 0;
        let note = match (written, with_trace) {
            (true, _) => "rerun with --resume to continue",
            (false, false) => "nothing to resume",
            (false, true) => "rerun with --resume to start again from the first game",
        };
        assert!(err.contains(note), "limit {limit}: {err}");
        a.push("--resume");
        ok(&a);
        assert_eq!(stable(&r), stable(&want_r), "limit {limit}");
        if with_trace {
            assert_eq!(read(&t), read(&want_t), "limit {limit}");
        }
    }
}

/// A round run past a file-size limit fails the write (EFBIG, one error
/// naming the file, exit 1), as a seed run does: it is not killed by SIGXFSZ.
#[test]
fn round_runs_survive_a_file_size_limit() {
    let dir = scratch("round-fsize");
    let rounds = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/rounds");
    let (r, t) = (dir.join("r.jsonl"), dir.join("r.trace"));
    let mut a: Vec<String> = vec!["play".into(), "--round".into()];
    a.extend((1..=8).map(|k| format!("{rounds}/gauntlet-0{k}.json")));
    a.extend(["--out".into(), s(&r).into(), "--trace".into(), s(&t).into()]);
    let o = Command::new("prlimit")
        .arg("--fsize=3000")
        .arg(env!("CARGO_BIN_EXE_drop7"))
        .args(&a)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with(&format!(
            "error: the round run stopped with 0 of 8 rounds written (it cannot be resumed: run it again): writing --trace {}",
            t.display()
        ))
            && err.contains("File too large")
            && err.trim_end().lines().count() == 1,
        "{err}"
    );
}

/// SIGINT or SIGTERM to a very long `play` started in the background: it
/// stops promptly with 130/143 and a file of complete records in seed order
/// that `--resume` continues (interrupted again here).
#[test]
fn a_long_play_stops_on_sigint_and_sigterm() {
    let dir = scratch("sig");
    let out = dir.join("long.jsonl");
    let tr = dir.join("long.trace");
    for (k, (sig, code)) in [("INT", 130), ("TERM", 143), ("INT", 130)]
        .into_iter()
        .enumerate()
    {
        let mut a = vec!["play", "--games", "100000000", "--out", s(&out)];
        a.extend(["--trace", s(&tr)]);
        if k > 0 {
            a.push("--resume");
        }
        let child = spawn(&a);
        let t = Instant::now();
        // Wait until records are being written (a hang guard of 60 s).
        let grown = |len: u64| std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0) > len;
        let before = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0);
        while !grown(before + 20_000) && t.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(20));
        }
        signal(&child, sig);
        let o = finish(child);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(code), "SIG{sig}: {err}");
        assert!(
            err.contains(&format!("interrupted by SIG{sig}"))
                && err.contains("games done")
                && err.contains("resume with:"),
            "{err}"
        );
        // Complete records of consecutive seeds from 1, each with its lines.
        let text = read(&out);
        assert!(text.ends_with('\n'));
        for (i, l) in text.lines().enumerate() {
            let v: Value = serde_json::from_str(l).unwrap();
            assert_eq!(v["seed"], format!("0x{:08x}", i + 1));
        }
        let trace = read(&tr);
        let lines = trace.lines().count();
        let moves: u64 = stable(&out)
            .iter()
            .map(|r| r["moves"].as_u64().unwrap())
            .sum();
        assert_eq!(
            lines as u64, moves,
            "the trace holds exactly the records' games"
        );
    }
}

/// A reader of `--out` slower than the workers (here a FIFO that is open but
/// not read for 3 s): the workers wait for the writer instead of keeping
/// finished records in memory (before, about 100 MB a second of center
/// games piled up), and after SIGINT the run ends as soon as its reader
/// takes the few records it still holds: complete records in seed order.
#[cfg(target_os = "linux")]
#[test]
fn a_slow_reader_of_out_holds_no_backlog() {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let dir = scratch("slow-reader");
    let fifo = dir.join("out.fifo");
    common::mkfifo(&fifo);
    // Opened without waiting for a writer, so the run finds its reader.
    let mut reader = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)
        .unwrap();
    let child = spawn(&[
        "play",
        "--games",
        "100000000",
        "--threads",
        "2",
        "--out",
        s(&fifo),
        "--quiet",
    ]);
    std::thread::sleep(Duration::from_secs(3));
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
    let rss_kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap();
    signal(&child, "INT");
    // Drain the FIFO until the run closes it (a hang guard of 60 s).
    let (mut text, mut buf, t) = (Vec::new(), [0u8; 1 << 16], Instant::now());
    loop {
        match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => text.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                assert!(t.elapsed() < Duration::from_secs(60), "drop7 did not stop");
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) => panic!("{e}"),
        }
    }
    let o = finish(child);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(
        rss_kb < 64 << 10,
        "{rss_kb} kB resident with an unread --out"
    );
    let text = String::from_utf8(text).unwrap();
    assert!(text.ends_with('\n') && !text.is_empty());
    for (i, l) in text.lines().enumerate() {
        let v: Value = serde_json::from_str(l).unwrap();
        assert_eq!(v["seed"], format!("0x{:08x}", i + 1));
    }
}

/// SIGTERM or SIGINT to a `play` (and a `play --round` run) in the middle of
/// a fair decision that would take hours (depth 8, 7 strata; one thread,
/// and two threads splitting the decision): the signal cuts the decision
/// short (before, `play` waited for the decision to end), the game is
/// abandoned and nothing is written.
#[test]
fn a_signal_cuts_a_long_play_decision_short() {
    let dir = scratch("sigdecision");
    let round = common::data_path("rounds/gauntlet-01.json");
    let cases: [(&str, i32, &[&str]); 4] = [
        ("TERM", 143, &["--games", "1", "--threads", "1"]),
        ("INT", 130, &["--games", "1", "--threads", "2"]),
        (
            "TERM",
            143,
            &["--seed-start", "1", "--games", "2", "--threads", "2"],
        ),
        ("TERM", 143, &["--round", s(&round), "--threads", "1"]),
    ];
    for (k, (sig, code, extra)) in cases.into_iter().enumerate() {
        let out = dir.join(format!("out{k}.jsonl"));
        let mut a = vec!["play", "--policy", "fair:d8s7", "--out", s(&out)];
        a.extend(extra);
        let child = spawn(&a);
        std::thread::sleep(Duration::from_millis(1500));
        signal(&child, sig);
        let o = finish(child);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(code), "{a:?} SIG{sig}: {err}");
        assert!(err.contains(&format!("interrupted by SIG{sig}")), "{err}");
        assert_eq!(read(&out), "", "{a:?}");
    }
}

/// A reader of `--out` that never reads holds the run's writer, so the
/// first SIGINT cannot end it; a second one exits at once (130), with a
/// line saying so (before, it exited without a word).
#[test]
fn a_second_signal_exits_at_once_and_says_so() {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = scratch("second-signal");
    let fifo = dir.join("out.fifo");
    common::mkfifo(&fifo);
    // Held open, never read.
    let _reader = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)
        .unwrap();
    let child = spawn(&["play", "--games", "100000000", "--out", s(&fifo), "--quiet"]);
    std::thread::sleep(Duration::from_secs(2));
    signal(&child, "INT");
    std::thread::sleep(Duration::from_millis(500));
    signal(&child, "INT");
    let o = finish(child);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(
        err.contains("interrupted again by SIGINT: drop7 play exits at once; what was not yet written is lost"),
        "{err}"
    );
}

/// SIGINT or SIGTERM while `play` is still filling large tables (2 × 2.8
/// GB: seconds, far more under memory pressure) ends it then, with 130/143
/// and a line saying so (before, it went on filling them and exited only
/// then); a run resuming a file leaves it as it was. Where the machine has
/// not the memory for both tables the run is refused at once instead, and
/// the case is skipped.
#[test]
fn a_signal_stops_the_tables_being_filled() {
    let dir = scratch("sigtables");
    let out = dir.join("half.jsonl");
    let run = [
        "play",
        "--policy",
        "fair:d1s3",
        "--games",
        "4",
        "--table",
        "sa:67108864:4",
        "--max-moves",
        "3",
        "--out",
        s(&out),
    ];
    // Two of the four games played (one thread, one table), then resumed
    // on two with a signal at once.
    let o = finish(spawn(&[&run[..], &["--threads", "1"]].concat()));
    let err = String::from_utf8_lossy(&o.stderr);
    if err.contains("more than the") {
        eprintln!("skipped: not the memory for a 2.8 GB table here: {err}");
        return;
    }
    assert!(o.status.success(), "{err}");
    let records = read(&out);
    let kept: String = records.lines().take(2).map(|l| format!("{l}\n")).collect();
    for (sig, code) in [("INT", 130), ("TERM", 143)] {
        std::fs::write(&out, &kept).unwrap();
        let child = spawn(&[&run[..], &["--threads", "2", "--resume"]].concat());
        std::thread::sleep(Duration::from_millis(300));
        signal(&child, sig);
        let o = finish(child);
        let err = String::from_utf8_lossy(&o.stderr);
        if err.contains("more than the") {
            eprintln!("skipped: not the memory for two 2.8 GB tables here: {err}");
            return;
        }
        assert_eq!(o.status.code(), Some(code), "SIG{sig}: {err}");
        assert!(err.contains(&format!("interrupted by SIG{sig}")), "{err}");
        if err.contains("while the run was starting") {
            assert!(err.contains("was interrupted"), "{err}");
            assert_eq!(read(&out), kept, "SIG{sig}");
        }
    }
    // A D7P engine that never answers its handshake: the same.
    let engine_out = dir.join("engine.jsonl");
    let child = spawn(&[
        "play",
        "--policy",
        "d7p:sleep 600",
        "--games",
        "2",
        "--out",
        s(&engine_out),
    ]);
    std::thread::sleep(Duration::from_millis(500));
    signal(&child, "INT");
    let o = finish(child);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert_eq!(err.matches("interrupted by SIGINT").count(), 1, "{err}");
    assert!(!engine_out.exists(), "{err}");
}

/// SIGINT (Ctrl-C) or SIGTERM of a long `decide` (depth 6, 7 strata: minutes
/// of work) ends it at once with 130/143 and one line saying so.
#[test]
fn a_long_decide_stops_on_sigint_and_sigterm() {
    for (sig, code) in [("INT", 130), ("TERM", 143)] {
        let child = spawn(&[
            "decide",
            "--depth",
            "6",
            "--strata",
            "7",
            "--board",
            "0000000000000000000000000000000000000000008888888",
            "--next",
            "3",
            "--rise",
            "5",
        ]);
        std::thread::sleep(Duration::from_millis(700));
        signal(&child, sig);
        let o = finish(child);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(code), "SIG{sig}: {err}");
        assert!(
            err.contains(&format!("interrupted by SIG{sig}: drop7 decide stopped")),
            "{err}"
        );
        assert!(o.stdout.is_empty());
    }
}

/// `drop7 ARGS` (through `sh -c`, which execs it) with its address space
/// limited to `kb` KB (`ulimit -v`), stdin, stdout and stderr piped.
fn limited_cmd(kb: u32, args: &[&str]) -> Command {
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg(format!("ulimit -v {kb} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_drop7"))
        .args(args)
        .env_remove("DROP7_GRAVITY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// `drop7 ARGS` with its address space limited to 500 MB (`ulimit -v 500000`).
fn limited(args: &[&str], stdin: &str) -> Output {
    use std::io::Write;
    let mut child = limited_cmd(500_000, args).spawn().expect("sh runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// `drop7 d7p` refuses an over-long line without holding it: a 250 MB line
/// under a 200 MB address-space limit is measured and refused, and the
/// session goes on (it once read the line whole, then aborted).
#[test]
fn d7p_long_line_is_not_held_in_memory() {
    use std::io::Write;
    let mut child = limited_cmd(200_000, &["d7p", "--policy", "center"])
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..250 {
            stdin.write_all(&chunk)?;
        }
        stdin.write_all(b"\nisready\n")
    });
    let o = finish(child);
    let _ = writer.join().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        format!(
            "info string error line 1: line is {} bytes long (limit 65536)\nreadyok\n",
            250 << 20
        ),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(o.status.code(), Some(0));
}

/// A harness flooding `drop7 d7p` with commands during a search, under a
/// 200 MB address-space limit: the engine holds a bounded number of them
/// (it once queued every line read, 1.6 GB for 20 M `isready` lines), reads
/// the rest once the search ends, and answers them all in order.
#[test]
fn d7p_commands_read_during_a_search_are_bounded() {
    use std::io::{BufRead, BufReader, Write};
    const FLOOD: usize = 4_000_000;
    let args = [
        "d7p",
        "--policy",
        "fair:d8s32",
        "--table",
        "sa:65536:4",
        "--max-work",
        "20000000",
    ];
    let mut child = limited_cmd(200_000, &args).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        stdin.write_all(b"position startpos next 4 rise 5\ngo\n")?;
        let chunk = b"isready\n".repeat(1000);
        for _ in 0..FLOOD / 1000 {
            stdin.write_all(&chunk)?;
        }
        Ok::<(), std::io::Error>(())
    });
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut answers = Vec::new();
        let mut ready = 0usize;
        for line in BufReader::new(stdout).lines() {
            let line = line.unwrap();
            if line == "readyok" {
                ready += 1;
            } else if !line.starts_with("info depth ") {
                answers.push((ready, line));
            }
        }
        (answers, ready)
    });
    writer.join().unwrap().unwrap();
    let (answers, ready) = reader.join().unwrap();
    let o = finish(child);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.is_empty(), "{err}");
    // The search's answer first (its budget ends it), then every `readyok`.
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_eq!(answers[0].0, 0);
    assert!(answers[0].1.starts_with("bestmove "), "{answers:?}");
    assert_eq!(ready, FLOOD);
}

/// A harness that writes many `position`/`go` pairs before reading any
/// answer: the engine's stdout pipe fills and its main thread blocks
/// writing, but the reader thread goes on taking commands (up to its queue
/// of 16,384), so the harness finishes writing, then reads every answer. It
/// once deadlocked: the blocked writer held the lock the reader needed at
/// the next `go`. (The pause lets the pipe fill before the second batch; a
/// hang guard, not a timing check.)
#[test]
fn d7p_harness_may_write_before_reading() {
    use std::io::{Read, Write};
    const FIRST: usize = 7_000;
    const SECOND: usize = 5_000;
    let mut child = drop7_cmd()
        .args(["d7p", "--policy", "center"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let (done, written) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let pair = b"position startpos next 4 rise 5\ngo\n";
        let result = stdin.write_all(&pair.repeat(FIRST)).and_then(|()| {
            std::thread::sleep(Duration::from_millis(500));
            stdin.write_all(&pair.repeat(SECOND))
        });
        // Dropping stdin ends the session once every command is answered.
        drop(stdin);
        let _ = done.send(result);
    });
    match written.recv_timeout(Duration::from_secs(60)) {
        Ok(result) => result.unwrap(),
        Err(_) => {
            let _ = child.kill();
            panic!("the harness could not finish writing: the engine stopped reading");
        }
    }
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let o = finish(child);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(out, "bestmove 3\n".repeat(FIRST + SECOND));
}

/// An external engine flooding `info` lines after its handshake, under a
/// 500 MB address-space limit: its lines are read as they come, a bounded
/// number at a time, each move fails at its timeout, and SIGTERM ends the
/// run (exit 143, complete records only; it once hung, memory growing).
#[test]
fn d7p_flooding_engine_is_bounded_and_stops_on_sigterm() {
    let dir = scratch("d7p-flood");
    let out = dir.join("flood.jsonl");
    let policy = "d7p:read l; echo d7pok; read l; echo readyok; yes info";
    let mut a = vec!["play", "--games", "100000000", "--threads", "1"];
    a.extend(["--policy", policy, "--out", s(&out)]);
    let child = limited_cmd(500_000, &a)
        .env("DROP7_D7P_TIMEOUT_MS", "1000")
        .spawn()
        .unwrap();
    // Into the engine's flood (sh has exec'd drop7), then SIGTERM.
    std::thread::sleep(Duration::from_millis(1500));
    signal(&child, "TERM");
    let o = finish(child);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(143), "{err}");
    assert!(err.contains("interrupted by SIGTERM"), "{err}");
    assert!(!err.contains("memory allocation"), "{err}");
    for l in read(&out).lines() {
        let rec: Value = serde_json::from_str(l).unwrap();
        assert!(rec["engineFailures"].as_u64() > Some(0), "{rec}");
    }
}

/// A transposition table larger than the process may allocate is one clear
/// error line naming the table and its size (exit 1), never an abort; a D7P
/// engine says so and serves its session without a table.
#[test]
fn a_table_too_large_for_memory_is_an_error() {
    let board = "0".repeat(49);
    let cases = [
        ("sa:67108864:4", "2816 MiB"),
        ("lru:67108864", "3584 MiB"),
        ("dm:67108864", "2560 MiB"),
    ];
    for (table, size) in cases {
        let want =
            format!("error: --table: transposition table {table} needs {size}: cannot allocate it");
        let decide = [
            "decide", "--depth", "4", "--strata", "7", "--table", table, "--board", &board,
            "--next", "3", "--rise", "5",
        ];
        let play = [
            "play",
            "--policy",
            "fair:d2s3",
            "--games",
            "3",
            "--threads",
            "2",
            "--table",
            table,
            "--max-moves",
            "5",
        ];
        for args in [&decide[..], &play[..]] {
            let out = limited(args, "");
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
            assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
            assert!(err.starts_with(&want), "{args:?}: {err}");
            assert!(out.stdout.is_empty(), "{args:?}");
        }
    }
    // One table fits, but not one per worker: the error says how many and
    // how much in all.
    let out = limited(
        &[
            "play",
            "--policy",
            "fair:d1s2",
            "--games",
            "4",
            "--threads",
            "3",
            "--table",
            "sa:4194304:4",
            "--max-moves",
            "3",
        ],
        "",
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with(
            "error: --table: transposition table sa:4194304:4 needs 176 MiB (3 copies, one per worker: 528 MiB in all): cannot allocate it"
        ),
        "{err}"
    );
    // A table that fits under the same limit plays.
    let out = limited(
        &[
            "play",
            "--policy",
            "fair:d1s2",
            "--games",
            "2",
            "--table",
            "sa:1024",
            "--max-moves",
            "3",
        ],
        "",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // No address-space limit, so the kernel's overcommit lets every
    // allocation succeed: tables beyond the memory left are refused up
    // front (they were allocated, filled, and the OOM killer ended the run
    // without a word). Sized from this machine's memory: one table fits,
    // 1,024 of them need twice what is left.
    #[cfg(target_os = "linux")]
    {
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
        let kib = |name: &str| {
            meminfo
                .lines()
                .find_map(|l| {
                    l.strip_prefix(name)?
                        .trim()
                        .strip_suffix("kB")?
                        .trim()
                        .parse::<u64>()
                        .ok()
                })
                .unwrap_or(0)
        };
        let left = (kib("MemAvailable:") + kib("SwapFree:")) * 1024;
        // 44 bytes an entry (sa:4194304:4 is 176 MiB).
        let entries = (2 * left / (44 * 1024)).next_power_of_two().max(1 << 21);
        let table = format!("sa:{entries}:4");
        let args = [
            "play",
            "--policy",
            "fair:d1s2",
            "--games",
            "1024",
            "--threads",
            "1024",
            "--table",
            &table,
            "--max-moves",
            "1",
        ];
        let out = drop7_cmd().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.starts_with(&format!("error: --table: transposition table {table} needs "))
                && err.contains(" MiB (1024 copies, one per worker: ")
                && err.contains(" MiB in all): more than the ")
                && err.contains(" MiB of memory left (available memory and swap, within the memory limits of the process's cgroups) (out of memory; try a smaller --table or fewer --threads)"),
            "{err}"
        );
    }
    // D7P: an `info string error` line, then the session goes on.
    let out = limited(
        &["d7p", "--policy", "fair:d1s2", "--table", "sa:67108864:4"],
        "d7p\nposition startpos next 3 rise 5\ngo\n",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with(
            "info string error transposition table sa:67108864:4 needs 2816 MiB: cannot allocate it"
        ) && lines[0].ends_with("; searching without a table"),
        "{text}"
    );
    assert!(lines.contains(&"d7pok"), "{text}");
    assert!(lines.last().unwrap().starts_with("bestmove "), "{text}");
}

/// The message fixes: round records in `merge` and `summary`, a shard's own
/// seeds in `play`'s summary, an out-of-range table size, a UTF-8 BOM at the
/// start of a record file or tape, "writing to stdout" everywhere.
#[test]
fn clear_messages_for_rounds_shards_sizes_boms_and_stdout() {
    let dir = scratch("messages");
    let rounds = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/rounds");
    let recs = dir.join("rounds.jsonl");
    let tapes = dir.join("tapes");
    ok(&[
        "play",
        "--round",
        &format!("{rounds}/gauntlet-01.json"),
        &format!("{rounds}/gauntlet-02.json"),
        "--out",
        s(&recs),
        "--tapes",
        s(&tapes),
    ]);
    fails(
        &["merge", s(&dir.join("m.jsonl")), s(&recs)],
        &[
            "line 1: a scripted-round record (round gauntlet-01, from `play --round`), not a cohort shard",
            "merge joins the shard files of one `play --shard I/N` run",
        ],
    );
    assert!(
        ok(&["summary", s(&recs)])
            .starts_with("cohort     2 games, policy center, driver latent, move cap per round\n")
    );
    // A shard's summary shows the shard's seeds, not the cohort's.
    let out = ok(&[
        "play",
        "--games",
        "10",
        "--shard",
        "02/03",
        "--seed-start",
        "0x10",
    ]);
    // (As parsed and written in the records: `02/03` is shard 2/3.)
    assert!(
        out.starts_with("games      3 (shard 2/3, seeds 0x00000013..0x00000015, policy center"),
        "{out}"
    );
    let board = "0".repeat(49);
    for table in ["lru:99999999999999999999999", "sa:99999999999999999999999"] {
        fails(
            &[
                "decide", "--table", table, "--board", &board, "--next", "3", "--rise", "5",
            ],
            &["99999999999999999999999 is out of range (at most 67108864 entries)"],
        );
    }
    // A BOM before the first record or at the start of a tape is accepted.
    let mut bom = b"\xEF\xBB\xBF".to_vec();
    bom.extend(std::fs::read(&recs).unwrap());
    let bom_recs = dir.join("bom.jsonl");
    std::fs::write(&bom_recs, &bom).unwrap();
    assert_eq!(ok(&["summary", s(&bom_recs)]), ok(&["summary", s(&recs)]));
    let tape = tapes.join("gauntlet-01.tape.json");
    let mut bom = b"\xEF\xBB\xBF".to_vec();
    bom.extend(std::fs::read(&tape).unwrap());
    let bom_tape = dir.join("bom.tape.json");
    std::fs::write(&bom_tape, &bom).unwrap();
    let replayed = ok(&["replay", s(&bom_tape)]);
    assert!(replayed.contains("\"valid\":true"), "{replayed}");
    // Every failed stdout write says "writing to stdout" (replay too).
    for args in [
        &["play", "--games", "2"][..],
        &["trace"][..],
        &["replay", s(&bom_tape)][..],
    ] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = drop7_cmd().args(args).stdout(full).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.starts_with("error: writing to stdout: "),
            "{args:?}: {err}"
        );
    }
}

//! The community formats end to end through the `drop7` binary: scripted
//! rounds (`play --round`), recorded tapes (`--tapes`, `replay`, tampering),
//! D7P both ways (`drop7 d7p` against `drop7 decide`, `--policy d7p:…`
//! against the built-in policy, a dead engine), and bad input.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::{data_path, drop7_cmd, fails, read_lines_gz};
use serde_json::Value;

const EXE: &str = env!("CARGO_BIN_EXE_drop7");

fn drop7(args: &[&str]) -> Output {
    Command::new(EXE)
        .args(args)
        .env_remove("DROP7_GRAVITY")
        .output()
        .expect("drop7 runs")
}

fn ok(args: &[&str]) -> String {
    let out = drop7(args);
    assert!(
        out.status.success(),
        "drop7 {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("formats-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn rounds() -> Vec<String> {
    (1..=8)
        .map(|n| {
            data_path(&format!("rounds/gauntlet-0{n}.json"))
                .to_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

fn jsonl(path: &std::path::Path) -> Vec<Value> {
    json_lines(&std::fs::read(path).unwrap())
}

/// The JSON lines of a command's output.
fn json_lines(bytes: &[u8]) -> Vec<Value> {
    std::str::from_utf8(bytes)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Every Gauntlet round under every built-in policy; center, random and greedy
/// reproduce the reference's final scores; every tape replays valid.
#[test]
fn rounds_under_every_policy_with_tapes() {
    let golden: Vec<Value> = read_lines_gz("trajectories-latent.jsonl.gz")
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for policy in ["center", "random", "greedy", "fair:d1s2"] {
        let dir = scratch(&format!("rounds-{}", policy.replace(':', "-")));
        let out = dir.join("r.jsonl");
        let tapes = dir.join("tapes");
        let mut args = vec!["play", "--policy", policy, "--threads", "2", "--round"];
        let files = rounds();
        args.extend(files.iter().map(String::as_str));
        args.extend([
            "--out",
            out.to_str().unwrap(),
            "--tapes",
            tapes.to_str().unwrap(),
        ]);
        ok(&args);
        let recs = jsonl(&out);
        assert_eq!(recs.len(), 8);
        for (n, rec) in recs.iter().enumerate() {
            let id = format!("gauntlet-0{}", n + 1);
            assert_eq!(rec["round"], id.as_str());
            assert_eq!(rec["driver"], "latent");
            assert_eq!(rec["illegalChoices"], 0);
            if policy != "fair:d1s2" {
                let last = golden
                    .iter()
                    .rfind(|g| g["roundId"] == id.as_str() && g["policy"] == policy)
                    .unwrap();
                assert_eq!(rec["score"], last["score"], "{id} {policy}");
                assert_eq!(rec["moves"], last["move"], "{id} {policy}");
            }
            let tape = tapes.join(format!("{id}.tape.json"));
            let rep: Value = serde_json::from_str(&ok(&[
                "replay",
                "--engine",
                "reference",
                tape.to_str().unwrap(),
            ]))
            .unwrap();
            assert_eq!(rep["valid"], true, "{rep}");
            assert_eq!(rep["complete"], true);
            assert_eq!(rep["score"], rec["score"]);
        }
    }
}

/// Seeded games' tapes replay to the identical score; a move-capped game
/// replays as not complete; altered columns, discs and scores are rejected
/// with the move number.
#[test]
fn tapes_roundtrip_and_tampering() {
    let dir = scratch("tapes");
    let tapes = dir.join("t");
    let out = dir.join("r.jsonl");
    ok(&[
        "play",
        "--games",
        "6",
        "--policy",
        "random",
        "--out",
        out.to_str().unwrap(),
        "--tapes",
        tapes.to_str().unwrap(),
    ]);
    let recs = jsonl(&out);
    for rec in &recs {
        let seed = rec["seed"].as_str().unwrap();
        let tape = tapes.join(format!("{seed}.tape.json"));
        let rep: Value = serde_json::from_str(&ok(&["replay", tape.to_str().unwrap()])).unwrap();
        assert_eq!(rep["valid"], true, "{rep}");
        assert_eq!(rep["score"], rec["score"]);
        assert_eq!(rep["moves"], rec["moves"]);
    }
    // `-` reads one tape from standard input, named "-" in its line, and
    // only once.
    {
        let tape = tapes.join("0x00000002.tape.json");
        let o = drop7_cmd()
            .args(["replay", "-", tape.to_str().unwrap()])
            .stdin(std::fs::File::open(&tape).unwrap())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let lines = json_lines(&o.stdout);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["tape"], "-");
        assert_eq!(lines[0]["valid"], true, "{}", lines[0]);
        assert_eq!(lines[0]["score"], lines[1]["score"]);
        fails(
            &["replay", "-", "-"],
            &["`-` (standard input) can be given only once"],
        );
    }
    // Tampering with seed 1's tape.
    let path = tapes.join("0x00000001.tape.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let tape: Value = serde_json::from_str(&text).unwrap();
    let n = tape["columns"].as_array().unwrap().len();
    let check = |edit: &dyn Fn(&mut Value), failure: &str, at: Option<u64>| {
        let mut t = tape.clone();
        edit(&mut t);
        let p = dir.join("edited.json");
        std::fs::write(&p, serde_json::to_string(&t).unwrap()).unwrap();
        let o = drop7(&["replay", p.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1));
        let rep: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(rep["valid"], false);
        assert_eq!(rep["failure"], failure, "{rep}");
        if let Some(at) = at {
            assert_eq!(rep["failedAtMove"], at, "{rep}");
        }
        assert!(rep["error"].as_str().unwrap().len() > 5);
        // Only formats.md's words name a failure.
        assert!(
            [
                "invalid-format",
                "illegal-column",
                "trailing-move",
                "incomplete-game",
                "invalid-configuration"
            ]
            .contains(&rep["failure"].as_str().unwrap()),
            "{rep}"
        );
    };
    // One altered column (move 3): its board no longer matches.
    let col = tape["columns"][2].as_u64().unwrap();
    check(
        &|t| t["columns"][2] = Value::from((col + 1) % 7),
        "invalid-format",
        Some(3),
    );
    // One altered disc (move 2).
    let disc = tape["discs"][1].as_u64().unwrap();
    check(
        &|t| t["discs"][1] = Value::from(disc % 7 + 1),
        "invalid-format",
        Some(2),
    );
    // An edited score: named as tampering in the error.
    let mut t = tape.clone();
    t["score"] = Value::from(tape["score"].as_u64().unwrap() + 1);
    let p = dir.join("edited-score.json");
    std::fs::write(&p, t.to_string()).unwrap();
    let rep: Value =
        serde_json::from_slice(&drop7(&["replay", p.to_str().unwrap()]).stdout).unwrap();
    assert!(
        rep["error"]
            .as_str()
            .unwrap()
            .starts_with("tampered: the tape claims score"),
        "{rep}"
    );
    check(
        &|t| t["score"] = Value::from(tape["score"].as_u64().unwrap() + 1),
        "invalid-format",
        None,
    );
    // A claimed score that is no u64 names the range it must be in.
    for bad in [
        serde_json::json!(1e30),
        serde_json::json!(-5),
        serde_json::json!(2.5),
    ] {
        let mut t = tape.clone();
        t["score"] = bad.clone();
        let p = dir.join("bad-score.json");
        std::fs::write(&p, t.to_string()).unwrap();
        let rep: Value =
            serde_json::from_slice(&drop7(&["replay", p.to_str().unwrap()]).stdout).unwrap();
        assert_eq!(
            rep["error"],
            format!("score must be an integer 0-18446744073709551615, got {bad}"),
            "{rep}"
        );
    }
    check(
        &|t| t["columns"][0] = Value::from(9),
        "invalid-format",
        Some(1),
    );
    check(
        &|t| t["discs"][4] = Value::from(0),
        "invalid-format",
        Some(5),
    );
    check(
        &|t| t["format"] = Value::from("drop7-recorded-game-v1"),
        "invalid-format",
        None,
    );
    check(
        &|t| {
            t.as_object_mut().unwrap().remove("coveredRows");
        },
        "invalid-format",
        None,
    );
    // Reference-shaped tape (no drop7 fields): an extra move after game over.
    check(
        &|t| {
            let o = t.as_object_mut().unwrap();
            for k in ["scores", "boards", "score", "level", "moves"] {
                o.remove(k);
            }
            o["columns"].as_array_mut().unwrap().push(Value::from(3));
            o["discs"].as_array_mut().unwrap().push(Value::from(3));
            o["dropLatentValues"]
                .as_array_mut()
                .unwrap()
                .push(Value::Null);
        },
        "trailing-move",
        Some(n as u64 + 1),
    );
    check(
        &|t| {
            t["coveredRows"]
                .as_array_mut()
                .unwrap()
                .push(serde_json::json!([1, 2, 3, 4, 5, 6, 7]))
        },
        "invalid-configuration",
        None,
    );
    // A covered row missing: the last rise has nothing to bring in.
    let rows = tape["coveredRows"].as_array().unwrap().len();
    assert!(rows >= 2);
    check(
        &|t| {
            t["coveredRows"].as_array_mut().unwrap().pop();
        },
        "invalid-configuration",
        Some(5 * (rows as u64 - 1)),
    );
    // It reports the game before the failed move: its rows are the
    // successful rises' (trace-format.md: 1 + successful rises), as the web
    // page shows the replay up to that move.
    let mut short = tape.clone();
    short["coveredRows"].as_array_mut().unwrap().pop();
    let p = dir.join("short.json");
    std::fs::write(&p, serde_json::to_string(&short).unwrap()).unwrap();
    let o = drop7(&["replay", p.to_str().unwrap()]);
    let rep: Value = serde_json::from_slice(&o.stdout).unwrap();
    let at = 5 * (rows as u64 - 1);
    assert_eq!(rep["moves"], at - 1, "{rep}");
    assert_eq!(rep["coveredRowsConsumed"], rows as u64 - 1, "{rep}");
    assert_eq!(rep["complete"], false, "{rep}");
    assert_eq!(rep["score"], tape["scores"][at as usize - 2], "{rep}");
    // `scores` and `boards` hold one entry per move: empty, one, one short
    // or one extra is a malformed tape, named as such before any move.
    let scores = tape["scores"].as_array().unwrap().clone();
    let boards = tape["boards"].as_array().unwrap().clone();
    assert_eq!((scores.len(), boards.len()), (n, n));
    for (key, full) in [("scores", &scores), ("boards", &boards)] {
        let short = full[..n - 1].to_vec();
        let mut long = full.clone();
        long.push(full[n - 1].clone());
        for (edit, len) in [
            (Vec::new(), 0),
            (full[..1].to_vec(), 1),
            (short, n - 1),
            (long, n + 1),
        ] {
            let mut t = tape.clone();
            t[key] = Value::Array(edit);
            let p = dir.join("edited-length.json");
            std::fs::write(&p, t.to_string()).unwrap();
            let o = drop7(&["replay", p.to_str().unwrap()]);
            assert_eq!(o.status.code(), Some(1), "{key} of {len}");
            let rep: Value = serde_json::from_slice(&o.stdout).unwrap();
            assert_eq!(rep["valid"], false, "{key} of {len}: {rep}");
            assert_eq!(rep["failure"], "invalid-format", "{rep}");
            assert_eq!(
                rep["error"],
                format!("{key} has {len} entries but columns has {n} (one per move)"),
                "{rep}"
            );
        }
    }
    // A repeated key is refused, naming it (not "the last one wins").
    for key in ["score", "columns"] {
        let body = text.trim_end().strip_suffix('}').unwrap();
        let dup = format!("{body},\"{key}\":{}}}", tape[key]);
        let p = dir.join("duplicate.json");
        std::fs::write(&p, dup).unwrap();
        let o = drop7(&["replay", p.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1), "{key}");
        let rep: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(rep["valid"], false, "{rep}");
        assert_eq!(rep["failure"], "invalid-format", "{rep}");
        assert!(
            rep["error"]
                .as_str()
                .unwrap()
                .contains(&format!("duplicate key \"{key}\"")),
            "{rep}"
        );
    }
    // Truncated file.
    let p = dir.join("truncated.json");
    std::fs::write(&p, &text[..text.len() / 2]).unwrap();
    let o = drop7(&["replay", p.to_str().unwrap(), path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let lines = json_lines(&o.stdout);
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["failure"], "invalid-format");
    assert!(lines[0]["error"].as_str().unwrap().contains("truncated"));
    assert_eq!(lines[1]["valid"], true);

    // A game stopped by the move cap is written and replays as not complete.
    let capped = dir.join("capped");
    ok(&[
        "play",
        "--games",
        "1",
        "--max-moves",
        "7",
        "--tapes",
        capped.to_str().unwrap(),
    ]);
    let o = drop7(&[
        "replay",
        capped.join("0x00000001.tape.json").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let rep: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(rep["complete"], false);
    assert_eq!(rep["failure"], "incomplete-game");
    assert_eq!(rep["moves"], 7);
    assert_eq!(rep["failedAtMove"], 7);
}

/// Bad round files get one clear error line naming the field or position.
#[test]
fn bad_round_files() {
    let dir = scratch("bad-rounds");
    let good = std::fs::read_to_string(&rounds()[0]).unwrap();
    let v: Value = serde_json::from_str(&good).unwrap();
    let cases: Vec<(String, &str)> = vec![
        (
            {
                let mut t = v.clone();
                t.as_object_mut().unwrap().remove("discs");
                t.to_string()
            },
            "missing field `discs`",
        ),
        (
            {
                let mut t = v.clone();
                t["format"] = Value::from("drop7-scripted-round-v2");
                t.to_string()
            },
            "format must be",
        ),
        (
            {
                let mut t = v.clone();
                t["discs"][17] = Value::from(8);
                t.to_string()
            },
            "discs[17]",
        ),
        (
            {
                let mut t = v.clone();
                t["latentRows"][3][6] = Value::from(0);
                t.to_string()
            },
            "latentRows[3][6]",
        ),
        (good[..good.len() - 100].to_string(), "truncated"),
        (
            format!(
                "{},\"format\":\"drop7-scripted-round-v1\"}}",
                good.trim_end().strip_suffix('}').unwrap()
            ),
            "duplicate key \"format\"",
        ),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        let p = dir.join(format!("bad{i}.json"));
        std::fs::write(&p, text).unwrap();
        let o = drop7(&["play", "--round", p.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1), "case {i}");
        let err = String::from_utf8(o.stderr).unwrap();
        assert!(
            err.starts_with("error: round file") && err.contains(want),
            "case {i}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

/// 100 positions harvested from real games (`bench-roots-105.txt`).
fn positions() -> Vec<(String, u64, u64)> {
    std::fs::read_to_string(data_path("bench-roots-105.txt"))
        .unwrap()
        .lines()
        .filter_map(|l| {
            let t: Vec<&str> = l.split_whitespace().collect();
            (t.len() == 6 && t[0] == "s" && t[5] == "0").then(|| {
                (
                    t[1].to_string(),
                    t[2].parse().unwrap(),
                    t[3].parse().unwrap(),
                )
            })
        })
        .take(100)
        .collect()
}

/// A scripted D7P session (handshake, 100 real positions, garbage mixed in)
/// answers every position with `drop7 decide`'s column and never crashes.
#[test]
fn d7p_session_matches_decide() {
    let pos = positions();
    assert_eq!(pos.len(), 100);
    let mut session = Vec::new();
    let mut roots = String::new();
    session.extend_from_slice(b"d7p\nisready\ngo\n\n");
    for (i, (b, n, r)) in pos.iter().enumerate() {
        match i % 10 {
            1 => session.extend_from_slice(b"\xff\xfe garbage\n"),
            2 => session.extend_from_slice(b"position board 12345 next 3 rise 2\n"),
            3 => session.extend_from_slice(b"frobnicate\n"),
            4 => {
                session.extend_from_slice(format!("position board {b} next 8 rise 1\n").as_bytes())
            }
            5 => session.extend_from_slice(b"   \n"),
            _ => {}
        }
        session.extend_from_slice(format!("position board {b} next {n} rise {r}\ngo\n").as_bytes());
        roots.push_str(&format!(
            "{{\"board\":\"{b}\",\"next\":{n},\"movesRemaining\":{r}}}\n"
        ));
    }
    session.extend(std::iter::repeat_n(b'x', 2_000_000));
    session.extend_from_slice(b"\nisready\n");
    let run = |args: &[&str], input: &[u8]| -> String {
        let mut child = Command::new(EXE)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let input = input.to_vec();
        let w = std::thread::spawn(move || stdin.write_all(&input));
        let out = child.wait_with_output().unwrap();
        w.join().unwrap().unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let d7p = run(&["d7p", "--policy", "fair:d3s5"], &session);
    // Split over 2 threads: the same lines, but the work of `info depth`.
    let split = run(
        &["d7p", "--policy", "fair:d3s5", "--threads", "2"],
        &session,
    );
    let without_work = |out: &str| -> Vec<String> {
        out.lines()
            .map(|l| match l.find(" work ") {
                Some(k) if l.starts_with("info depth ") => l[..k].to_string(),
                _ => l.to_string(),
            })
            .collect()
    };
    assert_eq!(without_work(&split), without_work(&d7p));
    let decide = run(
        &["decide", "--depth", "3", "--strata", "5"],
        roots.as_bytes(),
    );
    let best: Vec<&str> = d7p
        .lines()
        .filter_map(|l| l.strip_prefix("bestmove "))
        .collect();
    let want: Vec<String> = decide
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            v["action"].to_string()
        })
        .collect();
    assert_eq!(best.len(), 100);
    assert_eq!(best, want);
    let lines: Vec<&str> = d7p.lines().collect();
    assert_eq!(
        &lines[..4],
        &[
            "id name drop7 0.2.0 fair:d3s5",
            "id family fair-expectimax",
            "id public-information true",
            "d7pok"
        ]
    );
    assert_eq!(lines[4], "readyok");
    assert!(lines[5].starts_with("info string error line 3: go before any position"));
    let errors = d7p
        .lines()
        .filter(|l| l.starts_with("info string error"))
        .count();
    assert_eq!(errors, 2 + 5 * 10 + 1, "{d7p}");
    assert_eq!(lines.last(), Some(&"readyok"));
    assert!(d7p.contains("info depth 3 values "));
}

/// Kills a `drop7 d7p` process if an assertion fails (never leave a search
/// running).
struct Kill(u32);

impl Drop for Kill {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let _ = Command::new("kill").arg(self.0.to_string()).status();
        }
    }
}

/// `drop7 d7p --policy fair:d8s32 --table none EXTRA` (a search of minutes)
/// with piped stdin and its stdout lines on a channel; the guard kills it
/// if the test fails.
fn long_d7p(
    extra: &[&str],
) -> (
    std::process::Child,
    std::process::ChildStdin,
    mpsc::Receiver<String>,
    Kill,
) {
    let mut child = Command::new(EXE)
        .args(["d7p", "--policy", "fair:d8s32", "--table", "none"])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let guard = Kill(child.id());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for l in BufReader::new(stdout).lines() {
            if tx.send(l.unwrap()).is_err() {
                break;
            }
        }
    });
    (child, stdin, rx, guard)
}

/// `stop` during a long search answers at once from the deepest completed
/// depth; `quit` exits at once.
#[test]
fn d7p_stop_and_quit() {
    d7p_stop_and_quit_on(&[]);
    d7p_stop_and_quit_on(&["--threads", "2"]);
}

fn d7p_stop_and_quit_on(extra: &[&str]) {
    let (mut child, mut stdin, rx, _guard) = long_d7p(extra);
    writeln!(stdin, "position startpos next 4 rise 5\ngo").unwrap();
    stdin.flush().unwrap();
    // Wait for the first completed iteration, then stop.
    let first = rx.recv_timeout(Duration::from_secs(120)).unwrap();
    assert!(first.starts_with("info depth 1 "), "{first}");
    writeln!(stdin, "stop\nisready").unwrap();
    stdin.flush().unwrap();
    let mut got = Vec::new();
    loop {
        let l = rx
            .recv_timeout(Duration::from_secs(120))
            .expect("an answer after stop, not a hang");
        let done = l == "readyok";
        got.push(l);
        if done {
            break;
        }
    }
    let best = got.iter().find(|l| l.starts_with("bestmove ")).unwrap();
    let col: usize = best["bestmove ".len()..].parse().unwrap();
    assert!(col < 7);
    // Another long search, then quit: the process exits without answering.
    writeln!(stdin, "go\nquit").unwrap();
    stdin.flush().unwrap();
    let status = child.wait().unwrap();
    assert!(status.success());
}

/// Each `stop` read during a search stops that search: `go stop go stop`
/// read in one go answers both searches (stdin kept open, so an unstopped
/// search of minutes would hang here); a `stop` read with no search pending
/// does nothing to a later one.
#[test]
fn d7p_every_stop_stops_its_search() {
    let (mut child, mut stdin, rx, _guard) = long_d7p(&[]);
    let board = "0000000000000000000000000000000000000440308888888";
    write!(
        stdin,
        "position board {board} next 2 rise 2\ngo\nstop\ngo\nstop\n"
    )
    .unwrap();
    stdin.flush().unwrap();
    for k in 1..=2 {
        loop {
            let l = rx
                .recv_timeout(Duration::from_secs(120))
                .unwrap_or_else(|_| panic!("bestmove {k} after its stop, not a hang"));
            if l.starts_with("bestmove ") {
                break;
            }
        }
    }
    // Stops with no search pending: answered by nothing.
    write!(stdin, "stop\nstop\nisready\n").unwrap();
    stdin.flush().unwrap();
    let l = rx.recv_timeout(Duration::from_secs(120)).unwrap();
    assert_eq!(l, "readyok");
    drop(stdin);
    let rest: Vec<String> = rx.iter().collect();
    assert!(rest.is_empty(), "{rest:?}");
    assert!(child.wait().unwrap().success());
    let (code, out, _) = d7p_session(
        &["--policy", "fair:d2s3"],
        &format!("stop\nposition board {board} next 2 rise 2\nstop\ngo\n"),
        Stdio::piped(),
    );
    assert_eq!(code, Some(0));
    assert!(out.contains("info depth 2 "), "{out}");
    assert!(
        out.lines()
            .last()
            .is_some_and(|l| l.starts_with("bestmove ")),
        "{out}"
    );
}

/// An engine whose harness is gone (stdin at its end, no reader on
/// stdout) stops at once, even in a search that would take hours.
#[cfg(unix)]
#[test]
fn d7p_engine_ends_when_its_harness_is_gone() {
    let mut child = Command::new(EXE)
        .args(["d7p", "--policy", "fair:d8s32"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"d7p\nposition startpos next 4 rise 5\ngo\n")
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert!(first.starts_with("id name drop7"), "{first}");
    drop(stdin);
    drop(stdout);
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if start.elapsed() > Duration::from_secs(30) {
            child.kill().unwrap();
            child.wait().unwrap();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(
        status.and_then(|s| s.code()),
        Some(0),
        "still searching after 30 s"
    );
}

/// Runs `drop7 d7p ARGS` on `input` (stdin then closed) with stdout to
/// `stdout`; returns (exit code, stdout, stderr).
fn d7p_session(args: &[&str], input: &str, stdout: Stdio) -> (Option<i32>, String, String) {
    let mut child = Command::new(EXE)
        .arg("d7p")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_string();
    let w = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let out = child.wait_with_output().unwrap();
    w.join().unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// `quit` is handled in its turn: every command read before it is answered
/// (handshake, `readyok`, errors); only a search pending when `quit` is read
/// (a `go` not yet answered, and not stopped by a `stop` read before it)
/// stops without a `bestmove`.
#[test]
fn d7p_quit_answers_what_came_before() {
    let (code, out, _) = d7p_session(&[], "d7p\nisready\nquit\nisready\n", Stdio::piped());
    assert_eq!(code, Some(0));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 5, "{out}");
    assert_eq!(lines[3], "d7pok");
    assert_eq!(lines[4], "readyok", "nothing after quit: {out}");
    let (code, out, _) = d7p_session(&[], "garbage\nisready\nquit\n", Stdio::piped());
    assert_eq!(code, Some(0));
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            "info string error line 1: unknown command \"garbage\"",
            "readyok"
        ],
        "{out}"
    );
    // A long search read before `quit`: the handshake before it is answered,
    // the search stops at once without a bestmove.
    let (code, out, _) = d7p_session(
        &["--policy", "fair:d8s32", "--table", "none"],
        "d7p\nposition startpos next 4 rise 5\ngo\nquit\n",
        Stdio::piped(),
    );
    assert_eq!(code, Some(0));
    assert!(out.contains("d7pok\n"), "{out}");
    assert!(!out.contains("bestmove"), "{out}");
    // A search stopped by a `stop` read before the `quit` answers (as a
    // `stop` promises); a search after that `stop` is cut off by the quit.
    for (input, answers) in [
        ("go\nstop\nquit\n", 1),
        ("go\nstop\ngo\nquit\n", 1),
        ("go\nstop\ngo\nstop\nquit\n", 2),
    ] {
        let (code, out, _) = d7p_session(
            &["--policy", "fair:d8s32", "--table", "none"],
            &format!("position startpos next 4 rise 5\n{input}"),
            Stdio::piped(),
        );
        assert_eq!(code, Some(0));
        assert_eq!(
            out.matches("bestmove ").count(),
            answers,
            "{input:?}: {out}"
        );
    }
    // A `go` before any position is an error line, not a search: a `quit`
    // read right after it hides nothing (its error is written), and a later
    // search pending at `quit` stops without hiding that error either.
    for policy in ["center", "fair:d2s3"] {
        let (code, out, _) = d7p_session(&["--policy", policy], "go\nquit\n", Stdio::piped());
        assert_eq!(code, Some(0));
        assert_eq!(
            out.lines().collect::<Vec<_>>(),
            ["info string error line 1: go before any position; send `position …` first"],
            "{policy}: {out}"
        );
    }
    let (code, out, _) = d7p_session(
        &["--policy", "fair:d8s32", "--table", "none"],
        "isready\ngo\nposition startpos next 4 rise 5\ngo\nquit\n",
        Stdio::piped(),
    );
    assert_eq!(code, Some(0));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "readyok", "{out}");
    assert!(
        lines[1].starts_with("info string error line 2: go before any position"),
        "{out}"
    );
    assert!(!out.contains("bestmove"), "{out}");
}

/// A line over the 64 KiB limit is refused with its length without the line
/// end; one exactly at the limit is read (and refused as a command).
#[test]
fn d7p_long_lines_are_measured_without_their_line_end() {
    let long = "x".repeat(70_000);
    let at_limit = "y".repeat(64 * 1024);
    let input = format!("{long}\r\n{at_limit}\nisready\n");
    let (code, out, _) = d7p_session(&[], &input, Stdio::piped());
    assert_eq!(code, Some(0));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "info string error line 1: line is 70000 bytes long (limit 65536)"
    );
    assert!(
        lines[1].starts_with("info string error line 2: unknown command"),
        "{out}"
    );
    assert_eq!(lines[2], "readyok");
}

/// A UTF-8 BOM is accepted at the start of line 1 only; words after a
/// command that takes none are an error naming the command.
#[test]
fn d7p_bom_and_commands_without_arguments() {
    let input = "\u{feff}d7p\nisready please\n\u{feff}isready\nquit now\nisready\n";
    let (code, out, _) = d7p_session(&["--policy", "center"], input, Stdio::piped());
    assert_eq!(code, Some(0));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 8, "{out}");
    assert_eq!(lines[3], "d7pok");
    assert_eq!(
        lines[4],
        "info string error line 2: isready takes no arguments, got \"please\""
    );
    assert!(
        lines[5].starts_with("info string error line 3: unknown command"),
        "{out}"
    );
    assert_eq!(
        lines[6],
        "info string error line 4: quit takes no arguments, got \"now\""
    );
    assert_eq!(lines[7], "readyok");
}

/// `go` takes no arguments: a UCI-style `go depth 3` is answered as `go`,
/// after an `info string` naming what was ignored.
#[test]
fn d7p_go_with_arguments_is_noted() {
    let input = "position startpos next 3 rise 5\ngo depth 3\ngo\n";
    let (code, out, _) = d7p_session(&["--policy", "center"], input, Stdio::piped());
    assert_eq!(code, Some(0));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert_eq!(
        lines[0],
        "info string line 2: go takes no arguments, ignoring \"depth\" and what follows (the search is set by --policy)"
    );
    assert_eq!(lines[1], "bestmove 3");
    assert_eq!(lines[2], "bestmove 3");
}

/// A budget that lets no iteration complete is said before the fallback
/// answer, as `drop7 decide` warns of it; a `stop` is not warned of.
#[test]
fn d7p_a_budget_that_completes_no_iteration_is_said() {
    let input = "position startpos next 3 rise 5\ngo\n";
    let (code, out, _) = d7p_session(
        &["--policy", "fair:d2s3", "--max-work", "0"],
        input,
        Stdio::piped(),
    );
    assert_eq!(code, Some(0));
    assert_eq!(
        out,
        "info string warning: --max-work 0 let no iteration complete: bestmove is the fallback \
         (first legal column of 3,2,4,1,5,0,6)\nbestmove 3\n"
    );
    let input = "position startpos next 3 rise 5\ngo\nstop\n";
    let (code, out, _) = d7p_session(&["--policy", "fair:d8s32"], input, Stdio::piped());
    assert_eq!(code, Some(0));
    assert!(!out.contains("warning"), "{out}");
    assert!(
        out.lines().last().unwrap().starts_with("bestmove "),
        "{out}"
    );
}

/// A failed stdout write (`/dev/full`) ends `drop7 d7p` with an error, exit 1.
#[test]
fn d7p_stdout_write_error() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let (code, _, err) = d7p_session(&[], "d7p\nisready\n", Stdio::from(full));
    assert_eq!(code, Some(1), "{err}");
    assert!(err.starts_with("error: writing to stdout: "), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// `--policy d7p:"drop7 d7p …"` plays the same games as the built-in policy,
/// for seeds and for rounds.
#[test]
fn d7p_policy_equals_builtin() {
    let dir = scratch("d7p-policy");
    let engine = format!("d7p:{EXE} d7p --policy fair:d2s3");
    let r = rounds();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["--games".into(), "3".into()], "seeds"),
        (vec!["--round".into(), r[0].clone(), r[4].clone()], "rounds"),
    ];
    for (extra, name) in &cases {
        let a = dir.join(format!("{name}-builtin.jsonl"));
        let b = dir.join(format!("{name}-d7p.jsonl"));
        let mut args = vec!["play", "--threads", "2"];
        args.extend(extra.iter().map(String::as_str));
        let mut a_args = args.clone();
        a_args.extend(["--policy", "fair:d2s3", "--out", a.to_str().unwrap()]);
        ok(&a_args);
        let mut b_args = args.clone();
        b_args.extend(["--policy", &engine, "--out", b.to_str().unwrap()]);
        ok(&b_args);
        let (ra, rb) = (jsonl(&a), jsonl(&b));
        assert_eq!(ra.len(), rb.len());
        for (x, y) in ra.iter().zip(&rb) {
            for k in [
                "seed",
                "score",
                "moves",
                "levels",
                "terminalReason",
                "round",
            ] {
                assert_eq!(x.get(k), y.get(k), "{name} {k}");
            }
            assert_eq!(y["engineFailures"], 0);
            assert_eq!(y["illegalChoices"], 0);
            // The engine's answers are timed like the built-in search's
            // decisions (the engine's start-up is not among them; round
            // records carry no latencies).
            if *name == "rounds" {
                continue;
            }
            for q in ["decisionMsP50", "decisionMsP95", "decisionMsP99"] {
                assert!(x[q].as_f64().is_some_and(|ms| ms >= 0.0), "{name} {q}: {x}");
                assert!(y[q].as_f64().is_some_and(|ms| ms >= 0.0), "{name} {q}: {y}");
            }
            assert!(y["decisionMsP50"].as_f64() <= y["decisionMsP99"].as_f64());
        }
    }
}

/// A dead or silent engine never hangs a run: one that fails its handshake
/// before any game is an error (exit 1, one line naming the command); one
/// that fails during the games is restarted, given up after 3 failures in a
/// row (the rest plays the first legal column, counted), then exit 1.
#[test]
fn d7p_policy_dead_and_silent_engines() {
    let dir = scratch("d7p-dead");
    // (A dead engine is seen as "engine exited" or "engine input closed: …".)
    for (cmd, name, why) in [
        ("exit 3", "dead", "engine "),
        ("cat > /dev/null", "silent", "engine silent for 150 ms"),
    ] {
        let out = dir.join(format!("{name}.jsonl"));
        let o = Command::new(EXE)
            .args([
                "play",
                "--games",
                "1",
                "--max-moves",
                "3",
                "--policy",
                &format!("d7p:{cmd}"),
                "--out",
                out.to_str().unwrap(),
            ])
            .env("DROP7_D7P_TIMEOUT_MS", "150")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        assert!(
            err.starts_with(&format!(
                "error: d7p engine {cmd:?} failed its handshake: {why}"
            )),
            "{name}: {err}"
        );
    }
    // Answers the handshake, then dies at the first position.
    let cmd = "read l; echo d7pok; read l; echo readyok; read l";
    let out = dir.join("dies.jsonl");
    let o = Command::new(EXE)
        .args([
            "play",
            "--games",
            "1",
            "--max-moves",
            "6",
            "--policy",
            &format!("d7p:{cmd}"),
            "--out",
            out.to_str().unwrap(),
        ])
        .env("DROP7_D7P_TIMEOUT_MS", "2000")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.matches("restarting it").count(), 2, "{err}");
    assert_eq!(err.matches("giving it up").count(), 1, "{err}");
    assert!(
        err.contains(&format!(
            "error: d7p engine {cmd:?} failed 3 times in a row and was given up"
        )),
        "{err}"
    );
    let rec = &jsonl(&out)[0];
    assert_eq!(rec["moves"], 6);
    assert_eq!(rec["engineFailures"], 6, "{rec}");
    let o = Command::new(EXE)
        .args(["play", "--games", "1", "--policy", "d7p:true"])
        .env("DROP7_D7P_TIMEOUT_MS", "soon")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("DROP7_D7P_TIMEOUT_MS"));
}

/// An engine that floods (endless `info` lines, or one endless line) fails
/// each move at its timeout or at once: restarted, given up after 3 failures
/// in a row, the records written, exit 1; one flooding from the start fails
/// its handshake.
#[test]
fn d7p_policy_flooding_engines() {
    let dir = scratch("d7p-flood");
    let handshake = "read l; echo d7pok; read l; echo readyok;";
    for (cmd, why) in [
        // (Each move first resynchronises: `isready` … `readyok`.)
        (
            format!("{handshake} yes info"),
            "engine sent no readyok within 300 ms",
        ),
        (
            format!("{handshake} yes | tr -d '\\n'"),
            "engine sent a line longer than 65536 bytes",
        ),
        ("yes".to_string(), "engine sent no d7pok within 300 ms"),
    ] {
        let out = dir.join("flood.jsonl");
        let mut child = Command::new(EXE)
            .args(["play", "--games", "1", "--max-moves", "4", "--threads", "1"])
            .args(["--force", "--policy", &format!("d7p:{cmd}")])
            .args(["--out", out.to_str().unwrap()])
            .env("DROP7_D7P_TIMEOUT_MS", "300")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let _guard = Kill(child.id());
        let mut err = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(1), "{cmd}: {err}");
        if cmd == "yes" {
            assert_eq!(
                err.trim(),
                format!(
                    "error: d7p engine \"yes\" failed its handshake: {why} (its last line: \"y\")"
                )
            );
            continue;
        }
        assert_eq!(err.matches(why).count(), 3, "{cmd}: {err}");
        assert_eq!(err.matches("giving it up").count(), 1, "{err}");
        let rec = &jsonl(&out)[0];
        assert_eq!(rec["moves"], 4);
        assert_eq!(rec["engineFailures"], 4, "{rec}");
    }
}

/// An engine that answers without reading its input (its input pipe fills)
/// fails its move ("not reading its input") and is restarted: the run ends
/// with every record instead of blocking on a write for ever. (It sends
/// `readyok` and `bestmove 0` in turn, so each move's resynchronisation
/// finds a `readyok`; the `bestmove` left over from the handshake's is
/// discarded and reported.)
#[test]
fn d7p_policy_engine_that_does_not_read() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let dir = scratch("d7p-noread");
    let out = dir.join("r.jsonl");
    let mut child = Command::new(EXE)
        .args(["play", "--games", "200", "--threads", "1", "--force"])
        .args([
            "--policy",
            "d7p:echo d7pok; yes \"$(printf 'readyok\\nbestmove 0')\"",
        ])
        .args(["--out", out.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A hang guard: the run takes about a second; after 120 s it is killed
    // (and the test fails on its status).
    let (pid, done) = (child.id(), Arc::new(AtomicBool::new(false)));
    let watch = Arc::clone(&done);
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(120));
        if !watch.load(Ordering::SeqCst) {
            let _ = Command::new("kill").arg(pid.to_string()).status();
        }
    });
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    let status = child.wait().unwrap();
    done.store(true, Ordering::SeqCst);
    assert_eq!(status.code(), Some(0), "{err}");
    assert!(
        err.contains("engine is not reading its input; restarting it"),
        "{err}"
    );
    assert!(
        err.contains("sent `bestmove` when no `go` was waiting"),
        "{err}"
    );
    let recs = jsonl(&out);
    assert_eq!(recs.len(), 200);
    let failures: u64 = recs
        .iter()
        .map(|r| r["engineFailures"].as_u64().unwrap())
        .sum();
    assert!(failures > 0);
}

/// Any integer column outside 0..=6 (`bestmove 9`, `-1`, one too large for
/// any integer type) is an illegal choice, as a full column is: counted in
/// `illegalChoices`, the first legal column played, the engine kept, exit 0.
/// A word is a garbled answer (engine restarted, given up after 3, exit 1).
#[test]
fn d7p_policy_column_out_of_range_is_illegal() {
    let dir = scratch("d7p-col9");
    let out = dir.join("r.jsonl");
    let engine = |answer: &str| {
        format!(
            "d7p:while read -r l; do case $l in d7p) echo d7pok;; isready) echo readyok;; \
             go) echo bestmove {answer};; quit) exit 0;; esac; done"
        )
    };
    let play = |answer: &str| {
        drop7(&[
            "play",
            "--games",
            "1",
            "--max-moves",
            "3",
            "--policy",
            &engine(answer),
            "--out",
            out.to_str().unwrap(),
            "--force",
            "--quiet",
        ])
    };
    for answer in ["9", "-1", "99999999999999999999", "-99999999999999999999"] {
        let o = play(answer);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{answer}: {err}");
        assert!(err.is_empty(), "{answer}: {err}");
        let rec = &jsonl(&out)[0];
        assert_eq!(rec["moves"], 3);
        assert_eq!(rec["illegalChoices"], 3, "{answer}: {rec}");
        assert_eq!(rec["engineFailures"], 0, "{answer}: {rec}");
        // The run's summary says so too.
        let summary = String::from_utf8_lossy(&o.stdout);
        assert!(
            summary.contains(
                "\nfallbacks  1 of 1 game had 0 engine failures and 3 illegal choices: \
                 drop7 played the first legal column there\n"
            ),
            "{summary}"
        );
    }
    let o = play("1.5");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(
        err.matches("engine answered \"bestmove 1.5\"").count(),
        3,
        "{err}"
    );
    let rec = &jsonl(&out)[0];
    assert_eq!(rec["engineFailures"], 3, "{rec}");
    assert_eq!(rec["illegalChoices"], 0, "{rec}");
}

/// `show --seed` with a D7P engine that chose a full column or failed: the
/// title counts it; one given up is an error (exit 1, as `play`) after the
/// game is shown. A tape of a game stopped by the move cap shows and says
/// so on its last move (`replay` calls it `incomplete-game`).
#[test]
fn show_says_what_an_engine_and_a_tape_left_out() {
    let engine = |answer: &str| {
        format!(
            "d7p:while read -r l; do case $l in d7p) echo d7pok;; isready) echo readyok;; \
             go) echo bestmove {answer};; quit) exit 0;; esac; done"
        )
    };
    let show = |answer: &str| {
        let engine = engine(answer);
        drop7(&[
            "show",
            "--seed",
            "1",
            "--max-moves",
            "4",
            "--plain",
            "--policy",
            &engine,
        ])
    };
    let o = show("9");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let text = String::from_utf8_lossy(&o.stdout);
    let title = text.lines().next().unwrap();
    assert!(
        title.ends_with(
            ", 0 engine failures, 4 illegal choices: first legal column played: 4 moves"
        ),
        "{title}"
    );
    let o = show("banana");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.ends_with("was given up: the moves after that played the first legal column (counted in engineFailures)\n"), "{err}");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.lines()
            .next()
            .unwrap()
            .contains(", 4 engine failures, 0 illegal choices")
    );
    assert!(
        text.contains("STOPPED by the move cap (--max-moves 4)"),
        "{text}"
    );

    let dir = scratch("show-capped-tape");
    let tapes = dir.join("t");
    ok(&[
        "play",
        "--games",
        "1",
        "--max-moves",
        "5",
        "--tapes",
        tapes.to_str().unwrap(),
    ]);
    let tape = tapes.join("0x00000001.tape.json");
    let o = drop7(&["replay", tape.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stdout).contains("\"failure\":\"incomplete-game\""));
    let text = ok(&["show", "--plain", tape.to_str().unwrap()]);
    let marked: Vec<&str> = text.lines().filter(|l| l.contains("TAPE ENDS")).collect();
    assert_eq!(
        marked,
        [
            "dropped 4 in column 3: +17007 (+17000 level bonus)  TAPE ENDS, game not over (incomplete-game)"
        ],
        "{text}"
    );
    // The tape holds the discs dropped, not the one after: its last
    // position's next disc is unknown (it once said `next 1`).
    assert!(
        text.contains("move 5/5  score 17021  level 2  rise in 5  next ?\n"),
        "{text}"
    );
    assert_eq!(text.matches("next ?").count(), 1, "{text}");
}

/// The fields of a game record that the games decide (not timings).
fn game_fields(recs: &[Value]) -> Vec<Vec<Value>> {
    recs.iter()
        .map(|r| {
            [
                "seed",
                "score",
                "moves",
                "levels",
                "terminalReason",
                "trajectorySha256",
                "engineFailures",
                "illegalChoices",
            ]
            .iter()
            .map(|k| r[*k].clone())
            .collect()
        })
        .collect()
}

/// `drop7 d7p --policy random` answers from the position alone, so a
/// `d7p:` run of it plays the same games on 1 and 2 threads, and a shard
/// plays the same games as its part of the whole run.
#[test]
fn d7p_random_engine_is_deterministic() {
    let dir = scratch("d7p-random");
    let engine = format!("d7p:{EXE} d7p --policy random");
    let run = |name: &str, extra: &[&str]| {
        let out = dir.join(format!("{name}.jsonl"));
        let mut args = vec!["play", "--games", "8", "--policy", &engine, "--quiet"];
        args.extend_from_slice(extra);
        args.extend(["--force", "--out", out.to_str().unwrap()]);
        ok(&args);
        game_fields(&jsonl(&out))
    };
    let one = run("t1", &["--threads", "1"]);
    let two = run("t2", &["--threads", "2"]);
    assert_eq!(one.len(), 8);
    assert_eq!(one, two);
    let shard = run("shard", &["--threads", "2", "--shard", "2/2"]);
    assert_eq!(shard.len(), 4);
    assert_eq!(shard[..], one[4..]);
    // Not one column for every position.
    assert!(one.iter().any(|r| r[1] != one[0][1]), "{one:?}");
}

/// An engine that sends a `bestmove` nobody asked for (here each answer
/// twice, and one more before every `readyok`) does not shift the answers:
/// every move resynchronises (`isready` … `readyok`) before its `go` and
/// discards the stale lines (reported once per engine process), so the
/// games equal those of the well-behaved engine.
#[test]
fn d7p_policy_discards_stale_bestmoves() {
    let dir = scratch("d7p-stale");
    let plain = format!("d7p:{EXE} d7p --policy random");
    let noisy = format!(
        "d7p:{EXE} d7p --policy random | while IFS= read -r l; do case $l in \
         bestmove*) echo \"$l\"; echo \"$l\";; readyok) echo bestmove 6; echo \"$l\";; \
         *) echo \"$l\";; esac; done"
    );
    let mut games = Vec::new();
    for (name, engine) in [("plain", &plain), ("noisy", &noisy)] {
        let out = dir.join(format!("{name}.jsonl"));
        let o = drop7(&[
            "play",
            "--games",
            "4",
            "--threads",
            "1",
            "--policy",
            engine,
            "--quiet",
            "--force",
            "--out",
            out.to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{name}: {err}");
        let warned = err
            .matches("sent `bestmove` when no `go` was waiting for it")
            .count();
        assert_eq!(warned, usize::from(name == "noisy"), "{name}: {err}");
        assert_eq!(err.lines().count(), warned, "{name}: {err}");
        let recs = jsonl(&out);
        assert!(recs.iter().all(|r| r["engineFailures"] == 0), "{name}");
        assert!(recs.iter().all(|r| r["illegalChoices"] == 0), "{name}");
        games.push(game_fields(&recs));
    }
    assert_eq!(games[0], games[1]);
}

/// `play --round --out` guards its file as `play --out` does: a non-empty
/// file is refused without `--force` and left untouched; `--resume` does not
/// apply to round runs (a usage error).
#[test]
fn round_out_is_not_overwritten_without_force() {
    let dir = scratch("round-out");
    let out = dir.join("r.jsonl");
    std::fs::write(&out, "precious\n").unwrap();
    let round = &rounds()[0];
    let o = drop7(&["play", "--round", round, "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("exists and is not empty"), "{err}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "precious\n");
    let o = drop7(&[
        "play",
        "--round",
        round,
        "--out",
        out.to_str().unwrap(),
        "--resume",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("cannot be used with '--resume'"), "{err}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "precious\n");
    ok(&[
        "play",
        "--round",
        round,
        "--out",
        out.to_str().unwrap(),
        "--force",
    ]);
    assert_eq!(jsonl(&out).len(), 1);
}

/// Seed-run options do not apply to a round run: giving one is a usage error
/// (exit 2, one line naming both), never silently ignored.
#[test]
fn round_refuses_seed_options() {
    let round = &rounds()[0];
    for extra in [
        &["--games", "3"][..],
        &["--max-moves", "10"],
        &["--seed-start", "7"],
        &["--driver", "stream"],
        &["--shard", "1/2"],
    ] {
        let mut args = vec!["play", "--round", round.as_str()];
        args.extend_from_slice(extra);
        let o = drop7(&args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}");
        let err = String::from_utf8(o.stderr).unwrap();
        assert!(
            err.contains("'--round <FILE>...' cannot be used with") && err.contains(extra[0]),
            "{extra:?}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    // The thread limit of a seed run holds for rounds too.
    for args in [
        &["play", "--games", "1", "--threads", "1025"][..],
        &["play", "--round", round.as_str(), "--threads", "1025"],
    ] {
        fails(args, &["--threads 1025 exceeds the limit of 1024"]);
    }
}

/// A run refused while setting up leaves no new `--tapes` folder (nor its
/// new parents) behind; a folder that was there is kept.
#[test]
fn a_refused_run_leaves_no_new_tapes_folder() {
    let dir = scratch("tapes-refused");
    let full = dir.join("full.jsonl");
    std::fs::write(&full, "kept\n").unwrap();
    let f = full.to_str().unwrap();
    let round = rounds()[0].clone();
    let fresh = dir.join("new").join("tapes");
    let t = fresh.to_str().unwrap();
    for args in [
        &["play", "--games", "2", "--tapes", t, "--out", f][..],
        &["play", "--games", "2", "--tapes", t, "--threads", "0"],
        &["play", "--round", &round, "--tapes", t, "--out", f],
    ] {
        fails(args, &[]);
        assert!(!dir.join("new").exists(), "{args:?}");
        assert_eq!(std::fs::read_to_string(&full).unwrap(), "kept\n");
    }
    // An existing (empty) folder stays.
    std::fs::create_dir_all(&fresh).unwrap();
    fails(
        &["play", "--games", "2", "--tapes", t, "--out", f],
        &["nothing was changed"],
    );
    assert!(fresh.is_dir());
    // A file at the folder's path, or in its path, is named.
    let file = dir.join("a-file");
    std::fs::write(&file, "x").unwrap();
    let slash = PathBuf::from(format!("{}/", file.display()));
    for (tapes, what) in [
        (file.clone(), ""),
        (slash, ""),
        (file.join("t"), " in its path"),
    ] {
        let t = tapes.to_str().unwrap();
        fails(
            &["play", "--games", "2", "--tapes", t],
            &[&format!(
                "cannot create --tapes directory {t}: {}{what} is a file, not a folder",
                file.display()
            )],
        );
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
}

/// `--out` or `--trace` at a tape's name inside the `--tapes` folder is
/// refused (both writers went into one file: corrupt records and tape, exit 0).
#[test]
fn records_and_tapes_never_share_a_file() {
    let dir = scratch("tapes-share");
    let tapes = dir.join("tt");
    std::fs::create_dir_all(&tapes).unwrap();
    let t = tapes.to_str().unwrap();
    let at = tapes.join("0x00000001.tape.json");
    let a = at.to_str().unwrap();
    // Through another spelling of the folder too.
    let other = format!("{}/../tt/0x00000002.tape.json", t);
    let round = rounds()[0].clone();
    for (args, flag) in [
        (
            vec!["play", "--games", "2", "--tapes", t, "--out", a, "--force"],
            "--out",
        ),
        (
            vec![
                "play", "--games", "2", "--tapes", t, "--trace", a, "--force",
            ],
            "--trace",
        ),
        (
            vec![
                "play", "--games", "2", "--tapes", t, "--out", &other, "--force",
            ],
            "--out",
        ),
        (
            vec![
                "play", "--round", &round, "--tapes", t, "--out", a, "--force",
            ],
            "--out",
        ),
    ] {
        fails(
            &args,
            &[flag, "is a tape's name in --tapes", "nothing was changed"],
        );
        assert_eq!(std::fs::read_dir(&tapes).unwrap().count(), 0, "{args:?}");
    }
    // A --tapes folder the run would create: the same (no folder is left).
    let fresh = dir.join("new");
    let f = fresh.to_str().unwrap();
    let inside = fresh.join("gauntlet-01.tape.json");
    let first = format!("{f}/0x00000001.tape.json");
    for args in [
        vec![
            "play",
            "--round",
            &round,
            "--tapes",
            f,
            "--out",
            inside.to_str().unwrap(),
        ],
        vec![
            "play",
            "--round",
            &round,
            "--tapes",
            f,
            "--trace",
            inside.to_str().unwrap(),
        ],
        vec![
            "play", "--games", "2", "--tapes", f, "--out", &first, "--force",
        ],
    ] {
        fails(
            &args,
            &["is a tape's name in --tapes", "nothing was changed"],
        );
        assert!(!fresh.exists(), "{args:?}");
    }
}

/// A `--resume` (its `--out` exists, with or without records) replaces
/// only tapes of its own policy and driver: another run's, and files that
/// are no tapes, are refused without `--force`.
#[test]
fn an_empty_resume_keeps_another_runs_tapes() {
    let dir = scratch("tapes-foreign");
    let tapes = dir.join("t");
    let t = tapes.to_str().unwrap();
    ok(&[
        "play", "--games", "3", "--policy", "random", "--tapes", t, "--quiet",
    ]);
    let before = std::fs::read_to_string(tapes.join("0x00000001.tape.json")).unwrap();
    let out = dir.join("o.jsonl");
    std::fs::write(&out, "").unwrap();
    let o = out.to_str().unwrap();
    fails(
        &[
            "play", "--games", "3", "--tapes", t, "--out", o, "--resume", "--quiet",
        ],
        &[
            "0x00000001.tape.json was written by policy random, driver headless",
            "(this run: policy center, driver headless)",
            "add --force",
        ],
    );
    assert_eq!(
        std::fs::read_to_string(tapes.join("0x00000001.tape.json")).unwrap(),
        before
    );
    // Its own policy's tapes are replaced (an interrupted run's).
    ok(&[
        "play", "--games", "3", "--policy", "random", "--tapes", t, "--out", o, "--resume",
        "--quiet",
    ]);
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 3);
    // Records kept say nothing of the folder: a resume that kept one still
    // refuses another run's tape and a file that is no tape (both were
    // replaced without a word).
    let full = std::fs::read_to_string(&out).unwrap();
    let first_line = full.lines().next().unwrap();
    let center = dir.join("c");
    let c = center.to_str().unwrap();
    ok(&[
        "play",
        "--games",
        "1",
        "--seed-start",
        "2",
        "--tapes",
        c,
        "--quiet",
    ]);
    let center_tape = std::fs::read_to_string(center.join("0x00000002.tape.json")).unwrap();
    for (name, content, said) in [
        (
            "0x00000002.tape.json",
            center_tape.as_str(),
            "0x00000002.tape.json was written by policy center, driver headless",
        ),
        (
            "0x00000003.tape.json",
            "precious\n",
            "0x00000003.tape.json is not a tape of this run",
        ),
    ] {
        std::fs::write(&out, format!("{first_line}\n")).unwrap();
        let other = dir.join("u");
        let _ = std::fs::remove_dir_all(&other);
        std::fs::create_dir(&other).unwrap();
        std::fs::write(other.join(name), content).unwrap();
        let u = other.to_str().unwrap();
        fails(
            &[
                "play", "--games", "3", "--policy", "random", "--tapes", u, "--out", o, "--resume",
                "--quiet",
            ],
            &[said, "add --force", "nothing was changed"],
        );
        assert_eq!(std::fs::read_to_string(other.join(name)).unwrap(), content);
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            format!("{first_line}\n")
        );
    }
}

/// An illegal choice in a round (here a D7P engine that always answers
/// column 3) is counted in `illegalChoices` and the first legal column is
/// played instead (formats.md, the reference runner); the tape replays valid.
#[test]
fn round_illegal_choice_plays_first_legal() {
    let dir = scratch("round-illegal");
    let out = dir.join("r.jsonl");
    let trace = dir.join("t.jsonl");
    let tapes = dir.join("tapes");
    let engine = "d7p:while read -r l; do case $l in d7p) echo d7pok;; isready) echo readyok;; go) echo bestmove 3;; quit) exit 0;; esac; done";
    let round = &rounds()[0];
    ok(&[
        "play",
        "--round",
        round,
        "--policy",
        engine,
        "--out",
        out.to_str().unwrap(),
        "--trace",
        trace.to_str().unwrap(),
        "--tapes",
        tapes.to_str().unwrap(),
    ]);
    let rec = &jsonl(&out)[0];
    let moves = jsonl(&trace);
    // Column 3 fills up; every later choice of it is illegal and replaced by
    // the first legal column (0..6 ascending).
    let replaced: Vec<&Value> = moves.iter().filter(|m| m["column"] != 3).collect();
    assert!(!replaced.is_empty(), "column 3 never filled");
    assert_eq!(rec["illegalChoices"], replaced.len(), "{rec}");
    assert_eq!(rec["engineFailures"], 0);
    for m in &replaced {
        let before = m["board"].as_str().unwrap();
        // After a replaced move column 3 is still full (top cell occupied).
        assert_ne!(&before[3..4], "0", "{m}");
    }
    assert_eq!(replaced[0]["column"], 0, "first legal column");
    let rep: Value = serde_json::from_str(&ok(&[
        "replay",
        tapes.join("gauntlet-01.tape.json").to_str().unwrap(),
    ]))
    .unwrap();
    assert_eq!(rep["valid"], true, "{rep}");
    assert_eq!(rep["score"], rec["score"]);
    // Two rounds sharing a generator seed: each record counts its own
    // game's illegal choices (they were tallied by seed, all on the first),
    // on one thread and on two.
    let mut copy: Value = serde_json::from_str(&std::fs::read_to_string(round).unwrap()).unwrap();
    copy["id"] = "copy-b".into();
    let other = dir.join("copy-b.json");
    std::fs::write(&other, copy.to_string()).unwrap();
    for threads in ["1", "2"] {
        let both = dir.join(format!("both{threads}.jsonl"));
        ok(&[
            "play",
            "--round",
            round,
            other.to_str().unwrap(),
            "--policy",
            engine,
            "--threads",
            threads,
            "--out",
            both.to_str().unwrap(),
        ]);
        let recs = jsonl(&both);
        for r in &recs {
            assert_eq!(r["illegalChoices"], rec["illegalChoices"], "{threads}: {r}");
            assert_eq!(r["engineFailures"], 0, "{r}");
        }
    }
    // summary and compare say that drop7 played for the policy.
    let (b1, b2) = (dir.join("both1.jsonl"), dir.join("both2.jsonl"));
    let n = rec["illegalChoices"].as_u64().unwrap();
    let text = ok(&["summary", b1.to_str().unwrap()]);
    assert!(
        text.contains(&format!(
            "fallbacks  engine failures 0 (in 0 of 2 games), illegal choices {} (in 2 games)",
            2 * n
        )),
        "{text}"
    );
    let text = ok(&["compare", b1.to_str().unwrap(), b2.to_str().unwrap()]);
    assert!(
        text.contains("fallbacks  2 of 2 pairs have a game where drop7 played"),
        "{text}"
    );
}

/// `d7p --threads`: out of range, or with a policy that does not search, is
/// a one-line error before the handshake.
#[test]
fn d7p_threads_errors() {
    for (args, want) in [
        (vec!["--threads", "0"], "--threads must be 1-256, got 0"),
        (vec!["--threads", "257"], "--threads must be 1-256, got 257"),
        (
            vec!["--policy", "center", "--threads", "2"],
            "--threads applies to a fair policy only",
        ),
    ] {
        let (code, out, err) = d7p_session(&args, "d7p\n", Stdio::piped());
        assert_eq!(code, Some(1), "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}: {out}");
        assert_eq!(err.trim(), format!("error: {want}"), "{args:?}");
    }
}

/// `d7p --table` / `--max-work` with a policy that does not search: a note
/// each on stderr, and the session is served as without them.
#[test]
fn d7p_fair_only_flags_are_noted() {
    let (code, out, err) = d7p_session(
        &[
            "--policy",
            "center",
            "--table",
            "sa:16:2",
            "--max-work",
            "5",
        ],
        "d7p\nisready\n",
        Stdio::piped(),
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(out.ends_with("d7pok\nreadyok\n"), "{out}");
    assert_eq!(
        err.lines().collect::<Vec<_>>(),
        [
            "note: --table applies to fair policies only: ignored for center",
            "note: --max-work applies to fair policies only: ignored for center",
        ],
        "{err}"
    );
    // A bad table is still an error, whatever the policy.
    let (code, _, err) = d7p_session(&["--table", "sa:x"], "d7p\n", Stdio::piped());
    assert_eq!(code, Some(1), "{err}");
    assert!(err.starts_with("error: --table"), "{err}");
}

/// A round's record carries a seed run's per-game detail (`ruleset`,
/// `maxMoves`, `engineVersion`, `chainMeanDepth`, `wallMs`,
/// `trajectorySha256`, a fair policy's `table`, `maxWork`, `work`, `nodes`
/// and decision latencies), and its `trajectorySha256` is recomputable from
/// the round's `--trace` lines (docs/cohorts.md, "Records").
#[test]
fn round_records_carry_the_per_game_detail() {
    use sha2::{Digest, Sha256};
    let dir = scratch("round-detail");
    let out = dir.join("r.jsonl");
    let trace = dir.join("t.jsonl");
    let all = rounds();
    ok(&[
        "play",
        "--round",
        &all[0],
        &all[1],
        "--policy",
        "fair:d1s3",
        "--out",
        out.to_str().unwrap(),
        "--trace",
        trace.to_str().unwrap(),
    ]);
    let recs = jsonl(&out);
    let moves = jsonl(&trace);
    assert_eq!(recs.len(), 2);
    let mut at = 0;
    for rec in &recs {
        assert_eq!(rec["ruleset"], "drop7-hardcore-5-v1", "{rec}");
        assert_eq!(
            rec["engineVersion"],
            concat!("drop7 ", env!("CARGO_PKG_VERSION"))
        );
        assert_eq!(rec["table"], "sa:65536:4");
        assert_eq!(rec["maxWork"], 43);
        assert!(rec["maxMoves"].as_u64().unwrap() > 0, "{rec}");
        assert!(rec["work"].as_u64().unwrap() > 0, "{rec}");
        assert!(rec["nodes"].as_u64().unwrap() > 0, "{rec}");
        assert!(
            rec["wallMs"].is_number() && rec["decisionMsP50"].is_number(),
            "{rec}"
        );
        assert!(rec["chainMeanDepth"].is_number(), "{rec}");
        assert_eq!(rec["illegalChoices"], 0);
        let n = rec["moves"].as_u64().unwrap() as usize;
        let mut h = Sha256::new();
        for m in &moves[at..at + n] {
            h.update(m["column"].to_string().as_bytes());
            h.update(m["board"].as_str().unwrap().as_bytes());
        }
        at += n;
        let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(rec["trajectorySha256"], hex.as_str(), "{rec}");
    }
    assert_eq!(at, moves.len());
    // Rounds with different caps are still one set of records to `summary`
    // (a round's maxMoves is its file's, not the run's).
    let short = dir.join("short.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&all[1]).unwrap()).unwrap();
    v["maximumMoves"] = 100.into();
    v["id"] = "short".into();
    std::fs::write(&short, v.to_string()).unwrap();
    let mixed = dir.join("mixed.jsonl");
    ok(&[
        "play",
        "--round",
        &all[0],
        short.to_str().unwrap(),
        "--out",
        mixed.to_str().unwrap(),
    ]);
    let caps: Vec<u64> = jsonl(&mixed)
        .iter()
        .map(|r| r["maxMoves"].as_u64().unwrap())
        .collect();
    assert_eq!(caps, [2000, 100]);
    let summary = ok(&["summary", mixed.to_str().unwrap()]);
    assert!(summary.contains("move cap per round"), "{summary}");
    // ... and to `compare`, pair by pair (each pair's caps are its round's).
    let greedy = dir.join("mixed-greedy.jsonl");
    ok(&[
        "play",
        "--round",
        &all[0],
        short.to_str().unwrap(),
        "--policy",
        "greedy",
        "--out",
        greedy.to_str().unwrap(),
    ]);
    let compared = ok(&["compare", mixed.to_str().unwrap(), greedy.to_str().unwrap()]);
    assert!(
        compared.contains("2 games paired by round id and seed"),
        "{compared}"
    );
}

/// Two rounds may share a generator seed: their records are two games
/// (keyed by round id), not one counted twice, and `compare` pairs a round
/// only with the same round.
#[test]
fn rounds_sharing_a_seed_are_two_games() {
    let dir = std::env::temp_dir().join(format!("drop7-rounds-seed-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let first = data_path("rounds/gauntlet-01.json");
    let mut r: Value = serde_json::from_str(&std::fs::read_to_string(&first).unwrap()).unwrap();
    r["id"] = "other-round".into();
    let discs: Vec<Value> = r["discs"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .cloned()
        .collect();
    r["discs"] = discs.into();
    let other = dir.join("other.json");
    std::fs::write(&other, r.to_string()).unwrap();
    let (first, other) = (first.to_str().unwrap(), other.to_str().unwrap());
    let out = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let (both, one, two) = (out("both.jsonl"), out("one.jsonl"), out("two.jsonl"));
    ok(&["play", "--round", first, other, "--out", &both]);
    let summary = ok(&["summary", &both]);
    assert!(summary.contains("2 games"), "{summary}");
    ok(&["play", "--round", first, "--out", &one]);
    ok(&["play", "--round", other, "--out", &two]);
    let o = drop7(&["compare", &one, &two]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("share no game"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // The same file twice in one summary: the round named as counted twice.
    let twice = out("twice.jsonl");
    std::fs::write(&twice, std::fs::read_to_string(&both).unwrap().repeat(2)).unwrap();
    let o = drop7(&["summary", &twice]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("line 3: round \"gauntlet-01\" already at"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A stdin that cannot be read (a directory) ends `drop7 d7p` with one
/// error line naming stdin, exit 1, as `decide` and `leaf` do; not a quiet
/// end of input.
#[test]
#[cfg(target_os = "linux")]
fn d7p_unreadable_stdin_is_an_error() {
    let o = Command::new(EXE)
        .arg("d7p")
        .stdin(std::fs::File::open(env!("CARGO_TARGET_TMPDIR")).unwrap())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(o.stdout.is_empty());
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: reading stdin: Is a directory"),
        "{err}"
    );
}

/// A `d7p:` engine that records its shell's pid and its background child's
/// in `pids`, answers the handshake and then never answers.
#[cfg(target_os = "linux")]
fn pid_recording_engine(pids: &std::path::Path) -> String {
    format!(
        "d7p:echo $$ >> {p}; printf 'd7pok\\nreadyok\\n'; sleep 300 & echo $! >> {p}; wait",
        p = pids.display()
    )
}

/// The pids recorded by [`pid_recording_engine`].
#[cfg(target_os = "linux")]
fn recorded_pids(pids: &std::path::Path) -> Vec<u32> {
    std::fs::read_to_string(pids)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// Waits (a few seconds at most) until none of `pids` runs any more (a
/// zombie waiting for init to reap it does not run); the ones still running.
#[cfg(target_os = "linux")]
fn still_running(pids: &[u32]) -> Vec<u32> {
    let running = |p: &u32| {
        std::fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|s| {
            // The state follows the command name in parentheses.
            s.rsplit_once(')')
                .is_some_and(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X']))
        })
    };
    for _ in 0..100 {
        if !pids.iter().any(running) {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let left: Vec<u32> = pids.iter().copied().filter(running).collect();
    for p in &left {
        let _ = Command::new("kill").args(["-9", &p.to_string()]).status();
    }
    left
}

/// Runs `cmd` with its stdout and stderr piped (read to their end, as
/// `drop7 … 2>&1 | tail` does), at most `limit`: `None` when they are
/// still open then (something kept them).
#[cfg(target_os = "linux")]
fn output_within(mut cmd: Command, limit: Duration) -> Option<Output> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(cmd.output().unwrap());
    });
    rx.recv_timeout(limit).ok()
}

/// An engine given up (3 failures in a row) and the engines at the end of a
/// run are killed with everything they started (their process group): no
/// process is left behind, none keeps drop7's stderr open, so
/// `drop7 play … 2>&1 | tail` returns as soon as drop7 exits.
#[test]
#[cfg(target_os = "linux")]
fn d7p_engines_leave_no_process_behind() {
    let dir = scratch("d7p-leak");
    let pids = dir.join("given-up.pids");
    let mut cmd = Command::new(EXE);
    cmd.args(["play", "--games", "1", "--threads", "1", "--policy"])
        .arg(pid_recording_engine(&pids))
        .env("DROP7_D7P_TIMEOUT_MS", "300");
    let o = output_within(cmd, Duration::from_secs(60));
    let recorded = recorded_pids(&pids);
    let left = still_running(&recorded);
    let o = o.expect("drop7's output closes when it exits");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("was given up"), "{err}");
    // The handshake check and the 3 failed moves: 4 engines, 2 pids each.
    assert_eq!(recorded.len(), 8, "{recorded:?}");
    assert!(left.is_empty(), "still running: {left:?}");
    // A run that ends normally: its engine (which ignores `quit`) goes too.
    let pids = dir.join("normal.pids");
    let engine = format!(
        "d7p:echo $$ >> {p}; sleep 300 & echo $! >> {p}; exec {EXE} d7p --policy center",
        p = pids.display()
    );
    let mut cmd = Command::new(EXE);
    cmd.args(["play", "--games", "2", "--threads", "2", "--max-moves", "5"])
        .args(["--policy", &engine]);
    let o = output_within(cmd, Duration::from_secs(60));
    let recorded = recorded_pids(&pids);
    let left = still_running(&recorded);
    let o = o.expect("drop7's output closes when it exits");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(recorded.len() >= 4, "{recorded:?}");
    assert!(left.is_empty(), "still running: {left:?}");
}

/// Ctrl-C (SIGINT to drop7; its engines, in process groups of their own,
/// do not get the terminal's) kills every engine: `play` (seeds or rounds)
/// stops as it does (exit 130), `trace` dies of the signal, and no engine is
/// left.
/// Sends `signal` (`-INT`, `-HUP`, …) to process `pid` with kill(1).
#[cfg(target_os = "linux")]
fn send_signal(pid: u32, signal: &str) {
    let sent = Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .unwrap();
    assert!(sent.success(), "kill {signal} {pid}");
}

#[test]
#[cfg(target_os = "linux")]
fn d7p_engines_die_with_an_interrupted_run() {
    use std::os::unix::process::ExitStatusExt;
    let dir = scratch("d7p-sigint");
    let r = rounds();
    let round_run = ["play", "--round", &r[0], &r[1], "--threads", "2"];
    let seed_run = ["play", "--games", "4", "--threads", "2"];
    for (name, args, engines, signal) in [
        ("play", &seed_run[..], 3, "-INT"),
        // SIGHUP (the terminal closed) stops a run as SIGINT does.
        ("play", &seed_run[..], 3, "-HUP"),
        // Its summary's stdout closed: the interruption is still said.
        ("round", &round_run[..], 3, "-INT"),
        ("trace", &["trace", "--games", "1"][..], 2, "-INT"),
    ] {
        let pids = dir.join(format!("{name}{signal}.pids"));
        let mut child = Command::new(EXE)
            .args(args)
            .arg("--policy")
            .arg(pid_recording_engine(&pids))
            .env("DROP7_D7P_TIMEOUT_MS", "60000")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        if name == "round" {
            drop(child.stdout.take());
        }
        let guard = Kill(child.id());
        // The handshake check's engine, then one per worker, thinking (up
        // to a minute: the other tests load the machine).
        for _ in 0..2400 {
            if recorded_pids(&pids).len() >= 2 * engines {
                break;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        std::thread::sleep(Duration::from_millis(200));
        send_signal(child.id(), signal);
        let (tx, rx) = mpsc::channel();
        let mut stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = std::io::Read::read_to_string(&mut stderr, &mut s);
            let _ = tx.send(s);
        });
        let err = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("drop7's stderr closes when it exits");
        let status = child.wait().unwrap();
        drop(guard);
        let recorded = recorded_pids(&pids);
        let left = still_running(&recorded);
        assert_eq!(recorded.len(), 2 * engines, "{name}: {recorded:?}");
        assert!(left.is_empty(), "{name}: still running: {left:?}");
        if name == "play" {
            let (sig, status_code) = if signal == "-HUP" {
                ("SIGHUP", 129)
            } else {
                ("SIGINT", 130)
            };
            assert_eq!(status.code(), Some(status_code), "{name}: {err}");
            // No game finishes: a worker whose engine is killed abandons its
            // game rather than playing it out with fallback columns.
            assert!(
                err.contains(&format!("interrupted by {sig}: 0 of 4 games done")),
                "{err}"
            );
            assert!(!err.contains("restarting"), "{err}");
        } else if name == "round" {
            assert_eq!(status.code(), Some(130), "{name}: {err}");
            assert!(
                err.contains(
                    "interrupted by SIGINT: 0 of 2 rounds done (not played: gauntlet-01, gauntlet-02)"
                ),
                "{err}"
            );
        } else {
            assert_eq!(status.signal(), Some(2), "{name}: {status:?} {err}");
        }
    }
}

/// Ctrl-C during a round run: no new round starts, the rounds in flight are
/// abandoned, and the finished ones are written (record, tape, trace lines)
/// as an uninterrupted run writes them; exit 130 naming the rounds not
/// played.
#[test]
#[cfg(target_os = "linux")]
fn an_interrupted_round_run_writes_the_rounds_it_finished() {
    let dir = scratch("round-sigint");
    // A round of 3 moves (done in about a second), then a full one (tens of
    // seconds of d4s7 on one thread).
    let mut quick: Value =
        serde_json::from_str(&std::fs::read_to_string(&rounds()[0]).unwrap()).unwrap();
    quick["id"] = "quick".into();
    quick["maximumMoves"] = 3.into();
    let quick_file = dir.join("quick.json");
    std::fs::write(&quick_file, quick.to_string()).unwrap();
    let q = quick_file.to_str().unwrap();
    let r = rounds();
    // Plays `round_files` with fair:d4s7 on one thread into folder `sub`
    // (records, tapes, trace); after 6 s sends `sigints` SIGINTs (none: the
    // run goes to its end).
    let run = |sub: &str, round_files: &[&str], sigints: usize| {
        let folder = dir.join(sub);
        std::fs::create_dir_all(&folder).unwrap();
        let paths = ["o.jsonl", "tapes", "t.jsonl"].map(|f| folder.join(f));
        let child = Command::new(EXE)
            .args(["play", "--policy", "fair:d4s7", "--threads", "1", "--round"])
            .args(round_files)
            .arg("--out")
            .arg(&paths[0])
            .arg("--tapes")
            .arg(&paths[1])
            .arg("--trace")
            .arg(&paths[2])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let guard = Kill(child.id());
        if sigints > 0 {
            std::thread::sleep(Duration::from_secs(6));
        }
        for _ in 0..sigints {
            send_signal(child.id(), "-INT");
        }
        let got = child.wait_with_output().unwrap();
        drop(guard);
        (got, paths)
    };
    let (got, [out, tapes, trace]) = run("once", &[q, &r[1]], 1);
    let err = String::from_utf8_lossy(&got.stderr);
    let said = String::from_utf8_lossy(&got.stdout);
    assert_eq!(got.status.code(), Some(130), "{err}");
    assert_eq!(
        err.trim(),
        "interrupted by SIGINT: 1 of 2 rounds done (not played: gauntlet-02)"
    );
    assert!(said.starts_with("round      quick score "), "{said}");
    assert!(said.contains("\nrounds     1 (policy fair:d4s7"), "{said}");
    // The same files as a run of the quick round alone.
    let (got, [wout, wtapes, wtrace]) = run("whole", &[q], 0);
    assert!(
        got.status.success(),
        "{}",
        String::from_utf8_lossy(&got.stderr)
    );
    let untimed = |p: &std::path::Path| {
        jsonl(p)
            .into_iter()
            .map(|mut v| {
                for k in ["wallMs", "decisionMsP50", "decisionMsP95", "decisionMsP99"] {
                    v.as_object_mut().unwrap().remove(k);
                }
                v
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(untimed(&out), untimed(&wout));
    assert_eq!(
        std::fs::read_to_string(&trace).unwrap(),
        std::fs::read_to_string(&wtrace).unwrap()
    );
    let names = |d: &std::path::Path| {
        let mut n: Vec<_> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        n.sort();
        n
    };
    assert_eq!(names(&tapes), ["quick.tape.json"]);
    assert_eq!(
        std::fs::read(tapes.join("quick.tape.json")).unwrap(),
        std::fs::read(wtapes.join("quick.tape.json")).unwrap()
    );
    // A second Ctrl-C exits at once, but each finished round was written as
    // it finished: the quick round's record, trace lines and tape are there.
    let (got, [aout, atapes, atrace]) = run("again", &[q, &r[1]], 2);
    assert_eq!(got.status.code(), Some(130));
    assert_eq!(untimed(&aout), untimed(&wout));
    assert_eq!(
        std::fs::read_to_string(&atrace).unwrap(),
        std::fs::read_to_string(&wtrace).unwrap()
    );
    assert_eq!(
        std::fs::read(atapes.join("quick.tape.json")).unwrap(),
        std::fs::read(wtapes.join("quick.tape.json")).unwrap()
    );
}

/// A round's tape and trace lines are written before its record, so a failed
/// trace write leaves no record without them; the error says how many rounds
/// were written and that the run cannot be resumed; no temporary tape is left.
#[test]
#[cfg(target_os = "linux")]
fn a_round_run_writes_the_record_last() {
    let dir = scratch("round-record-last");
    let (out, tapes) = (dir.join("o.jsonl"), dir.join("tapes"));
    let r = rounds();
    fails(
        &[
            "play",
            "--round",
            &r[0],
            &r[1],
            "--policy",
            "greedy",
            "--threads",
            "1",
            "--out",
            out.to_str().unwrap(),
            "--tapes",
            tapes.to_str().unwrap(),
            "--trace",
            "/dev/full",
        ],
        &[
            "error: the round run stopped with 0 of 2 rounds written (it cannot be resumed: run it again): writing --trace /dev/full: No space left on device",
        ],
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "");
    let names: Vec<_> = std::fs::read_dir(&tapes)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, ["gauntlet-01.tape.json"]);
}

/// Ctrl-C while the engine's handshake is checked (before any game): exit
/// 130 naming the signal, not a handshake failure; an existing --out kept.
#[test]
#[cfg(target_os = "linux")]
fn d7p_interrupted_during_the_handshake() {
    let dir = scratch("d7p-sigint-handshake");
    let out = dir.join("keep.jsonl");
    std::fs::write(&out, "precious\n").unwrap();
    let child = Command::new(EXE)
        .args(["play", "--games", "4", "--threads", "2", "--force", "--out"])
        .arg(&out)
        .arg("--policy")
        .arg("d7p:sleep 30; printf 'd7pok\\nreadyok\\n'; cat > /dev/null")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let guard = Kill(child.id());
    std::thread::sleep(Duration::from_millis(700));
    send_signal(child.id(), "-INT");
    let got = child.wait_with_output().unwrap();
    drop(guard);
    let err = String::from_utf8_lossy(&got.stderr);
    assert_eq!(got.status.code(), Some(130), "{err}");
    assert_eq!(
        err.trim(),
        "error: interrupted by SIGINT while starting the d7p engine: no game was played"
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "precious\n");
}

/// A run whose policy cannot start (a D7P engine failing its handshake, a bad
/// `DROP7_D7P_TIMEOUT_MS`) loses nothing: with `--force` the existing `--out`
/// and `--trace` keep their bytes (they are emptied only once the engine
/// started), and `--resume` keeps an interrupted record's tail.
#[test]
fn a_policy_that_cannot_start_empties_no_file() {
    let dir = scratch("no-start");
    let (out, trace) = (dir.join("w.jsonl"), dir.join("wt"));
    let (o, t) = (out.to_str().unwrap(), trace.to_str().unwrap());
    let round = rounds()[0].clone();
    let seeds = ["play", "--games", "2", "--trace", t];
    let rounds_run = ["play", "--round", round.as_str(), "--trace", t];
    for run in [&seeds[..], &rounds_run[..]] {
        std::fs::write(&out, "precious records\n").unwrap();
        std::fs::write(&trace, "precious trace\n").unwrap();
        let mut args = run.to_vec();
        args.extend(["--policy", "d7p:false", "--out", o, "--force"]);
        fails(&args, &["d7p engine \"false\" failed its handshake"]);
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "precious records\n");
        assert_eq!(std::fs::read_to_string(&trace).unwrap(), "precious trace\n");
    }
    // --resume: the kept records and the interrupted tail stay until the run starts.
    let policy = format!("d7p:{EXE} d7p");
    let args = ["play", "--games", "3", "--policy", &policy, "--out", o];
    ok(&[&args[..], &["--force"]].concat());
    let first = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string();
    let cut = format!("{first}\n{{\"seed\":\"0x");
    std::fs::write(&out, &cut).unwrap();
    let o2 = Command::new(EXE)
        .args([&args[..], &["--resume"]].concat())
        .env("DROP7_D7P_TIMEOUT_MS", "soon")
        .output()
        .unwrap();
    assert_eq!(o2.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o2.stderr).contains("DROP7_D7P_TIMEOUT_MS"));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), cut);
    ok(&[&args[..], &["--resume"]].concat());
    assert_eq!(jsonl(&out).len(), 3);
}

/// `--tapes` names a round's tape after its `id` only when the id is a plain
/// file name: `../x`, `/abs`, ``, `..`, a control character or over 200
/// bytes are refused before anything is written (naming file and id); the
/// summary line shows an id with a newline escaped, on one line.
#[test]
fn round_ids_that_are_no_file_name_are_refused_for_tapes() {
    let dir = scratch("round-ids");
    let tapes = dir.join("t");
    let out = dir.join("r.jsonl");
    let base: Value =
        serde_json::from_str(&std::fs::read_to_string(&rounds()[0]).unwrap()).unwrap();
    let long = "x".repeat(201);
    for (id, why) in [
        ("../escaped", "contains a / or \\"),
        ("/tmp/drop7-abs", "contains a / or \\"),
        ("a\\b", "contains a / or \\"),
        ("", "it is empty"),
        ("..", "names a folder"),
        ("a\nb", "control character"),
        ("ab\u{202E}cd", "bidirectional-control character"),
        (long.as_str(), "201 bytes long (limit 200)"),
    ] {
        let mut r = base.clone();
        r["id"] = Value::from(id);
        let file = dir.join("bad.json");
        std::fs::write(&file, r.to_string()).unwrap();
        let f = file.to_str().unwrap();
        fails(
            &[
                "play",
                "--round",
                f,
                "--policy",
                "greedy",
                "--tapes",
                tapes.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ],
            &[
                &format!("round file {f}: id {id:?} cannot name its tape file"),
                why,
            ],
        );
        assert!(!tapes.exists() && !out.exists(), "{id:?}");
        assert!(!dir.join("escaped.tape.json").exists());
        // Without --tapes any string is an id (formats.md); the summary stays one line per round.
        let shown = ok(&["play", "--round", f, "--policy", "greedy"]);
        let line = shown.lines().next().unwrap();
        assert!(line.starts_with("round      "), "{shown}");
        if id.contains('\n') {
            assert!(line.starts_with("round      \"a\\nb\" score "), "{line}");
        }
        if id.contains('\u{202E}') {
            // Escaped: the override cannot reorder the line on a terminal.
            assert!(
                line.starts_with("round      \"ab\\u{202e}cd\" score "),
                "{line}"
            );
        }
    }
    assert!(!std::path::Path::new("/tmp/drop7-abs.tape.json").exists());
}

/// `--tapes` overwrites an existing tape only with `--force` (as `--out` and
/// `--trace`): refused before the run starts, naming the file; one round
/// given twice (the same file, or a copy) is refused, with or without
/// `--tapes`, even with `--force`.
#[test]
fn tapes_are_not_overwritten_without_force() {
    let dir = scratch("tapes-force");
    let tapes = dir.join("t4");
    let out = dir.join("g.jsonl");
    let (t, o) = (tapes.to_str().unwrap(), out.to_str().unwrap());
    std::fs::create_dir_all(&tapes).unwrap();
    let precious = tapes.join("0x00000002.tape.json");
    std::fs::write(&precious, "precious\n").unwrap();
    let args = [
        "play", "--games", "3", "--policy", "greedy", "--tapes", t, "--out", o,
    ];
    fails(
        &args,
        &[
            &format!("--tapes {} exists", precious.display()),
            "add --force",
        ],
    );
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "precious\n");
    assert!(!out.exists());
    assert_eq!(std::fs::read_dir(&tapes).unwrap().count(), 1);
    // Tapes of other seeds are not this run's: kept, and the run goes on.
    ok(&["play", "--games", "1", "--policy", "greedy", "--tapes", t]);
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "precious\n");
    // A --resume that starts fresh (no --out yet) is a plain run: refused.
    fails(
        &[&args[..], &["--resume"]].concat(),
        &["--tapes", ".tape.json exists", "add --force"],
    );
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "precious\n");
    assert!(!out.exists());
    ok(&[&args[..], &["--force"]].concat());
    let o2 = ok(&["replay", precious.to_str().unwrap()]);
    assert!(o2.contains("\"valid\":true"), "{o2}");
    // A --resume that keeps games replaces the tapes of the games it plays
    // again (an interrupted run's tapes may be ahead of its records) when
    // they name its policy and driver; a file that is no tape is refused.
    let recs = std::fs::read_to_string(&out).unwrap();
    std::fs::write(&out, recs.lines().next().unwrap().to_string() + "\n").unwrap();
    let tape = std::fs::read_to_string(&precious).unwrap();
    std::fs::write(&precious, "stale\n").unwrap();
    fails(
        &[&args[..], &["--resume"]].concat(),
        &[
            "0x00000002.tape.json is not a tape of this run",
            "add --force",
        ],
    );
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "stale\n");
    std::fs::write(&precious, format!(" {tape}")).unwrap();
    ok(&[&args[..], &["--resume"]].concat());
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 3);
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), tape);
    // Rounds: an existing tape, then one round file given twice.
    let round = rounds()[0].clone();
    let rtape = tapes.join("gauntlet-01.tape.json");
    std::fs::write(&rtape, "precious\n").unwrap();
    fails(
        &[
            "play", "--round", &round, "--policy", "greedy", "--tapes", t,
        ],
        &[&format!("--tapes {} exists", rtape.display())],
    );
    assert_eq!(std::fs::read_to_string(&rtape).unwrap(), "precious\n");
    fails(
        &[
            "play", "--round", &round, &round, "--policy", "greedy", "--tapes", t, "--force",
        ],
        &["is given twice", "\"gauntlet-01\"", "count one game twice"],
    );
    assert_eq!(std::fs::read_to_string(&rtape).unwrap(), "precious\n");
    // Without --tapes too: the records would be one game counted twice
    // (and a copy of the file is the same round).
    let copy = dir.join("copy.round.json");
    std::fs::copy(&round, &copy).unwrap();
    let rout = dir.join("r.jsonl");
    std::fs::write(&rout, "kept\n").unwrap();
    fails(
        &[
            "play",
            "--round",
            &round,
            copy.to_str().unwrap(),
            "--policy",
            "greedy",
            "--out",
            rout.to_str().unwrap(),
            "--force",
        ],
        &[
            "are the same round",
            "copy.round.json",
            "nothing was changed",
        ],
    );
    assert_eq!(std::fs::read_to_string(&rout).unwrap(), "kept\n");
    ok(&[
        "play", "--round", &round, "--policy", "greedy", "--tapes", t, "--force",
    ]);
    assert_ne!(std::fs::read_to_string(&rtape).unwrap(), "precious\n");
}

/// Files read whole (tapes, rounds) are capped at 256 MiB, record lines
/// at 1 MiB and bench's data lines at 64 KiB, measured while reading: an
/// endless input (`/dev/zero`) is
/// refused at once with a line naming it, not read into memory.
#[cfg(unix)]
#[test]
fn endless_inputs_are_refused_not_read_whole() {
    let o = drop7(&["replay", "/dev/zero"]);
    assert_eq!(o.status.code(), Some(1));
    let line = String::from_utf8(o.stdout).unwrap();
    assert!(
        line.contains("cannot read /dev/zero: larger than 256 MiB"),
        "{line}"
    );
    fails(
        &["play", "--round", "/dev/zero"],
        &["round file /dev/zero: larger than 256 MiB"],
    );
    fails(
        &["show", "/dev/zero"],
        &["tape /dev/zero: larger than 256 MiB"],
    );
    fails(
        &["summary", "/dev/zero"],
        &["/dev/zero: line 1 is longer than 1048576 bytes"],
    );
    let dir = scratch("endless");
    let m = dir.join("m.jsonl");
    // merge reads each shard twice: a device is refused before reading.
    fails(
        &["merge", m.to_str().unwrap(), "/dev/zero"],
        &["shard /dev/zero is not a regular file (merge reads each shard twice"],
    );
    assert!(!m.exists());
    // bench's data files are read line by line: the first line over 64 KiB
    // is refused as soon as it passes the limit; a missing file is named
    // with its flag.
    for (suite, flag, file, needles) in [
        (
            "search",
            "--roots-file",
            "/dev/zero",
            &[
                "--roots-file /dev/zero line 1",
                "line is longer than 65536 bytes",
            ][..],
        ),
        (
            "leaf",
            "--leaf-file",
            "/dev/zero",
            &[
                "--leaf-file /dev/zero line 1",
                "line is longer than 65536 bytes",
            ],
        ),
        (
            "search",
            "--roots-file",
            "/nonexistent/r.txt",
            &["cannot open --roots-file /nonexistent/r.txt"],
        ),
    ] {
        fails(&["bench", "--suite", suite, "--quick", flag, file], needles);
    }
}

//! Input hygiene by kind (one test per bad-input class, asserting message and
//! exit status): byte-order mark and CRLF, duplicated JSON keys, over-long
//! lines, invalid UTF-8, failed and closed stdout, game-over roots as
//! `drop7 trace` prints them, big searches, budgets that let no iteration
//! complete, and the gravity choice on the CPU the tests run on (also under
//! `qemu-x86_64 -cpu Westmere`, see `scripts/test-qemu.sh`).

mod common;

use std::io::Write;
use std::process::{Output, Stdio};

use common::drop7_command;

const ROOT: &str =
    r#"{"board":"0000000000000000000000000000000000000000008888888","next":4,"movesRemaining":5}"#;

/// Runs `drop7 args` with `stdin` as its input.
fn run_with_input(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = drop7_command()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("drop7 starts");
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin).unwrap();
    drop(input);
    child.wait_with_output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn lines(o: &Output) -> Vec<serde_json::Value> {
    text(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

#[test]
fn bom_and_crlf_are_accepted() {
    let input = format!("\u{FEFF}{ROOT}\r\n{ROOT}\r\n");
    for cmd in [&["leaf"][..], &["decide", "--depth", "1"]] {
        let o = run_with_input(cmd, input.as_bytes());
        assert_eq!(o.status.code(), Some(0), "{cmd:?}: {}", text(&o.stderr));
        let mut out = lines(&o);
        assert_eq!(out.len(), 2, "{cmd:?}");
        for v in &mut out {
            v.as_object_mut().unwrap().remove("ms");
        }
        assert_eq!(
            out[0], out[1],
            "{cmd:?}: BOM line answered like the plain one"
        );
    }
}

#[test]
fn duplicate_json_key_is_refused_by_name() {
    let dup = ROOT.replace(r#""next":4"#, r#""next":4,"next":3"#);
    for cmd in [&["leaf"][..], &["decide", "--depth", "1"]] {
        let o = run_with_input(cmd, format!("{dup}\n{ROOT}\n").as_bytes());
        assert_eq!(o.status.code(), Some(1), "{cmd:?}");
        let out = lines(&o);
        assert_eq!(out[0]["line"], 1);
        let err = out[0]["error"].as_str().unwrap();
        assert!(err.contains(r#"duplicate key "next""#), "{err}");
        assert!(
            out[1].get("error").is_none(),
            "the next line is still answered"
        );
    }
}

#[test]
fn over_long_line_is_refused_with_the_limit() {
    // 1 MiB without a line end, then a good line.
    let mut input = vec![b' '; 1 << 20];
    input.extend_from_slice(format!("\n{ROOT}\n").as_bytes());
    let o = run_with_input(&["leaf"], &input);
    assert_eq!(o.status.code(), Some(1));
    let out = lines(&o);
    assert_eq!(out.len(), 2);
    assert_eq!(out[0]["line"], 1);
    assert_eq!(
        out[0]["error"],
        "line is longer than 65536 bytes (the limit of an input line)"
    );
    assert!(out[1]["bits"].is_string());
}

#[test]
fn invalid_utf8_line_is_refused() {
    let mut input = b"{\"board\":\xFF}\n".to_vec();
    input.extend_from_slice(format!("{ROOT}\n").as_bytes());
    let o = run_with_input(&["leaf"], &input);
    assert_eq!(o.status.code(), Some(1));
    let out = lines(&o);
    assert_eq!(out[0]["error"], "line is not valid UTF-8");
    assert!(out[1]["bits"].is_string());
}

#[test]
#[cfg(target_os = "linux")]
fn failed_stdout_write_is_an_error() {
    let dir = common::scratch_in("hygiene", "full-stdout");
    let shard = |i: &str| dir.join(format!("s{i}.jsonl"));
    for i in ["1", "2"] {
        common::ok(&[
            "play",
            "--games",
            "4",
            "--shard",
            &format!("{i}/2"),
            "--out",
            common::s(&shard(i)),
        ]);
    }
    let (merged, rout) = (dir.join("m.jsonl"), dir.join("r.jsonl"));
    let (s1, s2) = (shard("1"), shard("2"));
    let round = common::data_path("rounds/gauntlet-01.json");
    let commands: [&[&str]; 9] = [
        &["--help"],
        &["--version"],
        &["trace", "--help"],
        &["trace"],
        &["play", "--games", "3"],
        &["leaf"],
        // These printed with println! (a panic, exit 101).
        &["serve", "--port", "0"],
        &[
            "merge",
            "--force",
            common::s(&merged),
            common::s(&s1),
            common::s(&s2),
        ],
        // The round's records are written before the summary is printed.
        &[
            "play",
            "--round",
            common::s(&round),
            "--out",
            common::s(&rout),
            "--force",
        ],
    ];
    for args in commands {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let o = drop7_command()
            .args(args)
            .stdin(Stdio::from(
                std::fs::File::open(common::data_path("roots.txt")).unwrap(),
            ))
            .stdout(full)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.starts_with("error: writing") && err.contains("stdout"),
            "{args:?}: {err}"
        );
    }
    // Nothing the two file-writing commands wrote was lost.
    assert_eq!(std::fs::read_to_string(&merged).unwrap().lines().count(), 4);
    assert_eq!(std::fs::read_to_string(&rout).unwrap().lines().count(), 1);
}

#[test]
fn closed_stdout_pipe_ends_quietly() {
    for args in [&["trace", "--games", "200"][..], &["--help"]] {
        let mut child = drop7_command()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}");
        assert_eq!(text(&o.stderr), "", "{args:?}");
    }
}

/// The last line of a game `drop7 trace` prints (center policy, seed 1 ends
/// in a blocked rise): `movesRemaining` 0, `gameOver` true, no next disc.
fn game_over_trace_line() -> String {
    let o = drop7_command().args(["trace"]).output().unwrap();
    assert!(o.status.success());
    let last = text(&o.stdout).lines().last().unwrap().to_string();
    let v: serde_json::Value = serde_json::from_str(&last).unwrap();
    assert_eq!(v["gameOver"], true);
    assert_eq!(v["movesRemaining"], 0);
    assert!(v.get("next").is_none());
    last
}

#[test]
fn game_over_root_as_trace_prints_it() {
    let line = game_over_trace_line() + "\n";
    let o = run_with_input(&["leaf"], line.as_bytes());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // search.md §9: a game-over leaf is -2,500,000.
    assert_eq!(lines(&o)[0]["bits"], "c14312d000000000");
    let o = run_with_input(&["decide"], line.as_bytes());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // search.md §7: no action, completed depth 0, null values, zero counters.
    let d = &lines(&o)[0];
    assert_eq!(d["action"], serde_json::Value::Null);
    assert_eq!(d["completedDepth"], 0);
    assert!(d["values"].as_array().unwrap().iter().all(|v| v.is_null()));
    for k in ["work", "nodes", "cacheHits", "leafCalls", "moveCalls"] {
        assert_eq!(d[k], 0, "{k}");
    }
    // Without gameOver the same line is refused (movesRemaining 0, no next).
    let alive = line.replace(r#""gameOver":true"#, r#""gameOver":false"#);
    let o = run_with_input(&["leaf"], alive.as_bytes());
    assert_eq!(o.status.code(), Some(1));
    let err = lines(&o)[0]["error"].as_str().unwrap().to_string();
    assert!(err.contains("missing key \"next\""), "{err}");
}

#[test]
fn big_search_warns_before_it_starts() {
    let line = game_over_trace_line() + "\n";
    let o = run_with_input(
        &["decide", "--depth", "8", "--strata", "32"],
        line.as_bytes(),
    );
    assert_eq!(o.status.code(), Some(0));
    let err = text(&o.stderr);
    assert!(
        err.starts_with(
            "warning: --depth 8 --strata 32 may take up to 12,762,329,762,212,784,096 work units"
        ),
        "{err}"
    );
    // A small search does not warn.
    let o = run_with_input(&["decide", "--depth", "2"], format!("{ROOT}\n").as_bytes());
    assert_eq!(text(&o.stderr), "");
}

/// A full board has no legal column: `decide` answers action null, values
/// null, completed depth 0 (search.md §4) without the budget warning.
#[test]
fn no_legal_column_answers_without_a_warning() {
    let o = drop7_command()
        .args([
            "decide",
            "--board",
            "1111111111111111111111111111111111111111111111111",
            "--next",
            "2",
            "--rise",
            "2",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(text(&o.stderr), "");
    let d = &lines(&o)[0];
    assert_eq!(d["action"], serde_json::Value::Null, "{d}");
    assert_eq!(d["completedDepth"], 0, "{d}");
    assert!(
        d["values"]
            .as_array()
            .unwrap()
            .iter()
            .all(serde_json::Value::is_null),
        "{d}"
    );
}

#[test]
fn budget_without_a_completed_iteration_warns_of_the_fallback() {
    let o = run_with_input(
        &["decide", "--depth", "3", "--max-work", "5"],
        format!("{ROOT}\n").as_bytes(),
    );
    assert_eq!(o.status.code(), Some(0));
    let err = text(&o.stderr);
    assert!(
        err.contains(
            "warning: line 1: --max-work 5 let no iteration complete: the action is the fallback"
        ),
        "{err}"
    );
    let d = &lines(&o)[0];
    assert_eq!(d["completedDepth"], 0);
    assert_eq!(d["action"], 3);
    // A fair `play` with such a budget says so before it starts.
    let o = drop7_command()
        .args([
            "play",
            "--games",
            "1",
            "--policy",
            "fair:d2s3",
            "--max-work",
            "3",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let err = text(&o.stderr);
    assert!(
        err.starts_with(
            "warning: --max-work 3 lets no search iteration complete on the opening position"
        ),
        "{err}"
    );
    let o = drop7_command()
        .args([
            "play",
            "--games",
            "1",
            "--policy",
            "fair:d2s3",
            "--max-work",
            "1000",
        ])
        .output()
        .unwrap();
    assert_eq!(text(&o.stderr), "");
}

#[test]
fn gravity_choice_on_this_cpu() {
    let has_bmi2 = drop7::gravity::Bmi2::detect().is_some();
    let o = drop7_command()
        .args(["play", "--games", "20", "--gravity", "bmi2"])
        .output()
        .unwrap();
    if has_bmi2 {
        assert_eq!(o.status.code(), Some(0));
    } else {
        assert_eq!(o.status.code(), Some(1));
        assert_eq!(
            text(&o.stderr),
            "error: --gravity bmi2 requested but this CPU has no BMI2\n"
        );
    }
    let auto = drop7_command()
        .args(["play", "--games", "20", "--gravity", "auto"])
        .output()
        .unwrap();
    let summary = text(&auto.stdout);
    let want = drop7::gravity::GravityChoice::Auto
        .resolve()
        .unwrap()
        .name();
    assert!(summary.contains(&format!("(gravity {want})")), "{summary}");
    if !has_bmi2 {
        assert_eq!(want, "portable");
    }
    // Same records whichever path.
    let portable = drop7_command()
        .args(["trace", "--games", "20", "--gravity", "portable"])
        .output()
        .unwrap();
    let auto = drop7_command()
        .args(["trace", "--games", "20", "--gravity", "auto"])
        .output()
        .unwrap();
    assert!(portable.status.success() && auto.status.success());
    assert_eq!(portable.stdout, auto.stdout);
}

/// An input line's `"id"` (any JSON value) is copied into its answer, first,
/// for decide and leaf, errors included; lines without one are unchanged.
#[test]
fn answers_carry_the_input_id() {
    const B: &str = "0000000000000000000000000000000000000000008888888";
    let input = format!(
        "{{\"id\":\"a\",\"board\":\"{B}\",\"next\":4,\"movesRemaining\":5}}\n\
         \n\
         {{\"board\":\"{B}\",\"next\":9,\"movesRemaining\":5,\"id\":{{\"k\":[1,2]}}}}\n\
         {ROOT}\n\
         {{\"id\":7,\"board\":\"{B}\"\n\
         {{\"id\":123456789012345678901234567890,\"board\":\"{B}\",\"next\":4,\"movesRemaining\":5}}\n\
         {{\"id\": -0,\"board\":\"{B}\",\"next\":4,\"movesRemaining\":5}}\n\
         {{\"id\":null,\"board\":\"{B}\",\"next\":4,\"movesRemaining\":5}}\n\
         [\"id\"]\n\
         {{\"id\":1e400,\"board\":\"{B}\",\"next\":4,\"movesRemaining\":5}}\n"
    );
    for command in ["decide", "leaf"] {
        let args: &[&str] = if command == "decide" {
            &["decide", "--depth", "1"]
        } else {
            &["leaf"]
        };
        let o = run_with_input(args, input.as_bytes());
        assert_eq!(o.status.code(), Some(1), "{command}: {}", text(&o.stderr));
        let out = text(&o.stdout);
        let l: Vec<&str> = out.lines().collect();
        assert_eq!(l.len(), 9, "{command}: {out}");
        // Not an object, or an id that is no JSON value: no id.
        assert!(
            l[7].starts_with(r#"{"line":9,"error":"#),
            "{command}: {}",
            l[7]
        );
        assert!(!l[8].contains("\"id\""), "{command}: {}", l[8]);
        // Copied verbatim: no rounding to a double, no `-0.0`; null kept.
        assert!(
            l[4].starts_with(r#"{"id":123456789012345678901234567890,"#),
            "{command}: {}",
            l[4]
        );
        assert!(l[5].starts_with(r#"{"id":-0,"#), "{command}: {}", l[5]);
        assert!(l[6].starts_with(r#"{"id":null,"#), "{command}: {}", l[6]);
        assert!(l[0].starts_with(r#"{"id":"a","#), "{command}: {}", l[0]);
        assert!(
            l[1].starts_with(r#"{"id":{"k":[1,2]},"line":3,"error":"#),
            "{command}: {}",
            l[1]
        );
        assert!(!l[2].contains("\"id\""), "{command}: {}", l[2]);
        // Not valid JSON: no id to copy.
        assert!(
            l[3].starts_with(r#"{"line":5,"error":"#),
            "{command}: {}",
            l[3]
        );
        let v = lines(&o);
        assert_eq!(v[0]["id"], "a");
        if command == "decide" {
            assert_eq!(v[0]["completedDepth"], 1);
        }
    }
}

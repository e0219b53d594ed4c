//! The search side of the `drop7` binary end to end: `decide` reproduces the
//! golden search records (values as bits, action, completed depth and the
//! strict-LRU counters) from stdin lines and from flags, answers malformed lines
//! in place; `leaf` reproduces the golden leaf bits; `play --policy fair:…` is
//! independent of threads and table; `bench --suite leaf|search` writes JSON.

mod common;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Output, Stdio};

use common::read_jsonl_gz;
use serde_json::{Value, json};

/// Runs `drop7 args…` with `stdin` fed in; the gravity path is the default
/// unless `args` choose one.
fn drop7_stdin(args: &[&str], stdin: &str) -> Output {
    let mut child = common::drop7_command()
        .args(args)
        .env_remove("DROP7_GRAVITY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("drop7 runs");
    let mut pipe = child.stdin.take().expect("stdin");
    let input = stdin.to_owned();
    // Feed stdin from a thread: the child answers as it reads.
    let feeder = std::thread::spawn(move || {
        let _ = pipe.write_all(input.as_bytes());
    });
    let out = child.wait_with_output().expect("drop7 finishes");
    feeder.join().unwrap();
    out
}

fn drop7(args: &[&str]) -> Output {
    drop7_stdin(args, "")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The stdout lines of `out`, each parsed as JSON.
fn json_lines(out: &Output) -> Vec<Value> {
    String::from_utf8(out.stdout.clone())
        .expect("UTF-8 stdout")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-search-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The root line `drop7 decide` reads, from a golden search record.
fn root_line(g: &Value) -> String {
    json!({"board": g["board"], "next": g["next"], "movesRemaining": g["movesRemaining"]})
        .to_string()
}

/// The golden search records, grouped by configuration name.
fn search_records() -> BTreeMap<String, Vec<Value>> {
    let mut by = BTreeMap::<String, Vec<Value>>::new();
    for g in read_jsonl_gz("search.jsonl.gz") {
        by.entry(g["config"]["name"].as_str().unwrap().to_string())
            .or_default()
            .push(g);
    }
    by
}

/// `--table` for a golden record's cache capacity (0 = no table).
fn table_for(g: &Value) -> String {
    match g["config"]["cacheCapacity"].as_u64().unwrap() {
        0 => "none".into(),
        c => format!("lru:{c}"),
    }
}

/// The `decide` flags reproducing a golden record's configuration.
fn config_args(g: &Value) -> Vec<String> {
    let c = &g["config"];
    vec![
        "decide".into(),
        "--depth".into(),
        c["depth"].to_string(),
        "--strata".into(),
        c["strata"].to_string(),
        "--table".into(),
        table_for(g),
        "--max-work".into(),
        c["maxWork"].to_string(),
    ]
}

const COUNTERS: [&str; 7] = [
    "work",
    "nodes",
    "cacheHits",
    "cacheEntries",
    "evictions",
    "leafCalls",
    "moveCalls",
];

/// Mismatching fields of a `decide` answer against a golden record.
fn diff(got: &Value, g: &Value, counters: bool) -> Vec<String> {
    let mut keys = vec!["values", "action", "completedDepth"];
    if counters {
        keys.extend(COUNTERS);
    }
    let mut bad: Vec<String> = keys
        .into_iter()
        .filter(|k| got[*k] != g[*k])
        .map(|k| format!("{k}: got {} want {}", got[k], g[k]))
        .collect();
    // Expected scores as numbers (the golden file writes `%.17g`, so a whole
    // number has no `.0`; both parse exactly: serde_json's float_roundtrip).
    let scores = |v: &Value| -> Vec<Option<f64>> {
        v["expectedScores"]
            .as_array()
            .unwrap_or_else(|| panic!("no expectedScores array: {v}"))
            .iter()
            .map(Value::as_f64)
            .collect()
    };
    if scores(got) != scores(g) {
        bad.push(format!(
            "expectedScores: got {} want {}",
            got["expectedScores"], g["expectedScores"]
        ));
    }
    bad
}

/// One `drop7 decide` process for all `records` (same configuration) with
/// `extra` flags; every answer must match its record.
fn check_config(records: &[Value], extra: &[&str], counters: bool) {
    let mut args = config_args(&records[0]);
    args.extend(extra.iter().map(ToString::to_string));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let input: String = records.iter().map(|g| root_line(g) + "\n").collect();
    let out = drop7_stdin(&args, &input);
    assert!(out.status.success(), "drop7 {args:?}: {}", stderr(&out));
    let got = json_lines(&out);
    assert_eq!(
        got.len(),
        records.len(),
        "drop7 {args:?}: one answer per line"
    );
    let mut bad = Vec::new();
    for (a, g) in got.iter().zip(records) {
        let d = diff(a, g, counters);
        if !d.is_empty() {
            bad.push(format!("root {}: {}", g["root"], d.join("; ")));
        }
    }
    assert!(
        bad.is_empty(),
        "drop7 {args:?}: {} of {} records differ:\n{}",
        bad.len(),
        records.len(),
        bad[..bad.len().min(10)].join("\n")
    );
}

#[test]
fn decide_reproduces_golden_configs() {
    let by = search_records();
    for name in [
        "d2s5",
        "d2s5-notable",
        "d3s5-lru500",
        "d3s5-budget60000",
        "d3s5-notable",
    ] {
        let records = &by[name];
        assert!(records.len() >= 90, "{name}: {} records", records.len());
        check_config(records, &[], true);
    }
    // Both gravity paths (the default is the CPU's best).
    check_config(&by["d2s5"], &["--gravity", "portable"], true);
}

#[test]
fn decide_single_root_from_flags() {
    let by = search_records();
    for g in by["d3s5"].iter().step_by(30) {
        let mut args = config_args(g);
        let board = g["board"].as_str().unwrap().to_string();
        args.extend([
            "--board".into(),
            board,
            "--next".into(),
            g["next"].to_string(),
            "--rise".into(),
            g["movesRemaining"].to_string(),
        ]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = drop7(&args);
        assert!(out.status.success(), "drop7 {args:?}: {}", stderr(&out));
        let got = json_lines(&out);
        assert_eq!(got.len(), 1);
        let d = diff(&got[0], g, true);
        assert!(d.is_empty(), "root {}: {}", g["root"], d.join("; "));
    }
}

#[test]
fn decide_values_independent_of_table() {
    // Values, actions and completed depths are independent of the table when
    // the budget does not bind (the default budget W(D,S)+1 never does).
    let by = search_records();
    let records: Vec<Value> = by["d3s5"].iter().step_by(3).cloned().collect();
    let input: String = records.iter().map(|g| root_line(g) + "\n").collect();
    for table in ["none", "dm:1024", "sa:4096:2", "sa:65536:4", "lru:100"] {
        let args = ["decide", "--depth", "3", "--strata", "5", "--table", table];
        let out = drop7_stdin(&args, &input);
        assert!(out.status.success(), "--table {table}: {}", stderr(&out));
        let got = json_lines(&out);
        assert_eq!(got.len(), records.len());
        for (a, g) in got.iter().zip(&records) {
            let d = diff(a, g, false);
            assert!(
                d.is_empty(),
                "--table {table} root {}: {}",
                g["root"],
                d.join("; ")
            );
            if table == "none" {
                assert_eq!(a["cacheHits"], 0);
                assert_eq!(a["cacheEntries"], 0);
            }
        }
    }
}

#[test]
fn decide_threads_split_gives_one_thread_values() {
    // `--threads N` splits each decision: values, actions and completed depths
    // are the golden ones; with no table the counters too.
    let by = search_records();
    for name in ["d3s5-notable", "d3s7"] {
        let records: Vec<Value> = by[name].iter().step_by(5).cloned().collect();
        check_config(&records, &["--threads", "2"], name.ends_with("notable"));
        check_config(&records[..4], &["--threads", "3"], false);
    }
    let bad = [
        (vec!["--threads", "0"], "--threads must be 1-"),
        (vec!["--threads", "100000"], "--threads must be 1-"),
        (vec!["--threads", "x"], "--threads"),
        (
            vec!["--threads", "2", "--search", "reference"],
            "--search fast only",
        ),
    ];
    for (extra, want) in bad {
        let mut args = vec!["decide", "--depth", "2"];
        args.extend(extra.iter().copied());
        let out = drop7_stdin(&args, "");
        assert!(!out.status.success(), "drop7 {args:?}");
        let err = stderr(&out);
        assert!(err.contains(want), "drop7 {args:?}: {err}");
    }
}

#[test]
fn fair_play_one_game_splits_decisions() {
    let dir = scratch("play-split");
    let run = |tag: &str, threads: &str| -> (Vec<u8>, String) {
        let path = dir.join(format!("{tag}.jsonl"));
        let p = path.to_str().unwrap();
        let args = [
            "play",
            "--policy",
            "fair:d2s7",
            "--games",
            "1",
            "--threads",
            threads,
            "--out",
            p,
        ];
        let out = drop7(&args);
        assert!(out.status.success(), "drop7 {args:?}: {}", stderr(&out));
        let summary = String::from_utf8(out.stdout).unwrap();
        (std::fs::read(&path).unwrap(), summary)
    };
    // The same game; wall-clock fields differ between runs, and a split
    // decision's counters (`work`, `nodes`) are sums over threads sharing one
    // table, so they may differ from one thread's (docs/commands.md: split decisions).
    let game = |bytes: &[u8]| -> Value {
        let mut v: Value = serde_json::from_slice(bytes).unwrap();
        for k in [
            "wallMs",
            "decisionMsP50",
            "decisionMsP95",
            "decisionMsP99",
            "work",
            "nodes",
        ] {
            v.as_object_mut().unwrap().remove(k);
        }
        v
    };
    let (one, _) = run("t1", "1");
    let (two, summary) = run("t2", "2");
    assert_eq!(game(&two), game(&one), "records of a split run");
    assert!(
        summary.contains("each decision split over 2"),
        "summary: {summary}"
    );
}

#[test]
fn decide_answers_malformed_lines_in_place() {
    let good = r#"{"board":"0000000000000000000000000000000000000440308888888","next":2,"movesRemaining":2}"#;
    let floating = format!(
        r#"{{"board":"1{}","next":3,"movesRemaining":4}}"#,
        "0".repeat(48)
    );
    let input = [
        good,
        "{not json",
        r#"{"board":"000","next":1,"movesRemaining":5}"#,
        r#"{"board":"0000000000000000000000000000000000000440308888888","next":0,"movesRemaining":2}"#,
        r#"{"board":"0000000000000000000000000000000000000440308888888","next":2,"movesRemaining":6}"#,
        &floating,
        "",
        "   ",
        good,
    ]
    .join("\n")
        + "\n";
    let out = drop7_stdin(&["decide", "--depth", "2", "--strata", "5"], &input);
    assert_eq!(out.status.code(), Some(1), "stderr: {}", stderr(&out));
    let got = json_lines(&out);
    assert_eq!(got.len(), 7, "blank lines are skipped: {got:?}");
    // Lines 1 and 9 answered with the same decision; 2-6 with errors in place.
    assert_eq!(got[0]["completedDepth"], 2);
    assert_eq!(got[6]["values"], got[0]["values"]);
    assert_eq!(got[6]["action"], got[0]["action"]);
    let errors: [(usize, &str); 5] = [
        (2, ""),
        (3, "49"),
        (4, "next"),
        (5, "movesRemaining"),
        (6, "bottom-packed"),
    ];
    for (k, (line, needle)) in errors.into_iter().enumerate() {
        let e = &got[k + 1];
        let obj = e.as_object().unwrap_or_else(|| panic!("{e}"));
        assert_eq!(obj.len(), 2, "{e}");
        assert_eq!(e["line"], line, "{e}");
        let msg = e["error"].as_str().unwrap_or_else(|| panic!("{e}"));
        assert!(
            !msg.is_empty() && msg.contains(needle),
            "line {line}: {msg:?}"
        );
    }
}

#[test]
fn leaf_reproduces_golden_bits() {
    let records = read_jsonl_gz("leaf.jsonl.gz");
    let chosen: Vec<&Value> = records
        .iter()
        .enumerate()
        .filter(|(i, g)| i % 50 == 0 || g["gameOver"] == true)
        .map(|(_, g)| g)
        .collect();
    assert_eq!(chosen.iter().filter(|g| g["gameOver"] == true).count(), 3);
    assert!(chosen.len() >= 300);
    let input: String = chosen
        .iter()
        .map(|g| {
            json!({"board": g["board"], "next": g["next"], "movesRemaining": g["movesRemaining"], "gameOver": g["gameOver"]})
                .to_string()
                + "\n"
        })
        .collect();
    let out = drop7_stdin(&["leaf"], &input);
    assert!(out.status.success(), "{}", stderr(&out));
    let got = json_lines(&out);
    assert_eq!(got.len(), chosen.len());
    for (a, g) in got.iter().zip(&chosen) {
        assert_eq!(a["bits"], g["bits"], "{}", g["board"]);
        let v = f64::from_bits(u64::from_str_radix(a["bits"].as_str().unwrap(), 16).unwrap());
        assert_eq!(a["value"].as_f64().unwrap().to_bits(), v.to_bits());
    }

    // Garbage is answered in place; the rest still is.
    let first = json!({"board": chosen[1]["board"], "next": chosen[1]["next"], "movesRemaining": chosen[1]["movesRemaining"]}).to_string();
    let input = format!(
        "{first}\ngarbage\n\n{{\"board\":\"12\",\"next\":1,\"movesRemaining\":1}}\n{first}\n"
    );
    let out = drop7_stdin(&["leaf"], &input);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let got = json_lines(&out);
    assert_eq!(got.len(), 4, "{got:?}");
    assert_eq!(got[0]["bits"], chosen[1]["bits"]);
    assert_eq!(got[1]["line"], 2);
    assert!(got[1]["error"].is_string());
    assert_eq!(got[2]["line"], 4);
    assert!(got[2]["error"].is_string());
    assert_eq!(got[3]["bits"], chosen[1]["bits"]);
}

#[test]
fn fair_play_independent_of_threads_and_table() {
    let dir = scratch("play");
    let run = |tag: &str, extra: &[&str]| -> Vec<u8> {
        let path = dir.join(format!("{tag}.jsonl"));
        let p = path.to_str().unwrap();
        let mut args = vec!["play", "--policy", "fair:d2s5", "--games", "4", "--out", p];
        args.extend_from_slice(extra);
        let out = drop7(&args);
        assert!(out.status.success(), "drop7 {args:?}: {}", stderr(&out));
        std::fs::read(&path).unwrap()
    };
    let base = run("t1", &["--threads", "1"]);
    let text = String::from_utf8(base.clone()).unwrap();
    assert_eq!(text.lines().count(), 4);
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["policy"], "fair:d2s5");
        assert!(v["moves"].as_u64().unwrap() > 0);
    }
    // Records without the wall-clock fields (and, across tables, without the
    // table and its search counters): the games themselves.
    let games = |bytes: &[u8], drop_table: bool| -> Vec<Value> {
        let mut skip = vec!["wallMs", "decisionMsP50", "decisionMsP95", "decisionMsP99"];
        if drop_table {
            skip.extend(["table", "work", "nodes"]);
        }
        String::from_utf8(bytes.to_vec())
            .unwrap()
            .lines()
            .map(|l| {
                let mut v: Value = serde_json::from_str(l).unwrap();
                for k in &skip {
                    v.as_object_mut().unwrap().remove(*k);
                }
                v
            })
            .collect()
    };
    assert_eq!(
        games(&run("t2", &["--threads", "2"]), false),
        games(&base, false),
        "--threads 2"
    );
    for table in ["none", "dm:4096", "sa:4096"] {
        let tag = table.replace(':', "-");
        assert_eq!(
            games(&run(&tag, &["--threads", "2", "--table", table]), true),
            games(&base, true),
            "--table {table}"
        );
    }
}

#[test]
fn bench_cohort_quick_writes_json() {
    let dir = scratch("bench-cohort");
    let out = dir.join("cohort.json");
    let o = out.to_str().unwrap();
    let run = drop7(&["bench", "--suite", "cohort", "--quick", "--out", o]);
    assert!(run.status.success(), "{}", stderr(&run));
    let text = String::from_utf8(run.stdout).unwrap();
    assert!(text.starts_with("machine: "), "{text}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let c = &v["cohort"];
    assert_eq!(c["policy"], "fair:d2s5");
    assert_eq!(c["seedStart"], "0xa52e1300");
    let runs = c["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["threads"], 1);
    assert_eq!(runs[1]["threads"], 2);
    assert_eq!(runs[0]["moves"], runs[1]["moves"]);
    assert!(runs[0]["gamesPerHour"].as_f64().unwrap() > 0.0);
    assert!(v["machine"]["bmi2"].is_boolean());
    let bad = drop7(&[
        "bench",
        "--suite",
        "cohort",
        "--cohort-games",
        "0",
        "--out",
        o,
    ]);
    assert!(!bad.status.success());
    assert!(stderr(&bad).contains("--cohort-games"), "{}", stderr(&bad));
}

#[test]
fn bench_search_quick_writes_json() {
    let dir = scratch("bench-search");
    let path = dir.join("search.json");
    let out = drop7(&[
        "bench",
        "--suite",
        "search",
        "--quick",
        "--out",
        path.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(v["quick"], true);
    let s = &v["search"];
    // The default roots are built into the binary (it runs away from its
    // source tree, e.g. installed or in a container).
    assert_eq!(s["rootsFile"], "bench-roots-105.txt (built in)");
    let d4 = &s["d4s7"];
    assert_eq!(d4["depth"], 4);
    assert_eq!(d4["strata"], 7);
    assert_eq!(d4["maxWork"], 11_892_399);
    let arms = d4["arms"].as_array().unwrap();
    let names: Vec<&str> = arms.iter().map(|a| a["arm"].as_str().unwrap()).collect();
    for want in [
        "lru:200000",
        "dm:65536",
        "sa:65536:2",
        "sa:65536:4",
        "none",
        "reference",
    ] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    for a in arms {
        for key in [
            "roots",
            "msPerDecision",
            "msMedian",
            "workPerDecision",
            "nodesPerDecision",
            "hitsPerDecision",
        ] {
            assert!(a[key].is_number(), "{key} of {a}");
        }
        assert!(a["msPerDecision"].as_f64().unwrap() > 0.0);
    }
    // The strict-LRU arm and the reference agree on every counter.
    assert_eq!(arms[0]["hitsVsLru"], 1.0);
    let reference = arms.iter().find(|a| a["arm"] == "reference").unwrap();
    assert_eq!(reference["hitsVsLru"], 1.0);
    // sa:/dm: arms run iteration D alone (as `decide`): no hits ratio
    // against the LRU's 1..D.
    for a in arms {
        let deepest = a["table"].as_str().unwrap().starts_with(['s', 'd']);
        assert_eq!(a["iterations"], if deepest { "D" } else { "1..D" }, "{a}");
        if deepest {
            assert!(a["hitsVsLru"].is_null(), "{a}");
        }
    }
    assert!(
        d4["ratios"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["arm"] == "sa:65536:4" && r["baseline"] == "reference")
    );
    assert_eq!(s["d3s7"]["arms"][0]["roots"], 10);
    assert!(s.get("d5s7").is_none(), "--quick skips d5s7");
}

#[test]
fn bench_leaf_writes_json() {
    let dir = scratch("bench-leaf");
    let path = dir.join("leaf.json");
    let out = drop7(&[
        "bench",
        "--suite",
        "leaf",
        "--quick",
        "--out",
        path.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let l = &v["leaf"];
    assert_eq!(l["file"], "leaf.jsonl.gz (built in)");
    assert_eq!(l["states"], 15_003);
    assert_eq!(l["timedStates"], 15_000);
    assert_eq!(l["verified"], 15_003);
    assert_eq!(l["goldenChecked"], 15_003);
    let arms = l["arms"].as_array().unwrap();
    assert_eq!(arms.len(), 2);
    for a in arms {
        assert!(a["nsPerLeaf"].as_f64().unwrap() > 0.0, "{a}");
        assert!(a["leaves"].as_u64().unwrap() >= 15_000, "{a}");
    }
    assert!(l["ratio"]["speedup"].as_f64().unwrap() > 0.0);
    // Marked as every other ratio is (the load itself depends on the host).
    assert!(l["ratio"]["underLoad"].is_boolean(), "{}", l["ratio"]);
    assert!(v.get("search").is_none() && v.get("engine").is_none());
}

/// A roots file shorter than the arms ask for: the arms use what is there
/// and say so on stderr (roots 0, 2, 4 and 8 for the d5s7 arm). The roots
/// are all-gray boards one move from the rise, so each search is tiny.
#[test]
fn bench_notes_a_short_roots_file() {
    let dir = scratch("bench-short-roots");
    let roots = dir.join("roots.txt");
    let board = format!("0000000{}", "8".repeat(42));
    std::fs::write(&roots, format!("s {board} 3 1 1 0\ns {board} 4 1 1 0\n")).unwrap();
    let json = dir.join("search.json");
    let out = drop7(&[
        "bench",
        "--suite",
        "search",
        "--quick",
        "--roots-file",
        roots.to_str().unwrap(),
        "--search-roots",
        "5",
        "--d5-roots",
        "3",
        "--out",
        json.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("note: --search-roots 5: the roots file has 2 roots, all of them are used"),
        "{err}"
    );
    assert!(
        err.contains(
            "note: --d5-roots 3: the roots file has 2 roots, so 1 of roots 0, 2, 4 and 8 are used"
        ),
        "{err}"
    );
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["search"]["d5s7"]["roots"], 1, "{}", v["search"]["d5s7"]);
}

#[test]
fn bench_rejects_bad_options() {
    let dir = scratch("bench-bad");
    let out_path = dir.join("never.json");
    let o = out_path.to_str().unwrap();
    for args in [
        &["bench", "--suite", "bogus"][..],
        &["bench", "--suite", "search", "--d3-table", "dm:1000"][..],
        &[
            "bench",
            "--suite",
            "leaf",
            "--leaf-file",
            "/nonexistent/leaf.jsonl",
        ][..],
        &["bench", "--suite", "leaf", "--leaf-seconds", "1e300"][..],
        &["bench", "--suite", "search", "--d5-roots", "5"][..],
    ] {
        let mut args = args.to_vec();
        args.extend(["--out", o]);
        let out = drop7(&args);
        assert_eq!(out.status.code(), Some(1), "drop7 {args:?}");
        let err = stderr(&out);
        assert!(
            err.starts_with("error: ") && err.trim_end().lines().count() == 1,
            "drop7 {args:?}: {err:?}"
        );
        assert!(!out_path.exists(), "drop7 {args:?} wrote --out");
    }
}

/// `trace --roots` prints the position before every move (the opening
/// position, then each move's board, drops before the rise and next disc),
/// and `decide` on those roots chooses the columns the fair player played.
#[test]
fn trace_roots_feed_decide_with_the_players_positions() {
    let common_args = [
        "trace",
        "--policy",
        "fair:d2s5",
        "--seed-start",
        "0x5EED3000",
        "--games",
        "2",
        "--max-moves",
        "12",
    ];
    let moves = json_lines(&drop7(&common_args));
    let mut with_roots = common_args.to_vec();
    with_roots.push("--roots");
    let out = drop7(&with_roots);
    assert!(out.status.success(), "{}", stderr(&out));
    let roots = json_lines(&out);
    assert_eq!(roots.len(), moves.len());
    for (k, (root, mv)) in roots.iter().zip(&moves).enumerate() {
        assert_eq!(root["seed"], mv["seed"]);
        assert_eq!(root["move"], mv["move"]);
        assert_eq!(root["next"], mv["disc"], "line {k}");
        if mv["move"] == 1 {
            assert_eq!(root["board"], "0".repeat(42) + "8888888");
            assert_eq!(root["movesRemaining"], 5);
        } else {
            assert_eq!(root["board"], moves[k - 1]["board"], "line {k}");
            assert_eq!(root["movesRemaining"], moves[k - 1]["movesRemaining"]);
        }
    }
    let input: String = roots.iter().map(|r| format!("{r}\n")).collect();
    let decided = json_lines(&drop7_stdin(
        &["decide", "--depth", "2", "--strata", "5"],
        &input,
    ));
    assert_eq!(decided.len(), moves.len());
    for (d, mv) in decided.iter().zip(&moves) {
        assert_eq!(
            d["action"], mv["column"],
            "seed {} move {}",
            mv["seed"], mv["move"]
        );
        // Each answer carries its root's seed and move.
        assert_eq!((&d["seed"], &d["move"]), (&mv["seed"], &mv["move"]));
    }
    // First, as the roots wrote them; `leaf` too; and after an `"id"`.
    let first = input.lines().next().unwrap();
    let out = drop7_stdin(&["decide", "--depth", "1"], &format!("{first}\n"));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with(r#"{"seed":1592602624,"move":1,"action":"#),
        "{text}"
    );
    let leafed = drop7_stdin(&["leaf"], &format!("{first}\n"));
    let text = String::from_utf8(leafed.stdout).unwrap();
    assert!(
        text.starts_with(r#"{"seed":1592602624,"move":1,"value":"#),
        "{text}"
    );
    let with_id = format!("{{\"id\":\"x\",{}\n", &first[1..]);
    let out = drop7_stdin(&["decide", "--depth", "1"], &with_id);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with(r#"{"id":"x","seed":1592602624,"move":1,"action":"#),
        "{text}"
    );
    // A repeated "seed" is an error line, which still carries the "id".
    let twice = format!("{{\"id\":7,\"seed\":1,{}\n", &first[1..]);
    let out = drop7_stdin(&["decide", "--depth", "1"], &twice);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with(r#"{"id":7,"line":1,"error":"#), "{text}");
}

//! The `drop7` binary end to end: `trace` output byte-equal to the golden
//! first blocks, `play` records independent of threads, gravity path and
//! engine, `--resume` after an interruption, and one-line errors for bad input.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{first_block, read_lines_gz};

fn drop7(args: &[&str]) -> Output {
    common::drop7_command()
        .args(args)
        .env_remove("DROP7_GRAVITY")
        .output()
        .expect("drop7 runs")
}

fn ok(args: &[&str]) -> Vec<u8> {
    let out = drop7(args);
    assert!(
        out.status.success(),
        "drop7 {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn has_bmi2() -> bool {
    drop7::gravity::Bmi2::detect().is_some()
}

/// The golden first blocks of `file` for seeds `first..=last`, one line each.
fn golden(file: &str, first: u64, last: u64) -> String {
    let mut want = String::new();
    for line in read_lines_gz(file) {
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        let seed = v["seed"].as_u64().unwrap();
        if (first..=last).contains(&seed) {
            want.push_str(&first_block(&line));
            want.push('\n');
        }
    }
    want
}

#[test]
fn trace_matches_golden_first_blocks() {
    let cases = [
        ("trajectories-center.jsonl.gz", "headless", "center"),
        ("trajectories-random.jsonl.gz", "headless", "random"),
        ("trajectories-stream-center.jsonl.gz", "stream", "center"),
        ("trajectories-stream-random.jsonl.gz", "stream", "random"),
    ];
    let mut setups = vec![
        vec!["--engine", "packed", "--gravity", "portable"],
        vec!["--engine", "reference"],
    ];
    if has_bmi2() {
        setups.push(vec!["--engine", "packed", "--gravity", "bmi2"]);
    }
    for (file, driver, policy) in cases {
        let want = golden(file, 17, 24);
        assert!(want.lines().count() > 100, "{file}: too few golden lines");
        for setup in &setups {
            let mut args = vec![
                "trace",
                "--driver",
                driver,
                "--policy",
                policy,
                "--seed-start",
                "0x11",
                "--games",
                "8",
            ];
            args.extend(setup);
            let got = String::from_utf8(ok(&args)).unwrap();
            assert!(got == want, "drop7 {args:?}: output differs from {file}");
        }
    }
}

#[test]
fn trace_move_cap_cuts_games() {
    let out = String::from_utf8(ok(&[
        "trace",
        "--seed-start",
        "5",
        "--games",
        "3",
        "--max-moves",
        "4",
    ]))
    .unwrap();
    let moves: Vec<(u64, u64)> = out
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (v["seed"].as_u64().unwrap(), v["move"].as_u64().unwrap())
        })
        .collect();
    let want: Vec<(u64, u64)> = (5..8).flat_map(|s| (1..=4).map(move |m| (s, m))).collect();
    assert_eq!(moves, want);
}

/// Record bytes without the fields that may differ between two runs of the
/// same cohort (wall clock, engine version, shard), keys otherwise in order.
fn stable(bytes: &[u8]) -> Vec<u8> {
    let mut text = String::from_utf8(bytes.to_vec()).unwrap();
    for key in [
        "wallMs",
        "decisionMsP50",
        "decisionMsP95",
        "decisionMsP99",
        "engineVersion",
        "shard",
    ] {
        let pat = format!(",\"{key}\":");
        while let Some(at) = text.find(&pat) {
            let rest = &text[at + pat.len()..];
            let end = rest.find([',', '}']).unwrap();
            text.replace_range(at..at + pat.len() + end, "");
        }
    }
    text.into_bytes()
}

/// [`play_raw`] with the wall-clock fields stripped ([`stable`]).
fn play_to(dir: &Path, name: &str, extra: &[&str]) -> Vec<u8> {
    stable(&play_raw(dir, name, extra))
}

fn play_raw(dir: &Path, name: &str, extra: &[&str]) -> Vec<u8> {
    let path = dir.join(name);
    let p = path.to_str().unwrap();
    let mut args = vec![
        "play",
        "--games",
        "3000",
        "--seed-start",
        "0xFFFFFF00",
        "--out",
        p,
    ];
    args.extend(extra);
    let summary = String::from_utf8(ok(&args)).unwrap();
    assert!(summary.contains("games      3000"), "{summary}");
    std::fs::read(&path).unwrap()
}

#[test]
fn play_is_deterministic_across_threads_gravity_and_engine() {
    let dir = scratch("determinism");
    let base = play_to(
        &dir,
        "t1.jsonl",
        &["--threads", "1", "--gravity", "portable"],
    );
    let lines: Vec<&str> = std::str::from_utf8(&base).unwrap().lines().collect();
    assert_eq!(lines.len(), 3000);
    // Seeds wrap mod 2^32, in order.
    assert!(lines[0].starts_with(r#"{"seed":"0xffffff00","policy":"center","driver":"headless","#));
    assert!(lines[255].starts_with(r#"{"seed":"0xffffffff""#));
    assert!(lines[256].starts_with(r#"{"seed":"0x00000000""#));
    assert!(lines[2999].starts_with(r#"{"seed":"0x00000ab7""#));
    assert_eq!(
        play_to(
            &dir,
            "t2.jsonl",
            &["--threads", "2", "--gravity", "portable"]
        ),
        base
    );
    assert_eq!(play_to(&dir, "t3.jsonl", &["--threads", "3"]), base);
    assert_eq!(
        play_to(
            &dir,
            "ref.jsonl",
            &["--threads", "2", "--engine", "reference"]
        ),
        base
    );
    if has_bmi2() {
        assert_eq!(
            play_to(&dir, "b1.jsonl", &["--threads", "1", "--gravity", "bmi2"]),
            base
        );
        assert_eq!(
            play_to(&dir, "b2.jsonl", &["--threads", "2", "--gravity", "bmi2"]),
            base
        );
    }
    let random1 = play_to(
        &dir,
        "r1.jsonl",
        &["--threads", "1", "--policy", "random", "--driver", "stream"],
    );
    let random2 = play_to(
        &dir,
        "r2.jsonl",
        &["--threads", "2", "--policy", "random", "--driver", "stream"],
    );
    assert_eq!(random1, random2);
    assert!(
        std::str::from_utf8(&random1)
            .unwrap()
            .contains(r#""policy":"random","driver":"stream""#)
    );
}

#[test]
fn play_summary_on_stdout() {
    let s = String::from_utf8(ok(&["play", "--games", "200", "--threads", "2"])).unwrap();
    for key in [
        "games", "score", "mean", "median", "moves", "total", "elapsed", "moves/s", "threads",
        "engine", "gravity",
    ] {
        assert!(s.contains(key), "summary lacks {key:?}:\n{s}");
    }
}

#[test]
fn resume_after_interruption_gives_the_same_bytes() {
    let dir = scratch("resume");
    let full = play_raw(&dir, "full.jsonl", &["--threads", "2"]);
    let cut = dir.join("cut.jsonl");
    let p = cut.to_str().unwrap();
    // Cut mid-line, at a line end; resume each.
    let mid = full.len() / 3 + 7;
    let at_line_end = full[..full.len() / 2]
        .iter()
        .rposition(|&b| b == b'\n')
        .unwrap()
        + 1;
    for prefix in [
        full[..mid].to_vec(),
        full[..at_line_end].to_vec(),
        Vec::new(),
        full.clone(),
    ] {
        std::fs::write(&cut, &prefix).unwrap();
        let args = [
            "play",
            "--games",
            "3000",
            "--seed-start",
            "0xFFFFFF00",
            "--out",
            p,
            "--resume",
            "--threads",
            "2",
        ];
        let summary = String::from_utf8(ok(&args)).unwrap();
        assert!(summary.contains("games      3000"), "{summary}");
        assert!(
            stable(&std::fs::read(&cut).unwrap()) == stable(&full),
            "resume from {} bytes differs",
            prefix.len()
        );
    }
    // A missing file is a fresh start.
    std::fs::remove_file(&cut).unwrap();
    ok(&[
        "play",
        "--games",
        "3000",
        "--seed-start",
        "0xFFFFFF00",
        "--out",
        p,
        "--resume",
    ]);
    assert!(stable(&std::fs::read(&cut).unwrap()) == stable(&full));
}

/// A file that is not (only) this run's records is refused and left as it was:
/// a corrupt complete line, any other text, a foreign tail.
#[test]
fn resume_never_destroys_other_content() {
    let dir = scratch("resume-foreign");
    let full = play_raw(&dir, "full.jsonl", &[]);
    let path = dir.join("x.jsonl");
    let p = path.to_str().unwrap();
    let at_line_end = full[..full.len() / 2]
        .iter()
        .rposition(|&b| b == b'\n')
        .unwrap()
        + 1;
    let mut corrupt = full[..at_line_end].to_vec();
    corrupt.extend_from_slice(b"{\"seed\":\"0x00000001\",garbage\n{\"seed\":");
    let mut foreign_tail = full[..at_line_end].to_vec();
    foreign_tail.extend_from_slice(b"notes: keep me");
    for content in [
        corrupt,
        foreign_tail,
        b"# my notes\nline two\n".to_vec(),
        b"plain text".to_vec(),
    ] {
        std::fs::write(&path, &content).unwrap();
        assert_one_error_line(&[
            "play",
            "--games",
            "3000",
            "--seed-start",
            "0xFFFFFF00",
            "--out",
            p,
            "--resume",
        ]);
        assert!(
            std::fs::read(&path).unwrap() == content,
            "resume changed a foreign file"
        );
    }
}

#[test]
fn resume_refuses_another_runs_file() {
    let dir = scratch("resume-other");
    let path = dir.join("a.jsonl");
    let p = path.to_str().unwrap();
    ok(&["play", "--games", "50", "--out", p]);
    let before = std::fs::read(&path).unwrap();
    for args in [
        vec![
            "play",
            "--games",
            "100",
            "--seed-start",
            "2",
            "--out",
            p,
            "--resume",
        ],
        vec![
            "play", "--games", "100", "--policy", "random", "--out", p, "--resume",
        ],
        vec!["play", "--games", "20", "--out", p, "--resume"],
    ] {
        assert_one_error_line(&args);
        assert_eq!(
            std::fs::read(&path).unwrap(),
            before,
            "{args:?} touched the file"
        );
    }
}

fn assert_one_error_line(args: &[&str]) {
    assert_one_error_line_env(args, None);
}

fn assert_one_error_line_env(args: &[&str], gravity_env: Option<&str>) {
    let mut cmd = common::drop7_command();
    cmd.args(args).env_remove("DROP7_GRAVITY");
    if let Some(g) = gravity_env {
        cmd.env("DROP7_GRAVITY", g);
    }
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "drop7 {args:?} succeeded");
    assert!(!err.contains("panicked"), "drop7 {args:?} panicked:\n{err}");
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(
        lines.len(),
        1,
        "drop7 {args:?}: want one stderr line, got:\n{err}"
    );
    assert!(lines[0].starts_with("error: "), "drop7 {args:?}: {err}");
}

#[test]
fn bad_input_is_one_error_line() {
    let dir = scratch("bad");
    let unwritable = dir.join("no-such-dir").join("out.jsonl");
    let u = unwritable.to_str().unwrap();
    let bench_out = dir.join("no-such-dir").join("b.json");
    let cases: Vec<Vec<&str>> = vec![
        vec!["play", "--seed-start", "0xZZ"],
        vec!["play", "--seed-start", "4294967296"],
        vec!["trace", "--seed-start=-1"],
        vec!["play", "--policy", "greediest"],
        vec!["trace", "--policy", "fair:d9s1"],
        vec!["play", "--policy", "fair", "--table", "sa:1000"],
        vec!["play", "--policy", "fair:d2s5", "--table", "lru:x"],
        vec!["decide", "--depth", "9"],
        vec!["decide", "--strata", "0"],
        vec!["decide", "--table", "dm:3"],
        vec!["decide", "--board", "123", "--next", "1", "--rise", "1"],
        vec![
            "decide",
            "--board",
            "0000000000000000000000000000000000000000008888888",
            "--next",
            "8",
            "--rise",
            "1",
        ],
        vec!["decide", "--search", "reference", "--table", "sa:1024"],
        vec!["play", "--driver", "latent"],
        vec!["trace", "--driver", "fixture"],
        vec!["play", "--engine", "fast"],
        vec!["play", "--games", "0"],
        vec!["trace", "--games", "0"],
        vec!["play", "--max-moves", "0"],
        vec!["play", "--threads", "0"],
        vec!["play", "--games", "10", "--out", u],
        vec!["play", "--resume"],
        vec!["play", "--gravity", "avx512"],
        vec!["bench", "--suite", "everything"],
        vec!["bench", "--games", "0"],
        vec![
            "bench",
            "--games",
            "4",
            "--out",
            bench_out.to_str().unwrap(),
        ],
    ];
    for args in &cases {
        assert_one_error_line(args);
    }
    assert!(!unwritable.exists());
    assert_one_error_line_env(&["play", "--games", "5"], Some("sideways"));
    if !has_bmi2() {
        assert_one_error_line(&["play", "--games", "5", "--gravity", "bmi2"]);
        assert_one_error_line_env(&["trace"], Some("bmi2"));
    }
}

#[test]
fn gravity_env_var_is_the_default() {
    let out = common::drop7_command()
        .args(["play", "--games", "10"])
        .env("DROP7_GRAVITY", "portable")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("gravity portable"));
    let s = String::from_utf8(ok(&["play", "--games", "10", "--engine", "reference"])).unwrap();
    assert!(s.contains("engine     reference"), "{s}");
}

#[test]
fn bench_engine_writes_json() {
    let dir = scratch("bench");
    let out = dir.join("bench.json");
    let table = String::from_utf8(ok(&[
        "bench",
        "--games",
        "64",
        "--reference-games",
        "16",
        "--repeats",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]))
    .unwrap();
    assert!(
        table.contains("packed-portable") && table.contains("reference"),
        "{table}"
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let engine = &v["engine"];
    let arms = engine["arms"].as_array().unwrap();
    assert_eq!(arms.len(), if has_bmi2() { 3 } else { 2 });
    for arm in arms {
        for key in [
            "arm",
            "games",
            "moves",
            "seconds",
            "movesPerSecond",
            "nsPerMove",
        ] {
            assert!(!arm[key].is_null(), "arm lacks {key}: {arm}");
        }
    }
    let reference = arms.iter().find(|a| a["arm"] == "reference").unwrap();
    assert_eq!(reference["games"], 16);
    let threads = engine["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 2);
    // The 2/1-thread scaling is withheld (null) when either run was under load.
    let loaded = threads.iter().any(|t| t["underLoad"] == true);
    assert_eq!(engine["scaling"].is_null(), loaded, "{engine}");
    assert!(loaded || engine["scaling"].as_f64().unwrap() > 0.0);
    for r in engine["ratios"].as_array().unwrap() {
        let shown = format!(
            "{} vs {}: ratio not reported",
            r["arm"].as_str().unwrap(),
            r["baseline"].as_str().unwrap()
        );
        let flagged = table.lines().any(|l| {
            l.split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .starts_with(&shown)
        });
        assert_eq!(flagged, r["underLoad"] == true, "{table}");
        // A ratio below 1 reads "slower", never "0.85x faster".
        assert!(
            !table
                .lines()
                .any(|l| l.contains(" 0.") && l.contains("x faster")),
            "{table}"
        );
    }
    let ratios = engine["ratios"].as_array().unwrap();
    let r = ratios
        .iter()
        .find(|r| r["arm"] == "packed-portable" && r["baseline"] == "reference")
        .unwrap();
    assert!(r["speedup"].as_f64().unwrap() > 0.0);
    assert!(!v["machine"]["logicalCpus"].is_null());
}

/// The report names the CPU model and the gravity path chosen, and says what
/// asked for it.
#[test]
fn bench_names_the_machine_and_gravity_path() {
    let dir = scratch("bench-machine");
    let out = dir.join("bench.json");
    // A quick engine bench writing its JSON to `out`.
    let bench = || {
        let mut c = common::drop7_command();
        c.args([
            "bench",
            "--quick",
            "--games",
            "32",
            "--reference-games",
            "8",
        ])
        .arg("--out")
        .arg(&out);
        c
    };
    let run = bench().env("DROP7_GRAVITY", "portable").output().unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let text = String::from_utf8(run.stdout).unwrap();
    let first = text.lines().next().unwrap();
    assert!(
        first.contains("gravity path portable (requested portable (DROP7_GRAVITY)"),
        "{first}"
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let m = &v["machine"];
    assert_eq!(m["gravity"], "portable");
    assert_eq!(m["gravityRequest"], "portable (DROP7_GRAVITY)");
    assert_eq!(m["bmi2"], has_bmi2());
    let model = std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|t| {
        t.lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split(':').nth(1))
            .map(|s| s.trim().to_string())
    });
    if let Some(model) = model {
        assert_eq!(m["cpu"], model.as_str());
        assert!(first.starts_with(&format!("machine: {model}, ")), "{first}");
    }
    let auto = bench().env_remove("DROP7_GRAVITY").output().unwrap();
    assert!(auto.status.success());
    let first = String::from_utf8(auto.stdout).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(v["machine"]["gravityRequest"], "auto (default)");
    assert_eq!(v["machine"]["gravity"], v["machine"]["autoGravity"]);
    assert!(
        first.contains("(requested auto (default); auto = "),
        "{first}"
    );
}

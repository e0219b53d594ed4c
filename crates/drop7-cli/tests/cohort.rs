//! Research cohorts end to end: self-describing records, shards and merge,
//! resume after `kill -9`/SIGINT/SIGTERM at random moments, one writer per
//! file, `summary` and `compare` against an independent recomputation, and
//! one-line errors (naming file and line) for bad record files.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

mod common;
use common::{drop7, fails, ok, s};

fn scratch(name: &str) -> PathBuf {
    common::scratch_in("cohort", name)
}

/// A record file's lines as JSON, without the fields that may differ between
/// two runs of one cohort (wall clock, engine version, shard).
fn stable(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
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
                "shard",
            ] {
                o.remove(k);
            }
            v
        })
        .collect()
}

#[test]
fn records_are_self_describing() {
    let dir = scratch("fields");
    let c = dir.join("c.jsonl");
    let f = dir.join("f.jsonl");
    ok(&["play", "--games", "3", "--max-moves", "30", "--out", s(&c)]);
    ok(&[
        "play",
        "--games",
        "2",
        "--policy",
        "fair:d2s3",
        "--out",
        s(&f),
    ]);
    let center = std::fs::read_to_string(&c).unwrap();
    let first: Value = serde_json::from_str(center.lines().next().unwrap()).unwrap();
    assert_eq!(first["ruleset"], "drop7-hardcore-5-v1");
    assert_eq!(first["maxMoves"], 30);
    assert_eq!(first["cohortSeedStart"], "0x00000001");
    assert_eq!(first["cohortGames"], 3);
    assert!(
        first["engineVersion"]
            .as_str()
            .unwrap()
            .starts_with("drop7 ")
    );
    assert!(first["decisionMsP50"].is_null() && first.get("work").is_none());
    assert!(first.get("table").is_none() && first.get("shard").is_none());
    assert_eq!(first["trajectorySha256"].as_str().unwrap().len(), 64);
    for line in std::fs::read_to_string(&f).unwrap().lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["policy"], "fair:d2s3");
        assert_eq!(v["table"], "sa:65536:4");
        assert!(v["maxWork"].as_u64().unwrap() > 0);
        assert!(v["work"].as_u64().unwrap() > 0 && v["nodes"].as_u64().unwrap() > 0);
        let (p50, p99) = (
            v["decisionMsP50"].as_f64().unwrap(),
            v["decisionMsP99"].as_f64().unwrap(),
        );
        assert!(p50 <= p99);
        assert!(v["wallMs"].as_f64().unwrap() >= 0.0);
    }
    // An old record (no new fields) still parses: summary reads it.
    let old = dir.join("old.jsonl");
    std::fs::write(
        &old,
        "{\"seed\":\"0x00000001\",\"policy\":\"center\",\"driver\":\"headless\",\"score\":7,\"moves\":3,\"levels\":1,\"clears\":0,\"reveals\":0,\"chainMaxDepth\":1,\"terminalReason\":\"blocked-rise\",\"censored\":false}\n",
    )
    .unwrap();
    assert!(ok(&["summary", s(&old)]).contains("cohort     1 game,"));
}

/// The trajectory hash is SHA-256 over (column digit + 49-char board) per
/// move, recomputable from `drop7 trace`.
#[test]
fn trajectory_hash_matches_the_trace() {
    use sha2::{Digest, Sha256};
    let dir = scratch("hash");
    let out = dir.join("r.jsonl");
    ok(&[
        "play",
        "--games",
        "3",
        "--seed-start",
        "40",
        "--policy",
        "random",
        "--out",
        s(&out),
    ]);
    let trace = ok(&[
        "trace",
        "--games",
        "3",
        "--seed-start",
        "40",
        "--policy",
        "random",
    ]);
    let mut hashers: Vec<Sha256> = (0..3).map(|_| Sha256::new()).collect();
    for line in trace.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let g = (v["seed"].as_u64().unwrap() - 40) as usize;
        hashers[g].update(v["column"].as_u64().unwrap().to_string());
        hashers[g].update(v["board"].as_str().unwrap());
    }
    let recs = stable(&out);
    for (h, r) in hashers.into_iter().zip(&recs) {
        let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(r["trajectorySha256"], hex.as_str());
    }
}

#[test]
fn shards_and_threads_give_the_single_run() {
    let dir = scratch("shards");
    let one = dir.join("one.jsonl");
    let common = [
        "play",
        "--games",
        "700",
        "--seed-start",
        "0xFFFFFF80",
        "--policy",
        "random",
        "--max-moves",
        "60",
    ];
    let run = |extra: &[&str], out: &Path| {
        let mut a: Vec<&str> = common.to_vec();
        a.extend(extra);
        a.extend(["--out", s(out)]);
        ok(&a);
    };
    run(&["--threads", "1"], &one);
    let want = stable(&one);
    assert_eq!(want.len(), 700);
    for n in [1u32, 3, 7] {
        for threads in ["1", "3"] {
            let mut parts = Vec::new();
            for i in 1..=n {
                let p = dir.join(format!("s{n}-{i}-t{threads}.jsonl"));
                run(&["--shard", &format!("{i}/{n}"), "--threads", threads], &p);
                parts.push(p);
            }
            let merged = dir.join(format!("m{n}-t{threads}.jsonl"));
            let mut a = vec!["merge", s(&merged)];
            // Shards in reverse order: merge sorts them.
            a.extend(parts.iter().rev().map(|p| s(p)));
            ok(&a);
            assert_eq!(stable(&merged), want, "{n} shards, {threads} threads");
            let text = std::fs::read_to_string(&merged).unwrap();
            assert!(!text.contains("\"shard\""));
        }
    }
    // Merge refuses: a missing last shard (naming its seeds), an overlap, a
    // shard of another run, and leaves OUT as it was.
    let p = |i: u32| dir.join(format!("s3-{i}-t1.jsonl"));
    let out = dir.join("never.jsonl");
    fails(
        &["merge", s(&out), s(&p(1)), s(&p(2))],
        &["missing games", "shard 3/3", "0x"],
    );
    fails(
        &["merge", s(&out), s(&p(1)), s(&p(2)), s(&p(2)), s(&p(3))],
        &["is given twice"],
    );
    let copy = dir.join("s3-2-copy.jsonl");
    std::fs::copy(p(2), &copy).unwrap();
    fails(
        &["merge", s(&out), s(&p(1)), s(&p(2)), s(&copy), s(&p(3))],
        &["both shard 2/3", "overlapping"],
    );
    let other = dir.join("other.jsonl");
    ok(&[
        "play",
        "--games",
        "700",
        "--seed-start",
        "0xFFFFFF80",
        "--policy",
        "center",
        "--max-moves",
        "60",
        "--shard",
        "3/3",
        "--out",
        s(&other),
    ]);
    fails(
        &["merge", s(&out), s(&p(1)), s(&p(2)), s(&other)],
        &["other.jsonl line 1", "policy"],
    );
    fails(
        &["merge", s(&out), s(&p(1)), s(&dir.join("s7-1-t1.jsonl"))],
        &["different splits"],
    );
    assert!(!out.exists());
    let merged = dir.join("m3-t1.jsonl");
    let before = std::fs::read(&merged).unwrap();
    fails(
        &["merge", s(&merged), s(&p(1)), s(&p(2)), s(&p(3))],
        &["--force"],
    );
    assert_eq!(std::fs::read(&merged).unwrap(), before);
}

/// Bad record files: one error line naming the file, the line and the problem.
#[test]
fn bad_record_files_are_named() {
    let dir = scratch("bad");
    let good = dir.join("good.jsonl");
    ok(&["play", "--games", "20", "--out", s(&good)]);
    let text = std::fs::read_to_string(&good).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let corrupt = dir.join("corrupt.jsonl");
    let mut c = lines.clone();
    c[9] = "{\"seed\":\"0x0000000a\",garbage";
    std::fs::write(&corrupt, c.join("\n") + "\n").unwrap();
    let empty = dir.join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let foreign = dir.join("foreign.json");
    std::fs::write(&foreign, "{\"name\":\"not a record\"}\n").unwrap();
    for cmd in [
        vec!["summary", s(&corrupt)],
        vec!["compare", s(&good), s(&corrupt)],
        vec!["merge", s(&dir.join("m.jsonl")), s(&corrupt)],
    ] {
        fails(&cmd, &["corrupt.jsonl line 10"]);
    }
    for f in [&empty, &foreign] {
        let name = f.file_name().unwrap().to_str().unwrap();
        fails(&["summary", s(f)], &[name]);
        fails(&["compare", s(&good), s(f)], &[name]);
        fails(&["merge", s(&dir.join("m.jsonl")), s(f)], &[name]);
    }
    fails(
        &["summary", s(&dir.join("missing.jsonl"))],
        &["missing.jsonl"],
    );
    assert!(!dir.join("m.jsonl").exists());
    // Resume refuses another run's file naming the field, and leaves it as it was.
    for (args, field) in [
        (vec!["--max-moves", "100"], "maxMoves"),
        (vec!["--policy", "random"], "policy"),
        (vec!["--driver", "stream"], "driver"),
        (vec!["--games", "40"], "cohortGames"),
        (vec!["--shard", "1/2"], "shard"),
    ] {
        let mut fresh: Vec<&str> = vec!["play", "--out", s(&good), "--resume"];
        if field != "cohortGames" {
            fresh.extend(["--games", "20"]);
        }
        fresh.extend(args);
        fails(&fresh, &["good.jsonl", field, "nothing was changed"]);
        assert_eq!(std::fs::read_to_string(&good).unwrap(), text);
    }
    // Without --resume an existing file is refused unless --force.
    fails(
        &["play", "--games", "20", "--out", s(&good)],
        &["--force", "good.jsonl"],
    );
    assert_eq!(std::fs::read_to_string(&good).unwrap(), text);
    ok(&["play", "--games", "5", "--out", s(&good), "--force"]);
    assert_eq!(stable(&good).len(), 5);
}

/// `summary` of part of a cohort (shards with a gap, a file cut short) says
/// on stderr how many of its `cohortGames` are there and which seeds are
/// missing; a whole cohort gets no note, and the JSON on stdout is unchanged.
#[test]
fn summary_notes_an_incomplete_cohort() {
    let dir = scratch("partial");
    let p = |i: u32| dir.join(format!("p{i}.jsonl"));
    for i in 1..=3 {
        let sh = format!("{i}/3");
        ok(&[
            "play",
            "--games",
            "9",
            "--policy",
            "random",
            "--shard",
            &sh,
            "--out",
            s(&p(i)),
        ]);
    }
    let summary = |files: &[&Path]| {
        let mut a = vec!["summary", "--json"];
        a.extend(files.iter().map(|f| s(f)));
        let out = common::ok_output(&a);
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        (v, String::from_utf8(out.stderr).unwrap())
    };
    let (v, err) = summary(&[&p(1), &p(3)]);
    assert_eq!(v["games"], 6);
    assert_eq!(
        err,
        "note: 6 of the cohort's 9 games (cohortGames) are here; missing seeds 0x00000004..0x00000006 (3 games)\n"
    );
    // The JSON says it too (a pipeline reads no stderr), and which run.
    assert_eq!(v["missingGames"], 3);
    assert_eq!(v["cohortGames"], 9);
    assert_eq!(v["cohortSeedStart"], "0x00000001");
    assert_eq!(v["files"], serde_json::json!([s(&p(1)), s(&p(3))]));
    assert_eq!(v["policy"], "random");
    assert_eq!(v["table"], Value::Null);
    assert_eq!(v["maxWork"], Value::Null);
    let (v, err) = summary(&[&p(1), &p(2), &p(3)]);
    assert_eq!(err, "");
    assert_eq!(v["missingGames"], 0);
    let all = dir.join("all.jsonl");
    ok(&["merge", s(&all), s(&p(1)), s(&p(2)), s(&p(3))]);
    assert_eq!(summary(&[&all]).1, "");
    // A file cut short, and one with holes: single seeds, then a count.
    let text = std::fs::read_to_string(&all).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let cut = dir.join("cut.jsonl");
    std::fs::write(&cut, lines[..8].join("\n") + "\n").unwrap();
    assert!(
        summary(&[&cut]).1.contains(
            "8 of the cohort's 9 games (cohortGames) are here; missing seeds 0x00000009\n"
        )
    );
    let holes = dir.join("holes.jsonl");
    let kept: Vec<&str> = [0, 2, 4, 6, 8].iter().map(|&k| lines[k]).collect();
    std::fs::write(&holes, kept.join("\n") + "\n").unwrap();
    assert_eq!(
        summary(&[&holes]).1,
        "note: 5 of the cohort's 9 games (cohortGames) are here; missing seeds 0x00000002, 0x00000004, 0x00000006 and 1 more range\n"
    );
}

/// Independent recomputation of the summary and compare figures (plain
/// sorting, two-pass sd) on one cohort.
#[test]
fn summary_and_compare_agree_with_a_recomputation() {
    let dir = scratch("stats");
    let a = dir.join("a.jsonl");
    let b = dir.join("b.jsonl");
    ok(&["play", "--games", "301", "--out", s(&a)]);
    ok(&[
        "play",
        "--games",
        "301",
        "--policy",
        "random",
        "--out",
        s(&b),
    ]);
    let scores = |p: &Path| -> Vec<f64> {
        stable(p)
            .iter()
            .map(|v| v["score"].as_f64().unwrap())
            .collect()
    };
    let (sa, sb) = (scores(&a), scores(&b));
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let sd = |v: &[f64]| {
        let m = mean(v);
        (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64).sqrt()
    };
    let q = |v: &[f64], p: f64| {
        let mut s = v.to_vec();
        s.sort_by(f64::total_cmp);
        let h = (s.len() - 1) as f64 * p;
        let lo = h.floor() as usize;
        s[lo] + (h - lo as f64) * (s[(lo + 1).min(s.len() - 1)] - s[lo])
    };
    let close = |x: f64, y: f64| (x - y).abs() <= 1e-9 * y.abs().max(1.0);
    let j: Value = serde_json::from_str(&ok(&["summary", "--json", s(&a)])).unwrap();
    assert_eq!(j["games"], 301);
    assert_eq!(j["censored"], 0);
    let sc = &j["score"];
    assert!(close(sc["mean"].as_f64().unwrap(), mean(&sa)));
    assert!(close(sc["sd"].as_f64().unwrap(), sd(&sa)));
    assert!(close(sc["median"].as_f64().unwrap(), q(&sa, 0.5)));
    assert!(close(sc["p25"].as_f64().unwrap(), q(&sa, 0.25)));
    let (lo, hi) = (
        sc["ci95Low"].as_f64().unwrap(),
        sc["ci95High"].as_f64().unwrap(),
    );
    // The bootstrap interval is close to the normal one (±1.96 se), within 20 %.
    let half = 1.96 * sd(&sa) / (sa.len() as f64).sqrt();
    assert!(lo < mean(&sa) && mean(&sa) < hi);
    assert!(
        ((hi - lo) / 2.0 - half).abs() < 0.2 * half,
        "{lo} {hi} {half}"
    );
    // Student's t interval (t(0.975, 300) = 1.967903...).
    let t_half = 1.967_903_011_261_086 * sd(&sa) / (sa.len() as f64).sqrt();
    assert!(close(sc["tCi95Low"].as_f64().unwrap(), mean(&sa) - t_half));
    assert!(close(sc["tCi95High"].as_f64().unwrap(), mean(&sa) + t_half));
    // Reproducible.
    assert_eq!(
        ok(&["summary", "--json", s(&a)]),
        ok(&["summary", "--json", s(&a)])
    );

    let d: Vec<f64> = sa.iter().zip(&sb).map(|(x, y)| y - x).collect();
    let c: Value = serde_json::from_str(&ok(&["compare", "--json", s(&a), s(&b)])).unwrap();
    assert_eq!(c["pairs"], 301);
    assert_eq!(c["unpaired"], 0);
    assert!(close(c["meanDelta"].as_f64().unwrap(), mean(&d)));
    assert!(close(c["medianDelta"].as_f64().unwrap(), q(&d, 0.5)));
    let floor = 1.645 * sd(&d) / (d.len() as f64).sqrt();
    assert!(close(c["detectionFloor"].as_f64().unwrap(), floor));
    let wins = d.iter().filter(|x| **x > 0.0).count() as u64;
    let ties = d.iter().filter(|x| **x == 0.0).count() as u64;
    assert_eq!(c["wins"], wins);
    assert_eq!(c["ties"], ties);
    assert_eq!(c["losses"], 301 - wins - ties);
    let lb = c["lowerBound95"].as_f64().unwrap();
    assert!(lb < mean(&d) && (mean(&d) - lb - floor).abs() < 0.2 * floor);
    // Student's t bound (t(0.95, 300) = 1.649949...).
    let t_lb = mean(&d) - 1.649_948_673_937_634 * sd(&d) / (d.len() as f64).sqrt();
    assert!(close(c["lowerBound95T"].as_f64().unwrap(), t_lb));
    // 301 pairs: no caution in the text, no t line in the plot.
    let big_plot = dir.join("deltas301.svg");
    assert!(!ok(&["compare", s(&a), s(&b), "--plot", s(&big_plot)]).contains("caution"));
    let texts = svg_texts(&big_plot);
    assert!(
        texts.iter().any(|t| t.starts_with("95% lower bound")),
        "{texts:?}"
    );
    assert!(!texts.iter().any(|t| t.contains("Student")), "{texts:?}");

    // A small cohort: the text adds Student's t (9 games: t(0.975, 8) =
    // 2.306004, t(0.95, 8) = 1.859548).
    let small = |f: &std::path::Path, name: &str| {
        let p = dir.join(name);
        let text = std::fs::read_to_string(f).unwrap();
        let lines: Vec<&str> = text.lines().take(9).collect();
        std::fs::write(&p, lines.join("\n") + "\n").unwrap();
        p
    };
    let (a9, b9) = (small(&a, "a9.jsonl"), small(&b, "b9.jsonl"));
    let (sa9, sb9) = (&sa[..9], &sb[..9]);
    let half9 = 2.306_004_135_204_166 * sd(sa9) / 3.0;
    let text = ok(&["summary", s(&a9)]);
    let want = format!(
        "caution    from 9 games a bootstrap interval covers less than 95%: Student's t gives {:.1}..{:.1}\n",
        mean(sa9) - half9,
        mean(sa9) + half9
    );
    assert!(text.contains(&want), "{text}\n{want}");
    let d9: Vec<f64> = sa9.iter().zip(sb9).map(|(x, y)| y - x).collect();
    let t9 = mean(&d9) - 1.859_548_037_530_898 * sd(&d9) / 3.0;
    let plot9 = dir.join("deltas9.svg");
    let text = ok(&["compare", s(&a9), s(&b9), "--plot", s(&plot9)]);
    let want = format!(
        "caution    from 9 pairs a bootstrap bound holds less than 95% of the time: Student's t gives mean delta ≥ {t9:.2}\n"
    );
    assert!(text.contains(&want), "{text}\n{want}");
    // The plot draws the same t bound beside the bootstrap's.
    let want = format!("Student&apos;s t bound {t9:.1} (from 9 pairs)");
    let texts = svg_texts(&plot9);
    assert!(texts.contains(&want), "{texts:?}\n{want}");
    let doubt = |d: &[f64], t: f64| {
        let n = (d.len() as f64).sqrt();
        mean(d).abs() > 1.645 * sd(d) / n && mean(d).abs() <= t * sd(d) / n
    };
    assert_eq!(
        text.contains("(but from 9 pairs Student's t gives mean delta"),
        doubt(&d9, 1.859_548_037_530_898),
        "{text}"
    );
    // 10 center games against 10 random ones: above the floor, but t
    // (t(0.95, 9) = 1.833113) does not exclude 0: the verdict says so.
    let (c10, r10) = (dir.join("c10.jsonl"), dir.join("r10.jsonl"));
    ok(&["play", "--games", "10", "--out", s(&c10), "--quiet"]);
    ok(&[
        "play",
        "--games",
        "10",
        "--policy",
        "random",
        "--out",
        s(&r10),
        "--quiet",
    ]);
    let score = |f: &std::path::Path| -> Vec<f64> {
        stable(f)
            .iter()
            .map(|r| r["score"].as_f64().unwrap())
            .collect()
    };
    let d10: Vec<f64> = score(&r10)
        .iter()
        .zip(score(&c10))
        .map(|(x, y)| y - x)
        .collect();
    assert!(doubt(&d10, 1.833_112_932_653_634), "{d10:?}");
    // Random as the candidate scores higher (t's lower bound below 0), center
    // lower (t's upper bound above 0).
    let m10 = 1.833_112_932_653_634 * sd(&d10) / 10f64.sqrt();
    let text = ok(&["compare", s(&c10), s(&r10)]);
    let want = format!(
        "is above the floor: the candidate scores higher than the base (but from 10 pairs Student's t gives mean delta ≥ {:.2}, which does not exclude 0)\n",
        -mean(&d10) - m10
    );
    assert!(text.contains(&want), "{text}\n{want}");
    let text = ok(&["compare", s(&r10), s(&c10)]);
    let want = format!(
        "is above the floor: the candidate scores lower than the base (but from 10 pairs Student's t gives mean delta ≤ {:.2}, which does not exclude 0)\n",
        mean(&d10) + m10
    );
    assert!(text.contains(&want), "{text}\n{want}");
    let json: Value = serde_json::from_str(&ok(&["compare", s(&r10), s(&c10), "--json"])).unwrap();
    assert_eq!(json["aboveFloor"], true);
    // A bootstrap seed in hex is that number.
    assert_eq!(
        ok(&[
            "compare",
            s(&a9),
            s(&b9),
            "--json",
            "--bootstrap-seed",
            "0x10"
        ]),
        ok(&[
            "compare",
            s(&a9),
            s(&b9),
            "--json",
            "--bootstrap-seed",
            "16"
        ])
    );
    // Too few resamples are refused.
    for cmd in [&["summary", s(&a)][..], &["compare", s(&a), s(&b)][..]] {
        fails(
            &[cmd, &["--resamples", "999"]].concat(),
            &["--resamples must be at least 1000 (got 999)"],
        );
    }

    // A file against itself: delta 0, all ties, below the floor.
    let a2 = dir.join("a-copy.jsonl");
    std::fs::copy(&a, &a2).unwrap();
    let c: Value = serde_json::from_str(&ok(&["compare", "--json", s(&a), s(&a2)])).unwrap();
    assert_eq!(c["meanDelta"], 0.0);
    assert_eq!(c["ties"], 301);
    assert_eq!(c["lowerBound95"], 0.0);
    assert!(
        c["verdict"]
            .as_str()
            .unwrap()
            .starts_with("not above the floor")
    );
    // Unpaired games are counted; a different move cap is refused.
    let short = dir.join("short.jsonl");
    ok(&[
        "play",
        "--games",
        "100",
        "--seed-start",
        "250",
        "--out",
        s(&short),
    ]);
    let c: Value = serde_json::from_str(&ok(&["compare", "--json", s(&a), s(&short)])).unwrap();
    assert_eq!(c["pairs"], 52);
    assert_eq!(c["unpaired"], 249 + 48);
    let capped = dir.join("capped.jsonl");
    ok(&[
        "play",
        "--games",
        "10",
        "--max-moves",
        "10",
        "--out",
        s(&capped),
    ]);
    fails(
        &["compare", s(&a), s(&capped)],
        &["maxMoves", "capped.jsonl line 1"],
    );
}

/// `n` records of a center cohort, each line passed through `edit`.
fn edited_cohort(dir: &Path, name: &str, n: usize, edit: impl Fn(usize, &mut Value)) -> PathBuf {
    let played = dir.join(format!("{name}-played.jsonl"));
    ok(&[
        "play",
        "--games",
        &n.to_string(),
        "--out",
        s(&played),
        "--force",
    ]);
    let out = dir.join(format!("{name}.jsonl"));
    let text: String = std::fs::read_to_string(&played)
        .unwrap()
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            edit(i, &mut v);
            format!("{v}\n")
        })
        .collect();
    std::fs::write(&out, text).unwrap();
    out
}

/// Scores of 2^24 or more share a bucket per 24 significant bits; the
/// bucket stands for the mean of its values, so equal huge scores keep
/// their median and interval (they were rounded down to 16,777,216, below
/// the min and outside an interval that should hold the mean), and so do
/// equal huge deltas.
#[test]
fn huge_equal_scores_keep_their_quantiles_and_interval() {
    let dir = scratch("huge");
    let big = 16_777_217u64; // 2^24 + 1
    let base = edited_cohort(&dir, "base", 5, |_, v| v["score"] = 0.into());
    let cand = edited_cohort(&dir, "cand", 5, |_, v| v["score"] = big.into());
    let j: Value = serde_json::from_str(&ok(&["summary", "--json", s(&cand)])).unwrap();
    let sc = &j["score"];
    for k in [
        "mean", "median", "p25", "p75", "min", "max", "ci95Low", "ci95High",
    ] {
        assert_eq!(sc[k].as_f64(), Some(big as f64), "{k}: {sc}");
    }
    let c: Value = serde_json::from_str(&ok(&["compare", "--json", s(&base), s(&cand)])).unwrap();
    for k in ["meanDelta", "medianDelta", "lowerBound95"] {
        assert_eq!(c[k].as_f64(), Some(big as f64), "{k}: {c}");
    }
    // Distinct huge scores: quantiles stay within [min, max] and close
    // (relative error below 2^-23) to the exact ones.
    let spread = edited_cohort(&dir, "spread", 5, |i, v| {
        v["score"] = (1u64 << 40).wrapping_add(1000 * i as u64 + 1).into();
    });
    let j: Value = serde_json::from_str(&ok(&["summary", "--json", s(&spread)])).unwrap();
    let sc = &j["score"];
    let (min, max) = (sc["min"].as_f64().unwrap(), sc["max"].as_f64().unwrap());
    let exact_median = (1u64 << 40) as f64 + 2001.0;
    let median = sc["median"].as_f64().unwrap();
    assert!((min..=max).contains(&median), "{sc}");
    assert!(
        (median - exact_median).abs() <= exact_median * 1.2e-7,
        "{sc}"
    );
}

/// `compare` counts the pairs holding a censored game (its score a lower
/// bound) and says so; nothing is said when there are none.
#[test]
fn compare_counts_censored_pairs() {
    let dir = scratch("censoredpairs");
    let capped = dir.join("capped.jsonl");
    ok(&[
        "play",
        "--games",
        "6",
        "--max-moves",
        "12",
        "--out",
        s(&capped),
        "--force",
    ]);
    // `summary` says its figures are of lower bounds.
    let text = ok(&["summary", s(&capped)]);
    let n = stable(&capped)
        .iter()
        .filter(|r| r["censored"] == true)
        .count();
    assert!(n > 0);
    assert!(
        text.contains(&format!(
            "censored   {n} of 6 games stopped at the move cap (a score is then a lower bound): the score figures below are lower bounds too\n"
        )),
        "{text}"
    );
    let random = dir.join("random.jsonl");
    ok(&[
        "play",
        "--games",
        "6",
        "--max-moves",
        "12",
        "--policy",
        "random",
        "--out",
        s(&random),
        "--force",
    ]);
    let censored = |p: &Path| -> Vec<bool> {
        stable(p)
            .iter()
            .map(|v| v["censored"].as_bool().unwrap())
            .collect()
    };
    let want = censored(&capped)
        .iter()
        .zip(censored(&random))
        .filter(|(a, b)| **a || *b)
        .count();
    assert!(want > 0, "a 12-move cap censors some center games");
    let c: Value =
        serde_json::from_str(&ok(&["compare", "--json", s(&capped), s(&random)])).unwrap();
    assert_eq!(c["censoredPairs"], want as u64);
    let text = ok(&["compare", s(&capped), s(&random)]);
    assert!(
        text.contains(&format!(
            "censored   {want} of 6 pairs {} a game stopped by the move cap (its score is a lower bound)",
            if want == 1 { "has" } else { "have" }
        )),
        "{text}"
    );
    let full = dir.join("full.jsonl");
    ok(&["play", "--games", "6", "--out", s(&full), "--force"]);
    let copy = dir.join("copy.jsonl");
    std::fs::copy(&full, &copy).unwrap();
    let c: Value = serde_json::from_str(&ok(&["compare", "--json", s(&full), s(&copy)])).unwrap();
    assert_eq!(c["censoredPairs"], 0);
    // (The scratch folder's name holds the word: look for the line.)
    assert!(!ok(&["compare", s(&full), s(&copy)]).contains("\ncensored   "));
}

/// `compare` refuses a seed repeated in the candidate file even when the
/// base has no game of that seed (it was counted twice among the unpaired).
#[test]
fn compare_refuses_a_repeated_unpaired_candidate_seed() {
    let dir = scratch("dupcand");
    let all = dir.join("all.jsonl");
    ok(&["play", "--games", "3", "--out", s(&all), "--force"]);
    let text = std::fs::read_to_string(&all).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let base = dir.join("base.jsonl");
    std::fs::write(&base, format!("{}\n{}\n", lines[0], lines[1])).unwrap();
    let cand = dir.join("cand.jsonl");
    std::fs::write(&cand, format!("{text}{}\n", lines[2])).unwrap();
    fails(
        &["compare", s(&base), s(&cand)],
        &["cand.jsonl line 4: seed 0x00000003 already at line 3"],
    );
    // A repeated paired seed says the same.
    let cand2 = dir.join("cand2.jsonl");
    std::fs::write(&cand2, format!("{text}{}\n", lines[1])).unwrap();
    fails(
        &["compare", s(&base), s(&cand2)],
        &["cand2.jsonl line 4: seed 0x00000002 already at line 2"],
    );
}

/// The texts of an SVG picture's `<text>` elements.
fn svg_texts(path: &Path) -> Vec<String> {
    let svg = std::fs::read_to_string(path).unwrap();
    svg.split("<text")
        .skip(1)
        .map(|t| {
            let body = &t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()];
            body.trim().to_string()
        })
        .collect()
}

/// Tick labels tell their ticks apart (a zero-spread axis was labelled
/// `1 1 1 0 0 0 -0 -0 -1`, one game's score axis `68327 68327 … 68328`),
/// never read `-0`, and huge values fit (scientific notation: a 10^12 axis
/// lost its leading digits off the picture).
#[test]
fn plot_tick_labels_are_distinct_and_fit() {
    let dir = scratch("ticks");
    let a = edited_cohort(&dir, "a", 20, |_, _| {});
    let b = dir.join("b.jsonl");
    std::fs::copy(&a, &b).unwrap();
    let one = edited_cohort(&dir, "one", 1, |_, _| {});
    let huge = edited_cohort(&dir, "huge", 20, |i, v| {
        if i % 4 == 0 {
            v["score"] = (1u64 << 40).into();
        }
    });
    let cases: [(&str, Vec<&str>); 3] = [
        ("same.svg", vec!["compare", s(&a), s(&b)]),
        ("one.svg", vec!["summary", s(&one)]),
        ("huge.svg", vec!["compare", s(&a), s(&huge)]),
    ];
    for (name, mut args) in cases {
        let plot = dir.join(name);
        args.extend(["--plot", s(&plot)]);
        ok(&args);
        let texts = svg_texts(&plot);
        let mut seen = std::collections::HashSet::new();
        for t in &texts {
            // (Only a 0 may be on both axes.)
            assert!(
                t == "0" || seen.insert(t),
                "{name}: label {t:?} twice in {texts:?}"
            );
            assert_ne!(t, "-0", "{name}: {texts:?}");
            if t.parse::<f64>().is_ok() {
                assert!(t.len() <= 8, "{name}: label {t:?} too long: {texts:?}");
            }
        }
    }
    assert!(svg_texts(&dir.join("huge.svg")).contains(&"1.0e12".to_string()));
}

/// A small deterministic generator for the kill moments.
fn next_rand(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

const FAIR_RUN: [&str; 9] = [
    "play",
    "--policy",
    "fair:d2s3",
    "--games",
    "60",
    "--threads",
    "2",
    "--seed-start",
    "9",
];

/// The tapes of a run's `--tapes` folder: (file name, contents), sorted.
fn tapes(out: &Path) -> Vec<(String, String)> {
    let mut t: Vec<(String, String)> = std::fs::read_dir(out.with_extension("tapes"))
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let text = std::fs::read_to_string(e.path()).unwrap();
            (e.file_name().to_string_lossy().into_owned(), text)
        })
        .collect();
    t.sort();
    t
}

fn fair_run(out: &Path, resume: bool) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_drop7"));
    // Every run also writes its trace (`--trace`), resumed with the records,
    // and its tapes (`--tapes`): an abandoned game leaves no tape, and a
    // resume replaces the tapes of the games it plays again.
    let trace = out.with_extension("trace");
    let tapes = out.with_extension("tapes");
    c.args(FAIR_RUN)
        .args(["--out", s(out), "--trace", s(&trace), "--tapes", s(&tapes)])
        .env_remove("DROP7_GRAVITY")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if resume {
        c.arg("--resume");
    }
    c
}

/// Kill a fair run with SIGKILL, SIGINT and SIGTERM at random moments and
/// resume each time: the records equal an uninterrupted run's (wall-clock
/// fields aside). SIGINT/SIGTERM exit 130/143 and print the resume command.
#[test]
fn killed_and_resumed_runs_equal_an_uninterrupted_one() {
    let dir = scratch("kill");
    let full = dir.join("full.jsonl");
    let t = Instant::now();
    let o = fair_run(&full, false).output().unwrap();
    assert!(o.status.success());
    let took = t.elapsed();
    let want = stable(&full);
    assert_eq!(want.len(), 60);
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    for (k, signal) in ["KILL", "KILL", "INT", "KILL", "TERM", "KILL", "INT", "TERM"]
        .into_iter()
        .enumerate()
    {
        let out = dir.join(format!("k{k}.jsonl"));
        let mut interruptions = 0;
        // The first run is killed (-9) six times early on; the others three
        // times anywhere in the first half; then each is let finish.
        let (attempts, reach) = if k == 0 { (6, 0.12) } else { (3, 0.5) };
        for attempt in 0.. {
            let child = fair_run(&out, true).spawn().unwrap();
            if attempt < attempts {
                let at = took.mul_f64((next_rand(&mut rng) % 1000) as f64 / 1000.0 * reach);
                std::thread::sleep(at);
                let pid = child.id().to_string();
                Command::new("kill")
                    .args([&format!("-{signal}"), &pid])
                    .status()
                    .unwrap();
                let o = child.wait_with_output().unwrap();
                if o.status.success() {
                    continue; // finished before the signal
                }
                interruptions += 1;
                let err = String::from_utf8_lossy(&o.stderr);
                match signal {
                    "INT" | "TERM" => {
                        let code = if signal == "INT" { 130 } else { 143 };
                        // Before the handlers are installed the default
                        // disposition applies (no exit code).
                        if let Some(c) = o.status.code() {
                            assert_eq!(c, code, "{err}");
                            assert!(err.contains("games done"), "{err}");
                            assert!(
                                err.contains("resume with:") && err.contains("--resume"),
                                "{err}"
                            );
                        }
                    }
                    _ => assert!(o.status.code().is_none()),
                }
            } else {
                let o = child.wait_with_output().unwrap();
                assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
                break;
            }
        }
        assert_eq!(stable(&out), want, "after {interruptions} SIG{signal}s");
        let trace = |p: &Path| std::fs::read_to_string(p.with_extension("trace")).unwrap();
        assert_eq!(
            trace(&out),
            trace(&full),
            "trace after {interruptions} SIG{signal}s"
        );
        assert_eq!(
            tapes(&out),
            tapes(&full),
            "tapes after {interruptions} SIG{signal}s"
        );
        if k == 0 {
            assert!(interruptions >= 5, "only {interruptions} kill -9s landed");
        }
    }
}

/// A second writer of the same --out is refused while the first runs; the
/// file ends up as an uninterrupted run's.
#[test]
fn a_second_writer_is_refused() {
    let dir = scratch("lock");
    let out = dir.join("x.jsonl");
    let mut first = fair_run(&out, false).spawn().unwrap();
    // Wait until the first writer holds the file.
    let t = Instant::now();
    while !out.exists() && t.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(30));
    for resume in [true, false] {
        let mut a: Vec<&str> = FAIR_RUN.to_vec();
        a.extend(["--out", s(&out)]);
        if resume {
            a.push("--resume");
        } else {
            a.push("--force");
        }
        let o = drop7(&a);
        let still_running = first.try_wait().unwrap().is_none();
        if still_running {
            assert_eq!(o.status.code(), Some(1));
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(
                err.contains("locked by another running drop7") && err.contains("x.jsonl"),
                "{err}"
            );
        }
    }
    assert!(first.wait().unwrap().success());
    let want_file = dir.join("want.jsonl");
    assert!(fair_run(&want_file, false).status().unwrap().success());
    assert_eq!(stable(&out), stable(&want_file));
}

/// A tape that cannot be written stops the run at its game: every record in
/// --out and every game in --trace has its tape, and --resume, once the
/// cause is gone, ends as an uninterrupted run (records, trace and tapes).
#[test]
fn a_failed_tape_stops_the_run_and_resume_finishes_it() {
    let dir = scratch("tape-fails");
    let out = dir.join("x.jsonl");
    let folder = out.with_extension("tapes");
    // A folder where the tape of seed 0xc (the run's 4th game) is written
    // before it is renamed into place.
    let obstacle = folder.join(".0x0000000c.tape.json.partial");
    std::fs::create_dir_all(&obstacle).unwrap();
    let o = fair_run(&out, false).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let tape = folder.join("0x0000000c.tape.json");
    assert!(
        err.contains(&format!("writing tape {}", tape.display()))
            && err.contains("rerun with --resume"),
        "{err}"
    );
    let seeds: Vec<Value> = stable(&out).iter().map(|r| r["seed"].clone()).collect();
    assert_eq!(seeds, ["0x00000009", "0x0000000a", "0x0000000b"]);
    std::fs::remove_dir(&obstacle).unwrap();
    let names: Vec<String> = tapes(&out).into_iter().map(|(n, _)| n).collect();
    assert_eq!(
        names,
        [
            "0x00000009.tape.json",
            "0x0000000a.tape.json",
            "0x0000000b.tape.json"
        ]
    );
    let trace = std::fs::read_to_string(out.with_extension("trace")).unwrap();
    assert!(!trace.is_empty() && !trace.contains("\"seed\":\"0x0000000c\""));
    let o = fair_run(&out, true).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let want = dir.join("want.jsonl");
    assert!(fair_run(&want, false).status().unwrap().success());
    assert_eq!(stable(&out), stable(&want));
    assert_eq!(tapes(&out), tapes(&want));
    assert_eq!(
        std::fs::read(out.with_extension("trace")).unwrap(),
        std::fs::read(want.with_extension("trace")).unwrap()
    );
}

/// Whatever is at a tape's temporary name is replaced, never written
/// through: a symlink there leaves the file it points to alone, and a FIFO
/// there does not block the run.
#[cfg(unix)]
#[test]
fn a_tape_is_never_written_through_its_temporary_name() {
    let dir = scratch("tape-temp");
    let folder = dir.join("t");
    std::fs::create_dir_all(&folder).unwrap();
    let victim = dir.join("victim.txt");
    std::fs::write(&victim, "precious\n").unwrap();
    std::os::unix::fs::symlink(&victim, folder.join(".0x00000002.tape.json.partial")).unwrap();
    let fifo = folder.join(".0x00000003.tape.json.partial");
    common::mkfifo(&fifo);
    ok(&["play", "--games", "4", "--tapes", s(&folder)]);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    let mut names: Vec<String> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        (1..=4)
            .map(|n| format!("0x{n:08x}.tape.json"))
            .collect::<Vec<_>>()
    );
    for n in &names {
        assert!(
            std::fs::symlink_metadata(folder.join(n)).unwrap().is_file(),
            "{n}"
        );
    }
}

/// Two runs given one --tapes folder: the second is refused while the
/// first writes there (each would write over the other's tapes), and the
/// folder is free again once the first has ended (here: killed).
#[test]
fn a_second_run_into_one_tapes_folder_is_refused() {
    let dir = scratch("tapes-lock");
    let folder = dir.join("tapes");
    // About a minute of games: still running when the second run starts.
    let mut first = Command::new(env!("CARGO_BIN_EXE_drop7"))
        .args([
            "play",
            "--policy",
            "fair:d3s5",
            "--games",
            "300",
            "--threads",
            "1",
        ])
        .args(["--quiet", "--tapes", s(&folder)])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while !folder.join("0x00000001.tape.json").exists() && t.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(5));
    }
    let other = [
        "play",
        "--games",
        "3",
        "--seed-start",
        "1000",
        "--tapes",
        s(&folder),
    ];
    let o = drop7(&other);
    let running = first.try_wait().unwrap().is_none();
    first.kill().unwrap();
    first.wait().unwrap();
    assert!(running, "the first run ended too soon for this test");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "--tapes {} is in use by another running drop7",
            folder.display()
        )),
        "{err}"
    );
    assert!(!folder.join("0x000003e8.tape.json").exists());
    ok(&other);
    assert!(folder.join("0x000003e8.tape.json").exists());
}

/// Files renamed over --out and --trace while a run writes them keep the
/// other process's bytes; what this run wrote (records and trace lines up to
/// the interruption) is copied beside each, and one error names both copies.
#[cfg(unix)]
#[test]
fn replaced_out_and_trace_are_rescued() {
    let dir = scratch("rescue");
    let (out, trace) = (dir.join("r.jsonl"), dir.join("r.trace"));
    let child = Command::new(env!("CARGO_BIN_EXE_drop7"))
        .args(["play", "--policy", "fair:d2s3", "--games", "100000"])
        .args(["--out", s(&out), "--trace", s(&trace)])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let non_empty = |p: &Path| std::fs::metadata(p).is_ok_and(|m| m.len() > 0);
    let t = Instant::now();
    while !(non_empty(&out) && non_empty(&trace)) && t.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(20));
    }
    for (path, theirs) in [(&out, "theirs\n"), (&trace, "their trace\n")] {
        let other = dir.join("other");
        std::fs::write(&other, theirs).unwrap();
        std::fs::rename(&other, path).unwrap();
    }
    let pid = child.id().to_string();
    Command::new("kill").args(["-INT", &pid]).status().unwrap();
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    // As an interrupted run: 130, and the count of games done.
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(
        err.starts_with("error: interrupted by SIGINT: ")
            && err.contains(" of 100000 games done; "),
        "{err}"
    );
    let rescued = |p: &Path| {
        let name = p.file_name().unwrap().to_str().unwrap();
        dir.join(format!("{name}.rescued-{pid}.jsonl"))
    };
    assert!(
        err.contains(&format!(
            "--out {} was replaced by another process during the run: its file is kept as it is, and this run's records are in {}",
            out.display(),
            rescued(&out).display()
        )) && err.contains(&format!(
            "--trace {} was replaced by another process during the run: its file is kept as it is, and this run's trace lines are in {}",
            trace.display(),
            rescued(&trace).display()
        )),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "theirs\n");
    assert_eq!(std::fs::read_to_string(&trace).unwrap(), "their trace\n");
    let records = std::fs::read_to_string(rescued(&out)).unwrap();
    assert!(!records.is_empty() && records.ends_with('\n'));
    for line in records.lines() {
        serde_json::from_str::<Value>(line).unwrap();
    }
    let lines = std::fs::read_to_string(rescued(&trace)).unwrap();
    assert!(!lines.is_empty() && lines.ends_with('\n'));
    for line in lines.lines() {
        serde_json::from_str::<Value>(line).unwrap();
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A run that stops on a failed write (here a file-size limit reached by
/// the trace) after --out was renamed over still copies its records beside
/// it; the error names the failed write and the copy.
#[cfg(unix)]
#[test]
fn a_failed_write_still_rescues_a_replaced_out() {
    let dir = scratch("rescue-efbig");
    let (out, trace) = (dir.join("r.jsonl"), dir.join("r.trace"));
    let child = Command::new("prlimit")
        .arg("--fsize=20000000")
        .arg(env!("CARGO_BIN_EXE_drop7"))
        .args(["play", "--policy", "fair:d2s3", "--games", "100000"])
        .args(["--threads", "1", "--out", s(&out), "--trace", s(&trace)])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while !std::fs::metadata(&out).is_ok_and(|m| m.len() > 0)
        && t.elapsed() < Duration::from_secs(120)
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    let other = dir.join("other");
    std::fs::write(&other, "theirs\n").unwrap();
    std::fs::rename(&other, &out).unwrap();
    let pid = child.id();
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let rescued = dir.join(format!("r.jsonl.rescued-{pid}.jsonl"));
    assert!(
        err.starts_with(&format!("error: writing --trace {}: File too large", trace.display()))
            && err.trim_end().ends_with(&format!(
                "; --out {} was replaced by another process during the run: its file is kept as it is, and this run's records are in {}",
                out.display(),
                rescued.display()
            )),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "theirs\n");
    let records = std::fs::read_to_string(&rescued).unwrap();
    assert!(!records.is_empty());
    for line in records.lines() {
        serde_json::from_str::<Value>(line).unwrap();
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The text verdict says which way a delta above the floor goes (the sign of
/// the mean delta alone was easy to misread); below the floor it says
/// nothing of a direction.
#[test]
fn compare_verdict_names_the_direction() {
    let dir = scratch("direction");
    let (center, random) = (dir.join("center.jsonl"), dir.join("random.jsonl"));
    ok(&["play", "--games", "200", "--out", s(&center)]);
    ok(&[
        "play",
        "--games",
        "200",
        "--policy",
        "random",
        "--out",
        s(&random),
    ]);
    let worse = ok(&["compare", s(&random), s(&center), "--resamples", "1000"]);
    assert!(
        worse.contains("is above the floor: the candidate scores lower than the base"),
        "{worse}"
    );
    let better = ok(&["compare", s(&center), s(&random), "--resamples", "1000"]);
    assert!(
        better.contains("is above the floor: the candidate scores higher than the base"),
        "{better}"
    );
    // The picture written is named on the last line.
    let svg = dir.join("d.svg");
    let plotted = ok(&[
        "compare",
        s(&center),
        s(&random),
        "--resamples",
        "1000",
        "--plot",
        s(&svg),
    ]);
    assert!(
        plotted.ends_with(&format!("\nplot       {}\n", svg.display())),
        "{plotted}"
    );
    let summarised = ok(&[
        "summary",
        s(&center),
        "--resamples",
        "1000",
        "--plot",
        s(&svg),
    ]);
    assert!(
        summarised.ends_with(&format!("\nplot       {}\n", svg.display())),
        "{summarised}"
    );
    let copy = dir.join("center-copy.jsonl");
    std::fs::copy(&center, &copy).unwrap();
    let same = ok(&["compare", s(&center), s(&copy), "--resamples", "1000"]);
    assert!(
        same.contains("is not above the floor: not a measurement\n"),
        "{same}"
    );
}

/// A name of an open descriptor (`/dev/stdout`, `/dev/fd/1`,
/// `/proc/self/fd/1`, or a link to one) is not a file to replace: `merge
/// --force /dev/stdout >> FILE` and `summary --plot /dev/stdout` are refused
/// and FILE keeps its lines (before, the rename replaced FILE with the
/// merged records). A link to a file is followed as before.
#[cfg(target_os = "linux")]
#[test]
fn a_descriptor_is_not_a_file_to_replace() {
    let dir = scratch("descriptor");
    let part = |i: u32| dir.join(format!("part{i}.jsonl"));
    for i in 1..=2 {
        let shard = format!("{i}/2");
        ok(&[
            "play",
            "--games",
            "6",
            "--shard",
            &shard,
            "--out",
            s(&part(i)),
            "--quiet",
        ]);
    }
    let so = dir.join("so.txt");
    let link = dir.join("link-to-stdout");
    std::os::unix::fs::symlink("/dev/stdout", &link).unwrap();
    for out in ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1", s(&link)] {
        std::fs::write(&so, "before\n").unwrap();
        let appended = std::fs::OpenOptions::new().append(true).open(&so).unwrap();
        let o = common::drop7_cmd()
            .args(["merge", "--force", out, s(&part(1)), s(&part(2))])
            .stdout(appended)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{out}: {err}");
        assert!(
            err.contains("names an open file descriptor"),
            "{out}: {err}"
        );
        assert_eq!(std::fs::read_to_string(&so).unwrap(), "before\n", "{out}");
    }
    std::fs::write(&so, "before\n").unwrap();
    let appended = std::fs::OpenOptions::new().append(true).open(&so).unwrap();
    let svg = dir.join("plot.svg");
    std::os::unix::fs::symlink("/dev/stdout", &svg).unwrap();
    let o = common::drop7_cmd()
        .args(["summary", s(&part(1)), "--plot", s(&svg)])
        .stdout(appended)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("names an open file descriptor"), "{err}");
    assert_eq!(std::fs::read_to_string(&so).unwrap(), "before\n");
    // A link to a file elsewhere is followed, as before.
    let real = dir.join("merged.jsonl");
    std::fs::write(&real, "").unwrap();
    let to_file = dir.join("link-to-file");
    std::os::unix::fs::symlink(&real, &to_file).unwrap();
    ok(&["merge", s(&to_file), s(&part(1)), s(&part(2))]);
    assert!(std::fs::symlink_metadata(&to_file).unwrap().is_symlink());
    assert_eq!(stable(&real).len(), 6);
}

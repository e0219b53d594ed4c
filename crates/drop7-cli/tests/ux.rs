//! Messages a new user reads: cohorts of two drivers refused by `compare` and
//! `summary` for that reason, flag errors naming the flag, one pointer to the
//! help per usage error, `--resume` suggested only when it can continue a
//! run, no promise of progress that is not shown, "1 game" rather than
//! "1 games", and plots titled with their cohorts' file names.

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::{drop7, fails, ok, ok_output, s};

fn scratch(name: &str) -> PathBuf {
    common::scratch_in("ux", name)
}

const BOARD: &str = "0000000000000000000000000000000000000000008888888";

/// A usage error (exit 2): its one stderr line.
fn usage_error(args: &[&str]) -> String {
    let o = drop7(args);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(2), "drop7 {args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "drop7 {args:?}: {err}");
    err
}

#[test]
fn compare_and_summary_refuse_cohorts_of_two_drivers() {
    let dir = scratch("drivers");
    let (h, st) = (dir.join("headless.jsonl"), dir.join("stream.jsonl"));
    ok(&["play", "--games", "4", "--out", s(&h)]);
    ok(&[
        "play",
        "--games",
        "4",
        "--driver",
        "stream",
        "--out",
        s(&st),
    ]);
    let err = fails(
        &["compare", s(&h), s(&st)],
        &[
            s(&h),
            s(&st),
            "played with driver headless",
            "with driver stream",
            "different game under each driver",
        ],
    );
    assert!(!err.contains("not comparable"), "{err}");
    // The other way round names the drivers the other way round.
    fails(
        &["compare", s(&st), s(&h)],
        &["played with driver stream", "with driver headless"],
    );
    // summary: the reason is the two drivers, not a game counted twice.
    let err = fails(
        &["summary", s(&h), s(&st)],
        &[
            s(&h),
            s(&st),
            "played with driver stream",
            "with driver headless",
            "two drivers",
        ],
    );
    assert!(!err.contains("counted twice"), "{err}");
    // One driver on both sides still compares.
    let st2 = dir.join("stream-copy.jsonl");
    std::fs::copy(&st, &st2).unwrap();
    assert!(
        ok(&["compare", s(&st), s(&st2), "--resamples", "1000"]).contains("pairs      4 games")
    );
}

#[test]
fn summary_and_compare_refuse_a_seed_outside_its_cohort() {
    let dir = scratch("outside");
    let (a, b) = (dir.join("a.jsonl"), dir.join("b.jsonl"));
    ok(&["play", "--games", "3", "--seed-start", "7", "--out", s(&a)]);
    ok(&["play", "--games", "3", "--seed-start", "7", "--out", s(&b)]);
    // A hand-edited record: seed 0x0000000a is past the cohort 7..9.
    let text = std::fs::read_to_string(&b).unwrap();
    assert!(text.contains("\"seed\":\"0x00000009\""), "{text}");
    std::fs::write(
        &b,
        text.replace("\"seed\":\"0x00000009\"", "\"seed\":\"0x0000000a\""),
    )
    .unwrap();
    let want = [
        "line 3: seed 0x0000000a is not a game of its cohort",
        "cohortSeedStart 0x00000007 and cohortGames 3 name seeds 0x00000007..0x00000009",
    ];
    let mut with_path = vec![s(&b)];
    with_path.extend(want);
    fails(&["summary", s(&b)], &with_path);
    fails(&["compare", s(&a), s(&b)], &with_path);
    assert!(ok(&["summary", s(&a)]).contains("games"));
}

/// Score deltas are taken without wrapping up to the largest score a record
/// may hold (2^53, so that every score prints exactly); a larger score, and
/// a cohortGames above the 2^32 seeds, are refused, not counted.
#[test]
fn compare_takes_any_score_and_refuses_impossible_cohorts() {
    let dir = scratch("bigscore");
    let (a, b) = (dir.join("a.jsonl"), dir.join("b.jsonl"));
    ok(&["play", "--games", "3", "--out", s(&a)]);
    let text = std::fs::read_to_string(&a).unwrap();
    let with_score = |score: u64| {
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let at = lines[0].find("\"score\":").unwrap() + "\"score\":".len();
        let end = at + lines[0][at..].find(',').unwrap();
        lines[0].replace_range(at..end, &score.to_string());
        lines.join("\n") + "\n"
    };
    std::fs::write(&b, with_score(1 << 53)).unwrap();
    let out = ok(&["compare", s(&a), s(&b)]);
    assert!(out.contains("1 win, 2 ties, 0 losses"), "{out}");
    let out = ok(&["summary", s(&b)]);
    assert!(out.contains("max 9007199254740992"), "{out}");
    std::fs::write(&b, with_score((1 << 53) + 1)).unwrap();
    fails(
        &["compare", s(&a), s(&b)],
        &[
            s(&b),
            "line 1: bad score: 9007199254740993 (expected at most 2^53 = 9007199254740992)",
        ],
    );
    let huge = text.replace("\"cohortGames\":3", "\"cohortGames\":4294967297");
    assert_ne!(huge, text);
    std::fs::write(&b, huge).unwrap();
    let want = ["line 1: cohortGames 4294967297 is more than the 2^32 seeds there are"];
    let mut with_path = vec![s(&b)];
    with_path.extend(want);
    fails(&["summary", s(&b)], &with_path);
    fails(&["compare", s(&a), s(&b)], &with_path);
    fails(&["merge", s(&dir.join("m.jsonl")), s(&b)], &with_path);
    assert!(!dir.join("m.jsonl").exists());
}

/// A file of another drop7 format given where records (or a trace) are
/// read: the error says what the line looks like.
#[test]
fn a_file_of_another_format_is_named() {
    let dir = scratch("kinds");
    let (trace, rec) = (dir.join("t.jsonl"), dir.join("r.jsonl"));
    ok(&[
        "play",
        "--games",
        "2",
        "--out",
        s(&rec),
        "--trace",
        s(&trace),
    ]);
    fails(
        &["summary", s(&trace)],
        &[
            s(&trace),
            "line 1: not a game record",
            "this line looks like a trace line (as drop7 trace writes)",
        ],
    );
    // A resumed run whose --trace holds records: refused, both files kept.
    let records = std::fs::read_to_string(&rec).unwrap();
    let first = records.lines().next().unwrap().to_string() + "\n";
    std::fs::write(&rec, &first).unwrap();
    std::fs::write(&trace, &records).unwrap();
    fails(
        &[
            "play",
            "--games",
            "2",
            "--out",
            s(&rec),
            "--trace",
            s(&trace),
            "--resume",
        ],
        &[
            "not a trace line",
            "this line looks like a game record (as drop7 play --out writes)",
        ],
    );
    assert_eq!(std::fs::read_to_string(&rec).unwrap(), first);
    assert_eq!(std::fs::read_to_string(&trace).unwrap(), records);
}

#[test]
fn rise_and_next_errors_name_the_flags() {
    for rise in ["9", "0"] {
        let err = fails(
            &["decide", "--board", BOARD, "--next", "3", "--rise", rise],
            &["--rise", "must be 1-5", &format!("got {rise}")],
        );
        assert!(!err.contains("movesRemaining"), "{err}");
    }
    fails(
        &["decide", "--board", BOARD, "--next", "9", "--rise", "3"],
        &["--next must be 1-7, got 9"],
    );
    fails(
        &["decide", "--board", "123", "--next", "3", "--rise", "3"],
        &["--board: board must have 49 characters, got 3"],
    );
    // A negative number gets the flag's own range error (exit 1, as 0
    // does), not "unexpected argument" or a parse error.
    fails(
        &["decide", "--board", BOARD, "--next", "3", "--rise", "-1"],
        &["--rise", "must be 1-5", "got -1"],
    );
    fails(
        &["decide", "--board", BOARD, "--next", "-2", "--rise", "3"],
        &["--next must be 1-7, got -2"],
    );
    fails(
        &[
            "decide",
            "--board",
            BOARD,
            "--next",
            "9223372036854775808",
            "--rise",
            "3",
        ],
        &["--next must be 1-7, got 9223372036854775808"],
    );
    // A negative seed (decimal or hex) is a bad seed, not an unknown flag.
    fails(
        &["play", "--games", "1", "--seed-start", "-1"],
        &["--seed-start", "invalid seed \"-1\""],
    );
    fails(
        &["play", "--games", "1", "--seed-start", "-0x1"],
        &["--seed-start", "invalid seed \"-0x1\""],
    );
    fails(
        &["show", "--seed", "-0x5"],
        &["--seed", "invalid seed \"-0x5\""],
    );
    // A sign is no digit: `+5` and `0x+1` are not read as 5 and 1.
    fails(
        &["play", "--games", "1", "--seed-start", "+5"],
        &["--seed-start", "invalid seed \"+5\""],
    );
    fails(
        &["show", "--seed", "0x+1"],
        &["--seed", "invalid seed \"0x+1\""],
    );
    for bad in ["+5", "0x+1", "0x", "5x", "18446744073709551616"] {
        let err = usage_error(&["summary", "x.jsonl", "--bootstrap-seed", bad]);
        assert!(
            err.contains(&format!("{bad:?} is not a seed: decimal or 0x hex")),
            "{bad}: {err}"
        );
    }
    // Any other numeric flag: a negative number is that flag's invalid
    // value (a usage error), not an unknown argument with a `-- -1` tip.
    for args in [
        vec!["decide", "--depth", "-1"],
        vec!["play", "--games", "-1"],
        vec!["play", "--max-moves", "-3"],
        vec!["summary", "x.jsonl", "--bootstrap-seed", "-1"],
        vec!["compare", "a.jsonl", "b.jsonl", "--resamples", "-5"],
    ] {
        let err = usage_error(&args);
        assert!(err.contains("invalid value '-"), "{args:?}: {err}");
        assert!(!err.contains("unexpected argument"), "{args:?}: {err}");
        assert!(!err.contains("'-- "), "{args:?}: {err}");
    }
    // The range said is the one taken (it said 0..= though 0 is refused).
    for m in ["0", "4294967296"] {
        let err = usage_error(&["play", "--max-moves", m]);
        assert!(
            err.contains(&format!("{m} is not in 1..=4294967295")),
            "{err}"
        );
    }
}

#[test]
fn usage_errors_point_to_the_help_once() {
    for (args, help) in [
        (vec!["decide", "--depth", "x"], "(see drop7 decide --help)"),
        (vec!["play", "--games"], "(see drop7 play --help)"),
        (vec!["play", "--bogus"], "(see drop7 play --help)"),
        (vec!["compare", "a.jsonl"], "(see drop7 compare --help)"),
        (vec!["bogus"], "(see drop7 --help)"),
    ] {
        let err = usage_error(&args);
        assert!(err.starts_with("error: "), "{args:?}: {err}");
        assert!(err.trim_end().ends_with(help), "{args:?}: {err}");
        assert_eq!(err.matches("--help").count(), 1, "{args:?}: {err}");
        assert!(!err.contains("For more information"), "{args:?}: {err}");
    }
    // clap's message and its tip are joined readably, not "found tip:".
    let err = usage_error(&["summary", "--bogus", "x"]);
    assert!(
        err.contains("unexpected argument '--bogus' found; tip: to pass '--bogus' as a value"),
        "{err}"
    );
    assert!(!err.contains("found tip"), "{err}");
}

#[test]
fn a_failed_write_suggests_resume_only_when_it_can() {
    // A device: nothing to resume from, whatever reached it.
    let err = fails(
        &["play", "--games", "20", "--out", "/dev/full"],
        &[
            "writing --out /dev/full: No space left on device",
            "(not a regular file: --resume cannot continue this run)",
        ],
    );
    assert!(!err.contains("rerun with --resume"), "{err}");
    // A regular file that no record reached (a file-size limit of 0 bytes).
    let dir = scratch("write");
    let out = dir.join("r.jsonl");
    // `play` of 20 games into `out` under a file-size limit of `bytes`.
    let play_limited = |bytes: u32| {
        Command::new("prlimit")
            .arg(format!("--fsize={bytes}"))
            .arg(env!("CARGO_BIN_EXE_drop7"))
            .args(["play", "--games", "20", "--quiet", "--out", s(&out)])
            .env_remove("DROP7_GRAVITY")
            .output()
            .unwrap()
    };
    let o = play_limited(0);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(std::fs::metadata(&out).unwrap().len(), 0);
    assert!(
        err.contains(&format!("writing --out {}", s(&out)))
            && err.contains("File too large")
            && err.contains("no record was written to it: nothing to resume")
            && !err.contains("rerun with --resume"),
        "{err}"
    );
    // Records written: --resume is suggested (and continues the run).
    let o = play_limited(2000);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("rerun with --resume to continue"), "{err}");
    ok(&[
        "play",
        "--games",
        "20",
        "--quiet",
        "--out",
        s(&out),
        "--resume",
    ]);
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 20);
}

/// stderr is a pipe here: no progress bar, so the warning does not promise one.
#[test]
fn decide_mentions_progress_only_when_it_is_shown() {
    let o = drop7(&[
        "decide",
        "--depth",
        "8",
        "--strata",
        "32",
        "--board",
        "1111111111111111111111111111111111111111111111111",
        "--next",
        "2",
        "--rise",
        "2",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("may take up to"), "{err}");
    assert!(!err.contains("progress"), "{err}");
}

#[test]
fn counts_of_one_are_singular() {
    let dir = scratch("one");
    let (one, part, merged) = (
        dir.join("one.jsonl"),
        dir.join("part.jsonl"),
        dir.join("merged.jsonl"),
    );
    let played = ok(&["play", "--games", "1", "--max-moves", "3", "--out", s(&one)]);
    assert!(
        played.contains("censored   1 game reached the move cap"),
        "{played}"
    );
    assert!(
        played.contains(" for the 1 game played in this run"),
        "{played}"
    );
    let summary = ok(&["summary", s(&one), "--resamples", "1000"]);
    assert!(summary.contains("cohort     1 game,"), "{summary}");
    assert!(summary.contains("from 1 game: 2 games"), "{summary}");
    let copy = dir.join("one-copy.jsonl");
    std::fs::copy(&one, &copy).unwrap();
    let compare = ok(&["compare", s(&one), s(&copy), "--resamples", "1000"]);
    assert!(compare.contains("pairs      1 game paired"), "{compare}");
    assert!(
        compare.contains("record     0 wins, 1 tie, 0 losses"),
        "{compare}"
    );
    assert!(compare.contains("(1 pair here)"), "{compare}");
    let (two, two_copy) = (dir.join("two.jsonl"), dir.join("two-copy.jsonl"));
    ok(&["play", "--games", "2", "--max-moves", "3", "--out", s(&two)]);
    std::fs::copy(&two, &two_copy).unwrap();
    let summary2 = ok(&["summary", s(&two), "--resamples", "1000"]);
    assert!(summary2.contains("bootstrap 1000 resamples)"), "{summary2}");
    let compare2 = ok(&["compare", s(&two), s(&two_copy), "--resamples", "1000"]);
    assert!(
        compare2.contains("one-sided bootstrap, 1000 resamples)"),
        "{compare2}"
    );
    ok(&["play", "--games", "1", "--shard", "1/1", "--out", s(&part)]);
    let m = ok(&["merge", s(&merged), s(&part)]);
    assert!(
        m.contains("merged     1 game from 1 shard file into"),
        "{m}"
    );
    for text in [&played, &summary, &summary2, &compare, &compare2, &m] {
        for plural in ["1 games", "1 moves", "1 pairs", "1 resamples", "1 files"] {
            // A count of one, not the end of a larger number ("41 moves/s").
            let one = text.match_indices(plural).any(|(i, _)| {
                !text[..i]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_ascii_digit() || c == '.' || c == ',')
            });
            assert!(!one, "{text}");
        }
    }
}

#[test]
fn plots_name_their_cohorts() {
    let dir = scratch("plots");
    let (a, b) = (dir.join("base-cohort.jsonl"), dir.join("cand&idate.jsonl"));
    ok(&["play", "--games", "5", "--out", s(&a)]);
    ok(&["play", "--games", "5", "--policy", "random", "--out", s(&b)]);
    let (ecdf, delta) = (dir.join("e.svg"), dir.join("d.svg"));
    ok(&["summary", s(&a), "--plot", s(&ecdf)]);
    let svg = std::fs::read_to_string(&ecdf).unwrap();
    assert!(
        svg.contains("base-cohort.jsonl: scores of 5 games"),
        "{svg}"
    );
    assert!(
        !svg.contains(s(&dir)),
        "the title shows file names, not paths"
    );
    ok(&["compare", s(&a), s(&b), "--plot", s(&delta)]);
    let svg = std::fs::read_to_string(&delta).unwrap();
    // The name is escaped in the SVG text.
    assert!(
        svg.contains(
            "Score deltas cand&amp;idate.jsonl - base-cohort.jsonl (candidate - base), 5 pairs"
        ),
        "{svg}"
    );
}

/// One game (or one pair) has no sample sd: no sd, interval, bound, floor or
/// verdict is claimed from it, in text, JSON or pictures.
#[test]
fn one_game_or_pair_claims_no_spread() {
    let dir = scratch("single");
    let (one, copy) = (dir.join("one.jsonl"), dir.join("copy.jsonl"));
    ok(&["play", "--games", "1", "--out", s(&one)]);
    std::fs::copy(&one, &copy).unwrap();

    let (ecdf, delta) = (dir.join("e.svg"), dir.join("d.svg"));
    let text = ok(&["summary", s(&one), "--plot", s(&ecdf)]);
    assert!(
        text.contains("(no sd and no 95% CI from 1 game: 2 games at least are needed)"),
        "{text}"
    );
    assert!(
        !text.contains("sd 0.0") && !text.contains("95% CI 6"),
        "{text}"
    );
    let svg = std::fs::read_to_string(&ecdf).unwrap();
    assert!(!svg.contains("95% CI"), "no interval drawn: {svg}");
    let j: serde_json::Value = serde_json::from_str(&ok(&["summary", "--json", s(&one)])).unwrap();
    for key in ["sd", "ci95Low", "ci95High"] {
        assert!(j["score"][key].is_null(), "score.{key}: {j}");
    }
    assert!(j["score"]["mean"].is_number(), "{j}");
    assert!(j["moves"]["sd"].is_null(), "{j}");

    let text = ok(&["compare", s(&one), s(&copy), "--plot", s(&delta)]);
    assert!(
        text.contains(
            "bound      none: 2 pairs at least are needed for a bound, a detection floor and a verdict (1 pair here)"
        ),
        "{text}"
    );
    for claim in [
        "sd ",
        "95% confidence",
        "floor   ",
        "verdict    ",
        "above the floor",
    ] {
        assert!(!text.contains(claim), "{claim:?} in {text}");
    }
    let svg = std::fs::read_to_string(&delta).unwrap();
    assert!(
        !svg.contains("lower bound") && !svg.contains("detection floor"),
        "{svg}"
    );
    let j: serde_json::Value =
        serde_json::from_str(&ok(&["compare", "--json", s(&one), s(&copy)])).unwrap();
    assert_eq!(j["pairs"], 1);
    for key in [
        "sdDelta",
        "lowerBound95",
        "detectionFloor",
        "aboveFloor",
        "verdict",
    ] {
        assert!(j.get(key).is_some_and(|v| v.is_null()), "{key}: {j}");
    }
    assert_eq!(j["meanDelta"], 0.0);

    // Two pairs: the figures are back.
    let (two, other) = (dir.join("two.jsonl"), dir.join("other.jsonl"));
    ok(&["play", "--games", "2", "--out", s(&two)]);
    ok(&[
        "play",
        "--games",
        "2",
        "--policy",
        "random",
        "--out",
        s(&other),
    ]);
    let j: serde_json::Value =
        serde_json::from_str(&ok(&["compare", "--json", s(&two), s(&other)])).unwrap();
    assert!(
        j["sdDelta"].is_number() && j["aboveFloor"].is_boolean(),
        "{j}"
    );
    let j: serde_json::Value = serde_json::from_str(&ok(&["summary", "--json", s(&two)])).unwrap();
    assert!(
        j["score"]["sd"].is_number() && j["score"]["ci95Low"].is_number(),
        "{j}"
    );
}

/// `compare` checks each file is one run (as `summary` does) and refuses a
/// file given twice, under any name.
#[test]
fn compare_refuses_a_mixed_file_and_a_file_twice() {
    let dir = scratch("compare-files");
    let (c, r, mix) = (
        dir.join("c.jsonl"),
        dir.join("r.jsonl"),
        dir.join("mix.jsonl"),
    );
    ok(&["play", "--games", "10", "--out", s(&c)]);
    ok(&[
        "play",
        "--games",
        "10",
        "--policy",
        "random",
        "--out",
        s(&r),
    ]);
    let mut text = std::fs::read(&c).unwrap();
    text.extend(std::fs::read(&r).unwrap());
    std::fs::write(&mix, text).unwrap();
    let want = [
        "mix.jsonl line 11 belongs to another run: policy is random there but center in",
        "mix.jsonl line 1",
    ];
    let from_summary = fails(&["summary", s(&mix)], &want);
    assert_eq!(fails(&["compare", s(&c), s(&mix)], &want), from_summary);
    assert_eq!(fails(&["compare", s(&mix), s(&c)], &want), from_summary);

    let dotted = dir.join(".").join("c.jsonl");
    for second in [&c, &dotted] {
        fails(&["compare", s(&c), s(second)], &["c.jsonl is given twice"]);
    }
    let link = dir.join("link.jsonl");
    std::os::unix::fs::symlink(&c, &link).unwrap();
    fails(&["compare", s(&link), s(&c)], &["is given twice"]);
    fails(&["summary", s(&link), s(&c)], &["is given twice"]);
}

/// `--plot` into a missing folder names the flag and the user's path.
#[test]
fn a_plot_into_a_missing_folder_names_the_flag() {
    let dir = scratch("plot-folder");
    let (a, b) = (dir.join("a.jsonl"), dir.join("b.jsonl"));
    ok(&["play", "--games", "3", "--out", s(&a)]);
    ok(&["play", "--games", "3", "--policy", "random", "--out", s(&b)]);
    let svg = dir.join("nodir").join("x.svg");
    for args in [
        vec!["summary", s(&a), "--plot", s(&svg)],
        vec!["compare", s(&a), s(&b), "--plot", s(&svg)],
    ] {
        let err = fails(
            &args,
            &[&format!("cannot create --plot {}", s(&svg)), "nodir"],
        );
        assert!(!err.contains(".tmp-"), "{err}");
    }
    // A file where the folder should be.
    let bad = a.join("x.svg");
    fails(
        &["summary", s(&a), "--plot", s(&bad)],
        &["--plot", "a.jsonl is not a folder"],
    );
}

/// A run that cannot start creates no file (`--trace` opened before `--out`
/// failed), and never removes a file that was there before.
#[test]
fn a_play_that_cannot_start_leaves_no_file() {
    let dir = scratch("no-start");
    let trace = dir.join("t3.jsonl");
    let out = dir.join("nodir").join("a.jsonl");
    let args = [
        "play",
        "--games",
        "3",
        "--out",
        s(&out),
        "--trace",
        s(&trace),
    ];
    fails(&args, &["cannot open --out", "nodir"]);
    assert!(!trace.exists(), "a trace left behind");
    // An existing (empty) trace file stays.
    std::fs::write(&trace, "").unwrap();
    fails(&args, &["cannot open --out"]);
    assert!(trace.exists());
    // --out refused (not empty, no --force): the new trace is removed, --out kept.
    let (full, trace2) = (dir.join("full.jsonl"), dir.join("t4.jsonl"));
    std::fs::write(&full, "x\n").unwrap();
    fails(
        &[
            "play",
            "--games",
            "3",
            "--out",
            s(&full),
            "--trace",
            s(&trace2),
        ],
        &["exists and is not empty"],
    );
    assert!(!trace2.exists());
    assert_eq!(std::fs::read(&full).unwrap(), b"x\n");
    // --round with --threads 0 (checked after the files are opened): neither
    // file is left.
    let round = common::data_path("rounds/gauntlet-01.json");
    let (out3, trace3) = (dir.join("r.jsonl"), dir.join("rt.jsonl"));
    fails(
        &[
            "play",
            "--round",
            s(&round),
            "--threads",
            "0",
            "--out",
            s(&out3),
            "--trace",
            s(&trace3),
        ],
        &["--threads must be at least 1"],
    );
    assert!(!out3.exists() && !trace3.exists());
}

#[test]
fn small_messages_say_what_happened() {
    let dir = scratch("small");
    // merge: a shard given twice is named as such, not as two shards
    // overlapping.
    let shard = dir.join("shard1.jsonl");
    ok(&["play", "--games", "4", "--shard", "1/2", "--out", s(&shard)]);
    let merged = dir.join("merged.jsonl");
    let err = fails(
        &["merge", s(&merged), s(&shard), s(&shard)],
        &[s(&shard), "is given twice: each shard is merged once"],
    );
    assert!(!err.contains("overlapping"), "{err}");
    assert!(!merged.exists());
    // A record file of blank lines: the blank line is named, not a JSON error.
    let blank = dir.join("blank.jsonl");
    std::fs::write(&blank, "\n\n").unwrap();
    fails(
        &["summary", s(&blank)],
        &[s(&blank), "line 1", "a blank line"],
    );
    // --resume of a complete file: no "threads 0".
    let done = dir.join("done.jsonl");
    ok(&["play", "--games", "3", "--out", s(&done)]);
    let out = ok(&["play", "--games", "3", "--out", s(&done), "--resume"]);
    assert!(out.contains("threads    none (no game to play)"), "{out}");
    assert!(!out.contains("threads    0"), "{out}");
    // A blank line in the file to resume: named, nothing changed.
    let mut with_blank = std::fs::read(&done).unwrap();
    with_blank.extend_from_slice(b"\n");
    std::fs::write(&done, &with_blank).unwrap();
    fails(
        &["play", "--games", "3", "--out", s(&done), "--resume"],
        &["line 4: a blank line", "not resuming"],
    );
    assert_eq!(std::fs::read(&done).unwrap(), with_blank);
    // A budget too small with --board names --board, not a stdin line.
    let o = ok_output(&[
        "decide",
        "--board",
        BOARD,
        "--next",
        "3",
        "--rise",
        "5",
        "--depth",
        "2",
        "--max-work",
        "0",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("warning: --board: --max-work 0"), "{err}");
    assert!(!err.contains("line 1"), "{err}");
    // ms in whole microseconds (at most 3 decimals).
    let out = ok(&[
        "decide", "--board", BOARD, "--next", "3", "--rise", "5", "--depth", "2",
    ]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let ms = v["ms"].to_string();
    assert!(ms.split('.').nth(1).is_none_or(|d| d.len() <= 3), "{ms}");
    // --table and --max-work of a policy that does not search: a note.
    let o = ok_output(&[
        "play",
        "--games",
        "1",
        "--policy",
        "center",
        "--table",
        "none",
        "--max-work",
        "9",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    for flag in ["--table", "--max-work"] {
        assert!(
            err.contains(&format!(
                "note: {flag} applies to fair policies only: ignored for center"
            )),
            "{err}"
        );
    }
    let o = drop7(&[
        "play",
        "--games",
        "1",
        "--policy",
        "fair:d1s1",
        "--table",
        "none",
    ]);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("note:"));
}

/// A gzip-compressed record file, round or tape: the error says so.
#[test]
fn a_gzip_file_is_named_as_such() {
    use std::io::Write;
    let dir = scratch("gzip");
    let (records, tapes) = (dir.join("r.jsonl"), dir.join("t"));
    ok(&[
        "play",
        "--games",
        "2",
        "--out",
        s(&records),
        "--tapes",
        s(&tapes),
    ]);
    let gzip = |from: &std::path::Path, to: &std::path::Path| {
        let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(&std::fs::read(from).unwrap()).unwrap();
        std::fs::write(to, z.finish().unwrap()).unwrap();
    };
    let hint = "not UTF-8 text (gzip-compressed: gunzip it first)";
    let gz = dir.join("r.jsonl.gz");
    gzip(&records, &gz);
    fails(
        &["summary", s(&gz)],
        &[&format!("{} line 1: {hint}", s(&gz))],
    );
    let tape = dir.join("t.json.gz");
    gzip(&tapes.join("0x00000001.tape.json"), &tape);
    fails(
        &["show", "--plain", s(&tape)],
        &[&format!("tape {}: {hint}", s(&tape))],
    );
    let o = drop7(&["replay", s(&tape)]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(&format!("the file is {hint}")),
        "{o:?}"
    );
    let round = dir.join("round.json.gz");
    let rounds =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/rounds/gauntlet-01.json");
    gzip(&rounds, &round);
    fails(
        &["play", "--round", s(&round)],
        &[&format!("round file {}: {hint}", s(&round))],
    );
}

/// A record's text fields reach the terminal quoted and escaped when they
/// hold a control character (a newline cannot split a line, an ESC cannot
/// restyle it), and records that contradict themselves are refused with the
/// file, line and field; a missing output folder is named.
#[test]
fn hostile_records_are_escaped_or_refused() {
    let dir = scratch("hostile");
    let (a, b) = (dir.join("a.jsonl"), dir.join("b.jsonl"));
    ok(&["play", "--games", "3", "--out", s(&a)]);
    let text = std::fs::read_to_string(&a).unwrap();
    let edit = |from: &str, to: &str| {
        assert!(text.contains(from), "{text}");
        std::fs::write(&b, text.replace(from, to)).unwrap();
    };
    edit(r#""policy":"center""#, r#""policy":"cen\nter\u001b[31m""#);
    let out = ok(&["summary", s(&b)]);
    assert!(
        out.contains(r#"policy "cen\nter\u{1b}[31m", driver"#),
        "{out}"
    );
    assert!(!out.contains('\u{1b}'), "{out}");
    let o = drop7(&["summary", s(&a), s(&b)]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains(r#"policy is "cen\nter\u{1b}[31m" there"#),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    for (from, to, why) in [
        (
            r#""maxMoves":2000"#,
            r#""maxMoves":0"#,
            "line 1: maxMoves is 0",
        ),
        (r#""maxMoves":2000"#, r#""maxMoves":2"#, "line 1: moves "),
        (
            r#""driver":"headless""#,
            r#""driver":"bogus""#,
            r#"line 1: bad driver "bogus""#,
        ),
        (
            r#""ruleset":"drop7-hardcore-5-v1""#,
            r#""ruleset":"x""#,
            r#"line 1: bad ruleset "x""#,
        ),
    ] {
        edit(from, to);
        fails(&["summary", s(&b)], &[s(&b), why]);
    }
    let missing = dir.join("no-such-folder").join("x.jsonl");
    fails(
        &["play", "--games", "1", "--out", s(&missing)],
        &[
            "no-such-folder is not an existing folder",
            "nothing was written",
        ],
    );
}

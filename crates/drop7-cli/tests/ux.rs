//! Messages a new user reads: cohorts of two drivers refused by `compare` and
//! `summary` for that reason, flag errors naming the flag, one pointer to the
//! help per usage error, `--resume` suggested only when it can continue a
//! run, no promise of progress that is not shown, "1 game" rather than
//! "1 games", and plots titled with their cohorts' file names.

mod common;

use std::path::PathBuf;

use common::{ok, s};

fn scratch(name: &str) -> PathBuf {
    common::scratch_in("ux", name)
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
    assert!(played.contains(" for 1 game played now"), "{played}");
    let summary = ok(&["summary", s(&one), "--resamples", "1"]);
    assert!(summary.contains("cohort     1 game,"), "{summary}");
    assert!(summary.contains("bootstrap 1 resample)"), "{summary}");
    let compare = ok(&["compare", s(&one), s(&one), "--resamples", "1"]);
    assert!(compare.contains("pairs      1 game paired"), "{compare}");
    assert!(
        compare.contains("record     0 wins, 1 tie, 0 losses"),
        "{compare}"
    );
    assert!(
        compare.contains("one-sided bootstrap, 1 resample)"),
        "{compare}"
    );
    ok(&["play", "--games", "1", "--shard", "1/1", "--out", s(&part)]);
    let m = ok(&["merge", s(&merged), s(&part)]);
    assert!(
        m.contains("merged     1 game from 1 shard file into"),
        "{m}"
    );
    for text in [&played, &summary, &compare, &m] {
        for plural in ["1 games", "1 moves", "1 pairs", "1 resamples", "1 files"] {
            assert!(!text.contains(plural), "{text}");
        }
    }
}

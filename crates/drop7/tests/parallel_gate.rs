//! Gate for the split decision (`drop7::parallel::ParallelSearch`): on the
//! records of `search.jsonl` (copied from `shared/golden/`) it gives the
//! golden values (bit patterns), expected scores, action and completed depth
//! on 2 and 3 threads, under several tables; with the record's own table
//! (none, or the strict LRU when the work budget binds: then the decision
//! runs on one thread) also the golden counters.

mod common;

use common::read_jsonl_gz;
use common::search::{binds, config, diff, root};
use drop7::gravity::{Gravity, Portable};
use drop7::leaf::FairLeaf;
use drop7::parallel::ParallelSearch;
use drop7::position::Position;
use drop7::search::{Decision, FairSearch, SearchConfig};
use drop7::table::{NoTable, SetAssociative, StrictLru, Table};
use serde_json::Value;

fn split<T: Table + Send, G: Gravity>(table: T, gravity: G, threads: usize, g: &Value) -> Decision {
    let one = FairSearch::new(FairLeaf, table, gravity, config(g));
    ParallelSearch::new(one, threads).decide(&root(g))
}

/// Asserts `d` matches golden record `g` (with the counters that one thread's
/// table fixes when `counts`).
fn check(d: &Decision, g: &Value, counts: bool, what: &str) {
    let counters: &[&str] = if counts {
        &["work", "nodes", "cacheHits", "leafCalls", "moveCalls"]
    } else {
        &[]
    };
    let bad = diff(d, g, counters);
    assert!(
        bad.is_empty(),
        "root {} {} {what}: {}",
        g["root"],
        g["config"]["name"],
        bad.join(", ")
    );
}

#[test]
fn split_decisions_match_golden_up_to_depth_3() {
    let golden = read_jsonl_gz("search.jsonl.gz");
    let mut checked = 0;
    for (i, g) in golden.iter().enumerate() {
        if config(g).depth > 3 {
            continue;
        }
        let threads = 2 + i % 2;
        // With no table the counters are one thread's; a binding budget runs
        // on one thread. The golden counters are those of the record's table.
        let cap = g["config"]["cacheCapacity"].as_u64().unwrap() as usize;
        // (Under a binding budget the table decides which depth completes.)
        if cap == 0 || !binds(g) {
            check(&split(NoTable, Portable, threads, g), g, cap == 0, "none");
        }
        if cap > 0 {
            let lru = split(StrictLru::new(cap), Portable, threads, g);
            check(&lru, g, binds(g), "lru");
        }
        if i % 3 == 0 && !binds(g) {
            let sa = split(SetAssociative::new(1 << 12, 4), Portable, threads, g);
            check(&sa, g, false, "sa");
        }
        checked += 1;
    }
    assert!(checked >= 700, "checked {checked}");
}

#[test]
fn split_decisions_match_golden_at_depth_4() {
    let golden = read_jsonl_gz("search.jsonl.gz");
    let mut checked = 0;
    for g in golden
        .iter()
        .filter(|g| config(g).depth == 4 && !binds(g))
        .step_by(3)
    {
        let d = split(SetAssociative::new(1 << 16, 4), Portable, 2, g);
        check(&d, g, false, "sa:65536:4");
        checked += 1;
    }
    assert!(checked >= 15, "checked {checked}");
}

#[test]
fn game_over_and_one_thread() {
    let mut pos = Position::initial(4);
    pos.game_over = true;
    let one = FairSearch::new(FairLeaf, NoTable, Portable, SearchConfig::new(3, 5));
    let mut two = ParallelSearch::new(one.clone(), 2);
    assert_eq!(two.decide(&pos), Decision::none());
    assert_eq!(two.threads(), 2);
    let start = Position::initial(4);
    let mut single = ParallelSearch::new(one.clone(), 0);
    assert_eq!(single.threads(), 1);
    let mut one = one;
    assert_eq!(single.decide(&start), one.decide(&start));
}

/// `decide_reporting` on 2 threads reports the iterations one thread
/// reports, in the same order with the same values (bit patterns); the
/// reported work grows from one report to the next. (Over an `sa:` table
/// that is the deepest iteration alone; the strict LRU and no table report
/// every one: `split_reports_every_iteration_over_a_strict_lru`.)
#[test]
fn split_reports_the_iterations_one_thread_reports() {
    reports_like_one_thread(|| SetAssociative::new(1 << 12, 4), false);
}

#[test]
fn split_reports_every_iteration_over_a_strict_lru() {
    reports_like_one_thread(|| StrictLru::new(200_000), true);
}

fn reports_like_one_thread<T: Table + Send + Clone>(table: impl Fn() -> T, every: bool) {
    let golden = read_jsonl_gz("search.jsonl.gz");
    let mut checked = 0;
    for g in golden
        .iter()
        .filter(|g| config(g).depth >= 3 && !binds(g))
        .step_by(25)
    {
        let one = FairSearch::new(FairLeaf, table(), Portable, config(g));
        let mut two = ParallelSearch::new(one.clone(), 2);
        let mut one = one;
        let bits = |v: &[Option<f64>; 7]| v.map(|x| x.map(f64::to_bits));
        let mut want = Vec::new();
        let a = one.decide_reporting(&root(g), |d, v, _| want.push((d, bits(v))));
        let mut got = Vec::new();
        let mut works = Vec::new();
        let b = two.decide_reporting(&root(g), |d, v, w| {
            got.push((d, bits(v)));
            works.push(w);
        });
        assert_eq!(got, want, "root {}", g["root"]);
        // Over an `sa:` table with a budget that cannot bind, only the
        // deepest iteration runs (FairSearch::first_iteration).
        let want_len = if every { a.completed_depth } else { 1 };
        assert_eq!(got.len() as u32, want_len);
        assert!(works.windows(2).all(|w| w[0] < w[1]), "{works:?}");
        assert_eq!((a.action, bits(&a.values)), (b.action, bits(&b.values)));
        checked += 1;
    }
    assert!(checked >= 10, "checked {checked}");
}

/// A stop flag already set when a split decision starts: it still answers
/// a legal column from a completed iteration (the first iterations are
/// shorter than the poll interval), with that iteration's values.
#[test]
fn split_decision_with_stop_answers_from_a_completed_iteration() {
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;
    let start = Position::initial(4);
    let one = FairSearch::new(FairLeaf, NoTable, Portable, SearchConfig::new(6, 7));
    let mut two = ParallelSearch::new(one, 2);
    two.set_stop(Some(Arc::new(AtomicBool::new(true))));
    let d = two.decide(&start);
    assert!((1..6).contains(&d.completed_depth), "{}", d.completed_depth);
    let col = d.action.unwrap();
    assert!(start.board.is_legal(col));
    let mut fixed = FairSearch::new(
        FairLeaf,
        NoTable,
        Portable,
        SearchConfig::new(d.completed_depth, 7),
    );
    let want = fixed.decide(&start);
    assert_eq!(d.values, want.values);
    assert_eq!(d.action, want.action);
}

/// A split decision with an interrupt flag (Python's Ctrl-C) that never
/// fires reports iteration D alone over an `sa:` table, like one thread
/// with the same flag, with the same values; a set flag stops it.
#[test]
fn split_with_an_interrupt_runs_like_one_thread() {
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;
    let start = Position::initial(4);
    let one = FairSearch::new(
        FairLeaf,
        SetAssociative::new(1 << 12, 4),
        Portable,
        SearchConfig::new(3, 5),
    );
    let mut two = ParallelSearch::new(one.clone(), 2);
    let mut one = one;
    let flag = Arc::new(AtomicBool::new(false));
    one.set_interrupt(Some(flag.clone()));
    two.set_interrupt(Some(flag.clone()));
    let (mut a_depths, mut b_depths) = (Vec::new(), Vec::new());
    let a = one.decide_reporting(&start, |d, _, _| a_depths.push(d));
    let b = two.decide_reporting(&start, |d, _, _| b_depths.push(d));
    assert_eq!((a_depths, b_depths), (vec![3], vec![3]));
    let bits = |d: &Decision| d.values.map(|x| x.map(f64::to_bits));
    assert_eq!(
        (a.action, a.completed_depth, bits(&a)),
        (b.action, b.completed_depth, bits(&b))
    );
    flag.store(true, std::sync::atomic::Ordering::Relaxed);
    let deep = FairSearch::new(
        FairLeaf,
        SetAssociative::new(1 << 12, 4),
        Portable,
        SearchConfig::new(6, 7),
    );
    let mut two = ParallelSearch::new(deep, 2);
    two.set_interrupt(Some(flag));
    // Stopped before iteration 6 completes: nothing completed, the fallback column.
    let d = two.decide(&start);
    assert_eq!(d.completed_depth, 0);
    assert!(start.board.is_legal(d.action.unwrap()));
}

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

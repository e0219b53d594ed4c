//! Parity gate for the fast fair search: every record of `search.jsonl`
//! (copied from `shared/golden/`), values as bit patterns, action, completed
//! depth and, with the strict-LRU table at the record's capacity (0 = no
//! table), the exact work, nodes, hits, entries, evictions, leaf and move calls.
//! Plus cache independence: when the budget does not bind, every table gives
//! the same values, actions and completed depths.

mod common;

use common::read_jsonl_gz;
use common::search::{ALL_COUNTERS, config, diff, hex_values, root};
use drop7::gravity::{Bmi2, Gravity, Portable};
use drop7::leaf::FairLeaf;
use drop7::search::{Decision, FairSearch, worst_case_work};
use drop7::table::{DirectMapped, NoTable, SetAssociative, StrictLru, Table};
use serde_json::Value;

fn run<T: Table, G: Gravity>(table: T, gravity: G, g: &Value) -> Decision {
    FairSearch::new(FairLeaf, table, gravity, config(g)).decide(&root(g))
}

/// With the strict LRU of the record (or no table), in the default copy of
/// the search's code or (`baseline`) the baseline one.
fn run_lru<G: Gravity>(gravity: G, baseline: bool, g: &Value) -> Decision {
    fn go<T: Table, G: Gravity>(table: T, gravity: G, baseline: bool, g: &Value) -> Decision {
        let s = FairSearch::new(FairLeaf, table, gravity, config(g));
        let mut s = if baseline { s.with_baseline_code() } else { s };
        s.decide(&root(g))
    }
    match g["config"]["cacheCapacity"].as_u64().unwrap() {
        0 => go(NoTable, gravity, baseline, g),
        cap => go(StrictLru::new(cap as usize), gravity, baseline, g),
    }
}

fn gate(filter: impl Fn(&Value) -> bool) -> usize {
    let golden = read_jsonl_gz("search.jsonl.gz");
    let bmi2 = Bmi2::detect();
    let mut checked = 0;
    let mut mismatches = 0;
    for (i, g) in golden.iter().enumerate().filter(|(_, g)| filter(g)) {
        // Alternate gravity paths, and the default and baseline copies of
        // the search's code (the default is built for bit instructions
        // where the CPU has them), over the records so all are exercised.
        let baseline = i / 2 % 2 == 1;
        let d = match bmi2 {
            Some(b) if i % 2 == 0 => run_lru(b, baseline, g),
            _ => run_lru(Portable, baseline, g),
        };
        let bad = diff(&d, g, &ALL_COUNTERS);
        if !bad.is_empty() {
            mismatches += 1;
            if mismatches <= 10 {
                eprintln!(
                    "root {} {}: {}",
                    g["root"],
                    g["config"]["name"],
                    bad.join(", ")
                );
            }
        }
        checked += 1;
    }
    assert_eq!(
        mismatches, 0,
        "{mismatches} of {checked} search records differ"
    );
    checked
}

#[test]
fn search_matches_golden_up_to_depth_3() {
    let n = gate(|g| g["config"]["depth"].as_u64().unwrap() <= 3);
    assert!(n >= 700, "checked {n}");
}

#[test]
fn search_matches_golden_at_depth_4() {
    let n = gate(|g| g["config"]["depth"].as_u64().unwrap() == 4);
    assert!(n >= 50, "checked {n}");
}

fn exp_bits(d: &Decision) -> [Option<u64>; 7] {
    d.expected_scores.map(|e| e.map(f64::to_bits))
}

/// Whenever the budget does not bind, values, expected scores, actions and
/// completed depths are the same under every table (the `sa:` and `dm:`
/// tables run the deepest iteration alone: `FairSearch::first_iteration`).
#[test]
fn tables_do_not_change_values() {
    let golden = read_jsonl_gz("search.jsonl.gz");
    let mut checked = 0;
    for g in golden.iter().filter(|g| {
        let c = config(g);
        c.depth <= 3 && c.max_work > worst_case_work(c.depth, c.strata)
    }) {
        let plain = run(NoTable, Portable, g);
        let want = (hex_values(&plain), plain.action, exp_bits(&plain));
        let arms = [
            run(StrictLru::new(500), Portable, g),
            run(DirectMapped::new(1 << 10), Portable, g),
            run(SetAssociative::new(1 << 10, 2), Portable, g),
            run(SetAssociative::new(1 << 12, 4), Portable, g),
        ];
        for d in arms {
            assert_eq!(
                (hex_values(&d), d.action, exp_bits(&d)),
                want,
                "root {} {}",
                g["root"],
                g["config"]["name"]
            );
            assert_eq!(
                u64::from(d.completed_depth),
                g["completedDepth"].as_u64().unwrap()
            );
        }
        checked += 1;
    }
    assert!(checked > 300);
}

/// Over an `sa:` or `dm:` table with a budget that cannot bind and no stop
/// flag, a decision runs iteration D alone (reported once, counters of that
/// iteration only, never more work than all of them); with no table, the
/// strict LRU, a binding budget or a stop flag it runs every iteration.
#[test]
fn only_our_tables_skip_the_shallower_iterations() {
    use drop7::position::Position;
    use drop7::search::SearchConfig;
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;
    fn reported<T: Table>(mut s: FairSearch<FairLeaf, T, Portable>) -> (Vec<u32>, u32, Decision) {
        let mut depths = Vec::new();
        let d = s.decide_reporting(&Position::initial(4), |d, _, _| depths.push(d));
        (depths, s.first_iteration(), d)
    }
    let cfg = SearchConfig::new(3, 5);
    let sa = || SetAssociative::new(1 << 12, 4);
    let (depths, first, skip) = reported(FairSearch::new(FairLeaf, sa(), Portable, cfg));
    assert_eq!((depths, first, skip.completed_depth), (vec![3], 3, 3));
    let (depths, _, dm) = reported(FairSearch::new(
        FairLeaf,
        DirectMapped::new(1 << 12),
        Portable,
        cfg,
    ));
    assert_eq!(depths, vec![3]);
    let (depths, first, all) = reported(FairSearch::new(
        FairLeaf,
        StrictLru::new(200_000),
        Portable,
        cfg,
    ));
    assert_eq!((depths, first), (vec![1, 2, 3], 1));
    let (depths, _, none) = reported(FairSearch::new(FairLeaf, NoTable, Portable, cfg));
    assert_eq!(depths, vec![1, 2, 3]);
    for d in [&skip, &dm, &none] {
        assert_eq!((hex_values(d), d.action), (hex_values(&all), all.action));
    }
    assert!(skip.stats.work < all.stats.work && dm.stats.work < none.stats.work);
    // A budget that can bind, or a stop flag (the D7P engine's): every iteration.
    let binding = SearchConfig {
        max_work: worst_case_work(3, 5),
        ..cfg
    };
    let (depths, first, _) = reported(FairSearch::new(FairLeaf, sa(), Portable, binding));
    assert_eq!((depths, first), (vec![1, 2, 3], 1));
    let mut stoppable = FairSearch::new(FairLeaf, sa(), Portable, cfg);
    stoppable.set_stop(Some(Arc::new(AtomicBool::new(false))));
    let (depths, first, d) = reported(stoppable);
    assert_eq!((depths, first), (vec![1, 2, 3], 1));
    assert_eq!(hex_values(&d), hex_values(&all));
    // The same table, every iteration against iteration D alone.
    assert!(
        skip.stats.work < d.stats.work,
        "{} {}",
        skip.stats.work,
        d.stats.work
    );
    // An interrupt (a stopped decision the caller discards: Python's
    // Ctrl-C) does not need the shallower iterations.
    let mut interruptible = FairSearch::new(FairLeaf, sa(), Portable, cfg);
    interruptible.set_interrupt(Some(Arc::new(AtomicBool::new(false))));
    let (depths, first, d) = reported(interruptible);
    assert_eq!((depths, first), (vec![3], 3));
    assert_eq!(hex_values(&d), hex_values(&all));
}

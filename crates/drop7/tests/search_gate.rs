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

fn run_lru<G: Gravity>(gravity: G, g: &Value) -> Decision {
    match g["config"]["cacheCapacity"].as_u64().unwrap() {
        0 => run(NoTable, gravity, g),
        cap => run(StrictLru::new(cap as usize), gravity, g),
    }
}

fn gate(filter: impl Fn(&Value) -> bool) -> usize {
    let golden = read_jsonl_gz("search.jsonl.gz");
    let bmi2 = Bmi2::detect();
    let mut checked = 0;
    let mut mismatches = 0;
    for (i, g) in golden.iter().enumerate().filter(|(_, g)| filter(g)) {
        // Alternate gravity paths over the records so both are exercised.
        let d = match bmi2 {
            Some(b) if i % 2 == 0 => run_lru(b, g),
            _ => run_lru(Portable, g),
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

/// Whenever the budget does not bind, values, actions and completed depths are
/// the same under every table.
#[test]
fn tables_do_not_change_values() {
    let golden = read_jsonl_gz("search.jsonl.gz");
    let mut checked = 0;
    for g in golden.iter().filter(|g| {
        let c = config(g);
        c.depth <= 3 && c.max_work > worst_case_work(c.depth, c.strata)
    }) {
        let want = (
            hex_values(&run(NoTable, Portable, g)),
            run(NoTable, Portable, g).action,
        );
        let arms = [
            run(StrictLru::new(500), Portable, g),
            run(DirectMapped::new(1 << 10), Portable, g),
            run(SetAssociative::new(1 << 10, 2), Portable, g),
            run(SetAssociative::new(1 << 12, 4), Portable, g),
        ];
        for d in arms {
            assert_eq!(
                (hex_values(&d), d.action),
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

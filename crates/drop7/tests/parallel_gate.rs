//! Gate for the split decision (`drop7::parallel::ParallelSearch`): on the
//! records of `search.jsonl` (copied from `shared/golden/`) it gives the
//! golden values (bit patterns), expected scores, action and completed depth
//! on 2 and 3 threads, under several tables; with the record's own table
//! (none, or the strict LRU when the work budget binds: then the decision
//! runs on one thread) also the golden counters.

mod common;

use common::read_jsonl_gz;
use drop7::board::Board;
use drop7::gravity::{Gravity, Portable};
use drop7::leaf::FairLeaf;
use drop7::parallel::ParallelSearch;
use drop7::position::Position;
use drop7::search::{Decision, FairSearch, SearchConfig, worst_case_work};
use drop7::table::{NoTable, SetAssociative, StrictLru, Table};
use serde_json::Value;

fn root(g: &Value) -> Position {
    Position {
        board: g["board"].as_str().unwrap().parse::<Board>().unwrap(),
        next_disc: g["next"].as_u64().unwrap() as u8,
        moves_remaining: g["movesRemaining"].as_u64().unwrap() as u8,
        game_over: false,
    }
}

fn config(g: &Value) -> SearchConfig {
    let c = &g["config"];
    SearchConfig {
        depth: c["depth"].as_u64().unwrap() as u32,
        strata: c["strata"].as_u64().unwrap() as u32,
        max_work: c["maxWork"].as_u64().unwrap(),
    }
}

fn split<T: Table + Send, G: Gravity>(table: T, gravity: G, threads: usize, g: &Value) -> Decision {
    let one = FairSearch::new(FairLeaf, table, gravity, config(g));
    ParallelSearch::new(one, threads).decide(&root(g))
}

fn hex(v: &[Option<f64>; 7]) -> Vec<Value> {
    v.iter()
        .map(|v| v.map_or(Value::Null, |x| format!("{:016x}", x.to_bits()).into()))
        .collect()
}

fn check(d: &Decision, g: &Value, counts: bool, what: &str) {
    let at = format!("root {} {} {what}", g["root"], g["config"]["name"]);
    assert_eq!(
        d.action.map(|a| a as u64),
        g["action"].as_u64(),
        "{at}: action"
    );
    assert_eq!(
        u64::from(d.completed_depth),
        g["completedDepth"].as_u64().unwrap(),
        "{at}: completedDepth"
    );
    assert_eq!(
        hex(&d.values),
        *g["values"].as_array().unwrap(),
        "{at}: values"
    );
    let want: Vec<Option<f64>> = g["expectedScores"]
        .as_array()
        .unwrap()
        .iter()
        .map(Value::as_f64)
        .collect();
    assert_eq!(d.expected_scores.to_vec(), want, "{at}: expectedScores");
    if counts {
        let s = &d.stats;
        for (name, got) in [
            ("work", s.work),
            ("nodes", s.nodes),
            ("cacheHits", s.cache_hits),
            ("leafCalls", s.leaf_calls),
            ("moveCalls", s.move_calls),
        ] {
            assert_eq!(g[name].as_u64(), Some(got), "{at}: {name}");
        }
    }
}

fn binds(g: &Value) -> bool {
    let c = config(g);
    c.max_work <= worst_case_work(c.depth, c.strata)
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

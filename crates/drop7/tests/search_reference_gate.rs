//! The reference search gate (search.md): the plain `ReferenceSearch`
//! (`drop7::reference::search`) against the golden decisions of
//! `testdata/search.jsonl.gz` (format: search-golden-format.md).
//!
//! For every record the search runs with the record's configuration (depth,
//! strata, maxWork, cacheCapacity) on the record's root, and the gate compares
//! action, completed depth, the 7 values as bit patterns, the 7 expected
//! scores (bit patterns of the correctly parsed decimals), and the counters
//! work, nodes, cacheHits, cacheEntries, evictions, leafCalls and moveCalls.
//! Mismatches are counted per field; every count must be 0.
//!
//! * `depth_at_most_3`: the records with depth <= 3 of all 8 configurations:
//!   all 90 of each 5-strata configuration, and for the slow 7-strata ones
//!   (d3s7, d3s7-notable) the 30 roots that are multiples of 3 (600 records).
//! * `depth_at_most_3_rest` (`#[ignore]`): the other 120 records of d3s7 and
//!   d3s7-notable.
//! * `depth_4` (`#[ignore]`, slow): the depth-4 records (d4s5, d4s7,
//!   d4s7-lru24000, d4s5-budget200000, d4s5-notable); prints one line per
//!   record as it finishes:
//!   `cargo test --release --test search_reference_gate -- --ignored depth_4 --nocapture`.
//!
//! Optional environment filters for all tests: `SEARCH_GATE_CONFIGS=d4s5,d3s7`
//! (configuration names) and `SEARCH_GATE_LIMIT=3` (at most that many records
//! per configuration, in file order). Records are searched in parallel
//! (rayon); the per-configuration timings are per decision.

mod common;

use std::collections::BTreeMap;
use std::time::Instant;

use drop7::board::{Cells, parse_cells};
use drop7::reference::search::ReferenceSearch;
use drop7::search::{Decision, SearchConfig};
use rayon::prelude::*;
use serde_json::Value;

/// One golden search record, decoded.
struct Record {
    root: u64,
    config_name: String,
    config: SearchConfig,
    cache_capacity: usize,
    cells: Cells,
    next: u8,
    moves_remaining: u8,
    action: Option<usize>,
    completed_depth: u32,
    /// Value bit patterns by source column; `None` = null.
    values: [Option<u64>; 7],
    /// Expected scores by source column; `None` = null.
    expected_scores: [Option<f64>; 7],
    /// In the order of [`COUNTER_NAMES`].
    counters: [u64; 7],
}

/// The golden counter fields, in the order of [`Record::counters`].
const COUNTER_NAMES: [&str; 7] = common::search::ALL_COUNTERS;

fn u64_field(v: &Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("field {key}: {v}"))
}

/// The `expectedScores` array parsed from the raw JSON text with
/// `str::parse::<f64>` (correctly rounded). serde_json without its
/// `float_roundtrip` feature parses some 17-digit decimals 1 ulp off (e.g.
/// `250.42857142857142`), so these decimals are not read through `Value`.
fn expected_scores_from_text(line: &str) -> [Option<f64>; 7] {
    const KEY: &str = "\"expectedScores\":[";
    let start = line.find(KEY).expect("an expectedScores array") + KEY.len();
    let end = start + line[start..].find(']').expect("a closing bracket");
    let items: Vec<Option<f64>> = line[start..end]
        .split(',')
        .map(|x| match x.trim() {
            "null" => None,
            number => Some(number.parse().unwrap_or_else(|e| panic!("{number}: {e}"))),
        })
        .collect();
    items.try_into().expect("7 expected scores")
}

impl Record {
    /// Decodes one JSON line of `search.jsonl`.
    fn from_line(line: &str) -> Record {
        let v: Value = serde_json::from_str(line).expect("valid JSON line");
        let config = &v["config"];
        let values: Vec<Option<u64>> = v["values"]
            .as_array()
            .expect("a values array")
            .iter()
            .map(|x| {
                x.as_str()
                    .map(|s| u64::from_str_radix(s, 16).expect("16 hex digits"))
            })
            .collect();
        Record {
            root: u64_field(&v, "root"),
            config_name: config["name"].as_str().expect("config name").to_string(),
            config: SearchConfig {
                depth: u64_field(config, "depth") as u32,
                strata: u64_field(config, "strata") as u32,
                max_work: u64_field(config, "maxWork"),
            },
            cache_capacity: u64_field(config, "cacheCapacity") as usize,
            cells: parse_cells(v["board"].as_str().expect("board")).expect("valid board"),
            next: u64_field(&v, "next") as u8,
            moves_remaining: u64_field(&v, "movesRemaining") as u8,
            action: usize::try_from(v["action"].as_i64().expect("action")).ok(),
            completed_depth: u64_field(&v, "completedDepth") as u32,
            values: values.try_into().expect("7 values"),
            expected_scores: expected_scores_from_text(line),
            counters: COUNTER_NAMES.map(|k| u64_field(&v, k)),
        }
    }

    /// The names of the fields where `d` differs from the golden record.
    fn mismatches(&self, d: &Decision) -> Vec<&'static str> {
        let bits = |xs: [Option<f64>; 7]| xs.map(|x| x.map(f64::to_bits));
        let mut bad = Vec::new();
        if d.action != self.action {
            bad.push("action");
        }
        if d.completed_depth != self.completed_depth {
            bad.push("completedDepth");
        }
        if bits(d.values) != self.values {
            bad.push("values");
        }
        if bits(d.expected_scores) != bits(self.expected_scores) {
            bad.push("expectedScores");
        }
        let s = d.stats;
        let ours = [
            s.work,
            s.nodes,
            s.cache_hits,
            s.cache_entries,
            s.evictions,
            s.leaf_calls,
            s.move_calls,
        ];
        for ((name, ours), golden) in COUNTER_NAMES.into_iter().zip(ours).zip(self.counters) {
            if ours != golden {
                bad.push(name);
            }
        }
        bad
    }
}

/// The golden records satisfying `keep`, narrowed by the optional
/// `SEARCH_GATE_CONFIGS` and `SEARCH_GATE_LIMIT` environment variables.
fn select(keep: impl Fn(&Record) -> bool) -> Vec<Record> {
    let configs: Option<Vec<String>> = std::env::var("SEARCH_GATE_CONFIGS")
        .ok()
        .map(|s| s.split(',').map(|x| x.trim().to_string()).collect());
    let limit: usize = std::env::var("SEARCH_GATE_LIMIT")
        .ok()
        .map_or(usize::MAX, |s| {
            s.parse().expect("SEARCH_GATE_LIMIT is a number")
        });
    let mut per_config: BTreeMap<String, usize> = BTreeMap::new();
    common::read_lines_gz("search.jsonl.gz")
        .iter()
        .map(|line| Record::from_line(line))
        .filter(|r| keep(r))
        .filter(|r| configs.as_ref().is_none_or(|c| c.contains(&r.config_name)))
        .filter(|r| {
            let n = per_config.entry(r.config_name.clone()).or_default();
            *n += 1;
            *n <= limit
        })
        .collect()
}

/// Searches one record; returns the mismatching fields and the decision time
/// in ms.
fn check(r: &Record, progress: bool) -> (Vec<&'static str>, f64) {
    let mut search = ReferenceSearch::new(r.config, r.cache_capacity);
    let start = Instant::now();
    let d = search.decide(&r.cells, r.next, r.moves_remaining, false);
    let ms = start.elapsed().as_secs_f64() * 1e3;
    let bad = r.mismatches(&d);
    if progress || !bad.is_empty() {
        let verdict = if bad.is_empty() {
            "ok".to_string()
        } else {
            format!("MISMATCH {bad:?}")
        };
        println!(
            "{:<18} root {:>3}: {ms:>9.1} ms, work {:>9}: {verdict}",
            r.config_name, r.root, d.stats.work
        );
    }
    if !bad.is_empty() {
        println!(
            "  golden: action {:?} depth {} counters {:?} expected scores {:?}",
            r.action, r.completed_depth, r.counters, r.expected_scores
        );
        println!(
            "  ours:   action {:?} depth {} {:?} expected scores {:?}",
            d.action, d.completed_depth, d.stats, d.expected_scores
        );
    }
    (bad, ms)
}

/// Runs the gate over `records` in parallel, prints per-configuration timings
/// and per-field mismatch counts, and asserts there are no mismatches.
fn run_gate(records: &[Record], progress: bool) {
    assert!(!records.is_empty(), "no records selected");
    let start = Instant::now();
    let results: Vec<(Vec<&str>, f64)> = records.par_iter().map(|r| check(r, progress)).collect();
    let mut mismatches: BTreeMap<&str, usize> = BTreeMap::new();
    // configuration name -> (records, total ms, max ms)
    let mut timing: BTreeMap<&str, (usize, f64, f64)> = BTreeMap::new();
    for (r, (bad, ms)) in records.iter().zip(&results) {
        for &field in bad {
            *mismatches.entry(field).or_default() += 1;
        }
        let t = timing.entry(&r.config_name).or_default();
        t.0 += 1;
        t.1 += ms;
        t.2 = t.2.max(*ms);
    }
    println!(
        "{:<18} {:>7} {:>10} {:>10}",
        "config", "records", "mean ms", "max ms"
    );
    for (name, (n, total, max)) in &timing {
        println!("{name:<18} {n:>7} {:>10.1} {max:>10.1}", total / *n as f64);
    }
    println!(
        "checked {} records in {:.1} s (wall); mismatches per field: {mismatches:?}",
        records.len(),
        start.elapsed().as_secs_f64()
    );
    assert!(
        mismatches.is_empty(),
        "mismatches per field: {mismatches:?}"
    );
}

/// Whether a depth-<=3 record is in the default test: every record of the
/// 5-strata configurations, and a third of the 7-strata ones (roots that are
/// multiples of 3). The plain search takes ~0.3 s (d3s7) to ~0.45 s
/// (d3s7-notable) per 7-strata decision, which would otherwise dominate.
fn in_default_gate(r: &Record) -> bool {
    r.config.depth <= 3 && (r.config.strata != 7 || r.root.is_multiple_of(3))
}

#[test]
fn depth_at_most_3() {
    run_gate(&select(in_default_gate), false);
}

#[test]
#[ignore = "slow: the other two thirds of d3s7 and d3s7-notable"]
fn depth_at_most_3_rest() {
    run_gate(
        &select(|r| r.config.depth <= 3 && !in_default_gate(r)),
        false,
    );
}

#[test]
#[ignore = "slow: the plain search takes seconds per depth-4 decision"]
fn depth_4() {
    run_gate(&select(|r| r.config.depth == 4), true);
}

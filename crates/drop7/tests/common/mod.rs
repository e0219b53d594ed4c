//! Shared helpers for the integration tests: loading the golden files copied
//! into `testdata/` (repository root) (see its README for their provenance).
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;

use serde_json::Value;

/// Path of a file under `testdata/` (repository root).
pub fn data_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(name)
}

/// All JSON lines of a gzipped `testdata/` (repository root) file.
pub fn read_jsonl_gz(name: &str) -> Vec<Value> {
    let file = std::fs::File::open(data_path(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    let reader = BufReader::new(flate2::read::GzDecoder::new(file));
    reader
        .lines()
        .map(|l| l.expect("readable line"))
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(&l).expect("valid JSON line"))
        .collect()
}

/// The golden first-block keys of a trace line, in order (trace-format.md).
pub const TRACE_KEYS: [&str; 13] = [
    "seed",
    "move",
    "disc",
    "column",
    "scoreDelta",
    "score",
    "level",
    "movesRemaining",
    "gameOver",
    "clearedBoard",
    "levelAdvanced",
    "waves",
    "board",
];

/// All raw lines of a gzipped `testdata/` (repository root) file.
pub fn read_lines_gz(name: &str) -> Vec<String> {
    let file = std::fs::File::open(data_path(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    BufReader::new(flate2::read::GzDecoder::new(file))
        .lines()
        .map(|l| l.expect("readable line"))
        .filter(|l| !l.trim().is_empty())
        .collect()
}

/// A golden trace line's first block (up to and including `"board":"…"`), closed
/// with `}`: byte-comparable with `drop7 trace` output.
pub fn first_block(line: &str) -> String {
    let at = line.find("\"board\":\"").expect("a board key") + "\"board\":\"".len() + 49 + 1;
    format!("{}}}", &line[..at])
}

/// Shared by the search gates (`search_gate.rs`, `parallel_gate.rs`): the
/// root position, the search config and the comparison of a decision with a
/// golden `search.jsonl` record (search-golden-format.md).
pub mod search {
    use drop7::board::Board;
    use drop7::position::Position;
    use drop7::search::{Decision, SearchConfig, worst_case_work};
    use serde_json::Value;

    /// The record's root position.
    pub fn root(g: &Value) -> Position {
        Position {
            board: g["board"].as_str().unwrap().parse::<Board>().unwrap(),
            next_disc: g["next"].as_u64().unwrap() as u8,
            moves_remaining: g["movesRemaining"].as_u64().unwrap() as u8,
            game_over: false,
        }
    }

    /// The record's search config (depth, strata, work budget).
    pub fn config(g: &Value) -> SearchConfig {
        let c = &g["config"];
        SearchConfig {
            depth: c["depth"].as_u64().unwrap() as u32,
            strata: c["strata"].as_u64().unwrap() as u32,
            max_work: c["maxWork"].as_u64().unwrap(),
        }
    }

    /// Whether the record's work budget can bind (it is at most the worst case).
    pub fn binds(g: &Value) -> bool {
        let c = config(g);
        c.max_work <= worst_case_work(c.depth, c.strata)
    }

    /// Per-column values as the golden 16-hex-digit bit patterns (`null` = illegal).
    pub fn hex_values(d: &Decision) -> Vec<Value> {
        d.values
            .iter()
            .map(|v| v.map_or(Value::Null, |x| format!("{:016x}", x.to_bits()).into()))
            .collect()
    }

    /// Every search counter a golden record carries, by its golden name.
    pub const ALL_COUNTERS: [&str; 7] = [
        "work",
        "nodes",
        "cacheHits",
        "cacheEntries",
        "evictions",
        "leafCalls",
        "moveCalls",
    ];

    /// Mismatching field names of `d` against golden record `g`: action,
    /// completed depth, values (bit patterns), expected scores, and the
    /// counters named in `counters` (with wanted and got values).
    pub fn diff(d: &Decision, g: &Value, counters: &[&str]) -> Vec<String> {
        let mut bad = Vec::new();
        if d.action.map(|a| a as u64) != g["action"].as_u64() {
            bad.push("action".into());
        }
        if u64::from(d.completed_depth) != g["completedDepth"].as_u64().unwrap() {
            bad.push("completedDepth".into());
        }
        if hex_values(d) != *g["values"].as_array().unwrap() {
            bad.push("values".into());
        }
        let want: Vec<Option<f64>> = g["expectedScores"]
            .as_array()
            .unwrap()
            .iter()
            .map(Value::as_f64)
            .collect();
        if d.expected_scores.to_vec() != want {
            bad.push("expectedScores".into());
        }
        let s = &d.stats;
        for &name in counters {
            let got = match name {
                "work" => s.work,
                "nodes" => s.nodes,
                "cacheHits" => s.cache_hits,
                "cacheEntries" => s.cache_entries,
                "evictions" => s.evictions,
                "leafCalls" => s.leaf_calls,
                "moveCalls" => s.move_calls,
                other => panic!("unknown counter {other}"),
            };
            if g[name].as_u64() != Some(got) {
                bad.push(format!("{name} (want {} got {got})", g[name]));
            }
        }
        bad
    }
}

//! Parity gate: the golden trajectories of the reference engines (copied from
//! `shared/golden/`, see `testdata/README.md`) replayed through the packed
//! engine on both gravity paths and through the plain reference engine. Every
//! move's first-block keys must serialise byte-identically, and `nextDisc` and
//! `terminalReason` must match: 0 mismatches.

mod common;

use common::{first_block, read_jsonl_gz, read_lines_gz};
use drop7::game::DriverKind;
use drop7::gravity::{Bmi2, Portable};
use drop7::runner::{
    CenterPolicy, Engine, PackedEngine, Policy, RandomParityPolicy, ReferenceEngine, TraceExtras,
    trace_game,
};
use serde_json::Value;

/// Replays every game of `file` with `engine`; returns the number of moves compared.
fn gate<E: Engine, P: Policy>(engine: E, mut policy: P, file: &str, driver: DriverKind) -> usize {
    let golden = read_jsonl_gz(file);
    let raw = read_lines_gz(file);
    let mut seeds: Vec<u32> = golden
        .iter()
        .map(|g| g["seed"].as_u64().unwrap() as u32)
        .collect();
    seeds.dedup();
    let mut got: Vec<(String, TraceExtras)> = Vec::new();
    for &seed in &seeds {
        trace_game(engine, &mut policy, driver, seed, 2000, |rec, extras| {
            got.push((serde_json::to_string(&rec).unwrap(), extras));
        });
    }
    assert_eq!(got.len(), golden.len(), "{file}: move count");
    let mut mismatches = 0;
    for ((g, raw), (line, extras)) in golden.iter().zip(&raw).zip(&got) {
        // Byte-level: our line must equal the golden line's first block.
        let want_line = first_block(raw);
        let next = extras.next_disc.map_or(Value::Null, Value::from);
        let term = extras
            .terminal
            .map_or(Value::Null, |t| Value::from(t.as_str()));
        if *line != want_line || next != g["nextDisc"] || term != g["terminalReason"] {
            if mismatches < 5 {
                eprintln!(
                    "{file}: seed {} move {}:\n want {want_line}\n got  {line}\n next {next} vs {}, terminal {term} vs {}",
                    g["seed"], g["move"], g["nextDisc"], g["terminalReason"]
                );
            }
            mismatches += 1;
        }
    }
    assert_eq!(
        mismatches,
        0,
        "{file}: {mismatches} of {} moves differ",
        golden.len()
    );
    golden.len()
}

fn all_files<E: Engine>(engine: E) {
    let n = gate(
        engine,
        CenterPolicy,
        "trajectories-center.jsonl.gz",
        DriverKind::Headless,
    ) + gate(
        engine,
        RandomParityPolicy::default(),
        "trajectories-random.jsonl.gz",
        DriverKind::Headless,
    ) + gate(
        engine,
        CenterPolicy,
        "trajectories-stream-center.jsonl.gz",
        DriverKind::Stream,
    ) + gate(
        engine,
        RandomParityPolicy::default(),
        "trajectories-stream-random.jsonl.gz",
        DriverKind::Stream,
    );
    assert_eq!(n, 4280 + 5304 + 4147 + 5374);
}

#[test]
fn packed_portable_matches_golden_trajectories() {
    all_files(PackedEngine(Portable));
}

#[test]
fn packed_bmi2_matches_golden_trajectories() {
    match Bmi2::detect() {
        Some(b) => all_files(PackedEngine(b)),
        None => eprintln!("skipped: this CPU has no BMI2"),
    }
}

#[test]
fn reference_matches_golden_trajectories() {
    all_files(ReferenceEngine);
}

//! Criterion micro-benchmarks (quick: small samples, short measurement):
//!
//! * `move/{bmi2,portable}`: every legal column of a few fixed real positions,
//!   one sampled move each (drop, cascade, rise), on both gravity paths;
//! * `gravity/{bmi2,portable}`: compaction of 64 column words;
//! * `leaf/{fast,plain}`: the fair leaf on a few `leaf.jsonl` states, packed
//!   board against the plain reference on cells;
//! * `search/d2s5`: one d2s5 decision (set-associative table, no leaf memo).
//!
//! `cargo bench --bench engine [-- FILTER]`. The full published workloads are
//! `drop7 bench --suite engine|leaf|search`.

use std::hint::black_box;
use std::io::{BufRead, BufReader};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use drop7::board::{Cells, parse_cells};
use drop7::cascade::is_settled;
use drop7::formats::position_from_parts;
use drop7::game::apply_move;
use drop7::gravity::{Bmi2, Gravity, Portable};
use drop7::leaf::FairLeaf;
use drop7::position::Position;
use drop7::reference::leaf::fair_leaf;
use drop7::search::{FairSearch, SearchConfig};
use drop7::strata::StratifiedRandom;
use drop7::table::SetAssociative;

/// A few real positions of `testdata/bench-roots-105.txt`: `(board, next, movesRemaining)`.
const POSITIONS: [(&str, u64, u64); 4] = [
    ("0000000000000000000000000000000000000440008888838", 4, 1),
    ("0000000000000000000009305050870527081538848848888", 1, 5),
    ("0000000000000000000000000000002000001507008888888", 1, 1),
    ("0000000000014000002910030198206418820198888988888", 1, 1),
];

fn positions() -> Vec<Position> {
    POSITIONS
        .iter()
        .map(|&(b, n, r)| position_from_parts(b, n, r, false).expect("valid bench position"))
        .collect()
}

/// Every (position, legal column, settled) triple of [`POSITIONS`].
fn moves() -> Vec<(Position, usize, bool)> {
    let mut v = Vec::new();
    for p in positions() {
        let settled = is_settled(&p.board);
        for c in 0..7 {
            if p.board.is_legal(c) {
                v.push((p, c, settled));
            }
        }
    }
    v
}

fn play_all<G: Gravity>(g: G, moves: &[(Position, usize, bool)]) -> u64 {
    let mut acc = 0u64;
    for (i, &(pos, column, settled)) in moves.iter().enumerate() {
        let mut p = black_box(pos);
        let mut rng = StratifiedRandom::new(0x2D70_0000 ^ i as u32, 0, 7);
        let m = apply_move(g, &mut p, column, settled, &mut rng, &mut ());
        acc = acc.wrapping_add(m.score_delta) ^ u64::from(p.board.columns()[column]);
    }
    acc
}

fn bench_move(c: &mut Criterion) {
    let moves = moves();
    let mut group = c.benchmark_group("move");
    if let Some(b) = Bmi2::detect() {
        group.bench_function("bmi2", |bench| {
            bench.iter(|| play_all(b, black_box(&moves)))
        });
    }
    group.bench_function("portable", |bench| {
        bench.iter(|| play_all(Portable, black_box(&moves)))
    });
    group.finish();
}

fn compact_all<G: Gravity>(g: G, words: &[u32]) -> u32 {
    words.iter().fold(0, |acc, &w| acc ^ g.compact(w))
}

fn bench_gravity(c: &mut Criterion) {
    // Column words with holes (7 nibbles, some emptied), deterministic.
    let mut x = 0x9E37_79B9u32;
    let words: Vec<u32> = (0..64)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let mut w = 0u32;
            for k in 0..7 {
                let v = (x >> (4 * k)) & 0xF;
                // Cell codes 0..9, about a third empty.
                w |= if v.is_multiple_of(3) { 0 } else { v % 10 } << (4 * k);
            }
            w
        })
        .collect();
    let mut group = c.benchmark_group("gravity");
    if let Some(b) = Bmi2::detect() {
        group.bench_function("bmi2", |bench| {
            bench.iter(|| compact_all(b, black_box(&words)))
        });
    }
    group.bench_function("portable", |bench| {
        bench.iter(|| compact_all(Portable, black_box(&words)))
    });
    group.finish();
}

/// Every 1,500th non-game-over state of `testdata/leaf.jsonl.gz` (10 states).
fn leaf_states() -> Vec<(Position, Cells)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/leaf.jsonl.gz");
    let file = std::fs::File::open(path).expect("testdata/leaf.jsonl.gz");
    let mut out = Vec::new();
    for (i, line) in BufReader::new(flate2::read::GzDecoder::new(file))
        .lines()
        .enumerate()
    {
        let line = line.expect("readable line");
        if i % 1500 != 7 {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(&line).expect("JSON line");
        let board = v["board"].as_str().expect("board");
        if v["gameOver"].as_bool() == Some(true) {
            continue;
        }
        let pos = position_from_parts(
            board,
            v["next"].as_u64().expect("next"),
            v["movesRemaining"].as_u64().expect("movesRemaining"),
            false,
        )
        .expect("valid leaf state");
        out.push((pos, parse_cells(board).expect("valid board")));
    }
    out
}

fn bench_leaf(c: &mut Criterion) {
    let states = leaf_states();
    let mut group = c.benchmark_group("leaf");
    group.bench_function("fast", |bench| {
        bench.iter(|| {
            black_box(&states)
                .iter()
                .fold(0u64, |acc, (p, _)| acc ^ FairLeaf::value(p).to_bits())
        })
    });
    group.bench_function("plain", |bench| {
        bench.iter(|| {
            black_box(&states).iter().fold(0u64, |acc, (p, cells)| {
                acc ^ fair_leaf(cells, p.next_disc, p.moves_remaining, false).to_bits()
            })
        })
    });
    group.finish();
}

fn bench_d2s5<G: Gravity>(c: &mut Criterion, g: G) {
    let root = positions()[1];
    // No leaf memo: it would persist across iterations on the same root and
    // turn every leaf into a memo hit.
    let mut s = FairSearch::new(
        FairLeaf,
        SetAssociative::new(1 << 16, 4),
        g,
        SearchConfig::new(2, 5),
    );
    c.benchmark_group("search").bench_function("d2s5", |bench| {
        bench.iter(|| s.decide(black_box(&root)).action)
    });
}

fn bench_search(c: &mut Criterion) {
    match Bmi2::detect() {
        Some(b) => bench_d2s5(c, b),
        None => bench_d2s5(c, Portable),
    }
}

fn quick() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
}

criterion_group! {
    name = benches;
    config = quick();
    targets = bench_move, bench_gravity, bench_leaf, bench_search
}
criterion_main!(benches);

//! The fairLeaf gate (search.md §9): the plain leaf (`drop7::reference::leaf`)
//! and the fast leaf (`drop7::leaf`) against the 15,003 golden evaluations of
//! `testdata/leaf.jsonl.gz` (format: search-golden-format.md), bit for bit,
//! value and all 19 terms; then fast against plain on random boards.
//!
//! `cargo test --release --test leaf_gate -- --ignored --nocapture` also runs
//! the timing comparison.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::sync::OnceLock;
use std::time::Instant;

use drop7::board::{Board, CELLS, Cells, SIZE, parse_cells};
use drop7::leaf::{FairLeaf, Leaf, ShapeCache};
use drop7::position::Position;
use drop7::reference::leaf::{
    FAIR_TERMINAL_UTILITY, FAIR_WEIGHTS, TERM_COUNT, TERM_NAMES, fair_leaf, fair_leaf_terms,
};
use flate2::read::GzDecoder;
use proptest::prelude::*;
use serde::Deserialize;

/// One line of `leaf.jsonl` (only the fields the gate reads).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Record {
    board: String,
    next: u8,
    moves_remaining: u8,
    game_over: bool,
    provenance: String,
    /// The value's IEEE-754 bits, 16 hex digits.
    bits: String,
}

/// A golden record decoded into the types the leaves take.
struct Case {
    cells: Cells,
    position: Position,
    provenance: String,
    bits: u64,
    terms: Option<[f64; TERM_COUNT]>,
}

/// All golden cases, decoded once.
fn cases() -> &'static [Case] {
    static CASES: OnceLock<Vec<Case>> = OnceLock::new();
    CASES.get_or_init(load_cases)
}

fn load_cases() -> Vec<Case> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/leaf.jsonl.gz");
    let file = File::open(path).expect("testdata/leaf.jsonl.gz");
    BufReader::new(GzDecoder::new(file))
        .lines()
        .map(|line| decode(&line.expect("read line")))
        .collect()
}

fn decode(line: &str) -> Case {
    let r: Record = serde_json::from_str(line).expect("json");
    let cells = parse_cells(&r.board).expect("golden board");
    let terms = golden_terms(line);
    Case {
        cells,
        position: Position {
            board: Board::from_cells(&cells),
            next_disc: r.next,
            moves_remaining: r.moves_remaining,
            game_over: r.game_over,
        },
        provenance: r.provenance.clone(),
        bits: u64::from_str_radix(&r.bits, 16).expect("hex bits"),
        terms,
    }
}

/// The `terms` array of a golden line, parsed with `str::parse::<f64>`
/// (correctly rounded, so the `%.17g` terms round-trip exactly) rather than
/// through serde_json, whose default float parser is off by one ulp on many
/// of them (e.g. `7.3000000000000007` becomes `7.3`) unless its
/// `float_roundtrip` feature is on.
fn golden_terms(line: &str) -> Option<[f64; TERM_COUNT]> {
    let start = line.find("\"terms\":[")? + "\"terms\":[".len();
    let len = line[start..].find(']').expect("terms end");
    let terms: Vec<f64> = line[start..start + len]
        .split(',')
        .map(|t| t.trim().parse().expect("term"))
        .collect();
    Some(terms.try_into().expect("19 terms"))
}

/// Mismatch tally of one evaluator over the golden file.
#[derive(Debug, Default)]
struct Tally {
    records: usize,
    bits: usize,
    terms: [usize; TERM_COUNT],
}

impl Tally {
    fn total_terms(&self) -> usize {
        self.terms.iter().sum()
    }
}

/// Compares `value`/`terms` of every golden case, printing the first few
/// mismatches.
fn gate(
    name: &str,
    value: impl Fn(&Case) -> f64,
    terms: impl Fn(&Case) -> [f64; TERM_COUNT],
) -> Tally {
    let mut tally = Tally::default();
    for case in cases() {
        tally.records += 1;
        let got = value(case);
        if got.to_bits() != case.bits {
            tally.bits += 1;
            if tally.bits <= 5 {
                eprintln!(
                    "{name}: value {got:e} ({:016x}) != golden {:e} ({:016x}) at {} {}",
                    got.to_bits(),
                    f64::from_bits(case.bits),
                    case.bits,
                    drop7::board::format_cells(&case.cells),
                    case.provenance
                );
            }
        }
        let Some(golden) = case.terms else { continue };
        let got = terms(case);
        for (k, (g, w)) in got.iter().zip(&golden).enumerate() {
            if g.to_bits() != w.to_bits() {
                tally.terms[k] += 1;
                if tally.terms[k] <= 3 {
                    eprintln!(
                        "{name}: term {k} {} = {g:?}, golden {w:?} at {} next {} moves {} ({})",
                        TERM_NAMES[k],
                        drop7::board::format_cells(&case.cells),
                        case.position.next_disc,
                        case.position.moves_remaining,
                        case.provenance
                    );
                }
            }
        }
    }
    eprintln!(
        "{name}: {} records, {} value-bit mismatches, {} term mismatches {:?}",
        tally.records,
        tally.bits,
        tally.total_terms(),
        tally.terms
    );
    tally
}

#[test]
fn golden_file_is_complete() {
    let cases = cases();
    assert_eq!(cases.len(), 15_003);
    assert_eq!(cases.iter().filter(|c| c.terms.is_none()).count(), 3);
    assert!(
        cases
            .iter()
            .all(|c| c.terms.is_some() != c.position.game_over)
    );
}

#[test]
fn plain_leaf_matches_golden_bits_and_terms() {
    let tally = gate(
        "plain",
        |c| {
            let p = &c.position;
            fair_leaf(&c.cells, p.next_disc, p.moves_remaining, p.game_over)
        },
        |c| fair_leaf_terms(&c.cells, c.position.next_disc, c.position.moves_remaining),
    );
    assert_eq!((tally.bits, tally.total_terms()), (0, 0), "{tally:?}");
}

#[test]
fn fast_leaf_matches_golden_bits_and_terms() {
    let tally = gate(
        "fast",
        |c| FairLeaf.evaluate(&c.position),
        |c| FairLeaf::terms(&c.position),
    );
    assert_eq!((tally.bits, tally.total_terms()), (0, 0), "{tally:?}");
}

#[test]
fn fast_leaf_equals_plain_leaf_on_golden_states() {
    for c in cases() {
        let p = &c.position;
        let plain = fair_leaf(&c.cells, p.next_disc, p.moves_remaining, p.game_over);
        assert_eq!(
            FairLeaf::value(p).to_bits(),
            plain.to_bits(),
            "{}",
            c.provenance
        );
        if !p.game_over {
            let plain = fair_leaf_terms(&c.cells, p.next_disc, p.moves_remaining);
            assert_eq!(
                FairLeaf::terms(p).map(f64::to_bits),
                plain.map(f64::to_bits)
            );
        }
    }
}

#[test]
fn fast_constants_equal_plain_constants() {
    assert_eq!(
        drop7::leaf::FAIR_WEIGHTS.map(f64::to_bits),
        FAIR_WEIGHTS.map(f64::to_bits)
    );
    assert_eq!(drop7::leaf::FAIR_TERMINAL_UTILITY, FAIR_TERMINAL_UTILITY);
}

/// Fast equals plain, value and terms, on `cells` for every next disc and
/// moves-remaining count.
fn assert_fast_equals_plain(cells: &Cells) {
    for next in 1..=7 {
        for moves in 1..=5 {
            let pos = Position {
                board: Board::from_cells(cells),
                next_disc: next,
                moves_remaining: moves,
                game_over: false,
            };
            let plain = fair_leaf_terms(cells, next, moves).map(f64::to_bits);
            assert_eq!(
                FairLeaf::terms(&pos).map(f64::to_bits),
                plain,
                "{}",
                pos.board
            );
            let plain = fair_leaf(cells, next, moves, false).to_bits();
            assert_eq!(FairLeaf::value(&pos).to_bits(), plain, "{}", pos.board);
        }
    }
}

#[test]
fn fast_leaf_equals_plain_leaf_on_extreme_boards() {
    let uniform = |code: u8| [code; CELLS];
    for code in 0..=9 {
        assert_fast_equals_plain(&uniform(code));
    }
    // Alternating codes over the full board, and single full columns.
    for (a, b) in [(1, 2), (2, 9), (1, 8), (7, 1), (2, 2)] {
        let cells: Cells = std::array::from_fn(|i| if i % 2 == 0 { a } else { b });
        assert_fast_equals_plain(&cells);
    }
    for col in 0..SIZE {
        for code in [1, 2, 7, 8] {
            let cells: Cells = std::array::from_fn(|i| if i % SIZE == col { code } else { 0 });
            assert_fast_equals_plain(&cells);
        }
    }
}

/// A bottom-packed board: per column a height and 7 cell codes (1..=9, the
/// top ones unused), so grays and numbers may sit anywhere.
fn random_cells(heights: [u8; SIZE], codes: [[u8; SIZE]; SIZE]) -> Cells {
    let mut cells = [0u8; CELLS];
    for c in 0..SIZE {
        for k in 0..usize::from(heights[c]) {
            cells[(SIZE - 1 - k) * SIZE + c] = codes[c][k];
        }
    }
    cells
}

/// A random board biased towards numbered discs, which drive most features.
fn code() -> impl Strategy<Value = u8> {
    prop_oneof![4 => 1u8..=7, 1 => 8u8..=9, 2 => 1u8..=3]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 20_000, .. ProptestConfig::default() })]

    #[test]
    fn fast_leaf_equals_plain_leaf_on_random_boards(
        heights in prop::array::uniform7(0u8..=7),
        codes in prop::array::uniform7(prop::array::uniform7(code())),
        next in 1u8..=7,
        moves in 1u8..=5,
    ) {
        let cells = random_cells(heights, codes);
        let pos = Position {
            board: Board::from_cells(&cells),
            next_disc: next,
            moves_remaining: moves,
            game_over: false,
        };
        let plain = fair_leaf_terms(&cells, next, moves);
        prop_assert_eq!(FairLeaf::terms(&pos).map(f64::to_bits), plain.map(f64::to_bits));
        let plain = fair_leaf(&cells, next, moves, false);
        prop_assert_eq!(FairLeaf::value(&pos).to_bits(), plain.to_bits());
    }
}

/// Nanoseconds per call of `f` over `inputs`, best of `rounds`.
fn time_per_leaf<T>(inputs: &[T], rounds: usize, mut f: impl FnMut(&T) -> f64) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..rounds {
        let start = Instant::now();
        let mut acc = 0.0;
        for x in inputs {
            acc += f(std::hint::black_box(x));
        }
        std::hint::black_box(acc);
        best = best.min(start.elapsed().as_secs_f64() * 1e9 / inputs.len() as f64);
    }
    best
}

/// Timing of the fast and plain leaves over the golden states, each arm on
/// its own compact input (packed positions / row-major cells); run with
/// `cargo test --release --test leaf_gate -- --ignored --nocapture`.
#[test]
#[ignore]
fn leaf_timing() {
    let positions: Vec<Position> = cases().iter().map(|c| c.position).collect();
    let cells: Vec<(Cells, Position)> = cases().iter().map(|c| (c.cells, c.position)).collect();
    let fast = time_per_leaf(&positions, 100, |p| FairLeaf.evaluate(p));
    let plain = time_per_leaf(&cells, 10, |(c, p)| {
        fair_leaf(c, p.next_disc, p.moves_remaining, p.game_over)
    });
    eprintln!(
        "{} states: fast {fast:.1} ns/leaf, plain {plain:.1} ns/leaf, speed-up {:.1}x",
        positions.len(),
        plain / fast
    );
}

/// `finish(partial(pos), n)` is `evaluate` of `pos` with next disc `n`, bit for
/// bit, for every golden state and every next disc (the search shares the
/// partial among samples that differ only in the next disc).
#[test]
fn partial_then_finish_equals_evaluate() {
    let mut leaf = FairLeaf;
    for c in cases() {
        let partial = leaf.partial(&c.position);
        for next in 1..=7 {
            let pos = Position {
                next_disc: next,
                ..c.position
            };
            assert_eq!(
                leaf.finish(&partial, next).to_bits(),
                leaf.evaluate(&pos).to_bits(),
                "{} next {next}",
                c.provenance
            );
        }
    }
}

/// The plain leaf's value of `cells` with every next disc, against
/// `finish(partial_cached(...))` through `cache`.
fn assert_cached_equals_plain(
    cache: &mut <FairLeaf as Leaf>::Cache,
    cells: &Cells,
    moves: u8,
) -> Result<(), TestCaseError> {
    let mut leaf = FairLeaf;
    let pos = Position {
        board: Board::from_cells(cells),
        next_disc: 1,
        moves_remaining: moves,
        game_over: false,
    };
    let partial = leaf.partial_cached(cache, &pos);
    for next in 1..=7 {
        let plain = fair_leaf(cells, next, moves, false).to_bits();
        prop_assert_eq!(
            leaf.finish(&partial, next).to_bits(),
            plain,
            "{} next {} moves {}",
            pos.board,
            next,
            moves
        );
    }
    Ok(())
}

/// The shape cache (`partial_cached`) gives the plain leaf's values on the
/// golden states, visited in file order and then again with their numbered
/// cells renumbered (same shape, so the cache's incremental path runs).
#[test]
fn cached_partial_equals_plain_leaf_on_golden_states() {
    renumbered_golden_states_through(Default::default());
}

/// The same with a cache that runs the baseline x86-64 code where the
/// default one runs code built for POPCNT, BMI1, BMI2 and LZCNT (on a CPU
/// without them, both run the baseline code).
#[test]
fn baseline_cached_partial_equals_plain_leaf_on_golden_states() {
    let cache = ShapeCache::baseline();
    assert!(!cache.uses_bit_instructions());
    renumbered_golden_states_through(cache);
}

/// The golden states in file order, each followed by renumbered variants
/// (same shape), through `cache`.
fn renumbered_golden_states_through(mut cache: ShapeCache) {
    for (k, c) in cases().iter().enumerate() {
        if c.position.game_over {
            continue;
        }
        let moves = c.position.moves_remaining;
        assert_cached_equals_plain(&mut cache, &c.cells, moves).unwrap();
        // Renumber one or two numbered cells (cycling through 1..=7).
        let numbered: Vec<usize> = (0..CELLS)
            .filter(|&i| (1..=7).contains(&c.cells[i]))
            .collect();
        if numbered.is_empty() {
            continue;
        }
        for step in 1..=3 {
            let mut cells = c.cells;
            let i = numbered[(k + step) % numbered.len()];
            cells[i] = (cells[i] + step as u8 - 1) % 7 + 1;
            if step == 3 {
                let j = numbered[(k * 7 + 1) % numbered.len()];
                cells[j] = cells[j] % 7 + 1;
            }
            assert_cached_equals_plain(&mut cache, &cells, moves).unwrap();
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 5_000, .. ProptestConfig::default() })]

    /// A random board, then variants of it with the same shape (random
    /// numbers in random numbered cells): the cached partial equals the
    /// plain leaf on each, in sequence through one cache.
    #[test]
    fn cached_partial_equals_plain_leaf_on_same_shape_variants(
        heights in prop::array::uniform7(0u8..=7),
        codes in prop::array::uniform7(prop::array::uniform7(code())),
        edits in prop::collection::vec((0usize..CELLS, 1u8..=7, 0usize..CELLS, 1u8..=7), 1..6),
        moves in 1u8..=5,
    ) {
        let mut cache = Default::default();
        let base = random_cells(heights, codes);
        assert_cached_equals_plain(&mut cache, &base, moves)?;
        for (i, a, j, b) in edits {
            let mut cells = base;
            for (p, v) in [(i, a), (j, b)] {
                if (1..=7).contains(&cells[p]) {
                    cells[p] = v;
                }
            }
            assert_cached_equals_plain(&mut cache, &cells, moves)?;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3_000, .. ProptestConfig::default() })]

    /// A random board, then a chain of same-shape variants each renumbering
    /// any subset of the numbered cells (from one cell to all of them), so
    /// that the cache's kept masks and sums are updated from the previous
    /// variant, not the first board: the cached partial equals the plain
    /// leaf on each.
    #[test]
    fn cached_partial_equals_plain_leaf_on_chained_renumberings(
        heights in prop::array::uniform7(0u8..=7),
        codes in prop::array::uniform7(prop::array::uniform7(code())),
        steps in prop::collection::vec((any::<u64>(), prop::array::uniform32(1u8..=7)), 1..6),
        moves in 1u8..=5,
    ) {
        let mut cache = Default::default();
        let mut cells = random_cells(heights, codes);
        assert_cached_equals_plain(&mut cache, &cells, moves)?;
        for (mask, numbers) in steps {
            let numbered: Vec<usize> =
                (0..CELLS).filter(|&i| (1..=7).contains(&cells[i])).collect();
            for (k, i) in numbered.into_iter().enumerate() {
                if mask >> k & 1 == 1 {
                    cells[i] = numbers[k % numbers.len()];
                }
            }
            assert_cached_equals_plain(&mut cache, &cells, moves)?;
        }
    }
}

thread_local! {
    /// One shape cache shared by all cases of the test below (proptest runs
    /// them on one thread), so that loads overwrite other random boards'
    /// entries.
    static SHARED_CACHE: std::cell::RefCell<<FairLeaf as Leaf>::Cache> =
        std::cell::RefCell::new(Default::default());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4_000, .. ProptestConfig::default() })]

    /// Random boards and a renumbered variant of each, all through one
    /// cache (thousands of shapes in its slots: every load replaces another
    /// board's entry, whose stale per-cell values must not leak): the cached
    /// partial equals the plain leaf on each.
    #[test]
    fn cached_partial_equals_plain_leaf_through_one_shared_cache(
        heights in prop::array::uniform7(0u8..=7),
        codes in prop::array::uniform7(prop::array::uniform7(code())),
        mask in any::<u64>(),
        numbers in prop::array::uniform32(1u8..=7),
        moves in 1u8..=5,
    ) {
        SHARED_CACHE.with(|cache| {
            let mut cache = cache.borrow_mut();
            let mut cells = random_cells(heights, codes);
            assert_cached_equals_plain(&mut cache, &cells, moves)?;
            let numbered: Vec<usize> =
                (0..CELLS).filter(|&i| (1..=7).contains(&cells[i])).collect();
            for (k, i) in numbered.into_iter().enumerate() {
                if mask >> k & 1 == 1 {
                    cells[i] = numbers[k % numbers.len()];
                }
            }
            assert_cached_equals_plain(&mut cache, &cells, moves)
        })?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3_000, .. ProptestConfig::default() })]

    /// A random board, then a long chain of same-shape variants each
    /// renumbering one or two cells in chosen rows (so that successive
    /// changes sit in different rows, alternating between top and bottom,
    /// and the cache resumes its row-major sums from rows whose
    /// checkpoints the previous variants wrote): the cached partial equals
    /// the plain leaf on each.
    #[test]
    fn cached_partial_equals_plain_leaf_on_row_alternating_edits(
        heights in prop::array::uniform7(0u8..=7),
        codes in prop::array::uniform7(prop::array::uniform7(code())),
        steps in prop::collection::vec(
            (0usize..SIZE, 0usize..SIZE, 1u8..=7, prop::option::of((0usize..SIZE, 1u8..=7))),
            1..16,
        ),
        moves in 1u8..=5,
    ) {
        let mut cache = Default::default();
        let mut cells = random_cells(heights, codes);
        assert_cached_equals_plain(&mut cache, &cells, moves)?;
        for (row, pick, value, second) in steps {
            // The `pick`-th numbered cell of `row` (cyclically), if any.
            let numbered_in = |cells: &Cells, row: usize| -> Vec<usize> {
                (SIZE * row..SIZE * (row + 1))
                    .filter(|&i| (1..=7).contains(&cells[i]))
                    .collect()
            };
            let in_row = numbered_in(&cells, row);
            if !in_row.is_empty() {
                cells[in_row[pick % in_row.len()]] = value;
            }
            if let Some((other, v)) = second {
                let in_other = numbered_in(&cells, other);
                if !in_other.is_empty() {
                    cells[in_other[(pick + 1) % in_other.len()]] = v;
                }
            }
            assert_cached_equals_plain(&mut cache, &cells, moves)?;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3_000, .. ProptestConfig::default() })]

    /// A few boards of one shape (a random board and renumberings of it)
    /// visited in a random order with random moves_remaining, so that the
    /// cache's board memo answers the revisits: the cached partial equals
    /// the plain leaf on each, and a board seen with another
    /// moves_remaining is never answered with that one's partial; through
    /// the default cache and through [`ShapeCache::baseline`].
    #[test]
    fn cached_partial_equals_plain_leaf_on_revisited_boards(
        heights in prop::array::uniform7(0u8..=7),
        codes in prop::array::uniform7(prop::array::uniform7(code())),
        edits in prop::collection::vec((0usize..CELLS, 1u8..=7), 1..4),
        visits in prop::collection::vec((0usize..4, 1u8..=5), 1..24),
    ) {
        let base = random_cells(heights, codes);
        let mut boards = vec![base];
        for (i, v) in edits {
            let mut cells = base;
            if (1..=7).contains(&cells[i]) {
                cells[i] = v;
            }
            boards.push(cells);
        }
        // The default cache and one that runs the baseline x86-64 code.
        for mut cache in [ShapeCache::default(), ShapeCache::baseline()] {
            for &(k, moves) in &visits {
                assert_cached_equals_plain(&mut cache, &boards[k % boards.len()], moves)?;
            }
        }
    }
}

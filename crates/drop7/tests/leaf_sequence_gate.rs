//! The leaf's shape cache and board memo under the sequences of leaves real
//! decisions ask for (search.md §9): a fair search whose leaf checks every
//! cached partial against the uncached one (`FairLeaf::partial`, itself
//! gated against the plain reference leaf in `leaf_gate.rs`), finished for
//! all seven next discs, bit for bit. The random-board gates in
//! `leaf_gate.rs` build their own sequences; this one replays the orders,
//! revisits and renumberings a search makes (21 benchmark roots at d3s7 and
//! one mid-game root at d4s7, about 2 M partials), through the
//! bit-instruction cache and through the baseline one.

use std::cell::Cell;
use std::rc::Rc;

use drop7::gravity::Portable;
use drop7::leaf::{FairLeaf, FairPartial, Leaf, ShapeCache};
use drop7::position::Position;
use drop7::search::{FairSearch, SearchConfig};
use drop7::table::SetAssociative;

mod common;

/// A [`ShapeCache`]: the default one (bit instructions where the CPU has
/// them) or, with `BASELINE`, [`ShapeCache::baseline`].
#[derive(Clone, Debug)]
struct Cache<const BASELINE: bool>(ShapeCache);

impl<const BASELINE: bool> Default for Cache<BASELINE> {
    fn default() -> Self {
        Cache(if BASELINE {
            ShapeCache::baseline()
        } else {
            ShapeCache::default()
        })
    }
}

/// [`FairLeaf`], checking each cached partial against the uncached one.
#[derive(Debug, Default)]
struct CheckedLeaf<const BASELINE: bool> {
    /// Cached partials checked so far (shared with the test).
    partials: Rc<Cell<u64>>,
}

impl<const BASELINE: bool> Leaf for CheckedLeaf<BASELINE> {
    type Partial = FairPartial;
    type Cache = Cache<BASELINE>;

    fn evaluate(&mut self, pos: &Position) -> f64 {
        FairLeaf.evaluate(pos)
    }

    fn partial(&mut self, pos: &Position) -> FairPartial {
        FairLeaf.partial(pos)
    }

    fn finish(&mut self, partial: &FairPartial, next_disc: u8) -> f64 {
        FairLeaf.finish(partial, next_disc)
    }

    fn partial_cached(&mut self, cache: &mut Cache<BASELINE>, pos: &Position) -> FairPartial {
        let cached = FairLeaf.partial_cached(&mut cache.0, pos);
        let plain = FairLeaf.partial(pos);
        for next in 1..=7 {
            let (c, p) = (
                FairLeaf.finish(&cached, next),
                FairLeaf.finish(&plain, next),
            );
            assert_eq!(
                c.to_bits(),
                p.to_bits(),
                "partial #{} of the search (baseline cache: {BASELINE}): cached {c} != plain {p} \
                 with next disc {next} on {pos:?}",
                self.partials.get()
            );
        }
        self.partials.set(self.partials.get() + 1);
        cached
    }
}

/// The first `n` roots of `testdata/bench-roots-105.txt` (`s <49 cells>
/// <next disc> <moves remaining> …`).
fn bench_roots(n: usize) -> Vec<Position> {
    let path = common::data_path("bench-roots-105.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    text.lines()
        .filter(|l| l.starts_with("s "))
        .take(n)
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Position {
                board: f[1].parse().expect("a valid board"),
                next_disc: f[2].parse().expect("a next disc"),
                moves_remaining: f[3].parse().expect("moves remaining"),
                game_over: false,
            }
        })
        .collect()
}

/// Decides `roots` at (`depth`, 7 strata) with one checking searcher (its
/// cache kept from root to root, as the CLI's is); returns the partials checked.
fn replay<const BASELINE: bool>(roots: &[Position], depth: u32) -> u64 {
    let partials = Rc::new(Cell::new(0));
    let leaf = CheckedLeaf::<BASELINE> {
        partials: Rc::clone(&partials),
    };
    let mut search = FairSearch::new(
        leaf,
        SetAssociative::new(1 << 16, 4),
        Portable,
        SearchConfig::new(depth, 7),
    );
    let mut plain = FairSearch::new(
        FairLeaf,
        SetAssociative::new(1 << 16, 4),
        Portable,
        SearchConfig::new(depth, 7),
    );
    for (i, root) in roots.iter().enumerate() {
        let checked = search.decide(root);
        let fast = plain.decide(root);
        assert_eq!(checked.completed_depth, depth, "root {i}");
        assert_eq!(checked.action, fast.action, "root {i}");
        let bits = |d: &drop7::search::Decision| d.values.map(|v| v.map(f64::to_bits));
        assert_eq!(bits(&checked), bits(&fast), "root {i}");
    }
    partials.get()
}

#[test]
fn cached_partials_equal_uncached_through_real_decisions() {
    let roots = bench_roots(21);
    assert_eq!(roots.len(), 21);
    let n = replay::<false>(&roots, 3);
    assert!(n > 100_000, "only {n} partials");
    let n = replay::<false>(&roots[15..16], 4);
    assert!(n > 1_000_000, "only {n} partials");
}

#[test]
fn baseline_cached_partials_equal_uncached_through_real_decisions() {
    let roots = bench_roots(21);
    let n = replay::<true>(&roots, 3);
    assert!(n > 100_000, "only {n} partials");
    let n = replay::<true>(&roots[15..16], 4);
    assert!(n > 1_000_000, "only {n} partials");
}

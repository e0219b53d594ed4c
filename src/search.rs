//! The fair expectimax search (spec: search.md).

/// Terminal utility of a sampled move that ends the game (search.md §1).
pub const TERMINAL_UTILITY: f64 = -1_000_000.0;

/// Search parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchConfig {
    /// Maximum iterative-deepening depth D (1..=8).
    pub depth: u32,
    /// Strata S per chance node (1..=32).
    pub strata: u32,
    /// Work cap: an iteration aborts when `work >= max_work` (search.md §5).
    pub max_work: u64,
}

impl SearchConfig {
    /// A config with the default budget `W(D,S) + 1`, which never binds.
    pub fn new(depth: u32, strata: u32) -> SearchConfig {
        SearchConfig { depth, strata, max_work: worst_case_work(depth, strata).saturating_add(1) }
    }
}

/// `W(D,S) = Σ_{d=1..D} (Σ_{l=1..d} b^l + b^d)` with `b = 7·S`: the worst-case
/// logical work of a decision (search.md §5), saturating at `u64::MAX`.
pub fn worst_case_work(depth: u32, strata: u32) -> u64 {
    let b = 7u64 * u64::from(strata);
    let mut total = 0u64;
    for d in 1..=depth {
        let mut p = 1u64;
        for _ in 1..=d {
            p = p.saturating_mul(b);
            total = total.saturating_add(p);
        }
        total = total.saturating_add(p);
    }
    total
}

/// Counters of one decision (search.md §5), all `u64`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SearchStats {
    /// Logical work: moves applied + leaves evaluated.
    pub work: u64,
    /// `bestFutureValue` calls.
    pub nodes: u64,
    /// Transposition-table hits.
    pub cache_hits: u64,
    /// Table entries at the end of the decision.
    pub cache_entries: u64,
    /// Entries evicted (LRU) or live slots overwritten (direct-mapped, set-associative).
    pub evictions: u64,
    /// Leaf evaluations.
    pub leaf_calls: u64,
    /// Sampled moves applied.
    pub move_calls: u64,
}

/// The result of one decision.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Decision {
    /// Column to play (source orientation); `None` for a game-over root.
    pub action: Option<usize>,
    /// Last fully completed iterative-deepening depth (0 if none).
    pub completed_depth: u32,
    /// Per-column values of the completed iteration, source orientation; `None`
    /// for illegal columns (or when no iteration completed).
    pub values: [Option<f64>; 7],
    /// Per-column mean immediate score delta over the samples (diagnostic).
    pub expected_scores: [Option<f64>; 7],
    /// Counters.
    pub stats: SearchStats,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worst_case_work_matches_spec() {
        assert_eq!(worst_case_work(2, 5), 2_555);
        assert_eq!(worst_case_work(3, 5), 89_565);
        assert_eq!(worst_case_work(3, 7), 242_697);
        assert_eq!(worst_case_work(4, 5), 3_134_950);
        assert_eq!(worst_case_work(4, 7), 11_892_398);
        assert_eq!(worst_case_work(5, 7), 582_727_796);
    }
}

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
        SearchConfig {
            depth,
            strata,
            max_work: worst_case_work(depth, strata).saturating_add(1),
        }
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

/// Counters of one decision (search.md §5), all `u64`; serialised with the
/// golden file's field names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
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

impl Decision {
    /// The decision on a game-over root (search.md §7): no action, completed
    /// depth 0, no values, zero counters. Also the starting point of every
    /// decision.
    pub const fn none() -> Decision {
        Decision {
            action: None,
            completed_depth: 0,
            values: [None; 7],
            expected_scores: [None; 7],
            stats: SearchStats {
                work: 0,
                nodes: 0,
                cache_hits: 0,
                cache_entries: 0,
                evictions: 0,
                leaf_calls: 0,
                move_calls: 0,
            },
        }
    }
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

use crate::board::Board;
use crate::game::{
    MovePrefix, MoveStart, MoveSummary, apply_move, begin_move_in, finish_move_inline,
};
#[cfg(target_arch = "x86_64")]
use crate::gravity::{ALL_BITS, COUNT_BITS};
use crate::gravity::{Gravity, PLAIN};
use crate::leaf::Leaf;
use crate::policy::COLUMN_ORDER;
use crate::position::Position;
use crate::strata::{
    DISC_DOMAIN, RevealRotations, StratifiedDraws, scenario_seed, stratified_disc,
};
use crate::table::{Key, Table};

/// Work between two polls of a stop flag (see [`FairSearch::set_stop`]).
const STOP_POLL_WORK: u64 = 4096;

/// Largest supported strata count.
pub const MAX_STRATA: u32 = 32;
/// Largest supported depth.
pub const MAX_DEPTH: u32 = 8;

/// Anything that decides positions: the fast [`FairSearch`] and the plain
/// [`crate::reference::search::ReferenceSearch`], behind one interface for the
/// CLI and the benchmarks.
pub trait Decide {
    /// One decision on `pos` (source orientation).
    fn decide_position(&mut self, pos: &Position) -> Decision;
    /// Bytes held by the transposition table (`None` if not reported).
    fn table_bytes(&self) -> Option<usize> {
        None
    }
}

impl<L: Leaf, T: Table, G: Gravity> Decide for FairSearch<L, T, G> {
    fn decide_position(&mut self, pos: &Position) -> Decision {
        self.decide(pos)
    }
    fn table_bytes(&self) -> Option<usize> {
        Some(self.table.memory_bytes())
    }
}

/// The work cap fired (search.md §5): the current iteration is abandoned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WorkLimitReached;

pub(crate) type Step<T> = Result<T, WorkLimitReached>;

/// Per-column `(action, values, expected scores)` of a completed iteration.
type RootResult = (usize, [Option<f64>; 7], [Option<f64>; 7]);

/// Mirrors `board` when the mirror is lexicographically smaller (search.md
/// §3.5); returns whether it did.
#[inline(always)]
pub fn canonicalize(board: &mut Board) -> bool {
    // Branch-free: half the sampled children mirror, unpredictably.
    let mirror = board.mirror_is_smaller();
    *board = board.mirrored_if(mirror);
    mirror
}

/// The fair expectimax search, generic over the leaf `L`, the transposition
/// table `T` and the gravity path `G` (all statically dispatched).
///
/// ```
/// use drop7::gravity::Portable;
/// use drop7::leaf::FairLeaf;
/// use drop7::position::Position;
/// use drop7::search::{FairSearch, SearchConfig};
/// use drop7::table::NoTable;
/// let mut s = FairSearch::new(FairLeaf, NoTable, Portable, SearchConfig::new(2, 5));
/// let d = s.decide(&Position::initial(4));
/// assert_eq!(d.completed_depth, 2);
/// assert!(d.action.is_some());
/// ```
#[derive(Clone, Debug)]
pub struct FairSearch<L: Leaf, T: Table, G: Gravity> {
    leaf: L,
    /// The leaf's scratch cache (exact results only; never cleared).
    leaf_cache: L::Cache,
    table: T,
    gravity: G,
    config: SearchConfig,
    stats: SearchStats,
    /// Whether the current root board is settled (children always are).
    root_settled: bool,
    /// Where a watcher reads how far a long decision is.
    progress: Option<std::sync::Arc<SearchProgress>>,
    /// Optional stop flag, polled every `STOP_POLL_WORK` work on the budget's slow path.
    stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// Whether a stopped decision answers (from its deepest completed
    /// iteration): [`FairSearch::set_stop`], not [`FairSearch::set_interrupt`].
    stop_answers: bool,
    /// Work at which the budget check takes its slow path next.
    poll_at: std::cell::Cell<u64>,
    /// Which copy of the recursion runs: [`PLAIN`], or one built for the
    /// gravity path's bit instructions where the CPU has them (see
    /// [`FairSearch::max_node`]).
    build: u8,
}

/// How far a running decision is, for a progress display on another thread
/// (see [`FairSearch::set_progress`]); updated at every max node of remaining
/// depth 2 or more and at every root iteration, so at most a few thousand
/// work units behind.
#[derive(Debug, Default)]
pub struct SearchProgress {
    /// The decision's work so far (search.md §5).
    pub work: std::sync::atomic::AtomicU64,
    /// The iterative-deepening depth being searched (1..=D).
    pub depth: std::sync::atomic::AtomicU32,
}

impl<L: Leaf, T: Table, G: Gravity> FairSearch<L, T, G> {
    /// A searcher; `config.depth` is clamped to 1..=8 and `config.strata` to 1..=32.
    pub fn new(leaf: L, table: T, gravity: G, mut config: SearchConfig) -> Self {
        config.depth = config.depth.clamp(1, MAX_DEPTH);
        config.strata = config.strata.clamp(1, MAX_STRATA);
        FairSearch {
            leaf,
            leaf_cache: L::Cache::default(),
            table,
            gravity,
            config,
            stats: SearchStats::default(),
            root_settled: true,
            progress: None,
            stop: None,
            stop_answers: false,
            poll_at: std::cell::Cell::new(0),
            build: crate::gravity::detected_copy::<G>(),
        }
    }

    /// This searcher with its recursion (max nodes, chance nodes and their
    /// moves) as baseline x86-64 code, even where the CPU has the bit
    /// instructions the default copy is built for (see [`Self::max_node`];
    /// the leaf keeps its own choice). For tests and comparisons: values,
    /// actions and counters are the same bit for bit.
    pub fn with_baseline_code(mut self) -> Self {
        self.build = PLAIN;
        self
    }

    /// Publishes this searcher's progress to `progress` from now on.
    pub fn set_progress(&mut self, progress: std::sync::Arc<SearchProgress>) {
        self.progress = Some(progress);
    }

    #[inline(always)]
    fn publish(&self, depth: Option<u32>) {
        if let Some(p) = &self.progress {
            use std::sync::atomic::Ordering::Relaxed;
            p.work.store(self.stats.work, Relaxed);
            if let Some(d) = depth {
                p.depth.store(d, Relaxed);
            }
        }
    }

    /// Installs (or removes) a stop flag: once it is set, the running
    /// decision abandons its iteration as if the work cap had fired and
    /// answers from the deepest completed iteration (the D7P `stop`). Polled
    /// every few thousand work units; without a flag nothing changes.
    pub fn set_stop(&mut self, flag: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>) {
        self.stop = flag;
        self.stop_answers = true;
    }

    /// Installs (or removes) a stop flag whose stopped decision the caller
    /// discards (Python's Ctrl-C): it stops as [`Self::set_stop`]'s does,
    /// but a decision that cannot be stopped otherwise still runs iteration
    /// D alone ([`Self::first_iteration`]), as without a flag.
    pub fn set_interrupt(&mut self, flag: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>) {
        self.stop = flag;
        self.stop_answers = false;
    }

    /// The configuration.
    pub fn config(&self) -> SearchConfig {
        self.config
    }

    /// The transposition table.
    pub fn table(&self) -> &T {
        &self.table
    }

    /// The first iteration of iterative deepening that a decision runs: 1,
    /// or D alone when no iteration can be cut short (no stop flag, a work
    /// budget above W(D,S); a flag of [`Self::set_interrupt`] is no
    /// obstacle, its stopped decision is discarded) and the table's
    /// counters are this crate's own
    /// (not [`Table::SPEC_COUNTERS`]: `sa:` and `dm:` tables). Iteration D
    /// then completes, and its values depend only on the root (the table
    /// holds exact values keyed by state and remaining depth), so the
    /// iterations before it cannot change the values, the action or the
    /// completed depth: they are skipped (about 3% of a d4s7 decision, 4%
    /// of a d5s7 one). The counters then count iteration D only.
    pub fn first_iteration(&self) -> u32 {
        let unbounded =
            self.config.max_work > worst_case_work(self.config.depth, self.config.strata);
        let answers_a_stop = self.stop.is_some() && self.stop_answers;
        if !T::SPEC_COUNTERS && !answers_a_stop && unbounded {
            self.config.depth
        } else {
            1
        }
    }

    /// Decides a position (search.md §4): canonicalise, iterative deepening
    /// 1..=D over a table emptied first, argmax of the last completed
    /// iteration (strict `>`, order 3,2,4,1,5,0,6, canonical orientation),
    /// reported in source orientation. A game-over root gives action `None`,
    /// depth 0, no values and zero counters (search.md §7). Where the
    /// shallower iterations cannot change the answer, only iteration D runs
    /// (see [`Self::first_iteration`]).
    pub fn decide(&mut self, source: &Position) -> Decision {
        self.decide_reporting(source, |_, _, _| {})
    }

    /// [`Self::decide`], calling `report(depth, values, work)` after each
    /// completed iteration (values in source orientation, `None` for an
    /// illegal column; work so far), e.g. for D7P `info depth` lines. Only
    /// iterations that run are reported: over an `sa:`/`dm:` table without
    /// a [`Self::set_stop`] flag and with a budget that cannot bind, that is
    /// iteration D alone ([`Self::first_iteration`]).
    pub fn decide_reporting(
        &mut self,
        source: &Position,
        mut report: impl FnMut(u32, &[Option<f64>; 7], u64),
    ) -> Decision {
        self.table.clear();
        self.stats = SearchStats::default();
        self.poll_at.set(self.next_poll());
        let mut decision = Decision::none();
        if source.game_over {
            return decision;
        }
        let mut root = *source;
        let mirrored = canonicalize(&mut root.board);
        self.root_settled = crate::cascade::is_settled(&root.board);
        let mut completed: Option<RootResult> = None;
        for d in self.first_iteration()..=self.config.depth {
            self.publish(Some(d));
            match self.root_iteration(&root, d) {
                Ok(Some(r)) => {
                    let mut shown = [None; 7];
                    for c in 0..7 {
                        shown[if mirrored { 6 - c } else { c }] = r.1[c];
                    }
                    report(d, &shown, self.stats.work);
                    completed = Some(r);
                    decision.completed_depth = d;
                }
                Ok(None) | Err(WorkLimitReached) => break,
            }
        }
        let unmirror = |c: usize| if mirrored { 6 - c } else { c };
        let action = match completed {
            Some((a, values, expected)) => {
                for c in 0..7 {
                    decision.values[unmirror(c)] = values[c];
                    decision.expected_scores[unmirror(c)] = expected[c];
                }
                Some(a)
            }
            None => crate::policy::center_first(&root.board),
        };
        decision.action = action.map(unmirror);
        self.stats.cache_entries = self.table.entries();
        self.stats.evictions = self.table.evictions();
        decision.stats = self.stats;
        decision
    }

    /// One root iteration at depth `d` in canonical orientation; `None` if no
    /// column is legal.
    fn root_iteration(&mut self, root: &Position, d: u32) -> Step<Option<RootResult>> {
        let mut values = [None; 7];
        let mut expected = [None; 7];
        let mut best = f64::NEG_INFINITY;
        let mut action = None;
        let seed = scenario_seed(&root.board, root.next_disc, root.moves_remaining, d);
        let discs = self.next_discs(seed);
        for c in COLUMN_ORDER {
            if !root.board.is_legal(c) {
                continue;
            }
            let (v, e) = self.chance::<PLAIN>(root, c, d, self.root_settled, seed, &discs)?;
            values[c] = Some(v);
            expected[c] = Some(e);
            if v > best {
                best = v;
                action = Some(c);
            }
        }
        Ok(action.map(|a| (a, values, expected)))
    }

    /// The S sampled next discs of a chance node with scenario seed `seed`.
    #[inline]
    fn next_discs(&self, seed: u32) -> [u8; MAX_STRATA as usize] {
        let mut discs = [0u8; MAX_STRATA as usize];
        for s in 0..self.config.strata {
            discs[s as usize] = stratified_disc(seed, s, self.config.strata, DISC_DOMAIN, 0);
        }
        discs
    }

    #[inline(always)]
    fn check_budget(&self) -> Step<()> {
        if self.stats.work >= self.poll_at.get() {
            self.check_budget_slow()
        } else {
            Ok(())
        }
    }

    /// The work cap, then the stop flag (if any).
    #[cold]
    fn check_budget_slow(&self) -> Step<()> {
        if self.stats.work >= self.config.max_work
            || self
                .stop
                .as_ref()
                .is_some_and(|f| f.load(std::sync::atomic::Ordering::Relaxed))
        {
            return Err(WorkLimitReached);
        }
        self.poll_at.set(self.next_poll());
        Ok(())
    }

    /// Where the next slow budget check happens: the cap, or sooner with a stop flag.
    fn next_poll(&self) -> u64 {
        match self.stop {
            None => self.config.max_work,
            Some(_) => self
                .config
                .max_work
                .min(self.stats.work.saturating_add(STOP_POLL_WORK)),
        }
    }

    /// Chance node `evaluateAction` (search.md §1.2): `(value, expected score)`.
    ///
    /// The move is played once up to its first reveal (search.md §3.2: the
    /// reveal draws are a move's only randomness). A move that draws no
    /// reveal value is the same move in every sample, so its afterstate is
    /// reused ([`Self::chance_shared`]); one that reveals is finished per
    /// sample from that prefix ([`Self::chance_paused`]). Every sample still
    /// counts its move, node and leaf, and the budget is checked at the same
    /// points, so values and counters are those of the sample-by-sample
    /// definition.
    #[inline(always)]
    fn chance<const B: u8>(
        &mut self,
        pos: &Position,
        column: usize,
        depth: u32,
        settled: bool,
        seed: u32,
        discs: &[u8; 32],
    ) -> Step<(f64, f64)> {
        // Sample 0's budget check (the loops check the others).
        self.check_budget()?;
        // Matched by reference: the prefix is read where `begin_move` left
        // it, not moved out (a memcpy of a few hundred bytes) first.
        match &begin_move_in::<B, G, ()>(self.gravity, pos, column, settled, &mut ()) {
            MoveStart::Done(child, m) => {
                let mut child = *child;
                canonicalize(&mut child.board);
                self.chance_shared::<B>(&child, m, depth, discs)
            }
            MoveStart::Paused(prefix) => self.chance_paused::<B>(prefix, depth, seed, discs),
        }
    }

    /// [`Self::chance`] of a move without reveals: canonical afterstate
    /// `after` and summary `m` in every sample. When the children are leaves,
    /// the leaf's next-disc-independent part is computed once too.
    #[inline(always)]
    fn chance_shared<const B: u8>(
        &mut self,
        after: &Position,
        m: &MoveSummary,
        depth: u32,
        discs: &[u8; 32],
    ) -> Step<(f64, f64)> {
        let strata = self.config.strata;
        let mut value = 0.0f64;
        let mut expected = 0.0f64;
        let sd = m.score_delta as f64;
        let mut shared_leaf: Option<L::Partial> = None;
        if T::ENABLED && depth >= 2 && !after.game_over {
            // The children differ only in their next disc: start loading
            // their table sets now, so that all but the first probe find
            // them in cache (values and counters are unchanged).
            for &disc in &discs[..strata as usize] {
                let mut child = *after;
                child.next_disc = disc;
                self.table.prefetch(&Key::new(&child, depth - 1));
            }
        }
        for s in 0..strata {
            if s > 0 {
                self.check_budget()?;
            }
            self.stats.work += 1;
            self.stats.move_calls += 1;
            expected += sd;
            if after.game_over {
                value += sd + TERMINAL_UTILITY;
                continue;
            }
            let mut child = *after;
            child.next_disc = discs[s as usize];
            let v = if depth == 1 {
                // The child is a max node at remaining depth 0: a leaf.
                self.enter_leaf()?;
                let partial = match shared_leaf {
                    Some(p) => p,
                    None => {
                        *shared_leaf.insert(self.leaf.partial_cached(&mut self.leaf_cache, &child))
                    }
                };
                let v = self.leaf.finish(&partial, child.next_disc);
                // The remaining samples play the same move into the same
                // afterstate: when no budget check among their 2 per sample
                // can fire (checks at work w, w+1, …, w+2r-1, all below the
                // poll point), finish them in one tight loop, adding in
                // sample order (same sums, bit for bit) and counting their
                // moves, nodes, leaves and work in bulk.
                let rest = strata - s - 1;
                if rest > 0 && self.stats.work + 2 * u64::from(rest) <= self.poll_at.get() {
                    value += sd + v;
                    for &disc in &discs[(s + 1) as usize..strata as usize] {
                        expected += sd;
                        value += sd + self.leaf.finish(&partial, disc);
                    }
                    let rest = u64::from(rest);
                    self.stats.work += 2 * rest;
                    self.stats.move_calls += rest;
                    self.stats.nodes += rest;
                    self.stats.leaf_calls += rest;
                    break;
                }
                v
            } else {
                self.child_max_node::<B>(&child, depth - 1)?
            };
            value += sd + v;
        }
        let n = f64::from(strata);
        Ok((value / n, expected / n))
    }

    /// Counts a leaf child of a chance node at depth 1 as the spec's max node
    /// at remaining depth 0 does: one node, the budget check, one work unit
    /// and one leaf call (search.md §1.3).
    #[inline(always)]
    fn enter_leaf(&mut self) -> Step<()> {
        self.stats.nodes += 1;
        self.check_budget()?;
        self.stats.work += 1;
        self.stats.leaf_calls += 1;
        Ok(())
    }

    /// [`Self::chance`] of a move that reveals: each sample finishes the
    /// move from `prefix` with its own reveal draws. Above the leaves, each
    /// sample's child is made one sample ahead and its table set
    /// prefetched, so that its probe finds it in cache; the counters and the
    /// budget checks keep the sample-by-sample order.
    #[inline(always)]
    fn chance_paused<const B: u8>(
        &mut self,
        prefix: &MovePrefix,
        depth: u32,
        seed: u32,
        discs: &[u8; 32],
    ) -> Step<(f64, f64)> {
        let strata = self.config.strata;
        let mut value = 0.0f64;
        let mut expected = 0.0f64;
        let rotations = RevealRotations::new(seed, strata);
        if T::ENABLED && depth >= 2 {
            let mut next = self.paused_sample::<B>(prefix, seed, rotations, 0, discs);
            for s in 0..strata {
                if s > 0 {
                    self.check_budget()?;
                }
                let (child, m) = next;
                if s + 1 < strata {
                    next = self.paused_sample::<B>(prefix, seed, rotations, s + 1, discs);
                    if !next.0.game_over {
                        self.table.prefetch(&Key::new(&next.0, depth - 1));
                    }
                }
                self.paused_child::<B>(&child, &m, depth, &mut value, &mut expected)?;
            }
        } else {
            for s in 0..strata {
                if s > 0 {
                    self.check_budget()?;
                }
                let (child, m) = self.paused_sample::<B>(prefix, seed, rotations, s, discs);
                self.paused_child::<B>(&child, &m, depth, &mut value, &mut expected)?;
            }
        }
        let n = f64::from(strata);
        Ok((value / n, expected / n))
    }

    /// One sample of [`Self::chance_paused`]: counts its move, then adds its
    /// score delta to `expected` and its score delta plus the child's value
    /// (a leaf at depth 1, else a max node) to `value`.
    #[inline(always)]
    fn paused_child<const B: u8>(
        &mut self,
        child: &Position,
        m: &MoveSummary,
        depth: u32,
        value: &mut f64,
        expected: &mut f64,
    ) -> Step<()> {
        self.stats.work += 1;
        self.stats.move_calls += 1;
        let sd = m.score_delta as f64;
        *expected += sd;
        if child.game_over {
            *value += sd + TERMINAL_UTILITY;
            return Ok(());
        }
        let v = if depth == 1 {
            self.enter_leaf()?;
            let partial = self.leaf.partial_cached(&mut self.leaf_cache, child);
            self.leaf.finish(&partial, child.next_disc)
        } else {
            self.child_max_node::<B>(child, depth - 1)?
        };
        *value += sd + v;
        Ok(())
    }

    /// Sample `s` of a revealing chance node: the move finished from
    /// `prefix` with the sample's reveal draws (the node's first reveal
    /// events' `rotations` shared by its samples), canonicalised, with the
    /// sample's next disc (ignored when the move ended the game).
    #[inline(always)]
    fn paused_sample<const B: u8>(
        &self,
        prefix: &MovePrefix,
        seed: u32,
        rotations: RevealRotations,
        s: u32,
        discs: &[u8; 32],
    ) -> (Position, MoveSummary) {
        let strata = self.config.strata;
        let mut rng = StratifiedDraws::with_rotations(seed, s, strata, rotations);
        let (mut child, m) =
            finish_move_inline::<B, G, _, ()>(self.gravity, prefix, &mut rng, &mut ());
        canonicalize(&mut child.board);
        child.next_disc = discs[s as usize];
        (child, m)
    }

    /// The leaf, table, gravity path and configuration.
    pub(crate) fn into_parts(self) -> (L, T, G, SearchConfig) {
        (self.leaf, self.table, self.gravity, self.config)
    }

    /// Prepares a root split by [`crate::parallel`]: empties the table (if
    /// `clear_table`; the workers share one) and the counters, records
    /// whether the canonical root is settled, rearms the stop-flag poll.
    pub(crate) fn begin_split(&mut self, canonical_root: &Position, clear_table: bool) {
        if clear_table {
            self.table.clear();
        }
        self.stats = SearchStats::default();
        self.poll_at.set(self.next_poll());
        self.root_settled = crate::cascade::is_settled(&canonical_root.board);
    }

    /// The work counted so far in this decision (search.md §5).
    pub(crate) fn work(&self) -> u64 {
        self.stats.work
    }

    /// The counters so far, with the table's entries and evictions.
    pub(crate) fn split_stats(&self) -> SearchStats {
        let mut s = self.stats;
        s.cache_entries = self.table.entries();
        s.evictions = self.table.evictions();
        s
    }

    /// Sample `s` of the root chance node of `column` at iteration depth
    /// `depth` on the canonical `root`: `(score delta, score delta + child
    /// value)`, the two terms [`Self::chance`] adds for that sample (the
    /// child's value is the terminal utility if the move ends the game).
    /// Counts one move, and the child's node, leaf and work as `chance` does.
    pub(crate) fn root_sample(
        &mut self,
        root: &Position,
        column: usize,
        depth: u32,
        s: u32,
    ) -> Step<(f64, f64)> {
        let strata = self.config.strata;
        let seed = scenario_seed(&root.board, root.next_disc, root.moves_remaining, depth);
        let mut child = *root;
        let mut rng = StratifiedDraws::new(seed, s, strata);
        let m = apply_move(
            self.gravity,
            &mut child,
            column,
            self.root_settled,
            &mut rng,
            &mut (),
        );
        canonicalize(&mut child.board);
        self.stats.work += 1;
        self.stats.move_calls += 1;
        let sd = m.score_delta as f64;
        if child.game_over {
            return Ok((sd, sd + TERMINAL_UTILITY));
        }
        child.next_disc = stratified_disc(seed, s, strata, DISC_DOMAIN, 0);
        let v = if depth == 1 {
            self.stats.nodes += 1;
            self.stats.work += 1;
            self.stats.leaf_calls += 1;
            self.leaf.evaluate(&child)
        } else {
            self.max_node(&child, depth - 1)?
        };
        Ok((sd, sd + v))
    }

    /// A child max node of a chance node in the copy `B` of the recursion:
    /// the same copy (a built one is entered only where its instructions
    /// were detected), or the run-time choice below a [`PLAIN`] one (the
    /// root's chance nodes).
    #[inline(always)]
    fn child_max_node<const B: u8>(&mut self, pos: &Position, depth: u32) -> Step<f64> {
        let copy = if B == PLAIN { self.build } else { B };
        self.max_node_in(copy, pos, depth)
    }

    /// Max node `bestFutureValue` (search.md §1.3), in the copy of the
    /// recursion for this CPU: the recursion (max nodes, chance nodes and
    /// the moves inlined into them) runs as code built for the gravity
    /// path's bit instructions (as the whole-game loop does, see
    /// [`crate::runner::play_moves`]) where the CPU has them. Integer work
    /// only, so values and counters are the same.
    #[inline]
    fn max_node(&mut self, pos: &Position, depth: u32) -> Step<f64> {
        self.max_node_in(self.build, pos, depth)
    }

    /// Max node in the copy `copy` of the recursion: `self.build`, or the
    /// `B` of a built copy already running (so the CPU has its instructions).
    #[inline(always)]
    fn max_node_in(&mut self, copy: u8, pos: &Position, depth: u32) -> Step<f64> {
        #[cfg(target_arch = "x86_64")]
        match copy {
            // SAFETY: `copy` is ALL_BITS only where the CPU has POPCNT,
            // BMI1, BMI2 and LZCNT (`detected_copy` set `build`, or a copy
            // entered that way is running).
            ALL_BITS => return unsafe { self.max_node_all_bits(pos, depth) },
            // SAFETY: likewise for POPCNT and LZCNT.
            COUNT_BITS => return unsafe { self.max_node_count_bits(pos, depth) },
            _ => {}
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = copy; // (only x86-64 has built copies)
        self.max_node_plain(pos, depth)
    }

    /// [`Self::max_node_body`] as baseline code.
    #[inline(never)]
    fn max_node_plain(&mut self, pos: &Position, depth: u32) -> Step<f64> {
        self.max_node_body::<PLAIN>(pos, depth)
    }

    /// [`Self::max_node_body`] built for POPCNT, BMI1, BMI2 and LZCNT.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt,bmi1,bmi2,lzcnt")]
    #[inline(never)]
    fn max_node_all_bits(&mut self, pos: &Position, depth: u32) -> Step<f64> {
        self.max_node_body::<ALL_BITS>(pos, depth)
    }

    /// [`Self::max_node_body`] built for POPCNT and LZCNT.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt,lzcnt")]
    #[inline(never)]
    fn max_node_count_bits(&mut self, pos: &Position, depth: u32) -> Step<f64> {
        self.max_node_body::<COUNT_BITS>(pos, depth)
    }

    /// Max node `bestFutureValue` (search.md §1.3) in the copy `B`.
    /// Leaves (remaining depth 0) are evaluated inline by [`Self::chance`].
    #[inline(always)]
    fn max_node_body<const B: u8>(&mut self, pos: &Position, depth: u32) -> Step<f64> {
        debug_assert!(depth >= 1);
        self.stats.nodes += 1;
        self.check_budget()?;
        let key = Key::new(pos, depth);
        if T::ENABLED
            && let Some(v) = self.table.probe(&key)
        {
            self.stats.cache_hits += 1;
            return Ok(v);
        }
        if depth >= 2 {
            self.publish(None);
        }
        let seed = scenario_seed(&pos.board, pos.next_disc, pos.moves_remaining, depth);
        let discs = self.next_discs(seed);
        let mut best = f64::NEG_INFINITY;
        for c in COLUMN_ORDER {
            if pos.board.is_legal(c) {
                let (v, _) = self.chance::<B>(pos, c, depth, true, seed, &discs)?;
                if v > best {
                    best = v;
                }
            }
        }
        if !best.is_finite() {
            best = TERMINAL_UTILITY;
        }
        if T::ENABLED {
            self.table.store(&key, best);
        }
        Ok(best)
    }
}

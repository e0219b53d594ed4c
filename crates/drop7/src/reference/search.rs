//! The plain reference fair expectimax search (search.md §0–§8): the in-process
//! oracle for the fast search in [`crate::search`].
//!
//! A direct transliteration of the frozen C++ (`chooseDepth4Action` /
//! `SlowSearch`), written for obviousness rather than speed:
//!
//! * states are [`RefState`]s (49 row-major cell bytes, row 0 = top) played by
//!   the plain engine [`RefState::play`] (= `playMoveSampled`);
//! * leaves are the plain [`fair_leaf`];
//! * the transposition table is a strict LRU built from a `HashMap` (key →
//!   value and recency stamp) plus a `BTreeMap` (stamp → key) that orders the
//!   entries from least to most recently used (§6);
//! * the work cap is a `Result` error (`WorkLimitReached`) that unwinds the
//!   current iterative-deepening iteration, as the C++ `throw` does (§4, §5).
//!
//! Every floating-point expression keeps the spec's order (§8): a chance node
//! sums `value = value + (sd + child)` over its samples and divides by `S`.
//!
//! ```
//! use drop7::board::parse_cells;
//! use drop7::reference::search::ReferenceSearch;
//! use drop7::search::SearchConfig;
//! let cells = parse_cells("0000000000000000000000000000000000000440308888888").unwrap();
//! let mut search = ReferenceSearch::new(SearchConfig::new(1, 5), 40_000);
//! let decision = search.decide(&cells, 2, 2, false);
//! assert_eq!(decision.action, Some(3));
//! assert_eq!(decision.completed_depth, 1);
//! assert_eq!(decision.stats.work, 70);
//! ```

use std::collections::{BTreeMap, HashMap};

use crate::board::{CELLS, Cells, SIZE};
use crate::policy::COLUMN_ORDER;
use crate::reference::engine::RefState;
use crate::reference::leaf::fair_leaf;
use crate::search::{Decision, SearchConfig, SearchStats, TERMINAL_UTILITY};
use crate::strata::{StratifiedRandom, sampled_next_disc, scenario_seed_cells};

/// The horizontal mirror of row-major cells: every row reversed (search.md §3.5).
pub fn mirror_cells(cells: &Cells) -> Cells {
    let mut mirrored = [0u8; CELLS];
    for row in 0..SIZE {
        for column in 0..SIZE {
            mirrored[row * SIZE + column] = cells[row * SIZE + (SIZE - 1 - column)];
        }
    }
    mirrored
}

/// `canonicalState` on the board alone (search.md §3.5): returns the mirror and
/// `true` iff the mirror is lexicographically smaller than `cells` over the 49
/// row-major bytes, else `cells` unchanged and `false` (symmetric boards are
/// not mirrored).
pub fn canonical_cells(cells: &Cells) -> (Cells, bool) {
    let mirrored = mirror_cells(cells);
    if mirrored < *cells {
        (mirrored, true)
    } else {
        (*cells, false)
    }
}

/// `canonicalState(s)`: the canonical board, score zeroed, everything else kept.
fn canonical_state(state: &RefState) -> RefState {
    let (board, _) = canonical_cells(&state.board);
    RefState {
        board,
        score: 0,
        ..*state
    }
}

/// A column is legal iff its top cell (row 0) is empty (search.md §1).
fn is_legal(cells: &Cells, column: usize) -> bool {
    cells[column] == 0
}

/// The work cap fired (`checkBudget` threw, search.md §5): the current
/// iteration is abandoned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct WorkLimitReached;

/// The result of search code that may hit the work cap.
type Searched<T> = Result<T, WorkLimitReached>;

/// `dynamicStateKey(state, depth)` (search.md §6): canonical cells, next disc,
/// moves remaining and remaining depth.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct StateKey {
    cells: Cells,
    next_disc: u8,
    moves_remaining: u8,
    depth: u32,
}

impl StateKey {
    fn new(state: &RefState, depth: u32) -> StateKey {
        StateKey {
            cells: state.board,
            next_disc: state.next_disc,
            moves_remaining: state.moves_remaining,
            depth,
        }
    }
}

/// The frozen reference's strict-LRU table with hard capacity `capacity >= 1`
/// (search.md §6). Every entry carries a unique recency stamp from a counter
/// that only grows; `by_recency` maps stamps back to keys, so its first entry
/// is the least recently used one.
struct LruTable {
    capacity: usize,
    entries: HashMap<StateKey, (f64, u64)>,
    by_recency: BTreeMap<u64, StateKey>,
    clock: u64,
    evictions: u64,
}

impl LruTable {
    fn new(capacity: usize) -> LruTable {
        assert!(capacity > 0, "capacity 0 means no table at all");
        LruTable {
            capacity,
            entries: HashMap::new(),
            by_recency: BTreeMap::new(),
            clock: 0,
            evictions: 0,
        }
    }

    fn len(&self) -> usize {
        self.entries.len()
    }

    fn next_stamp(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// A lookup: on a hit the entry becomes the most recently used.
    fn get(&mut self, key: &StateKey) -> Option<f64> {
        let (value, old_stamp) = *self.entries.get(key)?;
        let stamp = self.next_stamp();
        self.by_recency.remove(&old_stamp);
        self.by_recency.insert(stamp, *key);
        self.entries.insert(*key, (value, stamp));
        Some(value)
    }

    /// `cacheValue(key, value)`: erase an existing entry for `key`; then, while
    /// the table is full, evict the least recently used entry; then insert
    /// `key` as the most recently used.
    fn insert(&mut self, key: StateKey, value: f64) {
        if let Some((_, old_stamp)) = self.entries.remove(&key) {
            self.by_recency.remove(&old_stamp);
        }
        while self.len() >= self.capacity {
            let (_, oldest) = self
                .by_recency
                .pop_first()
                .expect("a full table has entries");
            self.entries.remove(&oldest);
            self.evictions += 1;
        }
        let stamp = self.next_stamp();
        self.by_recency.insert(stamp, key);
        self.entries.insert(key, (value, stamp));
    }
}

/// One chance node's result (search.md §1.2).
#[derive(Clone, Copy, Debug)]
struct ChanceValue {
    /// `Σ (sd + child) / S`, the node's value.
    value: f64,
    /// `Σ sd / S` over the played samples (diagnostic, root only).
    expected_score: f64,
}

/// One root iteration's result (`rootDecision`, search.md §1.1), canonical
/// orientation.
struct RootResult {
    /// Strict-`>` argmax in column order 3,2,4,1,5,0,6; `None` if no column is legal.
    action: Option<usize>,
    values: [Option<f64>; 7],
    expected_scores: [Option<f64>; 7],
}

/// The state of one decision: the table and the counters are shared by all
/// iterative-deepening iterations and start empty (search.md §4).
struct Context {
    strata: u32,
    max_work: u64,
    /// `None` when the capacity is 0 (no table at all, search.md §6).
    table: Option<LruTable>,
    stats: SearchStats,
}

impl Context {
    /// `checkBudget()`: throw iff `work >= max_work` (search.md §5).
    fn check_budget(&self) -> Searched<()> {
        if self.stats.work >= self.max_work {
            Err(WorkLimitReached)
        } else {
            Ok(())
        }
    }

    /// `rootDecision(canonical, depth)` (search.md §1.1): not a node, never cached.
    fn root_decision(&mut self, canonical: &RefState, depth: u32) -> Searched<RootResult> {
        let mut result = RootResult {
            action: None,
            values: [None; 7],
            expected_scores: [None; 7],
        };
        let mut best = f64::NEG_INFINITY;
        for column in COLUMN_ORDER {
            if !is_legal(&canonical.board, column) {
                continue;
            }
            let chance = self.evaluate_action(canonical, column, depth)?;
            result.values[column] = Some(chance.value);
            result.expected_scores[column] = Some(chance.expected_score);
            if chance.value > best {
                best = chance.value;
                result.action = Some(column);
            }
        }
        Ok(result)
    }

    /// `evaluateAction(state, column, depth)` (search.md §1.2), `depth >= 1`,
    /// `state` canonical: plays `column` once per stratum and averages
    /// `score_delta + bestFutureValue(child, depth - 1)`.
    fn evaluate_action(
        &mut self,
        state: &RefState,
        column: usize,
        depth: u32,
    ) -> Searched<ChanceValue> {
        let strata = self.strata;
        let seed = scenario_seed_cells(&state.board, state.next_disc, state.moves_remaining, depth);
        let mut value = 0.0f64;
        let mut expected_score = 0.0f64;
        for sample in 0..strata {
            self.check_budget()?;
            let mut rng = StratifiedRandom::new(seed, sample, strata);
            let mut child = *state;
            let played = child.play(column, &mut rng);
            self.stats.work += 1;
            self.stats.move_calls += 1;
            let Ok(step) = played else {
                // Unreachable: only legal columns are evaluated.
                value += TERMINAL_UTILITY;
                continue;
            };
            let sd = step.score_delta as f64;
            expected_score += sd;
            if child.game_over {
                value += sd + TERMINAL_UTILITY;
                continue;
            }
            child.score = 0;
            // The engine's own end-of-move draw is replaced (search.md §2, §14.1).
            child.next_disc = sampled_next_disc(seed, sample, strata);
            let child = canonical_state(&child);
            // `value = value + (sd + child)` (§8): the right side is summed first.
            value += sd + self.best_future_value(&child, depth - 1)?;
        }
        let s = f64::from(strata);
        Ok(ChanceValue {
            value: value / s,
            expected_score: expected_score / s,
        })
    }

    /// `bestFutureValue(state, depth)` (search.md §1.3), `state` canonical: a
    /// max node over the legal columns, a leaf at remaining depth 0.
    fn best_future_value(&mut self, state: &RefState, depth: u32) -> Searched<f64> {
        self.stats.nodes += 1;
        self.check_budget()?;
        if state.game_over {
            return Ok(TERMINAL_UTILITY);
        }
        if depth == 0 {
            return self.evaluate_leaf(state);
        }
        let key = StateKey::new(state, depth);
        if let Some(value) = self.table.as_mut().and_then(|table| table.get(&key)) {
            self.stats.cache_hits += 1;
            return Ok(value);
        }
        let mut best = f64::NEG_INFINITY;
        for column in COLUMN_ORDER {
            if is_legal(&state.board, column) {
                let v = self.evaluate_action(state, column, depth)?.value;
                if v > best {
                    best = v;
                }
            }
        }
        if !best.is_finite() {
            best = TERMINAL_UTILITY;
        }
        if let Some(table) = self.table.as_mut() {
            table.insert(key, best);
        }
        Ok(best)
    }

    /// `evaluateLeaf(state)`: budget check, one unit of work, fairLeaf (§1.4, §9).
    fn evaluate_leaf(&mut self, state: &RefState) -> Searched<f64> {
        self.check_budget()?;
        self.stats.work += 1;
        self.stats.leaf_calls += 1;
        Ok(fair_leaf(
            &state.board,
            state.next_disc,
            state.moves_remaining,
            state.game_over,
        ))
    }
}

/// The plain reference fair expectimax player (search.md): a [`SearchConfig`]
/// (depth D, strata S, work cap) plus the strict-LRU table capacity C
/// (`0` = no table, §6). Each [`decide`](ReferenceSearch::decide) starts from
/// an empty table and zero counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReferenceSearch {
    config: SearchConfig,
    lru_capacity: usize,
}

impl ReferenceSearch {
    /// A search with `config` and an LRU table of `lru_capacity` entries
    /// (`0` = no table at all: every node is expanded; search.md §6).
    pub fn new(config: SearchConfig, lru_capacity: usize) -> Self {
        ReferenceSearch {
            config,
            lru_capacity,
        }
    }

    /// The configuration.
    pub fn config(&self) -> SearchConfig {
        self.config
    }

    /// The LRU capacity (`0` = no table).
    pub fn lru_capacity(&self) -> usize {
        self.lru_capacity
    }

    /// One decision (search.md §4) for the root given in SOURCE orientation:
    /// `cells` row-major (row 0 = top), `next_disc` 1..=7, `moves_remaining`
    /// 1..=5, `game_over`. Score, level and moves played do not influence the
    /// search (§2) and are not taken.
    ///
    /// The root is canonicalised, iterative deepening runs depths 1..=D over
    /// one shared table, and the last completed iteration's action, values and
    /// expected scores are returned un-mirrored (indexed by source column,
    /// `None` for illegal columns). If no iteration completes the action is
    /// the first legal column of 3,2,4,1,5,0,6 on the canonical board,
    /// un-mirrored, and values are `None`. A game-over root returns action
    /// `None`, completed depth 0, zero counters and `None` values (§7).
    pub fn decide(
        &mut self,
        cells: &Cells,
        next_disc: u8,
        moves_remaining: u8,
        game_over: bool,
    ) -> Decision {
        let mut decision = Decision::none();
        if game_over {
            return decision;
        }
        let (board, mirrored) = canonical_cells(cells);
        let canonical = RefState {
            board,
            next_disc,
            moves_remaining,
            level: 1,
            score: 0,
            moves_played: 0,
            game_over: false,
        };
        let mut context = Context {
            strata: self.config.strata,
            max_work: self.config.max_work,
            table: (self.lru_capacity > 0).then(|| LruTable::new(self.lru_capacity)),
            stats: SearchStats::default(),
        };

        let mut completed: Option<RootResult> = None;
        for depth in 1..=self.config.depth {
            match context.root_decision(&canonical, depth) {
                Ok(result) if result.action.is_some() => {
                    completed = Some(result);
                    decision.completed_depth = depth;
                }
                // No legal column, or the work cap fired: stop deepening.
                Ok(_) | Err(WorkLimitReached) => break,
            }
        }

        let to_source = |column: usize| if mirrored { SIZE - 1 - column } else { column };
        let canonical_action = match &completed {
            Some(result) => result.action,
            None => COLUMN_ORDER
                .into_iter()
                .find(|&c| is_legal(&canonical.board, c)),
        };
        decision.action = canonical_action.map(to_source);
        if let Some(result) = &completed {
            for column in 0..SIZE {
                decision.values[to_source(column)] = result.values[column];
                decision.expected_scores[to_source(column)] = result.expected_scores[column];
            }
        }
        let mut stats = context.stats;
        if let Some(table) = &context.table {
            stats.cache_entries = table.len() as u64;
            stats.evictions = table.evictions;
        }
        decision.stats = stats;
        decision
    }
}

impl crate::search::Decide for ReferenceSearch {
    fn decide_position(&mut self, pos: &crate::position::Position) -> Decision {
        self.decide(
            &pos.board.to_cells(),
            pos.next_disc,
            pos.moves_remaining,
            pos.game_over,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mirror_is_an_involution_and_canonical_is_minimal() {
        // A 3 at the left end of row 5, gray bottom row: the mirror puts it at
        // the right end, which compares smaller (index 35 becomes 0).
        let cells: Cells = std::array::from_fn(|i| {
            if i >= 42 {
                8
            } else if i == 35 {
                3
            } else {
                0
            }
        });
        let (canonical, mirrored) = canonical_cells(&cells);
        assert!(mirrored);
        assert_eq!(mirror_cells(&canonical), cells);
        assert!(canonical < cells);
        assert_eq!(canonical_cells(&canonical), (canonical, false));
    }

    #[test]
    fn lru_evicts_least_recently_used() {
        let key = |d: u32| StateKey {
            cells: [0; CELLS],
            next_disc: 1,
            moves_remaining: 5,
            depth: d,
        };
        let mut t = LruTable::new(2);
        t.insert(key(1), 1.0);
        t.insert(key(2), 2.0);
        assert_eq!(t.get(&key(1)), Some(1.0));
        t.insert(key(3), 3.0);
        assert_eq!(t.get(&key(2)), None);
        assert_eq!(t.get(&key(1)), Some(1.0));
        assert_eq!(t.get(&key(3)), Some(3.0));
        assert_eq!((t.len(), t.evictions), (2, 1));
    }

    #[test]
    fn game_over_root_is_empty() {
        let mut search = ReferenceSearch::new(SearchConfig::new(2, 5), 100);
        let d = search.decide(&[0; CELLS], 1, 5, true);
        assert_eq!(d.action, None);
        assert_eq!(d.completed_depth, 0);
        assert_eq!(d.stats, SearchStats::default());
        assert_eq!(d.values, [None; 7]);
    }
}

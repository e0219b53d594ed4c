//! One fair-search decision on several threads: a root split with the values,
//! action and completed depth of one thread (spec: search.md §1, §4).
//!
//! The root chance node of column `c` at iteration depth `d` is the mean of
//! its `S` samples, `(Σ_s (δ_s + v_s)) / S` summed in sample order. Every
//! `(d, c, s)` triple is an independent task (its value depends only on the
//! canonical root, never on a table), so [`ParallelSearch`] hands the tasks
//! to its workers, each taking the next task when it finishes one, and then
//! adds the samples in the one-thread order: the values are bit-identical to
//! [`FairSearch`]'s. The iterations run one after the other, as on one
//! thread; within one, the costliest tasks go first, as the iteration one
//! shallower measured the same column and sample, so the tasks that end an
//! iteration are short and the workers finish together. Where one thread
//! runs iteration D alone ([`FairSearch::first_iteration`]), the split runs
//! D − 1 too, unreported, only to order D's tasks.
//!
//! The workers share one transposition table ([`SharedTable`]: the
//! configured table behind a mutex, prefetched without it; only interior
//! max nodes probe it, a few percent of the nodes, so the lock is cheap). `work`, `nodes`, `cacheHits`,
//! `leafCalls` and `moveCalls` are summed over the workers; `cacheEntries` and
//! `evictions` are the shared table's. With no table (`none`) the counters are
//! one thread's exactly. With a table they differ from one thread's and from
//! run to run: the order in which the workers store and hit entries decides
//! which subtrees are found in the table (the iterations overlap, and a
//! worker may expand a node another worker is still computing), so hits are
//! typically somewhat fewer and work somewhat higher than one thread's.
//!
//! A work budget that can bind (`max_work ≤ W(D,S)`) makes iteration
//! completion depend on the order of work, so such a decision, like a
//! one-thread searcher, runs on one thread with the one-thread counters.
//!
//! ```
//! use drop7::gravity::Portable;
//! use drop7::leaf::FairLeaf;
//! use drop7::parallel::ParallelSearch;
//! use drop7::position::Position;
//! use drop7::search::{FairSearch, SearchConfig};
//! use drop7::table::NoTable;
//! let one = FairSearch::new(FairLeaf, NoTable, Portable, SearchConfig::new(2, 3));
//! let mut two = ParallelSearch::new(one.clone(), 2);
//! let mut one = one;
//! let root = Position::initial(4);
//! let (a, b) = (one.decide(&root), two.decide(&root));
//! assert_eq!((a.action, a.completed_depth), (b.action, b.completed_depth));
//! assert_eq!(a.values.map(|v| v.map(f64::to_bits)), b.values.map(|v| v.map(f64::to_bits)));
//! assert_eq!(a.stats.work, b.stats.work); // no table: the same counters
//! ```

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::gravity::Gravity;
use crate::leaf::Leaf;
use crate::policy::COLUMN_ORDER;
use crate::position::Position;
use crate::runner::Policy;
use crate::search::{
    Decide, Decision, FairSearch, SearchConfig, SearchStats, Step, canonicalize, worst_case_work,
};
use crate::table::{Key, Prefetcher, Table};

/// Most threads one decision may use.
pub const MAX_SEARCH_THREADS: usize = 256;

/// A fair search that splits each decision over `threads` workers (module docs).
#[derive(Debug)]
pub struct ParallelSearch<L: Leaf, T: Table, G: Gravity> {
    searchers: Searchers<L, T, G>,
    /// Counters of the last decision played as a [`Policy`].
    last: crate::search::SearchStats,
}

/// The searchers of a [`ParallelSearch`].
#[derive(Debug)]
enum Searchers<L: Leaf, T: Table, G: Gravity> {
    /// One thread: the search over its own table (no lock around each probe
    /// and store).
    Solo(FairSearch<L, T, G>),
    /// Two or more workers sharing one table.
    Split(Vec<FairSearch<L, SharedTable<T>, G>>),
}

/// A table shared by the workers of one [`ParallelSearch`]: `T` behind a
/// mutex (a poisoned lock is taken over: entries are exact values or absent).
/// Prefetches go without the lock, through the table's [`Prefetcher`] taken
/// at construction (the table is never reallocated).
#[derive(Debug)]
pub struct SharedTable<T> {
    table: Arc<Mutex<T>>,
    prefetcher: Prefetcher,
}

impl<T: Table> SharedTable<T> {
    /// Shares `table`.
    pub fn new(table: T) -> Self {
        let prefetcher = table.prefetcher();
        SharedTable {
            table: Arc::new(Mutex::new(table)),
            prefetcher,
        }
    }
}

impl<T> SharedTable<T> {
    #[inline]
    fn lock(&self) -> MutexGuard<'_, T> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Another handle on the same table.
impl<T> Clone for SharedTable<T> {
    fn clone(&self) -> Self {
        SharedTable {
            table: Arc::clone(&self.table),
            prefetcher: self.prefetcher,
        }
    }
}

impl<T: Table> Table for SharedTable<T> {
    const ENABLED: bool = T::ENABLED;
    const SPEC_COUNTERS: bool = T::SPEC_COUNTERS;
    fn clear(&mut self) {
        self.lock().clear();
    }
    #[inline]
    fn probe(&mut self, key: &Key) -> Option<f64> {
        self.lock().probe(key)
    }
    #[inline]
    fn store(&mut self, key: &Key, value: f64) {
        self.lock().store(key, value);
    }
    fn prefetcher(&self) -> Prefetcher {
        self.prefetcher
    }
    fn entries(&self) -> u64 {
        self.lock().entries()
    }
    fn evictions(&self) -> u64 {
        self.lock().evictions()
    }
    fn memory_bytes(&self) -> usize {
        self.lock().memory_bytes()
    }
}

/// Action, per-column values and expected scores of a completed iteration.
type RootResult = (usize, [Option<f64>; 7], [Option<f64>; 7]);

/// One root task: iteration depth, column, sample.
type Task = (u32, usize, u32);

/// A finished task: its index, `(score delta, score delta + child value)`
/// or the stop, and the work it took.
type Done = (usize, Step<(f64, f64)>, u64);

impl<L, T, G> ParallelSearch<L, T, G>
where
    L: Leaf + Clone + Send,
    T: Table + Send,
    G: Gravity,
{
    /// `threads` workers (clamped to 1..=[`MAX_SEARCH_THREADS`]) searching
    /// like `search`, sharing its table. Without the `threads` feature the
    /// tasks run on the calling thread (same results).
    pub fn new(search: FairSearch<L, T, G>, threads: usize) -> Self {
        let threads = threads.clamp(1, MAX_SEARCH_THREADS);
        let searchers = if threads == 1 {
            Searchers::Solo(search)
        } else {
            let (leaf, table, gravity, config) = search.into_parts();
            let table = SharedTable::new(table);
            Searchers::Split(
                (0..threads)
                    .map(|_| FairSearch::new(leaf.clone(), table.clone(), gravity, config))
                    .collect(),
            )
        };
        ParallelSearch {
            searchers,
            last: crate::search::SearchStats::default(),
        }
    }

    /// Worker count.
    pub fn threads(&self) -> usize {
        match &self.searchers {
            Searchers::Solo(_) => 1,
            Searchers::Split(workers) => workers.len(),
        }
    }

    /// The search configuration.
    pub fn config(&self) -> SearchConfig {
        match &self.searchers {
            Searchers::Solo(s) => s.config(),
            Searchers::Split(workers) => workers[0].config(),
        }
    }

    /// Installs (or removes) a stop flag on every worker (see
    /// [`FairSearch::set_stop`]): once it is set, the running decision
    /// answers from its deepest completed iteration.
    pub fn set_stop(&mut self, flag: Option<Arc<std::sync::atomic::AtomicBool>>) {
        match &mut self.searchers {
            Searchers::Solo(s) => s.set_stop(flag),
            Searchers::Split(workers) => {
                for w in workers {
                    w.set_stop(flag.clone());
                }
            }
        }
    }

    /// Installs (or removes) an interrupt flag on every worker (see
    /// [`FairSearch::set_interrupt`]): it stops the running decision, whose
    /// answer the caller discards.
    pub fn set_interrupt(&mut self, flag: Option<Arc<std::sync::atomic::AtomicBool>>) {
        match &mut self.searchers {
            Searchers::Solo(s) => s.set_interrupt(flag),
            Searchers::Split(workers) => {
                for w in workers {
                    w.set_interrupt(flag.clone());
                }
            }
        }
    }

    /// Decides `source` like [`FairSearch::decide`]: the same action,
    /// completed depth, values and expected scores bit for bit; counters as
    /// in the module docs.
    pub fn decide(&mut self, source: &Position) -> Decision {
        self.decide_reporting(source, |_, _, _| {})
    }

    /// [`Self::decide`], calling `report(depth, values, work)` after each
    /// completed iteration, like [`FairSearch::decide_reporting`] (values in
    /// source orientation, `None` for an illegal column; work summed over
    /// the workers). The iteration D − 1 that a split runs only to order
    /// D's tasks is not reported.
    pub fn decide_reporting(
        &mut self,
        source: &Position,
        mut report: impl FnMut(u32, &[Option<f64>; 7], u64),
    ) -> Decision {
        let workers = match &mut self.searchers {
            Searchers::Solo(s) => return s.decide_reporting(source, report),
            Searchers::Split(workers) => workers,
        };
        let config = workers[0].config();
        if source.game_over || config.max_work <= worst_case_work(config.depth, config.strata) {
            return workers[0].decide_reporting(source, report);
        }
        let mut root = *source;
        let mirrored = canonicalize(&mut root.board);
        let columns: Vec<usize> = COLUMN_ORDER
            .into_iter()
            .filter(|&c| root.board.is_legal(c))
            .collect();
        if columns.is_empty() {
            return workers[0].decide_reporting(source, report);
        }
        let strata = config.strata;
        // Task i = (d, c, s), indexed deepest iteration first: those of
        // depth d start at (depth - d) * per_depth, and task i + per_depth
        // is the same column and sample one iteration shallower.
        let tasks: Vec<Task> = (1..=config.depth)
            .rev()
            .flat_map(|d| {
                columns
                    .iter()
                    .flat_map(move |&c| (0..strata).map(move |s| (d, c, s)))
            })
            .collect();
        let per_depth = columns.len() * strata as usize;
        for (k, w) in workers.iter_mut().enumerate() {
            w.begin_split(&root, k == 0);
        }
        let mut results = vec![None; tasks.len()];
        let mut work = vec![0u64; tasks.len()];
        let unmirror = |c: usize| if mirrored { 6 - c } else { c };
        let mut decision = Decision::none();
        let mut completed: Option<RootResult> = None;
        // Adds the samples of iteration d in the one-thread order; `None`
        // if one of its tasks did not finish.
        let assemble = |results: &[Option<Step<(f64, f64)>>], d: u32| -> Option<RootResult> {
            let base = (config.depth - d) as usize * per_depth;
            let n = f64::from(strata);
            let mut values = [None; 7];
            let mut expected = [None; 7];
            let mut best = f64::NEG_INFINITY;
            let mut action = None;
            for (k, &c) in columns.iter().enumerate() {
                let mut value = 0.0f64;
                let mut exp = 0.0f64;
                for s in 0..strata as usize {
                    let Some(Ok((sd, contribution))) = results[base + k * strata as usize + s]
                    else {
                        return None;
                    };
                    exp += sd;
                    value += contribution;
                }
                let v = value / n;
                values[c] = Some(v);
                expected[c] = Some(exp / n);
                if v > best {
                    best = v;
                    action = Some(c);
                }
            }
            action.map(|a| (a, values, expected))
        };
        // Iteration by iteration, like one thread (a stop flag finds the
        // shallower iterations complete, and each is reported when done);
        // within an iteration the costliest tasks first, as the iteration
        // one shallower measured the same column and sample, so that the
        // tasks that end it are short and no worker idles long.
        // Where one thread runs iteration D alone, the split runs D - 1
        // too, unreported, only to order D's tasks.
        let first = workers[0].first_iteration();
        for d in first.saturating_sub(1).max(1)..=config.depth {
            let base = (config.depth - d) as usize * per_depth;
            let mut order: Vec<usize> = (base..base + per_depth).collect();
            if d > 1 {
                order.sort_by_key(|&i| std::cmp::Reverse(work[i + per_depth]));
            }
            run_tasks(workers, &root, &tasks, &order, &mut results, &mut work);
            let Some(r) = assemble(&results, d) else {
                break;
            };
            if d < first {
                continue;
            }
            let mut shown = [None; 7];
            for c in 0..7 {
                shown[unmirror(c)] = r.1[c];
            }
            report(d, &shown, workers.iter().map(FairSearch::work).sum());
            completed = Some(r);
            decision.completed_depth = d;
        }
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
        let mut stats = workers
            .iter()
            .map(FairSearch::split_stats)
            .fold(SearchStats::default(), add_stats);
        // One shared table: its entries and evictions once.
        stats.cache_entries = workers[0].table().entries();
        stats.evictions = workers[0].table().evictions();
        decision.stats = stats;
        decision
    }
}

fn add_stats(a: SearchStats, b: SearchStats) -> SearchStats {
    SearchStats {
        work: a.work + b.work,
        nodes: a.nodes + b.nodes,
        cache_hits: a.cache_hits + b.cache_hits,
        cache_entries: a.cache_entries + b.cache_entries,
        evictions: a.evictions + b.evictions,
        leaf_calls: a.leaf_calls + b.leaf_calls,
        move_calls: a.move_calls + b.move_calls,
    }
}

/// Runs the tasks `order` names on the workers (each takes the next
/// untaken one): the result of task `i` goes to `results[i]`, the work it
/// took to `work[i]`.
fn run_tasks<L, T, G>(
    workers: &mut [FairSearch<L, SharedTable<T>, G>],
    root: &Position,
    tasks: &[Task],
    order: &[usize],
    results: &mut [Option<Step<(f64, f64)>>],
    work: &mut [u64],
) where
    L: Leaf + Clone + Send,
    T: Table + Send,
    G: Gravity,
{
    let next = AtomicUsize::new(0);
    let run = |w: &mut FairSearch<L, SharedTable<T>, G>| {
        let mut out = Vec::new();
        while let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
            let (d, c, s) = tasks[i];
            let before = w.work();
            let r = w.root_sample(root, c, d, s);
            out.push((i, r, w.work() - before));
        }
        out
    };
    let mut collect = |done: Vec<Done>| {
        for (i, r, w) in done {
            results[i] = Some(r);
            work[i] = w;
        }
    };
    #[cfg(feature = "threads")]
    {
        let (first, rest) = workers.split_first_mut().expect("at least one worker");
        std::thread::scope(|scope| {
            let run = &run;
            let handles: Vec<_> = rest
                .iter_mut()
                .map(|w| scope.spawn(move || run(w)))
                .collect();
            collect(run(first));
            for h in handles {
                match h.join() {
                    Ok(done) => collect(done),
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
        });
    }
    #[cfg(not(feature = "threads"))]
    collect(run(&mut workers[0]));
}

impl<L, T, G> Decide for ParallelSearch<L, T, G>
where
    L: Leaf + Clone + Send,
    T: Table + Send,
    G: Gravity,
{
    fn decide_position(&mut self, pos: &Position) -> Decision {
        self.decide(pos)
    }
    fn table_bytes(&self) -> Option<usize> {
        Some(match &self.searchers {
            Searchers::Solo(s) => s.table().memory_bytes(),
            Searchers::Split(workers) => workers[0].table().memory_bytes(),
        })
    }
}

/// A policy that plays the split search's choice (the fair policy of a run
/// with fewer games than threads).
impl<L, T, G> Policy for ParallelSearch<L, T, G>
where
    L: Leaf + Clone + Send,
    T: Table + Send,
    G: Gravity,
{
    fn new_game(&mut self, _seed: u32) {}
    fn choose(&mut self, pos: &Position) -> Option<usize> {
        let d = self.decide(pos);
        self.last = d.stats;
        d.action
    }
    fn last_search(&self) -> Option<crate::search::SearchStats> {
        Some(self.last)
    }
    fn set_interrupt_flag(&mut self, flag: Option<Arc<std::sync::atomic::AtomicBool>>) {
        self.set_interrupt(flag);
    }
}

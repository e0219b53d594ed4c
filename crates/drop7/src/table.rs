//! Transposition tables for the fair search (spec: search.md §6), behind one
//! trait so the search is generic over them (static dispatch; [`NoTable`]
//! compiles to nothing).
//!
//! All tables cache the exact max-node value of an interior node (remaining
//! depth ≥ 1), keyed by the full canonical state, so a hit returns bit-for-bit
//! what recomputation would: values never depend on the table. Only the work,
//! node, hit, entry and eviction counts do.
//!
//! The key is the packed board with the three small fields tucked into the
//! unused top nibbles of the column words (28 bytes, injective):
//!
//! ```text
//! word 0: bits 31..28 = next disc (1..7)   | bits 27..0 = column 0
//! word 1: bits 31..28 = moves remaining    | bits 27..0 = column 1
//! word 2: bits 31..28 = remaining depth    | bits 27..0 = column 2
//! words 3..6: columns 3..6 (top nibble 0)
//! ```
//!
//! | table | semantics | entry |
//! |---|---|---|
//! | [`NoTable`] | nothing stored | — |
//! | [`StrictLru`] | the reference's strict LRU, capacity C: hit → MRU; insert evicts the LRU entry while size ≥ C | key 28 B + value 8 B + links 8 B + hash slot 4 B |
//! | [`DirectMapped`] | one slot per index; replace when the slot is stale or the new depth ≥ the slot's | key 28 B + value 8 B + depth/generation 4 B = 40 B |
//! | [`SetAssociative`] | W ways per set (2 or 4); replace a stale way, else the shallowest (oldest on ties) | 40 B + 4 B stamp per way |
//!
//! For the direct-mapped and set-associative tables, `entries` counts occupied
//! slots and `evictions` counts live slots overwritten by a different key.

use std::fmt;

use crate::position::Position;

/// A transposition table whose memory could not be allocated (e.g. larger
/// than the process's address-space limit, `ulimit -v`): `table` is its spec
/// (`lru:C`, `dm:N`, `sa:N:W`), `bytes` the memory it needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableError {
    /// The table as a `--table` spec.
    pub table: String,
    /// Bytes the table needs.
    pub bytes: usize,
    /// Tables the run needs at once (one per worker; 1 for a single search).
    pub copies: usize,
    /// Bytes the process could still get when the tables were checked
    /// against it before allocating (Linux: see [`TablePool::try_new`]);
    /// `None` when an allocation itself failed.
    pub available: Option<usize>,
    /// The allocation was cut short by the flag given to
    /// [`stop_allocating_on`] (a signal), not refused.
    pub interrupted: bool,
}

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mib = |b: usize| b.div_ceil(1 << 20);
        if self.interrupted {
            return write!(
                f,
                "allocating transposition table {} ({} MiB) was interrupted",
                self.table,
                mib(self.bytes)
            );
        }
        write!(
            f,
            "transposition table {} needs {} MiB",
            self.table,
            mib(self.bytes)
        )?;
        if self.copies > 1 {
            write!(
                f,
                " ({} copies, one per worker: {} MiB in all)",
                self.copies,
                mib(self.bytes.saturating_mul(self.copies))
            )?;
        }
        match self.available {
            Some(left) => write!(
                f,
                ": more than the {} MiB of memory left (available memory and swap, within the \
                 memory limits of the process's cgroups)",
                left / (1 << 20)
            )?,
            None => f.write_str(": cannot allocate it")?,
        }
        f.write_str(" (out of memory; try a smaller --table or fewer --threads)")
    }
}

impl std::error::Error for TableError {}

/// Bytes this process can still get (Linux): `MemAvailable` plus
/// `SwapFree` from `/proc/meminfo`, at most what its cgroup's memory limit
/// leaves (cgroup v2 `memory.max` − `memory.current`, v1
/// `memory.limit_in_bytes` − `memory.usage_in_bytes`, the usage less the
/// inactive page cache of `memory.stat`; the least over the process's own
/// cgroup and those above it). `None` elsewhere or when `/proc/meminfo`
/// cannot be read.
fn memory_left() -> Option<usize> {
    #[cfg(target_os = "linux")]
    {
        let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
        let kib = |name: &str| {
            meminfo.lines().find_map(|l| {
                let v = l.strip_prefix(name)?.trim().strip_suffix("kB")?;
                v.trim().parse::<u64>().ok()
            })
        };
        let system = kib("MemAvailable:")?
            .saturating_add(kib("SwapFree:").unwrap_or(0))
            .saturating_mul(1024);
        let left = match cgroup_memory_left() {
            Some(c) => system.min(c),
            None => system,
        };
        Some(usize::try_from(left).unwrap_or(usize::MAX))
    }
    #[cfg(not(target_os = "linux"))]
    None
}

/// What the memory limits of this process's cgroup and of the cgroups
/// above it leave (see [`memory_left`]).
#[cfg(target_os = "linux")]
fn cgroup_memory_left() -> Option<u64> {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    cgroup_memory_left_in(
        &cgroups,
        std::path::Path::new("/sys/fs/cgroup"),
        std::path::Path::new("/sys/fs/cgroup/memory"),
    )
}

/// [`cgroup_memory_left`] from the text of `/proc/self/cgroup` and the
/// mount points of the cgroup v2 hierarchy and of the v1 memory
/// controller: the least that any limit leaves, over the process's own
/// cgroup and each cgroup above it (a Slurm job's limit sits a few levels
/// above its task's cgroup), where that directory is mounted; if the own
/// directory is not there, the mount's root (a container's view of its
/// own cgroup). `None` if no limit is found ("max" or a v1 limit as large
/// as memory are limits that leave more than memory does).
#[cfg(target_os = "linux")]
fn cgroup_memory_left_in(
    cgroups: &str,
    v2_root: &std::path::Path,
    v1_root: &std::path::Path,
) -> Option<u64> {
    let number = |p: &std::path::Path| std::fs::read_to_string(p).ok()?.trim().parse::<u64>().ok();
    let mut least: Option<u64> = None;
    for line in cgroups.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let (root, limit, usage, inactive) = if controllers.is_empty() {
            (v2_root, "memory.max", "memory.current", "inactive_file")
        } else if controllers.split(',').any(|c| c == "memory") {
            (
                v1_root,
                "memory.limit_in_bytes",
                "memory.usage_in_bytes",
                "total_inactive_file",
            )
        } else {
            continue;
        };
        // The own directory (a relative path below the root; `..` would
        // climb out of it) and its ancestors up to the root, else the
        // root alone.
        let relative = path.trim_matches('/');
        let own = root.join(relative);
        let dirs: Vec<&std::path::Path> = if !relative.split('/').any(|c| c == "..") && own.is_dir()
        {
            own.ancestors()
                .take_while(|d| d.starts_with(root))
                .collect()
        } else {
            vec![root]
        };
        for dir in dirs {
            // "max" (no limit) does not parse: no limit here.
            let (Some(max), Some(used)) = (number(&dir.join(limit)), number(&dir.join(usage)))
            else {
                continue;
            };
            // The usage counts the page cache; its inactive part is
            // reclaimed before the OOM killer acts (as `free` and
            // container tools count it).
            let reclaimable = std::fs::read_to_string(dir.join("memory.stat"))
                .ok()
                .and_then(|stat| {
                    stat.lines().find_map(|l| {
                        let (k, v) = l.split_once(' ')?;
                        (k == inactive).then(|| v.trim().parse::<u64>().ok())?
                    })
                })
                .unwrap_or(0);
            let left = max.saturating_sub(used.saturating_sub(reclaimable));
            least = Some(least.map_or(left, |l| l.min(left)));
        }
    }
    least
}

/// Allocations from which [`try_filled`] and [`TablePool::try_new`] check
/// the memory left first ([`memory_left`]): 64 MiB.
const CHECKED_BYTES: usize = 64 << 20;

/// The flag of [`stop_allocating_on`], if one was given.
static ALLOCATION_STOP: std::sync::OnceLock<std::sync::Arc<std::sync::atomic::AtomicBool>> =
    std::sync::OnceLock::new();

/// From now on, filling a table of [`CHECKED_BYTES`] or more stops (with a
/// [`TableError`] whose `interrupted` is set) once `flag` is raised: a
/// signal handler's flag, so that Ctrl-C ends a run that is still
/// allocating gigabytes of tables (filled 16 MiB at a time, the flag read
/// between). The first flag given stays for the process.
pub fn stop_allocating_on(flag: std::sync::Arc<std::sync::atomic::AtomicBool>) {
    let _ = ALLOCATION_STOP.set(flag);
}

/// Whether the flag of [`stop_allocating_on`] is raised.
fn allocation_stopped() -> bool {
    ALLOCATION_STOP
        .get()
        .is_some_and(|f| f.load(std::sync::atomic::Ordering::Relaxed))
}

/// A vector of `n` copies of `value`, allocated fallibly: refused (`err`,
/// with the memory left) when it is [`CHECKED_BYTES`] or more and exceeds
/// [`memory_left`], since under the kernel's overcommit the allocation
/// would succeed and filling it would wake the OOM killer.
fn try_filled<T: Clone>(
    n: usize,
    value: T,
    err: &impl Fn() -> TableError,
) -> Result<Vec<T>, TableError> {
    try_filled_until(n, value, err, allocation_stopped)
}

/// [`try_filled`], stopped by `stopped` (read before each 16 MiB piece of
/// a table of [`CHECKED_BYTES`] or more) instead of the flag of
/// [`stop_allocating_on`].
fn try_filled_until<T: Clone>(
    n: usize,
    value: T,
    err: &impl Fn() -> TableError,
    stopped: impl Fn() -> bool,
) -> Result<Vec<T>, TableError> {
    let bytes = n.saturating_mul(std::mem::size_of::<T>());
    if bytes >= CHECKED_BYTES
        && let Some(left) = memory_left()
        && bytes > left
    {
        return Err(TableError {
            available: Some(left),
            ..err()
        });
    }
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| err())?;
    advise_huge_pages(&v);
    if bytes < CHECKED_BYTES {
        v.resize(n, value);
        return Ok(v);
    }
    // A large table: filled a piece at a time, so that a signal can stop it
    // (gigabytes take seconds, more under memory pressure).
    let piece = ((16 << 20) / std::mem::size_of::<T>().max(1)).max(1);
    while v.len() < n {
        if stopped() {
            return Err(TableError {
                interrupted: true,
                ..err()
            });
        }
        let len = (v.len() + piece).min(n);
        v.resize(len, value.clone());
    }
    Ok(v)
}

/// Capacity (bytes) from which a table asks for huge pages (Linux only).
#[cfg(target_os = "linux")]
const HUGE_PAGE_MIN_BYTES: usize = 4 << 20;

/// Asks Linux to back the (still untouched) capacity of `v` with
/// transparent huge pages when it is at least [`HUGE_PAGE_MIN_BYTES`]: a
/// probe of a large table then does not also miss the TLB (a d5s7 decision
/// with the 46 MB default table spent a few percent of its time on page
/// walks, mostly in the children's prefetches). Only a hint: where the
/// kernel has THP off (or another OS) nothing changes, and the contents
/// never do. Called before the first write, so that the pages are faulted
/// in as huge pages.
fn advise_huge_pages<T>(v: &Vec<T>) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let bytes = v.capacity().saturating_mul(std::mem::size_of::<T>());
        if bytes < HUGE_PAGE_MIN_BYTES {
            return;
        }
        // The whole 2 MB pages inside the allocation.
        let start = (v.as_ptr() as usize).next_multiple_of(HUGE);
        let end = (v.as_ptr() as usize + bytes) / HUGE * HUGE;
        if end > start {
            // SAFETY: `[start, end)` lies inside `v`'s allocation, which this
            // process owns; MADV_HUGEPAGE only changes how the kernel backs
            // those pages, never their contents, and its failure (e.g. THP
            // compiled out) is harmless, so the result is ignored.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = v;
}

/// A table that can be made anew in its kind and size with a fallible
/// allocation (the run builds one table per worker before the first game;
/// see [`TablePool`]).
pub trait FreshTable: Sized {
    /// A new, empty table of this one's kind and size (what its `try_new`
    /// builds; the entries are not read, so a [`FreshTable::hollow`] table
    /// will do), or the error naming the table when its memory cannot be
    /// allocated.
    fn try_fresh(&self) -> Result<Self, TableError>;
    /// What [`FreshTable::try_fresh`] would allocate: the table's spec and
    /// bytes, as the error of a failed allocation names them.
    fn size(&self) -> TableError;
    /// This table's kind and size without its memory: a template for
    /// [`FreshTable::try_fresh`], not a table to search with.
    fn hollow(&self) -> Self;
}

/// Tables for the workers of a run, all allocated up front (fallibly):
/// [`TablePool::take`] hands one out per worker.
#[derive(Debug)]
pub struct TablePool<T> {
    /// The tables' kind and size, without memory (for a take beyond the plan).
    template: T,
    spare: std::sync::Mutex<Vec<T>>,
}

impl<T: FreshTable> TablePool<T> {
    /// `workers` tables (at least one): `prototype` and `workers - 1` new
    /// ones of its kind and size.
    ///
    /// Beforehand, on Linux, the `workers - 1` new tables are checked
    /// against the memory the process can still get (`MemAvailable` and `SwapFree` in
    /// `/proc/meminfo`, within its cgroup's memory limit): with the
    /// kernel's overcommit each allocation would succeed and the run be
    /// killed by the OOM killer once it touched the pages, without a word.
    ///
    /// # Errors
    /// The [`TableError`] of the tables when they exceed the memory left,
    /// or of the first table that cannot be allocated, counting all
    /// `workers` tables.
    pub fn try_new(prototype: T, workers: usize) -> Result<Self, TableError> {
        // The prototype is allocated already: the others must fit in what
        // is left.
        let size = prototype.size();
        let more = size.bytes.saturating_mul(workers.saturating_sub(1));
        if more >= CHECKED_BYTES
            && let Some(left) = memory_left()
            && more > left
        {
            return Err(TableError {
                copies: workers.max(1),
                available: Some(left),
                ..size
            });
        }
        let template = prototype.hollow();
        let mut spare = Vec::with_capacity(workers.max(1));
        spare.push(prototype);
        for _ in 1..workers {
            // The error names all the tables the run needs at once.
            spare.push(template.try_fresh().map_err(|e| TableError {
                copies: workers,
                ..e
            })?);
        }
        Ok(TablePool {
            template,
            spare: std::sync::Mutex::new(spare),
        })
    }

    /// One of the tables allocated up front (a new one once more are taken
    /// than planned).
    ///
    /// # Panics
    /// Only when more tables are taken than planned and the new one's
    /// memory cannot be allocated.
    pub fn take(&self) -> T {
        let t = self.spare.lock().unwrap_or_else(|p| p.into_inner()).pop();
        t.unwrap_or_else(|| self.template.try_fresh().unwrap_or_else(|e| panic!("{e}")))
    }
}

/// A transposition-table key (layout in the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Key(pub [u32; 7]);

impl Key {
    /// The key of a canonical position at remaining depth `depth` (1..=15).
    #[inline(always)]
    pub fn new(pos: &Position, depth: u32) -> Key {
        let mut w = *pos.board.columns();
        w[0] |= u32::from(pos.next_disc) << 28;
        w[1] |= u32::from(pos.moves_remaining) << 28;
        w[2] |= depth << 28;
        Key(w)
    }

    /// Remaining depth stored in the key.
    #[inline(always)]
    pub fn depth(&self) -> u32 {
        self.0[2] >> 28
    }

    /// A 64-bit hash (multiply–xorshift over the words).
    #[inline(always)]
    pub fn hash(&self) -> u64 {
        let w = &self.0;
        let a = u64::from(w[0]) | u64::from(w[1]) << 32;
        let b = u64::from(w[2]) | u64::from(w[3]) << 32;
        let c = u64::from(w[4]) | u64::from(w[5]) << 32;
        let d = u64::from(w[6]);
        let mut h = a.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h = (h ^ b).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        h = (h ^ c).wrapping_mul(0x1656_67B1_9E37_79F9);
        h = (h ^ d).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h ^ (h >> 29)
    }
}

/// A transposition table of max-node values.
pub trait Table {
    /// `false` only for [`NoTable`]: the search then skips keys and lookups entirely.
    const ENABLED: bool = true;
    /// `true` when the spec fixes the counters of a decision over this
    /// table ([`NoTable`], the goldens' `*-notable` work, and
    /// [`StrictLru`], the reference's work, nodes, hits and entries;
    /// search.md §5–6): the search then runs every iteration of iterative
    /// deepening, as the reference does, even where the shallower ones
    /// cannot change the answer (see [`crate::search::FairSearch::decide`]).
    const SPEC_COUNTERS: bool = false;
    /// Empties the table (start of a decision).
    fn clear(&mut self);
    /// The cached value of `key`, if present (an LRU touches the entry).
    fn probe(&mut self, key: &Key) -> Option<f64>;
    /// Caches `value` for `key` (the table's replacement policy applies).
    fn store(&mut self, key: &Key, value: f64);
    /// Hints that `key` will be probed soon: starts loading the memory a
    /// probe of it reads (a cache prefetch; the contents, the counters and
    /// every later probe's answer are unchanged).
    #[inline(always)]
    fn prefetch(&self, key: &Key) {
        self.prefetcher().prefetch(key);
    }
    /// Where this table's probes read, for [`Table::prefetch`] (also from
    /// behind a lock: see [`Prefetcher`]). The default prefetches nothing.
    fn prefetcher(&self) -> Prefetcher {
        Prefetcher::default()
    }
    /// Live entries.
    fn entries(&self) -> u64;
    /// Evictions (or overwrites of live slots) since the last [`Table::clear`].
    fn evictions(&self) -> u64;
    /// Bytes of memory held.
    fn memory_bytes(&self) -> usize;
}

/// No table: every node is expanded (the goldens' `cacheCapacity 0`).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoTable;

impl FreshTable for NoTable {
    fn try_fresh(&self) -> Result<Self, TableError> {
        Ok(NoTable)
    }
    fn size(&self) -> TableError {
        TableError {
            table: "none".into(),
            bytes: 0,
            copies: 1,
            available: None,
            interrupted: false,
        }
    }
    fn hollow(&self) -> Self {
        NoTable
    }
}

impl Table for NoTable {
    const ENABLED: bool = false;
    const SPEC_COUNTERS: bool = true;
    #[inline(always)]
    fn clear(&mut self) {}
    #[inline(always)]
    fn probe(&mut self, _key: &Key) -> Option<f64> {
        None
    }
    #[inline(always)]
    fn store(&mut self, _key: &Key, _value: f64) {}
    fn entries(&self) -> u64 {
        0
    }
    fn evictions(&self) -> u64 {
        0
    }
    fn memory_bytes(&self) -> usize {
        0
    }
}

const NIL: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct LruNode {
    key: Key,
    value: f64,
    prev: u32,
    next: u32,
}

/// The reference's strict LRU with hard capacity C (search.md §6): an
/// open-addressing index over an arena of nodes on a doubly linked recency list.
#[derive(Clone, Debug)]
pub struct StrictLru {
    capacity: usize,
    nodes: Vec<LruNode>,
    /// Index slots: node index or NIL; linear probing; tombstone-free deletion.
    slots: Vec<u32>,
    mask: usize,
    head: u32, // most recent
    tail: u32, // least recent
    evictions: u64,
}

impl StrictLru {
    /// An LRU holding at most `capacity` entries (capacity ≥ 1; use [`NoTable`] for 0).
    ///
    /// # Panics
    /// When the memory cannot be allocated ([`StrictLru::try_new`] reports it instead).
    pub fn new(capacity: usize) -> StrictLru {
        Self::try_new(capacity).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`StrictLru::new`], allocated fallibly.
    ///
    /// # Errors
    /// A [`TableError`] when the memory cannot be allocated.
    pub fn try_new(capacity: usize) -> Result<StrictLru, TableError> {
        let capacity = capacity.max(1);
        let slots = capacity
            .checked_mul(2)
            .and_then(usize::checked_next_power_of_two)
            .unwrap_or(usize::MAX)
            .max(16);
        let err = || lru_size(capacity, slots);
        let mut nodes = Vec::new();
        nodes.try_reserve_exact(capacity).map_err(|_| err())?;
        Ok(StrictLru {
            capacity,
            nodes,
            slots: try_filled(slots, NIL, &err)?,
            mask: slots.wrapping_sub(1),
            head: NIL,
            tail: NIL,
            evictions: 0,
        })
    }

    /// The capacity C.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    #[inline]
    fn find_slot(&self, key: &Key) -> (usize, bool) {
        let mut i = key.hash() as usize & self.mask;
        loop {
            let n = self.slots[i];
            if n == NIL {
                return (i, false);
            }
            if self.nodes[n as usize].key == *key {
                return (i, true);
            }
            i = (i + 1) & self.mask;
        }
    }

    #[inline]
    fn unlink(&mut self, n: u32) {
        let LruNode { prev, next, .. } = self.nodes[n as usize];
        if prev != NIL {
            self.nodes[prev as usize].next = next;
        } else {
            self.head = next;
        }
        if next != NIL {
            self.nodes[next as usize].prev = prev;
        } else {
            self.tail = prev;
        }
    }

    #[inline]
    fn push_front(&mut self, n: u32) {
        self.nodes[n as usize].prev = NIL;
        self.nodes[n as usize].next = self.head;
        if self.head != NIL {
            self.nodes[self.head as usize].prev = n;
        }
        self.head = n;
        if self.tail == NIL {
            self.tail = n;
        }
    }

    /// Removes the index slot `i` (backward-shift deletion for linear probing).
    fn remove_slot(&mut self, mut i: usize) {
        loop {
            self.slots[i] = NIL;
            let mut j = i;
            loop {
                j = (j + 1) & self.mask;
                let n = self.slots[j];
                if n == NIL {
                    return;
                }
                let home = self.nodes[n as usize].key.hash() as usize & self.mask;
                // Move n into i if its home is not in (i, j] cyclically.
                let between = if i <= j {
                    i < home && home <= j
                } else {
                    i < home || home <= j
                };
                if !between {
                    self.slots[i] = n;
                    i = j;
                    break;
                }
            }
        }
    }
}

/// The size of a strict LRU of `capacity` entries and `slots` index slots.
fn lru_size(capacity: usize, slots: usize) -> TableError {
    TableError {
        table: format!("lru:{capacity}"),
        bytes: capacity
            .saturating_mul(std::mem::size_of::<LruNode>())
            .saturating_add(slots.saturating_mul(4)),
        copies: 1,
        available: None,
        interrupted: false,
    }
}

impl FreshTable for StrictLru {
    fn try_fresh(&self) -> Result<Self, TableError> {
        StrictLru::try_new(self.capacity)
    }
    fn size(&self) -> TableError {
        lru_size(self.capacity, self.mask.wrapping_add(1))
    }
    fn hollow(&self) -> Self {
        StrictLru {
            nodes: Vec::new(),
            slots: Vec::new(),
            ..*self
        }
    }
}

impl Table for StrictLru {
    const SPEC_COUNTERS: bool = true;
    fn clear(&mut self) {
        self.nodes.clear();
        self.slots.fill(NIL);
        self.head = NIL;
        self.tail = NIL;
        self.evictions = 0;
    }

    #[inline]
    fn probe(&mut self, key: &Key) -> Option<f64> {
        let (i, found) = self.find_slot(key);
        if !found {
            return None;
        }
        let n = self.slots[i];
        if self.head != n {
            self.unlink(n);
            self.push_front(n);
        }
        Some(self.nodes[n as usize].value)
    }

    fn store(&mut self, key: &Key, value: f64) {
        let (i, found) = self.find_slot(key);
        if found {
            // Cannot happen in the search (a key is never stored inside its own
            // subtree); the reference erases then re-inserts at MRU.
            let n = self.slots[i];
            self.nodes[n as usize].value = value;
            self.unlink(n);
            self.push_front(n);
            return;
        }
        let node = LruNode {
            key: *key,
            value,
            prev: NIL,
            next: NIL,
        };
        // Size never exceeds C, so at most one eviction; its node is reused.
        let n = if self.nodes.len() >= self.capacity {
            let t = self.tail;
            self.unlink(t);
            let (slot, _) = self.find_slot(&self.nodes[t as usize].key);
            self.remove_slot(slot);
            self.evictions += 1;
            self.nodes[t as usize] = node;
            t
        } else {
            self.nodes.push(node);
            (self.nodes.len() - 1) as u32
        };
        // The eviction may have moved slots: search again for the free slot.
        let (i, _) = self.find_slot(key);
        self.slots[i] = n;
        self.push_front(n);
    }

    fn entries(&self) -> u64 {
        self.nodes.len() as u64
    }

    fn evictions(&self) -> u64 {
        self.evictions
    }

    fn memory_bytes(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<LruNode>() + self.slots.len() * 4
    }
}

/// One slot of the direct-mapped and set-associative tables (40 bytes):
///
/// ```text
/// key        [u32; 7]  28 B  full key (exact match: no false hits)
/// generation u32        4 B  decision the slot was written in (live iff = table's)
/// value      f64        8 B  max-node value
/// ```
/// The set-associative table keeps a 4-byte store stamp per way beside it.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
struct Slot {
    key: Key,
    generation: u32,
    value: f64,
}

/// Where a slot table's probe of a key reads: the addresses of its slot and
/// stamp arrays and the set geometry. A copy can prefetch without the
/// table, e.g. for a table behind a mutex. Prefetching is a hint that reads
/// nothing architecturally and never faults, so a stale copy (of a table
/// since dropped) only wastes a cache line.
#[derive(Clone, Copy, Debug, Default)]
pub struct Prefetcher {
    /// Address of set 0's slots; 0 when there is nothing to prefetch.
    slots: usize,
    /// Bytes of one set's slots.
    slot_bytes: usize,
    /// Address of set 0's store stamps; 0 when there are none.
    stamps: usize,
    /// Bytes of one set's stamps.
    stamp_bytes: usize,
    /// Set index mask (sets − 1).
    mask: usize,
}

impl Prefetcher {
    /// The prefetcher of `slots` (and `stamps`, if not empty) in sets of
    /// `ways`, `mask + 1` sets.
    fn of<S, A>(slots: &[S], stamps: &[A], ways: usize, mask: usize) -> Prefetcher {
        Prefetcher {
            slots: slots.as_ptr().expose_provenance(),
            slot_bytes: ways * std::mem::size_of::<S>(),
            stamps: if stamps.is_empty() {
                0
            } else {
                stamps.as_ptr().expose_provenance()
            },
            stamp_bytes: ways * std::mem::size_of::<A>(),
            mask,
        }
    }

    /// Starts loading the cache lines a probe and a store of `key` read.
    #[inline(always)]
    pub fn prefetch(&self, key: &Key) {
        if self.slots == 0 {
            return;
        }
        let set = key.hash() as usize & self.mask;
        prefetch_range(self.slots + set * self.slot_bytes, self.slot_bytes);
        if self.stamps != 0 {
            prefetch_range(self.stamps + set * self.stamp_bytes, self.stamp_bytes);
        }
    }
}

/// Starts loading the cache lines of the `bytes` (at least 1) bytes at
/// address `start`. On targets without a prefetch instruction it does nothing.
#[inline(always)]
fn prefetch_range(start: usize, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let line = |address: usize| {
            // SAFETY: `_mm_prefetch` is a hint: it never faults, whatever the
            // address, and has no architectural effect.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(std::ptr::with_exposed_provenance(address)) }
        };
        // Each line of the range once, from the first byte's to the last's.
        let last = (start + bytes - 1) & !63;
        let mut address = start & !63;
        while address <= last {
            line(address);
            address += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (start, bytes);
}

/// Empties slot tables in O(1): slots of older generations count as empty.
/// Only when the 32-bit generation wraps are the slots wiped for real.
fn next_generation(slots: &mut [Slot], generation: &mut u32) {
    *generation = generation.wrapping_add(1);
    if *generation == 0 {
        slots.fill(Slot::default());
        *generation = 1;
    }
}

/// Direct-mapped table with depth-preferred replacement: a new entry replaces
/// the slot's occupant when that is stale (from an earlier decision) or the new
/// remaining depth is at least the occupant's.
#[derive(Clone, Debug)]
pub struct DirectMapped {
    slots: Vec<Slot>,
    mask: usize,
    generation: u32,
    entries: u64,
    evictions: u64,
}

impl DirectMapped {
    /// A table of `entries` slots (rounded up to a power of two, at least 1).
    ///
    /// # Panics
    /// When the memory cannot be allocated ([`DirectMapped::try_new`] reports it instead).
    pub fn new(entries: usize) -> DirectMapped {
        Self::try_new(entries).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`DirectMapped::new`], allocated fallibly.
    ///
    /// # Errors
    /// A [`TableError`] when the memory cannot be allocated.
    pub fn try_new(entries: usize) -> Result<DirectMapped, TableError> {
        let n = entries.max(1).next_power_of_two();
        let err = || dm_size(n);
        Ok(DirectMapped {
            slots: try_filled(n, Slot::default(), &err)?,
            mask: n - 1,
            generation: 1,
            entries: 0,
            evictions: 0,
        })
    }
}

/// The size of a direct-mapped table of `n` slots.
fn dm_size(n: usize) -> TableError {
    TableError {
        table: format!("dm:{n}"),
        bytes: n.saturating_mul(std::mem::size_of::<Slot>()),
        copies: 1,
        available: None,
        interrupted: false,
    }
}

impl FreshTable for DirectMapped {
    fn try_fresh(&self) -> Result<Self, TableError> {
        DirectMapped::try_new(self.mask + 1)
    }
    fn size(&self) -> TableError {
        dm_size(self.mask + 1)
    }
    fn hollow(&self) -> Self {
        DirectMapped {
            slots: Vec::new(),
            ..*self
        }
    }
}

impl Table for DirectMapped {
    fn clear(&mut self) {
        next_generation(&mut self.slots, &mut self.generation);
        self.entries = 0;
        self.evictions = 0;
    }

    fn prefetcher(&self) -> Prefetcher {
        Prefetcher::of::<Slot, u32>(&self.slots, &[], 1, self.mask)
    }

    #[inline]
    fn probe(&mut self, key: &Key) -> Option<f64> {
        let s = &self.slots[key.hash() as usize & self.mask];
        (s.generation == self.generation && s.key == *key).then_some(s.value)
    }

    #[inline]
    fn store(&mut self, key: &Key, value: f64) {
        let generation = self.generation;
        let s = &mut self.slots[key.hash() as usize & self.mask];
        if s.generation != generation {
            self.entries += 1;
        } else if key.depth() < s.key.depth() {
            return;
        } else if s.key != *key {
            self.evictions += 1;
        }
        *s = Slot {
            key: *key,
            generation,
            value,
        };
    }

    fn entries(&self) -> u64 {
        self.entries
    }

    fn evictions(&self) -> u64 {
        self.evictions
    }

    fn memory_bytes(&self) -> usize {
        self.slots.len() * std::mem::size_of::<Slot>()
    }
}

/// Set-associative table: `ways` slots per set (2 or 4). A new entry takes a
/// stale way if there is one, else replaces the way with the smallest remaining
/// depth (the least recently stored among equals).
#[derive(Clone, Debug)]
pub struct SetAssociative {
    slots: Vec<Slot>,
    ways: usize,
    set_mask: usize,
    generation: u32,
    clock: u32,
    ages: Vec<u32>,
    entries: u64,
    evictions: u64,
}

impl SetAssociative {
    /// A table of `entries` slots in sets of `ways` (entries rounded up to a
    /// power of two, at least one set).
    ///
    /// # Panics
    /// When the memory cannot be allocated ([`SetAssociative::try_new`] reports it instead).
    pub fn new(entries: usize, ways: usize) -> SetAssociative {
        Self::try_new(entries, ways).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`SetAssociative::new`], allocated fallibly.
    ///
    /// # Errors
    /// A [`TableError`] when the memory cannot be allocated.
    pub fn try_new(entries: usize, ways: usize) -> Result<SetAssociative, TableError> {
        let ways = ways.clamp(1, 16);
        let sets = (entries.max(ways) / ways).next_power_of_two();
        let n = sets * ways;
        let err = || sa_size(n, ways);
        Ok(SetAssociative {
            slots: try_filled(n, Slot::default(), &err)?,
            ways,
            set_mask: sets - 1,
            generation: 1,
            clock: 0,
            ages: try_filled(n, 0, &err)?,
            entries: 0,
            evictions: 0,
        })
    }

    /// Ways per set.
    pub fn ways(&self) -> usize {
        self.ways
    }
}

/// The size of a set-associative table of `n` slots in sets of `ways`.
fn sa_size(n: usize, ways: usize) -> TableError {
    TableError {
        table: format!("sa:{n}:{ways}"),
        bytes: n.saturating_mul(std::mem::size_of::<Slot>() + 4),
        copies: 1,
        available: None,
        interrupted: false,
    }
}

impl FreshTable for SetAssociative {
    fn try_fresh(&self) -> Result<Self, TableError> {
        SetAssociative::try_new((self.set_mask + 1) * self.ways, self.ways)
    }
    fn size(&self) -> TableError {
        sa_size((self.set_mask + 1) * self.ways, self.ways)
    }
    fn hollow(&self) -> Self {
        SetAssociative {
            slots: Vec::new(),
            ages: Vec::new(),
            ..*self
        }
    }
}

impl Table for SetAssociative {
    fn clear(&mut self) {
        next_generation(&mut self.slots, &mut self.generation);
        self.entries = 0;
        self.evictions = 0;
    }

    /// The set's slots and their store stamps (a store after the probe
    /// reads both).
    fn prefetcher(&self) -> Prefetcher {
        Prefetcher::of(&self.slots, &self.ages, self.ways, self.set_mask)
    }

    #[inline]
    fn probe(&mut self, key: &Key) -> Option<f64> {
        let base = (key.hash() as usize & self.set_mask) * self.ways;
        self.slots[base..base + self.ways]
            .iter()
            .find(|s| s.generation == self.generation && s.key == *key)
            .map(|s| s.value)
    }

    #[inline]
    fn store(&mut self, key: &Key, value: f64) {
        let base = (key.hash() as usize & self.set_mask) * self.ways;
        let generation = self.generation;
        self.clock = self.clock.wrapping_add(1);
        let mut victim = base;
        let mut victim_rank = (u32::MAX, u32::MAX);
        for i in base..base + self.ways {
            let s = &self.slots[i];
            if s.generation != generation {
                victim = i;
                victim_rank = (0, 0);
                self.entries += 1;
                break;
            }
            if s.key == *key {
                victim = i;
                victim_rank = (0, 0);
                break;
            }
            let rank = (
                s.key.depth() + 1,
                self.clock.wrapping_sub(self.ages[i]).wrapping_neg(),
            );
            if rank < victim_rank {
                victim = i;
                victim_rank = rank;
            }
        }
        if victim_rank != (0, 0) {
            self.evictions += 1;
        }
        self.slots[victim] = Slot {
            key: *key,
            generation,
            value,
        };
        self.ages[victim] = self.clock;
    }

    fn entries(&self) -> u64 {
        self.entries
    }

    fn evictions(&self) -> u64 {
        self.evictions
    }

    fn memory_bytes(&self) -> usize {
        self.slots.len() * (std::mem::size_of::<Slot>() + 4)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::Board;

    fn key(i: u32, depth: u32) -> Key {
        let pos = Position {
            board: Board::from_columns([i & 0xFFF_FFFF, i >> 28, 0, 0, 0, 0, 0]),
            next_disc: 1,
            moves_remaining: 5,
            game_over: false,
        };
        Key::new(&pos, depth)
    }

    /// A large table is filled a piece at a time and stops (an error
    /// saying so, not a refusal) once the flag is raised; unstopped, it is
    /// filled whole; a small one never reads the flag.
    #[test]
    fn a_raised_flag_stops_filling_a_large_table() {
        use std::cell::Cell;
        let err = || sa_size(1 << 22, 4);
        let n = CHECKED_BYTES + (3 << 20) + 5;
        let pieces = Cell::new(0);
        let stop_after_two = || {
            pieces.set(pieces.get() + 1);
            pieces.get() > 2
        };
        let e = try_filled_until(n, 7u8, &err, stop_after_two).unwrap_err();
        assert!(e.interrupted, "{e}");
        assert_eq!(pieces.get(), 3);
        assert_eq!(
            e.to_string(),
            "allocating transposition table sa:4194304:4 (176 MiB) was interrupted"
        );
        pieces.set(0);
        let whole = try_filled_until(n, 7u8, &err, || {
            pieces.set(pieces.get() + 1);
            false
        })
        .unwrap();
        assert_eq!(whole.len(), n);
        assert!(whole.iter().all(|&b| b == 7));
        // 64 MiB in 16 MiB pieces and the rest in one more.
        assert_eq!(pieces.get(), 5);
        let small = try_filled_until(1000, 3u64, &err, || panic!("read the flag")).unwrap();
        assert_eq!(small, vec![3u64; 1000]);
        // Without a flag given (no stop_allocating_on in these tests).
        assert!(!allocation_stopped());
    }

    /// A pool holds one full table per worker and makes a new one for a
    /// take beyond the plan; every table it hands out is empty and works.
    #[test]
    fn a_pool_holds_one_table_per_worker_and_makes_more_when_asked() {
        fn check<T: Table + FreshTable>(prototype: T) {
            let bytes = prototype.memory_bytes();
            let pool = TablePool::try_new(prototype, 2).unwrap();
            assert_eq!(pool.spare.lock().unwrap().len(), 2);
            assert_eq!(pool.template.memory_bytes(), 0);
            // Two planned takes, then one beyond the plan: all full, empty tables.
            for _ in 0..3 {
                let mut t = pool.take();
                assert_eq!(t.memory_bytes(), bytes);
                let key = Key::new(&Position::initial(3), 2);
                assert_eq!(t.probe(&key), None);
                t.clear();
                t.store(&key, 1.5);
                assert_eq!(t.probe(&key), Some(1.5));
            }
        }
        check(SetAssociative::new(64, 4));
        check(DirectMapped::new(64));
        check(StrictLru::new(64));
    }

    /// A prefetch is only a hint: the same probes, entries and evictions
    /// with or without one, on every set (the last one included) and on
    /// tables of one slot.
    #[test]
    fn prefetch_changes_nothing() {
        fn run<T: Table>(mut t: T, hint: bool) -> (Vec<Option<f64>>, u64, u64) {
            let mut seen = Vec::new();
            for i in 0..4_000u32 {
                let k = key(i.wrapping_mul(2_654_435_761) % 1_500, 1 + i % 3);
                if hint {
                    t.prefetch(&k);
                }
                seen.push(t.probe(&k));
                t.store(&k, f64::from(i));
            }
            (seen, t.entries(), t.evictions())
        }
        for ways in [1, 2, 4] {
            for entries in [1, 4, 64, 1024] {
                let plain = run(SetAssociative::new(entries, ways), false);
                assert_eq!(run(SetAssociative::new(entries, ways), true), plain);
            }
        }
        for entries in [1, 64, 1024] {
            let plain = run(DirectMapped::new(entries), false);
            assert_eq!(run(DirectMapped::new(entries), true), plain);
        }
        assert_eq!(
            run(StrictLru::new(100), true),
            run(StrictLru::new(100), false)
        );
    }

    #[test]
    fn lru_is_strict() {
        let mut t = StrictLru::new(3);
        for i in 0..3 {
            t.store(&key(i, 1), f64::from(i));
        }
        assert_eq!(t.probe(&key(0, 1)), Some(0.0)); // 0 becomes MRU; LRU is 1
        t.store(&key(3, 1), 3.0);
        assert_eq!(t.probe(&key(1, 1)), None);
        assert_eq!(t.probe(&key(0, 1)), Some(0.0));
        assert_eq!(t.probe(&key(2, 1)), Some(2.0));
        assert_eq!((t.entries(), t.evictions()), (3, 1));
        t.clear();
        assert_eq!((t.entries(), t.probe(&key(0, 1))), (0, None));
    }

    #[test]
    fn lru_survives_churn() {
        // Against a plain model: a Vec in recency order.
        let mut t = StrictLru::new(50);
        let mut model: Vec<(Key, f64)> = Vec::new();
        let mut x = 12345u32;
        for step in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let k = key(x % 200, 1 + x % 3);
            if x.is_multiple_of(2) {
                let want = model.iter().position(|e| e.0 == k);
                let got = t.probe(&k);
                assert_eq!(got, want.map(|i| model[i].1), "step {step}");
                if let Some(i) = want {
                    let e = model.remove(i);
                    model.push(e);
                }
            } else if !model.iter().any(|e| e.0 == k) {
                while model.len() >= 50 {
                    model.remove(0);
                }
                model.push((k, f64::from(step)));
                t.store(&k, f64::from(step));
            }
            assert_eq!(t.entries() as usize, model.len());
        }
    }

    #[test]
    fn direct_mapped_prefers_depth() {
        let mut t = DirectMapped::new(1);
        t.store(&key(1, 3), 1.0);
        t.store(&key(2, 2), 2.0); // shallower: refused
        assert_eq!(t.probe(&key(1, 3)), Some(1.0));
        t.store(&key(3, 3), 3.0); // same depth: replaces
        assert_eq!(
            (t.probe(&key(1, 3)), t.probe(&key(3, 3))),
            (None, Some(3.0))
        );
        assert_eq!((t.entries(), t.evictions()), (1, 1));
        t.clear();
        assert_eq!(t.probe(&key(3, 3)), None);
    }

    #[test]
    fn set_associative_keeps_deep_entries() {
        let mut t = SetAssociative::new(2, 2);
        t.store(&key(1, 3), 1.0);
        t.store(&key(2, 1), 2.0);
        t.store(&key(3, 2), 3.0); // evicts the depth-1 entry
        assert_eq!(t.probe(&key(1, 3)), Some(1.0));
        assert_eq!(t.probe(&key(2, 1)), None);
        assert_eq!(t.probe(&key(3, 2)), Some(3.0));
        assert_eq!((t.entries(), t.evictions()), (2, 1));
    }

    /// A fake cgroup tree: a limit two levels above the process's cgroup
    /// counts (a Slurm job's), the least of several wins, the inactive
    /// page cache counts as free, "max" is no limit, and a cgroup path that
    /// is not mounted falls back to the mount's root.
    #[cfg(target_os = "linux")]
    #[test]
    fn cgroup_limits_above_the_own_cgroup_count() {
        let base = std::env::temp_dir().join(format!("drop7-cgroup-{}", std::process::id()));
        let v2 = base.join("v2");
        let v1 = base.join("v1");
        let write = |dir: &std::path::Path, files: &[(&str, &str)]| {
            std::fs::create_dir_all(dir).unwrap();
            for (name, text) in files {
                std::fs::write(dir.join(name), text).unwrap();
            }
        };
        const G: u64 = 1 << 30;
        write(&v2, &[("memory.stat", "inactive_file 0\n")]);
        write(
            &v2.join("job_7"),
            &[
                ("memory.max", &format!("{}\n", 8 * G)),
                ("memory.current", &format!("{}\n", 3 * G)),
                ("memory.stat", &format!("anon 1\ninactive_file {}\n", G)),
            ],
        );
        write(
            &v2.join("job_7/step_0"),
            &[("memory.max", "max\n"), ("memory.current", "5\n")],
        );
        write(
            &v2.join("job_7/step_0/task_0"),
            &[("memory.max", "max\n"), ("memory.current", "5\n")],
        );
        let v2_left = |cgroups: &str| cgroup_memory_left_in(cgroups, &v2, &v1);
        // 8 GiB − (3 GiB − 1 GiB of inactive cache).
        assert_eq!(v2_left("0::/job_7/step_0/task_0\n"), Some(6 * G));
        assert_eq!(v2_left("0::/job_7\n"), Some(6 * G));
        // A tighter limit below wins.
        write(
            &v2.join("job_7/step_0"),
            &[
                ("memory.max", &format!("{}\n", 2 * G)),
                ("memory.current", &format!("{G}\n")),
            ],
        );
        assert_eq!(v2_left("0::/job_7/step_0/task_0\n"), Some(G));
        // Not mounted here (a container's view): the mount's root, which
        // has no limit.
        assert_eq!(v2_left("0::/elsewhere/x\n"), None);
        assert_eq!(v2_left("0::/../job_7\n"), None);
        // cgroup v1: the memory controller's line only.
        write(
            &v1.join("slurm/uid_0/job_9"),
            &[
                ("memory.limit_in_bytes", &format!("{}\n", 4 * G)),
                ("memory.usage_in_bytes", &format!("{G}\n")),
            ],
        );
        write(
            &v1.join("slurm/uid_0/job_9/step_batch"),
            &[
                ("memory.limit_in_bytes", "9223372036854771712\n"),
                ("memory.usage_in_bytes", "5\n"),
            ],
        );
        assert_eq!(
            v2_left("12:cpu,cpuacct:/slurm\n4:memory:/slurm/uid_0/job_9/step_batch\n"),
            Some(3 * G)
        );
        assert_eq!(v2_left("12:cpu,cpuacct:/slurm/uid_0/job_9\n"), None);
        std::fs::remove_dir_all(&base).unwrap();
    }
}

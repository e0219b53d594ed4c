//! No heap allocation on the move path or per search node: a counting global
//! allocator watches whole games (packed engine, both gravity paths) and whole
//! search decisions (every table type) after set-up.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use drop7::board::Board;
use drop7::cascade::WaveStats;
use drop7::game::{Driver, Game};
use drop7::gravity::{Bmi2, Gravity, Portable};
use drop7::leaf::FairLeaf;
use drop7::policy::center_first;
use drop7::position::Position;
use drop7::search::{FairSearch, SearchConfig};
use drop7::table::{DirectMapped, NoTable, SetAssociative, StrictLru, Table};

struct Counting;

thread_local! {
    /// Allocations made by this thread (other test threads do not count).
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn count_one() {
    // `try_with`: the slot may be gone while a thread shuts down.
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations_during(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.with(Cell::get);
    f();
    ALLOCATIONS.with(Cell::get) - before
}

fn games<G: Gravity>(g: G) -> u64 {
    let mut moves = 0;
    for seed in 0..300u32 {
        let driver = if seed % 2 == 0 {
            Driver::headless(seed)
        } else {
            Driver::stream(seed)
        };
        let mut game = Game::with_gravity(driver, g);
        let mut stats = WaveStats::default();
        while !game.is_over() {
            let c = center_first(game.board()).expect("a live game has a legal column");
            game.play_into(c, &mut stats).expect("legal move");
            moves += 1;
        }
    }
    moves
}

#[test]
fn board_is_28_bytes() {
    assert_eq!(std::mem::size_of::<Board>(), 28);
}

#[test]
fn no_allocation_per_move_or_per_search_node() {
    let mut moves = 0;
    assert_eq!(
        allocations_during(|| moves = games(Portable)),
        0,
        "portable move path allocated"
    );
    assert!(moves > 5_000);
    if let Some(b) = Bmi2::detect() {
        assert_eq!(
            allocations_during(|| moves = games(b)),
            0,
            "bmi2 move path allocated"
        );
    }

    let roots: Vec<Position> = [
        "0000000000000000000000000000000000000440308888888",
        "0000000000000000000000000000404400088888388888888",
    ]
    .iter()
    .map(|b| Position {
        board: b.parse().unwrap(),
        next_disc: 3,
        moves_remaining: 2,
        game_over: false,
    })
    .collect();
    fn decide_all<T: Table>(table: T, roots: &[Position]) -> usize {
        let mut s = FairSearch::new(FairLeaf, table, Portable, SearchConfig::new(3, 5));
        s.decide(&roots[0]); // warm-up: the first decision may size internal buffers
        allocations_during(|| {
            for r in roots {
                assert!(s.decide(r).stats.nodes > 1000);
            }
        })
    }
    assert_eq!(
        decide_all(NoTable, &roots),
        0,
        "search without a table allocated"
    );
    assert_eq!(
        decide_all(StrictLru::new(500), &roots),
        0,
        "search with an LRU allocated"
    );
    assert_eq!(
        decide_all(DirectMapped::new(1 << 12), &roots),
        0,
        "direct-mapped search allocated"
    );
    assert_eq!(
        decide_all(SetAssociative::new(1 << 12, 4), &roots),
        0,
        "set-associative search allocated"
    );
}

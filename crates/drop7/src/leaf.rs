//! Leaf evaluators: the value the search gives a non-terminal position at
//! remaining depth 0 (search.md §9).
//!
//! [`FairLeaf`] is the reference's hand-written fairLeaf, bit-identical (value
//! and all 19 terms) to the plain oracle `crate::reference::leaf` and to the
//! C++ reference, computed from the packed [`Board`] with bitboards:
//!
//! ```text
//! row-major bitboard (u64): bit 8*row + column, row 0 = top
//!   byte 0: row 0 (elevation 7)   bits 0..=6 = columns 0..=6, bit 7 unused
//!   ...
//!   byte 6: row 6 (elevation 1)
//!   byte 7: unused
//! ```
//!
//! Walking set bits from the lowest up visits cells in row-major order, the
//! order in which the spec accumulates every floating-point sum. The
//! evaluator first derives whole-board masks (occupied, numbered, gray, the
//! values as bit planes, "column height >= k", "horizontal run >= k"), uses
//! them to find the few cells whose addition, release or exposure can be
//! non-zero, and only visits those. A skipped cell would add exactly `+0.0`
//! to a non-negative sum, which changes nothing; every comment of the form
//! "adding +0.0 changes nothing" rests on this. Floating-point sums keep the
//! spec's order; only integer-valued features are computed in integers.
//!
//! Speed: about 255 ns per evaluation over the 15,003 states of the leaf
//! golden file (one core of a 2-vCPU Zen 3 VM, baseline x86-64 code), against
//! about 2.6 µs for the plain oracle (`tests/leaf_gate.rs`, `leaf_timing`).
//!
//! ```
//! use drop7::leaf::{FairLeaf, Leaf};
//! use drop7::position::Position;
//! let pos = Position::initial(4);
//! assert_eq!(FairLeaf.evaluate(&pos), -4057.5);
//! ```

use crate::board::{Board, SIZE, word_height};
use crate::position::Position;

/// Number of features (= weights) of the fairLeaf dot product (search.md §9).
pub const TERM_COUNT: usize = 19;

/// The value of a game-over position (search.md §10, `kFairTerminalUtility`).
pub const FAIR_TERMINAL_UTILITY: f64 = -2_500_000.0;

/// The `frozen-fair.weights` in dot-product order (search.md §9 table); term
/// 17 (index 16, roughness) weighs `0.0`.
pub const FAIR_WEIGHTS: [f64; TERM_COUNT] = [
    180.0, -20.0, -620.0, -220.0, -18.0, -90.0, 1600.0, 700.0, 100.0, 40.0, -550.0, -750.0, -120.0,
    -95.0, -85.0, -1250.0, 0.0, -35.0, 220.0,
];

/// A leaf evaluator: value of a non-terminal position at remaining depth 0.
///
/// The search evaluates many leaves that differ only in the next disc (the
/// samples of a move that reveals no gray). [`Leaf::partial`] computes what
/// does not depend on the next disc once, and [`Leaf::finish`] completes it
/// for each next disc; `finish(&partial(pos), pos.next_disc)` must equal
/// `evaluate(pos)` bit for bit.
pub trait Leaf {
    /// The next-disc-independent part of an evaluation.
    type Partial: Copy;
    /// The value of `pos` (for [`FairLeaf`]: search.md §9).
    fn evaluate(&mut self, pos: &Position) -> f64;
    /// The part of `pos`'s evaluation that ignores `pos.next_disc`.
    fn partial(&mut self, pos: &Position) -> Self::Partial;
    /// The value of the position of `partial` with next disc `next_disc`.
    fn finish(&mut self, partial: &Self::Partial, next_disc: u8) -> f64;

    /// Scratch memory a searcher keeps for [`Leaf::partial_cached`].
    type Cache: Default + Clone + std::fmt::Debug + Send;
    /// [`Leaf::partial`], bit for bit, possibly faster with the help of
    /// `cache` (which only ever holds exact intermediate results).
    #[inline]
    fn partial_cached(&mut self, cache: &mut Self::Cache, pos: &Position) -> Self::Partial {
        let _ = cache;
        self.partial(pos)
    }
}

/// [`FairLeaf`]'s next-disc-independent part: the dot product up to term 18
/// (term 19, next_disc_vertical_options, is the last one added), and term 19
/// for every next disc.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FairPartial {
    /// `result` after terms 1–18 (or the terminal value).
    prefix: f64,
    /// Nibble `n` (bits `4n..4n+4`) = next_disc_vertical_options for next
    /// disc `n` (1..=7), a column count; nibble 0 is 0.
    by_next: u32,
    /// The position is game over: every finish is [`FAIR_TERMINAL_UTILITY`].
    game_over: bool,
}

/// The fair leaf (search.md §9): stateless, allocation-free, bit-exact.
#[derive(Clone, Copy, Debug, Default)]
pub struct FairLeaf;

impl Leaf for FairLeaf {
    type Partial = FairPartial;
    type Cache = ShapeCache;

    #[inline]
    fn partial_cached(&mut self, cache: &mut ShapeCache, pos: &Position) -> FairPartial {
        if pos.game_over {
            return self.partial(pos);
        }
        cache.partial(pos)
    }

    #[inline]
    fn evaluate(&mut self, pos: &Position) -> f64 {
        FairLeaf::value(pos)
    }

    #[inline]
    fn partial(&mut self, pos: &Position) -> FairPartial {
        if pos.game_over {
            return FairPartial {
                prefix: FAIR_TERMINAL_UTILITY,
                by_next: 0,
                game_over: true,
            };
        }
        let features = Features::new(&pos.board);
        let by_next = features.by_next();
        let terms = features.terms(0, pos.moves_remaining);
        FairPartial {
            prefix: dot_prefix(&terms),
            by_next,
            game_over: false,
        }
    }

    #[inline]
    fn finish(&mut self, partial: &FairPartial, next_disc: u8) -> f64 {
        if partial.game_over {
            return FAIR_TERMINAL_UTILITY;
        }
        // A count of columns (0..=7): the same double as the spec's `+= 1.0`s.
        let options = if next_disc <= 7 {
            (partial.by_next >> (4 * u32::from(next_disc))) & 15
        } else {
            0
        };
        partial.prefix + FAIR_WEIGHTS[TERM_COUNT - 1] * f64::from(options)
    }
}

impl FairLeaf {
    /// fairLeaf: [`FAIR_TERMINAL_UTILITY`] if the game is over, else the dot
    /// product of [`FAIR_WEIGHTS`] with [`FairLeaf::terms`] in spec order.
    ///
    /// # Panics
    /// If the game is not over and `moves_remaining` is not in 1..=5 (the
    /// reference throws).
    #[inline]
    pub fn value(pos: &Position) -> f64 {
        if pos.game_over {
            return FAIR_TERMINAL_UTILITY;
        }
        dot(&Self::terms(pos))
    }

    /// The 19 features in dot-product order (search.md §9; roughness
    /// included, `game_over` ignored). `next_disc` should be 1..=7 (any
    /// other value has no vertical options).
    ///
    /// # Panics
    /// If `moves_remaining` is not in 1..=5.
    #[inline]
    pub fn terms(pos: &Position) -> [f64; TERM_COUNT] {
        Features::new(&pos.board).terms(pos.next_disc, pos.moves_remaining)
    }
}

/// The dot product of [`FAIR_WEIGHTS`] with `t`, bit-identical to the spec's
/// `result = 0.0; result += w * f` per term in index order (one multiply and
/// one add rounding each, never fused; search.md §8, §9), with a shorter
/// dependency chain:
///
/// * terms 1–6 are integers with integer weights, so every partial sum of the
///   spec's order is an integer below 2^53, exact, and any association gives
///   the same value. Its zero has the same sign too: the first product is
///   `180 * open_columns >= +0.0`, and `+0.0 + -0.0 = +0.0`.
/// * term 17 weighs 0: `0.0 * roughness = +0.0`, and `result + +0.0` is
///   `result` because `result` is never `-0.0` (round-to-nearest yields
///   `-0.0` from an addition only when both operands are `-0.0`).
#[inline(always)]
fn dot(t: &[f64; TERM_COUNT]) -> f64 {
    dot_prefix(t) + FAIR_WEIGHTS[TERM_COUNT - 1] * t[TERM_COUNT - 1]
}

/// [`dot`] without its last step (term 19): `result` after terms 1–18.
#[inline(always)]
fn dot_prefix(t: &[f64; TERM_COUNT]) -> f64 {
    let w = &FAIR_WEIGHTS;
    let mut result =
        ((w[0] * t[0] + w[1] * t[1]) + (w[2] * t[2] + w[3] * t[3])) + (w[4] * t[4] + w[5] * t[5]);
    for k in (6..TERM_COUNT - 1).filter(|&k| k != 16) {
        result += w[k] * t[k];
    }
    result
}

// ---------------------------------------------------------------------------
// Shape cache
// ---------------------------------------------------------------------------

/// Slots of a [`ShapeCache`] (a power of two). An entry is about 1.7 KB
/// (additions as 2-byte [`ADDITION`] indices, no per-cell joint totals);
/// 1,024 slots (about 1.7 MB) miss on about 14% of the partials of a d4s7
/// decision against about 30% with 64 (root 15 of the benchmark roots).
/// With 256 slots cachegrind counts fewer simulated 2 MB-cache misses but
/// more instructions, about 2.5% more modelled cycles in all (root 15).
const SHAPE_SLOTS: usize = 1024;

/// A shape key: columns 2k and 2k + 1 in word k (low and high half), and
/// moves_remaining in the high half of word 3.
type ShapeKey = [u64; 4];

/// The shape of a position: per column word, nibble k = occupied | gray << 1
/// | cracked << 2 of the cell at elevation k + 1 (two columns a word), and
/// moves_remaining. Two positions of one shape have the same heights, runs,
/// grays and rise_pressure: only the numbers in their numbered cells can
/// differ. A zero key is no position's (moves_remaining >= 1). `pairs`:
/// the board's [`Board::word_pairs`].
#[inline(always)]
fn shape_key_of(pairs: [u64; 4], moves_remaining: u8) -> ShapeKey {
    const LOW_BITS: u64 = 0x1111_1111_1111_1111;
    let mut key = pairs.map(|x| {
        let occupied = (x | x >> 1 | x >> 2 | x >> 3) & LOW_BITS;
        let gray = x >> 3 & LOW_BITS;
        let cracked = gray & x;
        occupied | gray << 1 | cracked << 2
    });
    key[3] |= u64::from(moves_remaining) << 32;
    key
}

/// Whether two keys are equal, word by word (no wide loads of a key just
/// built on the stack; see [`Board::word_pairs`]).
#[inline(always)]
fn same_key(a: &[u64; 4], b: &[u64; 4]) -> bool {
    ((a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]) | (a[3] ^ b[3])) == 0
}

/// The slot of a shape key.
#[inline(always)]
fn shape_slot(key: &ShapeKey) -> usize {
    let h = (key[0].wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ key[1])
        .wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
        ^ key[2].wrapping_mul(0x1656_67B1_9E37_79F9)
        ^ key[3];
    // The top log2(SHAPE_SLOTS) bits of the product.
    (h.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - SHAPE_SLOTS.trailing_zeros())) as usize
        & (SHAPE_SLOTS - 1)
}

/// One cached shape: the last board seen of that shape, after the §9.4–§9.5
/// passes, and what depends on the shape alone.
///
/// Laid out for the cache lines a variant touches: the fields before
/// `features` (every variant reads them) share four lines, and `features`
/// starts on a line of its own (see [`Features`]). Entries are 64-byte
/// aligned.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct ShapeEntry {
    /// The shape ([`shape_key_of`]); all zero (no position has it) when unused.
    key: ShapeKey,
    /// The numbered cells whose addition can be non-zero
    /// ([`Features::addition_cells`]) and those that can have a horizontal
    /// and a vertical release ([`Features::release_cells`]), for the board.
    addition_cells: u64,
    /// See `addition_cells`.
    horizontal: u64,
    /// See `addition_cells`.
    vertical: u64,
    /// Functions of the shape: the numbered cells whose horizontal run holds
    /// another numbered cell ([`run_has_other`]), …
    run_other: u64,
    /// … the column heights, horizontal run lengths and grays per column
    /// as bit planes (see [`planes`] and [`column_counts`]), …
    shape_planes: [Planes; 3],
    /// … the exposed grays and those with three or more numbered neighbours
    /// ([`Features::exposed_grays`]), …
    exposed: (u64, u64),
    /// … the cells where a 1 and where a 2 has both runs longer than its
    /// value ([`Features::dead_low_numbers`]), …
    dead: [u64; 2],
    /// … and the shape's terms (see [`ShapeTerms`]).
    shape: ShapeTerms,
    /// The board's partial.
    partial: FairPartial,
    /// direct_potential of the board as a [`Fixed`] sum.
    direct_fixed: Fixed,
    /// cracked_exposure and solid_exposure of the board.
    exposure_sums: [f64; 2],
    /// The board's features after [`Features::compute_releases`]: `addition`
    /// holds its additions, `total` its releases, `exposure` the
    /// contributions of its exposed grays.
    features: Features,
}

// The layout [`ShapeEntry`] and [`Features`] are built for.
const _: () = {
    use std::mem::offset_of;
    assert!(offset_of!(ShapeEntry, features) == 256);
    assert!(offset_of!(Features, total) == 0 && offset_of!(Features, exposure) == 512);
    assert!(offset_of!(Features, addition) == 1024);
};

/// A sum of non-negative doubles `x <= 1.0` kept exactly in fixed point:
/// `Σ x·2^FIXED_BITS` for the terms that are multiples of `2^-FIXED_BITS`,
/// plus [`INEXACT`] for each other term. Terms are added and removed with
/// wrapping integer arithmetic, in any order.
///
/// If the sum is below `2^53` (no inexact term, the real sum below
/// `2^(53 - FIXED_BITS)`), every partial sum of the terms in any order is a
/// multiple of `2^-FIXED_BITS` below `2^(53 - FIXED_BITS)`, so it is a double
/// and every floating-point addition of a row-major walk (`sum = 0.0; sum
/// += x` with all `x >= +0.0`) is exact: the walk's result is the exact
/// sum, which [`Fixed`] gives directly ([`exact_sum`]), bit for bit.
type Fixed = u64;

/// The fixed-point scale of [`Fixed`]: sums below 8.0 are exact.
const FIXED_BITS: u64 = 50;

/// The [`Fixed`] count of one inexact term (above any 49 exact terms,
/// each at most `2^FIXED_BITS`).
const INEXACT: Fixed = 1 << 56;

/// The [`Fixed`] term of `x` (`+0.0 <= x <= 1.0`): `x·2^FIXED_BITS` if that
/// is an integer, else [`INEXACT`] (also for `-0.0` and anything else).
#[inline(always)]
const fn fixed(x: f64) -> Fixed {
    let bits = x.to_bits();
    let mantissa = (bits & ((1 << 52) - 1)) | (1 << 52);
    // x = mantissa · 2^(exponent - 1075), so x·2^FIXED_BITS = mantissa >> shift.
    let shift = (1075 - FIXED_BITS).wrapping_sub(bits >> 52);
    // Branch-free (the terms' exactness is data): `&` on the conditions.
    let clamped = if shift < 63 { shift } else { 63 };
    let exact = (shift < 64) & (mantissa & ((1u64 << clamped) - 1) == 0);
    let value = if exact { mantissa >> clamped } else { INEXACT };
    if bits == 0 { 0 } else { value }
}

/// The double a row-major walk over the terms of the [`Fixed`] sum `sum`
/// gives, if `sum` is exact (see [`Fixed`]).
#[inline(always)]
fn exact_sum(sum: Fixed) -> Option<f64> {
    const SCALE: f64 = 1.0 / (1u64 << FIXED_BITS) as f64;
    (sum < 1 << 53).then_some(sum as i64 as f64 * SCALE)
}

/// The terms of the dot product that depend on the shape alone.
#[derive(Clone, Copy, Debug, Default)]
struct ShapeTerms {
    /// `((w0·t0 + w1·t1) + (w2·t2 + w3·t3)) + w4·t4`: terms 1–5 are integers
    /// with integer weights, so this is exact and adding `w5·t5` to it gives
    /// the first group of [`dot_prefix`] bit for bit (see [`dot`]).
    integer_part: f64,
    /// Term 14.
    covered_height_risk: f64,
    /// Term 16 (danger²).
    danger: f64,
    /// Term 18.
    rise_pressure: f64,
}

/// [`FairLeaf`]'s [`Leaf::Cache`]: the last board seen of each of a few
/// shapes (direct-mapped). The search evaluates many leaves of one shape
/// that differ in a few numbers (the samples of a gray reveal, one column
/// played with different next discs); for those only the additions of the
/// cells whose number changed, and the releases in their rows and columns,
/// are recomputed (the changed cells come from the value bit planes, the
/// masks of the cells that can have an addition or a release are recomputed
/// from them with the shape's planes, branch-free, and the terms that
/// depend on the shape alone are kept). Every
/// per-cell value is the same function of the same
/// inputs and every sum is redone in row-major order, so the partial is
/// bit-identical to [`Leaf::partial`] (tests: `tests/leaf_gate.rs`).
/// Entries are exact, so the cache is never cleared.
#[derive(Clone)]
pub struct ShapeCache {
    slots: Box<[ShapeEntry]>,
    memo: Box<[MemoEntry]>,
    /// 16 bits of the hash of each memo slot's key (8 KB, so that most
    /// misses are known without loading the slot's line; a hit still
    /// compares the whole key, so the tags change no result).
    memo_tags: Box<[u16]>,
    /// Run the partial as code built for POPCNT, BMI1, BMI2 and LZCNT (set
    /// only where the CPU has all four; see [`ShapeCache::baseline`]).
    bit_instructions: bool,
}

/// Slots of a [`ShapeCache`]'s board memo (a power of two; 40 bytes each,
/// plus a 2-byte tag).
const MEMO_SLOTS: usize = 4096;

/// One remembered partial: the exact board and moves_remaining it is of.
/// Many leaves of a decision repeat a board seen a little earlier (a disc
/// that pops on its own leaves the same board in every column and with
/// every disc that does so; two drops in either order): those are answered
/// from the memo.
#[derive(Clone, Copy, Debug, Default)]
struct MemoEntry {
    /// The board's column words, moves_remaining in the top nibble of word
    /// 0 (a column word uses 28 bits); all zero, no position's, when unused.
    key: [u32; SIZE],
    /// [`FairPartial::by_next`].
    by_next: u32,
    /// [`FairPartial::prefix`].
    prefix: f64,
}

/// The memo key of a non-terminal position (`moves_remaining` 1..=5) from
/// its board's [`Board::word_pairs`].
#[inline(always)]
fn memo_key(pairs: [u64; 4], moves_remaining: u8) -> [u64; 4] {
    let mut key = pairs;
    key[0] |= u64::from(moves_remaining) << 28;
    key
}

/// A memo entry's key as the [`memo_key`] it was made from.
#[inline(always)]
fn memo_pairs(key: &[u32; SIZE]) -> [u64; 4] {
    let pair = |i: usize| u64::from(key[i]) | u64::from(key[i + 1]) << 32;
    [pair(0), pair(2), pair(4), u64::from(key[6])]
}

/// The column words of a [`memo_key`] (the memo keeps 28 bytes, not 32).
#[inline(always)]
fn memo_words(key: &[u64; 4]) -> [u32; SIZE] {
    let [a, b, c, d] = *key;
    [a, a >> 32, b, b >> 32, c, c >> 32, d].map(|w| w as u32)
}

/// The memo slot of a key and the slot's tag.
#[inline(always)]
fn memo_slot(key: &[u64; 4]) -> (usize, u16) {
    let h = (key[0].wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ key[1])
        .wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
        ^ key[2].wrapping_mul(0x1656_67B1_9E37_79F9)
        ^ key[3];
    let m = h.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    ((m >> 40) as usize & (MEMO_SLOTS - 1), (m >> 24) as u16)
}

impl Default for ShapeCache {
    fn default() -> ShapeCache {
        let empty = ShapeEntry {
            key: [0; 4],
            features: Features::new(&Board::from_columns([0; SIZE])),
            addition_cells: 0,
            horizontal: 0,
            vertical: 0,
            run_other: 0,
            shape_planes: [[0; 3]; 3],
            exposed: (0, 0),
            dead: [0; 2],
            shape: ShapeTerms::default(),
            partial: FairPartial {
                prefix: 0.0,
                by_next: 0,
                game_over: false,
            },
            direct_fixed: 0,
            exposure_sums: [0.0; 2],
        };
        ShapeCache {
            slots: vec![empty; SHAPE_SLOTS].into_boxed_slice(),
            memo: vec![MemoEntry::default(); MEMO_SLOTS].into_boxed_slice(),
            memo_tags: vec![0; MEMO_SLOTS].into_boxed_slice(),
            bit_instructions: crate::gravity::bit_instructions_detected(),
        }
    }
}

impl std::fmt::Debug for ShapeCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let used = self.slots.iter().filter(|s| s.key != [0; 4]).count();
        write!(
            f,
            "ShapeCache {{ slots: {}, used: {used}, bit_instructions: {} }}",
            self.slots.len(),
            self.bit_instructions
        )
    }
}

impl ShapeCache {
    /// An empty cache that always runs the baseline x86-64 code, even on a
    /// CPU with POPCNT, BMI1, BMI2 and LZCNT (the default uses code built
    /// for them there: the same integer results, fewer instructions). For
    /// tests and comparisons; the partials are the same bit for bit.
    pub fn baseline() -> ShapeCache {
        ShapeCache {
            bit_instructions: false,
            ..ShapeCache::default()
        }
    }

    /// Whether this cache runs the code built for POPCNT, BMI1, BMI2 and
    /// LZCNT (see [`ShapeCache::baseline`]).
    pub fn uses_bit_instructions(&self) -> bool {
        self.bit_instructions
    }

    /// [`FairLeaf`]'s partial of the non-terminal `pos`.
    #[inline]
    fn partial(&mut self, pos: &Position) -> FairPartial {
        #[cfg(target_arch = "x86_64")]
        if self.bit_instructions {
            // SAFETY: `bit_instructions` is only set where
            // `bit_instructions_detected` found all four features.
            return unsafe { self.partial_with_bit_instructions(pos) };
        }
        self.partial_baseline(pos)
    }

    /// [`ShapeCache::partial_body`] built for baseline x86-64 (out of line,
    /// so that [`ShapeCache::partial`] stays a short dispatch without the
    /// body's stack frame).
    #[inline(never)]
    fn partial_baseline(&mut self, pos: &Position) -> FairPartial {
        self.partial_body(pos)
    }

    /// [`ShapeCache::partial_body`] built for POPCNT, BMI1, BMI2 and LZCNT:
    /// `count_ones`, `trailing_zeros` and the shifts and masks of the passes
    /// become single instructions (integer work only: every floating-point
    /// operation is the same, in the same order, and Rust never fuses a
    /// multiply and an add, so the partial is bit-identical).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt,bmi1,bmi2,lzcnt")]
    fn partial_with_bit_instructions(&mut self, pos: &Position) -> FairPartial {
        self.partial_body(pos)
    }

    /// The partial: the board memo, else the shape entry.
    #[inline(always)]
    fn partial_body(&mut self, pos: &Position) -> FairPartial {
        let pairs = pos.board.word_pairs();
        let board_key = memo_key(pairs, pos.moves_remaining);
        let (slot, tag) = memo_slot(&board_key);
        let tag_slot = &mut self.memo_tags[slot];
        let memo = &mut self.memo[slot];
        if *tag_slot == tag && same_key(&memo_pairs(&memo.key), &board_key) {
            return FairPartial {
                prefix: memo.prefix,
                by_next: memo.by_next,
                game_over: false,
            };
        }
        *tag_slot = tag;
        let key = shape_key_of(pairs, pos.moves_remaining);
        let entry = &mut self.slots[shape_slot(&key)];
        let partial = if same_key(&entry.key, &key) {
            entry.variant(&pos.board)
        } else {
            entry.load(key, pos)
        };
        *memo = MemoEntry {
            key: memo_words(&board_key),
            by_next: partial.by_next,
            prefix: partial.prefix,
        };
        partial
    }
}

impl ShapeEntry {
    /// Makes this the entry of `pos` (of shape `key`); returns its partial.
    #[inline(always)]
    fn load(&mut self, key: ShapeKey, pos: &Position) -> FairPartial {
        self.key = key;
        let f = &mut self.features;
        // Back to all zeros: `addition` whole (two cache lines), `total`
        // at the old board's release cells (a variant writes a cell's
        // release only as 0.0 outside them); `exposure` is only ever read
        // at the exposed grays, which the load writes.
        f.addition = [0; 64];
        let mut cells = self.horizontal | self.vertical;
        while cells != 0 {
            f.total[cells.trailing_zeros() as usize & 63] = 0.0;
            cells &= cells - 1;
        }
        f.set_board(&pos.board);
        let covered_height_risk = f.covered_height_risk();
        let rise_pressure = f.rise_pressure(pos.moves_remaining);
        self.addition_cells = f.addition_cells();
        let (direct_potential, direct_fixed) = f.compute_additions();
        self.direct_fixed = direct_fixed;
        (self.horizontal, self.vertical) = f.release_cells();
        let latent_chain_potential = f.compute_releases();
        let exposed = f.exposed_grays();
        f.compute_exposure(exposed.0, exposed.1);
        self.exposed = exposed;
        self.exposure_sums = [
            f.exposure_sum(exposed.0 & f.cracked),
            f.exposure_sum(exposed.0 & !f.cracked),
        ];
        self.run_other = run_has_other(f.num, f.occ);
        self.dead = f.dead_masks();
        self.shape_planes = [
            planes(&f.height_at_least),
            planes(&f.run_at_least),
            column_counts(f.gray),
        ];
        let t = f.terms_from(
            [
                covered_height_risk,
                rise_pressure,
                direct_potential,
                latent_chain_potential,
            ],
            Some(self.exposure_sums),
            0,
        );
        let w = &FAIR_WEIGHTS;
        self.shape = ShapeTerms {
            integer_part: ((w[0] * t[0] + w[1] * t[1]) + (w[2] * t[2] + w[3] * t[3])) + w[4] * t[4],
            covered_height_risk,
            danger: t[15],
            rise_pressure,
        };
        let partial = FairPartial {
            prefix: dot_prefix(&t),
            by_next: f.by_next(),
            game_over: false,
        };
        self.partial = partial;
        partial
    }

    /// Makes this the entry of `board`, of this entry's shape; returns its
    /// partial.
    #[inline(always)]
    fn variant(&mut self, board: &Board) -> FairPartial {
        let f = &mut self.features;
        let words = board.columns();
        // The cells whose number changed (same shape: the numbered cells,
        // grays and empty cells are the same), from the value bit planes.
        let [p0, p1, p2, _] = bit_planes(words);
        let num = f.num;
        let value = [p0 & num, p1 & num, p2 & num];
        let changed = (value[0] ^ f.value[0]) | (value[1] ^ f.value[1]) | (value[2] ^ f.value[2]);
        if changed == 0 {
            return self.partial;
        }
        f.cols[..SIZE].copy_from_slice(words);
        f.value = value;
        f.ones = num & p0 & !(p1 | p2);
        f.twos = num & p1 & !(p0 | p2);
        // §9.4: an addition is a function of the cell's number and the
        // shape, so only the changed cells' additions change (for a cell
        // outside `addition_cells` `addition_index` is 0, the exact 0.0 the
        // passes leave there); the masks of the cells that
        // can have an addition or a release are those of
        // [`Features::addition_cells`] and [`Features::release_cells`] with
        // the shape's planes kept.
        let [heights, runs, grays] = &self.shape_planes;
        let old_release_cells = self.horizontal | self.vertical;
        // (`b > a` is `!(a > b | a == b)`: one bit-sliced pass per pair.)
        let (above_height, height_eq) = compare(&value, heights);
        let (above_run, run_eq) = compare(&value, runs);
        self.addition_cells = above_height | above_run;
        self.horizontal = !(above_run | run_eq) & self.run_other;
        self.vertical = num & !(above_height | height_eq) & greater(&value, grays);
        // direct_potential as a `Fixed` sum over all cells (the additions
        // outside `addition_cells` are 0): the changed cells' old terms out,
        // their new ones in.
        let mut direct_fixed = self.direct_fixed;
        // The changed cells whose addition changed (often a changed number
        // keeps an addition of 0.0), and the runs (the occupied cells
        // joined to the cell in its row, from [`RUN`]) through them.
        let (mut add_changed, mut run_cells) = (0u64, 0u64);
        let mut cells = changed;
        while cells != 0 {
            let i = cells.trailing_zeros();
            cells &= cells - 1;
            let index = f.addition_index(i);
            let old = std::mem::replace(&mut f.addition[i as usize & 63], index);
            let moved = u64::from(old != index);
            add_changed |= moved << i;
            let (s, t) = f.hrun(i);
            run_cells |= (u64::from(span(s, t)) << (8 * (i / 8))) & moved.wrapping_neg();
            direct_fixed = direct_fixed
                .wrapping_sub(ADDITION_FIXED[usize::from(old) & 511])
                .wrapping_add(ADDITION_FIXED[usize::from(index) & 511]);
        }
        self.direct_fixed = direct_fixed;
        // The releases to redo: the changed cells' own (a release reads
        // the cell's number; the masks of the cells that can have one
        // change only at changed cells), and those that read a changed
        // addition: the horizontal ones in its run, the vertical ones in
        // its column. Every other release reads the same numbers, masks
        // and additions as before, so it is the same value.
        let mut columns = add_changed | add_changed >> 32;
        columns |= columns >> 16;
        columns |= columns >> 8;
        let columns = (columns & 0x7F).wrapping_mul(COLUMN_0);
        let stale = changed | (run_cells & self.horizontal) | (columns & self.vertical);
        // `total` is 0.0 outside the release cells (see `load`), and the
        // release of a cell outside the new ones is 0.0: a stale cell in
        // neither the old nor the new release cells keeps its 0.0.
        let stale = stale & (old_release_cells | self.horizontal | self.vertical);
        let (addition_cells, horizontal, vertical) =
            (self.addition_cells, self.horizontal, self.vertical);
        let direct_potential = exact_sum(direct_fixed).unwrap_or_else(|| {
            let mut sum = 0.0;
            let mut cells = addition_cells;
            while cells != 0 {
                let i = cells.trailing_zeros() as usize & 63;
                cells &= cells - 1;
                sum += f.addition(i);
            }
            sum
        });
        // §9.5: a release reads the cell's number and the additions of the
        // other numbered cells of its run (horizontal) and column
        // (vertical): only the changed cells and the `stale` ones can change.
        let release_cells = horizontal | vertical;
        // (`release_at` of a cell outside `release_cells` is `union(0.0,
        // 0.0)`, the exact 0.0 the passes leave there.)
        // `touched`: the cells whose addition or release changed (bit
        // patterns), the only ones whose §9.8 total can differ.
        let mut touched = add_changed;
        let mut cells = stale;
        while cells != 0 {
            let i = cells.trailing_zeros();
            cells &= cells - 1;
            let release = f.release_at(i, horizontal, vertical);
            let old = std::mem::replace(&mut f.total[i as usize & 63], release);
            touched |= u64::from(old.to_bits() != release.to_bits()) << i;
        }
        let mut latent_chain_potential = 0.0;
        let mut cells = release_cells;
        while cells != 0 {
            let i = cells.trailing_zeros() as usize & 63;
            cells &= cells - 1;
            latent_chain_potential += f.total[i];
        }
        let joint = touched & f.next_to_gray();
        // §9.8: a gray's exposure reads the joint totals of its neighbours
        // (a function of their additions and releases); a kind's sum
        // changes only if some exposure of that kind changes.
        let (exposed, three_or_more) = self.exposed;
        let near = (joint << 8) | (joint >> 8) | (joint << 1) | (joint >> 1);
        let renewed = exposed & near;
        if renewed != 0 {
            let [cracked_differ, solid_differ] = f.compute_exposure(renewed, three_or_more);
            if cracked_differ {
                self.exposure_sums[0] = f.exposure_sum(exposed & f.cracked);
            }
            if solid_differ {
                self.exposure_sums[1] = f.exposure_sum(exposed & !f.cracked);
            }
        }
        let [cracked_exposure, solid_exposure] = self.exposure_sums;
        // dot_prefix over the terms, with the shape's ones kept (see
        // `ShapeTerms`).
        let w = &FAIR_WEIGHTS;
        let s = &self.shape;
        let lows = f.ones | f.twos;
        let mut result = s.integer_part + w[5] * f64::from(count(lows & 0x00FF_FFFF));
        result += w[6] * direct_potential;
        result += w[7] * latent_chain_potential;
        result += w[8] * cracked_exposure;
        result += w[9] * solid_exposure;
        result += w[10] * f.adjacent_ones();
        result += w[11] * f.triple_twos();
        result += w[12] * f.dead_low_sum((f.ones & self.dead[0]) | (f.twos & self.dead[1]));
        result += w[13] * s.covered_height_risk;
        result += w[14] * f64::from(low_number_height_risk(lows));
        result += w[15] * s.danger;
        result += w[17] * s.rise_pressure;
        // Returned from registers: a copy of `self.partial` read back right
        // after this store would wait for it (see [`Board::word_pairs`]).
        self.partial.prefix = result;
        FairPartial {
            prefix: result,
            by_next: self.partial.by_next,
            game_over: false,
        }
    }
}

// ---------------------------------------------------------------------------
// Constant tables (search.md §10)
// ---------------------------------------------------------------------------

/// One bit per row at column 0 of the row-major bitboard.
const COLUMN_0: u64 = 0x0001_0101_0101_0101;
/// The 49 cell bits of the row-major bitboard.
const ALL_CELLS: u64 = 0x007F_7F7F_7F7F_7F7F;
/// 1 in every byte: multiplying by it sums bytes upwards (prefix sums).
const BYTES_ONES: u64 = 0x0101_0101_0101_0101;

/// `READY[cost]` = readiness(cost) = 2^(1 - cost) for cost >= 1, and
/// `READY[0] = 0.0` (search.md §9.2). Exact powers of two; costs are < 50.
const READY: [f64; 64] = {
    let mut t = [0.0; 64];
    let mut cost = 1;
    while cost < 64 {
        t[cost] = f64::from_bits((1024 - cost as u64) << 52);
        cost += 1;
    }
    t
};

/// `ADDITION[8 * a + b]` = `union(READY[a], READY[b])`: the §9.4 addition
/// of a cell whose horizontal and vertical additions are `READY[a]` and
/// `READY[b]`, by the same operations as [`union`] (a compile-time IEEE
/// evaluation rounds like the run-time one), so bit-identical to them.
const ADDITION: [f64; 512] = {
    let mut t = [0.0; 512];
    let mut k = 0;
    while k < 512 {
        t[k] = union(READY[k / 8], READY[k % 8]);
        k += 1;
    }
    t
};

/// `ADDITION_FIXED[k]` = `fixed(ADDITION[k])`.
const ADDITION_FIXED: [Fixed; 512] = {
    let mut t = [0; 512];
    let mut k = 0;
    while k < 512 {
        t[k] = fixed(ADDITION[k]);
        k += 1;
    }
    t
};

/// `RUN[line][p]` = `start | end << 4`: the maximal run of set bits of the
/// 7-bit line occupancy `line` through position `p` (0 if `p` is clear).
const RUN: [[u8; 8]; 128] = {
    let mut t = [[0u8; 8]; 128];
    let mut line = 0;
    while line < 128 {
        let mut p = 0;
        while p < SIZE {
            if line >> p & 1 == 1 {
                let mut start = p;
                while start > 0 && line >> (start - 1) & 1 == 1 {
                    start -= 1;
                }
                let mut end = p;
                while end < SIZE - 1 && line >> (end + 1) & 1 == 1 {
                    end += 1;
                }
                t[line][p] = (start | end << 4) as u8;
            }
            p += 1;
        }
        line += 1;
    }
    t
};

/// `POPCOUNT[line]`: set bits of a 7-bit line (the baseline x86-64 target
/// has no popcnt instruction).
const POPCOUNT: [u8; 128] = {
    let mut t = [0u8; 128];
    let mut line = 0;
    while line < 128 {
        t[line] = (line as u32).count_ones() as u8;
        line += 1;
    }
    t
};

/// `COVER_RISK[cracked][bit]`: the covered_height_risk term of a gray at a
/// cell bit: solid `e²·m`, cracked `(e²·m)·0.72`, `m = 1.65` on columns 0 and
/// 6, else 1 (search.md §9.1; the same roundings, evaluated at compile time).
const COVER_RISK: [[f64; 64]; 2] = {
    let mut t = [[0.0; 64]; 2];
    let mut bit = 0;
    while bit < 64 {
        let (row, col) = (bit / 8, bit % 8);
        if row < SIZE && col < SIZE {
            let e = (SIZE - row) as i32;
            let m = if col == 0 || col == SIZE - 1 {
                1.65
            } else {
                1.0
            };
            t[0][bit] = (e * e) as f64 * m;
            t[1][bit] = ((e * e) as f64 * m) * 0.72;
        }
        bit += 1;
    }
    t
};

/// `RISE[moves - 1][h]` = `h³ / moves`, one true division (search.md §9.1).
const RISE: [[f64; 8]; 5] = {
    let mut t = [[0.0; 8]; 5];
    let mut m = 0;
    while m < 5 {
        let mut h = 0;
        while h < 8 {
            t[m][h] = (h * h * h) as f64 / (m + 1) as f64;
            h += 1;
        }
        m += 1;
    }
    t
};

/// `SQUARES_UP_TO[h]` = Σ_{e=1..h} e²: the height_load of a column of height h.
const SQUARES_UP_TO: [u32; 8] = [0, 1, 5, 14, 30, 55, 91, 140];

/// `LOW_RISK[row]` = `max(0, e - 2)²` with `e = 7 - row`: the
/// low_number_height_risk of a 1 or 2 in that row.
const LOW_RISK: [u32; 7] = [25, 16, 9, 4, 1, 0, 0];

// ---------------------------------------------------------------------------
// Bit and float helpers
// ---------------------------------------------------------------------------

/// Delta swap: exchanges the bits of `a` selected by `mask << shift` with the
/// bits of `b` selected by `mask`.
#[inline(always)]
fn delta_swap(a: &mut u64, b: &mut u64, shift: u32, mask: u64) {
    let t = ((*a >> shift) ^ *b) & mask;
    *a ^= t << shift;
    *b ^= t;
}

/// Interleaves the low and high 32-bit halves nibble by nibble: byte k of
/// the result = nibble k of the low half | nibble k of the high half << 4.
#[inline(always)]
fn zip_nibbles(mut x: u64) -> u64 {
    for (shift, mask) in [
        (16, 0x0000_0000_FFFF_0000u64),
        (8, 0x0000_FF00_0000_FF00),
        (4, 0x00F0_00F0_00F0_00F0),
    ] {
        let t = (x ^ (x >> shift)) & mask;
        x ^= t ^ (t << shift);
    }
    x
}

/// The four bit planes of the board as row-major bitboards: `planes[j]` has
/// bit `8*row + col` set iff bit `j` of the cell code at (row, col) is set.
///
/// Columns c and c + 4 share a u64 (low / high half); a 4×4 bit transpose
/// inside every nibble turns "nibble = one cell code" into "nibble = one
/// plane of four columns"; zipping the halves gives a byte per elevation,
/// and a byte swap puts the top row first.
#[inline(always)]
fn bit_planes(cols: &[u32; SIZE]) -> [u64; 4] {
    let pair = |i: usize| u64::from(cols[i]) | cols.get(i + 4).map_or(0, |&w| u64::from(w) << 32);
    let [mut a0, mut a1, mut a2, mut a3] = [pair(0), pair(1), pair(2), pair(3)];
    delta_swap(&mut a0, &mut a2, 2, 0x3333_3333_3333_3333);
    delta_swap(&mut a1, &mut a3, 2, 0x3333_3333_3333_3333);
    delta_swap(&mut a0, &mut a1, 1, 0x5555_5555_5555_5555);
    delta_swap(&mut a2, &mut a3, 1, 0x5555_5555_5555_5555);
    // Byte k is elevation k + 1 = row 6 - k; byte 7 is empty.
    [a0, a1, a2, a3].map(|a| zip_nibbles(a).swap_bytes() >> 8)
}

/// Number of set bits of a bitboard.
#[inline(always)]
fn count(x: u64) -> u32 {
    x.count_ones()
}

/// Number of set bits of the low 7 bits of `line`.
#[inline(always)]
fn count_line(line: u32) -> u32 {
    u32::from(POPCOUNT[line as usize & 0x7F])
}

/// Number of set bytes of a word whose bytes are 0 or 1.
#[inline(always)]
fn count_bytes(x: u64) -> u32 {
    (x.wrapping_mul(BYTES_ONES) >> 56) as u32
}

/// The bits `lo..=hi` of a 7-bit line (`lo <= hi <= 6`).
#[inline(always)]
fn span(lo: u32, hi: u32) -> u32 {
    (2u32 << hi) - (1u32 << lo)
}

/// `union(a, b) = 1 - (1 - a)(1 - b)`, in exactly this order (search.md §9.2).
#[inline(always)]
const fn union(a: f64, b: f64) -> f64 {
    1.0 - (1.0 - a) * (1.0 - b)
}

/// `a < b ? b : a`, the reference's `std::max` (no NaNs occur).
#[inline(always)]
fn max(a: f64, b: f64) -> f64 {
    if a < b { b } else { a }
}

/// Compare-exchange on the bit patterns of non-negative doubles, which order
/// like the values (no -0.0 or NaN occurs): afterwards `s[i] >= s[j]`.
/// Integer min/max compile to conditional moves, not branches.
#[inline(always)]
fn order(s: &mut [u64], i: usize, j: usize) {
    let (a, b) = (s[i], s[j]);
    s[i] = a.max(b);
    s[j] = a.min(b);
}

/// Sorts the first seven entries descending (a 16-comparator network).
#[inline(always)]
fn sort7_desc(s: &mut [u64; 8]) {
    const NETWORK: [(usize, usize); 16] = [
        (0, 6),
        (2, 3),
        (4, 5),
        (0, 2),
        (1, 4),
        (3, 6),
        (0, 1),
        (2, 5),
        (3, 4),
        (1, 2),
        (4, 6),
        (2, 3),
        (4, 5),
        (1, 2),
        (3, 4),
        (5, 6),
    ];
    for (i, j) in NETWORK {
        order(s, i, j);
    }
}

/// Sorts four entries descending (a 5-comparator network).
#[inline(always)]
fn sort4_desc(s: &mut [u64; 4]) {
    for (i, j) in [(0, 1), (2, 3), (0, 2), (1, 3), (1, 2)] {
        order(s, i, j);
    }
}

/// The largest and second largest of four bit patterns (with multiplicity).
#[inline(always)]
fn top_two([a, b, c, d]: [u64; 4]) -> (u64, u64) {
    let (hi1, lo1) = (a.max(b), a.min(b));
    let (hi2, lo2) = (c.max(d), c.min(d));
    (hi1.max(hi2), hi1.min(hi2).max(lo1.max(lo2)))
}

/// §9.8 `Π (1 - s)` over the supports `s`, multiplied in descending order.
#[cold]
fn sorted_inverse(s: [f64; 4]) -> f64 {
    let mut bits = s.map(f64::to_bits);
    sort4_desc(&mut bits);
    bits.iter()
        .fold(1.0, |inverse, &b| inverse * (1.0 - f64::from_bits(b)))
}

// ---------------------------------------------------------------------------
// Whole-board masks
// ---------------------------------------------------------------------------

/// A per-cell number 0..=7 as three bitboards: `planes[j]` holds its bit j.
type Planes = [u64; 3];

/// `at_least[k]`: the cells of every column of height >= k (the column's
/// cell at elevation k is occupied), k = 0..=8.
#[inline(always)]
fn height_masks(occ: u64) -> [u64; 9] {
    std::array::from_fn(|k| match k {
        0 => ALL_CELLS,
        8 => 0,
        _ => ((occ >> (8 * (7 - k))) & 0x7F).wrapping_mul(COLUMN_0),
    })
}

/// `at_least[k]`: the occupied cells in a horizontal run of length >= k,
/// k = 0..=8 (windows never cross rows: bit 7 of every row byte is clear).
// Indexed on purpose: LLVM unrolls this form completely; the `iter_mut`
// form clippy suggests measured about 20 ns per leaf slower.
#[allow(clippy::needless_range_loop)]
#[inline(always)]
fn run_masks(occ: u64) -> [u64; 9] {
    let mut masks = [0u64; 9];
    masks[0] = ALL_CELLS;
    let mut starts = occ; // first cells of all-occupied windows of length k
    for k in 1..8 {
        if k > 1 {
            starts &= occ >> (k - 1);
        }
        let mut cover = starts;
        for j in 1..k {
            cover |= starts << j;
        }
        masks[k] = cover;
    }
    masks
}

/// The bit planes of a per-cell number given as nested masks `at_least[k]`
/// (the cells whose number is >= k, k = 0..=8).
#[inline(always)]
fn planes(at_least: &[u64; 9]) -> Planes {
    let exactly = |k: usize| at_least[k] & !at_least[k + 1];
    [
        exactly(1) | exactly(3) | exactly(5) | exactly(7),
        exactly(2) | exactly(3) | at_least[6],
        at_least[4],
    ]
}

/// The cells where the number `a` exceeds the number `b` (a bit-sliced
/// comparison, most significant plane first).
#[inline(always)]
fn greater(a: &Planes, b: &Planes) -> u64 {
    compare(a, b).0
}

/// The cells where the number `a` exceeds the number `b`, and those where
/// they are equal (a bit-sliced comparison, most significant plane first).
#[inline(always)]
fn compare(a: &Planes, b: &Planes) -> (u64, u64) {
    let mut gt = 0;
    let mut eq = !0;
    for j in (0..3).rev() {
        gt |= eq & a[j] & !b[j];
        eq &= !(a[j] ^ b[j]);
    }
    (gt, eq)
}

/// Per cell, how many cells of `cells` its column holds, as bit planes: the
/// seven row bytes are summed column-wise with carry-save adders and the
/// three sum bits broadcast to every row.
#[inline(always)]
fn column_counts(cells: u64) -> Planes {
    let row = |r: u32| cells >> (8 * r) & 0x7F;
    let full_add = |a: u64, b: u64, c: u64| (a ^ b ^ c, (a & b) | (c & (a ^ b)));
    let (s1, c1) = full_add(row(0), row(1), row(2));
    let (s2, c2) = full_add(row(3), row(4), row(5));
    let (b0, c3) = full_add(s1, s2, row(6));
    let (b1, b2) = full_add(c1, c2, c3);
    [b0, b1, b2].map(|m| m.wrapping_mul(COLUMN_0))
}

/// The numbered cells whose horizontal run holds another numbered cell.
#[inline(always)]
fn run_has_other(num: u64, occ: u64) -> u64 {
    let (mut from_left, mut from_right) = ((num << 1) & occ, (num >> 1) & occ);
    for _ in 1..SIZE - 1 {
        from_left |= (from_left << 1) & occ;
        from_right |= (from_right >> 1) & occ;
    }
    num & (from_left | from_right)
}

/// Bits 0, 8, …, 48 of `x` gathered into bits 0..=6 (one column of a
/// row-major bitboard, top row in bit 0).
#[inline(always)]
fn column_line(x: u64) -> u32 {
    let mut line = 0;
    for row in 0..SIZE {
        line |= ((x >> (8 * row)) as u32 & 1) << row;
    }
    line
}

/// The valid §9.4 window starts for a `v`-disc whose horizontal run, in a row
/// with occupancy `occ`, is `[s, t]`: bit `a` set iff the window `[a, a+v-1]`
/// fits the board, contains the run, and has no occupied outside neighbour.
/// None unless `v` exceeds the run length.
#[inline(always)]
fn window_starts(occ: u32, s: u32, t: u32, v: u32) -> u32 {
    let lo = (t + 1).saturating_sub(v);
    let hi = s.min(7 - v);
    let range = ((2u32 << hi) - 1) & !((1u32 << lo) - 1);
    let longer = if v > t - s + 1 { 0x7F } else { 0 };
    range & !(occ << 1) & !(occ >> v) & longer
}

/// §9.1 low_number_height_risk of the 1s and 2s `lows`: Σ max(0, e - 2)².
#[inline(always)]
fn low_number_height_risk(lows: u64) -> u32 {
    let mut sum = 0;
    for (row, &w) in LOW_RISK.iter().enumerate().take(5) {
        sum += w * count_line((lows >> (8 * row)) as u32);
    }
    sum
}

// ---------------------------------------------------------------------------
// The evaluator
// ---------------------------------------------------------------------------

/// Bitboard views of one board and the per-cell values of §9.4–§9.5.
///
/// 64-byte aligned with the per-cell arrays first, so that every row of
/// `total` and of `exposure` (8 doubles) is one cache line and `addition`
/// two lines: a neighbourhood read touches as few lines as it can.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct Features {
    /// §9.5 `release` by bit index (0.0 where
    /// [`Features::compute_releases`] writes nothing, again exactly). The
    /// indices of no cell (bit 7 of a row byte, byte 7) stay 0.0 in both
    /// arrays: they stand in for the missing neighbours of edge cells,
    /// `(i ± 1) & 63` and `(i ± 8) & 63`.
    total: [f64; 64],
    /// §9.8 contribution of each exposed gray (written by
    /// [`Features::compute_exposure`]; only the shape cache uses it).
    exposure: [f64; 64],
    /// §9.4 `addition` by bit index, as an index into [`ADDITION`]; 0
    /// (0.0) where [`Features::compute_additions`] writes nothing (there it
    /// is exactly 0).
    addition: [u16; 64],
    /// Column words (nibble k = elevation k + 1); a zero eighth column lets
    /// `i % 8` index it without a bounds check.
    cols: [u32; 8],
    /// Column heights (eighth entry 0).
    h: [u32; 8],
    /// Heights as bytes: byte c = h[c].
    h_bytes: u64,
    /// Occupied cells.
    occ: u64,
    /// Numbered cells (1..=7).
    num: u64,
    /// Gray cells (8 and 9).
    gray: u64,
    /// Cracked grays (9).
    cracked: u64,
    /// The numbered cells' values as bit planes.
    value: Planes,
    /// Cells equal to 1.
    ones: u64,
    /// Cells equal to 2.
    twos: u64,
    /// `height_at_least[k]`: cells whose column has height >= k (0..=8).
    height_at_least: [u64; 9],
    /// `run_at_least[k]`: occupied cells whose horizontal run is >= k long.
    run_at_least: [u64; 9],
}

impl Features {
    /// Derives the bitboards of `board`.
    #[inline(always)]
    fn new(board: &Board) -> Features {
        let mut f = Features {
            cols: [0; 8],
            h: [0; 8],
            h_bytes: 0,
            occ: 0,
            num: 0,
            gray: 0,
            cracked: 0,
            value: [0; 3],
            ones: 0,
            twos: 0,
            height_at_least: [0; 9],
            run_at_least: [0; 9],
            addition: [0; 64],
            total: [0.0; 64],
            exposure: [0.0; 64],
        };
        f.set_board(board);
        f
    }

    /// Derives the bitboards of `board` into `self`, leaving the per-cell
    /// arrays as they are.
    #[inline(always)]
    fn set_board(&mut self, board: &Board) {
        let words = board.columns();
        let cols: [u32; 8] = std::array::from_fn(|c| words.get(c).copied().unwrap_or(0));
        let h = cols.map(word_height);
        let mut h_bytes = 0u64;
        for (c, &hc) in h.iter().enumerate() {
            h_bytes |= u64::from(hc) << (8 * c);
        }
        let [p0, p1, p2, p3] = bit_planes(words);
        let occ = p0 | p1 | p2 | p3;
        let num = occ & !p3;
        self.cols = cols;
        self.h = h;
        self.h_bytes = h_bytes;
        self.occ = occ;
        self.num = num;
        self.gray = p3;
        self.cracked = p3 & p0;
        self.value = [p0 & num, p1 & num, p2 & num];
        self.ones = num & p0 & !(p1 | p2);
        self.twos = num & p1 & !(p0 | p2);
        self.height_at_least = height_masks(occ);
        self.run_at_least = run_masks(occ);
    }

    /// All 19 features in dot-product order.
    #[inline(always)]
    fn terms(mut self, next_disc: u8, moves_remaining: u8) -> [f64; TERM_COUNT] {
        // The floating-point chains that depend on nothing else come first,
        // so that they overlap the integer work of the passes.
        let covered_height_risk = self.covered_height_risk();
        let rise_pressure = self.rise_pressure(moves_remaining);
        let (direct_potential, _) = self.compute_additions();
        let latent_chain_potential = self.compute_releases();
        self.terms_from(
            [
                covered_height_risk,
                rise_pressure,
                direct_potential,
                latent_chain_potential,
            ],
            None,
            next_disc,
        )
    }

    /// `next_disc_vertical_options` for every next disc 1..=7 (index 0 unused).
    #[inline(always)]
    fn by_next(&self) -> u32 {
        let mut by_next = 0;
        for n in 1..=7 {
            by_next |= self.columns_of_height(n - 1) << (4 * n);
        }
        by_next
    }

    /// The 19 features once covered_height_risk, rise_pressure,
    /// direct_potential and latent_chain_potential are known (`addition`
    /// and `total` hold the additions and releases).
    #[inline(always)]
    fn terms_from(
        &self,
        [
            covered_height_risk,
            rise_pressure,
            direct_potential,
            latent_chain_potential,
        ]: [f64; 4],
        exposures: Option<[f64; 2]>,
        next_disc: u8,
    ) -> [f64; TERM_COUNT] {
        let dead_low_numbers = self.dead_low_numbers();
        let [cracked_exposure, solid_exposure] = match exposures {
            Some(sums) => sums,
            None => {
                let exposed = self.exposed_grays();
                [self.cracked_exposure(exposed), self.solid_exposure(exposed)]
            }
        };
        let h = &self.h[..SIZE];
        let grays = count(self.gray);
        let cracked = count(self.cracked);
        let occupied: u32 = h.iter().sum();
        let lows = self.ones | self.twos;
        // The tallest column reaches the first occupied row from the top.
        let max_h = 7 - (self.occ | 1 << 56).trailing_zeros() / 8;
        let danger = max_h.saturating_sub(4);
        [
            f64::from(SIZE as u32 - count_line(self.occ as u32)),
            f64::from(
                h.iter()
                    .map(|&hc| SQUARES_UP_TO[hc as usize & 7])
                    .sum::<u32>(),
            ),
            f64::from(grays - cracked),
            f64::from(cracked),
            f64::from(occupied - grays),
            f64::from(count(lows & 0x00FF_FFFF)),
            direct_potential,
            latent_chain_potential,
            cracked_exposure,
            solid_exposure,
            self.adjacent_ones(),
            self.triple_twos(),
            dead_low_numbers,
            covered_height_risk,
            f64::from(low_number_height_risk(lows)),
            f64::from(danger * danger),
            f64::from((1..SIZE).map(|c| h[c].abs_diff(h[c - 1])).sum::<u32>()),
            rise_pressure,
            f64::from(self.columns_of_height(u32::from(next_disc).wrapping_sub(1))),
        ]
    }

    // -- §9.1 ------------------------------------------------------------------

    /// §9.1 covered_height_risk: row-major over the grays.
    #[inline(always)]
    fn covered_height_risk(&self) -> f64 {
        let mut sum = 0.0;
        let mut cells = self.gray;
        while cells != 0 {
            let i = cells.trailing_zeros();
            cells &= cells - 1;
            let cracked = (self.cracked >> i & 1) as usize;
            sum += COVER_RISK[cracked][i as usize];
        }
        sum
    }

    /// §9.1 rise_pressure: `Σ_c h³ / moves_remaining`, columns in order.
    #[inline(always)]
    fn rise_pressure(&self, moves_remaining: u8) -> f64 {
        let rise = &RISE[usize::from(moves_remaining) - 1];
        self.h[..SIZE]
            .iter()
            .fold(0.0, |acc, &hc| acc + rise[hc as usize & 7])
    }

    /// The number of columns of height exactly `k` (0 unless `k < 7`). With
    /// `k = next_disc - 1`: next_disc_vertical_options (§9.1).
    #[inline(always)]
    fn columns_of_height(&self, k: u32) -> u32 {
        if k >= 7 {
            return 0;
        }
        let at_least = &self.height_at_least;
        let k = k as usize;
        count_line((at_least[k] & !at_least[k + 1]) as u32)
    }

    // -- Cells -----------------------------------------------------------------

    /// The cell code at bit `i`.
    #[inline(always)]
    fn code(&self, i: u32) -> u32 {
        let (row, col) = (i / 8, i % 8);
        (self.cols[col as usize] >> (4 * (6 - row))) & 0xF
    }

    /// The 7-bit occupancy of row `row`.
    #[inline(always)]
    fn row_occ(&self, row: u32) -> u32 {
        (self.occ >> (8 * row)) as u32 & 0x7F
    }

    /// (start, end) columns of the horizontal run through the occupied cell
    /// at bit `i` (§9.3).
    #[inline(always)]
    fn hrun(&self, i: u32) -> (u32, u32) {
        let packed = RUN[self.row_occ(i / 8) as usize][(i % 8) as usize];
        (u32::from(packed & 0xF), u32::from(packed >> 4))
    }

    // -- §9.4 additions --------------------------------------------------------

    /// §9.4 `vertical_addition` of a disc valued `v` at bit `i`.
    #[inline(always)]
    fn vertical_addition(&self, i: u32, v: u32) -> f64 {
        READY[self.vertical_cost(i, v)]
    }

    /// The [`READY`] index of [`Features::vertical_addition`]: `v` minus the
    /// column height, at least 0 (at most 7).
    #[inline(always)]
    fn vertical_cost(&self, i: u32, v: u32) -> usize {
        v.saturating_sub(self.h[(i % 8) as usize]) as usize & 7
    }

    /// §9.4 `horizontal_addition` of a disc valued `v` at bit `i`: the
    /// readiness of the cheapest valid window, 0.0 if there is none.
    #[inline(always)]
    fn horizontal_addition(&self, i: u32, v: u32) -> f64 {
        READY[self.horizontal_cost(i, v)]
    }

    /// The [`READY`] index of [`Features::horizontal_addition`]: the cost of
    /// the cheapest valid window, 0 if there is none (at most 49).
    #[inline(always)]
    fn horizontal_cost(&self, i: u32, v: u32) -> usize {
        let row = i / 8;
        let (s, t) = self.hrun(i);
        let windows = window_starts(self.row_occ(row), s, t, v);
        self.min_window_cost(row, windows, v) & 63
    }

    /// The least cost of the `v`-cell windows starting at the set bits of
    /// `windows` in row `row`, 0 if there are none. A window's cost is the
    /// sum of its columns' deficits `max(0, e - h[c])` (§9.4), a difference of
    /// two bytes of the deficit prefix sums, and is at least 1, so 0
    /// (readiness 0.0) can mean "no window".
    ///
    /// Branch-free for the usual zero or one candidate: byte 7 of `costs`
    /// (never a window start) is 0 and stands in for "none".
    #[inline(always)]
    fn min_window_cost(&self, row: u32, windows: u32, v: u32) -> usize {
        let prefix = self.deficit_prefix(7 - row);
        // Byte a = prefix[a + v - 1] - prefix[a - 1] for every window start a
        // with a + v <= 7 (no borrows reach those bytes).
        let costs = (prefix >> (8 * (v - 1))).wrapping_sub(prefix << 8) & 0x00FF_FFFF_FFFF_FFFF;
        let cost_at = |a: u32| (costs >> (8 * (a & 7))) as u8 as usize;
        let mut best = cost_at((windows | 0x80).trailing_zeros());
        let mut rest = windows & windows.wrapping_sub(1);
        while rest != 0 {
            best = best.min(cost_at(rest.trailing_zeros()));
            rest &= rest - 1;
        }
        best
    }

    /// Prefix sums of the deficits at elevation `e`: byte c =
    /// Σ_{c' <= c} max(0, e - h[c']) (at most 49: no carries between bytes).
    #[inline(always)]
    fn deficit_prefix(&self, e: u32) -> u64 {
        // Byte c: 128 + e - h[c] (121..=135, no borrows); its high bit says e >= h[c].
        let biased = ((u64::from(e) * BYTES_ONES) | 0x8080_8080_8080_8080) - self.h_bytes;
        let high = biased & 0x0080_8080_8080_8080; // columns 0..=6 only
        let deficits = biased & (high - (high >> 7));
        deficits.wrapping_mul(BYTES_ONES)
    }

    /// §9.4 pass: the `addition` of every numbered cell whose value exceeds
    /// its column height or its run length (for the others both components
    /// are 0, so the addition is exactly 0). Returns direct_potential, their
    /// row-major sum (adding the skipped +0.0s changes nothing), and the
    /// same sum as a [`Fixed`] (for the shape cache).
    #[inline(always)]
    fn compute_additions(&mut self) -> (f64, Fixed) {
        let (mut direct_potential, mut direct_fixed) = (0.0, 0);
        let mut cells = self.addition_cells();
        while cells != 0 {
            let i = cells.trailing_zeros();
            cells &= cells - 1;
            let index = self.addition_index(i);
            self.addition[i as usize & 63] = index;
            direct_potential += ADDITION[usize::from(index) & 511];
            direct_fixed += ADDITION_FIXED[usize::from(index) & 511];
        }
        (direct_potential, direct_fixed)
    }

    /// The numbered cells whose value exceeds their column height or their
    /// run length: the only ones whose §9.4 addition can be non-zero.
    #[inline(always)]
    fn addition_cells(&self) -> u64 {
        let v = &self.value;
        let vertical = greater(v, &planes(&self.height_at_least));
        let horizontal = greater(v, &planes(&self.run_at_least));
        vertical | horizontal
    }

    /// §9.4 `addition` of the numbered cell at bit `i` as an [`ADDITION`]
    /// index: `8 * hc + vc` with `READY[hc]` its horizontal_addition and
    /// `READY[vc]` its vertical_addition (`hc` <= 49, `vc` = `v - h` <= 7).
    #[inline(always)]
    fn addition_index(&self, i: u32) -> u16 {
        let v = self.code(i);
        ((self.horizontal_cost(i, v) * 8) | self.vertical_cost(i, v)) as u16
    }

    /// The §9.4 `addition` recorded at bit `i` (see [`Features::addition`]).
    #[inline(always)]
    fn addition(&self, i: usize) -> f64 {
        ADDITION[usize::from(self.addition[i & 63]) & 511]
    }

    // -- §9.5 releases ---------------------------------------------------------

    /// `releaseReadiness(excess, support)` (§9.5) when
    /// `1 <= excess <= |support|`: the `excess`-th largest addition of the
    /// cells of `support`, times `readiness(excess)`. `support` lies in one
    /// line: the cells `first + p * step`, p in 0..7.
    ///
    /// Excess 3 or more, branch-free: the line's seven additions, 0.0 for
    /// cells outside `support`, go through a sorting network. The padding zeros are no
    /// larger than any addition (all are >= +0.0), so the `excess`-th largest
    /// is unchanged.
    #[inline(always)]
    fn release_readiness(&self, excess: u32, support: u64, first: u32, step: u32) -> f64 {
        // The usual excess 1 and 2: the largest and second largest
        // addition of the support, walked directly (the same value the
        // network selects: bit patterns of non-negative doubles order like
        // the values, and `support` has at least `excess` cells).
        if excess <= 2 {
            let (mut largest, mut second) = (0u64, 0u64);
            let mut cells = support;
            while cells != 0 {
                let x = self.addition(cells.trailing_zeros() as usize).to_bits();
                cells &= cells - 1;
                second = second.max(largest.min(x));
                largest = largest.max(x);
            }
            let kth = if excess == 1 { largest } else { second };
            return f64::from_bits(kth) * READY[excess as usize & 63];
        }
        let mut vals = [0u64; 8];
        for (p, val) in vals.iter_mut().enumerate().take(SIZE) {
            let cell = (first + p as u32 * step) & 63;
            let keep = (support >> cell & 1).wrapping_neg();
            *val = self.addition(cell as usize).to_bits() & keep;
        }
        sort7_desc(&mut vals);
        let k = excess as usize;
        f64::from_bits(vals[(k - 1) & 7]) * READY[k & 63]
    }

    /// §9.5 `horizontal_release` of a disc valued `v` at bit `i`.
    #[inline(always)]
    fn horizontal_release(&self, i: u32, v: u32) -> f64 {
        let (row, col) = (i / 8, i % 8);
        let (s, t) = self.hrun(i);
        let excess = (t - s + 1).saturating_sub(v);
        let line = (self.num >> (8 * row)) as u32 & span(s, t) & !(1 << col);
        // Zero unless 1 <= excess <= support count.
        if excess.wrapping_sub(1) >= count_line(line) {
            return 0.0;
        }
        self.release_readiness(excess, u64::from(line) << (8 * row), 8 * row, 1)
    }

    /// §9.5 `vertical_release` of a disc valued `v` at bit `i` (a column's run
    /// is the whole column: columns are bottom-packed).
    #[inline(always)]
    fn vertical_release(&self, i: u32, v: u32) -> f64 {
        let col = i % 8;
        let excess = self.h[col as usize].saturating_sub(v);
        let support = self.num & (COLUMN_0 << col) & !(1u64 << i);
        // Zero unless 1 <= excess <= support count.
        if excess.wrapping_sub(1) >= count_bytes(support >> col) {
            return 0.0;
        }
        self.release_readiness(excess, support, col, 8)
    }

    /// §9.5 pass: the `release` of every numbered cell that can have one: a
    /// horizontal run longer than the value holding another numbered cell,
    /// or a column taller than the value with fewer grays than the value
    /// (`h > v > grays` <=> `1 <= h - v <= numbered others`). The others are
    /// exactly 0. Returns latent_chain_potential, their row-major sum.
    #[inline(always)]
    fn compute_releases(&mut self) -> f64 {
        let (horizontal, vertical) = self.release_cells();
        let mut latent = 0.0;
        let mut cells = horizontal | vertical;
        while cells != 0 {
            let i = cells.trailing_zeros();
            cells &= cells - 1;
            let release = self.release_at(i, horizontal, vertical);
            self.total[i as usize & 63] = release;
            latent += release;
        }
        latent
    }

    /// The numbered cells that can have a horizontal and a vertical
    /// release (see [`Features::compute_releases`]).
    #[inline(always)]
    fn release_cells(&self) -> (u64, u64) {
        let (num, v) = (self.num, &self.value);
        let runs = planes(&self.run_at_least);
        let horizontal = num & greater(&runs, v) & run_has_other(num, self.occ);
        let heights = planes(&self.height_at_least);
        let vertical = num & greater(&heights, v) & greater(v, &column_counts(self.gray));
        (horizontal, vertical)
    }

    /// §9.5 `release` of the numbered cell at bit `i` (`addition` must hold
    /// the additions of its row and column).
    #[inline(always)]
    fn release_at(&self, i: u32, horizontal: u64, vertical: u64) -> f64 {
        let v = self.code(i);
        let hr = if horizontal >> i & 1 == 1 {
            self.horizontal_release(i, v)
        } else {
            0.0
        };
        let vr = if vertical >> i & 1 == 1 {
            self.vertical_release(i, v)
        } else {
            0.0
        };
        union(hr, vr)
    }

    /// §9.5 dead_low_numbers: row-major over the 1s and 2s whose horizontal
    /// and vertical runs are both longer than their value, `1 - total`.
    #[inline(always)]
    fn dead_low_numbers(&self) -> f64 {
        let [one, two] = self.dead_masks();
        self.dead_low_sum((self.ones & one) | (self.twos & two))
    }

    /// The cells where a 1 and where a 2 would be a dead low number (both
    /// runs longer than the value): functions of the shape alone.
    #[inline(always)]
    fn dead_masks(&self) -> [u64; 2] {
        let (len, high) = (&self.run_at_least, &self.height_at_least);
        [len[2] & high[2], len[3] & high[3]]
    }

    /// The §9.5 dead_low_numbers sum over `cells` (its 1s and 2s), row-major.
    #[inline(always)]
    fn dead_low_sum(&self, mut cells: u64) -> f64 {
        let mut sum = 0.0;
        while cells != 0 {
            let p = cells.trailing_zeros() as usize & 63;
            cells &= cells - 1;
            sum += 1.0 - union(self.addition(p), self.total[p]);
        }
        sum
    }

    // -- §9.6–§9.7 (rare: only with adjacent 1s or three 2s in a row) ----------

    /// `union(vertical_addition, vertical_release)` of the numbered cell `i`.
    #[inline]
    fn vertical_escape(&self, i: u32) -> f64 {
        let v = self.code(i);
        union(self.vertical_addition(i, v), self.vertical_release(i, v))
    }

    /// `union(horizontal_addition, horizontal_release)` of the numbered cell `i`.
    #[inline]
    fn horizontal_escape(&self, i: u32) -> f64 {
        let v = self.code(i);
        union(
            self.horizontal_addition(i, v),
            self.horizontal_release(i, v),
        )
    }

    /// §9.6 adjacent_ones: row-major over the 1s, right pair then lower pair.
    #[inline(always)]
    fn adjacent_ones(&self) -> f64 {
        let ones = self.ones;
        let right_pairs = ones & (ones >> 1);
        let lower_pairs = ones & (ones >> 8);
        if right_pairs | lower_pairs == 0 {
            return 0.0;
        }
        self.adjacent_ones_walk(right_pairs, lower_pairs)
    }

    /// The §9.6 walk over the cells that start a pair of adjacent 1s (out of
    /// line: about a third of the leaves have such a pair).
    #[inline(never)]
    fn adjacent_ones_walk(&self, right_pairs: u64, lower_pairs: u64) -> f64 {
        let mut cells = right_pairs | lower_pairs;
        let mut sum = 0.0;
        while cells != 0 {
            let i = cells.trailing_zeros();
            cells &= cells - 1;
            if right_pairs >> i & 1 == 1 {
                sum += 1.0 - max(self.vertical_escape(i), self.vertical_escape(i + 1));
            }
            if lower_pairs >> i & 1 == 1 {
                sum += 1.0 - max(self.horizontal_escape(i), self.horizontal_escape(i + 8));
            }
        }
        sum
    }

    /// §9.7 triple_twos: runs of three or more 2s, rows first (top row first,
    /// runs left to right), then columns (left first, runs top to bottom).
    #[inline(always)]
    fn triple_twos(&self) -> f64 {
        let twos = self.twos;
        let row_triple = twos & (twos >> 1) & (twos >> 2);
        let column_triple = twos & (twos >> 8) & (twos >> 16);
        if row_triple | column_triple == 0 {
            return 0.0;
        }
        self.triple_twos_walk()
    }

    /// The general §9.7 walk over every row and column.
    #[cold]
    fn triple_twos_walk(&self) -> f64 {
        let twos = self.twos;
        let mut sum = 0.0;
        for row in 0..SIZE as u32 {
            let line = (twos >> (8 * row)) as u32 & 0x7F;
            sum = self.add_twos_runs(sum, line, |p| 8 * row + p, Self::vertical_escape);
        }
        for col in 0..SIZE as u32 {
            let line = column_line(twos >> col);
            sum = self.add_twos_runs(sum, line, |p| 8 * p + col, Self::horizontal_escape);
        }
        sum
    }

    /// Adds `excess² · (1 - escape)` to `sum` for every run of three or more
    /// set bits of the 7-bit `line`, in order; `cell(p)` maps a line position
    /// to a bit, `escape_of` gives a cell's cross-direction escape.
    fn add_twos_runs(
        &self,
        mut sum: f64,
        line: u32,
        cell: impl Fn(u32) -> u32,
        escape_of: fn(&Features, u32) -> f64,
    ) -> f64 {
        let mut rest = line;
        while rest != 0 {
            let start = rest.trailing_zeros();
            let len = (!(rest >> start)).trailing_zeros();
            rest &= !span(start, start + len - 1);
            if len < 3 {
                continue;
            }
            let escape = (start..start + len).fold(0.0, |m, p| max(m, escape_of(self, cell(p))));
            let excess = len - 2;
            sum += f64::from(excess * excess) * (1.0 - escape);
        }
        sum
    }

    // -- §9.8 cover exposure ---------------------------------------------------

    /// The grays with at least one numbered neighbour (§9.8: the others add
    /// exactly zero), and those among them with three or more.
    #[inline(always)]
    fn exposed_grays(&self) -> (u64, u64) {
        let num = self.num;
        let (up, down, left, right) = (num << 8, num >> 8, num << 1, num >> 1);
        let exposed = self.gray & (up | down | left | right) & ALL_CELLS;
        let three_or_more = (up & down & (left | right)) | (left & right & (up | down));
        (exposed, exposed & three_or_more)
    }

    /// The totals `union(addition, release)` of the four neighbours of cell
    /// `i` (up, down, left, right), 0.0 for missing or non-numbered ones
    /// (`addition` and `total` are 0.0 there, see [`Features::total`], and
    /// `union(0.0, 0.0)` is `+0.0`). As
    /// §9.8 supports the extra zeros change nothing: they sort last, a factor
    /// `1 - 0.0` is exactly 1, a term `0.0 * w` is +0.0, and adding +0.0 to a
    /// non-negative sum changes nothing.
    #[inline(always)]
    fn neighbour_totals(&self, i: usize) -> [f64; 4] {
        [i.wrapping_sub(8), i + 8, i.wrapping_sub(1), i + 1]
            .map(|j| union(self.addition(j), self.total[j & 63]))
    }

    /// The numbered cells next to a gray.
    #[inline(always)]
    fn next_to_gray(&self) -> u64 {
        let gray = self.gray;
        self.num & ((gray << 8) | (gray >> 8) | (gray << 1) | (gray >> 1))
    }

    /// §9.8 cracked_exposure: row-major over the exposed cracked grays,
    /// `1 - Π (1 - s)` over the supports in descending order. The order only
    /// matters with three or more numbered neighbours: with at most two
    /// factors other than exactly 1.0 every order rounds the same
    /// (multiplication commutes and multiplying by 1.0 is exact).
    #[inline(always)]
    fn cracked_exposure(&self, (exposed, three_or_more): (u64, u64)) -> f64 {
        let mut sum = 0.0;
        let mut grays = exposed & self.cracked;
        while grays != 0 {
            let i = grays.trailing_zeros() as usize;
            grays &= grays - 1;
            let s = self.neighbour_totals(i);
            let inverse = if three_or_more >> i & 1 == 1 {
                sorted_inverse(s)
            } else {
                (((1.0 - s[0]) * (1.0 - s[1])) * (1.0 - s[2])) * (1.0 - s[3])
            };
            sum += 1.0 - inverse;
        }
        sum
    }

    /// The §9.8 contribution of each gray of `grays` (exposed ones) into
    /// `exposure`: cracked as in [`Features::cracked_exposure`], solid as in
    /// [`Features::solid_exposure`] (the same expressions). Whether some
    /// cracked and whether some solid contribution changed (bit patterns).
    ///
    /// The cracked and the solid grays are two walks: each cell's value is
    /// independent of the others (nothing is summed here), so the order is
    /// free, and a gray's kind is no branch to mispredict.
    #[inline(always)]
    fn compute_exposure(&mut self, grays: u64, three_or_more: u64) -> [bool; 2] {
        let mut differ = 0;
        let mut cracked = grays & self.cracked;
        while cracked != 0 {
            let i = cracked.trailing_zeros() as usize & 63;
            cracked &= cracked - 1;
            let s = self.neighbour_totals(i);
            let inverse = if three_or_more >> i & 1 == 1 {
                sorted_inverse(s)
            } else {
                (((1.0 - s[0]) * (1.0 - s[1])) * (1.0 - s[2])) * (1.0 - s[3])
            };
            let x = (1.0 - inverse).to_bits();
            differ |= std::mem::replace(&mut self.exposure[i], f64::from_bits(x)).to_bits() ^ x;
        }
        let cracked_differ = differ != 0;
        differ = 0;
        let mut solid = grays & !self.cracked;
        while solid != 0 {
            let i = solid.trailing_zeros() as usize & 63;
            solid &= solid - 1;
            let (first, second) = top_two(self.neighbour_totals(i).map(f64::to_bits));
            let x = (f64::from_bits(first) * 0.35 + f64::from_bits(second) * 0.65).to_bits();
            differ |= std::mem::replace(&mut self.exposure[i], f64::from_bits(x)).to_bits() ^ x;
        }
        [cracked_differ, differ != 0]
    }

    /// The row-major sum of the contributions of the exposed grays `grays`:
    /// with the exposed cracked (solid) grays, cracked_exposure
    /// (solid_exposure), the spec's walk over every gray less the skipped
    /// grays' `+0.0`s.
    #[inline(always)]
    fn exposure_sum(&self, mut grays: u64) -> f64 {
        let mut sum = 0.0;
        while grays != 0 {
            let i = grays.trailing_zeros() as usize & 63;
            grays &= grays - 1;
            sum += self.exposure[i];
        }
        sum
    }

    /// §9.8 solid_exposure: row-major over the exposed solid grays, the
    /// largest support × 0.35 + the second largest × 0.65 (frozen weights).
    #[inline(always)]
    fn solid_exposure(&self, (exposed, _): (u64, u64)) -> f64 {
        let mut sum = 0.0;
        let mut grays = exposed & !self.cracked;
        while grays != 0 {
            let i = grays.trailing_zeros() as usize;
            grays &= grays - 1;
            let (first, second) = top_two(self.neighbour_totals(i).map(f64::to_bits));
            sum += f64::from_bits(first) * 0.35 + f64::from_bits(second) * 0.65;
        }
        sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables() {
        assert_eq!(READY[0], 0.0);
        assert_eq!(READY[1], 1.0);
        assert_eq!(READY[7], 1.0 / 64.0);
        for (k, &a) in ADDITION.iter().enumerate() {
            let (x, y) = std::hint::black_box((READY[k / 8], READY[k % 8]));
            assert_eq!(a.to_bits(), (1.0 - (1.0 - x) * (1.0 - y)).to_bits(), "{k}");
        }
        assert_eq!(RUN[0b0110110][4], 4 | 5 << 4);
        assert_eq!(RUN[0b0110110][1], 1 | 2 << 4);
        assert_eq!(RUN[0b1111111][0], 6 << 4);
        assert_eq!(RISE[2][3], 9.0);
        assert_eq!(POPCOUNT[0b1011001], 4);
        for (h, &s) in SQUARES_UP_TO.iter().enumerate() {
            assert_eq!(s, (1..=h as u32).map(|e| e * e).sum::<u32>());
        }
    }

    #[test]
    fn fixed_terms_and_sums() {
        assert_eq!(fixed(0.0), 0);
        assert_eq!(fixed(1.0), 1 << FIXED_BITS);
        assert_eq!(fixed(0.75), 3 << (FIXED_BITS - 2));
        assert_eq!(fixed(READY[50]), 1 << 1);
        assert_eq!(fixed(READY[51]), 1);
        assert_eq!(fixed(READY[52]), INEXACT);
        assert_eq!(fixed(1.0 + f64::EPSILON), INEXACT);
        assert_eq!(fixed(0.1), INEXACT);
        assert_eq!(fixed(-0.0), INEXACT);
        assert_eq!(fixed(f64::MIN_POSITIVE / 2.0), INEXACT);
        for (k, &a) in ADDITION.iter().enumerate() {
            let f = ADDITION_FIXED[k];
            assert!(
                f == INEXACT || a * (1u64 << FIXED_BITS) as f64 == f as f64,
                "{k}"
            );
        }
        // Exact sums are the walk's, in any order; 8.0 and up are not taken.
        let terms = [0.75, 0.5, 0.125, 1.0, READY[40], 1.0, 1.0, 1.0];
        let walk = terms.iter().fold(0.0, |s, &x| s + x);
        let sum = terms.iter().map(|&x| fixed(x)).sum();
        assert_eq!(exact_sum(sum), Some(walk));
        assert_eq!(exact_sum(sum + 3 * fixed(1.0)), None);
        assert_eq!(exact_sum(fixed(0.5) + INEXACT), None);
        assert_eq!(exact_sum(0).map(f64::to_bits), Some(0));
    }

    #[test]
    fn sorting_networks_sort() {
        // 0-1 principle: a comparator network sorts every input iff it sorts
        // every 0/1 input.
        for bits in 0u32..128 {
            let mut s = [0; 8];
            for (p, x) in s.iter_mut().enumerate().take(7) {
                *x = u64::from(bits >> p & 1);
            }
            sort7_desc(&mut s);
            assert!(s[..7].windows(2).all(|w| w[0] >= w[1]), "{bits:07b}: {s:?}");
        }
        for bits in 0u32..16 {
            let mut s: [u64; 4] = std::array::from_fn(|p| u64::from(bits >> p & 1));
            sort4_desc(&mut s);
            assert!(s.windows(2).all(|w| w[0] >= w[1]), "{bits:04b}: {s:?}");
        }
        assert_eq!(top_two([3, 9, 9, 1]), (9, 9));
        assert_eq!(top_two([3, 1, 7, 5]), (7, 5));
    }

    #[test]
    fn planes_transpose_the_board() {
        let b: Board = "0000000000000100000730000967400012345678912345678"
            .parse()
            .unwrap();
        let planes = bit_planes(b.columns());
        for row in 0..SIZE {
            for col in 0..SIZE {
                let bit = 8 * row + col;
                let code: u8 = (0..4).map(|j| ((planes[j] >> bit & 1) as u8) << j).sum();
                assert_eq!(code, b.cell(row, col), "row {row} col {col}");
            }
        }
        assert_eq!(planes.iter().fold(0, |a, p| a | p) & !ALL_CELLS, 0);
    }

    /// The per-cell number whose nested masks or bit planes are given.
    fn number_at(planes: &Planes, bit: usize) -> u32 {
        (0..3).map(|j| ((planes[j] >> bit & 1) as u32) << j).sum()
    }

    #[test]
    fn masks_match_heights_runs_and_values() {
        let b = crate::board![
            "0000000", "0000000", "0000000", "0000080", "0300070", "1900011", "8888888",
        ];
        let f = Features::new(&b);
        assert_eq!(&f.h[..SIZE], &[2, 3, 1, 1, 1, 4, 2]);
        let (heights, runs) = (planes(&f.height_at_least), planes(&f.run_at_least));
        let grays = column_counts(f.gray);
        let (above_height, above_run) = (greater(&f.value, &heights), greater(&f.value, &runs));
        for row in 0..SIZE {
            for col in 0..SIZE {
                let bit = 8 * row + col;
                let code = u32::from(b.cell(row, col));
                assert_eq!(number_at(&heights, bit), f.h[col], "height at {row},{col}");
                let len = if code == 0 {
                    0
                } else {
                    let (s, t) = f.hrun(bit as u32);
                    t - s + 1
                };
                assert_eq!(number_at(&runs, bit), len, "run at {row},{col}");
                let g = (0..SIZE).filter(|&r| b.cell(r, col) >= 8).count() as u32;
                assert_eq!(number_at(&grays, bit), g, "grays at {row},{col}");
                let v = if (1..=7).contains(&code) { code } else { 0 };
                assert_eq!(number_at(&f.value, bit), v, "value at {row},{col}");
                assert_eq!(
                    above_height >> bit & 1 == 1,
                    v > f.h[col],
                    "v > h at {row},{col}"
                );
                assert_eq!(above_run >> bit & 1 == 1, v > len, "v > run at {row},{col}");
            }
        }
    }

    #[test]
    fn deficits_and_windows() {
        let b = crate::board![
            "0000000", "0000000", "0000000", "0000000", "0000070", "1000011", "8888888",
        ];
        let f = Features::new(&b);
        assert_eq!(&f.h[..SIZE], &[2, 1, 1, 1, 1, 3, 2]);
        for e in 1..=7 {
            let p = f.deficit_prefix(e);
            let mut sum = 0;
            for c in 0..SIZE {
                sum += e.saturating_sub(f.h[c]);
                assert_eq!(u32::from((p >> (8 * c)) as u8), sum, "e {e} c {c}");
            }
        }
        // The 1 at row 5, column 0 (run [0, 0]): a 3 there would need windows
        // [0, 2] (column 3 is empty at elevation 2) costing 2.
        assert_eq!(window_starts(0b1100001, 0, 0, 3), 0b1);
        assert_eq!(f.min_window_cost(5, 0b1, 3), 2);
        assert_eq!(f.min_window_cost(5, 0, 3), 0);
        assert_eq!(window_starts(0b1100001, 0, 0, 1), 0);
    }
}

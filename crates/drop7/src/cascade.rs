//! The cascade (chain resolution), one wave at a time on the packed board
//! (spec: rules.md §5).
//!
//! Everything is SWAR over the seven column words, one nibble a cell:
//!
//! * **Poppers.** A numbered cell pops when its value equals the length of the
//!   run of occupied cells through it in its row or its column. Columns are
//!   bottom-packed, so a column run is the column's height. Row runs come from
//!   two prefix sweeps over the columns: `left[c] = (left[c-1] + 1) & occ[c]`
//!   counts, per nibble, the occupied cells ending at column c; `right` likewise
//!   from the other side; `run = left + right - 1` on occupied nibbles. Nibbles
//!   never overflow (a run is at most 7, `left + right` at most 14).
//! * **Cover hits.** The popper indicator words shifted up, down, left and right
//!   are added nibble-wise (at most 4 hits, no carries), giving every covered
//!   cell's hit count for the whole board at once.
//! * **Reveals** take their values from the [`DiscSource`] in ascending
//!   row-major order (top row first, then column order), before gravity.
//! * **Gravity** runs only on columns that lost a cell, and takes out just
//!   the popped nibbles ([`Gravity::remove`]).
//! * **Column pairs.** Poppers are found on columns c and 6 − c packed in
//!   one `u64` (column 3 in both halves), two columns a step. (Cover hits on
//!   pairs measured 3% more instructions a move: packing costs more than it
//!   saves there.)
//! * **Settled boards.** The first wave of a move looks for poppers only
//!   where the drop changed a run; the first wave after a rise only compares
//!   cells with their column's new height.
//!
//! * **Paused reveals.** [`resolve_until_reveal`] runs a cascade up to the
//!   first wave that reveals a gray and plays that wave as far as it goes
//!   without the values (pops, cracks, the fall, the other cells' next
//!   poppers); [`resume`] then finishes it for one source of reveal values. The
//!   search's chance nodes play the draw-free part once for all their samples
//!   ([`crate::game::begin_move`], [`crate::game::finish_move`]). When other
//!   cells pop in the next wave, that wave is played ahead too, for the
//!   sources whose revealed values pop nowhere in it (`WaveAhead`).
//!
//! Waves go to a caller-supplied [`WaveSink`], so the move path never allocates.

use crate::board::{Board, CELLS, NIBBLE_ONES, SIZE, nonzero_nibbles, word_height, zero_nibbles};
use crate::gravity::{Gravity, PLAIN, built_copies};
use crate::rng::DiscSource;

/// One wave of a cascade (the trace's `waves` entries).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Wave {
    /// Chain depth of the wave (1 for the first wave of a drop).
    pub depth: u32,
    /// Number of poppers removed.
    pub cleared: u32,
    /// Number of gray discs revealed.
    pub revealed: u32,
    /// Points scored: `cleared * floor(7 * depth^2.5)`.
    pub points: u64,
}

/// Receives each wave as it is resolved.
pub trait WaveSink {
    /// Called once per wave, in order.
    fn push(&mut self, wave: Wave);
}

impl WaveSink for () {
    #[inline(always)]
    fn push(&mut self, _wave: Wave) {}
}

impl WaveSink for Vec<Wave> {
    #[inline]
    fn push(&mut self, wave: Wave) {
        Vec::push(self, wave);
    }
}

/// Running per-game wave statistics, without storing waves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WaveStats {
    /// Waves seen.
    pub waves: u64,
    /// Gray discs revealed.
    pub reveals: u64,
    /// Deepest wave depth.
    pub max_depth: u32,
}

impl WaveSink for WaveStats {
    #[inline]
    fn push(&mut self, wave: Wave) {
        self.waves += 1;
        self.reveals += u64::from(wave.revealed);
        self.max_depth = self.max_depth.max(wave.depth);
    }
}

const fn isqrt(n: u64) -> u64 {
    // Binary search; const-evaluated once per table entry.
    let mut lo = 0u64;
    let mut hi = 1u64 << 32;
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if mid * mid <= n {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Number of entries of [`WAVE_POINTS`]; deeper waves (never seen in play)
/// are computed on the fly.
pub const WAVE_TABLE_LEN: usize = 1024;

/// `WAVE_POINTS[d] = floor(7 * d^2.5) = isqrt(49 * d^5)` for `d < 1024`
/// (rules.md §5: 7, 39, 109, 224, 391, …).
pub static WAVE_POINTS: [u64; WAVE_TABLE_LEN] = {
    let mut t = [0u64; WAVE_TABLE_LEN];
    let mut d = 1;
    while d < WAVE_TABLE_LEN {
        let d5 = (d as u64) * (d as u64) * (d as u64) * (d as u64) * (d as u64);
        t[d] = isqrt(49 * d5);
        d += 1;
    }
    t
};

/// Points per popper at chain depth `depth` (`floor(7 * depth^2.5)`).
#[inline(always)]
pub fn wave_points(depth: u32) -> u64 {
    match WAVE_POINTS.get(depth as usize) {
        Some(&p) => p,
        None => deep_wave_points(depth),
    }
}

/// [`wave_points`] past the table (never reached in play): out of line, so
/// that the wave loops that inline [`wave_points`] stay small in the
/// instruction cache.
#[cold]
#[inline(never)]
fn deep_wave_points(depth: u32) -> u64 {
    let d = u128::from(depth);
    let n = 49 * d * d * d * d * d;
    // floor(sqrt(n)) with an exact integer correction.
    let mut r = (n as f64).sqrt() as u128;
    while r * r > n {
        r -= 1;
    }
    while (r + 1) * (r + 1) <= n {
        r += 1;
    }
    r as u64
}

/// Result of resolving one cascade.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CascadeResult {
    /// Sum of the waves' points.
    pub points: u64,
    /// Number of waves.
    pub waves: u32,
}

/// One bit at the bottom of every nibble of both halves of a column pair.
const PAIR_ONES: u64 = 0x0111_1111_0111_1111;
/// The low three bits of every nibble of both halves of a column pair.
const PAIR_LOW_THREE: u64 = 0x0777_7777_0777_7777;

/// [`nonzero_nibbles`] on both 28-bit halves of a column pair at once (no
/// carry crosses a nibble, so none reaches the other half).
#[inline(always)]
const fn pair_nonzero(x: u64) -> u64 {
    ((((x & PAIR_LOW_THREE) + PAIR_LOW_THREE) | x) & (PAIR_ONES << 3)) >> 3
}

/// `HEIGHT_ONES[w.leading_zeros()]` = `word_height(w) * NIBBLE_ONES`: the
/// height of a bottom-packed column word in every nibble.
const HEIGHT_ONES: [u32; 33] = {
    let mut t = [0u32; 33];
    let mut lz = 0;
    while lz <= 32 {
        t[lz] = word_height(if lz == 32 { 0 } else { 1u32 << (31 - lz) }) * NIBBLE_ONES;
        lz += 1;
    }
    t
};

/// Popper indicator words (bit `4i` of word c = cell at elevation i+1 of column c pops).
///
/// Columns c and 6 − c share a `u64` (low and high half; column 3 fills
/// both), so every per-cell step runs on two columns at once. The row runs'
/// two prefix sweeps run in one pass too: the low halves sweep left to
/// right (columns 0..=6) while the high halves sweep right to left, so step
/// `j` holds `left[j] | right[6 - j] << 32`, and `left[c] + right[c]` for
/// the pair (c, 6 − c) is step c plus step 6 − c with its halves swapped.
#[inline(always)]
fn poppers(cols: &[u32; SIZE]) -> [u32; SIZE] {
    // The row runs are dropped unused (inlined: not computed).
    poppers_and_runs(cols).0
}

/// [`poppers`] and the row runs it finds on the way: the run of occupied
/// cells through every occupied cell in its row (nibble words, 0 on empty
/// cells). A paused wave needs both for the same board.
#[inline(always)]
fn poppers_and_runs(cols: &[u32; SIZE]) -> ([u32; SIZE], [u32; SIZE]) {
    let pair = |k: usize| u64::from(cols[k]) | u64::from(cols[SIZE - 1 - k]) << 32;
    let words = [pair(0), pair(1), pair(2), pair(3)];
    let ones = words.map(pair_nonzero);
    let occ = ones.map(|o| o * 0xF);
    let step_occ = [
        occ[0],
        occ[1],
        occ[2],
        occ[3],
        occ[2].rotate_left(32),
        occ[1].rotate_left(32),
        occ[0].rotate_left(32),
    ];
    let mut sweep = [0u64; SIZE];
    let mut acc = 0u64;
    for (s, &o) in sweep.iter_mut().zip(&step_occ) {
        acc = (acc + PAIR_ONES) & o;
        *s = acc;
    }
    let mut out = [0u32; SIZE];
    let mut runs = [0u32; SIZE];
    for k in 0..4 {
        let w = words[k];
        // On empty cells both sweeps and `ones` are 0: the run is 0.
        let run = sweep[k] + sweep[SIZE - 1 - k].rotate_left(32) - ones[k];
        runs[SIZE - 1 - k] = (run >> 32) as u32;
        runs[k] = run as u32;
        let vertical = u64::from(HEIGHT_ONES[cols[k].leading_zeros() as usize])
            | u64::from(HEIGHT_ONES[cols[SIZE - 1 - k].leading_zeros() as usize]) << 32;
        let numbered = ones[k] & !(w >> 3);
        // Equal to the row run or to the height: not (both differ). On a
        // numbered cell both sides are below 8, so their xor is its low three
        // bits: adding 7 to them sets bit 3 iff they differ (no carry leaves
        // the nibble). Bits the shift brings down from the next nibble
        // meet only zeros of `numbered`.
        let differ = (((w ^ run) & PAIR_LOW_THREE) + PAIR_LOW_THREE)
            & (((w ^ vertical) & PAIR_LOW_THREE) + PAIR_LOW_THREE);
        let pops = numbered & !(differ >> 3);
        out[SIZE - 1 - k] = (pops >> 32) as u32;
        out[k] = pops as u32;
    }
    (out, runs)
}

/// Poppers right after a rise of a settled board: every row keeps its
/// occupancy (so its runs), one row higher, and the new bottom row is gray;
/// only the heights grew, so a numbered cell pops iff it equals its column's
/// new height.
#[inline(always)]
fn poppers_after_rise(cols: &[u32; SIZE]) -> [u32; SIZE] {
    let mut out = [0u32; SIZE];
    for c in 0..SIZE {
        let w = cols[c];
        let numbered = nonzero_nibbles(w) & !(w >> 3);
        out[c] = numbered & zero_nibbles(w ^ HEIGHT_ONES[w.leading_zeros() as usize]);
    }
    out
}

/// Number of set indicator bits (one per nibble) in seven column words,
/// without a popcount instruction (not in the x86-64 baseline): nibble-wise
/// sums (at most 7 a nibble), then bytes (at most 14), then one multiply.
#[inline(always)]
fn count_indicators(words: &[u32; SIZE]) -> u32 {
    let nibbles: u32 = words.iter().sum();
    let bytes = (nibbles & 0x0F0F_0F0F) + ((nibbles >> 4) & 0x0F0F_0F0F);
    bytes.wrapping_mul(0x0101_0101) >> 24
}

/// Whether no cell of `board` would pop: the state every board is in between
/// moves of a real game.
#[inline]
pub fn is_settled(board: &Board) -> bool {
    poppers(board.columns()).iter().all(|&p| p == 0)
}

/// The first wave's poppers in the column a disc was just dropped on (its
/// numbered cells equal to its new height), the other columns empty, and
/// that height: the part [`poppers_after_drop`] and
/// [`poppers_after_drop_walk`] share.
#[inline(always)]
fn dropped_column_poppers(cols: &[u32; SIZE], column: usize) -> ([u32; SIZE], u32) {
    let w = cols[column];
    let h = word_height(w);
    let numbered = nonzero_nibbles(w) & !(w >> 3);
    let poppers = numbered & zero_nibbles(w ^ (h * NIBBLE_ONES));
    // Selected, not stored at `out[column]`: read back as a whole right
    // after, a one-word store into the array would stall the wide load.
    let out = std::array::from_fn(|c| if c == column { poppers } else { 0 });
    (out, h)
}

/// First-wave poppers after a disc landed on top of `column` of a board that
/// was settled before the drop: only the dropped column's cells (their column
/// run grew) and the cells of the run through the new disc in its row (their
/// row run grew) can pop; every other cell's runs are unchanged. The search's
/// move prefix ([`resolve_until_reveal`]) uses this branch-free version.
#[inline(always)]
fn poppers_after_drop(cols: &[u32; SIZE], column: usize) -> [u32; SIZE] {
    let (mut out, h) = dropped_column_poppers(cols, column);
    // The run through the new disc (elevation h, nibble h - 1) in its row.
    let shift = 4 * (h - 1);
    // The row through the new disc, one nibble a column (nibble c = the
    // cell of column c at elevation h), gathered once; the run through
    // `column` then comes from bit tricks instead of walks to its ends
    // (data-dependent loops that mispredicted often).
    let mut row = 0u32;
    for (c, &wc) in cols.iter().enumerate() {
        row |= ((wc >> shift) & 0xF) << (4 * c);
    }
    // Empty cells of the row as indicator bits, column c at bit 4(c + 1),
    // with sentinels for the walls (bit 0: column -1, bit 32: column 7).
    let gaps = (u64::from(zero_nibbles(row)) << 4) | 1 | 1 << 32;
    let at = 4 * (column as u32 + 1);
    // Occupied columns from `column` up and down, itself included.
    let up = (gaps >> at).trailing_zeros() / 4;
    let down = (gaps << (63 - at)).leading_zeros() / 4;
    let run = up + down - 1;
    let first = 4 * (column as u32 + 1 - down);
    let in_run = (((1u64 << (4 * run)) - 1) << first) as u32 & NIBBLE_ONES;
    // Cells of the run equal to its length (rarely any).
    let hits = zero_nibbles(row ^ (run * NIBBLE_ONES)) & in_run;
    if hits != 0 {
        for (c, o) in out.iter_mut().enumerate() {
            *o |= ((hits >> (4 * c)) & 1) << shift;
        }
    }
    out
}

/// [`poppers_after_drop`] walking from the new disc to the ends of its row
/// run: the game move's version ([`resolve_after_drop`], the engine path).
/// Fewer instructions; its branches mispredict more, which costs more in the
/// search's move prefix than in whole games.
#[inline(always)]
fn poppers_after_drop_walk(cols: &[u32; SIZE], column: usize) -> [u32; SIZE] {
    let (mut out, h) = dropped_column_poppers(cols, column);
    // The run through the new disc (elevation h, nibble h - 1) in its row.
    let shift = 4 * (h - 1);
    let mut left = column;
    // Bottom-packed: a column reaches elevation h iff its nibble h - 1 is set.
    while left > 0 && cols[left - 1] >> shift != 0 {
        left -= 1;
    }
    let mut right = column;
    while right + 1 < SIZE && cols[right + 1] >> shift != 0 {
        right += 1;
    }
    let run = (right - left + 1) as u32;
    for c in left..=right {
        if (cols[c] >> shift) & 0xF == run {
            out[c] |= 1 << shift;
        }
    }
    out
}

/// Resolves the cascade on `board` starting at chain depth `depth`, drawing
/// reveal values from `rng` and reporting each wave to `sink`. Works on any
/// board (poppers are looked for everywhere in every wave).
#[inline]
pub fn resolve<G: Gravity, R: DiscSource, S: WaveSink>(
    gravity: G,
    board: &mut Board,
    depth: u32,
    rng: &mut R,
    sink: &mut S,
) -> CascadeResult {
    let first = poppers(board.columns());
    resolve_from(gravity, board, depth, first, rng, sink)
}

/// [`resolve`] for the first cascade of a move whose board was settled (see
/// [`is_settled`]) before a disc was dropped on `column`: the first wave's
/// poppers are looked for only where the drop changed a run. Same result as
/// [`resolve`] on such boards.
#[inline]
pub fn resolve_after_drop<G: Gravity, R: DiscSource, S: WaveSink>(
    gravity: G,
    board: &mut Board,
    column: usize,
    rng: &mut R,
    sink: &mut S,
) -> CascadeResult {
    let first = poppers_after_drop_walk(board.columns(), column);
    resolve_from(gravity, board, 1, first, rng, sink)
}

/// [`resolve`] for the rise cascade of a move: `board` was settled (see
/// [`is_settled`]) before [`Board::rise`]. The first wave's poppers are only
/// the cells equal to their column's new height. Same result as [`resolve`]
/// on such boards.
#[inline]
pub fn resolve_after_rise<G: Gravity, R: DiscSource, S: WaveSink>(
    gravity: G,
    board: &mut Board,
    depth: u32,
    rng: &mut R,
    sink: &mut S,
) -> CascadeResult {
    let first = poppers_after_rise(board.columns());
    resolve_from(gravity, board, depth, first, rng, sink)
}

/// Runs waves from `depth`, the first with the popper words `pop`.
#[inline(always)]
fn resolve_from<G: Gravity, R: DiscSource, S: WaveSink>(
    gravity: G,
    board: &mut Board,
    mut depth: u32,
    mut pop: [u32; SIZE],
    rng: &mut R,
    sink: &mut S,
) -> CascadeResult {
    let mut result = CascadeResult::default();
    loop {
        let any = pop.iter().fold(0, |a, &p| a | p);
        if any == 0 {
            return result;
        }
        let struck = strike(board, &pop);
        pop = finish_wave(gravity, board, depth, &pop, &struck, rng, sink, &mut result);
        depth += 1;
    }
}

/// What [`strike`] leaves of a wave: its popper count and the cells it
/// reveals (nibble indicator words), still covered on the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Struck {
    cleared: u32,
    reveal: [u32; SIZE],
    any_reveal: u32,
}

/// A wave's reveal indicator words transposed for its row-major visit: the
/// columns that reveal in one row, as bits, in two shifts and masks instead
/// of a gather over the seven words (done once per wave that reveals, read
/// once per row that does).
#[derive(Clone, Copy)]
struct RevealRows {
    /// Columns 0..4: bit `4i + c` = column c reveals at nibble i (a reveal
    /// word has only the bits `4i`, so `c < 4` keeps each in its nibble).
    low: u32,
    /// Columns 4..7 the same way: bit `4i + c - 4`.
    high: u32,
}

impl RevealRows {
    #[inline(always)]
    fn new(reveal: &[u32; SIZE]) -> RevealRows {
        RevealRows {
            low: reveal[0] | reveal[1] << 1 | reveal[2] << 2 | reveal[3] << 3,
            high: reveal[4] | reveal[5] << 1 | reveal[6] << 2,
        }
    }

    /// The columns (bit c) that reveal at the row whose nibble starts at
    /// bit `bit` (a multiple of 4).
    #[inline(always)]
    fn columns(self, bit: u32) -> u32 {
        ((self.low >> bit) & 0xF) | ((self.high >> bit) & 0x7) << 4
    }
}

/// The first half of a wave: the poppers `pop` vanish and the grays they hit
/// crack; the cells to reveal are returned, not yet given values.
#[inline(always)]
fn strike(board: &mut Board, pop: &[u32; SIZE]) -> Struck {
    let cols = board.columns_mut();
    let cleared = count_indicators(pop);
    let mut reveal = [0u32; SIZE];
    let mut any_reveal = 0u32;
    for c in 0..SIZE {
        let p = pop[c];
        // Hits per nibble (0..=4, no carries). A hit above the top row
        // lands in nibble 7, which no covered cell has.
        let mut hits = (p << 4) + (p >> 4);
        if c > 0 {
            hits += pop[c - 1];
        }
        if c + 1 < SIZE {
            hits += pop[c + 1];
        }
        let w = cols[c];
        let covered = (w >> 3) & NIBBLE_ONES;
        // Two hits or more; with bit 0 of `hits` (odd counts) that is
        // every hit count: one hit is bit 0 without `ge2`.
        let ge2 = ((hits >> 1) | (hits >> 2)) & NIBBLE_ONES;
        // A cracked gray (9: bit 0 set) reveals on any hit, a solid one
        // (8) on two or more; a solid gray hit once cracks.
        let rv = covered & (ge2 | (w & hits));
        let crack = covered & !w & hits & !ge2;
        reveal[c] = rv;
        any_reveal |= rv;
        // Poppers vanish; a solid hit once becomes cracked (8 -> 9).
        cols[c] = (w & !(p * 0xF)) | crack;
    }
    Struck {
        cleared,
        reveal,
        any_reveal,
    }
}

/// The second half of a wave at chain depth `depth`: the struck cells get
/// their values from `rng`, the wave goes to `sink` and into `result`, the
/// popped cells fall out. Returns the next wave's poppers.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn finish_wave<G: Gravity, R: DiscSource, S: WaveSink>(
    gravity: G,
    board: &mut Board,
    depth: u32,
    pop: &[u32; SIZE],
    struck: &Struck,
    rng: &mut R,
    sink: &mut S,
    result: &mut CascadeResult,
) -> [u32; SIZE] {
    let cols = board.columns_mut();
    let mut revealed = 0u32;
    // Rows holding a reveal (bit 4 * elevation index), top row first,
    // then the row's revealing columns left to right.
    let mut rows = struck.any_reveal;
    if rows != 0 {
        let by_row = RevealRows::new(&struck.reveal);
        while rows != 0 {
            let bit = 31 - rows.leading_zeros();
            rows ^= 1 << bit;
            let mut in_row = by_row.columns(bit);
            while in_row != 0 {
                let c = in_row.trailing_zeros() as usize;
                in_row &= in_row - 1;
                // Covered cells beneath this one (latent mode names the gray
                // by it; plain sources ignore it).
                let below = (cols[c] >> 3) & NIBBLE_ONES & ((1 << bit) - 1);
                let v = u32::from(rng.reveal_disc(c, below.count_ones()));
                cols[c] = (cols[c] & !(0xF << bit)) | (v << bit);
                revealed += 1;
            }
        }
    }
    let points = u64::from(struck.cleared) * wave_points(depth);
    sink.push(Wave {
        depth,
        cleared: struck.cleared,
        revealed,
        points,
    });
    result.points += points;
    result.waves += 1;
    // The popped cells are the only holes (the board was bottom-packed).
    remove_popped(gravity, cols, pop);
    poppers(cols)
}

/// Gravity after a wave: the popped cells `pop` fall out of every column.
#[inline(always)]
fn remove_popped<G: Gravity>(gravity: G, cols: &mut [u32; SIZE], pop: &[u32; SIZE]) {
    for c in 0..SIZE {
        if G::REMOVE_UNCONDITIONALLY || pop[c] != 0 {
            cols[c] = gravity.remove(cols[c], pop[c]);
        }
    }
}

/// Which first-wave popper rule a cascade starts with (see [`resolve`],
/// [`resolve_after_drop`], [`resolve_after_rise`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CascadeStart {
    /// Any board: poppers looked for everywhere.
    Any,
    /// A disc was just dropped on this column of a settled board.
    AfterDrop(usize),
    /// A settled board just rose.
    AfterRise,
}

/// A cascade stopped at the first wave that reveals a gray, just before the
/// revealed grays get their values (the cascade's first draws). Everything
/// before that point draws nothing, so it is the same for every source of
/// reveal values; [`resume`] finishes the cascade with one.
///
/// The wave is played as far as it goes without the values: its poppers are
/// gone, its hit grays cracked, the popped cells fallen out (values do not
/// move cells), and the next wave's poppers among the other cells found (a
/// cell's runs depend only on which cells are occupied). What is left per
/// source: the values, and whether each revealed cell pops in the next wave
/// (its value equal to its row run or column height, both recorded here).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PendingReveal {
    /// Chain depth of the revealing wave.
    depth: u32,
    /// Its poppers' count.
    cleared: u32,
    /// Grays it reveals.
    revealed: u32,
    /// Points and waves of the cascade before that wave.
    before: CascadeResult,
    /// The next wave's poppers among the cells not revealed.
    next_pop: [u32; SIZE],
    /// The reveals in draw order (row-major before the fall, top row first),
    /// each [`RevealEntry`]-packed: column, covered cells below it at reveal
    /// time, its nibble after the fall, and that cell's row run and column
    /// height after the fall (a value equal to either pops next wave).
    order: [u16; CELLS],
    /// The next wave, played ahead for the sources whose revealed values
    /// pop nowhere in it.
    ahead: WaveAhead,
}

/// Most reveals of a pending wave for which [`WaveAhead`] plays the next
/// wave ahead (a power of two: [`resume`] indexes its entries modulo it).
const AHEAD_REVEALS: usize = 4;

/// The wave after a [`PendingReveal`]'s, played once for every source whose
/// revealed values make no popper (no value equal to its cell's row run or
/// column height): for those the wave is the same. Its poppers are then
/// exactly the pending wave's `next_pop`, found without the values; a
/// revealed cell is numbered whatever its value, so hits neither crack nor
/// reveal it, and the wave's other cells, its hits, reveals and fall do not
/// depend on the values either (a cell's runs depend only on which cells are
/// occupied). What is left per source is again only whether each revealed
/// cell pops in the wave after (its value against its new row run and
/// column height, recorded here). Played only when the pending wave has
/// poppers besides the revealed cells, at most [`AHEAD_REVEALS`] reveals,
/// and the wave ahead reveals nothing (else it would draw).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct WaveAhead {
    /// Whether the wave was played ahead (the other fields are zero if not).
    valid: bool,
    /// Its poppers' count.
    cleared: u32,
    /// Its points.
    points: u64,
    /// The board after its fall, the revealed cells' nibbles zero.
    cols: [u32; SIZE],
    /// The following wave's poppers among the cells not revealed.
    next_pop: [u32; SIZE],
    /// Per reveal (in draw order): the cell's nibble index, row run and
    /// column height after the fall ([`RevealEntry`] layout, column and
    /// covered-below bits zero).
    entries: [u16; AHEAD_REVEALS],
}

impl WaveAhead {
    /// Not played ahead.
    const NONE: WaveAhead = WaveAhead {
        valid: false,
        cleared: 0,
        points: 0,
        cols: [0; SIZE],
        next_pop: [0; SIZE],
        entries: [0; AHEAD_REVEALS],
    };
}

/// Bit layout of a [`PendingReveal::order`] entry (3 bits each): column
/// (bits 0..3), covered cells below at reveal time (3..6), nibble index after
/// the fall (6..9), row run after the fall (9..12), column height after the
/// fall (12..15).
struct RevealEntry;

impl RevealEntry {
    const BELOW: u32 = 3;
    const NIBBLE: u32 = 6;
    const RUN: u32 = 9;
    const HEIGHT: u32 = 12;
}

/// Resolves the cascade on `board` from chain depth `depth` (first wave's
/// poppers by `start`) up to the first wave that reveals a gray, reporting the
/// waves before it to `sink`: `Ok` with the whole cascade's result when no wave
/// reveals (the board is then resolved, exactly as the matching `resolve*`
/// function leaves it), `Err` with the pending wave otherwise (the board is
/// then mid-wave, revealed cells still covered: finish it with [`resume`]).
// The pending wave stays on the stack: the move path never allocates.
#[allow(clippy::result_large_err)]
#[inline]
pub fn resolve_until_reveal<G: Gravity, S: WaveSink>(
    gravity: G,
    board: &mut Board,
    depth: u32,
    start: CascadeStart,
    sink: &mut S,
) -> Result<CascadeResult, PendingReveal> {
    resolve_until_reveal_body::<PLAIN, G, S>(gravity, board, depth, start, sink)
}

built_copies! {
    /// [`resolve_until_reveal`] in the search's copy `B` (see [`built_copies`]).
    #[allow(clippy::result_large_err)]
    pub(crate) fn resolve_until_reveal_in<[G: Gravity, S: WaveSink] [G, S]>(
        gravity: G,
        board: &mut Board,
        depth: u32,
        start: CascadeStart,
        sink: &mut S,
    ) -> Result<CascadeResult, PendingReveal> = resolve_until_reveal, resolve_until_reveal_body;
}

/// [`resolve_until_reveal`] in the copy `B` of the code.
#[allow(clippy::result_large_err)]
#[inline(always)]
fn resolve_until_reveal_body<const B: u8, G: Gravity, S: WaveSink>(
    gravity: G,
    board: &mut Board,
    depth: u32,
    start: CascadeStart,
    sink: &mut S,
) -> Result<CascadeResult, PendingReveal> {
    let mut pop = match start {
        CascadeStart::Any => poppers(board.columns()),
        CascadeStart::AfterDrop(column) => poppers_after_drop(board.columns(), column),
        CascadeStart::AfterRise => poppers_after_rise(board.columns()),
    };
    let mut depth = depth;
    let mut result = CascadeResult::default();
    loop {
        let any = pop.iter().fold(0, |a, &p| a | p);
        if any == 0 {
            return Ok(result);
        }
        let struck = strike(board, &pop);
        if struck.any_reveal != 0 {
            return Err(pause_in::<B, G>(
                gravity, board, depth, &pop, &struck, result,
            ));
        }
        pop = finish_wave(
            gravity,
            board,
            depth,
            &pop,
            &struck,
            &mut NoDraws,
            sink,
            &mut result,
        );
        depth += 1;
    }
}

/// Plays the revealing wave as far as it goes without values (see
/// [`PendingReveal`]).
#[inline(never)]
fn pause<G: Gravity>(
    gravity: G,
    board: &mut Board,
    depth: u32,
    pop: &[u32; SIZE],
    struck: &Struck,
    before: CascadeResult,
) -> PendingReveal {
    pause_body::<PLAIN, G>(gravity, board, depth, pop, struck, before)
}

built_copies! {
    /// [`pause`] in the search's copy `B` (see [`built_copies`]).
    fn pause_in<[G: Gravity] [G]>(
        gravity: G,
        board: &mut Board,
        depth: u32,
        pop: &[u32; SIZE],
        struck: &Struck,
        before: CascadeResult,
    ) -> PendingReveal = pause, pause_body;
}

/// The body of [`pause`] (the same in every copy `B`).
#[inline(always)]
fn pause_body<const B: u8, G: Gravity>(
    gravity: G,
    board: &mut Board,
    depth: u32,
    pop: &[u32; SIZE],
    struck: &Struck,
    before: CascadeResult,
) -> PendingReveal {
    let cols = board.columns_mut();
    let mut order = [0u16; CELLS];
    let mut n = 0usize;
    let mut rows = struck.any_reveal;
    let by_row = RevealRows::new(&struck.reveal);
    while rows != 0 {
        let bit = 31 - rows.leading_zeros();
        rows ^= 1 << bit;
        // The row's revealing columns as bits, visited left to right (a
        // loop over the set bits: fewer mispredicted branches than a test
        // per column).
        let mut in_row = by_row.columns(bit);
        let under = (1u32 << bit) - 1;
        while in_row != 0 {
            let c = in_row.trailing_zeros() as usize;
            in_row &= in_row - 1;
            // Cells below are revealed later (lower rows come later):
            // all still covered at this reveal.
            let below = ((cols[c] >> 3) & NIBBLE_ONES & under).count_ones();
            let nibble = bit / 4 - (pop[c] & under).count_ones();
            order[n] = (c as u16)
                | (below as u16) << RevealEntry::BELOW
                | (nibble as u16) << RevealEntry::NIBBLE;
            n += 1;
        }
    }
    remove_popped(gravity, cols, pop);
    let (next_pop, runs) = poppers_and_runs(cols);
    for e in &mut order[..n] {
        let c = usize::from(*e & 7);
        let shift = 4 * u32::from((*e >> RevealEntry::NIBBLE) & 7);
        let run = (runs[c] >> shift) & 0xF;
        let height = word_height(cols[c]);
        *e |= (run as u16) << RevealEntry::RUN | (height as u16) << RevealEntry::HEIGHT;
    }
    let ahead = play_ahead(gravity, cols, depth + 1, &order[..n], &next_pop);
    PendingReveal {
        depth,
        cleared: struck.cleared,
        revealed: n as u32,
        before,
        next_pop,
        order,
        ahead,
    }
}

/// Plays the wave at chain depth `depth` after a paused one ahead (see
/// [`WaveAhead`]): `cols` is the board the pause left (revealed cells still
/// covered), `order` its reveal entries, `next_pop` the poppers among the
/// other cells.
#[inline(always)]
fn play_ahead<G: Gravity>(
    gravity: G,
    cols: &[u32; SIZE],
    depth: u32,
    order: &[u16],
    next_pop: &[u32; SIZE],
) -> WaveAhead {
    let mut ahead = WaveAhead::NONE;
    if order.len() > AHEAD_REVEALS || next_pop.iter().fold(0, |a, &p| a | p) == 0 {
        return ahead;
    }
    // The revealed cells as a numbered value that no popper includes: the
    // wave treats every numbered value alike.
    let mut board = Board::from_columns(*cols);
    for &e in order {
        let c = usize::from(e & 7);
        let shift = 4 * u32::from((e >> RevealEntry::NIBBLE) & 7);
        let w = &mut board.columns_mut()[c];
        *w = (*w & !(0xF << shift)) | (1 << shift);
    }
    let struck = strike(&mut board, next_pop);
    if struck.any_reveal != 0 {
        return ahead;
    }
    let b = board.columns_mut();
    remove_popped(gravity, b, next_pop);
    let (mut pop, runs) = poppers_and_runs(b);
    let mut fallen = *b;
    for (&e, a) in order.iter().zip(&mut ahead.entries) {
        let c = usize::from(e & 7);
        let nibble = u32::from((e >> RevealEntry::NIBBLE) & 7);
        // The cell falls by the poppers below it.
        let nibble = nibble - (next_pop[c] & ((1u32 << (4 * nibble)) - 1)).count_ones();
        let shift = 4 * nibble;
        let run = (runs[c] >> shift) & 0xF;
        let height = word_height(b[c]);
        *a = (nibble as u16) << RevealEntry::NIBBLE
            | (run as u16) << RevealEntry::RUN
            | (height as u16) << RevealEntry::HEIGHT;
        fallen[c] &= !(0xF << shift);
        pop[c] &= !(0xF << shift);
    }
    ahead.valid = true;
    ahead.cleared = struck.cleared;
    ahead.points = u64::from(struck.cleared) * wave_points(depth);
    ahead.cols = fallen;
    ahead.next_pop = pop;
    ahead
}

/// Finishes a cascade stopped by [`resolve_until_reveal`] on the board it left
/// (`board` must be that board): the pending grays take their values from
/// `rng`, then the cascade runs to the end as the `resolve*` functions do.
/// Returns the whole cascade's result (the waves before the stop included);
/// reports the waves from the pending one on to `sink`.
#[inline]
pub fn resume<G: Gravity, R: DiscSource, S: WaveSink>(
    gravity: G,
    board: &mut Board,
    pending: &PendingReveal,
    rng: &mut R,
    sink: &mut S,
) -> CascadeResult {
    resume_body::<PLAIN, G, R, S>(gravity, board, pending, rng, sink)
}

built_copies! {
    /// [`resume`] in the search's copy `B` (see [`built_copies`]).
    pub(crate) fn resume_in<[G: Gravity, R: DiscSource, S: WaveSink] [G, R, S]>(
        gravity: G,
        board: &mut Board,
        pending: &PendingReveal,
        rng: &mut R,
        sink: &mut S,
    ) -> CascadeResult = resume, resume_body;
}

/// The body of [`resume`] (the same in every copy `B`).
#[inline(always)]
fn resume_body<const B: u8, G: Gravity, R: DiscSource, S: WaveSink>(
    gravity: G,
    board: &mut Board,
    pending: &PendingReveal,
    rng: &mut R,
    sink: &mut S,
) -> CascadeResult {
    let cols = board.columns_mut();
    let mut pop = pending.next_pop;
    // The values of the first reveals, for the wave ahead (which is played
    // only with at most `AHEAD_REVEALS` reveals).
    let mut values = [0u32; AHEAD_REVEALS];
    let mut any_pops = 0u32;
    for (i, &e) in pending.order[..pending.revealed as usize]
        .iter()
        .enumerate()
    {
        let e = u32::from(e);
        let c = (e & 7) as usize;
        let shift = 4 * ((e >> RevealEntry::NIBBLE) & 7);
        let v = u32::from(rng.reveal_disc(c, (e >> RevealEntry::BELOW) & 7));
        cols[c] = (cols[c] & !(0xF << shift)) | (v << shift);
        // The revealed cell pops next wave iff its value equals its row run
        // or its column height (both 1..=7, as is the value).
        let run = (e >> RevealEntry::RUN) & 7;
        let height = (e >> RevealEntry::HEIGHT) & 7;
        let pops = u32::from((v == run) | (v == height));
        any_pops |= pops;
        pop[c] |= pops << shift;
        values[i % AHEAD_REVEALS] = v;
    }
    let points = u64::from(pending.cleared) * wave_points(pending.depth);
    sink.push(Wave {
        depth: pending.depth,
        cleared: pending.cleared,
        revealed: pending.revealed,
        points,
    });
    let mut result = pending.before;
    result.points += points;
    result.waves += 1;
    let mut depth = pending.depth + 1;
    let ahead = &pending.ahead;
    if ahead.valid && any_pops == 0 {
        // No revealed value pops: the next wave is the one played ahead
        // (its poppers are `next_pop`, it reveals nothing). The revealed
        // values go into the board after it, each cell popping in the wave
        // after iff its value equals its new row run or column height.
        sink.push(Wave {
            depth,
            cleared: ahead.cleared,
            revealed: 0,
            points: ahead.points,
        });
        result.points += ahead.points;
        result.waves += 1;
        *cols = ahead.cols;
        pop = ahead.next_pop;
        let n = pending.revealed as usize;
        for ((&e, &a), &v) in pending.order[..n].iter().zip(&ahead.entries).zip(&values) {
            let c = usize::from(e & 7);
            let a = u32::from(a);
            let shift = 4 * ((a >> RevealEntry::NIBBLE) & 7);
            let run = (a >> RevealEntry::RUN) & 7;
            let height = (a >> RevealEntry::HEIGHT) & 7;
            cols[c] |= v << shift;
            pop[c] |= u32::from((v == run) | (v == height)) << shift;
        }
        depth += 1;
    }
    let rest = resolve_from(gravity, board, depth, pop, rng, sink);
    result.points += rest.points;
    result.waves += rest.waves;
    result
}

/// The source of a wave that reveals nothing: never asked.
struct NoDraws;

impl DiscSource for NoDraws {
    #[inline(always)]
    fn draw_disc(&mut self) -> u8 {
        unreachable!("a wave without reveals draws nothing")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Poppers by the definition (rules.md §5), cell by cell.
    fn plain_poppers(b: &Board) -> [u32; SIZE] {
        let mut out = [0u32; SIZE];
        for (c, o) in out.iter_mut().enumerate() {
            let h = b.height(c) as usize;
            for e in 0..h {
                let row = SIZE - 1 - e;
                let v = usize::from(b.cell(row, c));
                if v == 0 || v > 7 {
                    continue;
                }
                let occupied = |cc: usize| b.cell(row, cc) != 0;
                let lo = (0..=c).rev().take_while(|&cc| occupied(cc)).count();
                let hi = (c..SIZE).take_while(|&cc| occupied(cc)).count();
                if v == h || v == lo + hi - 1 {
                    *o |= 1 << (4 * e);
                }
            }
        }
        out
    }

    /// Row runs by the definition: the occupied cells through each
    /// occupied cell in its row (0 on empty cells).
    fn plain_row_runs(b: &Board) -> [u32; SIZE] {
        let mut out = [0u32; SIZE];
        for (c, o) in out.iter_mut().enumerate() {
            for e in 0..b.height(c) as usize {
                let row = SIZE - 1 - e;
                let occupied = |cc: usize| b.cell(row, cc) != 0;
                let lo = (0..=c).rev().take_while(|&cc| occupied(cc)).count();
                let hi = (c..SIZE).take_while(|&cc| occupied(cc)).count();
                *o |= ((lo + hi - 1) as u32) << (4 * e);
            }
        }
        out
    }

    #[test]
    fn reveal_rows_match_a_gather() {
        let mut x = 0x2545_F491u32;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let mut reveal = [0u32; SIZE];
            for (c, r) in reveal.iter_mut().enumerate() {
                *r = (x.rotate_left(7 * c as u32) ^ (x >> c)) & NIBBLE_ONES;
            }
            let rows = RevealRows::new(&reveal);
            for bit in (0..SIZE as u32).map(|i| 4 * i) {
                let mut want = 0u32;
                for (c, r) in reveal.iter().enumerate() {
                    want |= ((r >> bit) & 1) << c;
                }
                assert_eq!(rows.columns(bit), want);
            }
        }
    }

    #[test]
    fn poppers_match_plain_definition() {
        let mut x = 0x9E37_79B9u32;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        };
        for _ in 0..200_000 {
            let mut cols = [0u32; SIZE];
            let tall = next() % 3 == 0;
            for w in &mut cols {
                let r = next();
                let h = if tall { 4 + r % 4 } else { r % 8 };
                for k in 0..h {
                    // Mostly numbered, some solid and cracked grays.
                    let v = match (r >> (3 + 3 * k)) % 9 {
                        8 => 8 + (next() & 1),
                        d => 1 + d % 7,
                    };
                    *w |= v << (4 * k);
                }
            }
            let b = Board::from_columns(cols);
            assert_eq!(poppers(b.columns()), plain_poppers(&b), "{b:?}");
            assert_eq!(poppers_and_runs(b.columns()).1, plain_row_runs(&b), "{b:?}");
        }
    }

    #[test]
    fn poppers_after_drop_match_poppers_on_settled_boards() {
        use crate::gravity::Portable;
        use crate::rng::Mulberry32;
        let mut rng = Mulberry32::new(0x5EED_D709);
        let mut checked = 0;
        for _ in 0..100_000 {
            let mut cols = [0u32; SIZE];
            for w in &mut cols {
                let h = rng.next_bits() % 7;
                for k in 0..h {
                    let v = match rng.next_bits() % 10 {
                        8 | 9 => 8 + (rng.next_bits() & 1),
                        _ => 1 + rng.next_bits() % 7,
                    };
                    *w |= v << (4 * k);
                }
            }
            let mut b = Board::from_columns(cols);
            resolve(Portable, &mut b, 1, &mut rng, &mut ());
            assert!(is_settled(&b));
            for column in 0..SIZE {
                if !b.is_legal(column) {
                    continue;
                }
                let disc = 1 + (rng.next_bits() % 7) as u8;
                let dropped = b.with_drop(column, disc);
                let cols = dropped.columns();
                assert_eq!(
                    poppers_after_drop(cols, column),
                    poppers(cols),
                    "{dropped:?}"
                );
                assert_eq!(
                    poppers_after_drop_walk(cols, column),
                    poppers(cols),
                    "{dropped:?}"
                );
                checked += 1;
            }
        }
        assert!(checked > 100_000);
    }

    /// Reveal values `first + i` (mod 7, plus one) for the i-th draw: over
    /// `first` in 0..7, every value for every reveal.
    struct Cycle(u32);

    impl DiscSource for Cycle {
        fn draw_disc(&mut self) -> u8 {
            self.0 += 1;
            (self.0 % 7) as u8 + 1
        }
    }

    #[test]
    fn resume_matches_resolve_with_and_without_the_wave_ahead() {
        use crate::gravity::Portable;
        use crate::rng::Mulberry32;
        let mut rng = Mulberry32::new(0xA4EA_D000);
        let (mut paused, mut ahead, mut taken) = (0, 0, 0);
        for _ in 0..60_000 {
            let mut cols = [0u32; SIZE];
            for w in &mut cols {
                let h = rng.next_bits() % 8;
                for k in 0..h {
                    let v = match rng.next_bits() % 10 {
                        7..=9 => 8 + (rng.next_bits() & 1),
                        d => 1 + d % 7,
                    };
                    *w |= v << (4 * k);
                }
            }
            let board = Board::from_columns(cols);
            let mut stopped = board;
            let mut waves = Vec::new();
            let Err(pending) =
                resolve_until_reveal(Portable, &mut stopped, 1, CascadeStart::Any, &mut waves)
            else {
                continue;
            };
            paused += 1;
            ahead += usize::from(pending.ahead.valid);
            for first in 0..7 {
                let mut want = board;
                let mut want_waves = Vec::new();
                let r = resolve(Portable, &mut want, 1, &mut Cycle(first), &mut want_waves);
                let mut got = stopped;
                let mut got_waves = waves.clone();
                let mut source = Cycle(first);
                let g = resume(Portable, &mut got, &pending, &mut source, &mut got_waves);
                assert_eq!((g, got, &got_waves), (r, want, &want_waves), "{board:?}");
                let depth = pending.depth as usize;
                taken += usize::from(
                    pending.ahead.valid
                        && got_waves.len() > depth
                        && got_waves[depth].cleared == pending.ahead.cleared
                        && got_waves[depth - 1].revealed == pending.revealed,
                );
            }
        }
        assert!(
            paused > 5_000 && ahead > 500 && taken > 2_000,
            "{paused} {ahead} {taken}"
        );
    }

    #[test]
    fn wave_table() {
        let want = [7, 39, 109, 224, 391, 617, 907, 1267, 1701, 2213, 2809, 3491];
        for (i, &w) in want.iter().enumerate() {
            assert_eq!(WAVE_POINTS[i + 1], w);
        }
        assert_eq!(WAVE_POINTS[20], 12521);
        assert_eq!(wave_points(1023), WAVE_POINTS[1023]);
        for d in 1000..1023u32 {
            let n = 49 * u128::from(d).pow(5);
            let r = u128::from(wave_points(d));
            assert!(r * r <= n && (r + 1) * (r + 1) > n);
        }
        assert!(wave_points(5000) > wave_points(4999));
    }
}

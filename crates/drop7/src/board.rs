//! The packed board: seven `u32` column words, 4 bits a cell, bottom row in the
//! least-significant nibble (28 bytes in all). Spec: rules.md §1; design: DESIGN.md.
//!
//! ```text
//! column word c:  bits 27..24 | 23..20 | ... | 3..0
//!                 row 0 (top) | row 1  | ... | row 6 (bottom)
//!                 elevation 7 |   6    | ... |   1
//! ```
//! Cell codes: `0` empty, `1`–`7` numbered disc, `8` solid gray, `9` cracked gray.
//! Columns are bottom-packed between moves, so a column's height is the number
//! of its non-zero nibbles and a drop is a single OR.
//!
//! ```
//! use drop7::board::Board;
//! let b = Board::initial();
//! assert_eq!(b.to_string(), "0000000000000000000000000000000000000000008888888");
//! assert_eq!(b.height(3), 1);
//! let b = b.with_drop(3, 5);
//! assert_eq!(b.cell(5, 3), 5); // row 5 (second from the bottom), column 3
//! ```

use std::fmt;
use std::str::FromStr;

use crate::error::BoardError;

/// Number of rows and columns.
pub const SIZE: usize = 7;
/// Number of cells.
pub const CELLS: usize = 49;
/// Cell code of a solid (never hit) gray disc.
pub const SOLID: u8 = 8;
/// Cell code of a cracked (hit once) gray disc.
pub const CRACKED: u8 = 9;
/// One bit at the bottom of every nibble of a column word.
pub const NIBBLE_ONES: u32 = 0x111_1111;
/// The 28 bits a column word may use.
pub const COLUMN_BITS: u32 = 0xFFF_FFFF;
/// A column word of seven solid grays' bottom row: one solid in the low nibble.
const RISEN_CELL: u32 = SOLID as u32;

/// Cells in the reference's row-major layout: index `row * 7 + column`, row 0 = top.
pub type Cells = [u8; CELLS];

/// Parses the 49-character board text (row 0 first) into row-major cells.
///
/// # Errors
/// [`BoardError::Length`] unless exactly 49 characters, [`BoardError::BadCell`]
/// for a character outside `0`–`9`, [`BoardError::Floating`] if an occupied
/// cell sits above an empty one.
pub fn parse_cells(text: &str) -> Result<Cells, BoardError> {
    let n = text.chars().count();
    if n != CELLS {
        return Err(BoardError::Length(n));
    }
    let mut cells = [0u8; CELLS];
    for (index, ch) in text.chars().enumerate() {
        match ch.to_digit(10) {
            Some(d) => cells[index] = d as u8,
            None => return Err(BoardError::BadCell { index, found: ch }),
        }
    }
    for column in 0..SIZE {
        for row in 0..SIZE - 1 {
            if cells[row * SIZE + column] != 0 && cells[(row + 1) * SIZE + column] == 0 {
                return Err(BoardError::Floating { column, row });
            }
        }
    }
    Ok(cells)
}

/// Formats row-major cells as the 49-character board text.
pub fn format_cells(cells: &Cells) -> String {
    cells.iter().map(|&c| char::from(b'0' + c)).collect()
}

/// The packed board. `Copy`, 28 bytes, compared and hashed by its words.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Board {
    cols: [u32; SIZE],
}

/// Non-zero-nibble indicator: bit `4i` set iff nibble `i` (0..=6) of `w` is
/// non-zero (nibble 7 is ignored).
///
/// Four operations and a shift: adding 7 to a nibble's low three bits sets
/// its top bit iff those bits are non-zero (at most 14, so no carry leaves
/// the nibble); or-ing in the nibble's own top bit completes the test.
#[inline(always)]
pub const fn nonzero_nibbles(w: u32) -> u32 {
    ((((w & LOW_THREE) + LOW_THREE) | w) & (NIBBLE_ONES << 3)) >> 3
}

/// The low three bits of each of the seven nibbles of a column word.
const LOW_THREE: u32 = 0x777_7777;

/// Zero-nibble indicator over the seven nibbles of a column word.
#[inline(always)]
pub const fn zero_nibbles(w: u32) -> u32 {
    !nonzero_nibbles(w) & NIBBLE_ONES
}

/// Height (occupied cells) of a bottom-packed column word.
#[inline(always)]
pub const fn word_height(w: u32) -> u32 {
    (32 - w.leading_zeros()).div_ceil(4)
}

impl Board {
    /// The empty board.
    pub const EMPTY: Board = Board { cols: [0; SIZE] };

    /// The opening board: empty except a bottom row of seven solid grays.
    pub const fn initial() -> Board {
        Board {
            cols: [RISEN_CELL; SIZE],
        }
    }

    /// A board from its column words (bit layout in the module docs).
    ///
    /// The caller guarantees the words are bottom-packed and use only the low
    /// 28 bits; [`Board::from_cells`] checks this for untrusted input.
    #[inline]
    pub const fn from_columns(cols: [u32; SIZE]) -> Board {
        Board { cols }
    }

    /// The seven column words.
    #[inline(always)]
    pub const fn columns(&self) -> &[u32; SIZE] {
        &self.cols
    }

    /// The column words in pairs, `[w0 | w1 << 32, w2 | w3 << 32, w4 | w5 << 32, w6]`,
    /// read one word at a time.
    ///
    /// A board is often written word by word (the cascade) or as a copy
    /// just before it is read: a wider load that spans two of those stores
    /// cannot be forwarded from them and waits until they reach the cache
    /// (a store-forwarding stall, about a dozen cycles). The compiler
    /// merges plain word loads into such wide loads, so these are volatile
    /// (same values; only the load widths are fixed).
    #[inline(always)]
    pub fn word_pairs(&self) -> [u64; 4] {
        // SAFETY: each pointer comes from a reference to an initialised,
        // aligned `u32` of `self.cols`, valid for the read.
        let word = |i: usize| u64::from(unsafe { std::ptr::read_volatile(&self.cols[i]) });
        [
            word(0) | word(1) << 32,
            word(2) | word(3) << 32,
            word(4) | word(5) << 32,
            word(6),
        ]
    }

    /// Mutable column words, for the cascade.
    #[inline(always)]
    pub(crate) fn columns_mut(&mut self) -> &mut [u32; SIZE] {
        &mut self.cols
    }

    /// Packs row-major cells (bottom-packed; see [`parse_cells`]).
    pub fn from_cells(cells: &Cells) -> Board {
        let mut cols = [0u32; SIZE];
        for (c, word) in cols.iter_mut().enumerate() {
            for row in 0..SIZE {
                *word |= u32::from(cells[row * SIZE + c] & 0xF) << (4 * (SIZE - 1 - row));
            }
        }
        Board { cols }
    }

    /// Unpacks to row-major cells.
    pub fn to_cells(&self) -> Cells {
        let mut cells = [0u8; CELLS];
        for row in 0..SIZE {
            for c in 0..SIZE {
                cells[row * SIZE + c] = self.cell(row, c);
            }
        }
        cells
    }

    /// Cell code at `row` (0 = top) and `column`.
    ///
    /// # Panics
    /// If `row` or `column` is 7 or more.
    #[inline]
    pub const fn cell(&self, row: usize, column: usize) -> u8 {
        ((self.cols[column] >> (4 * (SIZE - 1 - row))) & 0xF) as u8
    }

    /// Height of `column` (0..=7).
    #[inline(always)]
    pub const fn height(&self, column: usize) -> u32 {
        word_height(self.cols[column])
    }

    /// Whether a disc may be dropped in `column` (its top cell is empty).
    /// Out-of-range columns are not legal.
    #[inline(always)]
    pub const fn is_legal(&self, column: usize) -> bool {
        column < SIZE && self.cols[column] >> 24 == 0
    }

    /// Legal columns as a 7-bit mask (bit c = column c).
    #[inline]
    pub fn legal_mask(&self) -> u8 {
        let mut m = 0u8;
        for c in 0..SIZE {
            m |= u8::from(self.cols[c] >> 24 == 0) << c;
        }
        m
    }

    /// Whether every column is full (no legal column): every word's top
    /// nibble is set, so the smallest word is at least `1 << 24`.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.cols.iter().fold(u32::MAX, |a, &w| a.min(w)) >> 24 != 0
    }

    /// Whether the top row has any occupied cell (a rise would be blocked).
    #[inline]
    pub fn top_row_occupied(&self) -> bool {
        self.cols.iter().fold(0, |a, &w| a | w) >> 24 != 0
    }

    /// Whether every cell is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        // Asked right after a cascade's column stores: one word at a time.
        let [a, b, c, d] = self.word_pairs();
        a | b | c | d == 0
    }

    /// Drops `disc` onto `column` (the caller checked legality).
    #[inline(always)]
    pub fn drop_disc(&mut self, column: usize, disc: u8) {
        let w = self.cols[column];
        self.cols[column] = w | (u32::from(disc) << (4 * word_height(w)));
    }

    /// This board with `disc` dropped onto `column` (the caller checked legality).
    #[inline]
    pub fn with_drop(mut self, column: usize, disc: u8) -> Board {
        self.drop_disc(column, disc);
        self
    }

    /// The rise: every column moves up one row and a solid gray enters at the
    /// bottom. The caller checked that the top row is empty.
    #[inline(always)]
    pub fn rise(&mut self) {
        for w in &mut self.cols {
            *w = ((*w << 4) | RISEN_CELL) & COLUMN_BITS;
        }
    }

    /// Horizontal mirror (column c ↔ column 6 − c).
    #[inline]
    pub fn mirrored(&self) -> Board {
        let mut cols = self.cols;
        cols.reverse();
        Board { cols }
    }

    /// Whether the mirror is lexicographically smaller over the 49 row-major
    /// cell codes (search.md §3.5).
    #[inline]
    pub fn mirror_is_smaller(&self) -> bool {
        // Row-major order visits rows top (high nibble) first, then columns
        // left to right. Board and mirror can first differ only at a pair
        // (c, 6 - c) with c < 3: find the highest nibble where any pair
        // differs, then the smallest such c; the mirror holds column 6 - c there.
        let c = &self.cols;
        let d0 = nonzero_nibbles(c[0] ^ c[6]);
        let d1 = nonzero_nibbles(c[1] ^ c[5]);
        let d2 = nonzero_nibbles(c[2] ^ c[4]);
        //
        // Branch-free (which pair decides is data-dependent, and the search
        // asks this of every sampled child): the three pairs are compared
        // and the first one differing at that nibble selected with bit
        // logic. A pair that differs there differs nowhere above it (the
        // nibble is the highest that differs in any pair), so comparing
        // its two words as integers (top nibble most significant) compares
        // exactly that nibble. A symmetric board (no pair differs) compares
        // columns 2 and 4, equal: not smaller.
        let any = d0 | d1 | d2;
        let shift = 31 - (any | 1).leading_zeros();
        let lt0 = u32::from(c[6] < c[0]);
        let lt1 = u32::from(c[5] < c[1]);
        let lt2 = u32::from(c[4] < c[2]);
        let h0 = (d0 >> shift) & 1;
        let h1 = (d1 >> shift) & 1;
        // h0 ? lt0 : h1 ? lt1 : lt2, in bit logic.
        ((h0 & lt0) | (!h0 & ((h1 & lt1) | (!h1 & lt2)))) & 1 != 0
    }

    /// [`Board::mirrored`] if `mirror`, else the board itself, without a
    /// branch (a select per column).
    #[inline(always)]
    pub fn mirrored_if(&self, mirror: bool) -> Board {
        let mask = 0u32.wrapping_sub(u32::from(mirror));
        let mut cols = self.cols;
        for (c, w) in cols.iter_mut().enumerate() {
            *w = (self.cols[c] & !mask) | (self.cols[SIZE - 1 - c] & mask);
        }
        Board { cols }
    }
}

impl fmt::Display for Board {
    /// The 49-character board text, row 0 (top) first.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = [0u8; CELLS];
        for row in 0..SIZE {
            for c in 0..SIZE {
                s[row * SIZE + c] = b'0' + self.cell(row, c);
            }
        }
        f.write_str(std::str::from_utf8(&s).map_err(|_| fmt::Error)?)
    }
}

impl fmt::Debug for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "Board(")?;
        for row in 0..SIZE {
            let line: String = (0..SIZE)
                .map(|c| char::from(b'0' + self.cell(row, c)))
                .collect();
            writeln!(f, "  {line}")?;
        }
        write!(f, ")")
    }
}

impl FromStr for Board {
    type Err = BoardError;
    /// Parses the 49-character board text; see [`parse_cells`] for the errors.
    fn from_str(s: &str) -> Result<Board, BoardError> {
        parse_cells(s).map(|c| Board::from_cells(&c))
    }
}

/// Builds a [`Board`] from seven row strings, top row first, for docs and tests.
///
/// ```
/// use drop7::board;
/// let b = board![
///     "0000000",
///     "0000000",
///     "0000000",
///     "0000000",
///     "0000000",
///     "0003000",
///     "8888888",
/// ];
/// assert_eq!(b.height(3), 2);
/// ```
///
/// # Panics
/// If the rows do not form a valid board.
#[macro_export]
macro_rules! board {
    ($($row:expr),+ $(,)?) => {{
        let text: String = [$($row),+].concat();
        text.parse::<$crate::board::Board>().expect("board! rows must form a valid board")
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nonzero_nibbles_matches_plain_definition() {
        let plain = |w: u32| {
            (0..SIZE as u32).fold(0, |a, i| {
                a | u32::from((w >> (4 * i)) & 0xF != 0) << (4 * i)
            })
        };
        let mut x = 0x2545_F491u32;
        for k in 0..1_000_000u32 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            // Sparse words too, so that zero nibbles are common.
            let w = if k % 2 == 0 {
                x
            } else {
                x & (x >> 7) & (x << 3)
            };
            assert_eq!(nonzero_nibbles(w), plain(w), "{w:#x}");
            assert_eq!(zero_nibbles(w), !plain(w) & NIBBLE_ONES, "{w:#x}");
        }
        for w in [
            0,
            u32::MAX,
            0xF000_0000,
            0x0FFF_FFFF,
            0x8888_8888,
            0x1111_1111,
        ] {
            assert_eq!(nonzero_nibbles(w), plain(w), "{w:#x}");
        }
    }

    #[test]
    fn text_round_trip() {
        let t = "0000000000000000000000000000000400000050008888888";
        let b: Board = t.parse().unwrap();
        assert_eq!(b.to_string(), t);
        assert_eq!(format_cells(&b.to_cells()), t);
        assert_eq!(b.height(3), 3);
        assert!(b.is_legal(3));
        assert!(!b.is_legal(7));
    }

    #[test]
    fn parse_errors() {
        assert_eq!("123".parse::<Board>(), Err(BoardError::Length(3)));
        let mut t = "0".repeat(48);
        t.push('x');
        assert_eq!(
            t.parse::<Board>(),
            Err(BoardError::BadCell {
                index: 48,
                found: 'x'
            })
        );
        let mut t = "0".repeat(49);
        t.replace_range(0..1, "1");
        assert_eq!(
            t.parse::<Board>(),
            Err(BoardError::Floating { column: 0, row: 0 })
        );
    }

    #[test]
    fn rise_and_mirror() {
        let mut b = Board::initial();
        b.drop_disc(0, 3);
        b.rise();
        assert_eq!(
            b.to_string(),
            "0000000000000000000000000000300000088888888888888"
        );
        assert_eq!(b.mirrored().mirrored(), b);
        assert!(b.mirror_is_smaller());
        assert!(!Board::initial().mirror_is_smaller());
        let mut full = Board::from_columns([0x111_1111; SIZE]);
        assert!(full.is_full() && full.legal_mask() == 0);
        full.columns_mut()[4] = 0x11_1111;
        assert!(!full.is_full() && full.legal_mask() == 1 << 4);
        assert!(!Board::initial().is_full() && !Board::EMPTY.is_full());
    }
}

#[cfg(test)]
mod mirror_tests {
    use super::*;

    /// The plain definition: lexicographic compare of the 49 row-major codes.
    fn plain(b: &Board) -> bool {
        let cells = b.to_cells();
        let mut m = cells;
        for r in 0..SIZE {
            m[r * SIZE..(r + 1) * SIZE].reverse();
        }
        m < cells
    }

    #[test]
    fn mirror_compare_matches_plain_definition() {
        let mut x = 0x9E37_79B9u32;
        for _ in 0..100_000 {
            let mut cols = [0u32; SIZE];
            for w in &mut cols {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                let h = x % 8;
                // Few distinct codes so that long common prefixes occur.
                for k in 0..h {
                    *w |= (1 + (x >> (3 + 2 * k)) % 3) << (4 * k);
                }
            }
            if x.is_multiple_of(5) {
                cols[6] = cols[0];
                cols[5] = cols[1];
            }
            if x.is_multiple_of(7) {
                // Symmetric boards too.
                cols[6] = cols[0];
                cols[5] = cols[1];
                cols[4] = cols[2];
            }
            let b = Board::from_columns(cols);
            assert_eq!(b.mirror_is_smaller(), plain(&b), "{b:?}");
            assert_eq!(b.mirrored_if(false), b);
            assert_eq!(b.mirrored_if(true), b.mirrored());
        }
    }
}

//! The plain fairLeaf evaluator (search.md §9, constants §10): the in-process
//! oracle for the fast leaf in `crate::leaf`.
//!
//! Written for obviousness, not speed: it works on the row-major 49-byte cells
//! (index `row * 7 + column`, row 0 = top; rules.md §1), computes every
//! per-cell quantity of the spec into its own 49-entry array, and then walks
//! the cells in the spec's order to accumulate each feature. Every floating
//! point expression is written in the exact order of the spec: the goldens are
//! bit patterns, so `a + b + c` and `a + (b + c)` are different programs here.
//!
//! ```
//! use drop7::board::parse_cells;
//! use drop7::reference::leaf::fair_leaf;
//! let cells = parse_cells("0000000000000000000000000000000000000000008888888").unwrap();
//! assert_eq!(fair_leaf(&cells, 4, 5, false), -4057.5);
//! assert_eq!(fair_leaf(&cells, 4, 5, true), -2_500_000.0);
//! ```

use crate::board::{CELLS, CRACKED, Cells, SIZE, SOLID};

/// Number of features (= weights) in the fairLeaf dot product (search.md §9).
pub const TERM_COUNT: usize = 19;

/// The value fairLeaf returns for a game-over position (search.md §10,
/// `kFairTerminalUtility`; never reached inside the search).
pub const FAIR_TERMINAL_UTILITY: f64 = -2_500_000.0;

/// The `frozen-fair.weights`, in dot-product order (search.md §9 table);
/// index `i` weighs feature `i` of [`fair_leaf_terms`] (and [`TERM_NAMES`]).
/// Term 17 (index 16, roughness) has weight `0.0`.
pub const FAIR_WEIGHTS: [f64; TERM_COUNT] = [
    180.0, -20.0, -620.0, -220.0, -18.0, -90.0, 1600.0, 700.0, 100.0, 40.0, -550.0, -750.0, -120.0,
    -95.0, -85.0, -1250.0, 0.0, -35.0, 220.0,
];

/// Feature names in dot-product order, as in search.md §9 and the `terms`
/// field of `leaf.jsonl` (search-golden-format.md).
pub const TERM_NAMES: [&str; TERM_COUNT] = [
    "open_columns",
    "height_load",
    "solid_cells",
    "cracked_cells",
    "numbered_cells",
    "high_low_numbers",
    "direct_potential",
    "latent_chain_potential",
    "cracked_exposure",
    "solid_exposure",
    "adjacent_ones",
    "triple_twos",
    "dead_low_numbers",
    "covered_height_risk",
    "low_number_height_risk",
    "danger_height_squared",
    "roughness",
    "rise_pressure",
    "next_disc_vertical_options",
];

/// The 19 fairLeaf features of one position, in dot-product order
/// (search.md §9; names in [`TERM_NAMES`]). Units: counts, sums of squared
/// elevations, or sums of readiness probabilities in `[0, 1]`, per feature.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LeafTerms(pub [f64; TERM_COUNT]);

impl LeafTerms {
    /// The features of a non-terminal position; see [`fair_leaf_terms`].
    ///
    /// # Panics
    /// As [`fair_leaf_terms`].
    pub fn new(cells: &Cells, next_disc: u8, moves_remaining: u8) -> LeafTerms {
        LeafTerms(fair_leaf_terms(cells, next_disc, moves_remaining))
    }

    /// The weighted sum with [`FAIR_WEIGHTS`]; see [`dot_fair_weights`].
    pub fn value(&self) -> f64 {
        dot_fair_weights(&self.0)
    }
}

/// fairLeaf (search.md §9): [`FAIR_TERMINAL_UTILITY`] if `game_over`, else the
/// dot product of [`FAIR_WEIGHTS`] with [`fair_leaf_terms`].
///
/// `cells` must be bottom-packed (as [`crate::board::parse_cells`] checks).
///
/// `next_disc` should be 1..=7 (any other value has no vertical options).
///
/// # Panics
/// If the game is not over and `moves_remaining` is not in 1..=5 (the
/// reference throws; the search never passes anything else).
pub fn fair_leaf(cells: &Cells, next_disc: u8, moves_remaining: u8, game_over: bool) -> f64 {
    if game_over {
        return FAIR_TERMINAL_UTILITY;
    }
    dot_fair_weights(&fair_leaf_terms(cells, next_disc, moves_remaining))
}

/// The dot product of [`FAIR_WEIGHTS`] with `terms`, in the spec's order:
/// `result = 0.0`, then one `result += w * f` per term, index 0 to 18 (two
/// roundings per term, never fused; search.md §8, §9).
pub fn dot_fair_weights(terms: &[f64; TERM_COUNT]) -> f64 {
    let mut result = 0.0;
    for (w, f) in FAIR_WEIGHTS.iter().zip(terms) {
        let product = w * f;
        result += product;
    }
    result
}

/// The 19 features of a non-terminal position in dot-product order
/// (search.md §9.1–§9.8), term 17 (roughness) included.
///
/// `cells`: row-major, bottom-packed; see [`fair_leaf`] for `next_disc`.
///
/// # Panics
/// If `moves_remaining` is not in 1..=5.
pub fn fair_leaf_terms(cells: &Cells, next_disc: u8, moves_remaining: u8) -> [f64; TERM_COUNT] {
    assert!(
        (1..=5).contains(&moves_remaining),
        "fairLeaf needs moves_remaining in 1..=5"
    );
    let a = Analysis::new(cells);
    let (latent_chain_potential, dead_low_numbers) = a.release_inventory();
    [
        f64::from(open_columns(cells)),
        height_load(cells),
        f64::from(count_cells(cells, |v| v == SOLID)),
        f64::from(count_cells(cells, |v| v == CRACKED)),
        f64::from(count_cells(cells, is_numbered)),
        f64::from(high_low_numbers(cells)),
        a.direct_potential(),
        latent_chain_potential,
        a.cracked_exposure(),
        a.solid_exposure(),
        a.adjacent_ones(),
        a.triple_twos(),
        dead_low_numbers,
        covered_height_risk(cells),
        low_number_height_risk(cells),
        danger_height_squared(&a.heights),
        roughness(&a.heights),
        rise_pressure(&a.heights, moves_remaining),
        next_disc_vertical_options(&a.heights, next_disc),
    ]
}

// ---------------------------------------------------------------------------
// Small helpers (search.md §9 "Definitions", §9.2)
// ---------------------------------------------------------------------------

/// Row-major index of (row, column).
fn idx(row: usize, col: usize) -> usize {
    row * SIZE + col
}

/// Elevation of a row: bottom row (6) = 1, top row (0) = 7.
fn elevation(row: usize) -> i32 {
    (SIZE - row) as i32
}

/// Whether a cell code is a numbered disc (1..=7).
fn is_numbered(v: u8) -> bool {
    (1..=7).contains(&v)
}

/// `readiness(cost) = 2^(1 - cost)` for `cost >= 1`, else `0.0` (search.md §9.2).
/// Exact: repeated halving of 1.0.
fn readiness(cost: i32) -> f64 {
    if cost < 1 {
        return 0.0;
    }
    let mut r = 1.0;
    for _ in 1..cost {
        r *= 0.5;
    }
    r
}

/// `union(a, b) = 1 - (1 - a) * (1 - b)`: the probability of either of two
/// independent events (search.md §9.2; this exact expression order).
fn union(a: f64, b: f64) -> f64 {
    1.0 - (1.0 - a) * (1.0 - b)
}

/// `releaseReadiness(excess, support)` (search.md §9.5): `0` when `excess <= 0`
/// or fewer than `excess` supports, else the `excess`-th largest support times
/// `readiness(excess)`.
fn release_readiness(excess: i32, support: &[f64]) -> f64 {
    if excess <= 0 || support.len() < excess as usize {
        return 0.0;
    }
    let mut sorted = support.to_vec();
    sorted.sort_by(|a, b| b.total_cmp(a));
    sorted[excess as usize - 1] * readiness(excess)
}

/// `std::max` on two doubles (no NaNs occur here).
fn max_f64(a: f64, b: f64) -> f64 {
    if a < b { b } else { a }
}

// ---------------------------------------------------------------------------
// §9.1 simple counts and sums
// ---------------------------------------------------------------------------

/// Column heights: occupied cells per column (columns are bottom-packed).
fn column_heights(cells: &Cells) -> [i32; SIZE] {
    let mut h = [0; SIZE];
    for (c, hc) in h.iter_mut().enumerate() {
        *hc = (0..SIZE).filter(|&r| cells[idx(r, c)] != 0).count() as i32;
    }
    h
}

/// Number of cells whose code satisfies `pred`.
fn count_cells(cells: &Cells, pred: impl Fn(u8) -> bool) -> i32 {
    cells.iter().filter(|&&v| pred(v)).count() as i32
}

/// open_columns: columns whose top cell is empty.
fn open_columns(cells: &Cells) -> i32 {
    (0..SIZE).filter(|&c| cells[idx(0, c)] == 0).count() as i32
}

/// height_load: Σ `e*e` over occupied cells, row-major, added as doubles.
fn height_load(cells: &Cells) -> f64 {
    let mut sum = 0.0;
    for row in 0..SIZE {
        for col in 0..SIZE {
            if cells[idx(row, col)] != 0 {
                let e = elevation(row);
                sum += f64::from(e * e);
            }
        }
    }
    sum
}

/// high_low_numbers: cells valued 1 or 2 with elevation >= 5 (rows 0..=2).
fn high_low_numbers(cells: &Cells) -> i32 {
    let mut n = 0;
    for row in 0..SIZE {
        for col in 0..SIZE {
            let v = cells[idx(row, col)];
            if (v == 1 || v == 2) && elevation(row) >= 5 {
                n += 1;
            }
        }
    }
    n
}

/// covered_height_risk: row-major over grays; solid adds `e²·m`, cracked
/// `(e²·m)·0.72`, with `m = 1.65` on the edge columns 0 and 6, else 1.
fn covered_height_risk(cells: &Cells) -> f64 {
    let mut sum = 0.0;
    for row in 0..SIZE {
        for col in 0..SIZE {
            let v = cells[idx(row, col)];
            let e = elevation(row);
            let m = if col == 0 || col == 6 { 1.65 } else { 1.0 };
            if v == SOLID {
                sum += f64::from(e * e) * m;
            } else if v == CRACKED {
                sum += (f64::from(e * e) * m) * 0.72;
            }
        }
    }
    sum
}

/// low_number_height_risk: row-major over cells valued 1 or 2, `Σ r²` with
/// `r = max(0, e - 2)`.
fn low_number_height_risk(cells: &Cells) -> f64 {
    let mut sum = 0.0;
    for row in 0..SIZE {
        for col in 0..SIZE {
            let v = cells[idx(row, col)];
            if v == 1 || v == 2 {
                let r = (elevation(row) - 2).max(0);
                sum += f64::from(r * r);
            }
        }
    }
    sum
}

/// danger_height_squared: `k²` with `k = max(0, max height - 4)`.
fn danger_height_squared(h: &[i32; SIZE]) -> f64 {
    let max_h = h.iter().copied().max().unwrap_or(0);
    let k = (max_h - 4).max(0);
    f64::from(k * k)
}

/// roughness: `Σ_{c=1..6} |h[c] - h[c-1]|` (weight 0).
fn roughness(h: &[i32; SIZE]) -> f64 {
    let mut sum = 0.0;
    for c in 1..SIZE {
        sum += f64::from((h[c] - h[c - 1]).abs());
    }
    sum
}

/// rise_pressure: `Σ_c h³ / moves_remaining`, one true division per column.
fn rise_pressure(h: &[i32; SIZE], moves_remaining: u8) -> f64 {
    let mut sum = 0.0;
    for &hc in h {
        sum += f64::from(hc * hc * hc) / f64::from(moves_remaining);
    }
    sum
}

/// next_disc_vertical_options: columns with `h < 7` and `h + 1 == next_disc`.
fn next_disc_vertical_options(h: &[i32; SIZE], next_disc: u8) -> f64 {
    let mut sum = 0.0;
    for &hc in h {
        if hc < 7 && hc + 1 == i32::from(next_disc) {
            sum += 1.0;
        }
    }
    sum
}

// ---------------------------------------------------------------------------
// §9.3–§9.8 per-cell analysis
// ---------------------------------------------------------------------------

/// A maximal run of occupied cells along one line (inclusive bounds; the
/// index is a column for a row's run, a row for a column's run).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Run {
    start: usize,
    end: usize,
}

impl Run {
    /// Number of cells in the run.
    fn len(self) -> i32 {
        (self.end - self.start + 1) as i32
    }
}

/// Per-cell quantities of §9.3–§9.5, each a 49-entry row-major array
/// (zero / default for cells where the spec does not define them).
struct Analysis {
    cells: Cells,
    /// Column heights.
    heights: [i32; SIZE],
    /// Horizontal run through each occupied cell (§9.3).
    hrun: [Run; CELLS],
    /// Vertical run through each occupied cell (§9.3).
    vrun: [Run; CELLS],
    /// §9.4 `vertical_addition` of numbered cells.
    vertical_addition: [f64; CELLS],
    /// §9.4 `horizontal_addition` of numbered cells.
    horizontal_addition: [f64; CELLS],
    /// §9.4 `addition = union(horizontal, vertical)` of numbered cells.
    addition: [f64; CELLS],
    /// §9.5 `horizontal_release` of numbered cells.
    horizontal_release: [f64; CELLS],
    /// §9.5 `vertical_release` of numbered cells.
    vertical_release: [f64; CELLS],
    /// §9.5 `release = union(horizontal, vertical)` of numbered cells.
    release: [f64; CELLS],
}

impl Analysis {
    /// Runs §9.3 (line analysis), §9.4 (additions) and §9.5 (releases).
    fn new(cells: &Cells) -> Analysis {
        let mut a = Analysis {
            cells: *cells,
            heights: column_heights(cells),
            hrun: [Run::default(); CELLS],
            vrun: [Run::default(); CELLS],
            vertical_addition: [0.0; CELLS],
            horizontal_addition: [0.0; CELLS],
            addition: [0.0; CELLS],
            horizontal_release: [0.0; CELLS],
            vertical_release: [0.0; CELLS],
            release: [0.0; CELLS],
        };
        a.analyze_lines();
        a.compute_additions();
        a.compute_releases();
        a
    }

    /// §9.3: the horizontal and vertical maximal occupied runs of every
    /// occupied cell (grays included).
    fn analyze_lines(&mut self) {
        for line in 0..SIZE {
            let row_occupied: [bool; SIZE] =
                std::array::from_fn(|col| self.cells[idx(line, col)] != 0);
            for (col, run) in runs_of(&row_occupied) {
                self.hrun[idx(line, col)] = run;
            }
            let col_occupied: [bool; SIZE] =
                std::array::from_fn(|row| self.cells[idx(row, line)] != 0);
            for (row, run) in runs_of(&col_occupied) {
                self.vrun[idx(row, line)] = run;
            }
        }
    }

    /// §9.4: vertical, horizontal and combined addition of every numbered cell.
    fn compute_additions(&mut self) {
        for row in 0..SIZE {
            for col in 0..SIZE {
                let i = idx(row, col);
                let v = self.cells[i];
                if !is_numbered(v) {
                    continue;
                }
                let v = i32::from(v);
                let hc = self.heights[col];
                let vertical = if v > hc { readiness(v - hc) } else { 0.0 };
                let cost = self.horizontal_cost(row, self.hrun[i], v);
                let horizontal = if cost < 0 { 0.0 } else { readiness(cost) };
                self.vertical_addition[i] = vertical;
                self.horizontal_addition[i] = horizontal;
                self.addition[i] = union(horizontal, vertical);
            }
        }
    }

    /// §9.4 horizontal cost of a disc valued `v` at `row` whose horizontal run
    /// is `run`: the cheapest positive number of discs to add so that some
    /// window of exactly `v` cells containing the run fills at this elevation
    /// without its outside neighbours extending it; `-1` if there is none.
    fn horizontal_cost(&self, row: usize, run: Run, v: i32) -> i32 {
        if v <= run.len() {
            return -1;
        }
        let e = elevation(row);
        let h = &self.heights;
        let (s, t) = (run.start as i32, run.end as i32);
        let mut best = -1;
        for a in 0..SIZE as i32 {
            let b = a + v - 1; // last column of the window
            if b > 6 || a > s || b < t {
                continue;
            }
            let left_blocks = a > 0 && h[(a - 1) as usize] >= e;
            let right_blocks = a + v <= 6 && h[(a + v) as usize] >= e;
            if left_blocks || right_blocks {
                continue;
            }
            let cost: i32 = (a..=b).map(|col| (e - h[col as usize]).max(0)).sum();
            if cost > 0 && (best < 0 || cost < best) {
                best = cost;
            }
        }
        best
    }

    /// §9.5: horizontal, vertical and combined release of every numbered cell.
    fn compute_releases(&mut self) {
        for row in 0..SIZE {
            for col in 0..SIZE {
                let i = idx(row, col);
                let v = self.cells[i];
                if !is_numbered(v) {
                    continue;
                }
                let v = i32::from(v);
                let (hrun, vrun) = (self.hrun[i], self.vrun[i]);
                let hsupport: Vec<f64> = (hrun.start..=hrun.end)
                    .map(|c| idx(row, c))
                    .filter(|&j| j != i && is_numbered(self.cells[j]))
                    .map(|j| self.addition[j])
                    .collect();
                let vsupport: Vec<f64> = (vrun.start..=vrun.end)
                    .map(|r| idx(r, col))
                    .filter(|&j| j != i && is_numbered(self.cells[j]))
                    .map(|j| self.addition[j])
                    .collect();
                let horizontal = release_readiness(hrun.len() - v, &hsupport);
                let vertical = release_readiness(vrun.len() - v, &vsupport);
                self.horizontal_release[i] = horizontal;
                self.vertical_release[i] = vertical;
                self.release[i] = union(horizontal, vertical);
            }
        }
    }

    /// §9.4 direct_potential: Σ addition over numbered cells, row-major.
    fn direct_potential(&self) -> f64 {
        let mut sum = 0.0;
        for i in 0..CELLS {
            if is_numbered(self.cells[i]) {
                sum += self.addition[i];
            }
        }
        sum
    }

    /// §9.5 (latent_chain_potential, dead_low_numbers), both accumulated in
    /// one row-major pass over the numbered cells.
    fn release_inventory(&self) -> (f64, f64) {
        let mut latent = 0.0;
        let mut dead = 0.0;
        for i in 0..CELLS {
            let v = self.cells[i];
            if !is_numbered(v) {
                continue;
            }
            latent += self.release[i];
            let v = i32::from(v);
            if v <= 2 && self.hrun[i].len() > v && self.vrun[i].len() > v {
                dead += 1.0 - union(self.addition[i], self.release[i]);
            }
        }
        (latent, dead)
    }

    /// `union(vertical_addition, vertical_release)` of cell `i`: its chance to
    /// pop by a vertical route.
    fn vertical_escape(&self, i: usize) -> f64 {
        union(self.vertical_addition[i], self.vertical_release[i])
    }

    /// `union(horizontal_addition, horizontal_release)` of cell `i`.
    fn horizontal_escape(&self, i: usize) -> f64 {
        union(self.horizontal_addition[i], self.horizontal_release[i])
    }

    /// `union(addition, release)` of cell `i`: its overall chance to pop.
    fn total_support(&self, i: usize) -> f64 {
        union(self.addition[i], self.release[i])
    }

    /// §9.6 adjacent_ones: row-major over 1s; a right neighbour 1 adds
    /// `1 - max(vertical escapes)`, then a lower neighbour 1 adds
    /// `1 - max(horizontal escapes)`.
    fn adjacent_ones(&self) -> f64 {
        let mut sum = 0.0;
        for row in 0..SIZE {
            for col in 0..SIZE {
                let i = idx(row, col);
                if self.cells[i] != 1 {
                    continue;
                }
                if col < 6 && self.cells[idx(row, col + 1)] == 1 {
                    let j = idx(row, col + 1);
                    let escape = max_f64(self.vertical_escape(i), self.vertical_escape(j));
                    sum += 1.0 - escape;
                }
                if row < 6 && self.cells[idx(row + 1, col)] == 1 {
                    let j = idx(row + 1, col);
                    let escape = max_f64(self.horizontal_escape(i), self.horizontal_escape(j));
                    sum += 1.0 - escape;
                }
            }
        }
        sum
    }

    /// §9.7 triple_twos: rows (top to bottom, runs left to right) then columns
    /// (left to right, runs top to bottom); a run of `n` twos with
    /// `excess = n - 2 > 0` adds `excess² · (1 - escape)`, escape = the largest
    /// cross-direction escape of its cells.
    fn triple_twos(&self) -> f64 {
        let mut sum = 0.0;
        for row in 0..SIZE {
            let is_two: [bool; SIZE] = std::array::from_fn(|c| self.cells[idx(row, c)] == 2);
            for run in maximal_runs(&is_two) {
                let cells = (run.start..=run.end).map(|c| idx(row, c));
                sum += self.twos_penalty(run, cells, Self::vertical_escape);
            }
        }
        for col in 0..SIZE {
            let is_two: [bool; SIZE] = std::array::from_fn(|r| self.cells[idx(r, col)] == 2);
            for run in maximal_runs(&is_two) {
                let cells = (run.start..=run.end).map(|r| idx(r, col));
                sum += self.twos_penalty(run, cells, Self::horizontal_escape);
            }
        }
        sum
    }

    /// One run's triple_twos contribution (0 unless it has 3 or more twos).
    fn twos_penalty(
        &self,
        run: Run,
        cells: impl Iterator<Item = usize>,
        escape_of: fn(&Analysis, usize) -> f64,
    ) -> f64 {
        let excess = run.len() - 2;
        if excess <= 0 {
            return 0.0;
        }
        let mut escape = 0.0;
        for i in cells {
            escape = max_f64(escape, escape_of(self, i));
        }
        f64::from(excess * excess) * (1.0 - escape)
    }

    /// `union(addition, release)` of the numbered neighbours of (row, col),
    /// in the order up, down, left, right, then sorted descending (§9.8).
    fn neighbour_supports(&self, row: usize, col: usize) -> Vec<f64> {
        let mut neighbours = Vec::new();
        if row > 0 {
            neighbours.push(idx(row - 1, col));
        }
        if row < 6 {
            neighbours.push(idx(row + 1, col));
        }
        if col > 0 {
            neighbours.push(idx(row, col - 1));
        }
        if col < 6 {
            neighbours.push(idx(row, col + 1));
        }
        let mut support: Vec<f64> = neighbours
            .into_iter()
            .filter(|&j| is_numbered(self.cells[j]))
            .map(|j| self.total_support(j))
            .collect();
        support.sort_by(|a, b| b.total_cmp(a));
        support
    }

    /// §9.8 cracked_exposure: row-major over cracked grays,
    /// `1 - Π (1 - s)` over the neighbour supports in descending order.
    fn cracked_exposure(&self) -> f64 {
        let mut sum = 0.0;
        for row in 0..SIZE {
            for col in 0..SIZE {
                if self.cells[idx(row, col)] != CRACKED {
                    continue;
                }
                let mut inverse = 1.0;
                for s in self.neighbour_supports(row, col) {
                    inverse *= 1.0 - s;
                }
                sum += 1.0 - inverse;
            }
        }
        sum
    }

    /// §9.8 solid_exposure: row-major over solid grays,
    /// `(largest · 0.35) + (second largest · 0.65)` (frozen quirk), the two
    /// products added together before the accumulator.
    fn solid_exposure(&self) -> f64 {
        let mut sum = 0.0;
        for row in 0..SIZE {
            for col in 0..SIZE {
                if self.cells[idx(row, col)] != SOLID {
                    continue;
                }
                let support = self.neighbour_supports(row, col);
                let first = if !support.is_empty() {
                    support[0] * 0.35
                } else {
                    0.0
                };
                let second = if support.len() > 1 {
                    support[1] * 0.65
                } else {
                    0.0
                };
                sum += first + second;
            }
        }
        sum
    }
}

/// The maximal runs of `true` in a 7-cell line, in order.
fn maximal_runs(line: &[bool; SIZE]) -> Vec<Run> {
    let mut runs = Vec::new();
    let mut i = 0;
    while i < SIZE {
        if !line[i] {
            i += 1;
            continue;
        }
        let start = i;
        while i + 1 < SIZE && line[i + 1] {
            i += 1;
        }
        runs.push(Run { start, end: i });
        i += 1;
    }
    runs
}

/// `(position, run)` for every `true` position of a 7-cell line.
fn runs_of(line: &[bool; SIZE]) -> impl Iterator<Item = (usize, Run)> {
    maximal_runs(line)
        .into_iter()
        .flat_map(|run| (run.start..=run.end).map(move |p| (p, run)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::parse_cells;

    #[test]
    fn readiness_is_a_power_of_two() {
        assert_eq!(readiness(0), 0.0);
        assert_eq!(readiness(-1), 0.0);
        assert_eq!(readiness(1), 1.0);
        assert_eq!(readiness(3), 0.25);
        for cost in 1..80 {
            assert_eq!(readiness(cost), f64::from_bits((1024 - cost as u64) << 52));
        }
    }

    #[test]
    fn runs() {
        let line = [true, true, false, true, false, false, true];
        assert_eq!(
            maximal_runs(&line),
            vec![
                Run { start: 0, end: 1 },
                Run { start: 3, end: 3 },
                Run { start: 6, end: 6 }
            ]
        );
    }

    #[test]
    fn opening_board() {
        let cells = parse_cells("0000000000000000000000000000000000000000008888888").unwrap();
        let terms = fair_leaf_terms(&cells, 4, 5);
        assert_eq!(terms[0], 7.0);
        // covered_height_risk: the bottom row's solids, left to right.
        assert_eq!(terms[13], 1.65 + 1.0 + 1.0 + 1.0 + 1.0 + 1.0 + 1.65);
        assert_eq!(fair_leaf(&cells, 4, 5, false).to_bits(), 0xc0afb30000000000);
    }

    #[test]
    fn lone_one_on_a_gray_is_not_ready() {
        // A 1 on a solid at row 5, column 4: its column is 2 high (no vertical
        // addition) and its run is 1 long (no horizontal addition).
        let cells = parse_cells("0000000000000000000000000000000000000001008888888").unwrap();
        let a = Analysis::new(&cells);
        assert_eq!(a.addition[idx(5, 4)], 0.0);
    }
}

//! The search's chance model: stratified samples of the next disc and of gray
//! reveals, and the per-state scenario seed (spec: search.md §3).
//!
//! ```
//! use drop7::strata::{sampled_next_disc, scenario_seed_cells, POLICY_SEED};
//! // With 7 strata the 7 samples of an event cover the discs 1..=7 once each.
//! let mut discs: Vec<u8> = (0..7).map(|s| sampled_next_disc(0xDEAD_BEEF, s, 7)).collect();
//! discs.sort();
//! assert_eq!(discs, [1, 2, 3, 4, 5, 6, 7]);
//! ```

use crate::board::{Board, CELLS, Cells, SIZE};
use crate::rng::{DiscSource, mix32};

/// Policy seed of the fair search (`0xd7075eed`).
pub const POLICY_SEED: u32 = 0xd707_5eed;
/// REVEAL domain (`"REVL"`).
pub const REVEAL_DOMAIN: u32 = 0x5245_564c;
/// DISC domain (`"DISC"`).
pub const DISC_DOMAIN: u32 = 0x4449_5343;
const DEPTH_MULTIPLIER: u32 = 0x85eb_ca6b;
const SAMPLE_MULTIPLIER: u32 = 0x9e37_79b9;
const FNV_OFFSET: u32 = 0x811c_9dc5;
const FNV_PRIME: u32 = 0x0100_0193;

/// `stratifiedUnit(seed, sample, count, domain, event)`: a point of stratum
/// `(sample + rotation) % count` of `[0, 1)` (search.md §3.1).
#[inline]
pub fn stratified_unit(seed: u32, sample: u32, count: u32, domain: u32, event: u32) -> f64 {
    let event_seed = mix32(seed ^ domain ^ event.wrapping_add(1).wrapping_mul(DEPTH_MULTIPLIER));
    let rotation = event_seed % count;
    let stratum = (sample + rotation) % count;
    let jitter = f64::from(mix32(
        event_seed ^ sample.wrapping_add(1).wrapping_mul(SAMPLE_MULTIPLIER),
    )) / 4_294_967_296.0;
    (f64::from(stratum) + jitter) / f64::from(count)
}

/// Maps a unit value to a disc: `floor(unit * 7) + 1`.
#[inline]
pub fn unit_to_disc(unit: f64) -> u8 {
    (unit * 7.0) as u8 + 1
}

/// `sampledNextDisc(seed, sample, S)`: DISC domain, event 0.
#[inline]
pub fn sampled_next_disc(seed: u32, sample: u32, count: u32) -> u8 {
    unit_to_disc(stratified_unit(seed, sample, count, DISC_DOMAIN, 0))
}

/// `StratifiedRandom{seed, sample, S, event}`: REVEAL-domain draws, one event a
/// draw (search.md §3.2).
#[derive(Clone, Copy, Debug)]
pub struct StratifiedRandom {
    /// Scenario seed of the chance node.
    pub seed: u32,
    /// Sample index 0..count.
    pub sample: u32,
    /// Number of strata S.
    pub count: u32,
    /// Next event number.
    pub event: u32,
}

impl StratifiedRandom {
    /// Stream `sample` of a chance node with scenario seed `seed` and `count` strata.
    pub const fn new(seed: u32, sample: u32, count: u32) -> StratifiedRandom {
        StratifiedRandom {
            seed,
            sample,
            count,
            event: 0,
        }
    }
}

impl DiscSource for StratifiedRandom {
    #[inline]
    fn draw_disc(&mut self) -> u8 {
        let d = unit_to_disc(stratified_unit(
            self.seed,
            self.sample,
            self.count,
            REVEAL_DOMAIN,
            self.event,
        ));
        self.event += 1;
        d
    }
}

/// `scenarioSeedForState` over row-major cells (search.md §3.3).
pub fn scenario_seed_cells(cells: &Cells, next_disc: u8, moves_remaining: u8, depth: u32) -> u32 {
    let mut h = FNV_OFFSET;
    for &cell in cells.iter().take(CELLS) {
        h ^= u32::from(cell) + 1;
        h = h.wrapping_mul(FNV_PRIME);
    }
    finish_scenario_seed(h, next_disc, moves_remaining, depth)
}

#[inline]
fn finish_scenario_seed(mut h: u32, next_disc: u8, moves_remaining: u8, depth: u32) -> u32 {
    h ^= u32::from(next_disc);
    h = h.wrapping_mul(FNV_PRIME);
    h ^= u32::from(moves_remaining);
    mix32(h ^ POLICY_SEED ^ depth.wrapping_add(1).wrapping_mul(DEPTH_MULTIPLIER))
}

/// `scenarioSeedForState` straight from the packed board (same value as
/// [`scenario_seed_cells`] on its cells).
#[inline]
pub fn scenario_seed(board: &Board, next_disc: u8, moves_remaining: u8, depth: u32) -> u32 {
    let cols = board.columns();
    let mut h = FNV_OFFSET;
    for shift in (0..SIZE as u32).rev() {
        for w in cols {
            h ^= ((w >> (4 * shift)) & 0xF) + 1;
            h = h.wrapping_mul(FNV_PRIME);
        }
    }
    finish_scenario_seed(h, next_disc, moves_remaining, depth)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_seed_equals_cells_seed() {
        let b: Board = "0000000000000000000000000000000400000050008888898"
            .parse()
            .unwrap();
        for d in 0..5 {
            assert_eq!(
                scenario_seed(&b, 3, 2, d),
                scenario_seed_cells(&b.to_cells(), 3, 2, d)
            );
        }
    }

    #[test]
    fn seven_strata_cover_every_disc() {
        for seed in [1u32, 77, 0xFFFF_FFFF] {
            for event in 0..4 {
                let mut seen = [false; 8];
                for s in 0..7 {
                    let u = stratified_unit(seed, s, 7, REVEAL_DOMAIN, event);
                    assert!((0.0..1.0).contains(&u));
                    seen[unit_to_disc(u) as usize] = true;
                }
                assert!(seen[1..].iter().all(|&x| x));
            }
        }
    }
}

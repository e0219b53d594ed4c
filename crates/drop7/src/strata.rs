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

/// The event seed of event `event` of `domain` under scenario seed `seed`
/// (search.md §3.1): what the rotation and the jitter derive from.
#[inline(always)]
fn event_seed(seed: u32, domain: u32, event: u32) -> u32 {
    mix32(seed ^ domain ^ event.wrapping_add(1).wrapping_mul(DEPTH_MULTIPLIER))
}

/// `stratifiedUnit(seed, sample, count, domain, event)`: a point of stratum
/// `(sample + rotation) % count` of `[0, 1)` (search.md §3.1).
#[inline]
pub fn stratified_unit(seed: u32, sample: u32, count: u32, domain: u32, event: u32) -> f64 {
    let event_seed = event_seed(seed, domain, event);
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

/// `unit_to_disc(stratified_unit(seed, sample, count, domain, event))`, the
/// stratified disc, with a shortcut for 7 strata: the disc is then the
/// stratum plus one, whatever the jitter, so neither the jitter's hash nor
/// the floating point is needed (and `% 7` is a multiply, not a division).
///
/// Why: the unit is `(s + j) / 7` with stratum `s` in 0..7 and jitter `j` a
/// multiple of 2^-32 in `[0, 1)`; `s + j` is exact (35 bits), and the
/// division and the product by 7 each round by at most half an ulp, a
/// relative error below 2^-52, i.e. below 8 · 2^-52 absolute, far below the
/// 2^-32 between `s + j` and an integer unless `j = 0`. For `j = 0`,
/// `s / 7 * 7 == s` exactly for every `s` in 0..7 (checked by a test). So
/// `floor(unit * 7) = s`. `sample < count` as everywhere in the search.
#[inline(always)]
pub fn stratified_disc(seed: u32, sample: u32, count: u32, domain: u32, event: u32) -> u8 {
    if count == 7 {
        ((sample + rotation7(seed, domain, event)) % 7) as u8 + 1
    } else {
        unit_to_disc(stratified_unit(seed, sample, count, domain, event))
    }
}

/// Reveal events whose 7-strata rotations [`RevealRotations`] holds.
const SHARED_EVENTS: usize = 2;

/// The rotations `mix32(…) % 7` of a chance node's first reveal events with
/// 7 strata (see [`stratified_disc`]): they depend on the seed and the event
/// only, so the node's samples share them instead of each hashing them again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RevealRotations {
    rot: [u32; SHARED_EVENTS],
}

impl RevealRotations {
    /// The rotations for scenario seed `seed` with `count` strata (unused,
    /// zero, unless `count` is 7).
    #[inline(always)]
    pub fn new(seed: u32, count: u32) -> RevealRotations {
        let mut rot = [0u32; SHARED_EVENTS];
        if count == 7 {
            for (event, r) in (0u32..).zip(&mut rot) {
                *r = reveal_rotation(seed, event);
            }
        }
        RevealRotations { rot }
    }
}

/// The 7-strata rotation of event `event` of `domain` under scenario seed
/// `seed`: its [`event_seed`] `% 7` (a 7-strata disc is the sample plus this,
/// mod 7, plus one; see [`stratified_disc`]).
#[inline(always)]
fn rotation7(seed: u32, domain: u32, event: u32) -> u32 {
    event_seed(seed, domain, event) % 7
}

/// [`rotation7`] of reveal event `event`.
#[inline(always)]
fn reveal_rotation(seed: u32, event: u32) -> u32 {
    rotation7(seed, REVEAL_DOMAIN, event)
}

/// [`StratifiedRandom`]'s draws through [`stratified_disc`] (the 7-strata
/// shortcut, the first events' rotations from a [`RevealRotations`]): the
/// source of the fast search's reveal values. Same draws as
/// `StratifiedRandom::new(seed, sample, count)`.
#[derive(Clone, Copy, Debug)]
pub struct StratifiedDraws {
    seed: u32,
    sample: u32,
    count: u32,
    event: u32,
    rotations: RevealRotations,
}

impl StratifiedDraws {
    /// Sample `sample` (below `count`) of the chance node with scenario seed `seed`.
    #[inline(always)]
    pub fn new(seed: u32, sample: u32, count: u32) -> StratifiedDraws {
        StratifiedDraws::with_rotations(seed, sample, count, RevealRotations::new(seed, count))
    }

    /// [`StratifiedDraws::new`] with the node's shared rotations
    /// (`rotations` must be `RevealRotations::new(seed, count)`).
    #[inline(always)]
    pub const fn with_rotations(
        seed: u32,
        sample: u32,
        count: u32,
        rotations: RevealRotations,
    ) -> StratifiedDraws {
        StratifiedDraws {
            seed,
            sample,
            count,
            event: 0,
            rotations,
        }
    }
}

impl DiscSource for StratifiedDraws {
    #[inline(always)]
    fn draw_disc(&mut self) -> u8 {
        let event = self.event;
        self.event += 1;
        if self.count == 7 {
            let rot = match self.rotations.rot.get(event as usize) {
                Some(&r) => r,
                None => reveal_rotation(self.seed, event),
            };
            // `(sample + rot) % 7` with both below 7.
            let x = self.sample + rot;
            (if x >= 7 { x - 7 } else { x }) as u8 + 1
        } else {
            other_strata_reveal(self.seed, self.sample, self.count, event)
        }
    }
}

/// [`StratifiedDraws`]' draw with a strata count other than 7 (hashes and
/// floating point): out of line, so that the cascade code that inlines the
/// 7-strata draw (the search's setting) stays small in the instruction cache
/// and does not set up this path's constants on every call.
#[cold]
#[inline(never)]
fn other_strata_reveal(seed: u32, sample: u32, count: u32, event: u32) -> u8 {
    stratified_disc(seed, sample, count, REVEAL_DOMAIN, event)
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

    #[test]
    fn seven_strata_disc_is_the_stratum() {
        // The jitter-0 case of the shortcut's argument, exactly.
        for s in 0..7u32 {
            assert_eq!(unit_to_disc(f64::from(s) / 7.0), s as u8 + 1);
            // The extreme jitters too.
            for j in [2f64.powi(-32), 1.0 - 2f64.powi(-32)] {
                assert_eq!(unit_to_disc((f64::from(s) + j) / 7.0), s as u8 + 1);
            }
        }
    }

    #[test]
    fn stratified_disc_matches_definition() {
        let mut x = 0x1234_5678u32;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        };
        for count in [1u32, 2, 3, 5, 7, 8, 13, 32] {
            for _ in 0..100_000 {
                let (seed, event) = (next(), next() % 64);
                let sample = next() % count;
                for domain in [REVEAL_DOMAIN, DISC_DOMAIN] {
                    let want = unit_to_disc(stratified_unit(seed, sample, count, domain, event));
                    assert_eq!(stratified_disc(seed, sample, count, domain, event), want);
                }
            }
        }
        // Whole sources, as the search draws them.
        for seed in [0u32, 1, 0xFFFF_FFFF, 0xA527_0000] {
            for count in [5u32, 7] {
                for sample in 0..count {
                    let mut a = StratifiedRandom::new(seed, sample, count);
                    let mut b = StratifiedDraws::new(seed, sample, count);
                    for _ in 0..50 {
                        assert_eq!(a.draw_disc(), b.draw_disc());
                    }
                }
            }
        }
        // One node's rotations shared by its samples, on many seeds.
        for _ in 0..20_000 {
            let seed = next();
            for count in [6u32, 7] {
                let rotations = RevealRotations::new(seed, count);
                for sample in 0..count {
                    let mut a = StratifiedRandom::new(seed, sample, count);
                    let mut b = StratifiedDraws::with_rotations(seed, sample, count, rotations);
                    for _ in 0..4 {
                        assert_eq!(a.draw_disc(), b.draw_disc());
                    }
                }
            }
        }
    }
}

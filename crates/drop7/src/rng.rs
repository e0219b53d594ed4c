//! Randomness exactly as the reference engines draw it (spec: rules.md §6).
//!
//! * [`Mulberry32`]: the reference PRNG, 32-bit state, wrapping arithmetic.
//! * [`mix32`]: murmur3's `fmix32` finaliser.
//! * [`headless_disc`] / [`headless_reveal_seed`]: the headless driver's
//!   per-move next disc and reveal-stream seed (rules.md §6a).
//! * [`DiscSource`]: anything a move can draw gray-reveal values and the next
//!   disc from (a game stream, a per-move reveal stream, a search stratum).
//!
//! ```
//! use drop7::rng::{Mulberry32, DiscSource};
//! let mut r = Mulberry32::new(1);
//! let discs: Vec<u8> = (0..5).map(|_| r.draw_disc()).collect();
//! assert_eq!(discs, [5, 1, 4, 7, 7]);
//! ```

/// The Mulberry32 generator (`seededRandom` in TS, `drop7::Mulberry32` in C++).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mulberry32 {
    state: u32,
}

impl Mulberry32 {
    /// A generator seeded with `seed` (any u32).
    #[inline]
    pub const fn new(seed: u32) -> Self {
        Mulberry32 { state: seed }
    }

    /// The generator's 32-bit state (rules.md §6): [`Mulberry32::from_state`]
    /// of it continues the same stream (e.g. to save a game mid-stream).
    #[inline]
    pub const fn state(&self) -> u32 {
        self.state
    }

    /// A generator resumed at `state`, as [`Mulberry32::state`] returned it
    /// (rules.md §6: the state is the whole generator; a fresh stream's state
    /// is its seed).
    #[inline]
    pub const fn from_state(state: u32) -> Self {
        Mulberry32 { state }
    }

    /// Next 32 random bits.
    #[inline]
    pub fn next_bits(&mut self) -> u32 {
        self.state = self.state.wrapping_add(0x6D2B_79F5);
        let mut v = self.state;
        v = (v ^ (v >> 15)).wrapping_mul(v | 1);
        v ^= v.wrapping_add((v ^ (v >> 7)).wrapping_mul(v | 61));
        v ^ (v >> 14)
    }
}

/// Maps 32 random bits to a disc 1..=7: `((u64(bits) * 7) >> 32) + 1`.
#[inline]
pub const fn disc_from_bits(bits: u32) -> u8 {
    (((bits as u64) * 7) >> 32) as u8 + 1
}

/// murmur3 `fmix32` (rules.md §6): `mix32(0) = 0`, `mix32(1) = 1753845952`.
#[inline]
pub const fn mix32(mut v: u32) -> u32 {
    v ^= v >> 16;
    v = v.wrapping_mul(0x7FEB_352D);
    v ^= v >> 15;
    v = v.wrapping_mul(0x846C_A68B);
    v ^= v >> 16;
    v
}

/// Headless driver: the disc dropped at absolute move `m` (0-based) of game `seed`.
#[inline]
pub const fn headless_disc(seed: u32, m: u32) -> u8 {
    let x = seed ^ (m.wrapping_add(1)).wrapping_mul(0x9E37_79B9) ^ 0x4E45_5854;
    disc_from_bits(mix32(x))
}

/// Headless driver: the seed of the reveal stream of the move played when
/// `moves_played == k`.
#[inline]
pub const fn headless_reveal_seed(seed: u32, k: u32) -> u32 {
    mix32(seed ^ (k.wrapping_add(1)).wrapping_mul(0x85EB_CA6B) ^ 0x5245_564C)
}

/// The seed of the random policy's own stream: `mix32(seed ^ 0x54524143)` (rules.md §10).
#[inline]
pub const fn random_policy_seed(seed: u32) -> u32 {
    mix32(seed ^ 0x5452_4143)
}

/// A source of discs 1..=7 for a move: one draw per revealed gray (row-major
/// within a wave, wave after wave) and one final next-disc draw when the game
/// goes on (rules.md §4, §5).
///
/// Latent-board mode (rules.md §8) hooks in through the two provided methods:
/// a latent source answers a reveal with the revealed gray's hidden value
/// instead of a draw, and learns of each successful rise. Both engines call
/// them; plain sources keep the defaults (a reveal is one draw, a rise draws
/// nothing).
pub trait DiscSource {
    /// One draw, mapped to a disc value 1..=7.
    fn draw_disc(&mut self) -> u8;

    /// The value of the gray disc revealed in `column` that has
    /// `covered_below` covered cells (solid or cracked) beneath it in that
    /// column at reveal time (grays keep their order within a column through
    /// gravity, so this names the disc). Default: one draw.
    #[inline(always)]
    fn reveal_disc(&mut self, column: usize, covered_below: u32) -> u8 {
        let _ = (column, covered_below);
        self.draw_disc()
    }

    /// Called once per successful rise, right after the new covered row came
    /// in at the bottom (before the rise cascade). Default: nothing.
    #[inline(always)]
    fn rise(&mut self) {}
}

impl DiscSource for Mulberry32 {
    #[inline]
    fn draw_disc(&mut self) -> u8 {
        disc_from_bits(self.next_bits())
    }
}

impl<T: DiscSource + ?Sized> DiscSource for &mut T {
    #[inline]
    fn draw_disc(&mut self) -> u8 {
        (**self).draw_disc()
    }
    #[inline]
    fn reveal_disc(&mut self, column: usize, covered_below: u32) -> u8 {
        (**self).reveal_disc(column, covered_below)
    }
    #[inline]
    fn rise(&mut self) {
        (**self).rise();
    }
}

/// Counts the draws made through it (the trace's `streamDraws`).
#[derive(Debug)]
pub struct CountingSource<S> {
    /// The wrapped source.
    pub inner: S,
    /// Draws so far.
    pub draws: u32,
}

impl<S: DiscSource> DiscSource for CountingSource<S> {
    #[inline]
    fn draw_disc(&mut self) -> u8 {
        self.draws += 1;
        self.inner.draw_disc()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mulberry32_vectors() {
        let mut r = Mulberry32::new(1);
        let bits: Vec<u32> = (0..5).map(|_| r.next_bits()).collect();
        assert_eq!(
            bits,
            [2693262067, 11749833, 2265367787, 4213581821, 4159151403]
        );
        let mut r = Mulberry32::new(1);
        let discs: Vec<u8> = (0..10).map(|_| r.draw_disc()).collect();
        assert_eq!(discs, [5, 1, 4, 7, 7, 2, 5, 6, 3, 7]);
        let mut r = Mulberry32::new(0);
        let discs: Vec<u8> = (0..10).map(|_| r.draw_disc()).collect();
        assert_eq!(discs, [2, 1, 2, 2, 4, 4, 5, 5, 4, 5]);
    }

    #[test]
    fn mulberry32_state_round_trip() {
        let mut r = Mulberry32::new(7);
        assert_eq!(r.state(), 7);
        r.next_bits();
        let mut resumed = Mulberry32::from_state(r.state());
        let a: Vec<u32> = (0..5).map(|_| r.next_bits()).collect();
        let b: Vec<u32> = (0..5).map(|_| resumed.next_bits()).collect();
        assert_eq!(a, b);
    }

    #[test]
    fn mix32_vectors() {
        assert_eq!(mix32(0), 0);
        assert_eq!(mix32(1), 1753845952);
    }

    #[test]
    fn headless_vectors() {
        let d: Vec<u8> = (0..12).map(|m| headless_disc(1, m)).collect();
        assert_eq!(d, [5, 4, 5, 1, 4, 1, 4, 1, 4, 6, 3, 4]);
        assert_eq!(headless_reveal_seed(1, 0), 2995508631);
        assert_eq!(headless_reveal_seed(1, 1), 3635555087);
        assert_eq!(headless_reveal_seed(1, 2), 2014686879);
    }
}

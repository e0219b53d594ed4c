//! Gravity on a packed column word: keep the non-empty nibbles, in order, at the
//! bottom. Two paths that give the identical word:
//!
//! * [`Bmi2`]: one `PEXT` of the word by its non-zero-nibble mask. A `Bmi2`
//!   token exists only on a CPU that has BMI2 (see [`Bmi2::detect`]), so the
//!   instruction never runs where it would fault.
//! * [`Portable`]: a branch-free nibble loop, for any CPU.
//!
//! The path is a type parameter of the engine and the search, chosen once at
//! the CLI boundary ([`GravityChoice`]); tests and benches may force either with
//! the `DROP7_GRAVITY` environment variable (`auto`, `bmi2`, `portable`).
//!
//! ```
//! use drop7::gravity::{Gravity, Portable};
//! // nibbles, bottom first: 3, 0, 5, 0, 8 -> 3, 5, 8
//! assert_eq!(Portable.compact(0x8_0503), 0x853);
//! ```

use std::fmt;
use std::str::FromStr;

use crate::board::nonzero_nibbles;

/// A gravity implementation: compacts the non-zero nibbles of a column word.
pub trait Gravity: Copy + Send + Sync + fmt::Debug + 'static {
    /// The word with its non-zero nibbles moved down to the low end, in order.
    fn compact(self, w: u32) -> u32;
    /// The bottom-packed word `w` with the nibbles flagged in `popped`
    /// (indicator bits, bit `4i` for nibble `i`) taken out and the nibbles
    /// above them moved down: gravity after a wave, where the popped cells
    /// are the column's only holes. Equals [`Gravity::compact`] of `w` with
    /// those nibbles cleared (test: `remove_is_compact_of_cleared`).
    fn remove(self, w: u32, popped: u32) -> u32;
    /// Whether [`Gravity::remove`] costs the same with nothing popped: a wave
    /// then removes on every column without testing which lost a cell (a
    /// data-dependent branch, often mispredicted).
    const REMOVE_UNCONDITIONALLY: bool = false;
    /// Short name used in reports: `"bmi2"` or `"portable"`.
    const NAME: &'static str;
    /// The bit instructions a whole-game loop on this path is built for
    /// where the CPU has them ([`crate::runner::play_moves`]).
    const LOOP_BUILD: LoopBuild = LoopBuild::CountBits;
}

/// The bit instructions a whole-game loop is built for where the CPU has
/// them: integer work only, so the games are the same, move for move; only
/// the instructions differ (test: `runner::tests::loop_builds_play_the_same_games`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoopBuild {
    /// POPCNT and LZCNT ([`count_bits_detected`]): `count_ones` and
    /// `leading_zeros` (a column's height) become single instructions; no
    /// BMI1 or BMI2 instruction (the portable path's).
    CountBits,
    /// POPCNT, BMI1, BMI2 and LZCNT ([`bit_instructions_detected`]).
    AllBits,
}

impl LoopBuild {
    /// Whether this CPU has the instructions (`false` off x86-64).
    pub fn detected(self) -> bool {
        match self {
            LoopBuild::CountBits => count_bits_detected(),
            LoopBuild::AllBits => bit_instructions_detected(),
        }
    }

    /// The instructions, for reports: `"POPCNT, LZCNT"` or `"POPCNT, BMI1, BMI2, LZCNT"`.
    pub fn instructions(self) -> &'static str {
        match self {
            LoopBuild::CountBits => "POPCNT, LZCNT",
            LoopBuild::AllBits => "POPCNT, BMI1, BMI2, LZCNT",
        }
    }
}

/// The portable path: works on every CPU.
#[derive(Clone, Copy, Debug, Default)]
pub struct Portable;

impl Gravity for Portable {
    const NAME: &'static str = "portable";
    #[inline(always)]
    fn compact(self, w: u32) -> u32 {
        let mut out = 0u32;
        let mut shift = 0u32;
        let mut rest = w;
        while rest != 0 {
            let n = rest & 0xF;
            out |= n << shift;
            shift += if n != 0 { 4 } else { 0 };
            rest >>= 4;
        }
        out
    }
    /// One shift-and-merge per popped nibble, top one first (so the lower
    /// ones keep their place); a column mostly loses one or two cells a wave,
    /// against the seven steps of [`Portable::compact`].
    #[inline(always)]
    fn remove(self, mut w: u32, mut popped: u32) -> u32 {
        while popped != 0 {
            let bit = 31 - popped.leading_zeros();
            let below = (1u32 << bit) - 1;
            w = (w & below) | ((w >> 4) & !below);
            popped ^= 1 << bit;
        }
        w
    }
}

#[cfg(all(feature = "bmi2", not(target_feature = "bmi2")))]
compile_error!(
    "the `bmi2` feature compiles for CPUs with BMI2 only: build with RUSTFLAGS=\"-C target-feature=+bmi2\" (or -C target-cpu=native on such a CPU)"
);

/// The BMI2 path: one `PEXT` per column. Obtain it with [`Bmi2::detect`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bmi2 {
    _proof: (),
}

impl Bmi2 {
    /// `Some` only when the running CPU supports BMI2 (always `Some` in a
    /// build with the `bmi2` feature, which requires BMI2 at compile time).
    pub fn detect() -> Option<Bmi2> {
        #[cfg(all(feature = "bmi2", target_feature = "bmi2"))]
        {
            return Some(Bmi2 { _proof: () });
        }
        #[cfg(target_arch = "x86_64")]
        #[allow(unreachable_code)]
        {
            if std::arch::is_x86_feature_detected!("bmi2") {
                return Some(Bmi2 { _proof: () });
            }
        }
        None
    }
}

impl Gravity for Bmi2 {
    const NAME: &'static str = "bmi2";
    const LOOP_BUILD: LoopBuild = LoopBuild::AllBits;
    /// One `PEXT` whatever the mask (an all-ones mask keeps the word).
    const REMOVE_UNCONDITIONALLY: bool = true;
    #[inline(always)]
    fn compact(self, w: u32) -> u32 {
        let mask = nonzero_nibbles(w) * 0xF;
        pext32(w, mask)
    }
    /// One `PEXT` keeping every nibble but the popped ones.
    #[inline(always)]
    fn remove(self, w: u32, popped: u32) -> u32 {
        pext32(w, !(popped * 0xF))
    }
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn pext32(w: u32, mask: u32) -> u32 {
    let out: u32;
    // SAFETY: `pext32` is only reached through a `Bmi2` token, which
    // `Bmi2::detect` creates only after `is_x86_feature_detected!("bmi2")`.
    // Inline asm (rather than the `_pext_u32` intrinsic) lets the instruction
    // inline into generic code compiled without the target feature.
    unsafe {
        std::arch::asm!(
            "pext {out:e}, {w:e}, {m:e}",
            out = lateout(reg) out,
            w = in(reg) w,
            m = in(reg) mask,
            options(pure, nomem, nostack, preserves_flags),
        );
    }
    out
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn pext32(w: u32, _mask: u32) -> u32 {
    // Unreachable: `Bmi2::detect` never returns `Some` off x86-64.
    Portable.compact(w)
}

/// Which gravity path to use, as chosen on the command line or in `DROP7_GRAVITY`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum GravityChoice {
    /// BMI2 where it is present and fast, else portable.
    #[default]
    Auto,
    /// Force BMI2 (an error on a CPU without it).
    Bmi2,
    /// Force the portable path.
    Portable,
}

/// The path actually selected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GravityPath {
    /// PEXT.
    Bmi2(Bmi2),
    /// Portable loop.
    Portable,
}

impl GravityPath {
    /// `"bmi2"` or `"portable"`.
    pub fn name(self) -> &'static str {
        match self {
            GravityPath::Bmi2(_) => Bmi2::NAME,
            GravityPath::Portable => Portable::NAME,
        }
    }
}

/// Error for `--gravity bmi2` on a CPU without BMI2, or an unknown name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GravityError {
    /// The CPU lacks BMI2.
    #[error("--gravity bmi2 requested but this CPU has no BMI2")]
    NoBmi2,
    /// Not one of auto, bmi2, portable.
    #[error("unknown gravity path {0:?} (expected auto, bmi2 or portable)")]
    Unknown(String),
}

impl FromStr for GravityChoice {
    type Err = GravityError;
    fn from_str(s: &str) -> Result<Self, GravityError> {
        match s {
            "auto" => Ok(GravityChoice::Auto),
            "bmi2" | "pext" => Ok(GravityChoice::Bmi2),
            "portable" => Ok(GravityChoice::Portable),
            other => Err(GravityError::Unknown(other.to_string())),
        }
    }
}

/// The CPU facts the `auto` choice depends on (from `CPUID`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuFacts {
    /// The 12-byte vendor string of `CPUID` leaf 0 (EBX, EDX, ECX), e.g.
    /// `*b"GenuineIntel"`, `*b"AuthenticAMD"`, `*b"HygonGenuine"`.
    pub vendor: [u8; 12],
    /// The display family of `CPUID` leaf 1 (base family, plus the extended
    /// family when the base is 0xF), e.g. 0x17 for AMD Zen 1/2, 0x18 for Hygon Dhyana.
    pub family: u32,
    /// Whether the CPU (and OS) supports BMI2 (`PEXT`).
    pub bmi2: bool,
}

impl CpuFacts {
    /// The running CPU's facts; `None` off x86-64.
    pub fn detect() -> Option<CpuFacts> {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::__cpuid;
            // SAFETY: every x86-64 CPU has CPUID with leaves 0 and 1. (Rust
            // 1.94+ declares `__cpuid` safe; the block keeps 1.88 building.)
            #[allow(unused_unsafe)]
            let (leaf0, leaf1) = unsafe { (__cpuid(0), __cpuid(1)) };
            let mut vendor = [0u8; 12];
            vendor[0..4].copy_from_slice(&leaf0.ebx.to_le_bytes());
            vendor[4..8].copy_from_slice(&leaf0.edx.to_le_bytes());
            vendor[8..12].copy_from_slice(&leaf0.ecx.to_le_bytes());
            let base = (leaf1.eax >> 8) & 0xF;
            let ext = (leaf1.eax >> 20) & 0xFF;
            let family = if base == 0xF { base + ext } else { base };
            Some(CpuFacts {
                vendor,
                family,
                bmi2: std::arch::is_x86_feature_detected!("bmi2"),
            })
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            None
        }
    }
}

/// Whether `PEXT` is microcoded (slow, tens of cycles) on a CPU: AMD before
/// Zen 3 (`AuthenticAMD`, family 0x17 or older) and every Zen 1/2-derived
/// Hygon part (`HygonGenuine`, family 0x18 or older). A pure function.
pub fn pext_is_slow(vendor: &[u8; 12], family: u32) -> bool {
    match vendor {
        b"AuthenticAMD" => family <= 0x17,
        b"HygonGenuine" => family <= 0x18,
        _ => false,
    }
}

/// What `--gravity auto` picks for a CPU with these facts: `PEXT`
/// ([`GravityChoice::Bmi2`]) when the CPU has BMI2 and its `PEXT` is fast,
/// else [`GravityChoice::Portable`]. A pure function of (vendor, family,
/// feature bits).
pub fn auto_choice(facts: &CpuFacts) -> GravityChoice {
    if facts.bmi2 && !pext_is_slow(&facts.vendor, facts.family) {
        GravityChoice::Bmi2
    } else {
        GravityChoice::Portable
    }
}

impl GravityChoice {
    /// Reads `DROP7_GRAVITY` (unset or empty = `auto`).
    ///
    /// # Errors
    /// An unknown value.
    pub fn from_env() -> Result<GravityChoice, GravityError> {
        match std::env::var("DROP7_GRAVITY") {
            Ok(v) if !v.is_empty() => v.parse(),
            _ => Ok(GravityChoice::Auto),
        }
    }

    /// Resolves the choice on this CPU.
    ///
    /// # Errors
    /// [`GravityError::NoBmi2`] for an explicit `Bmi2` on a CPU without BMI2.
    pub fn resolve(self) -> Result<GravityPath, GravityError> {
        match self {
            GravityChoice::Portable => Ok(GravityPath::Portable),
            GravityChoice::Bmi2 => Bmi2::detect()
                .map(GravityPath::Bmi2)
                .ok_or(GravityError::NoBmi2),
            GravityChoice::Auto => {
                let wants_pext =
                    CpuFacts::detect().is_some_and(|f| auto_choice(&f) == GravityChoice::Bmi2);
                Ok(match Bmi2::detect() {
                    Some(b) if wants_pext => GravityPath::Bmi2(b),
                    _ => GravityPath::Portable,
                })
            }
        }
    }
}

/// Runs `$body` with `$g` bound to the concrete gravity token of `$path`
/// (monomorphising the body once per path).
#[macro_export]
macro_rules! with_gravity {
    ($path:expr, |$g:ident| $body:expr) => {
        match $path {
            $crate::gravity::GravityPath::Bmi2(bmi2) => {
                let $g = bmi2;
                $body
            }
            $crate::gravity::GravityPath::Portable => {
                let $g = $crate::gravity::Portable;
                $body
            }
        }
    };
}

/// A copy of the search's code (a const generic `B`; see
/// `search::FairSearch::max_node`): baseline x86-64 code. The copies differ
/// only in the integer instructions the compiler may use, never in a result.
pub(crate) const PLAIN: u8 = 0;
/// The copy built for POPCNT and LZCNT ([`LoopBuild::CountBits`]).
pub(crate) const COUNT_BITS: u8 = 1;
/// The copy built for POPCNT, BMI1, BMI2 and LZCNT ([`LoopBuild::AllBits`]).
pub(crate) const ALL_BITS: u8 = 2;

/// The copy of the search's code for gravity path `G` on this CPU:
/// [`PLAIN`], or the one built for `G::LOOP_BUILD` where the CPU has it.
pub(crate) fn detected_copy<G: Gravity>() -> u8 {
    match G::LOOP_BUILD {
        _ if !G::LOOP_BUILD.detected() => PLAIN,
        LoopBuild::CountBits => COUNT_BITS,
        LoopBuild::AllBits => ALL_BITS,
    }
}

/// Defines `$name::<B, …>(args)`: the out-of-line function `$plain(args)`
/// for `B` = [`PLAIN`], else `$body::<B, …>(args)` as code built for copy
/// `B`'s instructions (an out-of-line `#[target_feature]` function per copy,
/// so that a built copy of the search calls a built copy of it).
///
/// A `B` other than [`PLAIN`] may only be used by code that runs where
/// [`detected_copy`] gave it (the search's built copies: every caller passes
/// its own `B` down).
macro_rules! built_copies {
    (
        $(#[$meta:meta])*
        $vis:vis fn $name:ident<[$($gen:tt)*] [$($g:ident),*]>($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty
            = $plain:ident, $body:ident;
    ) => {
        $(#[$meta])*
        #[inline(always)]
        $vis fn $name<const B: u8, $($gen)*>($($arg: $ty),*) -> $ret {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "popcnt,bmi1,bmi2,lzcnt")]
                #[inline(never)]
                fn all_bits<$($gen)*>($($arg: $ty),*) -> $ret {
                    $body::<{ $crate::gravity::ALL_BITS }, $($g),*>($($arg),*)
                }
                #[target_feature(enable = "popcnt,lzcnt")]
                #[inline(never)]
                fn count_bits<$($gen)*>($($arg: $ty),*) -> $ret {
                    $body::<{ $crate::gravity::COUNT_BITS }, $($g),*>($($arg),*)
                }
                match B {
                    // SAFETY: B is ALL_BITS only in code that runs where
                    // the CPU has POPCNT, BMI1, BMI2 and LZCNT (see above).
                    $crate::gravity::ALL_BITS => return unsafe { all_bits($($arg),*) },
                    // SAFETY: B is COUNT_BITS only where the CPU has POPCNT
                    // and LZCNT.
                    $crate::gravity::COUNT_BITS => return unsafe { count_bits($($arg),*) },
                    _ => {}
                }
            }
            $plain($($arg),*)
        }
    };
}
pub(crate) use built_copies;

/// Whether this CPU has POPCNT and LZCNT (x86-64 only): a whole-game loop
/// on the portable path then runs code built for them (the same games).
pub fn count_bits_detected() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("popcnt")
            && std::arch::is_x86_feature_detected!("lzcnt")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether this CPU has POPCNT, BMI1, BMI2 and LZCNT (x86-64 only): the
/// leaf's shape cache and a whole-game loop on the BMI2 path then run code
/// built for them (the same results).
pub fn bit_instructions_detected() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("popcnt")
            && std::arch::is_x86_feature_detected!("bmi1")
            && std::arch::is_x86_feature_detected!("bmi2")
            && std::arch::is_x86_feature_detected!("lzcnt")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::NIBBLE_ONES;

    fn naive(w: u32) -> u32 {
        let nibs: Vec<u32> = (0..8)
            .map(|i| (w >> (4 * i)) & 0xF)
            .filter(|&n| n != 0)
            .collect();
        nibs.iter()
            .enumerate()
            .fold(0, |a, (i, &n)| a | n << (4 * i))
    }

    fn facts(vendor: &[u8; 12], family: u32, bmi2: bool) -> CpuFacts {
        CpuFacts {
            vendor: *vendor,
            family,
            bmi2,
        }
    }

    #[test]
    fn auto_choice_by_vendor_family_and_features() {
        use GravityChoice::{Bmi2 as Pext, Portable as Port};
        let cases: &[(&[u8; 12], u32, bool, GravityChoice)] = &[
            // Intel: PEXT is fast wherever BMI2 exists (Haswell on).
            (b"GenuineIntel", 6, true, Pext),
            (b"GenuineIntel", 6, false, Port),
            // AMD: microcoded PEXT up to Zen 2 (family 0x17), fast from Zen 3 (0x19).
            (b"AuthenticAMD", 0x15, true, Port),
            (b"AuthenticAMD", 0x16, true, Port),
            (b"AuthenticAMD", 0x17, true, Port),
            (b"AuthenticAMD", 0x19, true, Pext),
            (b"AuthenticAMD", 0x1A, true, Pext),
            (b"AuthenticAMD", 0x19, false, Port),
            // Hygon Dhyana is Zen 1-derived: family 0x18, slow PEXT.
            (b"HygonGenuine", 0x18, true, Port),
            (b"HygonGenuine", 0x18, false, Port),
            // Other vendors (VIA/Zhaoxin, virtual CPUs): trust the feature bit.
            (b"CentaurHauls", 6, true, Pext),
            (b"  Shanghai  ", 7, true, Pext),
            (b"TCGTCGTCGTCG", 6, false, Port),
        ];
        for &(vendor, family, bmi2, want) in cases {
            assert_eq!(
                auto_choice(&facts(vendor, family, bmi2)),
                want,
                "{} family {family:#x} bmi2 {bmi2}",
                String::from_utf8_lossy(vendor)
            );
        }
        assert!(pext_is_slow(b"HygonGenuine", 0x18));
        assert!(!pext_is_slow(b"GenuineIntel", 0x18));
    }

    #[test]
    fn detected_facts_agree_with_detection() {
        if let Some(f) = CpuFacts::detect() {
            assert_eq!(f.bmi2, Bmi2::detect().is_some() || cfg!(feature = "bmi2"));
            let auto = GravityChoice::Auto.resolve().unwrap();
            let expect = if auto_choice(&f) == GravityChoice::Bmi2 {
                "bmi2"
            } else {
                "portable"
            };
            assert_eq!(auto.name(), expect);
        }
    }

    #[test]
    fn remove_is_compact_of_cleared() {
        let mut x = 0x8765_4321u32;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        };
        for _ in 0..200_000 {
            // A bottom-packed column of height h (cells 1..=9) and a subset
            // of its cells popped.
            let h = next() % 8;
            let mut w = 0u32;
            for k in 0..h {
                w |= (1 + next() % 9) << (4 * k);
            }
            let popped = next() & NIBBLE_ONES & ((1u32 << (4 * h)) - 1);
            let cleared = w & !(popped * 0xF);
            let want = naive(cleared);
            assert_eq!(Portable.remove(w, popped), want, "{w:#x} {popped:#x}");
            assert_eq!(Portable.remove(cleared, popped), want);
            if let Some(b) = Bmi2::detect() {
                assert_eq!(b.remove(w, popped), want, "{w:#x} {popped:#x}");
                assert_eq!(b.remove(cleared, popped), want);
            }
        }
    }

    #[test]
    fn paths_agree() {
        let mut x = 0x1234_5678u32;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let w = x & 0xFFF_FFFF;
            assert_eq!(Portable.compact(w), naive(w));
            if let Some(b) = Bmi2::detect() {
                assert_eq!(b.compact(w), naive(w));
            }
        }
    }
}

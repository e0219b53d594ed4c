//! The fair player as the CLI and the runner use it: the `fair:dDsS` policy
//! spec, the `--table` spec, and [`FairPolicy`], a [`Policy`] that decides
//! every move with a [`FairSearch`].
//!
//! ```
//! use drop7::player::{FairSpec, TableSpec};
//! let f: FairSpec = "fair:d4s7".parse().unwrap();
//! assert_eq!((f.depth, f.strata), (4, 7));
//! assert_eq!("fair".parse::<FairSpec>().unwrap().strata, 5); // the frozen reference d4s5
//! assert_eq!("sa:65536".parse::<TableSpec>().unwrap(), TableSpec::SetAssociative { entries: 65536, ways: 4 });
//! assert!("dm:1000".parse::<TableSpec>().is_err()); // not a power of two
//! ```

use std::fmt;
use std::str::FromStr;

use crate::gravity::Gravity;
use crate::leaf::Leaf;
use crate::position::Position;
use crate::runner::Policy;
use crate::search::{FairSearch, MAX_DEPTH, MAX_STRATA, SearchConfig};
use crate::table::Table;

/// Which transposition table, as given by `--table none|lru:C|dm:N|sa:N[:W]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableSpec {
    /// No table (`none`, or `lru:0`).
    None,
    /// Strict LRU with capacity C (the reference semantics, for count parity).
    Lru(usize),
    /// Direct-mapped, N entries (a power of two).
    DirectMapped(usize),
    /// Set-associative, N entries (a power of two) in sets of `ways` (2 or 4).
    SetAssociative {
        /// Total entries.
        entries: usize,
        /// Ways per set.
        ways: usize,
    },
}

impl TableSpec {
    /// The default table: set-associative, 65,536 entries (2.9 MB), 4 ways.
    pub const DEFAULT: TableSpec = TableSpec::SetAssociative {
        entries: 1 << 16,
        ways: 4,
    };

    /// The default table of depth 5 and deeper: set-associative, 2^20
    /// entries (46 MB), 4 ways (a d5s7 decision does about 29% less work
    /// than with [`TableSpec::DEFAULT`]; values are the same under any table).
    pub const DEFAULT_DEEP: TableSpec = TableSpec::SetAssociative {
        entries: 1 << 20,
        ways: 4,
    };

    /// The default table of a search of depth `depth`: [`TableSpec::DEFAULT`]
    /// up to depth 4, [`TableSpec::DEFAULT_DEEP`] from depth 5.
    pub const fn default_for_depth(depth: u32) -> TableSpec {
        if depth >= 5 {
            TableSpec::DEFAULT_DEEP
        } else {
            TableSpec::DEFAULT
        }
    }
}

impl Default for TableSpec {
    fn default() -> Self {
        TableSpec::DEFAULT
    }
}

impl fmt::Display for TableSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            TableSpec::None => write!(f, "none"),
            TableSpec::Lru(c) => write!(f, "lru:{c}"),
            TableSpec::DirectMapped(n) => write!(f, "dm:{n}"),
            TableSpec::SetAssociative { entries, ways } => write!(f, "sa:{entries}:{ways}"),
        }
    }
}

/// A malformed `--table` or `fair…` policy spec.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SpecError(String);

impl SpecError {
    pub(crate) fn new(msg: String) -> Self {
        SpecError(msg)
    }
}

/// Largest table size accepted, in entries (2^26: under 3 GB of slots).
pub const MAX_TABLE_ENTRIES: usize = 1 << 26;

fn parse_count(text: &str, what: &str) -> Result<usize, SpecError> {
    // Digits only: `str::parse` alone would take a sign (`sa:+65536`).
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(SpecError(format!(
            "{what}: {text:?} is not a non-negative integer"
        )));
    }
    // Digits that do not parse are too many for a usize.
    let n = text.parse::<usize>().map_err(|_| {
        SpecError(format!(
            "{what}: {text} is out of range (at most {MAX_TABLE_ENTRIES} entries)"
        ))
    })?;
    if n > MAX_TABLE_ENTRIES {
        return Err(SpecError(format!(
            "{what}: {n} exceeds the limit of {MAX_TABLE_ENTRIES} entries"
        )));
    }
    Ok(n)
}

fn power_of_two(n: usize, spec: &str) -> Result<usize, SpecError> {
    if n.is_power_of_two() {
        Ok(n)
    } else {
        Err(SpecError(format!(
            "table {spec:?}: entries must be a power of two, got {n}"
        )))
    }
}

impl FromStr for TableSpec {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<TableSpec, SpecError> {
        let parts: Vec<&str> = s.split(':').collect();
        match parts.as_slice() {
            ["none"] => Ok(TableSpec::None),
            ["lru", c] => match parse_count(c, "lru capacity")? {
                0 => Ok(TableSpec::None),
                c => Ok(TableSpec::Lru(c)),
            },
            ["dm", n] => Ok(TableSpec::DirectMapped(power_of_two(
                parse_count(n, "dm entries")?,
                s,
            )?)),
            ["sa", n] | ["sa", n, _] => {
                let entries = power_of_two(parse_count(n, "sa entries")?, s)?;
                let ways = match parts.get(2) {
                    Some(w) => parse_count(w, "sa ways")?,
                    None => 4,
                };
                if ways != 2 && ways != 4 {
                    return Err(SpecError(format!(
                        "table {s:?}: ways must be 2 or 4, got {ways}"
                    )));
                }
                if entries < ways {
                    return Err(SpecError(format!(
                        "table {s:?}: needs at least {ways} entries"
                    )));
                }
                Ok(TableSpec::SetAssociative { entries, ways })
            }
            _ => Err(SpecError(format!(
                "unknown table {s:?} (expected none, lru:C, dm:N or sa:N[:W])"
            ))),
        }
    }
}

/// A fair-search policy spec: `fair` (the frozen reference's d4s5) or
/// `fair:dDsS` (D in 1..=8, S in 1..=32).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FairSpec {
    /// Search depth D.
    pub depth: u32,
    /// Strata S.
    pub strata: u32,
}

impl fmt::Display for FairSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "fair:d{}s{}", self.depth, self.strata)
    }
}

impl FromStr for FairSpec {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<FairSpec, SpecError> {
        if s == "fair" {
            return Ok(FairSpec {
                depth: 4,
                strata: 5,
            });
        }
        let bad = || {
            SpecError(format!(
                "unknown fair policy {s:?} (expected fair or fair:dDsS, e.g. fair:d4s7)"
            ))
        };
        let rest = s.strip_prefix("fair:d").ok_or_else(bad)?;
        let (d, st) = rest.split_once('s').ok_or_else(bad)?;
        // Digits too many for a u32 are out of range too, not unknown.
        let number = |what: &str, text: &str, max: u32| {
            if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            text.parse::<u32>()
                .ok()
                .filter(|v| (1..=max).contains(v))
                .ok_or_else(|| SpecError(format!("{s}: {what} must be 1-{max}, got {text}")))
        };
        let depth = number("depth", d, MAX_DEPTH)?;
        let strata = number("strata", st, MAX_STRATA)?;
        Ok(FairSpec { depth, strata })
    }
}

impl FairSpec {
    /// The search config with the given budget, or the default `W(D,S) + 1`.
    pub fn config(self, max_work: Option<u64>) -> SearchConfig {
        let mut c = SearchConfig::new(self.depth, self.strata);
        if let Some(w) = max_work {
            c.max_work = w;
        }
        c
    }

    /// Whether a budget of `max_work` lets this policy's depth-1 iteration
    /// complete on the opening position (search.md §4). When it does not,
    /// its decisions play the fallback column (the first legal one of
    /// 3, 2, 4, 1, 5, 0, 6): the CLI and the Python package warn of it.
    pub fn budget_completes_opening(self, max_work: u64) -> bool {
        let config = SearchConfig {
            depth: 1,
            strata: self.strata,
            max_work,
        };
        let mut search = FairSearch::new(
            crate::leaf::FairLeaf,
            crate::table::NoTable,
            crate::gravity::Portable,
            config,
        );
        search.decide(&Position::initial(1)).completed_depth > 0
    }
}

/// Runs `$body` with `$t` bound to a fresh table built from `$spec`
/// (monomorphising the body once per table type); evaluates to
/// `Result<_, `[`TableError`](crate::table::TableError)`>`: `Err` when the
/// table's memory cannot be allocated (the body does not run).
#[macro_export]
macro_rules! with_table {
    ($spec:expr, |$t:ident| $body:expr) => {
        match $spec {
            $crate::player::TableSpec::None => {
                let $t = $crate::table::NoTable;
                ::core::result::Result::<_, $crate::table::TableError>::Ok($body)
            }
            $crate::player::TableSpec::Lru(c) => match $crate::table::StrictLru::try_new(c) {
                Ok($t) => Ok($body),
                Err(e) => Err(e),
            },
            $crate::player::TableSpec::DirectMapped(n) => {
                match $crate::table::DirectMapped::try_new(n) {
                    Ok($t) => Ok($body),
                    Err(e) => Err(e),
                }
            }
            $crate::player::TableSpec::SetAssociative { entries, ways } => {
                match $crate::table::SetAssociative::try_new(entries, ways) {
                    Ok($t) => Ok($body),
                    Err(e) => Err(e),
                }
            }
        }
    };
}

/// A policy that plays the fair search's choice.
#[derive(Clone, Debug)]
pub struct FairPolicy<L: Leaf, T: Table, G: Gravity> {
    search: FairSearch<L, T, G>,
    last: crate::search::SearchStats,
}

impl<L: Leaf, T: Table, G: Gravity> FairPolicy<L, T, G> {
    /// A policy around `search`.
    pub fn new(search: FairSearch<L, T, G>) -> Self {
        FairPolicy {
            search,
            last: crate::search::SearchStats::default(),
        }
    }
}

impl<L: Leaf, T: Table, G: Gravity> Policy for FairPolicy<L, T, G> {
    fn new_game(&mut self, _seed: u32) {}
    fn choose(&mut self, pos: &Position) -> Option<usize> {
        let d = self.search.decide(pos);
        self.last = d.stats;
        d.action
    }
    fn last_search(&self) -> Option<crate::search::SearchStats> {
        Some(self.last)
    }
    fn set_interrupt_flag(&mut self, flag: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>) {
        self.search.set_interrupt(flag);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs() {
        assert_eq!("none".parse::<TableSpec>(), Ok(TableSpec::None));
        assert_eq!("lru:0".parse::<TableSpec>(), Ok(TableSpec::None));
        assert_eq!("lru:24000".parse::<TableSpec>(), Ok(TableSpec::Lru(24000)));
        assert_eq!(
            "dm:1024".parse::<TableSpec>(),
            Ok(TableSpec::DirectMapped(1024))
        );
        assert_eq!(
            "sa:1024:2".parse::<TableSpec>(),
            Ok(TableSpec::SetAssociative {
                entries: 1024,
                ways: 2
            })
        );
        assert!("sa:1024:3".parse::<TableSpec>().is_err());
        assert!("lru:x".parse::<TableSpec>().is_err());
        // Digits only, no sign or spaces.
        for signed in [
            "sa:+65536:4",
            "sa:65536:+4",
            "dm:+1024",
            "lru:+5",
            "lru: 5",
            "sa::4",
        ] {
            let e = signed.parse::<TableSpec>().unwrap_err();
            assert!(
                e.0.contains("is not a non-negative integer"),
                "{signed}: {e}"
            );
        }
        assert!("lru:1000000000000".parse::<TableSpec>().is_err());
        assert!("sa:0".parse::<TableSpec>().is_err());
        assert!("big".parse::<TableSpec>().is_err());
        assert_eq!(
            "fair:d5s7".parse::<FairSpec>(),
            Ok(FairSpec {
                depth: 5,
                strata: 7
            })
        );
        assert!("fair:d9s7".parse::<FairSpec>().is_err());
        assert!("fair:d4s0".parse::<FairSpec>().is_err());
        assert!("fair:4,7".parse::<FairSpec>().is_err());
        let message = |text: &str| text.parse::<FairSpec>().unwrap_err().0;
        assert_eq!(
            message("fair:d99999999999999999999s1"),
            "fair:d99999999999999999999s1: depth must be 1-8, got 99999999999999999999"
        );
        assert_eq!(
            message("fair:d2s0"),
            "fair:d2s0: strata must be 1-32, got 0"
        );
        assert!(message("fair:d+2s5").starts_with("unknown fair policy"));
        assert_eq!(
            FairSpec {
                depth: 4,
                strata: 7
            }
            .to_string(),
            "fair:d4s7"
        );
    }
}

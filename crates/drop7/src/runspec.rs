//! A run of whole games as `drop7 play` and the Python package's
//! `drop7.play` name it, in one place so that both play and record alike:
//! the built-in policy spec ([`PolicyName`]), the fair policy's table, budget
//! and decision split ([`FairSettings`], [`with_builtin_policy!`]), and the
//! run-level fields of the records ([`record_template`], [`stamp_record`]).
//!
//! ```
//! use drop7::runspec::PolicyName;
//! let p: PolicyName = "fair:d2s3".parse().unwrap();
//! assert_eq!(p.to_string(), "fair:d2s3");
//! assert_eq!("greedy".parse::<PolicyName>().unwrap(), PolicyName::Greedy);
//! assert!("centre".parse::<PolicyName>().is_err());
//! // A fair run of 2 games on 8 threads splits each decision over 4 threads.
//! assert_eq!(p.search_threads(2, 8), 4);
//! assert_eq!(PolicyName::Center.search_threads(2, 8), 1);
//! ```

use std::fmt;
use std::str::FromStr;

use crate::formats::{GameRecord, seed_hex};
use crate::gravity::GravityPath;
use crate::player::{FairSpec, SpecError, TableSpec};
use crate::records::RULESET;
use crate::runner::RunLabels;

/// A built-in policy by name (rules.md §10; spec of `--policy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyName {
    /// First legal column in order 3, 2, 4, 1, 5, 0, 6.
    Center,
    /// The repository's random parity policy, seeded per game.
    Random,
    /// The greedy test-data policy (peeks at the move's real randomness, so
    /// not a public-information player).
    Greedy,
    /// The fair expectimax search: `fair` (the frozen reference's d4s5) or
    /// `fair:dDsS`.
    Fair(FairSpec),
}

impl fmt::Display for PolicyName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PolicyName::Center => f.write_str("center"),
            PolicyName::Random => f.write_str("random"),
            PolicyName::Greedy => f.write_str("greedy"),
            PolicyName::Fair(spec) => spec.fmt(f),
        }
    }
}

impl FromStr for PolicyName {
    type Err = SpecError;
    /// `center`, `random`, `greedy`, `fair` or `fair:dDsS`.
    ///
    /// # Errors
    /// An unknown name, or a malformed or out-of-range `fair…` spec (the
    /// message names the text).
    fn from_str(s: &str) -> Result<PolicyName, SpecError> {
        match s {
            "center" => Ok(PolicyName::Center),
            "random" => Ok(PolicyName::Random),
            "greedy" => Ok(PolicyName::Greedy),
            _ if s.starts_with("fair") => Ok(PolicyName::Fair(s.parse()?)),
            _ => Err(SpecError::new(format!(
                "unknown policy {s:?} (expected center, random, greedy, fair or fair:dDsS)"
            ))),
        }
    }
}

impl PolicyName {
    /// The fair spec of a fair policy.
    pub fn fair(self) -> Option<FairSpec> {
        match self {
            PolicyName::Fair(f) => Some(f),
            _ => None,
        }
    }

    /// The table a run uses when none is given: for a fair policy
    /// [`TableSpec::default_for_depth`], else [`TableSpec::DEFAULT`] (unused).
    pub fn default_table(self) -> TableSpec {
        match self {
            PolicyName::Fair(f) => TableSpec::default_for_depth(f.depth),
            _ => TableSpec::DEFAULT,
        }
    }

    /// Threads splitting each decision of a run of `games` games on
    /// `threads` worker threads: a fair run with fewer games than threads
    /// gives each game `threads / games` (the same actions and values; the
    /// search counters of a split decision with a table differ from run to
    /// run, see [`crate::parallel`]); otherwise 1.
    pub fn search_threads(self, games: u64, threads: usize) -> usize {
        match self {
            PolicyName::Fair(_) if games > 0 => {
                let games = usize::try_from(games).unwrap_or(usize::MAX);
                if games < threads { threads / games } else { 1 }
            }
            _ => 1,
        }
    }
}

/// How a fair policy of a run searches (ignored by the other policies).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FairSettings {
    /// The transposition table (one per worker).
    pub table: TableSpec,
    /// Work budget per decision (`None`: W(D,S)+1, never binds).
    pub max_work: Option<u64>,
    /// Gravity path of the search.
    pub search_gravity: GravityPath,
    /// Threads splitting each decision (1: none; see
    /// [`PolicyName::search_threads`]).
    pub search_threads: usize,
    /// Worker threads of the run: one table each, all allocated before the
    /// first game (so a table too large for memory is an error, not an abort).
    pub workers: usize,
}

/// Runs `$body` with `$make` bound to a policy factory (`Fn() -> P + Sync`,
/// one policy per worker) for a [`PolicyName`], the fair policy built with a
/// [`FairSettings`]: a [`crate::parallel::ParallelSearch`] (one thread per
/// decision unless `search_threads` says otherwise) over its own table, every
/// worker's table allocated before the body runs. Evaluates to
/// `Result<_, `[`TableError`](crate::table::TableError)`>`: `Err` when the
/// tables' memory cannot be allocated (the body does not run). The body is
/// monomorphised per policy, and for the fair policy per table type and
/// gravity path.
#[macro_export]
macro_rules! with_builtin_policy {
    ($policy:expr, $fair:expr, |$make:ident| $body:expr) => {
        match $policy {
            $crate::runspec::PolicyName::Center => {
                let $make = || $crate::runner::CenterPolicy;
                ::core::result::Result::<_, $crate::table::TableError>::Ok($body)
            }
            $crate::runspec::PolicyName::Random => {
                let $make = $crate::runner::RandomParityPolicy::default;
                Ok($body)
            }
            $crate::runspec::PolicyName::Greedy => {
                let $make = || $crate::policy::GreedyPolicy;
                Ok($body)
            }
            $crate::runspec::PolicyName::Fair(fair) => {
                let settings: $crate::runspec::FairSettings = $fair;
                let config = fair.config(settings.max_work);
                let split = settings.search_threads;
                $crate::with_gravity!(settings.search_gravity, |g| $crate::with_table!(
                    settings.table,
                    |table| match $crate::table::TablePool::try_new(table, settings.workers) {
                        Ok(pool) => {
                            let $make = || {
                                $crate::parallel::ParallelSearch::new(
                                    $crate::search::FairSearch::new(
                                        $crate::leaf::FairLeaf,
                                        pool.take(),
                                        g,
                                        config,
                                    ),
                                    split,
                                )
                            };
                            Ok($body)
                        }
                        Err(e) => Err(e),
                    }
                ))
                .and_then(|r| r)
            }
        }
    };
}

/// The run-level fields every record of a run carries (and a resumed record
/// file must carry, see [`crate::records::identity`]): `policy`, `driver`,
/// `ruleset`, for a fair policy (`fair`: its spec, table and budget) `table`
/// and the effective `maxWork`, `maxMoves`, the whole cohort's
/// `cohortSeedStart` and `cohortGames` (`cohort`: `None` when the games are
/// not a range of consecutive seeds, e.g. a list given to `drop7.play`; the
/// fields are then absent) and the `shard`.
pub fn record_template(
    labels: &RunLabels,
    fair: Option<(FairSpec, &FairSettings)>,
    max_moves: u32,
    cohort: Option<(u32, u64)>,
    shard: Option<&str>,
) -> GameRecord {
    let (table, max_work) = match fair {
        Some((f, s)) => (
            Some(s.table.to_string()),
            Some(f.config(s.max_work).max_work),
        ),
        None => (None, None),
    };
    GameRecord {
        policy: labels.policy.clone(),
        driver: labels.driver.as_str().to_string(),
        ruleset: Some(RULESET.to_string()),
        table,
        max_work,
        max_moves: Some(max_moves),
        cohort_seed_start: cohort.map(|(start, _)| seed_hex(start)),
        cohort_games: cohort.map(|(_, games)| games),
        shard: shard.map(str::to_string),
        ..GameRecord::default()
    }
}

/// Completes a detailed record (from
/// [`crate::runner::play_game_detailed`], which fills the per-game fields)
/// with the run-level fields of `template` ([`record_template`]): `table`,
/// `maxWork`, `cohortSeedStart`, `cohortGames`, `shard`.
pub fn stamp_record(rec: &mut GameRecord, template: &GameRecord) {
    rec.table.clone_from(&template.table);
    rec.max_work = template.max_work;
    rec.cohort_seed_start
        .clone_from(&template.cohort_seed_start);
    rec.cohort_games = template.cohort_games;
    rec.shard.clone_from(&template.shard);
}

/// The `(first seed, games)` of `seeds` when they are consecutive (mod
/// 2^32) and not empty: the cohort a record of theirs names.
pub fn seed_range(seeds: &[u32]) -> Option<(u32, u64)> {
    let (&first, _) = seeds.split_first()?;
    let consecutive = seeds
        .iter()
        .enumerate()
        .all(|(i, &s)| s == crate::runner::nth_seed(first, i as u64));
    (consecutive && seeds.len() as u64 <= 1 << 32).then_some((first, seeds.len() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::DriverKind;

    #[test]
    fn names_round_trip() {
        for s in ["center", "random", "greedy", "fair:d2s3", "fair:d4s5"] {
            assert_eq!(s.parse::<PolicyName>().unwrap().to_string(), s);
        }
        assert_eq!(
            "fair".parse::<PolicyName>().unwrap().to_string(),
            "fair:d4s5"
        );
        for bad in ["", "centre", "fair:", "fair:d9s5", "d7p:x"] {
            assert!(bad.parse::<PolicyName>().is_err(), "{bad:?}");
        }
        let e = "x".parse::<PolicyName>().unwrap_err().to_string();
        assert!(e.contains("unknown policy \"x\""), "{e}");
    }

    #[test]
    fn templates_and_ranges() {
        let labels = RunLabels {
            policy: "fair:d2s3".into(),
            driver: DriverKind::Headless,
        };
        let f: FairSpec = "fair:d2s3".parse().unwrap();
        let s = FairSettings {
            table: TableSpec::DEFAULT,
            max_work: None,
            search_gravity: GravityPath::Portable,
            search_threads: 1,
            workers: 1,
        };
        let t = record_template(&labels, Some((f, &s)), 50, Some((7, 3)), Some("1/2"));
        assert_eq!(t.table.as_deref(), Some("sa:65536:4"));
        assert_eq!(t.max_work, Some(f.config(None).max_work));
        assert_eq!(t.cohort_seed_start.as_deref(), Some("0x00000007"));
        let mut rec = GameRecord::default();
        stamp_record(&mut rec, &t);
        assert_eq!(
            (rec.table, rec.max_work, rec.cohort_games, rec.shard),
            (t.table, t.max_work, Some(3), Some("1/2".into()))
        );
        assert_eq!(seed_range(&[5, 6, 7]), Some((5, 3)));
        assert_eq!(seed_range(&[u32::MAX, 0]), Some((u32::MAX, 2)));
        assert_eq!(seed_range(&[5, 7]), None);
        assert_eq!(seed_range(&[]), None);
    }
}

//! What the command line selects once, at the boundary: the policy, the
//! driver, the engine and its gravity path, the seed range. Dispatch into
//! generic code happens through [`with_engine!`] and [`with_policy!`], so the
//! hot loops are monomorphised per engine, gravity path and policy.

use std::fmt;
use std::str::FromStr;

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use drop7::formats::parse_seed;
use drop7::game::DriverKind;
use drop7::gravity::{GravityChoice, GravityPath};
use drop7::player::{FairSpec, TableSpec};
use drop7::runspec::{FairSettings, PolicyName};

/// A policy named on the command line (`--policy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicySpec {
    /// First legal column in order 3, 2, 4, 1, 5, 0, 6 (rules.md §10).
    Center,
    /// The repository's random parity policy (rules.md §10).
    Random,
    /// The fair expectimax search (`fair` = the frozen reference's d4s5, or
    /// `fair:dDsS`), one searcher with its own table per worker.
    Fair(FairSpec),
    /// The greedy test-data policy (rules.md §10; peeks at the move's real
    /// randomness, so not a public-information player).
    Greedy,
    /// An external D7P engine run with `sh -c COMMAND` (one per worker).
    D7p(&'static str),
}

impl fmt::Display for PolicySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PolicySpec::Center => f.write_str("center"),
            PolicySpec::Random => f.write_str("random"),
            PolicySpec::Fair(spec) => spec.fmt(f),
            PolicySpec::Greedy => f.write_str("greedy"),
            PolicySpec::D7p(cmd) => write!(f, "d7p:{cmd}"),
        }
    }
}

impl FromStr for PolicySpec {
    type Err = anyhow::Error;
    /// The built-in policies as the core library parses them
    /// ([`drop7::runspec::PolicyName`], shared with the Python package), plus
    /// `d7p:COMMAND`.
    fn from_str(s: &str) -> Result<PolicySpec> {
        if let Some(cmd) = s.strip_prefix("d7p:") {
            let cmd = cmd.trim();
            if cmd.is_empty() {
                bail!("--policy d7p:COMMAND needs a command (e.g. d7p:\"drop7 d7p\")");
            }
            // One command per run: leaked once so that the spec stays `Copy`.
            return Ok(PolicySpec::D7p(Box::leak(cmd.to_string().into_boxed_str())));
        }
        match s.parse::<PolicyName>() {
            Ok(p) => Ok(p.into()),
            Err(e) if s.starts_with("fair") => Err(anyhow::Error::new(e).context("--policy")),
            Err(_) => bail!(
                "unknown --policy {s:?} (expected center, random, greedy, fair, fair:dDsS or d7p:COMMAND)"
            ),
        }
    }
}

impl From<PolicyName> for PolicySpec {
    fn from(p: PolicyName) -> PolicySpec {
        match p {
            PolicyName::Center => PolicySpec::Center,
            PolicyName::Random => PolicySpec::Random,
            PolicyName::Greedy => PolicySpec::Greedy,
            PolicyName::Fair(f) => PolicySpec::Fair(f),
        }
    }
}

impl PolicySpec {
    /// The core library's name of a built-in policy, or the command of a D7P one.
    pub fn builtin(self) -> Result<PolicyName, &'static str> {
        match self {
            PolicySpec::Center => Ok(PolicyName::Center),
            PolicySpec::Random => Ok(PolicyName::Random),
            PolicySpec::Greedy => Ok(PolicyName::Greedy),
            PolicySpec::Fair(f) => Ok(PolicyName::Fair(f)),
            PolicySpec::D7p(cmd) => Err(cmd),
        }
    }
}

/// The engine named by `--engine`, with its resolved gravity path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineSel {
    /// The packed engine on a gravity path.
    Packed(GravityPath),
    /// The plain reference engine (no gravity paths).
    Reference,
}

impl EngineSel {
    /// `"packed"` or `"reference"`.
    pub fn name(&self) -> &'static str {
        match self {
            EngineSel::Packed(_) => "packed",
            EngineSel::Reference => "reference",
        }
    }

    /// `"bmi2"`, `"portable"` or `"n/a"` (reference engine).
    pub fn gravity_name(&self) -> &'static str {
        match self {
            EngineSel::Packed(p) => p.name(),
            EngineSel::Reference => "n/a",
        }
    }
}

/// Resolves `--engine` and `--gravity` (default: `DROP7_GRAVITY`, else `auto`).
pub fn resolve_engine(engine: &str, gravity: Option<&str>) -> Result<EngineSel> {
    let packed = match engine {
        "packed" => true,
        "reference" => false,
        other => bail!("unknown --engine {other:?} (expected packed or reference)"),
    };
    let choice = match gravity {
        Some(g) => g.parse::<GravityChoice>().context("--gravity")?,
        None => GravityChoice::from_env().context("DROP7_GRAVITY")?,
    };
    if !packed {
        return Ok(EngineSel::Reference);
    }
    Ok(EngineSel::Packed(choice.resolve()?))
}

/// Parses `--driver`.
pub fn parse_driver(s: &str) -> Result<DriverKind> {
    match s {
        "headless" => Ok(DriverKind::Headless),
        "stream" => Ok(DriverKind::Stream),
        other => bail!("unknown --driver {other:?} (expected headless or stream)"),
    }
}

/// Options shared by `play` and `trace`.
#[derive(Args, Debug, Clone)]
pub struct GameArgs {
    /// Policy: center, random, greedy (test data only), fair (the reference
    /// d4s5), fair:dDsS (e.g. fair:d4s7) or d7p:"COMMAND" (an external D7P engine).
    #[arg(long, default_value = "center", value_name = "POLICY")]
    pub policy: String,
    /// Transposition table of a fair policy: none, lru:C, dm:N or sa:N[:W]
    /// [default: sa:65536:4 up to depth 4, sa:1048576:4 (46 MB) from depth 5].
    #[arg(long, value_name = "TABLE")]
    pub table: Option<String>,
    /// Work budget per decision of a fair policy [default: W(D,S)+1, never binds].
    #[arg(long, value_name = "W", allow_negative_numbers = true)]
    pub max_work: Option<u64>,
    /// Randomness driver: headless (per-move seeds) or stream (one stream per game).
    #[arg(long, default_value = "headless", value_name = "DRIVER")]
    pub driver: String,
    /// First game seed, decimal or 0x hex; game i has seed start+i (mod 2^32).
    #[arg(
        long,
        default_value = "1",
        value_name = "SEED",
        allow_hyphen_values = true
    )]
    pub seed_start: String,
    /// Move cap per game (a game reaching it is censored).
    #[arg(
        long,
        default_value_t = 2000,
        value_name = "M",
        allow_negative_numbers = true,
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    pub max_moves: u32,
    /// Engine: packed (fast) or reference (plain, slow).
    #[arg(long, default_value = "packed", value_name = "ENGINE")]
    pub engine: String,
    /// Gravity path of the packed engine: auto, bmi2 or portable
    /// [default: $DROP7_GRAVITY, else auto].
    #[arg(long, value_name = "PATH")]
    pub gravity: Option<String>,
}

/// [`GameArgs`] checked and resolved.
#[derive(Clone, Copy, Debug)]
pub struct GameSetup {
    /// The policy.
    pub policy: PolicySpec,
    /// The driver.
    pub driver: DriverKind,
    /// First seed.
    pub seed_start: u32,
    /// Games in the range.
    pub games: u64,
    /// Move cap.
    pub max_moves: u32,
    /// Engine and gravity path.
    pub engine: EngineSel,
    /// Transposition table of a fair policy.
    pub table: TableSpec,
    /// Work budget of a fair policy (`None`: W(D,S)+1).
    pub max_work: Option<u64>,
    /// Gravity path of a fair policy's search (the engine's, or resolved alone
    /// for the reference engine).
    pub search_gravity: GravityPath,
    /// Threads splitting each decision of a fair policy (1: none; `play`
    /// raises it when a run has fewer games than threads).
    pub search_threads: usize,
    /// Worker threads playing games (one table each, allocated up front).
    pub workers: usize,
}

impl GameArgs {
    /// Checks every option (the policy must be available) and resolves the engine.
    pub fn resolve(&self, games: u64) -> Result<GameSetup> {
        let policy: PolicySpec = self.policy.parse()?;
        let driver = parse_driver(&self.driver)?;
        let seed_start = parse_seed(&self.seed_start).map_err(|e| anyhow!("--seed-start: {e}"))?;
        if games == 0 {
            bail!("--games must be at least 1");
        }
        if games > 1 << 32 {
            bail!("--games {games} exceeds 2^32 (the seed space)");
        }
        if self.max_moves == 0 {
            bail!("--max-moves must be at least 1");
        }
        let engine = resolve_engine(&self.engine, self.gravity.as_deref())?;
        let table: TableSpec = match (&self.table, policy.builtin()) {
            (Some(t), _) => t.parse().context("--table")?,
            (None, Ok(p)) => p.default_table(),
            (None, Err(_)) => TableSpec::DEFAULT,
        };
        let search_gravity = match engine {
            EngineSel::Packed(path) => path,
            EngineSel::Reference => match resolve_engine("packed", self.gravity.as_deref())? {
                EngineSel::Packed(path) => path,
                EngineSel::Reference => GravityPath::Portable,
            },
        };
        if let (PolicySpec::Fair(fair), Some(max_work)) = (policy, self.max_work) {
            warn_small_budget(fair, max_work);
        }
        note_fair_only_flags(
            &policy,
            &self.policy,
            self.table.is_some(),
            self.max_work.is_some(),
        );
        // The reference engine has no gravity paths; only a fair policy's
        // search (packed) still runs on the one chosen.
        if matches!(engine, EngineSel::Reference)
            && self.gravity.is_some()
            && !matches!(policy, PolicySpec::Fair(_))
        {
            eprintln!(
                "note: --gravity applies to the packed engine and fair policies' search only: ignored for --engine reference with {}",
                self.policy
            );
        }
        Ok(GameSetup {
            policy,
            driver,
            seed_start,
            games,
            max_moves: self.max_moves,
            engine,
            table,
            max_work: self.max_work,
            search_gravity,
            search_threads: 1,
            workers: 1,
        })
    }
}

impl GameSetup {
    /// How a fair policy of this setup searches.
    pub fn fair_settings(&self) -> FairSettings {
        FairSettings {
            table: self.table,
            max_work: self.max_work,
            search_gravity: self.search_gravity,
            search_threads: self.search_threads,
            workers: self.workers,
        }
    }
}

/// Warns on stderr when `--max-work` lets not even the depth-1 iteration of
/// the opening decision complete: such decisions play the fallback column.
fn warn_small_budget(fair: FairSpec, max_work: u64) {
    if !fair.budget_completes_opening(max_work) {
        eprintln!(
            "warning: --max-work {max_work} lets no search iteration complete on the opening \
             position: such decisions play the fallback (first legal column of 3,2,4,1,5,0,6)"
        );
    }
}

/// Runs `$body` with `$e` bound to the concrete engine of an [`EngineSel`]
/// (monomorphising `$body` per engine and gravity path).
macro_rules! with_engine {
    ($sel:expr, |$e:ident| $body:expr) => {
        match $sel {
            $crate::cli::spec::EngineSel::Packed(path) => {
                drop7::with_gravity!(path, |g| {
                    let $e = drop7::runner::PackedEngine(g);
                    $body
                })
            }
            $crate::cli::spec::EngineSel::Reference => {
                let $e = drop7::runner::ReferenceEngine;
                $body
            }
        }
    };
}

/// Runs `$body` with `$make` bound to a policy factory (`Fn() -> P + Sync`)
/// for the policy of a [`GameSetup`]; evaluates to `anyhow::Result<_>` of
/// `$body`'s value. The built-in policies are the core library's
/// ([`drop7::with_builtin_policy!`], shared with the Python package); a D7P
/// policy starts one engine per worker.
macro_rules! with_policy {
    ($setup:expr, |$make:ident| $body:expr) => {
        match $setup.policy.builtin() {
            Err(cmd) => {
                let timeout = $crate::cli::d7p::move_timeout()?;
                $crate::cli::d7p::preflight(cmd, timeout)?;
                let $make = move || $crate::cli::d7p::D7pPolicy::new(cmd, timeout);
                anyhow::Ok($body)
            }
            Ok(policy) => {
                drop7::with_builtin_policy!(policy, $setup.fair_settings(), |$make| anyhow::Ok(
                    $body
                ))
                .map_err(|e| anyhow::anyhow!("--table: {e}"))
                .and_then(|r| r)
            }
        }
    };
}

pub(crate) use {with_engine, with_policy};

/// A note on stderr for each of `--table` and `--max-work` given (`table`,
/// `max_work`) with a `policy` (named `name` on the command line) that does
/// not search: they are ignored.
pub fn note_fair_only_flags(policy: &PolicySpec, name: &str, table: bool, max_work: bool) {
    if matches!(policy, PolicySpec::Fair(_)) {
        return;
    }
    for (flag, given) in [("--table", table), ("--max-work", max_work)] {
        if given {
            eprintln!("note: {flag} applies to fair policies only: ignored for {name}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_specs() {
        assert_eq!("center".parse::<PolicySpec>().unwrap(), PolicySpec::Center);
        assert_eq!("random".parse::<PolicySpec>().unwrap(), PolicySpec::Random);
        assert!(matches!(
            "fair".parse::<PolicySpec>().unwrap(),
            PolicySpec::Fair(_)
        ));
        let f = "fair:d3s5".parse::<PolicySpec>().unwrap();
        assert_eq!(
            f,
            PolicySpec::Fair(FairSpec {
                depth: 3,
                strata: 5
            })
        );
        assert_eq!(f.to_string(), "fair:d3s5");
        assert_eq!("greedy".parse::<PolicySpec>().unwrap(), PolicySpec::Greedy);
        let d = "d7p: drop7 d7p --policy center"
            .parse::<PolicySpec>()
            .unwrap();
        assert_eq!(d, PolicySpec::D7p("drop7 d7p --policy center"));
        assert_eq!(d.to_string(), "d7p:drop7 d7p --policy center");
        assert!("d7p:".parse::<PolicySpec>().is_err());
        for bad in [
            "",
            "centre",
            "fair:",
            "fair:d3",
            "fair:dxs5",
            "fair:d9s5",
            "fair:d3s0",
        ] {
            assert!(bad.parse::<PolicySpec>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn engines() {
        assert_eq!(
            resolve_engine("reference", Some("portable")).unwrap(),
            EngineSel::Reference
        );
        assert_eq!(
            resolve_engine("packed", Some("portable")).unwrap(),
            EngineSel::Packed(GravityPath::Portable)
        );
        assert!(resolve_engine("fast", Some("auto")).is_err());
        assert!(resolve_engine("packed", Some("avx")).is_err());
        assert!(parse_driver("latent").is_err());
    }
}

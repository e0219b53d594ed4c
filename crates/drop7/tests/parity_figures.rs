//! The reference project's published parity figures (`shared/golden/README.md`)
//! as tests, on the packed engine (both gravity paths where BMI2 exists) and
//! on the plain reference engine:
//!
//! * headless driver, random policy, 256 seeds from 0x2D700000, move cap 2,000:
//!   6,852 moves in all;
//! * headless driver, center policy, 4,096 seeds from 0xA5270000: 87,212 moves
//!   and 60,632 waves (the total length of all `waves` lists).

use drop7::game::DriverKind;
use drop7::gravity::{Bmi2, Portable};
use drop7::runner::{
    CenterPolicy, CohortConfig, Engine, PackedEngine, Policy, RandomParityPolicy, ReferenceEngine,
    RunLabels, nth_seed, play_game_outcome, run_cohort,
};

/// Total (moves, waves) of `games` headless games from `seed_start`.
fn totals<E: Engine, P: Policy>(
    engine: E,
    mut policy: P,
    seed_start: u32,
    games: u64,
) -> (u64, u64) {
    let (mut moves, mut waves) = (0u64, 0u64);
    for i in 0..games {
        let o = play_game_outcome(
            engine,
            &mut policy,
            DriverKind::Headless,
            nth_seed(seed_start, i),
            2000,
        );
        moves += u64::from(o.moves);
        waves += o.stats.waves;
    }
    (moves, waves)
}

fn check<E: Engine>(engine: E) {
    let (moves, _) = totals(engine, RandomParityPolicy::default(), 0x2D70_0000, 256);
    assert_eq!(
        moves, 6_852,
        "random policy, 256 seeds from 0x2D700000: moves"
    );
    let (moves, waves) = totals(engine, CenterPolicy, 0xA527_0000, 4_096);
    assert_eq!(
        moves, 87_212,
        "center policy, 4,096 seeds from 0xA5270000: moves"
    );
    assert_eq!(
        waves, 60_632,
        "center policy, 4,096 seeds from 0xA5270000: waves"
    );
}

#[test]
fn packed_portable_reproduces_published_figures() {
    check(PackedEngine(Portable));
}

#[test]
fn packed_bmi2_reproduces_published_figures() {
    match Bmi2::detect() {
        Some(b) => check(PackedEngine(b)),
        None => eprintln!("skipped: this CPU has no BMI2"),
    }
}

#[test]
fn reference_reproduces_published_figures() {
    check(ReferenceEngine);
}

/// The same figures through the threaded cohort runner: records arrive in
/// seed order and their moves add up, whatever the thread count.
#[test]
fn cohort_runner_reproduces_published_figures() {
    for threads in [1, 2, 3] {
        for (policy, seed_start, games, want) in [
            ("random", 0x2D70_0000u32, 256u64, 6_852u64),
            ("center", 0xA527_0000, 4_096, 87_212),
        ] {
            let cfg = CohortConfig {
                seed_start,
                games,
                max_moves: 2000,
                threads,
                labels: RunLabels {
                    policy: policy.to_string(),
                    driver: DriverKind::Headless,
                },
            };
            let mut seeds = Vec::new();
            let mut on_record = |r: drop7::formats::GameRecord| {
                seeds.push(r.seed);
                Ok(())
            };
            let summary = if policy == "random" {
                run_cohort(
                    PackedEngine(Portable),
                    RandomParityPolicy::default,
                    &cfg,
                    &mut on_record,
                )
            } else {
                run_cohort(
                    PackedEngine(Portable),
                    || CenterPolicy,
                    &cfg,
                    &mut on_record,
                )
            }
            .unwrap();
            assert_eq!(summary.stats.moves, want, "{policy}, {threads} threads");
            assert_eq!(summary.stats.games, games);
            let want_seeds: Vec<String> = (0..games)
                .map(|i| drop7::formats::seed_hex(nth_seed(seed_start, i)))
                .collect();
            assert_eq!(seeds, want_seeds, "{policy}, {threads} threads: seed order");
        }
    }
}

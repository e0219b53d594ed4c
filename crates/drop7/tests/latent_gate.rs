//! Latent-board gate (rules.md §8): the reference's play of the Gauntlet
//! rounds (`testdata/trajectories-latent.jsonl.gz`, copied from
//! `shared/golden/`; rounds from `shared/rounds/`) replayed on the packed
//! engine (both gravity paths) and the plain reference engine. Every move's
//! first block, `nextDisc`, `terminalReason`, `latentBefore`, `latentAfter` and
//! `coveredRowsConsumed` must match: 0 mismatches. The center, random and
//! greedy policies must also choose the recorded columns themselves.

mod common;

use common::{data_path, first_block, read_jsonl_gz, read_lines_gz};
use drop7::board::format_cells;
use drop7::formats::TraceRecord;
use drop7::gravity::{Bmi2, Portable};
use drop7::latent::{CoreEngine, TrackedGame};
use drop7::policy::GreedyPolicy;
use drop7::round::{ScriptedRound, play_round};
use drop7::runner::{
    CenterPolicy, EngineGame, PackedEngine, Policy, RandomParityPolicy, ReferenceEngine, RunLabels,
};
use drop7::tape::replay;
use serde_json::Value;

fn round(id: &str) -> ScriptedRound {
    let text = std::fs::read_to_string(data_path(&format!("rounds/{id}.json"))).unwrap();
    ScriptedRound::parse(&text).unwrap()
}

fn choose<G: EngineGame>(policy: &str, pols: &mut Pols, game: &G) -> Option<usize> {
    match policy {
        "center" => pols.center.choose_in(game),
        "random" => pols.random.choose_in(game),
        "greedy" => pols.greedy.choose_in(game),
        other => panic!("policy {other}"),
    }
}

struct Pols {
    center: CenterPolicy,
    random: RandomParityPolicy,
    greedy: GreedyPolicy,
}

fn gate<E: CoreEngine>(engine: E) -> usize {
    let golden = read_jsonl_gz("trajectories-latent.jsonl.gz");
    let raw = read_lines_gz("trajectories-latent.jsonl.gz");
    let mut mismatches = 0;
    let mut i = 0;
    let mut games = 0;
    while i < golden.len() {
        let id = golden[i]["roundId"].as_str().unwrap().to_string();
        let policy = golden[i]["policy"].as_str().unwrap().to_string();
        let r = round(&id);
        assert_eq!(golden[i]["seed"].as_u64().unwrap() as u32, r.generator_seed);
        let mut game = r.start(engine);
        let mut pols = Pols {
            center: CenterPolicy,
            random: RandomParityPolicy::default(),
            greedy: GreedyPolicy,
        };
        pols.random.new_game(r.generator_seed);
        games += 1;
        while i < golden.len() && golden[i]["roundId"] == id && golden[i]["policy"] == policy {
            let g = &golden[i];
            let column = g["column"].as_u64().unwrap() as usize;
            let chosen = choose(&policy, &mut pols, &game);
            let before = game.latent_string();
            let pos = game.position();
            let mut waves = Vec::new();
            let s = game.play_move(column, &mut waves).unwrap();
            let after = game.position();
            let rec = TraceRecord {
                seed: r.generator_seed,
                move_number: game.moves_played(),
                disc: pos.next_disc,
                column,
                score_delta: s.score_delta,
                score: game.score(),
                level: game.level(),
                moves_remaining: after.moves_remaining,
                game_over: after.game_over,
                cleared_board: s.cleared_board,
                level_advanced: s.level_advanced,
                waves,
                board: format_cells(&after.board.to_cells()),
            };
            let line = serde_json::to_string(&rec).unwrap();
            let next = if after.game_over {
                Value::Null
            } else {
                Value::from(after.next_disc)
            };
            let term = s.terminal.map_or(Value::Null, |t| Value::from(t.as_str()));
            let ok = line == first_block(&raw[i])
                && chosen == Some(column)
                && next == g["nextDisc"]
                && term == g["terminalReason"]
                && before == g["latentBefore"].as_str().unwrap()
                && game.latent_string() == g["latentAfter"].as_str().unwrap()
                && game.grays().rows_used() as u64 == g["coveredRowsConsumed"].as_u64().unwrap()
                && game.grays().fault().is_none();
            if !ok {
                if mismatches < 5 {
                    eprintln!(
                        "{id}/{policy} move {}: chose {chosen:?}\n want {}\n got  {line}\n latent {before} -> {}",
                        g["move"],
                        raw[i],
                        game.latent_string()
                    );
                }
                mismatches += 1;
            }
            i += 1;
        }
        assert!(game.position().game_over, "{id}/{policy} ends in game over");
    }
    assert_eq!(games, 24);
    assert_eq!(
        mismatches,
        0,
        "{mismatches} of {} moves differ",
        golden.len()
    );
    golden.len()
}

#[test]
fn packed_portable_matches_latent_golden() {
    assert_eq!(gate(PackedEngine(Portable)), 635);
}

#[test]
fn packed_bmi2_matches_latent_golden() {
    match Bmi2::detect() {
        Some(b) => assert_eq!(gate(PackedEngine(b)), 635),
        None => eprintln!("skipped: this CPU has no BMI2"),
    }
}

#[test]
fn reference_matches_latent_golden() {
    assert_eq!(gate(ReferenceEngine), 635);
}

/// `play_round` (the scripted round runner) reproduces the reference's games
/// for all three policies, and its tapes replay to the same totals.
#[test]
fn round_runner_and_tapes() {
    let golden = read_jsonl_gz("trajectories-latent.jsonl.gz");
    for nn in 1..=8 {
        let id = format!("gauntlet-0{nn}");
        let r = round(&id);
        for policy in ["center", "random", "greedy"] {
            let last = golden
                .iter()
                .rfind(|g| g["roundId"] == id.as_str() && g["policy"] == policy)
                .unwrap();
            let labels = RunLabels {
                policy: policy.to_string(),
                driver: drop7::game::DriverKind::Headless,
            };
            let res = match policy {
                "center" => play_round(PackedEngine(Portable), &mut CenterPolicy, &r, &labels),
                "random" => play_round(
                    ReferenceEngine,
                    &mut RandomParityPolicy::default(),
                    &r,
                    &labels,
                ),
                _ => play_round(PackedEngine(Portable), &mut GreedyPolicy, &r, &labels),
            };
            assert_eq!(
                res.record.score,
                last["score"].as_u64().unwrap(),
                "{id} {policy}"
            );
            assert_eq!(u64::from(res.record.moves), last["move"].as_u64().unwrap());
            assert_eq!(res.record.round.as_deref(), Some(id.as_str()));
            assert_eq!(res.record.illegal_choices, Some(0));
            let text = serde_json::to_string(&res.tape).unwrap();
            let rep = replay(ReferenceEngine, &text);
            assert!(rep.valid && rep.complete, "{id} {policy}: {rep:?}");
            assert_eq!(rep.score, res.record.score);
            assert_eq!(
                rep.covered_rows_consumed as u64,
                last["coveredRowsConsumed"].as_u64().unwrap()
            );
        }
    }
}

/// A seeded (headless and stream) game written as a tape replays in latent
/// mode to the identical game.
#[test]
fn seeded_games_as_tapes() {
    for seed in 1..=40u32 {
        for stream in [false, true] {
            let mut g: TrackedGame<_> = if stream {
                TrackedGame::stream(PackedEngine(Portable), seed)
            } else {
                TrackedGame::headless(PackedEngine(Portable), seed)
            };
            let mut plain = if stream {
                drop7::game::Game::new(drop7::game::Driver::stream(seed))
            } else {
                drop7::game::Game::new(drop7::game::Driver::headless(seed))
            };
            let mut pol = RandomParityPolicy::default();
            pol.new_game(seed);
            while !g.position().game_over {
                let c = pol.choose_in(&g).unwrap();
                g.play_move(c, &mut ()).unwrap();
                plain.play(c).unwrap();
                assert_eq!(g.position(), plain.state().position);
            }
            assert_eq!(g.score(), plain.state().score);
            let tape = drop7::tape::Tape::of_game(&g);
            let rep = replay(
                PackedEngine(Portable),
                &serde_json::to_string(&tape).unwrap(),
            );
            assert!(rep.valid && rep.complete, "seed {seed}: {rep:?}");
            assert_eq!(rep.score, g.score());
        }
    }
}

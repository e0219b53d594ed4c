//! Tape replay against the golden latent trajectories: every game of
//! `trajectories-latent.jsonl` (Gauntlet rounds 01–08 × center, random,
//! greedy; trace-format.md) becomes a `drop7-recorded-game-v2` tape (its
//! columns, the round's discs, the covered rows it consumed), and the replay
//! must reproduce every line's board, score, level and moves to the rise, and
//! find the tape valid and complete. Then corrupted tapes get their failure.

use std::collections::BTreeMap;
use std::io::Read;

use drop7_web::replay::replay_text;
use serde_json::{Value, json};

fn testdata(name: &str) -> String {
    format!("{}/../testdata/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn latent_games() -> Vec<(Value, Vec<Value>)> {
    let mut text = String::new();
    flate2::read::GzDecoder::new(
        std::fs::File::open(testdata("trajectories-latent.jsonl.gz")).unwrap(),
    )
    .read_to_string(&mut text)
    .unwrap();
    let mut games: Vec<(String, Vec<Value>)> = Vec::new();
    for l in text.lines() {
        let v: Value = serde_json::from_str(l).unwrap();
        let key = format!("{}/{}", v["roundId"], v["policy"]);
        if v["move"] == 1 {
            games.push((key.clone(), Vec::new()));
        }
        assert_eq!(games.last().unwrap().0, key);
        games.last_mut().unwrap().1.push(v);
    }
    let mut rounds = BTreeMap::new();
    games
        .into_iter()
        .map(|(_, lines)| {
            let id = lines[0]["roundId"].as_str().unwrap().to_string();
            let round = rounds
                .entry(id.clone())
                .or_insert_with(|| {
                    let t =
                        std::fs::read_to_string(testdata(&format!("rounds/{id}.json"))).unwrap();
                    serde_json::from_str::<Value>(&t).unwrap()
                })
                .clone();
            (round, lines)
        })
        .collect()
}

fn tape_of(round: &Value, lines: &[Value]) -> Value {
    let n = lines.len();
    let consumed = lines[n - 1]["coveredRowsConsumed"].as_u64().unwrap() as usize;
    json!({
        "format": "drop7-recorded-game-v2",
        "ruleset": "drop7-hardcore-5-v1",
        "columns": lines.iter().map(|l| l["column"].clone()).collect::<Vec<_>>(),
        "discs": round["discs"].as_array().unwrap()[..n].to_vec(),
        "dropLatentValues": vec![Value::Null; n],
        "coveredRows": round["latentRows"].as_array().unwrap()[..consumed].to_vec(),
    })
}

/// A step's state and score against its golden latent trace line.
fn check_step(s: &drop7_web::Step, l: &Value) {
    let where_ = format!("{} {} move {}", l["roundId"], l["policy"], l["move"]);
    assert_eq!(s.state.board, l["board"].as_str().unwrap(), "{where_}");
    assert_eq!(json!(s.state.score), l["score"], "{where_}");
    assert_eq!(json!(s.state.level), l["level"], "{where_}");
    assert_eq!(
        json!(s.state.moves_remaining),
        l["movesRemaining"],
        "{where_}"
    );
    assert_eq!(json!(s.state.game_over), l["gameOver"], "{where_}");
    assert_eq!(json!(s.detail.score_delta), l["scoreDelta"], "{where_}");
}

#[test]
fn latent_golden_games_replay_as_tapes() {
    let games = latent_games();
    assert_eq!(games.len(), 24);
    let mut moves = 0;
    for (round, lines) in &games {
        let tape = tape_of(round, lines);
        let r = replay_text(&tape.to_string()).unwrap();
        assert_eq!(r.failure, None, "{}", lines[0]["roundId"]);
        assert_eq!(r.steps.len(), lines.len());
        for (s, l) in r.steps.iter().zip(lines) {
            check_step(s, l);
            moves += 1;
        }
    }
    assert!(moves >= 600, "{moves}");
}

#[test]
fn corrupted_tapes_fail_by_name() {
    let (round, lines) = &latent_games()[0];
    let tape = tape_of(round, lines);
    let fail = |t: &Value| replay_text(&t.to_string()).map(|r| r.failure.unwrap_or_default());

    let mut t = tape.clone();
    t["columns"].as_array_mut().unwrap().pop();
    t["discs"].as_array_mut().unwrap().pop();
    t["dropLatentValues"].as_array_mut().unwrap().pop();
    assert!(fail(&t).unwrap().starts_with("incomplete-game"));

    let mut t = tape.clone();
    t["columns"].as_array_mut().unwrap().push(json!(3));
    t["discs"].as_array_mut().unwrap().push(json!(3));
    t["dropLatentValues"]
        .as_array_mut()
        .unwrap()
        .push(Value::Null);
    assert!(fail(&t).unwrap().starts_with("trailing-move"));

    let mut t = tape.clone();
    t["coveredRows"]
        .as_array_mut()
        .unwrap()
        .push(json!([1, 1, 1, 1, 1, 1, 1]));
    assert!(fail(&t).unwrap().starts_with("invalid-configuration"));

    let mut t = tape.clone();
    t["discs"] = json!([1]);
    assert!(
        replay_text(&t.to_string())
            .unwrap_err()
            .starts_with("invalid-format")
    );

    let mut t = tape.clone();
    t["columns"][0] = json!(7);
    assert!(
        replay_text(&t.to_string())
            .unwrap_err()
            .contains("columns[0]")
    );
}

/// Every golden latent game played as a scripted round on the page's game
/// (latent board mode from the round file): every line's board, score, level,
/// moves to the rise and game-over flag.
#[test]
fn latent_golden_games_play_as_rounds() {
    let mut moves = 0;
    for (round, lines) in &latent_games() {
        let mut g = drop7_web::WebGame::round_from_text(&round.to_string()).unwrap();
        assert_eq!(g.round_id().as_deref(), round["id"].as_str());
        for l in lines {
            let s = g
                .play_step(l["column"].as_u64().unwrap() as usize)
                .unwrap_or_else(|e| panic!("{} move {}: {e}", l["roundId"], l["move"]));
            check_step(&s, l);
            assert!(!s.detail.frames.is_empty(), "move {}: no frames", l["move"]);
            moves += 1;
        }
        // Undo and restart keep the round's luck.
        let before = g.state();
        let last = *g.columns().last().unwrap();
        assert!(g.undo());
        g.play_step(usize::from(last)).unwrap();
        assert_eq!(g.state(), before);
        assert_eq!(g.restarted().columns().len(), 0);
    }
    assert!(moves >= 600, "{moves}");
}

/// A round's move cap ends the game; bad round files are named.
#[test]
fn round_cap_and_bad_rounds() {
    let (round, _) = &latent_games()[0];
    let mut r = round.clone();
    r["maximumMoves"] = json!(3);
    let mut g = drop7_web::WebGame::round_from_text(&r.to_string()).unwrap();
    assert_eq!(g.move_cap(), Some(3));
    for c in [0, 1, 2] {
        g.play_step(c).unwrap();
    }
    let e = g.play_step(3).unwrap_err();
    assert!(e.contains("move cap (3 moves)"), "{e}");
    assert_eq!(g.legal_mask(), 0);
    assert!(g.state().contains("\"gameOver\":true"));

    let mut bad = round.clone();
    bad["discs"][4] = json!(9);
    let e = drop7_web::WebGame::round_from_text(&bad.to_string())
        .err()
        .unwrap();
    assert!(e.contains("discs[4]"), "{e}");
    let e = drop7_web::WebGame::round_from_text("{\"format\":\"x\"}")
        .err()
        .unwrap();
    assert!(e.contains("drop7-scripted-round-v1"), "{e}");
    assert!(drop7_web::is_round_file(&round.to_string()));
    assert!(!drop7_web::is_round_file(
        "{\"format\":\"drop7-recorded-game-v2\"}"
    ));
}

/// The page's seeded games equal `drop7 trace` (the core runner), move by move.
#[test]
fn seeded_games_follow_the_trace() {
    for seed in 1..30u32 {
        let stream = seed % 3 == 0;
        let cols: Vec<u8> = (0..400)
            .map(|k| ((k * 5 + seed as usize) % 7) as u8)
            .collect();
        let trace = drop7_web::trace_lines(seed, stream, &cols);
        let mut g = drop7_web::WebGame::with_moves(seed, stream, &[]).unwrap();
        for line in trace.lines() {
            let l: Value = serde_json::from_str(line).unwrap();
            let s = g.play_step(l["column"].as_u64().unwrap() as usize).unwrap();
            assert_eq!(s.state.board, l["board"].as_str().unwrap(), "seed {seed}");
            assert_eq!(json!(s.state.score), l["score"], "seed {seed}");
            assert_eq!(json!(s.disc), l["disc"], "seed {seed}");
        }
    }
}

//! Parity gate: the 14 hand-made fixture moves of `shared/golden/fixtures.jsonl`
//! (clears, blocked rise, reveals, rise cascades, …) through the packed engine on
//! both gravity paths and the reference engine: every first-block key, the
//! next disc drawn from the move's Mulberry32, the terminal reason and the
//! number of stream draws.

mod common;

use common::{first_block, read_jsonl_gz, read_lines_gz};
use drop7::board::{Board, format_cells, parse_cells};
use drop7::cascade::Wave;
use drop7::formats::TraceRecord;
use drop7::game::GameState;
use drop7::gravity::{Bmi2, Gravity, Portable};
use drop7::position::Position;
use drop7::reference::engine::RefState;
use drop7::rng::{CountingSource, Mulberry32};
use serde_json::Value;

struct Case {
    board: String,
    disc: u8,
    moves_remaining: u8,
    column: usize,
    seed: u32,
    score: u64,
    level: u32,
    moves_played: u32,
}

fn case(g: &Value) -> Case {
    Case {
        board: g["boardBefore"].as_str().unwrap().to_string(),
        disc: g["disc"].as_u64().unwrap() as u8,
        moves_remaining: g["movesRemainingBefore"].as_u64().unwrap() as u8,
        column: g["column"].as_u64().unwrap() as usize,
        seed: g["seed"].as_u64().unwrap() as u32,
        score: g["scoreBefore"].as_u64().unwrap(),
        level: g["levelBefore"].as_u64().unwrap() as u32,
        moves_played: g["moveIndex"].as_u64().unwrap() as u32,
    }
}

/// (trace line, nextDisc, terminalReason, streamDraws)
type Got = (String, Value, Value, u32);

fn packed<G: Gravity>(gravity: G, c: &Case) -> Got {
    let pos = Position {
        board: c.board.parse::<Board>().unwrap(),
        next_disc: c.disc,
        moves_remaining: c.moves_remaining,
        game_over: false,
    };
    let mut st = GameState::from_position(pos, c.score, c.level, c.moves_played);
    let mut rng = CountingSource {
        inner: Mulberry32::new(c.seed),
        draws: 0,
    };
    let mut waves: Vec<Wave> = Vec::new();
    let s = st
        .play_with(gravity, c.column, &mut rng, &mut waves)
        .unwrap();
    let rec = TraceRecord {
        seed: c.seed,
        move_number: st.moves_played,
        disc: c.disc,
        column: c.column,
        score_delta: s.score_delta,
        score: st.score,
        level: st.level,
        moves_remaining: st.position.moves_remaining,
        game_over: st.position.game_over,
        cleared_board: s.cleared_board,
        level_advanced: s.level_advanced,
        waves,
        board: st.position.board.to_string(),
    };
    let next = if st.position.game_over {
        Value::Null
    } else {
        st.position.next_disc.into()
    };
    let term = s.terminal.map_or(Value::Null, |t| t.as_str().into());
    (serde_json::to_string(&rec).unwrap(), next, term, rng.draws)
}

fn reference(c: &Case) -> Got {
    let mut st = RefState::new(c.disc);
    st.board = parse_cells(&c.board).unwrap();
    st.moves_remaining = c.moves_remaining;
    st.score = c.score;
    st.level = c.level;
    st.moves_played = c.moves_played;
    let mut rng = CountingSource {
        inner: Mulberry32::new(c.seed),
        draws: 0,
    };
    let m = st.play(c.column, &mut rng).unwrap();
    let rec = TraceRecord {
        seed: c.seed,
        move_number: st.moves_played,
        disc: c.disc,
        column: c.column,
        score_delta: m.score_delta,
        score: st.score,
        level: st.level,
        moves_remaining: st.moves_remaining,
        game_over: st.game_over,
        cleared_board: m.cleared_board,
        level_advanced: m.level_advanced,
        waves: m.waves,
        board: format_cells(&st.board),
    };
    let next = if st.game_over {
        Value::Null
    } else {
        st.next_disc.into()
    };
    let term = m.terminal.map_or(Value::Null, |t| t.as_str().into());
    (serde_json::to_string(&rec).unwrap(), next, term, rng.draws)
}

#[test]
fn fixtures_match_on_every_engine() {
    let golden = read_jsonl_gz("fixtures.jsonl.gz");
    let raw = read_lines_gz("fixtures.jsonl.gz");
    assert_eq!(golden.len(), 14);
    let mut mismatches = 0;
    for (g, raw) in golden.iter().zip(&raw) {
        let c = case(g);
        let want = (
            first_block(raw),
            g["nextDisc"].clone(),
            g["terminalReason"].clone(),
            g["streamDraws"].as_u64().unwrap() as u32,
        );
        let mut arms = vec![
            ("portable", packed(Portable, &c)),
            ("reference", reference(&c)),
        ];
        if let Some(b) = Bmi2::detect() {
            arms.push(("bmi2", packed(b, &c)));
        }
        for (arm, got) in arms {
            if got != want {
                mismatches += 1;
                eprintln!("{} [{arm}]:\n want {want:?}\n got  {got:?}", g["fixture"]);
            }
        }
    }
    assert_eq!(mismatches, 0);
}

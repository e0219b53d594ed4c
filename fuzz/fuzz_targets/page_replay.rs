//! Fuzz target `page_replay`: tapes and `drop7 trace` files as the web page
//! replays a dropped file (`drop7_web::replay::replay_text`, the code behind
//! `replayFile`): never panics; an accepted file serialises (the JSON the
//! page reads) with one step per move. `web/wasm/tests/fuzz_replay.rs`
//! replays the corpus with the same checks on stable Rust.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match drop7_web::replay::replay_text(text) {
        Ok(r) => {
            let json = serde_json::to_string(&r).expect("a replay serialises");
            assert!(json.starts_with('{'));
            for s in &r.steps {
                assert!(s.column < 7 && (1..=7).contains(&s.disc));
                assert_eq!(s.state.board.len(), 49);
            }
        }
        Err(e) => assert!(!e.is_empty()),
    }
});

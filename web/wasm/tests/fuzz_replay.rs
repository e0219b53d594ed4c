//! Replays the corpus and crash inputs of the fuzz target `page_replay`
//! (`fuzz/fuzz_targets/page_replay.rs`: tapes and traces as the page replays
//! a dropped file) with the target's checks, on stable Rust.

use std::path::{Path, PathBuf};

fn inputs(kind: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz")
        .join(kind)
        .join("page_replay");
    let mut v: Vec<PathBuf> = match std::fs::read_dir(&dir) {
        Ok(d) => d.map(|e| e.unwrap().path()).collect(),
        Err(_) => Vec::new(),
    };
    v.sort();
    v
}

/// The target's checks (kept equal to `fuzz/fuzz_targets/page_replay.rs`).
fn check(data: &[u8]) {
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
}

#[test]
fn page_replay_corpus_and_crash_inputs_replay_clean() {
    let corpus = inputs("corpus");
    assert!(!corpus.is_empty(), "no corpus for page_replay");
    for f in corpus.iter().chain(inputs("regressions").iter()) {
        let data = std::fs::read(f).unwrap();
        if std::panic::catch_unwind(|| check(&data)).is_err() {
            panic!("fuzz input {} fails", f.display());
        }
    }
}

//! Replays every fuzz corpus file (`fuzz/corpus/TARGET/*`) and every crash
//! input kept from fuzzing (`fuzz/regressions/TARGET/*`) through its target's
//! logic in `drop7::fuzzing`, on stable Rust. A directory named after no
//! target is an error, so a renamed target cannot silently stop replaying
//! (except the targets of other crates, listed in `ELSEWHERE`).

use std::fs;
use std::path::{Path, PathBuf};

/// Targets whose logic lives outside `drop7` (replayed by their crate's tests):
/// `page_replay` in `web/wasm/tests/fuzz_replay.rs`.
const ELSEWHERE: &[&str] = &["page_replay"];

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

fn replay(kind: &str) -> usize {
    let root = fuzz_dir().join(kind);
    let Ok(dirs) = fs::read_dir(&root) else {
        return 0;
    };
    let mut files = 0;
    for dir in dirs {
        let dir = dir.unwrap().path();
        if !dir.is_dir() {
            continue; // a README
        }
        let name = dir.file_name().unwrap().to_str().unwrap().to_string();
        if ELSEWHERE.contains(&name.as_str()) {
            continue;
        }
        let mut inputs: Vec<PathBuf> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        inputs.sort();
        for input in inputs {
            let data = fs::read(&input).unwrap();
            let found = std::panic::catch_unwind(|| drop7::fuzzing::run(&name, &data));
            match found {
                Ok(true) => files += 1,
                Ok(false) => panic!("{}: no fuzz target named {name:?}", dir.display()),
                Err(_) => panic!("fuzz input {} fails", input.display()),
            }
        }
    }
    files
}

#[test]
fn corpus_replays_clean() {
    let n = replay("corpus");
    assert!(n > 0, "no corpus under {}", fuzz_dir().display());
    println!("replayed {n} corpus files");
}

#[test]
fn crash_inputs_stay_fixed() {
    let n = replay("regressions");
    println!("replayed {n} crash inputs");
}

#[test]
fn every_target_has_a_corpus() {
    for (name, _) in drop7::fuzzing::TARGETS {
        let dir = fuzz_dir().join("corpus").join(name);
        assert!(
            fs::read_dir(&dir).is_ok_and(|mut d| d.next().is_some()),
            "no corpus for target {name} in {}",
            dir.display()
        );
    }
}

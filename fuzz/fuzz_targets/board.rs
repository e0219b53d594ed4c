//! Fuzz target `board`: see `drop7::fuzzing::board_text`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    drop7::fuzzing::run("board", data);
});

//! Fuzz target `engine_diff`: see `drop7::fuzzing::engine_diff`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    drop7::fuzzing::run("engine_diff", data);
});

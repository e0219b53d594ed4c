//! Fuzz target `leaf_diff`: see `drop7::fuzzing::leaf_diff`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    drop7::fuzzing::run("leaf_diff", data);
});

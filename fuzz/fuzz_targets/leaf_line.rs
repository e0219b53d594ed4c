//! Fuzz target `leaf_line`: see `drop7::fuzzing::leaf_line`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    drop7::fuzzing::run("leaf_line", data);
});

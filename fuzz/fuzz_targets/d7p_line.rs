//! Fuzz target `d7p_line`: see `drop7::fuzzing::d7p_line`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    drop7::fuzzing::run("d7p_line", data);
});

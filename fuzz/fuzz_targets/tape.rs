//! Fuzz target `tape`: see `drop7::fuzzing::tape`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    drop7::fuzzing::run("tape", data);
});

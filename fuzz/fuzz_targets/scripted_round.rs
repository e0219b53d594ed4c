//! Fuzz target `scripted_round`: see `drop7::fuzzing::scripted_round`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    drop7::fuzzing::run("scripted_round", data);
});

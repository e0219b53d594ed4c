//! Fuzz target `specs`: see `drop7::fuzzing::specs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    drop7::fuzzing::run("specs", data);
});

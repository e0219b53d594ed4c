//! Fuzz target `record_line`: see `drop7::fuzzing::record_line`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    drop7::fuzzing::run("record_line", data);
});

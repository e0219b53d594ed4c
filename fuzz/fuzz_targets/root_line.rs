//! Fuzz target `root_line`: see `drop7::fuzzing::root_line`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    drop7::fuzzing::run("root_line", data);
});

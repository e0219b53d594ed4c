//! Fuzz target `input_lines`: see `drop7::fuzzing::input_lines`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    drop7::fuzzing::run("input_lines", data);
});

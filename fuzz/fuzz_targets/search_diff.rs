//! Fuzz target `search_diff`: see `drop7::fuzzing::search_diff`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    drop7::fuzzing::run("search_diff", data);
});

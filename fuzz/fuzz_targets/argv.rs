#![no_main]
// See hostbench::fuzzing::argv for what it parses.

libfuzzer_sys::fuzz_target!(|data: &[u8]| hostbench::fuzzing::argv(data));

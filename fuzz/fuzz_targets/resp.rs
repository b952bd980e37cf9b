#![no_main]
// See hostbench::fuzzing::resp for what it parses.

libfuzzer_sys::fuzz_target!(|data: &[u8]| hostbench::fuzzing::resp(data));

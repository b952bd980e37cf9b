#![no_main]
// See hostbench::fuzzing::report_input for what it parses.

libfuzzer_sys::fuzz_target!(|data: &[u8]| hostbench::fuzzing::report_input(data));

#![no_main]
// See hostbench::fuzzing::units for what it parses.

libfuzzer_sys::fuzz_target!(|data: &[u8]| hostbench::fuzzing::units(data));

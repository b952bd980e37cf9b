#![no_main]
// See hostbench::fuzzing::net_protocol for what it parses.

libfuzzer_sys::fuzz_target!(|data: &[u8]| hostbench::fuzzing::net_protocol(data));

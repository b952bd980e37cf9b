#![no_main]
// See hostbench::fuzzing::iperf3_wire for what it parses.

libfuzzer_sys::fuzz_target!(|data: &[u8]| hostbench::fuzzing::iperf3_wire(data));

#![no_main]
// See hostbench::fuzzing::fio_option for what it parses.

libfuzzer_sys::fuzz_target!(|data: &[u8]| hostbench::fuzzing::fio_option(data));

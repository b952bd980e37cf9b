#![no_main]
// See hostbench::fuzzing::fio_jobfile for what it parses.

libfuzzer_sys::fuzz_target!(|data: &[u8]| hostbench::fuzzing::fio_jobfile(data));

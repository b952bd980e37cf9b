#![no_main]
// See hostbench::fuzzing::redis_cluster_nodes for what it parses.

libfuzzer_sys::fuzz_target!(|data: &[u8]| hostbench::fuzzing::redis_cluster_nodes(data));

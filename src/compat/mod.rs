//! Personalities: the peers' own command lines and output layouts, one file (or
//! folder) per peer. They translate to workload specs and render outcomes; no
//! measurement logic lives here.

#[cfg(test)]
mod argv_fuzz;
pub mod dd;
pub mod fio;
mod getopt;
pub mod iperf3;
pub mod netperf;
pub mod netserver;
pub mod ping;
pub mod redis_benchmark;
pub mod sysbench;
pub mod unixbench;

use std::ffi::OsString;
use std::process::ExitCode;

/// Runs the personality called `name` on `args`, if there is one by that name.
pub fn dispatch(name: &str, args: &[OsString]) -> Option<ExitCode> {
    let args: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    match name {
        "sysbench" => Some(sysbench::main(&args)),
        "dd" => Some(dd::main(&args)),
        "fio" => Some(fio::main(&args)),
        "redis-benchmark" => Some(redis_benchmark::main(&args)),
        "iperf3" => Some(iperf3::main(&args)),
        "netperf" => Some(netperf::main(&args)),
        "netserver" => Some(netserver::main(&args)),
        "ping" => Some(ping::main(&args)),
        "unixbench" => Some(unixbench::main(&args)),
        _ => None,
    }
}

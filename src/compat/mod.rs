//! Personalities: the peers' own command lines and output layouts, one file (or
//! folder) per peer. They translate to workload specs, print the peer's layout from
//! the workload's raw result, and hand the `Outcome`s converted from it to a
//! `Record`, which `keep.rs` saves like a native run. No measurement logic lives here.

#[cfg(test)]
mod argv_fuzz;
pub mod dd;
pub mod fio;
mod getopt;
pub mod iperf3;
pub mod keep;
pub mod netperf;
pub mod netserver;
pub mod ping;
pub mod redis_benchmark;
pub mod sysbench;
pub mod unixbench;

pub use keep::Record;

use std::ffi::OsString;
use std::process::ExitCode;

/// The personalities, by the name a symlink or the first word gives.
pub const NAMES: [&str; 9] = [
    "sysbench",
    "dd",
    "fio",
    "redis-benchmark",
    "iperf3",
    "netperf",
    "netserver",
    "ping",
    "unixbench",
];

/// Parses `args` as the personality `name` does before it runs anything, and drops
/// the result: nothing runs, connects, reads or writes (a `--help` may print). The
/// fuzzers' entry (src/fuzzing.rs); false when `name` is no personality.
pub(crate) fn parse_only(name: &str, args: &[String]) -> bool {
    match name {
        "sysbench" => sysbench::parse_only(args),
        "dd" => drop(dd::parse(args)),
        "fio" => drop(fio::parse_jobs(args)),
        "redis-benchmark" => drop(redis_benchmark::options::parse(args)),
        "iperf3" => drop(iperf3::parse(args)),
        "netperf" => drop(netperf::parse(args)),
        // `-L NAME` looks a name up (DNS): not parsing, and not for a fuzzer to do.
        "netserver" if args.iter().any(|a| a.starts_with('-') && a.contains('L')) => {}
        "netserver" => drop(netserver::parse(args)),
        "ping" => drop(ping::parse(args)),
        "unixbench" => drop(unixbench::parse(args)),
        _ => return false,
    }
    true
}

/// Runs the personality called `name` on `args`, if there is one by that name, then
/// keeps what it measured. `command_line` is the whole line as typed (for the store).
pub fn dispatch(name: &str, args: &[OsString], command_line: &[String]) -> Option<ExitCode> {
    if !NAMES.contains(&name) {
        return None;
    }
    let args: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let mut record = Record::from_env();
    let code = match name {
        "sysbench" => sysbench::main(&args, &mut record),
        "dd" => dd::main(&args, &mut record),
        "fio" => fio::main(&args, &mut record),
        "redis-benchmark" => redis_benchmark::main(&args, &mut record),
        "iperf3" => iperf3::main(&args, &mut record),
        "netperf" => netperf::main(&args, &mut record),
        "netserver" => netserver::main(&args),
        "ping" => ping::main(&args, &mut record),
        _ => unixbench::main(&args, &mut record),
    };
    keep::finish(name, command_line, &record);
    Some(code)
}

//! The native command line: `hostbench <command> [options]`, one consistent grammar,
//! `--json` everywhere. Arguments become a validated workload spec; outcomes go to
//! `report`. No measurement logic lives here.

mod compare;
mod cpu;
mod disk;
mod history;
mod memory;
mod redis;
mod run;
mod save;

use crate::workload::SpecError;
use clap::{Args, Parser, Subcommand};
use std::process::ExitCode;
use std::time::Duration;
use thiserror::Error;

#[derive(Debug, Parser)]
#[command(
    name = "hostbench",
    version,
    about = "How good is this host, really? CPU, memory and more, with numbers comparable to sysbench's.",
    after_help = "Peer command lines work too: `hostbench sysbench cpu --cpu-max-prime=20000 run` \
                  (or a `sysbench` symlink to hostbench)."
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// The whole evaluation of this host (CPU, memory, disk), with a verdict.
    Run(run::RunArgs),
    /// CPU speed: sysbench-comparable prime events, single-thread vs all threads.
    Cpu(cpu::CpuArgs),
    /// Memory: DRAM bandwidth (STREAM-like), load latency, or sysbench's block test.
    Memory(memory::MemoryArgs),
    /// Disk: IOPS, throughput, latency percentiles and a per-second timeline, on files of its own.
    Disk(disk::DiskArgs),
    /// Redis: throughput and honest latency (open-loop --rate corrects coordinated omission).
    Redis(redis::RedisArgs),
    /// Stored runs: filter by host, label, workload and date.
    History(history::HistoryArgs),
    /// One stored run, as its command printed it (or --json).
    Show(history::ShowArgs),
    /// Stored runs as JSON or CSV, to stdout or a file.
    Export(history::ExportArgs),
    /// Stored runs, hosts or labels side by side: ratios ("2.18x faster"), mean ± σ, per-area geometric mean.
    Compare(compare::CompareArgs),
}

/// Options every event-loop command shares.
#[derive(Debug, Args, Clone)]
pub struct LoopArgs {
    /// Time limit per measurement, e.g. 10s, 1m (0 = none).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    time: Option<Duration>,
    /// Stop after this many events in total (whichever limit comes first).
    #[arg(long, value_name = "N")]
    events: Option<u64>,
    /// Record a sample every DURATION (shown in --json as `series`).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    report_interval: Option<Duration>,
}

/// Errors a command reports; the exit code follows from the kind.
#[derive(Debug, Error)]
pub enum CliError {
    #[error("{0}")]
    Spec(#[from] SpecError),
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Store(#[from] crate::store::StoreError),
}

impl CliError {
    pub fn exit_code(&self) -> ExitCode {
        ExitCode::from(2)
    }
}

fn parse_duration(s: &str) -> Result<Duration, String> {
    crate::units::parse_duration(s).map_err(|e| e.to_string())
}

fn parse_size(s: &str) -> Result<u64, String> {
    crate::units::parse_size(s).map_err(|e| e.to_string())
}

/// Exit status of a run that measured: 130 when interrupted (as a shell reports Ctrl-C).
fn finished(interrupted: bool) -> ExitCode {
    if interrupted {
        ExitCode::from(130)
    } else {
        ExitCode::SUCCESS
    }
}

/// Parses the native command line and runs it.
pub fn main(args: Vec<std::ffi::OsString>) -> ExitCode {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // clap: 0 for --help/--version, 2 for usage errors.
            return ExitCode::from(e.exit_code() as u8);
        }
    };
    let result = match cli.command {
        Command::Run(a) => run::execute(a),
        Command::Cpu(a) => cpu::execute(a),
        Command::Memory(a) => memory::execute(a),
        Command::Disk(a) => disk::execute(a),
        Command::Redis(a) => redis::execute(a),
        Command::History(a) => history::history(a),
        Command::Show(a) => history::show(a),
        Command::Export(a) => history::export(a),
        Command::Compare(a) => compare::execute(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("hostbench: error: {e}");
            e.exit_code()
        }
    }
}

/// `all` -> every CPU; `N` -> N; anything else names the fix.
fn parse_thread_count(s: &str) -> Result<usize, String> {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    match s.trim() {
        "all" => Ok(cpus),
        n => n
            .parse::<usize>()
            .ok()
            .filter(|&n| (1..=crate::workload::MAX_THREADS).contains(&n))
            .ok_or_else(|| {
                format!(
                    "'{s}' is not a thread count: use 1 to {} or 'all'",
                    crate::workload::MAX_THREADS
                )
            }),
    }
}

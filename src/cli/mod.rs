//! The native command line: `hostbench <command> [options]`, one consistent grammar,
//! `--json` everywhere. Arguments become a validated workload spec; outcomes go to
//! `report`. No measurement logic lives here.

mod compare;
mod cpu;
mod disk;
#[cfg(test)]
mod flags;
mod generate;
mod history;
mod index;
mod limits;
mod memory;
mod net;
mod redis;
pub(crate) mod report;
mod run;
mod save;
mod soak;

use crate::report::{Document, Expectation, Format, Unsupported};
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
    after_help = peers_help()
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// The whole evaluation of this host (CPU, memory, disk, network, Redis, index), with verdicts.
    Run(run::RunArgs),
    /// CPU speed: sysbench-comparable prime events, single-thread vs all threads.
    Cpu(cpu::CpuArgs),
    /// Memory: DRAM bandwidth (STREAM-like), load latency, or sysbench's block test.
    Memory(memory::MemoryArgs),
    /// Disk: IOPS, throughput, latency percentiles and a per-second timeline, on files of its own.
    Disk(disk::DiskArgs),
    /// Redis: throughput and honest latency (open-loop --rate corrects coordinated omission).
    Redis(redis::RedisArgs),
    /// Cloud providers' published disk promises (IOPS and throughput per size).
    Limits(limits::LimitsArgs),
    /// Stored runs, a comparison or a JSON result as one self-contained HTML page with charts (or Markdown, OpenMetrics).
    Report(report::ReportArgs),
    /// Network: throughput, transactions and latency against `hostbench net serve` (netperf's tests).
    Net(net::NetArgs),
    /// UnixBench-style system index: UnixBench 5.1.3's twelve tests and baselines, reimplemented.
    Index(index::IndexArgs),
    /// Stored runs: filter by host, label, workload and date.
    History(history::HistoryArgs),
    /// One stored run, as its command printed it (or --json).
    Show(history::ShowArgs),
    /// Stored runs as JSON, CSV or OpenMetrics (or text, Markdown, HTML), to stdout or a file.
    Export(history::ExportArgs),
    /// Stored runs, hosts or labels side by side: ratios ("2.18x faster"), mean ± σ, per-area geometric mean.
    Compare(compare::CompareArgs),
    /// A workload on a schedule (e.g. 10m every 1h for 24h): timeline, CV, deepest drop, flagged slices; resumable.
    Soak(soak::SoakArgs),
    /// The shell completion script for bash, zsh, fish, elvish or powershell.
    Completions(generate::CompletionsArgs),
    /// The manual page (roff), hostbench's or a command's.
    Man(generate::ManArgs),
}

/// The personalities `hostbench --help` names: every one `compat::dispatch` runs.
fn peers_help() -> String {
    format!(
        "Peer command lines work too, as `hostbench PEER ARGS...` or through a symlink named \
         PEER: {}. E.g. `hostbench sysbench cpu --cpu-max-prime=20000 run`; ping takes \
         iputils' options plus --tcp PORT and --json.",
        crate::compat::NAMES.join(", ")
    )
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

/// `--expect`: measure the disk against what its provider promises.
#[derive(Debug, Args, Clone)]
pub struct ExpectArgs {
    /// Compare the disk results with a provider's published promise:
    /// PROVIDER:TYPE:SIZE, e.g. tencent:premium:100GiB (`hostbench limits` lists them).
    /// Provisioned disks take :iops=N:mbps=N.
    #[arg(long, value_name = "PROVIDER:TYPE:SIZE")]
    expect: Option<String>,
    /// With --expect, exit 1 when a figure is below this share of its promise.
    #[arg(long, default_value = "90", value_name = "PCT")]
    expect_threshold: f64,
}

impl ExpectArgs {
    /// The promise, checked before anything runs so a typo costs no time.
    fn promise(&self) -> Result<Option<crate::limits::Promise>, CliError> {
        if !(0.0..=1000.0).contains(&self.expect_threshold) {
            return Err(CliError::Usage(format!(
                "--expect-threshold {}: give a percentage such as 90",
                self.expect_threshold
            )));
        }
        self.expect
            .as_deref()
            .map(crate::limits::promise)
            .transpose()
            .map_err(|e| CliError::Usage(e.to_string()))
    }

    /// The figures against the promise, as every format reports them.
    fn expectation<'a>(
        &self,
        promise: &'a crate::limits::Promise,
        outcomes: &[crate::model::Outcome],
    ) -> Expectation<'a> {
        Expectation::new(promise, outcomes, self.expect_threshold)
    }
}

/// Errors a command reports; the exit code follows from the kind: 2 for input the
/// user can fix (a usage error, a spec, a `--db` that cannot be a results database,
/// an unknown run), 1 for a store that failed by itself (I/O, a full disk, a lock
/// held by another process, a damaged or truncated database).
#[derive(Debug, Error)]
pub enum CliError {
    #[error("{0}")]
    Spec(#[from] SpecError),
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Store(#[from] crate::store::StoreError),
    #[error("{0}")]
    Unsupported(#[from] Unsupported),
}

impl CliError {
    pub fn exit_code(&self) -> ExitCode {
        ExitCode::from(self.code())
    }

    fn code(&self) -> u8 {
        match self {
            // A format without a layout for the document is a usage error too.
            CliError::Spec(_) | CliError::Usage(_) | CliError::Unsupported(_) => 2,
            CliError::Store(e) if e.is_usage() => 2,
            CliError::Store(_) => 1,
        }
    }
}

/// Renders `doc` as the user asked and prints it (a closed pipe ends it quietly).
fn print_doc(format: Format, doc: &Document) -> Result<(), CliError> {
    history::print_stdout(&crate::report::render(format, doc)?);
    Ok(())
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
    crate::report::text::set_width(Some(history::terminal_width()));
    let result = match cli.command {
        Command::Run(a) => run::execute(a),
        Command::Cpu(a) => cpu::execute(a),
        Command::Memory(a) => memory::execute(a),
        Command::Disk(a) => disk::execute(a),
        Command::Limits(a) => limits::execute(a),
        Command::Report(a) => report::execute(a),
        Command::Redis(a) => redis::execute(a),
        Command::Net(a) => net::execute(a),
        Command::Index(a) => index::execute(a),
        Command::History(a) => history::history(a),
        Command::Show(a) => history::show(a),
        Command::Export(a) => history::export(a),
        Command::Compare(a) => compare::execute(a),
        Command::Soak(a) => soak::execute(a),
        Command::Completions(a) => generate::completions(a),
        Command::Man(a) => generate::man(a),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::StoreError;
    use std::path::PathBuf;

    fn sqlite(code: std::ffi::c_int) -> rusqlite::Error {
        rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(code), None)
    }

    fn open(source: Box<dyn std::error::Error + Send + Sync>) -> CliError {
        CliError::Store(StoreError::Open {
            path: PathBuf::from("r.db"),
            source,
        })
    }

    /// `hostbench --help` names every personality `compat::dispatch` accepts.
    #[test]
    fn help_names_every_personality() {
        use clap::CommandFactory;
        for help in [
            Cli::command().render_help().to_string(),
            Cli::command().render_long_help().to_string(),
        ] {
            let words: Vec<&str> = help
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .collect();
            for name in crate::compat::NAMES {
                assert!(
                    words.contains(&name),
                    "`hostbench --help` lacks {name}:\n{help}"
                );
            }
        }
    }

    /// The exit code follows from the kind: what the user can fix is 2, a store that
    /// failed by itself is 1.
    #[test]
    fn exit_code_follows_from_the_kind() {
        let path = || PathBuf::from("r.db");
        let usage = [
            CliError::Usage("--threads: 'x' is not a thread count".into()),
            CliError::Spec(SpecError::new("max-prime=2", "too small", "use 10000")),
            CliError::Store(StoreError::NoLocation),
            CliError::Store(StoreError::Unsupported {
                location: "postgres://db".into(),
            }),
            CliError::Store(StoreError::NotOurs {
                path: path(),
                why: "not an SQLite file".into(),
            }),
            CliError::Store(StoreError::Newer {
                path: path(),
                found: 9,
                known: 3,
            }),
            open("directory /typo does not exist".into()),
            open(Box::new(std::io::Error::from(std::io::ErrorKind::NotFound))),
            open(Box::new(std::io::Error::from(
                std::io::ErrorKind::PermissionDenied,
            ))),
            open(Box::new(sqlite(rusqlite::ffi::SQLITE_CANTOPEN))),
        ];
        for e in &usage {
            assert_eq!(e.code(), 2, "{e}");
        }
        let failures = [
            CliError::Store(StoreError::Locked { path: path() }),
            CliError::Store(StoreError::Corrupt {
                path: path(),
                source: sqlite(rusqlite::ffi::SQLITE_CORRUPT),
            }),
            CliError::Store(StoreError::Truncated {
                path: path(),
                expected: 135_168,
                found: 8192,
            }),
            CliError::Store(StoreError::Sql {
                path: path(),
                what: "save a run".into(),
                source: sqlite(rusqlite::ffi::SQLITE_FULL),
            }),
            CliError::Store(StoreError::Decode {
                path: path(),
                what: "a unit".into(),
            }),
            open(Box::new(std::io::Error::from_raw_os_error(libc::EIO))),
        ];
        for e in &failures {
            assert_eq!(e.code(), 1, "{e}");
        }
    }
}

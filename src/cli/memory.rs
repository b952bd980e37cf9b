use super::save::SaveArgs;
use super::{CliError, LoopArgs, finished, parse_size, parse_thread_count, print_doc};
use crate::measure::histogram::Layout;
use crate::progress::{Expect, Progress};
use crate::report::{Document, Format};
use crate::workload::memory::bandwidth::{self, BandwidthSpec};
use crate::workload::memory::block::{self, Access, BlockSpec, Oper, Scope};
use crate::workload::memory::latency::{self, LatencySpec};
use crate::workload::runner::RunOptions;
use clap::{Args, ValueEnum};
use std::process::ExitCode;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Mode {
    /// STREAM-like copy/scale/add/triad on arrays 4x the last-level cache: DRAM bandwidth.
    Bandwidth,
    /// Dependent random loads at one size per cache level and one in DRAM: ns per load.
    Latency,
    /// sysbench's memory test: one block read or written word by word, events/s and MiB/s.
    Block,
}

#[derive(Debug, Args)]
pub struct MemoryArgs {
    /// What to measure; block options (--block-size, --oper, ...) imply `block`.
    #[arg(long, value_enum)]
    mode: Option<Mode>,
    /// Threads: N or `all` (default: all for bandwidth, 1 for block).
    #[arg(long, value_name = "N", value_parser = parse_thread_count)]
    threads: Option<usize>,

    /// block: size of the block each event walks (power of two, >= 8 bytes).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    block_size: Option<u64>,
    /// block: bytes to transfer in total (0 = until the time limit).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    total_size: Option<u64>,
    /// block: read, write or none.
    #[arg(long, value_enum)]
    oper: Option<OperArg>,
    /// block: seq or rnd (one random offset per word).
    #[arg(long, value_enum)]
    access: Option<AccessArg>,
    /// block: one block shared by all threads (global) or one per thread (local).
    #[arg(long, value_enum)]
    scope: Option<ScopeArg>,

    /// bandwidth: bytes per array (default max(4 x LLC, 64 MiB)).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    array_size: Option<u64>,
    /// bandwidth: passes over the four kernels; the best of passes 2.. counts [default:
    /// 10; with --time: as many as fit in it].
    #[arg(long, value_name = "N")]
    iterations: Option<usize>,

    /// latency: working-set sizes, e.g. `16K,256K,8M,1G` (default: one per cache level and DRAM).
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parse_size)]
    sizes: Vec<u64>,

    #[command(flatten)]
    limits: LoopArgs,
    #[command(flatten)]
    save: SaveArgs,
    /// Print the result as JSON (schema: docs/json.md).
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum OperArg {
    Read,
    Write,
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum AccessArg {
    Seq,
    Rnd,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ScopeArg {
    Global,
    Local,
}

impl MemoryArgs {
    fn block_options_given(&self) -> bool {
        self.block_size.is_some()
            || self.total_size.is_some()
            || self.oper.is_some()
            || self.access.is_some()
            || self.scope.is_some()
    }

    /// The mode asked for, refusing options that belong to another mode.
    fn resolve_mode(&self) -> Result<Mode, CliError> {
        let mode = self.mode.unwrap_or(if self.block_options_given() {
            Mode::Block
        } else if !self.sizes.is_empty() {
            Mode::Latency
        } else {
            Mode::Bandwidth
        });
        let misplaced = |opt: &str, belongs: &str| {
            CliError::Usage(format!(
                "{opt} applies to --mode {belongs}, not {}: drop it or add --mode {belongs}",
                format!("{mode:?}").to_lowercase()
            ))
        };
        if mode != Mode::Block && self.block_options_given() {
            return Err(misplaced(
                "--block-size/--total-size/--oper/--access/--scope",
                "block",
            ));
        }
        if mode != Mode::Bandwidth && self.array_size.is_some() {
            return Err(misplaced("--array-size", "bandwidth"));
        }
        if mode != Mode::Bandwidth && self.iterations.is_some() {
            return Err(misplaced("--iterations", "bandwidth"));
        }
        if mode != Mode::Latency && !self.sizes.is_empty() {
            return Err(misplaced("--sizes", "latency"));
        }
        if mode != Mode::Block
            && (self.limits.events.is_some() || self.limits.report_interval.is_some())
        {
            return Err(misplaced("--events/--report-interval", "block"));
        }
        Ok(mode)
    }
}

pub fn execute(args: MemoryArgs) -> Result<ExitCode, CliError> {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mode = args.resolve_mode()?;
    args.save.check()?;
    let outcome = match mode {
        Mode::Block => {
            let time = match args.limits.time {
                Some(t) if t.is_zero() => None,
                Some(t) => Some(t),
                None => Some(Duration::from_secs(10)),
            };
            let spec = BlockSpec {
                run: RunOptions {
                    time,
                    events: args.limits.events,
                    report_interval: args.limits.report_interval,
                    layout: Layout::NATIVE,
                },
                threads: args.threads.unwrap_or(1),
                block_size: args.block_size.unwrap_or(1024),
                total_size: args.total_size.unwrap_or(100 << 30),
                oper: match args.oper.unwrap_or(OperArg::Write) {
                    OperArg::Read => Oper::Read,
                    OperArg::Write => Oper::Write,
                    OperArg::None => Oper::None,
                },
                access: match args.access.unwrap_or(AccessArg::Seq) {
                    AccessArg::Seq => Access::Seq,
                    AccessArg::Rnd => Access::Rnd,
                },
                scope: match args.scope.unwrap_or(ScopeArg::Global) {
                    ScopeArg::Global => Scope::Global,
                    ScopeArg::Local => Scope::Local,
                },
                hugetlb: false,
                seed: None,
                percentiles: vec![],
            };
            spec.validate()?;
            if time.is_none() && spec.total_size == 0 && spec.run.events.is_none() {
                return Err(CliError::Usage(
                    "--time 0 with --total-size 0 would run forever: give a limit".into(),
                ));
            }
            let expect = match (time, spec.quota_per_thread()) {
                (_, Some(q)) if time.is_none() => Expect::Units(q * spec.threads as u64),
                (Some(t), _) => Expect::Time(t),
                _ => Expect::Units(spec.run.events.unwrap_or(1)),
            };
            let progress = Progress::new("memory", expect);
            block::run(&spec, &progress)?
        }
        Mode::Bandwidth => {
            // Passes for --time (0 = none, as for the other modes), else --iterations.
            let time = args.limits.time.filter(|t| !t.is_zero());
            let spec = BandwidthSpec {
                threads: args.threads.unwrap_or(cpus),
                array_bytes: args.array_size,
                iterations: args.iterations.or(time.is_none().then_some(10)),
                time,
            };
            spec.validate()?;
            let expect = match (time, spec.iterations) {
                (Some(t), _) => Expect::Time(t),
                (None, n) => Expect::Units(n.unwrap_or(1) as u64),
            };
            bandwidth::run(&spec, &Progress::new("bandwidth", expect))?
        }
        Mode::Latency => {
            if args.threads.is_some_and(|t| t != 1) {
                return Err(CliError::Usage(
                    "--mode latency runs one chain on one thread: drop --threads".into(),
                ));
            }
            let spec = LatencySpec {
                sizes: args.sizes,
                time_per_size: args.limits.time.unwrap_or(Duration::from_millis(600)),
                seed: None,
            };
            spec.validate()?;
            let sizes = spec.resolve_sizes(&crate::host::HostInfo::detect()).len();
            let progress = Progress::new("latency", Expect::Units(sizes as u64));
            latency::run(&spec, &progress)?
        }
    };
    print_doc(Format::text_or_json(args.json), &Document::from(&outcome))?;
    args.save
        .save("memory", None, std::slice::from_ref(&outcome))?;
    Ok(finished(outcome.interrupted))
}

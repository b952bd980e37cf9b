use super::save::SaveArgs;
use super::{CliError, LoopArgs, finished, parse_thread_count, print_doc};
use crate::measure::histogram::Layout;
use crate::progress::{Expect, Progress};
use crate::report::{Document, Format};
use crate::workload::cpu::{self, CpuSpec};
use crate::workload::runner::RunOptions;
use clap::Args;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Debug, Args)]
pub struct CpuArgs {
    /// Thread counts: `all` (1 thread, then one per CPU: shows scaling), `N`, or a list `1,2,4`.
    #[arg(long, default_value = "all", value_name = "LIST")]
    threads: String,
    /// Primes are searched below this number in every event (sysbench's --cpu-max-prime).
    #[arg(long, default_value_t = 10_000, value_name = "N")]
    max_prime: u64,
    #[command(flatten)]
    limits: LoopArgs,
    #[command(flatten)]
    save: SaveArgs,
    /// Print the result as JSON (schema: docs/json.md).
    #[arg(long)]
    json: bool,
}

/// `all` means 1 and every CPU; a list is taken as given.
fn thread_counts(spec: &str) -> Result<Vec<usize>, CliError> {
    if spec.trim() == "all" {
        let all = parse_thread_count("all").map_err(CliError::Usage)?;
        return Ok(if all > 1 { vec![1, all] } else { vec![1] });
    }
    spec.split(',')
        .map(|s| parse_thread_count(s).map_err(|e| CliError::Usage(format!("--threads: {e}"))))
        .collect()
}

pub fn execute(args: CpuArgs) -> Result<ExitCode, CliError> {
    let threads = thread_counts(&args.threads)?;
    let time = match args.limits.time {
        Some(t) if t.is_zero() => None,
        Some(t) => Some(t),
        None if args.limits.events.is_some() => None,
        None => Some(Duration::from_secs(10)),
    };
    let spec = CpuSpec {
        run: RunOptions {
            time,
            events: args.limits.events,
            report_interval: args.limits.report_interval,
            layout: Layout::NATIVE,
        },
        threads: threads.clone(),
        max_prime: args.max_prime,
        percentiles: vec![],
    };
    spec.validate()?;
    let progress = match (time, args.limits.events) {
        (Some(t), _) => Progress::new("cpu", Expect::Time(t * threads.len() as u32)),
        (None, Some(n)) => Progress::new("cpu", Expect::Units(n)),
        (None, None) => {
            return Err(CliError::Usage(
                "--time 0 without --events would run forever: give --time or --events".into(),
            ));
        }
    };
    args.save.check()?;
    let outcome = cpu::run(&spec, &progress)?;
    progress.finish();
    print_doc(Format::text_or_json(args.json), &Document::from(&outcome))?;
    args.save
        .save("cpu", None, std::slice::from_ref(&outcome))?;
    Ok(finished(outcome.interrupted))
}

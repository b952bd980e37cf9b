//! Workloads: the one contract every measurement follows (docs/design.md, "The
//! workload contract"): a validated spec, one `Observer` for progress, interval
//! snapshots and stop requests (`observe.rs`), a raw result that keeps everything a
//! peer's exact layout needs, and one conversion from it to `Outcome`, with the
//! `params` that identify the measurement. A workload knows nothing of terminals,
//! result files or peers' output formats.

pub mod buffer;
pub mod cpu;
pub mod disk;
pub mod memory;
pub mod net;
pub mod observe;
pub mod redis;
pub mod runner;
pub mod sched;
pub mod unixbench;

use crate::model::{CpuUse, Outcome, Sample, ThreadStat};
use crate::workload::runner::{Interval, RunResult};
use std::collections::BTreeMap;
use thiserror::Error;

/// A spec that cannot run: names the input and what to do instead.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("{input}: {problem}; {fix}")]
pub struct SpecError {
    pub input: String,
    pub problem: String,
    pub fix: String,
}

impl SpecError {
    pub fn new(
        input: impl Into<String>,
        problem: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Self {
            input: input.into(),
            problem: problem.into(),
            fix: fix.into(),
        }
    }
}

/// Threads a native run may ask for: enough to oversubscribe, not enough to exhaust
/// the machine by a typo.
pub const MAX_THREADS: usize = 4096;

pub fn check_threads(threads: usize) -> Result<(), SpecError> {
    if threads == 0 || threads > MAX_THREADS {
        return Err(SpecError::new(
            format!("threads={threads}"),
            "thread count out of range",
            format!("use 1 to {MAX_THREADS}"),
        ));
    }
    Ok(())
}

/// Copies what every event-loop run reports into the outcome: elapsed time, CPU use,
/// per-thread totals, interval samples and the interrupted flag.
pub(crate) fn record_run(
    outcome: &mut Outcome,
    run: &RunResult,
    sample: impl Fn(&Interval) -> BTreeMap<String, f64>,
) {
    outcome.elapsed_s = run.elapsed.as_secs_f64();
    outcome.interrupted |= run.interrupted;
    outcome.cpu_time = CpuUse::over(&run.cpu, run.elapsed);
    outcome.threads = run.threads.iter().map(ThreadStat::from).collect();
    outcome.series = run
        .intervals
        .iter()
        .map(|i| Sample {
            at_s: i.at.as_secs_f64(),
            span_s: i.span.as_secs_f64(),
            values: sample(i),
        })
        .collect();
    if run.interrupted {
        outcome.note("interrupted: the run was stopped early; figures cover the part that ran");
    }
}

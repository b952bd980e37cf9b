//! Workloads: the one contract every measurement follows (docs/design.md, "The
//! workload contract"): a validated spec, one `Observer` for progress, interval
//! snapshots and stop requests (`observe.rs`), a raw result that keeps everything a
//! peer's exact layout needs, and one conversion from it to `Outcome`, with the
//! `params` that identify the measurement. A workload knows nothing of terminals,
//! result files or peers' output formats.

pub mod buffer;
pub mod bursts;
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

/// Adds one event-loop run (a phase) to the outcome: elapsed time, CPU use,
/// per-thread totals, interval samples and the interrupted flag.
///
/// A workload may run several phases into one outcome (cpu: 1 thread, then all of
/// them), so every phase's record is kept: elapsed and CPU time add up, and the
/// phase's samples are appended with their clock moved past the phases before it, so
/// the timeline reads as one run. A workload with several phases puts a `threads`
/// value in `sample` (the report splits timelines by it). Per-thread totals are the
/// last phase's, like the latency a workload reports beside them.
pub(crate) fn record_run(
    outcome: &mut Outcome,
    run: &RunResult,
    sample: impl Fn(&Interval) -> BTreeMap<String, f64>,
) {
    let offset = outcome.elapsed_s;
    outcome.elapsed_s += run.elapsed.as_secs_f64();
    outcome.interrupted |= run.interrupted;
    let user_s = outcome.cpu_time.user_s + run.cpu.user_s;
    let system_s = outcome.cpu_time.system_s + run.cpu.system_s;
    outcome.cpu_time = CpuUse {
        user_s,
        system_s,
        utilisation: if outcome.elapsed_s > 0.0 {
            (user_s + system_s) / outcome.elapsed_s
        } else {
            0.0
        },
    };
    outcome.threads = run.threads.iter().map(ThreadStat::from).collect();
    outcome.series.extend(run.intervals.iter().map(|i| Sample {
        at_s: offset + i.at.as_secs_f64(),
        span_s: i.span.as_secs_f64(),
        values: sample(i),
    }));
    if run.interrupted {
        outcome.note("interrupted: the run was stopped early; figures cover the part that ran");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::HostInfo;
    use crate::measure::cputime::CpuTime;
    use crate::measure::histogram::{Histogram, Layout};
    use crate::workload::runner::ThreadTotals;
    use std::time::Duration;

    /// A run of `secs` seconds with one sample per second and `cpu_s` of user time.
    fn phase(threads: usize, secs: u64, cpu_s: f64) -> RunResult {
        RunResult {
            elapsed: Duration::from_secs(secs),
            threads: vec![ThreadTotals::default(); threads],
            histogram: Histogram::new(Layout::NATIVE),
            intervals: (1..=secs)
                .map(|s| Interval {
                    at: Duration::from_secs(s),
                    span: Duration::from_secs(1),
                    events: 100 * threads as u64,
                    threads_running: threads,
                    histogram: Histogram::new(Layout::NATIVE),
                })
                .collect(),
            interrupted: false,
            cpu: CpuTime {
                user_s: cpu_s,
                system_s: 0.0,
            },
        }
    }

    /// Two phases into one outcome (cpu's 1 thread, then 2): the first phase's
    /// samples survive the second, whose clock continues where the first ended.
    #[test]
    fn every_phase_is_kept() {
        let mut o = Outcome::new("cpu", serde_json::Value::Null, HostInfo::default());
        for (threads, secs) in [(1, 2), (2, 3)] {
            let run = phase(threads, secs, secs as f64 * threads as f64);
            record_run(&mut o, &run, |i| {
                BTreeMap::from([
                    ("threads".into(), threads as f64),
                    ("events_per_sec".into(), i.events_per_sec()),
                ])
            });
        }
        let seen: Vec<(f64, f64)> = o
            .series
            .iter()
            .map(|s| (s.at_s, s.values["threads"]))
            .collect();
        assert_eq!(
            seen,
            [(1.0, 1.0), (2.0, 1.0), (3.0, 2.0), (4.0, 2.0), (5.0, 2.0)]
        );
        assert_eq!(o.elapsed_s, 5.0);
        assert_eq!(o.cpu_time.user_s, 8.0);
        assert_eq!(o.cpu_time.utilisation, 8.0 / 5.0);
        assert_eq!(o.threads.len(), 2, "per-thread totals are the last phase's");
    }
}

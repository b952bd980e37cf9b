//! sysbench's scheduler and lock tests, as sysbench 1.0.20 defines them.
//!
//! - `threads`: an event takes lock `k = n++ % locks` and `yields` times locks it,
//!   yields the CPU and unlocks: scheduler and mutex hand-off cost.
//! - `mutex`: every thread runs exactly one event of `locks` iterations: spin `loops`
//!   empty iterations, lock a random one of `mutexes` mutexes, bump a shared counter.

use super::{SpecError, check_threads, record_run};
use crate::host::HostInfo;
use crate::measure::rng::Xoroshiro128Plus;
use crate::model::{Metric, Outcome, STANDARD_PERCENTILES, Unit};
use crate::workload::runner::{self, EventWorker, Observer, RunOptions};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering, compiler_fence};
use std::sync::{Arc, Mutex};

#[derive(Debug, Clone, Serialize)]
pub struct ThreadsSpec {
    pub run: RunOptions,
    pub threads: usize,
    pub yields: u64,
    pub locks: usize,
    pub percentiles: Vec<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct MutexSpec {
    pub run: RunOptions,
    pub threads: usize,
    pub mutexes: usize,
    pub locks: u64,
    pub loops: u64,
    pub percentiles: Vec<f64>,
}

fn positive(name: &str, v: u64) -> Result<(), SpecError> {
    if v == 0 {
        return Err(SpecError::new(
            format!("{name}=0"),
            "must be positive",
            "use 1 or more",
        ));
    }
    Ok(())
}

struct YieldWorker {
    locks: Arc<Vec<Mutex<()>>>,
    next: Arc<AtomicU64>,
    yields: u64,
}

impl EventWorker for YieldWorker {
    fn execute(&mut self) {
        let k = self.next.fetch_add(1, Ordering::Relaxed) as usize % self.locks.len();
        for _ in 0..self.yields {
            let guard = self.locks[k].lock().unwrap_or_else(|e| e.into_inner());
            std::thread::yield_now();
            drop(guard);
        }
    }
}

/// sysbench pads each mutex to 256 bytes so neighbours never share a cache line.
#[repr(align(256))]
struct PaddedMutex(Mutex<()>);

struct LockWorker {
    mutexes: Arc<Vec<PaddedMutex>>,
    shared: Arc<AtomicU64>,
    locks: u64,
    loops: u64,
    rng: Xoroshiro128Plus,
    done: bool,
}

impl EventWorker for LockWorker {
    fn next_event(&mut self) -> bool {
        !std::mem::replace(&mut self.done, true)
    }

    fn execute(&mut self) {
        for _ in 0..self.locks {
            let m = self.rng.below(self.mutexes.len());
            for _ in 0..self.loops {
                compiler_fence(Ordering::SeqCst);
            }
            let guard = self.mutexes[m].0.lock().unwrap_or_else(|e| e.into_inner());
            // A plain read-modify-write under whichever lock was drawn, as in sysbench.
            let v = self.shared.load(Ordering::Relaxed);
            self.shared.store(v + 1, Ordering::Relaxed);
            drop(guard);
        }
    }
}

fn finish(
    name: &str,
    spec_json: serde_json::Value,
    result: &runner::RunResult,
    percentiles: &[f64],
    threads: usize,
) -> Outcome {
    let mut outcome = Outcome::new(name, spec_json, HostInfo::detect());
    let mut ps = STANDARD_PERCENTILES.to_vec();
    ps.extend(
        percentiles
            .iter()
            .filter(|p| !STANDARD_PERCENTILES.contains(p)),
    );
    record_run(&mut outcome, result, |i| {
        BTreeMap::from([("events_per_sec".into(), i.events_per_sec())])
    });
    outcome.push(
        Metric::new(
            "events_per_sec",
            result.events_per_sec(),
            Unit::EventsPerSec,
        )
        .threads(threads),
    );
    outcome.push(Metric::new("events", result.events() as f64, Unit::Count).threads(threads));
    outcome.latency = Some(result.latency(&ps));
    outcome
}

pub fn run_threads(spec: &ThreadsSpec, observer: &dyn Observer) -> Result<Outcome, SpecError> {
    check_threads(spec.threads)?;
    positive("thread-yields", spec.yields)?;
    positive("thread-locks", spec.locks as u64)?;
    let locks = Arc::new((0..spec.locks).map(|_| Mutex::new(())).collect::<Vec<_>>());
    let next = Arc::new(AtomicU64::new(0));
    let workers = (0..spec.threads)
        .map(|_| YieldWorker {
            locks: Arc::clone(&locks),
            next: Arc::clone(&next),
            yields: spec.yields,
        })
        .collect();
    let result = runner::run(&spec.run, workers, observer);
    let json = serde_json::to_value(spec).unwrap_or_default();
    let mut outcome = finish("threads", json, &result, &spec.percentiles, spec.threads);
    outcome.param("thread-yields", spec.yields);
    outcome.param("thread-locks", spec.locks);
    Ok(outcome)
}

pub fn run_mutex(spec: &MutexSpec, observer: &dyn Observer) -> Result<Outcome, SpecError> {
    check_threads(spec.threads)?;
    positive("mutex-num", spec.mutexes as u64)?;
    let mutexes = Arc::new(
        (0..spec.mutexes)
            .map(|_| PaddedMutex(Mutex::new(())))
            .collect::<Vec<_>>(),
    );
    let shared = Arc::new(AtomicU64::new(0));
    let workers = (0..spec.threads)
        .map(|t| LockWorker {
            mutexes: Arc::clone(&mutexes),
            shared: Arc::clone(&shared),
            locks: spec.locks,
            loops: spec.loops,
            rng: Xoroshiro128Plus::from_entropy(t as u64),
            done: false,
        })
        .collect();
    let result = runner::run(&spec.run, workers, observer);
    let json = serde_json::to_value(spec).unwrap_or_default();
    let mut outcome = finish("mutex", json, &result, &spec.percentiles, spec.threads);
    outcome.param("mutex-num", spec.mutexes);
    outcome.param("mutex-locks", spec.locks);
    outcome.param("mutex-loops", spec.loops);
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::histogram::Layout;

    fn run_opts() -> RunOptions {
        RunOptions {
            time: Some(std::time::Duration::from_secs(5)),
            events: Some(50),
            report_interval: None,
            layout: Layout::SYSBENCH,
        }
    }

    #[test]
    fn threads_runs_the_event_budget() {
        let spec = ThreadsSpec {
            run: run_opts(),
            threads: 2,
            yields: 10,
            locks: 4,
            percentiles: vec![],
        };
        let out = run_threads(&spec, &runner::Quiet).unwrap();
        assert_eq!(out.metric("events", None).unwrap().value, 50.0);
    }

    #[test]
    fn mutex_runs_one_event_per_thread() {
        let spec = MutexSpec {
            run: run_opts(),
            threads: 3,
            mutexes: 16,
            locks: 100,
            loops: 10,
            percentiles: vec![],
        };
        let out = run_mutex(&spec, &runner::Quiet).unwrap();
        assert_eq!(out.metric("events", None).unwrap().value, 3.0);
    }
}

//! The one observer every workload reports to while it runs, whichever front end
//! watches: a progress bar, a personality printing its peer's interval lines, the
//! main job, a soak slice. Three things pass through it and nothing else:
//!
//! - `progress`: about ten times a second, how far the run is (for bars and ETAs);
//! - `snapshot`: a piece of the result as it becomes final (a report interval, a ping
//!   reply, a test of a suite), for peers that print as they go;
//! - `stop_requested`: asked by the workload between events; true ends the run early,
//!   and the raw result says it was interrupted.
//!
//! Observers are `Sync`: workloads call them from a reporting thread while workers
//! run, so a front end that keeps state while printing uses a `Mutex` or atomics.

use super::runner::Interval;
use std::time::Duration;

/// Where a run is.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Progress {
    /// Since the measured part began.
    pub elapsed: Duration,
    /// Units of work finished so far: events, I/Os, requests, bytes, replies.
    pub done: u64,
    /// Which part of a multi-part run this is (a thread count, a test), from 0.
    pub phase: usize,
}

impl Progress {
    pub fn at(elapsed: Duration, done: u64) -> Self {
        Progress {
            elapsed,
            done,
            phase: 0,
        }
    }
}

/// A piece of the result that is final: one per family that prints as it goes.
#[derive(Debug)]
pub enum Snapshot<'a> {
    /// One report interval of the event runner (sysbench's `--report-interval`).
    Interval(&'a Interval),
    /// One interval of a network test's receiver (netperf's demo lines, `-i`).
    Net(&'a crate::workload::net::protocol::IntervalReport),
    /// One echo reply (ping prints a line per reply).
    Ping(&'a crate::workload::net::ping::Reply),
    /// One interval of an iperf3 test: a row per stream (iperf3 prints a block).
    Iperf3(&'a [crate::workload::net::iperf3::Row]),
    /// redis-benchmark's live line, every 250 ms.
    Redis(&'a crate::workload::redis::lockstep::Tick),
    /// A test of the UnixBench-style suite started, a pass started, a test finished.
    Suite(&'a crate::workload::unixbench::SuiteEvent<'a>),
}

pub trait Observer: Sync {
    fn progress(&self, _progress: &Progress) {}
    fn snapshot(&self, _snapshot: &Snapshot<'_>) {}
    /// Whether to stop at the next event: Ctrl-C, unless the observer knows better.
    fn stop_requested(&self) -> bool {
        crate::measure::stop_requested()
    }
}

/// An observer that watches nothing (and stops on Ctrl-C).
pub struct Quiet;
impl Observer for Quiet {}

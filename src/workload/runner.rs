//! The threaded event runner, with sysbench 1.0.20's loop semantics.
//!
//! Every worker waits at a start barrier; the clock starts when the last one arrives.
//! Each worker then loops: stop if the deadline passed (an event that started before
//! it always completes), stop if the global `--events` budget is spent (one atomic
//! add, only when a budget is set), ask the workload for its next event, time the
//! event, record it. The bookkeeping per event (three monotonic clock reads, one `ln`,
//! one relaxed atomic add into the thread's own histogram, two stores of the thread's
//! own counters) matches sysbench's, so short events cost the same framework overhead
//! here as there and small-block memory figures stay comparable.
//!
//! The calling thread meanwhile takes interval snapshots (`--report-interval`) and
//! drives progress ticks; it reads the workers' counters, never writes them.

use crate::measure::cputime::CpuTime;
use crate::measure::histogram::{AtomicHistogram, Histogram, Layout};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Barrier, Mutex, mpsc};
use std::time::{Duration, Instant};

/// What bounds a run and how it is observed.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunOptions {
    /// Stop starting events after this long. `None`: no time limit.
    pub time: Option<Duration>,
    /// Stop after this many events in total. `None`: no event limit.
    pub events: Option<u64>,
    pub report_interval: Option<Duration>,
    pub layout: Layout,
}

/// One thread's share of a workload.
pub trait EventWorker: Send {
    /// Prepares the next event; `false` when this thread's share of the work is done.
    fn next_event(&mut self) -> bool {
        true
    }
    /// The timed body of one event.
    fn execute(&mut self);
    /// Runs once when the thread stops, untimed but inside the run's total time
    /// (sysbench's per-thread "done" hook: fileio's closing fsync).
    fn finish(&mut self) {}
}

pub use super::observe::{Observer, Progress, Quiet, Snapshot};
use crate::model::{Latency, ThreadStat};

/// Counts and latencies of one report interval.
#[derive(Debug, Clone)]
pub struct Interval {
    /// Time since start at the end of the interval.
    pub at: Duration,
    /// Actual length of the interval (the reporter can wake late).
    pub span: Duration,
    pub events: u64,
    pub threads_running: usize,
    pub histogram: Histogram,
}

impl Interval {
    pub fn events_per_sec(&self) -> f64 {
        rate(self.events, self.span)
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThreadTotals {
    pub events: u64,
    pub latency_sum_ns: u64,
    pub min_ns: u64,
    pub max_ns: u64,
}

impl Default for ThreadTotals {
    fn default() -> Self {
        Self {
            events: 0,
            latency_sum_ns: 0,
            min_ns: u64::MAX,
            max_ns: 0,
        }
    }
}

#[derive(Debug, Clone)]
pub struct RunResult {
    /// From the start barrier to the moment all workers had stopped.
    pub elapsed: Duration,
    pub threads: Vec<ThreadTotals>,
    pub histogram: Histogram,
    pub intervals: Vec<Interval>,
    pub interrupted: bool,
    pub cpu: CpuTime,
}

impl RunResult {
    pub fn events(&self) -> u64 {
        self.threads.iter().map(|t| t.events).sum()
    }

    pub fn events_per_sec(&self) -> f64 {
        rate(self.events(), self.elapsed)
    }

    pub fn latency_sum_ns(&self) -> u64 {
        self.threads.iter().map(|t| t.latency_sum_ns).sum()
    }

    /// 0 when no event ran, as sysbench prints it.
    pub fn min_ns(&self) -> u64 {
        self.threads
            .iter()
            .map(|t| t.min_ns)
            .min()
            .filter(|&m| m != u64::MAX)
            .unwrap_or(0)
    }

    pub fn max_ns(&self) -> u64 {
        self.threads.iter().map(|t| t.max_ns).max().unwrap_or(0)
    }

    /// Integer nanoseconds, as sysbench divides.
    pub fn mean_ns(&self) -> u64 {
        self.latency_sum_ns()
            .checked_div(self.events())
            .unwrap_or(0)
    }
}

fn rate(events: u64, span: Duration) -> f64 {
    let s = span.as_secs_f64();
    if s > 0.0 { events as f64 / s } else { 0.0 }
}

/// A worker's counters, on cache lines of their own.
#[repr(align(128))]
struct Slot {
    events: AtomicU64,
    running: AtomicBool,
    histogram: AtomicHistogram,
}

/// Runs `workers`, one thread each, under `options`' limits.
pub fn run<W: EventWorker>(
    options: &RunOptions,
    workers: Vec<W>,
    observer: &dyn Observer,
) -> RunResult {
    let threads = workers.len();
    assert!(threads > 0, "a run needs at least one worker");
    let slots: Vec<Slot> = (0..threads)
        .map(|_| Slot {
            events: AtomicU64::new(0),
            running: AtomicBool::new(true),
            histogram: AtomicHistogram::new(options.layout),
        })
        .collect();
    let issued = AtomicU64::new(0);
    // Set by the reporting thread when the observer asks to stop; workers look at it
    // between events, as sysbench's workers look at their own stop flag.
    let halt = AtomicBool::new(false);
    let ready = Barrier::new(threads + 1);
    let go = Barrier::new(threads + 1);
    let start_cell: Mutex<Option<Instant>> = Mutex::new(None);
    let (done_tx, done_rx) = mpsc::channel::<()>();

    std::thread::scope(|scope| {
        let handles: Vec<_> = workers
            .into_iter()
            .zip(&slots)
            .map(|(worker, slot)| {
                let done_tx = done_tx.clone();
                let (ready, go, start_cell, issued, halt) =
                    (&ready, &go, &start_cell, &issued, &halt);
                scope.spawn(move || {
                    ready.wait();
                    go.wait();
                    let start = start_cell.lock().unwrap().expect("start set before go");
                    let totals = worker_loop(worker, slot, start, options, issued, halt);
                    slot.running.store(false, Ordering::Relaxed);
                    let _ = done_tx.send(());
                    totals
                })
            })
            .collect();
        drop(done_tx);

        ready.wait();
        let start = Instant::now();
        let cpu_before = CpuTime::now();
        *start_cell.lock().unwrap() = Some(start);
        go.wait();

        let intervals = report_until_done(options, &slots, start, &done_rx, observer, &halt);
        let totals: Vec<ThreadTotals> = handles
            .into_iter()
            .map(|h| h.join().expect("benchmark worker panicked"))
            .collect();
        let elapsed = start.elapsed();
        let cpu = CpuTime::now().since(&cpu_before);

        let mut histogram = Histogram::new(options.layout);
        for slot in &slots {
            histogram.merge(&slot.histogram.snapshot());
        }
        RunResult {
            elapsed,
            threads: totals,
            histogram,
            intervals,
            interrupted: halt.load(Ordering::Relaxed),
            cpu,
        }
    })
}

#[inline]
fn worker_loop<W: EventWorker>(
    mut worker: W,
    slot: &Slot,
    start: Instant,
    options: &RunOptions,
    issued: &AtomicU64,
    halt: &AtomicBool,
) -> ThreadTotals {
    let deadline = options.time.map(|t| start + t);
    let budget = options.events;
    let mut totals = ThreadTotals::default();
    loop {
        if halt.load(Ordering::Relaxed) {
            break;
        }
        if let Some(deadline) = deadline
            && Instant::now() >= deadline
        {
            break;
        }
        if let Some(budget) = budget
            && issued.fetch_add(1, Ordering::Relaxed) >= budget
        {
            break;
        }
        if !worker.next_event() {
            break;
        }
        let began = Instant::now();
        worker.execute();
        let ns = began.elapsed().as_nanos() as u64;

        totals.events += 1;
        totals.latency_sum_ns += ns;
        totals.min_ns = totals.min_ns.min(ns);
        totals.max_ns = totals.max_ns.max(ns);
        slot.events.store(totals.events, Ordering::Relaxed);
        slot.histogram.record(ns);
    }
    worker.finish();
    totals
}

const TICK: Duration = Duration::from_millis(100);

fn report_until_done(
    options: &RunOptions,
    slots: &[Slot],
    start: Instant,
    done_rx: &mpsc::Receiver<()>,
    observer: &dyn Observer,
    halt: &AtomicBool,
) -> Vec<Interval> {
    let events_now = || -> u64 { slots.iter().map(|s| s.events.load(Ordering::Relaxed)).sum() };
    let histogram_now = || {
        let mut h = Histogram::new(options.layout);
        for s in slots {
            h.merge(&s.histogram.snapshot());
        }
        h
    };
    let mut intervals = Vec::new();
    let mut running = slots.len();
    let mut next_report = options.report_interval.map(|r| start + r);
    let mut last_report_at = start;
    let mut last_events = 0;
    let mut last_histogram = Histogram::new(options.layout);
    let mut next_tick = start + TICK;

    // A stop is looked for at least this often; a worker finishes its event first.
    const STOP_POLL: Duration = Duration::from_millis(5);
    while running > 0 {
        if !halt.load(Ordering::Relaxed) && observer.stop_requested() {
            halt.store(true, Ordering::Relaxed);
        }
        let wake = next_report.map_or(next_tick, |r| r.min(next_tick));
        let wake = wake.min(Instant::now() + STOP_POLL);
        let wait = wake.saturating_duration_since(Instant::now());
        match done_rx.recv_timeout(wait) {
            Ok(()) => {
                running -= 1;
                continue;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        let now = Instant::now();
        if let (Some(due), Some(every)) = (next_report, options.report_interval)
            && now >= due
        {
            let (events, histogram) = (events_now(), histogram_now());
            let interval = Interval {
                at: now - start,
                span: now - last_report_at,
                events: events - last_events,
                threads_running: slots
                    .iter()
                    .filter(|s| s.running.load(Ordering::Relaxed))
                    .count(),
                histogram: histogram.since(&last_histogram),
            };
            observer.snapshot(&Snapshot::Interval(&interval));
            intervals.push(interval);
            (last_report_at, last_events, last_histogram) = (now, events, histogram);
            // Skip missed reports rather than bursting them out after a stall.
            let mut due = due + every;
            while due <= now {
                due += every;
            }
            next_report = Some(due);
        }
        if now >= next_tick {
            observer.progress(&Progress::at(now - start, events_now()));
            next_tick = now + TICK;
        }
    }
    intervals
}

/// The runner's results in the model's terms: the conversion every event-loop
/// workload shares (the model knows nothing of the runner).
impl RunResult {
    pub fn latency(&self, percentiles: &[f64]) -> Latency {
        let mut l = Latency::from_histogram(
            &self.histogram,
            self.min_ns(),
            self.max_ns(),
            self.latency_sum_ns() as u128,
            percentiles,
        );
        // The runner's mean is sysbench's: whole nanoseconds.
        l.mean_ns = self.mean_ns() as f64;
        l
    }
}

impl From<&ThreadTotals> for ThreadStat {
    fn from(t: &ThreadTotals) -> Self {
        Self {
            events: t.events,
            latency_sum_ns: t.latency_sum_ns,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone)]
    struct Sleeper(Duration);
    impl EventWorker for Sleeper {
        fn execute(&mut self) {
            std::thread::sleep(self.0);
        }
    }

    struct Quota(u64);
    impl EventWorker for Quota {
        fn next_event(&mut self) -> bool {
            if self.0 == 0 {
                return false;
            }
            self.0 -= 1;
            true
        }
        fn execute(&mut self) {
            std::hint::black_box(0);
        }
    }

    fn options(_threads: usize, time: Option<Duration>, events: Option<u64>) -> RunOptions {
        RunOptions {
            time,
            events,
            report_interval: None,
            layout: Layout::SYSBENCH,
        }
    }

    #[test]
    fn event_limit_is_exact_across_threads() {
        let opts = options(3, None, Some(1000));
        let r = run(&opts, (0..3).map(|_| Quota(u64::MAX)).collect(), &Quiet);
        assert_eq!(r.events(), 1000);
        assert_eq!(r.histogram.total(), 1000);
        assert!(!r.interrupted);
    }

    #[test]
    fn time_limit_stops_after_deadline() {
        let opts = options(2, Some(Duration::from_millis(200)), None);
        let r = run(
            &opts,
            (0..2).map(|_| Sleeper(Duration::from_millis(10))).collect(),
            &Quiet,
        );
        assert!(r.elapsed >= Duration::from_millis(200));
        // An event started before the deadline completes; none starts after it (with
        // slack for a loaded machine, where a sleep can overshoot).
        assert!(
            r.elapsed < Duration::from_millis(200 + 10 + 400),
            "{:?}",
            r.elapsed
        );
        // 2 threads x ~20 events; generous bounds for a loaded machine.
        assert!((4..=42).contains(&r.events()), "{}", r.events());
        assert!(r.min_ns() >= 10_000_000);
    }

    #[test]
    fn whichever_limit_comes_first() {
        let opts = options(1, Some(Duration::from_secs(30)), Some(5));
        let r = run(&opts, vec![Sleeper(Duration::from_millis(1))], &Quiet);
        assert_eq!(r.events(), 5);
        assert!(r.elapsed < Duration::from_secs(5));
    }

    #[test]
    fn worker_quota_ends_the_run() {
        let opts = options(2, None, None);
        let r = run(&opts, vec![Quota(10), Quota(20)], &Quiet);
        assert_eq!(
            r.threads.iter().map(|t| t.events).collect::<Vec<_>>(),
            [10, 20]
        );
        let (sum, mean) = (r.latency_sum_ns(), r.mean_ns());
        assert_eq!(mean, sum / 30);
    }

    struct Collect(Mutex<Vec<Interval>>);
    impl Observer for Collect {
        fn snapshot(&self, s: &Snapshot<'_>) {
            if let Snapshot::Interval(i) = s {
                self.0.lock().unwrap().push((*i).clone());
            }
        }
    }

    #[test]
    fn intervals_add_up_to_the_total() {
        let mut opts = options(2, Some(Duration::from_millis(650)), None);
        opts.report_interval = Some(Duration::from_millis(200));
        let seen = Collect(Mutex::new(Vec::new()));
        let r = run(
            &opts,
            (0..2).map(|_| Sleeper(Duration::from_millis(5))).collect(),
            &seen,
        );
        let seen = seen.0.into_inner().unwrap();
        assert_eq!(seen.len(), r.intervals.len());
        assert!((2..=3).contains(&seen.len()), "{}", seen.len());
        let in_intervals: u64 = seen.iter().map(|i| i.events).sum();
        assert!(in_intervals <= r.events());
        for i in &seen {
            // Counters and histogram are read a moment apart: at most one event per thread differs.
            assert!(i.events.abs_diff(i.histogram.total()) <= 2);
            assert_eq!(i.threads_running, 2);
        }
    }

    #[test]
    fn zero_events_report_zero_latency() {
        let opts = options(1, None, Some(0));
        let r = run(&opts, vec![Quota(5)], &Quiet);
        assert_eq!(
            (r.events(), r.min_ns(), r.max_ns(), r.mean_ns()),
            (0, 0, 0, 0)
        );
    }

    #[test]
    fn an_observer_asking_to_stop_ends_the_run_as_interrupted() {
        struct StopAfter(Instant);
        impl Observer for StopAfter {
            fn stop_requested(&self) -> bool {
                self.0.elapsed() > Duration::from_millis(50)
            }
        }
        let began = Instant::now();
        let r = run(
            &options(2, Some(Duration::from_secs(20)), None),
            vec![Sleeper(Duration::from_millis(1)); 2],
            &StopAfter(Instant::now()),
        );
        assert!(r.interrupted);
        assert!(
            began.elapsed() < Duration::from_secs(5),
            "{:?}",
            began.elapsed()
        );
        assert!(r.events() > 0);
    }
}

//! STREAM-like memory bandwidth: copy, scale, add and triad on three f64 arrays, each
//! at least 4x the last-level cache (STREAM's own rule), statically split over all
//! threads. Every thread allocates and first-touches its own slice, so pages land on
//! its NUMA node. Each kernel's best time over iterations 2..N gives its rate, as STREAM
//! reports. These are our kernels, not McCalpin's STREAM: call them STREAM-like.
//! Passes are counted (STREAM's way) or repeated for a time (as every other workload's
//! `--time`; sysbench's memory test runs for its time too), or both, whichever ends first.

use super::working_set;
use crate::host::{self, HostInfo};
use crate::measure::cputime::CpuTime;
use crate::measure::stop_requested;
use crate::model::{CpuUse, Metric, Outcome, Unit};
use crate::units::format_bytes;
use crate::workload::runner::Observer;
use crate::workload::{SpecError, check_threads};
use serde::Serialize;
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Serialize)]
pub struct BandwidthSpec {
    pub threads: usize,
    /// Bytes per array; `None` picks max(4 x LLC, 64 MiB).
    pub array_bytes: Option<u64>,
    /// Timed passes over the four kernels; the first is a warm-up. `None`: as many as
    /// `time` allows.
    pub iterations: Option<usize>,
    /// Repeat passes until this long has passed since the first began (two passes at
    /// least, so one is measured after the warm-up).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<Duration>,
}

pub const KERNELS: [(&str, u64); 4] = [("copy", 16), ("scale", 16), ("add", 24), ("triad", 24)];
/// STREAM's scalar is 3, which multiplies the arrays' values by 15 a pass: past about
/// 260 passes (a time-bounded run on small arrays makes thousands) they overflow to
/// infinity and the check fails. With s = sqrt(2) - 1 a pass multiplies them by
/// 2s + s^2 = 1, so they stay put however long the run; the bytes moved and the
/// arithmetic per element are the same.
const SCALAR: f64 = std::f64::consts::SQRT_2 - 1.0;

impl BandwidthSpec {
    pub fn validate(&self) -> Result<(), SpecError> {
        check_threads(self.threads)?;
        match (self.iterations, self.time) {
            (Some(n), _) if n < 2 => {
                return Err(SpecError::new(
                    format!("iterations={n}"),
                    "the first pass only warms up, so at least 2 are needed",
                    "use 2 or more (STREAM uses 10)",
                ));
            }
            (None, None) => {
                return Err(SpecError::new(
                    "bandwidth",
                    "neither a pass count nor a time: the run would not end",
                    "give --iterations or --time",
                ));
            }
            (_, Some(t)) if t.is_zero() => {
                return Err(SpecError::new(
                    "time=0",
                    "no time to measure in",
                    "give a duration such as 10s, or --iterations",
                ));
            }
            _ => {}
        }
        if let Some(b) = self.array_bytes
            && b < 8 * self.threads as u64 * 1024
        {
            return Err(SpecError::new(
                format!("array-size={}", format_bytes(b)),
                "too small to split over the threads",
                "use at least 8 KiB per thread, and 4x the last-level cache for DRAM figures",
            ));
        }
        Ok(())
    }

    /// The array size that will be used and, when memory forced it below STREAM's
    /// rule, why.
    pub fn resolve_array_bytes(&self, host: &HostInfo) -> (u64, Option<String>) {
        let llc = host.llc_bytes().unwrap_or(32 << 20);
        let wanted = self.array_bytes.unwrap_or((4 * llc).max(64 << 20));
        let available = host::available_memory_bytes().unwrap_or(u64::MAX);
        // Three arrays may use at most half of what is free.
        let cap = available / 6;
        if wanted > cap {
            let note = format!(
                "arrays cut from {} to {} each to fit in free memory; below 4x the LLC ({}) \
                 part of the traffic may hit cache",
                format_bytes(wanted),
                format_bytes(cap),
                format_bytes(llc)
            );
            (cap, Some(note))
        } else {
            (wanted, None)
        }
    }
}

pub fn run(spec: &BandwidthSpec, observer: &dyn Observer) -> Result<Outcome, SpecError> {
    spec.validate()?;
    let host = HostInfo::detect();
    let (array_bytes, cut_note) = spec.resolve_array_bytes(&host);
    let threads = spec.threads;
    let elements = (array_bytes / 8) as usize;
    let per_thread = elements / threads;
    let elements = per_thread * threads;

    let barrier = Barrier::new(threads);
    let quit = AtomicBool::new(false);
    let interrupted = AtomicBool::new(false);
    let passes = spec.iterations.unwrap_or(usize::MAX);
    let start = Instant::now();
    let cpu_before = CpuTime::now();
    // times[iteration][kernel], measured by thread 0 between two barriers.
    let (times, valid) = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (barrier, quit, interrupted) = (&barrier, &quit, &interrupted);
                scope.spawn(move || {
                    let mut a = vec![1.0f64; per_thread];
                    let mut b = vec![2.0f64; per_thread];
                    let mut c = vec![0.0f64; per_thread];
                    a.iter_mut().for_each(|x| *x *= 2.0);
                    let mut times = Vec::new();
                    // The time counts from the first pass: allocating is not measuring.
                    let mut began = None;
                    for _ in 0..passes {
                        if t == 0 {
                            let began = *began.get_or_insert_with(Instant::now);
                            if stop_requested() {
                                interrupted.store(true, Ordering::Relaxed);
                                quit.store(true, Ordering::Relaxed);
                            } else if time_is_up(spec.time, began, times.len()) {
                                quit.store(true, Ordering::Relaxed);
                            }
                        }
                        barrier.wait();
                        if quit.load(Ordering::Relaxed) {
                            break;
                        }
                        let mut row = [0.0; 4];
                        for (k, slot) in row.iter_mut().enumerate() {
                            barrier.wait();
                            let t0 = Instant::now();
                            match k {
                                0 => copy(&a, &mut c),
                                1 => scale(&c, &mut b),
                                2 => add(&a, &b, &mut c),
                                _ => triad(&b, &c, &mut a),
                            }
                            barrier.wait();
                            *slot = t0.elapsed().as_secs_f64();
                        }
                        if t == 0 {
                            observer.progress(&crate::workload::observe::Progress::at(
                                start.elapsed(),
                                times.len() as u64 + 1,
                            ));
                        }
                        times.push(row);
                    }
                    let valid = check(&a, &b, &c, times.len());
                    (times, valid)
                })
            })
            .collect();
        let results: Vec<_> = handles
            .into_iter()
            .map(|h| h.join().expect("bandwidth worker panicked"))
            .collect();
        let valid = results.iter().all(|r| r.1);
        (
            results.into_iter().next().map(|r| r.0).unwrap_or_default(),
            valid,
        )
    });
    let elapsed = start.elapsed();

    let mut outcome = Outcome::new("memory", super::spec_json(spec, "bandwidth"), host);
    // Arrays are sized from the cache (4x LLC) and each metric names its working set.
    outcome.param("mode", "bandwidth");
    outcome.elapsed_s = elapsed.as_secs_f64();
    let cpu = CpuTime::now().since(&cpu_before);
    outcome.cpu_time = CpuUse::over(&cpu, elapsed);
    outcome.interrupted = interrupted.load(Ordering::Relaxed);
    let ws = working_set(3 * elements as u64 * 8, &outcome.host);
    for (k, (name, bytes_per_element)) in KERNELS.iter().enumerate() {
        // Skip the warm-up pass when there is more than one.
        let timed: Vec<f64> = times
            .iter()
            .skip(usize::from(times.len() > 1))
            .map(|row| row[k])
            .collect();
        let Some(best) = timed.iter().copied().filter(|t| *t > 0.0).reduce(f64::min) else {
            continue;
        };
        let bytes = (bytes_per_element * elements as u64) as f64;
        outcome.push(
            Metric::new("bandwidth", bytes / best, Unit::BytesPerSec)
                .threads(threads)
                .working_set(ws)
                .variant(name),
        );
    }
    outcome.note(format!(
        "STREAM-like kernels (not the official STREAM), {} per array, best of {} passes; \
         bytes counted as STREAM does, without write-allocate traffic",
        format_bytes(elements as u64 * 8),
        times.len().saturating_sub(1).max(1)
    ));
    if let Some(note) = cut_note {
        outcome.note(note);
    }
    if !valid && !outcome.interrupted {
        outcome.note("validation FAILED: the arrays do not hold the expected values; do not trust these figures");
    }
    if outcome.interrupted {
        outcome
            .note("interrupted: the run was stopped early; figures cover the passes that finished");
    }
    Ok(outcome)
}

/// A time-bounded run ends once its time has passed, but not before a pass after the
/// warm-up has been measured.
fn time_is_up(time: Option<Duration>, began: Instant, passes_done: usize) -> bool {
    time.is_some_and(|t| passes_done >= 2 && began.elapsed() >= t)
}

fn copy(a: &[f64], c: &mut [f64]) {
    c.copy_from_slice(a);
}

fn scale(c: &[f64], b: &mut [f64]) {
    for (b, c) in b.iter_mut().zip(c) {
        *b = SCALAR * c;
    }
}

fn add(a: &[f64], b: &[f64], c: &mut [f64]) {
    for ((c, a), b) in c.iter_mut().zip(a).zip(b) {
        *c = a + b;
    }
}

fn triad(b: &[f64], c: &[f64], a: &mut [f64]) {
    for ((a, b), c) in a.iter_mut().zip(b).zip(c) {
        *a = b + SCALAR * c;
    }
}

/// Replays the kernels on scalars, as STREAM's checker does, and compares every
/// 4096th element (and the last) with the expected values.
fn check(a: &[f64], b: &[f64], c: &[f64], iterations: usize) -> bool {
    if iterations == 0 {
        return true;
    }
    let (mut ea, mut eb, mut ec) = (2.0f64, 2.0f64, 0.0f64);
    for _ in 0..iterations {
        ec = ea;
        eb = SCALAR * ec;
        ec = ea + eb;
        ea = eb + SCALAR * ec;
    }
    let close = |x: f64, e: f64| ((x - e) / e).abs() < 1e-13;
    let idx = (0..a.len()).step_by(4096).chain(a.len().checked_sub(1));
    idx.into_iter()
        .all(|i| close(a[i], ea) && close(b[i], eb) && close(c[i], ec))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_run_validates_and_reports_four_kernels() {
        let spec = BandwidthSpec {
            threads: 2,
            array_bytes: Some(1 << 20),
            iterations: Some(3),
            time: None,
        };
        let out = run(&spec, &crate::workload::runner::Quiet).unwrap();
        let kernels: Vec<_> = out
            .metrics
            .iter()
            .filter_map(|m| m.variant.clone())
            .collect();
        assert_eq!(kernels, ["copy", "scale", "add", "triad"]);
        assert!(out.metrics.iter().all(|m| m.value > 0.0));
        assert!(
            !out.notes.iter().any(|n| n.contains("FAILED")),
            "{:?}",
            out.notes
        );
    }

    /// The passes of a run, from its note ("best of N passes") plus the warm-up.
    fn passes(out: &Outcome) -> usize {
        let note = out.notes.iter().find(|n| n.contains("best of")).unwrap();
        let n = note.split("best of ").nth(1).unwrap();
        n.split(' ').next().unwrap().parse::<usize>().unwrap() + 1
    }

    #[test]
    fn a_time_bounded_run_repeats_passes_for_its_time() {
        let spec = BandwidthSpec {
            threads: 1,
            array_bytes: Some(256 << 10),
            iterations: None,
            time: Some(Duration::from_millis(300)),
        };
        let out = run(&spec, &crate::workload::runner::Quiet).unwrap();
        assert!(out.elapsed_s >= 0.3, "ran {} s", out.elapsed_s);
        assert!(passes(&out) > 2, "{:?}", out.notes);
        assert!(!out.interrupted);
        assert_eq!(out.metrics.len(), 4);
        assert!(
            !out.notes.iter().any(|n| n.contains("FAILED")),
            "{:?}",
            out.notes
        );
    }

    #[test]
    fn passes_and_time_end_at_whichever_comes_first() {
        let spec = BandwidthSpec {
            threads: 1,
            array_bytes: Some(256 << 10),
            iterations: Some(3),
            time: Some(Duration::from_secs(3600)),
        };
        let out = run(&spec, &crate::workload::runner::Quiet).unwrap();
        assert_eq!(passes(&out), 3, "{:?}", out.notes);
        assert!(!out.interrupted);
    }

    #[test]
    fn a_run_needs_an_end() {
        let spec = |iterations, time| BandwidthSpec {
            threads: 1,
            array_bytes: None,
            iterations,
            time,
        };
        assert!(spec(None, None).validate().is_err());
        assert!(spec(Some(1), None).validate().is_err());
        assert!(spec(None, Some(Duration::ZERO)).validate().is_err());
        assert!(spec(None, Some(Duration::from_secs(1))).validate().is_ok());
    }

    #[test]
    fn checker_catches_wrong_values() {
        assert!(check(&[2.0], &[2.0], &[0.0], 0));
        assert!(!check(&[1.0], &[1.0], &[1.0], 3));
    }
}

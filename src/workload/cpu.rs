//! CPU: sysbench 1.0.20's prime-sieve event, single-thread and multi-thread.
//!
//! One event tests every `c` in `3..max_prime` for primality by trial division with
//! 64-bit unsigned remainders, stopping at the first divisor `l <= sqrt(c)`. The work
//! per event is therefore fixed and deterministic, and events/s is comparable with
//! sysbench's. On x86-64 two codegen details decide that (see docs/design.md):
//! LLVM's 32-bit `div` fast path is bypassed with an explicit 64-bit `div`, and the
//! `l = 2` step is a parity test, as gcc -O2 compiles sysbench's loop.

use super::{SpecError, check_threads, record_run};
use crate::host::HostInfo;
use crate::model::{Metric, Outcome, Params, STANDARD_PERCENTILES, Unit};
use crate::workload::runner::{self, EventWorker, Observer, RunOptions};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Serialize)]
pub struct CpuSpec {
    pub run: RunOptions,
    /// Thread counts to measure, in order; several give a scaling figure.
    pub threads: Vec<usize>,
    pub max_prime: u64,
    /// Percentiles reported besides the standard ones (sysbench's `--percentile`).
    pub percentiles: Vec<f64>,
}

impl CpuSpec {
    /// What identifies the measurement (`Outcome::params`): the event's size. Threads
    /// are on each metric; time only bounds the run.
    pub fn params(&self) -> Params {
        Params::from([("max-prime".into(), self.max_prime.to_string())])
    }

    pub fn validate(&self) -> Result<(), SpecError> {
        if self.max_prime < 3 {
            return Err(SpecError::new(
                format!("max-prime={}", self.max_prime),
                "must be at least 3 (an event tests 3..max-prime)",
                "use the default 10000, or 20000 as many guides do",
            ));
        }
        if self.threads.is_empty() {
            return Err(SpecError::new(
                "threads",
                "no thread count given",
                "give e.g. 1, 4 or all",
            ));
        }
        self.threads.iter().try_for_each(|&t| check_threads(t))
    }
}

/// One sysbench cpu event. Returns the number of primes found so the work cannot be
/// optimised away.
#[inline(never)]
pub fn prime_event(max_prime: u64) -> u64 {
    let mut primes = 0;
    for c in 3..max_prime {
        let t = to_f64(c).sqrt();
        let mut l: u64 = 2;
        if to_f64(l) <= t {
            // gcc peels the first step into a bit test; doing the same keeps the
            // division count, and so the timing, equal to sysbench's.
            if c & 1 != 0 {
                l = 3;
                while to_f64(l) <= t {
                    if rem_u64(c, l) == 0 {
                        break;
                    }
                    l += 1;
                }
            }
        }
        if to_f64(l) > t {
            primes += 1;
        }
    }
    primes
}

/// `x as f64` the way gcc converts an unsigned 64-bit integer: one `cvtsi2sd` when the
/// top bit is clear (always, here), where LLVM's branch-free sequence costs five more
/// instructions inside the division loop.
#[inline(always)]
fn to_f64(x: u64) -> f64 {
    if (x as i64) >= 0 {
        x as i64 as f64
    } else {
        (((x >> 1) | (x & 1)) as i64 as f64) * 2.0
    }
}

/// `c % l` as one 64-bit `div`: LLVM would otherwise test whether both operands fit in
/// 32 bits and take a much faster 32-bit divide, which gcc-built sysbench never does.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn rem_u64(c: u64, l: u64) -> u64 {
    let rem: u64;
    // SAFETY: `div` faults only on a zero divisor or quotient overflow; l >= 3 and the
    // high half (rdx) is zero, so neither can happen.
    unsafe {
        std::arch::asm!(
            "div {l}",
            l = in(reg) l,
            inout("rax") c => _,
            inout("rdx") 0u64 => rem,
            options(pure, nomem, nostack),
        );
    }
    rem
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn rem_u64(c: u64, l: u64) -> u64 {
    c % l
}

struct PrimeWorker {
    max_prime: u64,
}

impl EventWorker for PrimeWorker {
    #[inline]
    fn execute(&mut self) {
        std::hint::black_box(prime_event(std::hint::black_box(self.max_prime)));
    }
}

pub fn run(spec: &CpuSpec, observer: &dyn Observer) -> Result<Outcome, SpecError> {
    spec.validate()?;
    let host = HostInfo::detect();
    let mut outcome = Outcome::new("cpu", serde_json::to_value(spec).unwrap_or_default(), host);
    outcome.params = spec.params();
    let mut percentiles = STANDARD_PERCENTILES.to_vec();
    for p in &spec.percentiles {
        if !percentiles.contains(p) {
            percentiles.push(*p);
        }
    }
    let mut single_thread_eps = None;
    for &threads in &spec.threads {
        if outcome.interrupted {
            break;
        }
        let workers = (0..threads)
            .map(|_| PrimeWorker {
                max_prime: spec.max_prime,
            })
            .collect();
        let result = runner::run(&spec.run, workers, observer);
        let latency = result.latency(&percentiles);
        let eps = result.events_per_sec();
        record_run(&mut outcome, &result, |i| {
            BTreeMap::from([
                ("threads".into(), threads as f64),
                ("events_per_sec".into(), i.events_per_sec()),
            ])
        });
        outcome.push(Metric::new("events_per_sec", eps, Unit::EventsPerSec).threads(threads));
        outcome.push(Metric::new("events", result.events() as f64, Unit::Count).threads(threads));
        for p in [50.0, 95.0, 99.0] {
            if let Some(ns) = latency.percentile(p) {
                let name = format!("latency_p{p:.0}");
                outcome.push(Metric::new(&name, ns, Unit::Nanoseconds).threads(threads));
            }
        }
        if threads == 1 {
            single_thread_eps = Some(eps);
        } else if let Some(single) = single_thread_eps.filter(|s| *s > 0.0) {
            let efficiency = eps / (threads as f64 * single);
            outcome
                .push(Metric::new("scaling_efficiency", efficiency, Unit::Ratio).threads(threads));
            if efficiency < 0.85 && threads <= outcome.host.logical_cpus {
                outcome.note(format!(
                    "{threads} threads reached only {:.0} % of {threads}x the single-thread rate: \
                     shared or oversold cores, SMT siblings, or other load on the host",
                    efficiency * 100.0
                ));
            }
        }
        if threads > outcome.host.logical_cpus {
            outcome.note(format!(
                "{threads} threads on {} CPUs: threads time-share cores, so per-event latency rises",
                outcome.host.logical_cpus
            ));
        }
        outcome.latency = Some(latency);
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference counts: primes in [3, 9999] and [3, 19999].
    #[test]
    fn event_counts_primes() {
        assert_eq!(prime_event(10_000), 1228);
        assert_eq!(prime_event(20_000), 2261);
        assert_eq!(prime_event(3), 0);
        assert_eq!(prime_event(4), 1);
    }

    #[test]
    fn remainder_matches_operator() {
        for (c, l) in [(10u64, 3u64), (u64::MAX, 7), (1 << 40, 3), (9, 9)] {
            assert_eq!(rem_u64(c, l), c % l);
        }
    }

    /// `hostbench cpu`'s two phases (1 thread, then 2) both stay in the timeline, each
    /// sample marked with its phase's thread count, the second after the first.
    #[test]
    fn timeline_keeps_both_phases() {
        let spec = CpuSpec {
            run: RunOptions {
                time: Some(std::time::Duration::from_millis(450)),
                events: None,
                report_interval: Some(std::time::Duration::from_millis(100)),
                layout: crate::measure::histogram::Layout::NATIVE,
            },
            threads: vec![1, 2],
            max_prime: 1000,
            percentiles: vec![],
        };
        let o = run(&spec, &runner::Quiet).unwrap();
        let phases: Vec<f64> = o.series.iter().map(|s| s.values["threads"]).collect();
        let first_two = phases
            .iter()
            .position(|&t| t == 2.0)
            .expect("a 2-thread sample");
        assert!(first_two > 0, "1-thread samples kept: {phases:?}");
        assert!(phases[..first_two].iter().all(|&t| t == 1.0), "{phases:?}");
        assert!(phases[first_two..].iter().all(|&t| t == 2.0), "{phases:?}");
        assert!(
            o.series.windows(2).all(|w| w[1].at_s > w[0].at_s),
            "time goes on across phases: {:?}",
            o.series.iter().map(|s| s.at_s).collect::<Vec<_>>()
        );
        assert!(o.series[first_two].at_s > 0.45);
        assert!(o.series.last().unwrap().at_s <= o.elapsed_s + 1e-9);
    }

    #[test]
    fn rejects_bad_specs() {
        let run = RunOptions {
            time: None,
            events: Some(1),
            report_interval: None,
            layout: crate::measure::histogram::Layout::NATIVE,
        };
        let spec = CpuSpec {
            run,
            threads: vec![0],
            max_prime: 10_000,
            percentiles: vec![],
        };
        assert!(spec.validate().is_err());
        let spec = CpuSpec {
            threads: vec![1],
            max_prime: 2,
            ..spec
        };
        assert!(
            spec.validate()
                .unwrap_err()
                .to_string()
                .contains("max-prime=2")
        );
    }
}

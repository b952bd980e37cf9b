//! Memory latency: one thread follows a chain of pointers through a random cyclic
//! permutation (Sattolo) of the buffer's 64-byte lines, so every load depends on the
//! previous one and no prefetcher can guess the next line. The figure is nanoseconds
//! per load at each working-set size: one size inside each cache level and one well
//! beyond the last. The buffer asks for transparent huge pages so that the figure is
//! the memory's latency, not page-table walks (tinymembench and lmbench differ on
//! this; the note on the result says which pages were used).

use super::working_set;
use crate::host::{self, HostInfo};
use crate::measure::cputime::CpuTime;
use crate::measure::rng::Xoroshiro128Plus;
use crate::measure::stop_requested;
use crate::model::{CpuUse, Metric, Outcome, Unit};
use crate::units::format_bytes;
use crate::workload::SpecError;
use crate::workload::buffer::AlignedBuffer;
use crate::workload::runner::Observer;
use serde::Serialize;
use std::time::{Duration, Instant};

const LINE: usize = 64;

#[derive(Debug, Clone, Serialize)]
pub struct LatencySpec {
    /// Working-set sizes to measure; empty picks one per cache level plus DRAM.
    pub sizes: Vec<u64>,
    /// Time spent chasing at each size (split over 3 repetitions; the best counts).
    pub time_per_size: Duration,
    pub seed: Option<u64>,
}

impl LatencySpec {
    pub fn validate(&self) -> Result<(), SpecError> {
        for &s in &self.sizes {
            if s < 2 * LINE as u64 {
                return Err(SpecError::new(
                    format!("size={s}"),
                    "a chain needs at least two 64-byte lines",
                    "use 4K or more",
                ));
            }
            if let Some(avail) = host::available_memory_bytes()
                && s > avail / 2
            {
                return Err(SpecError::new(
                    format!("size={}", format_bytes(s)),
                    format!("more than half the free memory ({})", format_bytes(avail)),
                    "use a smaller size",
                ));
            }
        }
        Ok(())
    }

    /// Half of L1, L2 and the LLC (so the chain stays resident), and DRAM at
    /// max(4 x LLC, 256 MiB), capped to a quarter of free memory.
    pub fn resolve_sizes(&self, host: &HostInfo) -> Vec<u64> {
        if !self.sizes.is_empty() {
            return self.sizes.clone();
        }
        let mut sizes: Vec<u64> = host.data_caches().iter().map(|c| c.1 / 2).collect();
        if sizes.is_empty() {
            sizes = vec![16 << 10, 256 << 10, 4 << 20];
        }
        let llc = host.llc_bytes().unwrap_or(32 << 20);
        let dram = (4 * llc).max(256 << 20);
        let cap = host::available_memory_bytes().map_or(dram, |a| a / 4);
        sizes.push(dram.min(cap));
        sizes.dedup();
        sizes
    }
}

/// A pointer chain: word `i * 8` of every line holds the word index of the next line.
pub struct Chain {
    buffer: AlignedBuffer,
    lines: usize,
    /// The kernel was asked for, and offers, 2 MiB pages for this buffer.
    pub huge_pages: bool,
}

impl Chain {
    pub fn new(bytes: u64, rng: &mut Xoroshiro128Plus) -> Option<Self> {
        let lines = (bytes as usize / LINE).max(2);
        let (buffer, huge_pages) = AlignedBuffer::with_thp(lines * LINE)?;
        // Sattolo's shuffle gives a single cycle through all lines.
        let mut order: Vec<u32> = (0..lines as u32).collect();
        for i in (1..lines).rev() {
            let j = rng.below(i);
            order.swap(i, j);
        }
        let words = buffer.words();
        let stride = LINE / 8;
        for i in 0..lines {
            let from = order[i] as usize * stride;
            let to = order[(i + 1) % lines] as usize * stride;
            // SAFETY: both indexes are below lines * stride, inside the buffer.
            unsafe { *words.add(from) = to as u64 };
        }
        Some(Self {
            buffer,
            lines,
            huge_pages,
        })
    }

    /// Follows `loads` links from line 0; returns where it ended so the chase is kept.
    #[inline(never)]
    pub fn chase(&self, loads: u64) -> u64 {
        let words = self.buffer.words();
        let mut p = 0u64;
        let mut left = loads;
        while left >= 8 {
            // SAFETY: every stored link is a valid word index of the buffer.
            unsafe {
                for _ in 0..8 {
                    p = *words.add(p as usize);
                }
            }
            left -= 8;
        }
        for _ in 0..left {
            // SAFETY: as above.
            p = unsafe { *words.add(p as usize) };
        }
        p
    }

    pub fn lines(&self) -> usize {
        self.lines
    }
}

/// Nanoseconds per dependent load: the best of three timed chases after a warm-up
/// pass over the whole chain.
fn measure(chain: &Chain, budget: Duration) -> f64 {
    std::hint::black_box(chain.chase(chain.lines() as u64));
    let per_rep = budget / 3;
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let mut loads = 0u64;
        let mut batch = 1u64 << 14;
        let t0 = Instant::now();
        loop {
            std::hint::black_box(chain.chase(batch));
            loads += batch;
            let spent = t0.elapsed();
            if spent >= per_rep || stop_requested() {
                best = best.min(spent.as_nanos() as f64 / loads as f64);
                break;
            }
            batch = (batch * 2).min(1 << 22);
        }
        if stop_requested() {
            break;
        }
    }
    best
}

pub fn run(spec: &LatencySpec, observer: &dyn Observer) -> Result<Outcome, SpecError> {
    spec.validate()?;
    let host = HostInfo::detect();
    let sizes = spec.resolve_sizes(&host);
    let mut rng = match spec.seed {
        Some(s) => Xoroshiro128Plus::seeded(s),
        None => Xoroshiro128Plus::from_entropy(0),
    };
    let mut outcome = Outcome::new("memory", super::spec_json(spec, "latency"), host);
    // Each metric names its working set; the sizes list only picks which are shown.
    outcome.param("mode", "latency");
    let start = Instant::now();
    let cpu_before = CpuTime::now();
    let mut huge_pages = true;
    for (done, &size) in sizes.iter().enumerate() {
        if stop_requested() {
            outcome.interrupted = true;
            outcome.note("interrupted: sizes after the stop were not measured");
            break;
        }
        let chain = Chain::new(size, &mut rng).ok_or_else(|| {
            SpecError::new(
                format!("size={}", format_bytes(size)),
                "allocation failed",
                "use a smaller size",
            )
        })?;
        huge_pages &= chain.huge_pages;
        let ns = measure(&chain, spec.time_per_size);
        let ws = working_set(size, &outcome.host);
        outcome.push(
            Metric::new("load_latency", ns, Unit::Nanoseconds)
                .threads(1)
                .working_set(ws),
        );
        observer.progress(&crate::workload::observe::Progress::at(
            start.elapsed(),
            done as u64 + 1,
        ));
    }
    let elapsed = start.elapsed();
    outcome.elapsed_s = elapsed.as_secs_f64();
    let cpu = CpuTime::now().since(&cpu_before);
    outcome.cpu_time = CpuUse::over(&cpu, elapsed);
    outcome.note(if huge_pages {
        "dependent loads through a random cycle of 64-byte lines, on transparent huge pages where the kernel granted them"
    } else {
        "dependent loads through a random cycle of 64-byte lines on 4 KiB pages: large sizes include TLB misses (transparent huge pages are off)"
    });
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_is_one_cycle_through_every_line() {
        let mut rng = Xoroshiro128Plus::seeded(9);
        let chain = Chain::new(64 * 1000, &mut rng).unwrap();
        let mut seen = vec![false; chain.lines()];
        let mut p = 0u64;
        for _ in 0..chain.lines() {
            let line = p as usize / 8;
            assert!(!seen[line], "line {line} visited twice");
            seen[line] = true;
            p = chain.chase_one(p);
        }
        assert_eq!(p, 0, "the chain closes after visiting every line");
    }

    #[test]
    fn larger_sets_are_not_faster() {
        let spec = LatencySpec {
            sizes: vec![16 << 10, 64 << 20],
            time_per_size: Duration::from_millis(150),
            seed: Some(1),
        };
        let out = run(&spec, &crate::workload::runner::Quiet).unwrap();
        let ns: Vec<f64> = out.metrics.iter().map(|m| m.value).collect();
        assert_eq!(ns.len(), 2);
        assert!(ns[0] > 0.0 && ns[1] > ns[0], "{ns:?}");
    }

    impl Chain {
        fn chase_one(&self, p: u64) -> u64 {
            unsafe { *self.buffer.words().add(p as usize) }
        }
    }
}

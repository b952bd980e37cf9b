//! Logarithmic latency histograms.
//!
//! One bucketing rule serves native runs and the sysbench personality alike: bucket
//! `i = floor((ln v - ln min) * mult + 0.5)`, clamped to the range, whose value is
//! `exp(i / mult + ln min)`. With sysbench's layout (1024 buckets from 0.001 ms to
//! 100,000 ms) this is bucket for bucket what sysbench 1.0.20 records, so a personality
//! prints the very percentile sysbench would. The native layout spans 1 ns to 100 s in
//! 2048 buckets (1.25 % apart), fine enough for nanosecond memory events.
//!
//! A worker records into its own `AtomicHistogram` (one relaxed atomic add per sample,
//! the same cost as sysbench's), so a reporter can read interval snapshots while the
//! workers run and no cache line is shared between workers.

use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};

/// Where the bucket edges lie; two histograms merge only with the same layout.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Layout {
    pub min_ns: f64,
    pub max_ns: f64,
    pub buckets: usize,
}

impl Layout {
    /// sysbench 1.0.20: 1024 buckets, 0.001 ms .. 100,000 ms.
    pub const SYSBENCH: Layout = Layout {
        min_ns: 1e3,
        max_ns: 1e11,
        buckets: 1024,
    };
    /// hostbench's own: 2048 buckets, 1 ns .. 100 s.
    pub const NATIVE: Layout = Layout {
        min_ns: 1.0,
        max_ns: 1e11,
        buckets: 2048,
    };

    fn deduct(&self) -> f64 {
        self.min_ns.ln()
    }

    fn mult(&self) -> f64 {
        (self.buckets - 1) as f64 / (self.max_ns.ln() - self.deduct())
    }

    #[inline]
    pub fn bucket_of(&self, ns: f64) -> usize {
        let i = ((ns.ln() - self.deduct()) * self.mult() + 0.5).floor();
        // NaN (ln 0 = -inf gives -inf) and negatives land in bucket 0, as in sysbench.
        if i.is_nan() || i < 0.0 {
            0
        } else {
            (i as usize).min(self.buckets - 1)
        }
    }

    pub fn value_of(&self, bucket: usize) -> f64 {
        (bucket as f64 / self.mult() + self.deduct()).exp()
    }
}

/// A bucket value kept within the observed extremes. A bucket stands for every value
/// within half a bucket of it (0.6 % in the native layout, 0.9 % in sysbench's), so
/// the bucket that holds the largest sample can stand above it, and a percentile read
/// from that bucket then prints above the max printed beside it (`p99.9 15.88 ms`,
/// `max 15.84 ms`). The extremes are exact, the bucket is not: the extreme wins. The
/// one rule for every native figure, the store and the reports; personalities that
/// print their peer's figures (sysbench, fio) read the bucket value unbounded, as the
/// peer does. Extremes that do not bound anything (min above max: nothing recorded)
/// leave the value alone.
pub fn within(ns: f64, min_ns: f64, max_ns: f64) -> f64 {
    if min_ns <= max_ns {
        ns.max(min_ns).min(max_ns)
    } else {
        ns
    }
}

/// Precomputed constants so the hot path is one `ln`, a multiply-add and an atomic add.
pub struct AtomicHistogram {
    layout: Layout,
    deduct: f64,
    mult: f64,
    counts: Box<[AtomicU64]>,
}

impl AtomicHistogram {
    pub fn new(layout: Layout) -> Self {
        Self {
            layout,
            deduct: layout.deduct(),
            mult: layout.mult(),
            counts: (0..layout.buckets).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    #[inline]
    pub fn record(&self, ns: u64) {
        let i = ((ns as f64).ln() - self.deduct) * self.mult + 0.5;
        let i = if i >= 0.0 { i as usize } else { 0 };
        let i = i.min(self.counts.len() - 1);
        self.counts[i].fetch_add(1, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> Histogram {
        Histogram {
            layout: self.layout,
            counts: self
                .counts
                .iter()
                .map(|c| c.load(Ordering::Relaxed))
                .collect(),
        }
    }
}

/// A plain, mergeable copy of a histogram's counts.
#[derive(Debug, Clone, PartialEq)]
pub struct Histogram {
    pub layout: Layout,
    pub counts: Vec<u64>,
}

impl Histogram {
    pub fn new(layout: Layout) -> Self {
        Self {
            layout,
            counts: vec![0; layout.buckets],
        }
    }

    pub fn record(&mut self, ns: f64) {
        let i = self.layout.bucket_of(ns);
        self.counts[i] += 1;
    }

    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Adds `other`'s counts. Layouts must match: merging differently bucketed
    /// histograms would silently move samples.
    pub fn merge(&mut self, other: &Histogram) {
        assert_eq!(
            self.layout, other.layout,
            "merging histograms of different layouts"
        );
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
    }

    /// The counts recorded since `earlier` (an older snapshot of the same histogram).
    pub fn since(&self, earlier: &Histogram) -> Histogram {
        Histogram {
            layout: self.layout,
            counts: self
                .counts
                .iter()
                .zip(&earlier.counts)
                .map(|(now, then)| now.saturating_sub(*then))
                .collect(),
        }
    }

    /// sysbench's percentile rule: the value of the first bucket whose cumulative count
    /// reaches `floor(N * p / 100 + 0.5)`. Always a bucket value, never interpolated.
    /// `None` when the histogram is empty.
    pub fn percentile_ns(&self, p: f64) -> Option<f64> {
        let n = self.total();
        if n == 0 {
            return None;
        }
        let target = (n as f64 * p / 100.0 + 0.5).floor() as u64;
        let mut cumulative = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            cumulative += c;
            if cumulative >= target {
                return Some(self.layout.value_of(i));
            }
        }
        Some(self.layout.value_of(self.counts.len() - 1))
    }

    /// hostbench's own percentile: sysbench's rule, kept within the exact extremes
    /// the workload recorded beside the histogram (see `within`). `None` when empty.
    pub fn percentile_within(&self, p: f64, min_ns: f64, max_ns: f64) -> Option<f64> {
        self.percentile_ns(p).map(|ns| within(ns, min_ns, max_ns))
    }

    /// Non-empty buckets as (bucket value in ns, count), lowest first.
    pub fn nonempty(&self) -> impl Iterator<Item = (f64, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(i, c)| (self.layout.value_of(i), *c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysbench_constants() {
        let l = Layout::SYSBENCH;
        // sysbench's range_mult printed with 5 decimals in its source comments.
        assert!((l.mult() - 55.53541).abs() < 1e-4);
        assert_eq!(l.bucket_of(1e3), 0);
        assert_eq!(l.bucket_of(1e11), 1023);
        assert_eq!(l.bucket_of(0.0), 0);
        assert_eq!(l.bucket_of(5e13), 1023);
        // Adjacent buckets differ by a factor of about 1.01817.
        let ratio = l.value_of(501) / l.value_of(500);
        assert!((ratio - 1.01817).abs() < 1e-4, "{ratio}");
    }

    #[test]
    fn bucket_values_round_trip() {
        for layout in [Layout::SYSBENCH, Layout::NATIVE] {
            for i in [0, 1, 17, 500, layout.buckets - 1] {
                assert_eq!(layout.bucket_of(layout.value_of(i)), i);
            }
        }
    }

    #[test]
    fn percentile_follows_sysbench_rule() {
        let mut h = Histogram::new(Layout::SYSBENCH);
        // 100 samples: 94 at 1 ms, 6 at 10 ms. The 95th percentile is the 95th sample.
        for _ in 0..94 {
            h.record(1e6);
        }
        for _ in 0..6 {
            h.record(1e7);
        }
        let p95 = h.percentile_ns(95.0).unwrap();
        assert!((p95 / 1e7 - 1.0).abs() < 0.01, "{p95}");
        let p94 = h.percentile_ns(94.0).unwrap();
        assert!((p94 / 1e6 - 1.0).abs() < 0.01, "{p94}");
        assert_eq!(Histogram::new(Layout::NATIVE).percentile_ns(50.0), None);
    }

    #[test]
    fn merge_and_since() {
        let atomic = AtomicHistogram::new(Layout::NATIVE);
        atomic.record(100);
        let first = atomic.snapshot();
        atomic.record(100);
        atomic.record(5_000);
        let second = atomic.snapshot();
        let delta = second.since(&first);
        assert_eq!(delta.total(), 2);
        let mut merged = first.clone();
        merged.merge(&delta);
        assert_eq!(merged, second);
    }

    #[test]
    fn atomic_and_plain_agree() {
        let atomic = AtomicHistogram::new(Layout::SYSBENCH);
        let mut plain = Histogram::new(Layout::SYSBENCH);
        for ns in [0u64, 1, 999, 1000, 1001, 123_456, 9_999_999, u64::MAX / 2] {
            atomic.record(ns);
            plain.record(ns as f64);
        }
        assert_eq!(atomic.snapshot(), plain);
    }
}

//! fio's latency histogram, rebuilt from its published layout so that the fio
//! personality prints the very percentiles fio would for the same samples.
//!
//! Log-linear: 29 groups of 64 buckets (1856 in all), in nanoseconds. Values below
//! 128 ns have a bucket each; above, each power of two is split into 64 equal
//! buckets, so a bucket is at most 1/128 (0.78 %) of its value wide. A bucket stands
//! for its midpoint, which is why fio's p99.99 can exceed the maximum it printed.
//! Samples from 2^34 ns (about 17 s) up share the last bucket.
//!
//! Beside the buckets it keeps the exact min, max, mean and standard deviation (fio
//! reports those from the samples, not from the buckets), with Welford's update so a
//! long run does not lose precision.

/// log2 of the buckets per group.
const BITS: u32 = 6;
const PER_GROUP: usize = 1 << BITS;
const GROUPS: usize = 29;
pub const BUCKETS: usize = GROUPS * PER_GROUP;

/// The bucket a value in ns falls in.
pub fn bucket_of(ns: u64) -> usize {
    let msb = if ns == 0 { 0 } else { 63 - ns.leading_zeros() };
    if msb <= BITS {
        return ns as usize;
    }
    let error_bits = msb - BITS;
    let base = ((error_bits + 1) as usize) << BITS;
    let index = base + ((ns >> error_bits) as usize & (PER_GROUP - 1));
    index.min(BUCKETS - 1)
}

/// The value a bucket reports: its midpoint (exact below 128 ns).
pub fn value_of(bucket: usize) -> u64 {
    if bucket < 2 * PER_GROUP {
        return bucket as u64;
    }
    let error_bits = (bucket >> BITS) as u32 - 1;
    let base = 1u64 << (error_bits + BITS);
    let k = (bucket % PER_GROUP) as f64;
    (base as f64 + (k + 0.5) * (1u64 << error_bits) as f64) as u64
}

#[derive(Clone)]
pub struct FioHistogram {
    counts: Box<[u64; BUCKETS]>,
    n: u64,
    min: u64,
    max: u64,
    mean: f64,
    /// Sum of squared deviations from the mean (Welford).
    m2: f64,
}

impl std::fmt::Debug for FioHistogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FioHistogram")
            .field("n", &self.n)
            .field("min", &self.min)
            .field("max", &self.max)
            .field("mean", &self.mean)
            .finish()
    }
}

impl Default for FioHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl FioHistogram {
    pub fn new() -> Self {
        Self {
            counts: Box::new([0; BUCKETS]),
            n: 0,
            min: u64::MAX,
            max: 0,
            mean: 0.0,
            m2: 0.0,
        }
    }

    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.counts[bucket_of(ns)] += 1;
        self.n += 1;
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
        let delta = ns as f64 - self.mean;
        self.mean += delta / self.n as f64;
        self.m2 += delta * (ns as f64 - self.mean);
    }

    /// Adds another histogram's samples (Chan's parallel variance formula).
    pub fn merge(&mut self, o: &FioHistogram) {
        if o.n == 0 {
            return;
        }
        for (a, b) in self.counts.iter_mut().zip(o.counts.iter()) {
            *a += b;
        }
        let n = self.n + o.n;
        let delta = o.mean - self.mean;
        self.m2 += o.m2 + delta * delta * (self.n as f64 * o.n as f64) / n as f64;
        self.mean += delta * o.n as f64 / n as f64;
        self.n = n;
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
    }

    pub fn samples(&self) -> u64 {
        self.n
    }

    pub fn min(&self) -> u64 {
        if self.n == 0 { 0 } else { self.min }
    }

    pub fn max(&self) -> u64 {
        self.max
    }

    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// Sample standard deviation (n - 1), as fio computes it.
    pub fn stddev(&self) -> f64 {
        if self.n > 1 {
            (self.m2 / (self.n - 1) as f64).sqrt()
        } else {
            0.0
        }
    }

    /// fio's rule: the first bucket where the running count reaches p % of all
    /// samples, reported as that bucket's midpoint.
    pub fn percentile(&self, p: f64) -> u64 {
        if self.n == 0 {
            return 0;
        }
        let wanted = p / 100.0 * self.n as f64;
        let mut seen = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if c > 0 && seen as f64 >= wanted {
                return value_of(i);
            }
        }
        value_of(BUCKETS - 1)
    }

    /// Non-empty buckets as (value in ns, count): fio's `json+` "bins".
    pub fn bins(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(i, &c)| (value_of(i), c))
    }

    /// Share of samples, in percent, in [from_ns, to_ns) judged by bucket value.
    /// fio's `lat (usec): 250=…%` rows come from the same buckets.
    pub fn share_below(&self, from_ns: u64, to_ns: u64) -> f64 {
        if self.n == 0 {
            return 0.0;
        }
        let c: u64 = self
            .counts
            .iter()
            .enumerate()
            .filter(|(i, _)| {
                let v = value_of(*i);
                v >= from_ns && v < to_ns
            })
            .map(|(_, c)| c)
            .sum();
        100.0 * c as f64 / self.n as f64
    }
}

/// Upper bounds of fio's latency classes within each of ns, µs and ms.
pub const CLASS_BOUNDS: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];

/// Counts of completions per fio latency class: 10 in ns, 10 in µs, 12 in ms
/// (the ms row adds 2000 and >=2000). A class `k` holds [previous bound, k).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LatencyClasses(pub [u64; 32]);

impl LatencyClasses {
    pub fn class_of(ns: u64) -> usize {
        let within = |v: u64| CLASS_BOUNDS.iter().position(|&b| v < b).unwrap_or(9);
        if ns < 1000 {
            within(ns)
        } else if ns < 1_000_000 {
            10 + within(ns / 1000)
        } else {
            match ns / 1_000_000 {
                ms if ms < 1000 => 20 + within(ms),
                ms if ms < 2000 => 30,
                _ => 31,
            }
        }
    }

    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.0[Self::class_of(ns)] += 1;
    }

    pub fn merge(&mut self, o: &LatencyClasses) {
        for (a, b) in self.0.iter_mut().zip(o.0.iter()) {
            *a += b;
        }
    }

    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_values_are_exact() {
        for v in 0..128 {
            assert_eq!(value_of(bucket_of(v)), v);
        }
    }

    #[test]
    fn buckets_are_within_one_128th() {
        let mut v = 128u64;
        while v < 1 << 34 {
            let got = value_of(bucket_of(v)) as f64;
            assert!(
                (got - v as f64).abs() / v as f64 <= 1.0 / 128.0 + 1e-9,
                "{v} -> {got}"
            );
            v = v * 17 / 16 + 1;
        }
        assert_eq!(bucket_of(u64::MAX), BUCKETS - 1);
        assert_eq!(bucket_of(1 << 40), BUCKETS - 1);
    }

    #[test]
    fn bucket_edges_match_the_published_layout() {
        // 128..255 ns: buckets of 2 ns starting at index 128.
        assert_eq!(bucket_of(128), 128);
        assert_eq!(bucket_of(129), 128);
        assert_eq!(bucket_of(130), 129);
        assert_eq!(value_of(128), 129);
        // 256..511: 4 ns wide from index 192.
        assert_eq!(bucket_of(256), 192);
        assert_eq!(value_of(192), 258);
        // Values fio 3.33 printed for clat percentiles sit on bucket midpoints.
        for printed in [123392u64, 150528, 211968, 798720, 1089536, 2506752, 5931008] {
            assert_eq!(value_of(bucket_of(printed)), printed);
        }
    }

    #[test]
    fn percentiles_follow_fio() {
        let mut h = FioHistogram::new();
        for v in 1..=100u64 {
            h.record(v * 1000);
        }
        // 50 % of 100 samples: the 50th, 50,000 ns, reported as its bucket midpoint.
        assert_eq!(h.percentile(50.0), value_of(bucket_of(50_000)));
        assert_eq!(h.percentile(100.0), value_of(bucket_of(100_000)));
        assert_eq!(h.min(), 1000);
        assert_eq!(h.max(), 100_000);
        assert!((h.mean() - 50_500.0).abs() < 1e-6);
        let sd = h.stddev();
        assert!((sd - 29_011.49).abs() < 0.01, "{sd}");
    }

    proptest::proptest! {
        /// fio's rule is its own: a bucket midpoint, never bounded by the extremes
        /// (the personality prints a p99.99 above the max as fio does), but ordered,
        /// and never beyond the buckets of the extremes.
        #[test]
        fn percentiles_are_ordered_bucket_midpoints(
            ns in proptest::collection::vec(0u64..40_000_000_000, 1..400)
        ) {
            let mut h = FioHistogram::new();
            ns.iter().for_each(|&v| h.record(v));
            let ps: Vec<u64> = [50.0, 90.0, 95.0, 99.0, 99.9, 99.99]
                .iter()
                .map(|&p| h.percentile(p))
                .collect();
            let (lo, hi) = (value_of(bucket_of(h.min())), value_of(bucket_of(h.max())));
            proptest::prop_assert!(ps.windows(2).all(|w| w[0] <= w[1]), "{ps:?}");
            proptest::prop_assert!(lo <= ps[0] && ps[5] <= hi, "{lo} {ps:?} {hi}");
        }
    }

    #[test]
    fn merge_equals_recording_together() {
        let (mut a, mut b, mut all) = (
            FioHistogram::new(),
            FioHistogram::new(),
            FioHistogram::new(),
        );
        for v in 0..1000u64 {
            let x = v * v % 7919 + 3;
            if v % 3 == 0 { &mut a } else { &mut b }.record(x);
            all.record(x);
        }
        a.merge(&b);
        assert_eq!(a.samples(), all.samples());
        assert!((a.mean() - all.mean()).abs() < 1e-9);
        assert!((a.stddev() - all.stddev()).abs() < 1e-6);
        assert_eq!(a.percentile(99.0), all.percentile(99.0));
    }

    #[test]
    fn latency_classes_hold_previous_bound_to_bound() {
        assert_eq!(LatencyClasses::class_of(0), 0);
        assert_eq!(LatencyClasses::class_of(1), 0);
        assert_eq!(LatencyClasses::class_of(2), 1);
        assert_eq!(LatencyClasses::class_of(999), 9);
        assert_eq!(LatencyClasses::class_of(1000), 10);
        assert_eq!(LatencyClasses::class_of(249_999), 16);
        assert_eq!(LatencyClasses::class_of(250_000), 17);
        assert_eq!(LatencyClasses::class_of(1_000_000), 20);
        assert_eq!(LatencyClasses::class_of(999_999_999), 29);
        assert_eq!(LatencyClasses::class_of(1_500_000_000), 30);
        assert_eq!(LatencyClasses::class_of(u64::MAX), 31);
    }
}

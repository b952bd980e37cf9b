//! An HdrHistogram with the bucket arithmetic of HdrHistogram_c, so the redis-benchmark
//! personality prints the numbers redis-benchmark would for the same samples: the same
//! bucket boundaries (its bounds are 10 µs..3 s at `--precision` significant figures,
//! which makes buckets 8 µs wide up to 16.383 ms), the same percentile iterator, the
//! same linear iterator and the C rank rule `(int64)(p/100*N + 0.5)` for percentiles
//! (the Rust `hdrhistogram` crate rounds the rank up instead). Written from the
//! algorithm's description; no code copied.
//!
//! Recording is one index computation and one add, with no allocation: each thread
//! records into its own histogram and they are merged when the run ends.

#[derive(Debug, Clone, PartialEq)]
pub struct HdrHistogram {
    lowest: u64,
    highest: u64,
    sigfigs: u32,
    unit_magnitude: u32,
    sub_bucket_half_count_magnitude: u32,
    sub_bucket_count: u64,
    sub_bucket_half_count: u64,
    sub_bucket_mask: u64,
    counts: Vec<u64>,
    total: u64,
    min: u64,
    max: u64,
}

/// One step of an iteration: the value the step reached and counts so far.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    /// For percentile steps, the percentile level the step stands for.
    pub percentile: f64,
    /// Highest value equivalent to the bucket the iteration stands on.
    pub highest_equivalent: u64,
    pub cumulative: u64,
}

impl HdrHistogram {
    /// `lowest` >= 1, `highest` >= 2 * `lowest`, `sigfigs` in 1..=5.
    pub fn new(lowest: u64, highest: u64, sigfigs: u32) -> Self {
        assert!(lowest >= 1 && highest >= 2 * lowest && (1..=5).contains(&sigfigs));
        let largest_single_unit = 2 * 10u64.pow(sigfigs);
        let sub_bucket_count_magnitude = (largest_single_unit as f64).log2().ceil() as u32;
        let sub_bucket_half_count_magnitude = sub_bucket_count_magnitude.max(1) - 1;
        let unit_magnitude = (lowest as f64).log2().floor() as u32;
        let sub_bucket_count = 1u64 << (sub_bucket_half_count_magnitude + 1);
        let sub_bucket_half_count = sub_bucket_count / 2;
        let sub_bucket_mask = (sub_bucket_count - 1) << unit_magnitude;
        let mut smallest_untrackable = sub_bucket_count << unit_magnitude;
        let mut buckets = 1u64;
        while smallest_untrackable <= highest {
            if smallest_untrackable > u64::MAX / 4 {
                buckets += 1;
                break;
            }
            smallest_untrackable <<= 1;
            buckets += 1;
        }
        let len = ((buckets + 1) * sub_bucket_half_count) as usize;
        Self {
            lowest,
            highest,
            sigfigs,
            unit_magnitude,
            sub_bucket_half_count_magnitude,
            sub_bucket_count,
            sub_bucket_half_count,
            sub_bucket_mask,
            counts: vec![0; len],
            total: 0,
            min: u64::MAX,
            max: 0,
        }
    }

    /// redis-benchmark's histogram: 10 µs to 3 s, values in µs.
    pub fn redis_benchmark(sigfigs: u32) -> Self {
        Self::new(10, 3_000_000, sigfigs)
    }

    pub fn highest_trackable(&self) -> u64 {
        self.highest
    }

    #[inline]
    fn bucket_index(&self, v: u64) -> u32 {
        let pow2ceiling = 64 - (v | self.sub_bucket_mask).leading_zeros();
        pow2ceiling - self.unit_magnitude - (self.sub_bucket_half_count_magnitude + 1)
    }

    #[inline]
    fn sub_bucket_index(&self, v: u64, bucket: u32) -> u64 {
        v >> (bucket + self.unit_magnitude)
    }

    #[inline]
    fn counts_index(&self, bucket: u32, sub: u64) -> usize {
        let base = (bucket as u64 + 1) << self.sub_bucket_half_count_magnitude;
        (base + sub - self.sub_bucket_half_count) as usize
    }

    fn value_at_index(&self, index: usize) -> u64 {
        let mut bucket = (index as i64 >> self.sub_bucket_half_count_magnitude) - 1;
        let mut sub =
            (index as u64 & (self.sub_bucket_half_count - 1)) + self.sub_bucket_half_count;
        if bucket < 0 {
            sub -= self.sub_bucket_half_count;
            bucket = 0;
        }
        sub << (bucket as u32 + self.unit_magnitude)
    }

    fn range_size(&self, v: u64) -> u64 {
        let bucket = self.bucket_index(v);
        let sub = self.sub_bucket_index(v, bucket);
        let adjusted = if sub >= self.sub_bucket_count {
            bucket + 1
        } else {
            bucket
        };
        1 << (self.unit_magnitude + adjusted)
    }

    pub fn lowest_equivalent(&self, v: u64) -> u64 {
        let bucket = self.bucket_index(v);
        let sub = self.sub_bucket_index(v, bucket);
        sub << (bucket + self.unit_magnitude)
    }

    pub fn highest_equivalent(&self, v: u64) -> u64 {
        self.lowest_equivalent(v) + self.range_size(v) - 1
    }

    pub fn median_equivalent(&self, v: u64) -> u64 {
        self.lowest_equivalent(v) + (self.range_size(v) >> 1)
    }

    /// Records `v`, clamped to the highest trackable value.
    #[inline]
    pub fn record(&mut self, v: u64) {
        self.record_n(v, 1);
    }

    /// Records `n` samples of `v` (a pipelined batch shares one latency).
    #[inline]
    pub fn record_n(&mut self, v: u64, n: u64) {
        let v = v.min(self.highest);
        let bucket = self.bucket_index(v);
        let index = self.counts_index(bucket, self.sub_bucket_index(v, bucket));
        self.counts[index] += n;
        self.total += n;
        if v < self.min && v != 0 {
            self.min = v;
        }
        if v > self.max {
            self.max = v;
        }
    }

    /// Adds another histogram of the same bounds.
    pub fn merge(&mut self, other: &HdrHistogram) {
        assert_eq!(
            (self.lowest, self.highest, self.sigfigs),
            (other.lowest, other.highest, other.sigfigs)
        );
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.total += other.total;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    pub fn reset(&mut self) {
        self.counts.iter_mut().for_each(|c| *c = 0);
        self.total = 0;
        self.min = u64::MAX;
        self.max = 0;
    }

    pub fn len(&self) -> u64 {
        self.total
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Lowest equivalent of the smallest value; 0 when the first bucket holds any.
    pub fn min(&self) -> u64 {
        if self.counts[0] > 0 || self.min == u64::MAX {
            return 0;
        }
        self.lowest_equivalent(self.min)
    }

    /// Highest equivalent of the largest value.
    pub fn max(&self) -> u64 {
        if self.max == 0 {
            0
        } else {
            self.highest_equivalent(self.max)
        }
    }

    /// Mean over bucket medians, as `hdr_mean`.
    pub fn mean(&self) -> f64 {
        if self.total == 0 {
            return f64::NAN;
        }
        let mut sum: u128 = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            if c != 0 {
                sum += c as u128 * self.median_equivalent(self.value_at_index(i)) as u128;
            }
        }
        sum as f64 / self.total as f64
    }

    /// The value at percentile `p` with the C rank rule (round half up, at least 1);
    /// the highest equivalent of its bucket (lowest for p = 0).
    pub fn value_at_percentile(&self, p: f64) -> u64 {
        let p = p.min(100.0);
        let rank = ((p / 100.0 * self.total as f64 + 0.5) as u64).max(1);
        let mut seen = 0;
        let mut value = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                value = self.value_at_index(i);
                break;
            }
        }
        if p == 0.0 {
            self.lowest_equivalent(value)
        } else {
            self.highest_equivalent(value)
        }
    }

    /// Non-empty buckets as (highest equivalent value, count).
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(i, &c)| (self.highest_equivalent(self.value_at_index(i)), c))
    }

    /// HdrHistogram's percentile iteration: levels 0, 50, 75, 87.5, ... with
    /// `ticks_per_half_distance` steps per halving of the distance to 100, then a
    /// final step at 100 %. One step per level reached, several per bucket possible.
    pub fn percentile_steps(&self, ticks_per_half_distance: u32) -> Vec<Step> {
        let mut steps = Vec::new();
        let mut index: isize = -1;
        let mut count = 0u64;
        let mut cumulative = 0u64;
        let mut level = 0.0f64;
        let len = self.counts.len() as isize;
        loop {
            if cumulative >= self.total {
                let highest = if index < 0 {
                    0
                } else {
                    self.highest_equivalent(self.value_at_index(index as usize))
                };
                steps.push(Step {
                    percentile: 100.0,
                    highest_equivalent: highest,
                    cumulative,
                });
                return steps;
            }
            if index == -1 {
                index = 0;
                count = self.counts[0];
                cumulative = count;
            }
            loop {
                let current = 100.0 * cumulative as f64 / self.total as f64;
                if count != 0 && level <= current {
                    steps.push(Step {
                        percentile: level,
                        highest_equivalent: self
                            .highest_equivalent(self.value_at_index(index as usize)),
                        cumulative,
                    });
                    let exponent = ((100.0 / (100.0 - level)).ln() / 2f64.ln()) as i64 + 1;
                    let half_distance = 2f64.powi(exponent as i32) as i64;
                    let ticks = ticks_per_half_distance as i64 * half_distance;
                    level += 100.0 / ticks as f64;
                    break;
                }
                index += 1;
                if index >= len {
                    return steps;
                }
                count = self.counts[index as usize];
                cumulative += count;
            }
        }
    }

    /// redis-benchmark's "Cumulative distribution": a linear walk in steps of
    /// `step` that widens to `wide_step` once a reported value exceeds
    /// `widen_above` (the level already scheduled keeps the old spacing).
    pub fn linear_steps(&self, step: u64, wide_step: u64, widen_above: u64) -> Vec<Step> {
        let mut steps = Vec::new();
        let len = self.counts.len() as isize;
        let mut index: isize = -1;
        let mut value = 0u64;
        let mut cumulative = 0u64;
        let mut units = step;
        let mut level = step;
        let mut level_lowest = self.lowest_equivalent(level);
        loop {
            let more = cumulative < self.total;
            let next_in_reach =
                index + 1 < len && self.value_at_index((index + 1) as usize) > level_lowest;
            if !(more || next_in_reach) {
                return steps;
            }
            loop {
                if index >= 0 && value >= level_lowest {
                    let highest = self.highest_equivalent(value);
                    steps.push(Step {
                        percentile: 100.0 * cumulative as f64 / self.total.max(1) as f64,
                        highest_equivalent: highest,
                        cumulative,
                    });
                    level += units;
                    level_lowest = self.lowest_equivalent(level);
                    if highest > widen_above {
                        units = wide_step;
                    }
                    break;
                }
                if index + 1 >= len {
                    return steps;
                }
                index += 1;
                value = self.value_at_index(index as usize);
                cumulative += self.counts[index as usize];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redis_bounds_give_8us_buckets_up_to_16ms() {
        let h = HdrHistogram::redis_benchmark(3);
        assert_eq!(h.highest_equivalent(263), 263);
        assert_eq!(h.highest_equivalent(257), 263);
        assert_eq!(h.lowest_equivalent(263), 256);
        assert_eq!(h.highest_equivalent(16_383), 16_383);
        assert_eq!(h.highest_equivalent(16_384), 16_399);
        assert_eq!(h.highest_equivalent(100), 103);
        assert_eq!(h.highest_equivalent(2100), 2103);
    }

    #[test]
    fn percentile_uses_round_half_up_rank() {
        // 1012 values 100, 120, ...: C gives 19.311 ms at p95, a ceil rank 19.327.
        let mut h = HdrHistogram::redis_benchmark(3);
        for i in 0..1012u64 {
            h.record(100 + 20 * i);
        }
        assert_eq!(h.value_at_percentile(95.0), 19_311);
    }

    #[test]
    fn percentile_steps_end_with_a_duplicate_100() {
        let mut h = HdrHistogram::redis_benchmark(3);
        for v in [100, 200, 300, 400] {
            h.record(v);
        }
        let steps = h.percentile_steps(1);
        let last: Vec<_> = steps.iter().rev().take(2).collect();
        assert_eq!(last[0].percentile, 100.0);
        assert_eq!(last[0].cumulative, 4);
        assert_eq!(last[1].cumulative, 4);
        assert_eq!(steps[0].percentile, 0.0);
        assert_eq!(steps[0].highest_equivalent, 103);
    }

    #[test]
    fn linear_steps_widen_after_2ms() {
        let mut h = HdrHistogram::redis_benchmark(3);
        for v in [150, 1950, 2050, 3050, 6700] {
            h.record(v);
        }
        let values: Vec<u64> = h
            .linear_steps(100, 1000, 2000)
            .iter()
            .map(|s| s.highest_equivalent)
            .collect();
        assert_eq!(values[0], 103);
        assert!(values.contains(&2007));
        assert!(values.contains(&2103));
        assert!(values.contains(&3103));
        assert_eq!(*values.last().unwrap(), 7103);
    }

    #[test]
    fn mean_min_max_use_equivalents() {
        let mut h = HdrHistogram::redis_benchmark(3);
        h.record(1026);
        assert_eq!(h.min(), 1024);
        assert_eq!(h.max(), 1031);
        assert_eq!(h.mean(), 1028.0);
    }

    #[test]
    fn merge_adds_counts() {
        let mut a = HdrHistogram::redis_benchmark(3);
        let mut b = HdrHistogram::redis_benchmark(3);
        a.record(50);
        b.record_n(5000, 3);
        a.merge(&b);
        assert_eq!(a.len(), 4);
        assert_eq!(a.value_at_percentile(50.0), 5007);
    }
}

//! How noisy one run's figure is, so that `compare` can tell a difference from noise.
//! Repeats say it best (their spread, in `Stat::of`); for a single run, its own
//! timeline says how steady the rate was from interval to interval: the standard
//! error of the mean of the per-interval rates, relative to that mean. That is the
//! run's own wobble, not what placement, neighbours or a boost clock change between
//! runs; only repeats measure that.
//!
//! A percentile read from a bucketed histogram is known only to its bucket: repeats
//! that land in one bucket show no spread although the figure could be off by half
//! a bucket either way. That half bucket is the least noise such a figure has.

use crate::model::{Metric, Outcome, Sample, Unit};
use serde::Serialize;

/// Fewer full intervals than this give no estimate (a spread of two is a guess).
pub const MIN_INTERVALS: usize = 3;

/// An interval shorter than this share of the longest is the run's tail, not a sample.
const FULL_INTERVAL: f64 = 0.5;

/// One run's figure as `compare` collects it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measured {
    pub value: f64,
    /// The relative noise its run's timeline shows (`timeline_noise`).
    pub timeline: Option<f64>,
    /// The least relative noise the figure can have (`resolution`), 0 when exact.
    pub floor: f64,
}

impl Measured {
    pub fn of(o: &Outcome, m: &Metric) -> Self {
        Measured {
            value: m.value,
            timeline: timeline_noise(o, m),
            floor: resolution(o, m) / 2.0,
        }
    }

    pub fn exact(value: f64) -> Self {
        Measured {
            value,
            timeline: None,
            floor: 0.0,
        }
    }
}

/// One run's relative noise (σ / mean of its figure) and where it comes from.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct Noise {
    pub relative: f64,
    pub from: NoiseSource,
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum NoiseSource {
    /// The sample standard deviation of the group's runs.
    Repeats,
    /// The standard error of the mean of the run's per-interval rates.
    Timeline,
}

/// The relative standard error of `m` from the outcome's timeline, when the timeline
/// samples that rate (at its thread count) over at least `MIN_INTERVALS` full intervals.
pub fn timeline_noise(o: &Outcome, m: &Metric) -> Option<f64> {
    let name = sampled_as(o, m)?;
    let samples: Vec<(&Sample, f64)> = o
        .series
        .iter()
        .filter(|s| same_threads(s, m))
        .filter_map(|s| s.values.get(name).map(|v| (s, *v)))
        .filter(|(_, v)| v.is_finite())
        .collect();
    let longest = samples.iter().map(|(s, _)| s.span_s).fold(0.0, f64::max);
    let rates: Vec<f64> = samples
        .iter()
        .filter(|(s, _)| s.span_s >= FULL_INTERVAL * longest)
        .map(|(_, v)| *v)
        .collect();
    relative_standard_error(&rates)
}

/// The relative width of one bucket of the outcome's latency histogram, for a
/// percentile read from it; 0 for figures that are not bucketed (rates, extremes,
/// means).
pub fn resolution(o: &Outcome, m: &Metric) -> f64 {
    let percentile = m.name.split('_').any(|part| {
        part.strip_prefix('p')
            .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
    });
    let Some(layout) = o.latency.as_ref().map(|l| l.layout) else {
        return 0.0;
    };
    if m.unit != Unit::Nanoseconds || !percentile || layout.buckets < 2 {
        return 0.0;
    }
    let decades = layout.max_ns.ln() - layout.min_ns.ln();
    let per_bucket = decades / (layout.buckets - 1) as f64;
    if per_bucket.is_finite() && per_bucket > 0.0 {
        per_bucket.exp() - 1.0
    } else {
        0.0
    }
}

/// σ / (mean · √k) of k values; None for fewer than `MIN_INTERVALS` or a mean ≤ 0.
pub fn relative_standard_error(values: &[f64]) -> Option<f64> {
    let k = values.len();
    if k < MIN_INTERVALS {
        return None;
    }
    let mean = values.iter().sum::<f64>() / k as f64;
    if mean <= 0.0 {
        return None;
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (k - 1) as f64;
    Some(var.sqrt() / mean / (k as f64).sqrt())
}

/// The series value that samples this metric: a rate of the same name (the network's
/// `throughput` is sampled as the receiver's `bytes_per_sec`). A metric that shares
/// its name with the outcome's plain one (a Redis command's own ops/s beside the
/// total) is not what the timeline samples.
fn sampled_as<'a>(o: &Outcome, m: &'a Metric) -> Option<&'a str> {
    if !matches!(
        m.unit,
        Unit::EventsPerSec | Unit::OpsPerSec | Unit::BytesPerSec
    ) {
        return None;
    }
    let shared = o
        .metrics
        .iter()
        .filter(|x| x.name == m.name && x.threads == m.threads)
        .count()
        > 1;
    if shared && m.variant.is_some() {
        return None;
    }
    Some(match m.name.as_str() {
        "throughput" => "bytes_per_sec",
        name => name,
    })
}

/// A sample that says which thread count it ran at belongs to that count's metrics.
fn same_threads(s: &Sample, m: &Metric) -> bool {
    match (s.values.get("threads"), m.threads) {
        (Some(t), Some(n)) => *t == n as f64,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::HostInfo;
    use std::collections::BTreeMap;

    fn sample(at: f64, span: f64, values: &[(&str, f64)]) -> Sample {
        Sample {
            at_s: at,
            span_s: span,
            values: values
                .iter()
                .map(|(k, v)| (k.to_string(), *v))
                .collect::<BTreeMap<_, _>>(),
        }
    }

    #[test]
    fn standard_error_of_the_interval_rates() {
        // 90, 110, 90, 110: σ = 11.55, mean 100, √4 = 2.
        let e = relative_standard_error(&[90.0, 110.0, 90.0, 110.0]).unwrap();
        assert!((e - (400.0f64 / 3.0).sqrt() / 100.0 / 2.0).abs() < 1e-12);
        assert_eq!(relative_standard_error(&[90.0, 110.0]), None);
        assert_eq!(relative_standard_error(&[0.0, 0.0, 0.0]), None);
    }

    #[test]
    fn a_timeline_serves_its_own_rate_at_its_thread_count_without_its_tail() {
        let mut o = Outcome::new("cpu", serde_json::json!({}), HostInfo::default());
        let one = Metric::new("events_per_sec", 100.0, Unit::EventsPerSec).threads(1);
        let two = Metric::new("events_per_sec", 200.0, Unit::EventsPerSec).threads(2);
        let p95 = Metric::new("latency_p95", 1e6, Unit::Nanoseconds).threads(1);
        o.metrics = vec![one.clone(), two.clone(), p95.clone()];
        for (i, v) in [90.0, 110.0, 90.0, 110.0].into_iter().enumerate() {
            let at = (i + 1) as f64;
            o.series
                .push(sample(at, 1.0, &[("threads", 1.0), ("events_per_sec", v)]));
        }
        // A 0.1 s tail far off the rate, and the 2-thread phase: neither counts for 1.
        o.series.push(sample(
            4.1,
            0.1,
            &[("threads", 1.0), ("events_per_sec", 5.0)],
        ));
        o.series.push(sample(
            5.1,
            1.0,
            &[("threads", 2.0), ("events_per_sec", 200.0)],
        ));
        let want = relative_standard_error(&[90.0, 110.0, 90.0, 110.0]);
        assert_eq!(timeline_noise(&o, &one), want);
        assert_eq!(timeline_noise(&o, &two), None, "one interval at 2 threads");
        assert_eq!(timeline_noise(&o, &p95), None, "a latency is not sampled");
    }

    #[test]
    fn a_bucketed_percentile_is_known_to_a_bucket() {
        use crate::measure::histogram::{Histogram, Layout};
        let mut o = Outcome::new("cpu", serde_json::json!({}), HostInfo::default());
        let p95 = Metric::new("read_latency_p99.9", 1e6, Unit::Nanoseconds);
        let max = Metric::new("read_latency_max", 1e6, Unit::Nanoseconds);
        assert_eq!(resolution(&o, &p95), 0.0, "no histogram");
        let h = Histogram::new(Layout::NATIVE);
        o.latency = Some(crate::model::Latency::from_histogram(&h, 0, 0, 0, &[95.0]));
        // 2048 buckets over 1 ns .. 100 s: 1.24 % each.
        let w = resolution(&o, &p95);
        assert!((w - 0.01245).abs() < 1e-4, "{w}");
        let (a, b) = (Layout::NATIVE.value_of(1000), Layout::NATIVE.value_of(1001));
        assert!((b / a - 1.0 - w).abs() < 1e-9);
        assert_eq!(resolution(&o, &max), 0.0, "the extremes are exact");
    }
}

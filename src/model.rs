//! The one result model. Every workload returns an `Outcome`; renderers, the store and
//! the personalities read only this. The JSON form is versioned by `SCHEMA_VERSION`
//! and documented in `docs/json.md`.

use crate::host::HostInfo;
use crate::measure::hdr::HdrHistogram;
use crate::measure::histogram::{self, Histogram, Layout};
use crate::measure::stats;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Bump when a field changes meaning or disappears; adding a field is compatible.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Outcome {
    pub schema_version: u32,
    pub tool: String,
    pub tool_version: String,
    /// `cpu`, `memory`, ...
    pub workload: String,
    /// The validated spec that ran, as given to the workload (or the personality's
    /// options, for a peer's command line).
    pub spec: serde_json::Value,
    /// What was measured, in the peers' words (`max_prime` 20000, `rw` randread, `bs`
    /// 4k): the settings that make two outcomes the same measurement, whichever front
    /// end ran them. `compare` matches on these and names the one that differs; what
    /// only bounds a run (its time, its interval reports) is not among them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: Params,
    /// RFC 3339, UTC.
    pub started_at: String,
    pub elapsed_s: f64,
    /// True when Ctrl-C (or another stop request) cut the run short.
    pub interrupted: bool,
    pub metrics: Vec<Metric>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<Latency>,
    /// Per-thread totals ("threads fairness"), when the workload ran an event loop.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub threads: Vec<ThreadStat>,
    /// Per-interval samples (`--report-interval` lines, timelines).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<Sample>,
    /// What the reader must know to trust (or distrust) the numbers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    pub cpu_time: CpuUse,
    pub host: HostInfo,
}

impl Outcome {
    pub fn new(workload: &str, spec: serde_json::Value, host: HostInfo) -> Self {
        Self {
            schema_version: SCHEMA_VERSION,
            tool: "hostbench".into(),
            tool_version: env!("CARGO_PKG_VERSION").into(),
            workload: workload.into(),
            spec,
            params: Params::new(),
            started_at: crate::host::now_rfc3339(),
            elapsed_s: 0.0,
            interrupted: false,
            metrics: Vec::new(),
            latency: None,
            threads: Vec::new(),
            series: Vec::new(),
            notes: Vec::new(),
            cpu_time: CpuUse::default(),
            host,
        }
    }

    /// Records one of the settings that identify the measurement (see `params`).
    /// Stopped before its measured part began (Ctrl-C during a warm-up or a ramp): its
    /// figures are zeros that say nothing, so it is neither shown as a result nor kept.
    pub fn measured_nothing(&self) -> bool {
        self.interrupted && self.elapsed_s <= 0.0
    }

    pub fn param(&mut self, name: &str, value: impl ToString) {
        self.params.insert(name.into(), value.to_string());
    }

    pub fn push(&mut self, metric: Metric) {
        self.metrics.push(metric);
    }

    pub fn note(&mut self, note: impl Into<String>) {
        let note = note.into();
        if !self.notes.contains(&note) {
            self.notes.push(note);
        }
    }

    /// The first metric with this name (and thread count, when given).
    pub fn metric(&self, name: &str, threads: Option<usize>) -> Option<&Metric> {
        self.metrics
            .iter()
            .find(|m| m.name == name && (threads.is_none() || m.threads == threads))
    }

    /// Keeps every percentile within its extremes (`histogram::within`): the
    /// latency's, and each `STEM_pN` metric's within `STEM_min` and `STEM_max`. For
    /// what was built before the rule (stored rows, saved JSON), which can hold a
    /// p99.9 above the max printed beside it; new outcomes are built bounded.
    pub fn bound_percentiles(&mut self) {
        if let Some(lat) = &mut self.latency {
            lat.bound_percentiles();
        }
        for i in 0..self.metrics.len() {
            let m = &self.metrics[i];
            let Some(stem) = percentile_stem(&m.name) else {
                continue;
            };
            let extreme = |which: &str| self.extreme_of(m, &format!("{stem}_{which}"));
            let (lo, hi) = (extreme("min"), extreme("max"));
            let m = &mut self.metrics[i];
            m.value = histogram::within(
                m.value,
                lo.unwrap_or(f64::NEG_INFINITY),
                hi.unwrap_or(f64::INFINITY),
            );
        }
    }

    /// The extreme metric `name` beside percentile `m`: same variant and threads,
    /// else the one without a variant (redis's per-command p99 is bounded by the
    /// max of all commands).
    fn extreme_of(&self, m: &Metric, name: &str) -> Option<f64> {
        let find = |variant: Option<&String>| {
            self.metrics
                .iter()
                .find(|e| e.name == name && e.variant.as_ref() == variant && e.threads == m.threads)
                .map(|e| e.value)
        };
        find(m.variant.as_ref()).or_else(|| find(None))
    }
}

/// `read_latency_p99.9` -> `read_latency`, `rtt_p50` -> `rtt`; None for a name
/// that is not a percentile.
fn percentile_stem(name: &str) -> Option<&str> {
    let (stem, p) = name.rsplit_once("_p")?;
    p.parse::<f64>().ok().filter(|p| p.is_finite())?;
    Some(stem)
}

/// `Outcome::params`: setting name -> value as the peer writes it.
pub type Params = BTreeMap<String, String>;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Metric {
    /// snake_case: `events_per_sec`, `bandwidth`, `load_latency`.
    pub name: String,
    pub value: f64,
    pub unit: Unit,
    pub better: Better,
    /// Threads that produced it, when a run measures several thread counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<usize>,
    /// For memory results: how much memory the measurement touched and which level of
    /// the hierarchy that fits in, so an in-cache figure is never read as DRAM speed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_set: Option<WorkingSet>,
    /// A variant label, e.g. the STREAM kernel (`copy`, `triad`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
}

impl Metric {
    pub fn new(name: &str, value: f64, unit: Unit) -> Self {
        Self {
            name: name.into(),
            value,
            better: unit.natural_better(),
            unit,
            threads: None,
            working_set: None,
            variant: None,
        }
    }

    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = Some(threads);
        self
    }

    pub fn working_set(mut self, working_set: WorkingSet) -> Self {
        self.working_set = Some(working_set);
        self
    }

    pub fn variant(mut self, variant: &str) -> Self {
        self.variant = Some(variant.into());
        self
    }
}

/// Values are stored in base units; renderers choose how to print them.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    EventsPerSec,
    OpsPerSec,
    BytesPerSec,
    Bytes,
    Nanoseconds,
    Seconds,
    Count,
    /// A dimensionless ratio, e.g. scaling efficiency 0.97.
    Ratio,
}

impl Unit {
    pub fn natural_better(self) -> Better {
        match self {
            Unit::Nanoseconds | Unit::Seconds => Better::Lower,
            _ => Better::Higher,
        }
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    Higher,
    Lower,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "UPPERCASE")]
pub enum Tier {
    L1,
    L2,
    Llc,
    Dram,
}

impl Tier {
    pub fn label(self) -> &'static str {
        match self {
            Tier::L1 => "L1",
            Tier::L2 => "L2",
            Tier::Llc => "LLC",
            Tier::Dram => "DRAM",
        }
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct WorkingSet {
    pub bytes: u64,
    pub tier: Tier,
}

/// Latency of the timed events, from the merged histogram.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Latency {
    pub count: u64,
    pub min_ns: f64,
    pub mean_ns: f64,
    pub max_ns: f64,
    pub sum_ns: f64,
    pub percentiles: Vec<Percentile>,
    /// The layout the buckets were recorded in; merge only equal layouts.
    pub layout: Layout,
    /// Non-empty buckets: (bucket value in ns, count).
    pub buckets: Vec<(f64, u64)>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Percentile {
    pub p: f64,
    pub ns: f64,
}

/// The percentiles every native report carries.
pub const STANDARD_PERCENTILES: [f64; 5] = [50.0, 90.0, 95.0, 99.0, 99.9];

impl Latency {
    /// The one constructor: a histogram with the exact extremes and sum that the
    /// workload kept beside it (a bucket is an approximation; these are not), and
    /// the percentiles to report, each within the extremes (`histogram::within`).
    /// With no samples every figure is 0.
    pub fn from_histogram(
        histogram: &Histogram,
        min_ns: u64,
        max_ns: u64,
        sum_ns: u128,
        percentiles: &[f64],
    ) -> Self {
        let count = histogram.total();
        let seen = count > 0;
        let (min_ns, max_ns) = if seen {
            (min_ns as f64, max_ns as f64)
        } else {
            (0.0, 0.0)
        };
        Latency {
            count,
            min_ns,
            mean_ns: if seen {
                sum_ns as f64 / count as f64
            } else {
                0.0
            },
            max_ns,
            sum_ns: sum_ns as f64,
            percentiles: percentiles
                .iter()
                .map(|&p| Percentile {
                    p,
                    ns: histogram
                        .percentile_within(p, min_ns, max_ns)
                        .unwrap_or(0.0),
                })
                .collect(),
            layout: histogram.layout,
            buckets: histogram.nonempty().collect(),
        }
    }

    /// redis-benchmark's HDR histogram (µs) as the model's latency (ns): its
    /// percentiles, extremes and mean as redis-benchmark reads them (a bucket's
    /// highest equivalent value; the lowest for the min; the mean over bucket
    /// medians), its buckets moved to the native layout.
    pub fn from_hdr(h: &HdrHistogram, percentiles: &[f64]) -> Self {
        let mut native = Histogram::new(Layout::NATIVE);
        for (us, count) in h.buckets() {
            native.counts[Layout::NATIVE.bucket_of(us as f64 * 1e3)] += count;
        }
        let count = h.len();
        let mean_ns = if count > 0 { h.mean() * 1e3 } else { 0.0 };
        let mut lat = Latency {
            count,
            min_ns: h.min() as f64 * 1e3,
            mean_ns,
            max_ns: h.max() as f64 * 1e3,
            sum_ns: mean_ns * count as f64,
            percentiles: percentiles
                .iter()
                .map(|&p| Percentile {
                    p,
                    ns: h.value_at_percentile(p) as f64 * 1e3,
                })
                .collect(),
            layout: Layout::NATIVE,
            buckets: native.nonempty().collect(),
        };
        // HDR's figures already lie within its extremes (both are bucket edges);
        // bounded all the same, so no latency leaves the model unbounded.
        lat.bound_percentiles();
        lat
    }

    /// Each percentile within the extremes (`histogram::within`).
    pub fn bound_percentiles(&mut self) {
        if self.count == 0 {
            return;
        }
        for p in &mut self.percentiles {
            p.ns = histogram::within(p.ns, self.min_ns, self.max_ns);
        }
    }

    /// A value read from the buckets (a chart's point), within the extremes.
    pub fn bounded(&self, ns: f64) -> f64 {
        if self.count == 0 {
            ns
        } else {
            histogram::within(ns, self.min_ns, self.max_ns)
        }
    }

    pub fn percentile(&self, p: f64) -> Option<f64> {
        self.percentiles.iter().find(|q| q.p == p).map(|q| q.ns)
    }

    /// The histogram back from its sparse form, to merge or to compute other percentiles.
    pub fn histogram(&self) -> Histogram {
        let mut h = Histogram::new(self.layout);
        for &(ns, count) in &self.buckets {
            let i = self.layout.bucket_of(ns);
            h.counts[i] += count;
        }
        h
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct ThreadStat {
    pub events: u64,
    pub latency_sum_ns: u64,
}

/// sysbench's "threads fairness": (avg, population stddev) of per-thread event counts
/// and of per-thread busy time in seconds.
pub fn fairness(threads: &[ThreadStat]) -> ((f64, f64), (f64, f64)) {
    let events: Vec<f64> = threads.iter().map(|t| t.events as f64).collect();
    let busy: Vec<f64> = threads
        .iter()
        .map(|t| t.latency_sum_ns as f64 / 1e9)
        .collect();
    (stats::mean_stddev(&events), stats::mean_stddev(&busy))
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Sample {
    /// Seconds since start at the end of the sample.
    pub at_s: f64,
    pub span_s: f64,
    pub values: BTreeMap<String, f64>,
}

/// CPU time this process used during the measurement.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct CpuUse {
    pub user_s: f64,
    pub system_s: f64,
    /// Busy CPUs averaged over the run (2.0 = two cores fully busy).
    pub utilisation: f64,
}

impl CpuUse {
    /// CPU time used over a wall-clock span.
    pub fn over(cpu: &crate::measure::cputime::CpuTime, wall: std::time::Duration) -> Self {
        CpuUse {
            user_s: cpu.user_s,
            system_s: cpu.system_s,
            utilisation: cpu.utilisation(wall),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const ALL: [f64; 6] = [50.0, 90.0, 95.0, 99.0, 99.9, 99.99];

    /// min ≤ p50 ≤ p90 ≤ p95 ≤ p99 ≤ p99.9 ≤ p99.99 ≤ max.
    fn ordered(l: &Latency) -> Result<(), TestCaseError> {
        let mut chain = vec![l.min_ns];
        chain.extend(ALL.iter().map(|&p| l.percentile(p).expect("asked for")));
        chain.push(l.max_ns);
        prop_assert!(chain.windows(2).all(|w| w[0] <= w[1]), "{chain:?}");
        Ok(())
    }

    /// Sample times in ns over every range a layout treats differently: below and
    /// within sysbench's first bucket, the body, beyond the layouts' 100 s top.
    fn samples() -> impl Strategy<Value = Vec<u64>> {
        prop::collection::vec(
            prop_oneof![
                0u64..2_000,
                2_000u64..50_000_000,
                50_000_000u64..200_000_000_000
            ],
            1..400,
        )
    }

    proptest! {
        #[test]
        fn percentiles_never_pass_the_extremes(ns in samples()) {
            for layout in [Layout::NATIVE, Layout::SYSBENCH] {
                let mut h = Histogram::new(layout);
                ns.iter().for_each(|&v| h.record(v as f64));
                let (min, max) = (*ns.iter().min().unwrap(), *ns.iter().max().unwrap());
                let sum = ns.iter().map(|&v| u128::from(v)).sum();
                ordered(&Latency::from_histogram(&h, min, max, sum, &ALL))?;
            }
            for sigfigs in 1..=5 {
                let mut h = HdrHistogram::redis_benchmark(sigfigs);
                ns.iter().for_each(|&v| h.record(v / 1000));
                ordered(&Latency::from_hdr(&h, &ALL))?;
            }
        }
    }

    #[test]
    fn a_top_bucket_above_the_max_reads_as_the_max() {
        // 15.84 ms lands in a native bucket whose value is 15.88 ms or so (the issue's
        // `p99.9 15.88 ms` above `max 15.84 ms`); the bucket is bounded, the max kept.
        let mut h = Histogram::new(Layout::NATIVE);
        h.record(15_840_000.0);
        assert!(h.percentile_ns(99.9).unwrap() > 15_840_000.0);
        let l = Latency::from_histogram(&h, 15_840_000, 15_840_000, 15_840_000, &ALL);
        assert!(l.percentiles.iter().all(|p| p.ns == 15_840_000.0), "{l:?}");
        // The bucket itself is untouched (a merge or a re-read keeps its value).
        assert_eq!(l.histogram(), h);
    }

    #[test]
    fn stored_figures_are_bounded_on_reading() {
        let mut o = Outcome::new("disk", serde_json::Value::Null, HostInfo::detect());
        let m = |name: &str, ns: f64| Metric::new(name, ns, Unit::Nanoseconds).threads(1);
        o.push(m("read_latency_p50", 900.0));
        o.push(m("read_latency_p99.9", 15_880_000.0));
        o.push(m("read_latency_max", 15_840_000.0));
        o.push(m("read_latency_min", 1_000.0));
        // Another thread count's figures are not this one's bounds.
        o.push(Metric::new("read_latency_p99", 20e6, Unit::Nanoseconds).threads(2));
        // A per-command figure without extremes of its own: all commands' bound it.
        o.push(Metric::new("latency_p99", 2e6, Unit::Nanoseconds).variant("GET"));
        o.push(Metric::new("latency_max", 1e6, Unit::Nanoseconds));
        o.push(Metric::new("cpu_per_op", 5e6, Unit::Nanoseconds));
        let mut h = Histogram::new(Layout::NATIVE);
        h.record(15_840_000.0);
        let mut lat = Latency::from_histogram(&h, 15_840_000, 15_840_000, 15_840_000, &ALL);
        lat.percentiles[0].ns = 15_880_000.0;
        o.latency = Some(lat);
        o.bound_percentiles();
        let values: Vec<f64> = o.metrics.iter().map(|m| m.value).collect();
        assert_eq!(
            values,
            [
                1_000.0,
                15_840_000.0,
                15_840_000.0,
                1_000.0,
                20e6,
                1e6,
                1e6,
                5e6
            ]
        );
        assert_eq!(o.latency.unwrap().percentiles[0].ns, 15_840_000.0);
    }

    #[test]
    fn percentile_names() {
        assert_eq!(percentile_stem("read_latency_p99.9"), Some("read_latency"));
        assert_eq!(percentile_stem("rtt_p50"), Some("rtt"));
        assert_eq!(
            percentile_stem("uncorrected_latency_p99"),
            Some("uncorrected_latency")
        );
        assert_eq!(percentile_stem("cpu_per_op"), None);
        assert_eq!(percentile_stem("bytes_per_sec"), None);
        assert_eq!(percentile_stem("latency_max"), None);
    }
}

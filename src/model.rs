//! The one result model. Every workload returns an `Outcome`; renderers, the store and
//! the personalities read only this. The JSON form is versioned by `SCHEMA_VERSION`
//! and documented in `docs/json.md`.

use crate::host::HostInfo;
use crate::measure::histogram::{Histogram, Layout};
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
    /// the percentiles to report. With no samples every figure is 0.
    pub fn from_histogram(
        histogram: &Histogram,
        min_ns: u64,
        max_ns: u64,
        sum_ns: u128,
        percentiles: &[f64],
    ) -> Self {
        let count = histogram.total();
        let seen = count > 0;
        Latency {
            count,
            min_ns: if seen { min_ns as f64 } else { 0.0 },
            mean_ns: if seen {
                sum_ns as f64 / count as f64
            } else {
                0.0
            },
            max_ns: if seen { max_ns as f64 } else { 0.0 },
            sum_ns: sum_ns as f64,
            percentiles: percentiles
                .iter()
                .map(|&p| Percentile {
                    p,
                    ns: histogram.percentile_ns(p).unwrap_or(0.0),
                })
                .collect(),
            layout: histogram.layout,
            buckets: histogram.nonempty().collect(),
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

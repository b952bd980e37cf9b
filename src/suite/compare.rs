//! `hostbench compare`: stored runs side by side. Each group (a run, several runs, a
//! host's runs or a label's runs) gives per metric a mean and, with repeats, a sample
//! standard deviation. Each group is set against the first as a ratio of means with
//! hyperfine's propagated uncertainty, `r · sqrt((σa/μa)² + (σb/μb)²)`, and the
//! direction word comes from `Metric.better`. Per area, the geometric mean of the
//! speedups (ratios turned so that above 1 is better, as PTS and SPEC do) sums it up.
//!
//! Totals (`events`, `bytes_transferred`: they grow with the run's length) and the
//! targets a run was given (`target_ops_per_sec`) are not compared.

use crate::model::{Better, Metric, Outcome, Unit};
use crate::store::{StoredRun, outcome_test};
use serde::Serialize;
use std::collections::BTreeMap;

/// Ratios closer to 1 than this are reported as the same.
pub const SAME_WITHIN: f64 = 0.01;

/// One side of the comparison: what the user named and the runs it stands for.
#[derive(Debug, Clone)]
pub struct Group {
    pub name: String,
    pub runs: Vec<StoredRun>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub schema_version: u32,
    pub groups: Vec<GroupInfo>,
    pub rows: Vec<Row>,
    pub areas: Vec<AreaSummary>,
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct GroupInfo {
    pub name: String,
    pub runs: Vec<i64>,
    pub hosts: Vec<String>,
}

/// What makes two metrics the same measurement.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Key {
    pub area: String,
    pub workload: String,
    /// The disk test or memory mode (`randread`, `latency`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test: Option<String>,
    pub metric: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threads: Option<usize>,
    /// Memory metrics: the cache level the working set fits in (with the size when an
    /// outcome has several in one level).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub working_set: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Row {
    #[serde(flatten)]
    pub key: Key,
    pub unit: Unit,
    pub better: Better,
    /// One per group, in order; None where the group did not measure it.
    pub values: Vec<Option<Stat>>,
    /// One per group against the first (the first's own is None).
    pub ratios: Vec<Option<Ratio>>,
}

/// The values one group has for one metric.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Stat {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (n - 1), when there are repeats.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stddev: Option<f64>,
    pub min: f64,
    pub max: f64,
}

impl Stat {
    pub fn of(values: &[f64]) -> Option<Self> {
        if values.is_empty() {
            return None;
        }
        let n = values.len();
        let mean = values.iter().sum::<f64>() / n as f64;
        let stddev = (n > 1).then(|| {
            (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
        });
        Some(Stat {
            n,
            mean,
            stddev,
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        })
    }

    fn relative_sd(&self) -> f64 {
        self.stddev.map_or(0.0, |sd| sd / self.mean)
    }
}

/// A group against the reference.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Ratio {
    /// value / reference value: 0.35 for a latency a third as long.
    pub ratio: f64,
    /// ± one standard deviation of the ratio, when either side has repeats.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uncertainty: Option<f64>,
    /// The ratio turned so that above 1 is better (1 / ratio where lower is better).
    pub speedup: f64,
    /// `faster`, `slower`, `better`, `worse`, `same` or `within noise`.
    pub verdict: String,
}

impl Ratio {
    /// `b` against the reference `a`; None when `a` is zero or either is not finite.
    pub fn of(a: &Stat, b: &Stat, better: Better, unit: Unit) -> Option<Self> {
        let ratio = b.mean / a.mean;
        if !ratio.is_finite() || ratio <= 0.0 {
            return None;
        }
        let uncertainty = (a.stddev.is_some() || b.stddev.is_some())
            .then(|| ratio * (a.relative_sd().powi(2) + b.relative_sd().powi(2)).sqrt());
        let speedup = match better {
            Better::Higher => ratio,
            Better::Lower => 1.0 / ratio,
        };
        Some(Ratio {
            ratio,
            uncertainty,
            speedup,
            verdict: verdict(speedup, ratio, uncertainty, speed_words(unit)).into(),
        })
    }
}

/// Rates and times are faster or slower; everything else better or worse.
fn speed_words(unit: Unit) -> (&'static str, &'static str) {
    match unit {
        Unit::EventsPerSec
        | Unit::OpsPerSec
        | Unit::BytesPerSec
        | Unit::Nanoseconds
        | Unit::Seconds => ("faster", "slower"),
        _ => ("better", "worse"),
    }
}

fn verdict(
    speedup: f64,
    ratio: f64,
    uncertainty: Option<f64>,
    (up, down): (&'static str, &'static str),
) -> &'static str {
    if (ratio - 1.0).abs() < SAME_WITHIN {
        "same"
    } else if uncertainty.is_some_and(|u| (ratio - 1.0).abs() <= u) {
        "within noise"
    } else if speedup > 1.0 {
        up
    } else {
        down
    }
}

/// Per area, the geometric mean of the speedups of a group against the reference.
#[derive(Debug, Clone, Serialize)]
pub struct AreaSummary {
    pub area: String,
    /// One per group; the reference's own is None.
    pub geomean: Vec<Option<Geomean>>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Geomean {
    /// Above 1: better than the reference.
    pub speedup: f64,
    /// ± one standard deviation, propagated from the metrics' uncertainties assuming
    /// they are independent (metrics of one run are not, so read it as a lower bound).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uncertainty: Option<f64>,
    /// How many metrics it covers.
    pub metrics: usize,
    pub verdict: String,
}

impl Geomean {
    pub fn of(ratios: &[&Ratio]) -> Option<Self> {
        if ratios.is_empty() {
            return None;
        }
        let n = ratios.len() as f64;
        let log_mean = ratios.iter().map(|r| r.speedup.ln()).sum::<f64>() / n;
        let speedup = log_mean.exp();
        // d(ln r) = σr / r; the mean of n logs has σ = sqrt(Σ σ²) / n.
        let uncertainty = ratios.iter().any(|r| r.uncertainty.is_some()).then(|| {
            let var: f64 = ratios
                .iter()
                .map(|r| (r.uncertainty.unwrap_or(0.0) / r.ratio).powi(2))
                .sum();
            speedup * var.sqrt() / n
        });
        Some(Geomean {
            speedup,
            uncertainty,
            metrics: ratios.len(),
            verdict: verdict(speedup, speedup, uncertainty, ("better", "worse")).into(),
        })
    }
}

/// The area a workload belongs to, for the summary.
pub fn area(workload: &str) -> &str {
    match workload {
        "cpu" | "threads" | "mutex" => "cpu",
        "memory" => "memory",
        "disk" | "fileio" => "disk",
        "net" | "ping" | "network" => "network",
        "redis" => "redis",
        "index" | "unixbench" | "sysindex" => "index",
        other => other,
    }
}

/// The order areas are summarised in.
const AREAS: [&str; 6] = ["cpu", "memory", "disk", "network", "redis", "index"];

/// Whether a metric measures performance, rather than how much was done or asked for.
fn comparable(m: &Metric) -> bool {
    !matches!(m.unit, Unit::Count | Unit::Bytes) && !m.name.starts_with("target_")
}

/// The comparable metrics of one outcome under their keys.
fn keyed(o: &Outcome) -> Vec<(Key, &Metric)> {
    let test = outcome_test(o);
    let key = |m: &Metric, with_size: bool| Key {
        area: area(&o.workload).to_string(),
        workload: o.workload.clone(),
        test: test.clone(),
        metric: m.name.clone(),
        variant: m.variant.clone(),
        threads: m.threads,
        working_set: m.working_set.map(|w| {
            if with_size {
                format!("{} {}", w.tier.label(), crate::units::format_bytes(w.bytes))
            } else {
                w.tier.label().to_string()
            }
        }),
    };
    let metrics: Vec<&Metric> = o.metrics.iter().filter(|m| comparable(m)).collect();
    let plain: Vec<Key> = metrics.iter().map(|m| key(m, false)).collect();
    metrics
        .iter()
        .zip(&plain)
        .map(|(m, k)| {
            let clash = plain.iter().filter(|other| *other == k).count() > 1;
            (if clash { key(m, true) } else { k.clone() }, *m)
        })
        .collect()
}

pub fn compare(groups: &[Group]) -> Comparison {
    // key -> per group the values, plus the unit and direction of the first seen.
    let mut table: BTreeMap<Key, (Unit, Better, Vec<Vec<f64>>)> = BTreeMap::new();
    for (g, group) in groups.iter().enumerate() {
        for run in &group.runs {
            for o in &run.outcomes {
                for (key, m) in keyed(o) {
                    let entry = table
                        .entry(key)
                        .or_insert_with(|| (m.unit, m.better, vec![Vec::new(); groups.len()]));
                    if m.value.is_finite() {
                        entry.2[g].push(m.value);
                    }
                }
            }
        }
    }
    let mut rows = Vec::new();
    let mut partial = 0;
    for (key, (unit, better, values)) in table {
        let stats: Vec<Option<Stat>> = values.iter().map(|v| Stat::of(v)).collect();
        let present = stats.iter().filter(|s| s.is_some()).count();
        if stats[0].is_none() || present < 2 {
            partial += 1;
            continue;
        }
        let reference = stats[0].clone();
        let ratios = stats
            .iter()
            .enumerate()
            .map(|(i, s)| match (i, &reference, s) {
                (0, _, _) => None,
                (_, Some(a), Some(b)) => Ratio::of(a, b, better, unit),
                _ => None,
            })
            .collect();
        rows.push(Row {
            key,
            unit,
            better,
            values: stats,
            ratios,
        });
    }
    rows.sort_by_key(|r| {
        (
            AREAS
                .iter()
                .position(|a| *a == r.key.area)
                .unwrap_or(AREAS.len()),
            r.key.clone(),
        )
    });

    let mut areas: Vec<AreaSummary> = Vec::new();
    for row in &rows {
        if areas.last().is_none_or(|a| a.area != row.key.area) {
            areas.push(AreaSummary {
                area: row.key.area.clone(),
                geomean: Vec::new(),
            });
        }
    }
    for summary in &mut areas {
        summary.geomean = (0..groups.len())
            .map(|g| {
                if g == 0 {
                    return None;
                }
                let ratios: Vec<&Ratio> = rows
                    .iter()
                    .filter(|r| r.key.area == summary.area)
                    .filter_map(|r| r.ratios[g].as_ref())
                    .collect();
                Geomean::of(&ratios)
            })
            .collect();
    }

    let mut notes = Vec::new();
    if partial > 0 {
        notes.push(format!(
            "{partial} metric(s) left out: measured by only one group, or not by A"
        ));
    }
    for group in groups {
        for run in &group.runs {
            if run.info.interrupted {
                notes.push(format!(
                    "run {} ({}) was interrupted: its figures cover only part of its time",
                    run.info.id, group.name
                ));
            }
        }
    }
    notes.extend(setting_differences(groups));
    Comparison {
        schema_version: crate::model::SCHEMA_VERSION,
        groups: groups
            .iter()
            .map(|g| {
                let mut hosts: Vec<String> = Vec::new();
                for r in &g.runs {
                    if !hosts.contains(&r.info.host.hostname) {
                        hosts.push(r.info.host.hostname.clone());
                    }
                }
                GroupInfo {
                    name: g.name.clone(),
                    runs: g.runs.iter().map(|r| r.info.id).collect(),
                    hosts,
                }
            })
            .collect(),
        rows,
        areas,
        notes,
    }
}

/// Spec fields that differ between groups for the same test (other than where the
/// files went or the random seed): the figures may differ for that reason alone.
fn setting_differences(groups: &[Group]) -> Vec<String> {
    const IGNORED: [&str; 3] = ["dir", "seed", "endpoint"];
    // (workload, test) -> field -> distinct values seen, in order.
    let mut seen: BTreeMap<(String, Option<String>), BTreeMap<String, Vec<String>>> =
        BTreeMap::new();
    for group in groups {
        for run in &group.runs {
            for o in &run.outcomes {
                let Some(spec) = o.spec.as_object() else {
                    continue;
                };
                let fields = seen
                    .entry((o.workload.clone(), outcome_test(o)))
                    .or_default();
                for (k, v) in spec {
                    if IGNORED.contains(&k.as_str()) {
                        continue;
                    }
                    let text = v.to_string();
                    let values = fields.entry(k.clone()).or_default();
                    if !values.contains(&text) {
                        values.push(text);
                    }
                }
            }
        }
    }
    let mut notes = Vec::new();
    for ((workload, test), fields) in seen {
        let differing: Vec<String> = fields
            .iter()
            .filter(|(_, v)| v.len() > 1)
            .take(4)
            .map(|(k, v)| format!("{k} {}", v.join(" vs ")))
            .collect();
        if !differing.is_empty() {
            let what = match test {
                Some(t) => format!("{workload} ({t})"),
                None => workload,
            };
            notes.push(format!(
                "{what} ran with different settings: {}",
                differing.join("; ")
            ));
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::HostInfo;
    use crate::store::RunInfo;

    fn run(id: i64, outcomes: Vec<Outcome>) -> StoredRun {
        StoredRun {
            info: RunInfo {
                id,
                started_at: String::new(),
                saved_at: String::new(),
                command: "test".into(),
                labels: Default::default(),
                profile: None,
                interrupted: false,
                schema_version: 1,
                tool_version: String::new(),
                workloads: vec![],
                outcome_count: outcomes.len(),
                headline: None,
                host: HostInfo::default(),
            },
            outcomes,
        }
    }

    fn cpu(eps: f64, p95_ns: f64) -> Outcome {
        let mut o = Outcome::new(
            "cpu",
            serde_json::json!({"max_prime": 20000}),
            HostInfo::default(),
        );
        o.push(Metric::new("events_per_sec", eps, Unit::EventsPerSec).threads(1));
        o.push(Metric::new("events", eps * 10.0, Unit::Count).threads(1));
        o.push(Metric::new("latency_p95", p95_ns, Unit::Nanoseconds).threads(1));
        o
    }

    fn group(name: &str, runs: Vec<StoredRun>) -> Group {
        Group {
            name: name.into(),
            runs,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn seed_003_ratios() {
        // The guide's VM: 354.62 events/s, p95 2.81 ms; the desktop: 772.42, 1.32 ms.
        let c = compare(&[
            group("vm", vec![run(1, vec![cpu(354.62, 2.81e6)])]),
            group("desktop", vec![run(2, vec![cpu(772.42, 1.32e6)])]),
        ]);
        assert_eq!(c.rows.len(), 2, "events (a count) is not compared");
        let eps = c
            .rows
            .iter()
            .find(|r| r.key.metric == "events_per_sec")
            .unwrap();
        let r = eps.ratios[1].as_ref().unwrap();
        assert!(close(r.ratio, 772.42 / 354.62));
        assert_eq!(format!("{:.2}", r.ratio), "2.18");
        assert_eq!(r.verdict, "faster");
        assert!(r.uncertainty.is_none());
        let p95 = c
            .rows
            .iter()
            .find(|r| r.key.metric == "latency_p95")
            .unwrap();
        let r = p95.ratios[1].as_ref().unwrap();
        assert_eq!(format!("{:.2}", r.ratio), "0.47");
        assert!(close(r.speedup, 2.81 / 1.32));
        assert_eq!(r.verdict, "faster", "a shorter latency is faster");
        let g = c.areas[0].geomean[1].as_ref().unwrap();
        assert_eq!(c.areas[0].area, "cpu");
        assert_eq!(g.metrics, 2);
        assert!(close(
            g.speedup,
            ((772.42f64 / 354.62) * (2.81 / 1.32)).sqrt()
        ));
        assert_eq!(g.verdict, "better");
    }

    #[test]
    fn repeats_give_mean_sd_and_propagated_uncertainty() {
        let a = group(
            "a",
            vec![
                run(1, vec![cpu(100.0, 1e6)]),
                run(2, vec![cpu(110.0, 1e6)]),
                run(3, vec![cpu(90.0, 1e6)]),
            ],
        );
        let b = group(
            "b",
            vec![run(4, vec![cpu(200.0, 2e6)]), run(5, vec![cpu(220.0, 2e6)])],
        );
        let c = compare(&[a, b]);
        let eps = c
            .rows
            .iter()
            .find(|r| r.key.metric == "events_per_sec")
            .unwrap();
        let sa = eps.values[0].as_ref().unwrap();
        assert_eq!(sa.n, 3);
        assert!(close(sa.mean, 100.0));
        assert!(close(sa.stddev.unwrap(), 10.0));
        let sb = eps.values[1].as_ref().unwrap();
        assert!(close(sb.mean, 210.0));
        let sd_b = (200.0f64 - 210.0).hypot(220.0 - 210.0); // sqrt(200) / sqrt(1)
        assert!(close(sb.stddev.unwrap(), sd_b));
        let r = eps.ratios[1].as_ref().unwrap();
        assert!(close(r.ratio, 2.1));
        let expected = 2.1 * ((10.0f64 / 100.0).powi(2) + (sd_b / 210.0).powi(2)).sqrt();
        assert!(close(r.uncertainty.unwrap(), expected));
        assert_eq!(r.verdict, "faster");
        // p95: 1 ms in every A run, 2 ms in every B run: zero spread, exactly 2x slower.
        let p95 = c
            .rows
            .iter()
            .find(|r| r.key.metric == "latency_p95")
            .unwrap();
        let r = p95.ratios[1].as_ref().unwrap();
        assert!(close(r.ratio, 2.0));
        assert!(close(r.uncertainty.unwrap(), 0.0));
        assert_eq!(r.verdict, "slower");
        // Geometric mean of 2.1 and 0.5, with the log-space propagation.
        let g = c.areas[0].geomean[1].as_ref().unwrap();
        assert!(close(g.speedup, (2.1f64 * 0.5).sqrt()));
        let u = g.speedup * ((expected / 2.1).powi(2)).sqrt() / 2.0;
        assert!(close(g.uncertainty.unwrap(), u));
        assert_eq!(g.verdict, "within noise");
    }

    #[test]
    fn noise_and_sameness() {
        let a = group(
            "a",
            vec![run(1, vec![cpu(100.0, 1e6)]), run(2, vec![cpu(120.0, 1e6)])],
        );
        let b = group("b", vec![run(3, vec![cpu(105.0, 1.005e6)])]);
        let c = compare(&[a, b]);
        let eps = c
            .rows
            .iter()
            .find(|r| r.key.metric == "events_per_sec")
            .unwrap();
        assert_eq!(eps.ratios[1].as_ref().unwrap().verdict, "within noise");
        let p95 = c
            .rows
            .iter()
            .find(|r| r.key.metric == "latency_p95")
            .unwrap();
        assert_eq!(p95.ratios[1].as_ref().unwrap().verdict, "same");
    }

    #[test]
    fn unmatched_metrics_are_counted_not_shown() {
        let mut other = cpu(100.0, 1e6);
        other.metrics[0].threads = Some(4);
        let c = compare(&[
            group("a", vec![run(1, vec![cpu(100.0, 1e6)])]),
            group("b", vec![run(2, vec![other])]),
        ]);
        assert_eq!(c.rows.len(), 1);
        assert_eq!(c.rows[0].key.metric, "latency_p95");
        assert!(
            c.notes[0].starts_with("2 metric(s) left out"),
            "{:?}",
            c.notes
        );
    }

    #[test]
    fn different_settings_are_noted() {
        let mut b = cpu(100.0, 1e6);
        b.spec = serde_json::json!({"max_prime": 10000});
        let c = compare(&[
            group("a", vec![run(1, vec![cpu(100.0, 1e6)])]),
            group("b", vec![run(2, vec![b])]),
        ]);
        assert!(
            c.notes
                .iter()
                .any(|n| n.contains("max_prime 20000 vs 10000")),
            "{:?}",
            c.notes
        );
    }
}

//! `hostbench compare`: stored runs side by side. Each group (a run, several runs, a
//! host's runs or a label's runs) gives per metric a mean and, with repeats, a sample
//! standard deviation. Each group is set against the first as a ratio of means with
//! hyperfine's propagated uncertainty, `r · sqrt((σa/μa)² + (σb/μb)²)`, and the
//! direction word comes from `Metric.better`. Per area, the geometric mean of the
//! speedups (ratios turned so that above 1 is better, as PTS and SPEC do) sums it up.
//!
//! Totals (`events`, `bytes_transferred`: they grow with the run's length), how long
//! a side ran (`receiver_elapsed`) and the targets a run was given
//! (`target_ops_per_sec`) are not compared.
//!
//! Two outcomes are the same measurement when their workload and `params` agree
//! (`max-prime` 20000, `rw` randread and `iodepth` 32), whichever front end ran them:
//! a `sysbench cpu --cpu-max-prime=20000 run` and a `hostbench cpu --max-prime 20000`
//! share their rows. Outcomes saved before params existed match by test name. A
//! workload measured by several groups with different params is not a comparison:
//! it is named with the parameter that differs, and when nothing else is left to
//! compare, `compare` refuses.

use crate::model::{Better, Metric, Outcome, Params, Unit};
use crate::store::{StoredRun, outcome_test};
use serde::Serialize;
use std::collections::BTreeMap;

/// A group's name in tables and notes: `A`, `B`, ... `Z`, then `G27`...
pub fn letter(i: usize) -> String {
    if i < 26 {
        ((b'A' + i as u8) as char).to_string()
    } else {
        format!("G{}", i + 1)
    }
}

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
    /// What identifies the measurement (`Outcome::params`).
    #[serde(skip_serializing_if = "Params::is_empty")]
    pub params: Params,
    /// The disk test or memory mode (`randread`, `latency`), for outcomes saved
    /// without params; otherwise None here (the name is `Row::test`), so a fio job
    /// named `seed` and the native `randread` with the same params meet.
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
    /// The test's name as the first run that measured it gave it (`randread`, a fio
    /// job's name), with the params that tell it from a row of the same name.
    #[serde(skip_serializing_if = "Option::is_none", rename = "test_label")]
    pub test: Option<String>,
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
        "disk" | "fileio" | "dd" => "disk",
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
    // How long a side ran (`receiver_elapsed`) is set by the run's time option.
    !matches!(m.unit, Unit::Count | Unit::Bytes)
        && !m.name.starts_with("target_")
        && !m.name.ends_with("elapsed")
}

/// The comparable metrics of one outcome under their keys.
fn keyed(o: &Outcome) -> Vec<(Key, &Metric)> {
    let test = if o.params.is_empty() {
        outcome_test(o)
    } else {
        None
    };
    let key = |m: &Metric, with_size: bool| Key {
        area: area(&o.workload).to_string(),
        workload: o.workload.clone(),
        params: o.params.clone(),
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

/// Nothing the groups measured is the same measurement: the workloads they share ran
/// with different parameters, named in the message.
#[derive(Debug, Clone, thiserror::Error)]
#[error("nothing to compare: {}; compare runs made with the same parameters", .0.join("; "))]
pub struct NothingInCommon(pub Vec<String>);

/// Per metric key: its unit, direction, the test name first seen, and per group the
/// values.
type Table = BTreeMap<Key, (Unit, Better, Option<String>, Vec<Vec<f64>>)>;

pub fn compare(groups: &[Group]) -> Result<Comparison, NothingInCommon> {
    let mut table: Table = BTreeMap::new();
    for (g, group) in groups.iter().enumerate() {
        for run in &group.runs {
            for o in &run.outcomes {
                for (key, m) in keyed(o) {
                    let entry = table.entry(key).or_insert_with(|| {
                        (
                            m.unit,
                            m.better,
                            outcome_test(o),
                            vec![Vec::new(); groups.len()],
                        )
                    });
                    if m.value.is_finite() {
                        entry.3[g].push(m.value);
                    }
                }
            }
        }
    }
    let mut rows = Vec::new();
    let mut partial = 0;
    for (key, (unit, better, test, values)) in table {
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
            test,
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
    let unmatched = unmatched_params(groups, &rows);
    if rows.is_empty() && !unmatched.is_empty() {
        return Err(NothingInCommon(unmatched));
    }
    notes.extend(unmatched.into_iter().map(|u| format!("not compared: {u}")));
    name_tests(&mut rows);
    Ok(Comparison {
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
    })
}

/// Workloads (and tests) measured by the reference and another group that gave no
/// row, because their params differ: "cpu: max-prime 20000 in A (vm=a), 10000 in B
/// (vm=b)". Only the params that differ are named.
fn unmatched_params(groups: &[Group], rows: &[Row]) -> Vec<String> {
    // (workload, test) -> per group the distinct params seen, in order.
    let mut seen: BTreeMap<(String, Option<String>), Vec<Vec<Params>>> = BTreeMap::new();
    for (g, group) in groups.iter().enumerate() {
        for run in &group.runs {
            for o in run.outcomes.iter().filter(|o| !o.params.is_empty()) {
                // Params name the test where there are some; group by workload alone
                // so a fio job and a native test of the same workload meet here.
                let per_group = seen
                    .entry((o.workload.clone(), None))
                    .or_insert_with(|| vec![Vec::new(); groups.len()]);
                if !per_group[g].contains(&o.params) {
                    per_group[g].push(o.params.clone());
                }
            }
        }
    }
    let mut out = Vec::new();
    for ((workload, _), per_group) in seen {
        let matched = |p: &Params| {
            rows.iter()
                .any(|r| r.key.workload == workload && r.key.params == *p)
        };
        let reference = &per_group[0];
        for (g, params) in per_group.iter().enumerate().skip(1) {
            if reference.is_empty() || params.is_empty() {
                continue;
            }
            let lonely_a: Vec<&Params> = reference.iter().filter(|p| !matched(p)).collect();
            let lonely_b: Vec<&Params> = params.iter().filter(|p| !matched(p)).collect();
            if lonely_a.is_empty() || lonely_b.is_empty() {
                continue;
            }
            // The pair of param sets that differ in the fewest settings names it best.
            let (a, b) = lonely_a
                .iter()
                .flat_map(|a| lonely_b.iter().map(move |b| (*a, *b)))
                .min_by_key(|(a, b)| differing(a, b).len())
                .expect("both sides are non-empty");
            let mut keys = differing(a, b);
            // When the kind of test differs, the rest follows from it: name that alone.
            if let Some(kind) = keys.iter().find(|k| KIND_PARAMS.contains(&k.as_str())) {
                keys = vec![kind.clone()];
            }
            let what: Vec<String> = keys
                .into_iter()
                .take(4)
                .map(|k| {
                    let v = |p: &Params| p.get(&k).cloned().unwrap_or_else(|| "unset".into());
                    format!(
                        "{k} {} in A ({}), {} in {} ({})",
                        v(a),
                        groups[0].name,
                        v(b),
                        letter(g),
                        groups[g].name
                    )
                })
                .collect();
            out.push(format!("{workload} ran with {}", what.join(", ")));
        }
    }
    out
}

/// Params that name the kind of test (memory's mode, a disk pattern, a network or
/// Redis test): when one differs, the others differ because of it.
const KIND_PARAMS: [&str; 4] = ["mode", "rw", "test", "file-test-mode"];

/// The setting names whose values differ between two param sets.
fn differing(a: &Params, b: &Params) -> Vec<String> {
    let mut keys: Vec<String> = a.keys().chain(b.keys()).cloned().collect();
    keys.sort();
    keys.dedup();
    keys.retain(|k| a.get(k) != b.get(k));
    keys
}

/// Each row's test name: the one its first run gave, else the workload's own; where
/// two rows of one workload would read the same, the params that tell them apart
/// are added (`randread (iodepth 1)`).
fn name_tests(rows: &mut [Row]) {
    let label = |r: &Row| r.test.clone().unwrap_or_default();
    let shown: Vec<String> = rows
        .iter()
        .map(|r| {
            let twins: Vec<&Row> = rows
                .iter()
                .filter(|o| {
                    o.key.workload == r.key.workload
                        && o.key.params != r.key.params
                        && label(o) == label(r)
                        && o.key.metric == r.key.metric
                })
                .collect();
            let mut keys: Vec<String> = twins
                .iter()
                .flat_map(|t| differing(&t.key.params, &r.key.params))
                .collect();
            keys.sort();
            keys.dedup();
            let extra: Vec<String> = keys
                .iter()
                .filter_map(|k| r.key.params.get(k).map(|v| format!("{k} {v}")))
                .collect();
            match (label(r).is_empty(), extra.is_empty()) {
                (_, true) => label(r),
                (true, false) => extra.join(", "),
                (false, false) => format!("{} ({})", label(r), extra.join(", ")),
            }
        })
        .collect();
    for (row, text) in rows.iter_mut().zip(shown) {
        row.test = (!text.is_empty()).then_some(text);
    }
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
                command_line: Vec::new(),
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
            problems: Vec::new(),
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

    fn cmp(groups: &[Group]) -> Comparison {
        compare(groups).expect("comparable")
    }

    fn with_prime(eps: f64, prime: u64) -> Outcome {
        let mut o = cpu(eps, 1e6);
        o.param("max-prime", prime);
        o
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn seed_003_ratios() {
        // The guide's VM: 354.62 events/s, p95 2.81 ms; the desktop: 772.42, 1.32 ms.
        let c = cmp(&[
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
        let c = cmp(&[a, b]);
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
        let c = cmp(&[a, b]);
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
        let c = cmp(&[
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
    fn different_params_are_refused_naming_the_parameter() {
        let e = compare(&[
            group("label:vm=a", vec![run(1, vec![with_prime(100.0, 20000)])]),
            group("label:vm=b", vec![run(2, vec![with_prime(100.0, 10000)])]),
        ])
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("max-prime 20000 in A (label:vm=a), 10000 in B (label:vm=b)"),
            "{e}"
        );
        assert!(e.starts_with("nothing to compare"), "{e}");
    }

    #[test]
    fn same_params_meet_whatever_the_test_name() {
        // A fio job named `seed` and the native test `randread`: same params, one row.
        let disk = |name: &str, iops: f64| {
            let mut o = Outcome::new(
                "disk",
                serde_json::json!({"name": name}),
                HostInfo::default(),
            );
            o.param("rw", "randread");
            o.param("iodepth", 32);
            o.push(Metric::new("read_iops", iops, Unit::OpsPerSec));
            o
        };
        let c = cmp(&[
            group("a", vec![run(1, vec![disk("seed", 1000.0)])]),
            group("b", vec![run(2, vec![disk("randread", 2000.0)])]),
        ]);
        assert_eq!(c.rows.len(), 1);
        assert_eq!(c.rows[0].test.as_deref(), Some("seed"));
        assert!(close(c.rows[0].ratios[1].as_ref().unwrap().ratio, 2.0));
    }

    #[test]
    fn a_partly_matching_comparison_notes_what_it_left_out() {
        let c = cmp(&[
            group(
                "a",
                vec![run(
                    1,
                    vec![with_prime(100.0, 20000), with_prime(50.0, 10000)],
                )],
            ),
            group("b", vec![run(2, vec![with_prime(200.0, 20000)])]),
        ]);
        assert_eq!(
            c.rows
                .iter()
                .filter(|r| r.key.metric == "events_per_sec")
                .count(),
            1
        );
        assert!(
            c.notes.iter().all(|n| !n.starts_with("not compared")),
            "{:?}",
            c.notes
        );
        let c = cmp(&[
            group("a", vec![run(1, vec![with_prime(100.0, 20000)])]),
            group(
                "b",
                vec![
                    run(2, vec![with_prime(200.0, 20000)]),
                    run(3, vec![with_prime(9.0, 5000)]),
                ],
            ),
        ]);
        assert_eq!(
            c.rows
                .iter()
                .filter(|r| r.key.metric == "events_per_sec")
                .count(),
            1
        );
        assert_eq!(
            c.rows[0].values[1].as_ref().unwrap().n,
            1,
            "5000 is another row"
        );
    }
}

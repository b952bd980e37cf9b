//! `hostbench compare`: stored runs side by side. Each group (a run, several runs, a
//! host's runs or a label's runs) gives per metric a mean and, with repeats, a sample
//! standard deviation. Each group is set against the first as a ratio of means with
//! hyperfine's propagated uncertainty, `r · sqrt((σa/μa)² + (σb/μb)²)`, where σ/μ is
//! a run's relative noise: the repeats' spread, else the single run's own timeline
//! (`noise.rs`). A difference counts when it is beyond 1 % and beyond twice that
//! uncertainty; then the direction word comes from `Metric.better`, otherwise it is
//! `same`, `no significant difference`, or `not judged` when no noise is known. Per
//! area, the geometric mean of the speedups (ratios turned so that above 1 is
//! better, as PTS and SPEC do) sums it up. docs/store.md states the rule.
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
//! compare, `compare` refuses. Settings that are not params (how long a run ran) are
//! compared all the same and named in a note (`settings.rs`).

mod noise;
mod settings;

pub use noise::{Measured, Noise, NoiseSource};

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

/// A difference is significant beyond this many propagated σ (about 95 % for
/// normal noise).
pub const SIGNIFICANT_AT: f64 = 2.0;

/// The verdicts that name no direction.
pub const SAME: &str = "same";
pub const NOT_SIGNIFICANT: &str = "no significant difference";
pub const NOT_JUDGED: &str = "not judged";

/// Whether a verdict names a direction (`faster`, `worse`...): a significant difference.
pub fn significant(verdict: &str) -> bool {
    matches!(verdict, "faster" | "slower" | "better" | "worse")
}

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
    /// How noisy one run's figure is, relative: from the repeats' spread, else from
    /// the single run's timeline; None when neither tells.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub noise: Option<Noise>,
}

impl Stat {
    pub fn of(values: &[f64]) -> Option<Self> {
        let runs: Vec<Measured> = values.iter().map(|v| Measured::exact(*v)).collect();
        Self::measured(&runs)
    }

    /// The runs' figures, with what each run's own timeline and resolution say of
    /// its noise.
    pub fn measured(runs: &[Measured]) -> Option<Self> {
        if runs.is_empty() {
            return None;
        }
        let values: Vec<f64> = runs.iter().map(|r| r.value).collect();
        let n = values.len();
        let mean = values.iter().sum::<f64>() / n as f64;
        let stddev = (n > 1).then(|| {
            (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
        });
        let floor = runs.iter().map(|r| r.floor).fold(0.0, f64::max);
        let noise = match (stddev, runs) {
            (Some(sd), _) if mean != 0.0 => Some(Noise {
                relative: (sd / mean).abs().max(floor),
                from: NoiseSource::Repeats,
            }),
            (
                None,
                [
                    Measured {
                        timeline: Some(t), ..
                    },
                ],
            ) => Some(Noise {
                relative: t.max(floor),
                from: NoiseSource::Timeline,
            }),
            _ => None,
        };
        Some(Stat {
            n,
            mean,
            stddev,
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            noise,
        })
    }
}

/// The relative σ of B/A, hyperfine's `sqrt((σA/μA)² + (σB/μB)²)`. A side that
/// tells nothing of its noise is taken to be as noisy as the other (the same
/// measurement); None when neither tells.
fn relative_uncertainty(a: &Stat, b: &Stat) -> Option<f64> {
    let (x, y) = match (a.noise, b.noise) {
        (Some(x), Some(y)) => (x.relative, y.relative),
        (Some(x), None) => (x.relative, x.relative),
        (None, Some(y)) => (y.relative, y.relative),
        (None, None) => return None,
    };
    Some(x.hypot(y))
}

/// A group against the reference.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Ratio {
    /// value / reference value: 0.35 for a latency a third as long.
    pub ratio: f64,
    /// ± one standard deviation of the ratio, when the noise of either side is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uncertainty: Option<f64>,
    /// The ratio turned so that above 1 is better (1 / ratio where lower is better).
    pub speedup: f64,
    /// The speedup or its inverse, whichever is at least 1: the `2.86` of `2.86x
    /// faster` and of `2.86x slower`.
    pub factor: f64,
    /// `faster`, `slower`, `better`, `worse` (significant), `same` (within 1 %), `no
    /// significant difference` or `not judged` (no noise known).
    pub verdict: String,
}

impl Ratio {
    /// `b` against the reference `a`; None when `a` is zero or either is not finite.
    pub fn of(a: &Stat, b: &Stat, better: Better, unit: Unit) -> Option<Self> {
        let ratio = b.mean / a.mean;
        if !ratio.is_finite() || ratio <= 0.0 {
            return None;
        }
        let uncertainty = relative_uncertainty(a, b).map(|rel| ratio * rel);
        let speedup = match better {
            Better::Higher => ratio,
            Better::Lower => 1.0 / ratio,
        };
        Some(Ratio {
            ratio,
            uncertainty,
            speedup,
            factor: speedup.max(1.0 / speedup),
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

/// Within 1 % it is the same; beyond, a direction only when the difference is
/// beyond `SIGNIFICANT_AT` times its uncertainty, and no verdict without one.
fn verdict(
    speedup: f64,
    ratio: f64,
    uncertainty: Option<f64>,
    (up, down): (&'static str, &'static str),
) -> &'static str {
    let off = (ratio - 1.0).abs();
    match uncertainty {
        _ if off < SAME_WITHIN => SAME,
        None => NOT_JUDGED,
        Some(u) if off <= SIGNIFICANT_AT * u => NOT_SIGNIFICANT,
        Some(_) if speedup > 1.0 => up,
        Some(_) => down,
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
    /// they are independent (metrics of one run are not, so read it as a lower bound);
    /// None unless every metric's is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uncertainty: Option<f64>,
    /// The speedup or its inverse, whichever is at least 1 (`1.25x worse`).
    pub factor: f64,
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
        let uncertainty = ratios.iter().all(|r| r.uncertainty.is_some()).then(|| {
            let var: f64 = ratios
                .iter()
                .map(|r| (r.uncertainty.unwrap_or(0.0) / r.ratio).powi(2))
                .sum();
            speedup * var.sqrt() / n
        });
        Some(Geomean {
            speedup,
            uncertainty,
            factor: speedup.max(1.0 / speedup),
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
/// runs' figures.
type Table = BTreeMap<Key, (Unit, Better, Option<String>, Vec<Vec<Measured>>)>;

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
                        entry.3[g].push(Measured::of(o, m));
                    }
                }
            }
        }
    }
    let mut rows = Vec::new();
    let mut partial = 0;
    for (key, (unit, better, test, values)) in table {
        let stats: Vec<Option<Stat>> = values.iter().map(|v| Stat::measured(v)).collect();
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
    notes.extend(settings::differences(groups, &rows));
    notes.extend(not_judged_note(&rows));
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

/// How many rows have a ratio that could not be judged, and how to get a verdict:
/// repeats always; a timeline, for the rates of cpu and memory runs that lacked one.
fn not_judged_note(rows: &[Row]) -> Option<String> {
    let unjudged: Vec<&Row> = rows
        .iter()
        .filter(|r| r.ratios.iter().flatten().any(|x| x.verdict == NOT_JUDGED))
        .collect();
    if unjudged.is_empty() {
        return None;
    }
    let rates = unjudged.iter().any(|r| {
        matches!(
            r.unit,
            Unit::EventsPerSec | Unit::OpsPerSec | Unit::BytesPerSec
        ) && matches!(
            r.key.workload.as_str(),
            "cpu" | "memory" | "threads" | "mutex"
        )
    });
    Some(format!(
        "{} metric(s) not judged: one run a side and no per-second timeline of the figure, so \
         its noise is unknown; compare repeats (e.g. 12,13,14 against 15,16,17){}",
        unjudged.len(),
        if rates {
            ", or for rates runs made with --report-interval 1s"
        } else {
            ""
        }
    ))
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
        assert_eq!(r.verdict, "not judged", "one run each, no timeline");
        assert!(r.uncertainty.is_none());
        let p95 = c
            .rows
            .iter()
            .find(|r| r.key.metric == "latency_p95")
            .unwrap();
        let r = p95.ratios[1].as_ref().unwrap();
        assert_eq!(format!("{:.2}", r.ratio), "0.47");
        assert!(close(r.speedup, 2.81 / 1.32));
        assert!(close(r.factor, 2.81 / 1.32), "a shorter latency is faster");
        let g = c.areas[0].geomean[1].as_ref().unwrap();
        assert_eq!(c.areas[0].area, "cpu");
        assert_eq!(g.metrics, 2);
        assert!(close(
            g.speedup,
            ((772.42f64 / 354.62) * (2.81 / 1.32)).sqrt()
        ));
        assert_eq!(g.verdict, "not judged");
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
        assert_eq!(g.verdict, "no significant difference");
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
        assert_eq!(
            eps.ratios[1].as_ref().unwrap().verdict,
            "no significant difference"
        );
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

    /// A native cpu outcome as `hostbench cpu` stores it: its spec with the run's
    /// limits, `time_s` seconds long.
    fn native_cpu(eps: f64, time_s: u64, events: Option<u64>) -> Outcome {
        let mut o = Outcome::new(
            "cpu",
            serde_json::json!({
                "run": {
                    "time": {"secs": time_s, "nanos": 0},
                    "events": events,
                    "report_interval": null,
                    "layout": {"min_ns": 1.0, "max_ns": 1e11, "buckets": 2048}
                },
                "threads": [1, 2],
                "max_prime": 10000,
                "percentiles": []
            }),
            HostInfo::default(),
        );
        o.param("max-prime", 10000);
        o.push(Metric::new("events_per_sec", eps, Unit::EventsPerSec).threads(1));
        o
    }

    /// A memory outcome whose spec has sizes and counts.
    fn memory_block(block: u64, total: u64, iterations: u64) -> Outcome {
        let mut o = Outcome::new(
            "memory",
            serde_json::json!({
                "mode": "block", "block_size": block, "total_size": total,
                "iterations": iterations, "hugetlb": false, "seed": 7
            }),
            HostInfo::default(),
        );
        o.param("mode", "block");
        o.push(Metric::new("ops_per_sec", 1e6, Unit::OpsPerSec).threads(1));
        o
    }

    fn notes_of(a: Vec<Outcome>, b: Vec<Outcome>) -> Vec<String> {
        cmp(&[group("a", vec![run(1, a)]), group("b", vec![run(2, b)])]).notes
    }

    #[test]
    fn spec_settings_that_differ_are_named_in_peoples_words() {
        let notes = notes_of(
            vec![native_cpu(1000.0, 1, None)],
            vec![native_cpu(1000.0, 3, Some(20000))],
        );
        let cpu = notes
            .iter()
            .find(|n| n.contains("cpu ran with"))
            .unwrap_or_else(|| panic!("no note names cpu's settings: {notes:?}"));
        assert!(cpu.contains("time 1 s in A (a), 3 s in B (b)"), "{cpu}");
        assert!(
            cpu.contains("events none in A (a), 20,000 in B (b)"),
            "{cpu}"
        );
        let notes = notes_of(
            vec![memory_block(4096, 1 << 30, 1000)],
            vec![memory_block(1 << 20, 100 << 30, 20000)],
        );
        let mem = notes
            .iter()
            .find(|n| n.contains("memory"))
            .unwrap_or_else(|| panic!("no note names memory's settings: {notes:?}"));
        assert!(
            mem.contains("block size 4 KiB in A (a), 1 MiB in B (b)"),
            "{mem}"
        );
        assert!(
            mem.contains("total size 1 GiB in A (a), 100 GiB in B (b)"),
            "{mem}"
        );
        assert!(
            mem.contains("iterations 1,000 in A (a), 20,000 in B (b)"),
            "{mem}"
        );
    }

    #[test]
    fn no_note_shows_json_or_debug() {
        let mut notes = notes_of(
            vec![native_cpu(1000.0, 1, None), memory_block(4096, 1 << 30, 1)],
            vec![native_cpu(1000.0, 2, None), memory_block(8192, 1 << 30, 1)],
        );
        notes.push(
            compare(&[
                group("a", vec![run(1, vec![with_prime(100.0, 20000)])]),
                group("b", vec![run(2, vec![with_prime(100.0, 10000)])]),
            ])
            .unwrap_err()
            .to_string(),
        );
        assert!(notes.len() >= 3, "{notes:?}");
        for n in &notes {
            assert!(
                !n.contains(['{', '}', '"', '[']) && !n.contains("secs") && !n.contains('_'),
                "{n}"
            );
        }
    }

    #[test]
    fn settings_that_say_nothing_about_the_figures_are_not_named() {
        // Same limits; only the seed, the histogram layout and the printed
        // percentiles differ.
        let a = native_cpu(1000.0, 1, None);
        let mut b = native_cpu(1000.0, 1, None);
        b.spec["run"]["layout"]["buckets"] = 1024.into();
        b.spec["percentiles"] = serde_json::json!([95.0]);
        b.spec["threads"] = serde_json::json!([1]);
        let notes = notes_of(vec![a], vec![b]);
        assert!(notes.iter().all(|n| !n.contains("ran with")), "{notes:?}");
    }

    /// Per-second samples of a cpu run at one thread, alternating around `mean` by
    /// `spread` either way.
    fn timeline(mean: f64, spread: f64, seconds: usize) -> Vec<crate::model::Sample> {
        (0..seconds)
            .map(|i| crate::model::Sample {
                at_s: (i + 1) as f64,
                span_s: 1.0,
                values: BTreeMap::from([
                    ("threads".to_string(), 1.0),
                    (
                        "events_per_sec".to_string(),
                        mean + if i % 2 == 0 { spread } else { -spread },
                    ),
                ]),
            })
            .collect()
    }

    fn one_run_each(a: Outcome, b: Outcome) -> Comparison {
        cmp(&[
            group("a", vec![run(1, vec![a])]),
            group("b", vec![run(2, vec![b])]),
        ])
    }

    fn verdict_of(c: &Comparison, metric: &str) -> String {
        let row = c.rows.iter().find(|r| r.key.metric == metric).unwrap();
        row.ratios[1].as_ref().unwrap().verdict.clone()
    }

    #[test]
    fn a_difference_inside_a_noisy_timeline_is_not_significant() {
        // ±20 % from second to second over 10 s: a run's mean is good to about 6 %.
        let mut a = cpu(1000.0, 1e6);
        a.series = timeline(1000.0, 200.0, 10);
        let mut b = cpu(1015.0, 1e6);
        b.series = timeline(1015.0, 200.0, 10);
        let c = one_run_each(a, b);
        assert_eq!(
            verdict_of(&c, "events_per_sec"),
            "no significant difference"
        );
        let r = c.rows[0].ratios[1].as_ref().unwrap();
        assert!(r.uncertainty.is_some_and(|u| u > 0.05), "{r:?}");
    }

    #[test]
    fn a_difference_beyond_a_quiet_timeline_is_named() {
        for (eps, word) in [(1200.0, "faster"), (800.0, "slower")] {
            let mut a = cpu(1000.0, 1e6);
            a.series = timeline(1000.0, 1.0, 10);
            let mut b = cpu(eps, 1e6);
            b.series = timeline(eps, 1.0, 10);
            let c = one_run_each(a, b);
            assert_eq!(verdict_of(&c, "events_per_sec"), word);
        }
    }

    #[test]
    fn one_run_each_without_a_timeline_is_not_judged() {
        let c = one_run_each(cpu(1000.0, 1e6), cpu(970.0, 1.03e6));
        assert_eq!(verdict_of(&c, "events_per_sec"), "not judged");
        assert_eq!(verdict_of(&c, "latency_p95"), "not judged");
        assert_eq!(
            c.areas[0].geomean[1].as_ref().unwrap().verdict,
            "not judged"
        );
        assert!(
            c.notes
                .iter()
                .any(|n| n.contains("not judged") && n.contains("timeline")),
            "{:?}",
            c.notes
        );
        // A timeline measures the rate it samples, not the latencies.
        let mut a = cpu(1000.0, 1e6);
        a.series = timeline(1000.0, 1.0, 10);
        let mut b = cpu(800.0, 2e6);
        b.series = timeline(800.0, 1.0, 10);
        let c = one_run_each(a, b);
        assert_eq!(verdict_of(&c, "events_per_sec"), "slower");
        assert_eq!(verdict_of(&c, "latency_p95"), "not judged");
    }

    #[test]
    fn repeats_in_one_bucket_do_not_make_a_bucket_significant() {
        use crate::measure::histogram::{Histogram, Layout};
        let at = |bucket: usize| {
            let mut o = cpu(1000.0, Layout::NATIVE.value_of(bucket));
            let h = Histogram::new(Layout::NATIVE);
            o.latency = Some(crate::model::Latency::from_histogram(&h, 0, 0, 0, &[95.0]));
            o
        };
        let side = |name: &str, id: i64, bucket: usize| {
            group(
                name,
                vec![run(id, vec![at(bucket)]), run(id + 1, vec![at(bucket)])],
            )
        };
        // The same bucket in every run of a side: no spread, but one bucket apart is
        // within the histogram's resolution.
        let c = cmp(&[side("a", 1, 1000), side("b", 3, 1001)]);
        assert_eq!(verdict_of(&c, "latency_p95"), "no significant difference");
        let c = cmp(&[side("a", 1, 1000), side("b", 3, 1003)]);
        assert_eq!(verdict_of(&c, "latency_p95"), "slower");
    }
}

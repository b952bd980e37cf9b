//! OpenMetrics text for node_exporter's textfile collector (and anything else that
//! scrapes Prometheus): every metric of every outcome as a gauge named
//! `hostbench_<workload>_<metric>_<unit>`, in base units (seconds, bytes), with the
//! host, run, test and the user's labels as labels, and `# EOF` at the end.
//!
//! Everything is a gauge: a benchmark figure is a measurement at one time, not a
//! counter. That also keeps the file valid for both parsers that read it: the
//! OpenMetrics one and the older Prometheus text parser node_exporter uses, which
//! disagree about counters' `_total` names. No sample carries a timestamp (the
//! textfile collector refuses those); `..._started_timestamp_seconds` says when.

use super::{Document, Format, Kind, Renderer, Unsupported};
use crate::model::{Metric, Outcome, Unit};
use crate::store::{Labels, StoredRun, outcome_test};
use std::collections::{BTreeSet, HashMap};
use std::fmt::Write;

pub struct OpenMetrics;

impl Renderer for OpenMetrics {
    fn supports(&self, kind: Kind) -> bool {
        matches!(
            kind,
            Kind::Outcome | Kind::Outcomes | Kind::Run | Kind::Runs
        )
    }

    fn render(&self, doc: &Document) -> Result<String, Unsupported> {
        let none = Labels::new();
        let outcomes = |outcomes| {
            render(&[Source {
                run: None,
                labels: &none,
                outcomes,
            }])
        };
        match doc {
            Document::Outcome(one) => Ok(outcomes(std::slice::from_ref(one.outcome))),
            Document::Outcomes(o) => Ok(outcomes(o.outcomes)),
            Document::Run(run) => Ok(runs(std::slice::from_ref(*run))),
            Document::Runs(r) => Ok(runs(r.runs)),
            _ => Err(Unsupported::new(Format::OpenMetrics, doc.kind())),
        }
    }

    fn hint(&self, kind: Kind) -> Option<&'static str> {
        match kind {
            Kind::Comparison => Some(
                "OpenMetrics reports runs, not a comparison: give RUN or --last, or use `hostbench export --format openmetrics`",
            ),
            Kind::Soak => Some(
                "a soak's slices are stored runs: `hostbench export --label soak=ID --format openmetrics` writes them",
            ),
            _ => None,
        }
    }
}

/// What one run contributes: its id and labels when it came from the store.
pub struct Source<'a> {
    pub run: Option<i64>,
    pub labels: &'a Labels,
    pub outcomes: &'a [Outcome],
}

/// The runs of the store, each with its id and labels.
fn runs(runs: &[StoredRun]) -> String {
    let sources: Vec<Source> = runs
        .iter()
        .map(|r| Source {
            run: Some(r.info.id),
            labels: &r.info.labels,
            outcomes: &r.outcomes,
        })
        .collect();
    render(&sources)
}

/// A metric family: one name, one type, its samples contiguous (as the format wants).
struct Family {
    name: String,
    help: String,
    unit: Option<&'static str>,
    /// (label text, value); label text is `{a="b",...}` or empty.
    samples: Vec<(String, f64)>,
    seen: BTreeSet<String>,
}

/// Every outcome of every source as gauges, then `# EOF`.
pub fn render(sources: &[Source]) -> String {
    let mut families: Vec<Family> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut add = |name: String, help: String, unit, labels: Vec<(String, String)>, value| {
        let i = *index.entry(name.clone()).or_insert_with(|| {
            families.push(Family {
                name,
                help,
                unit,
                samples: Vec::new(),
                seen: BTreeSet::new(),
            });
            families.len() - 1
        });
        let family = &mut families[i];
        let text = label_text(&labels);
        // Two samples with the same labels would be invalid; keep the first.
        if family.seen.insert(text.clone()) {
            family.samples.push((text, value));
        }
    };
    for source in sources {
        for (seq, o) in source.outcomes.iter().enumerate() {
            let mut base = base_labels(source, o);
            let workload = sanitise(&o.workload);
            // Two outcomes of one run that share workload and test (memory latency at
            // several sizes) are told apart by their position.
            let twin = source
                .outcomes
                .iter()
                .filter(|other| {
                    other.workload == o.workload && outcome_test(other) == outcome_test(o)
                })
                .count()
                > 1;
            if twin {
                base.insert(3.min(base.len()), ("outcome".into(), seq.to_string()));
            }
            for m in &o.metrics {
                let (name, unit, scale) = family_name(&o.workload, m);
                let mut labels = base.clone();
                labels.extend(metric_labels(m, outcome_test(o).as_deref()));
                add(
                    name,
                    help(o, m),
                    unit,
                    with_user_labels(labels, source.labels),
                    m.value * scale,
                );
            }
            let labels = with_user_labels(base.clone(), source.labels);
            if let Some(t) = epoch_seconds(&o.started_at) {
                add(
                    format!("hostbench_{workload}_started_timestamp_seconds"),
                    format!(
                        "when the hostbench {} measurement started (Unix time)",
                        o.workload
                    ),
                    Some("seconds"),
                    labels.clone(),
                    t,
                );
            }
            add(
                format!("hostbench_{workload}_elapsed_seconds"),
                format!("how long the hostbench {} measurement ran", o.workload),
                Some("seconds"),
                labels,
                o.elapsed_s,
            );
        }
    }
    let mut out = String::new();
    for f in &families {
        let _ = writeln!(out, "# TYPE {} gauge", f.name);
        if let Some(unit) = f.unit {
            let _ = writeln!(out, "# UNIT {} {unit}", f.name);
        }
        let _ = writeln!(out, "# HELP {} {}", f.name, escape(&f.help));
        for (labels, value) in &f.samples {
            let _ = writeln!(out, "{}{labels} {}", f.name, number(*value));
        }
    }
    out.push_str("# EOF\n");
    out
}

/// host, run, test: the labels every sample of an outcome has.
fn base_labels(source: &Source, o: &Outcome) -> Vec<(String, String)> {
    let mut labels = vec![("host".to_string(), o.host.hostname.clone())];
    if let Some(run) = source.run {
        labels.push(("run".into(), run.to_string()));
    }
    if let Some(test) = outcome_test(o) {
        labels.push(("test".into(), test));
    }
    labels
}

/// What tells two metrics of one name apart within an outcome (a variant that only
/// repeats the test's name is left out).
fn metric_labels(m: &Metric, test: Option<&str>) -> Vec<(String, String)> {
    let mut labels = Vec::new();
    if let Some(v) = m.variant.as_ref().filter(|v| Some(v.as_str()) != test) {
        labels.push(("variant".into(), v.clone()));
    }
    if let Some(t) = m.threads {
        labels.push(("threads".into(), t.to_string()));
    }
    if let Some(ws) = m.working_set {
        labels.push(("cache_level".into(), ws.tier.label().to_string()));
        labels.push(("working_set_bytes".into(), ws.bytes.to_string()));
    }
    labels
}

/// The user's labels after ours, their keys made valid label names; a key that
/// collides with one of ours (or with another after sanitising) gets a `label_` prefix.
fn with_user_labels(mut labels: Vec<(String, String)>, user: &Labels) -> Vec<(String, String)> {
    for (k, v) in user {
        let mut key = sanitise(k);
        if key.starts_with(|c: char| c.is_ascii_digit()) || key.starts_with("__") {
            key = format!("label_{key}");
        }
        while labels.iter().any(|(have, _)| *have == key) {
            key = format!("label_{key}");
        }
        labels.push((key, v.clone()));
    }
    labels
}

fn label_text(labels: &[(String, String)]) -> String {
    if labels.is_empty() {
        return String::new();
    }
    let pairs: Vec<String> = labels
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
        .collect();
    format!("{{{}}}", pairs.join(","))
}

/// Backslash, double quote and newline escaped, as label values and HELP text need.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// Anything outside `[a-zA-Z0-9_]` becomes `_` (no runs of them); `:` is left out on
/// purpose, as it is reserved for recording rules.
fn sanitise(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        let c = if c.is_ascii_alphanumeric() { c } else { '_' };
        if !(c == '_' && out.ends_with('_')) {
            out.push(c);
        }
    }
    let trimmed = out.trim_matches('_');
    if trimmed.is_empty() {
        "_".into()
    } else {
        trimmed.to_string()
    }
}

/// `hostbench_<workload>_<metric>_<unit>`, the OpenMetrics unit where there is one,
/// and the factor to base units: `latency_p95` in ns -> `..._latency_p95_seconds`.
fn family_name(workload: &str, m: &Metric) -> (String, Option<&'static str>, f64) {
    let mut stem = sanitise(&m.name);
    for suffix in ["_per_sec", "_per_second"] {
        if let Some(s) = stem.strip_suffix(suffix) {
            stem = s.to_string();
        }
    }
    let ends = |stem: &str, word: &str| stem == word || stem.ends_with(&format!("_{word}"));
    let (suffix, unit, scale): (&str, Option<&'static str>, f64) = match m.unit {
        Unit::EventsPerSec if ends(&stem, "events") => ("_per_second", None, 1.0),
        Unit::EventsPerSec => ("_events_per_second", None, 1.0),
        Unit::OpsPerSec => {
            // read_iops -> read_ops_per_second: "iops" already says "per second".
            if ends(&stem, "iops") {
                stem.truncate(stem.len() - 4);
                stem.push_str("ops");
            }
            if ends(&stem, "ops") {
                ("_per_second", None, 1.0)
            } else {
                ("_ops_per_second", None, 1.0)
            }
        }
        Unit::BytesPerSec if ends(&stem, "bytes") => ("_per_second", None, 1.0),
        Unit::BytesPerSec => ("_bytes_per_second", None, 1.0),
        Unit::Bytes if ends(&stem, "bytes") => ("", Some("bytes"), 1.0),
        Unit::Bytes => ("_bytes", Some("bytes"), 1.0),
        Unit::Nanoseconds => {
            if let Some(s) = stem.strip_suffix("_ns") {
                stem = s.to_string();
            }
            ("_seconds", Some("seconds"), 1e-9)
        }
        Unit::Seconds => {
            for s in ["_seconds", "_s"] {
                if let Some(t) = stem.strip_suffix(s) {
                    stem = t.to_string();
                }
            }
            ("_seconds", Some("seconds"), 1.0)
        }
        Unit::Count => ("", None, 1.0),
        // An index or score is a number of points, not a fraction.
        Unit::Ratio if stem.contains("index") || stem.contains("score") => ("", None, 1.0),
        Unit::Ratio if ends(&stem, "ratio") => ("", Some("ratio"), 1.0),
        Unit::Ratio => ("_ratio", Some("ratio"), 1.0),
    };
    let mut name = format!("hostbench_{}_{stem}{suffix}", sanitise(workload));
    // Suffixes the format keeps for the samples of other types.
    const RESERVED: [&str; 8] = [
        "_total", "_created", "_count", "_sum", "_bucket", "_gcount", "_gsum", "_info",
    ];
    if unit.is_none() && RESERVED.iter().any(|r| name.ends_with(r)) {
        name.push_str("_value");
    }
    (name, unit, scale)
}

fn help(o: &Outcome, m: &Metric) -> String {
    let unit = match m.unit {
        Unit::EventsPerSec => "events per second",
        Unit::OpsPerSec => "operations per second",
        Unit::BytesPerSec => "bytes per second",
        Unit::Bytes => "bytes",
        Unit::Nanoseconds | Unit::Seconds => "seconds",
        Unit::Count => "count",
        Unit::Ratio => "ratio",
    };
    let better = match (m.unit, m.better) {
        // How much was done says nothing about how well.
        (Unit::Count | Unit::Bytes, _) => "",
        (_, crate::model::Better::Higher) => "; higher is better",
        (_, crate::model::Better::Lower) => "; lower is better",
    };
    format!("hostbench {} {} ({unit}{better})", o.workload, m.name)
}

/// A sample value: OpenMetrics spells the special ones NaN, +Inf and -Inf.
fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        }
    } else {
        // Display never uses an exponent and round-trips exactly.
        format!("{v}")
    }
}

/// Unix seconds of a stored RFC 3339 UTC time (`2026-11-30T00:45:07Z`).
fn epoch_seconds(t: &str) -> Option<f64> {
    let t: jiff::Timestamp = t.parse().ok()?;
    Some(t.as_second() as f64 + f64::from(t.subsec_nanosecond()) * 1e-9)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::HostInfo;

    fn name(workload: &str, metric: &str, unit: Unit) -> String {
        family_name(workload, &Metric::new(metric, 1.0, unit)).0
    }

    #[test]
    fn names_say_the_unit_once() {
        assert_eq!(
            name("cpu", "events_per_sec", Unit::EventsPerSec),
            "hostbench_cpu_events_per_second"
        );
        assert_eq!(
            name("disk", "read_iops", Unit::OpsPerSec),
            "hostbench_disk_read_ops_per_second"
        );
        assert_eq!(
            name("disk", "fsync_per_sec", Unit::OpsPerSec),
            "hostbench_disk_fsync_ops_per_second"
        );
        assert_eq!(
            name("disk", "read_bytes_per_sec", Unit::BytesPerSec),
            "hostbench_disk_read_bytes_per_second"
        );
        assert_eq!(
            name("memory", "bandwidth", Unit::BytesPerSec),
            "hostbench_memory_bandwidth_bytes_per_second"
        );
        assert_eq!(
            name("disk", "read_latency_p99.9", Unit::Nanoseconds),
            "hostbench_disk_read_latency_p99_9_seconds"
        );
        assert_eq!(
            name("cpu", "scaling_efficiency", Unit::Ratio),
            "hostbench_cpu_scaling_efficiency_ratio"
        );
        assert_eq!(
            name("index", "index_score", Unit::Ratio),
            "hostbench_index_index_score"
        );
        assert_eq!(name("cpu", "events", Unit::Count), "hostbench_cpu_events");
        assert_eq!(
            name("x", "op_count", Unit::Count),
            "hostbench_x_op_count_value"
        );
        assert_eq!(
            name("redis-ping", "rtt ns", Unit::Nanoseconds),
            "hostbench_redis_ping_rtt_seconds"
        );
    }

    #[test]
    fn values_and_labels_are_escaped() {
        assert_eq!(escape("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
        assert_eq!(number(f64::NAN), "NaN");
        assert_eq!(number(f64::NEG_INFINITY), "-Inf");
        assert_eq!(number(1e21), "1000000000000000000000");
        assert_eq!(number(2.5e-7), "0.00000025");
        let mut o = Outcome::new("cpu", serde_json::json!({}), HostInfo::default());
        o.host.hostname = "we\"ird".into();
        o.started_at = "2026-11-30T00:00:10Z".into();
        o.push(Metric::new("events_per_sec", 12.5, Unit::EventsPerSec).threads(2));
        let labels: Labels = [
            ("host".to_string(), "user's".to_string()),
            ("my-key".to_string(), "a\\b".to_string()),
        ]
        .into();
        let text = render(&[Source {
            run: Some(7),
            labels: &labels,
            outcomes: std::slice::from_ref(&o),
        }]);
        assert!(
            text.contains(
                r#"hostbench_cpu_events_per_second{host="we\"ird",run="7",threads="2",label_host="user's",my_key="a\\b"} 12.5"#
            ),
            "{text}"
        );
        assert!(
            text.contains("hostbench_cpu_started_timestamp_seconds{"),
            "{text}"
        );
        assert!(text.contains("} 1795996810\n"), "{text}");
        assert!(text.ends_with("\n# EOF\n"));
    }

    #[test]
    fn epoch_of_a_stored_time() {
        assert_eq!(epoch_seconds("1970-01-01T00:00:00Z"), Some(0.0));
        assert_eq!(epoch_seconds("2000-02-29T00:00:00Z"), Some(951_782_400.0));
        assert_eq!(epoch_seconds("2026-11-30T00:00:10Z"), Some(1_795_996_810.0));
        assert_eq!(
            epoch_seconds("2026-11-30T00:00:10.5Z"),
            Some(1_795_996_810.5)
        );
        assert_eq!(
            epoch_seconds(&crate::host::now_rfc3339()).map(|s| s > 1.7e9),
            Some(true)
        );
        assert_eq!(epoch_seconds("yesterday"), None);
        assert_eq!(epoch_seconds("2026-02-30T00:00:00Z"), None);
    }
}

//! What else differed between runs that `compare` set side by side: the settings in
//! a workload's spec that are not params (how long it ran, how many passes, how big
//! a block), named with their values in people's words — `cpu ran with time 1 s in A
//! (12), 3 s in B (13)` — as the params that differ are. The figures are compared
//! all the same: these settings bound a run rather than define what it measures.

use super::{Group, Row, letter};
use crate::model::{Outcome, Params};
use crate::store::outcome_test;
use crate::units::{format_bits, format_bytes, format_g, thousands};
use serde_json::Value;
use std::collections::BTreeMap;

/// Spec fields that say nothing about the figures: where the files went (fio's
/// `filename` and `directory` too), the seed,
/// the server and its secret, how latencies are bucketed, which percentiles and
/// interval reports are printed, the test's name and the thread counts (every metric
/// carries its own).
const IGNORED: [&str; 18] = [
    "dir",
    "directory",
    "filename",
    "target",
    "seed",
    "endpoint",
    "host",
    "port",
    "peer",
    "secret",
    "name",
    "key_prefix",
    "layout",
    "percentiles",
    "report_interval",
    "threads",
    "cluster_masters",
    "family",
];

/// Numbers under these names are seconds (specs that write durations as numbers).
const SECONDS: [&str; 7] = [
    "duration", "warmup", "seconds", "runtime", "ramp", "interval", "timeout",
];

/// At most this many settings are named per note; the rest follow from the command lines.
const MAX_NAMED: usize = 4;

/// One note per workload whose compared outcomes ran with other settings in a group
/// than in A: `compared although cpu ran with time 1 s in A (1), 2 s in B (2)`.
pub fn differences(groups: &[Group], rows: &[Row]) -> Vec<String> {
    let per_group: Vec<Buckets> = groups.iter().map(|g| buckets(g, rows)).collect();
    let Some((reference, others)) = per_group.split_first() else {
        return Vec::new();
    };
    // (workload, what differs) -> the tests that ran so, to name several at once.
    let mut found: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for (i, other) in others.iter().enumerate() {
        let g = i + 1;
        for (key, theirs) in other {
            let Some(ours) = reference.get(key) else {
                continue;
            };
            let what = differing(ours, theirs)
                .into_iter()
                .take(MAX_NAMED)
                .map(|(name, a, b)| {
                    format!(
                        "{name} {a} in A ({}), {b} in {} ({})",
                        groups[0].name,
                        letter(g),
                        groups[g].name
                    )
                })
                .collect::<Vec<_>>();
            if !what.is_empty() {
                let tests = found.entry((key.0.clone(), what.join(", "))).or_default();
                if let Some(t) = &key.2
                    && !tests.contains(t)
                {
                    tests.push(t.clone());
                }
            }
        }
    }
    // Tests in the order the reference ran them.
    let order: Vec<Option<String>> = groups[0]
        .runs
        .iter()
        .flat_map(|r| r.outcomes.iter().map(outcome_test))
        .collect();
    found
        .into_iter()
        .map(|((workload, what), mut tests)| {
            tests.sort_by_key(|t| order.iter().position(|o| o.as_ref() == Some(t)));
            let tests = if tests.is_empty() {
                String::new()
            } else {
                format!(" ({})", tests.join(", "))
            };
            format!("compared although {workload}{tests} ran with {what}")
        })
        .collect()
}

/// (workload, params, test) -> the settings of each outcome a row compared.
type Buckets = BTreeMap<(String, Params, Option<String>), Vec<BTreeMap<String, String>>>;

fn buckets(group: &Group, rows: &[Row]) -> Buckets {
    let mut out = Buckets::new();
    for o in group.runs.iter().flat_map(|r| &r.outcomes) {
        let test = outcome_test(o);
        let compared = rows.iter().any(|r| {
            r.key.workload == o.workload
                && r.key.params == o.params
                && (r.key.test.is_none() || r.key.test == test)
        });
        if compared {
            out.entry((o.workload.clone(), o.params.clone(), test))
                .or_default()
                .push(settings(o));
        }
    }
    out
}

/// The settings both sides' specs have whose values differ: (name, A's values, B's).
fn differing(
    ours: &[BTreeMap<String, String>],
    theirs: &[BTreeMap<String, String>],
) -> Vec<(String, String, String)> {
    let Some(first) = ours.first() else {
        return Vec::new();
    };
    let everywhere = |name: &String| ours.iter().chain(theirs).all(|s| s.contains_key(name));
    first
        .keys()
        .filter(|name| everywhere(name))
        .filter_map(|name| {
            let (a, b) = (values(ours, name), values(theirs, name));
            let same = a.len() == b.len() && a.iter().all(|v| b.contains(v));
            (!same).then(|| (name.clone(), a.join(" and "), b.join(" and ")))
        })
        .collect()
}

/// A side's distinct values of one setting, in the order its runs had them.
fn values<'a>(side: &'a [BTreeMap<String, String>], name: &str) -> Vec<&'a str> {
    let mut seen: Vec<&str> = Vec::new();
    for v in side.iter().filter_map(|s| s.get(name)) {
        if !seen.contains(&v.as_str()) {
            seen.push(v);
        }
    }
    seen
}

/// An outcome's spec as setting name -> value in words, nested objects flattened
/// (`run.time` is `time`; a name two branches share keeps its branch: `run time`).
pub fn settings(o: &Outcome) -> BTreeMap<String, String> {
    let mut leaves: Vec<(Vec<String>, String)> = Vec::new();
    flatten(&mut Vec::new(), &o.spec, &mut leaves);
    let mut out = BTreeMap::new();
    for (path, value) in &leaves {
        let last = path.last().cloned().unwrap_or_default();
        let twins = leaves
            .iter()
            .filter(|(p, _)| p.last() == Some(&last))
            .count();
        let name = if twins > 1 { path.join(" ") } else { last };
        out.insert(setting_name(&name), value.clone());
    }
    out
}

fn flatten(path: &mut Vec<String>, v: &Value, out: &mut Vec<(Vec<String>, String)>) {
    match v {
        Value::Object(map) if seconds_of(v).is_none() => {
            for (k, child) in map {
                if IGNORED.contains(&k.as_str()) {
                    continue;
                }
                path.push(k.clone());
                flatten(path, child, out);
                path.pop();
            }
        }
        _ if path.is_empty() => {}
        _ => {
            let key = path.last().map(String::as_str).unwrap_or("");
            out.push((path.clone(), words(key, v)));
        }
    }
}

/// `max_prime` -> `max prime`, `block_size` -> `block size`, `array_bytes` -> `array
/// size`; a unit suffix goes to the value (`read_pct` -> `read`, `duration_ms` ->
/// `duration`).
fn setting_name(key: &str) -> String {
    let key = ["_pct", "_ms", "_s", "_bps"]
        .iter()
        .find_map(|unit| key.strip_suffix(unit))
        .unwrap_or(key);
    let key = match key.strip_suffix("_bytes") {
        Some(stem) => format!("{stem}_size"),
        None => key.to_string(),
    };
    key.replace('_', " ")
}

/// A value as people write it: `1 s`, `4 KiB`, `20,000`, `yes`, `none`.
fn words(key: &str, v: &Value) -> String {
    if let Some(s) = seconds_of(v) {
        return seconds_words(s);
    }
    match v {
        Value::Null => "none".into(),
        Value::Bool(b) => if *b { "yes" } else { "no" }.into(),
        Value::Number(n) => number_words(key, n.as_f64().unwrap_or(f64::NAN)),
        Value::String(s) => s.clone(),
        Value::Array(items) if items.is_empty() => "none".into(),
        Value::Array(items) => items
            .iter()
            .map(|x| words(key, x))
            .collect::<Vec<_>>()
            .join("/"),
        Value::Object(map) => map
            .iter()
            .map(|(k, x)| format!("{} {}", setting_name(k), words(k, x)))
            .collect::<Vec<_>>()
            .join(", "),
    }
    .replace(['{', '}', '"'], "")
}

/// A serialised `Duration` (`{"secs": 1, "nanos": 0}`) in seconds.
fn seconds_of(v: &Value) -> Option<f64> {
    let map = v.as_object()?;
    if map.len() != 2 {
        return None;
    }
    let secs = map.get("secs")?.as_f64()?;
    let nanos = map.get("nanos")?.as_f64()?;
    Some(secs + nanos / 1e9)
}

fn is_size(key: &str) -> bool {
    key == "size"
        || key == "sizes"
        || key.ends_with("_size")
        || key.ends_with("_sizes")
        || key.ends_with("bytes")
        || key.ends_with("buf")
}

fn number_words(key: &str, x: f64) -> String {
    let whole = x.fract() == 0.0 && x.abs() < 1e15;
    if SECONDS.contains(&key) || key == "time" || key.ends_with("_s") {
        seconds_words(x)
    } else if key.ends_with("_ms") {
        seconds_words(x / 1e3)
    } else if key.ends_with("_bps") {
        format_bits(x / 8.0)
    } else if key.ends_with("_pct") {
        format!("{} %", format_g(x, 4))
    } else if is_size(key) && whole && x >= 0.0 {
        format_bytes(x as u64)
    } else if whole {
        thousands(x, 0)
    } else {
        format_g(x, 4)
    }
}

/// `500 ms`, `1 s`, `2.5 s`, `5 min`, `1 min 30 s`, `2 h`.
pub fn seconds_words(s: f64) -> String {
    if s > 0.0 && s < 1.0 {
        return format!("{} ms", format_g(s * 1e3, 3));
    }
    if s < 60.0 {
        return format!("{} s", format_g(s, 3));
    }
    let whole = s.round() as u64;
    let (h, m, sec) = (whole / 3600, whole / 60 % 60, whole % 60);
    let mut parts = Vec::new();
    if h > 0 {
        parts.push(format!("{h} h"));
    }
    if m > 0 {
        parts.push(format!("{m} min"));
    }
    if sec > 0 {
        parts.push(format!("{sec} s"));
    }
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::HostInfo;

    #[test]
    fn durations_sizes_and_counts_in_words() {
        assert_eq!(seconds_words(1.0), "1 s");
        assert_eq!(seconds_words(2.5), "2.5 s");
        assert_eq!(seconds_words(0.25), "250 ms");
        assert_eq!(seconds_words(300.0), "5 min");
        assert_eq!(seconds_words(90.0), "1 min 30 s");
        assert_eq!(seconds_words(7200.0), "2 h");
        let o = Outcome::new(
            "memory",
            serde_json::json!({
                "time_per_size": {"secs": 0, "nanos": 500_000_000},
                "array_bytes": 1u64 << 30,
                "sizes": [32768, 1048576],
                "read_pct": 70,
                "iterations": 20000,
                "duration": 10.0,
                "interval_ms": 2500,
                "timeout_s": 0.2,
                "rate_bps": 1e9,
                "server_sndbuf": 262144,
                "hugetlb": true,
                "events": null,
                "job": {"runtime": {"secs": 60, "nanos": 0}, "direct": false},
                "seed": 42,
            }),
            HostInfo::default(),
        );
        let s = settings(&o);
        let want: BTreeMap<String, String> = [
            ("time per size", "500 ms"),
            ("array size", "1 GiB"),
            ("sizes", "32 KiB/1 MiB"),
            ("read", "70 %"),
            ("iterations", "20,000"),
            ("duration", "10 s"),
            ("interval", "2.5 s"),
            ("timeout", "200 ms"),
            ("rate", "1.00 Gbit/s"),
            ("server sndbuf", "256 KiB"),
            ("hugetlb", "yes"),
            ("events", "none"),
            ("runtime", "1 min"),
            ("direct", "no"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(s, want);
    }
}

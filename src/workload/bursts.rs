//! Every timeline is checked for a lasting fall ([`crate::measure::phases`]): a burst
//! (credits, a cache) and then the sustained rate. When one is found, the rates the
//! timeline carries become their sustained figures (what a buyer lives with, and what
//! `--expect` and `compare` then judge), each gains a `…_burst` twin with the earlier
//! level, `burst_seconds` says how long the burst lasted, and a note says it in words.
//! Each workload's conversion to `Outcome` calls [`judge`] once.

use crate::measure::phases::{self, Rule};
use crate::model::{Metric, Outcome, Unit};
use crate::units::{format_bits, thousands};

/// The note's opening words, for readers that look for it.
pub const NOTE_PREFIX: &str = "burst, then a lower sustained rate: ";

fn is_rate(unit: Unit) -> bool {
    matches!(
        unit,
        Unit::EventsPerSec | Unit::OpsPerSec | Unit::BytesPerSec
    )
}

/// The timeline of `name`: one value per sample, NaN where a sample lacks it.
fn timeline(o: &Outcome, name: &str) -> Vec<f64> {
    o.series
        .iter()
        .map(|s| s.values.get(name).copied().unwrap_or(f64::NAN))
        .collect()
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// Splits the outcome's rates into burst and sustained when its lead rate (the first
/// rate metric with a timeline that moved) fell for good; leaves it alone otherwise.
pub fn judge(o: &mut Outcome) {
    let has_timeline =
        |m: &Metric| is_rate(m.unit) && o.series.iter().all(|s| s.values.contains_key(&m.name));
    let Some(lead) = o
        .metrics
        .iter()
        .filter(|m| has_timeline(m))
        .find(|m| timeline(o, &m.name).iter().any(|v| *v > 0.0))
        .map(|m| (m.name.clone(), m.unit))
    else {
        return;
    };
    let Some(fall) = phases::find(&timeline(o, &lead.0), &Rule::default()) else {
        return;
    };
    let start = o.series[0].at_s - o.series[0].span_s;
    let switch = o.series[fall.split - 1].at_s;
    let end = o.series.last().map_or(switch, |s| s.at_s);
    let timed: Vec<usize> = (0..o.metrics.len())
        .filter(|i| has_timeline(&o.metrics[*i]))
        .collect();
    for i in timed {
        let values = timeline(o, &o.metrics[i].name);
        let (early, late) = phases::levels(&values, fall.split);
        let burst = Metric {
            name: format!("{}_burst", o.metrics[i].name),
            value: mean(early),
            ..o.metrics[i].clone()
        };
        o.metrics[i].value = mean(late);
        o.metrics.push(burst);
    }
    o.push(Metric::new("burst_seconds", switch - start, Unit::Seconds));
    let rate = |v: f64| match lead.1 {
        Unit::BytesPerSec => format_bits(v),
        Unit::EventsPerSec => format!("{} events/s", thousands(v, 0)),
        _ => format!("{} ops/s", thousands(v, 0)),
    };
    o.note(format!(
        "{NOTE_PREFIX}{} {} for {}, then {} sustained for {} (burst credits or a write cache); \
         the rates are the sustained ones, the burst's are the *_burst metrics, latency covers both",
        lead.0.replace('_', " "),
        rate(fall.before),
        span(switch - start),
        rate(fall.after),
        span(end - switch),
    ));
}

/// `4 min 10 s`, `12 s`.
fn span(secs: f64) -> String {
    let s = secs.round() as u64;
    match (s / 60, s % 60) {
        (0, s) => format!("{s} s"),
        (m, 0) => format!("{m} min"),
        (m, s) => format!("{m} min {s} s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::HostInfo;
    use crate::model::Sample;
    use std::collections::BTreeMap;

    fn disk(timeline: &[f64]) -> Outcome {
        let mut o = Outcome::new("disk", serde_json::Value::Null, HostInfo::default());
        o.push(Metric::new("read_iops", mean(timeline), Unit::OpsPerSec));
        o.push(Metric::new(
            "read_bytes_per_sec",
            4096.0 * mean(timeline),
            Unit::BytesPerSec,
        ));
        o.push(Metric::new(
            "read_latency_p50",
            100_000.0,
            Unit::Nanoseconds,
        ));
        o.series = timeline
            .iter()
            .enumerate()
            .map(|(i, v)| Sample {
                at_s: (i + 1) as f64,
                span_s: 1.0,
                values: BTreeMap::from([
                    ("read_iops".into(), *v),
                    ("read_bytes_per_sec".into(), 4096.0 * v),
                ]),
            })
            .collect();
        o
    }

    fn value(o: &Outcome, name: &str) -> Option<f64> {
        o.metrics.iter().find(|m| m.name == name).map(|m| m.value)
    }

    #[test]
    fn a_burst_makes_the_sustained_rate_the_figure() {
        let mut t = vec![16_200.0; 250];
        t.extend(vec![3_000.0; 350]);
        let mut o = disk(&t);
        judge(&mut o);
        assert_eq!(value(&o, "read_iops"), Some(3_000.0));
        assert_eq!(value(&o, "read_iops_burst"), Some(16_200.0));
        assert_eq!(value(&o, "read_bytes_per_sec"), Some(4096.0 * 3_000.0));
        assert_eq!(value(&o, "burst_seconds"), Some(250.0));
        assert_eq!(value(&o, "read_latency_p50"), Some(100_000.0));
        let note = o.notes.iter().find(|n| n.starts_with(NOTE_PREFIX)).unwrap();
        assert!(
            note.contains(
                "read iops 16,200 ops/s for 4 min 10 s, then 3,000 ops/s sustained for 5 min 50 s"
            ),
            "{note}"
        );
    }

    #[test]
    fn a_level_timeline_is_left_alone() {
        let mut o = disk(&[1000.0, 1100.0, 900.0, 1000.0, 1050.0, 950.0, 1000.0]);
        let before = serde_json::to_value(&o).unwrap();
        judge(&mut o);
        assert_eq!(serde_json::to_value(&o).unwrap(), before);
    }

    #[test]
    fn an_outcome_without_a_timeline_is_left_alone() {
        let mut o = disk(&[]);
        let before = serde_json::to_value(&o).unwrap();
        judge(&mut o);
        assert_eq!(serde_json::to_value(&o).unwrap(), before);
    }
}

//! A soak's figures and statistics in words, the same in every format: the column
//! head and the figures in its unit, the plan in a sentence, the statistics as
//! (name, value) rows, a timeline row's cells. The text (live lines, `--show`) is in
//! text.rs, the page in html.rs (its chart in charts.rs), the tables in markdown.rs.

use super::thousands;
use crate::model::Unit;
use crate::store::soak::{Slice, SliceStatus, Soak};
use crate::suite::soak::{Summary, stats::Stats, utc};
use crate::units::format_duration;
use std::time::Duration;

/// The column head of the figure: `IOPS`, `events/s`, `MB/s`, `µs`.
pub(crate) fn figure_head(metric: Option<&str>, unit: Option<Unit>) -> String {
    match (metric, unit) {
        (Some("iops"), _) => "IOPS".into(),
        (_, Some(Unit::EventsPerSec)) => "events/s".into(),
        (_, Some(Unit::OpsPerSec)) => "ops/s".into(),
        (_, Some(Unit::BytesPerSec)) => "MB/s".into(),
        (_, Some(Unit::Nanoseconds)) => "µs".into(),
        (_, Some(Unit::Seconds)) => "s".into(),
        (Some(m), _) => m.replace('_', " "),
        _ => "figure".into(),
    }
}

/// A figure in its column's unit.
pub(crate) fn scaled(value: f64, unit: Unit) -> f64 {
    match unit {
        Unit::BytesPerSec => value / 1e6,
        Unit::Nanoseconds => value / 1e3,
        _ => value,
    }
}

pub(crate) fn figure_text(value: f64, unit: Unit) -> String {
    let v = scaled(value, unit);
    thousands(v, if v.abs() >= 100.0 { 0 } else { 2 })
}

/// `1h`, `10m`, `2s` rather than `1h00m00s` in a sentence.
pub(crate) fn dur(ms: i64) -> String {
    match ms {
        ms if ms > 0 && ms % 3_600_000 == 0 => format!("{}h", ms / 3_600_000),
        ms if ms > 0 && ms % 60_000 == 0 => format!("{}m", ms / 60_000),
        ms if ms > 0 && ms % 1000 == 0 => format!("{}s", ms / 1000),
        ms => format_duration(Duration::from_millis(ms.max(0) as u64)),
    }
}

/// `cpu --threads 1, 1s per slice every 2s for 7s (4 slices)`.
pub fn describe(soak: &Soak) -> String {
    let p = &soak.plan;
    format!(
        "{}: {} per slice, every {} for {} ({} slice{})",
        p.workload.join(" "),
        dur(p.duration_ms),
        dur(p.every_ms),
        dur(p.for_ms),
        p.slice_count(),
        if p.slice_count() == 1 { "" } else { "s" }
    )
}

/// The median of the measured slices up to and including `seq` (live lines).
pub fn median_so_far(soak: &Soak, seq: u32) -> Option<f64> {
    let values: Vec<f64> = soak
        .slices
        .iter()
        .filter(|s| s.seq <= seq && s.status == SliceStatus::Done)
        .filter_map(|s| s.figure.as_ref().map(|f| f.value))
        .collect();
    (!values.is_empty()).then(|| crate::suite::soak::stats::median(&values))
}

pub(crate) fn slice_name(soak: &Soak, seq: u32) -> String {
    format!("slice {}, {} UTC", seq + 1, utc(soak.plan.due_ms(seq)))
}

pub(crate) fn drop_text(soak: &Soak, s: &Stats, unit: Unit) -> String {
    match &s.deepest_drop {
        None => "none (no slice fell below an earlier one)".into(),
        Some(d) => format!(
            "{:.1} %, from {} (slice {}) to {} ({})",
            d.percent,
            figure_text(d.peak, unit),
            d.peak_seq + 1,
            figure_text(d.trough, unit),
            slice_name(soak, d.trough_seq)
        ),
    }
}

pub(crate) fn flagged_text(s: &Stats) -> String {
    if s.flagged.is_empty() {
        "none".into()
    } else {
        let list: Vec<String> = s.flagged.iter().map(|q| (q + 1).to_string()).collect();
        format!(
            "slice{} {}",
            if list.len() == 1 { "" } else { "s" },
            list.join(", ")
        )
    }
}

pub(crate) fn stats_rows(soak: &Soak, summary: &Summary) -> Vec<(String, String)> {
    let unit = summary.unit.unwrap_or(Unit::Count);
    let fig = |v: f64| figure_text(v, unit);
    let mut rows = vec![(
        "slices".to_string(),
        format!(
            "{} measured, {} missed, {} failed, of {}",
            summary.measured, summary.missed, summary.failed, summary.slices_planned
        ),
    )];
    if let Some(s) = &summary.stats {
        rows.extend([
            (
                "min".into(),
                format!("{} ({})", fig(s.min), slice_name(soak, s.min_seq)),
            ),
            (
                "max".into(),
                format!("{} ({})", fig(s.max), slice_name(soak, s.max_seq)),
            ),
            ("mean".into(), fig(s.mean)),
            ("median".into(), fig(s.median)),
            (
                "coefficient of variation".into(),
                format!("{:.1} %", s.cv_percent),
            ),
            ("deepest drop".into(), drop_text(soak, s, unit)),
            (
                format!(
                    "flagged ({:.0} % of the median = {})",
                    s.threshold_percent,
                    fig(s.threshold_value)
                ),
                flagged_text(s),
            ),
        ]);
    }
    rows
}

/// The cells a timeline row has on the page and in Markdown alike: whether the slice
/// is flagged, its figure and its share of the median (`-` and blank without one).
pub(crate) fn timeline_cells(summary: &Summary, s: &Slice) -> (bool, String, String) {
    let flagged = summary
        .stats
        .as_ref()
        .is_some_and(|st| st.flagged.contains(&s.seq));
    let median = summary.stats.as_ref().map(|st| st.median);
    let (value, pct) = match (&s.figure, median) {
        (Some(f), Some(m)) if s.status == SliceStatus::Done && m != 0.0 => (
            figure_text(f.value, f.unit),
            format!("{:.0} %", f.value / m * 100.0),
        ),
        _ => ("-".into(), String::new()),
    };
    (flagged, value, pct)
}

/// The note of a slice that did not measure: `missed: hostbench was not running`.
pub(crate) fn unmeasured_note(s: &Slice) -> String {
    format!(
        "{}{}",
        s.status.as_str(),
        s.note
            .as_ref()
            .map(|n| format!(": {n}"))
            .unwrap_or_default()
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::Better;
    use crate::store::soak::{Figure, SoakPlan, SoakState};

    /// Four hourly slices of `disk --tests mixed`: one missed, one flagged.
    pub(crate) fn soak() -> Soak {
        let plan = SoakPlan {
            workload: vec!["disk".into(), "--tests".into(), "mixed".into()],
            start_ms: 1_796_000_000_000,
            every_ms: 3_600_000,
            for_ms: 4 * 3_600_000,
            duration_ms: 600_000,
            threshold_pct: 80.0,
            labels: Default::default(),
        };
        let done = |seq: u32, value: f64| Slice {
            seq,
            due_ms: plan.due_ms(seq),
            status: SliceStatus::Done,
            run_id: Some(seq as i64 + 1),
            started_at: None,
            figure: Some(Figure {
                metric: "iops".into(),
                value,
                unit: Unit::OpsPerSec,
                better: Better::Higher,
            }),
            note: None,
        };
        Soak {
            id: 7,
            created_at: String::new(),
            updated_at: String::new(),
            state: SoakState::Finished,
            pid: None,
            slices: vec![
                done(0, 2590.0),
                Slice {
                    seq: 1,
                    due_ms: plan.due_ms(1),
                    status: SliceStatus::Missed,
                    run_id: None,
                    started_at: None,
                    figure: None,
                    note: Some("hostbench was not running".into()),
                },
                done(2, 1500.0),
                done(3, 2500.0),
            ],
            plan,
        }
    }
}

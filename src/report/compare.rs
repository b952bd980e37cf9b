//! A comparison's figures in words, the same in every format: a row's cells, a
//! value with its σ (`1.32 ± 0.04 ms`), a ratio, a geometric mean. The arithmetic is
//! `suite::compare`'s; the layouts are text.rs, markdown.rs and html.rs (its charts
//! in charts.rs).
//!
//! One convention everywhere: a significant difference is a factor of at least 1
//! with its direction — `1.25x slower` (B takes 1.25 times as long, or does 1/1.25
//! as much), `2.13x faster` — never `0.80x slower`. Any other verdict comes first,
//! with the plain ratio B/A after a × (`no significant difference (×0.98 ± 0.04)`).

use super::{metric_label, thousands};
use crate::model::Unit;
use crate::suite::compare::{Geomean, Ratio, Row, Stat, significant};

pub use crate::suite::compare::letter;

/// area, test, metric, threads, then per group its value and (after A) its ratio.
pub fn cells(row: &Row) -> Vec<String> {
    let k = &row.key;
    let mut metric = metric_label(&k.metric);
    if let Some(v) = k.variant.as_ref().filter(|v| Some(*v) != row.test.as_ref()) {
        metric += &format!(" ({v})");
    }
    if let Some(ws) = &k.working_set {
        metric += &format!(" [{ws}]");
    }
    let mut cells = vec![
        k.area.clone(),
        row.test.clone().unwrap_or_default(),
        metric,
        k.threads.map(|t| t.to_string()).unwrap_or_default(),
    ];
    for (i, value) in row.values.iter().enumerate() {
        cells.push(
            value
                .as_ref()
                .map(|s| stat_text(s, row.unit))
                .unwrap_or_else(|| "–".into()),
        );
        if i > 0 {
            cells.push(row.ratios[i].as_ref().map(ratio_text).unwrap_or_default());
        }
    }
    cells
}

/// `772.42 events/s`, `1.32 ± 0.04 ms`: σ in the mean's unit.
pub fn stat_text(s: &Stat, unit: Unit) -> String {
    let (div, suffix) = scale(unit, s.mean);
    let decimals = decimals(unit, s.mean / div);
    let number = |v: f64| thousands(v / div, decimals);
    let mut text = number(s.mean);
    if let Some(sd) = s.stddev {
        text += &format!(" ± {}", number(sd));
    }
    if !suffix.is_empty() {
        text += &format!(" {suffix}");
    }
    text
}

/// `2.13 ± 0.02x faster`, `1.11x slower`; `same (×1.00)`, `not judged (×0.97)`.
pub fn ratio_text(r: &Ratio) -> String {
    let relative = r.uncertainty.map(|u| u / r.ratio);
    if significant(&r.verdict) {
        format!("{}x {}", figure(r.factor, relative), r.verdict)
    } else {
        format!("{} (×{})", r.verdict, figure(r.ratio, relative))
    }
}

/// `1.52 ± 0.04x better (6 metrics)`, `not judged (×0.99, 9 metrics)`.
pub fn geomean_text(g: &Geomean) -> String {
    let relative = g.uncertainty.map(|u| u / g.speedup);
    let plural = if g.metrics == 1 { "" } else { "s" };
    if significant(&g.verdict) {
        let f = figure(g.factor, relative);
        format!("{f}x {} ({} metric{plural})", g.verdict, g.metrics)
    } else {
        let f = figure(g.speedup, relative);
        format!("{} (×{f}, {} metric{plural})", g.verdict, g.metrics)
    }
}

/// `2.13 ± 0.02`: the value with its σ (relative to it), 3 decimals below 0.1.
fn figure(value: f64, relative: Option<f64>) -> String {
    let d = if value < 0.1 { 3 } else { 2 };
    match relative {
        Some(rel) => format!("{value:.d$} ± {:.d$}", value * rel),
        None => format!("{value:.d$}"),
    }
}

/// The divisor and unit name that keep a value readable (as `units::format_*` do).
fn scale(unit: Unit, v: f64) -> (f64, &'static str) {
    let a = v.abs();
    match unit {
        Unit::EventsPerSec => (1.0, "events/s"),
        Unit::OpsPerSec => (1.0, "ops/s"),
        Unit::BytesPerSec if a >= 10.0 * (1u64 << 30) as f64 => ((1u64 << 30) as f64, "GiB/s"),
        Unit::BytesPerSec => ((1u64 << 20) as f64, "MiB/s"),
        Unit::Nanoseconds if a < 1e3 => (1.0, "ns"),
        Unit::Nanoseconds if a < 1e6 => (1e3, "µs"),
        Unit::Nanoseconds if a < 1e9 => (1e6, "ms"),
        Unit::Nanoseconds | Unit::Seconds => (if unit == Unit::Seconds { 1.0 } else { 1e9 }, "s"),
        Unit::Bytes if a >= (1u64 << 30) as f64 => ((1u64 << 30) as f64, "GiB"),
        Unit::Bytes if a >= (1u64 << 20) as f64 => ((1u64 << 20) as f64, "MiB"),
        Unit::Bytes => (1.0, "B"),
        Unit::Count | Unit::Ratio => (1.0, ""),
    }
}

fn decimals(unit: Unit, scaled: f64) -> usize {
    match unit {
        Unit::Ratio => 3,
        Unit::Count => 0,
        _ if scaled.abs() >= 10_000.0 => 0,
        _ => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(mean: f64, stddev: Option<f64>) -> Stat {
        Stat {
            n: if stddev.is_some() { 3 } else { 1 },
            mean,
            stddev,
            min: mean,
            max: mean,
            noise: None,
        }
    }

    #[test]
    fn values_keep_sigma_in_the_mean_unit() {
        assert_eq!(
            stat_text(&stat(772.42, None), Unit::EventsPerSec),
            "772.42 events/s"
        );
        assert_eq!(
            stat_text(&stat(1.32e6, Some(4.0e4)), Unit::Nanoseconds),
            "1.32 ± 0.04 ms"
        );
        assert_eq!(
            stat_text(&stat(36_696.4, Some(120.0)), Unit::OpsPerSec),
            "36,696 ± 120 ops/s"
        );
        assert_eq!(
            stat_text(&stat(6334.09 * 1048576.0, None), Unit::BytesPerSec),
            "6,334.09 MiB/s"
        );
    }

    #[test]
    fn ratios_read_like_hyperfine() {
        let r = Ratio {
            ratio: 2.178,
            uncertainty: Some(0.031),
            speedup: 2.178,
            factor: 2.178,
            verdict: "faster".into(),
        };
        assert_eq!(ratio_text(&r), "2.18 ± 0.03x faster");
        let r = Ratio {
            ratio: 0.35,
            uncertainty: None,
            speedup: 1.0 / 0.35,
            factor: 1.0 / 0.35,
            verdict: "faster".into(),
        };
        assert_eq!(ratio_text(&r), "2.86x faster");
    }

    /// Three quiet repeats a side, so the verdict is judged.
    fn repeats(mean: f64) -> Stat {
        Stat::of(&[mean * 0.999, mean, mean * 1.001]).unwrap()
    }

    #[test]
    fn a_factor_below_one_is_never_called_slower_or_faster() {
        use crate::model::Better;
        use crate::suite::compare::Geomean;
        // B does 0.9 of A's events: B takes 1.11 times as long.
        let r = Ratio::of(
            &repeats(1000.0),
            &repeats(900.0),
            Better::Higher,
            Unit::EventsPerSec,
        )
        .unwrap();
        assert_eq!(ratio_text(&r), "1.11 ± 0.00x slower");
        // B's latency is 0.47 of A's: 2.13 times as fast.
        let r = Ratio::of(
            &repeats(1e6),
            &repeats(0.47e6),
            Better::Lower,
            Unit::Nanoseconds,
        )
        .unwrap();
        assert_eq!(ratio_text(&r), "2.13 ± 0.00x faster");
        let worse = Ratio::of(
            &repeats(1000.0),
            &repeats(800.0),
            Better::Higher,
            Unit::Ratio,
        )
        .unwrap();
        let g = Geomean::of(&[&worse]).unwrap();
        assert_eq!(geomean_text(&g), "1.25 ± 0.00x worse (1 metric)");
        // Inside the noise the ratio is given as it is, after the verdict.
        let close = Ratio::of(
            &Stat::of(&[1000.0, 1100.0, 900.0]).unwrap(),
            &Stat::of(&[980.0, 1080.0, 880.0]).unwrap(),
            Better::Higher,
            Unit::EventsPerSec,
        )
        .unwrap();
        assert_eq!(
            ratio_text(&close),
            "no significant difference (×0.98 ± 0.14)"
        );
    }
}

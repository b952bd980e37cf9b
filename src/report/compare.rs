//! A comparison's figures in words, the same in every format: a row's cells, a
//! value with its σ (`1.32 ± 0.04 ms`), a ratio (`2.18x faster`), a geometric mean.
//! The arithmetic is `suite::compare`'s; the layouts are text.rs, markdown.rs and
//! html.rs (its charts in charts.rs).

use super::{metric_label, thousands};
use crate::model::Unit;
use crate::suite::compare::{Geomean, Ratio, Row, Stat};

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

/// `2.18x faster`, `0.47 ± 0.02x faster`.
pub fn ratio_text(r: &Ratio) -> String {
    let d = if r.ratio < 0.1 { 3 } else { 2 };
    let mut text = format!("{:.*}", d, r.ratio);
    if let Some(u) = r.uncertainty {
        text += &format!(" ± {u:.d$}");
    }
    format!("{text}x {}", r.verdict)
}

/// `1.52 ± 0.04x better (6 metrics)`.
pub fn geomean_text(g: &Geomean) -> String {
    let mut text = format!("{:.2}", g.speedup);
    if let Some(u) = g.uncertainty {
        text += &format!(" ± {u:.2}");
    }
    let plural = if g.metrics == 1 { "" } else { "s" };
    format!("{text}x {} ({} metric{plural})", g.verdict, g.metrics)
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
            verdict: "faster".into(),
        };
        assert_eq!(ratio_text(&r), "2.18 ± 0.03x faster");
        let r = Ratio {
            ratio: 0.35,
            uncertainty: None,
            speedup: 1.0 / 0.35,
            verdict: "faster".into(),
        };
        assert_eq!(ratio_text(&r), "0.35x faster");
    }
}

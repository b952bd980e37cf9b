//! The SVG charts the pages draw, by hand (no JavaScript, no fonts, nothing
//! fetched): the pieces every chart is drawn with (scale, grid, ticks, axis label,
//! figure), so one chart style lives here, and the charts made of them: line charts
//! of timelines, latency percentile curves, a comparison's bars and its log-scale
//! chart of geometric means, a soak's timeline.

use super::compare::{geomean_text, letter, ratio_text, stat_text};
use super::soak::{figure_head, figure_text, scaled};
use super::{metric_label, threads_text};
use crate::model::{Better, Latency, Outcome, Unit};
use crate::store::outcome_test;
use crate::store::soak::{Figure, SliceStatus, Soak};
use crate::suite::compare::{Comparison, Group, Row};
use crate::suite::soak::{Summary, utc};
use std::fmt::Write;

pub(crate) const WIDTH: f64 = 720.0;
pub(crate) const HEIGHT: f64 = 240.0;
pub(crate) const MARGIN: (f64, f64, f64, f64) = (56.0, 16.0, 24.0, 36.0); // left, right, top, bottom
/// Series and group colours, in order (the compare page uses the same).
pub(crate) const COLOURS: [&str; 6] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
];

/// Text made safe inside HTML and SVG, attributes included.
pub(crate) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// 1, 2, 5 × 10^k steps that give about five ticks over `max`.
pub(crate) fn nice_step(max: f64) -> f64 {
    if max <= 0.0 || !max.is_finite() {
        return 1.0;
    }
    let raw = max / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag)
}

/// A tick label: `12.5k`, `2.5M`, `150`.
pub(crate) fn short(v: f64) -> String {
    let a = v.abs();
    let s = if a >= 1e9 {
        format!("{:.3}G", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.3}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.1}k", v / 1e3)
    } else if a >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    };
    // 1.500k -> 1.5k, 2.00 -> 2; whole numbers keep their zeros.
    match s.find('.') {
        Some(dot) => {
            let unit: String = s[dot..].chars().filter(|c| c.is_alphabetic()).collect();
            let digits = s[..s.len() - unit.len()]
                .trim_end_matches('0')
                .trim_end_matches('.');
            format!("{digits}{unit}")
        }
        None => s,
    }
}

/// A line chart: each series is (name, points); y from 0; x ticks at the first,
/// middle and last x.
pub fn line_chart(title: &str, x_label: &str, series: &[(String, Vec<(f64, f64)>)]) -> String {
    line_chart_ticks(title, x_label, series, &[])
}

/// Latency by percentile (from `percentile_curve`), x ticks named p50, p90, p99, ...
pub fn percentile_chart(title: &str, series: &[(String, Vec<(f64, f64)>)]) -> String {
    line_chart_ticks(
        title,
        "percentile (log scale towards the tail)",
        series,
        &[
            (0.0, "p0"),
            (-(0.5f64.log10()), "p50"),
            (1.0, "p90"),
            (2.0, "p99"),
            (3.0, "p99.9"),
            (4.0, "p99.99"),
            (5.0, "max"),
        ],
    )
}

/// A line chart with x ticks where given (those inside the data's range), else at
/// the first, middle and last x.
pub fn line_chart_ticks(
    title: &str,
    x_label: &str,
    series: &[(String, Vec<(f64, f64)>)],
    x_ticks: &[(f64, &str)],
) -> String {
    let points: Vec<&(f64, f64)> = series.iter().flat_map(|s| s.1.iter()).collect();
    if points.is_empty() {
        return String::new();
    }
    let x_min = points.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let x_max = points.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
    let y_max = points.iter().map(|p| p.1).fold(0.0, f64::max);
    let (step, y_top) = y_scale(y_max);
    let (l, t, pw, ph) = plot_area();
    let sx = |x: f64| {
        if x_max > x_min {
            l + (x - x_min) / (x_max - x_min) * pw
        } else {
            l + pw / 2.0
        }
    };
    let sy = |y: f64| t + ph - y / y_top * ph;
    let mut svg = svg_open(title);
    y_grid(&mut svg, step, y_top, sy);
    let ticks: Vec<(f64, String)> = if x_ticks.is_empty() {
        [x_min, (x_min + x_max) / 2.0, x_max]
            .into_iter()
            .map(|x| (x, short(x)))
            .collect()
    } else {
        x_ticks
            .iter()
            .filter(|(x, _)| *x >= x_min - 1e-9 && *x <= x_max + 1e-9)
            .map(|(x, name)| (*x, name.to_string()))
            .collect()
    };
    for (x, name) in ticks {
        x_tick(&mut svg, sx(x), &name);
    }
    x_axis_label(&mut svg, x_label);
    let mut legend_x = l + 8.0;
    for (i, (name, pts)) in series.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let path: Vec<String> = pts
            .iter()
            .map(|(x, y)| format!("{:.1},{:.1}", sx(*x), sy(*y)))
            .collect();
        let _ = write!(
            svg,
            r#"<polyline fill="none" stroke="{colour}" stroke-width="2" points="{}"><title>{}</title></polyline>"#,
            path.join(" "),
            esc(name)
        );
        if pts.len() == 1 {
            let _ = write!(
                svg,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{colour}"/>"#,
                sx(pts[0].0),
                sy(pts[0].1)
            );
        }
        let _ = write!(
            svg,
            r#"<rect x="{:.1}" y="{}" width="10" height="10" fill="{colour}"/><text x="{:.1}" y="{}" class="legend">{}</text>"#,
            legend_x,
            t - 14.0,
            legend_x + 14.0,
            t - 5.0,
            esc(name)
        );
        // The next key after this one's text (about 6.8 units a character at 12 px).
        legend_x += 14.0 + 6.8 * name.chars().count() as f64 + 18.0;
    }
    figure(title, svg)
}

// The pieces every chart is drawn with (the soak page's timeline uses them too), so
// one chart style lives here.

/// The y scale from 0 for values up to `y_max`: the tick step and the round top.
pub(crate) fn y_scale(y_max: f64) -> (f64, f64) {
    let step = nice_step(y_max);
    (step, (y_max / step).ceil().max(1.0) * step)
}

/// The plot area inside the margins: left, top, width, height.
pub(crate) fn plot_area() -> (f64, f64, f64, f64) {
    let (l, r, t, b) = MARGIN;
    (l, t, WIDTH - l - r, HEIGHT - t - b)
}

/// The opening `<svg>` tag of a chart named `title`.
pub(crate) fn svg_open(title: &str) -> String {
    format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{}" class="chart">"#,
        esc(title)
    )
}

/// Horizontal grid lines with their y tick labels, from 0 to `y_top` every `step`;
/// `sy` maps a value to its y coordinate.
pub(crate) fn y_grid(svg: &mut String, step: f64, y_top: f64, sy: impl Fn(f64) -> f64) {
    let (l, _, pw, _) = plot_area();
    let mut y = 0.0;
    while y <= y_top + step / 2.0 {
        let _ = write!(
            svg,
            r##"<line x1="{l}" x2="{}" y1="{py:.1}" y2="{py:.1}" stroke="#e5e5e5"/><text x="{}" y="{:.1}" text-anchor="end" class="tick">{}</text>"##,
            l + pw,
            l - 6.0,
            sy(y) + 4.0,
            short(y),
            py = sy(y)
        );
        y += step;
    }
}

/// A tick label under the x axis at coordinate `x`.
pub(crate) fn x_tick(svg: &mut String, x: f64, label: &str) {
    let (_, t, _, ph) = plot_area();
    let _ = write!(
        svg,
        r#"<text x="{x:.1}" y="{}" text-anchor="middle" class="tick">{}</text>"#,
        t + ph + 16.0,
        esc(label)
    );
}

/// The x axis' name, centred under its tick labels.
pub(crate) fn x_axis_label(svg: &mut String, label: &str) {
    let (l, _, pw, _) = plot_area();
    let _ = write!(
        svg,
        r#"<text x="{:.1}" y="{}" text-anchor="middle" class="axis">{}</text>"#,
        l + pw / 2.0,
        HEIGHT - 4.0,
        esc(label)
    );
}

/// Closes the chart's `<svg>` and puts it in a figure captioned `title`.
pub(crate) fn figure(title: &str, mut svg: String) -> String {
    svg.push_str("</svg>");
    format!(
        "<figure><figcaption>{}</figcaption>{svg}</figure>",
        esc(title)
    )
}

/// Latency at each percentile, from the stored histogram buckets (value, count).
pub(crate) fn percentile_curve(lat: &Latency) -> Vec<(f64, f64)> {
    // x = -log10(1 - p): 0 at p0, 1 at p90, 2 at p99, 3 at p99.9; the maximum at 5.
    let x_of = |p: f64| {
        if p >= 1.0 {
            5.0
        } else {
            (-(1.0 - p).log10()).min(5.0)
        }
    };
    let total: u64 = lat.buckets.iter().map(|b| b.1).sum();
    if total == 0 {
        // No buckets kept: the percentiles the outcome lists.
        return lat
            .percentiles
            .iter()
            .map(|p| (x_of(p.p / 100.0), p.ns / 1e3))
            .collect();
    }
    let mut seen = 0u64;
    let mut out = Vec::new();
    for (value, count) in &lat.buckets {
        seen += count;
        // The top bucket can stand above the max (and the first below the min).
        out.push((x_of(seen as f64 / total as f64), lat.bounded(*value) / 1e3));
    }
    out
}

/// Timeline series grouped by unit: rates of operations apart from bytes.
/// Named point series, and charts of them under a unit.
type Series = (String, Vec<(f64, f64)>);
type Chart = (String, Vec<Series>);

/// A sample value that says which phase a sample belongs to rather than what it
/// measured (`cpu` runs 1 thread, then all): series are split by it, never drawn.
const PHASE_KEY: &str = "threads";

pub(crate) fn timelines(o: &Outcome) -> Vec<Chart> {
    let mut keys: Vec<&String> = o
        .series
        .iter()
        .flat_map(|s| s.values.keys())
        .filter(|k| *k != PHASE_KEY)
        .collect();
    keys.sort();
    keys.dedup();
    let mut phases: Vec<Option<u64>> = Vec::new();
    let phase_of = |s: &crate::model::Sample| s.values.get(PHASE_KEY).map(|t| *t as u64);
    for s in &o.series {
        if !phases.contains(&phase_of(s)) {
            phases.push(phase_of(s));
        }
    }
    let mut groups: Vec<Chart> = Vec::new();
    for key in keys {
        for phase in &phases {
            let pts: Vec<(f64, f64)> = o
                .series
                .iter()
                .filter(|s| phase_of(s) == *phase)
                .filter_map(|s| s.values.get(key).map(|v| (s.at_s, *v)))
                .collect();
            if pts.is_empty() || pts.iter().all(|p| p.1 == 0.0) {
                continue;
            }
            let (group, scale) = if key.contains("bytes") {
                ("MB/s", 1e-6)
            } else if key.contains("latency") || key.ends_with("_ns") {
                ("latency (µs)", 1e-3)
            } else {
                ("per second", 1.0)
            };
            let pts = pts.into_iter().map(|(x, y)| (x, y * scale)).collect();
            let name = match phase {
                Some(t) => format!("{}, {}", metric_label(key), threads_text(*t as usize)),
                None => metric_label(key),
            };
            match groups.iter_mut().find(|g| g.0 == group) {
                Some(g) => g.1.push((name, pts)),
                None => groups.push((group.to_string(), vec![(name, pts)])),
            }
        }
    }
    groups
}

// A comparison's charts.

const BAR_H: f64 = 14.0;
const GAP: f64 = 4.0;
/// Where bars start (after the group letter) and their longest length.
const BAR_X: f64 = 26.0;
const BAR_MAX: f64 = 340.0;
/// Charts of latency curves at most, so a page of many disk tests stays readable.
const MAX_CURVES: usize = 16;

fn colour(i: usize) -> &'static str {
    COLOURS[i % COLOURS.len()]
}

/// The text colour of a verdict: green when better, brown when worse, grey otherwise.
pub(crate) fn verdict_class(verdict: &str) -> &'static str {
    match verdict {
        "faster" | "better" => "better",
        "slower" | "worse" => "worse",
        _ => "same",
    }
}

fn verdict_fill(verdict: &str) -> &'static str {
    match verdict_class(verdict) {
        "better" => "#1a7f37",
        "worse" => "#8a4b00",
        _ => "#5f6b76",
    }
}

/// A small square of a group's colour (SVG, so it counts as chart, not text).
pub(crate) fn swatch(i: usize) -> String {
    format!(
        r#"<svg width="12" height="12" viewBox="0 0 12 12" style="vertical-align:-1px"><rect width="12" height="12" rx="2" fill="{}"/></svg>"#,
        colour(i)
    )
}

/// `read latency p99 (randread) [DRAM] · 2 threads`.
fn row_label(row: &Row) -> String {
    let k = &row.key;
    let mut label = metric_label(&k.metric);
    if let Some(v) = k.variant.as_ref().filter(|v| Some(*v) != row.test.as_ref()) {
        label += &format!(" ({v})");
    }
    if let Some(ws) = &k.working_set {
        label += &format!(" [{ws}]");
    }
    if let Some(t) = k.threads {
        label += &format!(" · {t} thread{}", if t == 1 { "" } else { "s" });
    }
    label
}

/// One chart for the rows of one test: per metric a bar per group.
pub(crate) fn bars(rows: &[&Row], groups: usize) -> String {
    let mut y = 4.0;
    let mut body = String::new();
    for row in rows {
        let direction = match row.better {
            Better::Higher => "↑ higher is better",
            Better::Lower => "↓ lower is better",
        };
        let _ = write!(
            body,
            r#"<text x="0" y="{:.1}" class="label">{}</text><text x="{WIDTH}" y="{:.1}" text-anchor="end" class="sub">{direction}</text>"#,
            y + 13.0,
            esc(&row_label(row)),
            y + 13.0,
        );
        y += 20.0;
        let top = row
            .values
            .iter()
            .flatten()
            .map(|s| s.mean + s.stddev.unwrap_or(0.0))
            .fold(0.0, f64::max);
        let scale = |v: f64| {
            if top > 0.0 {
                (v / top * BAR_MAX).clamp(0.0, BAR_MAX)
            } else {
                0.0
            }
        };
        for (i, value) in row.values.iter().enumerate().take(groups) {
            let _ = write!(
                body,
                r#"<text x="0" y="{:.1}" class="sub">{}</text>"#,
                y + 11.0,
                letter(i)
            );
            let Some(s) = value else {
                let _ = write!(
                    body,
                    r#"<text x="{BAR_X}" y="{:.1}" class="sub">not measured</text>"#,
                    y + 11.0
                );
                y += BAR_H + GAP;
                continue;
            };
            let w = scale(s.mean).max(1.0);
            let _ = write!(
                body,
                r#"<rect x="{BAR_X}" y="{y:.1}" width="{w:.1}" height="{BAR_H}" rx="2" fill="{}"><title>{} {}</title></rect>"#,
                colour(i),
                letter(i),
                esc(&stat_text(s, row.unit))
            );
            let mut end = BAR_X + w;
            if let Some(sd) = s.stddev.filter(|sd| *sd > 0.0) {
                let (lo, hi) = (BAR_X + scale(s.mean - sd), BAR_X + scale(s.mean + sd));
                let mid = y + BAR_H / 2.0;
                let _ = write!(
                    body,
                    r##"<path d="M{lo:.1} {mid:.1}H{hi:.1}M{lo:.1} {:.1}V{:.1}M{hi:.1} {:.1}V{:.1}" stroke="#1d2329" stroke-width="1.2" fill="none"/>"##,
                    mid - 4.0,
                    mid + 4.0,
                    mid - 4.0,
                    mid + 4.0
                );
                end = end.max(hi);
            }
            let _ = write!(
                body,
                r#"<text x="{:.1}" y="{:.1}" class="value">{}</text>"#,
                end + 6.0,
                y + 11.0,
                esc(&stat_text(s, row.unit))
            );
            if let Some(r) = row.ratios.get(i).and_then(|r| r.as_ref()) {
                let _ = write!(
                    body,
                    r#"<text x="{WIDTH}" y="{:.1}" text-anchor="end" class="value" style="font-weight:600;fill:{}">{}</text>"#,
                    y + 11.0,
                    verdict_fill(&r.verdict),
                    esc(&ratio_text(r))
                );
            }
            y += BAR_H + GAP;
        }
        y += 10.0;
    }
    format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {y:.0}" class="chart" role="img">{body}</svg>"#
    )
}

/// Ticks for a log axis that reaches `factor` either way: few enough to read.
fn log_ticks(factor: f64) -> Vec<f64> {
    let ticks: &[f64] = if factor <= 2.0 {
        &[0.5, 0.8, 1.0, 1.25, 2.0]
    } else if factor <= 5.0 {
        &[0.2, 0.5, 1.0, 2.0, 5.0]
    } else if factor <= 20.0 {
        &[0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0]
    } else {
        &[0.01, 0.1, 1.0, 10.0, 100.0]
    };
    ticks
        .iter()
        .copied()
        .filter(|t| t.ln().abs() <= factor.ln() + 1e-9)
        .collect()
}

/// Per area the geometric mean of each group's speedups over A, as bars either side
/// of 1x on a log scale (right: better than A).
pub(crate) fn geomean_chart(c: &Comparison) -> String {
    let groups = c.groups.len();
    let largest = c
        .areas
        .iter()
        .flat_map(|a| a.geomean.iter().flatten())
        .map(|g| {
            let u = g.uncertainty.unwrap_or(0.0);
            g.speedup.max(1.0 / g.speedup).max(g.speedup + u)
        })
        .fold(1.0, f64::max);
    let factor = [1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 10.0, 20.0, 50.0, 100.0]
        .into_iter()
        .find(|f| *f >= largest * 1.05)
        .unwrap_or(largest * 1.1);
    let (left, right) = (110.0, WIDTH - 10.0);
    let centre = (left + right) / 2.0;
    let half = (right - left) / 2.0;
    let x_of = |v: f64| centre + (v.max(1e-9).ln() / factor.ln()).clamp(-1.0, 1.0) * half;
    let mut body = String::new();
    let mut y = 22.0;
    let _ = write!(
        body,
        r#"<text x="{:.1}" y="12" text-anchor="end" class="sub">← worse than A</text><text x="{:.1}" y="12" class="sub">better than A →</text>"#,
        centre - 8.0,
        centre + 8.0
    );
    let rows_top = y;
    for area in &c.areas {
        let _ = write!(
            body,
            r#"<text x="0" y="{:.1}" class="label" font-weight="600">{}</text>"#,
            y + 11.0,
            esc(&area.area)
        );
        for (i, g) in area.geomean.iter().enumerate().skip(1).take(groups) {
            let _ = write!(
                body,
                r#"<text x="{:.1}" y="{:.1}" class="sub" text-anchor="end">{}</text>"#,
                left - 8.0,
                y + 11.0,
                letter(i)
            );
            if let Some(g) = g {
                let x = x_of(g.speedup);
                let (x0, w) = if x >= centre {
                    (centre, x - centre)
                } else {
                    (x, centre - x)
                };
                let _ = write!(
                    body,
                    r#"<rect x="{x0:.1}" y="{y:.1}" width="{:.1}" height="{BAR_H}" rx="2" fill="{}"><title>{} vs A: {}</title></rect>"#,
                    w.max(1.5),
                    colour(i),
                    letter(i),
                    esc(&geomean_text(g))
                );
                let mut far = x;
                if let Some(u) = g.uncertainty.filter(|u| *u > 0.0) {
                    let (lo, hi) = (x_of(g.speedup - u), x_of(g.speedup + u));
                    let mid = y + BAR_H / 2.0;
                    let _ = write!(
                        body,
                        r##"<path d="M{lo:.1} {mid:.1}H{hi:.1}M{lo:.1} {:.1}V{:.1}M{hi:.1} {:.1}V{:.1}" stroke="#1d2329" stroke-width="1.2" fill="none"/>"##,
                        mid - 4.0,
                        mid + 4.0,
                        mid - 4.0,
                        mid + 4.0
                    );
                    far = if x >= centre {
                        far.max(hi)
                    } else {
                        far.min(lo)
                    };
                }
                // The figure on the bar's far side, or inside the plot when there is no room.
                let text = esc(&geomean_text(g));
                let room = text.chars().count() as f64 * 6.4;
                let (tx, anchor) = if x >= centre {
                    if far + 6.0 + room <= WIDTH {
                        (far + 6.0, "start")
                    } else {
                        (centre - 6.0, "end")
                    }
                } else if far - 6.0 - room >= left {
                    (far - 6.0, "end")
                } else {
                    (centre + 6.0, "start")
                };
                let _ = write!(
                    body,
                    r#"<text x="{tx:.1}" y="{:.1}" text-anchor="{anchor}" class="value" style="font-weight:600;fill:{}">{text}</text>"#,
                    y + 11.0,
                    verdict_fill(&g.verdict)
                );
            } else {
                let _ = write!(
                    body,
                    r#"<text x="{:.1}" y="{:.1}" class="sub">no common metric</text>"#,
                    centre + 6.0,
                    y + 11.0
                );
            }
            y += BAR_H + GAP;
        }
        y += 8.0;
    }
    // The axis: grid lines at the ticks, 1x darker.
    let mut axis = String::new();
    for t in log_ticks(factor) {
        let x = x_of(t);
        let stroke = if t == 1.0 { "#2f3b48" } else { "#e3e7eb" };
        let _ = write!(
            axis,
            r#"<line x1="{x:.1}" x2="{x:.1}" y1="{rows_top:.1}" y2="{:.1}" stroke="{stroke}"/><text x="{x:.1}" y="{:.1}" text-anchor="middle" class="tick">{}x</text>"#,
            y - 4.0,
            y + 10.0,
            short(t)
        );
    }
    format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {:.0}" class="chart" role="img" aria-label="geometric mean of speedups per area">{axis}{body}</svg>"#,
        y + 16.0
    )
}

/// Per test, the latency percentile curve of each group's first run, laid over each other.
pub(crate) fn latency_overlays(groups: &[Group]) -> Vec<String> {
    // (workload, test) in first-seen order.
    let mut keys: Vec<(String, Option<String>)> = Vec::new();
    for g in groups {
        for run in &g.runs {
            for o in &run.outcomes {
                let k = (o.workload.clone(), outcome_test(o));
                if o.latency.as_ref().is_some_and(|l| l.count > 0) && !keys.contains(&k) {
                    keys.push(k);
                }
            }
        }
    }
    let mut charts = Vec::new();
    for (workload, test) in keys.into_iter().take(MAX_CURVES) {
        let mut series = Vec::new();
        for (i, g) in groups.iter().enumerate() {
            let first = g.runs.iter().flat_map(|r| &r.outcomes).find(|o| {
                o.workload == workload
                    && outcome_test(o) == test
                    && o.latency.as_ref().is_some_and(|l| l.count > 0)
            });
            // The legend has room for about 20 characters per group.
            let mut name = format!("{} {}", letter(i), g.name);
            if name.chars().count() > 20 {
                name = name.chars().take(19).collect::<String>() + "…";
            }
            // A group without the test keeps an empty series, so colours stay per group.
            let curve = first
                .and_then(|o| o.latency.as_ref())
                .map(percentile_curve)
                .unwrap_or_default();
            series.push((name, curve));
        }
        if series.iter().filter(|s| !s.1.is_empty()).count() < 2 {
            continue;
        }
        let what = match &test {
            Some(t) => format!("{workload} · {t}"),
            None => workload.clone(),
        };
        charts.push(percentile_chart(
            &format!("Latency (µs) by percentile, {what}"),
            &series,
        ));
    }
    charts
}

// A soak's chart.

/// The timeline chart: one point per measured slice (red when flagged), the median
/// (grey) and the threshold (dashed red), missed and failed slices as marks on the
/// x axis.
pub(crate) fn soak_timeline(soak: &Soak, summary: &Summary) -> String {
    let unit = summary.unit.unwrap_or(Unit::Count);
    let points: Vec<(u32, &Figure)> = soak
        .slices
        .iter()
        .filter(|s| s.status == SliceStatus::Done)
        .filter_map(|s| s.figure.as_ref().map(|f| (s.seq, f)))
        .filter(|(_, f)| Some(&f.metric) == summary.metric.as_ref())
        .collect();
    let stats = summary.stats.as_ref();
    let y_max = points
        .iter()
        .map(|p| scaled(p.1.value, unit))
        .chain(stats.map(|s| scaled(s.threshold_value, unit)))
        .fold(0.0, f64::max);
    let (step, y_top) = y_scale(y_max);
    let (l, t, pw, ph) = plot_area();
    let last = summary.slices_planned.max(1) as f64;
    // Slice numbers 1..=n across the width.
    let sx = |seq: u32| {
        if last > 1.0 {
            l + seq as f64 / (last - 1.0) * pw
        } else {
            l + pw / 2.0
        }
    };
    let sy = |y: f64| t + ph - (y / y_top).clamp(0.0, 1.0) * ph;
    let head = figure_head(summary.metric.as_deref(), summary.unit);
    let title = format!("{head} per slice");
    let mut svg = svg_open(&title);
    y_grid(&mut svg, step, y_top, sy);
    let total = summary.slices_planned.max(1);
    let mut ticks = vec![0, (total - 1) / 2, total - 1];
    ticks.dedup();
    for seq in ticks {
        x_tick(&mut svg, sx(seq), &(seq + 1).to_string());
    }
    x_axis_label(
        &mut svg,
        &format!(
            "slice (every {}, from {} UTC)",
            super::soak::dur(soak.plan.every_ms),
            utc(soak.plan.start_ms)
        ),
    );
    if let Some(s) = stats {
        let _ = write!(
            svg,
            r##"<line class="median" x1="{l}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#888"><title>median {}</title></line><text x="{}" y="{:.1}" text-anchor="end" class="legend">median</text>"##,
            l + pw,
            esc(&figure_text(s.median, unit)),
            l + pw - 4.0,
            sy(scaled(s.median, unit)) - 4.0,
            y = sy(scaled(s.median, unit))
        );
        let _ = write!(
            svg,
            r##"<line class="threshold" x1="{l}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#d62728" stroke-dasharray="6 4"><title>threshold: {pct:.0} % of the median = {}</title></line><text x="{}" y="{:.1}" text-anchor="end" class="legend" style="fill:#d62728">{pct:.0} % of the median</text>"##,
            l + pw,
            esc(&figure_text(s.threshold_value, unit)),
            l + pw - 4.0,
            sy(scaled(s.threshold_value, unit)) + 14.0,
            pct = s.threshold_percent,
            y = sy(scaled(s.threshold_value, unit))
        );
    }
    // The line breaks where a slice did not measure: no trend is drawn across a gap.
    let mut runs: Vec<Vec<String>> = Vec::new();
    let mut previous: Option<u32> = None;
    for (seq, f) in &points {
        if previous.is_none_or(|p| p + 1 != *seq) {
            runs.push(Vec::new());
        }
        previous = Some(*seq);
        if let Some(run) = runs.last_mut() {
            run.push(format!("{:.1},{:.1}", sx(*seq), sy(scaled(f.value, unit))));
        }
    }
    for run in runs.iter().filter(|r| r.len() > 1) {
        let _ = write!(
            svg,
            r##"<polyline fill="none" stroke="#1f77b4" stroke-width="2" points="{}"/>"##,
            run.join(" ")
        );
    }
    let flagged = |seq: u32| stats.is_some_and(|s| s.flagged.contains(&seq));
    for (seq, f) in &points {
        let bad = flagged(*seq);
        let _ = write!(
            svg,
            r##"<circle class="slice{}" data-seq="{}" cx="{:.1}" cy="{:.1}" r="{}" fill="{}"><title>slice {}, {} UTC: {} {}{}</title></circle>"##,
            if bad { " flagged" } else { "" },
            seq + 1,
            sx(*seq),
            sy(scaled(f.value, unit)),
            if bad { 5 } else { 3 },
            if bad { "#d62728" } else { "#1f77b4" },
            seq + 1,
            esc(&utc(soak.plan.due_ms(*seq))),
            esc(&figure_text(f.value, unit)),
            esc(&head),
            if bad { " (flagged)" } else { "" }
        );
    }
    for s in soak.slices.iter().filter(|s| s.status != SliceStatus::Done) {
        let x = sx(s.seq);
        let _ = write!(
            svg,
            r##"<path class="{}" d="M{:.1},{:.1} l-4,-8 h8 z" fill="#999"><title>slice {}: {}{}</title></path>"##,
            s.status.as_str(),
            x,
            t + ph,
            s.seq + 1,
            s.status.as_str(),
            esc(&s
                .note
                .as_ref()
                .map(|n| format!(", {n}"))
                .unwrap_or_default())
        );
    }
    figure(&title, svg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Sample;

    #[test]
    fn timelines_split_by_thread_phase() {
        let mut o = Outcome::new(
            "disk",
            serde_json::json!({}),
            crate::host::HostInfo::default(),
        );
        o.series = [1.0, 2.0]
            .iter()
            .flat_map(|&threads| {
                (1..=3).map(move |i| Sample {
                    at_s: i as f64,
                    span_s: 1.0,
                    values: [
                        ("events_per_sec".to_string(), 100.0 * threads),
                        ("threads".to_string(), threads),
                    ]
                    .into_iter()
                    .collect(),
                })
            })
            .collect();
        let charts = timelines(&o);
        assert_eq!(charts.len(), 1);
        let names: Vec<&str> = charts[0].1.iter().map(|s| s.0.as_str()).collect();
        assert_eq!(
            names,
            [
                "events per second, 1 thread",
                "events per second, 2 threads"
            ]
        );
        assert_eq!(
            charts[0].1[1].1,
            vec![(1.0, 200.0), (2.0, 200.0), (3.0, 200.0)]
        );
    }

    #[test]
    fn tick_labels_keep_whole_numbers() {
        assert_eq!(short(150.0), "150");
        assert_eq!(short(20.0), "20");
        assert_eq!(short(1.5), "1.5");
        assert_eq!(short(2.0), "2");
        assert_eq!(short(10000.0), "10k");
        assert_eq!(short(12500.0), "12.5k");
        assert_eq!(short(2.5e6), "2.5M");
    }

    #[test]
    fn ticks_are_round() {
        assert_eq!(nice_step(2600.0), 1000.0);
        assert_eq!(nice_step(7.0), 2.0);
        assert_eq!(nice_step(0.0), 1.0);
    }

    #[test]
    fn log_axis_ticks() {
        assert_eq!(log_ticks(2.0), vec![0.5, 0.8, 1.0, 1.25, 2.0]);
        assert_eq!(log_ticks(4.0), vec![0.5, 1.0, 2.0]);
        assert_eq!(log_ticks(5.0), vec![0.2, 0.5, 1.0, 2.0, 5.0]);
        assert_eq!(log_ticks(10.0), vec![0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0]);
    }
}

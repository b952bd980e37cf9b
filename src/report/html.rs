//! One self-contained HTML page for a set of outcomes: a metrics table, the
//! per-second timelines and the latency percentile curve of each, drawn as inline
//! SVG. Nothing is fetched from the network, so the file opens anywhere, offline,
//! and can be mailed or archived as it is.

use super::{format_value, metric_label};
use crate::model::{Latency, Outcome};
use crate::store::StoredRun;
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
        out.push((x_of(seen as f64 / total as f64), value / 1e3));
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

fn timelines(o: &Outcome) -> Vec<Chart> {
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

/// `1 thread`, `2 threads`.
fn threads_text(t: usize) -> String {
    format!("{t} thread{}", if t == 1 { "" } else { "s" })
}

fn title_of(o: &Outcome) -> String {
    let name = o
        .spec
        .get("name")
        .and_then(|n| n.as_str())
        .map(|n| format!(" · {n}"))
        .unwrap_or_default();
    format!("{}{name}", o.workload)
}

fn kind_of(m: &crate::model::Metric) -> String {
    let mut parts: Vec<String> = [m.variant.clone(), m.threads.map(threads_text)]
        .into_iter()
        .flatten()
        .collect();
    if let Some(ws) = m.working_set {
        parts.push(format!(
            "{} ({})",
            crate::units::format_bytes(ws.bytes),
            ws.tier.label()
        ));
    }
    parts.join(", ")
}

/// One outcome: its metrics, timelines and latency curve, under a heading of `level`.
fn section(o: &Outcome, level: u8) -> String {
    let mut s = format!(
        "<section class=\"outcome\"><h{level}>{}</h{level}>",
        esc(&title_of(o))
    );
    let _ = write!(
        s,
        "<p class=\"meta\">{} · {} · {} CPUs · started {} · {:.1} s{}</p>",
        esc(&o.host.hostname),
        esc(&o.host.cpu_model),
        o.host.logical_cpus,
        esc(&o.started_at),
        o.elapsed_s,
        if o.interrupted {
            " · <strong class=\"warn\">interrupted</strong>"
        } else {
            ""
        }
    );
    s.push_str("<table><tr><th>metric</th><th>kind</th><th class=\"num\">value</th></tr>");
    for m in &o.metrics {
        let _ = write!(
            s,
            "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td></tr>",
            esc(&metric_label(&m.name)),
            esc(&kind_of(m)),
            esc(&format_value(m))
        );
    }
    s.push_str("</table>");
    for (unit, series) in timelines(o) {
        s.push_str(&line_chart(
            &format!("Timeline, {unit}"),
            "seconds since start",
            &series,
        ));
    }
    if let Some(lat) = &o.latency
        && lat.count > 0
    {
        s.push_str(&percentile_chart(
            "Latency (µs) by percentile",
            &[("latency".to_string(), percentile_curve(lat))],
        ));
    }
    if !o.notes.is_empty() {
        s.push_str("<ul class=\"notes\">");
        for n in &o.notes {
            let _ = write!(s, "<li>{}</li>", esc(n));
        }
        s.push_str("</ul>");
    }
    s.push_str("</section>");
    s
}

/// Colours outside the charts stay clear of the chart palette, so a screenshot's
/// chart colours come from the charts alone (tests/report.rs counts them).
pub(crate) const STYLE: &str = "*{box-sizing:border-box}\
body{font:15px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;max-width:900px;margin:0 auto;color:#1d2329;padding:1.5em 1.2em 3em;background:#fff}\
header{border-bottom:3px solid #2f3b48;padding-bottom:.8em;margin-bottom:1.2em}\
.brand{font-size:.8em;letter-spacing:.12em;text-transform:uppercase;color:#5f6b76;font-weight:600}\
h1{font-size:1.7em;margin:.1em 0 .2em;line-height:1.2}\
h2{font-size:1.3em;border-bottom:1px solid #dde2e7;padding-bottom:.2em;margin-top:2em}\
h3{font-size:1.1em;margin-top:1.6em}\
table{border-collapse:collapse;margin:.6em 0;width:100%}\
th{font-weight:600;color:#5f6b76;font-size:.8em;text-transform:uppercase;letter-spacing:.04em;border-bottom:2px solid #dde2e7;text-align:left;padding:.3em .7em}\
td{padding:.25em .7em;border-bottom:1px solid #eef0f2;text-align:left;vertical-align:top}\
tr:nth-child(even) td{background:#fafbfc}\
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\
.meta{color:#5f6b76;font-size:.9em;margin:.2em 0}\
.chip{display:inline-block;background:#f1f3f5;border:1px solid #dde2e7;border-radius:999px;padding:0 .65em;font-size:.85em;margin:.15em .3em .15em 0}\
.warn{color:#8a4b00}.better{color:#1a7f37;font-weight:600}.worse{color:#8a4b00;font-weight:600}.same{color:#5f6b76}\
figure{margin:1.2em 0}figcaption{font-weight:600;font-size:.95em;margin-bottom:.2em}.chart{width:100%;height:auto}\
.tick{font-size:11px;fill:#5f6b76}.axis{font-size:12px;fill:#3d4750}.legend{font-size:12px;fill:#1d2329}\
.label{font-size:12.5px;fill:#1d2329}.sub{font-size:11px;fill:#5f6b76}.value{font-size:12px;fill:#1d2329}\
.notes{color:#4a545e;font-size:.9em}\
.summary td:first-child{font-weight:600}\
footer{margin-top:3em;padding-top:.8em;border-top:1px solid #dde2e7;color:#5f6b76;font-size:.8em}\
@media print{body{max-width:none}section{break-inside:avoid}}";

/// A whole page: the title, a header line (HTML) under it, and the body.
pub fn page(title: &str, header_html: &str, body_html: &str) -> String {
    format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>{t}</title><style>{STYLE}</style></head><body>\
         <header><div class=\"brand\">hostbench report</div><h1>{t}</h1>{header_html}</header>\
         <main>{body_html}</main>\
         <footer>hostbench {} · one self-contained file: the charts are inline SVG and nothing is fetched, \
         so it opens offline and can be mailed or archived as it is.</footer></body></html>\n",
        env!("CARGO_PKG_VERSION"),
        t = esc(title)
    )
}

/// `web1 · Debian 12 · kvm · kernel 6.1 · 2 × AMD EPYC`: the machine in one line.
pub(crate) fn host_line(o: &Outcome) -> String {
    format!(
        "<p class=\"meta\">{} · {} CPUs · {} · {} · {} · kernel {}</p>",
        esc(&o.host.hostname),
        o.host.logical_cpus,
        esc(&o.host.cpu_model),
        esc(&o.host.os),
        esc(o
            .host
            .virtualization
            .as_deref()
            .unwrap_or("bare metal or unknown")),
        esc(&o.host.kernel),
    )
}

/// Labels as chips: `provider=aws`.
pub(crate) fn chips(labels: &crate::store::Labels) -> String {
    labels
        .iter()
        .map(|(k, v)| format!("<span class=\"chip\">{}={}</span>", esc(k), esc(v)))
        .collect()
}

/// The page of outcomes read from a JSON file.
pub fn render(title: &str, outcomes: &[Outcome]) -> String {
    let header = outcomes.first().map(host_line).unwrap_or_default();
    let body: String = outcomes.iter().map(|o| section(o, 2)).collect();
    page(title, &header, &body)
}

/// The page of stored runs: per run its command, labels, `run`'s summary and outcomes.
pub fn render_runs(title: &str, runs: &[StoredRun]) -> String {
    let first = runs.iter().flat_map(|r| r.outcomes.first()).next();
    let one_host = runs
        .iter()
        .all(|r| Some(&r.info.host.hostname) == first.map(|o| &o.host.hostname));
    let header = match first {
        Some(o) if one_host => host_line(o),
        _ => String::new(),
    };
    let mut body = String::new();
    for run in runs {
        let r = &run.info;
        let _ = write!(
            body,
            "<section class=\"run\"><h2>Run {} · {}</h2>\
             <p class=\"meta\">{} · started {} · saved {}{}</p>",
            r.id,
            esc(&r.command_text()),
            esc(&r.host.hostname),
            esc(&r.started_at),
            esc(&r.saved_at),
            if r.interrupted {
                " · <strong class=\"warn\">interrupted</strong>"
            } else {
                ""
            }
        );
        if !r.labels.is_empty() {
            let _ = write!(body, "<p>{}</p>", chips(&r.labels));
        }
        if r.command == "run" {
            body.push_str(
                "<table class=\"summary\"><tr><th>area</th><th>result</th><th>verdict</th></tr>",
            );
            for line in crate::suite::run::summarise(&run.outcomes) {
                let _ = write!(
                    body,
                    "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
                    esc(&line.area),
                    esc(&line.headline),
                    esc(&line.verdict)
                );
            }
            body.push_str("</table>");
        }
        for o in &run.outcomes {
            body.push_str(&section(o, 3));
        }
        body.push_str("</section>");
    }
    page(title, &header, &body)
}

fn outcome_markdown(md: &mut String, o: &Outcome, heading: &str) {
    let _ = write!(
        md,
        "\n{heading} {}\n\n{} · {} · {} CPUs · {:.1} s{}\n\n| metric | kind | value |\n|---|---|---:|\n",
        title_of(o),
        o.host.hostname,
        o.host.cpu_model,
        o.host.logical_cpus,
        o.elapsed_s,
        if o.interrupted { " · interrupted" } else { "" }
    );
    for m in &o.metrics {
        let _ = writeln!(
            md,
            "| {} | {} | {} |",
            md_cell(&metric_label(&m.name)),
            md_cell(&kind_of(m)),
            format_value(m)
        );
    }
    for n in &o.notes {
        let _ = writeln!(md, "\n> {n}");
    }
}

/// A table cell: a `|` would end it early.
pub(crate) fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The same content as Markdown tables (no charts), for issues and wikis.
pub fn markdown(title: &str, outcomes: &[Outcome]) -> String {
    let mut md = format!("# {title}\n");
    for o in outcomes {
        outcome_markdown(&mut md, o, "##");
    }
    md
}

/// Stored runs as Markdown: per run a heading, its labels, `run`'s summary, outcomes.
pub fn markdown_runs(title: &str, runs: &[StoredRun]) -> String {
    let mut md = format!("# {title}\n");
    for run in runs {
        let r = &run.info;
        let _ = write!(
            md,
            "\n## Run {} · {}\n\n{} · started {}{}\n",
            r.id,
            r.command_text(),
            r.host.hostname,
            r.started_at,
            if r.interrupted { " · interrupted" } else { "" }
        );
        if !r.labels.is_empty() {
            let labels: Vec<String> = r.labels.iter().map(|(k, v)| format!("`{k}={v}`")).collect();
            let _ = writeln!(md, "\nLabels: {}", labels.join(" "));
        }
        if r.command == "run" {
            md.push_str("\n| area | result | verdict |\n|---|---|---|\n");
            for line in crate::suite::run::summarise(&run.outcomes) {
                let _ = writeln!(
                    md,
                    "| {} | {} | {} |",
                    md_cell(&line.area),
                    md_cell(&line.headline),
                    md_cell(&line.verdict)
                );
            }
        }
        for o in &run.outcomes {
            outcome_markdown(&mut md, o, "###");
        }
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Metric, Sample, Unit};

    fn sample_outcome() -> Outcome {
        let mut o = Outcome::new(
            "disk",
            serde_json::json!({"name": "randread <&>"}),
            crate::host::HostInfo::detect(),
        );
        o.push(Metric::new("read_iops", 2522.0, Unit::OpsPerSec).variant("randread"));
        o.series = (1..=5)
            .map(|i| Sample {
                at_s: i as f64,
                span_s: 1.0,
                values: [("read_iops".to_string(), 2500.0 + i as f64)]
                    .into_iter()
                    .collect(),
            })
            .collect();
        o.note("a note with <markup>");
        o
    }

    #[test]
    fn page_is_self_contained_with_charts() {
        let page = render("hostbench report", &[sample_outcome()]);
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert!(page.contains("<svg") && page.contains("<polyline"));
        assert!(page.contains("Timeline, per second"));
        // Escaped, and nothing fetched from elsewhere.
        assert!(page.contains("randread &lt;&amp;&gt;"));
        assert!(page.contains("a note with &lt;markup&gt;"));
        for fetch in ["src=\"http", "href=\"http", "@import", "url("] {
            assert!(!page.contains(fetch), "{fetch}");
        }
    }

    #[test]
    fn timelines_split_by_thread_phase() {
        let mut o = sample_outcome();
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
    fn markdown_has_the_metrics() {
        let md = markdown("r", &[sample_outcome()]);
        assert!(md.contains("| read iops | randread |"), "{md}");
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
}

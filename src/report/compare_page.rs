//! `hostbench report --compare`: a comparison (computed by `suite::compare`, the same
//! one `hostbench compare` prints) as one self-contained HTML page, or Markdown.
//!
//! The page leads with what people share: per area the geometric mean of the
//! speedups, as bars either side of "same as A" on a log scale. Then one bar chart
//! per test with a bar per group for every metric (± σ whiskers where there are
//! repeats), the ratio to A beside it ("2.18x faster", green when better), and the
//! latency percentile curves of the groups laid over each other.

use super::compare::{cells, geomean_text, letter, ratio_text, stat_text};
use super::html::{COLOURS, chips, esc, md_cell, page, percentile_chart, percentile_curve};
use super::metric_label;
use crate::model::Better;
use crate::store::outcome_test;
use crate::suite::compare::{Comparison, Group, Row};
use std::fmt::Write;

const WIDTH: f64 = 720.0;
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
fn verdict_class(verdict: &str) -> &'static str {
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
fn swatch(i: usize) -> String {
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
fn bars(rows: &[&Row], groups: usize) -> String {
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
fn geomean_chart(c: &Comparison) -> String {
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
            super::html::short(t)
        );
    }
    format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {:.0}" class="chart" role="img" aria-label="geometric mean of speedups per area">{axis}{body}</svg>"#,
        y + 16.0
    )
}

/// The groups with their colours, runs and hosts.
fn groups_table(c: &Comparison, groups: &[Group]) -> String {
    let mut s = String::from(
        "<table><tr><th></th><th>group</th><th>runs</th><th>hosts</th><th>labels</th></tr>",
    );
    for (i, g) in c.groups.iter().enumerate() {
        let runs: Vec<String> = g.runs.iter().map(|r| r.to_string()).collect();
        // Labels every run of the group carries.
        let mut common = groups
            .get(i)
            .and_then(|g| g.runs.first())
            .map(|r| r.info.labels.clone())
            .unwrap_or_default();
        if let Some(group) = groups.get(i) {
            for run in &group.runs {
                common.retain(|k, v| run.info.labels.get(k) == Some(v));
            }
        }
        let _ = write!(
            s,
            "<tr><td>{} <strong>{}</strong>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            swatch(i),
            letter(i),
            if i == 0 { " (reference)" } else { "" },
            esc(&g.name),
            esc(&runs.join(", ")),
            esc(&g.hosts.join(", ")),
            chips(&common)
        );
    }
    s.push_str("</table>");
    s
}

/// Rows grouped by (area, test), in the comparison's order.
fn blocks(c: &Comparison) -> Vec<(String, Vec<&Row>)> {
    let mut out: Vec<(String, Vec<&Row>)> = Vec::new();
    for row in &c.rows {
        let title = match &row.test {
            Some(t) => format!("{} · {t}", row.key.area),
            None if row.key.workload != row.key.area => {
                format!("{} · {}", row.key.area, row.key.workload)
            }
            None => row.key.area.clone(),
        };
        match out.last_mut() {
            Some((t, rows)) if *t == title => rows.push(row),
            _ => out.push((title, vec![row])),
        }
    }
    out
}

/// Per test, the latency percentile curve of each group's first run, laid over each other.
fn latency_overlays(groups: &[Group]) -> Vec<String> {
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

/// The comparison as a page. `groups` are the runs it was computed from (for the
/// labels and the latency curves).
pub fn html(title: &str, c: &Comparison, groups: &[Group]) -> String {
    let mut header = String::from("<p class=\"meta\">");
    for (i, g) in c.groups.iter().enumerate() {
        if i > 0 {
            header.push_str(" &nbsp; ");
        }
        let _ = write!(
            header,
            "{} <strong>{}</strong> {}",
            swatch(i),
            letter(i),
            esc(&g.name)
        );
    }
    header.push_str(" · ratios are against A</p>");
    let mut body = String::from("<section><h2>Groups</h2>");
    body.push_str(&groups_table(c, groups));
    body.push_str("</section>");
    if c.rows.is_empty() {
        body.push_str(
            "<p>No metric was measured by the first group and another: nothing to compare.</p>",
        );
    }
    if !c.areas.is_empty() && c.groups.len() > 1 {
        body.push_str(
            "<section><h2>Summary</h2><p class=\"meta\">Per area, the geometric mean of the speedups \
             over A (each ratio turned so that above 1x is better, as SPEC and PTS do); ± one standard \
             deviation where there are repeats.</p><figure>",
        );
        body.push_str(&geomean_chart(c));
        body.push_str("</figure><table class=\"summary\"><tr><th>area</th>");
        for i in 1..c.groups.len() {
            let _ = write!(body, "<th>{} vs A</th>", letter(i));
        }
        body.push_str("</tr>");
        for a in &c.areas {
            let _ = write!(body, "<tr><td>{}</td>", esc(&a.area));
            for g in a.geomean.iter().skip(1) {
                match g {
                    Some(g) => {
                        let _ = write!(
                            body,
                            "<td class=\"{}\">{}</td>",
                            verdict_class(&g.verdict),
                            esc(&geomean_text(g))
                        );
                    }
                    None => body.push_str("<td>–</td>"),
                }
            }
            body.push_str("</tr>");
        }
        body.push_str("</table></section>");
    }
    if !c.rows.is_empty() {
        body.push_str(
            "<section><h2>Per metric</h2><p class=\"meta\">Bars: each group's mean (whiskers ± σ \
             with repeats), scaled per metric; right: the ratio to A and whether that is better.</p>",
        );
        for (title, rows) in blocks(c) {
            let _ = write!(
                body,
                "<figure><figcaption>{}</figcaption>{}</figure>",
                esc(&title),
                bars(&rows, c.groups.len())
            );
        }
        body.push_str("</section>");
    }
    let curves = latency_overlays(groups);
    if !curves.is_empty() {
        body.push_str(
            "<section><h2>Latency percentiles</h2><p class=\"meta\">Each group's first run.</p>",
        );
        for chart in curves {
            body.push_str(&chart);
        }
        body.push_str("</section>");
    }
    if !c.notes.is_empty() {
        body.push_str("<section><h2>Notes</h2><ul class=\"notes\">");
        for n in &c.notes {
            let _ = write!(body, "<li>{}</li>", esc(n));
        }
        body.push_str("</ul></section>");
    }
    page(title, &header, &body)
}

/// The comparison as Markdown: groups, the per-area summary, then every metric.
pub fn markdown(title: &str, c: &Comparison) -> String {
    let mut md = format!(
        "# {title}\n\n## Groups (A is the reference)\n\n| | group | runs | hosts |\n|---|---|---|---|\n"
    );
    for (i, g) in c.groups.iter().enumerate() {
        let runs: Vec<String> = g.runs.iter().map(|r| r.to_string()).collect();
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} |",
            letter(i),
            md_cell(&g.name),
            runs.join(", "),
            md_cell(&g.hosts.join(", "))
        );
    }
    if !c.areas.is_empty() && c.groups.len() > 1 {
        md.push_str("\n## Summary\n\nGeometric mean of the speedups per area (above 1x: better than A).\n\n| area |");
        for i in 1..c.groups.len() {
            let _ = write!(md, " {} vs A |", letter(i));
        }
        md.push_str("\n|---|");
        for _ in 1..c.groups.len() {
            md.push_str("---|");
        }
        md.push('\n');
        for a in &c.areas {
            let _ = write!(md, "| {} |", a.area);
            for g in a.geomean.iter().skip(1) {
                let text = g.as_ref().map(geomean_text).unwrap_or_else(|| "–".into());
                let _ = write!(md, " {} |", md_cell(&text));
            }
            md.push('\n');
        }
    }
    if c.rows.is_empty() {
        md.push_str(
            "\nNo metric was measured by the first group and another: nothing to compare.\n",
        );
    } else {
        md.push_str("\n## Per metric\n\n| area | test | metric | threads |");
        let mut align = String::from("|---|---|---|---:|");
        for i in 0..c.groups.len() {
            let _ = write!(md, " {} |", letter(i));
            align.push_str("---:|");
            if i > 0 {
                let _ = write!(md, " {}/A |", letter(i));
                align.push_str("---|");
            }
        }
        let _ = write!(md, "\n{align}\n");
        for row in &c.rows {
            let cells: Vec<String> = cells(row).iter().map(|c| md_cell(c)).collect();
            let _ = writeln!(md, "| {} |", cells.join(" | "));
        }
    }
    if !c.notes.is_empty() {
        md.push('\n');
        for n in &c.notes {
            let _ = writeln!(md, "> {n}\n");
        }
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::HostInfo;
    use crate::model::{Metric, Outcome, Unit};
    use crate::store::{RunInfo, StoredRun};
    use crate::suite::compare::compare;

    fn run(id: i64, eps: f64, p99_ns: f64) -> StoredRun {
        let mut o = Outcome::new("cpu", serde_json::json!({}), HostInfo::default());
        o.push(Metric::new("events_per_sec", eps, Unit::EventsPerSec).threads(1));
        o.push(Metric::new("latency_p99", p99_ns, Unit::Nanoseconds).threads(1));
        StoredRun {
            info: RunInfo {
                id,
                command_line: Vec::new(),
                started_at: String::new(),
                saved_at: String::new(),
                command: "cpu".into(),
                labels: [("provider".to_string(), format!("p{id}"))].into(),
                profile: None,
                interrupted: false,
                schema_version: 1,
                tool_version: String::new(),
                workloads: vec!["cpu".into()],
                outcome_count: 1,
                headline: None,
                host: HostInfo::default(),
            },
            outcomes: vec![o],
        }
    }

    fn groups() -> Vec<Group> {
        vec![
            Group {
                name: "vm <1>".into(),
                runs: vec![run(1, 354.62, 2.81e6), run(2, 360.0, 2.9e6)],
            },
            Group {
                name: "desktop".into(),
                runs: vec![run(3, 772.42, 1.32e6)],
            },
        ]
    }

    #[test]
    fn page_has_bars_ratios_and_the_summary() {
        let g = groups();
        let c = compare(&g).unwrap();
        let page = html("cmp", &c, &g);
        assert!(page.contains("vm &lt;1&gt;"), "names are escaped");
        // Two bars per metric (A and B) and one summary bar.
        assert_eq!(page.matches("<rect x=\"26\"").count(), 4, "{page}");
        assert!(page.contains("fill=\"#d62728\""), "B's colour");
        let ratio = 772.42 / ((354.62 + 360.0) / 2.0);
        assert!(page.contains(&format!("{ratio:.2} ± ")), "{page}");
        assert!(page.contains("x faster</text>"), "{page}");
        assert!(page.contains("↓ lower is better") && page.contains("↑ higher is better"));
        assert!(page.contains("better than A →"));
        assert!(
            page.contains("<span class=\"chip\">provider=p3</span>"),
            "{page}"
        );
        for fetch in ["src=\"http", "href=\"http", "@import", "url("] {
            assert!(!page.contains(fetch), "{fetch}");
        }
    }

    #[test]
    fn markdown_tables_line_up() {
        let g = groups();
        let md = markdown("cmp", &compare(&g).unwrap());
        assert!(md.contains("| area | B vs A |"), "{md}");
        let eps = md
            .lines()
            .find(|l| l.contains("events per second"))
            .unwrap();
        // area, test, metric, threads, A, B, B/A.
        assert_eq!(eps.matches('|').count(), 8, "{eps}");
        assert!(eps.contains("x faster"), "{eps}");
    }

    #[test]
    fn log_axis_ticks() {
        assert_eq!(log_ticks(2.0), vec![0.5, 0.8, 1.0, 1.25, 2.0]);
        assert_eq!(log_ticks(4.0), vec![0.5, 1.0, 2.0]);
        assert_eq!(log_ticks(5.0), vec![0.2, 0.5, 1.0, 2.0, 5.0]);
        assert_eq!(log_ticks(10.0), vec![0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0]);
    }
}

//! HTML: one self-contained page per document (inline SVG charts from charts.rs,
//! nothing fetched from the network, so the file opens anywhere, offline, and can
//! be mailed or archived as it is). Every page has the same frame (`page`: header,
//! style, footer): outcomes with their metrics table, timelines and latency curve;
//! stored runs with `run`'s summary; a comparison led by the per-area geometric
//! means, then bars per test and overlaid latency curves; a soak's timeline chart
//! with its statistics.

use super::charts::{
    bars, esc, geomean_chart, latency_overlays, line_chart, percentile_chart, percentile_curve,
    soak_timeline, swatch, timelines, verdict_class,
};
use super::compare::{geomean_text, letter};
use super::soak::{describe, figure_head, stats_rows, timeline_cells, unmeasured_note};
use super::{
    Document, Format, Kind, Renderer, Unsupported, format_value, kind_of, metric_label, title_of,
};
use crate::model::Outcome;
use crate::store::StoredRun;
use crate::store::soak::{SliceStatus, Soak};
use crate::suite::compare::{Comparison, Group, Row};
use crate::suite::soak::{Summary, utc};
use std::fmt::Write;

pub struct Html;

impl Renderer for Html {
    fn supports(&self, kind: Kind) -> bool {
        matches!(
            kind,
            Kind::Outcome | Kind::Outcomes | Kind::Run | Kind::Runs | Kind::Comparison | Kind::Soak
        )
    }

    fn render(&self, doc: &Document) -> Result<String, Unsupported> {
        let title = doc.title();
        match doc {
            Document::Outcome(one) => Ok(outcomes(&title, std::slice::from_ref(one.outcome))),
            Document::Outcomes(o) => Ok(outcomes(&title, o.outcomes)),
            Document::Run(run) => Ok(runs(&title, std::slice::from_ref(*run))),
            Document::Runs(r) => Ok(runs(&title, r.runs)),
            Document::Comparison(c) => Ok(comparison(&title, c.comparison, c.groups)),
            Document::Soak(s) => Ok(soak(&title, s.soak, s.summary)),
            _ => Err(Unsupported::new(Format::Html, doc.kind())),
        }
    }
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

/// The page of outcomes (of a result file).
fn outcomes(title: &str, outcomes: &[Outcome]) -> String {
    let header = outcomes.first().map(host_line).unwrap_or_default();
    let body: String = outcomes.iter().map(|o| section(o, 2)).collect();
    page(title, &header, &body)
}

/// The page of stored runs: per run its command, labels, `run`'s summary and outcomes.
fn runs(title: &str, runs: &[StoredRun]) -> String {
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
            let lines = crate::suite::run::stored(run);
            for line in &lines {
                let _ = write!(
                    body,
                    "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
                    esc(&line.area),
                    esc(&line.headline),
                    esc(&line.verdict)
                );
            }
            body.push_str("</table>");
            if let Some(missing) = crate::suite::run::not_measured(&lines) {
                let _ = write!(body, "<p class=\"meta\">{}</p>", esc(&missing));
            }
        }
        for o in &run.outcomes {
            body.push_str(&section(o, 3));
        }
        body.push_str("</section>");
    }
    page(title, &header, &body)
}

// A comparison.

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

/// The comparison as a page. `groups` are the runs it was computed from (for the
/// labels and the latency curves).
fn comparison(title: &str, c: &Comparison, groups: &[Group]) -> String {
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

// A soak.

/// The page `hostbench report --soak ID` writes.
fn soak(title: &str, soak: &Soak, summary: &Summary) -> String {
    let head = figure_head(summary.metric.as_deref(), summary.unit);
    // The page frame (header, style, footer) is every report's; only the soak's own
    // two classes are added.
    let mut header =
        String::from("<style>.verdict{font-weight:600}.flagged{color:#d62728}</style>");
    let _ = write!(
        header,
        "<p class=\"meta\">soak {} · {} · from {} UTC · {}</p><p class=\"verdict\">{}</p>",
        soak.id,
        esc(&describe(soak)),
        esc(&utc(soak.plan.start_ms)),
        soak.state.as_str(),
        esc(&summary.verdict.text)
    );
    let mut body = soak_timeline(soak, summary);
    body.push_str("<table>");
    for (k, v) in stats_rows(soak, summary) {
        let _ = write!(body, "<tr><th>{}</th><td>{}</td></tr>", esc(&k), esc(&v));
    }
    body.push_str("</table>");
    let _ = write!(
        body,
        "<h2>Timeline</h2><table><tr><th class=\"num\">slice</th><th>due (UTC)</th><th class=\"num\">{}</th><th class=\"num\">of median</th><th>note</th></tr>",
        esc(&head)
    );
    for s in &soak.slices {
        let (flagged, value, pct) = timeline_cells(summary, s);
        let note = match s.status {
            SliceStatus::Done if flagged => "flagged".to_string(),
            SliceStatus::Done => s.run_id.map(|r| format!("run {r}")).unwrap_or_default(),
            _ => unmeasured_note(s),
        };
        let _ = write!(
            body,
            "<tr{}><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            if flagged { " class=\"flagged\"" } else { "" },
            s.seq + 1,
            esc(&utc(s.due_ms)),
            esc(&value),
            esc(&pct),
            esc(&note)
        );
    }
    body.push_str("</table>");
    page(title, &header, &body)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::host::HostInfo;
    use crate::model::{Metric, Sample, Unit};
    use crate::store::RunInfo;
    use crate::suite::compare::compare;

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
        let page = outcomes("hostbench report", &[sample_outcome()]);
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
            problems: Vec::new(),
        }
    }

    pub(crate) fn groups() -> Vec<Group> {
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
        let page = comparison("cmp", &c, &g);
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
    fn chart_has_a_point_per_measured_slice_and_the_threshold() {
        let s = crate::report::soak::tests::soak();
        let summary = crate::suite::soak::summarise(&s, None);
        let page = soak("soak", &s, &summary);
        assert_eq!(page.matches("<circle class=\"slice").count(), 3);
        assert_eq!(page.matches("class=\"slice flagged\"").count(), 1);
        assert!(page.contains("class=\"threshold\""));
        assert!(page.contains("class=\"missed\""));
        // Slice 2 was missed: the line stops at slice 1 and starts again at slice 3.
        assert_eq!(page.matches("<polyline").count(), 1);
    }
}

//! A soak for people: the timeline as text (one line per slice, printed live as each
//! slice is recorded, and again by `soak --show`), and as one self-contained HTML
//! page (inline SVG: the figure per slice, the median, the threshold line, flagged
//! slices in red, missed ones marked on the axis) or Markdown.

use super::html::{esc, figure, plot_area, svg_open, x_axis_label, x_tick, y_grid, y_scale};
use super::thousands;
use crate::model::{Better, Unit};
use crate::store::soak::{Figure, Slice, SliceStatus, Soak, SoakState};
use crate::suite::soak::{Summary, stats::Stats, utc};
use crate::units::format_duration;
use std::fmt::Write;
use std::time::Duration;

/// The column head of the figure: `IOPS`, `events/s`, `MB/s`, `µs`.
fn figure_head(metric: Option<&str>, unit: Option<Unit>) -> String {
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
fn scaled(value: f64, unit: Unit) -> f64 {
    match unit {
        Unit::BytesPerSec => value / 1e6,
        Unit::Nanoseconds => value / 1e3,
        _ => value,
    }
}

fn figure_text(value: f64, unit: Unit) -> String {
    let v = scaled(value, unit);
    thousands(v, if v.abs() >= 100.0 { 0 } else { 2 })
}

/// `1h`, `10m`, `2s` rather than `1h00m00s` in a sentence.
fn dur(ms: i64) -> String {
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

/// What is printed before the first slice: the soak, then the column heads.
pub fn header(soak: &Soak, metric: Option<&str>, unit: Option<Unit>) -> String {
    format!(
        "soak {}: {}\nfrom {} UTC; a slice below {:.0} % of the median is flagged\n{:>5}  {:<19}  {:>12}  {:>9}\n",
        soak.id,
        describe(soak),
        utc(soak.plan.start_ms),
        soak.plan.threshold_pct,
        "slice",
        "due (UTC)",
        figure_head(metric, unit),
        "of median"
    )
}

/// One slice's line. `median` is the median so far (live) or of the whole soak.
pub fn line(soak: &Soak, slice: &Slice, median: Option<f64>) -> String {
    let head = format!("{:>5}  {:<19}", slice.seq + 1, utc(slice.due_ms));
    match (&slice.status, &slice.figure) {
        (SliceStatus::Done, Some(f)) => {
            let (pct, flag) = match median.filter(|m| *m != 0.0 && m.is_finite()) {
                Some(m) => {
                    let share = soak.plan.threshold_pct / 100.0;
                    let flagged = match f.better {
                        Better::Higher => f.value < m * share,
                        Better::Lower => f.value > m / share,
                    };
                    (
                        format!("{:.0} %", f.value / m * 100.0),
                        if flagged { "  FLAGGED" } else { "" },
                    )
                }
                None => (String::new(), ""),
            };
            format!(
                "{head}  {:>12}  {pct:>9}{flag}",
                figure_text(f.value, f.unit)
            )
        }
        _ => format!("{head}  {:>12}  {}", "-", unmeasured_note(slice)),
    }
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

fn slice_name(soak: &Soak, seq: u32) -> String {
    format!("slice {}, {} UTC", seq + 1, utc(soak.plan.due_ms(seq)))
}

/// The statistics and the verdict.
pub fn summary_text(soak: &Soak, summary: &Summary) -> String {
    let mut out = String::new();
    let unit = summary.unit.unwrap_or(Unit::Count);
    let head = figure_head(summary.metric.as_deref(), summary.unit);
    let fig = |v: f64| figure_text(v, unit);
    let mut gaps = Vec::new();
    if summary.missed > 0 {
        gaps.push(format!("{} missed", summary.missed));
    }
    if summary.failed > 0 {
        gaps.push(format!("{} failed", summary.failed));
    }
    let recorded = soak.slices.len() as u32;
    if recorded < summary.slices_planned {
        gaps.push(format!(
            "{} still to come",
            summary.slices_planned - recorded
        ));
    }
    let _ = writeln!(
        out,
        "\n{head} over {} of {} slices{}",
        summary.measured,
        summary.slices_planned,
        if gaps.is_empty() {
            String::new()
        } else {
            format!(" ({})", gaps.join(", "))
        }
    );
    if let Some(s) = &summary.stats {
        let _ = writeln!(
            out,
            "  min {} ({})   max {} ({})",
            fig(s.min),
            slice_name(soak, s.min_seq),
            fig(s.max),
            slice_name(soak, s.max_seq)
        );
        let _ = writeln!(
            out,
            "  mean {}   median {}   σ {}   CV {:.1} %",
            fig(s.mean),
            fig(s.median),
            fig(s.stddev),
            s.cv_percent
        );
        let _ = writeln!(out, "  deepest drop: {}", drop_text(soak, s, unit));
        let _ = writeln!(
            out,
            "  flagged ({} {:.0} % of the median, {}): {}",
            if s.better == Better::Higher {
                "below"
            } else {
                "above"
            },
            s.threshold_percent,
            fig(s.threshold_value),
            flagged_text(s)
        );
    }
    let _ = writeln!(out, "verdict: {}", summary.verdict.text);
    if matches!(soak.state, SoakState::Stopped | SoakState::Running)
        && recorded < summary.slices_planned
    {
        let _ = writeln!(
            out,
            "the soak is {}: `hostbench soak --resume {}` continues it on its schedule",
            if soak.state == SoakState::Stopped {
                "stopped"
            } else {
                "unfinished"
            },
            soak.id
        );
    }
    out
}

fn drop_text(soak: &Soak, s: &Stats, unit: Unit) -> String {
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

fn flagged_text(s: &Stats) -> String {
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

/// The whole result as text: header, every slice against the final median, summary.
pub fn text(soak: &Soak, summary: &Summary) -> String {
    let mut out = header(soak, summary.metric.as_deref(), summary.unit);
    let median = summary.stats.as_ref().map(|s| s.median);
    for slice in &soak.slices {
        let _ = writeln!(out, "{}", line(soak, slice, median));
    }
    out + &summary_text(soak, summary)
}

/// The timeline chart: one point per measured slice (red when flagged), the median
/// (grey) and the threshold (dashed red), missed and failed slices as marks on the
/// x axis.
pub fn chart(soak: &Soak, summary: &Summary) -> String {
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
            dur(soak.plan.every_ms),
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

fn stats_rows(soak: &Soak, summary: &Summary) -> Vec<(String, String)> {
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
fn timeline_cells(summary: &Summary, s: &Slice) -> (bool, String, String) {
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
fn unmeasured_note(s: &Slice) -> String {
    format!(
        "{}{}",
        s.status.as_str(),
        s.note
            .as_ref()
            .map(|n| format!(": {n}"))
            .unwrap_or_default()
    )
}

/// The page `hostbench report --soak ID` writes.
pub fn html(title: &str, soak: &Soak, summary: &Summary) -> String {
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
    let mut page = chart(soak, summary);
    page.push_str("<table>");
    for (k, v) in stats_rows(soak, summary) {
        let _ = write!(page, "<tr><th>{}</th><td>{}</td></tr>", esc(&k), esc(&v));
    }
    page.push_str("</table>");
    let _ = write!(
        page,
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
            page,
            "<tr{}><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            if flagged { " class=\"flagged\"" } else { "" },
            s.seq + 1,
            esc(&utc(s.due_ms)),
            esc(&value),
            esc(&pct),
            esc(&note)
        );
    }
    page.push_str("</table>");
    super::html::page(title, &header, &page)
}

/// The same as Markdown (no chart).
pub fn markdown(title: &str, soak: &Soak, summary: &Summary) -> String {
    let head = figure_head(summary.metric.as_deref(), summary.unit);
    let mut md = format!(
        "# {title}\n\nsoak {} · {} · from {} UTC · {}\n\n**{}**\n\n| statistic | value |\n|---|---|\n",
        soak.id,
        describe(soak),
        utc(soak.plan.start_ms),
        soak.state.as_str(),
        summary.verdict.text
    );
    for (k, v) in stats_rows(soak, summary) {
        let _ = writeln!(md, "| {k} | {v} |");
    }
    let _ = write!(
        md,
        "\n## Timeline\n\n| slice | due (UTC) | {head} | of median | note |\n|---:|---|---:|---:|---|\n"
    );
    for s in &soak.slices {
        let (flagged, value, pct) = timeline_cells(summary, s);
        let note = match s.status {
            SliceStatus::Done if flagged => "**flagged**".to_string(),
            SliceStatus::Done => String::new(),
            _ => unmeasured_note(s),
        };
        let _ = writeln!(
            md,
            "| {} | {} | {value} | {pct} | {note} |",
            s.seq + 1,
            utc(s.due_ms)
        );
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::soak::SoakPlan;

    fn soak() -> Soak {
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

    #[test]
    fn text_timeline_and_summary() {
        let s = soak();
        let summary = crate::suite::soak::summarise(&s, None);
        let text = text(&s, &summary);
        assert!(
            text.starts_with(
                "soak 7: disk --tests mixed: 10m per slice, every 1h for 4h (4 slices)"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "    2  2026-11-30 01:53:20             -  missed: hostbench was not running"
            ),
            "{text}"
        );
        assert!(text.contains("1,500       60 %  FLAGGED"), "{text}");
        assert!(
            text.contains("verdict: unstable: 1 of 3 slices below 80 % of the median"),
            "{text}"
        );
        assert!(
            text.contains("deepest drop: 42.1 %, from 2,590 (slice 1) to 1,500 (slice 3, 2026-11-30 02:53:20 UTC)"),
            "{text}"
        );
    }

    #[test]
    fn chart_has_a_point_per_measured_slice_and_the_threshold() {
        let s = soak();
        let summary = crate::suite::soak::summarise(&s, None);
        let page = html("soak", &s, &summary);
        assert_eq!(page.matches("<circle class=\"slice").count(), 3);
        assert_eq!(page.matches("class=\"slice flagged\"").count(), 1);
        assert!(page.contains("class=\"threshold\""));
        assert!(page.contains("class=\"missed\""));
        // Slice 2 was missed: the line stops at slice 1 and starts again at slice 3.
        assert_eq!(page.matches("<polyline").count(), 1);
        let md = markdown("soak", &s, &summary);
        assert!(
            md.contains("| 3 | 2026-11-30 02:53:20 | 1,500 | 60 % | **flagged** |"),
            "{md}"
        );
    }
}

//! Markdown: the pages' content as tables (no charts), for issues and wikis: the
//! outcomes of a result file, stored runs with `run`'s summary, a comparison (groups,
//! per-area geometric means, every metric), a soak (statistics and timeline).

use super::compare::{cells, geomean_text, letter};
use super::soak::{describe, figure_head, stats_rows, timeline_cells, unmeasured_note};
use super::{
    Document, Format, Kind, Renderer, Unsupported, format_value, kind_of, metric_label, title_of,
};
use crate::model::Outcome;
use crate::store::StoredRun;
use crate::store::soak::{SliceStatus, Soak};
use crate::suite::compare::Comparison;
use crate::suite::soak::{Summary, utc};
use std::fmt::Write;

pub struct Markdown;

impl Renderer for Markdown {
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
            Document::Comparison(c) => Ok(comparison(&title, c.comparison)),
            Document::Soak(s) => Ok(soak(&title, s.soak, s.summary)),
            _ => Err(Unsupported::new(Format::Markdown, doc.kind())),
        }
    }
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
            cell(&metric_label(&m.name)),
            cell(&kind_of(m)),
            format_value(m)
        );
    }
    for n in &o.notes {
        let _ = writeln!(md, "\n> {n}");
    }
}

/// A table cell: a `|` would end it early.
pub(crate) fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// Outcomes (of a result file) under the title.
fn outcomes(title: &str, outcomes: &[Outcome]) -> String {
    let mut md = format!("# {title}\n");
    for o in outcomes {
        outcome_markdown(&mut md, o, "##");
    }
    md
}

/// Stored runs as Markdown: per run a heading, its labels, `run`'s summary, outcomes.
fn runs(title: &str, runs: &[StoredRun]) -> String {
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
            let lines = crate::suite::run::stored(run);
            for line in &lines {
                let _ = writeln!(
                    md,
                    "| {} | {} | {} |",
                    cell(&line.area),
                    cell(&line.headline),
                    cell(&line.verdict)
                );
            }
            if let Some(missing) = crate::suite::run::not_measured(&lines) {
                let _ = writeln!(md, "\n{missing}");
            }
        }
        for o in &run.outcomes {
            outcome_markdown(&mut md, o, "###");
        }
    }
    md
}

/// The comparison as Markdown: groups, the per-area summary, then every metric.
fn comparison(title: &str, c: &Comparison) -> String {
    let mut md = format!(
        "# {title}\n\n## Groups (A is the reference)\n\n| | group | runs | hosts |\n|---|---|---|---|\n"
    );
    for (i, g) in c.groups.iter().enumerate() {
        let runs: Vec<String> = g.runs.iter().map(|r| r.to_string()).collect();
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} |",
            letter(i),
            cell(&g.name),
            runs.join(", "),
            cell(&g.hosts.join(", "))
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
                let _ = write!(md, " {} |", cell(&text));
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
            let cells: Vec<String> = cells(row).iter().map(|c| cell(c)).collect();
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

/// A soak: its plan, verdict and statistics, then the timeline (no chart).
fn soak(title: &str, soak: &Soak, summary: &Summary) -> String {
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
    use crate::host::HostInfo;
    use crate::model::{Metric, Unit};

    #[test]
    fn outcomes_have_their_metrics() {
        let mut o = Outcome::new(
            "disk",
            serde_json::json!({"name": "randread <&>"}),
            HostInfo::default(),
        );
        o.push(Metric::new("read_iops", 2522.0, Unit::OpsPerSec).variant("randread"));
        let md = outcomes("r", &[o]);
        assert!(md.contains("| read iops | randread |"), "{md}");
    }

    #[test]
    fn comparison_tables_line_up() {
        let g = crate::report::html::tests::groups();
        let md = comparison("cmp", &crate::suite::compare::compare(&g).unwrap());
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
    fn soak_timeline_marks_flagged_slices() {
        let s = crate::report::soak::tests::soak();
        let summary = crate::suite::soak::summarise(&s, None);
        let md = soak("soak", &s, &summary);
        assert!(
            md.contains("| 3 | 2026-11-30 02:53:20 | 1,500 | 60 % | **flagged** |"),
            "{md}"
        );
    }
}

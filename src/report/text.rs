//! Text for people: what the commands print on a terminal. A measurement is a
//! header naming the workload and host, a table of metrics, the latency summary, CPU
//! use and notes; a command adds its summary table (and the promise check); stored
//! runs read back as their command printed them; a comparison is its groups, a row
//! per metric and the geometric means; a soak is its timeline (printed live, a line
//! per slice) and its statistics; the lists are aligned tables.

use super::compare::{cells, geomean_text, letter};
use super::soak::{
    describe, drop_text, figure_head, figure_text, flagged_text, median_so_far, slice_name,
    unmeasured_note,
};
use super::table::Table;
use super::{
    Document, Expectation, Kind, Live, Offers, Outcomes, Renderer, Single, SummaryTable,
    Unsupported, format_value, metric_label,
};
use crate::host::HostInfo;
use crate::limits::DiskOffer;
use crate::model::{Better, Outcome, Unit, fairness};
use crate::store::soak::{Slice, SliceStatus, Soak, SoakState};
use crate::store::{Labels, RunInfo, StoredRun};
use crate::suite::compare::Comparison;
use crate::suite::soak::{Summary, utc};
use crate::units::{format_bytes, format_ns};
use crate::workload::unixbench::{self, SuiteResult, UnixbenchSpec, catalogue, sorted};
use std::fmt::Write;

pub struct Text;

impl Renderer for Text {
    fn supports(&self, _kind: Kind) -> bool {
        true
    }

    fn render(&self, doc: &Document) -> Result<String, Unsupported> {
        Ok(match doc {
            Document::Outcome(one) => single(one),
            Document::Outcomes(o) => {
                let mut out = String::new();
                for outcome in o.outcomes {
                    out += &outcome_text(outcome);
                    out.push('\n');
                }
                out + &closing(o)
            }
            Document::Run(run) => stored_run(run),
            Document::Runs(r) => r.runs.iter().map(stored_run).collect::<Vec<_>>().join("\n"),
            Document::Comparison(c) => comparison(c.comparison),
            Document::Soak(s) => soak(s.soak, s.summary),
            Document::History(h) => history(h.runs),
            Document::Soaks(soaks) => soak_list(soaks),
            Document::Offers(o) => offers(o),
            Document::Index(i) => index(i.spec, i.result, i.host),
        })
    }

    fn live(&self, piece: &Live) -> Option<String> {
        Some(live(piece))
    }

    /// What is left once the pieces were printed live: a command's summary, a soak's
    /// statistics.
    fn end(&self, doc: &Document) -> Result<String, Unsupported> {
        match doc {
            Document::Outcomes(o) => Ok(closing(o)),
            Document::Soak(s) => Ok(soak_summary(s.soak, s.summary)),
            _ => self.render(doc),
        }
    }
}

/// A live piece as text: also what a format that prints no pieces leaves to stderr
/// (a soak's timeline under `--json`).
pub fn live(piece: &Live) -> String {
    match piece {
        Live::Outcome(o) => outcome_text(o) + "\n",
        Live::SoakStart(soak) => soak_header(soak, None, None)
            .lines()
            .take(2)
            .map(|l| format!("{l}\n"))
            .collect(),
        Live::SoakColumns(soak, figure) => {
            let heads = soak_header(
                soak,
                figure.map(|f| f.metric.as_str()),
                figure.map(|f| f.unit),
            );
            format!("{}\n", heads.lines().nth(2).unwrap_or(""))
        }
        Live::Slice(soak, slice) => format!(
            "{}\n",
            slice_line(soak, slice, median_so_far(soak, slice.seq))
        ),
    }
}

/// One outcome in the common layout (`outcome_text` picks a workload's own where
/// it has one).
pub fn outcome(o: &Outcome) -> String {
    let mut out = format!("{} · {}\n", title(o), o.host.summary());
    if o.interrupted {
        out += "INTERRUPTED: partial results\n";
    }
    out.push('\n');

    let mut table = Table::new(
        &["metric", "kind", "threads", "working set", "value"],
        &[false, false, true, false, true],
    );
    for m in &o.metrics {
        table.row(vec![
            metric_label(&m.name),
            m.variant.clone().unwrap_or_default(),
            m.threads.map(|t| t.to_string()).unwrap_or_default(),
            m.working_set
                .map(|ws| format!("{} ({})", format_bytes(ws.bytes), ws.tier.label()))
                .unwrap_or_default(),
            format_value(m),
        ]);
    }
    out += &table.render("  ");

    if let Some(lat) = &o.latency {
        out += "\n  latency per event:";
        out += &format!(
            " min {}  avg {}",
            format_ns(lat.min_ns),
            format_ns(lat.mean_ns)
        );
        for p in &lat.percentiles {
            out += &format!("  p{} {}", trim_float(p.p), format_ns(p.ns));
        }
        out += &format!("  max {}\n", format_ns(lat.max_ns));
    }
    if o.threads.len() > 1 {
        let ((ev_avg, ev_sd), (t_avg, t_sd)) = fairness(&o.threads);
        out += &format!(
            "  threads fairness: events {ev_avg:.1} ± {ev_sd:.1}, busy time {t_avg:.3} s ± {t_sd:.3} s\n"
        );
    }
    out += &format!(
        "  elapsed {:.2} s, CPU user {:.2} s + system {:.2} s ({:.2} CPUs busy)\n",
        o.elapsed_s, o.cpu_time.user_s, o.cpu_time.system_s, o.cpu_time.utilisation
    );
    for n in &o.notes {
        out += &format!("  note: {n}\n");
    }
    out
}

fn title(o: &Outcome) -> String {
    let detail = o.spec.get("mode").or_else(|| o.spec.get("name"));
    match detail.and_then(|m| m.as_str()) {
        Some(mode) => format!("{} ({mode})", o.workload),
        None => o.workload.clone(),
    }
}

/// `99.9` -> `99.9`, `95.0` -> `95`.
fn trim_float(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

/// An outcome as its own command prints it: `net` has a layout of its own.
pub fn outcome_text(o: &Outcome) -> String {
    match o.workload.as_str() {
        "net" => net(o),
        _ => outcome(o),
    }
}

fn single(one: &Single) -> String {
    let mut out = one.lead.clone().unwrap_or_default();
    out += &outcome_text(one.outcome);
    out + one.tail.as_deref().unwrap_or("")
}

/// After the outcomes: the command's summary table, then the promise check.
fn closing(o: &Outcomes) -> String {
    let mut out = o.summary.as_ref().map(summary_table).unwrap_or_default();
    if let Some(e) = &o.expectation {
        out += &format!("\n{}", expectation(e));
    }
    out
}

/// The width text tables fit in (0: as wide as they come), set by the front end.
static WIDTH: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Fit the summary tables into `columns` characters per line (`None`: never wrap).
/// The front end sets it once from the terminal, before it prints; `run` and `show`
/// print the same table at the same width.
pub fn set_width(columns: Option<usize>) {
    WIDTH.store(columns.unwrap_or(0), std::sync::atomic::Ordering::Relaxed);
}

fn width() -> Option<usize> {
    Some(WIDTH.load(std::sync::atomic::Ordering::Relaxed)).filter(|&w| w > 0)
}

/// `Summary` over the table, indented, fit to the width, and the line under it.
fn summary_table(s: &SummaryTable) -> String {
    summary_table_at(s, width())
}

fn summary_table_at(s: &SummaryTable, width: Option<usize>) -> String {
    let mut t = Table::new(s.columns, s.right);
    for row in &s.rows {
        t.row(row.clone());
    }
    let table = match width {
        Some(w) => t.render_fit("  ", w, s.wrap),
        None => t.render("  "),
    };
    let mut out = format!("{}\n{table}", s.heading);
    if let Some(footer) = &s.footer {
        out += &crate::report::table::wrap_words(footer, width.unwrap_or(usize::MAX)).join("\n");
        out.push('\n');
    }
    out
}

/// `randread  2,522 IOPS = 97 % of the promised 2,600 IOPS  ok`, per check.
pub fn expectation(e: &Expectation) -> String {
    crate::limits::render(e.promise, &e.checks, e.threshold)
}

/// `provider=aws type=c6i.large`.
pub fn labels_text(labels: &Labels) -> String {
    labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A stored run as its command printed it, under a line saying which run it is.
fn stored_run(run: &StoredRun) -> String {
    let r = &run.info;
    let mut out = format!("run {} · {}", r.id, r.command_text());
    out += &format!(" · started {} · saved {}", r.started_at, r.saved_at);
    if !r.labels.is_empty() {
        out += &format!(" · {}", labels_text(&r.labels));
    }
    out += "\n\n";
    let texts: Vec<String> = run.outcomes.iter().map(outcome_text).collect();
    match stored_summary(run) {
        // As the command printed its document: each outcome and a blank line, then
        // the summary (`Outcomes`)...
        Some(summary) => {
            for text in texts {
                out += &text;
                out.push('\n');
            }
            out + &summary_table(&summary)
        }
        // ... or its one outcome (`Single`); several without a summary (an index of
        // several copy counts, a personality's jobs) a blank line apart.
        None => out + &texts.join("\n"),
    }
}

/// The summary table the command of a stored run printed: `disk`'s and `run`'s.
fn stored_summary(run: &StoredRun) -> Option<SummaryTable> {
    let r = &run.info;
    match r.command.as_str() {
        "run" => {
            let heading = crate::suite::run::heading(r.profile.as_deref());
            Some(SummaryTable::areas(
                heading,
                &crate::suite::run::stored(run),
            ))
        }
        "disk" => {
            let disk: Vec<Outcome> = run
                .outcomes
                .iter()
                .filter(|o| o.workload == "disk")
                .cloned()
                .collect();
            (!disk.is_empty()).then(|| SummaryTable::disk(&disk))
        }
        _ => None,
    }
}

/// The stored runs `history` lists, one line each; nothing when there are none.
fn history(runs: &[RunInfo]) -> String {
    if runs.is_empty() {
        return String::new();
    }
    let mut t = Table::new(
        &[
            "run",
            "started (UTC)",
            "host",
            "command",
            "workloads",
            "labels",
            "headline",
        ],
        &[true, false, false, false, false, false, false],
    );
    for r in runs {
        let mut command = r.command.clone();
        if let Some(p) = &r.profile {
            command += &format!(" ({p})");
        }
        if r.interrupted {
            command += " [interrupted]";
        }
        t.row(vec![
            r.id.to_string(),
            r.started_at
                .replace('T', " ")
                .trim_end_matches('Z')
                .to_string(),
            r.host.hostname.clone(),
            command,
            r.workloads.join(","),
            labels_text(&r.labels),
            r.headline.as_ref().map(headline).unwrap_or_default(),
        ]);
    }
    t.render("")
}

/// `events per second 1,518.02 events/s (1 thr)`.
fn headline(m: &crate::model::Metric) -> String {
    let mut s = metric_label(&m.name);
    if let Some(v) = &m.variant {
        s += &format!(" {v}");
    }
    s += &format!(" {}", format_value(m));
    if let Some(t) = m.threads {
        s += &format!(" ({t} thr)");
    }
    s
}

/// The groups, a row per matched metric with each group's value and its ratio to
/// the first, then the geometric mean per area.
fn comparison(c: &Comparison) -> String {
    let mut out = String::from("Groups (A is the reference)\n");
    let mut groups = Table::new(
        &["", "group", "runs", "hosts"],
        &[false, false, false, false],
    );
    for (i, g) in c.groups.iter().enumerate() {
        let runs = if g.runs.len() == 1 {
            format!("run {}", g.runs[0])
        } else {
            let ids: Vec<String> = g.runs.iter().map(|r| r.to_string()).collect();
            format!("{} runs ({})", g.runs.len(), ids.join(", "))
        };
        groups.row(vec![letter(i), g.name.clone(), runs, g.hosts.join(", ")]);
    }
    out += &groups.render("  ");
    out.push('\n');

    if c.rows.is_empty() {
        out += "No metric was measured by the first group and another: nothing to compare.\n";
    } else {
        let mut header = vec![
            "area".to_string(),
            "test".into(),
            "metric".into(),
            "thr".into(),
        ];
        let mut right = vec![false, false, false, true];
        for i in 0..c.groups.len() {
            header.push(letter(i));
            right.push(true);
            if i > 0 {
                header.push(format!("{}/A", letter(i)));
                right.push(false);
            }
        }
        let header_refs: Vec<&str> = header.iter().map(String::as_str).collect();
        let mut t = Table::new(&header_refs, &right);
        for row in &c.rows {
            t.row(cells(row));
        }
        out += &t.render("");
    }

    if !c.areas.is_empty() && c.groups.len() > 1 {
        out += "\nSummary: geometric mean of the speedups per area (above 1x: better than A)\n";
        let mut header = vec!["area".to_string()];
        for i in 1..c.groups.len() {
            header.push(format!("{} vs A", letter(i)));
        }
        let header_refs: Vec<&str> = header.iter().map(String::as_str).collect();
        let right: Vec<bool> = header.iter().map(|_| false).collect();
        let mut t = Table::new(&header_refs, &right);
        for a in &c.areas {
            let mut cells = vec![a.area.clone()];
            for g in a.geomean.iter().skip(1) {
                cells.push(g.as_ref().map(geomean_text).unwrap_or_else(|| "–".into()));
            }
            t.row(cells);
        }
        out += &t.render("  ");
    }
    for n in &c.notes {
        out += &format!("note: {n}\n");
    }
    out
}

/// What is printed before the first slice: the soak, then the column heads.
fn soak_header(soak: &Soak, metric: Option<&str>, unit: Option<Unit>) -> String {
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
fn slice_line(soak: &Soak, slice: &Slice, median: Option<f64>) -> String {
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

/// The statistics and the verdict.
fn soak_summary(soak: &Soak, summary: &Summary) -> String {
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

/// The whole result as text: header, every slice against the final median, summary.
fn soak(soak: &Soak, summary: &Summary) -> String {
    let mut out = soak_header(soak, summary.metric.as_deref(), summary.unit);
    let median = summary.stats.as_ref().map(|s| s.median);
    for slice in &soak.slices {
        let _ = writeln!(out, "{}", slice_line(soak, slice, median));
    }
    out + &soak_summary(soak, summary)
}

/// The soaks in the store, one line each; nothing when there are none.
fn soak_list(soaks: &[Soak]) -> String {
    if soaks.is_empty() {
        return String::new();
    }
    let mut t = Table::new(
        &["id", "from (UTC)", "soak", "state", "slices", "verdict"],
        &[true, false, false, false, false, false],
    );
    for s in soaks {
        let summary = crate::suite::soak::summarise(s, None);
        t.row(vec![
            s.id.to_string(),
            utc(s.plan.start_ms),
            describe(s),
            s.state.as_str().into(),
            format!(
                "{}/{} measured, {} missed, {} failed",
                summary.measured, summary.slices_planned, summary.missed, summary.failed
            ),
            format!("{:?}", summary.verdict.kind).to_lowercase(),
        ]);
    }
    t.render("")
}

/// The offers as a table (with what each gives at `size`), and how to read it.
fn offers(o: &Offers) -> String {
    let mut headers = vec!["provider", "type", "model", "IOPS", "throughput"];
    if o.size.is_some() {
        headers.extend(["IOPS at size", "MB/s at size"]);
    }
    let right: Vec<bool> = headers.iter().map(|h| h.contains("at size")).collect();
    let mut t = Table::new(&headers, &right);
    for offer in o.offers {
        t.row(offer_row(offer, o.size));
    }
    t.render("  ")
        + "\nFormulas: value = max(floor, min(base + per-GiB × size, max)). Sources, notes and\n\
           caveats: `hostbench limits --json`. Check a disk: `hostbench disk --expect tencent:premium:100GiB`.\n"
}

fn offer_row(o: &DiskOffer, size: Option<u64>) -> Vec<String> {
    let mut row = vec![
        o.provider.clone(),
        o.kind.clone(),
        format!(
            "{}{}",
            o.model,
            if o.verified { "" } else { " (unverified)" }
        ),
        o.iops_text(),
        o.throughput_text(),
    ];
    if let Some(bytes) = size {
        let p = o.at_size(bytes);
        row.push(
            p.as_ref()
                .and_then(|p| p.iops)
                .map_or("-".into(), |v| crate::units::thousands(v, 0)),
        );
        row.push(
            p.as_ref()
                .and_then(|p| p.bytes_per_sec)
                .map_or("-".into(), |v| format!("{:.1}", v / 1e6)),
        );
    }
    row
}

/// The index as UnixBench lays it out: per copy count a table of the tests with
/// their results, baselines and indexes, then the index itself.
fn index(spec: &UnixbenchSpec, result: &SuiteResult, host: &HostInfo) -> String {
    let mut out = format!(
        "UnixBench-style system index (hostbench) · {}\n",
        host.summary()
    );
    if spec.quick {
        out += "QUICK MODE: shorter runs and fewer passes; NOT comparable with full runs or UnixBench scores\n";
    }
    if result.interrupted {
        out += "INTERRUPTED: partial results\n";
    }
    for run in &result.runs {
        out += &format!(
            "\n{} {}\n",
            run.copies,
            if run.copies == 1 {
                "copy"
            } else {
                "parallel copies"
            }
        );
        let mut table = Table::new(
            &[
                "test", "result", "unit", "time", "samples", "baseline", "index",
            ],
            &[false, true, false, true, true, true, true],
        );
        for r in sorted(&run.tests) {
            let Some(s) = &r.score else {
                table.row(vec![
                    r.test.label.to_string(),
                    "no result".into(),
                    String::new(),
                    String::new(),
                    "0".into(),
                    r.test
                        .baseline
                        .map(|b| format!("{b:.1}"))
                        .unwrap_or_default(),
                    String::new(),
                ]);
                continue;
            };
            table.row(vec![
                r.test.label.to_string(),
                crate::units::thousands(s.value, 1),
                s.unit.clone(),
                format!("{:.1} s", s.time),
                s.samples.to_string(),
                r.test
                    .baseline
                    .map(|b| format!("{b:.1}"))
                    .unwrap_or_default(),
                r.test
                    .baseline
                    .map(|b| format!("{:.1}", s.value / b * 10.0))
                    .unwrap_or_default(),
            ]);
        }
        out += &table.render("  ");
        if !run.skipped.is_empty() {
            out += &format!(
                "  skipped with more than {} copies (as UnixBench 5.1.3 does): {}\n",
                unixbench::MAX_COPIES,
                run.skipped.join(" ")
            );
        }
        if let Some(index) = &run.index {
            out += &format!(
                "  UnixBench-style index{}: {:.1}\n",
                if index.partial {
                    format!(
                        " (partial: {} of {} tests)",
                        index.rows.len(),
                        catalogue::INDEX_SIZE
                    )
                } else {
                    String::new()
                },
                index.score
            );
        }
    }
    out.push('\n');
    for note in &result.environment.notes {
        out += &format!("  note: {note}\n");
    }
    out
}

/// The human report of a `net` outcome (`hostbench net`, `history`, `run`).
pub fn net(o: &Outcome) -> String {
    let mut out = net_heading(o);
    let get = |n: &str| o.metric(n, None).map(|m| m.value);
    let line = |label: &str, value: String| format!("  {label:<22} {value}\n");
    if let Some(t) = get(crate::workload::net::outcome::names::THROUGHPUT) {
        out += &line(
            "throughput (receiver)",
            format!("{}   ({:.2} MB/s)", crate::units::format_bits(t), t / 1e6),
        );
        if let Some(s) = get(crate::workload::net::outcome::names::SENDER_THROUGHPUT) {
            out += &line("sender", crate::units::format_bits(s));
        }
    }
    if let Some(t) = get(crate::workload::net::outcome::names::TRANSACTIONS_PER_SEC) {
        out += &line(
            "transactions",
            format!("{} /s", crate::units::thousands(t, 2)),
        );
    }
    if let Some(lat) = &o.latency {
        out += &line("round-trip latency", net_latency_text(lat));
    }
    for (name, label) in [
        ("retransmits", "TCP retransmits"),
        ("datagrams_sent", "datagrams sent"),
        ("datagrams_received", "datagrams received"),
        ("datagrams_lost", "datagrams lost"),
        ("transactions_lost", "transactions lost"),
    ] {
        if let Some(v) = get(name) {
            out += &line(label, crate::units::thousands(v, 0));
        }
    }
    if let Some(l) = get("loss_ratio") {
        out += &line("loss", format!("{:.2} %", l * 100.0));
    }
    out += &line("CPU", net_cpu_text(o));
    out += &line("socket buffers", net_buffers_text(o));
    out += &line("elapsed", format!("{:.2} s", o.elapsed_s));
    for n in &o.notes {
        out += &format!("  note: {n}\n");
    }
    out
}

/// `TCP_STREAM to 10.0.0.2:12866, 1 stream · host`, and the interrupted mark.
fn net_heading(o: &Outcome) -> String {
    let test = o.spec.get("mode").and_then(|m| m.as_str()).unwrap_or("?");
    let peer = o.spec.get("peer").and_then(|m| m.as_str()).unwrap_or("?");
    let parallel = o.spec.get("parallel").and_then(|m| m.as_u64()).unwrap_or(1);
    let mut out = format!(
        "{test} to {peer}, {parallel} stream{} · {}\n",
        if parallel == 1 { "" } else { "s" },
        o.host.summary()
    );
    if o.interrupted {
        out += "INTERRUPTED: partial results\n";
    }
    out.push('\n');
    out
}

fn net_latency_text(lat: &crate::model::Latency) -> String {
    let mut s = format!(
        "min {}  mean {}",
        format_ns(lat.min_ns),
        format_ns(lat.mean_ns)
    );
    for p in &lat.percentiles {
        s += &format!(
            "  p{} {}",
            crate::workload::net::outcome::trim(p.p),
            format_ns(p.ns)
        );
    }
    s += &format!("  max {}", format_ns(lat.max_ns));
    s
}

fn net_cpu_text(o: &Outcome) -> String {
    let get = |n: &str| o.metric(n, None).map(|m| m.value);
    let end = |label: &str, percent: Option<f64>, cores: Option<f64>| match (percent, cores) {
        (Some(p), Some(c)) => format!("{label} {p:.1} % ({c:.2} cores)"),
        // iperf3's protocol does not say how many CPUs the remote end has.
        (None, Some(c)) => format!("{label} {c:.2} cores"),
        (_, None) => format!("{label} ?"),
    };
    format!(
        "{}, {}",
        end("local", get("local_cpu_percent"), get("local_cpu_cores")),
        end("remote", get("remote_cpu_percent"), get("remote_cpu_cores"))
    )
}

fn net_buffers_text(o: &Outcome) -> String {
    let get = |n: &str| o.metric(n, None).map_or(0.0, |m| m.value);
    let mut s = format!(
        "local send {} / recv {}",
        get("local_sndbuf"),
        get("local_rcvbuf")
    );
    if o.metric("remote_sndbuf", None).is_some() {
        s += &format!(
            ", remote send {} / recv {}",
            get("remote_sndbuf"),
            get("remote_rcvbuf")
        );
    }
    s + " bytes"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::soak::tests::soak;

    #[test]
    fn soak_timeline_and_summary() {
        let s = soak();
        let summary = crate::suite::soak::summarise(&s, None);
        let text = super::soak(&s, &summary);
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
    fn live_pieces_add_up_to_the_whole_soak() {
        let s = soak();
        let summary = crate::suite::soak::summarise(&s, None);
        let doc = Document::Soak(crate::report::Soaked {
            soak: &s,
            summary: &summary,
            title: None,
        });
        let figure = s.slices.iter().find_map(|x| x.figure.as_ref());
        let mut live = Text.live(&Live::SoakStart(&s)).unwrap();
        live += &Text.live(&Live::SoakColumns(&s, figure)).unwrap();
        for slice in &s.slices {
            live += &Text.live(&Live::Slice(&s, slice)).unwrap();
        }
        live += &Text.end(&doc).unwrap();
        let whole = Text.render(&doc).unwrap();
        // The same lines, but live ones compare with the median so far.
        assert_eq!(live.lines().count(), whole.lines().count());
        assert_eq!(live.lines().next(), whole.lines().next());
        assert!(
            live.contains("    1  2026-11-30 00:53:20         2,590      100 %"),
            "{live}"
        );
    }
}

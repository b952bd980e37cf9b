//! Renderers of the result model, behind one interface: a front end builds a
//! `Document` (what it has to say), picks a `Format` (what the user asked for), and
//! `render` hands the document to that format's `Renderer`. One format, one file:
//! text.rs, json.rs, csv.rs, markdown.rs, html.rs, openmetrics.rs; the SVG charts
//! the pages draw are in charts.rs. A workload never touches a renderer.
//!
//! The helpers the formats share and that lay nothing out for one format live
//! beside them: table.rs (aligned text tables), compare.rs (a comparison's values
//! and ratios as words), soak.rs (a soak's figures and statistics as words).

pub mod charts;
pub mod compare;
pub mod csv;
mod document;
pub mod html;
pub mod json;
pub mod markdown;
pub mod openmetrics;
pub mod soak;
pub mod table;
pub mod text;

pub use document::{
    Compared, Document, Expectation, History, Indexed, Kind, Live, Offers, Outcomes, Runs, Single,
    Soaked, SummaryTable,
};

use crate::model::{Metric, Outcome, Unit};
use crate::units::{format_bits, format_bytes, format_ns, format_rate};
use std::fmt;

pub use crate::units::thousands;

/// The output formats, in the order `--format` lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Plain text for people, as the commands print it.
    Text,
    /// JSON (schema: docs/json.md).
    Json,
    /// One row per metric of every stored run, for spreadsheets.
    Csv,
    /// Tables for issues and wikis.
    Markdown,
    /// One self-contained page with charts (inline SVG, nothing fetched).
    Html,
    /// OpenMetrics text for node_exporter's textfile collector (gauges, `# EOF`).
    #[value(name = "openmetrics")]
    OpenMetrics,
}

impl Format {
    pub const ALL: [Format; 6] = [
        Format::Text,
        Format::Json,
        Format::Csv,
        Format::Markdown,
        Format::Html,
        Format::OpenMetrics,
    ];

    /// What a command with a `--json` switch prints.
    pub fn text_or_json(json: bool) -> Format {
        if json { Format::Json } else { Format::Text }
    }

    /// The value `--format` takes.
    pub fn value(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Json => "json",
            Format::Csv => "csv",
            Format::Markdown => "markdown",
            Format::Html => "html",
            Format::OpenMetrics => "openmetrics",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Text => "Text",
            Format::Json => "JSON",
            Format::Csv => "CSV",
            Format::Markdown => "Markdown",
            Format::Html => "HTML",
            Format::OpenMetrics => "OpenMetrics",
        })
    }
}

/// One output format.
pub trait Renderer: Sync {
    /// Whether the format has a layout for this kind of document.
    fn supports(&self, kind: Kind) -> bool;

    /// The whole document, ending in a newline (text of an empty list: nothing);
    /// `Unsupported` when the format has no layout for it (exactly when `supports`
    /// says so).
    fn render(&self, doc: &Document) -> Result<String, Unsupported>;

    /// A piece that is final before its document (a step's outcome, a soak's slice),
    /// for a format that prints as it goes; None: this format waits for the document.
    fn live(&self, _piece: &Live) -> Option<String> {
        None
    }

    /// The document after `live` printed its pieces: by default all of it.
    fn end(&self, doc: &Document) -> Result<String, Unsupported> {
        self.render(doc)
    }

    /// A word on what to use instead, when the format has no layout for `kind`.
    fn hint(&self, _kind: Kind) -> Option<&'static str> {
        None
    }
}

/// The one place a format becomes its renderer.
pub fn renderer(format: Format) -> &'static dyn Renderer {
    match format {
        Format::Text => &text::Text,
        Format::Json => &json::Json,
        Format::Csv => &csv::Csv,
        Format::Markdown => &markdown::Markdown,
        Format::Html => &html::Html,
        Format::OpenMetrics => &openmetrics::OpenMetrics,
    }
}

/// `doc` in `format`.
pub fn render(format: Format, doc: &Document) -> Result<String, Unsupported> {
    renderer(format).render(doc)
}

/// Whether `format` can render a `kind` of document, asked before loading or
/// measuring anything.
pub fn check(format: Format, kind: Kind) -> Result<(), Unsupported> {
    if renderer(format).supports(kind) {
        Ok(())
    } else {
        Err(Unsupported::new(format, kind))
    }
}

/// A format asked for a document it has no layout for: names both, and the formats
/// that do have one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported {
    pub format: Format,
    pub kind: Kind,
    /// `use --format text|json|markdown|html`, and the format's own hint.
    pub fix: String,
}

impl Unsupported {
    pub fn new(format: Format, kind: Kind) -> Self {
        let others: Vec<&str> = Format::ALL
            .iter()
            .filter(|f| renderer(**f).supports(kind))
            .map(|f| f.value())
            .collect();
        let mut fix = format!("use --format {}", others.join("|"));
        if let Some(hint) = renderer(format).hint(kind) {
            fix += &format!(" ({hint})");
        }
        Self { format, kind, fix }
    }
}

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} has no layout for {}; {}",
            self.format,
            self.kind.noun(),
            self.fix
        )
    }
}

impl std::error::Error for Unsupported {}

/// A metric's value with its unit, for people: the one rule every list and report
/// follows (the tables, `history`, the pages), so a figure reads in the same unit
/// wherever it is printed.
pub fn format_value(m: &Metric) -> String {
    match m.unit {
        Unit::EventsPerSec => format!("{} events/s", thousands(m.value, 2)),
        Unit::OpsPerSec => format!("{} ops/s", thousands(m.value, 2)),
        Unit::BytesPerSec if is_bit_rate(m) => {
            format!("{} ({:.0} MB/s)", format_bits(m.value), m.value / 1e6)
        }
        Unit::BytesPerSec => format!("{} ({:.0} MB/s)", format_rate(m.value), m.value / 1e6),
        Unit::Bytes => format_bytes(m.value as u64),
        Unit::Nanoseconds => format_ns(m.value),
        Unit::Seconds => format!("{:.3} s", m.value),
        Unit::Count => thousands(m.value, 0),
        Unit::Ratio => format!("{:.3}", m.value),
    }
}

/// A network rate (`net`'s and iperf3's `throughput`, `sender_throughput`,
/// `forward_throughput`, `reverse_throughput`): in bits per second, as `net` prints
/// it and as every network tool writes it; other byte rates (memory, disk) in MiB/s.
fn is_bit_rate(m: &Metric) -> bool {
    m.unit == Unit::BytesPerSec && m.name.ends_with("throughput")
}

/// `events_per_sec` -> `events per sec`; a few names read better spelled out.
pub fn metric_label(name: &str) -> String {
    match name {
        "events_per_sec" => "events per second".into(),
        "ops_per_sec" => "operations per second".into(),
        "bytes_per_sec" => "throughput".into(),
        "load_latency" => "load-to-use latency".into(),
        other => {
            if let Some(p) = other.strip_prefix("latency_p") {
                format!("latency {}th pct", p)
            } else {
                other.replace('_', " ")
            }
        }
    }
}

/// `disk · randread`: an outcome's heading on the pages.
pub(crate) fn title_of(o: &Outcome) -> String {
    let name = o
        .spec
        .get("name")
        .and_then(|n| n.as_str())
        .map(|n| format!(" · {n}"))
        .unwrap_or_default();
    format!("{}{name}", o.workload)
}

/// `randread, 4 threads, 16 KiB (L1)`: what sets a metric apart on the pages.
pub(crate) fn kind_of(m: &Metric) -> String {
    let mut parts: Vec<String> = [m.variant.clone(), m.threads.map(threads_text)]
        .into_iter()
        .flatten()
        .collect();
    if let Some(ws) = m.working_set {
        parts.push(format!("{} ({})", format_bytes(ws.bytes), ws.tier.label()));
    }
    parts.join(", ")
}

/// `1 thread`, `2 threads`.
pub(crate) fn threads_text(t: usize) -> String {
    format!("{t} thread{}", if t == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::HostInfo;
    use crate::store::soak::{SoakPlan, SoakState};
    use crate::store::{RunInfo, StoredRun};
    use crate::suite::compare::{Group, compare};

    /// A figure reads in one unit wherever it is printed: network throughput in
    /// bits (as `net` and the summary print it), other byte rates in MiB/s.
    #[test]
    fn network_throughput_is_in_bits_everywhere() {
        let net = Metric::new("throughput", 2_657_500_000.0, Unit::BytesPerSec);
        assert_eq!(format_value(&net), "21.26 Gbit/s (2658 MB/s)");
        assert!(format_value(&net).starts_with(&crate::units::format_bits(net.value)));
        let sender = Metric::new("sender_throughput", 125_000_000.0, Unit::BytesPerSec);
        assert_eq!(format_value(&sender), "1.00 Gbit/s (125 MB/s)");
        let disk = Metric::new("read_bytes_per_sec", 908_766_000.0, Unit::BytesPerSec);
        assert_eq!(format_value(&disk), "866.67 MiB/s (909 MB/s)");
    }

    #[test]
    fn grouping() {
        assert_eq!(thousands(1234567.891, 2), "1,234,567.89");
        assert_eq!(thousands(999.0, 0), "999");
        assert_eq!(thousands(-1000.0, 1), "-1,000.0");
        assert_eq!(thousands(0.5, 2), "0.50");
    }

    fn stored(id: i64) -> StoredRun {
        let mut o = Outcome::new("cpu", serde_json::json!({}), HostInfo::default());
        o.push(Metric::new("events_per_sec", 100.0 * id as f64, Unit::EventsPerSec).threads(1));
        StoredRun {
            info: RunInfo {
                id,
                command_line: vec!["hostbench".into(), "cpu".into()],
                started_at: String::new(),
                saved_at: String::new(),
                command: "cpu".into(),
                labels: Default::default(),
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

    /// A document of every kind, each with a little data.
    fn every_kind(f: impl Fn(&Document)) {
        let runs = [stored(1), stored(2)];
        let outcomes: Vec<Outcome> = runs.iter().flat_map(|r| r.outcomes.clone()).collect();
        let groups = [
            Group {
                name: "1".into(),
                runs: vec![runs[0].clone()],
            },
            Group {
                name: "2".into(),
                runs: vec![runs[1].clone()],
            },
        ];
        let comparison = compare(&groups).unwrap();
        let soak = crate::store::soak::Soak {
            id: 1,
            created_at: String::new(),
            updated_at: String::new(),
            state: SoakState::Running,
            pid: None,
            plan: SoakPlan {
                workload: vec!["cpu".into()],
                start_ms: 0,
                every_ms: 1000,
                for_ms: 2000,
                duration_ms: 500,
                threshold_pct: 80.0,
                labels: Default::default(),
            },
            slices: Vec::new(),
        };
        let summary = crate::suite::soak::summarise(&soak, None);
        let infos: Vec<RunInfo> = runs.iter().map(|r| r.info.clone()).collect();
        let offers = crate::limits::offers();
        let soaks = [soak.clone()];
        let spec = crate::workload::unixbench::UnixbenchSpec {
            tests: vec!["dhry2reg"],
            copies: vec![1],
            iterations: None,
            quick: true,
            seconds: None,
            dir: ".".into(),
        };
        let index = crate::workload::unixbench::SuiteResult {
            runs: Vec::new(),
            quick: true,
            environment: crate::workload::unixbench::environment::Environment {
                shell: "dash".into(),
                lang: "C".into(),
                charmap: "ANSI_X3.4-1968".into(),
                collate: "C".into(),
                locale_installed: false,
                compiler: "rustc".into(),
                notes: Vec::new(),
            },
            interrupted: false,
        };
        let host = HostInfo::default();
        let docs = [
            Document::from(&outcomes[0]),
            Document::Outcomes(Outcomes::new(&outcomes)),
            Document::Run(&runs[0]),
            Document::Runs(Runs {
                runs: &runs,
                title: None,
            }),
            Document::Comparison(Compared {
                comparison: &comparison,
                groups: &groups,
                title: None,
            }),
            Document::Soak(Soaked {
                soak: &soak,
                summary: &summary,
                title: None,
            }),
            Document::History(History {
                database: "db".into(),
                runs: &infos,
            }),
            Document::Soaks(&soaks),
            Document::Offers(Offers {
                offers: &offers[..2],
                size: Some(1 << 30),
            }),
            Document::Index(Indexed {
                spec: &spec,
                result: &index,
                host: &host,
                started_at: "2026-11-30T00:00:00Z",
            }),
        ];
        let kinds: Vec<Kind> = docs.iter().map(|d| d.kind()).collect();
        assert_eq!(kinds, Kind::ALL, "one document of every kind");
        for d in &docs {
            f(d);
        }
    }

    #[test]
    fn a_format_renders_exactly_what_it_says_it_supports() {
        every_kind(|doc| {
            for format in Format::ALL {
                let r = renderer(format);
                let result = r.render(doc);
                assert_eq!(
                    result.is_ok(),
                    r.supports(doc.kind()),
                    "{format} and {:?}: {result:?}",
                    doc.kind()
                );
                match result {
                    Ok(text) => assert!(text.ends_with('\n'), "{format} {:?}", doc.kind()),
                    Err(e) => {
                        assert_eq!(e, Unsupported::new(format, doc.kind()));
                        assert_eq!(check(format, doc.kind()), Err(e));
                    }
                }
            }
        });
    }

    #[test]
    fn format_values_are_the_ones_clap_takes() {
        use clap::ValueEnum;
        for f in Format::ALL {
            assert_eq!(f.to_possible_value().unwrap().get_name(), f.value());
        }
        assert_eq!(Format::value_variants(), Format::ALL);
    }

    #[test]
    fn every_document_has_a_text_and_a_json_layout() {
        for kind in Kind::ALL {
            assert!(check(Format::Text, kind).is_ok(), "{kind:?}");
            assert!(check(Format::Json, kind).is_ok(), "{kind:?}");
        }
    }

    #[test]
    fn unsupported_names_the_format_the_document_and_the_fix() {
        let e = Unsupported::new(Format::Csv, Kind::Soak);
        assert_eq!(
            e.to_string(),
            "CSV has no layout for a soak; use --format text|json|markdown|html"
        );
        let e = Unsupported::new(Format::OpenMetrics, Kind::Comparison);
        assert!(e.to_string().starts_with(
            "OpenMetrics has no layout for a comparison; use --format text|json|markdown|html ("
        ));
        assert!(e.to_string().contains("not a comparison"), "{e}");
    }
}

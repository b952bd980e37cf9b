//! What the front ends hand to a renderer: one `Document` per thing hostbench prints,
//! whatever the format. A document holds the data (borrowed from the command that
//! made it), never text laid out for one format — except `Single`'s `lead` and
//! `tail`, the few lines a command adds to the human text only.

use crate::limits::{Check, DiskOffer, Promise};
use crate::model::Outcome;
use crate::store::soak::{Figure, Slice, Soak};
use crate::store::{RunInfo, StoredRun};
use crate::suite::compare::{Comparison, Group};
use crate::suite::run::SummaryLine;
use crate::suite::soak::Summary as SoakSummary;
use crate::workload::unixbench::{SuiteResult, UnixbenchSpec};

/// Everything hostbench renders.
// A command builds one document, once: the size of its largest variant (a command's
// results with their summary table) costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
pub enum Document<'a> {
    /// One outcome, as a measuring command prints it (cpu, memory, net, redis).
    Outcome(Single<'a>),
    /// Several outcomes with the command's summary (disk, run), or a result file's
    /// (`report --input`).
    Outcomes(Outcomes<'a>),
    /// One stored run, as `show` prints it.
    Run(&'a StoredRun),
    /// Stored runs (`export`, `report RUN`).
    Runs(Runs<'a>),
    /// A comparison with the groups it was computed from (`compare`, `report --compare`).
    Comparison(Compared<'a>),
    /// A soak with its summary (`soak`, `report --soak`).
    Soak(Soaked<'a>),
    /// The stored runs `history` lists (no outcomes).
    History(History<'a>),
    /// The soaks `soak --list` lists.
    Soaks(&'a [Soak]),
    /// The providers' disk offers `limits` lists.
    Offers(Offers<'a>),
    /// The UnixBench-style system index (`index`), from its own result: per copy
    /// count the tests with their baselines and indexes.
    Index(Indexed<'a>),
}

/// What a document is, without its data: what a format can be asked about before
/// anything is loaded or measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Outcome,
    Outcomes,
    Run,
    Runs,
    Comparison,
    Soak,
    History,
    Soaks,
    Offers,
    Index,
}

impl Kind {
    pub const ALL: [Kind; 10] = [
        Kind::Outcome,
        Kind::Outcomes,
        Kind::Run,
        Kind::Runs,
        Kind::Comparison,
        Kind::Soak,
        Kind::History,
        Kind::Soaks,
        Kind::Offers,
        Kind::Index,
    ];

    /// The document in a sentence: `CSV has no layout for a soak`.
    pub fn noun(self) -> &'static str {
        match self {
            Kind::Outcome => "a command's result",
            Kind::Outcomes => "results",
            Kind::Run => "a stored run",
            Kind::Runs => "stored runs",
            Kind::Comparison => "a comparison",
            Kind::Soak => "a soak",
            Kind::History => "the list of stored runs",
            Kind::Soaks => "the list of soaks",
            Kind::Offers => "the providers' disk offers",
            Kind::Index => "a system index",
        }
    }
}

impl Document<'_> {
    pub fn kind(&self) -> Kind {
        match self {
            Document::Outcome(_) => Kind::Outcome,
            Document::Outcomes(_) => Kind::Outcomes,
            Document::Run(_) => Kind::Run,
            Document::Runs(_) => Kind::Runs,
            Document::Comparison(_) => Kind::Comparison,
            Document::Soak(_) => Kind::Soak,
            Document::History(_) => Kind::History,
            Document::Soaks(_) => Kind::Soaks,
            Document::Offers(_) => Kind::Offers,
            Document::Index(_) => Kind::Index,
        }
    }

    /// The title a page (HTML, Markdown) carries: the one given, else what it reports.
    pub fn title(&self) -> String {
        match self {
            Document::Outcome(s) => outcomes_title(std::slice::from_ref(s.outcome)),
            Document::Outcomes(o) => o
                .title
                .clone()
                .unwrap_or_else(|| outcomes_title(o.outcomes)),
            Document::Run(run) => runs_title(std::slice::from_ref(*run)),
            Document::Runs(r) => r.title.clone().unwrap_or_else(|| runs_title(r.runs)),
            Document::Comparison(c) => c.title.clone().unwrap_or_else(|| {
                let names: Vec<&str> = c.groups.iter().map(|g| g.name.as_str()).collect();
                format!("hostbench compare {}", names.join(" vs "))
            }),
            Document::Soak(s) => s
                .title
                .clone()
                .unwrap_or_else(|| format!("hostbench soak {}", s.soak.id)),
            Document::History(_) => "hostbench history".into(),
            Document::Soaks(_) => "hostbench soaks".into(),
            Document::Offers(_) => "hostbench limits".into(),
            Document::Index(i) => format!("hostbench index on {}", i.host.hostname),
        }
    }
}

/// `hostbench cpu, memory on web1`: the workloads in order of appearance, the host
/// of the first.
fn outcomes_title(outcomes: &[Outcome]) -> String {
    let mut workloads: Vec<&str> = Vec::new();
    for o in outcomes {
        if !workloads.contains(&o.workload.as_str()) {
            workloads.push(&o.workload);
        }
    }
    let host = outcomes.first().map_or("", |o| o.host.hostname.as_str());
    format!("hostbench {} on {host}", workloads.join(", "))
}

/// `hostbench disk on web1, run 12`; several runs: `hostbench runs 12, 13`.
fn runs_title(runs: &[StoredRun]) -> String {
    match runs {
        [one] => format!(
            "hostbench {} on {}, run {}",
            one.info.command, one.info.host.hostname, one.info.id
        ),
        _ => {
            let ids: Vec<String> = runs.iter().take(8).map(|r| r.info.id.to_string()).collect();
            let more = if runs.len() > 8 { ", …" } else { "" };
            format!("hostbench runs {}{more}", ids.join(", "))
        }
    }
}

/// One outcome and the lines its command adds to the human text around it.
pub struct Single<'a> {
    pub outcome: &'a Outcome,
    /// Text only: printed before the outcome (redis: the target and the load).
    pub lead: Option<String>,
    /// Text only: printed after it (redis: the latency from the scheduled send).
    pub tail: Option<String>,
}

impl<'a> Single<'a> {
    pub fn new(outcome: &'a Outcome) -> Self {
        Self {
            outcome,
            lead: None,
            tail: None,
        }
    }
}

impl<'a> From<&'a Outcome> for Document<'a> {
    fn from(o: &'a Outcome) -> Self {
        Document::Outcome(Single::new(o))
    }
}

/// Several outcomes, with what the command concludes from them.
pub struct Outcomes<'a> {
    pub outcomes: &'a [Outcome],
    /// The command's closing table (disk: one row per test, run: one per area).
    pub summary: Option<SummaryTable>,
    /// The figures against a provider's promise (`--expect`).
    pub expectation: Option<Expectation<'a>>,
    pub title: Option<String>,
}

impl<'a> Outcomes<'a> {
    pub fn new(outcomes: &'a [Outcome]) -> Self {
        Self {
            outcomes,
            summary: None,
            expectation: None,
            title: None,
        }
    }
}

/// A command's closing table, in every format's terms: the rows for people (text,
/// Markdown, HTML) and the value JSON writes as `summary`.
pub struct SummaryTable {
    /// The line over the table: `Summary`, `Summary (quick profile)`.
    pub heading: String,
    pub columns: &'static [&'static str],
    /// Per column: right-aligned (numbers).
    pub right: &'static [bool],
    /// Per column: words that may wrap onto more lines when the table is wider
    /// than the terminal (text).
    pub wrap: &'static [bool],
    pub rows: Vec<Vec<String>>,
    /// The line under the table (`run`: which areas were not measured).
    pub footer: Option<String>,
    pub json: serde_json::Value,
}

impl SummaryTable {
    /// `run`'s summary: one line per area with its headline and verdict.
    pub fn areas(heading: String, lines: &[SummaryLine]) -> Self {
        Self {
            heading,
            columns: &["area", "result", "verdict"],
            right: &[false; 3],
            wrap: &[false, true, true],
            rows: lines
                .iter()
                .map(|l| vec![l.area.clone(), l.headline.clone(), l.verdict.clone()])
                .collect(),
            footer: crate::suite::run::not_measured(lines),
            json: serde_json::to_value(lines).expect("summary lines serialise"),
        }
    }

    /// `disk`'s summary: per test and direction the figures a cloud-disk comparison
    /// needs; JSON has the same rows as arrays of strings.
    pub fn disk(outcomes: &[Outcome]) -> Self {
        let rows = disk_rows(outcomes);
        Self {
            heading: "Summary".into(),
            columns: &["test", "op", "IOPS", "throughput", "p50", "p99", "p99.9"],
            right: &[false, false, true, true, true, true, true],
            wrap: &[false; 7],
            json: serde_json::to_value(&rows).expect("rows serialise"),
            rows,
            footer: None,
        }
    }
}

/// One row per test and direction: rate, throughput and latency percentiles.
fn disk_rows(outcomes: &[Outcome]) -> Vec<Vec<String>> {
    use crate::units::{format_ns, format_rate, thousands};
    let mut rows = Vec::new();
    for o in outcomes {
        let name = o
            .spec
            .get("name")
            .and_then(|n| n.as_str())
            .unwrap_or("?")
            .to_string();
        for dir in ["read", "write", "fsync"] {
            let get = |m: &str| o.metric(&format!("{dir}_{m}"), None).map(|m| m.value);
            let rate = if dir == "fsync" {
                get("per_sec")
            } else {
                get("iops")
            };
            let Some(rate) = rate else { continue };
            rows.push(vec![
                name.clone(),
                dir.into(),
                thousands(rate, 0),
                get("bytes_per_sec").map(format_rate).unwrap_or_default(),
                get("latency_p50").map(format_ns).unwrap_or_default(),
                get("latency_p99").map(format_ns).unwrap_or_default(),
                get("latency_p99.9").map(format_ns).unwrap_or_default(),
            ]);
        }
    }
    rows
}

/// The measured figures against a provider's published promise.
pub struct Expectation<'a> {
    pub promise: &'a Promise,
    pub checks: Vec<Check>,
    /// Percent of the promise a figure must reach.
    pub threshold: f64,
}

impl<'a> Expectation<'a> {
    pub fn new(promise: &'a Promise, outcomes: &[Outcome], threshold: f64) -> Self {
        Self {
            promise,
            checks: crate::limits::check(promise, outcomes, threshold),
            threshold,
        }
    }

    /// Every figure reached the threshold.
    pub fn pass(&self) -> bool {
        self.checks.iter().all(|c| c.pass)
    }
}

pub struct Runs<'a> {
    pub runs: &'a [StoredRun],
    pub title: Option<String>,
}

pub struct Compared<'a> {
    pub comparison: &'a Comparison,
    /// The runs it was computed from (labels, latency curves).
    pub groups: &'a [Group],
    pub title: Option<String>,
}

pub struct Soaked<'a> {
    pub soak: &'a Soak,
    pub summary: &'a SoakSummary,
    pub title: Option<String>,
}

pub struct History<'a> {
    /// Where the runs are stored (JSON names it).
    pub database: String,
    pub runs: &'a [RunInfo],
}

pub struct Offers<'a> {
    pub offers: &'a [DiskOffer],
    /// What each offer promises for a disk of this size, in bytes.
    pub size: Option<u64>,
}

pub struct Indexed<'a> {
    pub spec: &'a UnixbenchSpec,
    pub result: &'a SuiteResult,
    pub host: &'a crate::host::HostInfo,
    /// RFC 3339, UTC.
    pub started_at: &'a str,
}

/// A piece of a document that is final before the whole is: formats that print as
/// they go (text) print it at once; the others wait for the document.
pub enum Live<'a> {
    /// A finished step's outcome (`run`).
    Outcome(&'a Outcome),
    /// The opening lines of a soak: what runs and how it is judged.
    SoakStart(&'a Soak),
    /// The timeline's column heads, once the figure is known.
    SoakColumns(&'a Soak, Option<&'a Figure>),
    /// One recorded slice, against the median so far.
    Slice(&'a Soak, &'a Slice),
}

//! JSON: the data as serde writes it (schema in docs/json.md), pretty-printed, one
//! document per command: a bare `Outcome` for one measurement; `schema_version`,
//! `outcomes`, `summary` (and `expectation`) for several; the stored run as `show
//! --json` gives it; `schema_version` and `runs` for an export; the comparison; the
//! soak with its summary; the lists as they are kept.

use super::{Document, Expectation, Kind, Renderer, Unsupported};
use crate::host::HostInfo;
use crate::model::{Outcome, SCHEMA_VERSION};
use crate::store::{RunInfo, StoredRun};
use crate::workload::unixbench::{self, SuiteResult, UnixbenchSpec, sorted};
use serde::Serialize;

pub struct Json;

impl Renderer for Json {
    fn supports(&self, _kind: Kind) -> bool {
        true
    }

    fn render(&self, doc: &Document) -> Result<String, Unsupported> {
        let text = match doc {
            Document::Outcome(one) => outcome(one.outcome),
            Document::Outcomes(o) => document_value(
                o.outcomes,
                o.summary.as_ref().map(|s| &s.json),
                o.expectation.as_ref().map(expectation),
            ),
            Document::Run(run) => pretty(run),
            Document::Runs(r) => pretty(&Export {
                schema_version: SCHEMA_VERSION,
                runs: r.runs,
            }),
            Document::Comparison(c) => pretty(c.comparison),
            Document::Soak(s) => pretty(&serde_json::json!({
                "soak": s.soak,
                "summary": s.summary,
            })),
            Document::History(h) => pretty(&HistoryDoc {
                schema_version: SCHEMA_VERSION,
                database: &h.database,
                runs: h.runs,
            }),
            Document::Soaks(soaks) => {
                let list: Vec<serde_json::Value> = soaks
                    .iter()
                    .map(|s| {
                        serde_json::json!({
                            "soak": s,
                            "summary": crate::suite::soak::summarise(s, None),
                        })
                    })
                    .collect();
                pretty(&list)
            }
            Document::Offers(o) => pretty(&o.offers),
            Document::Index(i) => pretty(&IndexDoc::new(i.spec, i.result, i.host, i.started_at)),
        };
        Ok(text + "\n")
    }
}

fn pretty<T: Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string_pretty(value).expect("hostbench's documents always serialise")
}

/// One outcome (no newline at the end).
pub fn outcome(o: &Outcome) -> String {
    serde_json::to_string_pretty(o).expect("an Outcome always serialises")
}

/// The promise check as `--expect` reports it.
pub fn expectation(e: &Expectation) -> serde_json::Value {
    serde_json::json!({
        "promise": e.promise,
        "threshold_percent": e.threshold,
        "checks": e.checks,
        "pass": e.pass(),
    })
}

/// Several outcomes (the main job) in one document.
#[derive(Serialize)]
pub struct OutcomesDoc<'a, S: Serialize> {
    pub schema_version: u32,
    pub outcomes: &'a [Outcome],
    /// The command's summary, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<S>,
    /// The measurement against a provider's promise (`--expect`), when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expectation: Option<serde_json::Value>,
}

fn document_value(
    outcomes: &[Outcome],
    summary: Option<&serde_json::Value>,
    expectation: Option<serde_json::Value>,
) -> String {
    pretty(&OutcomesDoc {
        schema_version: SCHEMA_VERSION,
        outcomes,
        summary,
        expectation,
    })
}

#[derive(Serialize)]
struct Export<'a> {
    schema_version: u32,
    runs: &'a [StoredRun],
}

#[derive(Serialize)]
struct HistoryDoc<'a> {
    schema_version: u32,
    database: &'a str,
    runs: &'a [RunInfo],
}

/// What `index --json` prints (docs/json.md).
#[derive(Serialize)]
struct IndexDoc<'a> {
    schema_version: u32,
    tool: &'static str,
    tool_version: &'static str,
    workload: &'static str,
    /// Always "UnixBench-style": never UnixBench's own score.
    kind: &'static str,
    quick: bool,
    /// False for quick runs: their figures are not comparable with full runs.
    comparable_with_full_runs: bool,
    started_at: &'a str,
    interrupted: bool,
    spec: &'a UnixbenchSpec,
    environment: &'a unixbench::environment::Environment,
    runs: Vec<RunDoc<'a>>,
    host: &'a HostInfo,
}

#[derive(Serialize)]
struct RunDoc<'a> {
    copies: usize,
    /// The index (geometric mean of the tests' indexes), if any indexed test ran.
    index_score: Option<f64>,
    partial: bool,
    tests: Vec<TestDoc<'a>>,
    skipped: &'a [&'static str],
}

#[derive(Serialize)]
struct TestDoc<'a> {
    test: &'static str,
    label: &'static str,
    result: Option<f64>,
    unit: Option<&'a str>,
    time_s: Option<f64>,
    samples: usize,
    baseline: Option<f64>,
    index: Option<f64>,
    passes: &'a [unixbench::index::Pass],
}

impl<'a> IndexDoc<'a> {
    fn new(
        spec: &'a UnixbenchSpec,
        result: &'a SuiteResult,
        host: &'a HostInfo,
        started_at: &'a str,
    ) -> Self {
        let runs = result
            .runs
            .iter()
            .map(|run| RunDoc {
                copies: run.copies,
                index_score: run.index.as_ref().map(|i| i.score),
                partial: run.index.as_ref().is_none_or(|i| i.partial),
                skipped: &run.skipped,
                tests: sorted(&run.tests)
                    .into_iter()
                    .map(|r| TestDoc {
                        test: r.test.name,
                        label: r.test.label,
                        result: r.score.as_ref().map(|s| s.value),
                        unit: r.score.as_ref().map(|s| s.unit.as_str()),
                        time_s: r.score.as_ref().map(|s| s.time),
                        samples: r.score.as_ref().map_or(0, |s| s.samples),
                        baseline: r.test.baseline,
                        index: r
                            .score
                            .as_ref()
                            .zip(r.test.baseline)
                            .map(|(s, b)| s.value / b * 10.0),
                        passes: &r.passes,
                    })
                    .collect(),
            })
            .collect();
        IndexDoc {
            schema_version: crate::model::SCHEMA_VERSION,
            tool: "hostbench",
            tool_version: env!("CARGO_PKG_VERSION"),
            workload: "index",
            kind: "UnixBench-style",
            quick: spec.quick,
            comparable_with_full_runs: !spec.quick,
            started_at,
            interrupted: result.interrupted,
            spec,
            environment: &result.environment,
            runs,
            host,
        }
    }
}

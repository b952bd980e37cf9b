//! CSV: one row per metric of every stored run (or of a result file's outcomes),
//! for spreadsheets and `awk`.
//! Values are in base units (the `unit` column names them), as in the JSON.

use super::{Document, Kind, Renderer, Unsupported};
use crate::model::Outcome;
use crate::store::{RunInfo, StoredRun, outcome_test};

pub struct Csv;

impl Renderer for Csv {
    fn supports(&self, kind: Kind) -> bool {
        matches!(
            kind,
            Kind::Outcome | Kind::Outcomes | Kind::Run | Kind::Runs
        )
    }

    fn render(&self, doc: &Document) -> Result<String, Unsupported> {
        match doc {
            Document::Outcome(one) => Ok(rows([(None, std::slice::from_ref(one.outcome))])),
            Document::Outcomes(o) => Ok(rows([(None, o.outcomes)])),
            Document::Run(run) => Ok(runs(std::slice::from_ref(*run))),
            Document::Runs(r) => Ok(runs(r.runs)),
            _ => Err(Unsupported::new(super::Format::Csv, doc.kind())),
        }
    }
}

const HEADER: [&str; 18] = [
    "run",
    "started_at",
    "host",
    "command",
    "profile",
    "labels",
    "interrupted",
    "outcome",
    "workload",
    "test",
    "metric",
    "variant",
    "threads",
    "working_set_bytes",
    "tier",
    "value",
    "unit",
    "better",
];

/// One row per metric of every run, under the header.
pub fn runs(runs: &[StoredRun]) -> String {
    rows(runs.iter().map(|r| (Some(&r.info), r.outcomes.as_slice())))
}

/// One row per metric of every outcome; the run's columns are empty for outcomes
/// that were not stored (a result file's).
fn rows<'a>(sources: impl IntoIterator<Item = (Option<&'a RunInfo>, &'a [Outcome])>) -> String {
    let mut out = line(HEADER.iter().map(|s| s.to_string()));
    for (info, outcomes) in sources {
        let labels = info
            .map(|r| {
                r.labels
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(";")
            })
            .unwrap_or_default();
        for (i, o) in outcomes.iter().enumerate() {
            for m in &o.metrics {
                out += &line([
                    info.map(|r| r.id.to_string()).unwrap_or_default(),
                    o.started_at.clone(),
                    o.host.hostname.clone(),
                    info.map(|r| r.command.clone()).unwrap_or_default(),
                    info.and_then(|r| r.profile.clone()).unwrap_or_default(),
                    labels.clone(),
                    o.interrupted.to_string(),
                    i.to_string(),
                    o.workload.clone(),
                    outcome_test(o).unwrap_or_default(),
                    m.name.clone(),
                    m.variant.clone().unwrap_or_default(),
                    m.threads.map(|t| t.to_string()).unwrap_or_default(),
                    m.working_set
                        .map(|w| w.bytes.to_string())
                        .unwrap_or_default(),
                    m.working_set
                        .map(|w| w.tier.label().to_string())
                        .unwrap_or_default(),
                    m.value.to_string(),
                    serde_name(&m.unit),
                    serde_name(&m.better),
                ]);
            }
        }
    }
    out
}

fn line(fields: impl IntoIterator<Item = String>) -> String {
    let mut s = fields
        .into_iter()
        .map(|f| field(&f))
        .collect::<Vec<_>>()
        .join(",");
    s.push('\n');
    s
}

/// RFC 4180: quote a field holding a comma, quote or line break; double its quotes.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn serde_name<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_quoted_when_needed() {
        assert_eq!(field("plain"), "plain");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field("two\nlines"), "\"two\nlines\"");
    }
}

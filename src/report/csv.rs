//! CSV: one row per metric of every stored run, for spreadsheets and `awk`.
//! Values are in base units (the `unit` column names them), as in the JSON.

use crate::store::{StoredRun, outcome_test};

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

pub fn runs(runs: &[StoredRun]) -> String {
    let mut out = line(HEADER.iter().map(|s| s.to_string()));
    for run in runs {
        let r = &run.info;
        let labels = r
            .labels
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(";");
        for (i, o) in run.outcomes.iter().enumerate() {
            for m in &o.metrics {
                out += &line([
                    r.id.to_string(),
                    o.started_at.clone(),
                    o.host.hostname.clone(),
                    r.command.clone(),
                    r.profile.clone().unwrap_or_default(),
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

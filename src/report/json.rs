//! JSON output: the `Outcome` as serde writes it (schema in docs/json.md).

use crate::model::{Outcome, SCHEMA_VERSION};
use serde::Serialize;

pub fn outcome(o: &Outcome) -> String {
    serde_json::to_string_pretty(o).expect("an Outcome always serialises")
}

/// Several outcomes (the main job) in one document.
#[derive(Serialize)]
pub struct Document<'a, S: Serialize> {
    pub schema_version: u32,
    pub outcomes: &'a [Outcome],
    pub summary: S,
    /// The measurement against a provider's promise (`--expect`), when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expectation: Option<serde_json::Value>,
}

pub fn document<S: Serialize>(outcomes: &[Outcome], summary: S) -> String {
    document_with(outcomes, summary, None)
}

pub fn document_with<S: Serialize>(
    outcomes: &[Outcome],
    summary: S,
    expectation: Option<serde_json::Value>,
) -> String {
    let doc = Document {
        schema_version: SCHEMA_VERSION,
        outcomes,
        summary,
        expectation,
    };
    serde_json::to_string_pretty(&doc).expect("a document always serialises")
}

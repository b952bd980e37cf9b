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
}

pub fn document<S: Serialize>(outcomes: &[Outcome], summary: S) -> String {
    let doc = Document {
        schema_version: SCHEMA_VERSION,
        outcomes,
        summary,
    };
    serde_json::to_string_pretty(&doc).expect("a document always serialises")
}

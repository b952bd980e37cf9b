//! Every personality run is kept, as a native run is: what the peer's command line
//! measured goes to the results store under the personality's name and the exact
//! command line, so `history`, `show`, `compare`, `report` and `soak` see it.
//!
//! A personality has no room for a flag of ours, so the store is steered by the
//! environment:
//!
//! - `HOSTBENCH_NO_SAVE=1`: keep nothing;
//! - `HOSTBENCH_DB=PATH`: another results database (as `--db`);
//! - `HOSTBENCH_LABEL=k=v[,k=v…]`: labels for the run (as `--label`);
//! - `HOSTBENCH_DEBUG=1`: say on stderr where the run went, or why it was not kept.
//!
//! Saving never adds a line to the peer's output and never changes its exit code: a
//! store that can't be written (locked, corrupt, read-only, a bad label) means the run
//! is simply not kept.
//!
//! `hostbench soak` runs a personality as a slice with `HOSTBENCH_SLICE_SECONDS` (the
//! slice's length, which the personality applies to its own time option) and
//! `HOSTBENCH_OUTCOMES=PATH` (where the slice's outcomes are written as JSON for the
//! soak to store), with `HOSTBENCH_NO_SAVE=1`.

use crate::model::Outcome;
use crate::store::{self, LabelError, Labels, Location, NewRun, StoreError};
use std::path::Path;
use std::time::Duration;

use crate::env::{DB, DEBUG, LABEL, NO_SAVE, OUTCOMES, SLICE_SECONDS, on as env_on};

/// What a personality run hands back besides its output and exit code: the outcomes
/// it measured, converted from its raw results. It also carries the one setting a
/// front end outside the peer's grammar may impose: a soak slice's length.
#[derive(Debug, Default)]
pub struct Record {
    /// Set by a soak slice: run for this long, whatever the command line's own time
    /// option says (sysbench `--time`, fio `runtime` with `time_based`, iperf3 `-t`).
    pub slice: Option<Duration>,
    outcomes: Vec<Outcome>,
}

impl Record {
    /// A record for this process: the slice length from the environment, if any.
    pub fn from_env() -> Self {
        let slice = std::env::var(SLICE_SECONDS)
            .ok()
            .and_then(|v| v.parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s > 0.0)
            .map(Duration::from_secs_f64);
        Record {
            slice,
            outcomes: Vec::new(),
        }
    }

    /// Keeps one outcome of the run (a personality calls this once per measurement:
    /// a sysbench test, a fio job or group, a redis-benchmark test). One stopped before
    /// it measured anything is not kept: the peer's output still shows it, as the peer's does.
    pub fn keep(&mut self, outcome: Outcome) {
        if outcome.measured_nothing() {
            debug("not kept: interrupted before anything was measured");
            return;
        }
        self.outcomes.push(outcome);
    }

    pub fn outcomes(&self) -> &[Outcome] {
        &self.outcomes
    }
}

fn debug(text: &str) {
    if env_on(DEBUG) {
        eprintln!("hostbench: {text}");
    }
}

/// A `HOSTBENCH_LABEL` that does not make labels.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LabelsError {
    #[error(transparent)]
    Label(#[from] LabelError),
    #[error("{LABEL}: {key} is given twice ({first} and {second})")]
    Twice {
        key: String,
        first: String,
        second: String,
    },
}

/// `HOSTBENCH_LABEL`: `k=v` pairs separated by commas.
pub fn parse_labels(text: &str) -> Result<Labels, LabelsError> {
    let mut labels = Labels::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (k, v) = store::parse_label(part)?;
        if let Some(old) = labels.insert(k.clone(), v.clone()) {
            return Err(LabelsError::Twice {
                key: k,
                first: old,
                second: v,
            });
        }
    }
    Ok(labels)
}

/// After the personality returned: writes the outcomes where a soak asked for them,
/// then saves them as one run, unless told not to. Reports only under
/// `HOSTBENCH_DEBUG`.
pub fn finish(personality: &str, command_line: &[String], record: &Record) {
    if let Some(path) = std::env::var_os(OUTCOMES)
        && let Err(e) = write_outcomes(Path::new(&path), record.outcomes())
    {
        debug(&format!("{OUTCOMES}: {e}"));
    }
    if record.outcomes.is_empty() {
        debug("nothing measured, nothing kept");
        return;
    }
    if env_on(NO_SAVE) {
        debug(&format!("not kept ({NO_SAVE} is set)"));
        return;
    }
    match save(personality, command_line, record.outcomes()) {
        Ok((id, location)) => debug(&format!("kept as run {id} in {location}")),
        Err(why) => debug(&format!("this run was not kept: {why}")),
    }
}

/// Why a run was not kept.
#[derive(Debug, thiserror::Error)]
enum NotKept {
    #[error(transparent)]
    Label(#[from] LabelsError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

fn save(
    personality: &str,
    command_line: &[String],
    outcomes: &[Outcome],
) -> Result<(i64, String), NotKept> {
    let labels = match std::env::var(LABEL) {
        Ok(text) => parse_labels(&text)?,
        Err(_) => Labels::new(),
    };
    let db = std::env::var(DB).ok();
    let mut store = store::open(&Location::resolve(db.as_deref())?)?;
    let id = store.save(&NewRun {
        command: personality,
        command_line,
        labels: &labels,
        profile: None,
        outcomes,
    })?;
    Ok((id, store.location()))
}

fn write_outcomes(path: &Path, outcomes: &[Outcome]) -> std::io::Result<()> {
    let text = serde_json::to_string(outcomes).map_err(std::io::Error::other)?;
    std::fs::write(path, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_from_the_environment_form() {
        let l = parse_labels("vm=a, provider=aws,").unwrap();
        assert_eq!(l.len(), 2);
        assert_eq!(l["vm"], "a");
        assert_eq!(l["provider"], "aws");
        let e = parse_labels("vm").unwrap_err();
        assert!(
            matches!(&e, LabelsError::Label(LabelError::NoValue { text }) if text == "vm"),
            "{e:?}"
        );
        assert!(e.to_string().contains("KEY=VALUE"), "{e}");
        let e = parse_labels("vm=a,vm=b").unwrap_err();
        assert_eq!(
            e.to_string(),
            "HOSTBENCH_LABEL: vm is given twice (a and b)"
        );
        assert!(parse_labels("").unwrap().is_empty());
    }
}

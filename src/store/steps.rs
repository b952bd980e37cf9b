//! The steps of a job (`hostbench run`) that did not give their result: skipped (the
//! host cannot run them: no redis-server), failed (an error; what they measured before
//! is kept as outcomes) or interrupted (Ctrl-C). They are kept with the run, reason and
//! all, because the outcomes alone cannot say what the run printed about them: `show`,
//! `report` and `export` print the run's summary from the outcomes *and* these.

use serde::{Deserialize, Serialize};

/// What became of a step that did not give its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StepStatus {
    /// The step ran into an error (a peer that did not answer, a full disk).
    Failed,
    /// The step cannot run on this host; nothing is wrong with the run.
    Skipped,
    /// Ctrl-C: the step, or the steps after it, did not run to the end.
    Interrupted,
}

impl StepStatus {
    /// The word the store keeps and the summary prints: `failed`, `skipped`, `interrupted`.
    pub fn as_str(self) -> &'static str {
        match self {
            StepStatus::Failed => "failed",
            StepStatus::Skipped => "skipped",
            StepStatus::Interrupted => "interrupted",
        }
    }

    pub fn parse(word: &str) -> Option<Self> {
        [
            StepStatus::Failed,
            StepStatus::Skipped,
            StepStatus::Interrupted,
        ]
        .into_iter()
        .find(|s| s.as_str() == word)
    }
}

/// One step that did not give its result, as the run reported it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepProblem {
    /// The step's name in the progress line and on stderr: `redis`, `bandwidth`, `disk`.
    pub step: String,
    /// The summary's area it reports under (`memory` for `bandwidth`); `run` for the
    /// job itself (interrupted between steps).
    pub area: String,
    pub status: StepStatus,
    /// Why, in the words the run printed: `redis-server not installed; …`.
    pub reason: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_words_round_trip_and_match_serde() {
        for s in [
            StepStatus::Failed,
            StepStatus::Skipped,
            StepStatus::Interrupted,
        ] {
            assert_eq!(StepStatus::parse(s.as_str()), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
        assert_eq!(StepStatus::parse("ok"), None);
    }
}

//! A finished index run as the one result model (`Outcome`), so the results store
//! keeps it, `compare` sets indexes side by side and `hostbench run` summarises it.

use super::{SuiteResult, UnixbenchSpec, sorted};
use crate::host::HostInfo;

/// The run as an `Outcome`, so the results store keeps it and `compare` sets indexes
/// side by side: the index per copy count, and each test's index (result / baseline
/// × 10, so equal tests compare whatever their unit).
pub fn to_outcome(
    spec: &UnixbenchSpec,
    result: &SuiteResult,
    host: HostInfo,
    started_at: &str,
    elapsed: std::time::Duration,
) -> crate::model::Outcome {
    use crate::model::{Metric, Outcome, Unit};
    let mut o = Outcome::new(
        "index",
        serde_json::to_value(spec).unwrap_or_default(),
        host,
    );
    o.started_at = started_at.to_string();
    o.elapsed_s = elapsed.as_secs_f64();
    o.interrupted = result.interrupted;
    for run in &result.runs {
        if let Some(index) = &run.index {
            o.push(Metric::new("index_score", index.score, Unit::Ratio).threads(run.copies));
            if index.partial {
                o.note(format!(
                    "partial index at {} copies: not all twelve tests ran",
                    run.copies
                ));
            }
        }
        for r in sorted(&run.tests) {
            if let (Some(score), Some(baseline)) = (&r.score, r.test.baseline) {
                o.push(
                    Metric::new("test_index", score.value / baseline * 10.0, Unit::Ratio)
                        .threads(run.copies)
                        .variant(r.test.name),
                );
            }
        }
    }
    if spec.quick {
        o.note("quick mode: not comparable with full runs or UnixBench scores");
    }
    o.note("CPU use is not measured for the index: its copies run in child processes");
    o
}

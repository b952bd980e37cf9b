//! A finished index run as the one result model: one `Outcome` per copy count (a
//! block of UnixBench's report), for `hostbench index`, `hostbench run` and the
//! UnixBench personality alike, so the results store keeps it, `compare` sets
//! indexes side by side and `hostbench run` summarises it.
//!
//! Params (what makes two index runs the same measurement): `copies`, `tests` (the
//! list run, `index` for the twelve of the index), `iterations` (`-i`, when given:
//! the passes), `quick` and `seconds` (shorter durations). Metrics: the index per
//! copy count and each test's index (result / baseline × 10, so equal tests compare
//! whatever their unit), with the copy count as the metrics' thread count.

use super::catalogue;
use super::{CopiesResult, SuiteResult, UnixbenchSpec, sorted};
use crate::host::HostInfo;
use crate::model::{Metric, Outcome, Unit};

/// The run as outcomes, one per copy count, in the order they ran.
pub fn to_outcomes(spec: &UnixbenchSpec, result: &SuiteResult, host: HostInfo) -> Vec<Outcome> {
    result
        .runs
        .iter()
        .map(|run| copies_outcome(spec, result, run, host.clone()))
        .collect()
}

/// The `tests` param: `index` for the index's twelve in their order, else the names.
pub fn tests_param(tests: &[&str]) -> String {
    let index: Vec<&str> = catalogue::expand("index")
        .unwrap_or_default()
        .iter()
        .map(|t| t.name)
        .collect();
    if tests == index.as_slice() {
        "index".into()
    } else {
        tests.join(",")
    }
}

fn params(spec: &UnixbenchSpec, copies: usize, o: &mut Outcome) {
    o.param("copies", copies);
    o.param("tests", tests_param(&spec.tests));
    if let Some(i) = spec.iterations {
        o.param("iterations", i);
    }
    if spec.quick {
        o.param("quick", "yes");
    }
    if let Some(s) = spec.seconds {
        o.param("seconds", s);
    }
}

fn copies_outcome(
    spec: &UnixbenchSpec,
    result: &SuiteResult,
    run: &CopiesResult,
    host: HostInfo,
) -> Outcome {
    let mut o = Outcome::new(
        "index",
        serde_json::to_value(spec).unwrap_or_default(),
        host,
    );
    params(spec, run.copies, &mut o);
    if !run.started_at.is_empty() {
        o.started_at = run.started_at.clone();
    }
    o.elapsed_s = run
        .ended
        .duration_since(run.started)
        .map_or(0.0, |d| d.as_secs_f64());
    // Only the copy count that was running can have been cut short.
    o.interrupted = result.interrupted
        && result
            .runs
            .last()
            .is_some_and(|last| std::ptr::eq(last, run));
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
    if !run.skipped.is_empty() {
        o.note(format!(
            "skipped with more than {} copies (as UnixBench 5.1.3): {}",
            super::MAX_COPIES,
            run.skipped.join(" ")
        ));
    }
    if spec.quick {
        o.note("quick mode: not comparable with full runs or UnixBench scores");
    }
    for note in &result.environment.notes {
        o.note(note.clone());
    }
    let one = result.runs.iter().find(|r| r.copies == 1);
    if let Some(note) = one.and_then(|one| super::index::scaling_note(one, run)) {
        o.note(note);
    }
    o.cpu_time =
        crate::model::CpuUse::over(&run.cpu, std::time::Duration::from_secs_f64(o.elapsed_s));
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::unixbench::TestResult;
    use crate::workload::unixbench::environment::Environment;
    use crate::workload::unixbench::index::{self, Pass};
    use std::time::{Duration, SystemTime};

    fn pass(count: f64) -> Pass {
        Pass {
            count,
            timebase: 0.0,
            unit: "lps".into(),
            time: 10.0,
            elapsed: 10.0,
        }
    }

    fn copies_run(copies: usize, rate: f64) -> CopiesResult {
        let test = catalogue::by_name("dhry2reg").unwrap();
        let passes = vec![pass(rate)];
        let score = index::combine(&passes);
        let scores = vec![(test, score.as_ref().unwrap().value)];
        let started = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        CopiesResult {
            copies,
            started,
            started_at: "2023-11-14T22:13:20Z".into(),
            ended: started + Duration::from_secs(12),
            index: index::index(&scores),
            tests: vec![TestResult {
                test,
                passes,
                score,
            }],
            skipped: vec![],
            cpu: Default::default(),
        }
    }

    #[test]
    fn one_outcome_per_copy_count_with_params() {
        let spec = UnixbenchSpec {
            tests: vec!["dhry2reg"],
            copies: vec![1, 4],
            iterations: Some(1),
            quick: true,
            seconds: Some(0.2),
            dir: std::env::temp_dir(),
        };
        let result = SuiteResult {
            runs: vec![copies_run(1, 1_167_000.0), copies_run(4, 4_668_000.0)],
            quick: true,
            environment: Environment::detect(),
            interrupted: false,
        };
        let outcomes = to_outcomes(&spec, &result, HostInfo::default());
        assert_eq!(outcomes.len(), 2);
        let (one, four) = (&outcomes[0], &outcomes[1]);
        assert_eq!(one.workload, "index");
        let params: Vec<(&str, &str)> = one
            .params
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            params,
            [
                ("copies", "1"),
                ("iterations", "1"),
                ("quick", "yes"),
                ("seconds", "0.2"),
                ("tests", "dhry2reg")
            ]
        );
        assert_eq!(four.params["copies"], "4");
        // 1,167,000 lps against a baseline of 116,700: index 100 (partial: one test).
        let score = one.metric("index_score", Some(1)).unwrap();
        assert!((score.value - 100.0).abs() < 1e-9, "{}", score.value);
        assert_eq!(score.unit, Unit::Ratio);
        let test = four.metric("test_index", Some(4)).unwrap();
        assert_eq!(test.variant.as_deref(), Some("dhry2reg"));
        assert!((test.value - 400.0).abs() < 1e-9);
        assert_eq!(one.started_at, "2023-11-14T22:13:20Z");
        assert_eq!(one.elapsed_s, 12.0);
        assert!(one.notes.iter().any(|n| n.contains("partial index")));
    }

    #[test]
    fn the_index_list_is_named_index() {
        let names: Vec<&str> = catalogue::expand("index")
            .unwrap()
            .iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(tests_param(&names), "index");
        assert_eq!(tests_param(&["pipe", "syscall"]), "pipe,syscall");
    }

    #[test]
    fn a_gain_beyond_the_copy_count_is_explained() {
        let spec = UnixbenchSpec {
            tests: vec!["dhry2reg"],
            copies: vec![1, 2],
            iterations: Some(1),
            quick: true,
            seconds: Some(0.2),
            dir: std::env::temp_dir(),
        };
        let result = |two_rate: f64| SuiteResult {
            runs: vec![copies_run(1, 1_000_000.0), copies_run(2, two_rate)],
            quick: true,
            environment: Environment::detect(),
            interrupted: false,
        };
        let notes = |two_rate: f64| {
            to_outcomes(&spec, &result(two_rate), HostInfo::default())
                .into_iter()
                .map(|o| o.notes)
                .collect::<Vec<_>>()
        };
        let beyond = |n: &String| n.contains("beyond the copy count");
        // Two copies at 7x one: explained on the 2-copy outcome only.
        let seven = notes(7_000_000.0);
        assert!(!seven[0].iter().any(beyond), "{:?}", seven[0]);
        let note = seven[1].iter().find(|n| beyond(n)).expect("a note");
        assert!(note.contains("dhry2reg 7.0x"), "{note}");
        assert!(note.contains("index 7.0x"), "{note}");
        // 2.1x with two copies is within the margin: no note.
        assert!(!notes(2_100_000.0)[1].iter().any(beyond));
    }

    #[test]
    fn cpu_use_is_the_copies_own() {
        let spec = UnixbenchSpec {
            tests: vec!["dhry2reg"],
            copies: vec![1],
            iterations: Some(1),
            quick: true,
            seconds: Some(0.2),
            dir: std::env::temp_dir(),
        };
        let mut run = copies_run(1, 1_000_000.0);
        run.cpu = crate::measure::cputime::CpuTime {
            user_s: 11.0,
            system_s: 1.0,
        };
        let result = SuiteResult {
            runs: vec![run],
            quick: true,
            environment: Environment::detect(),
            interrupted: false,
        };
        let o = &to_outcomes(&spec, &result, HostInfo::default())[0];
        assert_eq!(o.cpu_time.user_s, 11.0);
        // 12 s of CPU over the run's 12 s: one CPU busy.
        assert!((o.cpu_time.utilisation - 1.0).abs() < 1e-9);
        assert!(!o.notes.iter().any(|n| n.contains("not measured")));
    }
}

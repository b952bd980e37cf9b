//! `hostbench compare` on hand-made runs stored through the library: known ratios,
//! repeats with their propagated uncertainty, seed 003's hand-written comparison, and
//! bad groups; and two native runs of different lengths, named in words.

mod common;
use common::*;
use hostbench::host::HostInfo;
use hostbench::model::{Metric, Outcome, Unit};
use hostbench::store::{self, Labels, Location, NewRun};
use serde_json::Value;
use std::path::Path;
use std::process::Output;

fn host(name: &str) -> HostInfo {
    HostInfo {
        hostname: name.into(),
        cpu_model: "Test CPU".into(),
        logical_cpus: 2,
        ..HostInfo::default()
    }
}

/// sysbench-style cpu and memory figures, as seed 003 reports them.
fn seed_like(h: &str, events_per_sec: f64, mib_per_sec: f64, avg_latency_ms: f64) -> Vec<Outcome> {
    let mut cpu = Outcome::new("cpu", serde_json::json!({"max_prime": 20000}), host(h));
    cpu.push(Metric::new("events_per_sec", events_per_sec, Unit::EventsPerSec).threads(1));
    cpu.push(Metric::new("events", events_per_sec * 10.0, Unit::Count).threads(1));
    let mut mem = Outcome::new("memory", serde_json::json!({"mode": "block"}), host(h));
    mem.push(
        Metric::new("bytes_per_sec", mib_per_sec * 1048576.0, Unit::BytesPerSec)
            .threads(1)
            .variant("seq-write"),
    );
    mem.push(Metric::new("latency_avg", avg_latency_ms * 1e6, Unit::Nanoseconds).threads(1));
    vec![cpu, mem]
}

fn save(db: &Path, labels: &[(&str, &str)], outcomes: &[Outcome]) -> i64 {
    let mut s = store::open(&Location::sqlite(db)).unwrap();
    let labels: Labels = labels
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    s.save(&NewRun {
        command: "test",
        command_line: &[],
        labels: &labels,
        profile: None,
        outcomes,
    })
    .unwrap()
}

fn compare(db: &Path, args: &[&str]) -> Output {
    hostbench()
        .arg("compare")
        .args(args)
        .arg("--db")
        .arg(db)
        .output()
        .unwrap()
}

fn json(db: &Path, args: &[&str]) -> Value {
    let mut v = args.to_vec();
    v.push("--json");
    let out = compare(db, &v);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn row<'a>(c: &'a Value, metric: &str) -> &'a Value {
    c["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == metric)
        .unwrap_or_else(|| panic!("no row {metric} in {c:#}"))
}

#[test]
fn seed_003_by_the_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    // The guide's VM and desktop (seed 003): "2x", "4.5x" throughput, "0.35x" latency.
    let vm = save(&db, &[], &seed_like("vm-ubt1", 354.62, 6334.09, 0.15));
    let desk = save(&db, &[], &seed_like("desktop", 772.42, 25949.52, 0.04));
    let c = json(&db, &[&vm.to_string(), &desk.to_string()]);
    let ratio = |m: &str| row(&c, m)["ratios"][1]["ratio"].as_f64().unwrap();
    assert!((ratio("events_per_sec") - 2.178).abs() < 0.001);
    assert!((ratio("bytes_per_sec") - 4.097).abs() < 0.001);
    assert!((ratio("latency_avg") - 0.2667).abs() < 0.001);
    // One run a side and no timeline: the ratios stand, their noise is unknown.
    let lat = &row(&c, "latency_avg")["ratios"][1];
    assert_eq!(lat["verdict"], "not judged");
    assert!((lat["factor"].as_f64().unwrap() - 3.75).abs() < 0.001);
    assert!((lat["speedup"].as_f64().unwrap() - 3.75).abs() < 0.001);
    assert_eq!(row(&c, "latency_avg")["better"], "lower");
    assert!(
        c["rows"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["metric"] != "events"),
        "totals are not compared"
    );
    let areas: Vec<&str> = c["areas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["area"].as_str().unwrap())
        .collect();
    assert_eq!(areas, ["cpu", "memory"]);
    let mem = &c["areas"][1]["geomean"][1];
    assert!((mem["speedup"].as_f64().unwrap() - (4.097f64 * 3.75).sqrt()).abs() < 0.01);
    assert_eq!(mem["metrics"], 2);

    let out = compare(&db, &[&vm.to_string(), &desk.to_string()]);
    let text = stdout(&out);
    assert!(text.contains("not judged (×2.18)"), "{text}");
    assert!(text.contains("not judged (×4.10)"), "{text}");
    assert!(text.contains("not judged (×0.27)"), "{text}");
    assert!(text.contains("metric(s) not judged"), "{text}");
    assert!(text.contains("6,334.09 MiB/s"), "{text}");
    assert!(text.contains("Summary"), "{text}");
}

#[test]
fn label_and_host_groups_with_repeats() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    for eps in [100.0, 110.0, 90.0] {
        save(
            &db,
            &[("type", "small")],
            &seed_like("a1", eps, 1000.0, 1.0),
        );
    }
    for eps in [200.0, 220.0] {
        save(&db, &[("type", "big")], &seed_like("b1", eps, 2000.0, 0.5));
    }
    let c = json(&db, &["label:type=small", "host:b1"]);
    assert_eq!(c["groups"][0]["runs"].as_array().unwrap().len(), 3);
    assert_eq!(c["groups"][1]["hosts"][0], "b1");
    let eps = row(&c, "events_per_sec");
    assert_eq!(eps["values"][0]["n"], 3);
    assert!((eps["values"][0]["mean"].as_f64().unwrap() - 100.0).abs() < 1e-9);
    assert!((eps["values"][0]["stddev"].as_f64().unwrap() - 10.0).abs() < 1e-9);
    assert!((eps["values"][1]["stddev"].as_f64().unwrap() - 200f64.sqrt()).abs() < 1e-9);
    let r = &eps["ratios"][1];
    assert!((r["ratio"].as_f64().unwrap() - 2.1).abs() < 1e-9);
    let expected = 2.1 * (0.1f64.powi(2) + (200f64.sqrt() / 210.0).powi(2)).sqrt();
    assert!((r["uncertainty"].as_f64().unwrap() - expected).abs() < 1e-9);
    // Several runs as one group, written as a list of ids: the same arithmetic.
    let c2 = json(&db, &["1,2,3", "4,5"]);
    assert_eq!(row(&c2, "events_per_sec")["ratios"][1], *r);

    let text = stdout(&compare(&db, &["label:type=small", "label:type=big"]));
    assert!(text.contains("100.00 ± 10.00 events/s"), "{text}");
    assert!(text.contains("2.10 ± 0.25x faster"), "{text}");
    // --workload narrows to one workload.
    let c3 = json(
        &db,
        &["label:type=small", "label:type=big", "--workload", "cpu"],
    );
    assert_eq!(c3["rows"].as_array().unwrap().len(), 1);
}

#[test]
fn bad_groups_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    // No database yet.
    let out = compare(&db, &["1", "2"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no results database"),
        "{}",
        stderr(&out)
    );
    assert!(!db.exists());
    save(&db, &[], &seed_like("a", 1.0, 1.0, 1.0));
    for (args, says) in [
        (&["1"][..], "GROUP"),
        (&["1", "foo"], "'foo' is not a group"),
        (&["1", "label:nokey"], "KEY=VALUE"),
        (&["1", "99"], "no run 99"),
        (&["1", "host:nobody"], "host:nobody: no stored run"),
        (
            &["1", "1", "--workload", "disk"],
            "no stored run with disk results",
        ),
    ] {
        let out = compare(&db, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
        assert!(!stderr(&out).contains("panicked"));
    }
}

/// Every `N.NNx WORD` in the text, as (N.NN, WORD).
fn factors(text: &str) -> Vec<(f64, String)> {
    let words: Vec<&str> = text.split_whitespace().collect();
    words
        .windows(2)
        .filter_map(|w| {
            let n = w[0].strip_suffix('x')?.parse::<f64>().ok()?;
            Some((n, w[1].to_string()))
        })
        .collect()
}

#[test]
fn native_runs_with_different_times_are_named_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    for time in ["1", "2"] {
        let out = with_db(
            &db,
            &[
                "cpu",
                "--threads",
                "1",
                "--max-prime",
                "2000",
                "--time",
                time,
            ],
        );
        assert!(out.status.success(), "cpu --time {time}: {}", stderr(&out));
    }
    let out = compare(&db, &["1", "2"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let note = text
        .lines()
        .find(|l| l.starts_with("note:") && l.contains("cpu ran with"))
        .unwrap_or_else(|| panic!("no note names the setting that differs:\n{text}"));
    assert!(note.contains("time 1 s in A (1), 2 s in B (2)"), "{note}");
    assert!(!text.contains('{') && !text.contains("secs"), "{text}");
    // One run each and no timeline: nothing is called faster or slower, and no
    // factor below 1 carries a direction.
    assert!(text.contains("not judged"), "{text}");
    for (n, word) in factors(&text) {
        assert!(
            n >= 1.0 || !["faster", "slower", "better", "worse"].contains(&word.as_str()),
            "{n}x {word} in\n{text}"
        );
    }
    let c = json(&db, &["1", "2"]);
    let notes = c["notes"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| n
            .as_str()
            .unwrap()
            .contains("time 1 s in A (1), 2 s in B (2)")),
        "{notes:?}"
    );
}

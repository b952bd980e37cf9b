//! The UnixBench-style index, driven as a user would: every test returns a positive
//! rate in quick mode, the native JSON, the `unixbench` personality's report layout,
//! and bad input.

mod common;
use common::*;
use serde_json::Value;

fn index_json(args: &[&str]) -> Value {
    let mut all = vec![
        "index",
        "--json",
        "--quick",
        "--copies",
        "1",
        "--iterations",
        "1",
        "--dir",
    ];
    let dir = std::env::temp_dir();
    let dir = dir.to_str().unwrap();
    all.push(dir);
    all.extend_from_slice(args);
    let out = run(&all);
    assert!(out.status.success(), "{all:?} failed: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("valid JSON on stdout")
}

fn results(v: &Value) -> Vec<(String, f64)> {
    v["runs"][0]["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["test"].as_str().unwrap().to_string(),
                t["result"].as_f64().unwrap_or(0.0),
            )
        })
        .collect()
}

#[test]
fn every_test_returns_a_positive_rate_in_quick_mode() {
    let v = index_json(&[
        "--time",
        "0.2",
        "--tests",
        "dhry2reg,whetstone,execl,fstime,fsbuffer,fsdisk,pipe,context1,spawn,syscall",
    ]);
    assert_eq!(v["kind"], "UnixBench-style");
    assert_eq!(v["quick"], true);
    assert_eq!(v["comparable_with_full_runs"], false);
    let got = results(&v);
    assert_eq!(got.len(), 10);
    for (test, rate) in &got {
        assert!(*rate > 0.0, "{test}: {rate}");
    }
    let run = &v["runs"][0];
    assert_eq!(run["partial"], true);
    assert!(run["index_score"].as_f64().unwrap() > 0.0);
    // Each test's index is its result over its baseline, times ten.
    for t in run["tests"].as_array().unwrap() {
        let (r, b, i) = (
            t["result"].as_f64().unwrap(),
            t["baseline"].as_f64().unwrap(),
            t["index"].as_f64().unwrap(),
        );
        assert!((r / b * 10.0 - i).abs() < 1e-6 * i);
    }
    let env = &v["environment"];
    assert!(env["shell"].as_str().unwrap().contains('/'));
    assert_eq!(env["lang"], "en_US.utf8");
}

#[test]
fn shell_scripts_return_a_positive_rate_in_quick_mode() {
    let v = index_json(&["--time", "1s", "--tests", "shell1,shell8"]);
    let got = results(&v);
    assert_eq!(
        got.iter().map(|g| g.0.as_str()).collect::<Vec<_>>(),
        ["shell1", "shell8"]
    );
    for (test, rate) in &got {
        assert!(*rate > 0.0, "{test}: {rate}");
    }
    assert_eq!(v["runs"][0]["tests"][0]["unit"], "lpm");
}

#[test]
fn personality_prints_unixbench_report() {
    let out = hostbench()
        .args([
            "unixbench",
            "-i",
            "1",
            "-c",
            "1",
            "-c",
            "2",
            "syscall",
            "pipe",
        ])
        .env("HOSTBENCH_UNIXBENCH_QUICK_SECONDS", "0.2")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("\n1 x System Call Overhead  1\n"), "{text}");
    assert!(text.contains("\n2 x Pipe Throughput  1\n"), "{text}");
    assert!(text.contains("   BYTE UNIX Benchmarks (Version 5.1.3)"));
    assert!(text.contains("UnixBench-style"));
    assert!(text.contains("QUICK MODE"));
    assert!(
        text.contains("2 CPUs in system; running 1 parallel copy of tests")
            || text.contains("in system; running 1 parallel copy of tests")
    );
    assert!(text.contains("running 2 parallel copies of tests"));
    assert_eq!(text.matches("Benchmark Run: ").count(), 2);
    // `%-40s %12.1f %-5s (%.1f s, %d samples)`, alphabetical: Pipe before System.
    let line = text
        .lines()
        .find(|l| l.starts_with("Pipe Throughput "))
        .unwrap();
    assert_eq!(line.find('.').map(|p| p > 40), Some(true), "{line}");
    assert!(line.ends_with("s, 1 samples)"), "{line}");
    assert_eq!(
        &line[41..53]
            .trim_start()
            .chars()
            .next()
            .map(|c| c.is_ascii_digit()),
        &Some(true)
    );
    let report = &text[text.find("Benchmark Run: ").unwrap()..];
    let pipe = report.find("Pipe Throughput ").unwrap();
    let sys = report.find("System Call Overhead ").unwrap();
    assert!(pipe < sys);
    assert!(
        text.contains(
            "System Benchmarks Partial Index              BASELINE       RESULT    INDEX"
        )
    );
    let score = text
        .lines()
        .find(|l| l.starts_with("System Benchmarks Index Score (Partial Only)"))
        .unwrap();
    assert_eq!(score.len(), 75, "{score:?}");
    let row = text
        .lines()
        .find(|l| l.starts_with("System Call Overhead") && l.contains("15000.0"))
        .unwrap();
    assert_eq!(row.len(), 40 + 1 + 12 + 1 + 12 + 1 + 8, "{row:?}");
}

#[test]
fn bad_input_is_named_with_exit_2() {
    let out = run(&["unixbench", "-c", "x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("\"x\" is not a positive whole number"));
    let out = run(&["unixbench", "gears"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("unknown test \"gears\""));
    let out = run(&["index", "--tests", "bogus"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("unknown test 'bogus'"));
    let out = run(&["index", "--time", "1s"]);
    assert_eq!(out.status.code(), Some(2));
    let out = run(&["index", "--quick", "--time", "0", "--dir", "/"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("seconds=0"));
}

/// `hostbench unixbench …` in quick mode, kept in `db` under `label`.
fn unixbench_kept(db: &std::path::Path, label: &str, args: &[&str]) -> std::process::Output {
    let out = hostbench()
        .arg("unixbench")
        .args(args)
        .env("HOSTBENCH_UNIXBENCH_QUICK_SECONDS", "0.2")
        .env("HOSTBENCH_DB", db)
        .env("HOSTBENCH_LABEL", label)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    out
}

/// The report with its numbers and times blanked: what two runs share.
fn skeleton(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.contains(" load average") && !l.starts_with("   System:"))
        .map(|l| {
            // A run of digits becomes one '#': an index of 99.5 and one of
            // 100.2 have the same skeleton.
            let mut blanked = String::new();
            for c in l.chars() {
                if !c.is_ascii_digit() {
                    blanked.push(c);
                } else if !blanked.ends_with('#') {
                    blanked.push('#');
                }
            }
            blanked.split_whitespace().collect::<Vec<_>>().join(" ")
        })
        .collect()
}

#[test]
fn personality_runs_are_kept_and_compare_with_native() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let args = ["-q", "-i", "1", "-c", "1", "syscall", "pipe"];
    let outs: Vec<_> = ["vm=a", "vm=a", "vm=b"]
        .iter()
        .map(|l| unixbench_kept(&db, l, &args))
        .collect();
    for out in &outs {
        assert_eq!(stderr(out), "");
    }
    let unsaved = hostbench()
        .arg("unixbench")
        .args(args)
        .env("HOSTBENCH_UNIXBENCH_QUICK_SECONDS", "0.2")
        .env("HOSTBENCH_NO_SAVE", "1")
        .output()
        .unwrap();
    assert_eq!(skeleton(&stdout(&outs[0])), skeleton(&stdout(&unsaved)));

    let history = with_db(&db, &["history", "--json"]);
    let runs: Value = serde_json::from_slice(&history.stdout).unwrap();
    let runs = runs["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3);
    for run in runs {
        assert_eq!(run["command"], "unixbench");
        let line: Vec<&str> = run["command_line"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_str().unwrap())
            .collect();
        assert!(line.ends_with(&args), "{line:?}");
        assert_eq!(run["workloads"], serde_json::json!(["index"]));
    }
    let out = with_db(&db, &["compare", "label:vm=a", "label:vm=b"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains('±'), "{}", stdout(&out));

    // The native index with the same settings is the same measurement: one row each.
    let dir_arg = dir.path().to_str().unwrap();
    let native = hostbench()
        .args([
            "index",
            "--quick",
            "--time",
            "0.2",
            "--iterations",
            "1",
            "--copies",
            "1",
            "--tests",
            "syscall,pipe",
            "--dir",
            dir_arg,
            "--label",
            "vm=native",
            "--db",
        ])
        .arg(&db)
        .output()
        .unwrap();
    assert!(native.status.success(), "{}", stderr(&native));
    let out = with_db(&db, &["compare", "label:vm=native", "label:vm=b", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = c["rows"].as_array().unwrap();
    let scores: Vec<&Value> = rows
        .iter()
        .filter(|r| r["metric"] == "index_score")
        .collect();
    assert_eq!(scores.len(), 1, "{c:#}");
    assert_eq!(scores[0]["params"]["copies"], "1");
    assert_eq!(scores[0]["params"]["tests"], "syscall,pipe");
    assert_eq!(
        rows.iter().filter(|r| r["metric"] == "test_index").count(),
        2
    );

    // Other passes: refused, naming the setting.
    unixbench_kept(
        &db,
        "vm=i2",
        &["-q", "-i", "2", "-c", "1", "syscall", "pipe"],
    );
    let out = with_db(&db, &["compare", "label:vm=native", "label:vm=i2"]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("iterations 1 in A"),
        "{}",
        stderr(&out)
    );
}

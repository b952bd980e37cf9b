//! fio and dd runs are kept as native runs are: each fio report and each dd copy
//! becomes an outcome in the results store, under the personality's name and its
//! exact command line, with the params that identify the measurement. Labelled
//! repeats compare with ±; a native `hostbench disk` test and the fio job with the
//! same params share one row, and a different engine is refused by name. Saving
//! changes nothing in what the personality prints or how it exits. A soak slice runs
//! every job of a job file time-based for the slice's length.

mod common;

use common::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

/// hostbench in `dir` on the database `db`, with labels, as a personality or not.
fn hb(dir: &Path, db: &Path, label: Option<&str>, args: &[&str]) -> Output {
    let mut c = hostbench();
    c.current_dir(dir).env("HOSTBENCH_DB", db).args(args);
    if let Some(l) = label {
        c.env("HOSTBENCH_LABEL", l);
    }
    c.output().unwrap()
}

fn stored_runs(db: &Path) -> Vec<Value> {
    let out = hostbench()
        .args(["history", "--json", "--db"])
        .arg(db)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["runs"].as_array().unwrap().clone()
}

fn compare(db: &Path, groups: &[&str], json: bool) -> Output {
    let mut c = hostbench();
    c.arg("compare").args(groups).arg("--db").arg(db);
    if json {
        c.arg("--json");
    }
    c.output().unwrap()
}

fn command_line(run: &Value) -> Vec<String> {
    run["command_line"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect()
}

/// The key paths of a JSON document, arrays by their first element; what only
/// echoes data (percentile keys, bins, the options as given) is not descended.
fn json_keys(v: &Value, prefix: &str, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                let path = format!("{prefix}/{k}");
                out.insert(path.clone());
                if !["percentile", "bins", "job options", "global options"].contains(&k.as_str()) {
                    json_keys(v, &path, out);
                }
            }
        }
        Value::Array(a) => {
            if let Some(first) = a.first() {
                json_keys(first, &format!("{prefix}[]"), out);
            }
        }
        _ => {}
    }
}

fn keys_of(out: &Output) -> BTreeSet<String> {
    let v: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(out)));
    let mut keys = BTreeSet::new();
    json_keys(&v, "", &mut keys);
    keys
}

/// The labels of fio's normal report, numbers left out, without the rows whose
/// presence depends on the data.
fn skeleton(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.trim_start().starts_with("lat (") || l.contains("): min="))
        .filter(|l| !l.starts_with("   bw (") && !l.starts_with("   iops        :"))
        .filter(|l| !l.contains("Laying out") && !l.trim().is_empty())
        .map(|l| {
            let label: String = l
                .chars()
                .take_while(|c| !c.is_ascii_digit() && *c != '=')
                .collect();
            label
                .replace("(nsec)", "(unit)")
                .replace("(usec)", "(unit)")
                .replace("(msec)", "(unit)")
        })
        .collect()
}

/// A file that is not a results database: saving must leave it alone.
fn foreign_db(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("foreign.db");
    std::fs::write(
        &path,
        b"this is not a database, and it must stay as it is\n",
    )
    .unwrap();
    path
}

/// Seed 002's first command line, its size and time shrunk: four clones, one report
/// each.
const SEED_RANDREAD: [&str; 11] = [
    "fio",
    "--filename=testfile",
    "--size=16m",
    "--direct=1",
    "--rw=randread",
    "--bs=4k",
    "--ioengine=libaio",
    "--iodepth=64",
    "--runtime=1",
    "--numjobs=4",
    "--name=rand_read_4k",
];

#[test]
fn fio_runs_are_kept_labelled_and_compared() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let mut args = SEED_RANDREAD.to_vec();
    args.push("--output-format=json");
    let mut printed = Vec::new();
    for label in ["vm=a", "vm=a", "vm=b"] {
        let out = hb(dir.path(), &db, Some(label), &args);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(stderr(&out), "", "saving prints nothing");
        printed.push(keys_of(&out));
    }
    let runs = stored_runs(&db);
    assert_eq!(runs.len(), 3);
    for r in &runs {
        assert_eq!(r["command"], "fio");
        assert_eq!(r["workloads"], serde_json::json!(["disk"]));
        // One outcome per report fio printed: four clones, no group_reporting.
        assert_eq!(r["outcome_count"], 4);
        let mut want = vec!["hostbench".to_string()];
        want.extend(args.iter().map(|a| a.to_string()));
        assert_eq!(command_line(r), want);
    }
    assert_eq!(runs[2]["labels"]["vm"], "b");

    let out = compare(&db, &["label:vm=a", "label:vm=b"], false);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let iops = text
        .lines()
        .find(|l| l.contains("rand_read_4k") && l.contains("read iops"))
        .unwrap_or_else(|| panic!("no read iops row:\n{text}"));
    assert!(iops.contains('±'), "{iops}");
    assert!(iops.contains("x "), "a ratio: {iops}");

    // The same run without saving prints the same document.
    let quiet = hostbench()
        .current_dir(dir.path())
        .env("HOSTBENCH_NO_SAVE", "1")
        .env("HOSTBENCH_DB", &db)
        .args(&args)
        .output()
        .unwrap();
    assert!(quiet.status.success());
    assert_eq!(keys_of(&quiet), printed[0]);
    assert_eq!(stored_runs(&db).len(), 3, "HOSTBENCH_NO_SAVE keeps nothing");
}

#[test]
fn saving_never_changes_what_fio_prints() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let mut args = SEED_RANDREAD.to_vec();
    args[8] = "--runtime=0.3";
    let quiet = hostbench()
        .current_dir(dir.path())
        .env("HOSTBENCH_NO_SAVE", "1")
        .args(&args)
        .output()
        .unwrap();
    let saved = hb(dir.path(), &db, Some("vm=a"), &args);
    let foreign = foreign_db(dir.path());
    let before = std::fs::read(&foreign).unwrap();
    let refused = hb(dir.path(), &foreign, Some("vm=a"), &args);
    for out in [&quiet, &saved, &refused] {
        assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
        assert_eq!(stderr(out), "");
        // Line for line, numbers aside (and the lines whose presence depends on the
        // data: latency classes, rate samples, the first run's layout).
        assert_eq!(skeleton(&stdout(out)), skeleton(&stdout(&quiet)));
    }
    assert_eq!(std::fs::read(&foreign).unwrap(), before);
    assert_eq!(stored_runs(&db).len(), 1);
}

/// `hostbench disk --tests randread` and the fio job with its params (the engine the
/// native run used) are one row; another engine is another measurement.
#[test]
fn native_and_fio_with_the_same_params_are_one_row() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let d = dir.path().to_str().unwrap();
    let out = hb(
        dir.path(),
        &db,
        None,
        &[
            "disk",
            "--dir",
            d,
            "--tests",
            "randread",
            "--size",
            "16M",
            "--time",
            "1s",
            "--warmup",
            "0s",
            "--label",
            "side=native",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let show = hostbench()
        .args(["show", "last", "--json", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(show.status.success(), "{}", stderr(&show));
    let v: Value = serde_json::from_slice(&show.stdout).unwrap();
    let outcome = &v["outcomes"][0];
    let params = &outcome["params"];
    assert_eq!(params["rw"], "randread");
    assert_eq!(params["bs"], "4k");
    assert_eq!(params["iodepth"], "32");
    assert_eq!(params["numjobs"], "1");
    assert_eq!(params["direct"], "1");
    let engine = params["ioengine"].as_str().unwrap().to_string();

    let fio = |engine: &str, label: &str| {
        let engine = format!("--ioengine={engine}");
        let out = hb(
            dir.path(),
            &db,
            Some(label),
            &[
                "fio",
                "--name=x",
                "--rw=randread",
                "--bs=4k",
                "--iodepth=32",
                "--direct=1",
                &engine,
                "--numjobs=1",
                "--size=16m",
                "--runtime=1",
                "--time_based",
                "--output-format=terse",
            ],
        );
        assert!(out.status.success(), "{}", stderr(&out));
    };
    fio(&engine, "side=fio");
    let out = compare(&db, &["label:side=native", "label:side=fio"], true);
    assert!(out.status.success(), "{}", stderr(&out));
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = c["rows"].as_array().unwrap();
    let iops: Vec<&Value> = rows.iter().filter(|r| r["metric"] == "read_iops").collect();
    assert_eq!(iops.len(), 1, "{rows:#?}");
    assert!(iops[0]["values"][0].is_object() && iops[0]["values"][1].is_object());
    assert!(iops[0]["ratios"][1]["ratio"].as_f64().unwrap() > 0.0);
    for m in ["read_bytes_per_sec", "read_latency_p99", "cpu_per_io"] {
        assert_eq!(rows.iter().filter(|r| r["metric"] == m).count(), 1, "{m}");
    }

    let other = if engine == "psync" { "libaio" } else { "psync" };
    fio(other, "side=other");
    let out = compare(&db, &["label:side=native", "label:side=other"], false);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    let e = stderr(&out);
    assert!(e.contains("ioengine") && e.contains(other), "{e}");
}

/// Seed 002 as a job file, run unchanged as a soak slice runs it: each of its five
/// jobs time-based for the slice's second, the outcomes written as one JSON array.
#[test]
fn a_soak_slice_runs_every_job_for_its_length() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("seed002.fio");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/seed002.fio"),
        &job,
    )
    .unwrap();
    let outcomes = dir.path().join("outcomes.json");
    let started = Instant::now();
    let out = hostbench()
        .current_dir(dir.path())
        .env("HOSTBENCH_SLICE_SECONDS", "1")
        .env("HOSTBENCH_OUTCOMES", &outcomes)
        .env("HOSTBENCH_NO_SAVE", "1")
        .args(["fio", "seed002.fio", "--output-format=json"])
        .output()
        .unwrap();
    let took = started.elapsed();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        took >= Duration::from_secs(5) && took < Duration::from_secs(12),
        "{took:?}"
    );
    // Every report ran the slice, not the job file's runtime (120 s) or its size.
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    for j in v["jobs"].as_array().unwrap() {
        let ms = ["read", "write"]
            .iter()
            .map(|d| j[d]["runtime"].as_u64().unwrap())
            .max()
            .unwrap();
        assert!((900..=1100).contains(&ms), "{}: {ms} ms", j["jobname"]);
    }
    let kept: Value = serde_json::from_str(&std::fs::read_to_string(&outcomes).unwrap()).unwrap();
    let kept = kept.as_array().expect("a JSON array");
    // One per report: 4 + 4 + 2 + 2 + 4 clones.
    assert_eq!(kept.len(), 16);
    let names: BTreeSet<&str> = kept
        .iter()
        .map(|o| o["spec"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        BTreeSet::from([
            "rand_read_4k",
            "rand_rw_4k",
            "rand_write_4k",
            "seq_read_256k",
            "seq_write_256k"
        ])
    );
    for o in kept {
        assert_eq!(o["workload"], "disk");
        let s = o["elapsed_s"].as_f64().unwrap();
        assert!((0.9..=1.1).contains(&s), "{s}");
        assert_eq!(o["params"]["direct"], "1");
        assert_eq!(o["params"]["ioengine"], "libaio");
    }
    let mixed = kept
        .iter()
        .find(|o| o["spec"]["name"] == "rand_rw_4k")
        .unwrap();
    assert_eq!(mixed["params"]["rw"], "randrw");
    assert_eq!(mixed["params"]["rwmixread"], "70");
    assert_eq!(mixed["params"]["iodepth"], "64");
    assert_eq!(mixed["params"]["numjobs"], "4");
    let names: Vec<&str> = mixed["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"read_iops") && names.contains(&"write_iops"),
        "{names:?}"
    );
}

/// The guides' dd write test, smaller: kept per copy, compared with ±, and what dd
/// prints is the same with or without saving.
#[test]
fn dd_runs_are_kept_and_compared() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let args = [
        "dd",
        "if=/dev/zero",
        "of=test",
        "bs=64k",
        "count=256",
        "conv=fdatasync",
    ];
    let mut printed = Vec::new();
    for label in ["vm=a", "vm=a", "vm=b"] {
        let out = hb(dir.path(), &db, Some(label), &args);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(stdout(&out), "");
        printed.push(stderr(&out));
    }
    let runs = stored_runs(&db);
    assert_eq!(runs.len(), 3);
    for r in &runs {
        assert_eq!(r["command"], "dd");
        assert_eq!(r["workloads"], serde_json::json!(["dd"]));
        let mut want = vec!["hostbench".to_string()];
        want.extend(args.iter().map(|a| a.to_string()));
        assert_eq!(command_line(r), want);
    }
    let show = hostbench()
        .args(["show", "last", "--json", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&show.stdout).unwrap();
    let o = &v["outcomes"][0];
    assert_eq!(
        o["params"],
        serde_json::json!({"bs": "64K", "count": "256", "conv": "fdatasync", "if": "/dev/zero", "of": "file"})
    );
    let total = o["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "bytes_transferred")
        .unwrap();
    assert_eq!(total["value"], 256.0 * 65536.0);

    let out = compare(&db, &["label:vm=a", "label:vm=b"], false);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let row = text
        .lines()
        .find(|l| l.starts_with("disk ") && l.contains("throughput"))
        .unwrap_or_else(|| panic!("no dd row:\n{text}"));
    assert!(row.contains('±'), "{row}");

    // Without saving, and on a foreign database: the same lines, exit 0.
    let quiet = hostbench()
        .current_dir(dir.path())
        .env("HOSTBENCH_NO_SAVE", "1")
        .args(args)
        .output()
        .unwrap();
    let foreign = foreign_db(dir.path());
    let before = std::fs::read(&foreign).unwrap();
    let refused = hb(dir.path(), &foreign, None, &args);
    assert_eq!(std::fs::read(&foreign).unwrap(), before);
    for out in [&quiet, &refused] {
        assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
        let lines: Vec<String> = stderr(out).lines().map(String::from).collect();
        let want: Vec<String> = printed[0].lines().map(String::from).collect();
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert_eq!(lines[..2], want[..2]);
        let amount = |l: &str| l.split(" copied, ").next().unwrap().to_string();
        assert_eq!(amount(&lines[2]), amount(&want[2]));
    }
    assert_eq!(
        amount_line(&printed[0]),
        "16777216 bytes (17 MB, 16 MiB) copied"
    );
}

/// The third line of dd's report up to the time: `N bytes (… MB, … MiB) copied`.
fn amount_line(stderr: &str) -> String {
    let line = stderr.lines().nth(2).unwrap_or_default();
    format!(
        "{} copied",
        line.split(" copied, ").next().unwrap_or_default()
    )
}

/// A write test and a read test of dd are different measurements: compare names the
/// params that differ and refuses.
#[test]
fn dd_write_and_read_tests_do_not_compare() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let w = hb(
        dir.path(),
        &db,
        Some("t=w"),
        &["dd", "if=/dev/zero", "of=f", "bs=64k", "count=64"],
    );
    assert!(w.status.success(), "{}", stderr(&w));
    let r = hb(
        dir.path(),
        &db,
        Some("t=r"),
        &["dd", "if=f", "of=/dev/null", "bs=64k", "count=64"],
    );
    assert!(r.status.success(), "{}", stderr(&r));
    let out = compare(&db, &["label:t=w", "label:t=r"], false);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    let e = stderr(&out);
    assert!(e.contains("if file") || e.contains("if /dev/zero"), "{e}");
}

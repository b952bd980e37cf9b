//! `hostbench soak` through the CLI, on a cheap workload (`cpu --threads 1`) and a
//! short schedule (a 1 s slice every 2 s for 7 s: four slices): slices stored and
//! linked to runs, statistics from the stored slices, resume after a kill with the
//! missed slices recorded, Ctrl-C, bad input, and the report.
//!
//! Nothing here asserts a speed: the machine is shared. What is checked is the
//! bookkeeping (how many slices, which were missed, the schedule) and the arithmetic.

mod common;
use common::*;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

const SCHEDULE: [&str; 6] = ["--every", "2s", "--for", "7s", "--time", "1s"];
const WORKLOAD: [&str; 3] = ["cpu", "--threads", "1"];

fn db_in(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("results.db")
}

/// `hostbench soak --db DB`, for the arguments to follow: --db goes first, as the
/// workload takes the rest.
fn soak_command(db: &Path) -> Command {
    let mut c = hostbench();
    c.arg("soak").arg("--db").arg(db);
    c
}

fn soak(db: &Path, args: &[&str]) -> Output {
    soak_command(db)
        .args(args)
        .output()
        .expect("hostbench runs")
}

fn shown(db: &Path, id: i64) -> Value {
    let out = soak(db, &["--show", &id.to_string(), "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("JSON")
}

fn slices(doc: &Value) -> &Vec<Value> {
    doc["soak"]["slices"].as_array().expect("slices")
}

/// Unix seconds of an RFC 3339 UTC time (`2026-11-30T01:02:03Z`).
fn unix_secs(t: &str) -> i64 {
    let (date, time) = t.trim_end_matches('Z').split_once('T').unwrap();
    let d: Vec<i64> = date.split('-').map(|x| x.parse().unwrap()).collect();
    let h: Vec<i64> = time.split(':').map(|x| x.parse().unwrap()).collect();
    // Days from civil (Howard Hinnant), the inverse of host::civil_date.
    let (y, m) = if d[1] <= 2 {
        (d[0] - 1, d[1] + 9)
    } else {
        (d[0], d[1] - 3)
    };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + d[2] - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    days * 86_400 + h[0] * 3600 + h[1] * 60 + h[2]
}

/// Every slice sits on the plan's schedule and none started before it was due.
fn check_schedule(doc: &Value) {
    let plan = &doc["soak"]["plan"];
    let (start, every) = (
        plan["start_ms"].as_i64().unwrap(),
        plan["every_ms"].as_i64().unwrap(),
    );
    for (k, s) in slices(doc).iter().enumerate() {
        assert_eq!(s["seq"], k as i64, "{s}");
        assert_eq!(
            s["due_ms"].as_i64().unwrap(),
            start + k as i64 * every,
            "{s}"
        );
        if let Some(at) = s["started_at"].as_str() {
            assert!(
                unix_secs(at) >= s["due_ms"].as_i64().unwrap() / 1000,
                "slice {k} started at {at}, before it was due: {s}"
            );
        }
    }
}

#[test]
fn a_soak_stores_its_slices_and_judges_them_from_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let mut args = SCHEDULE.to_vec();
    args.extend(["--label", "case=soak", "--json"]);
    args.extend(WORKLOAD);
    let out = soak(&db, &args);
    // 1 when a slice fell below 80 % of the median: possible on a busy machine.
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{:?}: {}",
        out.status,
        stderr(&out)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    let id = doc["soak"]["id"].as_i64().unwrap();
    // The live timeline went to stderr, one line per slice.
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "soak {id}: cpu --threads 1: 1s per slice, every 2s for 7s (4 slices)"
        )),
        "{err}"
    );
    for n in 1..=4 {
        assert!(
            err.lines().any(|l| l.starts_with(&format!("{n:>5}  "))),
            "no line for slice {n}:\n{err}"
        );
    }

    // What --show reads back from the store is what the run printed.
    let stored = shown(&db, id);
    assert_eq!(stored["soak"]["state"], "finished");
    assert_eq!(stored["summary"], doc["summary"]);
    let all = slices(&stored);
    assert_eq!(all.len(), 4, "{stored}");
    check_schedule(&stored);
    let done: Vec<&Value> = all.iter().filter(|s| s["status"] == "done").collect();
    // A slice may be missed if the machine stalls for over a second; most are not.
    assert!(done.len() >= 3, "{stored}");
    assert!(
        all.iter()
            .all(|s| s["status"] == "done" || s["status"] == "missed")
    );

    // Each measured slice is a run of its own, labelled with the soak.
    for s in &done {
        let run = s["run_id"].as_i64().expect("run id");
        let out = with_db(&db, &["show", &run.to_string(), "--json"]);
        let r: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(r["command"], "cpu");
        assert_eq!(r["labels"]["soak"], id.to_string());
        assert_eq!(
            r["labels"]["slice"],
            (s["seq"].as_i64().unwrap() + 1).to_string()
        );
        assert_eq!(r["labels"]["case"], "soak");
        let eps = r["outcomes"][0]["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == "events_per_sec")
            .unwrap()["value"]
            .as_f64()
            .unwrap();
        assert_eq!(s["figure"]["metric"], "events_per_sec");
        assert_eq!(s["figure"]["value"].as_f64().unwrap(), eps);
        // The slice measured for soak's --time (given to cpu's --time).
        let elapsed = r["outcomes"][0]["elapsed_s"].as_f64().unwrap();
        assert!((0.9..3.0).contains(&elapsed), "elapsed {elapsed}");
    }

    // The statistics are those of the stored figures.
    let values: Vec<f64> = done
        .iter()
        .map(|s| s["figure"]["value"].as_f64().unwrap())
        .collect();
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let sd = (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    let stats = &stored["summary"]["stats"];
    assert_eq!(stats["n"], values.len());
    assert!((stats["mean"].as_f64().unwrap() - mean).abs() < 1e-6 * mean);
    assert!((stats["cv_percent"].as_f64().unwrap() - sd / mean * 100.0).abs() < 1e-6);
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    assert_eq!(stats["min"].as_f64().unwrap(), min);
    let verdict = stored["summary"]["verdict"]["text"].as_str().unwrap();
    assert!(
        verdict.starts_with("stable: ")
            || verdict.starts_with("variable: ")
            || verdict.starts_with("unstable: "),
        "{verdict}"
    );
    assert_eq!(
        out.status.code() == Some(1),
        verdict.starts_with("unstable")
    );

    // The text form, again from the store.
    let out = soak(&db, &["--show", &id.to_string()]);
    let text = stdout(&out);
    assert!(text.contains("events/s over "), "{text}");
    assert!(text.contains(&format!("verdict: {verdict}")), "{text}");

    // The report: a chart with one point per measured slice and the threshold line.
    let page = dir.path().join("soak.html");
    let out = with_db(
        &db,
        &[
            "report",
            "--soak",
            &id.to_string(),
            "-o",
            page.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains("<svg"));
    assert_eq!(
        html.matches("<circle class=\"slice").count(),
        done.len(),
        "{html}"
    );
    assert!(html.contains("class=\"threshold\""));
    assert!(html.contains(verdict.split(':').next().unwrap()));
    let out = with_db(
        &db,
        &["report", "--soak", &id.to_string(), "--format", "markdown"],
    );
    assert!(
        stdout(&out).contains("| coefficient of variation |"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_killed_soak_resumes_on_its_schedule_with_the_missed_slices_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let mut child = soak_command(&db)
        .args(SCHEDULE)
        .args(WORKLOAD)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Read the timeline until slice 1 is recorded, then kill the soak outright.
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let id: i64 = first
        .strip_prefix("soak ")
        .and_then(|r| r.split(':').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no soak id in {first:?}"));
    for line in lines.by_ref() {
        if line.unwrap().starts_with("    1  ") {
            break;
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();

    let before = shown(&db, id);
    assert_eq!(
        before["soak"]["state"], "running",
        "killed, so never marked"
    );
    assert_eq!(slices(&before).len(), 1);
    assert_eq!(slices(&before)[0]["status"], "done");
    // A new soak with the same workload and schedule points at the unfinished one.
    let mut twin = soak_command(&db)
        .args(SCHEDULE)
        .args(WORKLOAD)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let note = BufReader::new(twin.stderr.take().unwrap())
        .lines()
        .next()
        .unwrap()
        .unwrap();
    twin.kill().unwrap();
    twin.wait().unwrap();
    assert!(
        note.contains(&format!("hostbench soak --resume {id}")),
        "{note}"
    );

    // Resume once slice 2's time (start + 2 s, with 1.2 s of grace) has passed.
    let start = before["soak"]["plan"]["start_ms"].as_i64().unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    std::thread::sleep(Duration::from_millis((start + 3500 - now).max(0) as u64));

    let out = soak(&db, &["--resume", &id.to_string()]);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", stderr(&out));
    assert!(stderr(&out).contains(&format!("resuming soak {id}: 1 of 4 slices recorded")));
    let text = stdout(&out);
    assert!(text.contains("missed: hostbench was not running"), "{text}");

    let after = shown(&db, id);
    assert_eq!(after["soak"]["state"], "finished");
    check_schedule(&after);
    let all = slices(&after);
    assert_eq!(all.len(), 4, "{after}");
    assert_eq!(all[0], slices(&before)[0], "slice 1 kept as it was");
    assert_eq!(all[1]["status"], "missed");
    assert_eq!(all[1]["note"], "hostbench was not running");
    assert!(all[1].get("run_id").is_none());
    // Slices 3 and 4 were due after the resume: measured on the original schedule.
    assert_eq!(all[3]["status"], "done", "{after}");
    assert!(all[2]["status"] == "done" || all[2]["status"] == "missed");
    assert_eq!(
        after["summary"]["missed"].as_i64().unwrap() as usize,
        all.iter().filter(|s| s["status"] == "missed").count()
    );
    assert!(
        after["summary"]["verdict"]["text"]
            .as_str()
            .unwrap()
            .contains("missed")
    );

    // A finished soak does not run again.
    let out = soak(&db, &["--resume", &id.to_string()]);
    assert!(out.status.success());
    assert!(stderr(&out).contains("is finished"));
}

#[test]
fn ctrl_c_stops_after_the_finished_slices_and_leaves_the_soak_resumable() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let mut child = soak_command(&db)
        .args(["--every", "2s", "--for", "20s", "--time", "1s"])
        .args(WORKLOAD)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        let done = line.starts_with("    1  ");
        seen.push(line);
        if done {
            break;
        }
    }
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("hostbench soak --resume"),
        "{}",
        stderr(&out)
    );
    let id: i64 = seen[0][5..].split(':').next().unwrap().parse().unwrap();
    let doc = shown(&db, id);
    assert_eq!(doc["soak"]["state"], "stopped");
    assert!(!slices(&doc).is_empty() && slices(&doc).len() <= 2, "{doc}");
    assert_eq!(slices(&doc)[0]["status"], "done");
    assert!(
        rest.iter()
            .any(|l| l.contains("continues it on its schedule")),
        "{rest:?}"
    );
}

#[test]
fn bad_input_exits_2_naming_it_before_any_slice() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let cases: &[(&[&str], &str)] = &[
        (&["--every", "abc", "cpu"], "abc"),
        (&["--every", "500ms", "cpu"], "--every 500ms"),
        (
            &["--every", "1m", "--time", "2m", "cpu"],
            "--time 2m00s with --every 1m00s",
        ),
        (&["--for", "0s", "cpu"], "--for"),
        (&["--threshold", "150", "cpu"], "--threshold 150"),
        (&["fio", "--rw=randread"], "no job file"),
        (
            &["dd", "if=/dev/zero", "of=x"],
            "workload 'dd': a soak cannot slice it",
        ),
        (
            &["sysbench", "cpu"],
            "only sysbench's `run` command measures",
        ),
        (&["redis", "--db", "x.db"], "redis --db"),
        (&["cpu", "--time", "5s"], "cpu --time"),
        (&["disk", "--time=5s"], "disk --time"),
        (&["cpu", "--json"], "cpu --json"),
        (&["cpu", "--label", "soak=1"], "cpu --label"),
        (&["--label", "soak=1", "cpu"], "soak=1"),
        (&["--resume", "99"], "soak 99"),
        (&["--show", "99"], "soak 99"),
        (&["--resume", "1", "--every", "1h"], "--every"),
    ];
    for (args, needle) in cases {
        let out = soak(&db, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(needle), "{args:?}: {}", stderr(&out));
        assert!(!stderr(&out).contains("panicked"), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}: {}", stdout(&out));
    }
    // An option only the workload itself can judge: refused by the first slice,
    // which measured nothing, so the soak is not kept.
    let out = soak(&db, &["cpu", "--threads", "zero"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("'zero'"), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("the workload `cpu --threads zero` was refused"),
        "{}",
        stderr(&out)
    );
    // A first slice that fails (nothing listens on port 1) ends the soak at once
    // with exit 1, rather than failing every hour for a day.
    let out = soak(&db, &["--every", "1h", "redis", "--port", "1"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("the first slice of `redis --port 1` failed"),
        "{}",
        stderr(&out)
    );
    // Nothing measured, so nothing is stored.
    let out = soak(&db, &["--list", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(list.as_array().map(Vec::len), Some(0), "{list}");
    let out = with_db(&db, &["report", "--soak", "99"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("soak 99"), "{}", stderr(&out));
}

//! The native commands, driven as a user would: JSON shape, human output, bad input,
//! Ctrl-C.

mod common;
use common::*;
use serde_json::Value;
use std::time::Duration;

fn json(args: &[&str]) -> Value {
    let out = run(args);
    assert!(out.status.success(), "{args:?} failed: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("valid JSON on stdout")
}

fn metrics<'a>(v: &'a Value, name: &str) -> Vec<&'a Value> {
    v["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["name"] == name)
        .collect()
}

#[test]
fn cpu_json_scaling() {
    let v = json(&["cpu", "--threads", "1,2", "--time", "1s", "--json"]);
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["workload"], "cpu");
    let eps = metrics(&v, "events_per_sec");
    assert_eq!(eps.len(), 2);
    assert!(
        eps.iter()
            .all(|m| m["value"].as_f64().unwrap() > 0.0 && m["unit"] == "events_per_sec")
    );
    let eff = metrics(&v, "scaling_efficiency");
    assert_eq!(eff.len(), 1);
    assert!(eff[0]["value"].as_f64().unwrap() > 0.2);
    assert!(v["latency"]["percentiles"].as_array().unwrap().len() >= 5);
    assert!(v["host"]["logical_cpus"].as_u64().unwrap() >= 1);
}

#[test]
fn cpu_event_limit_is_exact() {
    let v = json(&[
        "cpu",
        "--threads",
        "2",
        "--events",
        "300",
        "--time",
        "0",
        "--json",
    ]);
    assert_eq!(metrics(&v, "events")[0]["value"], 300.0);
}

#[test]
fn cpu_human_output_is_a_table() {
    let out = run(&["cpu", "--threads", "1", "--time", "500ms"]);
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(text.contains("events per second"), "{text}");
    assert!(text.contains("latency per event"), "{text}");
    // Progress goes to a terminal only: nothing on a pipe but where the run was saved.
    assert_eq!(stderr(&out), "saved as run 1\n");
}

#[test]
fn memory_block_names_its_tier() {
    let v = json(&[
        "memory",
        "--block-size",
        "8K",
        "--total-size",
        "80M",
        "--oper",
        "read",
        "--json",
    ]);
    let bw = metrics(&v, "bytes_per_sec");
    assert_eq!(bw[0]["working_set"]["tier"], "L1");
    assert!(
        v["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains("not memory bandwidth"))
    );
    assert_eq!(metrics(&v, "operations")[0]["value"], 10240.0);
}

#[test]
fn memory_bandwidth_and_latency() {
    let v = json(&[
        "memory",
        "--mode",
        "bandwidth",
        "--array-size",
        "4M",
        "--iterations",
        "3",
        "--json",
    ]);
    let kernels: Vec<_> = metrics(&v, "bandwidth")
        .iter()
        .map(|m| m["variant"].clone())
        .collect();
    assert_eq!(kernels, ["copy", "scale", "add", "triad"]);
    let v = json(&[
        "memory", "--mode", "latency", "--sizes", "16K,64M", "--time", "200ms", "--json",
    ]);
    let lat = metrics(&v, "load_latency");
    assert_eq!(lat.len(), 2);
    assert_eq!(lat[1]["working_set"]["bytes"], 64 << 20);
    assert_eq!(lat[1]["better"], "lower");
}

/// `--time` works in memory's default mode as in every other command: the passes
/// repeat for that long; with --iterations too, whichever ends first.
#[test]
fn memory_bandwidth_runs_for_its_time() {
    let v = json(&["memory", "--array-size", "1M", "--time", "500ms", "--json"]);
    assert_eq!(v["spec"]["mode"], "bandwidth");
    assert!(
        v["elapsed_s"].as_f64().unwrap() >= 0.5,
        "{}",
        v["elapsed_s"]
    );
    assert_eq!(v["interrupted"], false);
    assert_eq!(metrics(&v, "bandwidth").len(), 4);
    let v = json(&[
        "memory",
        "--array-size",
        "1M",
        "--time",
        "1h",
        "--iterations",
        "3",
        "--json",
    ]);
    let notes = v["notes"].to_string();
    assert!(notes.contains("best of 2 passes"), "{notes}");
}

/// `hostbench --help` names every personality the binary answers to.
#[test]
fn help_names_every_personality() {
    let out = run(&["--help"]);
    assert!(out.status.success());
    let help = stdout(&out);
    let words: Vec<&str> = help
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .collect();
    for name in hostbench::compat::NAMES {
        assert!(words.contains(&name), "--help lacks {name}:\n{help}");
    }
}

/// `report --last N` reports the newest N runs, as `history --last N` lists them.
#[test]
fn report_last_takes_a_count_as_history_does() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    for _ in 0..3 {
        let out = with_db(&db, &["cpu", "--threads", "1", "--time", "100ms"]);
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let runs = |args: &[&str]| {
        let out = with_db(&db, args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        stdout(&out).matches("## Run ").count()
    };
    assert_eq!(runs(&["report", "--last", "2", "--format", "markdown"]), 2);
    assert_eq!(runs(&["report", "--last", "--format", "markdown"]), 1);
}

#[test]
fn bad_input_exits_2_naming_the_input() {
    let cases: &[(&[&str], &str)] = &[
        (&["memory", "--block-size", "8Q"], "8Q"),
        (&["memory", "--block-size", "12K"], "block-size"),
        (&["memory", "--block-size", "0"], "block-size"),
        (&["memory", "--total-size", "-1"], "-1"),
        (&["memory", "--block-size", "99999T"], "99999 TiB"),
        (
            &["memory", "--mode", "latency", "--block-size", "8K"],
            "--mode block",
        ),
        (
            &["memory", "--mode", "latency", "--iterations", "3"],
            "--iterations applies to --mode bandwidth",
        ),
        (&["cpu", "--threads", "0"], "thread"),
        (&["cpu", "--threads", "two"], "two"),
        (&["cpu", "--time", "5x"], "5x"),
        (&["cpu", "--max-prime", "1"], "max-prime"),
        (&["cpu", "--time", "0"], "forever"),
        (&["nosuchcommand"], "nosuchcommand"),
    ];
    for (args, needle) in cases {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(needle), "{args:?}: {}", stderr(&out));
        assert!(!stderr(&out).contains("panicked"), "{args:?}");
    }
}

#[test]
fn ctrl_c_reports_what_was_measured() {
    let child = hostbench()
        .args(["cpu", "--threads", "1", "--time", "30s", "--json"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["interrupted"], true);
    assert!(v["elapsed_s"].as_f64().unwrap() < 10.0);
    assert!(metrics(&v, "events")[0]["value"].as_f64().unwrap() > 0.0);
}

// `hostbench run` (the main job) is tested in tests/run.rs.

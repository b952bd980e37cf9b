//! The redis-benchmark personality against a redis-server of the test's own: output
//! layout line for line against the real redis-benchmark on the same server, the keys
//! and values it writes, and its behaviour on refused connections, bad passwords,
//! error replies and a server that dies mid-run.

mod common;
mod redis_server;

use common::{run_interrupted, text};
use redis_server::{
    RedisServer, available, history, kept, peer, personality, shape, silent_server, visible,
};
use serde_json::Value;
use std::process::Output;
use std::time::{Duration, Instant};

#[test]
fn full_report_has_redis_benchmarks_layout() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    if !available("redis-benchmark") {
        return;
    }
    let port = server.port_arg();
    let args = [
        "-p",
        &port,
        "-c",
        "10",
        "-n",
        "3000",
        "-t",
        "set,get,incr,lpush,mset",
    ];
    let ours = personality(&args);
    let theirs = peer(&args);
    assert!(ours.status.success(), "{}", text(&ours.stderr));
    assert!(theirs.status.success());
    assert_eq!(shape(&text(&ours.stdout)), shape(&text(&theirs.stdout)));
    // Headers agree word for word, save for the timing.
    let header = |o: &Output| -> Vec<String> {
        visible(&text(&o.stdout))
            .into_iter()
            .filter(|l| {
                l.starts_with("  ")
                    && !l.contains("requests completed")
                    && !l.contains("summary")
                    && !l.starts_with("    ")
            })
            .collect()
    };
    assert_eq!(header(&ours), header(&theirs));
}

#[test]
fn quiet_and_csv_have_redis_benchmarks_layout() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    if !available("redis-benchmark") {
        return;
    }
    let port = server.port_arg();
    for form in ["-q", "--csv"] {
        let args = [
            "-p",
            &port,
            "-n",
            "2000",
            "-t",
            "ping,set,get,lrange_100",
            form,
        ];
        let ours = personality(&args);
        let theirs = peer(&args);
        assert!(ours.status.success(), "{}", text(&ours.stderr));
        assert_eq!(
            shape(&text(&ours.stdout)),
            shape(&text(&theirs.stdout)),
            "{form}"
        );
        if form == "--csv" {
            // Nothing but CSV on stdout: scripts parse it strictly.
            let out = text(&ours.stdout);
            assert!(
                out.lines().all(|l| l.starts_with('"') && l.ends_with('"')),
                "{out}"
            );
            assert_eq!(out.lines().count(), 7);
        }
    }
}

#[test]
fn writes_redis_benchmarks_keys_and_payload() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let port = server.port_arg();
    let out = personality(&["-p", &port, "-n", "200", "-c", "4", "-t", "set", "-q"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Without -r the key is literal.
    assert!(server.command("GET key:__rand_int__").contains("VXK"));
    let out = personality(&[
        "-p", &port, "-n", "500", "-r", "1000", "-d", "5", "-t", "set", "-q", "--seed", "42",
    ]);
    assert!(out.status.success());
    let keys = server.command("KEYS key:0*");
    let names: Vec<&str> = keys.lines().filter(|l| l.starts_with("key:")).collect();
    assert!(names.len() > 100, "{keys}");
    assert!(names.iter().all(|k| k.len() == 16), "{names:?}");
    assert!(
        server
            .command(&format!("GET {}", names[0]))
            .contains("VXKeH")
    );
    // Pipelining counts every request once.
    let out = personality(&[
        "-p", &port, "-n", "1000", "-P", "16", "-r", "1", "-t", "incr", "--csv",
    ]);
    assert!(out.status.success());
    let v = server.command("GET counter:000000000000");
    let n: u64 = v.lines().nth(1).unwrap_or("0").parse().unwrap_or(0);
    assert!((1000..1016).contains(&n), "{v}");
}

#[test]
fn custom_command_title_and_payload_size() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let port = server.port_arg();
    let out = personality(&[
        "-p",
        &port,
        "-n",
        "100",
        "-c",
        "2",
        "set",
        "hb:custom",
        "abc",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("====== set hb:custom abc ======"), "{s}");
    // The whole encoded command: *3 $3 set $9 hb:custom $3 abc (37 bytes, as redis-benchmark prints).
    assert!(s.contains("  37 bytes payload"), "{s}");
}

#[test]
fn refused_connection_is_a_clear_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
        .to_string();
    let out = personality(&["-p", &port, "-n", "10", "-q"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("127.0.0.1:{port}")) && err.contains("refused"),
        "{err}"
    );
}

#[test]
fn wrong_password_is_a_clear_error() {
    let Some(server) = RedisServer::start(&["--requirepass", "s3cret"]) else {
        return;
    };
    let port = server.port_arg();
    let out = personality(&["-p", &port, "-n", "10", "-a", "wrong", "-t", "get", "-q"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("AUTH") && err.contains("WRONGPASS"), "{err}");
    let out = personality(&["-p", &port, "-n", "10", "-t", "get", "-q"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("NOAUTH"),
        "{}",
        text(&out.stderr)
    );
    let out = personality(&["-p", &port, "-n", "10", "-a", "s3cret", "-t", "get", "-q"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn error_reply_stops_with_partial_results() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let port = server.port_arg();
    server.command("SET mylist notalist");
    let out = personality(&["-p", &port, "-n", "1000", "-t", "lpush"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("Error from server: WRONGTYPE"),
        "{}",
        text(&out.stderr)
    );
    assert!(
        text(&out.stdout).contains("PARTIAL RESULTS"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn server_killed_mid_run_reports_partial_results() {
    let Some(mut server) = RedisServer::start(&[]) else {
        return;
    };
    let port = server.port_arg();
    let mut c = common::hostbench();
    c.args([
        "redis-benchmark",
        "-p",
        &port,
        "-n",
        "50000000",
        "-t",
        "get",
        "-q",
    ]);
    let out = run_interrupted(c, Duration::from_millis(800), || server.kill());
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("closed the connection"),
        "{}",
        text(&out.stderr)
    );
    assert!(
        text(&out.stdout).contains("PARTIAL RESULTS"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn bad_options_exit_1_with_usage() {
    let out = personality(&["--bogus"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("Invalid option \"--bogus\""));
    let out = personality(&["-p", "99999"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("Invalid server port."));
    let out = personality(&["--help"]);
    assert!(out.status.success());
    assert!(text(&out.stdout).contains("Usage: redis-benchmark"));
    assert!(text(&out.stdout).contains(" --timeout <sec> "));
    let out = personality(&["--timeout", "soon"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("not a number of seconds"));
}

#[test]
fn runs_are_kept_and_compare_across_labels() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let port = server.port_arg();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let args = [
        "redis-benchmark",
        "-q",
        "-n",
        "2000",
        "-t",
        "set,get",
        "-p",
        &port,
    ];
    let mut outputs = Vec::new();
    for label in ["vm=a", "vm=a", "vm=b"] {
        let out = kept(&db, Some(label), &args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(text(&out.stderr), "", "saving adds nothing to stderr");
        outputs.push(out);
    }
    // Byte for byte what an unsaved run prints, save for the measured numbers.
    let mut c = common::hostbench();
    c.args(args).env("HOSTBENCH_NO_SAVE", "1");
    let unsaved = common::run_bounded(c, Duration::from_secs(60));
    assert!(unsaved.status.success());
    for out in &outputs {
        assert_eq!(shape(&text(&out.stdout)), shape(&text(&unsaved.stdout)));
    }
    assert_eq!(
        shape(&text(&unsaved.stdout))[0],
        "SET: # requests per second, p#=# msec"
    );

    let runs = history(&db);
    assert_eq!(runs.len(), 3, "{runs:?}");
    for run in &runs {
        assert_eq!(run["command"], "redis-benchmark");
        let line: Vec<&str> = run["command_line"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_str().unwrap())
            .collect();
        assert!(line.ends_with(&args), "{line:?}");
        assert_eq!(run["outcome_count"], 2, "one outcome per test printed");
        assert_eq!(run["workloads"], serde_json::json!(["redis"]));
    }
    let out = common::with_db(&db, &["compare", "label:vm=a", "label:vm=b"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    assert!(table.contains('±'), "{table}");
    assert!(table.contains("SET") && table.contains("GET"), "{table}");

    // A database that is not one: the same output, exit 0, nothing said.
    let foreign = dir.path().join("foreign.db");
    std::fs::write(&foreign, b"this is not a results database").unwrap();
    let out = kept(&foreign, Some("vm=a"), &args);
    assert!(out.status.success());
    assert_eq!(text(&out.stderr), "");
    assert_eq!(shape(&text(&out.stdout)), shape(&text(&unsaved.stdout)));
}

fn compare_json(db: &std::path::Path, a: &str, b: &str) -> Value {
    let out = common::with_db(db, &["compare", a, b, "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn native_and_personality_with_the_same_params_compare_as_one_row() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let port = server.port_arg();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let native = common::hostbench()
        .args([
            "redis",
            "-p",
            &port,
            "--ratio",
            "1:0",
            "-c",
            "10",
            "-d",
            "3",
            "--keys",
            "1000",
            "--time",
            "1s",
            "--warmup",
            "0s",
            "--label",
            "side=native",
            "--db",
        ])
        .arg(&db)
        .output()
        .unwrap();
    assert!(native.status.success(), "{}", text(&native.stderr));
    let rb = |label: &str, clients: &str| {
        let out = kept(
            &db,
            Some(label),
            &[
                "redis-benchmark",
                "-q",
                "-p",
                &port,
                "-c",
                clients,
                "-d",
                "3",
                "-r",
                "1000",
                "-n",
                "5000",
                "-t",
                "set",
            ],
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
    };
    rb("side=rb", "10");
    let c = compare_json(&db, "label:side=native", "label:side=rb");
    let rows: Vec<&Value> = c["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["workload"] == "redis" && r["metric"] == "ops_per_sec")
        .collect();
    assert_eq!(rows.len(), 1, "{c:#}");
    assert_eq!(rows[0]["params"]["test"], "SET");
    assert!(
        rows[0]["values"]
            .as_array()
            .unwrap()
            .iter()
            .all(|v| !v.is_null())
    );
    let latency = c["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["metric"] == "latency_p99")
        .count();
    assert_eq!(latency, 1, "{c:#}");

    // Other clients: another measurement, refused with the setting named.
    rb("side=rb5", "5");
    let out = common::with_db(&db, &["compare", "label:side=native", "label:side=rb5"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    let why = text(&out.stderr);
    assert!(why.contains("clients 10 in A"), "{why}");
    assert!(why.contains("5 in B"), "{why}");
}

#[test]
fn a_soak_slice_bounds_the_tests_by_time() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let port = server.port_arg();
    let dir = tempfile::tempdir().unwrap();
    let outcomes = dir.path().join("outcomes.json");
    let mut c = common::hostbench();
    c.args([
        "redis-benchmark",
        "-q",
        "-n",
        "100",
        "-t",
        "set,get",
        "-p",
        &port,
    ])
    .env("HOSTBENCH_SLICE_SECONDS", "1")
    .env("HOSTBENCH_OUTCOMES", &outcomes)
    .env("HOSTBENCH_NO_SAVE", "1");
    let started = Instant::now();
    let out = common::run_bounded(c, Duration::from_secs(30));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(started.elapsed() >= Duration::from_millis(950));
    let kept: Vec<Value> = serde_json::from_slice(&std::fs::read(&outcomes).unwrap()).unwrap();
    assert_eq!(kept.len(), 2);
    for o in &kept {
        let secs = o["elapsed_s"].as_f64().unwrap();
        assert!(
            (0.45..1.5).contains(&secs),
            "each test gets half the slice: {secs}"
        );
        let ops = o["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == "operations")
            .unwrap()["value"]
            .as_f64()
            .unwrap();
        assert!(ops > 100.0, "bound by time, not by -n: {ops}");
    }
}

#[test]
fn a_server_that_never_replies_times_out() {
    let port = silent_server(false).to_string();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let started = Instant::now();
    let out = kept(
        &db,
        None,
        &[
            "redis-benchmark",
            "-p",
            &port,
            "--timeout",
            "0.5",
            "-n",
            "10",
            "-t",
            "get",
            "-q",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(started.elapsed() < Duration::from_secs(10));
    let why = text(&out.stderr);
    assert!(
        why.contains(&format!("no reply from 127.0.0.1:{port} within 0.5 s")),
        "{why}"
    );
    assert!(!db.exists() || history(&db).is_empty(), "nothing is kept");

    // One that answers the header's CONFIG GET, then nothing: the run's own wait.
    let port = silent_server(true).to_string();
    let started = Instant::now();
    let out = kept(
        &db,
        None,
        &[
            "redis-benchmark",
            "-p",
            &port,
            "--timeout",
            "0.5",
            "-n",
            "10",
            "-t",
            "get",
            "-q",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(started.elapsed() < Duration::from_secs(10));
    let why = text(&out.stderr);
    assert!(
        why.contains(&format!("no reply from 127.0.0.1:{port} within 0.5 s")),
        "{why}"
    );
    assert!(
        text(&out.stdout).contains("PARTIAL RESULTS"),
        "{}",
        text(&out.stdout)
    );
    assert!(!db.exists() || history(&db).is_empty(), "nothing is kept");
}

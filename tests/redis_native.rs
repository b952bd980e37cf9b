//! `hostbench redis` against a redis-server of the test's own: what it measures, what
//! it writes, how it fails, and the coordinated-omission truth test (a paused server
//! shows in the corrected p99 and hides from the uncorrected one).

mod common;
mod redis_server;

use common::{metric, stderr};
use redis_server::RedisServer;
use serde_json::Value;
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

fn spawn(args: &[&str]) -> Child {
    common::hostbench()
        .arg("redis")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("hostbench runs")
}

fn finish(mut child: Child, limit: Duration) -> Output {
    let start = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("hostbench redis overran {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

fn run(args: &[&str]) -> Output {
    finish(spawn(args), Duration::from_secs(30))
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn closed_loop_measures_and_stays_in_its_prefix() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    server.command("SET user:data keep-me");
    let port = server.port_arg();
    let out = run(&[
        "-p", &port, "--time", "1s", "--warmup", "200ms", "-c", "8", "--keys", "500", "--ratio",
        "1:1", "-d", "8-64", "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = json(&out);
    assert!(metric(&doc, "ops_per_sec") > 100.0);
    assert_eq!(doc["workload"], "redis");
    let lat = &doc["latency"];
    assert!(lat["count"].as_u64().unwrap() > 100);
    assert!(!lat["buckets"].as_array().unwrap().is_empty());
    assert!(!doc["series"].as_array().unwrap().is_empty());
    // Its own keys only, and nothing else was touched.
    let keys = server.command("KEYS *");
    for k in keys
        .lines()
        .filter(|l| !l.starts_with('*') && !l.starts_with('$'))
    {
        assert!(k.starts_with("hostbench:") || k == "user:data", "{k}");
    }
    assert!(server.command("GET user:data").contains("keep-me"));
    let len = server.command("STRLEN hostbench:000");
    let n: u64 = len.trim_start_matches(':').trim().parse().unwrap_or(0);
    assert!(n == 0 || (8..=64).contains(&n), "{len}");
}

#[test]
fn open_loop_holds_its_rate() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let port = server.port_arg();
    let out = run(&[
        "-p", &port, "--time", "2s", "--warmup", "300ms", "-c", "4", "--rate", "2000", "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = json(&out);
    let ops = metric(&doc, "ops_per_sec");
    assert!((1800.0..2200.0).contains(&ops), "{ops}");
    assert!(metric(&doc, "uncorrected_latency_p99") > 0.0);
}

/// The truth test: a 500 ms server pause in a fixed-rate run. About a sixth of the
/// requests fall due during the pause, so the corrected p99 is hundreds of ms; the
/// uncorrected p99 only sees the few requests that were in flight.
#[test]
fn paused_server_shows_in_corrected_p99_only() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let port = server.port_arg();
    let child = spawn(&[
        "-p", &port, "--time", "3s", "--warmup", "300ms", "-c", "4", "--rate", "2000", "--json",
    ]);
    std::thread::sleep(Duration::from_millis(1500));
    assert!(server.command("CLIENT PAUSE 500").contains("OK"));
    let out = finish(child, Duration::from_secs(30));
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = json(&out);
    let corrected = metric(&doc, "latency_p99") / 1e6;
    let uncorrected = metric(&doc, "uncorrected_latency_p99") / 1e6;
    assert!(
        corrected > 300.0,
        "corrected p99 {corrected} ms should show the 500 ms pause"
    );
    assert!(
        uncorrected < 100.0,
        "uncorrected p99 {uncorrected} ms should hide the pause"
    );
    assert!(metric(&doc, "latency_max") / 1e6 > 400.0);
}

#[test]
fn unix_socket_resp3_and_database() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("redis.sock");
    let sock_s = sock.to_str().unwrap().to_string();
    let Some(server) = RedisServer::start(&["--unixsocket", &sock_s]) else {
        return;
    };
    let out = run(&[
        "--socket",
        &sock_s,
        "--resp3",
        "--dbnum",
        "2",
        "--time",
        "500ms",
        "--warmup",
        "0s",
        "-c",
        "2",
        "--ratio",
        "1:0",
        "--key-pattern",
        "sequential",
        "--keys",
        "100",
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(metric(&json(&out), "operations") > 10.0);
    assert!(server.command("DBSIZE").starts_with(":0"));
    let mut s = std::os::unix::net::UnixStream::connect(&sock).unwrap();
    use std::io::{Read, Write};
    s.write_all(b"SELECT 2\r\nDBSIZE\r\n").unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let mut buf = [0u8; 64];
    let n = s.read(&mut buf).unwrap();
    assert!(
        String::from_utf8_lossy(&buf[..n]).contains(":100"),
        "{:?}",
        &buf[..n]
    );
}

#[test]
fn distributions_and_templates_run() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let port = server.port_arg();
    for pattern in ["gaussian", "zipf"] {
        let out = run(&[
            "-p",
            &port,
            "--time",
            "300ms",
            "--warmup",
            "0s",
            "-c",
            "2",
            "--pipeline",
            "8",
            "--key-pattern",
            pattern,
            "--command",
            "2:INCR __key__",
            "--command",
            "HSET __key__:h f __data__",
            "--json",
        ]);
        assert!(out.status.success(), "{pattern}: {}", stderr(&out));
        let doc = json(&out);
        let variants: Vec<&str> = doc["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|m| m.get("variant").and_then(|v| v.as_str()))
            .collect();
        assert!(variants.contains(&"INCR") && variants.contains(&"HSET"));
    }
}

#[test]
fn refused_connection_and_bad_password_fail_clearly() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
        .to_string();
    let out = run(&["-p", &port, "--time", "1s"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("refused"), "{}", stderr(&out));

    let Some(server) = RedisServer::start(&["--requirepass", "pw"]) else {
        return;
    };
    let port = server.port_arg();
    let out = run(&["-p", &port, "--time", "1s", "--password", "nope"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("AUTH"), "{}", stderr(&out));
    let out = run(&["-p", &port, "--time", "1s"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("NOAUTH"), "{}", stderr(&out));
}

#[test]
fn a_server_that_never_replies_fails_and_is_not_kept() {
    let port = redis_server::silent_server(false).to_string();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let child = common::hostbench()
        .args([
            "redis", "-p", &port, "--time", "1s", "--warmup", "0s", "-c", "2", "--db",
        ])
        .arg(&db)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = finish(child, Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(1), "{}", common::stdout(&out));
    let why = stderr(&out);
    assert!(
        why.contains(&format!("no reply from 127.0.0.1:{port}")),
        "{why}"
    );
    assert!(why.contains("nothing was measured (not saved)"), "{why}");
    assert!(!common::stdout(&out).contains("ops"), "no table of zeros");
    assert!(!db.exists() || redis_server::history(&db).is_empty());
}

#[test]
fn error_reply_gives_partial_results_and_exit_1() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    server.command("SET hb:0 a-string");
    let port = server.port_arg();
    let out = run(&[
        "-p",
        &port,
        "--time",
        "2s",
        "--warmup",
        "0s",
        "--keys",
        "1",
        "--key-prefix",
        "hb:",
        "--command",
        "LPUSH __key__ x",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("WRONGTYPE"), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("PARTIAL RESULTS"));
}

#[test]
fn server_killed_mid_run_gives_partial_results() {
    let Some(mut server) = RedisServer::start(&[]) else {
        return;
    };
    let port = server.port_arg();
    let child = spawn(&["-p", &port, "--time", "20s", "--warmup", "0s", "-c", "4"]);
    std::thread::sleep(Duration::from_millis(1000));
    server.kill();
    let out = finish(child, Duration::from_secs(15));
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("closed the connection"),
        "{}",
        stderr(&out)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("PARTIAL RESULTS"), "{text}");
}

#[test]
fn refuses_destructive_and_foreign_key_commands() {
    for cmd in ["FLUSHALL", "FLUSHDB", "SET other:key v"] {
        let out = run(&["--command", cmd, "--time", "1s"]);
        assert_eq!(out.status.code(), Some(2), "{cmd}");
        assert!(stderr(&out).contains("--command"), "{}", stderr(&out));
    }
}

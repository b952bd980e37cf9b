//! `hostbench run`: the whole job, end to end. Two full quick runs (slow: about
//! 90 s each on 2 cores) — one against a `hostbench net serve` started here with the
//! run's own redis-server, one on loopback with an unreachable `--redis` — plus a run
//! stopped by SIGINT and the bad-input checks, which end before measuring.

mod common;

use common::{hostbench, run, stderr, stdout};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs a command, killed after `limit` so a hang fails the test instead of blocking.
fn bounded(mut cmd: Command, limit: Duration) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("hostbench starts");
    let (out, err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let read = |mut r: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            v
        })
    };
    let (out, err) = (read(Box::new(out)), read(Box::new(err)));
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("hostbench run took longer than {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

fn summary_line<'a>(v: &'a Value, area: &str) -> &'a Value {
    v["summary"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["area"] == area)
        .unwrap_or_else(|| panic!("no {area} line in {}", v["summary"]))
}

fn areas(v: &Value) -> Vec<String> {
    v["summary"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["area"].as_str().unwrap().to_string())
        .collect()
}

fn outcome<'a>(v: &'a Value, workload: &str, mode: Option<&str>) -> &'a Value {
    v["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["workload"] == workload && mode.is_none_or(|m| o["spec"]["mode"] == m))
        .unwrap_or_else(|| panic!("no {workload} {mode:?} outcome"))
}

fn metric(o: &Value, name: &str) -> f64 {
    o["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .and_then(|m| m["value"].as_f64())
        .unwrap_or_else(|| panic!("no metric {name} in {}", o["workload"]))
}

/// The areas every run measures whatever its network and Redis do.
fn assert_local_areas(v: &Value) {
    for area in ["cpu", "memory", "disk", "index"] {
        assert_eq!(summary_line(v, area)["status"], "ok", "{area}");
    }
    assert!(metric(outcome(v, "cpu", None), "events_per_sec") > 0.0);
    let index = outcome(v, "index", None);
    assert!(metric(index, "index_score") > 0.0);
    assert_eq!(index["spec"]["quick"], true);
    assert!(
        summary_line(v, "index")["headline"]
            .as_str()
            .unwrap()
            .contains("quick mode")
    );
}

/// The redis-server the run started (its port is in the outcome's note) is gone.
fn assert_redis_stopped(redis: &Value) {
    let note = redis["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n.as_str())
        .find(|n| n.contains("redis-server started for this run"))
        .unwrap_or_else(|| panic!("no note about the server in {}", redis["notes"]));
    let port: u16 = note
        .split("127.0.0.1:")
        .nth(1)
        .and_then(|rest| rest.split(',').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {note:?}"));
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "redis-server still answers on port {port}"
    );
}

/// `hostbench net serve` on a free loopback port, killed when dropped.
struct Serve {
    child: Child,
    port: u16,
}

impl Serve {
    fn start() -> Serve {
        let mut child = hostbench()
            .args(["net", "serve", "-p", "0", "--bind", "127.0.0.1", "-v"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stderr.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        // "hostbench net serve: listening on 127.0.0.1:PORT (TCP); Ctrl-C stops"
        let port = line
            .split_whitespace()
            .find_map(|w| w.parse::<std::net::SocketAddr>().ok())
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .port();
        Serve { child, port }
    }

    /// Stops the server and returns what it logged (one line per test served).
    fn log(mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let mut rest = String::new();
        let _ = std::io::Read::read_to_string(self.child.stderr.as_mut().unwrap(), &mut rest);
        rest
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn quick_run_against_a_peer_covers_every_area() {
    let serve = Serve::start();
    let peer = format!("127.0.0.1:{}", serve.port);
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = hostbench();
    cmd.args(["run", "--profile", "quick", "--no-save", "--json"])
        .args(["--peer", &peer])
        .arg("--dir")
        .arg(dir.path());
    let out = bounded(cmd, Duration::from_secs(600));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(
        areas(&v),
        ["cpu", "memory", "disk", "network", "redis", "index"]
    );
    assert_local_areas(&v);

    // The network tests went to the peer, and the peer served them.
    let stream = outcome(&v, "net", Some("TCP_STREAM"));
    assert_eq!(stream["spec"]["peer"], peer.as_str());
    assert!(metric(stream, "throughput") > 0.0);
    let rr = outcome(&v, "net", Some("TCP_RR"));
    assert!(metric(rr, "transactions_per_sec") > 0.0);
    assert!(rr["latency"]["percentiles"][0]["ns"].as_f64().unwrap() > 0.0);
    let ping = outcome(&v, "ping", None);
    assert!(metric(ping, "packets_received") > 0.0);
    assert!(metric(ping, "rtt_avg") > 0.0);
    let network = summary_line(&v, "network");
    assert_eq!(network["status"], "ok");
    assert!(network["headline"].as_str().unwrap().contains("TCP_RR"));
    let log = serve.log();
    for test in ["TCP_STREAM", "TCP_RR"] {
        assert!(log.contains(test), "the peer did not serve {test}: {log}");
    }

    // Redis: measured against a server of its own, or skipped with the note.
    let redis = summary_line(&v, "redis");
    if common::have("redis-server") {
        assert_eq!(redis["status"], "ok", "{redis}");
        let redis = outcome(&v, "redis", None);
        assert!(metric(redis, "ops_per_sec") > 0.0);
        assert_redis_stopped(redis);
    } else {
        common::missing(
            "redis-server (for the Redis step)",
            "scripts/test.sh installs it (Debian: redis-server); checking the skip note instead",
        );
        assert_eq!(redis["status"], "skipped");
        let verdict = redis["verdict"].as_str().unwrap();
        assert!(
            verdict.starts_with("redis-server not installed: install it")
                && verdict.ends_with("or give --redis URL"),
            "{verdict}"
        );
    }
    let left = std::fs::read_dir(dir.path()).unwrap().count();
    assert_eq!(left, 0, "files left behind in --dir");
}

#[test]
fn unreachable_redis_fails_its_step_and_the_rest_is_kept_and_saved() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let work = tempfile::tempdir().unwrap();
    // Port 1 on loopback: nothing listens there, so the connection is refused.
    let mut cmd = hostbench();
    cmd.args(["run", "--profile", "quick", "--json"])
        .args(["--redis", "redis://127.0.0.1:1/0"])
        .arg("--db")
        .arg(&db)
        .arg("--dir")
        .arg(work.path());
    let out = bounded(cmd, Duration::from_secs(600));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("redis step failed") && stderr(&out).contains("127.0.0.1:1"),
        "{}",
        stderr(&out)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_local_areas(&v);
    let redis = summary_line(&v, "redis");
    assert_eq!(redis["status"], "failed");
    assert!(redis["verdict"].as_str().unwrap().contains("127.0.0.1:1"));
    // No --peer: the network step ran against its in-process server on loopback.
    let network = summary_line(&v, "network");
    assert_eq!(network["status"], "ok");
    assert!(network["verdict"].as_str().unwrap().starts_with("loopback"));
    assert!(metric(outcome(&v, "net", Some("TCP_STREAM")), "throughput") > 0.0);

    // What ran was saved, as one run.
    let shown = run(&["show", "last", "--json", "--db", db.to_str().unwrap()]);
    assert!(shown.status.success(), "{}", stderr(&shown));
    let stored: Value = serde_json::from_slice(&shown.stdout).unwrap();
    let text = stored.to_string();
    for workload in ["\"cpu\"", "\"disk\"", "\"net\"", "\"index\""] {
        assert!(text.contains(workload), "{workload} not stored");
    }
}

#[test]
fn ctrl_c_stops_cleanly_and_saves_what_finished() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let mut child = hostbench()
        .args(["run", "--profile", "quick"])
        .arg("--db")
        .arg(&db)
        .arg("--dir")
        .arg(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the first step (CPU) has printed its result, then interrupt the next.
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut seen = String::new();
    let started = Instant::now();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap() == 0 {
            panic!("hostbench ended before the first step finished: {seen}");
        }
        seen += &line;
        if line.contains("elapsed") && seen.contains("cpu") {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(120), "{seen}");
    }
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut reader, &mut rest).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(rest.contains("Summary (quick profile)"), "{rest}");
    assert!(rest.contains("interrupted"), "{rest}");
    assert!(
        !rest.contains("\n  redis "),
        "steps after the interruption ran: {rest}"
    );
    assert!(stderr(&out).contains("saved as run"), "{}", stderr(&out));
    let shown = run(&["show", "last", "--json", "--db", db.to_str().unwrap()]);
    assert!(shown.status.success(), "{}", stderr(&shown));
    let stored: Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert!(stored.to_string().contains("events_per_sec"), "{stored}");
    // The disk step's files are gone even though the run was cut short.
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n != "results.db" && !n.to_string_lossy().starts_with("results.db-"))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn bad_peer_or_redis_exits_2_before_measuring() {
    let cases: &[(&[&str], &str)] = &[
        (&["--peer", "10.0.0.2:http"], "10.0.0.2:http"),
        (&["--peer", "http://10.0.0.2"], "http://10.0.0.2"),
        (&["--peer", ""], "--peer"),
        (&["--peer", "no-such-host.invalid"], "no-such-host.invalid"),
        (&["--redis", "localhost:6379"], "localhost:6379"),
        (&["--redis", "redis://cache:0/1"], "redis://cache:0/1"),
        (&["--redis", "redis://cache/x"], "redis://cache/x"),
        (&["--redis", "rediss://cache:6380"], "TLS"),
        (
            &["--redis", "redis://u:hunter2@cache:x"],
            "redis://u:***@cache:x",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (args, needle) in cases {
        let mut cmd = hostbench();
        cmd.args(["run", "--no-save", "--dir"])
            .arg(dir.path())
            .args(*args);
        let out = bounded(cmd, Duration::from_secs(60));
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("hunter2"), "password shown: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(stdout(&out).is_empty(), "{args:?} measured something");
    }
}

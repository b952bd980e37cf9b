//! Network runs are kept, whichever front end ran them: the iperf3, netperf and ping
//! personalities save their runs (labels from HOSTBENCH_LABEL, the exact command
//! line) without changing a byte of their output; a native `hostbench net` test and
//! the personality with the same settings compare as one row, and different settings
//! are refused naming the setting; a soak slice's length replaces the time option.
//! Servers run on loopback ports of their own, started by each test.

mod common;

use hostbench::workload::net::server::{Server, ServerConfig, ServerHandle};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A port free for both TCP and UDP (dual-stack wildcard) right now.
fn free_port() -> u16 {
    loop {
        let t = std::net::TcpListener::bind("[::]:0").unwrap();
        let port = t.local_addr().unwrap().port();
        if std::net::UdpSocket::bind(("::", port)).is_ok() {
            return port;
        }
    }
}

/// A server process killed when the test ends.
struct Bg(Child);

impl Drop for Bg {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `cmd` and waits until `port` accepts connections.
fn serve(mut cmd: Command, port: u16) -> Bg {
    let child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("server starts");
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "the server did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    Bg(child)
}

/// hostbench's iperf3 server, serving test after test. Its own runs go to `db`
/// (it must keep none).
fn iperf3_server(port: u16, db: &Path) -> Bg {
    let mut c = common::hostbench();
    c.env("HOSTBENCH_DB", db)
        .args(["iperf3", "-s", "-p", &port.to_string()]);
    let bg = serve(c, port);
    // The server accepts the probe connection as a test: let it give up on it.
    std::thread::sleep(Duration::from_millis(100));
    bg
}

fn netserver(port: u16) -> Bg {
    let mut c = common::hostbench();
    c.args(["netserver", "-D", "-p", &port.to_string()]);
    serve(c, port)
}

/// `hostbench net serve`, in this process.
fn net_server() -> ServerHandle {
    Server::bind(ServerConfig::new(SocketAddr::from(([127, 0, 0, 1], 0))))
        .unwrap()
        .spawn()
}

/// Runs `cmd`, killed after 30 s so a hang fails instead of blocking.
fn bounded(mut cmd: Command) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return child.wait_with_output().unwrap();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("did not finish in 30 s: {cmd:?}");
}

/// A personality run saved in `db` with `label` (None: HOSTBENCH_NO_SAVE).
fn personality(db: &Path, label: Option<&str>, args: &[&str]) -> Output {
    let mut c = common::hostbench();
    c.env("HOSTBENCH_DB", db).args(args);
    match label {
        Some(l) => c.env("HOSTBENCH_LABEL", l),
        None => c.env("HOSTBENCH_NO_SAVE", "1"),
    };
    let o = bounded(c);
    assert!(
        o.status.success(),
        "{args:?}: {}{}",
        common::stdout(&o),
        common::stderr(&o)
    );
    o
}

/// A native command saved in `db` with `label`.
fn native(db: &Path, label: &str, args: &[&str]) -> Output {
    let mut c = common::hostbench();
    c.args(args).arg("--label").arg(label).arg("--db").arg(db);
    let o = bounded(c);
    assert!(o.status.success(), "{args:?}: {}", common::stderr(&o));
    o
}

fn history(db: &Path) -> Vec<Value> {
    let o = common::run(&["history", "--json", "--db", db.to_str().unwrap()]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v["runs"].as_array().unwrap().clone()
}

fn compare(db: &Path, groups: &[&str], json: bool) -> Output {
    let mut c = common::hostbench();
    c.arg("compare").args(groups).arg("--db").arg(db);
    if json {
        c.arg("--json");
    }
    c.output().unwrap()
}

/// The compare document's rows of one metric.
fn rows<'a>(c: &'a Value, metric: &str) -> Vec<&'a Value> {
    c["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["metric"] == metric)
        .collect()
}

/// Output with every number replaced: what must not change when a run is kept.
/// Repeats of a line are one: how many interval lines a 1 s test prints depends on
/// when the last interval closes on a busy machine, not on saving.
fn skeleton(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text
        .lines()
        .map(|l| {
            let mut out = String::new();
            let mut in_number = false;
            for c in l.chars() {
                if c.is_ascii_digit() || (in_number && c == '.') {
                    if !in_number {
                        out.push('#');
                    }
                    in_number = true;
                } else {
                    in_number = false;
                    out.push(c);
                }
            }
            // Column alignment follows the numbers' widths, the unit's prefix their size.
            out.split_whitespace()
                .map(|w| {
                    let unprefixed = w.trim_start_matches(['K', 'M', 'G', 'T']);
                    if unprefixed.starts_with("Bytes") || unprefixed.starts_with("bits") {
                        unprefixed
                    } else {
                        w
                    }
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    lines.dedup();
    lines
}

fn temp_db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    (dir, db)
}

/// The checks every personality gets: two runs labelled vm=a and one vm=b are kept
/// with their command lines and compare with ±; output without saving, and with a
/// database that is not one, has the same lines.
fn kept_and_compared(personality_name: &str, args: &[&str]) {
    let (dir, db) = temp_db();
    let a1 = personality(&db, Some("vm=a"), args);
    personality(&db, Some("vm=a"), args);
    personality(&db, Some("vm=b"), args);
    let runs = history(&db);
    assert_eq!(runs.len(), 3, "{runs:#?}");
    let mut line = vec!["hostbench"];
    line.extend_from_slice(args);
    for r in &runs {
        assert_eq!(r["command"], personality_name);
        assert_eq!(r["command_line"], serde_json::json!(line));
    }
    let c = compare(&db, &["label:vm=a", "label:vm=b"], false);
    let text = common::stdout(&c);
    assert!(c.status.success(), "{text}{}", common::stderr(&c));
    assert!(text.contains('±'), "{text}");

    let unsaved = personality(&db, None, args);
    assert_eq!(history(&db).len(), 3, "HOSTBENCH_NO_SAVE kept a run");
    assert_eq!(
        skeleton(&common::stdout(&a1)),
        skeleton(&common::stdout(&unsaved))
    );
    assert_eq!(common::stderr(&a1), common::stderr(&unsaved));
    let foreign = dir.path().join("foreign.db");
    std::fs::write(&foreign, b"not a database, not even close").unwrap();
    let o = personality(&foreign, Some("vm=c"), args);
    assert_eq!(
        skeleton(&common::stdout(&o)),
        skeleton(&common::stdout(&unsaved))
    );
    assert_eq!(common::stderr(&o), common::stderr(&unsaved));
}

#[test]
fn iperf3_client_runs_are_kept_and_the_server_keeps_nothing() {
    let (_dir, server_db) = temp_db();
    let port = free_port();
    let server = iperf3_server(port, &server_db);
    let p = port.to_string();
    kept_and_compared(
        "iperf3",
        &["iperf3", "-c", "127.0.0.1", "-p", &p, "-t", "1"],
    );
    drop(server);
    // A one-off server that ends by itself after its test: it measured, kept nothing.
    let port = free_port();
    let p = port.to_string();
    let mut server = common::hostbench()
        .env("HOSTBENCH_DB", &server_db)
        .env("HOSTBENCH_LABEL", "role=server")
        .args(["iperf3", "-s", "-1", "-p", &p])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut banner = String::new();
    let mut lines = BufReader::new(server.stdout.take().unwrap());
    while !banner.contains("Server listening") {
        assert!(lines.read_line(&mut banner).unwrap() > 0, "{banner}");
    }
    let (_d, client_db) = temp_db();
    personality(
        &client_db,
        None,
        &["iperf3", "-c", "127.0.0.1", "-p", &p, "-t", "1"],
    );
    let mut rest = String::new();
    let _ = lines.read_to_string(&mut rest);
    assert!(server.wait().unwrap().success(), "{rest}");
    assert!(rest.contains("receiver"), "{rest}");
    assert!(
        !server_db.exists() || history(&server_db).is_empty(),
        "the iperf3 server kept a run"
    );
}

#[test]
fn iperf3_json_runs_are_kept_as_net_outcomes() {
    let (_dir, db) = temp_db();
    let port = free_port();
    let _server = iperf3_server(port, &db);
    let p = port.to_string();
    let o = personality(
        &db,
        Some("vm=a"),
        &[
            "iperf3",
            "-c",
            "127.0.0.1",
            "-p",
            &p,
            "-t",
            "1",
            "-u",
            "-b",
            "20M",
            "-J",
        ],
    );
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let o = common::run(&["show", "last", "--json", "--db", db.to_str().unwrap()]);
    let run: Value = serde_json::from_slice(&o.stdout).unwrap();
    let outcome = &run["outcomes"][0];
    assert_eq!(outcome["workload"], "net");
    assert_eq!(outcome["params"]["test"], "UDP_STREAM");
    assert_eq!(outcome["params"]["rate"], "20000000");
    assert_eq!(outcome["params"]["direction"], "forward");
    let metric = |name: &str| common::metric(outcome, name);
    // The kept throughput is the receiver's, as iperf3's own sum says.
    let bps = doc["end"]["sum_received"]["bits_per_second"]
        .as_f64()
        .unwrap();
    assert!(
        (metric("throughput") * 8.0 - bps).abs() <= 0.02 * bps,
        "{} vs {bps}",
        metric("throughput") * 8.0
    );
    assert!(metric("datagrams_sent") > 0.0);
}

#[test]
fn native_and_iperf3_with_the_same_settings_are_one_row() {
    let (_dir, db) = temp_db();
    let net = net_server();
    let np = net.addr.port().to_string();
    let port = free_port();
    let _iperf3 = iperf3_server(port, &db);
    let p = port.to_string();
    let c = ["-c", "127.0.0.1", "-p", &p, "-t", "1"];
    native(
        &db,
        "fe=native",
        &["net", "TCP_STREAM", "127.0.0.1", "-p", &np, "-t", "1"],
    );
    personality(&db, Some("fe=iperf3"), &[&["iperf3"][..], &c].concat());
    native(
        &db,
        "fe=maerts",
        &["net", "TCP_MAERTS", "127.0.0.1", "-p", &np, "-t", "1"],
    );
    personality(
        &db,
        Some("fe=reverse"),
        &[&["iperf3"][..], &c, &["-R"]].concat(),
    );
    personality(
        &db,
        Some("fe=two"),
        &[&["iperf3"][..], &c, &["-P", "2"]].concat(),
    );

    for (a, b) in [
        ("label:fe=native", "label:fe=iperf3"),
        ("label:fe=maerts", "label:fe=reverse"),
    ] {
        let o = compare(&db, &[a, b], true);
        assert!(o.status.success(), "{a} {b}: {}", common::stderr(&o));
        let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
        let t = rows(&doc, "throughput");
        assert_eq!(t.len(), 1, "{a} {b}: {doc:#}");
        assert!(
            t[0]["ratios"][1]["ratio"].as_f64().unwrap() > 0.0,
            "{doc:#}"
        );
        assert_eq!(rows(&doc, "sender_throughput").len(), 1);
        assert_eq!(rows(&doc, "local_cpu_cores").len(), 1);
    }
    // A different setting: refused, naming it.
    let o = compare(&db, &["label:fe=native", "label:fe=two"], false);
    assert_eq!(o.status.code(), Some(2), "{}", common::stdout(&o));
    let err = common::stderr(&o);
    assert!(
        err.contains("streams 1 in A") && err.contains("2 in B"),
        "{err}"
    );
    let o = compare(&db, &["label:fe=iperf3", "label:fe=reverse"], false);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        common::stderr(&o).contains("direction forward"),
        "{}",
        common::stderr(&o)
    );
    net.stop();
}

#[test]
fn netperf_runs_are_kept_and_meet_the_native_test() {
    let port = free_port();
    let _ns = netserver(port);
    let p = port.to_string();
    kept_and_compared(
        "netperf",
        &[
            "netperf",
            "-H",
            "127.0.0.1",
            "-p",
            &p,
            "-l",
            "1",
            "-t",
            "TCP_RR",
        ],
    );
    let (_dir, db) = temp_db();
    personality(
        &db,
        Some("fe=netperf"),
        &[
            "netperf",
            "-H",
            "127.0.0.1",
            "-p",
            &p,
            "-l",
            "1",
            "-t",
            "TCP_RR",
        ],
    );
    native(
        &db,
        "fe=native",
        &["net", "TCP_RR", "127.0.0.1", "-p", &p, "-t", "1"],
    );
    let o = compare(&db, &["label:fe=netperf", "label:fe=native"], true);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(rows(&doc, "transactions_per_sec").len(), 1, "{doc:#}");
    assert_eq!(rows(&doc, "latency_p99").len(), 1, "{doc:#}");
    // netperf's TCP_STREAM sends what the socket buffer holds, not 128 KiB.
    personality(
        &db,
        Some("fe=netperf-stream"),
        &["netperf", "-H", "127.0.0.1", "-p", &p, "-l", "1"],
    );
    native(
        &db,
        "fe=native-stream",
        &["net", "TCP_STREAM", "127.0.0.1", "-p", &p, "-t", "1"],
    );
    let o = compare(
        &db,
        &["label:fe=netperf-stream", "label:fe=native-stream"],
        false,
    );
    assert_eq!(o.status.code(), Some(2), "{}", common::stdout(&o));
    assert!(
        common::stderr(&o).contains("message-size"),
        "{}",
        common::stderr(&o)
    );
}

#[test]
fn ping_runs_are_kept_and_settings_are_named() {
    let open = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = open.local_addr().unwrap().port().to_string();
    let ping = ["ping", "--tcp", &port, "-c", "3", "-i", "0.05", "127.0.0.1"];
    kept_and_compared("ping", &ping);
    let (_dir, db) = temp_db();
    personality(&db, Some("i=fast"), &ping);
    personality(
        &db,
        Some("i=slow"),
        &["ping", "--tcp", &port, "-c", "3", "-i", "0.1", "127.0.0.1"],
    );
    let o = compare(&db, &["label:i=fast", "label:i=slow"], false);
    assert_eq!(o.status.code(), Some(2));
    let err = common::stderr(&o);
    assert!(
        err.contains("interval 0.05 in A") && err.contains("0.1 in B"),
        "{err}"
    );
    let o = common::run(&["show", "last", "--json", "--db", db.to_str().unwrap()]);
    let run: Value = serde_json::from_slice(&o.stdout).unwrap();
    let outcome = &run["outcomes"][0];
    assert_eq!(outcome["workload"], "ping");
    assert_eq!(outcome["params"]["method"], "tcp-connect");
    assert!(common::metric(outcome, "rtt_p50") > 0.0);
    assert_eq!(common::metric(outcome, "loss_ratio"), 0.0);
    drop(open);
}

/// A soak slice: HOSTBENCH_SLICE_SECONDS replaces the time option (and a count).
fn slice(args: &[&str], expect: impl Fn(&Value)) {
    let dir = tempfile::tempdir().unwrap();
    let outcomes = dir.path().join("outcomes.json");
    let mut c = common::hostbench();
    c.env("HOSTBENCH_SLICE_SECONDS", "1")
        .env("HOSTBENCH_OUTCOMES", &outcomes)
        .env("HOSTBENCH_NO_SAVE", "1")
        .args(args);
    let t = Instant::now();
    let o = bounded(c);
    assert!(o.status.success(), "{args:?}: {}", common::stderr(&o));
    assert!(
        t.elapsed() < Duration::from_secs(4),
        "{args:?}: {:?}",
        t.elapsed()
    );
    let v: Value = serde_json::from_slice(&std::fs::read(&outcomes).unwrap()).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1, "{v:#}");
    let elapsed = v[0]["elapsed_s"].as_f64().unwrap();
    assert!((0.7..2.0).contains(&elapsed), "{args:?}: elapsed {elapsed}");
    expect(&v[0]);
}

#[test]
fn a_soak_slice_sets_the_length() {
    let (_dir, db) = temp_db();
    let port = free_port();
    let _iperf3 = iperf3_server(port, &db);
    let p = port.to_string();
    slice(&["iperf3", "-c", "127.0.0.1", "-p", &p, "-t", "10"], |o| {
        assert_eq!(o["params"]["test"], "TCP_STREAM");
    });
    slice(
        &["iperf3", "-c", "127.0.0.1", "-p", &p, "-n", "100G"],
        |_| {},
    );
    let ns = free_port();
    let _netserver = netserver(ns);
    let n = ns.to_string();
    slice(
        &[
            "netperf",
            "-H",
            "127.0.0.1",
            "-p",
            &n,
            "-l",
            "10",
            "-t",
            "TCP_RR",
        ],
        |o| assert_eq!(o["params"]["test"], "TCP_RR"),
    );
    // ping: the slice's length as -w, without -c.
    slice(
        &["ping", "--tcp", &n, "-c", "2", "-i", "0.1", "127.0.0.1"],
        |o| assert!(common::metric(o, "packets_transmitted") >= 8.0, "{o:#}"),
    );
}

#[test]
fn a_run_against_debians_iperf3_server_is_kept_with_its_figures() {
    if !common::have("iperf3") {
        eprintln!("skipped: iperf3 is not installed (scripts/test.sh installs it)");
        return;
    }
    let port = free_port();
    let p = port.to_string();
    let mut server = Command::new("iperf3")
        .args(["-s", "-1", "--forceflush", "-p", &p])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(server.stdout.take().unwrap());
    let mut banner = String::new();
    while !banner.contains("Server listening") {
        assert!(lines.read_line(&mut banner).unwrap() > 0, "{banner}");
    }
    let (_dir, db) = temp_db();
    let o = personality(
        &db,
        Some("peer=debian"),
        &["iperf3", "-c", "127.0.0.1", "-p", &p, "-t", "1", "-R", "-J"],
    );
    let _ = server.wait();
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let o = common::run(&["show", "last", "--json", "--db", db.to_str().unwrap()]);
    let run: Value = serde_json::from_slice(&o.stdout).unwrap();
    let outcome = &run["outcomes"][0];
    assert_eq!(outcome["params"]["direction"], "reverse");
    assert_eq!(outcome["params"]["test"], "TCP_STREAM");
    let bps = doc["end"]["sum_received"]["bits_per_second"]
        .as_f64()
        .unwrap();
    let kept = common::metric(outcome, "throughput") * 8.0;
    assert!((kept - bps).abs() <= 0.02 * bps, "{kept} vs {bps}");
    // The server's retransmits (it sent) and its CPU, as it reported them.
    assert!(common::metric(outcome, "remote_cpu_cores") > 0.0);
    assert!(outcome["notes"].to_string().contains("loopback"));
}

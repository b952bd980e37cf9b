//! Cluster mode against a three-master Redis Cluster of the test's own (loopback
//! ports, files in a temporary directory, servers killed when the test ends): the
//! redis-benchmark personality's `--cluster` (its keys land on every master, its
//! output has the real redis-benchmark's layout, a node killed mid-run is a clear
//! error with partial results) and native `hostbench redis --cluster` (routing, and a
//! master killed mid-run).
//! Skips with a printed reason when redis-server or redis-cli is missing.

mod common;
mod redis_server;

use common::{metric, run_bounded, run_interrupted, text};
use hostbench::workload::redis::cluster::key_slot;
use redis_server::{RedisServer, available, peer, personality, shape, visible};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Three masters sharing the 16384 slots. Dropping it stops every node.
struct Cluster {
    nodes: Vec<RedisServer>,
    _dir: tempfile::TempDir,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

/// Sends one inline command to a node and returns the raw reply.
fn command(port: u16, line: &str) -> String {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return String::new();
    };
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(format!("{line}\r\n").as_bytes()).unwrap();
    let mut out = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    // A reply can span reads: read until the server goes quiet for a moment.
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                out.extend_from_slice(&buf[..n]);
                s.set_read_timeout(Some(Duration::from_millis(100)))
                    .unwrap();
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn dbsize(port: u16) -> u64 {
    command(port, "DBSIZE")
        .trim()
        .trim_start_matches(':')
        .parse()
        .unwrap_or(0)
}

impl Cluster {
    /// None (with the reason printed) when redis-server or redis-cli is missing.
    fn start() -> Option<Self> {
        if !available("redis-server") || !available("redis-cli") {
            return None;
        }
        for _attempt in 0..3 {
            if let Some(c) = Self::try_start() {
                return Some(c);
            }
        }
        panic!("could not start a three-node redis cluster");
    }

    fn try_start() -> Option<Self> {
        let dir = tempfile::tempdir().expect("temp dir");
        let dir_arg = dir.path().to_string_lossy().into_owned();
        let mut nodes = Vec::new();
        for i in 0..3 {
            // Cluster mode needs a second port for the cluster bus.
            let bus = free_port().to_string();
            let conf = format!("nodes-{i}.conf");
            nodes.push(RedisServer::start(&[
                "--cluster-enabled",
                "yes",
                "--cluster-port",
                &bus,
                "--cluster-config-file",
                &conf,
                "--cluster-node-timeout",
                "5000",
                "--dir",
                &dir_arg,
            ])?);
        }
        let cluster = Cluster { nodes, _dir: dir };
        let mut create = Command::new("redis-cli");
        create.args(["--cluster", "create"]);
        for n in &cluster.nodes {
            create.arg(format!("127.0.0.1:{}", n.port));
        }
        let out = create
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .stdin(Stdio::null())
            .output()
            .expect("redis-cli runs");
        if !out.status.success() {
            eprintln!(
                "redis-cli --cluster create failed: {}",
                String::from_utf8_lossy(&out.stdout)
            );
            return None;
        }
        // Every node must see the whole cluster before a client asks one of them.
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let ready = cluster.nodes.iter().all(|n| {
                command(n.port, "CLUSTER INFO").contains("cluster_state:ok")
                    && command(n.port, "CLUSTER NODES")
                        .lines()
                        .filter(|l| l.contains("master") && l.contains("connected "))
                        .count()
                        == 3
            });
            if ready {
                return Some(cluster);
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn entry(&self) -> String {
        self.nodes[0].port.to_string()
    }
}

/// The keys a node holds (`KEYS pattern`), from its RESP array reply.
fn keys(port: u16, pattern: &str) -> Vec<String> {
    command(port, &format!("KEYS {pattern}"))
        .lines()
        .filter(|l| !l.starts_with('*') && !l.starts_with('$'))
        .map(str::to_string)
        .collect()
}

#[test]
fn personality_sends_every_key_to_the_master_that_owns_it() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let out = personality(&[
        "-p",
        &cluster.entry(),
        "--cluster",
        "-t",
        "set,get",
        "-n",
        "6000",
        "-r",
        "100000",
        "-q",
    ]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    assert!(
        stdout.starts_with("Cluster has 3 master nodes:\n\n"),
        "{stdout}"
    );
    // One line per master, in CLUSTER NODES order: `Master i: <id> ip:port`.
    for i in 0..cluster.nodes.len() {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(&format!("Master {i}: ")))
            .unwrap_or_else(|| panic!("no Master {i} line: {stdout}"));
        assert!(
            cluster
                .nodes
                .iter()
                .any(|m| line.ends_with(&format!(" 127.0.0.1:{}", m.port))),
            "{line}"
        );
    }
    let visible = visible(&stdout);
    assert!(visible.iter().any(|l| l.starts_with("SET: ")), "{stdout}");
    assert!(visible.iter().any(|l| l.starts_with("GET: ")), "{stdout}");
    assert!(!stdout.contains("PARTIAL"), "{stdout}");
    // Every master got keys, and each key it holds hashes to one of its slots (a
    // misrouted write would have been refused with MOVED instead).
    let mut total = 0;
    for n in &cluster.nodes {
        let size = dbsize(n.port);
        assert!(size > 0, "master {} holds no key", n.port);
        total += size;
        for key in keys(n.port, "key:*").iter().take(50) {
            assert!(key.starts_with("key:{") && key.len() == 22, "{key}");
            let theirs = command(n.port, &format!("CLUSTER KEYSLOT {key}"));
            assert_eq!(
                theirs.trim(),
                format!(":{}", key_slot(key.as_bytes())),
                "{key}"
            );
        }
    }
    assert!(total <= 6000 + 50, "{total} keys for 6000 SETs");
}

#[test]
fn full_report_and_quiet_output_match_redis_benchmark_in_cluster_mode() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    if !available("redis-benchmark") {
        return;
    }
    let entry = cluster.entry();
    for quiet in [false, true] {
        let mut args = vec!["-p", &entry, "--cluster", "-t", "set,get", "-n", "3000"];
        if quiet {
            args.push("-q");
        }
        let ours = personality(&args);
        let theirs = peer(&args);
        assert!(ours.status.success(), "{}", text(&ours.stderr));
        assert!(theirs.status.success(), "{}", text(&theirs.stderr));
        assert_eq!(
            shape(&text(&ours.stdout)),
            shape(&text(&theirs.stdout)),
            "quiet: {quiet}\nours:\n{}\ntheirs:\n{}",
            text(&ours.stdout),
            text(&theirs.stdout)
        );
        // The master list and the header blocks agree word for word.
        let fixed = |o: &Output| -> Vec<String> {
            visible(&text(&o.stdout))
                .into_iter()
                .filter(|l| {
                    l.starts_with("Cluster has")
                        || l.starts_with("Master ")
                        || (l.starts_with("  ")
                            && !l.contains("requests completed")
                            && !l.contains("summary")
                            && !l.starts_with("        "))
                })
                .collect()
        };
        assert_eq!(fixed(&ours), fixed(&theirs), "quiet: {quiet}");
    }
}

#[test]
fn node_killed_mid_run_is_a_clear_error_with_partial_results() {
    let Some(mut cluster) = Cluster::start() else {
        return;
    };
    let mut c = common::hostbench();
    c.args([
        "redis-benchmark",
        "-p",
        &cluster.entry(),
        "--cluster",
        "-n",
        "50000000",
        "-t",
        "get",
        "-q",
    ]);
    let out = run_interrupted(c, Duration::from_millis(1500), || cluster.nodes[1].kill());
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("127.0.0.1:{}", cluster.nodes[1].port))
            && err.contains("closed the connection"),
        "{err}"
    );
    assert!(
        text(&out.stdout).contains("PARTIAL RESULTS"),
        "{}",
        text(&out.stdout)
    );
}

/// The id of the node listening on `port`, from its CLUSTER MYID.
fn node_id(port: u16) -> String {
    command(port, "CLUSTER MYID")
        .lines()
        .find(|l| !l.starts_with('$'))
        .unwrap_or("")
        .to_string()
}

#[test]
fn resharding_mid_run_is_followed_not_fatal() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let mut c = common::hostbench();
    c.args([
        "redis-benchmark",
        "-p",
        &cluster.entry(),
        "--cluster",
        "-n",
        "400000",
        "-r",
        "100000",
        "-t",
        "set",
        "-q",
    ]);
    let mut child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    // Move 20 slots (and their keys) while the clients write: their batches for those
    // slots get MOVED/ASK, which must make them refetch the layout, not stop.
    let (from, to) = (cluster.nodes[0].port, cluster.nodes[1].port);
    let reshard = Command::new("redis-cli")
        .args(["--cluster", "reshard", &format!("127.0.0.1:{from}")])
        .args([
            "--cluster-from",
            &node_id(from),
            "--cluster-to",
            &node_id(to),
        ])
        .args(["--cluster-slots", "20", "--cluster-yes"])
        .stdin(Stdio::null())
        .output()
        .expect("redis-cli runs");
    assert!(reshard.status.success(), "{}", text(&reshard.stdout));
    let overlapped = child.try_wait().unwrap().is_none();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    assert!(!stdout.contains("PARTIAL"), "{stdout}");
    if !overlapped {
        eprintln!("note: the run ended before the resharding did; MOVED was not exercised");
    }
}

#[test]
fn personality_refuses_a_server_that_is_not_a_cluster() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let out = personality(&["-p", &server.port_arg(), "--cluster", "-n", "10", "-q"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("cluster support disabled")
            && err.contains(&format!(
                "Failed to fetch cluster configuration from 127.0.0.1:{}",
                server.port
            )),
        "{err}"
    );
}

#[test]
fn native_run_routes_each_key_to_its_master() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let mut c = common::hostbench();
    c.args([
        "redis",
        "-p",
        &cluster.entry(),
        "--cluster",
        "--time",
        "1s",
        "--warmup",
        "200ms",
        "-c",
        "6",
        "--pipeline",
        "4",
        "--keys",
        "3000",
        "--ratio",
        "1:1",
        "--json",
    ]);
    let out = run_bounded(c, Duration::from_secs(30));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(&out.stdout)));
    assert_eq!(doc["spec"]["cluster_masters"].as_array().unwrap().len(), 3);
    assert!(metric(&doc, "operations") > 100.0);
    assert_eq!(metric(&doc, "redirects"), 0.0);
    for n in &cluster.nodes {
        let held = keys(n.port, "hostbench:*");
        assert!(!held.is_empty(), "master {} holds no key", n.port);
        assert_eq!(held.len() as u64, dbsize(n.port), "only its own keys");
    }
    // Without --cluster, the first master alone answers; keys of other masters'
    // slots come back as MOVED, a clear error.
    let mut c = common::hostbench();
    c.args([
        "redis",
        "-p",
        &cluster.entry(),
        "--time",
        "1s",
        "--warmup",
        "0s",
        "-c",
        "2",
    ]);
    let out = run_bounded(c, Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("MOVED"), "{}", text(&out.stderr));
}

#[test]
fn native_cluster_against_a_plain_server_names_the_fix() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let mut c = common::hostbench();
    c.args([
        "redis",
        "-p",
        &server.port_arg(),
        "--cluster",
        "--time",
        "1s",
    ]);
    let out = run_bounded(c, Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("--cluster-enabled yes"), "{err}");
}

#[test]
fn native_run_with_a_master_killed_mid_run_reports_partial_results() {
    let Some(mut cluster) = Cluster::start() else {
        return;
    };
    let mut c = common::hostbench();
    c.args([
        "redis",
        "-p",
        &cluster.entry(),
        "--cluster",
        "--time",
        "20s",
        "--warmup",
        "0s",
        "-c",
        "4",
    ]);
    let out = run_interrupted(c, Duration::from_millis(1000), || cluster.nodes[2].kill());
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("cluster node 127.0.0.1:{}", cluster.nodes[2].port))
            && err.contains("closed the connection"),
        "{err}"
    );
    assert!(
        text(&out.stdout).contains("PARTIAL RESULTS"),
        "{}",
        text(&out.stdout)
    );
}

//! `hostbench net`: the real binary as client against an in-process server on an
//! ephemeral loopback port (each test its own server, so tests run in parallel).

mod common;

use common::{run, stderr, stdout};
use hostbench::workload::net::server::{Server, ServerConfig, ServerHandle};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

fn server_with(f: impl FnOnce(&mut ServerConfig)) -> ServerHandle {
    let mut c = ServerConfig::new("127.0.0.1:0".parse().unwrap());
    f(&mut c);
    Server::bind(c).expect("bind").spawn()
}

fn server() -> ServerHandle {
    server_with(|_| {})
}

fn json_run(args: &[&str]) -> serde_json::Value {
    let o = run(args);
    assert!(o.status.success(), "{args:?}: {}{}", stdout(&o), stderr(&o));
    serde_json::from_slice(&o.stdout).expect("JSON output")
}

/// `net TEST 127.0.0.1 -p PORT REST…`: the command line of most tests here.
fn net_args<'a>(port: &'a str, test: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["net", test, "127.0.0.1", "-p", port];
    args.extend_from_slice(rest);
    args
}

fn net(port: &str, test: &str, rest: &[&str]) -> std::process::Output {
    run(&net_args(port, test, rest))
}

/// With `--json` among REST: the outcome, after checking the run succeeded.
fn net_json(port: &str, test: &str, rest: &[&str]) -> serde_json::Value {
    json_run(&net_args(port, test, rest))
}

fn metric(j: &serde_json::Value, name: &str) -> f64 {
    j["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("no metric {name} in {j}"))["value"]
        .as_f64()
        .unwrap()
}

#[test]
fn every_test_runs_on_loopback_with_json() {
    let s = server();
    let port = s.addr.port().to_string();
    for test in ["TCP_STREAM", "TCP_MAERTS", "UDP_STREAM"] {
        let j = net_json(&port, test, &["-t", "0.5s", "--json"]);
        assert_eq!(j["workload"], "net");
        assert_eq!(j["spec"]["mode"], test);
        assert!(metric(&j, "throughput") > 1e5, "{test}: {j}");
        assert!(metric(&j, "bytes_received") > 0.0);
        assert!(metric(&j, "remote_cpu_cores") > 0.0, "{test}");
    }
    for test in ["TCP_RR", "TCP_CRR", "UDP_RR"] {
        let j = net_json(&port, test, &["-t", "0.5s", "--json"]);
        let tps = metric(&j, "transactions_per_sec");
        assert!(tps > 100.0, "{test}: {tps}");
        let lat = &j["latency"];
        let p50 = metric(&j, "latency_p50");
        let p99 = metric(&j, "latency_p99");
        assert!(
            lat["min_ns"].as_f64().unwrap() <= p50 && p50 <= p99,
            "{test}: {lat}"
        );
        // Little's law for one stream: mean latency ~ 1 / rate (within the bookkeeping).
        let mean = lat["mean_ns"].as_f64().unwrap();
        assert!(
            mean * tps / 1e9 > 0.5 && mean * tps / 1e9 <= 1.05,
            "{test}: {mean} {tps}"
        );
    }
    s.stop();
}

#[test]
fn byte_and_transaction_counts_end_the_test() {
    let s = server();
    let port = s.addr.port().to_string();
    let j = net_json(&port, "TCP_STREAM", &["-n", "10M", "-l", "64K", "--json"]);
    assert_eq!(metric(&j, "bytes_sent"), (10 << 20) as f64);
    assert_eq!(metric(&j, "bytes_received"), (10 << 20) as f64);
    let j = net_json(
        &port,
        "TCP_RR",
        &["--transactions", "500", "-P", "2", "--json"],
    );
    let n = metric(&j, "transactions");
    // Each stream takes tickets until the shared budget is spent.
    assert_eq!(n, 500.0, "{j}");
    s.stop();
}

#[test]
fn parallel_streams_sizes_and_intervals() {
    let s = server();
    let port = s.addr.port().to_string();
    let o = net(
        &port,
        "TCP_STREAM",
        &["-t", "1.2s", "-P", "3", "-l", "16K", "-i", "0.4s"],
    );
    let out = stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    let lines = out.lines().filter(|l| l.starts_with('[')).count();
    assert!((2..=4).contains(&lines), "{out}");
    assert!(out.contains("3 streams"), "{out}");
    assert!(out.contains("throughput (receiver)"), "{out}");
    let j = net_json(
        &port,
        "TCP_RR",
        &[
            "-t",
            "0.5s",
            "--request-size",
            "100",
            "--response-size",
            "2000",
            "-i",
            "0.2s",
            "--json",
        ],
    );
    assert_eq!(j["spec"]["response_size"], 2000);
    assert!(j["series"].as_array().unwrap().len() >= 2, "{j}");
    s.stop();
}

#[test]
fn ipv6_loopback_works() {
    let mut c = ServerConfig::new("[::1]:0".parse().unwrap());
    c.limits.max_tests = 2;
    let Ok(server) = Server::bind(c) else {
        common::missing(
            "an IPv6 loopback (::1)",
            "enable IPv6: sysctl -w net.ipv6.conf.lo.disable_ipv6=0",
        );
        return;
    };
    let s = server.spawn();
    let port = s.addr.port().to_string();
    for test in ["TCP_RR", "UDP_STREAM"] {
        let j = json_run(&[
            "net", test, "::1", "-6", "-p", &port, "-t", "0.3s", "--json",
        ]);
        assert!(
            j["spec"]["peer"].as_str().unwrap().starts_with("[::1]"),
            "{j}"
        );
    }
    s.stop();
}

#[test]
fn udp_rate_is_held_and_loss_is_zero_below_capacity() {
    let s = server();
    let port = s.addr.port().to_string();
    let j = net_json(
        &port,
        "UDP_STREAM",
        &["-t", "1s", "-b", "20M", "-l", "1000", "--json"],
    );
    let rate = metric(&j, "throughput") * 8.0;
    assert!((rate / 20e6 - 1.0).abs() < 0.1, "{rate}");
    // Loopback loses nothing unless a loaded machine starves the receiver.
    assert!(metric(&j, "loss_ratio") < 0.02, "{j}");
    s.stop();
}

#[test]
fn secret_is_required_and_checked() {
    let s = server_with(|c| c.secret = Some("s3cret".into()));
    let port = s.addr.port().to_string();
    let o = net(&port, "TCP_RR", &["-t", "0.2s"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("--secret"), "{}", stderr(&o));
    let o = net(&port, "TCP_RR", &["-t", "0.2s", "--secret", "wrong"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("secret"), "{}", stderr(&o));
    let o = net(&port, "TCP_RR", &["-t", "0.2s", "--secret", "s3cret"]);
    assert!(o.status.success(), "{}", stderr(&o));
    s.stop();
}

#[test]
fn limits_are_enforced_with_clear_messages() {
    let s = server_with(|c| {
        c.limits.max_parallel = 2;
        c.limits.max_duration_ms = 2000;
        c.limits.max_rate_bps = 10_000_000;
    });
    let port = s.addr.port().to_string();
    for (args, words) in [
        (vec!["-P", "3"], "parallel"),
        (vec!["-t", "5s"], "at most 2 s"),
        (vec!["-t", "0.2s"], "limited"), // UDP without a rate on a capped server
    ] {
        let test = if words == "limited" {
            "UDP_STREAM"
        } else {
            "TCP_STREAM"
        };
        let a = net_args(&port, test, &args);
        let o = run(&a);
        assert_eq!(o.status.code(), Some(1), "{a:?}");
        assert!(stderr(&o).contains(words), "{a:?}: {}", stderr(&o));
    }
    s.stop();
}

#[test]
fn several_clients_at_once() {
    let s = server();
    let port = s.addr.port().to_string();
    let children: Vec<_> = (0..3)
        .map(|_| {
            common::hostbench()
                .args(net_args(&port, "TCP_STREAM", &["-t", "1s", "--json"]))
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
    }
    s.stop();
}

#[test]
fn busy_server_says_so() {
    let s = server_with(|c| c.limits.max_tests = 1);
    let port = s.addr.port().to_string();
    let first = common::hostbench()
        .args(net_args(&port, "TCP_RR", &["-t", "2s"]))
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    let o = net(&port, "TCP_RR", &["-t", "0.2s"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("busy"), "{}", stderr(&o));
    let _ = first.wait_with_output();
    s.stop();
}

#[test]
fn faults_end_in_bounded_time_with_clear_errors() {
    // A refused port.
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = free.local_addr().unwrap().port().to_string();
    drop(free);
    let t = Instant::now();
    let o = net(&port, "TCP_STREAM", &["-t", "1s"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("refused"), "{}", stderr(&o));
    assert!(t.elapsed() < Duration::from_secs(5));

    // A name that does not resolve, and a port already in use: usage errors (exit 2).
    let o = run(&["net", "TCP_RR", "no-such-host.invalid", "-t", "1s"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let busy = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
    let port = busy.local_addr().unwrap().port().to_string();
    let o = run(&["net", "serve", "-p", &port, "--bind", "0.0.0.0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("already in use"), "{}", stderr(&o));

    // A peer that accepts but never speaks our protocol.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port().to_string();
    let t = Instant::now();
    let o = net(&port, "TCP_RR", &["-t", "1s"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("hostbench server"), "{}", stderr(&o));
    assert!(t.elapsed() < Duration::from_secs(15));
    drop(silent);

    // Bad input: a bad test name and sizes out of range.
    for args in [
        vec!["net", "SCTP_STREAM", "127.0.0.1"],
        vec!["net", "UDP_STREAM", "127.0.0.1", "-l", "70000"],
        vec!["net", "TCP_STREAM", "127.0.0.1", "-P", "0"],
        vec!["net", "TCP_STREAM"],
    ] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn server_survives_garbage_and_silence_and_keeps_serving() {
    let s = server_with(|c| c.handshake_timeout = Duration::from_millis(1500));
    let addr = s.addr;
    let port = addr.port().to_string();
    let start = Instant::now();
    // 1,000 connections: silent ones, garbage ones, oversized frames, bad JSON,
    // and data headers with unknown tokens.
    let mut held = Vec::new();
    for i in 0..1000u32 {
        let Ok(mut c) = TcpStream::connect(addr) else {
            continue;
        };
        let _ = match i % 5 {
            0 => Ok(()),
            1 => c.write_all(b"GET / HTTP/1.0\r\n\r\n"),
            2 => c.write_all(&u32::MAX.to_be_bytes()),
            3 => c.write_all(b"\x00\x00\x00\x05{{{{{"),
            _ => c.write_all(b"HBD1aaaaaaaaaaaaaaaa\x00\x00payload"),
        };
        held.push(c);
        if i == 500 {
            // A real client in the middle of the flood.
            let j = net_json(&port, "TCP_RR", &["-t", "0.3s", "--json"]);
            assert!(metric(&j, "transactions") > 0.0);
        }
    }
    let j = net_json(&port, "TCP_STREAM", &["-t", "0.3s", "--json"]);
    assert!(metric(&j, "bytes_received") > 0.0);
    // The server closes every one of them in bounded time.
    for c in &held {
        let _ = c.set_read_timeout(Some(Duration::from_secs(10)));
    }
    for c in held.iter_mut().take(50) {
        let mut b = [0u8; 256];
        let mut total = 0;
        while let Ok(n) = c.read(&mut b) {
            if n == 0 {
                break;
            }
            total += n;
            assert!(total < 4096, "the server answered garbage with data");
        }
    }
    assert!(start.elapsed() < Duration::from_secs(60));
    drop(held);
    let j = net_json(&port, "UDP_RR", &["-t", "0.3s", "--json"]);
    assert!(metric(&j, "transactions") > 0.0);
    s.stop();
}

#[test]
fn client_dying_mid_test_frees_the_server() {
    let s = server_with(|c| {
        c.limits.max_tests = 1;
        c.limits.idle_timeout_ms = 1000;
    });
    let port = s.addr.port().to_string();
    for test in ["TCP_STREAM", "UDP_STREAM", "TCP_MAERTS"] {
        let mut child = common::hostbench()
            .args(["net", test, "127.0.0.1", "-p", &port, "-t", "30s"])
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(600));
        child.kill().unwrap();
        let _ = child.wait();
        // The one test slot comes back once the server notices.
        let t = Instant::now();
        loop {
            let o = net(&port, "TCP_RR", &["-t", "0.2s"]);
            if o.status.success() {
                break;
            }
            assert!(
                t.elapsed() < Duration::from_secs(20),
                "{test}: {}",
                stderr(&o)
            );
            std::thread::sleep(Duration::from_millis(300));
        }
    }
    s.stop();
}

#[test]
fn server_dying_mid_test_ends_the_client() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let mut srv = common::hostbench()
        .args([
            "net",
            "serve",
            "-p",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
        ])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(400));
    let client = common::hostbench()
        .args([
            "net",
            "TCP_STREAM",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "-t",
            "30s",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    srv.kill().unwrap();
    let _ = srv.wait();
    let t = Instant::now();
    let o = client.wait_with_output().unwrap();
    assert!(t.elapsed() < Duration::from_secs(20));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
}

#[test]
fn server_bandwidth_limit_paces_what_it_sends() {
    let s = server_with(|c| c.limits.max_rate_bps = 80_000_000);
    let port = s.addr.port().to_string();
    let j = net_json(&port, "TCP_MAERTS", &["-t", "1s", "-P", "2", "--json"]);
    let bps = metric(&j, "throughput") * 8.0;
    assert!(bps < 80e6 * 1.1 && bps > 80e6 * 0.5, "{bps}");
    s.stop();
}

/// The server sends UDP only to the address of the control connection that asked for
/// the test, and only after it presented the test's token.
#[test]
fn udp_is_sent_only_to_the_peer_that_asked() {
    use hostbench::workload::net::protocol::{self, Message, TestRequest};
    use hostbench::workload::net::{TestKind, server::join_datagram};
    let s = server();
    let mut ctl = TcpStream::connect(s.addr).unwrap();
    ctl.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let hello = Message::Hello {
        protocol: protocol::PROTOCOL_VERSION,
        client: "test".into(),
    };
    protocol::write_message(&mut ctl, &hello).unwrap();
    assert!(matches!(
        protocol::read_message(&mut ctl).unwrap(),
        Message::Welcome { .. }
    ));
    let req = TestRequest {
        test: TestKind::UdpRr,
        duration_ms: 1000,
        bytes: 0,
        transactions: 0,
        parallel: 1,
        send_size: 100,
        recv_size: 100,
        request_size: 8,
        response_size: 8,
        server_sndbuf: 0,
        server_rcvbuf: 0,
        rate_bps: 0,
        interval_ms: 0,
        nodelay: false,
    };
    protocol::write_message(&mut ctl, &Message::Start(req)).unwrap();
    let Message::Ready { token, udp_ports } = protocol::read_message(&mut ctl).unwrap() else {
        panic!("no ready");
    };
    let token = protocol::unhex_token(&token).unwrap();
    let target = std::net::SocketAddr::from(([127, 0, 0, 1], udp_ports[0]));
    let mut buf = [0u8; 64];
    // Another address (127.0.0.2) with the right token: ignored.
    let stranger = std::net::UdpSocket::bind("127.0.0.2:0").unwrap();
    stranger
        .set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    stranger.send_to(&join_datagram(&token, 0), target).unwrap();
    assert!(
        stranger.recv(&mut buf).is_err(),
        "the server answered a stranger"
    );
    // The right address with a wrong token: ignored.
    let peer = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    peer.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    peer.send_to(&join_datagram(&[0u8; 16], 0), target).unwrap();
    assert!(
        peer.recv(&mut buf).is_err(),
        "the server answered a wrong token"
    );
    // The right address and token: confirmed.
    peer.send_to(&join_datagram(&token, 0), target).unwrap();
    let n = peer.recv(&mut buf).expect("confirmation");
    assert_eq!(&buf[..n], &join_datagram(&token, 0)[..]);
    drop(ctl);
    s.stop();
}

/// A free loopback port for a `hostbench net serve` of the test's own.
fn free_port() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port().to_string()
}

/// `hostbench net serve ARGS` for a moment (during which `meanwhile` runs): its stderr.
fn serve_briefly(args: &[&str], meanwhile: impl FnOnce()) -> String {
    let mut c = common::hostbench();
    c.args(["net", "serve"]).args(args);
    let mut child = c
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(400));
    meanwhile();
    child.kill().unwrap();
    let out = child.wait_with_output().unwrap();
    stderr(&out)
}

/// Without --bind the server listens on every interface (as iperf3 -s does); without
/// --secret it says so at start, with the address and how to restrict it.
#[test]
fn serve_warns_when_anyone_can_use_it() {
    let port = free_port();
    let err = serve_briefly(&["-p", &port, "--max-tests", "1"], || {});
    assert!(
        err.contains(&format!(
            "warning: listening on [::]:{port} (every interface) without --secret"
        )),
        "{err}"
    );
    assert!(err.contains("--bind 127.0.0.1"), "{err}");
    // With a secret, only clients that know it get in: nothing to warn about.
    let port = free_port();
    let err = serve_briefly(
        &["-p", &port, "--secret", "s3cret", "--max-tests", "1"],
        || {},
    );
    assert!(err.contains("listening on"), "{err}");
    assert!(!err.contains("warning"), "{err}");
    // An empty secret admits anyone: refused.
    let o = run(&["net", "serve", "-p", &free_port(), "--secret", ""]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// `--bind 127.0.0.1` keeps the server to this host: it listens there (a client
/// connects and measures), and has nothing to warn about.
#[test]
fn serve_binds_where_told() {
    let port = free_port();
    let err = serve_briefly(&["-p", &port, "--bind", "127.0.0.1"], || {
        let o = net(&port, "TCP_RR", &["--transactions", "50", "--no-save"]);
        assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    });
    assert!(
        err.contains(&format!("listening on 127.0.0.1:{port}")),
        "{err}"
    );
    assert!(!err.contains("warning"), "{err}");
}

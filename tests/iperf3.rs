//! The iperf3 personality against Debian's iperf3, both ways, on loopback ports of
//! their own. Skipped (with a message) when iperf3 is not installed.

mod common;

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn have_iperf3() -> bool {
    if common::have("iperf3") {
        return true;
    }
    common::missing("iperf3", "scripts/test.sh installs it (Debian: iperf3)");
    false
}

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

/// A server (stock or ours) started with `-s -1`, ready once its banner is out.
struct Server {
    child: Child,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Server {
    fn start(mut cmd: Command) -> Server {
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("server starts");
        let out = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(l) if l.starts_with("Server listening") => break,
                Ok(_) => {}
                Err(_) => panic!("the server did not start"),
            }
        }
        Server { child, lines: rx }
    }

    /// Everything the server printed until it exits (bounded).
    fn finish(mut self) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let mut text = String::new();
        while let Ok(l) = self.lines.recv_timeout(Duration::from_millis(200)) {
            text += &l;
            text.push('\n');
        }
        text
    }
}

fn stock_server(port: u16) -> Server {
    let mut c = Command::new("iperf3");
    c.args(["-s", "-1", "--forceflush", "-p", &port.to_string()]);
    Server::start(c)
}

fn our_server(port: u16) -> Server {
    let mut c = common::hostbench();
    c.args(["iperf3", "-s", "-1", "-p", &port.to_string()]);
    Server::start(c)
}

/// Runs a client command, killed after 30 s so a hang fails instead of blocking.
fn bounded(mut cmd: Command) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("client starts");
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return child.wait_with_output().unwrap();
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("client did not finish in 30 s: {cmd:?}");
}

fn our_client(port: u16, args: &[&str]) -> Output {
    let mut c = common::hostbench();
    c.args(["iperf3", "-c", "127.0.0.1", "-p", &port.to_string()]);
    c.args(args);
    bounded(c)
}

fn stock_client(port: u16, args: &[&str]) -> Output {
    let mut c = Command::new("iperf3");
    c.args(["-c", "127.0.0.1", "-p", &port.to_string()]);
    c.args(args);
    bounded(c)
}

fn json_of(o: &Output) -> Value {
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}{}", common::stdout(o), common::stderr(o)));
    assert!(v.get("error").is_none(), "error in {v}");
    v
}

/// sum_sent and sum_received bytes agree (the receiver got what was sent).
fn check_sums(v: &Value, udp: bool) -> (f64, f64) {
    // With an omit period each end re-bases its counters at its own moment.
    let omit = v["start"]["test_start"]["omit"].as_u64().unwrap_or(0) > 0;
    let slack = if omit { 0.1 } else { 0.0001 };
    let end = &v["end"];
    let sent = end["sum_sent"]["bytes"].as_f64().unwrap();
    let received = end["sum_received"]["bytes"].as_f64().unwrap();
    assert!(sent > 0.0 && received > 0.0, "{end}");
    if !udp {
        assert!(
            received <= sent * (1.0 + slack) + 1.0,
            "received {received} > sent {sent}"
        );
        // A stock 3.12 server closes its sockets at TEST_END without reading what its
        // receive buffers still hold (it does so with its own client too).
        assert!(
            received >= sent * (0.9 - slack),
            "received {received} << sent {sent}"
        );
    }
    (sent, received)
}

#[test]
fn our_client_against_stock_server() {
    if !have_iperf3() {
        return;
    }
    for args in [
        vec!["-t", "1"],
        vec!["-t", "1", "-P", "3"],
        vec!["-t", "1", "-R"],
        vec!["-t", "1", "--bidir"],
        vec!["-n", "20M", "-l", "64K"],
        vec!["-t", "2", "-O", "1", "-w", "512K", "-i", "0.5"],
    ] {
        let port = free_port();
        let server = stock_server(port);
        let mut a = args.clone();
        a.push("-J");
        let o = our_client(port, &a);
        let v = json_of(&o);
        check_sums(&v, false);
        assert_eq!(v["start"]["test_start"]["protocol"], "TCP");
        if args.contains(&"-n") {
            let sent = v["end"]["sum_sent"]["bytes"].as_u64().unwrap();
            assert_eq!(sent, 20 << 20, "{args:?}");
        }
        let srv = server.finish();
        assert!(
            srv.contains("receiver") || srv.contains("sender"),
            "{args:?}:\n{srv}"
        );
    }
}

#[test]
fn our_client_text_output_looks_like_iperf3() {
    if !have_iperf3() {
        return;
    }
    let port = free_port();
    let server = stock_server(port);
    let o = our_client(port, &["-t", "1", "-P", "2"]);
    let out = common::stdout(&o);
    assert!(o.status.success(), "{out}{}", common::stderr(&o));
    assert!(
        out.starts_with(&format!("Connecting to host 127.0.0.1, port {port}\n")),
        "{out}"
    );
    assert!(out.contains("[ ID] Interval           Transfer     Bitrate         Retr  Cwnd"));
    assert!(out.contains("- - - - - - - - - - - - - - - - - - - - - - - - -"));
    assert!(
        out.lines()
            .any(|l| l.starts_with("[SUM]") && l.ends_with("receiver")),
        "{out}"
    );
    assert!(out.trim_end().ends_with("iperf Done."), "{out}");
    server.finish();
}

#[test]
fn our_client_udp_against_stock_server() {
    if !have_iperf3() {
        return;
    }
    for args in [
        vec!["-u", "-b", "20M", "-t", "1", "-l", "1400"],
        vec!["-u", "-b", "10M", "-t", "1", "-R", "-P", "2"],
        vec!["-u", "-b", "5M", "-t", "1", "--bidir"],
    ] {
        let port = free_port();
        let server = stock_server(port);
        // In --bidir mode sum_received covers the client's sending direction only.
        let mut a = args.clone();
        a.push("-J");
        let v = json_of(&our_client(port, &a));
        let (_, received) = check_sums(&v, true);
        // The receiver got the paced rate: bits/s within 15 % of what was asked.
        let rate: f64 = args[2].trim_end_matches('M').parse::<f64>().unwrap() * 1e6;
        let streams = if args.contains(&"-P") { 2.0 } else { 1.0 };
        let bps = received * 8.0 / v["end"]["sum_received"]["seconds"].as_f64().unwrap();
        assert!(
            (bps / (rate * streams) - 1.0).abs() < 0.15,
            "{args:?}: {bps}"
        );
        // Loopback loses nothing unless a loaded machine starves a receiver.
        let lost = v["end"]["sum_received"]["lost_packets"].as_f64().unwrap();
        let packets = v["end"]["sum_received"]["packets"].as_f64().unwrap();
        assert!(lost <= packets * 0.05, "{args:?}: {lost} of {packets} lost");
        server.finish();
    }
}

#[test]
fn stock_client_against_our_server() {
    if !have_iperf3() {
        return;
    }
    for args in [
        vec!["-t", "1"],
        vec!["-t", "1", "-P", "4"],
        vec!["-t", "1", "-R", "-P", "2"],
        vec!["-t", "1", "--bidir"],
        vec!["-n", "30M"],
        vec!["-k", "100", "-l", "100K"],
        vec!["-t", "2", "-O", "1", "-N", "-w", "256K"],
    ] {
        let port = free_port();
        let server = our_server(port);
        let mut a = args.clone();
        a.push("-J");
        let o = stock_client(port, &a);
        let v = json_of(&o);
        check_sums(&v, false);
        if args.contains(&"-n") {
            assert_eq!(v["end"]["sum_sent"]["bytes"].as_u64(), Some(30 << 20));
        }
        if args.contains(&"-k") {
            assert_eq!(
                v["end"]["sum_sent"]["bytes"].as_u64(),
                Some(100 * 100 * 1024)
            );
        }
        // Our server reported its CPU and its retransmits in a way the stock client read.
        assert!(
            v["end"]["cpu_utilization_percent"]["remote_total"]
                .as_f64()
                .unwrap()
                > 0.0
        );
        let srv = server.finish();
        assert!(srv.contains("Accepted connection from 127.0.0.1"), "{srv}");
    }
}

#[test]
fn stock_client_udp_against_our_server() {
    if !have_iperf3() {
        return;
    }
    for args in [
        vec!["-u", "-b", "20M", "-t", "1"],
        vec!["-u", "-b", "10M", "-t", "1", "-R", "-P", "2", "-l", "1200"],
        vec!["-u", "-b", "5M", "-t", "1", "--bidir"],
    ] {
        let port = free_port();
        let server = our_server(port);
        let mut a = args.clone();
        a.push("-J");
        let v = json_of(&stock_client(port, &a));
        check_sums(&v, true);
        let end = &v["end"];
        let lost = end["sum_received"]["lost_packets"].as_i64().unwrap();
        let packets = end["sum_received"]["packets"].as_i64().unwrap();
        assert!(lost * 20 <= packets, "{args:?}: {end}");
        assert!(packets > 10, "{args:?}: {end}");
        let srv = server.finish();
        assert!(srv.contains("Lost/Total Datagrams"), "{srv}");
    }
}

#[test]
fn stock_client_text_completes_and_busy_server_refuses_a_second() {
    if !have_iperf3() {
        return;
    }
    let port = free_port();
    let mut c = common::hostbench();
    c.args(["iperf3", "-s", "-p", &port.to_string()]);
    let server = Server::start(c);
    let mut first = Command::new("iperf3")
        .args(["-c", "127.0.0.1", "-p", &port.to_string(), "-t", "3"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1000));
    let second = stock_client(port, &["-t", "1"]);
    let err = common::stderr(&second) + &common::stdout(&second);
    assert!(
        err.contains("the server is busy running a test. try again later"),
        "{err}"
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while first.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "first client hangs");
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = first.wait_with_output().unwrap();
    assert!(common::stdout(&out).contains("iperf Done."));
    // And the server serves the next client.
    let after = stock_client(port, &["-t", "1"]);
    assert!(
        common::stdout(&after).contains("iperf Done."),
        "{}",
        common::stderr(&after)
    );
    let mut child = server.child;
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn errors_are_iperf3_style_and_bounded() {
    let port = free_port();
    let t = Instant::now();
    let o = our_client(port, &["-t", "1"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        common::stderr(&o).contains("iperf3: error - unable to connect to server"),
        "{}",
        common::stderr(&o)
    );
    assert!(t.elapsed() < Duration::from_secs(10));
    // A server that accepts and never answers: the connect timeout bounds every
    // answer until the test runs (iperf3 itself waits for ever), 10 s by default.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let p = silent.local_addr().unwrap().port();
    for (args, secs) in [
        (vec!["-t", "1", "--connect-timeout", "1500"], "1.5"),
        (vec!["-t", "1"], "10"),
    ] {
        let t = Instant::now();
        let o = our_client(p, &args);
        assert_eq!(o.status.code(), Some(1));
        let err = common::stderr(&o);
        assert!(
            err.contains(&format!(
                "iperf3: error - no response from the server 127.0.0.1 port {p} within {secs} s (--connect-timeout sets the bound)"
            )),
            "{err}"
        );
        assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    }
    drop(silent);
    let help = common::stdout(&common::run(&["iperf3", "--help"]));
    assert!(
        help.contains("also each answer of the server until the test runs"),
        "{help}"
    );
    let o = common::run(&["iperf3", "-t", "1"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(common::stderr(&o).contains("must either be a client (-c) or server (-s)"));
    // A port in use.
    let busy = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
    let p = busy.local_addr().unwrap().port().to_string();
    let o = common::run(&["iperf3", "-s", "-1", "-p", &p, "-B", "0.0.0.0"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        common::stderr(&o).contains("Address already in use"),
        "{}",
        common::stderr(&o)
    );
}

#[test]
fn our_server_survives_a_client_that_vanishes() {
    if !have_iperf3() {
        return;
    }
    let port = free_port();
    let mut c = common::hostbench();
    c.args(["iperf3", "-s", "-p", &port.to_string()]);
    let server = Server::start(c);
    let mut quitter = Command::new("iperf3")
        .args(["-c", "127.0.0.1", "-p", &port.to_string(), "-t", "30"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1200));
    quitter.kill().unwrap();
    let _ = quitter.wait();
    let t = Instant::now();
    loop {
        let o = stock_client(port, &["-t", "1"]);
        if common::stdout(&o).contains("iperf Done.") {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(15),
            "{}",
            common::stderr(&o)
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    let mut child = server.child;
    let _ = child.kill();
    let _ = child.wait();
}

/// A client that arrives while the server is busy with another waits in the
/// listener's backlog; the server used to close and reopen its listener after each
/// test, which reset it ("Connection reset by peer"). Here the first "client" is this
/// test: it sends a cookie, is asked for parameters, and sends garbage instead,
/// which fails its test on the spot, while a stock client waits in the backlog. That
/// client then runs its test; so does one that comes after.
#[test]
fn a_client_queued_during_a_test_is_served_not_reset() {
    use std::io::{Read, Write};
    if !have_iperf3() {
        return;
    }
    let port = free_port();
    let mut c = common::hostbench();
    c.args(["iperf3", "-s", "-p", &port.to_string()]);
    let server = Server::start(c);
    let mut first = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    first.write_all(&[b'a'; 36]).unwrap();
    first.write_all(&[0]).unwrap();
    first
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut state = [0u8; 1];
    first.read_exact(&mut state).unwrap();
    assert_eq!(state[0], 9, "PARAM_EXCHANGE");
    // The server is reading our parameters: the next client queues.
    let queued = Command::new("iperf3")
        .args(["-c", "127.0.0.1", "-p", &port.to_string(), "-t", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    first.write_all(b"\x00\x00\x00\x05{{{{{").unwrap();
    let t = Instant::now();
    let mut queued = queued;
    while queued.try_wait().unwrap().is_none() {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "the queued client hangs"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = queued.wait_with_output().unwrap();
    let text = common::stdout(&out) + &common::stderr(&out);
    assert!(text.contains("iperf Done."), "the queued client: {text}");
    let after = stock_client(port, &["-t", "1"]);
    assert!(
        common::stdout(&after).contains("iperf Done."),
        "{}",
        common::stderr(&after)
    );
    drop(first);
    let mut child = server.child;
    let _ = child.kill();
    let _ = child.wait();
}

/// A client that sends its cookie and then nothing: the server gives up after its
/// 10 s step and says so in words, not "Resource temporarily unavailable (os error 11)".
#[test]
fn our_server_names_what_timed_out() {
    use std::io::Write;
    let port = free_port();
    let mut c = common::hostbench();
    c.args(["iperf3", "-s", "-1", "-p", &port.to_string()]);
    let server = Server::start(c);
    let mut silent = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    silent.write_all(&[b'q'; 37]).unwrap();
    let mut child = server.child;
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "the server waits for ever"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let err = common::stderr(&child.wait_with_output().unwrap());
    assert!(
        err.contains(
            "iperf3: error - unable to receive parameters from client: nothing came within 10 s"
        ),
        "{err}"
    );
    assert!(!err.contains("os error"), "{err}");
    drop(silent);
}

/// Connections that never send a cookie wait beside the next client instead of in
/// front of it (each used to hold the one-test server for 10 s): a stock client runs
/// its test at once behind twenty of them.
#[test]
fn silent_connections_do_not_hold_our_server() {
    if !have_iperf3() {
        return;
    }
    let port = free_port();
    let mut c = common::hostbench();
    c.args(["iperf3", "-s", "-p", &port.to_string()]);
    let server = Server::start(c);
    let silent: Vec<_> = (0..20)
        .map(|_| std::net::TcpStream::connect(("127.0.0.1", port)).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let t = Instant::now();
    let o = stock_client(port, &["-t", "1"]);
    assert!(
        common::stdout(&o).contains("iperf Done."),
        "{}",
        common::stderr(&o)
    );
    assert!(t.elapsed() < Duration::from_secs(9), "{:?}", t.elapsed());
    drop(silent);
    let mut child = server.child;
    let _ = child.kill();
    let _ = child.wait();
}

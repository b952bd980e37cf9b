//! Strangers against `hostbench net serve` and the netserver personality: raw control
//! bytes written by this test over loopback, then a real client, which must get its
//! test at once. A test slot is taken only when a test's data streams are there; with
//! `--secret` nothing is held before the proof; a connection cannot keep a control
//! slot by talking; and 200 abusive connections leave no descriptor behind.

mod common;

use common::{run_bounded, stderr, stdout};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A server process of the test's own on a free loopback port, killed on drop.
struct Served {
    child: Child,
    port: u16,
}

impl Served {
    /// `hostbench ARGS…` with `{port}` in ARGS replaced by a free port, once it accepts.
    fn start(args: &[&str]) -> Served {
        let port = free_port();
        let args: Vec<String> = args
            .iter()
            .map(|a| a.replace("{port}", &port.to_string()))
            .collect();
        let child = common::hostbench()
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("server starts");
        let t = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "{args:?} never listened"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Served { child, port }
    }

    /// The server's open descriptors, from /proc.
    fn fds(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.child.id()))
            .expect("the server's /proc/PID/fd")
            .count()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// A control frame: u32 big-endian length, then the JSON (docs/net-protocol.md).
fn frame(json: &str) -> Vec<u8> {
    let mut f = (json.len() as u32).to_be_bytes().to_vec();
    f.extend_from_slice(json.as_bytes());
    f
}

fn hello() -> Vec<u8> {
    frame(r#"{"type":"hello","protocol":1,"client":"stranger"}"#)
}

fn start() -> Vec<u8> {
    frame(
        r#"{"type":"start","test":"TCP_STREAM","duration_ms":10000,"parallel":1,"send_size":1000,"request_size":1,"response_size":1}"#,
    )
}

/// Hello and start in one write, about 190 bytes: a test asked for, never joined.
fn ask_and_hold(port: u16) -> TcpStream {
    let mut c = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    let mut bytes = hello();
    bytes.extend(start());
    c.write_all(&bytes).expect("write");
    c
}

/// One control frame from the server (its JSON text), or None when it closed.
fn read_frame(c: &mut TcpStream) -> Option<String> {
    let _ = c.set_read_timeout(Some(Duration::from_secs(10)));
    let mut len = [0u8; 4];
    c.read_exact(&mut len).ok()?;
    let mut body = vec![0u8; u32::from_be_bytes(len) as usize];
    c.read_exact(&mut body).ok()?;
    Some(String::from_utf8_lossy(&body).into_owned())
}

/// A real test against the server, which must succeed on its first try.
fn real_client(cmd: &[&str], port: u16) {
    let mut c = common::hostbench();
    c.args(cmd).args(["-p", &port.to_string()]).arg("--no-save");
    real_run(c, cmd);
}

fn real_run(c: Command, what: &[&str]) {
    let o = run_bounded(c, Duration::from_secs(60));
    assert!(
        o.status.success(),
        "{what:?} was turned away: {}{}",
        stdout(&o),
        stderr(&o)
    );
}

/// The netperf personality's TCP_RR against a netserver personality on `port`.
fn netperf_client(port: u16) {
    let mut c = common::hostbench();
    c.args(["netperf", "-H", "127.0.0.1", "-p", &port.to_string()])
        .args(["-t", "TCP_RR", "-l", "1"]);
    real_run(c, &["netperf"]);
}

/// Eight and more hello + start sequences, closed at once or held open, took every
/// test slot for 10 s ("limit of 8 tests; try again later"): now a slot is taken
/// only when a test's data streams arrive, so the next real client runs at once.
#[test]
fn asking_for_tests_and_leaving_holds_no_slot() {
    let net = Served::start(&["net", "serve", "-p", "{port}", "--bind", "127.0.0.1"]);
    let netserver = Served::start(&["netserver", "-D", "-p", "{port}", "-L", "127.0.0.1"]);
    for s in [&net, &netserver] {
        for _ in 0..16 {
            drop(ask_and_hold(s.port));
        }
        let held: Vec<TcpStream> = (0..16).map(|_| ask_and_hold(s.port)).collect();
        if s.port == net.port {
            real_client(&["net", "TCP_RR", "127.0.0.1", "-t", "0.2s"], s.port);
        } else {
            netperf_client(s.port);
        }
        // Each held stranger was answered `ready` and is waiting for streams that
        // never come: it has no slot, and the server says so only to itself.
        drop(held);
    }
}

/// With a secret, a connection holds nothing until it has proved it: 300 hellos that
/// never prove anything (more than the 256 control sessions) and wrong proofs
/// followed by a start leave the server free for a client that knows the secret.
#[test]
fn with_a_secret_a_stranger_reserves_nothing() {
    let s = Served::start(&[
        "net",
        "serve",
        "-p",
        "{port}",
        "--bind",
        "127.0.0.1",
        "--secret",
        "s3cret",
    ]);
    let silent: Vec<TcpStream> = (0..300)
        .map(|_| {
            let mut c = TcpStream::connect(("127.0.0.1", s.port)).expect("connect");
            c.write_all(&hello()).expect("hello");
            c
        })
        .collect();
    let mut wrong = Vec::new();
    for _ in 0..16 {
        let mut c = TcpStream::connect(("127.0.0.1", s.port)).expect("connect");
        c.write_all(&hello()).unwrap();
        let welcome = read_frame(&mut c).expect("welcome");
        assert!(welcome.contains(r#""auth":true"#), "{welcome}");
        let mut bytes = frame(&format!(
            r#"{{"type":"auth","proof":"{}"}}"#,
            "0".repeat(64)
        ));
        bytes.extend(start());
        c.write_all(&bytes).unwrap();
        let answer = read_frame(&mut c).expect("an answer to the wrong proof");
        assert!(answer.contains(r#""code":"auth""#), "{answer}");
        assert_eq!(read_frame(&mut c), None, "the server keeps a wrong proof");
        wrong.push(c);
    }
    let mut c = common::hostbench();
    c.args(["net", "TCP_RR", "127.0.0.1", "-t", "0.2s", "--no-save"])
        .args(["-p", &s.port.to_string(), "--secret", "s3cret"]);
    real_run(c, &["net", "--secret"]);
    drop((silent, wrong));
}

/// A control connection that sends a message every few hundred milliseconds and
/// never runs a test is closed at the idle timeout all the same ("idle").
#[test]
fn talking_does_not_keep_a_control_session() {
    let s = Served::start(&[
        "net",
        "serve",
        "-p",
        "{port}",
        "--bind",
        "127.0.0.1",
        "--idle-timeout",
        "1s",
    ]);
    let mut c = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    c.write_all(&hello()).unwrap();
    assert!(read_frame(&mut c).expect("welcome").contains("welcome"));
    let t = Instant::now();
    let _ = c.set_read_timeout(Some(Duration::from_millis(250)));
    let mut answer = Vec::new();
    let closed = loop {
        if t.elapsed() > Duration::from_secs(8) {
            break false;
        }
        if c.write_all(&frame(r#"{"type":"stop"}"#)).is_err() {
            break true;
        }
        let mut b = [0u8; 512];
        match c.read(&mut b) {
            Ok(0) => break true,
            Ok(n) => answer.extend_from_slice(&b[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(_) => break true,
        }
    };
    assert!(closed, "a talking connection kept its session for 8 s");
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.contains(r#""code":"idle""#), "{answer}");
}

/// 200 abusive connections of every kind leave the server's descriptors as they
/// were, and a real client runs after them.
#[test]
fn no_descriptor_is_left_behind_by_200_abusive_connections() {
    let s = Served::start(&[
        "net",
        "serve",
        "-p",
        "{port}",
        "--bind",
        "127.0.0.1",
        "--idle-timeout",
        "2s",
    ]);
    real_client(&["net", "TCP_RR", "127.0.0.1", "-t", "0.2s"], s.port);
    let before = s.fds();
    let mut held = Vec::new();
    for i in 0..200 {
        let Ok(mut c) = TcpStream::connect(("127.0.0.1", s.port)) else {
            continue;
        };
        let bytes = match i % 5 {
            0 => [hello(), start()].concat(),
            1 => hello(),
            2 => b"GET / HTTP/1.0\r\n\r\n".to_vec(),
            3 => b"HBD1aaaaaaaaaaaaaaaa\x00\x00payload".to_vec(),
            _ => (u32::MAX).to_be_bytes().to_vec(),
        };
        let _ = c.write_all(&bytes);
        if i % 2 == 0 {
            held.push(c);
        }
    }
    real_client(&["net", "TCP_STREAM", "127.0.0.1", "-t", "0.2s"], s.port);
    drop(held);
    // Every one of them ends within the handshake (5 s) or idle (2 s) bound.
    let t = Instant::now();
    let mut after = s.fds();
    while after > before && t.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(200));
        after = s.fds();
    }
    eprintln!("server descriptors: {before} before, {after} after 200 abusive connections");
    assert!(
        after <= before,
        "{before} descriptors before, {after} after"
    );
    real_client(&["net", "UDP_RR", "127.0.0.1", "-t", "0.2s"], s.port);
}

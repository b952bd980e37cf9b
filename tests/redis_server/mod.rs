//! A redis-server of the test's own on an ephemeral loopback port, stopped (by its
//! pid) when dropped. Tests that need it skip with a printed reason when Debian's
//! redis-server is missing (scripts/test.sh installs it), or fail under
//! `HOSTBENCH_STRICT=1`.

#![allow(dead_code)]

use crate::common;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub struct RedisServer {
    pub port: u16,
    child: Child,
}

pub fn available(tool: &str) -> bool {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !found {
        common::missing(
            tool,
            "scripts/test.sh installs it (Debian: redis-server, redis-tools)",
        );
    }
    found
}

impl RedisServer {
    /// Starts a server with extra config arguments (`["--requirepass", "x"]`).
    pub fn start(extra: &[&str]) -> Option<Self> {
        if !available("redis-server") {
            return None;
        }
        for _ in 0..5 {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .ok()?
                .local_addr()
                .ok()?
                .port();
            let mut child = Command::new("redis-server")
                .args([
                    "--port",
                    &port.to_string(),
                    "--bind",
                    "127.0.0.1",
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--daemonize",
                    "no",
                    "--maxclients",
                    "2000",
                ])
                .args(extra)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("redis-server starts");
            let deadline = Instant::now() + Duration::from_secs(5);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    break; // port taken: try another
                }
                if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    return Some(Self { port, child });
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("could not start redis-server on a free port");
    }

    pub fn port_arg(&self) -> String {
        self.port.to_string()
    }

    /// Sends one inline command and returns the raw reply (enough for tests).
    pub fn command(&self, line: &str) -> String {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s.write_all(format!("{line}\r\n").as_bytes()).unwrap();
        let mut buf = vec![0u8; 1 << 16];
        let n = s.read(&mut buf).unwrap_or(0);
        String::from_utf8_lossy(&buf[..n]).into_owned()
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Stops the server now (a crash, as far as clients can tell).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `hostbench redis-benchmark <args>`, bounded to a minute.
pub fn personality(args: &[&str]) -> Output {
    let mut c = common::hostbench();
    c.arg("redis-benchmark").args(args);
    common::run_bounded(c, Duration::from_secs(60))
}

/// The real `redis-benchmark <args>`, bounded to a minute.
pub fn peer(args: &[&str]) -> Output {
    let mut c = Command::new("redis-benchmark");
    c.args(args);
    common::run_bounded(c, Duration::from_secs(60))
}

/// What a reader sees on a terminal: for each line, the text after its last `\r`.
pub fn visible(out: &str) -> Vec<String> {
    out.lines()
        .map(|l| l.rsplit('\r').next().unwrap_or("").to_string())
        .collect()
}

/// Lines with every number replaced by `#`, runs of equally shaped lines collapsed:
/// what two redis-benchmark outputs share when their measurements differ.
pub fn shape(out: &str) -> Vec<String> {
    let mut shapes: Vec<String> = Vec::new();
    for line in visible(out) {
        let mut s = String::new();
        let mut in_number = false;
        for ch in line.chars() {
            if ch.is_ascii_digit() || (in_number && ch == '.') {
                if !in_number {
                    s.push('#');
                }
                in_number = true;
            } else {
                in_number = false;
                s.push(ch);
            }
        }
        // Column widths of the summary row depend on the values.
        let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
        if shapes.last() != Some(&s) {
            shapes.push(s);
        }
    }
    shapes
}

/// A listener on a private port that accepts connections and never replies (a hung
/// or foreign server); it lives as long as the test process. With `answer_config`
/// it answers CONFIG GET (so a client gets past its header) and nothing else.
pub fn silent_server(answer_config: bool) -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = stream.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    if answer_config && buf[..n].windows(6).any(|w| w == b"CONFIG") {
                        let _ = stream.write_all(b"*2\r\n$4\r\nsave\r\n$0\r\n\r\n");
                    }
                }
            });
        }
    });
    port
}

/// `hostbench <args>` with the personality's store settings in the environment.
pub fn kept(db: &std::path::Path, label: Option<&str>, args: &[&str]) -> Output {
    let mut c = common::hostbench();
    c.args(args).env("HOSTBENCH_DB", db);
    if let Some(l) = label {
        c.env("HOSTBENCH_LABEL", l);
    }
    common::run_bounded(c, Duration::from_secs(60))
}

/// `hostbench history --json` of a database: its runs.
pub fn history(db: &std::path::Path) -> Vec<serde_json::Value> {
    let out = common::with_db(db, &["history", "--json"]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("history JSON");
    v["runs"].as_array().cloned().unwrap_or_default()
}

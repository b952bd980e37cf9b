//! Truth tests: a link of known speed, made for the test and removed after it.
//!
//! Three network namespaces, client -> router -> server, joined by veth pairs, with
//! `tc qdisc tbf` on the router's egress towards the server (how a cloud rate limiter
//! behaves: excess is queued, then dropped). Addresses are documentation ranges used
//! only inside these namespaces. Needs root, `ip` and `tc`; otherwise skipped with the
//! reason printed.
//!
//! What a receiver can get through a tbf of rate R: tbf counts whole frames (payload +
//! TCP/UDP + IP + 14 bytes of Ethernet), so goodput = R * payload / frame.

mod common;

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

static NEXT: AtomicU32 = AtomicU32::new(0);

fn sh(args: &[&str]) -> Result<(), String> {
    let o = Command::new(args[0])
        .args(&args[1..])
        .output()
        .map_err(|e| format!("{}: {e}", args[0]))?;
    if o.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}: {}",
            args.join(" "),
            String::from_utf8_lossy(&o.stderr).trim()
        ))
    }
}

struct Topology {
    client: String,
    router: String,
    server: String,
    shaped_dev: String,
}

const SERVER_IP: &str = "198.51.100.2";

impl Topology {
    /// Builds the three namespaces, or says why it cannot.
    fn new() -> Result<Topology, String> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err("not root".into());
        }
        if !common::have("ip") || !common::have("tc") {
            return Err("ip or tc (iproute2) is not installed".into());
        }
        let n = format!(
            "{}{}",
            std::process::id() % 100_000,
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let t = Topology {
            client: format!("hbc{n}"),
            router: format!("hbr{n}"),
            server: format!("hbs{n}"),
            shaped_dev: format!("hb{n}rb"),
        };
        t.build(&n).inspect_err(|_| t.remove())?;
        Ok(t)
    }

    fn build(&self, n: &str) -> Result<(), String> {
        let (c, r, s) = (&self.client, &self.router, &self.server);
        for ns in [c, r, s] {
            sh(&["ip", "netns", "add", ns])?;
            sh(&["ip", "-n", ns, "link", "set", "lo", "up"])?;
        }
        let (ca, rc) = (format!("hb{n}ca"), format!("hb{n}rc"));
        let (rb, sb) = (self.shaped_dev.clone(), format!("hb{n}sb"));
        sh(&[
            "ip", "link", "add", &ca, "netns", c, "type", "veth", "peer", "name", &rc, "netns", r,
        ])?;
        sh(&[
            "ip", "link", "add", &rb, "netns", r, "type", "veth", "peer", "name", &sb, "netns", s,
        ])?;
        for (ns, dev, addr) in [
            (c, &ca, "192.0.2.1/24"),
            (r, &rc, "192.0.2.2/24"),
            (r, &rb, "198.51.100.1/24"),
            (s, &sb, "198.51.100.2/24"),
        ] {
            sh(&["ip", "-n", ns, "addr", "add", addr, "dev", dev])?;
            sh(&["ip", "-n", ns, "link", "set", dev, "up"])?;
        }
        sh(&["ip", "-n", c, "route", "add", "default", "via", "192.0.2.2"])?;
        sh(&[
            "ip",
            "-n",
            s,
            "route",
            "add",
            "default",
            "via",
            "198.51.100.1",
        ])?;
        sh(&[
            "ip",
            "netns",
            "exec",
            r,
            "sysctl",
            "-q",
            "-w",
            "net.ipv4.ip_forward=1",
        ])?;
        Ok(())
    }

    fn shape(&self, rate_mbit: u32) -> Result<(), String> {
        let _ = sh(&[
            "tc",
            "-n",
            &self.router,
            "qdisc",
            "del",
            "dev",
            &self.shaped_dev,
            "root",
        ]);
        sh(&[
            "tc",
            "-n",
            &self.router,
            "qdisc",
            "add",
            "dev",
            &self.shaped_dev,
            "root",
            "tbf",
            "rate",
            &format!("{rate_mbit}mbit"),
            "burst",
            "32kbit",
            "latency",
            "400ms",
        ])
    }

    fn in_ns(&self, ns: &str, args: &[&str]) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", ns, env!("CARGO_BIN_EXE_hostbench")]);
        c.args(args);
        // Runs are saved in a directory of the test's own, never the user's.
        c.env("XDG_DATA_HOME", common::data_home());
        c
    }

    fn remove(&self) {
        for ns in [&self.client, &self.router, &self.server] {
            let _ = sh(&["ip", "netns", "del", ns]);
        }
    }
}

impl Drop for Topology {
    fn drop(&mut self) {
        self.remove();
    }
}

/// One shaped link at a time: tests measuring rates in parallel on a 2-CPU machine
/// starve each other (a TCP_STREAM beside a flooding UDP test read 12 % low).
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The topology, with the lock that keeps the other tests of this file waiting.
fn topology_or_skip() -> Option<(Topology, std::sync::MutexGuard<'static, ()>)> {
    let serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    match Topology::new() {
        Ok(t) => Some((t, serial)),
        Err(why) => {
            common::missing(
                &format!("a set of network namespaces ({why})"),
                "run the tests as root with iproute2 installed (scripts/test.sh installs it)",
            );
            None
        }
    }
}

struct Bg(Child);

impl Drop for Bg {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts a server and waits for the line that says it listens.
fn server(mut cmd: Command, ready: &str, on_stderr: bool) -> Bg {
    let (out, err) = if on_stderr {
        (Stdio::null(), Stdio::piped())
    } else {
        (Stdio::piped(), Stdio::null())
    };
    let mut child = cmd.stdout(out).stderr(err).spawn().expect("server starts");
    let pipe: Box<dyn std::io::Read + Send> = if on_stderr {
        Box::new(child.stderr.take().unwrap())
    } else {
        Box::new(child.stdout.take().unwrap())
    };
    let (tx, rx) = std::sync::mpsc::channel();
    let ready = ready.to_string();
    std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines().map_while(Result::ok) {
            if line.contains(&ready) {
                let _ = tx.send(());
            }
        }
    });
    rx.recv_timeout(Duration::from_secs(10))
        .expect("server ready");
    Bg(child)
}

fn run_json(mut cmd: Command) -> Value {
    let start = Instant::now();
    let o = cmd.output().unwrap();
    assert!(start.elapsed() < Duration::from_secs(60));
    assert!(
        o.status.success(),
        "{}{}",
        common::stdout(&o),
        common::stderr(&o)
    );
    serde_json::from_slice(&o.stdout).expect("JSON")
}

fn metric(j: &Value, name: &str) -> f64 {
    j["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap()["value"]
        .as_f64()
        .unwrap()
}

/// TCP goodput through tbf: 1448 bytes of payload per 1514-byte frame (MSS with
/// timestamps, 1500 MTU, Ethernet header).
fn tcp_goodput(rate_mbit: u32) -> f64 {
    rate_mbit as f64 * 1e6 * 1448.0 / 1514.0
}

fn within(measured: f64, expected: f64, tolerance: f64) -> bool {
    (measured / expected - 1.0).abs() <= tolerance
}

/// Up to three measurements until one is within 5 % of `expected`. A shaper only
/// caps: on a busy 2-CPU machine a run can read low when starved, never high, so a
/// retry hides starvation but not a wrong measurement (that misses every time).
fn measure_shaped(what: &str, expected: f64, mut measure: impl FnMut() -> f64) {
    let mut seen = Vec::new();
    for _ in 0..3 {
        let bps = measure();
        if within(bps, expected, 0.05) {
            return;
        }
        seen.push(format!("{:.2}", bps / 1e6));
    }
    panic!(
        "{what}: receiver measured {} Mbit/s, expected {:.2} within 5 %",
        seen.join(", "),
        expected / 1e6
    );
}

#[test]
fn tcp_stream_and_iperf3_measure_the_shaped_rate() {
    let Some((t, _serial)) = topology_or_skip() else {
        return;
    };
    let _srv = server(
        t.in_ns(&t.server, &["net", "serve", "-p", "12866"]),
        "listening",
        true,
    );
    for rate in [20, 50] {
        t.shape(rate).unwrap();
        measure_shaped(
            &format!("TCP_STREAM through {rate} Mbit/s"),
            tcp_goodput(rate),
            || {
                let j = run_json(t.in_ns(
                    &t.client,
                    &["net", "TCP_STREAM", SERVER_IP, "-t", "4", "--json"],
                ));
                metric(&j, "throughput") * 8.0
            },
        );
    }
    drop(_srv);

    // The iperf3 personality, both ends ours, on the same link.
    let _srv = server(
        t.in_ns(&t.server, &["iperf3", "-s", "-p", "5201"]),
        "Server listening",
        false,
    );
    let rate = 30;
    t.shape(rate).unwrap();
    measure_shaped(
        &format!("iperf3 through {rate} Mbit/s"),
        tcp_goodput(rate),
        || {
            let j = run_json(t.in_ns(&t.client, &["iperf3", "-c", SERVER_IP, "-t", "4", "-J"]));
            j["end"]["sum_received"]["bits_per_second"]
                .as_f64()
                .unwrap()
        },
    );
    // And with Debian's iperf3 as the client.
    if !common::have("iperf3") {
        common::missing("iperf3", "scripts/test.sh installs it (Debian: iperf3)");
    } else {
        measure_shaped("stock iperf3 client", tcp_goodput(rate), || {
            let mut c = Command::new("ip");
            c.args([
                "netns", "exec", &t.client, "iperf3", "-c", SERVER_IP, "-t", "4", "-J",
            ]);
            let j = run_json(c);
            j["end"]["sum_received"]["bits_per_second"]
                .as_f64()
                .unwrap()
        });
    }
}

#[test]
fn udp_above_the_rate_reports_the_loss() {
    let Some((t, _serial)) = topology_or_skip() else {
        return;
    };
    let _srv = server(
        t.in_ns(&t.server, &["net", "serve", "-p", "12866"]),
        "listening",
        true,
    );
    let rate = 20;
    t.shape(rate).unwrap();
    // 1400-byte datagrams: 1442-byte frames.
    let goodput = rate as f64 * 1e6 * 1400.0 / 1442.0;
    let j = run_json(t.in_ns(
        &t.client,
        &[
            "net",
            "UDP_STREAM",
            SERVER_IP,
            "-t",
            "3",
            "-l",
            "1400",
            "-b",
            "40M",
            "--json",
        ],
    ));
    let received = metric(&j, "throughput") * 8.0;
    let loss = metric(&j, "loss_ratio");
    assert!(loss > 0.3 && loss < 0.7, "loss {loss} at twice the rate");
    assert!(
        within(received, goodput, 0.05),
        "received {:.2} Mbit/s",
        received / 1e6
    );
    assert!(metric(&j, "sender_throughput") * 8.0 > 1.8 * received);
    // Below the rate nothing is lost.
    let j = run_json(t.in_ns(
        &t.client,
        &[
            "net",
            "UDP_STREAM",
            SERVER_IP,
            "-t",
            "2",
            "-l",
            "1400",
            "-b",
            "10M",
            "--json",
        ],
    ));
    assert!(metric(&j, "loss_ratio") < 0.01, "below the rate: {j}");
}

#[test]
fn unreachable_host_fails_in_bounded_time() {
    let Some((t, _serial)) = topology_or_skip() else {
        return;
    };
    // No host answers at this address on the server's link: ARP fails, or the connect
    // times out; either way a clear error within the 5 s connect timeout.
    let start = Instant::now();
    let o = t
        .in_ns(&t.client, &["net", "TCP_RR", "198.51.100.99", "-t", "1"])
        .output()
        .unwrap();
    assert!(start.elapsed() < Duration::from_secs(15));
    assert_eq!(o.status.code(), Some(1), "{}", common::stderr(&o));
    let err = common::stderr(&o);
    assert!(err.contains("cannot connect to 198.51.100.99"), "{err}");
    let start = Instant::now();
    let o = t
        .in_ns(
            &t.client,
            &[
                "iperf3",
                "-c",
                "198.51.100.99",
                "-t",
                "1",
                "--connect-timeout",
                "3000",
            ],
        )
        .output()
        .unwrap();
    assert!(start.elapsed() < Duration::from_secs(15));
    assert_eq!(o.status.code(), Some(1));
    assert!(
        common::stderr(&o).contains("unable to connect to server"),
        "{}",
        common::stderr(&o)
    );
}

//! The netperf and netserver personalities together: the seed's command lines
//! (reference seed 001) and netperf's output blocks.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

struct Netserver(Child);

impl Drop for Netserver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `hostbench netserver -D -p PORT`, ready once it has announced itself.
fn netserver(port: u16) -> Netserver {
    let mut child = common::hostbench()
        .args(["netserver", "-D", "-p", &port.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(
        line.trim_end(),
        format!("Starting netserver with host 'IN(6)ADDR_ANY' port '{port}' and family AF_UNSPEC")
    );
    Netserver(child)
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("[::]:0").unwrap();
    l.local_addr().unwrap().port()
}

fn netperf(port: u16, args: &[&str]) -> String {
    let mut a = vec!["netperf", "-p"];
    let p = port.to_string();
    a.push(&p);
    a.extend_from_slice(args);
    let start = Instant::now();
    let o = common::run(&a);
    assert!(start.elapsed() < Duration::from_secs(30));
    assert!(
        o.status.success(),
        "{a:?}: {}{}",
        common::stdout(&o),
        common::stderr(&o)
    );
    common::stdout(&o)
}

fn numbers(line: &str) -> Vec<f64> {
    line.split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect()
}

#[test]
fn seed_command_lines() {
    let port = free_port();
    let _server = netserver(port);
    // netperf -H <host> -l 20 -t TCP_STREAM (with -l 1 to keep the test short)
    let out = netperf(port, &["-H", "127.0.0.1", "-l", "1", "-t", "TCP_STREAM"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "MIGRATED TCP STREAM TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to 127.0.0.1 () port 0 AF_INET"
    );
    assert_eq!(lines[1], "Recv   Send    Send                          ");
    assert_eq!(lines[4], "bytes  bytes   bytes    secs.    10^6bits/sec  ");
    assert_eq!(lines[5], "");
    let v = numbers(lines[6]);
    assert_eq!(v.len(), 5, "{out}");
    assert!(v[3] > 0.9 && v[3] < 2.0, "elapsed {out}");
    assert!(v[4] > 10.0, "throughput {out}");

    // netperf -H <host> -l 20 -t TCP_RR
    let out = netperf(port, &["-H", "127.0.0.1", "-l", "1", "-t", "TCP_RR"]);
    assert!(out.contains(": first burst 0"), "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[1], "Local /Remote");
    assert_eq!(
        lines[4],
        "bytes  Bytes  bytes    bytes   secs.    per sec   "
    );
    let v = numbers(lines[6]);
    assert_eq!(&v[2..4], &[1.0, 1.0]);
    assert!(v[5] > 100.0, "trans/s {out}");
    assert_eq!(numbers(lines[7]).len(), 2, "{out}");

    // netperf -t UDP_STREAM -H <host> -- -m 1024 -R 1 (with -l 1)
    let out = netperf(
        port,
        &[
            "-t",
            "UDP_STREAM",
            "-H",
            "127.0.0.1",
            "-l",
            "1",
            "--",
            "-m",
            "1024",
            "-R",
            "1",
        ],
    );
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("MIGRATED UDP STREAM TEST"), "{out}");
    assert_eq!(
        lines[3],
        "bytes   bytes    secs            #      #   10^6bits/sec"
    );
    let local = numbers(lines[5]);
    let remote = numbers(lines[6]);
    assert_eq!(local[1], 1024.0, "{out}");
    assert_eq!(local.len(), 6, "{out}");
    assert_eq!(remote.len(), 4, "{out}");
    // What arrived cannot exceed what was sent.
    assert!(
        remote[2] <= local[3] && remote[3] <= local[5] * 1.01,
        "{out}"
    );

    // netperf -H <host> -l 20 -t UDP_RR -l 20 -- -R 1 (repeated -l, as in the seed)
    let out = netperf(
        port,
        &[
            "-H",
            "127.0.0.1",
            "-l",
            "20",
            "-t",
            "UDP_RR",
            "-l",
            "1",
            "--",
            "-R",
            "1",
        ],
    );
    assert!(
        out.starts_with("MIGRATED UDP REQUEST/RESPONSE TEST"),
        "{out}"
    );
    let v = numbers(out.lines().nth(6).unwrap());
    assert!(v[4] < 2.0 && v[5] > 100.0, "{out}");
}

#[test]
fn other_tests_and_output_forms() {
    let port = free_port();
    let _server = netserver(port);
    for test in ["TCP_MAERTS", "TCP_CRR"] {
        let out = netperf(
            port,
            &["-H", "127.0.0.1", "-l", "1", "-t", test, "-c", "-C"],
        );
        assert!(out.contains("% S"), "{out}");
    }
    // -P 0: the data line only.
    let out = netperf(port, &["-H", "127.0.0.1", "-l", "1", "-P", "0", "-f", "g"]);
    assert_eq!(out.lines().count(), 1, "{out}");
    // -v 0: the banner and the bare number.
    let out = netperf(
        port,
        &["-H", "127.0.0.1", "-l", "1", "-t", "TCP_RR", "-v", "0"],
    );
    let last = out.lines().last().unwrap();
    assert!(last.parse::<f64>().unwrap() > 100.0, "{out}");
    // Latency selectors, CSV and key=value.
    let out = netperf(
        port,
        &[
            "-H",
            "127.0.0.1",
            "-l",
            "1",
            "-t",
            "TCP_RR",
            "--",
            "-o",
            "MIN_LATENCY,P50_LATENCY,P99_LATENCY,MAX_LATENCY,THROUGHPUT",
        ],
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "Minimum Latency Microseconds,50th Percentile Latency Microseconds,99th Percentile Latency Microseconds,Maximum Latency Microseconds,Throughput"
    );
    let v: Vec<f64> = lines[1].split(',').map(|x| x.parse().unwrap()).collect();
    assert!(v[0] <= v[1] && v[1] <= v[2] && v[2] <= v[3], "{out}");
    let out = netperf(
        port,
        &[
            "-H",
            "127.0.0.1",
            "-l",
            "-500",
            "-t",
            "TCP_RR",
            "--",
            "-k",
            "THROUGHPUT_UNITS,REQUEST_SIZE",
            "-r",
            "32",
        ],
    );
    assert_eq!(out, "THROUGHPUT_UNITS=Trans/s\nREQUEST_SIZE=32\n");
}

#[test]
fn netperf_without_a_server_fails_fast() {
    let port = free_port();
    let t = Instant::now();
    let o = common::run(&[
        "netperf",
        "-H",
        "127.0.0.1",
        "-p",
        &port.to_string(),
        "-l",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        common::stderr(&o).contains("netserver listening"),
        "{}",
        common::stderr(&o)
    );
    assert!(t.elapsed() < Duration::from_secs(10));
    let o = common::run(&["netperf", "-t", "SCTP_STREAM"]);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn netserver_reports_a_port_in_use() {
    let busy = std::net::TcpListener::bind("[::]:0").unwrap();
    let port = busy.local_addr().unwrap().port().to_string();
    let o = common::run(&["netserver", "-D", "-p", &port]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        common::stderr(&o).contains("already in use"),
        "{}",
        common::stderr(&o)
    );
}

/// A server that accepts and never answers: netperf gives up within the 10 s its
/// usage states, naming the server.
#[test]
fn netperf_against_a_silent_server_gives_up_in_its_stated_bound() {
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port().to_string();
    let t = Instant::now();
    let o = common::run(&["netperf", "-H", "127.0.0.1", "-p", &port, "-l", "1"]);
    assert_eq!(o.status.code(), Some(1));
    let err = common::stderr(&o);
    assert!(
        err.contains(&format!("127.0.0.1:{port}")) && err.contains("no answer within 10 s"),
        "{err}"
    );
    assert!(t.elapsed() < Duration::from_secs(20));
    let usage = common::stdout(&common::run(&["netperf", "-h"]));
    assert!(
        usage.contains("does not answer a step\nwithin 10 s"),
        "{usage}"
    );
    drop(silent);
}

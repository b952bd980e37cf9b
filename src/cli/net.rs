//! `hostbench net serve` and `hostbench net <TEST> <HOST>`.

use super::save::SaveArgs;
use super::{CliError, finished, parse_duration, parse_size, print_doc};

use crate::progress::{Expect, Progress};
use crate::report::{Document, Format};
use crate::units::format_bits;
use crate::workload::net::client::{self, ClientSpec};
use crate::workload::net::outcome;
use crate::workload::net::protocol::IntervalReport;
use crate::workload::net::protocol::{Limits, TestRequest};
use crate::workload::net::server::{Server, ServerConfig};
use crate::workload::net::sock::SockOpts;
use crate::workload::net::{DEFAULT_PORT, Family, TestKind};
use crate::workload::observe::{self, Observer, Snapshot};
use clap::{Args, Subcommand};
use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Debug, Args)]
#[command(
    args_conflicts_with_subcommands = true,
    after_help = "Tests: TCP_STREAM (client sends), TCP_MAERTS (server sends), TCP_RR, TCP_CRR \
                  (a connection per transaction), UDP_STREAM, UDP_RR.\n\
                  Start `hostbench net serve` on the other host first (port 12866, TCP; UDP \
                  tests also use ephemeral UDP ports)."
)]
pub struct NetArgs {
    #[command(subcommand)]
    serve: Option<NetCommand>,
    #[command(flatten)]
    client: ClientArgs,
}

#[derive(Debug, Subcommand)]
enum NetCommand {
    /// Serve tests to hostbench clients (several at once, within limits).
    Serve(ServeArgs),
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// TCP port for control and TCP data connections.
    #[arg(short, long, default_value_t = DEFAULT_PORT)]
    port: u16,
    /// Address to listen on (default: every IPv4 and IPv6 address, as iperf3 -s;
    /// 127.0.0.1 or ::1 keeps the server to this host).
    #[arg(long, value_name = "ADDR")]
    bind: Option<std::net::IpAddr>,
    /// Tests running at once; more are refused with "busy".
    #[arg(long, default_value_t = 8, value_name = "N")]
    max_tests: u32,
    /// Longest test a client may ask for (its --time; byte- and transaction-counted
    /// tests are ended there too).
    #[arg(long, default_value = "300s", value_name = "DURATION", value_parser = parse_duration)]
    max_time: Duration,
    /// Most parallel streams per test.
    #[arg(long, default_value_t = 64, value_name = "N")]
    max_parallel: u32,
    /// Cap on the UDP rate a client may ask for, bits/s (e.g. 1G; default: none).
    #[arg(long, value_name = "RATE", value_parser = crate::workload::net::parse_rate)]
    max_rate: Option<u64>,
    /// Drop a client that says nothing for this long.
    #[arg(long, default_value = "10s", value_name = "DURATION", value_parser = parse_duration)]
    idle_timeout: Duration,
    /// Require clients to prove this shared secret (never sent in the clear).
    #[arg(long, value_name = "SECRET")]
    secret: Option<String>,
    /// Log one line per test on stderr.
    #[arg(short, long)]
    verbose: bool,
}

#[derive(Debug, Args)]
pub struct ClientArgs {
    /// TCP_STREAM, TCP_MAERTS, TCP_RR, TCP_CRR, UDP_STREAM or UDP_RR.
    #[arg(value_parser = parse_test)]
    test: Option<TestKind>,
    /// The host running `hostbench net serve`.
    host: Option<String>,
    /// The server's port.
    #[arg(short, long, default_value_t = DEFAULT_PORT)]
    port: u16,
    /// Test length.
    #[arg(short, long, value_name = "DURATION", value_parser = parse_duration)]
    time: Option<Duration>,
    /// Stream tests: stop after sending this many bytes instead of after a time.
    #[arg(short = 'n', long, value_name = "SIZE", value_parser = parse_size)]
    bytes: Option<u64>,
    /// Request/response tests: stop after this many transactions.
    #[arg(long, value_name = "N")]
    transactions: Option<u64>,
    /// Parallel streams (connections).
    #[arg(short = 'P', long, default_value_t = 1, value_name = "N")]
    parallel: u32,
    /// Bytes per send (stream tests; default 128K for TCP, 1472 for UDP; iperf3's -l).
    #[arg(short = 'l', long, value_name = "SIZE", value_parser = parse_size)]
    length: Option<u64>,
    /// Request size of RR tests.
    #[arg(long, default_value = "1", value_name = "SIZE", value_parser = parse_size)]
    request_size: u64,
    /// Response size of RR tests.
    #[arg(long, default_value = "1", value_name = "SIZE", value_parser = parse_size)]
    response_size: u64,
    /// Socket buffers (send and receive) at both ends (default: the kernel's, autotuned).
    #[arg(short, long, value_name = "SIZE", value_parser = parse_size)]
    window: Option<u64>,
    /// UDP sending rate per stream in bits/s, e.g. 100M (default: as fast as possible).
    #[arg(short = 'b', long, value_name = "RATE", value_parser = crate::workload::net::parse_rate)]
    rate: Option<u64>,
    /// Print the receiver's throughput (or the transaction rate) every DURATION.
    #[arg(short = 'i', long, value_name = "DURATION", value_parser = parse_duration)]
    report_interval: Option<Duration>,
    /// IPv4 only.
    #[arg(short = '4', conflicts_with = "ipv6")]
    ipv4: bool,
    /// IPv6 only.
    #[arg(short = '6')]
    ipv6: bool,
    /// Set TCP_NODELAY on the data connections.
    #[arg(long)]
    nodelay: bool,
    /// The server's shared secret, when it has one.
    #[arg(long, value_name = "SECRET")]
    secret: Option<String>,
    /// Print the result as JSON (schema: docs/json.md).
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    save: SaveArgs,
}

fn parse_test(s: &str) -> Result<TestKind, String> {
    TestKind::parse(s).ok_or_else(|| {
        format!("'{s}' is not a test: use TCP_STREAM, TCP_MAERTS, TCP_RR, TCP_CRR, UDP_STREAM or UDP_RR (or 'serve')")
    })
}

pub fn execute(args: NetArgs) -> Result<ExitCode, CliError> {
    match args.serve {
        Some(NetCommand::Serve(s)) => serve(s),
        None => run_client(args.client),
    }
}

fn serve(a: ServeArgs) -> Result<ExitCode, CliError> {
    if a.secret.as_deref() == Some("") {
        return Err(CliError::Usage(
            "--secret '': an empty secret admits anyone; give a real one, or drop --secret".into(),
        ));
    }
    if a.max_time.is_zero() {
        return Err(CliError::Usage(
            "--max-time 0: no test could run; give the longest test to allow, e.g. 300s".into(),
        ));
    }
    let ip = a
        .bind
        .unwrap_or(std::net::IpAddr::V6(std::net::Ipv6Addr::UNSPECIFIED));
    let mut config = ServerConfig::new(SocketAddr::new(ip, a.port));
    config.limits = Limits {
        max_tests: a.max_tests.max(1),
        max_duration_ms: a.max_time.as_millis() as u64,
        max_parallel: a.max_parallel.max(1),
        max_rate_bps: a.max_rate.unwrap_or(0),
        idle_timeout_ms: a.idle_timeout.as_millis().max(100) as u64,
    };
    let open = a.secret.is_none();
    config.secret = a.secret;
    config.verbose = a.verbose;
    let server = Server::bind(config).map_err(|e| CliError::Usage(e.to_string()))?;
    eprintln!(
        "hostbench net serve: listening on {} (TCP); Ctrl-C stops",
        server.local_addr()
    );
    if let Some(warning) = exposure_warning(server.local_addr(), open) {
        eprintln!("{warning}");
    }
    server.serve();
    Ok(ExitCode::SUCCESS)
}

/// What a server that strangers can reach says at start: it runs their tests, within
/// its limits (docs/net.md, "Who can use the server").
fn exposure_warning(addr: SocketAddr, open: bool) -> Option<String> {
    if !open || addr.ip().is_loopback() {
        return None;
    }
    let which = if addr.ip().is_unspecified() {
        "every interface"
    } else {
        "an address other hosts can reach"
    };
    Some(format!(
        "hostbench net serve: warning: listening on {addr} ({which}) without --secret: \
         anyone who can reach this port can run tests on this host (within --max-tests, \
         --max-time, --max-parallel and --max-rate); give --bind 127.0.0.1 to keep it to \
         this host, or --secret to admit only clients that know it"
    ))
}

/// The spec a client command line asks for (shared with the netperf personality's
/// defaults where they agree).
fn client_spec(a: &ClientArgs) -> Result<ClientSpec, CliError> {
    let test = a.test.ok_or_else(|| {
        CliError::Usage(
            "give a test and a host: hostbench net TCP_STREAM HOST (or hostbench net serve)".into(),
        )
    })?;
    let host = a.host.clone().ok_or_else(|| {
        CliError::Usage(format!("give the server's host: hostbench net {test} HOST"))
    })?;
    let counted = a.bytes.is_some() || a.transactions.is_some();
    let duration = a.time.unwrap_or(if counted {
        Duration::ZERO
    } else {
        Duration::from_secs(10)
    });
    let default_size = if test.is_udp() { 1472 } else { 128 * 1024 };
    let size = a.length.unwrap_or(default_size);
    let max_size = if test.is_udp() { 65507 } else { 16 << 20 };
    if size == 0 || size > max_size {
        return Err(CliError::Usage(format!(
            "--length {size}: out of range; use 1 to {max_size} bytes for {test}"
        )));
    }
    for (name, v) in [
        ("--request-size", a.request_size),
        ("--response-size", a.response_size),
    ] {
        if v == 0 || v > max_size {
            return Err(CliError::Usage(format!(
                "{name} {v}: use 1 to {max_size} bytes"
            )));
        }
    }
    if a.parallel == 0 || a.parallel > 1024 {
        return Err(CliError::Usage(format!(
            "--parallel {}: use 1 to 1024",
            a.parallel
        )));
    }
    let window = a
        .window
        .map_or(0, |w| w.min(u64::from(u32::MAX / 2)) as u32);
    let request = TestRequest {
        test,
        duration_ms: duration.as_millis() as u64,
        bytes: a.bytes.unwrap_or(0),
        transactions: a.transactions.unwrap_or(0),
        parallel: a.parallel,
        send_size: size as u32,
        recv_size: size as u32,
        request_size: a.request_size as u32,
        response_size: a.response_size as u32,
        server_sndbuf: window,
        server_rcvbuf: window,
        rate_bps: a.rate.unwrap_or(0),
        interval_ms: a
            .report_interval
            .map_or(0, |i| i.as_millis().max(10) as u64),
        nodelay: a.nodelay,
    };
    let mut spec = ClientSpec::new(&host, a.port, request);
    spec.family = if a.ipv4 {
        Family::V4
    } else if a.ipv6 {
        Family::V6
    } else {
        Family::Any
    };
    spec.local = SockOpts {
        sndbuf: window,
        rcvbuf: window,
        nodelay: a.nodelay,
    };
    spec.secret = a.secret.clone();
    Ok(spec)
}

/// What `hostbench net` watches a test with: interval lines, or a bar.
struct Watch<'a> {
    test: TestKind,
    lines: bool,
    bar: Option<&'a Progress>,
}

impl Observer for Watch<'_> {
    fn progress(&self, p: &observe::Progress) {
        if let Some(b) = self.bar {
            b.progress(p);
        }
    }

    fn snapshot(&self, s: &Snapshot<'_>) {
        if let Snapshot::Net(i) = s
            && self.lines
        {
            println!("{}", interval_line(self.test, i));
        }
    }
}

fn run_client(a: ClientArgs) -> Result<ExitCode, CliError> {
    let spec = client_spec(&a)?;
    a.save.check()?;
    let json = a.json;
    // A bar on a terminal for timed runs without interval lines (they would interleave).
    let duration = Duration::from_millis(spec.request.duration_ms);
    let bar = (!json && a.report_interval.is_none() && !duration.is_zero())
        .then(|| Progress::new("net", Expect::Time(duration)));
    let watch = Watch {
        test: spec.request.test,
        lines: !json,
        bar: bar.as_ref(),
    };
    let result = client::run(&spec, &watch);
    if let Some(b) = &bar {
        b.finish();
    }
    let result = match result {
        Ok(r) => r,
        Err(e) if e.is_usage() => return Err(CliError::Usage(e.to_string())),
        Err(e) => {
            eprintln!("hostbench: error: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    let o = outcome::to_outcome(&result, &spec.host);
    print_doc(Format::text_or_json(json), &Document::from(&o))?;
    a.save.save("net", None, std::slice::from_ref(&o))?;
    Ok(finished(o.interrupted))
}

/// One live interval line.
pub fn interval_line(test: TestKind, i: &IntervalReport) -> String {
    let span = (i.end_s - i.start_s).max(1e-9);
    let what = if test.is_rr() {
        format!("{:>12.1} trans/s", i.packets as f64 / span)
    } else {
        format!("{:>14}", format_bits(i.bytes as f64 / span))
    };
    format!("[{:6.2}-{:6.2} s] {what}", i.start_s, i.end_s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Beyond loopback without a secret the server says so, naming the address and both
    /// ways to restrict it; on loopback, or with a secret, it says nothing.
    #[test]
    fn a_server_strangers_can_reach_says_so() {
        for addr in ["[::]:12866", "0.0.0.0:12866", "192.0.2.7:12866"] {
            let w = exposure_warning(addr.parse().unwrap(), true).expect(addr);
            assert!(w.contains(addr), "{w}");
            assert!(
                w.contains("--bind 127.0.0.1") && w.contains("--secret"),
                "{w}"
            );
        }
        for addr in ["127.0.0.1:12866", "[::1]:12866"] {
            assert_eq!(exposure_warning(addr.parse().unwrap(), true), None);
        }
        assert_eq!(exposure_warning("[::]:12866".parse().unwrap(), false), None);
    }
}

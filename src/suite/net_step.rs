//! The network step of `hostbench run`: TCP_STREAM throughput, TCP_RR transactions and
//! latency, and TCP-connect round trips ("ping" without privileges), either against a
//! `hostbench net serve` at `--peer HOST[:PORT]` or against an in-process server on
//! loopback (which measures this host's network stack, not a path).

use crate::model::Outcome;
use crate::workload::net::client::{self, ClientSpec};
use crate::workload::net::ping::{self, PingSpec};
use crate::workload::net::protocol::TestRequest;
use crate::workload::net::server::{Server, ServerConfig};
use crate::workload::net::{DEFAULT_PORT, Family, NetError, TestKind, outcome};
use crate::workload::runner::Observer;
use std::net::SocketAddr;
use std::time::Duration;

/// `--peer`: where `hostbench net serve` runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Peer {
    pub host: String,
    pub port: u16,
    /// The server's shared secret (`net serve --secret`), proven, never sent.
    pub secret: Option<String>,
}

impl std::fmt::Display for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

/// A `--peer` that is not a host (and port); `peer` is as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "--peer '{peer}': {problem}; give HOST or HOST:PORT of a host running `hostbench net serve` \
     (port {DEFAULT_PORT} by default), e.g. 10.0.0.2 or 10.0.0.2:{DEFAULT_PORT}"
)]
pub struct PeerError {
    pub peer: String,
    #[source]
    pub problem: PeerProblem,
}

/// What is wrong with a `--peer`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PeerProblem {
    #[error("a URL is not a peer")]
    Url,
    #[error("an IPv6 address needs its closing ']'")]
    UnclosedIpv6,
    #[error("expected ':PORT' after ']'")]
    AfterIpv6,
    #[error("no host")]
    NoHost,
    #[error("'{host}' is not a host name or address")]
    Host { host: String },
    #[error("port '{port}' is not a number from 1 to 65535")]
    Port { port: String },
}

/// `HOST`, `HOST:PORT`, an IPv6 address, or `[IPv6]:PORT`; the port defaults to
/// `hostbench net serve`'s.
pub fn parse_peer(s: &str) -> Result<Peer, PeerError> {
    let bad = |problem: PeerProblem| PeerError {
        peer: s.into(),
        problem,
    };
    let t = s.trim();
    if t.contains("://") {
        return Err(bad(PeerProblem::Url));
    }
    let (host, port) = if let Some(rest) = t.strip_prefix('[') {
        let (h, after) = rest
            .split_once(']')
            .ok_or_else(|| bad(PeerProblem::UnclosedIpv6))?;
        match after {
            "" => (h, None),
            p => (
                h,
                Some(
                    p.strip_prefix(':')
                        .ok_or_else(|| bad(PeerProblem::AfterIpv6))?,
                ),
            ),
        }
    } else if t.parse::<std::net::Ipv6Addr>().is_ok() {
        (t, None)
    } else {
        match t.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (t, None),
        }
    };
    if host.is_empty() {
        return Err(bad(PeerProblem::NoHost));
    }
    if !host
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || ".-_:".contains(c))
    {
        return Err(bad(PeerProblem::Host { host: host.into() }));
    }
    let port = match port {
        None => DEFAULT_PORT,
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|&p| p != 0)
            .ok_or_else(|| bad(PeerProblem::Port { port: p.into() }))?,
    };
    Ok(Peer {
        host: host.to_string(),
        port,
        secret: None,
    })
}

/// What the network step runs.
#[derive(Debug, Clone)]
pub struct NetPlan {
    /// None: an in-process server on 127.0.0.1.
    pub peer: Option<Peer>,
    /// Length of the TCP_STREAM and TCP_RR tests each.
    pub test_time: Duration,
    pub pings: u64,
    pub ping_interval: Duration,
}

impl NetPlan {
    pub fn estimate(&self) -> Duration {
        self.test_time * 2 + self.ping_interval * self.pings as u32
    }
}

/// Why the step stopped, with what it measured before.
pub struct NetFailure {
    pub message: String,
    pub kept: Vec<Outcome>,
}

pub fn run(plan: &NetPlan, observer: &dyn Observer) -> Result<Vec<Outcome>, NetFailure> {
    let mut kept = Vec::new();
    let fail = |e: NetError, kept: Vec<Outcome>| NetFailure {
        message: explain(&e, plan.peer.as_ref()),
        kept,
    };
    // The server lives as long as this step: stopped when the handle goes.
    let server = match &plan.peer {
        Some(_) => None,
        None => {
            let config = ServerConfig::new(SocketAddr::from(([127, 0, 0, 1], 0)));
            match Server::bind(config) {
                Ok(s) => Some(s.spawn()),
                Err(e) => return Err(fail(e, kept)),
            }
        }
    };
    let (host, port) = match (&plan.peer, &server) {
        (Some(p), _) => (p.host.clone(), p.port),
        (None, Some(s)) => ("127.0.0.1".to_string(), s.addr.port()),
        (None, None) => unreachable!("a server is started when there is no peer"),
    };
    let label = plan
        .peer
        .as_ref()
        .map_or("loopback".into(), Peer::to_string);
    for test in [TestKind::TcpStream, TestKind::TcpRr] {
        let mut spec = ClientSpec::new(&host, port, request(test, plan.test_time));
        spec.secret = plan.peer.as_ref().and_then(|p| p.secret.clone());
        match client::run(&spec, observer) {
            Ok(r) => kept.push(outcome::to_outcome(&r, &label)),
            Err(_) if observer.stop_requested() => return Ok(kept),
            Err(e) => return Err(fail(e, kept)),
        }
        if observer.stop_requested() {
            return Ok(kept);
        }
    }
    let spec = PingSpec {
        host: host.clone(),
        family: Family::Any,
        count: Some(plan.pings),
        interval: plan.ping_interval,
        timeout: Duration::from_secs(1),
        size: 56,
        tcp_port: Some(port),
    };
    match ping::run(&spec, observer) {
        Ok(r) if r.replies.is_empty() && !r.interrupted => Err(NetFailure {
            message: format!(
                "no TCP connect to {host}:{port} succeeded in {} tries",
                r.transmitted
            ),
            kept,
        }),
        Ok(r) => {
            kept.push(ping::to_outcome(&spec, &r));
            if let Some(s) = server {
                s.stop();
            }
            Ok(kept)
        }
        Err(e) => Err(fail(e, kept)),
    }
}

/// The netperf defaults the native `hostbench net` uses: 128 KiB sends, 1-byte
/// transactions, one stream.
fn request(test: TestKind, time: Duration) -> TestRequest {
    TestRequest {
        test,
        duration_ms: time.as_millis() as u64,
        bytes: 0,
        transactions: 0,
        parallel: 1,
        send_size: 128 * 1024,
        recv_size: 128 * 1024,
        request_size: 1,
        response_size: 1,
        server_sndbuf: 0,
        server_rcvbuf: 0,
        rate_bps: 0,
        interval_ms: 0,
        nodelay: false,
    }
}

fn explain(e: &NetError, peer: Option<&Peer>) -> String {
    match (e, peer) {
        (NetError::Connect { .. }, Some(p)) => format!(
            "{e} (is `hostbench net serve` running on {} with port {} open?)",
            p.host, p.port
        ),
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer(host: &str, port: u16) -> Peer {
        Peer {
            host: host.into(),
            port,
            secret: None,
        }
    }

    fn plan(peer: Option<Peer>) -> NetPlan {
        NetPlan {
            peer,
            test_time: Duration::from_millis(300),
            pings: 3,
            ping_interval: Duration::from_millis(20),
        }
    }

    #[test]
    fn loopback_step_measures_stream_rr_and_connect_time() {
        let Ok(out) = run(&plan(None), &crate::workload::runner::Quiet) else {
            panic!("the loopback step failed");
        };
        let kinds: Vec<_> = out
            .iter()
            .map(|o| {
                let mode = o.spec.get("mode").and_then(|m| m.as_str()).unwrap_or("");
                format!("{} {}", o.workload, mode)
            })
            .collect();
        assert_eq!(kinds[..2], ["net TCP_STREAM", "net TCP_RR"]);
        assert!(kinds[2].starts_with("ping TCP connect"), "{kinds:?}");
        assert!(
            out[0]
                .metric(outcome::names::THROUGHPUT, None)
                .unwrap()
                .value
                > 0.0
        );
        assert!(
            out[1]
                .metric(outcome::names::TRANSACTIONS_PER_SEC, None)
                .unwrap()
                .value
                > 0.0
        );
        assert!(out[2].metric("packets_received", None).unwrap().value > 0.0);
    }

    #[test]
    fn a_peer_with_a_secret_needs_it() {
        let mut config = ServerConfig::new(SocketAddr::from(([127, 0, 0, 1], 0)));
        config.secret = Some("s3cret".into());
        let server = Server::bind(config).unwrap().spawn();
        let mut p = peer("127.0.0.1", server.addr.port());
        let Err(failure) = run(&plan(Some(p.clone())), &crate::workload::runner::Quiet) else {
            panic!("a secured server served a client without the secret");
        };
        assert!(failure.message.contains("--secret"), "{}", failure.message);
        p.secret = Some("s3cret".into());
        let served = run(&plan(Some(p)), &crate::workload::runner::Quiet);
        assert!(served.is_ok_and(|o| o.len() >= 2));
        server.stop();
    }

    #[test]
    fn a_peer_that_does_not_answer_fails_the_step_with_a_hint() {
        // A port nobody listens on: the connection is refused at once.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let Err(failure) = run(
            &plan(Some(peer("127.0.0.1", port))),
            &crate::workload::runner::Quiet,
        ) else {
            panic!("a closed port answered");
        };
        assert!(failure.kept.is_empty());
        assert!(
            failure.message.contains(&format!("127.0.0.1:{port}")),
            "{}",
            failure.message
        );
        assert!(
            failure.message.contains("hostbench net serve"),
            "{}",
            failure.message
        );
    }

    #[test]
    fn peers_that_parse() {
        assert_eq!(parse_peer("10.0.0.2"), Ok(peer("10.0.0.2", DEFAULT_PORT)));
        assert_eq!(
            parse_peer("db-1.internal:9000"),
            Ok(peer("db-1.internal", 9000))
        );
        assert_eq!(parse_peer("::1"), Ok(peer("::1", DEFAULT_PORT)));
        assert_eq!(parse_peer("[fe80::1]:7"), Ok(peer("fe80::1", 7)));
        assert_eq!(parse_peer("[::1]").unwrap().to_string(), "[::1]:12866");
    }

    #[test]
    fn malformed_peers_name_the_input() {
        for bad in [
            "",
            ":9000",
            "host:",
            "host:0",
            "host:70000",
            "host:http",
            "http://host",
            "[::1",
            "[::1]9000",
            "a host",
            "a:b:c",
        ] {
            let e = parse_peer(bad).unwrap_err();
            assert_eq!(e.peer, bad);
            let e = e.to_string();
            assert!(e.starts_with(&format!("--peer '{bad}'")), "{bad}: {e}");
            assert!(e.contains("HOST:PORT"), "{e}");
        }
        let problem = |peer: &str| parse_peer(peer).unwrap_err().problem;
        assert_eq!(problem("http://host"), PeerProblem::Url);
        assert_eq!(problem(":9000"), PeerProblem::NoHost);
        assert_eq!(problem("host:0"), PeerProblem::Port { port: "0".into() });
        assert_eq!(
            problem("a host"),
            PeerProblem::Host {
                host: "a host".into()
            }
        );
        assert_eq!(
            parse_peer("[::1]9000").unwrap_err().to_string(),
            "--peer '[::1]9000': expected ':PORT' after ']'; give HOST or HOST:PORT of a host \
             running `hostbench net serve` (port 12866 by default), e.g. 10.0.0.2 or 10.0.0.2:12866"
        );
    }
}

//! Network benchmarking: hostbench's own server and client (netperf's six tests over a
//! versioned control protocol of our own, docs/net-protocol.md), the data loops both
//! ends share, and socket helpers (TCP_INFO, buffer sizes). iperf3's protocol and
//! streams are `iperf3` (the personality's command line and output are in
//! `compat::iperf3`); ping is `ping`. Every test converts to `Outcome` here
//! (`outcome`, `ping::to_outcome`, `iperf3::result`), with the same metrics and
//! params whichever front end ran it.

pub mod client;
pub mod data;
pub mod iperf3;
pub mod outcome;
pub mod ping;
pub mod protocol;
pub mod server;
pub mod sock;

use serde::{Deserialize, Serialize};
use std::fmt;
use thiserror::Error;

/// hostbench's server port when none is given (netserver's 12865 plus one, so both can
/// run on one host; the netserver personality listens on 12865).
pub const DEFAULT_PORT: u16 = 12866;

/// The six tests of netperf, by netperf's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TestKind {
    /// The client sends a TCP stream, the server receives.
    TcpStream,
    /// The server sends a TCP stream, the client receives ("STREAM" backwards).
    TcpMaerts,
    /// Request/response over one TCP connection.
    TcpRr,
    /// A new TCP connection per transaction: connect, request, response, close.
    TcpCrr,
    /// The client sends UDP datagrams, the server counts what arrives.
    UdpStream,
    /// Request/response datagrams.
    UdpRr,
}

impl TestKind {
    pub const ALL: [TestKind; 6] = [
        TestKind::TcpStream,
        TestKind::TcpMaerts,
        TestKind::TcpRr,
        TestKind::TcpCrr,
        TestKind::UdpStream,
        TestKind::UdpRr,
    ];

    pub fn name(self) -> &'static str {
        match self {
            TestKind::TcpStream => "TCP_STREAM",
            TestKind::TcpMaerts => "TCP_MAERTS",
            TestKind::TcpRr => "TCP_RR",
            TestKind::TcpCrr => "TCP_CRR",
            TestKind::UdpStream => "UDP_STREAM",
            TestKind::UdpRr => "UDP_RR",
        }
    }

    /// Case-insensitive, `-` or `_`.
    pub fn parse(s: &str) -> Option<TestKind> {
        let norm = s.trim().to_ascii_uppercase().replace('-', "_");
        Self::ALL.into_iter().find(|t| t.name() == norm)
    }

    pub fn is_udp(self) -> bool {
        matches!(self, TestKind::UdpStream | TestKind::UdpRr)
    }

    pub fn is_rr(self) -> bool {
        matches!(self, TestKind::TcpRr | TestKind::TcpCrr | TestKind::UdpRr)
    }

    /// True when the server is the receiver of a stream test.
    pub fn server_receives(self) -> bool {
        matches!(self, TestKind::TcpStream | TestKind::UdpStream)
    }
}

impl fmt::Display for TestKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Address family to use for the control and data connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    #[default]
    Any,
    V4,
    V6,
}

impl Family {
    pub fn accepts(self, addr: &std::net::SocketAddr) -> bool {
        match self {
            Family::Any => true,
            Family::V4 => addr.is_ipv4(),
            Family::V6 => addr.is_ipv6(),
        }
    }
}

/// What can go wrong in a network test; the message names the peer and the fix.
#[derive(Debug, Error)]
pub enum NetError {
    #[error("cannot resolve '{host}': {reason}; check the name or give an IP address")]
    Resolve { host: String, reason: String },
    #[error("cannot connect to {addr}: {reason}")]
    Connect { addr: String, reason: String },
    #[error("cannot listen on {addr}: {reason}")]
    Listen { addr: String, reason: String },
    #[error("the server refused the test: {0}")]
    Refused(String),
    /// The server went away mid-test; `partial` is what this end had counted.
    #[error("{how}; partial result (interrupted, this end's own count, not kept): {partial}")]
    ServerLost { how: String, partial: String },
    /// The system does not allow what the test needs (ICMP sockets, say): no peer is
    /// involved, and the message says how to get it or what to run instead.
    #[error("{0}")]
    NotPermitted(String),
    #[error("protocol error with {peer}: {reason}")]
    Protocol { peer: String, reason: String },
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

impl NetError {
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        NetError::Io {
            context: context.into(),
            source,
        }
    }

    /// Errors of the user's input (a port in use, a name that does not resolve) exit 2;
    /// everything else means the run failed (exit 1).
    pub fn is_usage(&self) -> bool {
        matches!(self, NetError::Resolve { .. } | NetError::Listen { .. })
    }
}

/// Resolves `host:port` to the addresses to try, filtered by family, in resolver order.
pub fn resolve(
    host: &str,
    port: u16,
    family: Family,
) -> Result<Vec<std::net::SocketAddr>, NetError> {
    use std::net::ToSocketAddrs;
    let host_trim = host.trim_start_matches('[').trim_end_matches(']');
    let addrs: Vec<_> = (host_trim, port)
        .to_socket_addrs()
        .map_err(|e| NetError::Resolve {
            host: host.into(),
            reason: e.to_string(),
        })?
        .filter(|a| family.accepts(a))
        .collect();
    if addrs.is_empty() {
        return Err(NetError::Resolve {
            host: host.into(),
            reason: format!("no {family:?} address"),
        });
    }
    Ok(addrs)
}

/// A rate that does not parse, with the text as given.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RateError {
    #[error("'{input}' has an unknown rate unit: use k, M, G or T (bits/s)")]
    Unit { input: String },
    #[error("'{input}' is not a rate such as 100M (bits per second)")]
    NotANumber { input: String },
    /// Negative, not finite, or 2^64 bit/s and more.
    #[error("'{input}' is out of range")]
    OutOfRange { input: String },
}

/// A bit rate: `100M` = 100 000 000 bit/s; k, M, G, T are powers of 1000 (as iperf3's
/// `-b`), a bare number is bits per second.
pub fn parse_rate(s: &str) -> Result<u64, RateError> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let m = match c.to_ascii_lowercase() {
                'k' => 1e3,
                'm' => 1e6,
                'g' => 1e9,
                't' => 1e12,
                _ => return Err(RateError::Unit { input: s.into() }),
            };
            (&t[..i], m)
        }
        _ => (t, 1.0),
    };
    let v: f64 = num
        .parse()
        .map_err(|_| RateError::NotANumber { input: s.into() })?;
    if !v.is_finite() || v < 0.0 || v * mult >= 1.8e19 {
        return Err(RateError::OutOfRange { input: s.into() });
    }
    Ok((v * mult) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_names_round_trip() {
        for t in TestKind::ALL {
            assert_eq!(TestKind::parse(t.name()), Some(t));
            assert_eq!(TestKind::parse(&t.name().to_lowercase()), Some(t));
        }
        assert_eq!(TestKind::parse("tcp-rr"), Some(TestKind::TcpRr));
        assert_eq!(TestKind::parse("SCTP_STREAM"), None);
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("100M"), Ok(100_000_000));
        assert_eq!(parse_rate("1.5g"), Ok(1_500_000_000));
        assert_eq!(parse_rate("64000"), Ok(64000));
        assert_eq!(
            parse_rate("10X").unwrap_err().to_string(),
            "'10X' has an unknown rate unit: use k, M, G or T (bits/s)"
        );
        assert!(matches!(
            parse_rate("fast"),
            Err(RateError::NotANumber { .. })
        ));
        assert!(matches!(parse_rate(""), Err(RateError::NotANumber { .. })));
        assert!(matches!(
            parse_rate("-1k"),
            Err(RateError::OutOfRange { .. })
        ));
    }

    #[test]
    fn resolve_filters_family() {
        assert!(resolve("127.0.0.1", 1, Family::V6).is_err());
        assert_eq!(resolve("127.0.0.1", 7, Family::V4).unwrap()[0].port(), 7);
        assert!(resolve("[::1]", 7, Family::Any).unwrap()[0].is_ipv6());
    }
}

//! Round trips to a host: ICMP echo over an unprivileged datagram socket where
//! `net.ipv4.ping_group_range` allows it, a raw socket otherwise (root or CAP_NET_RAW),
//! or TCP-connect timing to a port, which needs no privilege (reference §5.1).
//! Round trips are timed to the nanosecond and the outcome's figures are exact: the
//! mean, and `mdev` the population standard deviation (iputils' definition). The ping
//! personality prints iputils' integer-microsecond arithmetic from the same replies
//! (`compat/ping.rs`).

use super::{Family, NetError};
use crate::measure::histogram::{Histogram, Layout};
use crate::model::{Better, Latency, Metric, Outcome, STANDARD_PERCENTILES, Unit};
use crate::workload::observe::{Observer, Progress, Snapshot};
use std::net::{IpAddr, SocketAddr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// SOCK_DGRAM + IPPROTO_ICMP: the kernel fills in identifier and checksum.
    IcmpDgram,
    /// SOCK_RAW: we build the header; needs CAP_NET_RAW.
    IcmpRaw,
    /// connect() timing to a TCP port (SYN -> SYN-ACK or RST).
    Tcp(u16),
}

impl Method {
    pub fn describe(&self) -> String {
        match self {
            Method::IcmpDgram => "ICMP echo (unprivileged datagram socket)".into(),
            Method::IcmpRaw => "ICMP echo (raw socket)".into(),
            Method::Tcp(p) => format!("TCP connect to port {p}"),
        }
    }
}

#[derive(Debug, Clone)]
pub struct PingSpec {
    pub host: String,
    pub family: Family,
    /// None: until Ctrl-C.
    pub count: Option<u64>,
    pub interval: Duration,
    /// How long to wait for a reply (and, after the last probe, for stragglers).
    pub timeout: Duration,
    /// ICMP payload bytes (iputils' -s; 56 by default).
    pub size: usize,
    /// None: ICMP (datagram, then raw); Some(port): TCP connect.
    pub tcp_port: Option<u16>,
}

/// One answered probe.
#[derive(Debug, Clone, Copy)]
pub struct Reply {
    pub seq: u64,
    pub rtt_ns: u64,
    pub ttl: Option<u8>,
    pub bytes: usize,
    /// TCP: the port refused (RST) — still a round trip.
    pub refused: bool,
}

#[derive(Debug, Clone)]
pub struct PingResult {
    pub target: IpAddr,
    pub method: Method,
    pub transmitted: u64,
    pub replies: Vec<Reply>,
    pub elapsed: Duration,
    pub interrupted: bool,
}

impl Reply {
    /// Whole microseconds, as iputils times a round trip (its timestamps are µs).
    pub fn rtt_us(&self) -> u64 {
        self.rtt_ns / 1000
    }
}

/// The round trips' figures in ns, exact (no bucket): `mdev` is the population
/// standard deviation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rtt {
    pub min_ns: u64,
    pub mean_ns: f64,
    pub max_ns: u64,
    pub mdev_ns: f64,
    pub sum_ns: u128,
}

impl PingResult {
    pub fn received(&self) -> u64 {
        self.replies.len() as u64
    }

    /// `(tx - rx) * 100 / tx` percent.
    pub fn loss_percent(&self) -> f64 {
        if self.transmitted == 0 {
            0.0
        } else {
            (self.transmitted - self.received().min(self.transmitted)) as f64 * 100.0
                / self.transmitted as f64
        }
    }

    /// None when no reply came.
    pub fn rtt(&self) -> Option<Rtt> {
        let ns: Vec<u64> = self.replies.iter().map(|r| r.rtt_ns).collect();
        let sum_ns: u128 = ns.iter().map(|&v| u128::from(v)).sum();
        let as_f64: Vec<f64> = ns.iter().map(|&v| v as f64).collect();
        let (mean_ns, mdev_ns) = crate::measure::stats::mean_stddev(&as_f64);
        Some(Rtt {
            min_ns: *ns.iter().min()?,
            mean_ns,
            max_ns: *ns.iter().max()?,
            mdev_ns,
            sum_ns,
        })
    }
}

/// Nanoseconds since `t`, saturating (a round trip never needs more than u64).
fn ns_since(t: Instant) -> u64 {
    u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// Picks the method: ICMP datagram, else raw, else an error naming `--tcp PORT`.
fn open_icmp(target: IpAddr) -> Result<(OwnedFd, Method), NetError> {
    let (domain, proto) = match target {
        IpAddr::V4(_) => (libc::AF_INET, libc::IPPROTO_ICMP),
        IpAddr::V6(_) => (libc::AF_INET6, libc::IPPROTO_ICMPV6),
    };
    for (ty, method) in [
        (libc::SOCK_DGRAM, Method::IcmpDgram),
        (libc::SOCK_RAW, Method::IcmpRaw),
    ] {
        // SAFETY: socket() returns a new descriptor or -1.
        let fd = unsafe { libc::socket(domain, ty | libc::SOCK_CLOEXEC, proto) };
        if fd >= 0 {
            // SAFETY: fd is a fresh descriptor we own.
            return Ok((unsafe { OwnedFd::from_raw_fd(fd) }, method));
        }
    }
    Err(NetError::NotPermitted(
        "ICMP is not allowed here: no unprivileged ping (net.ipv4.ping_group_range) and no raw \
         sockets (needs root or CAP_NET_RAW); use --tcp PORT to time TCP connects instead"
            .into(),
    ))
}

fn checksum(data: &[u8]) -> u16 {
    let mut sum = 0u32;
    for chunk in data.chunks(2) {
        let word = u16::from_be_bytes([chunk[0], *chunk.get(1).unwrap_or(&0)]);
        sum += u32::from(word);
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// An echo request: type, code, checksum, identifier, sequence, then the payload
/// (a timestamp first when there is room, as iputils does, then a byte pattern).
pub fn echo_request(v6: bool, id: u16, seq: u16, size: usize) -> Vec<u8> {
    let mut p = vec![0u8; 8 + size];
    p[0] = if v6 { 128 } else { 8 };
    p[4..6].copy_from_slice(&id.to_be_bytes());
    p[6..8].copy_from_slice(&seq.to_be_bytes());
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let mut at = 8;
    if size >= 16 {
        p[8..16].copy_from_slice(&now.as_secs().to_ne_bytes());
        p[16..24].copy_from_slice(&u64::from(now.subsec_micros()).to_ne_bytes());
        at = 24;
    }
    for (i, b) in p[at..].iter_mut().enumerate() {
        *b = (i + at - 8) as u8;
    }
    if !v6 {
        let c = checksum(&p);
        p[2..4].copy_from_slice(&c.to_be_bytes());
    }
    p
}

fn set_int(fd: &OwnedFd, level: i32, name: i32, v: i32) {
    // SAFETY: setsockopt reads one int.
    unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (&v as *const i32).cast(),
            std::mem::size_of::<i32>() as libc::socklen_t,
        );
    }
}

fn sockaddr(addr: SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    let s: socket2::SockAddr = addr.into();
    // SAFETY: SockAddr holds a valid sockaddr of `len` bytes; storage is large enough.
    unsafe {
        let mut st: libc::sockaddr_storage = std::mem::zeroed();
        std::ptr::copy_nonoverlapping(
            s.as_ptr().cast::<u8>(),
            (&mut st as *mut libc::sockaddr_storage).cast::<u8>(),
            s.len() as usize,
        );
        (st, s.len())
    }
}

/// A received ICMP message: (type, id, seq, ICMP bytes, TTL if known).
fn recv_icmp(
    fd: &OwnedFd,
    v6: bool,
    raw: bool,
    wait: Duration,
) -> Option<(u8, u16, u16, usize, Option<u8>)> {
    let ms = wait.as_millis().clamp(1, 1000) as i32;
    let mut pfd = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    if unsafe { libc::poll(&mut pfd, 1, ms) } <= 0 {
        return None;
    }
    let mut buf = [0u8; 65536];
    let mut cbuf = [0u8; 256];
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: msghdr points at buffers that live through the call.
    let n = unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cbuf.as_mut_ptr().cast();
        msg.msg_controllen = cbuf.len();
        let n = libc::recvmsg(fd.as_raw_fd(), &mut msg, libc::MSG_DONTWAIT);
        if n > 0 {
            // The TTL / hop limit from the control messages, when the kernel sent one.
            let mut ttl = None;
            let mut c = libc::CMSG_FIRSTHDR(&msg);
            while !c.is_null() {
                let (lvl, ty) = ((*c).cmsg_level, (*c).cmsg_type);
                if (lvl == libc::IPPROTO_IP && ty == libc::IP_TTL)
                    || (lvl == libc::IPPROTO_IPV6 && ty == libc::IPV6_HOPLIMIT)
                {
                    ttl = Some(*(libc::CMSG_DATA(c) as *const i32) as u8);
                }
                c = libc::CMSG_NXTHDR(&msg, c);
            }
            Some((n as usize, ttl))
        } else {
            None
        }
    };
    let (n, mut ttl) = n?;
    let mut icmp = &buf[..n];
    if raw && !v6 {
        // IPv4 raw sockets deliver the IP header too.
        let ihl = usize::from(icmp.first()? & 0x0f) * 4;
        ttl = icmp.get(8).copied();
        icmp = icmp.get(ihl..)?;
    }
    if icmp.len() < 8 {
        return None;
    }
    Some((
        icmp[0],
        u16::from_be_bytes([icmp[4], icmp[5]]),
        u16::from_be_bytes([icmp[6], icmp[7]]),
        icmp.len(),
        ttl,
    ))
}

/// Runs the pings. The observer sees each reply as it comes (`Snapshot::Ping`), with
/// progress (replies so far), and is asked between probes whether to stop.
pub fn run(spec: &PingSpec, observer: &dyn Observer) -> Result<PingResult, NetError> {
    let target = super::resolve(&spec.host, spec.tcp_port.unwrap_or(0), spec.family)?[0];
    match spec.tcp_port {
        Some(port) => run_tcp(spec, SocketAddr::new(target.ip(), port), observer),
        None => run_icmp(spec, target.ip(), observer),
    }
}

/// Hands a reply to the observer and keeps it.
fn replied(observer: &dyn Observer, start: Instant, replies: &mut Vec<Reply>, r: Reply) {
    observer.snapshot(&Snapshot::Ping(&r));
    replies.push(r);
    observer.progress(&Progress::at(start.elapsed(), replies.len() as u64));
}

/// The address a ping goes to, as resolved (for the banner before the first probe).
pub fn target(spec: &PingSpec) -> Result<IpAddr, NetError> {
    Ok(super::resolve(&spec.host, 0, spec.family)?[0].ip())
}

fn run_icmp(spec: &PingSpec, ip: IpAddr, observer: &dyn Observer) -> Result<PingResult, NetError> {
    let v6 = ip.is_ipv6();
    let (fd, method) = open_icmp(ip)?;
    let raw = method == Method::IcmpRaw;
    if v6 {
        set_int(&fd, libc::IPPROTO_IPV6, libc::IPV6_RECVHOPLIMIT, 1);
    } else {
        set_int(&fd, libc::IPPROTO_IP, libc::IP_RECVTTL, 1);
    }
    let (sa, len) = sockaddr(SocketAddr::new(ip, 0));
    let id = (std::process::id() & 0xffff) as u16;
    let mut sent_at: std::collections::HashMap<u16, (u64, Instant)> = Default::default();
    let start = Instant::now();
    let mut transmitted = 0u64;
    let mut replies = Vec::new();
    let mut next = start;
    let mut last_sent = start;
    loop {
        let done_sending = spec.count.is_some_and(|c| transmitted >= c);
        if observer.stop_requested() {
            break;
        }
        if done_sending && (sent_at.is_empty() || last_sent.elapsed() >= spec.timeout) {
            break;
        }
        let now = Instant::now();
        if !done_sending && now >= next {
            transmitted += 1;
            let seq16 = (transmitted & 0xffff) as u16;
            let pkt = echo_request(v6, id, seq16, spec.size);
            // The clock starts before the send, as iputils stamps the packet before it.
            let sent = Instant::now();
            // SAFETY: sendto reads pkt and the address we built.
            let rc = unsafe {
                libc::sendto(
                    fd.as_raw_fd(),
                    pkt.as_ptr().cast(),
                    pkt.len(),
                    0,
                    (&sa as *const libc::sockaddr_storage).cast(),
                    len,
                )
            };
            if rc >= 0 {
                sent_at.insert(seq16, (transmitted, sent));
            }
            last_sent = Instant::now();
            next += spec.interval;
            // Unanswered probes older than the timeout are lost.
            sent_at.retain(|_, (_, at)| at.elapsed() < spec.timeout.max(spec.interval));
        }
        let wait = if done_sending {
            spec.timeout.saturating_sub(last_sent.elapsed())
        } else {
            next.saturating_duration_since(Instant::now())
        };
        let Some((ty, rid, seq, bytes, ttl)) = recv_icmp(&fd, v6, raw, wait) else {
            continue;
        };
        let reply_type = if v6 { 129 } else { 0 };
        // Datagram sockets get only their own replies (the kernel sets the identifier);
        // raw sockets see every ICMP message, including our own requests on loopback.
        if ty != reply_type || (raw && rid != id) {
            continue;
        }
        if let Some((n, at)) = sent_at.remove(&seq) {
            let r = Reply {
                seq: n,
                rtt_ns: ns_since(at),
                ttl,
                bytes,
                refused: false,
            };
            replied(observer, start, &mut replies, r);
        }
    }
    Ok(PingResult {
        target: ip,
        method,
        transmitted,
        replies,
        elapsed: start.elapsed(),
        interrupted: observer.stop_requested(),
    })
}

fn run_tcp(
    spec: &PingSpec,
    addr: SocketAddr,
    observer: &dyn Observer,
) -> Result<PingResult, NetError> {
    let start = Instant::now();
    let mut transmitted = 0u64;
    let mut replies = Vec::new();
    let mut next = start;
    while spec.count.is_none_or(|c| transmitted < c) && !observer.stop_requested() {
        let now = Instant::now();
        if now < next {
            std::thread::sleep((next - now).min(Duration::from_millis(50)));
            continue;
        }
        next += spec.interval;
        transmitted += 1;
        let t = Instant::now();
        let s = socket2::Socket::new(
            socket2::Domain::for_address(addr),
            socket2::Type::STREAM,
            Some(socket2::Protocol::TCP),
        )
        .map_err(|e| NetError::io("TCP socket", e))?;
        let outcome = s.connect_timeout(&addr.into(), spec.timeout);
        let rtt_ns = ns_since(t);
        let refused = match &outcome {
            Ok(()) => {
                // Close with RST: no TIME_WAIT left behind per probe.
                let _ = s.set_linger(Some(Duration::ZERO));
                false
            }
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => true,
            Err(_) => continue,
        };
        let r = Reply {
            seq: transmitted,
            rtt_ns,
            ttl: None,
            bytes: 0,
            refused,
        };
        replied(observer, start, &mut replies, r);
    }
    Ok(PingResult {
        target: addr.ip(),
        method: Method::Tcp(addr.port()),
        transmitted,
        replies,
        elapsed: start.elapsed(),
        interrupted: observer.stop_requested(),
    })
}

/// The run as the one result model (`hostbench ping --json`, and what `ping` keeps).
/// Params: the method (`icmp` or `tcp-connect`), the ICMP payload size (`-s`), and
/// the interval (`-i`): a probe a second finds an idle host whose CPUs and NIC have
/// gone to sleep between probes, a probe every 10 ms one that stays awake, so the
/// interval changes the round trip measured (measurably, on VMs especially) and is a
/// setting people compare. The count, deadline and timeout only bound the run; the
/// destination is what is compared.
pub fn to_outcome(spec: &PingSpec, r: &PingResult) -> Outcome {
    let mut o = Outcome::new("ping", spec_json(spec, r), crate::host::HostInfo::detect());
    record_params(spec, &mut o);
    o.elapsed_s = r.elapsed.as_secs_f64();
    o.interrupted = r.interrupted;
    push_counts(r, &mut o);
    if let Some(rtt) = r.rtt() {
        push_rtt(r, &rtt, &mut o);
    }
    push_notes(r, &mut o);
    o
}

fn spec_json(spec: &PingSpec, r: &PingResult) -> serde_json::Value {
    serde_json::json!({
        "host": spec.host, "target": r.target.to_string(), "count": spec.count,
        "interval_s": spec.interval.as_secs_f64(), "timeout_s": spec.timeout.as_secs_f64(),
        "size": spec.size, "method": r.method, "mode": r.method.describe(),
    })
}

/// Seconds as iputils' `-i` takes them: `1`, `0.2`.
fn seconds_text(d: Duration) -> String {
    let text = format!("{:.3}", d.as_secs_f64());
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn record_params(spec: &PingSpec, o: &mut Outcome) {
    match spec.tcp_port {
        Some(_) => o.param("method", "tcp-connect"),
        None => {
            o.param("method", "icmp");
            o.param("packet-size", spec.size);
        }
    }
    o.param("interval", seconds_text(spec.interval));
}

fn push_counts(r: &PingResult, o: &mut Outcome) {
    o.push(Metric::new(
        "packets_transmitted",
        r.transmitted as f64,
        Unit::Count,
    ));
    o.push(Metric::new(
        "packets_received",
        r.received() as f64,
        Unit::Count,
    ));
    let mut loss = Metric::new("loss_ratio", r.loss_percent() / 100.0, Unit::Ratio);
    loss.better = Better::Lower;
    o.push(loss);
}

/// iputils' four figures, then the percentiles of every reply, all in ns.
fn push_rtt(r: &PingResult, rtt: &Rtt, o: &mut Outcome) {
    for (name, ns) in [
        ("rtt_min", rtt.min_ns as f64),
        ("rtt_avg", rtt.mean_ns),
        ("rtt_max", rtt.max_ns as f64),
        ("rtt_mdev", rtt.mdev_ns),
    ] {
        o.push(Metric::new(name, ns, Unit::Nanoseconds));
    }
    let latency = latency(r, rtt);
    for p in &latency.percentiles {
        let name = format!("rtt_p{}", super::outcome::trim(p.p));
        o.push(Metric::new(&name, p.ns, Unit::Nanoseconds));
    }
    o.latency = Some(latency);
}

fn latency(r: &PingResult, rtt: &Rtt) -> Latency {
    let mut h = Histogram::new(Layout::NATIVE);
    for rep in &r.replies {
        h.record(rep.rtt_ns as f64);
    }
    Latency::from_histogram(
        &h,
        rtt.min_ns,
        rtt.max_ns,
        rtt.sum_ns,
        &STANDARD_PERCENTILES,
    )
}

fn push_notes(r: &PingResult, o: &mut Outcome) {
    o.note(format!("method: {}", r.method.describe()));
    if let Method::Tcp(_) = r.method {
        o.note("TCP connect time measures the handshake, including the peer's accept path");
    }
    if r.target.is_loopback() {
        o.note("loopback: the target is this host; this measures its network stack, not a path");
    }
    if r.interrupted {
        o.note("interrupted: the run was stopped early; figures cover the part that ran");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcome_of_five_replies() {
        let spec = PingSpec {
            host: "10.0.0.2".into(),
            family: Family::Any,
            count: Some(6),
            interval: Duration::from_millis(200),
            timeout: Duration::from_secs(1),
            size: 100,
            tcp_port: None,
        };
        let reply = |seq, rtt_ns| Reply {
            seq,
            rtt_ns,
            ttl: Some(64),
            bytes: 108,
            refused: false,
        };
        let r = PingResult {
            target: "10.0.0.2".parse().unwrap(),
            method: Method::IcmpDgram,
            transmitted: 6,
            replies: [40_123, 570_000, 120_456, 130_000, 110_000]
                .iter()
                .enumerate()
                .map(|(i, &us)| reply(i as u64 + 1, us))
                .collect(),
            elapsed: Duration::from_secs(1),
            interrupted: false,
        };
        let o = to_outcome(&spec, &r);
        let m = |n: &str| o.metric(n, None).unwrap().value;
        assert_eq!(o.workload, "ping");
        // To the nanosecond, not whole microseconds.
        assert_eq!(m("rtt_min"), 40_123.0);
        assert_eq!(m("rtt_avg"), 194_115.8);
        assert_eq!(m("rtt_max"), 570_000.0);
        // The population standard deviation, exact.
        let values = [40_123.0, 570_000.0, 120_456.0, 130_000.0, 110_000.0];
        let var = values
            .iter()
            .map(|v| (v - 194_115.8f64).powi(2))
            .sum::<f64>()
            / 5.0;
        assert!(
            (m("rtt_mdev") - var.sqrt()).abs() < 1e-6,
            "{}",
            m("rtt_mdev")
        );
        // The top percentiles stand on the max's bucket, but never above the max.
        assert!(m("rtt_p99.9") <= m("rtt_max") && m("rtt_p50") >= m("rtt_min"));
        assert!((m("loss_ratio") - 1.0 / 6.0).abs() < 1e-12);
        assert!(m("rtt_p50") >= 110_000.0 && m("rtt_p50") <= 130_000.0 * 1.05);
        assert!(o.metric("rtt_p99", None).unwrap().better == crate::model::Better::Lower);
        let params: Vec<String> = o.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        assert_eq!(params, ["interval=0.2", "method=icmp", "packet-size=100"]);
        assert!(!o.notes.iter().any(|n| n.starts_with("loopback")));
        let tcp = PingSpec {
            tcp_port: Some(22),
            interval: Duration::from_secs(1),
            ..spec
        };
        let o = to_outcome(
            &tcp,
            &PingResult {
                target: "127.0.0.1".parse().unwrap(),
                ..r
            },
        );
        let params: Vec<String> = o.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        assert_eq!(params, ["interval=1", "method=tcp-connect"]);
        assert!(o.notes.iter().any(|n| n.starts_with("loopback")));
    }

    #[test]
    fn echo_request_checksums_to_zero() {
        let p = echo_request(false, 0x1234, 7, 56);
        assert_eq!(p.len(), 64);
        assert_eq!(checksum(&p), 0);
        assert_eq!(&p[4..8], &[0x12, 0x34, 0, 7]);
    }

    #[test]
    fn tcp_ping_to_a_refused_and_an_open_port() {
        let open = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let spec = |port| PingSpec {
            host: "127.0.0.1".into(),
            family: Family::V4,
            count: Some(3),
            interval: Duration::from_millis(20),
            timeout: Duration::from_secs(1),
            size: 56,
            tcp_port: Some(port),
        };
        let r = run(
            &spec(open.local_addr().unwrap().port()),
            &crate::workload::observe::Quiet,
        )
        .unwrap();
        assert_eq!((r.transmitted, r.received()), (3, 3));
        assert!(r.replies.iter().all(|x| !x.refused));
        drop(open);
    }
}

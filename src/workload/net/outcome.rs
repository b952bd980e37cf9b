//! A finished network test as the one result model (`Outcome`). Whichever protocol
//! carried the test (hostbench's own, for `hostbench net` and the netperf
//! personality; iperf3's, for the iperf3 personality), its raw result is first put in
//! `Figures`: the same named quantities for every front end, so a native TCP_STREAM
//! and `iperf3 -c` with the same settings give the same metrics and params. The
//! receiver's figure is the headline: on a shaped or lossy path the sender's rate
//! overstates what arrived (reference/network.md §6.2).

use super::TestKind;
use super::client::{ClientResult, LocalStream};
use super::data::LatencyRecorder;
use super::protocol::{StreamReport, TestRequest};
use super::sock::SockOpts;
use crate::host::HostInfo;
use crate::model::{Better, CpuUse, Latency, Metric, Outcome, STANDARD_PERCENTILES, Sample, Unit};
use std::collections::BTreeMap;
use std::net::IpAddr;

/// Metric names a reader (or personality) may look up.
pub mod names {
    pub const THROUGHPUT: &str = "throughput";
    pub const SENDER_THROUGHPUT: &str = "sender_throughput";
    pub const TRANSACTIONS_PER_SEC: &str = "transactions_per_sec";
}

/// Which way the data of a stream test flows, in iperf3's words: `forward` (the
/// client sends: TCP_STREAM), `reverse` (the server sends: `-R`, netperf's
/// TCP_MAERTS), `bidir` (both at once: `--bidir`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Direction {
    #[default]
    Forward,
    Reverse,
    Bidir,
}

impl Direction {
    pub fn name(self) -> &'static str {
        match self {
            Direction::Forward => "forward",
            Direction::Reverse => "reverse",
            Direction::Bidir => "bidir",
        }
    }
}

/// The settings that make two network results the same measurement (`Outcome.params`),
/// in the peers' words. The test is netperf's name with the direction apart, so
/// TCP_MAERTS and `iperf3 -R` are both `test` TCP_STREAM, `direction` reverse.
/// What only bounds a test (its length, `-n`, `-k`, `-O`, the interval reports) and
/// the destination (comparing two hosts is the point) are not among them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NetParams {
    pub test: &'static str,
    /// Stream tests only.
    pub direction: Option<Direction>,
    /// Parallel streams (`-P`).
    pub streams: u32,
    /// Bytes per send or datagram of a stream test (`-l`, netperf's `-m`).
    pub message_size: Option<u64>,
    /// RR tests: request and response bytes (netperf's `-r`).
    pub request_size: Option<u64>,
    pub response_size: Option<u64>,
    /// Per-stream pacing in bits/s (`-b`); Some(0) = unlimited (always set for UDP,
    /// where the rate decides what is measured).
    pub rate_bps: Option<u64>,
    /// Socket buffers asked for (`-w`, netperf's `-s`/`-S`); None = the kernel's.
    pub window: Option<String>,
    pub nodelay: bool,
    /// Asked for on the command line (iperf3's `-C`, `-M`).
    pub congestion: Option<String>,
    pub mss: Option<u64>,
}

/// The socket buffer sizes asked for at both ends, as one param value: `262144` when
/// all four are that, `local 1/2, remote 3/4` (send/receive) otherwise, None when none
/// was asked for.
pub fn window_text(local: (u64, u64), remote: (u64, u64)) -> Option<String> {
    let all = [local.0, local.1, remote.0, remote.1];
    if all.iter().all(|&v| v == 0) {
        None
    } else if all.iter().all(|&v| v == all[0]) {
        Some(all[0].to_string())
    } else {
        Some(format!(
            "local {}/{}, remote {}/{}",
            local.0, local.1, remote.0, remote.1
        ))
    }
}

impl NetParams {
    /// A test of hostbench's own protocol (`hostbench net`, netperf's command line).
    pub fn of_request(req: &TestRequest, local: &SockOpts) -> NetParams {
        let (test, direction) = match req.test {
            TestKind::TcpMaerts => ("TCP_STREAM", Some(Direction::Reverse)),
            t if t.is_rr() => (t.name(), None),
            t => (t.name(), Some(Direction::Forward)),
        };
        let rr = req.test.is_rr();
        NetParams {
            test,
            direction,
            streams: req.parallel,
            message_size: (!rr).then_some(u64::from(req.send_size)),
            request_size: rr.then_some(u64::from(req.request_size)),
            response_size: rr.then_some(u64::from(req.response_size)),
            rate_bps: if req.test.is_udp() && !rr {
                Some(req.rate_bps)
            } else {
                (req.rate_bps > 0).then_some(req.rate_bps)
            },
            window: window_text(
                (u64::from(local.sndbuf), u64::from(local.rcvbuf)),
                (u64::from(req.server_sndbuf), u64::from(req.server_rcvbuf)),
            ),
            nodelay: req.nodelay || local.nodelay,
            congestion: None,
            mss: None,
        }
    }

    /// Writes them into the outcome's params.
    pub fn record(&self, o: &mut Outcome) {
        o.param("test", self.test);
        if let Some(d) = self.direction {
            o.param("direction", d.name());
        }
        o.param("streams", self.streams);
        let optional = [
            ("message-size", self.message_size.map(|v| v.to_string())),
            ("request-size", self.request_size.map(|v| v.to_string())),
            ("response-size", self.response_size.map(|v| v.to_string())),
            ("rate", self.rate_bps.map(rate_text)),
            ("window", self.window.clone()),
            ("nodelay", self.nodelay.then(|| "on".to_string())),
            ("congestion", self.congestion.clone()),
            ("mss", self.mss.map(|v| v.to_string())),
        ];
        for (name, value) in optional {
            if let Some(v) = value {
                o.param(name, v);
            }
        }
    }
}

/// A rate param: bits per second, or `unlimited`.
fn rate_text(bps: u64) -> String {
    if bps == 0 {
        "unlimited".into()
    } else {
        bps.to_string()
    }
}

/// One direction of a stream test: what the sender wrote and the receiver got, each
/// over its own elapsed time.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Flow {
    pub sent: u64,
    pub sender_s: f64,
    pub received: u64,
    pub receiver_s: f64,
}

impl Flow {
    fn merged(a: &Flow, b: &Flow) -> Flow {
        Flow {
            sent: a.sent + b.sent,
            sender_s: a.sender_s.max(b.sender_s),
            received: a.received + b.received,
            receiver_s: a.receiver_s.max(b.receiver_s),
        }
    }
}

/// A UDP stream's datagrams (`sent` from the sender, the rest from the receiver).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Datagrams {
    pub sent: u64,
    pub received: u64,
    pub lost: u64,
    /// Sends that failed (ENOBUFS), where the sender counts them.
    pub send_errors: Option<u64>,
    /// RFC 1889 jitter at the receiver, where it is measured (iperf3).
    pub jitter_s: Option<f64>,
}

/// Request/response tests.
#[derive(Debug, Clone, Default)]
pub struct Transactions {
    pub count: u64,
    pub elapsed_s: f64,
    /// UDP_RR: requests or responses that never came back.
    pub lost: Option<u64>,
    pub latency: Option<Latency>,
    /// netperf's STDDEV_LATENCY (not part of the model's latency).
    pub stddev_ns: Option<f64>,
}

/// CPU use of both ends, as busy cores (1.0 = one core busy all the time).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuShare {
    pub local_cores: f64,
    pub local_cpus: u32,
    pub remote_cores: Option<f64>,
    /// Unknown to iperf3's protocol: then no remote percentage.
    pub remote_cpus: Option<u32>,
}

/// What a network test measured, whichever protocol carried it: the figures that
/// become its metrics.
#[derive(Debug, Clone, Default)]
pub struct Figures {
    pub params: NetParams,
    /// Stream tests: the forward flow (`reverse` for `-R`), or with `reverse_flow` the
    /// two directions of `--bidir`.
    pub flow: Option<Flow>,
    pub reverse_flow: Option<Flow>,
    pub retransmits: Option<u64>,
    pub datagrams: Option<Datagrams>,
    pub transactions: Option<Transactions>,
    pub cpu_time: CpuUse,
    pub cpu: CpuShare,
    /// Socket buffers as the kernel set them (send, receive), per end.
    pub local_buffers: Option<(u64, u64)>,
    pub remote_buffers: Option<(u64, u64)>,
    pub mss: Option<u32>,
    pub congestion: Option<String>,
    pub series: Vec<Sample>,
    /// The peer's address, to say when it was this host.
    pub peer_ip: Option<IpAddr>,
    pub elapsed_s: f64,
    pub interrupted: bool,
}

impl Figures {
    pub fn to_outcome(&self, spec: serde_json::Value) -> Outcome {
        let mut o = Outcome::new("net", spec, HostInfo::detect());
        self.params.record(&mut o);
        o.elapsed_s = self.elapsed_s;
        o.interrupted = self.interrupted;
        o.cpu_time = self.cpu_time;
        self.push_flows(&mut o);
        self.push_datagrams(&mut o);
        self.push_transactions(&mut o);
        self.push_cpu(&mut o);
        self.push_buffers(&mut o);
        o.series = self.series.clone();
        self.push_notes(&mut o);
        o
    }

    fn push_flows(&self, o: &mut Outcome) {
        let Some(flow) = &self.flow else { return };
        let total = match &self.reverse_flow {
            Some(back) => Flow::merged(flow, back),
            None => *flow,
        };
        let rate = |bytes: u64, s: f64| bytes as f64 / s.max(1e-9);
        add(
            o,
            names::THROUGHPUT,
            rate(total.received, total.receiver_s),
            Unit::BytesPerSec,
        );
        add(
            o,
            names::SENDER_THROUGHPUT,
            rate(total.sent, total.sender_s),
            Unit::BytesPerSec,
        );
        if let Some(back) = &self.reverse_flow {
            add(
                o,
                "forward_throughput",
                rate(flow.received, flow.receiver_s),
                Unit::BytesPerSec,
            );
            add(
                o,
                "reverse_throughput",
                rate(back.received, back.receiver_s),
                Unit::BytesPerSec,
            );
        }
        add(o, "bytes_received", total.received as f64, Unit::Bytes);
        add(o, "bytes_sent", total.sent as f64, Unit::Bytes);
        add(
            o,
            "receiver_elapsed",
            total.receiver_s.max(1e-9),
            Unit::Seconds,
        );
        add(o, "sender_elapsed", total.sender_s.max(1e-9), Unit::Seconds);
        if let Some(r) = self.retransmits {
            add(o, "retransmits", r as f64, Unit::Count);
        }
    }

    fn push_datagrams(&self, o: &mut Outcome) {
        let Some(d) = &self.datagrams else { return };
        add(o, "datagrams_sent", d.sent as f64, Unit::Count);
        add(o, "datagrams_received", d.received as f64, Unit::Count);
        add(o, "datagrams_lost", d.lost as f64, Unit::Count);
        if let Some(e) = d.send_errors {
            add(o, "send_errors", e as f64, Unit::Count);
        }
        let ratio = if d.sent > 0 {
            d.lost as f64 / d.sent as f64
        } else {
            0.0
        };
        let mut loss = Metric::new("loss_ratio", ratio, Unit::Ratio);
        loss.better = Better::Lower;
        o.push(loss);
        if let Some(j) = d.jitter_s {
            add(o, "jitter", j * 1e9, Unit::Nanoseconds);
        }
        if d.lost > 0 {
            o.note(format!(
                "{} of {} datagrams were lost: the path (or the receiver) cannot carry the sending rate",
                d.lost, d.sent
            ));
        }
    }

    fn push_transactions(&self, o: &mut Outcome) {
        let Some(t) = &self.transactions else { return };
        let rate = t.count as f64 / t.elapsed_s.max(1e-9);
        add(o, names::TRANSACTIONS_PER_SEC, rate, Unit::OpsPerSec);
        add(o, "transactions", t.count as f64, Unit::Count);
        if let Some(lost) = t.lost {
            add(o, "transactions_lost", lost as f64, Unit::Count);
        }
        if let Some(lat) = &t.latency {
            push_latency(o, lat, t.stddev_ns);
            o.latency = Some(lat.clone());
        }
        if let Some(r) = self.retransmits {
            add(o, "retransmits", r as f64, Unit::Count);
        }
    }

    /// CPU is what the test cost: less for the same test is better (netperf's
    /// service demand reads the same way).
    fn push_cpu(&self, o: &mut Outcome) {
        let c = &self.cpu;
        let cost = |o: &mut Outcome, name: &str, v: f64| {
            let mut m = Metric::new(name, v, Unit::Ratio);
            m.better = Better::Lower;
            o.push(m);
        };
        cost(o, "local_cpu_cores", c.local_cores);
        if let Some(remote) = c.remote_cores {
            cost(o, "remote_cpu_cores", remote);
        }
        let percent = |cores: f64, cpus: u32| 100.0 * cores / f64::from(cpus.max(1));
        cost(o, "local_cpu_percent", percent(c.local_cores, c.local_cpus));
        if let (Some(remote), Some(cpus)) = (c.remote_cores, c.remote_cpus) {
            cost(o, "remote_cpu_percent", percent(remote, cpus));
        }
    }

    fn push_buffers(&self, o: &mut Outcome) {
        for (end, buffers) in [
            ("local", self.local_buffers),
            ("remote", self.remote_buffers),
        ] {
            if let Some((snd, rcv)) = buffers {
                add(o, &format!("{end}_sndbuf"), snd as f64, Unit::Bytes);
                add(o, &format!("{end}_rcvbuf"), rcv as f64, Unit::Bytes);
            }
        }
        if let Some(mss) = self.mss {
            add(o, "mss", f64::from(mss), Unit::Bytes);
        }
    }

    fn push_notes(&self, o: &mut Outcome) {
        if let Some(cc) = &self.congestion {
            o.note(format!("congestion control: {cc}"));
        }
        if self.peer_ip.is_some_and(|ip| is_local(&ip)) {
            o.note(
                "loopback: the peer is this host; this measures its network stack and CPU, not a network path",
            );
        }
        if self.interrupted {
            o.note("interrupted: the run was stopped early; figures cover the part that ran");
        }
    }
}

fn add(o: &mut Outcome, name: &str, v: f64, unit: Unit) {
    o.push(Metric::new(name, v, unit));
}

/// Loopback, or an IPv4 loopback address in IPv6 form.
fn is_local(ip: &IpAddr) -> bool {
    match ip {
        IpAddr::V4(v) => v.is_loopback(),
        IpAddr::V6(v) => v.is_loopback() || v.to_ipv4_mapped().is_some_and(|m| m.is_loopback()),
    }
}

/// `latency_p50` … `latency_max`, from the model's latency.
fn push_latency(o: &mut Outcome, lat: &Latency, stddev_ns: Option<f64>) {
    for p in &lat.percentiles {
        add(
            o,
            &format!("latency_p{}", trim(p.p)),
            p.ns,
            Unit::Nanoseconds,
        );
    }
    add(o, "latency_mean", lat.mean_ns, Unit::Nanoseconds);
    if let Some(sd) = stddev_ns {
        add(o, "latency_stddev", sd, Unit::Nanoseconds);
    }
    add(o, "latency_min", lat.min_ns, Unit::Nanoseconds);
    add(o, "latency_max", lat.max_ns, Unit::Nanoseconds);
}

/// The recorder's figures as the model's latency, with the standard percentiles.
pub fn latency_of(rec: &LatencyRecorder) -> Option<Latency> {
    (rec.count > 0).then(|| {
        Latency::from_histogram(
            &rec.histogram,
            rec.min_ns,
            rec.max_ns,
            rec.sum_ns,
            &STANDARD_PERCENTILES,
        )
    })
}

/// `99.9` -> `99.9`, `50` -> `50`: percentile names of metrics.
pub fn trim(p: f64) -> String {
    if p.fract() == 0.0 {
        format!("{p:.0}")
    } else {
        format!("{p}")
    }
}

/// A native (or netperf) test as the one result model.
pub fn to_outcome(r: &ClientResult, host_label: &str) -> Outcome {
    Native(r).figures().to_outcome(Native(r).spec(host_label))
}

/// The conversion of hostbench's own protocol's raw result, piece by piece.
struct Native<'a>(&'a ClientResult);

impl Native<'_> {
    fn spec(&self, host_label: &str) -> serde_json::Value {
        let r = self.0;
        let mut spec = serde_json::to_value(&r.request).unwrap_or_default();
        if let Some(obj) = spec.as_object_mut() {
            obj.insert("mode".into(), r.request.test.name().into());
            obj.insert("host".into(), host_label.into());
            obj.insert("peer".into(), r.peer_addr.to_string().into());
        }
        spec
    }

    fn figures(&self) -> Figures {
        let r = self.0;
        let test = r.request.test;
        Figures {
            params: NetParams::of_request(&r.request, &r.local_opts),
            flow: (!test.is_rr()).then(|| self.flow()),
            reverse_flow: None,
            retransmits: self.retransmits(),
            datagrams: (test == TestKind::UdpStream).then(|| self.datagrams()),
            transactions: test.is_rr().then(|| self.transactions()),
            cpu_time: self.cpu_time(),
            cpu: self.cpu(),
            local_buffers: Some(r.streams.first().map_or((0, 0), |s| (s.sndbuf, s.rcvbuf))),
            remote_buffers: Some(
                r.server
                    .streams
                    .first()
                    .map_or((0, 0), |s| (s.sndbuf, s.rcvbuf)),
            ),
            mss: r.mss,
            congestion: r.congestion.clone(),
            series: self.series(),
            peer_ip: Some(r.peer_addr.ip()),
            elapsed_s: r.elapsed_s,
            interrupted: r.interrupted,
        }
    }

    fn local(&self, f: impl Fn(&LocalStream) -> u64) -> u64 {
        self.0.streams.iter().map(f).sum()
    }

    fn remote(&self, f: impl Fn(&StreamReport) -> u64) -> u64 {
        self.0.server.streams.iter().map(f).sum()
    }

    fn local_elapsed(&self) -> f64 {
        self.0
            .streams
            .iter()
            .map(|s| s.elapsed_s)
            .fold(0.0, f64::max)
            .max(1e-9)
    }

    fn remote_elapsed(&self) -> f64 {
        self.0.server.elapsed_s.max(1e-9)
    }

    /// The receiver is the server for TCP_STREAM and UDP_STREAM, this end for MAERTS.
    fn flow(&self) -> Flow {
        if self.0.request.test.server_receives() {
            Flow {
                sent: self.local(|s| s.bytes_sent),
                sender_s: self.local_elapsed(),
                received: self.remote(|s| s.bytes_received),
                receiver_s: self.remote_elapsed(),
            }
        } else {
            Flow {
                sent: self.remote(|s| s.bytes_sent),
                sender_s: self.remote_elapsed(),
                received: self.local(|s| s.bytes_received),
                receiver_s: self.local_elapsed(),
            }
        }
    }

    /// The sender's retransmits (both ends' for TCP_RR); none for UDP or TCP_CRR.
    fn retransmits(&self) -> Option<u64> {
        let local: u64 = self.0.streams.iter().filter_map(|s| s.retransmits).sum();
        let remote: u64 = self
            .0
            .server
            .streams
            .iter()
            .filter_map(|s| s.retransmits)
            .sum();
        match self.0.request.test {
            TestKind::TcpStream => Some(local),
            TestKind::TcpMaerts => Some(remote),
            TestKind::TcpRr => Some(local + remote),
            _ => None,
        }
    }

    fn datagrams(&self) -> Datagrams {
        let sent = self.local(|s| s.packets_sent);
        let received = self.remote(|s| s.packets);
        Datagrams {
            sent,
            received,
            // Lost = what was sent and never arrived (the server also counts gaps).
            lost: sent.saturating_sub(received),
            send_errors: Some(self.local(|s| s.send_errors)),
            jitter_s: None,
        }
    }

    fn transactions(&self) -> Transactions {
        let r = self.0;
        Transactions {
            count: self.local(|s| s.transactions),
            elapsed_s: self.local_elapsed(),
            lost: (r.request.test == TestKind::UdpRr).then(|| self.local(|s| s.lost)),
            latency: r.latency.as_ref().and_then(latency_of),
            stddev_ns: r.latency.as_ref().map(LatencyRecorder::stddev_ns),
        }
    }

    fn cpu_time(&self) -> CpuUse {
        let r = self.0;
        CpuUse {
            user_s: r.cpu.user_s,
            system_s: r.cpu.system_s,
            utilisation: r
                .cpu
                .utilisation(std::time::Duration::from_secs_f64(r.elapsed_s)),
        }
    }

    fn cpu(&self) -> CpuShare {
        let r = self.0;
        let remote_s = self.remote_elapsed().max(r.elapsed_s).max(1e-9);
        CpuShare {
            local_cores: self.cpu_time().utilisation,
            local_cpus: r.cpus,
            remote_cores: Some((r.server.cpu_user_s + r.server.cpu_system_s) / remote_s),
            remote_cpus: Some(r.server.cpus),
        }
    }

    /// Receiver-side intervals: bytes/s for streams, transactions/s for RR.
    fn series(&self) -> Vec<Sample> {
        let rr = self.0.request.test.is_rr();
        self.0
            .intervals
            .iter()
            .map(|i| {
                let span = (i.end_s - i.start_s).max(1e-9);
                let (name, count) = if rr {
                    ("transactions_per_sec", i.packets)
                } else {
                    ("bytes_per_sec", i.bytes)
                };
                Sample {
                    at_s: i.end_s,
                    span_s: span,
                    values: BTreeMap::from([(name.to_string(), count as f64 / span)]),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::cputime::CpuTime;
    use crate::workload::net::protocol::ServerReport;

    fn request(test: TestKind) -> TestRequest {
        TestRequest {
            test,
            duration_ms: 2000,
            bytes: 0,
            transactions: 0,
            parallel: 2,
            send_size: 131072,
            recv_size: 131072,
            request_size: 1,
            response_size: 1,
            server_sndbuf: 0,
            server_rcvbuf: 0,
            rate_bps: 0,
            interval_ms: 0,
            nodelay: false,
        }
    }

    /// A TCP_STREAM of two streams: 1 GB sent over 2 s, 0.9 GB received in 1.8 s.
    fn stream_result(test: TestKind) -> ClientResult {
        let local = |bytes_sent, bytes_received, retransmits| LocalStream {
            bytes_sent,
            bytes_received,
            retransmits,
            elapsed_s: 2.0,
            sndbuf: 4096,
            rcvbuf: 8192,
            ..Default::default()
        };
        let remote = |bytes_received, bytes_sent| StreamReport {
            bytes_received,
            bytes_sent,
            retransmits: Some(7),
            sndbuf: 1000,
            rcvbuf: 2000,
            ..Default::default()
        };
        ClientResult {
            request: request(test),
            local_opts: SockOpts::default(),
            local_addr: "127.0.0.1:40000".parse().unwrap(),
            peer_addr: "10.0.0.2:12866".parse().unwrap(),
            streams: vec![
                local(600_000_000, 0, Some(3)),
                local(400_000_000, 0, Some(2)),
            ],
            server: ServerReport {
                streams: vec![remote(500_000_000, 0), remote(400_000_000, 0)],
                elapsed_s: 1.8,
                cpu_user_s: 0.9,
                cpu_system_s: 0.9,
                cpus: 4,
                congestion: None,
            },
            latency: None,
            intervals: Vec::new(),
            elapsed_s: 2.0,
            cpu: CpuTime {
                user_s: 1.0,
                system_s: 1.0,
            },
            cpus: 2,
            mss: Some(1448),
            congestion: Some("cubic".into()),
            interrupted: false,
        }
    }

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0), "{a} != {b}");
    }

    fn value(o: &Outcome, name: &str) -> f64 {
        o.metric(name, None)
            .unwrap_or_else(|| panic!("no {name}"))
            .value
    }

    #[test]
    fn tcp_stream_metrics_and_params() {
        let o = to_outcome(&stream_result(TestKind::TcpStream), "peer");
        assert_eq!(o.workload, "net");
        close(value(&o, names::THROUGHPUT), 900_000_000.0 / 1.8);
        close(value(&o, names::SENDER_THROUGHPUT), 500_000_000.0);
        close(value(&o, "bytes_received"), 900_000_000.0);
        close(value(&o, "retransmits"), 5.0);
        close(value(&o, "local_cpu_cores"), 1.0);
        close(value(&o, "local_cpu_percent"), 50.0);
        close(value(&o, "remote_cpu_cores"), 0.9);
        close(value(&o, "remote_cpu_percent"), 22.5);
        close(value(&o, "local_sndbuf"), 4096.0);
        close(value(&o, "remote_rcvbuf"), 2000.0);
        close(value(&o, "mss"), 1448.0);
        let cpu = o.metric("local_cpu_cores", None).unwrap();
        assert_eq!(cpu.better, Better::Lower, "CPU is a cost");
        let p: Vec<(&str, &str)> = o
            .params
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            p,
            [
                ("direction", "forward"),
                ("message-size", "131072"),
                ("streams", "2"),
                ("test", "TCP_STREAM"),
            ]
        );
        assert!(o.notes.iter().any(|n| n.contains("cubic")));
        assert!(!o.notes.iter().any(|n| n.starts_with("loopback")));
    }

    #[test]
    fn maerts_is_a_reverse_stream_measured_at_this_end() {
        let mut r = stream_result(TestKind::TcpMaerts);
        for s in &mut r.streams {
            s.bytes_received = 300_000_000;
        }
        for s in &mut r.server.streams {
            s.bytes_sent = 350_000_000;
        }
        r.peer_addr = "127.0.0.1:12866".parse().unwrap();
        let o = to_outcome(&r, "loopback");
        assert_eq!(o.params["test"], "TCP_STREAM");
        assert_eq!(o.params["direction"], "reverse");
        close(value(&o, names::THROUGHPUT), 600_000_000.0 / 2.0);
        close(value(&o, names::SENDER_THROUGHPUT), 700_000_000.0 / 1.8);
        close(value(&o, "retransmits"), 14.0);
        assert!(o.notes.iter().any(|n| n.starts_with("loopback")));
    }

    #[test]
    fn udp_and_rr_params_and_metrics() {
        let mut r = stream_result(TestKind::UdpStream);
        r.request.send_size = 1472;
        r.request.rate_bps = 0;
        for s in &mut r.streams {
            s.packets_sent = 100;
        }
        for s in &mut r.server.streams {
            s.packets = 90;
        }
        let o = to_outcome(&r, "peer");
        assert_eq!(o.params["rate"], "unlimited");
        assert_eq!(o.params["message-size"], "1472");
        close(value(&o, "datagrams_lost"), 20.0);
        close(value(&o, "loss_ratio"), 0.1);
        assert_eq!(o.metric("loss_ratio", None).unwrap().better, Better::Lower);
        assert!(o.metric("retransmits", None).is_none());

        let mut r = stream_result(TestKind::TcpRr);
        r.request.request_size = 64;
        r.request.response_size = 1024;
        r.request.nodelay = true;
        for s in &mut r.streams {
            s.transactions = 5000;
        }
        let mut lat = LatencyRecorder::default();
        for ns in [10_000, 20_000, 30_000] {
            lat.record(ns);
        }
        r.latency = Some(lat);
        let o = to_outcome(&r, "peer");
        let keys: Vec<&str> = o.params.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "nodelay",
                "request-size",
                "response-size",
                "streams",
                "test"
            ]
        );
        assert_eq!(o.params["response-size"], "1024");
        close(value(&o, names::TRANSACTIONS_PER_SEC), 5000.0);
        close(value(&o, "latency_min"), 10_000.0);
        close(value(&o, "latency_mean"), 20_000.0);
        assert!(value(&o, "latency_stddev") > 0.0);
        assert!(o.metric("latency_p99.9", None).is_some());
        close(value(&o, "retransmits"), 19.0);
    }

    #[test]
    fn windows_as_one_param() {
        assert_eq!(window_text((0, 0), (0, 0)), None);
        assert_eq!(
            window_text((65536, 65536), (65536, 65536)).as_deref(),
            Some("65536")
        );
        assert_eq!(
            window_text((1, 2), (0, 0)).as_deref(),
            Some("local 1/2, remote 0/0")
        );
    }
}

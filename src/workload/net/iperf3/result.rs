//! What an iperf3 test leaves: each end's results for the exchange (`Results`), and on
//! the client the raw result of the whole test (`ClientRun`), which the personality
//! prints from and which converts to the one result model with the same metrics and
//! params as `hostbench net` (`outcome::Figures`).

use super::engine::{Engine, Row};
use super::streams::Socket;
use super::wire::{Params, Results, StreamResult};
use crate::measure::cputime::CpuTime;
use crate::model::{CpuUse, Outcome, Sample};
use crate::workload::net::outcome::{CpuShare, Datagrams, Direction, Figures, Flow, NetParams};
use crate::workload::net::sock;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Instant;

/// CPU time and wall time when the test started running.
pub type CpuStart = (CpuTime, Instant);

/// This end's results for the exchange: CPU as iperf3 counts it (percent of one
/// core, user and system), and a stream entry per stream.
pub fn local_results(e: &Engine, cpu_at_start: &CpuStart) -> Results {
    let (cpu0, t0) = cpu_at_start;
    let cpu = CpuTime::now().since(cpu0);
    let wall = t0.elapsed().as_secs_f64().max(1e-9);
    let totals = e.totals();
    let tcp_sender = totals.iter().any(|r| r.sender && !r.udp);
    Results {
        cpu_total: 100.0 * cpu.total_s() / wall,
        cpu_user: 100.0 * cpu.user_s / wall,
        cpu_system: 100.0 * cpu.system_s / wall,
        sender_has_retransmits: if tcp_sender { 1 } else { -1 },
        congestion_used: e.streams.iter().find_map(|s| match &s.socket {
            Socket::Tcp(t) => sock::congestion(t),
            Socket::Udp(_) => None,
        }),
        streams: totals.iter().map(stream_result).collect(),
    }
}

/// One stream's entry: retransmits from a TCP sender, jitter and loss from a UDP
/// receiver, -1 or 0 where the role has none.
pub fn stream_result(r: &Row) -> StreamResult {
    StreamResult {
        id: r.id,
        bytes: r.delta.bytes,
        retransmits: if r.sender && !r.udp {
            r.delta.retransmits.unwrap_or(-1)
        } else {
            -1
        },
        jitter_s: if r.udp && !r.sender {
            r.delta.jitter_s
        } else {
            0.0
        },
        errors: if r.udp && !r.sender { r.delta.lost } else { 0 },
        packets: if r.udp { r.delta.packets } else { 0 },
        start_time: 0.0,
        end_time: r.end,
    }
}

/// A client's finished test: both ends' figures, per stream, after the omit period.
#[derive(Debug, Clone)]
pub struct ClientRun {
    /// The parameters the test ran with, as sent to the server.
    pub params: Params,
    pub host: String,
    pub peer: SocketAddr,
    /// This end's totals per stream, in stream order.
    pub totals: Vec<Row>,
    /// Per stream, a sender's (max cwnd, min, max, mean RTT in µs).
    pub rtt: Vec<Option<(u64, u64, u64, u64)>>,
    pub local: Results,
    pub remote: Results,
    /// This end's CPU time and wall time over the test.
    pub cpu: CpuTime,
    pub wall_s: f64,
    /// The first stream's socket buffers when it was made (send, receive).
    pub buffers: Option<(u64, u64)>,
    /// The control connection's MSS.
    pub mss: u32,
    /// Counted intervals: (start, end, bytes moved by this end).
    pub history: Vec<(f64, f64, u64)>,
    pub interrupted: bool,
}

/// How the client side of a test was set up, for `ClientRun::collect`.
pub struct Setup<'a> {
    pub params: &'a Params,
    pub host: &'a str,
    pub peer: SocketAddr,
    pub buffers: Option<(u64, u64)>,
    pub mss: u32,
}

impl ClientRun {
    /// After the streams were joined and the results exchanged.
    pub fn collect(
        setup: Setup<'_>,
        e: &Engine,
        cpu_at_start: &CpuStart,
        local: Results,
        remote: Results,
        interrupted: bool,
    ) -> ClientRun {
        ClientRun {
            params: setup.params.clone(),
            host: setup.host.to_string(),
            peer: setup.peer,
            totals: e.totals(),
            rtt: (0..e.streams.len()).map(|i| e.rtt_stats(i)).collect(),
            local,
            remote,
            cpu: CpuTime::now().since(&cpu_at_start.0),
            wall_s: cpu_at_start.1.elapsed().as_secs_f64(),
            buffers: setup.buffers,
            mss: setup.mss,
            history: e.history.clone(),
            interrupted,
        }
    }

    /// The peer's entry for this end's stream (an empty one if it sent none).
    pub fn remote_of(&self, r: &Row) -> StreamResult {
        self.remote
            .streams
            .iter()
            .find(|s| s.id == r.id)
            .copied()
            .unwrap_or(StreamResult {
                id: r.id,
                ..Default::default()
            })
    }

    pub fn test_name(&self) -> &'static str {
        if self.params.udp {
            "UDP_STREAM"
        } else {
            "TCP_STREAM"
        }
    }

    pub fn direction(&self) -> Direction {
        if self.params.bidirectional {
            Direction::Bidir
        } else if self.params.reverse {
            Direction::Reverse
        } else {
            Direction::Forward
        }
    }

    pub fn to_outcome(&self) -> Outcome {
        self.figures().to_outcome(self.spec())
    }

    /// The options that ran, as iperf3's parameters, with the native spec's names for
    /// what the reports show (`mode`, `host`, `peer`, `parallel`).
    fn spec(&self) -> serde_json::Value {
        let mut spec = self.params.to_json();
        let mode = match (self.direction(), self.params.udp) {
            (Direction::Forward, _) => self.test_name().to_string(),
            (Direction::Reverse, false) => "TCP_MAERTS".to_string(),
            (d, _) => format!("{} ({})", self.test_name(), d.name()),
        };
        if let Some(obj) = spec.as_object_mut() {
            obj.insert("mode".into(), mode.into());
            obj.insert("host".into(), self.host.clone().into());
            obj.insert("peer".into(), self.peer.to_string().into());
        }
        spec
    }

    fn params(&self) -> NetParams {
        let p = &self.params;
        NetParams {
            test: self.test_name(),
            direction: Some(self.direction()),
            streams: p.parallel,
            message_size: Some(p.len),
            request_size: None,
            response_size: None,
            rate_bps: if p.udp {
                Some(p.bandwidth)
            } else {
                (p.bandwidth > 0).then_some(p.bandwidth)
            },
            window: (p.window > 0).then(|| p.window.to_string()),
            nodelay: p.nodelay,
            congestion: p.congestion.clone(),
            mss: (p.mss > 0).then_some(p.mss),
        }
    }

    fn figures(&self) -> Figures {
        let out = self.flow(true);
        let back = self.flow(false);
        let (flow, reverse_flow) = match self.direction() {
            Direction::Forward => (out, None),
            Direction::Reverse => (back, None),
            Direction::Bidir => (out, Some(back)),
        };
        Figures {
            params: self.params(),
            flow: Some(flow),
            reverse_flow,
            retransmits: (!self.params.udp).then(|| self.retransmits()),
            datagrams: self.params.udp.then(|| self.datagrams()),
            transactions: None,
            cpu_time: CpuUse {
                user_s: self.cpu.user_s,
                system_s: self.cpu.system_s,
                utilisation: self.cpu.total_s() / self.wall_s.max(1e-9),
            },
            cpu: self.cpu_share(),
            local_buffers: self.buffers,
            remote_buffers: None,
            mss: (!self.params.udp && self.mss > 0).then_some(self.mss),
            congestion: self.sender_congestion(),
            series: self.series(),
            peer_ip: Some(self.peer.ip()),
            elapsed_s: self.totals.iter().map(|r| r.end).fold(0.0, f64::max),
            interrupted: self.interrupted,
        }
    }

    /// The streams this end sends on (`outgoing`) or receives on, with the peer's
    /// other half of each.
    fn flow(&self, outgoing: bool) -> Flow {
        let mut f = Flow::default();
        for r in self.totals.iter().filter(|r| r.sender == outgoing) {
            let theirs = self.remote_of(r);
            let (sent, sender_s, received, receiver_s) = if outgoing {
                (r.delta.bytes, r.end, theirs.bytes, theirs.end_time)
            } else {
                (theirs.bytes, theirs.end_time, r.delta.bytes, r.end)
            };
            f.sent += sent;
            f.sender_s = f.sender_s.max(sender_s);
            f.received += received;
            f.receiver_s = f.receiver_s.max(receiver_s);
        }
        f
    }

    /// Every TCP sender's retransmits: this end's from TCP_INFO, the peer's as it
    /// reported them.
    fn retransmits(&self) -> u64 {
        self.totals
            .iter()
            .map(|r| {
                let n = if r.sender {
                    r.delta.retransmits.unwrap_or(0)
                } else {
                    self.remote_of(r).retransmits
                };
                n.max(0) as u64
            })
            .sum()
    }

    /// The receivers' counts: iperf3's receiver counts packets by sequence number
    /// (its `packets`) and the gaps among them (`lost`).
    fn datagrams(&self) -> Datagrams {
        let mut d = Datagrams {
            jitter_s: Some(0.0),
            ..Default::default()
        };
        let mut jitters = Vec::new();
        for r in &self.totals {
            let theirs = self.remote_of(r);
            let (sent, packets, lost, jitter) = if r.sender {
                (
                    r.delta.packets,
                    theirs.packets,
                    theirs.errors,
                    theirs.jitter_s,
                )
            } else {
                (
                    theirs.packets,
                    r.delta.packets,
                    r.delta.lost,
                    r.delta.jitter_s,
                )
            };
            d.sent += sent.max(0) as u64;
            d.received += (packets - lost).max(0) as u64;
            d.lost += lost.max(0) as u64;
            jitters.push(jitter);
        }
        d.jitter_s = Some(jitters.iter().sum::<f64>() / jitters.len().max(1) as f64);
        d
    }

    /// iperf3 reports CPU in percent of one core; the remote end's CPU count is not
    /// in its protocol, so there is no remote share of the host.
    fn cpu_share(&self) -> CpuShare {
        CpuShare {
            local_cores: self.local.cpu_total / 100.0,
            local_cpus: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
            remote_cores: Some(self.remote.cpu_total / 100.0),
            remote_cpus: None,
        }
    }

    fn sender_congestion(&self) -> Option<String> {
        let local_sends = self.totals.iter().any(|r| r.sender);
        if local_sends {
            self.local.congestion_used.clone()
        } else {
            self.remote.congestion_used.clone()
        }
        .filter(|_| !self.params.udp)
    }

    fn series(&self) -> Vec<Sample> {
        self.history
            .iter()
            .map(|&(start, end, bytes)| {
                let span = (end - start).max(1e-9);
                Sample {
                    at_s: end,
                    span_s: span,
                    values: BTreeMap::from([("bytes_per_sec".to_string(), bytes as f64 / span)]),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::net::iperf3::streams::Snapshot;
    use crate::workload::net::outcome::names;

    fn params(udp: bool) -> Params {
        Params {
            udp,
            time: 2,
            parallel: 2,
            len: if udp { 1460 } else { 131072 },
            bandwidth: if udp { 1_048_576 } else { 0 },
            ..Default::default()
        }
    }

    fn row(id: i64, sender: bool, udp: bool, delta: Snapshot) -> Row {
        Row {
            fd: 5 + id as i32,
            id,
            sender,
            udp,
            start: 0.0,
            end: 2.0,
            delta,
            info: None,
            omitted: false,
        }
    }

    fn results(cpu_total: f64, streams: Vec<StreamResult>) -> Results {
        Results {
            cpu_total,
            cpu_user: cpu_total / 2.0,
            cpu_system: cpu_total / 2.0,
            sender_has_retransmits: 1,
            congestion_used: Some("cubic".into()),
            streams,
        }
    }

    fn run(p: Params, totals: Vec<Row>, remote: Results) -> ClientRun {
        ClientRun {
            params: p,
            host: "10.0.0.2".into(),
            peer: "10.0.0.2:5201".parse().unwrap(),
            rtt: vec![None; totals.len()],
            totals,
            local: results(50.0, Vec::new()),
            remote,
            cpu: CpuTime {
                user_s: 0.5,
                system_s: 0.5,
            },
            wall_s: 2.0,
            buffers: Some((16384, 131072)),
            mss: 1448,
            history: vec![(0.0, 1.0, 1000), (1.0, 2.0, 3000)],
            interrupted: false,
        }
    }

    fn value(o: &Outcome, name: &str) -> f64 {
        o.metric(name, None)
            .unwrap_or_else(|| panic!("no {name}"))
            .value
    }

    #[test]
    fn tcp_client_is_a_tcp_stream_with_the_native_metric_names() {
        let sent = |bytes, retr| Snapshot {
            bytes,
            retransmits: Some(retr),
            ..Default::default()
        };
        let theirs = |id, bytes, end_time| StreamResult {
            id,
            bytes,
            retransmits: -1,
            end_time,
            ..Default::default()
        };
        let r = run(
            params(false),
            vec![
                row(1, true, false, sent(600, 2)),
                row(3, true, false, sent(400, 1)),
            ],
            results(80.0, vec![theirs(1, 550, 2.5), theirs(3, 400, 2.0)]),
        );
        let o = r.to_outcome();
        assert_eq!(o.workload, "net");
        assert_eq!(value(&o, names::THROUGHPUT), 950.0 / 2.5);
        assert_eq!(value(&o, names::SENDER_THROUGHPUT), 1000.0 / 2.0);
        assert_eq!(value(&o, "retransmits"), 3.0);
        assert_eq!(value(&o, "local_cpu_cores"), 0.5);
        assert_eq!(value(&o, "remote_cpu_cores"), 0.8);
        assert!(o.metric("remote_cpu_percent", None).is_none());
        assert_eq!(value(&o, "local_sndbuf"), 16384.0);
        assert_eq!(value(&o, "mss"), 1448.0);
        let keys: Vec<String> = o.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        assert_eq!(
            keys,
            [
                "direction=forward",
                "message-size=131072",
                "streams=2",
                "test=TCP_STREAM"
            ]
        );
        assert_eq!(o.series.len(), 2);
        assert_eq!(o.series[1].values["bytes_per_sec"], 3000.0);
        assert_eq!(o.spec["mode"], "TCP_STREAM");
        assert!(o.notes.iter().any(|n| n.contains("cubic")));
    }

    #[test]
    fn udp_reverse_and_bidir() {
        // -u -R: this end receives; loss and jitter are its own.
        let got = Snapshot {
            bytes: 14600,
            packets: 10,
            lost: 2,
            jitter_s: 0.001,
            ..Default::default()
        };
        let theirs = StreamResult {
            id: 1,
            bytes: 14600,
            packets: 10,
            retransmits: -1,
            end_time: 2.0,
            ..Default::default()
        };
        let mut p = params(true);
        p.reverse = true;
        p.parallel = 1;
        let o = run(
            p,
            vec![row(1, false, true, got)],
            results(10.0, vec![theirs]),
        )
        .to_outcome();
        assert_eq!(o.params["direction"], "reverse");
        assert_eq!(o.params["rate"], "1048576");
        assert_eq!(o.params["test"], "UDP_STREAM");
        assert_eq!(value(&o, "datagrams_sent"), 10.0);
        assert_eq!(value(&o, "datagrams_received"), 8.0);
        assert_eq!(value(&o, "datagrams_lost"), 2.0);
        assert_eq!(value(&o, "loss_ratio"), 0.2);
        assert!((value(&o, "jitter") - 1e6).abs() < 1e-3);
        assert!(o.metric("retransmits", None).is_none());

        // --bidir: both directions, and each alone.
        let mut p = params(false);
        p.bidirectional = true;
        p.parallel = 1;
        let theirs = |id, bytes| StreamResult {
            id,
            bytes,
            retransmits: if id == 3 { 4 } else { -1 },
            end_time: 2.0,
            ..Default::default()
        };
        let o = run(
            p,
            vec![
                row(
                    1,
                    true,
                    false,
                    Snapshot {
                        bytes: 1000,
                        retransmits: Some(1),
                        ..Default::default()
                    },
                ),
                row(
                    3,
                    false,
                    false,
                    Snapshot {
                        bytes: 500,
                        ..Default::default()
                    },
                ),
            ],
            results(10.0, vec![theirs(1, 900), theirs(3, 600)]),
        )
        .to_outcome();
        assert_eq!(o.params["direction"], "bidir");
        assert_eq!(value(&o, names::THROUGHPUT), 1400.0 / 2.0);
        assert_eq!(value(&o, "forward_throughput"), 900.0 / 2.0);
        assert_eq!(value(&o, "reverse_throughput"), 500.0 / 2.0);
        assert_eq!(value(&o, "retransmits"), 5.0);
    }
}

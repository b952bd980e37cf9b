//! A finished network test as the one result model (`Outcome`), and its human form.
//! The receiver's figure is the headline: on a shaped or lossy path the sender's rate
//! overstates what arrived (reference/network.md §6.2).

use super::TestKind;
use super::client::ClientResult;
use crate::host::HostInfo;
use crate::model::{
    CpuUse, Latency, Metric, Outcome, Percentile, STANDARD_PERCENTILES, Sample, Unit,
};
use crate::units::format_ns;
use std::collections::BTreeMap;

/// Metric names a reader (or personality) may look up.
pub mod names {
    pub const THROUGHPUT: &str = "throughput";
    pub const SENDER_THROUGHPUT: &str = "sender_throughput";
    pub const TRANSACTIONS_PER_SEC: &str = "transactions_per_sec";
}

pub fn to_outcome(r: &ClientResult, host_label: &str) -> Outcome {
    let req = &r.request;
    let mut spec = serde_json::to_value(req).unwrap_or_default();
    if let Some(obj) = spec.as_object_mut() {
        obj.insert("mode".into(), req.test.name().into());
        obj.insert("host".into(), host_label.into());
        obj.insert("peer".into(), r.peer_addr.to_string().into());
    }
    let mut o = Outcome::new("net", spec, HostInfo::detect());
    o.elapsed_s = r.elapsed_s;
    o.interrupted = r.interrupted;
    o.cpu_time = CpuUse {
        user_s: r.cpu.user_s,
        system_s: r.cpu.system_s,
        utilisation: r
            .cpu
            .utilisation(std::time::Duration::from_secs_f64(r.elapsed_s)),
    };
    let sum = |f: &dyn Fn(&super::client::LocalStream) -> u64| r.streams.iter().map(f).sum::<u64>();
    let ssum = |f: &dyn Fn(&super::protocol::StreamReport) -> u64| {
        r.server.streams.iter().map(f).sum::<u64>()
    };
    let local_elapsed = r
        .streams
        .iter()
        .map(|s| s.elapsed_s)
        .fold(0.0f64, f64::max)
        .max(1e-9);
    let remote_elapsed = r.server.elapsed_s.max(1e-9);
    let add = |o: &mut Outcome, name: &str, v: f64, unit: Unit| o.push(Metric::new(name, v, unit));

    match req.test {
        TestKind::TcpStream | TestKind::UdpStream => {
            let received = ssum(&|s| s.bytes_received);
            let sent = sum(&|s| s.bytes_sent);
            add(
                &mut o,
                names::THROUGHPUT,
                received as f64 / remote_elapsed,
                Unit::BytesPerSec,
            );
            add(
                &mut o,
                names::SENDER_THROUGHPUT,
                sent as f64 / local_elapsed,
                Unit::BytesPerSec,
            );
            add(&mut o, "bytes_received", received as f64, Unit::Bytes);
            add(&mut o, "bytes_sent", sent as f64, Unit::Bytes);
            add(&mut o, "receiver_elapsed", remote_elapsed, Unit::Seconds);
            add(&mut o, "sender_elapsed", local_elapsed, Unit::Seconds);
            if req.test == TestKind::TcpStream {
                let retrans: u64 = r.streams.iter().filter_map(|s| s.retransmits).sum();
                add(&mut o, "retransmits", retrans as f64, Unit::Count);
            } else {
                let packets_sent = sum(&|s| s.packets_sent);
                let received = ssum(&|s| s.packets);
                // Lost = what was sent and never arrived (the server also counts gaps).
                let lost = packets_sent.saturating_sub(received);
                add(&mut o, "datagrams_sent", packets_sent as f64, Unit::Count);
                add(&mut o, "datagrams_received", received as f64, Unit::Count);
                add(&mut o, "datagrams_lost", lost as f64, Unit::Count);
                add(
                    &mut o,
                    "send_errors",
                    sum(&|s| s.send_errors) as f64,
                    Unit::Count,
                );
                let ratio = if packets_sent > 0 {
                    lost as f64 / packets_sent as f64
                } else {
                    0.0
                };
                add(&mut o, "loss_ratio", ratio, Unit::Ratio);
                if lost > 0 {
                    o.note(format!(
                        "{lost} of {packets_sent} datagrams were lost: the path (or the receiver) cannot carry the sending rate"
                    ));
                }
            }
        }
        TestKind::TcpMaerts => {
            let received = sum(&|s| s.bytes_received);
            let sent = ssum(&|s| s.bytes_sent);
            add(
                &mut o,
                names::THROUGHPUT,
                received as f64 / local_elapsed,
                Unit::BytesPerSec,
            );
            add(
                &mut o,
                names::SENDER_THROUGHPUT,
                sent as f64 / remote_elapsed,
                Unit::BytesPerSec,
            );
            add(&mut o, "bytes_received", received as f64, Unit::Bytes);
            add(&mut o, "bytes_sent", sent as f64, Unit::Bytes);
            add(&mut o, "receiver_elapsed", local_elapsed, Unit::Seconds);
            add(&mut o, "sender_elapsed", remote_elapsed, Unit::Seconds);
            let retrans: u64 = r.server.streams.iter().filter_map(|s| s.retransmits).sum();
            add(&mut o, "retransmits", retrans as f64, Unit::Count);
        }
        TestKind::TcpRr | TestKind::TcpCrr | TestKind::UdpRr => {
            let n = sum(&|s| s.transactions);
            add(
                &mut o,
                names::TRANSACTIONS_PER_SEC,
                n as f64 / local_elapsed,
                Unit::OpsPerSec,
            );
            add(&mut o, "transactions", n as f64, Unit::Count);
            if req.test == TestKind::UdpRr {
                add(
                    &mut o,
                    "transactions_lost",
                    sum(&|s| s.lost) as f64,
                    Unit::Count,
                );
            }
            if let Some(lat) = &r.latency
                && lat.count > 0
            {
                let percentiles: Vec<Percentile> = STANDARD_PERCENTILES
                    .iter()
                    .map(|&p| Percentile {
                        p,
                        ns: lat.histogram.percentile_ns(p).unwrap_or(0.0),
                    })
                    .collect();
                for p in &percentiles {
                    add(
                        &mut o,
                        &format!("latency_p{}", trim(p.p)),
                        p.ns,
                        Unit::Nanoseconds,
                    );
                }
                add(&mut o, "latency_mean", lat.mean_ns(), Unit::Nanoseconds);
                add(&mut o, "latency_stddev", lat.stddev_ns(), Unit::Nanoseconds);
                add(&mut o, "latency_min", lat.min_ns as f64, Unit::Nanoseconds);
                add(&mut o, "latency_max", lat.max_ns as f64, Unit::Nanoseconds);
                o.latency = Some(Latency {
                    count: lat.count,
                    min_ns: lat.min_ns as f64,
                    mean_ns: lat.mean_ns(),
                    max_ns: lat.max_ns as f64,
                    sum_ns: lat.sum_ns as f64,
                    percentiles,
                    layout: lat.histogram.layout,
                    buckets: lat.histogram.nonempty().collect(),
                });
            }
            if req.test == TestKind::TcpRr {
                let retrans: u64 = r.streams.iter().filter_map(|s| s.retransmits).sum::<u64>()
                    + r.server
                        .streams
                        .iter()
                        .filter_map(|s| s.retransmits)
                        .sum::<u64>();
                add(&mut o, "retransmits", retrans as f64, Unit::Count);
            }
        }
    }
    let first = r.streams.first().cloned().unwrap_or_default();
    let rfirst = r.server.streams.first().cloned().unwrap_or_default();
    add(&mut o, "local_sndbuf", first.sndbuf as f64, Unit::Bytes);
    add(&mut o, "local_rcvbuf", first.rcvbuf as f64, Unit::Bytes);
    add(&mut o, "remote_sndbuf", rfirst.sndbuf as f64, Unit::Bytes);
    add(&mut o, "remote_rcvbuf", rfirst.rcvbuf as f64, Unit::Bytes);
    // CPU as busy cores (1.0 = one core) and as a share of all of the host's CPUs.
    let local_cores = o.cpu_time.utilisation;
    let remote_cores =
        (r.server.cpu_user_s + r.server.cpu_system_s) / remote_elapsed.max(r.elapsed_s).max(1e-9);
    add(&mut o, "local_cpu_cores", local_cores, Unit::Ratio);
    add(&mut o, "remote_cpu_cores", remote_cores, Unit::Ratio);
    add(
        &mut o,
        "local_cpu_percent",
        100.0 * local_cores / f64::from(r.cpus.max(1)),
        Unit::Ratio,
    );
    add(
        &mut o,
        "remote_cpu_percent",
        100.0 * remote_cores / f64::from(r.server.cpus.max(1)),
        Unit::Ratio,
    );
    if let Some(mss) = r.mss {
        add(&mut o, "mss", f64::from(mss), Unit::Bytes);
    }
    if let Some(cc) = &r.congestion {
        o.note(format!("congestion control: {cc}"));
    }
    let rr = req.test.is_rr();
    o.series = r
        .intervals
        .iter()
        .map(|i| {
            let span = (i.end_s - i.start_s).max(1e-9);
            let mut values = BTreeMap::new();
            if rr {
                values.insert("transactions_per_sec".into(), i.packets as f64 / span);
            } else {
                values.insert("bytes_per_sec".into(), i.bytes as f64 / span);
            }
            Sample {
                at_s: i.end_s,
                span_s: span,
                values,
            }
        })
        .collect();
    if r.interrupted {
        o.note("interrupted: the run was stopped early; figures cover the part that ran");
    }
    o
}

fn trim(p: f64) -> String {
    if p.fract() == 0.0 {
        format!("{p:.0}")
    } else {
        format!("{p}")
    }
}

/// Bits per second, 1000-based, 3–4 significant digits: `9.41 Gbit/s`.
pub fn format_bits(bytes_per_sec: f64) -> String {
    let bits = bytes_per_sec * 8.0;
    let (v, unit) = if bits >= 1e9 {
        (bits / 1e9, "Gbit/s")
    } else if bits >= 1e6 {
        (bits / 1e6, "Mbit/s")
    } else if bits >= 1e3 {
        (bits / 1e3, "kbit/s")
    } else {
        (bits, "bit/s")
    };
    format!("{v:.2} {unit}")
}

/// One live interval line.
pub fn interval_line(test: TestKind, i: &super::protocol::IntervalReport) -> String {
    let span = (i.end_s - i.start_s).max(1e-9);
    let what = if test.is_rr() {
        format!("{:>12.1} trans/s", i.packets as f64 / span)
    } else {
        format!("{:>14}", format_bits(i.bytes as f64 / span))
    };
    format!("[{:6.2}-{:6.2} s] {what}", i.start_s, i.end_s)
}

/// The human report of `hostbench net`.
pub fn text(o: &Outcome) -> String {
    let get = |n: &str| o.metric(n, None).map(|m| m.value);
    let test = o.spec.get("mode").and_then(|m| m.as_str()).unwrap_or("?");
    let peer = o.spec.get("peer").and_then(|m| m.as_str()).unwrap_or("?");
    let parallel = o.spec.get("parallel").and_then(|m| m.as_u64()).unwrap_or(1);
    let mut out = format!(
        "{test} to {peer}, {parallel} stream{} · {}\n",
        if parallel == 1 { "" } else { "s" },
        o.host.summary()
    );
    if o.interrupted {
        out += "INTERRUPTED: partial results\n";
    }
    out.push('\n');
    let line = |label: &str, value: String| format!("  {label:<22} {value}\n");
    if let Some(t) = get(names::THROUGHPUT) {
        out += &line(
            "throughput (receiver)",
            format!("{}   ({:.2} MB/s)", format_bits(t), t / 1e6),
        );
        if let Some(s) = get(names::SENDER_THROUGHPUT) {
            out += &line("sender", format_bits(s));
        }
    }
    if let Some(t) = get(names::TRANSACTIONS_PER_SEC) {
        out += &line(
            "transactions",
            format!("{} /s", crate::units::thousands(t, 2)),
        );
    }
    if let Some(lat) = &o.latency {
        let mut s = format!(
            "min {}  mean {}",
            format_ns(lat.min_ns),
            format_ns(lat.mean_ns)
        );
        for p in &lat.percentiles {
            s += &format!("  p{} {}", trim(p.p), format_ns(p.ns));
        }
        s += &format!("  max {}", format_ns(lat.max_ns));
        out += &line("round-trip latency", s);
    }
    for (name, label) in [
        ("retransmits", "TCP retransmits"),
        ("datagrams_sent", "datagrams sent"),
        ("datagrams_received", "datagrams received"),
        ("datagrams_lost", "datagrams lost"),
        ("transactions_lost", "transactions lost"),
    ] {
        if let Some(v) = get(name) {
            out += &line(label, crate::units::thousands(v, 0));
        }
    }
    if let Some(l) = get("loss_ratio") {
        out += &line("loss", format!("{:.2} %", l * 100.0));
    }
    out += &line(
        "CPU",
        format!(
            "local {:.1} % ({:.2} cores), remote {:.1} % ({:.2} cores)",
            get("local_cpu_percent").unwrap_or(0.0),
            get("local_cpu_cores").unwrap_or(0.0),
            get("remote_cpu_percent").unwrap_or(0.0),
            get("remote_cpu_cores").unwrap_or(0.0),
        ),
    );
    out += &line(
        "socket buffers",
        format!(
            "local send {} / recv {}, remote send {} / recv {} bytes",
            get("local_sndbuf").unwrap_or(0.0),
            get("local_rcvbuf").unwrap_or(0.0),
            get("remote_sndbuf").unwrap_or(0.0),
            get("remote_rcvbuf").unwrap_or(0.0),
        ),
    );
    out += &line("elapsed", format!("{:.2} s", o.elapsed_s));
    for n in &o.notes {
        out += &format!("  note: {n}\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits() {
        assert_eq!(format_bits(1.25e9), "10.00 Gbit/s");
        assert_eq!(format_bits(625_000.0), "5.00 Mbit/s");
        assert_eq!(format_bits(10.0), "80.00 bit/s");
    }
}

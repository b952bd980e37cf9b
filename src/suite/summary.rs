//! The closing summary of `hostbench run`: one line per area with its headline numbers
//! and a plain-language verdict. Lines are computed from the outcomes alone, so a
//! stored run (`hostbench show`) gets the same summary back; steps that failed or
//! could not run add their line from the run itself.

use crate::measure::stop_requested;
use crate::model::{Outcome, Tier};
use crate::units::format_bits;
use crate::units::format_ns;
use crate::units::thousands;
use crate::workload::net::outcome::names;
use serde::Serialize;

/// The areas in the order the summary lists them.
pub const AREAS: [&str; 6] = ["cpu", "memory", "disk", "network", "redis", "index"];

/// One line of the closing summary.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SummaryLine {
    pub area: String,
    pub headline: String,
    pub verdict: String,
    /// `ok`, `failed` (the step ran into an error; what it measured before is kept),
    /// `skipped` (it cannot run here; the verdict says why) or `interrupted`.
    pub status: Status,
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Failed,
    Skipped,
    Interrupted,
}

impl SummaryLine {
    fn ok(area: &str, headline: String, verdict: impl Into<String>) -> Self {
        SummaryLine {
            area: area.into(),
            headline,
            verdict: verdict.into(),
            status: Status::Ok,
        }
    }
}

/// A step that did not produce its area's result, as the run saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    pub area: &'static str,
    pub status: Status,
    pub message: String,
}

/// The summary of stored outcomes (nothing known about failed steps).
pub fn summarise(outcomes: &[Outcome]) -> Vec<SummaryLine> {
    summarise_with(outcomes, &[])
}

/// The summary of a run: the outcomes' lines, and a line for each area whose step
/// failed or was skipped (after the area's partial line, when it measured something).
pub fn summarise_with(outcomes: &[Outcome], problems: &[Problem]) -> Vec<SummaryLine> {
    let mut lines = Vec::new();
    for area in AREAS {
        if let Some(line) = area_line(area, outcomes) {
            lines.push(line);
        }
        for p in problems.iter().filter(|p| p.area == area) {
            lines.push(SummaryLine {
                area: area.into(),
                headline: match p.status {
                    Status::Skipped => "skipped".into(),
                    Status::Interrupted => "interrupted".into(),
                    _ => "failed".into(),
                },
                verdict: p.message.clone(),
                status: p.status,
            });
        }
    }
    if stop_requested() || outcomes.iter().any(|o| o.interrupted) {
        lines.push(SummaryLine {
            area: "run".into(),
            headline: "interrupted".into(),
            verdict: "steps after the interruption did not run".into(),
            status: Status::Interrupted,
        });
    }
    lines
}

fn area_line(area: &str, outcomes: &[Outcome]) -> Option<SummaryLine> {
    let of = |workload: &str| -> Vec<&Outcome> {
        outcomes.iter().filter(|o| o.workload == workload).collect()
    };
    match area {
        "cpu" => outcomes.iter().find(|o| o.workload == "cpu").map(cpu_line),
        "memory" => {
            let mode = |m: &str| {
                outcomes
                    .iter()
                    .find(|o| o.spec.get("mode").and_then(|v| v.as_str()) == Some(m))
            };
            let (bandwidth, latency) = (mode("bandwidth"), mode("latency"));
            (bandwidth.is_some() || latency.is_some()).then(|| memory_line(bandwidth, latency))
        }
        "disk" => Some(of("disk"))
            .filter(|d| !d.is_empty())
            .map(|d| disk_line(&d)),
        "network" => {
            let (net, ping) = (of("net"), of("ping"));
            (!net.is_empty() || !ping.is_empty()).then(|| network_line(&net, ping.first()))
        }
        "redis" => of("redis").first().map(|o| redis_line(o)),
        "index" => Some(of("index"))
            .filter(|i| !i.is_empty())
            .map(|i| index_line(&i)),
        _ => None,
    }
}

fn cpu_line(cpu: &Outcome) -> SummaryLine {
    let eps: Vec<_> = cpu
        .metrics
        .iter()
        .filter(|m| m.name == "events_per_sec")
        .map(|m| format!("{} threads {:.0} events/s", m.threads.unwrap_or(1), m.value))
        .collect();
    let scaling = cpu.metric("scaling_efficiency", None).map(|m| m.value);
    let mut headline = eps.join(", ").replacen("1 threads", "1 thread", 1);
    if let Some(s) = scaling {
        headline += &format!(", scaling {:.0} %", s * 100.0);
    }
    let verdict = match scaling {
        None => "single CPU: no scaling to judge",
        Some(s) if s >= 0.9 => "cores scale like dedicated cores",
        Some(s) if s >= 0.75 => {
            "cores scale with some contention (SMT siblings or light neighbours)"
        }
        Some(_) => "cores do not scale: shared or oversold vCPUs, or a busy host",
    };
    SummaryLine::ok("cpu", headline, verdict)
}

fn memory_line(bandwidth: Option<&Outcome>, latency: Option<&Outcome>) -> SummaryLine {
    let mut parts = Vec::new();
    let triad = bandwidth.and_then(|b| {
        b.metrics
            .iter()
            .find(|m| m.variant.as_deref() == Some("triad"))
    });
    if let Some(t) = triad {
        let threads = t.threads.unwrap_or(1);
        parts.push(format!(
            "triad {:.1} GB/s ({} threads, {:.1} GB/s each)",
            t.value / 1e9,
            threads,
            t.value / 1e9 / threads as f64
        ));
    }
    let dram_ns = latency.and_then(|l| {
        l.metrics
            .iter()
            .find(|m| m.working_set.is_some_and(|w| w.tier == Tier::Dram))
            .map(|m| m.value)
    });
    if let Some(ns) = dram_ns {
        parts.push(format!("DRAM latency {ns:.0} ns"));
    }
    let per_thread_gbs = triad.map(|t| t.value / 1e9 / t.threads.unwrap_or(1) as f64);
    let verdict = match (per_thread_gbs, dram_ns) {
        (_, Some(ns)) if ns > 150.0 => {
            "slow memory: high load latency (nested paging in a VM, a remote NUMA node, or a crowded host)"
        }
        (Some(g), _) if g < 3.0 => "low bandwidth per core: memory-heavy work will wait on DRAM",
        (Some(_), Some(ns)) if ns <= 110.0 => {
            "healthy: bandwidth and latency as expected of a server"
        }
        (Some(_), Some(_)) => "acceptable: latency a little above a typical server's",
        _ => "partial: only part of the memory tests ran",
    };
    SummaryLine::ok("memory", parts.join(", "), verdict)
}

fn disk_line(tests: &[&Outcome]) -> SummaryLine {
    let find = |test: &str, metric: &str| {
        tests
            .iter()
            .find(|o| o.spec.get("name").and_then(|n| n.as_str()) == Some(test))
            .and_then(|o| o.metric(metric, None))
            .map(|m| m.value)
    };
    let mut parts = Vec::new();
    if let Some(v) = find("randread", "read_iops") {
        parts.push(format!("4k random read {v:.0} IOPS"));
    }
    if let Some(v) = find("randwrite", "write_iops") {
        parts.push(format!("write {v:.0} IOPS"));
    }
    let qd1 = find("randread-qd1", "read_latency_p50");
    if let Some(ns) = qd1 {
        parts.push(format!("QD1 p50 {}", format_ns(ns)));
    }
    if let Some(v) = find("seqread", "read_bytes_per_sec") {
        parts.push(format!("seq read {:.0} MiB/s", v / 1048576.0));
    }
    if let Some(v) = find("seqwrite", "write_bytes_per_sec") {
        parts.push(format!("seq write {:.0} MiB/s", v / 1048576.0));
    }
    let fsync = find("fsync", "fsync_latency_p99");
    if let Some(ns) = fsync {
        parts.push(format!("fsync p99 {}", format_ns(ns)));
    }
    let verdict = match (qd1, fsync) {
        (Some(ns), _) if ns < 150_000.0 => "local-SSD-class latency",
        (Some(ns), Some(f)) if ns < 1_000_000.0 && f > 10_000_000.0 => {
            "network block storage; slow commits (fsync p99 above 10 ms)"
        }
        (Some(ns), _) if ns < 1_000_000.0 => "network block storage, typical of a cloud disk",
        (Some(_), _) => "slow: throttled, busy or HDD-class",
        (None, _) => "partial: only part of the disk tests ran",
    };
    SummaryLine::ok("disk", parts.join(", "), verdict)
}

fn network_line(tests: &[&Outcome], ping: Option<&&Outcome>) -> SummaryLine {
    let test = |mode: &str| {
        tests
            .iter()
            .find(|o| o.spec.get("mode").and_then(|m| m.as_str()) == Some(mode))
    };
    let value =
        |o: Option<&&Outcome>, name: &str| o.and_then(|o| o.metric(name, None)).map(|m| m.value);
    let peer = tests
        .iter()
        .chain(ping)
        .find_map(|o| {
            o.spec
                .get("peer")
                .or_else(|| o.spec.get("target"))
                .and_then(|p| p.as_str())
        })
        .unwrap_or("?");
    let loopback = peer
        .parse::<std::net::SocketAddr>()
        .map(|a| a.ip())
        .or_else(|_| peer.parse::<std::net::IpAddr>())
        .is_ok_and(|ip| ip.is_loopback());
    let mut parts = Vec::new();
    let throughput = value(test("TCP_STREAM"), names::THROUGHPUT);
    if let Some(t) = throughput {
        parts.push(format!("TCP {}", format_bits(t)));
    }
    let rr = test("TCP_RR");
    let rr_p50 = value(rr, "latency_p50");
    if let Some(t) = value(rr, names::TRANSACTIONS_PER_SEC) {
        let mut s = format!("TCP_RR {} trans/s", thousands(t, 0));
        if let (Some(p50), Some(p99)) = (rr_p50, value(rr, "latency_p99")) {
            s += &format!(" (p50 {}, p99 {})", format_ns(p50), format_ns(p99));
        }
        parts.push(s);
    }
    let connect = value(ping, "rtt_avg");
    if let Some(ns) = connect {
        parts.push(format!("connect RTT {}", format_ns(ns)));
    }
    let mut headline = parts.join(", ");
    headline += &if loopback {
        " (loopback)".to_string()
    } else {
        format!(" to {peer}")
    };
    let verdict = if loopback {
        "loopback: this host's network stack and CPU, not a network path (give --peer HOST to measure one)".to_string()
    } else {
        let link = throughput.map(|t| match t * 8.0 {
            b if b >= 20e9 => "a fast link (above 20 Gbit/s)",
            b if b >= 9e9 => "a 10 Gbit/s-class link",
            b if b >= 0.9e9 => "a 1 Gbit/s-class link",
            _ => "a slow path (below 1 Gbit/s): shaped, shared or long",
        });
        let rtt = rr_p50.or(connect).map(|ns| match ns {
            n if n < 200_000.0 => "peer close by (same zone)",
            n if n < 2_000_000.0 => "peer in the same region",
            n if n < 20_000_000.0 => "peer some distance away (another region)",
            _ => "distant peer (over the internet or another continent)",
        });
        match (link, rtt) {
            (Some(l), Some(r)) => format!("{l}, {r}"),
            (Some(l), None) => l.to_string(),
            (None, Some(r)) => r.to_string(),
            (None, None) => "partial: only part of the network tests ran".into(),
        }
    };
    SummaryLine::ok("network", headline, verdict)
}

fn redis_line(o: &Outcome) -> SummaryLine {
    let get = |n: &str| o.metric(n, None).map(|m| m.value);
    let connections = o.spec.get("connections").and_then(|c| c.as_u64());
    let mut parts = Vec::new();
    let ops = get("ops_per_sec");
    if let Some(v) = ops {
        let mut s = format!("{} ops/s", thousands(v, 0));
        if let Some(c) = connections {
            s += &format!(" (SET:GET 1:10, {c} connections)");
        }
        parts.push(s);
    }
    let p99 = get("latency_p99");
    for (label, v) in [("p50", get("latency_p50")), ("p99", p99)] {
        if let Some(ns) = v {
            parts.push(format!("{label} {}", format_ns(ns)));
        }
    }
    let verdict = match (ops, p99) {
        (_, Some(p)) if p > 10_000_000.0 => {
            "latency spikes (p99 above 10 ms): a busy CPU, steal, or the server is far away"
        }
        (Some(v), _) if v < 20_000.0 => {
            "slow: under 20,000 requests/s where a server core does 50,000 or more"
        }
        (Some(_), Some(p)) if p <= 2_000_000.0 => {
            "healthy: a Redis instance here serves requests quickly"
        }
        (Some(_), Some(_)) => "acceptable: throughput fine, p99 a little high",
        _ => "partial: no requests were answered",
    };
    SummaryLine::ok("redis", parts.join(", "), verdict)
}

/// The index's outcomes: one per copy count.
fn index_line(outcomes: &[&Outcome]) -> SummaryLine {
    let o = outcomes[0];
    let scores: Vec<(usize, f64)> = outcomes
        .iter()
        .flat_map(|o| &o.metrics)
        .filter(|m| m.name == "index_score")
        .map(|m| (m.threads.unwrap_or(1), m.value))
        .collect();
    let quick = o.spec.get("quick").and_then(|q| q.as_bool()) == Some(true);
    let mut headline = scores
        .iter()
        .map(|(c, s)| format!("{c} {} {s:.1}", if *c == 1 { "copy" } else { "copies" }))
        .collect::<Vec<_>>()
        .join(", ");
    if quick {
        headline += " (quick mode)";
    }
    // UnixBench 5.1.3 scores of one copy on current server cores are about 1000–2500.
    let single = scores.iter().find(|(c, _)| *c == 1).map(|(_, s)| *s);
    // Without a one-copy figure, the score per copy stands in for it (roughly).
    let per_copy = single.or(scores.first().map(|(c, s)| s / (*c).max(1) as f64));
    let mut verdict = match per_copy {
        None => "partial: no index was computed".to_string(),
        Some(s) if s >= 1500.0 => "fast system calls, processes and pipes for a server".into(),
        Some(s) if s >= 700.0 => "typical of a cloud vCPU".into(),
        Some(_) => "slow: old cores, heavy steal or a busy host".into(),
    };
    if quick {
        verdict += "; quick mode figures are rough, not comparable with full runs";
    }
    SummaryLine::ok("index", headline, verdict)
}

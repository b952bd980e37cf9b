//! The closing summary of `hostbench run`: one line per area with its headline numbers
//! and a plain-language verdict. Lines are computed from the outcomes and the steps
//! that did not give their result (`StepProblem`, kept with the run), nothing else,
//! so a stored run (`hostbench show`) gets the summary back that the run printed.

use crate::model::{Outcome, Tier};
use crate::store::{StepProblem, StepStatus, StoredRun};
use crate::units::format_bits;
use crate::units::format_ns;
use crate::units::format_rate;
use crate::units::thousands;
use crate::workload::net::outcome::names;
use serde::Serialize;

/// The areas in the order the summary lists them.
pub const AREAS: [&str; 6] = ["cpu", "memory", "disk", "network", "redis", "index"];

/// The area of a problem that is the job's own (interrupted between steps).
pub const RUN: &str = "run";

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

impl From<StepStatus> for Status {
    fn from(s: StepStatus) -> Self {
        match s {
            StepStatus::Failed => Status::Failed,
            StepStatus::Skipped => Status::Skipped,
            StepStatus::Interrupted => Status::Interrupted,
        }
    }
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

    fn problem(p: &StepProblem) -> Self {
        SummaryLine {
            area: p.area.clone(),
            headline: p.status.as_str().into(),
            verdict: p.reason.clone(),
            status: p.status.into(),
        }
    }
}

/// A step that did not produce its area's result, as the run saw it.
pub type Problem = StepProblem;

/// The job interrupted by Ctrl-C: its own line, after the areas.
pub fn interrupted() -> StepProblem {
    StepProblem {
        step: RUN.into(),
        area: RUN.into(),
        status: StepStatus::Interrupted,
        reason: "steps after the interruption did not run".into(),
    }
}

/// The summary of outcomes alone (nothing known about steps that gave none).
pub fn summarise(outcomes: &[Outcome]) -> Vec<SummaryLine> {
    summarise_with(outcomes, &[])
}

/// The summary a stored run printed.
pub fn stored(run: &StoredRun) -> Vec<SummaryLine> {
    summarise_with(&run.outcomes, &run.problems)
}

/// `Summary (quick profile)`: the profile as `--profile` takes it.
pub fn heading(profile: Option<&str>) -> String {
    format!("Summary ({} profile)", profile.unwrap_or("?"))
}

/// The summary of a run: the outcomes' lines, and a line for each area whose step
/// failed or was skipped (after the area's partial line, when it measured something);
/// last, the job's interruption (kept as a problem, or seen in an outcome of a run
/// saved before problems were kept).
pub fn summarise_with(outcomes: &[Outcome], problems: &[StepProblem]) -> Vec<SummaryLine> {
    let mut lines = Vec::new();
    for area in AREAS {
        if let Some(line) = area_line(area, outcomes) {
            lines.push(line);
        }
        for p in problems.iter().filter(|p| p.area == area) {
            lines.push(SummaryLine::problem(p));
        }
    }
    let mut run: Vec<SummaryLine> = problems
        .iter()
        .filter(|p| !AREAS.contains(&p.area.as_str()))
        .map(SummaryLine::problem)
        .collect();
    if run.is_empty() && outcomes.iter().any(|o| o.interrupted) {
        run.push(SummaryLine::problem(&interrupted()));
    }
    lines.extend(run);
    lines
}

/// The summary's last line when an area was not measured: `Not measured: redis
/// (skipped), network (failed).` (each line's verdict says why and what to do).
pub fn not_measured(lines: &[SummaryLine]) -> Option<String> {
    let missing: Vec<String> = lines
        .iter()
        .filter(|l| matches!(l.status, Status::Skipped | Status::Failed) && l.area != RUN)
        .map(|l| {
            let word = if l.status == Status::Skipped {
                "skipped"
            } else {
                "failed"
            };
            format!("{} ({word})", l.area)
        })
        .collect();
    (!missing.is_empty()).then(|| format!("Not measured: {}.", missing.join(", ")))
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
        // In the unit the metric table prints (format_value): one unit per metric.
        parts.push(format!(
            "triad {} ({} threads, {} each)",
            format_rate(t.value),
            threads,
            format_rate(t.value / threads as f64)
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
        parts.push(format!("seq read {}", format_rate(v)));
    }
    if let Some(v) = find("seqwrite", "write_bytes_per_sec") {
        parts.push(format!("seq write {}", format_rate(v)));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::HostInfo;
    use crate::model::{Metric, Unit};

    fn cpu() -> Outcome {
        let mut o = Outcome::new("cpu", serde_json::json!({}), HostInfo::default());
        o.push(Metric::new("events_per_sec", 1000.0, Unit::EventsPerSec).threads(1));
        o
    }

    fn skipped_redis() -> StepProblem {
        StepProblem {
            step: "redis".into(),
            area: "redis".into(),
            status: StepStatus::Skipped,
            reason: "redis-server not installed: install it, or give --redis URL".into(),
        }
    }

    /// A stored run's summary is the one its run printed: the skipped step's line in
    /// its area's place, the interruption last, and the closing line naming what was
    /// not measured.
    #[test]
    fn problems_make_their_lines_in_order() {
        let outcomes = [cpu()];
        let lines = summarise_with(&outcomes, &[interrupted(), skipped_redis()]);
        let got: Vec<(&str, &str, Status)> = lines
            .iter()
            .map(|l| (l.area.as_str(), l.headline.as_str(), l.status))
            .collect();
        assert_eq!(
            got,
            [
                ("cpu", lines[0].headline.as_str(), Status::Ok),
                ("redis", "skipped", Status::Skipped),
                ("run", "interrupted", Status::Interrupted),
            ]
        );
        assert_eq!(lines[1].verdict, skipped_redis().reason);
        assert_eq!(
            not_measured(&lines).as_deref(),
            Some("Not measured: redis (skipped).")
        );
        assert_eq!(not_measured(&summarise(&outcomes)), None);
    }

    /// Runs saved before problems were kept: an interrupted outcome still gives the
    /// run's line, once.
    #[test]
    fn an_interrupted_outcome_gives_one_run_line() {
        let mut o = cpu();
        o.interrupted = true;
        for problems in [vec![], vec![interrupted()]] {
            let lines = summarise_with(std::slice::from_ref(&o), &problems);
            assert_eq!(lines.iter().filter(|l| l.area == RUN).count(), 1);
        }
    }

    #[test]
    fn heading_names_the_profile_as_typed() {
        assert_eq!(heading(Some("quick")), "Summary (quick profile)");
    }
}

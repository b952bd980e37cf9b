//! A native run's `Outcome`: throughput, latency (corrected, and uncorrected beside
//! it in open-loop runs), per-command figures, the per-second timeline and notes.

use super::load::{LoadResult, LoadSpec};
use crate::host::HostInfo;
use crate::measure::cputime::CpuTime;
use crate::measure::histogram::Histogram;
use crate::model::{CpuUse, Latency, Metric, Outcome, Percentile, Sample, Unit};
use std::collections::BTreeMap;

pub const PERCENTILES: [f64; 6] = [50.0, 90.0, 95.0, 99.0, 99.9, 99.99];

pub fn build(spec: &LoadSpec, result: &LoadResult, cpu: CpuTime, host: HostInfo) -> Outcome {
    let spec_json = serde_json::to_value(spec).unwrap_or_default();
    let mut o = Outcome::new("redis", spec_json, host);
    let m = &result.measured;
    let secs = result.elapsed.as_secs_f64().max(1e-9);
    let count = m.count();
    o.elapsed_s = result.elapsed.as_secs_f64();
    o.interrupted = result.interrupted;
    o.cpu_time = CpuUse {
        user_s: cpu.user_s,
        system_s: cpu.system_s,
        utilisation: cpu.utilisation(result.elapsed + spec.warmup),
    };
    o.push(Metric::new(
        "ops_per_sec",
        count as f64 / secs,
        Unit::OpsPerSec,
    ));
    o.push(Metric::new("operations", count as f64, Unit::Count));
    if let Some(rate) = spec.rate {
        o.push(Metric::new("target_ops_per_sec", rate, Unit::OpsPerSec));
    }
    for p in [50.0, 99.0, 99.9] {
        if let Some(ns) = m.corrected.percentile_ns(p) {
            o.push(Metric::new(
                &format!("latency_p{}", pct(p)),
                ns,
                Unit::Nanoseconds,
            ));
        }
    }
    if m.max_ns > 0 {
        o.push(Metric::new(
            "latency_max",
            m.max_ns as f64,
            Unit::Nanoseconds,
        ));
    }
    if spec.rate.is_some() {
        for p in [50.0, 99.0, 99.9] {
            if let Some(ns) = m.uncorrected.percentile_ns(p) {
                o.push(Metric::new(
                    &format!("uncorrected_latency_p{}", pct(p)),
                    ns,
                    Unit::Nanoseconds,
                ));
            }
        }
        o.push(Metric::new(
            "uncorrected_latency_max",
            m.uncorrected_max_ns as f64,
            Unit::Nanoseconds,
        ));
    }
    if spec.mix.len() > 1 {
        for (mix, (n, h)) in spec.mix.iter().zip(&m.per_command) {
            let name = mix
                .command
                .split_whitespace()
                .next()
                .unwrap_or("")
                .to_uppercase();
            o.push(Metric::new("ops_per_sec", *n as f64 / secs, Unit::OpsPerSec).variant(&name));
            if let Some(ns) = h.percentile_ns(99.0) {
                o.push(Metric::new("latency_p99", ns, Unit::Nanoseconds).variant(&name));
            }
        }
    }
    if count > 0 {
        o.push(Metric::new(
            "cpu_per_op",
            (cpu.user_s + cpu.system_s) * 1e9 / count as f64,
            Unit::Nanoseconds,
        ));
    }
    o.latency = Some(latency(&m.corrected, m.min_ns, m.max_ns, m.sum_ns));

    let whole = result.elapsed.as_secs() as usize;
    o.series = m
        .timeline
        .iter()
        .take(whole.max(1))
        .enumerate()
        .filter(|(i, _)| *i < whole || result.elapsed.as_secs_f64() >= (*i + 1) as f64)
        .map(|(i, &(n, sum))| {
            let mut values = BTreeMap::new();
            values.insert("ops_per_sec".into(), n as f64);
            if n > 0 {
                values.insert("mean_latency_ns".into(), sum as f64 / n as f64);
            }
            Sample {
                at_s: (i + 1) as f64,
                span_s: 1.0,
                values,
            }
        })
        .collect();

    if spec.rate.is_some() {
        o.note(
            "open loop: latency is timed from when each request was due on the schedule \
             (corrected for coordinated omission); uncorrected_* figures time it from the actual write",
        );
        if m.never_sent > 0 {
            o.note(format!(
                "{} requests fell due but could not be sent before the end (window full): counted with the wait they had",
                m.never_sent
            ));
        }
        if let Some(rate) = spec.rate
            && (count as f64 / secs) < rate * 0.95
        {
            o.note(format!(
                "the target rate of {rate:.0}/s was not reached: the server or the client could not keep up; latency shows the queueing"
            ));
        }
    } else {
        o.note(format!(
            "closed loop: {} connections, {} request(s) in flight each; latency per request from write to reply",
            spec.connections, spec.pipeline
        ));
    }
    if let Some(c) = &spec.cluster {
        o.push(Metric::new("redirects", m.redirects as f64, Unit::Count));
        o.note(format!(
            "cluster: {} masters; each connection holds a socket to every master and sends each request to the owner of its key's slot",
            c.masters.len()
        ));
        if m.redirects > 0 {
            o.note(format!(
                "{} requests were redirected (MOVED/ASK: slots were moving) and are not counted as operations",
                m.redirects
            ));
        }
    }
    if m.unanswered > 0 {
        o.note(format!(
            "{} requests got no reply within the drain time after the end",
            m.unanswered
        ));
    }
    if result.interrupted {
        o.note("interrupted: the run was stopped early; figures cover the part that ran");
    }
    o
}

fn pct(p: f64) -> String {
    if p.fract() == 0.0 {
        format!("{p:.0}")
    } else {
        format!("{p}")
    }
}

fn latency(h: &Histogram, min: u64, max: u64, sum: u128) -> Latency {
    let count = h.total();
    Latency {
        count,
        min_ns: if count > 0 { min as f64 } else { 0.0 },
        mean_ns: if count > 0 {
            sum as f64 / count as f64
        } else {
            0.0
        },
        max_ns: max as f64,
        sum_ns: sum as f64,
        percentiles: PERCENTILES
            .iter()
            .map(|&p| Percentile {
                p,
                ns: h.percentile_ns(p).unwrap_or(0.0),
            })
            .collect(),
        layout: h.layout,
        buckets: h.nonempty().collect(),
    }
}

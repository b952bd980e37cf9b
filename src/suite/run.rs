//! `hostbench run`: the whole evaluation of this host, step by step, ending with one
//! line per area and a plain-language verdict. Areas come in as their workloads land
//! (today: CPU and memory).

use crate::measure::histogram::Layout;
use crate::measure::runner::{Observer, RunOptions};
use crate::measure::stop_requested;
use crate::model::{Outcome, Tier};
use crate::workload::SpecError;
use crate::workload::cpu::{self, CpuSpec};
use crate::workload::disk::{self, DiskError, DiskSpec, STANDARD};
use crate::workload::memory::bandwidth::{self, BandwidthSpec};
use crate::workload::memory::block::{self, Access, BlockSpec, Oper, Scope};
use crate::workload::memory::latency::{self, LatencySpec};
use serde::Serialize;
use std::path::PathBuf;
use std::time::Duration;
use thiserror::Error;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// Under a minute: short measurements, enough for a first look.
    Quick,
    /// A few minutes: the figures to compare hosts with.
    Standard,
    /// About half an hour: long measurements that show throttling and noisy neighbours.
    Full,
}

/// One step of the job, ready to run.
pub enum Step {
    Cpu(CpuSpec),
    Bandwidth(BandwidthSpec),
    Latency(LatencySpec),
    Block(BlockSpec),
    Disk(DiskSpec),
}

#[derive(Debug, Error)]
pub enum StepError {
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error(transparent)]
    Disk(#[from] DiskError),
}

/// Where the job may write its disk test files.
pub struct Options {
    pub profile: Profile,
    pub cpus: usize,
    pub dir: PathBuf,
}

impl Step {
    pub fn label(&self) -> &'static str {
        match self {
            Step::Cpu(_) => "cpu",
            Step::Bandwidth(_) => "bandwidth",
            Step::Latency(_) => "latency",
            Step::Block(_) => "mem-block",
            Step::Disk(_) => "disk",
        }
    }

    /// Roughly how long the step takes, for the progress bar.
    pub fn estimate(&self) -> Duration {
        match self {
            Step::Cpu(s) => s.run.time.unwrap_or_default() * s.threads.len() as u32,
            Step::Bandwidth(s) => Duration::from_millis(150) * s.iterations as u32,
            Step::Latency(s) => s.time_per_size * 4 + Duration::from_secs(1),
            Step::Block(s) => s.run.time.unwrap_or_default(),
            Step::Disk(s) => s.tests.iter().map(|t| t.job.runtime + t.job.ramp).sum(),
        }
    }

    pub fn run(&self, observer: &dyn Observer) -> Result<Vec<Outcome>, StepError> {
        Ok(match self {
            Step::Cpu(s) => vec![cpu::run(s, observer)?],
            Step::Bandwidth(s) => vec![bandwidth::run(s, observer)?],
            Step::Latency(s) => vec![latency::run(s, observer)?],
            Step::Block(s) => vec![block::run(s, observer)?],
            Step::Disk(s) => {
                let per_test: Vec<Duration> =
                    s.tests.iter().map(|t| t.job.runtime + t.job.ramp).collect();
                disk::run(s, &|i, d| {
                    observer.tick(per_test[..i].iter().sum::<Duration>() + d, 0)
                })?
            }
        })
    }
}

pub fn plan(options: &Options) -> Vec<Step> {
    let (profile, cpus) = (options.profile, options.cpus);
    let (cpu_time, iterations, latency_time) = match profile {
        Profile::Quick => (Duration::from_secs(5), 4, Duration::from_millis(300)),
        Profile::Standard => (Duration::from_secs(30), 10, Duration::from_secs(1)),
        Profile::Full => (Duration::from_secs(300), 20, Duration::from_secs(5)),
    };
    let run = |time| RunOptions {
        time: Some(time),
        events: None,
        report_interval: Some(Duration::from_secs(1)),
        layout: Layout::NATIVE,
    };
    let mut steps = vec![
        Step::Cpu(CpuSpec {
            run: run(cpu_time),
            threads: if cpus > 1 { vec![1, cpus] } else { vec![1] },
            max_prime: 10_000,
            percentiles: vec![],
        }),
        Step::Bandwidth(BandwidthSpec {
            threads: cpus,
            array_bytes: None,
            iterations,
        }),
        Step::Latency(LatencySpec {
            sizes: vec![],
            time_per_size: latency_time,
            seed: None,
        }),
    ];
    let (disk_size, disk_runtime, disk_ramp) = match profile {
        Profile::Quick => (256 << 20, Duration::from_secs(3), Duration::from_secs(1)),
        Profile::Standard => (2 << 30, Duration::from_secs(20), Duration::from_secs(3)),
        Profile::Full => (8 << 30, Duration::from_secs(60), Duration::from_secs(5)),
    };
    steps.push(Step::Disk(DiskSpec {
        dir: options.dir.clone(),
        size: disk_size,
        tests: STANDARD
            .iter()
            .filter_map(|name| disk::standard_test(name, disk_runtime, disk_ramp, None, true))
            .collect(),
    }));
    if profile != Profile::Quick {
        // The two sysbench memory figures the guides quote, for readers who compare.
        for (oper, access) in [(Oper::Read, Access::Rnd), (Oper::Write, Access::Seq)] {
            steps.push(Step::Block(BlockSpec {
                run: run(cpu_time / 3),
                threads: 1,
                block_size: 8 << 10,
                total_size: 0,
                oper,
                access,
                scope: Scope::Global,
                hugetlb: false,
                seed: None,
                percentiles: vec![],
            }));
        }
    }
    steps
}

/// One line of the closing summary.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SummaryLine {
    pub area: String,
    pub headline: String,
    pub verdict: String,
}

pub fn summarise(outcomes: &[Outcome]) -> Vec<SummaryLine> {
    let mut lines = Vec::new();
    if let Some(cpu) = outcomes.iter().find(|o| o.workload == "cpu") {
        lines.push(cpu_line(cpu));
    }
    let bandwidth = outcomes
        .iter()
        .find(|o| o.spec.get("mode").and_then(|m| m.as_str()) == Some("bandwidth"));
    let latency = outcomes
        .iter()
        .find(|o| o.spec.get("mode").and_then(|m| m.as_str()) == Some("latency"));
    if bandwidth.is_some() || latency.is_some() {
        lines.push(memory_line(bandwidth, latency));
    }
    let disk: Vec<&Outcome> = outcomes.iter().filter(|o| o.workload == "disk").collect();
    if !disk.is_empty() {
        lines.push(disk_line(&disk));
    }
    if stop_requested() {
        lines.push(SummaryLine {
            area: "run".into(),
            headline: "interrupted".into(),
            verdict: "steps after the interruption did not run".into(),
        });
    }
    lines
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
        None => "single CPU: no scaling to judge".into(),
        Some(s) if s >= 0.9 => "cores scale like dedicated cores".into(),
        Some(s) if s >= 0.75 => {
            "cores scale with some contention (SMT siblings or light neighbours)".into()
        }
        Some(_) => "cores do not scale: shared or oversold vCPUs, or a busy host".into(),
    };
    SummaryLine {
        area: "cpu".into(),
        headline,
        verdict,
    }
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
    SummaryLine {
        area: "memory".into(),
        headline: parts.join(", "),
        verdict: verdict.into(),
    }
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
        parts.push(format!("QD1 p50 {}", crate::units::format_ns(ns)));
    }
    if let Some(v) = find("seqread", "read_bytes_per_sec") {
        parts.push(format!("seq read {:.0} MiB/s", v / 1048576.0));
    }
    if let Some(v) = find("seqwrite", "write_bytes_per_sec") {
        parts.push(format!("seq write {:.0} MiB/s", v / 1048576.0));
    }
    let fsync = find("fsync", "fsync_latency_p99");
    if let Some(ns) = fsync {
        parts.push(format!("fsync p99 {}", crate::units::format_ns(ns)));
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
    SummaryLine {
        area: "disk".into(),
        headline: parts.join(", "),
        verdict: verdict.into(),
    }
}

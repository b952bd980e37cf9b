//! `hostbench run`: the whole evaluation of this host, step by step — CPU, memory,
//! disk, network, Redis and the UnixBench-style index — ending with one line per area
//! and a plain-language verdict (`summary.rs`).

use super::net_step::{self, NetPlan, Peer};
use super::redis_step::{self, RedisPlan, RedisStepError};
use super::redis_url::RedisUrl;
use crate::measure::histogram::Layout;
use crate::model::Outcome;
use crate::workload::SpecError;
use crate::workload::cpu::{self, CpuSpec};
use crate::workload::disk::{self, DiskError, DiskSpec, STANDARD};
use crate::workload::memory::bandwidth::{self, BandwidthSpec};
use crate::workload::memory::block::{self, Access, BlockSpec, Oper, Scope};
use crate::workload::memory::latency::{self, LatencySpec};
use crate::workload::runner::{Observer, RunOptions};
use crate::workload::unixbench::{self, UnixbenchSpec, catalogue};
use serde::Serialize;
use std::path::PathBuf;
use std::time::Duration;
use thiserror::Error;

pub use super::summary::{
    Problem, Status, SummaryLine, heading, interrupted, not_measured, stored, summarise,
    summarise_with,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// About 90 seconds on a 2-core host: short measurements, enough for a first look
    /// (the index in quick mode: rough, not comparable with full runs).
    Quick,
    /// About 10 minutes: the figures to compare hosts with.
    Standard,
    /// About an hour: long measurements that show throttling and noisy neighbours.
    Full,
}

impl Profile {
    /// The name `--profile` takes, which the store keeps and the summary prints.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Quick => "quick",
            Profile::Standard => "standard",
            Profile::Full => "full",
        }
    }
}

/// One step of the job, ready to run.
pub enum Step {
    Cpu(CpuSpec),
    Bandwidth(BandwidthSpec),
    Latency(LatencySpec),
    Block(BlockSpec),
    Disk(DiskSpec),
    Net(NetPlan),
    Redis(RedisPlan),
    Index(UnixbenchSpec),
}

#[derive(Debug, Error)]
pub enum StepError {
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error(transparent)]
    Disk(#[from] DiskError),
    /// The step ran into an error; what it measured before is kept.
    #[error("{message}")]
    Failed { message: String, kept: Vec<Outcome> },
    /// The step cannot run on this host; nothing is wrong with the run.
    #[error("{0}")]
    Unavailable(String),
}

/// What the job is asked to do.
pub struct Options {
    pub profile: Profile,
    pub cpus: usize,
    /// Where the disk and index steps make their (removed afterwards) files.
    pub dir: PathBuf,
    /// `--peer`: a `hostbench net serve` elsewhere; None = an in-process one on loopback.
    pub peer: Option<Peer>,
    /// `--redis`: the URL as given (for messages) and parsed; None = start redis-server.
    pub redis: Option<(String, RedisUrl)>,
}

impl Step {
    pub fn label(&self) -> &'static str {
        match self {
            Step::Cpu(_) => "cpu",
            Step::Bandwidth(_) => "bandwidth",
            Step::Latency(_) => "latency",
            Step::Block(_) => "mem-block",
            Step::Disk(_) => "disk",
            Step::Net(_) => "network",
            Step::Redis(_) => "redis",
            Step::Index(_) => "index",
        }
    }

    /// The summary area the step reports under.
    pub fn area(&self) -> &'static str {
        match self {
            Step::Cpu(_) => "cpu",
            Step::Bandwidth(_) | Step::Latency(_) | Step::Block(_) => "memory",
            other => other.label(),
        }
    }

    /// Roughly how long the step takes, for the progress bar.
    pub fn estimate(&self) -> Duration {
        match self {
            Step::Cpu(s) => s.run.time.unwrap_or_default() * s.threads.len() as u32,
            Step::Bandwidth(s) => s
                .time
                .unwrap_or(Duration::from_millis(150) * s.iterations.unwrap_or(1) as u32),
            Step::Latency(s) => s.time_per_size * 4 + Duration::from_secs(1),
            Step::Block(s) => s.run.time.unwrap_or_default(),
            Step::Disk(s) => s.tests.iter().map(|t| t.job.runtime + t.job.ramp).sum(),
            Step::Net(p) => p.estimate(),
            Step::Redis(p) => p.estimate(),
            Step::Index(s) => index_estimate(s),
        }
    }

    pub fn run(&self, observer: &dyn Observer) -> Result<Vec<Outcome>, StepError> {
        Ok(match self {
            Step::Cpu(s) => vec![cpu::run(s, observer)?],
            Step::Bandwidth(s) => vec![bandwidth::run(s, observer)?],
            Step::Latency(s) => vec![latency::run(s, observer)?],
            Step::Block(s) => vec![block::run(s, observer)?],
            Step::Disk(s) => disk::run(s, observer)?,
            Step::Net(p) => net_step::run(p, observer).map_err(|f| StepError::Failed {
                message: f.message,
                kept: f.kept,
            })?,
            Step::Redis(p) => match redis_step::run(p, observer) {
                Ok(o) => vec![o],
                Err(RedisStepError::Unavailable(why)) => return Err(StepError::Unavailable(why)),
                Err(RedisStepError::Failed(message)) => {
                    return Err(StepError::Failed {
                        message,
                        kept: vec![],
                    });
                }
            },
            Step::Index(s) => run_index(s, observer)?,
        })
    }
}

/// The index, one outcome per copy count (its progress follows the clock: the
/// programs run as child processes).
fn run_index(spec: &UnixbenchSpec, observer: &dyn Observer) -> Result<Vec<Outcome>, StepError> {
    let result = unixbench::run(spec, observer).map_err(|e| match e {
        unixbench::RunError::Spec(s) => StepError::Spec(s),
        other => StepError::Failed {
            message: other.to_string(),
            kept: vec![],
        },
    })?;
    Ok(unixbench::outcome::to_outcomes(
        spec,
        &result,
        crate::host::HostInfo::detect(),
    ))
}

/// Programs' run time, passes and UnixBench's settling pauses between passes.
fn index_estimate(spec: &UnixbenchSpec) -> Duration {
    let per_copy_count: f64 = spec
        .tests
        .iter()
        .filter_map(|n| catalogue::by_name(n))
        .map(|t| {
            let passes = spec.passes(&t) as f64;
            let settle = if spec.quick { 0.0 } else { 3.0 };
            passes * (spec.seconds(&t) + settle + 0.1)
        })
        .sum();
    Duration::from_secs_f64(per_copy_count * spec.copies.len() as f64)
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
            iterations: Some(iterations),
            time: None,
        }),
        Step::Latency(LatencySpec {
            sizes: vec![],
            time_per_size: latency_time,
            seed: None,
        }),
    ];
    if profile != Profile::Quick {
        // The two sysbench memory figures the guides quote, for readers who compare
        // (with the other memory steps, so the areas come in the summary's order).
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
    let (net_time, pings, redis_time, redis_warmup) = match profile {
        Profile::Quick => (
            Duration::from_secs(2),
            20,
            Duration::from_secs(2),
            Duration::from_millis(500),
        ),
        Profile::Standard => (
            Duration::from_secs(10),
            100,
            Duration::from_secs(10),
            Duration::from_secs(2),
        ),
        Profile::Full => (
            Duration::from_secs(60),
            600,
            Duration::from_secs(60),
            Duration::from_secs(5),
        ),
    };
    steps.push(Step::Net(NetPlan {
        peer: options.peer.clone(),
        test_time: net_time,
        pings,
        ping_interval: Duration::from_millis(50),
    }));
    steps.push(Step::Redis(RedisPlan {
        url: options.redis.clone(),
        duration: redis_time,
        warmup: redis_warmup,
        cpus,
    }));
    steps.push(Step::Index(index_spec(options)));
    steps
}

/// Quick: every test for half a second, one pass, labelled not comparable. Standard:
/// UnixBench's durations, one pass each, all CPUs' copies only (the one-copy figure
/// would double the step's time; the CPU step has single-thread figures). Full:
/// UnixBench's durations, `-i 6` (6 passes of the long tests, 2 of the short ones;
/// UnixBench's 10 and 3 would take 50 minutes on their own), 1 copy and all.
fn index_spec(options: &Options) -> UnixbenchSpec {
    let cpus = options.cpus.max(1);
    let both = if cpus > 1 { vec![1, cpus] } else { vec![1] };
    let (copies, iterations, quick, seconds) = match options.profile {
        Profile::Quick => (both, Some(1), true, Some(0.5)),
        Profile::Standard => (vec![cpus], Some(1), false, None),
        Profile::Full => (both, Some(6), false, None),
    };
    let tests = catalogue::expand("index")
        .expect("the index group exists")
        .iter()
        .map(|t| t.name)
        .collect();
    UnixbenchSpec {
        tests,
        copies,
        iterations,
        quick,
        seconds,
        dir: options.dir.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn planned(profile: Profile) -> Duration {
        plan(&Options {
            profile,
            cpus: 2,
            dir: std::env::temp_dir(),
            peer: None,
            redis: None,
        })
        .iter()
        .map(Step::estimate)
        .sum()
    }

    /// The profiles' promised lengths on a 2-core host, from the planned step times
    /// (the quick profile's real wall time is measured by hand: README).
    #[test]
    fn profiles_plan_their_promised_lengths() {
        let minutes = |p| planned(p).as_secs_f64() / 60.0;
        assert!(
            planned(Profile::Quick) < Duration::from_secs(80),
            "{:?}",
            planned(Profile::Quick)
        );
        assert!(
            (8.0..13.0).contains(&minutes(Profile::Standard)),
            "{}",
            minutes(Profile::Standard)
        );
        assert!(
            (50.0..70.0).contains(&minutes(Profile::Full)),
            "{}",
            minutes(Profile::Full)
        );
    }

    /// The name the store keeps and the summary prints is the one `--profile` takes.
    #[test]
    fn profile_names_are_the_ones_clap_takes() {
        use clap::ValueEnum;
        for p in Profile::value_variants() {
            assert_eq!(p.to_possible_value().unwrap().get_name(), p.name());
        }
    }

    #[test]
    fn every_area_has_a_step_in_every_profile() {
        for profile in [Profile::Quick, Profile::Standard, Profile::Full] {
            let steps = plan(&Options {
                profile,
                cpus: 2,
                dir: std::env::temp_dir(),
                peer: None,
                redis: None,
            });
            let mut areas: Vec<_> = steps.iter().map(Step::area).collect();
            areas.dedup();
            assert_eq!(areas, super::super::summary::AREAS, "{profile:?}");
            let Some(Step::Index(index)) = steps.last() else {
                panic!("the index is the last step");
            };
            assert_eq!(index.quick, profile == Profile::Quick);
        }
    }
}

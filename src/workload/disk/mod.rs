//! Disk: what a cloud disk really delivers, measured on files hostbench creates in a
//! directory of its own under `--dir`. Direct I/O, time-based with a ramp, random
//! data, and a per-second timeline (burst credits running out show as a cliff).
//! Every result notes what would make it untrue: page cache, a RAM-backed file
//! system, the file system and device, the engine that ran.

pub mod engine;
pub mod fileio;
pub mod files;
pub mod job;

use crate::host::HostInfo;
use crate::measure::stop_requested;
use crate::model::{CpuUse, Latency, Metric, Outcome, Percentile, Sample, Unit};
use crate::units::format_bytes;
use crate::workload::SpecError;
use engine::EngineKind;
use files::{FileError, TestDir};
use job::{DirStats, JobError, JobResult, JobSpec, Pattern};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;
use thiserror::Error;

/// One named test of a disk run.
#[derive(Debug, Clone, Serialize)]
pub struct DiskTest {
    pub name: String,
    pub job: JobSpec,
}

#[derive(Debug, Clone, Serialize)]
pub struct DiskSpec {
    /// The directory under which hostbench makes its own test directory.
    pub dir: PathBuf,
    /// Size of the test file.
    pub size: u64,
    pub tests: Vec<DiskTest>,
}

#[derive(Debug, Error)]
pub enum DiskError {
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error(transparent)]
    File(#[from] FileError),
    #[error(transparent)]
    Job(#[from] JobError),
}

/// Checks that test files can go under `dir` (a directory of ours is made there and
/// removed again), so a command that measures other things first (`hostbench run`)
/// can refuse an unusable `--dir` before it spends minutes on them.
pub fn check_dir(dir: &std::path::Path) -> Result<(), DiskError> {
    TestDir::create(dir).map(drop).map_err(DiskError::File)
}

impl DiskError {
    /// Bad input (2) or a run that failed (1).
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            DiskError::Spec(_)
                | DiskError::File(FileError::Unusable { .. } | FileError::NoDirect { .. })
        )
    }
}

/// The names of the standard set, in the order they run.
pub const STANDARD: [&str; 7] = [
    "randread",
    "randwrite",
    "randread-qd1",
    "seqread",
    "seqwrite",
    "mixed",
    "fsync",
];

/// The standard set a cloud user needs, with the given duration, ramp and engine.
pub fn standard_test(
    name: &str,
    runtime: Duration,
    ramp: Duration,
    engine: Option<EngineKind>,
    direct: bool,
) -> Option<DiskTest> {
    let (pattern, bs, iodepth) = match name {
        "randread" => (Pattern::RandRead, 4096, 32),
        "randwrite" => (Pattern::RandWrite, 4096, 32),
        "randread-qd1" => (Pattern::RandRead, 4096, 1),
        "seqread" => (Pattern::Read, 1 << 20, 8),
        "seqwrite" => (Pattern::Write, 1 << 20, 8),
        "mixed" => (Pattern::RandRw, 4096, 32),
        "fsync" => (Pattern::Fsync, 4096, 1),
        _ => return None,
    };
    Some(DiskTest {
        name: name.to_string(),
        job: JobSpec {
            pattern,
            block_size: bs,
            iodepth,
            jobs: 1,
            read_pct: 70,
            runtime,
            ramp,
            // Commit latency is about the flush, which buffered writes isolate.
            direct: direct && pattern != Pattern::Fsync,
            engine: if pattern == Pattern::Fsync {
                Some(EngineKind::Psync)
            } else {
                engine
            },
            seed: 0x5eed,
        },
    })
}

impl DiskSpec {
    pub fn validate(&self) -> Result<(), SpecError> {
        if self.tests.is_empty() {
            return Err(SpecError::new(
                "tests",
                "no test chosen",
                format!("use one of {}", STANDARD.join(", ")),
            ));
        }
        for t in &self.tests {
            let j = &t.job;
            if j.block_size == 0 || j.block_size % 512 != 0 || j.block_size > 64 << 20 {
                return Err(SpecError::new(
                    format!("bs={}", j.block_size),
                    "the block size must be a multiple of 512 bytes (direct I/O needs sector alignment), at most 64 MiB",
                    "use e.g. 4K, 64K or 1M",
                ));
            }
            if j.iodepth == 0 || j.iodepth > 4096 {
                return Err(SpecError::new(
                    format!("iodepth={}", j.iodepth),
                    "out of range",
                    "use 1 to 4096",
                ));
            }
            crate::workload::check_threads(j.jobs)?;
            if j.read_pct > 100 {
                return Err(SpecError::new(
                    format!("rwmix={}", j.read_pct),
                    "a share of reads above 100 %",
                    "use 0 to 100",
                ));
            }
            if j.runtime.is_zero() {
                return Err(SpecError::new(
                    "runtime=0",
                    "a disk test needs a duration",
                    "use e.g. 10s",
                ));
            }
            if (j.block_size as u64) > self.size {
                return Err(SpecError::new(
                    format!("size={}", format_bytes(self.size)),
                    format!(
                        "smaller than the block size {}",
                        format_bytes(j.block_size as u64)
                    ),
                    "use a larger --size",
                ));
            }
        }
        Ok(())
    }
}

/// Prepares the test file, runs every test, removes everything it made. `tick`
/// receives (test index, time into that test).
pub fn run(
    spec: &DiskSpec,
    tick: &(dyn Fn(usize, Duration) + Sync),
) -> Result<Vec<Outcome>, DiskError> {
    spec.validate()?;
    let dir = TestDir::create(&spec.dir)?;
    let (free, magic) = files::statfs(dir.path()).map_err(|source| FileError::Unusable {
        dir: spec.dir.clone(),
        source,
    })?;
    let fs = files::fs_name(magic);
    if files::ram_backed(magic) && spec.tests.iter().any(|t| t.job.direct) {
        return Err(SpecError::new(
            spec.dir.display().to_string(),
            format!(
                "is on {fs}, which keeps files in RAM: direct I/O there measures memory, not a disk"
            ),
            "use a --dir on a disk, or --buffered to measure it anyway",
        )
        .into());
    }
    // Keep 5 % of the free space (and 64 MiB) for everyone else.
    let needed = spec.size + spec.size / 20 + (64 << 20);
    if needed > free {
        return Err(FileError::NoSpace {
            dir: spec.dir.clone(),
            needed: format_bytes(needed),
            available: format_bytes(free),
        }
        .into());
    }
    let path = dir.path().join("hostbench.0");
    files::lay_out(&path, spec.size, 0x5eed)?;
    if let Some(align) = files::direct_io_alignment(&path) {
        for t in spec.tests.iter().filter(|t| t.job.direct) {
            if t.job.block_size % align != 0 {
                return Err(SpecError::new(
                    format!("bs={}", t.job.block_size),
                    format!("direct I/O on this file system needs multiples of {align} bytes"),
                    format!("use a block size that is a multiple of {align}, or --buffered"),
                )
                .into());
            }
        }
    }
    let device = files::device_of(dir.path()).unwrap_or_else(|| "unknown".into());

    let mut outcomes = Vec::new();
    for (i, test) in spec.tests.iter().enumerate() {
        if stop_requested() {
            break;
        }
        let result = job::run(&test.job, &path, spec.size, &|d| tick(i, d))?;
        outcomes.push(outcome(spec, test, &result, fs, magic, &device));
    }
    Ok(outcomes)
}

fn latency_of(d: &DirStats) -> Latency {
    Latency {
        count: d.ops,
        min_ns: if d.ops == 0 { 0.0 } else { d.min_ns as f64 },
        mean_ns: d.sum_ns.checked_div(d.ops).unwrap_or(0) as f64,
        max_ns: d.max_ns as f64,
        sum_ns: d.sum_ns as f64,
        percentiles: [50.0, 90.0, 99.0, 99.9]
            .iter()
            .map(|&p| Percentile {
                p,
                ns: d.latency.percentile_ns(p).unwrap_or(0.0),
            })
            .collect(),
        layout: d.latency.layout,
        buckets: d.latency.nonempty().collect(),
    }
}

fn outcome(
    spec: &DiskSpec,
    test: &DiskTest,
    r: &JobResult,
    fs: &str,
    magic: i64,
    device: &str,
) -> Outcome {
    let mut spec_json = serde_json::to_value(test).unwrap_or_default();
    if let Some(map) = spec_json.as_object_mut() {
        map.insert("size".into(), spec.size.into());
        map.insert("dir".into(), spec.dir.display().to_string().into());
    }
    let mut o = Outcome::new("disk", spec_json, HostInfo::detect());
    let secs = r.elapsed.as_secs_f64();
    o.elapsed_s = secs;
    o.interrupted = r.interrupted;
    o.cpu_time = CpuUse {
        user_s: r.cpu.user_s,
        system_s: r.cpu.system_s,
        utilisation: r.cpu.utilisation(r.elapsed),
    };
    let j = &test.job;
    for (dir, d) in [("read", &r.read), ("write", &r.write)] {
        if d.ops == 0
            && !(dir == "read" && j.pattern.reads() || dir == "write" && j.pattern.writes())
        {
            continue;
        }
        o.push(
            Metric::new(&format!("{dir}_iops"), d.ops as f64 / secs, Unit::OpsPerSec)
                .variant(&test.name),
        );
        o.push(
            Metric::new(
                &format!("{dir}_bytes_per_sec"),
                d.bytes as f64 / secs,
                Unit::BytesPerSec,
            )
            .variant(&test.name),
        );
        let lat = latency_of(d);
        for p in &lat.percentiles {
            o.push(
                Metric::new(&format!("{dir}_latency_p{}", p.p), p.ns, Unit::Nanoseconds)
                    .variant(&test.name),
            );
        }
        o.push(
            Metric::new(&format!("{dir}_latency_max"), lat.max_ns, Unit::Nanoseconds)
                .variant(&test.name),
        );
        if o.latency.is_none() {
            o.latency = Some(lat);
        }
    }
    if j.pattern == Pattern::Fsync {
        let lat = latency_of(&r.sync);
        o.push(
            Metric::new("fsync_per_sec", r.sync.ops as f64 / secs, Unit::OpsPerSec)
                .variant(&test.name),
        );
        for p in &lat.percentiles {
            o.push(
                Metric::new(&format!("fsync_latency_p{}", p.p), p.ns, Unit::Nanoseconds)
                    .variant(&test.name),
            );
        }
        o.latency = Some(lat);
    }
    let ios = r.read.ops + r.write.ops + r.sync.ops;
    if ios > 0 {
        o.push(
            Metric::new(
                "cpu_per_io",
                r.cpu.total_s() * 1e9 / ios as f64,
                Unit::Nanoseconds,
            )
            .variant(&test.name),
        );
    }
    o.series = r
        .windows
        .iter()
        .enumerate()
        .map(|(i, s)| Sample {
            at_s: i as f64 + 1.0,
            span_s: 1.0,
            values: BTreeMap::from([
                ("read_iops".into(), s[0] as f64),
                ("write_iops".into(), s[1] as f64),
                ("read_bytes_per_sec".into(), s[2] as f64),
                ("write_bytes_per_sec".into(), s[3] as f64),
            ]),
        })
        .collect();

    o.note(format!(
        "{} on {fs} ({device}), engine {}{}, {} I/O, depth {}, {} job(s), {} file, {:.0} s after a {:.0} s ramp",
        test.name,
        r.engine.name(),
        if r.skipped_engines.is_empty() { String::new() } else { format!(" ({})", r.skipped_engines.join("; ")) },
        if j.direct { "direct" } else { "buffered" },
        if r.engine.is_async() && j.pattern != Pattern::Fsync { j.iodepth } else { 1 },
        j.jobs,
        format_bytes(spec.size),
        j.runtime.as_secs_f64(),
        j.ramp.as_secs_f64()
    ));
    if files::ram_backed(magic) {
        o.note(format!(
            "{fs} keeps files in RAM: these are memory figures, not a disk's"
        ));
    }
    if !j.direct && j.pattern.reads() {
        o.note("buffered reads of a file just written come from the page cache: memory speed, not the disk's");
    }
    if !j.direct && j.pattern.writes() && j.pattern != Pattern::Fsync {
        o.note("buffered writes land in the page cache first: the rate is memory's until writeback catches up");
    }
    if !j.direct && r.engine == EngineKind::Libaio {
        o.note("libaio without direct I/O blocks at submission, so the queue depth is not reached");
    }
    if !r.engine.is_async() && j.iodepth > 1 && j.pattern != Pattern::Fsync {
        o.note(format!(
            "{} completes one request at a time: depth {} was not reached",
            r.engine.name(),
            j.iodepth
        ));
    }
    if r.interrupted {
        o.note("interrupted: the run was stopped early; figures cover the part that ran");
    }
    o
}

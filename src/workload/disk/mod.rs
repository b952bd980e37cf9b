//! Disk: what a cloud disk really delivers, measured on files hostbench creates in a
//! directory of its own under `--dir`. Direct I/O, time-based with a ramp, random
//! data, and a per-second timeline (burst credits running out show as a cliff).
//! Every result notes what would make it untrue: page cache, a RAM-backed file
//! system, the file system and device, the engine that ran.

pub mod copy;
pub mod engine;
pub mod fileio;
pub mod files;
pub mod job;
pub mod outcome;

use crate::model::Outcome;
use crate::units::format_bytes;
use crate::workload::SpecError;
use crate::workload::observe::{Observer, Progress, Snapshot};
use engine::EngineKind;
use files::{FileError, TestDir};
use job::{JobError, JobResult, JobSpec, Pattern};
use outcome::{Place, Ran};
use serde::Serialize;
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

/// An observer seen through one test of several: its progress carries the test's
/// index as the phase.
struct Phase<'a> {
    observer: &'a dyn Observer,
    phase: usize,
}

impl Observer for Phase<'_> {
    fn progress(&self, p: &Progress) {
        self.observer.progress(&Progress {
            phase: self.phase,
            ..*p
        });
    }
    fn snapshot(&self, s: &Snapshot<'_>) {
        self.observer.snapshot(s);
    }
    fn stop_requested(&self) -> bool {
        self.observer.stop_requested()
    }
}

/// Prepares the test file, runs every test, removes everything it made. The
/// observer sees each test's progress (phase = the test's index) and is asked
/// between I/Os whether to stop.
pub fn run(spec: &DiskSpec, observer: &dyn Observer) -> Result<Vec<Outcome>, DiskError> {
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
    files::lay_out(&path, spec.size, 0x5eed, observer)?;
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
    let place = Place::of(dir.path());

    let mut outcomes = Vec::new();
    for (i, test) in spec.tests.iter().enumerate() {
        if observer.stop_requested() {
            break;
        }
        let phase = Phase { observer, phase: i };
        let result = job::run(&test.job, &path, spec.size, &phase)?;
        outcomes.push(test_outcome(spec, test, &result, &place));
    }
    Ok(outcomes)
}

/// A native test's outcome: the shared conversion, with the test and the file as
/// its spec.
fn test_outcome(spec: &DiskSpec, test: &DiskTest, r: &JobResult, place: &Place) -> Outcome {
    let mut spec_json = serde_json::to_value(test).unwrap_or_default();
    if let Some(map) = spec_json.as_object_mut() {
        map.insert("size".into(), spec.size.into());
        map.insert("dir".into(), spec.dir.display().to_string().into());
    }
    let plan = test.job.plan();
    let ran = Ran {
        name: &test.name,
        plan: &plan,
        numjobs: test.job.jobs,
        threads: test.job.jobs,
        size: spec.size,
        place,
        spec: spec_json,
    };
    outcome::outcome(&ran, r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use std::time::Instant;

    /// Records the phases it saw; asks to stop once `stop_after` has passed.
    struct Watcher {
        phases: Mutex<Vec<(usize, u64)>>,
        started: Instant,
        stop_after: Duration,
    }

    impl Observer for Watcher {
        fn progress(&self, p: &Progress) {
            self.phases.lock().unwrap().push((p.phase, p.done));
        }
        fn stop_requested(&self) -> bool {
            self.started.elapsed() >= self.stop_after
        }
    }

    fn spec(dir: &std::path::Path, names: &[&str], runtime: Duration) -> DiskSpec {
        DiskSpec {
            dir: dir.to_path_buf(),
            size: 4 << 20,
            tests: names
                .iter()
                .map(|n| {
                    standard_test(n, runtime, Duration::ZERO, Some(EngineKind::Psync), false)
                        .unwrap()
                })
                .collect(),
        }
    }

    #[test]
    fn the_observer_sees_each_test_as_a_phase() {
        let dir = tempfile::tempdir().unwrap();
        let w = Watcher {
            phases: Mutex::new(Vec::new()),
            started: Instant::now(),
            stop_after: Duration::from_secs(3600),
        };
        let spec = spec(
            dir.path(),
            &["randread", "randwrite"],
            Duration::from_millis(350),
        );
        let outcomes = run(&spec, &w).unwrap();
        assert_eq!(outcomes.len(), 2);
        let seen = w.phases.lock().unwrap().clone();
        assert!(
            seen.iter().any(|p| p.0 == 0) && seen.iter().any(|p| p.0 == 1),
            "{seen:?}"
        );
        // Phases in order, and I/Os counted within each.
        assert!(seen.windows(2).all(|w| w[0].0 <= w[1].0), "{seen:?}");
        assert!(seen.iter().any(|p| p.1 > 0), "{seen:?}");
        assert!(outcomes.iter().all(|o| !o.interrupted));
    }

    #[test]
    fn the_observer_stops_a_test_between_ios() {
        let dir = tempfile::tempdir().unwrap();
        let w = Watcher {
            phases: Mutex::new(Vec::new()),
            started: Instant::now(),
            stop_after: Duration::from_millis(600),
        };
        let spec = spec(
            dir.path(),
            &["randread", "randwrite"],
            Duration::from_secs(30),
        );
        let started = Instant::now();
        let outcomes = run(&spec, &w).unwrap();
        assert!(started.elapsed() < Duration::from_secs(10));
        // The first test ends early and says so; the second never starts.
        assert_eq!(outcomes.len(), 1);
        assert!(outcomes[0].interrupted);
        assert!(outcomes[0].metric("read_iops", None).unwrap().value > 0.0);
    }
}

//! One disk job: threads, each with its own files, engine and buffers, keeping
//! `iodepth` requests in flight until the job's limit (time, bytes, or both).
//! Completions during the ramp are discarded (as fio's `ramp_time` does, CPU time
//! included); after it every completion is timed and counted per direction and per
//! window.
//!
//! The native disk tests and the fio personality share this loop: the native
//! [`JobSpec`] is a fixed-size, time-based [`IoPlan`]; fio job options map onto the
//! rest (block-size distributions, several files, byte limits and loops, random
//! maps, periodic fsync, start delays, and fio's own statistics when `detailed`).

use super::engine::{self, Completion, EngineKind, Op, Request};
use super::files;
use crate::measure::cputime::CpuTime;
use crate::measure::fio_histogram::{FioHistogram, LatencyClasses};
use crate::measure::histogram::{Histogram, Layout};
use crate::measure::rng::Xoroshiro128Plus;
use crate::workload::buffer::AlignedBuffer;
use crate::workload::observe::{Observer, Progress};
use serde::Serialize;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use thiserror::Error;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    /// Sequential reads.
    Read,
    /// Sequential writes.
    Write,
    RandRead,
    RandWrite,
    /// Random reads and writes, `read_pct` % reads.
    RandRw,
    /// Sequential reads and writes, `read_pct` % reads.
    ReadWrite,
    /// A write of one block then fdatasync, one at a time: the commit latency a
    /// database or etcd sees.
    Fsync,
}

impl Pattern {
    pub fn is_random(self) -> bool {
        matches!(
            self,
            Pattern::RandRead | Pattern::RandWrite | Pattern::RandRw
        )
    }

    pub fn reads(self) -> bool {
        matches!(
            self,
            Pattern::Read | Pattern::RandRead | Pattern::RandRw | Pattern::ReadWrite
        )
    }

    pub fn writes(self) -> bool {
        !matches!(self, Pattern::Read | Pattern::RandRead)
    }
}

/// A native test: one block size, time-based, on one shared file.
#[derive(Debug, Clone, Serialize)]
pub struct JobSpec {
    pub pattern: Pattern,
    pub block_size: usize,
    pub iodepth: usize,
    pub jobs: usize,
    /// Share of reads in mixed patterns, in percent.
    pub read_pct: u32,
    pub runtime: Duration,
    pub ramp: Duration,
    pub direct: bool,
    /// `None`: the best available engine.
    pub engine: Option<EngineKind>,
    pub seed: u64,
}

impl JobSpec {
    /// The general plan this test runs as.
    pub fn plan(&self) -> IoPlan {
        let fsync = self.pattern == Pattern::Fsync;
        IoPlan {
            pattern: if fsync { Pattern::Write } else { self.pattern },
            read_sizes: SizeDist::Fixed(self.block_size),
            write_sizes: SizeDist::Fixed(self.block_size),
            iodepth: if fsync { 1 } else { self.iodepth },
            read_pct: self.read_pct,
            direct: self.direct,
            engine: self.engine,
            seed: self.seed,
            ramp: self.ramp,
            runtime: Some(self.runtime),
            io_limit: None,
            loops: 1,
            random_map: false,
            submit_batch: 0,
            sync_every: u32::from(fsync),
            sync_op: Op::Datasync,
            start_delay: Duration::ZERO,
            window: Duration::from_secs(1),
            detailed: false,
        }
    }
}

/// How a direction's request sizes are chosen (fio's `bs`, `bsrange`, `bssplit`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum SizeDist {
    Fixed(usize),
    /// Uniform over the multiples of `min` in `min..=max`.
    Range {
        min: usize,
        max: usize,
    },
    /// (size, percent) pairs whose percents add up to 100.
    Split(Vec<(usize, u32)>),
}

impl SizeDist {
    pub fn min(&self) -> usize {
        match self {
            SizeDist::Fixed(b) => *b,
            SizeDist::Range { min, .. } => *min,
            SizeDist::Split(v) => v.iter().map(|e| e.0).min().unwrap_or(0),
        }
    }

    pub fn max(&self) -> usize {
        match self {
            SizeDist::Fixed(b) => *b,
            SizeDist::Range { max, .. } => *max,
            SizeDist::Split(v) => v.iter().map(|e| e.0).max().unwrap_or(0),
        }
    }

    fn pick(&self, rng: &mut Xoroshiro128Plus) -> usize {
        match self {
            SizeDist::Fixed(b) => *b,
            SizeDist::Range { min, max } => {
                let steps = (max - min) / min;
                min + rng.below(steps + 1) * min
            }
            SizeDist::Split(v) => {
                let mut r = (rng.next_u64() % 100) as u32;
                for &(size, pct) in v {
                    if r < pct {
                        return size;
                    }
                    r -= pct;
                }
                v.last().map_or(4096, |e| e.0)
            }
        }
    }
}

/// A file one thread works on: `size` bytes of it, sequential I/O starting at
/// `seq_start`.
#[derive(Debug, Clone)]
pub struct FileTarget {
    pub path: PathBuf,
    pub size: u64,
    pub seq_start: u64,
}

/// Everything a job's threads do, whoever asked for it.
#[derive(Debug, Clone)]
pub struct IoPlan {
    pub pattern: Pattern,
    pub read_sizes: SizeDist,
    pub write_sizes: SizeDist,
    pub iodepth: usize,
    pub read_pct: u32,
    pub direct: bool,
    pub engine: Option<EngineKind>,
    pub seed: u64,
    pub ramp: Duration,
    /// Stop this long after the ramp (`None`: only the byte limit stops the job).
    pub runtime: Option<Duration>,
    /// Bytes per pass per thread (`None`: time-based, loop until `runtime`).
    pub io_limit: Option<u64>,
    pub loops: u32,
    /// Cover every block once per pass before any repeats (fio's random map).
    pub random_map: bool,
    /// With `detailed`, submit after every N requests queued (0: all at once);
    /// fio submits each request on its own by default (`iodepth_batch_submit=1`).
    pub submit_batch: usize,
    /// Sync the file after every N writes (0: never), with `sync_op`.
    pub sync_every: u32,
    pub sync_op: Op,
    pub start_delay: Duration,
    /// Span of the rate samples in `JobResult::windows`.
    pub window: Duration,
    /// Keep fio's statistics: submission and completion latency apart, queue-depth
    /// and batch distributions, context switches and faults.
    pub detailed: bool,
}

#[derive(Debug, Error)]
pub enum JobError {
    #[error(transparent)]
    File(#[from] files::FileError),
    #[error("{path}: cannot set up the {engine} engine: {source}")]
    Engine {
        path: PathBuf,
        engine: &'static str,
        source: std::io::Error,
    },
    #[error("{path}: {op} at offset {offset} failed: {source}{hint}")]
    Io {
        path: PathBuf,
        op: &'static str,
        offset: u64,
        source: std::io::Error,
        hint: &'static str,
    },
    #[error("{path}: short {op} at offset {offset}: {got} of {want} bytes")]
    Short {
        path: PathBuf,
        op: &'static str,
        offset: u64,
        got: i64,
        want: usize,
    },
}

/// fio's three latencies of one direction: submission, completion, and both.
#[derive(Debug, Clone, Default)]
pub struct FioTimes {
    pub slat: FioHistogram,
    pub clat: FioHistogram,
    pub lat: FioHistogram,
    /// Exact completion-latency classes (fio's `lat (usec): 250=…%` rows).
    pub classes: LatencyClasses,
    /// Requests the device answered before the call that submitted them returned.
    /// fio's clat starts when that call returns, so theirs is only the time to reap
    /// them (well under a microsecond) and the device's time is in their slat.
    pub answered_in_submit: u64,
}

/// Counts and latencies of one direction (or of the syncs).
#[derive(Debug, Clone)]
pub struct DirStats {
    pub ops: u64,
    pub bytes: u64,
    /// From queueing to completion.
    pub latency: Histogram,
    pub min_ns: u64,
    pub max_ns: u64,
    pub sum_ns: u64,
    /// Only for detailed plans.
    pub fio: Option<Box<FioTimes>>,
}

impl DirStats {
    fn new(detailed: bool) -> Self {
        Self {
            ops: 0,
            bytes: 0,
            latency: Histogram::new(Layout::NATIVE),
            min_ns: u64::MAX,
            max_ns: 0,
            sum_ns: 0,
            fio: detailed.then(Box::default),
        }
    }

    /// `slat_ns`: time from queueing to submission, when the engine has one;
    /// `answered_in_submit`: the request was complete when its submission returned.
    fn record(&mut self, bytes: u64, lat_ns: u64, slat_ns: Option<u64>, answered_in_submit: bool) {
        self.ops += 1;
        self.bytes += bytes;
        self.latency.record(lat_ns as f64);
        self.min_ns = self.min_ns.min(lat_ns);
        self.max_ns = self.max_ns.max(lat_ns);
        self.sum_ns += lat_ns;
        if let Some(f) = &mut self.fio {
            f.lat.record(lat_ns);
            match slat_ns {
                Some(s) => {
                    f.slat.record(s);
                    f.clat.record(lat_ns.saturating_sub(s));
                }
                None => f.clat.record(lat_ns),
            }
            f.classes
                .record(lat_ns.saturating_sub(slat_ns.unwrap_or(0)));
            f.answered_in_submit += u64::from(answered_in_submit);
        }
    }

    pub fn merge(&mut self, o: &DirStats) {
        self.ops += o.ops;
        self.bytes += o.bytes;
        self.latency.merge(&o.latency);
        self.min_ns = self.min_ns.min(o.min_ns);
        self.max_ns = self.max_ns.max(o.max_ns);
        self.sum_ns += o.sum_ns;
        if let (Some(a), Some(b)) = (&mut self.fio, &o.fio) {
            a.slat.merge(&b.slat);
            a.clat.merge(&b.clat);
            a.lat.merge(&b.lat);
            a.classes.merge(&b.classes);
            a.answered_in_submit += b.answered_in_submit;
        }
    }
}

/// Per window after the ramp: [read ops, write ops, read bytes, write bytes].
pub type Window = [u64; 4];

/// fio's power-of-two buckets for queue depths and batch sizes.
pub type DepthMap = [u64; 7];

#[derive(Debug, Clone)]
pub struct JobResult {
    pub read: DirStats,
    pub write: DirStats,
    pub sync: DirStats,
    pub windows: Vec<Window>,
    pub window: Duration,
    /// Measured span: from the end of the ramp to the end of the runtime when the job
    /// ran to time, else to the last counted completion.
    pub elapsed: Duration,
    pub cpu: CpuTime,
    /// Context switches, minor and major faults after the ramp (detailed plans).
    pub ctx: u64,
    pub minor_faults: u64,
    pub major_faults: u64,
    /// Depth the queue was filled to, per request issued: 1, 2, 4, 8, 16, 32, >=64.
    pub depth_levels: DepthMap,
    /// Requests per submission call: 0, 1-4, 5-8, 9-16, 17-32, 33-64, >64.
    pub submit_batches: DepthMap,
    /// Requests per reaping call, same buckets.
    pub complete_batches: DepthMap,
    pub engine: EngineKind,
    pub skipped_engines: Vec<String>,
    pub interrupted: bool,
    /// The ramp ended and measuring began: false only for a job stopped during its ramp.
    pub measuring_began: bool,
}

impl JobResult {
    pub fn merge(&mut self, o: &JobResult) {
        self.read.merge(&o.read);
        self.write.merge(&o.write);
        self.sync.merge(&o.sync);
        if self.windows.len() < o.windows.len() {
            self.windows.resize(o.windows.len(), [0; 4]);
        }
        for (a, b) in self.windows.iter_mut().zip(&o.windows) {
            for k in 0..4 {
                a[k] += b[k];
            }
        }
        self.elapsed = self.elapsed.max(o.elapsed);
        self.cpu.user_s += o.cpu.user_s;
        self.cpu.system_s += o.cpu.system_s;
        self.ctx += o.ctx;
        self.minor_faults += o.minor_faults;
        self.major_faults += o.major_faults;
        for k in 0..7 {
            self.depth_levels[k] += o.depth_levels[k];
            self.submit_batches[k] += o.submit_batches[k];
            self.complete_batches[k] += o.complete_batches[k];
        }
        self.interrupted |= o.interrupted;
        self.measuring_began |= o.measuring_began;
    }
}

/// Runs a native test's threads on `path` (a laid-out file of `file_size` bytes),
/// each starting its sequential I/O at its own share of the file.
pub fn run(
    spec: &JobSpec,
    path: &Path,
    file_size: u64,
    observer: &dyn Observer,
) -> Result<JobResult, JobError> {
    let blocks = (file_size / spec.block_size as u64).max(1);
    let targets: Vec<Vec<FileTarget>> = (0..spec.jobs as u64)
        .map(|j| {
            vec![FileTarget {
                path: path.to_path_buf(),
                size: file_size,
                seq_start: blocks / spec.jobs as u64 * j * spec.block_size as u64,
            }]
        })
        .collect();
    let results = run_threads(&spec.plan(), &targets, observer)?;
    let mut merged = results[0].clone();
    for r in &results[1..] {
        merged.merge(r);
    }
    Ok(merged)
}

/// Runs one thread per entry of `targets` (each thread's files) and returns each
/// thread's result, in order. Every thread asks `observer` whether to stop between
/// I/Os; the first reports progress (time since it started, I/Os measured by all).
pub fn run_threads(
    plan: &IoPlan,
    targets: &[Vec<FileTarget>],
    observer: &dyn Observer,
) -> Result<Vec<JobResult>, JobError> {
    let done = AtomicU64::new(0);
    let results: Vec<Result<JobResult, JobError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = targets
            .iter()
            .enumerate()
            .map(|(j, files)| {
                let watch = Watch {
                    observer,
                    done: &done,
                    reports: j == 0,
                };
                scope.spawn(move || Worker::open(plan, files, j)?.run(&watch))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("disk job thread panicked"))
            .collect()
    });
    results.into_iter().collect()
}

/// An I/O error, with the likely cause when direct I/O was refused as invalid.
fn io_error(
    path: &Path,
    op: &'static str,
    offset: u64,
    source: std::io::Error,
    direct: bool,
) -> JobError {
    let hint = if direct && source.raw_os_error() == Some(libc::EINVAL) {
        " (direct I/O needs block sizes and offsets aligned to the device's sector size: try --bs 4K or --buffered)"
    } else {
        ""
    };
    JobError::Io {
        path: path.to_path_buf(),
        op,
        offset,
        source,
        hint,
    }
}

fn op_name(op: Op) -> &'static str {
    match op {
        Op::Read => "read",
        Op::Write => "write",
        Op::Datasync => "fdatasync",
        Op::Fsync => "fsync",
    }
}

/// fio's depth bucket: 1, 2, 4, 8, 16, 32, >=64 (each [k, 2k)).
fn depth_bucket(n: usize) -> usize {
    match n {
        0 | 1 => 0,
        2..=3 => 1,
        4..=7 => 2,
        8..=15 => 3,
        16..=31 => 4,
        32..=63 => 5,
        _ => 6,
    }
}

/// fio's batch bucket: 0, up to 4, 8, 16, 32, 64, more.
fn batch_bucket(n: usize) -> usize {
    match n {
        0 => 0,
        1..=4 => 1,
        5..=8 => 2,
        9..=16 => 3,
        17..=32 => 4,
        33..=64 => 5,
        _ => 6,
    }
}

/// Blocks of one file already touched in this pass (fio's random map).
struct CoverageMap {
    words: Vec<u64>,
    units: u64,
    used: u64,
}

impl CoverageMap {
    fn new(units: u64) -> Self {
        Self {
            words: vec![0; units.div_ceil(64) as usize],
            units,
            used: 0,
        }
    }

    /// `want` if it is free, else the next free unit after it (wrapping); starts a
    /// new pass when every unit was used.
    fn take(&mut self, want: u64) -> u64 {
        if self.used >= self.units {
            self.words.iter_mut().for_each(|w| *w = 0);
            self.used = 0;
        }
        let mut u = want % self.units;
        loop {
            let (w, b) = ((u / 64) as usize, u % 64);
            let free = !self.words[w] >> b;
            if free != 0 {
                let found = u + free.trailing_zeros() as u64;
                if found < self.units {
                    self.words[(found / 64) as usize] |= 1 << (found % 64);
                    self.used += 1;
                    return found;
                }
            }
            // Nothing free in the rest of this word: the next word, or wrap.
            u = (u / 64 + 1) * 64;
            if u >= self.units {
                u = 0;
            }
        }
    }
}

/// One open file of a thread, with its sequential cursors and random map.
struct OpenTarget<'a> {
    target: &'a FileTarget,
    _file: std::fs::File,
    fd: i32,
    cursor: [u64; 2],
    map: Option<CoverageMap>,
}

impl OpenTarget<'_> {
    /// Where the next request of `len` bytes in direction `dir` (0 read, 1 write)
    /// goes, `align` bytes aligned.
    fn offset(
        &mut self,
        dir: usize,
        len: usize,
        align: usize,
        random: bool,
        rng: &mut Xoroshiro128Plus,
    ) -> u64 {
        let size = self.target.size;
        let len = len as u64;
        if random {
            let last = size.saturating_sub(len) / align as u64;
            let unit = match &mut self.map {
                Some(map) => map.take(rng.next_u64()).min(last),
                None => rng.next_u64() % (last + 1),
            };
            unit * align as u64
        } else {
            if self.cursor[dir] + len > size {
                self.cursor[dir] = 0;
            }
            let at = self.cursor[dir];
            self.cursor[dir] += len;
            at
        }
    }
}

fn thread_counters() -> [u64; 3] {
    // SAFETY: getrusage fills a plain struct we own.
    let u = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_THREAD, &mut u);
        u
    };
    [
        (u.ru_nvcsw + u.ru_nivcsw) as u64,
        u.ru_minflt as u64,
        u.ru_majflt as u64,
    ]
}

/// Sleeps `d` unless a stop is requested meanwhile; false when stopped.
fn wait(d: Duration, observer: &dyn Observer) -> bool {
    let until = Instant::now() + d;
    while Instant::now() < until {
        if observer.stop_requested() {
            return false;
        }
        std::thread::sleep((until - Instant::now()).min(Duration::from_millis(50)));
    }
    true
}

/// What the threads of one job share while they run: the observer, and how many
/// completions they counted so far (for its progress).
struct Watch<'o> {
    observer: &'o dyn Observer,
    done: &'o AtomicU64,
    /// Only the first thread reports progress.
    reports: bool,
}

/// One request slot: what is in it, and when it was queued and submitted.
#[derive(Debug, Clone, Copy)]
struct Slot {
    op: Op,
    file: usize,
    offset: u64,
    len: usize,
    queued_at: Instant,
    submitted_at: Option<Instant>,
    /// Its completion was already posted when the submission call returned.
    answered_in_submit: bool,
}

impl Slot {
    fn queued(op: Op, file: usize, offset: u64, len: usize) -> Self {
        Slot {
            op,
            file,
            offset,
            len,
            queued_at: Instant::now(),
            submitted_at: None,
            answered_in_submit: false,
        }
    }
}

/// A thread's clock: when it started, when its ramp ends and its runtime with it.
#[derive(Debug, Clone, Copy)]
struct Clock {
    start: Instant,
    ramp_end: Instant,
    end: Option<Instant>,
}

impl Clock {
    fn starting_now(plan: &IoPlan) -> Self {
        let start = Instant::now();
        let ramp_end = start + plan.ramp;
        Clock {
            start,
            ramp_end,
            end: plan.runtime.map(|r| ramp_end + r),
        }
    }

    /// Whether a completion at `t` is measured (after the ramp, before the end).
    fn counts(&self, t: Instant) -> bool {
        t >= self.ramp_end && self.end.is_none_or(|e| t <= e)
    }
}

/// One thread of a job: its open files, its engine and buffers, `iodepth` request
/// slots, and what it counted. `run` keeps the slots busy until the plan's limit.
struct Worker<'a> {
    plan: &'a IoPlan,
    files: Vec<OpenTarget<'a>>,
    // Declared before `buffers`, so dropped first: engines wait for the requests in
    // flight when dropped, and those requests point into the buffers.
    engine: Box<dyn engine::Engine + Send>,
    buffers: AlignedBuffer,
    /// Bytes between two slots' buffers (each starts on a 4 KiB boundary).
    stride: usize,
    kind: EngineKind,
    skipped: Vec<String>,
    /// Submission latency exists only where submitting and completing are apart.
    split_submit: bool,
    rng: Xoroshiro128Plus,
    slots: Vec<Slot>,
    free: Vec<usize>,
    /// Slots queued in this round; those before `submitted_upto` are submitted.
    fresh: Vec<usize>,
    submitted_upto: usize,
    /// Slots whose completion the engine had posted after the last submission.
    posted: Vec<usize>,
    done: Vec<Completion>,
    in_flight: usize,
    read: DirStats,
    write: DirStats,
    sync: DirStats,
    windows: Vec<Window>,
    depth_levels: DepthMap,
    submit_batches: DepthMap,
    complete_batches: DepthMap,
    writes_issued: u64,
    writes_since_sync: u32,
    sync_due: bool,
    sync_in_flight: bool,
    next_file: usize,
    last_written: usize,
    /// Bytes issued after the ramp, against `byte_limit`.
    bytes_issued: u64,
    byte_limit: Option<u64>,
    clock: Clock,
    /// CPU time and counters of this thread when the ramp ended.
    at_ramp_end: Option<(CpuTime, [u64; 3])>,
    last_counted: Instant,
    last_tick: Instant,
    /// The first error stops new requests; the loop still reaps what is in flight.
    failure: Option<JobError>,
    interrupted: bool,
}

impl<'a> Worker<'a> {
    /// Opens the thread's files and engine and fills its buffers with random data.
    fn open(plan: &'a IoPlan, targets: &'a [FileTarget], index: usize) -> Result<Self, JobError> {
        let first = &targets[0].path;
        let min_bs = plan.read_sizes.min().min(plan.write_sizes.min()).max(1) as u64;
        let mut files: Vec<OpenTarget> = Vec::with_capacity(targets.len());
        for t in targets {
            let file = files::open(&t.path, plan.direct, plan.pattern.writes())?;
            files.push(OpenTarget {
                target: t,
                fd: file.as_raw_fd(),
                _file: file,
                cursor: [t.seq_start; 2],
                map: (plan.random_map && plan.pattern.is_random())
                    .then(|| CoverageMap::new((t.size / min_bs).max(1))),
            });
        }
        let max_bs = plan.read_sizes.max().max(plan.write_sizes.max());
        let stride = max_bs.next_multiple_of(4096);
        let async_depth = plan.iodepth.max(1);
        let buffers = AlignedBuffer::new(async_depth * stride).ok_or_else(|| {
            io_error(
                first,
                "buffer allocation",
                0,
                std::io::Error::from(std::io::ErrorKind::OutOfMemory),
                false,
            )
        })?;
        let (engine, skipped) =
            engine::open(plan.engine, async_depth).map_err(|source| JobError::Engine {
                path: first.clone(),
                engine: plan.engine.map_or("any", EngineKind::name),
                source,
            })?;
        let kind = engine.kind();
        let depth = if kind.is_async() { async_depth } else { 1 };
        let mut rng = Xoroshiro128Plus::seeded(plan.seed.wrapping_add(index as u64 * 0x9E37));
        // SAFETY: the buffer is ours, `async_depth * stride` bytes long.
        files::fill_random(
            unsafe { std::slice::from_raw_parts_mut(buffers.as_ptr(), async_depth * stride) },
            &mut rng,
        );
        let clock = Clock::starting_now(plan);
        Ok(Worker {
            plan,
            files,
            engine,
            buffers,
            stride,
            kind,
            skipped,
            split_submit: plan.detailed && kind.is_async(),
            rng,
            slots: vec![Slot::queued(Op::Read, 0, 0, 0); depth],
            free: (0..depth).rev().collect(),
            fresh: Vec::with_capacity(depth),
            submitted_upto: 0,
            posted: Vec::with_capacity(depth),
            done: Vec::with_capacity(depth),
            in_flight: 0,
            read: DirStats::new(plan.detailed),
            write: DirStats::new(plan.detailed),
            sync: DirStats::new(plan.detailed),
            windows: Vec::new(),
            depth_levels: [0; 7],
            submit_batches: [0; 7],
            complete_batches: [0; 7],
            writes_issued: 0,
            writes_since_sync: 0,
            sync_due: false,
            sync_in_flight: false,
            next_file: 0,
            last_written: 0,
            bytes_issued: 0,
            byte_limit: plan
                .io_limit
                .map(|l| l.saturating_mul(u64::from(plan.loops.max(1)))),
            clock,
            at_ramp_end: None,
            last_counted: clock.ramp_end,
            last_tick: clock.start,
            failure: None,
            interrupted: false,
        })
    }

    /// After the start delay: issues, submits and reaps until the plan's limit, a
    /// stop request or an error, then drains what is in flight.
    fn run(mut self, watch: &Watch) -> Result<JobResult, JobError> {
        self.interrupted = !wait(self.plan.start_delay, watch.observer);
        self.clock = Clock::starting_now(self.plan);
        self.last_counted = self.clock.ramp_end;
        self.last_tick = self.clock.start;
        loop {
            let now = Instant::now();
            if watch.observer.stop_requested() {
                self.interrupted = true;
            }
            let issuing = self.issuing(now);
            self.fresh.clear();
            self.submitted_upto = 0;
            if issuing && self.sync_due {
                self.issue_sync();
            } else if issuing {
                self.issue_requests(now)?;
            }
            if self.plan.detailed && !self.fresh.is_empty() {
                // The depth the queue was filled to, once per request issued.
                self.depth_levels[depth_bucket(self.in_flight)] += self.fresh.len() as u64;
            }
            if self.in_flight == 0 {
                if self.sync_due && issuing {
                    continue;
                }
                break;
            }
            self.submit_rest()?;
            let (t, counted) = self.reap()?;
            self.report(watch, t, counted);
        }
        self.finish()
    }

    fn issuing(&self, now: Instant) -> bool {
        self.clock.end.is_none_or(|e| now < e)
            && self.byte_limit.is_none_or(|l| self.bytes_issued < l)
            && !self.interrupted
            && self.failure.is_none()
            && !self.sync_in_flight
    }

    /// A sync of the file written last, once the writes before it completed (as
    /// fio's syncs wait for them).
    fn issue_sync(&mut self) {
        if self.in_flight > 0 {
            return;
        }
        let slot = self
            .free
            .pop()
            .expect("a free slot when nothing is in flight");
        let op = self.plan.sync_op;
        let f = &self.files[self.last_written];
        self.slots[slot] = Slot::queued(op, self.last_written, 0, 0);
        let request = Request {
            fd: f.fd,
            slot,
            op,
            offset: 0,
            len: 0,
            buf: std::ptr::null_mut(),
        };
        // SAFETY: a sync carries no buffer.
        if let Err(source) = unsafe { self.engine.queue(request) } {
            self.failure = Some(io_error(
                &f.target.path,
                op_name(op),
                0,
                source,
                self.plan.direct,
            ));
            self.free.push(slot);
        } else {
            self.in_flight += 1;
            self.sync_due = false;
            self.sync_in_flight = true;
            self.fresh.push(slot);
        }
    }

    /// Fills the free slots, until a sync falls due or the byte limit is reached.
    fn issue_requests(&mut self, now: Instant) -> Result<(), JobError> {
        while let Some(slot) = self.free.pop() {
            if !self.issue_one(slot, now)? {
                break;
            }
        }
        Ok(())
    }

    fn next_op(&mut self) -> Op {
        let p = self.plan.pattern;
        if p.reads() && p.writes() {
            if (self.rng.next_u64() % 100) < u64::from(self.plan.read_pct) {
                Op::Read
            } else {
                Op::Write
            }
        } else if p.reads() {
            Op::Read
        } else {
            Op::Write
        }
    }

    /// Queues one read or write in `slot`; false when no more should follow in this
    /// round.
    fn issue_one(&mut self, slot: usize, now: Instant) -> Result<bool, JobError> {
        let plan = self.plan;
        let op = self.next_op();
        let (dir, sizes) = match op {
            Op::Read => (0, &plan.read_sizes),
            _ => (1, &plan.write_sizes),
        };
        let len = sizes.pick(&mut self.rng);
        let fi = self.next_file;
        self.next_file = (fi + 1) % self.files.len();
        let f = &mut self.files[fi];
        let offset = f.offset(
            dir,
            len,
            sizes.min(),
            plan.pattern.is_random(),
            &mut self.rng,
        );
        // SAFETY: slot < depth <= async_depth, so the slot's buffer lies inside `buffers`.
        let buf = unsafe { self.buffers.as_ptr().add(slot * self.stride) };
        if op == Op::Write {
            // Change every written block so deduplicating storage cannot skip it.
            self.writes_issued += 1;
            // SAFETY: buf is 4096-aligned and holds len >= 8 bytes.
            unsafe {
                buf.cast::<u64>()
                    .write(self.writes_issued ^ self.rng.next_u64())
            };
        }
        self.slots[slot] = Slot::queued(op, fi, offset, len);
        let request = Request {
            fd: f.fd,
            slot,
            op,
            offset,
            len,
            buf,
        };
        // SAFETY: the slot's buffer lives in `buffers`, which outlives the engine,
        // and the slot is not reused before its completion is reaped.
        if let Err(source) = unsafe { self.engine.queue(request) } {
            self.failure = Some(io_error(
                &f.target.path,
                op_name(op),
                offset,
                source,
                plan.direct,
            ));
            self.free.push(slot);
            return Ok(false);
        }
        self.in_flight += 1;
        // As in fio, the byte limit starts after the ramp: a job of `size` bytes
        // measures `size` bytes.
        if now >= self.clock.ramp_end {
            self.bytes_issued += len as u64;
        }
        self.fresh.push(slot);
        if self.split_submit
            && plan.submit_batch > 0
            && self.fresh.len() - self.submitted_upto >= plan.submit_batch
        {
            self.submit_pending()?;
        }
        if op == Op::Write {
            self.last_written = fi;
            self.writes_since_sync += 1;
            if plan.sync_every > 0 && self.writes_since_sync >= plan.sync_every {
                self.writes_since_sync = 0;
                self.sync_due = true;
                return Ok(false);
            }
        }
        Ok(self.byte_limit.is_none_or(|l| self.bytes_issued < l))
    }

    fn submit_error(&self, source: std::io::Error) -> JobError {
        io_error(
            &self.files[0].target.path,
            "submit",
            0,
            source,
            self.plan.direct,
        )
    }

    /// Submits the requests queued since the last submission and stamps their time
    /// (as fio does, when the submission call returned), marking those the device
    /// had already answered by then.
    fn submit_pending(&mut self) -> Result<(), JobError> {
        self.engine.submit().map_err(|e| self.submit_error(e))?;
        let t = Instant::now();
        let batch = &self.fresh[self.submitted_upto..];
        for &s in batch {
            self.slots[s].submitted_at = Some(t);
        }
        self.posted.clear();
        self.engine.posted(&mut self.posted);
        for &s in &self.posted {
            if batch.contains(&s) {
                self.slots[s].answered_in_submit = true;
            }
        }
        self.submit_batches[batch_bucket(self.fresh.len() - self.submitted_upto)] += 1;
        self.submitted_upto = self.fresh.len();
        Ok(())
    }

    /// What this round queued and did not submit yet goes now (or with the reaping
    /// call, for engines that submit and complete together).
    fn submit_rest(&mut self) -> Result<(), JobError> {
        if self.split_submit {
            if self.submitted_upto < self.fresh.len() {
                self.submit_pending()?;
            }
        } else if self.plan.detailed {
            self.submit_batches[batch_bucket(self.fresh.len())] += 1;
        }
        Ok(())
    }

    /// Waits for at least one completion and counts what completed; returns when,
    /// and how many were measured.
    fn reap(&mut self) -> Result<(Instant, u64), JobError> {
        self.done.clear();
        // If this fails the engine cannot be drained here; dropping it waits for its
        // requests before the buffers go.
        self.engine
            .submit_and_wait(1, &mut self.done)
            .map_err(|e| self.submit_error(e))?;
        let t = Instant::now();
        if self.plan.detailed {
            self.complete_batches[batch_bucket(self.done.len())] += 1;
        }
        if self.at_ramp_end.is_none() && t >= self.clock.ramp_end {
            self.at_ramp_end = Some((CpuTime::thread_now(), thread_counters()));
        }
        let mut counted = 0;
        for i in 0..self.done.len() {
            let c = self.done[i];
            if self.complete(c, t) {
                counted += 1;
            }
        }
        Ok((t, counted))
    }

    /// Frees a completion's slot and records it; false when it was not measured
    /// (failed, or outside the measured span).
    fn complete(&mut self, c: Completion, t: Instant) -> bool {
        self.in_flight -= 1;
        self.free.push(c.slot);
        let s = self.slots[c.slot];
        self.slots[c.slot].submitted_at = None;
        if matches!(s.op, Op::Datasync | Op::Fsync) {
            self.sync_in_flight = false;
        }
        let path = &self.files[s.file].target.path;
        if c.result < 0 {
            let source = std::io::Error::from_raw_os_error(-c.result as i32);
            self.failure.get_or_insert(io_error(
                path,
                op_name(s.op),
                s.offset,
                source,
                self.plan.direct,
            ));
            return false;
        }
        if matches!(s.op, Op::Read | Op::Write) && (c.result as usize) < s.len {
            self.failure.get_or_insert(JobError::Short {
                path: path.clone(),
                op: op_name(s.op),
                offset: s.offset,
                got: c.result,
                want: s.len,
            });
            return false;
        }
        if !self.clock.counts(t) {
            return false;
        }
        let lat = t.duration_since(s.queued_at).as_nanos() as u64;
        let slat = s
            .submitted_at
            .map(|x| x.saturating_duration_since(s.queued_at).as_nanos() as u64);
        let w = (t.duration_since(self.clock.ramp_end).as_nanos()
            / self.plan.window.as_nanos().max(1)) as usize;
        if self.windows.len() <= w {
            self.windows.resize(w + 1, [0; 4]);
        }
        let window = &mut self.windows[w];
        match s.op {
            Op::Read => {
                self.read
                    .record(s.len as u64, lat, slat, s.answered_in_submit);
                window[0] += 1;
                window[2] += s.len as u64;
            }
            Op::Write => {
                self.write
                    .record(s.len as u64, lat, slat, s.answered_in_submit);
                window[1] += 1;
                window[3] += s.len as u64;
            }
            Op::Datasync | Op::Fsync => self.sync.record(0, lat, None, false),
        }
        self.last_counted = t;
        true
    }

    /// Adds this round's measured completions; the first thread tells the observer
    /// where the job is, about ten times a second.
    fn report(&mut self, watch: &Watch, t: Instant, counted: u64) {
        if counted > 0 {
            watch.done.fetch_add(counted, Ordering::Relaxed);
        }
        if watch.reports && t.duration_since(self.last_tick) >= Duration::from_millis(100) {
            watch.observer.progress(&Progress::at(
                t.duration_since(self.clock.start),
                watch.done.load(Ordering::Relaxed),
            ));
            self.last_tick = t;
        }
    }

    fn finish(mut self) -> Result<JobResult, JobError> {
        if let Some(e) = self.failure.take() {
            return Err(e);
        }
        let (cpu_from, counters_from) = self
            .at_ramp_end
            .unwrap_or_else(|| (CpuTime::thread_now(), thread_counters()));
        let counters = thread_counters();
        // A partial last window would read as a drop in the timeline (and as a low
        // rate sample to fio's statistics): keep whole ones only.
        let ran_to_time =
            !self.interrupted && self.byte_limit.is_none_or(|l| self.bytes_issued < l);
        let measured_until = match self.clock.end {
            Some(e) if ran_to_time => e,
            _ => self.last_counted,
        };
        let whole = (measured_until
            .saturating_duration_since(self.clock.ramp_end)
            .as_nanos()
            / self.plan.window.as_nanos().max(1)) as usize;
        self.windows.truncate(whole.min(self.windows.len()));
        Ok(JobResult {
            read: self.read,
            write: self.write,
            sync: self.sync,
            windows: self.windows,
            window: self.plan.window,
            // Completions are counted up to the end of the runtime, so that is where
            // the span ends: a device that completes in bursts (a throttled one
            // releases its requests every few tens of ms) would otherwise have its
            // rate divided by a span cut short at the last burst, and read about 2 %
            // high over 4 s.
            elapsed: measured_until
                .saturating_duration_since(self.clock.ramp_end)
                .max(Duration::from_micros(1)),
            cpu: CpuTime::thread_now().since(&cpu_from),
            ctx: counters[0].saturating_sub(counters_from[0]),
            minor_faults: counters[1].saturating_sub(counters_from[1]),
            major_faults: counters[2].saturating_sub(counters_from[2]),
            depth_levels: self.depth_levels,
            submit_batches: self.submit_batches,
            complete_batches: self.complete_batches,
            engine: self.kind,
            skipped_engines: self.skipped,
            interrupted: self.interrupted,
            measuring_began: self.at_ramp_end.is_some(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coverage_map_touches_every_unit_once_per_pass() {
        let mut map = CoverageMap::new(130);
        let mut rng = Xoroshiro128Plus::seeded(3);
        let mut seen = vec![0u32; 130];
        for _ in 0..130 {
            seen[map.take(rng.next_u64()) as usize] += 1;
        }
        assert!(seen.iter().all(|&n| n == 1), "{seen:?}");
        // The next pass starts afresh.
        seen[map.take(7) as usize] += 1;
        assert_eq!(seen[7], 2);
    }

    #[test]
    fn size_distributions_stay_in_bounds() {
        let mut rng = Xoroshiro128Plus::seeded(9);
        let range = SizeDist::Range {
            min: 4096,
            max: 65536,
        };
        let split = SizeDist::Split(vec![(4096, 10), (65536, 90)]);
        let mut big = 0;
        for _ in 0..10_000 {
            let r = range.pick(&mut rng);
            assert!(r.is_multiple_of(4096) && (4096..=65536).contains(&r));
            if split.pick(&mut rng) == 65536 {
                big += 1;
            }
        }
        assert!((8700..9300).contains(&big), "{big}");
    }

    #[test]
    fn buckets_follow_fio() {
        assert_eq!(depth_bucket(1), 0);
        assert_eq!(depth_bucket(32), 5);
        assert_eq!(depth_bucket(64), 6);
        assert_eq!(batch_bucket(0), 0);
        assert_eq!(batch_bucket(4), 1);
        assert_eq!(batch_bucket(5), 2);
        assert_eq!(batch_bucket(65), 6);
    }
}

//! One disk job: `jobs` threads, each with its own file descriptor, engine and
//! buffers, keeping `iodepth` requests in flight for `ramp + runtime`. Completions
//! during the ramp are discarded (as fio's `ramp_time` does, CPU time included); after
//! it every completion is timed from its submission, counted per direction and per
//! second.

use super::engine::{self, Completion, EngineKind, Op, Request};
use super::files;
use crate::measure::cputime::CpuTime;
use crate::measure::histogram::{Histogram, Layout};
use crate::measure::rng::Xoroshiro128Plus;
use crate::measure::stop_requested;
use crate::workload::buffer::AlignedBuffer;
use serde::Serialize;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
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

/// Counts and latencies of one direction (or of the syncs).
#[derive(Debug, Clone)]
pub struct DirStats {
    pub ops: u64,
    pub bytes: u64,
    pub latency: Histogram,
    pub min_ns: u64,
    pub max_ns: u64,
    pub sum_ns: u64,
}

impl DirStats {
    fn new() -> Self {
        Self {
            ops: 0,
            bytes: 0,
            latency: Histogram::new(Layout::NATIVE),
            min_ns: u64::MAX,
            max_ns: 0,
            sum_ns: 0,
        }
    }

    fn record(&mut self, bytes: u64, ns: u64) {
        self.ops += 1;
        self.bytes += bytes;
        self.latency.record(ns as f64);
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
        self.sum_ns += ns;
    }

    fn merge(&mut self, o: &DirStats) {
        self.ops += o.ops;
        self.bytes += o.bytes;
        self.latency.merge(&o.latency);
        self.min_ns = self.min_ns.min(o.min_ns);
        self.max_ns = self.max_ns.max(o.max_ns);
        self.sum_ns += o.sum_ns;
    }
}

/// Per second after the ramp: [read ops, write ops, read bytes, write bytes].
pub type Second = [u64; 4];

#[derive(Debug, Clone)]
pub struct JobResult {
    pub read: DirStats,
    pub write: DirStats,
    pub sync: DirStats,
    pub seconds: Vec<Second>,
    /// Measured span: from the end of the ramp to the last counted completion.
    pub elapsed: Duration,
    pub cpu: CpuTime,
    pub engine: EngineKind,
    pub skipped_engines: Vec<String>,
    pub interrupted: bool,
}

impl JobResult {
    fn merge(&mut self, o: JobResult) {
        self.read.merge(&o.read);
        self.write.merge(&o.write);
        self.sync.merge(&o.sync);
        if self.seconds.len() < o.seconds.len() {
            self.seconds.resize(o.seconds.len(), [0; 4]);
        }
        for (a, b) in self.seconds.iter_mut().zip(&o.seconds) {
            for k in 0..4 {
                a[k] += b[k];
            }
        }
        self.elapsed = self.elapsed.max(o.elapsed);
        self.cpu.user_s += o.cpu.user_s;
        self.cpu.system_s += o.cpu.system_s;
        self.interrupted |= o.interrupted;
    }
}

/// Runs the job's threads on `path` (a laid-out file of `file_size` bytes).
pub fn run(
    spec: &JobSpec,
    path: &Path,
    file_size: u64,
    tick: &(dyn Fn(Duration) + Sync),
) -> Result<JobResult, JobError> {
    let results: Vec<Result<JobResult, JobError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..spec.jobs)
            .map(|j| {
                scope.spawn(move || {
                    run_thread(
                        spec,
                        path,
                        file_size,
                        j,
                        if j == 0 { Some(tick) } else { None },
                    )
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("disk job thread panicked"))
            .collect()
    });
    let mut merged: Option<JobResult> = None;
    for r in results {
        let r = r?;
        match &mut merged {
            None => merged = Some(r),
            Some(m) => m.merge(r),
        }
    }
    Ok(merged.expect("at least one job"))
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
    }
}

fn run_thread(
    spec: &JobSpec,
    path: &Path,
    file_size: u64,
    index: usize,
    tick: Option<&(dyn Fn(Duration) + Sync)>,
) -> Result<JobResult, JobError> {
    let file = files::open(path, spec.direct, spec.pattern.writes())?;
    let fd = file.as_raw_fd();
    let bs = spec.block_size;
    // Each slot's buffer starts on a 4 KiB boundary, whatever the block size.
    let stride = bs.next_multiple_of(4096);
    let async_depth = spec.iodepth.max(1);
    // Declared before the engine so that it outlives it: engines wait for requests in
    // flight when dropped, and those requests point into these buffers.
    let buffers = AlignedBuffer::new(async_depth * stride).ok_or_else(|| {
        io_error(
            path,
            "buffer allocation",
            0,
            std::io::Error::from(std::io::ErrorKind::OutOfMemory),
            false,
        )
    })?;
    let (mut engine, skipped) =
        engine::open(spec.engine, async_depth).map_err(|source| JobError::Engine {
            path: path.to_path_buf(),
            engine: spec.engine.map_or("any", EngineKind::name),
            source,
        })?;
    let kind = engine.kind();
    let depth = if kind.is_async() && spec.pattern != Pattern::Fsync {
        async_depth
    } else {
        1
    };
    let mut rng = Xoroshiro128Plus::seeded(spec.seed.wrapping_add(index as u64 * 0x9E37));
    // SAFETY: the buffer is ours, `async_depth * stride` bytes long.
    files::fill_random(
        unsafe { std::slice::from_raw_parts_mut(buffers.as_ptr(), async_depth * stride) },
        &mut rng,
    );

    let blocks = (file_size / bs as u64).max(1);
    let mut cursor = blocks / spec.jobs as u64 * index as u64;
    let mut free: Vec<usize> = (0..depth).rev().collect();
    let mut started = vec![Instant::now(); depth];
    let mut ops = vec![(Op::Read, 0u64); depth];
    let mut done: Vec<Completion> = Vec::with_capacity(depth);
    let (mut read, mut write, mut sync) = (DirStats::new(), DirStats::new(), DirStats::new());
    let mut seconds: Vec<Second> = Vec::new();
    let mut in_flight = 0usize;
    let mut next_is_sync = false;
    let mut writes_issued = 0u64;

    let start = Instant::now();
    let ramp_end = start + spec.ramp;
    let end = ramp_end + spec.runtime;
    // CPU time of this thread when the ramp ended.
    let mut cpu_at_ramp_end: Option<CpuTime> = None;
    let mut last_counted = ramp_end;
    let mut last_tick = start;
    let mut interrupted = false;
    // The first error stops new requests; the loop still reaps what is in flight.
    let mut failure: Option<JobError> = None;

    loop {
        let now = Instant::now();
        if stop_requested() {
            interrupted = true;
        }
        let issuing = now < end && !interrupted && failure.is_none();
        if issuing {
            while let Some(slot) = free.pop() {
                let op = if spec.pattern == Pattern::Fsync {
                    if next_is_sync {
                        Op::Datasync
                    } else {
                        Op::Write
                    }
                } else if spec.pattern.reads() && spec.pattern.writes() {
                    if (rng.next_u64() % 100) < spec.read_pct as u64 {
                        Op::Read
                    } else {
                        Op::Write
                    }
                } else if spec.pattern.reads() {
                    Op::Read
                } else {
                    Op::Write
                };
                next_is_sync = spec.pattern == Pattern::Fsync && op == Op::Write;
                let offset = match op {
                    Op::Datasync => 0,
                    _ if spec.pattern.is_random() => rng.next_u64() % blocks * bs as u64,
                    _ => {
                        cursor += 1;
                        (cursor - 1) % blocks * bs as u64
                    }
                };
                // SAFETY: slot < depth <= async_depth, so the slot's buffer lies inside `buffers`.
                let buf = unsafe { buffers.as_ptr().add(slot * stride) };
                if op == Op::Write {
                    // Change every written block so deduplicating storage cannot skip it.
                    writes_issued += 1;
                    // SAFETY: buf is 4096-aligned and holds bs >= 512 bytes.
                    unsafe { buf.cast::<u64>().write(writes_issued ^ rng.next_u64()) };
                }
                ops[slot] = (op, offset);
                started[slot] = Instant::now();
                let request = Request {
                    fd,
                    slot,
                    op,
                    offset,
                    len: bs,
                    buf,
                };
                // SAFETY: the slot's buffer lives in `buffers`, which outlives the
                // engine, and the slot is not reused before its completion is reaped.
                if let Err(source) = unsafe { engine.queue(request) } {
                    failure = Some(io_error(path, op_name(op), offset, source, spec.direct));
                    free.push(slot);
                    break;
                }
                in_flight += 1;
                if spec.pattern == Pattern::Fsync {
                    break;
                }
            }
        }
        if in_flight == 0 {
            break;
        }
        done.clear();
        // If this fails the engine cannot be drained here; dropping it waits for its
        // requests before the buffers go.
        engine
            .submit_and_wait(1, &mut done)
            .map_err(|source| io_error(path, "submit", 0, source, spec.direct))?;
        let t = Instant::now();
        if cpu_at_ramp_end.is_none() && t >= ramp_end {
            cpu_at_ramp_end = Some(CpuTime::thread_now());
        }
        for c in &done {
            in_flight -= 1;
            free.push(c.slot);
            let (op, offset) = ops[c.slot];
            if c.result < 0 {
                let source = std::io::Error::from_raw_os_error(-c.result as i32);
                failure.get_or_insert(io_error(path, op_name(op), offset, source, spec.direct));
                continue;
            }
            if op != Op::Datasync && (c.result as usize) < bs {
                failure.get_or_insert(JobError::Short {
                    path: path.to_path_buf(),
                    op: op_name(op),
                    offset,
                    got: c.result,
                    want: bs,
                });
                continue;
            }
            if t < ramp_end || t > end {
                continue;
            }
            let ns = t.duration_since(started[c.slot]).as_nanos() as u64;
            let second = t.duration_since(ramp_end).as_secs() as usize;
            if seconds.len() <= second {
                seconds.resize(second + 1, [0; 4]);
            }
            match op {
                Op::Read => {
                    read.record(bs as u64, ns);
                    seconds[second][0] += 1;
                    seconds[second][2] += bs as u64;
                }
                Op::Write => {
                    write.record(bs as u64, ns);
                    seconds[second][1] += 1;
                    seconds[second][3] += bs as u64;
                }
                Op::Datasync => sync.record(0, ns),
            }
            last_counted = t;
        }
        if let Some(tick) = tick
            && t.duration_since(last_tick) >= Duration::from_millis(100)
        {
            tick(t.duration_since(start));
            last_tick = t;
        }
    }
    if let Some(e) = failure {
        return Err(e);
    }
    let cpu_from = cpu_at_ramp_end.unwrap_or_else(CpuTime::thread_now);
    // A partial last second would read as a drop in the timeline: keep whole seconds.
    let measured_until = if interrupted { last_counted } else { end };
    let whole = measured_until.saturating_duration_since(ramp_end).as_secs() as usize;
    seconds.truncate(whole.max(1).min(seconds.len()));
    Ok(JobResult {
        read,
        write,
        sync,
        seconds,
        elapsed: last_counted
            .saturating_duration_since(ramp_end)
            .max(Duration::from_micros(1)),
        cpu: CpuTime::thread_now().since(&cpu_from),
        engine: kind,
        skipped_engines: skipped,
        interrupted,
    })
}

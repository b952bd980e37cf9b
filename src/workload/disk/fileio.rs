//! sysbench 1.0.20's `fileio` test, event for event (reference: disk.md §2).
//!
//! `file_num` files `test_file.N` of `total / file_num` bytes each, in the current
//! directory as sysbench makes them. One event is one read, one write or one fsync:
//! sequential modes share one cursor across threads, random modes draw a block
//! uniformly over the whole set (repeats allowed), `rndrw` reads while
//! `(reads + 1) / (writes + 1) < rw_ratio`, and every `fsync_freq` requests after a
//! write the next `file_num` events fsync each file in turn. I/O modes: `sync`
//! (pread/pwrite), `async` (Linux AIO with a per-thread backlog; an event ends at
//! submission, as in sysbench) and `mmap` (copies to and from shared mappings).

use super::engine::{self, Completion, Engine, EngineKind, Op, Request};
use crate::host::HostInfo;
use crate::measure::rng::Xoroshiro128Plus;
use crate::model::{Metric, Outcome, Unit};
use crate::workload::buffer::AlignedBuffer;
use crate::workload::runner::{self, EventWorker, Observer, RunOptions};
use crate::workload::{SpecError, record_run};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use thiserror::Error;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FileMode {
    SeqWr,
    SeqRewr,
    SeqRd,
    RndRd,
    RndWr,
    RndRw,
}

impl FileMode {
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "seqwr" => FileMode::SeqWr,
            "seqrewr" => FileMode::SeqRewr,
            "seqrd" => FileMode::SeqRd,
            "rndrd" => FileMode::RndRd,
            "rndwr" => FileMode::RndWr,
            "rndrw" => FileMode::RndRw,
            _ => return None,
        })
    }

    /// sysbench's `Doing ... test` wording.
    pub fn description(self) -> &'static str {
        match self {
            FileMode::SeqWr => "sequential write (creation)",
            FileMode::SeqRewr => "sequential rewrite",
            FileMode::SeqRd => "sequential read",
            FileMode::RndRd => "random read",
            FileMode::RndWr => "random write",
            FileMode::RndRw => "random r/w",
        }
    }

    pub fn sequential(self) -> bool {
        matches!(self, FileMode::SeqWr | FileMode::SeqRewr | FileMode::SeqRd)
    }

    pub fn read_only(self) -> bool {
        matches!(self, FileMode::SeqRd | FileMode::RndRd)
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum IoMode {
    #[default]
    Sync,
    Async,
    Mmap,
}

impl IoMode {
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "sync" => IoMode::Sync,
            "async" => IoMode::Async,
            "mmap" => IoMode::Mmap,
            _ => return None,
        })
    }

    /// sysbench's `Using ... I/O mode` wording.
    pub fn description(self) -> &'static str {
        match self {
            IoMode::Sync => "synchronous",
            IoMode::Async => "asynchronous",
            IoMode::Mmap => "fast mmaped",
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ExtraFlags {
    pub sync: bool,
    pub dsync: bool,
    pub direct: bool,
}

impl ExtraFlags {
    fn open_flags(self) -> i32 {
        (if self.sync { libc::O_SYNC } else { 0 })
            | (if self.dsync { libc::O_DSYNC } else { 0 })
            | (if self.direct { libc::O_DIRECT } else { 0 })
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct FileioSpec {
    pub run: RunOptions,
    pub threads: usize,
    pub dir: PathBuf,
    pub file_num: usize,
    pub block_size: usize,
    pub total_size: u64,
    pub mode: Option<FileMode>,
    pub extra_flags: ExtraFlags,
    pub io_mode: IoMode,
    /// Requests in flight per thread in async mode.
    pub async_backlog: usize,
    pub fsync_freq: u64,
    pub fsync_all: bool,
    pub fsync_end: bool,
    /// fdatasync instead of fsync.
    pub fdatasync: bool,
    pub merged_requests: u64,
    pub rw_ratio: f64,
    pub seed: Option<u64>,
    pub percentiles: Vec<f64>,
}

impl FileioSpec {
    /// What identifies the measurement (`Outcome::params`), in sysbench's words:
    /// the total size decides how much of the files a page cache holds, so it is
    /// among them; where the files are is not.
    pub fn params(&self) -> crate::model::Params {
        let mut p = crate::model::Params::new();
        let mode = self
            .mode
            .map_or("none".to_string(), |m| format!("{m:?}").to_lowercase());
        p.insert("file-test-mode".into(), mode);
        p.insert("file-block-size".into(), self.block_size.to_string());
        p.insert("file-num".into(), self.file_num.to_string());
        p.insert("file-total-size".into(), self.total_size.to_string());
        p.insert(
            "file-io-mode".into(),
            format!("{:?}", self.io_mode).to_lowercase(),
        );
        let ExtraFlags {
            sync,
            dsync,
            direct,
        } = self.extra_flags;
        let flags: Vec<&str> = [(sync, "sync"), (dsync, "dsync"), (direct, "direct")]
            .iter()
            .filter(|f| f.0)
            .map(|f| f.1)
            .collect();
        p.insert("file-extra-flags".into(), flags.join(","));
        p.insert("file-fsync-freq".into(), self.fsync_freq.to_string());
        p.insert("file-fsync-all".into(), self.fsync_all.to_string());
        p.insert("file-fsync-end".into(), self.fsync_end.to_string());
        p.insert(
            "file-fsync-mode".into(),
            if self.fdatasync { "fdatasync" } else { "fsync" }.into(),
        );
        p.insert(
            "file-merged-requests".into(),
            self.merged_requests.to_string(),
        );
        if self.mode == Some(FileMode::RndRw) {
            p.insert("file-rw-ratio".into(), self.rw_ratio.to_string());
        }
        if self.io_mode == IoMode::Async {
            p.insert("file-async-backlog".into(), self.async_backlog.to_string());
        }
        p
    }

    pub fn file_size(&self) -> u64 {
        self.total_size / self.file_num.max(1) as u64
    }

    pub fn path(&self, i: usize) -> PathBuf {
        self.dir.join(format!("test_file.{i}"))
    }

    /// Bytes per sequential request (merged requests apply to sequential modes).
    fn request_size(&self) -> u64 {
        (self.block_size as u64)
            .saturating_mul(self.merged_requests.max(1))
            .min(self.file_size().max(self.block_size as u64))
    }

    pub fn validate(&self) -> Result<(), SpecError> {
        crate::workload::check_threads(self.threads)?;
        if self.file_num == 0 {
            return Err(SpecError::new("file-num=0", "no files", "use 1 or more"));
        }
        if self.block_size == 0 {
            return Err(SpecError::new(
                "file-block-size=0",
                "empty requests",
                "use e.g. 16384",
            ));
        }
        if self.file_size() == 0 {
            return Err(SpecError::new(
                format!("file-total-size={}", self.total_size),
                "each file would be empty",
                "use a --file-total-size of at least --file-num bytes",
            ));
        }
        Ok(())
    }
}

#[derive(Debug, Error)]
pub enum FileioError {
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error("Cannot open file '{name}' errno = {errno} ({message})")]
    Open {
        name: String,
        errno: i32,
        message: String,
    },
    #[error(
        "Size of file '{name}' is {}, but at least {} is expected.",
        crate::units::format_size_g(*have),
        crate::units::format_size_g(*want)
    )]
    TooSmall { name: String, have: u64, want: u64 },
    #[error("Failed to {op} file '{name}' at offset {offset}: errno = {errno} ({message})")]
    Io {
        op: &'static str,
        name: String,
        offset: u64,
        errno: i32,
        message: String,
    },
    /// Ctrl-C during `prepare`: the file being written is left as long as it got, so
    /// the next `prepare` extends it (as it extends any short file).
    #[error(
        "interrupted while writing '{name}': {written} bytes written in all; run prepare again to finish the files"
    )]
    Interrupted { name: String, written: u64 },
}

fn io_error(op: &'static str, name: &str, offset: u64, e: &io::Error) -> FileioError {
    FileioError::Io {
        op,
        name: name.to_string(),
        offset,
        errno: e.raw_os_error().unwrap_or(0),
        message: strerror(e),
    }
}

/// `No such file or directory`, without Rust's "(os error 2)".
pub fn strerror(e: &io::Error) -> String {
    let s = e.to_string();
    s.find(" (os error")
        .map_or(s.clone(), |i| s[..i].to_string())
}

/// What `prepare` did with one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileAction {
    Created,
    Reused,
    Extended,
}

/// Creates or extends the test files to their size (random bytes, synced); reports
/// each file before writing it. Returns the bytes written and the time it took.
pub fn prepare(
    spec: &FileioSpec,
    report: &mut dyn FnMut(&str, FileAction),
) -> Result<(u64, Duration), FileioError> {
    spec.validate()?;
    let size = spec.file_size();
    let buffer = AlignedBuffer::new(spec.block_size).expect("block buffer");
    let mut rng = Xoroshiro128Plus::seeded(spec.seed.unwrap_or(1));
    // SAFETY: our own buffer of block_size bytes.
    let block = unsafe { std::slice::from_raw_parts_mut(buffer.as_ptr(), spec.block_size) };
    super::files::fill_random(block, &mut rng);
    let start = Instant::now();
    let mut written = 0;
    for i in 0..spec.file_num {
        let name = file_name(i);
        let file = open_file(spec, i, true, false)?;
        let have = file.metadata().map(|m| m.len()).unwrap_or(0);
        let action = match have {
            0 => FileAction::Created,
            h if h >= size => FileAction::Reused,
            _ => FileAction::Extended,
        };
        report(&name, action);
        // Whole blocks, as sysbench writes them: a file ends on a block boundary.
        let mut offset = have - have % spec.block_size as u64;
        while offset < size {
            if crate::measure::stop_requested() {
                return Err(FileioError::Interrupted { name, written });
            }
            let n = spec.block_size;
            file.write_all_at(&block[..n], offset)
                .map_err(|e| io_error("write", &name, offset, &e))?;
            offset += n as u64;
            written += n as u64;
        }
        file.sync_all()
            .map_err(|e| io_error("fsync", &name, 0, &e))?;
    }
    Ok((written, start.elapsed()))
}

/// Opens `test_file.i` for reading and writing with the extra flags, creating it
/// (mode 0600, as sysbench does) and truncating it when asked.
fn open_file(
    spec: &FileioSpec,
    i: usize,
    create: bool,
    truncate: bool,
) -> Result<File, FileioError> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(create)
        .truncate(truncate)
        .mode(0o600)
        .custom_flags(spec.extra_flags.open_flags())
        .open(spec.path(i))
        .map_err(|e| FileioError::Open {
            name: file_name(i),
            errno: e.raw_os_error().unwrap_or(0),
            message: strerror(&e),
        })
}

/// Removes the test files; missing ones are not an error.
pub fn cleanup(spec: &FileioSpec) -> io::Result<()> {
    for i in 0..spec.file_num {
        match std::fs::remove_file(spec.path(i)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    Ok(())
}

/// Completed operations, readable while the test runs (interval lines).
#[derive(Debug, Default)]
pub struct Counters {
    pub reads: AtomicU64,
    pub writes: AtomicU64,
    pub fsyncs: AtomicU64,
    pub bytes_read: AtomicU64,
    pub bytes_written: AtomicU64,
}

#[derive(Debug, Clone, Copy)]
enum Req {
    Read { file: usize, pos: u64, len: usize },
    Write { file: usize, pos: u64, len: usize },
    Fsync { file: usize },
}

/// The request generator sysbench shares between threads (under one mutex).
struct Generator {
    current_file: usize,
    position: u64,
    requests: u64,
    dirty: bool,
    /// Next file to fsync while a periodic fsync cycle runs.
    fsyncing: Option<usize>,
    // Requests generated (for the fsync cycle); completed reads and writes (for the
    // rw ratio).
    reads: u64,
    writes: u64,
}

pub struct FileTest {
    spec: FileioSpec,
    files: Vec<File>,
    /// Whole-file shared mappings in mmap mode (address, length).
    maps: Vec<(usize, usize)>,
    generator: Mutex<Generator>,
    counters: Arc<Counters>,
    failed: AtomicBool,
    error: Mutex<Option<FileioError>>,
}

impl FileTest {
    /// Opens the prepared files and checks their sizes, as sysbench's `run` does.
    pub fn open(spec: &FileioSpec) -> Result<Self, FileioError> {
        spec.validate()?;
        let mut files = Vec::with_capacity(spec.file_num);
        // seqwr measures writing new files: sysbench recreates them empty at `run`.
        let recreate = spec.mode == Some(FileMode::SeqWr);
        for i in 0..spec.file_num {
            let name = file_name(i);
            let file = open_file(spec, i, recreate, recreate)?;
            let have = file.metadata().map(|m| m.len()).unwrap_or(0);
            if !recreate && have < spec.file_size() {
                return Err(FileioError::TooSmall {
                    name,
                    have,
                    want: spec.file_size(),
                });
            }
            files.push(file);
        }
        let mut maps = Vec::new();
        if spec.io_mode == IoMode::Mmap {
            for (i, f) in files.iter().enumerate() {
                let len = spec.file_size() as usize;
                // SAFETY: mapping an open file we keep open for the mapping's lifetime.
                let addr = unsafe {
                    libc::mmap(
                        std::ptr::null_mut(),
                        len,
                        libc::PROT_READ | libc::PROT_WRITE,
                        libc::MAP_SHARED,
                        std::os::fd::AsRawFd::as_raw_fd(f),
                        0,
                    )
                };
                if addr == libc::MAP_FAILED {
                    let e = io::Error::last_os_error();
                    return Err(io_error("mmap", &format!("test_file.{i}"), 0, &e));
                }
                maps.push((addr as usize, len));
            }
        }
        Ok(Self {
            spec: spec.clone(),
            files,
            maps,
            generator: Mutex::new(Generator {
                current_file: 0,
                position: 0,
                requests: 0,
                dirty: false,
                fsyncing: None,
                reads: 0,
                writes: 0,
            }),
            counters: Arc::new(Counters::default()),
            failed: AtomicBool::new(false),
            error: Mutex::new(None),
        })
    }

    pub fn counters(&self) -> Arc<Counters> {
        Arc::clone(&self.counters)
    }

    fn next_request(&self, rng: &mut Xoroshiro128Plus) -> Req {
        let s = &self.spec;
        let mode = s.mode.unwrap_or(FileMode::RndRd);
        let mut g = self.generator.lock().unwrap_or_else(|e| e.into_inner());
        // A periodic fsync cycle: every file in turn, then back to requests.
        let periodic = s.fsync_freq > 0 && !s.fsync_all && !mode.read_only();
        if periodic && g.fsyncing.is_none() && g.dirty && g.requests.is_multiple_of(s.fsync_freq) {
            g.fsyncing = Some(0);
        }
        if let Some(file) = g.fsyncing {
            g.fsyncing = (file + 1 < s.file_num).then_some(file + 1);
            if g.fsyncing.is_none() {
                g.dirty = false;
            }
            return Req::Fsync { file };
        }
        let file_size = s.file_size();
        // The read and write counts move when requests complete (see `count`), as in
        // sysbench: in async mode they lag the requests in flight. The request count
        // and the dirty flag belong to the generator.
        let write = match mode {
            FileMode::SeqRd | FileMode::RndRd => false,
            FileMode::SeqWr | FileMode::SeqRewr | FileMode::RndWr => true,
            FileMode::RndRw => (g.reads + 1) as f64 / (g.writes + 1) as f64 >= s.rw_ratio,
        };
        g.requests += 1;
        g.dirty |= write;
        let (file, pos, len) = if mode.sequential() {
            let (file, pos) = (g.current_file, g.position);
            let len = s.request_size().min(file_size - pos);
            g.position += len;
            if g.position >= file_size {
                g.position = 0;
                g.current_file = (g.current_file + 1) % s.file_num;
            }
            (file, pos, len as usize)
        } else {
            drop(g);
            let total = file_size * s.file_num as u64;
            let at = (rng.next_f64() * total as f64) as u64;
            let at = at - at % s.block_size as u64;
            (
                (at / file_size) as usize % s.file_num,
                at % file_size,
                s.block_size.min((file_size - at % file_size) as usize),
            )
        };
        if write {
            Req::Write { file, pos, len }
        } else {
            Req::Read { file, pos, len }
        }
    }

    fn fail(&self, e: FileioError) {
        self.failed.store(true, Ordering::Relaxed);
        let mut slot = self.error.lock().unwrap_or_else(|e| e.into_inner());
        slot.get_or_insert(e);
    }

    fn sync(&self, file: usize) -> io::Result<()> {
        if let Some(&(addr, len)) = self.maps.get(file) {
            // SAFETY: a mapping we created and keep until drop.
            let r = unsafe {
                libc::msync(
                    addr as *mut libc::c_void,
                    len,
                    libc::MS_SYNC | libc::MS_INVALIDATE,
                )
            };
            return if r == 0 {
                Ok(())
            } else {
                Err(io::Error::last_os_error())
            };
        }
        if self.spec.fdatasync {
            self.files[file].sync_data()
        } else {
            self.files[file].sync_all()
        }
    }

    /// Runs the test with the event runner; the outcome carries sysbench's figures.
    pub fn run(self, observer: &dyn Observer) -> Result<Outcome, FileioError> {
        let test = Arc::new(self);
        let s = &test.spec;
        let mut workers = Vec::with_capacity(s.threads);
        for t in 0..s.threads {
            let slots = if s.io_mode == IoMode::Async {
                s.async_backlog.max(1)
            } else {
                1
            };
            let stride = (s.request_size() as usize).next_multiple_of(4096);
            let buffer = AlignedBuffer::new(slots * stride).ok_or_else(|| {
                let e = io::Error::from(io::ErrorKind::OutOfMemory);
                io_error("allocate buffers for", "test files", 0, &e)
            })?;
            let aio = if s.io_mode == IoMode::Async {
                let (engine, _) = engine::open(Some(EngineKind::Libaio), slots)
                    .map_err(|e| io_error("set up Linux AIO for", "test_file.0", 0, &e))?;
                Some(AsyncIo {
                    engine,
                    free: (0..slots).rev().collect(),
                    slots: vec![Req::Fsync { file: 0 }; slots],
                    in_flight: 0,
                    done: Vec::with_capacity(slots),
                })
            } else {
                None
            };
            let mut rng = match s.seed {
                Some(seed) => Xoroshiro128Plus::seeded(seed.wrapping_add(t as u64)),
                None => Xoroshiro128Plus::from_entropy(t as u64),
            };
            // SAFETY: our own buffer of request_size bytes.
            super::files::fill_random(
                unsafe { std::slice::from_raw_parts_mut(buffer.as_ptr(), slots * stride) },
                &mut rng,
            );
            workers.push(FileWorker {
                aio,
                test: Arc::clone(&test),
                buffer,
                stride,
                rng,
                next: None,
            });
        }
        let result = runner::run(&s.run, workers, observer);
        if let Some(e) = test.error.lock().unwrap_or_else(|e| e.into_inner()).take() {
            return Err(e);
        }
        let mut o = Outcome::new(
            "fileio",
            serde_json::to_value(s).unwrap_or_default(),
            HostInfo::detect(),
        );
        o.params = s.params();
        record_run(&mut o, &result, |i| {
            BTreeMap::from([("events_per_sec".into(), i.events_per_sec())])
        });
        let secs = result.elapsed.as_secs_f64().max(1e-9);
        let c = &test.counters;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed) as f64;
        for (name, value, unit) in [
            ("reads_per_sec", get(&c.reads), Unit::OpsPerSec),
            ("writes_per_sec", get(&c.writes), Unit::OpsPerSec),
            ("fsyncs_per_sec", get(&c.fsyncs), Unit::OpsPerSec),
            ("read_bytes_per_sec", get(&c.bytes_read), Unit::BytesPerSec),
            (
                "write_bytes_per_sec",
                get(&c.bytes_written),
                Unit::BytesPerSec,
            ),
            ("events_per_sec", result.events() as f64, Unit::EventsPerSec),
        ] {
            o.push(Metric::new(name, value / secs, unit).threads(s.threads));
        }
        let mut ps = crate::model::STANDARD_PERCENTILES.to_vec();
        ps.extend(
            s.percentiles
                .iter()
                .filter(|p| !ps.contains(p))
                .copied()
                .collect::<Vec<_>>(),
        );
        o.latency = Some(result.latency(&ps));
        if !s.extra_flags.direct && s.mode.is_some_and(FileMode::read_only) {
            o.note("buffered reads of files just prepared come from the page cache: memory speed, not the disk's (add --file-extra-flags=direct)");
        }
        o.note(
            "an event is one read, one write or one fsync; latency mixes all three, as in sysbench",
        );
        Ok(o)
    }
}

impl Drop for FileTest {
    fn drop(&mut self) {
        for &(addr, len) in &self.maps {
            // SAFETY: unmapping what `open` mapped; no worker is left to use it.
            unsafe { libc::munmap(addr as *mut libc::c_void, len) };
        }
    }
}

/// Async mode's per-thread state. Declared before the buffer in `FileWorker` so it is
/// dropped first: the engine waits for its requests, which point into the buffer.
struct AsyncIo {
    engine: Box<dyn Engine + Send>,
    free: Vec<usize>,
    /// The request each slot carries.
    slots: Vec<Req>,
    in_flight: usize,
    done: Vec<Completion>,
}

struct FileWorker {
    aio: Option<AsyncIo>,
    test: Arc<FileTest>,
    buffer: AlignedBuffer,
    /// Bytes between two request buffers in `buffer` (async mode has one per slot).
    stride: usize,
    rng: Xoroshiro128Plus,
    next: Option<Req>,
}

impl EventWorker for FileWorker {
    fn next_event(&mut self) -> bool {
        if self.test.failed.load(Ordering::Relaxed) {
            return false;
        }
        self.next = Some(self.test.next_request(&mut self.rng));
        true
    }

    fn execute(&mut self) {
        let Some(req) = self.next.take() else { return };
        let result = match (&mut self.aio, req) {
            (Some(aio), Req::Read { .. } | Req::Write { .. }) => {
                submit(aio, &self.test, &self.buffer, self.stride, req)
            }
            _ => run_now(&self.test, &self.buffer, req),
        };
        if let Err(e) = result {
            self.test.fail(e);
        }
    }

    fn finish(&mut self) {
        if let Some(aio) = &mut self.aio {
            while aio.in_flight > 0 {
                if let Err(e) = reap(aio, &self.test, 1) {
                    self.test.fail(e);
                    break;
                }
            }
        }
        let t = &self.test;
        // sysbench syncs every file when a thread ends (counted as fsyncs), unless
        // every write was synced already.
        if t.spec.fsync_end && !t.spec.fsync_all && !t.spec.mode.is_some_and(FileMode::read_only) {
            for file in 0..t.files.len() {
                match t.sync(file) {
                    Ok(()) => {
                        t.counters.fsyncs.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => t.fail(io_error("fsync", &file_name(file), 0, &e)),
                }
            }
        }
    }
}

fn file_name(file: usize) -> String {
    format!("test_file.{file}")
}

/// Counts a completed request, and fsyncs after it when every write must be synced.
fn count(t: &FileTest, req: Req) -> Result<(), FileioError> {
    let c = &t.counters;
    if !matches!(req, Req::Fsync { .. }) {
        let mut g = t.generator.lock().unwrap_or_else(|e| e.into_inner());
        if matches!(req, Req::Write { .. }) {
            g.writes += 1;
        } else {
            g.reads += 1;
        }
    }
    match req {
        Req::Read { len, .. } => {
            c.reads.fetch_add(1, Ordering::Relaxed);
            c.bytes_read.fetch_add(len as u64, Ordering::Relaxed);
        }
        Req::Write { file, len, .. } => {
            c.writes.fetch_add(1, Ordering::Relaxed);
            c.bytes_written.fetch_add(len as u64, Ordering::Relaxed);
            if t.spec.fsync_all {
                t.sync(file)
                    .map_err(|e| io_error("fsync", &file_name(file), 0, &e))?;
                c.fsyncs.fetch_add(1, Ordering::Relaxed);
            }
        }
        Req::Fsync { .. } => {
            c.fsyncs.fetch_add(1, Ordering::Relaxed);
        }
    }
    Ok(())
}

/// sync and mmap modes: the request completes inside the event.
fn run_now(t: &FileTest, buffer: &AlignedBuffer, req: Req) -> Result<(), FileioError> {
    // SAFETY: the worker's own buffer holds at least one request (len <= request size).
    let buf = |len: usize| unsafe { std::slice::from_raw_parts_mut(buffer.as_ptr(), len) };
    match req {
        Req::Read { file, pos, len } => match t.maps.get(file) {
            // memcpy through FFI: the mapping is shared with other threads and with the
            // kernel, outside what Rust's aliasing rules can describe.
            // SAFETY: pos + len lies within the mapped file; the buffer holds len bytes.
            Some(&(addr, _)) => unsafe {
                libc::memcpy(
                    buffer.as_ptr().cast(),
                    (addr + pos as usize) as *const libc::c_void,
                    len,
                );
            },
            None => t.files[file]
                .read_exact_at(buf(len), pos)
                .map_err(|e| io_error("read from", &file_name(file), pos, &e))?,
        },
        Req::Write { file, pos, len } => match t.maps.get(file) {
            // SAFETY: as for reads.
            Some(&(addr, _)) => unsafe {
                libc::memcpy(
                    (addr + pos as usize) as *mut libc::c_void,
                    buffer.as_ptr().cast(),
                    len,
                );
            },
            None => t.files[file]
                .write_all_at(buf(len), pos)
                .map_err(|e| io_error("write to", &file_name(file), pos, &e))?,
        },
        Req::Fsync { file } => t
            .sync(file)
            .map_err(|e| io_error("fsync", &file_name(file), 0, &e))?,
    }
    count(t, req)
}

/// async mode: queue the request and return once it is submitted; when the backlog
/// is full, first wait for completions (sysbench waits the same way, and looks for
/// completions only then).
fn submit(
    aio: &mut AsyncIo,
    t: &FileTest,
    buffer: &AlignedBuffer,
    stride: usize,
    req: Req,
) -> Result<(), FileioError> {
    if aio.free.is_empty() {
        reap(aio, t, 1)?;
    }
    let slot = aio.free.pop().expect("a slot is free after a completion");
    let (op, file, pos, len) = match req {
        Req::Read { file, pos, len } => (Op::Read, file, pos, len),
        Req::Write { file, pos, len } => (Op::Write, file, pos, len),
        Req::Fsync { .. } => unreachable!("fsyncs run synchronously"),
    };
    let request = Request {
        fd: std::os::fd::AsRawFd::as_raw_fd(&t.files[file]),
        slot,
        op,
        offset: pos,
        len,
        // SAFETY: slot < backlog, so the slot's buffer lies inside `buffer`.
        buf: unsafe { buffer.as_ptr().add(slot * stride) },
    };
    // SAFETY: the buffer outlives the engine (field order in FileWorker), and the slot
    // is not reused before its completion is reaped.
    unsafe { aio.engine.queue(request) }
        .map_err(|e| io_error("submit", &file_name(file), pos, &e))?;
    aio.slots[slot] = req;
    aio.in_flight += 1;
    aio.engine
        .submit()
        .map_err(|e| io_error("submit", &file_name(file), pos, &e))
}

/// Submits what is queued and counts completions, waiting for at least `min`.
fn reap(aio: &mut AsyncIo, t: &FileTest, min: usize) -> Result<(), FileioError> {
    aio.done.clear();
    aio.engine
        .submit_and_wait(min, &mut aio.done)
        .map_err(|e| io_error("wait for", "test files", 0, &e))?;
    for c in std::mem::take(&mut aio.done) {
        aio.in_flight -= 1;
        aio.free.push(c.slot);
        let req = aio.slots[c.slot];
        let (file, pos, len) = match req {
            Req::Read { file, pos, len } | Req::Write { file, pos, len } => (file, pos, len),
            Req::Fsync { file } => (file, 0, 0),
        };
        if c.result < 0 {
            let e = io::Error::from_raw_os_error(-c.result as i32);
            return Err(io_error("complete I/O on", &file_name(file), pos, &e));
        }
        if (c.result as usize) < len {
            let e = io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("short transfer: {} of {len} bytes", c.result),
            );
            return Err(io_error("complete I/O on", &file_name(file), pos, &e));
        }
        count(t, req)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::histogram::Layout;

    fn spec(dir: &std::path::Path, mode: FileMode) -> FileioSpec {
        FileioSpec {
            run: RunOptions {
                time: None,
                events: Some(1000),
                report_interval: None,
                layout: Layout::SYSBENCH,
            },
            threads: 1,
            dir: dir.to_path_buf(),
            file_num: 4,
            block_size: 4096,
            total_size: 1 << 20,
            mode: Some(mode),
            extra_flags: ExtraFlags::default(),
            io_mode: IoMode::Sync,
            async_backlog: 128,
            fsync_freq: 100,
            fsync_all: false,
            fsync_end: true,
            fdatasync: false,
            merged_requests: 0,
            rw_ratio: 1.5,
            seed: Some(1),
            percentiles: vec![95.0],
        }
    }

    #[test]
    fn prepare_reuses_and_cleanup_removes() {
        let dir = tempfile::tempdir().unwrap();
        let s = spec(dir.path(), FileMode::RndRd);
        let mut seen = Vec::new();
        let (bytes, _) = prepare(&s, &mut |n, a| seen.push((n.to_string(), a))).unwrap();
        assert_eq!(bytes, 1 << 20);
        assert_eq!(seen[0], ("test_file.0".to_string(), FileAction::Created));
        let (bytes, _) = prepare(&s, &mut |_, a| assert_eq!(a, FileAction::Reused)).unwrap();
        assert_eq!(bytes, 0);
        cleanup(&s).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn periodic_fsync_cycles_through_every_file() {
        let dir = tempfile::tempdir().unwrap();
        let s = spec(dir.path(), FileMode::RndWr);
        prepare(&s, &mut |_, _| {}).unwrap();
        let test = FileTest::open(&s).unwrap();
        let counters = test.counters();
        test.run(&runner::Quiet).unwrap();
        // 1000 events: every 100 writes are followed by 4 fsyncs (one per file), so
        // 9 cycles of 104 events, then 64 writes; the end of the test syncs the 4
        // files once more.
        assert_eq!(counters.writes.load(Ordering::Relaxed), 964);
        assert_eq!(counters.fsyncs.load(Ordering::Relaxed), 36 + 4);
    }

    #[test]
    fn rndrw_keeps_the_ratio() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = spec(dir.path(), FileMode::RndRw);
        s.fsync_freq = 0;
        prepare(&s, &mut |_, _| {}).unwrap();
        let test = FileTest::open(&s).unwrap();
        let counters = test.counters();
        test.run(&runner::Quiet).unwrap();
        let (r, w) = (
            counters.reads.load(Ordering::Relaxed),
            counters.writes.load(Ordering::Relaxed),
        );
        assert_eq!(r + w, 1000);
        assert!((r as f64 / w as f64 - 1.5).abs() < 0.01, "{r}/{w}");
    }

    #[test]
    fn missing_files_are_reported_as_sysbench_does() {
        let dir = tempfile::tempdir().unwrap();
        let err = FileTest::open(&spec(dir.path(), FileMode::RndRd))
            .err()
            .unwrap();
        assert_eq!(
            err.to_string(),
            "Cannot open file 'test_file.0' errno = 2 (No such file or directory)"
        );
    }
}

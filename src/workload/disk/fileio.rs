//! sysbench 1.0.20's `fileio` test, event for event (reference: disk.md §2).
//!
//! `file_num` files `test_file.N` of `total / file_num` bytes each, in the current
//! directory as sysbench makes them. One event is one read, one write or one fsync:
//! sequential modes share one cursor across threads, random modes draw a block
//! uniformly over the whole set (repeats allowed), `rndrw` reads while
//! `(reads + 1) / (writes + 1) < rw_ratio`, and every `fsync_freq` requests after a
//! write the next `file_num` events fsync each file in turn. Only the synchronous I/O
//! mode is implemented.

use crate::host::HostInfo;
use crate::measure::rng::Xoroshiro128Plus;
use crate::measure::runner::{self, EventWorker, Observer, RunOptions};
use crate::model::{Latency, Metric, Outcome, Unit};
use crate::workload::buffer::AlignedBuffer;
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
    pub fn file_size(&self) -> u64 {
        self.total_size / self.file_num.max(1) as u64
    }

    pub fn path(&self, i: usize) -> PathBuf {
        self.dir.join(format!("test_file.{i}"))
    }

    /// Bytes per sequential request (merged requests apply to sequential modes).
    fn request_size(&self) -> u64 {
        self.block_size as u64 * self.merged_requests.max(1)
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
        if self.file_size() < self.block_size as u64 {
            return Err(SpecError::new(
                format!("file-total-size={}", self.total_size),
                "each file is smaller than one block",
                "use a larger --file-total-size or fewer files",
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
    #[error("Size of file '{name}' is {have}MiB, but at least {want}MiB is expected.")]
    TooSmall { name: String, have: u64, want: u64 },
    #[error("Failed to {op} file '{name}' at offset {offset}: errno = {errno} ({message})")]
    Io {
        op: &'static str,
        name: String,
        offset: u64,
        errno: i32,
        message: String,
    },
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
        let path = spec.path(i);
        let name = format!("test_file.{i}");
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .mode(0o600)
            .custom_flags(spec.extra_flags.open_flags())
            .open(&path)
            .map_err(|e| FileioError::Open {
                name: name.clone(),
                errno: e.raw_os_error().unwrap_or(0),
                message: strerror(&e),
            })?;
        let have = file.metadata().map(|m| m.len()).unwrap_or(0);
        let action = match have {
            0 => FileAction::Created,
            h if h >= size => FileAction::Reused,
            _ => FileAction::Extended,
        };
        report(&name, action);
        let mut offset = have - have % spec.block_size as u64;
        while offset < size {
            let n = (size - offset).min(spec.block_size as u64) as usize;
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
    reads: u64,
    writes: u64,
}

pub struct FileTest {
    spec: FileioSpec,
    files: Vec<File>,
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
        for i in 0..spec.file_num {
            let name = format!("test_file.{i}");
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .custom_flags(spec.extra_flags.open_flags())
                .open(spec.path(i))
                .map_err(|e| FileioError::Open {
                    name: name.clone(),
                    errno: e.raw_os_error().unwrap_or(0),
                    message: strerror(&e),
                })?;
            let have = file.metadata().map(|m| m.len()).unwrap_or(0);
            if have < spec.file_size() {
                return Err(FileioError::TooSmall {
                    name,
                    have: have >> 20,
                    want: spec.file_size() >> 20,
                });
            }
            files.push(file);
        }
        Ok(Self {
            spec: spec.clone(),
            files,
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
        g.requests += 1;
        let file_size = s.file_size();
        let write = match mode {
            FileMode::SeqRd | FileMode::RndRd => false,
            FileMode::SeqWr | FileMode::SeqRewr | FileMode::RndWr => true,
            FileMode::RndRw => (g.reads + 1) as f64 / (g.writes + 1) as f64 >= s.rw_ratio,
        };
        if write {
            g.writes += 1;
            g.dirty = true;
        } else {
            g.reads += 1;
        }
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
            let buffer = AlignedBuffer::new(s.request_size() as usize).expect("request buffer");
            let mut rng = match s.seed {
                Some(seed) => Xoroshiro128Plus::seeded(seed.wrapping_add(t as u64)),
                None => Xoroshiro128Plus::from_entropy(t as u64),
            };
            // SAFETY: our own buffer of request_size bytes.
            super::files::fill_random(
                unsafe {
                    std::slice::from_raw_parts_mut(buffer.as_ptr(), s.request_size() as usize)
                },
                &mut rng,
            );
            workers.push(FileWorker {
                test: Arc::clone(&test),
                buffer,
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
        o.latency = Some(Latency::from_run(&result, &ps));
        if !s.extra_flags.direct && s.mode.is_some_and(FileMode::read_only) {
            o.note("buffered reads of files just prepared come from the page cache: memory speed, not the disk's (add --file-extra-flags=direct)");
        }
        o.note(
            "an event is one read, one write or one fsync; latency mixes all three, as in sysbench",
        );
        Ok(o)
    }
}

struct FileWorker {
    test: Arc<FileTest>,
    buffer: AlignedBuffer,
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
        let t = &self.test;
        let c = &t.counters;
        // SAFETY: our own buffer of request_size bytes; len never exceeds it.
        let buf = |len: usize| unsafe { std::slice::from_raw_parts_mut(self.buffer.as_ptr(), len) };
        let name = |file: usize| format!("test_file.{file}");
        let outcome = match req {
            Req::Read { file, pos, len } => t.files[file]
                .read_exact_at(buf(len), pos)
                .map(|_| {
                    c.reads.fetch_add(1, Ordering::Relaxed);
                    c.bytes_read.fetch_add(len as u64, Ordering::Relaxed);
                })
                .map_err(|e| io_error("read from", &name(file), pos, &e)),
            Req::Write { file, pos, len } => t.files[file]
                .write_all_at(buf(len), pos)
                .map_err(|e| io_error("write to", &name(file), pos, &e))
                .and_then(|_| {
                    c.writes.fetch_add(1, Ordering::Relaxed);
                    c.bytes_written.fetch_add(len as u64, Ordering::Relaxed);
                    if t.spec.fsync_all {
                        t.sync(file)
                            .map_err(|e| io_error("fsync", &name(file), 0, &e))?;
                        c.fsyncs.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok(())
                }),
            Req::Fsync { file } => t
                .sync(file)
                .map(|_| {
                    c.fsyncs.fetch_add(1, Ordering::Relaxed);
                })
                .map_err(|e| io_error("fsync", &name(file), 0, &e)),
        };
        if let Err(e) = outcome {
            t.fail(e);
        }
    }

    fn finish(&mut self) {
        let t = &self.test;
        if t.spec.fsync_end && !t.spec.mode.is_some_and(FileMode::read_only) {
            for file in 0..t.files.len() {
                if let Err(e) = t.sync(file) {
                    t.fail(io_error("fsync", &format!("test_file.{file}"), 0, &e));
                }
            }
        }
    }
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
        // 9 cycles of 104 events, then 64 writes.
        assert_eq!(counters.writes.load(Ordering::Relaxed), 964);
        assert_eq!(counters.fsyncs.load(Ordering::Relaxed), 36);
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

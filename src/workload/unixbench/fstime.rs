//! UnixBench's file copy test (`fstime -c`), from reference §5.4: two files of its
//! own, a short write phase that fixes the file size at `max_blocks` KiB, a short
//! read phase, then copying one file into the other in `bufsize` chunks until the
//! alarm, rewinding both at the end of the source. Counted in 256-byte units, with
//! partial credit for a transfer the alarm cut short; KBps = counted / (seconds × 4).

use super::alarm;
use std::ffi::CString;
use std::io::{Error, Result};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const COUNT_SIZE: u64 = 256;
const HALF_COUNT: u64 = COUNT_SIZE / 2;
const COUNTS_PER_KIB: f64 = (1024 / COUNT_SIZE) as f64;

/// A phase's score in KiB/s (truncated, as UnixBench prints it) and its duration.
#[derive(Debug, Clone, Copy)]
pub struct Phase {
    pub kbps: u64,
    pub seconds: f64,
}

pub struct Settings {
    pub dir: PathBuf,
    pub bufsize: usize,
    pub max_blocks: usize,
    pub copy: Duration,
    /// Length of the write and read warm-up phases (UnixBench: 2 s each).
    pub warmup: Duration,
    /// `sync; sleep` between phases, as UnixBench does; off in quick mode.
    pub settle: bool,
}

/// The two test files, removed on drop.
struct Files {
    src: libc::c_int,
    dst: libc::c_int,
    paths: [PathBuf; 2],
}

impl Files {
    fn create(dir: &Path) -> Result<Files> {
        let pid = std::process::id();
        let paths = [
            dir.join(format!("dummy0-{pid}")),
            dir.join(format!("dummy1-{pid}")),
        ];
        let open = |p: &Path| -> Result<libc::c_int> {
            let c = CString::new(p.as_os_str().as_bytes()).map_err(Error::other)?;
            // SAFETY: a NUL-terminated path.
            let fd = unsafe {
                libc::open(
                    c.as_ptr(),
                    libc::O_RDWR | libc::O_CREAT | libc::O_TRUNC,
                    0o600,
                )
            };
            if fd < 0 {
                let e = Error::last_os_error();
                return Err(Error::new(e.kind(), format!("{}: {e}", p.display())));
            }
            Ok(fd)
        };
        let src = open(&paths[0])?;
        let dst = match open(&paths[1]) {
            Ok(fd) => fd,
            Err(e) => {
                let _ = std::fs::remove_file(&paths[0]);
                return Err(e);
            }
        };
        Ok(Files { src, dst, paths })
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        // SAFETY: our own descriptors.
        unsafe {
            libc::close(self.src);
            libc::close(self.dst);
        }
        for p in &self.paths {
            let _ = std::fs::remove_file(p);
        }
    }
}

fn settle(on: bool, last_sleep: u64) {
    if on {
        // SAFETY: sync(2) takes no arguments.
        unsafe { libc::sync() };
        std::thread::sleep(Duration::from_secs(2));
        unsafe { libc::sync() };
        std::thread::sleep(Duration::from_secs(last_sleep));
    }
}

fn rewind(fd: libc::c_int) {
    // SAFETY: seeking our own descriptor.
    unsafe { libc::lseek(fd, 0, libc::SEEK_SET) };
}

fn io_error(what: &str) -> Error {
    let e = Error::last_os_error();
    Error::new(e.kind(), format!("{what}: {e}"))
}

fn is_eintr() -> bool {
    Error::last_os_error().raw_os_error() == Some(libc::EINTR)
}

/// Runs the write, read and copy phases; returns the copy phase's score.
pub fn run(s: &Settings) -> Result<Phase> {
    let files = Files::create(&s.dir)?;
    let mut buf = vec![0u8; s.bufsize];
    for (i, b) in buf.iter_mut().enumerate() {
        *b = (i & 0xff) as u8;
    }
    let buffers = s.max_blocks * 1024 / s.bufsize;
    let per_buf = s.bufsize as u64 / COUNT_SIZE;
    let write = write_phase(files.src, &buf, buffers, per_buf, s)?;
    let read = read_phase(files.src, &mut buf, per_buf, s)?;
    copy_phase(&files, &mut buf, per_buf, write, read, s)
}

fn finish(counted: u64, start: Instant) -> Phase {
    let seconds = start.elapsed().as_secs_f64();
    Phase {
        kbps: (counted as f64 / (seconds * COUNTS_PER_KIB)) as u64,
        seconds,
    }
}

fn write_phase(
    fd: libc::c_int,
    buf: &[u8],
    buffers: usize,
    per_buf: u64,
    s: &Settings,
) -> Result<Phase> {
    settle(s.settle, 2);
    alarm::arm(s.warmup)?;
    let start = Instant::now();
    let mut counted = 0u64;
    while !alarm::fired() {
        for _ in 0..buffers {
            // SAFETY: writing our buffer to our file.
            let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
            if n != buf.len() as isize {
                if n < 0 && !is_eintr() {
                    return Err(io_error("fstime write"));
                }
                counted += (n.max(0) as u64 + HALF_COUNT) / COUNT_SIZE;
                break;
            }
            counted += per_buf;
        }
        rewind(fd);
    }
    Ok(finish(counted, start))
}

fn read_phase(fd: libc::c_int, buf: &mut [u8], per_buf: u64, s: &Settings) -> Result<Phase> {
    settle(s.settle, 2);
    rewind(fd);
    alarm::arm(s.warmup)?;
    let start = Instant::now();
    let mut counted = 0u64;
    while !alarm::fired() {
        // SAFETY: reading into our buffer.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n == buf.len() as isize {
            counted += per_buf;
            continue;
        }
        if n < 0 && !is_eintr() {
            return Err(io_error("fstime read"));
        }
        counted += (n.max(0) as u64 + HALF_COUNT) / COUNT_SIZE;
        if n >= 0 {
            rewind(fd);
        }
    }
    Ok(finish(counted, start))
}

fn copy_phase(
    f: &Files,
    buf: &mut [u8],
    per_buf: u64,
    write: Phase,
    read: Phase,
    s: &Settings,
) -> Result<Phase> {
    settle(s.settle, 1);
    rewind(f.src);
    let (w, r) = (write.kbps, read.kbps);
    // Credit for a read that the alarm cut short, weighted by the phases' speeds.
    let share = |bytes: u64| -> u64 { (bytes * w).checked_div(r + w).unwrap_or(0) };
    alarm::arm(s.copy)?;
    let start = Instant::now();
    let mut counted = 0u64;
    while !alarm::fired() {
        // SAFETY: reading into and writing from our buffer, on our files.
        let n = unsafe { libc::read(f.src, buf.as_mut_ptr().cast(), buf.len()) };
        if n != buf.len() as isize {
            if n < 0 && !is_eintr() {
                return Err(io_error("fstime copy read"));
            }
            if n >= 0 && !alarm::fired() {
                // End of the source: start both files again.
                rewind(f.src);
                rewind(f.dst);
                continue;
            }
            counted += (share(n.max(0) as u64) + HALF_COUNT) / COUNT_SIZE;
            break;
        }
        let m = unsafe { libc::write(f.dst, buf.as_ptr().cast(), buf.len()) };
        if m != buf.len() as isize {
            if m < 0 && !is_eintr() {
                return Err(io_error("fstime copy write"));
            }
            let written = m.max(0) as u64;
            counted += (written + share(buf.len() as u64 - written) + HALF_COUNT) / COUNT_SIZE;
            break;
        }
        counted += per_buf;
    }
    Ok(finish(counted, start))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_and_cleans_up() {
        let dir = tempfile::tempdir().unwrap();
        let s = Settings {
            dir: dir.path().into(),
            bufsize: 1024,
            max_blocks: 64,
            copy: Duration::from_millis(60),
            warmup: Duration::from_millis(20),
            settle: false,
        };
        let p = run(&s).unwrap();
        assert!(p.kbps > 0, "{p:?}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}

//! The system-call tests, written from reference §5.4: pipe throughput, pipe-based
//! context switching, process creation, system call overhead and execl. Each loops
//! until the alarm and returns how many iterations it completed. They run inside a
//! program process of their own (see `program.rs`), which is single-threaded, so
//! `fork` is safe here.

use super::alarm;
use std::io::{Error, Result};

fn interrupted(err: &Error) -> bool {
    err.raw_os_error() == Some(libc::EINTR)
}

fn check(ret: isize, len: usize, what: &str) -> Result<bool> {
    if ret == len as isize {
        return Ok(true);
    }
    let err = Error::last_os_error();
    if ret < 0 && interrupted(&err) {
        return Ok(false);
    }
    if ret < 0 {
        return Err(Error::new(err.kind(), format!("{what}: {err}")));
    }
    Err(Error::other(format!(
        "{what}: short transfer ({ret} of {len} bytes)"
    )))
}

fn pipe() -> Result<[libc::c_int; 2]> {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe(2) writes.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(Error::last_os_error());
    }
    Ok(fds)
}

/// One process, one pipe: write 512 bytes, read them back, count.
pub fn pipe_throughput() -> Result<u64> {
    let [rd, wr] = pipe()?;
    let mut buf = [0u8; 512];
    let mut iterations = 0u64;
    while !alarm::fired() {
        // SAFETY: valid descriptors and a 512-byte buffer.
        let w = unsafe { libc::write(wr, buf.as_ptr().cast(), buf.len()) };
        if !check(w, buf.len(), "pipe write")? {
            break;
        }
        let r = unsafe { libc::read(rd, buf.as_mut_ptr().cast(), buf.len()) };
        if !check(r, buf.len(), "pipe read")? {
            break;
        }
        iterations += 1;
    }
    Ok(iterations)
}

/// Two processes pass a counter back and forth over two pipes; one count is one
/// round trip. Only the parent has the alarm; the child leaves when its pipe closes.
pub fn context_switch() -> Result<u64> {
    let [down_rd, down_wr] = pipe()?;
    let [up_rd, up_wr] = pipe()?;
    // SAFETY: the process is single-threaded; the child only makes system calls.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(Error::last_os_error());
    }
    if pid == 0 {
        // Without the parent's ends, the parent's exit is an end of file here.
        // SAFETY: closing descriptors this process owns.
        unsafe {
            libc::close(down_wr);
            libc::close(up_rd);
        }
        let mut expect = 0u64;
        loop {
            let mut got = 0u64;
            // SAFETY: 8-byte reads and writes of local integers on our own pipes.
            let r = unsafe { libc::read(down_rd, (&raw mut got).cast(), 8) };
            if r != 8 || got != expect {
                unsafe { libc::_exit(if r == 8 { 1 } else { 0 }) };
            }
            let w = unsafe { libc::write(up_wr, (&raw const expect).cast(), 8) };
            if w != 8 {
                unsafe { libc::_exit(0) };
            }
            expect += 1;
        }
    }
    // SAFETY: closing the child's ends in the parent.
    unsafe {
        libc::close(down_rd);
        libc::close(up_wr);
    }
    let mut iterations = 0u64;
    while !alarm::fired() {
        let w = unsafe { libc::write(down_wr, (&raw const iterations).cast(), 8) };
        if !check(w, 8, "context1 write")? {
            break;
        }
        let mut got = 0u64;
        let r = unsafe { libc::read(up_rd, (&raw mut got).cast(), 8) };
        if !check(r, 8, "context1 read")? {
            break;
        }
        if got != iterations {
            return Err(Error::other(format!(
                "context1: child answered {got}, expected {iterations}"
            )));
        }
        iterations += 1;
    }
    Ok(iterations)
}

/// fork; the child exits at once; the parent waits and checks its status.
pub fn process_creation() -> Result<u64> {
    let mut iterations = 0u64;
    while !alarm::fired() {
        // SAFETY: single-threaded process; the child calls only _exit.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            let err = Error::last_os_error();
            return Err(Error::new(err.kind(), format!("fork: {err}")));
        }
        if pid == 0 {
            unsafe { libc::_exit(0) };
        }
        let mut status = 0;
        loop {
            // SAFETY: waiting for our own child.
            let r = unsafe { libc::waitpid(pid, &mut status, 0) };
            if r == pid {
                break;
            }
            let err = Error::last_os_error();
            if !interrupted(&err) {
                return Err(Error::new(err.kind(), format!("waitpid: {err}")));
            }
        }
        if status != 0 {
            return Err(Error::other(format!(
                "spawn: child exited with status {status:#x}"
            )));
        }
        iterations += 1;
    }
    Ok(iterations)
}

/// UnixBench 5.1.3's "mix": `close(dup(0))`, `getpid`, `getuid`, `umask(022)` — five
/// system calls per iteration (getpid through the raw system call: glibc no longer
/// caches it, and an old glibc that did would make this four).
pub fn syscall_mix() -> Result<u64> {
    let mut iterations = 0u64;
    while !alarm::fired() {
        // SAFETY: plain system calls on descriptor 0 and the process's own ids.
        unsafe {
            libc::close(libc::dup(0));
            libc::syscall(libc::SYS_getpid);
            libc::getuid();
            libc::umask(0o022);
        }
        iterations += 1;
    }
    Ok(iterations)
}

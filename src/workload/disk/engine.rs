//! I/O engines: io_uring, libaio (Linux native AIO through raw syscalls), psync
//! (pread/pwrite) and sync (lseek + read/write). A job queues requests, then submits
//! and waits for completions; sync engines run each request when it is reaped, so
//! their queue depth is 1, as in fio.
//!
//! `open_best` falls back io_uring -> libaio -> psync when an engine cannot be set up
//! (seccomp filters and `kernel.io_uring_disabled` refuse io_uring; old kernels lack
//! it) and says which one runs.

use serde::{Deserialize, Serialize};
use std::io;
use std::os::fd::RawFd;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    IoUring,
    Libaio,
    Psync,
    Sync,
}

impl EngineKind {
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::IoUring => "io_uring",
            EngineKind::Libaio => "libaio",
            EngineKind::Psync => "psync",
            EngineKind::Sync => "sync",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "io_uring" => Some(EngineKind::IoUring),
            "libaio" => Some(EngineKind::Libaio),
            "psync" => Some(EngineKind::Psync),
            "sync" => Some(EngineKind::Sync),
            _ => None,
        }
    }

    /// Whether requests really overlap (sync engines complete one at a time).
    pub fn is_async(self) -> bool {
        matches!(self, EngineKind::IoUring | EngineKind::Libaio)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
    /// fdatasync(2) of the file.
    Datasync,
    /// fsync(2) of the file.
    Fsync,
}

/// One request: `slot` identifies its buffer and comes back with the completion.
#[derive(Debug, Clone, Copy)]
pub struct Request {
    /// The open file the request is for (one engine serves any number of files).
    pub fd: RawFd,
    pub slot: usize,
    pub op: Op,
    pub offset: u64,
    pub len: usize,
    pub buf: *mut u8,
}

#[derive(Debug, Clone, Copy)]
pub struct Completion {
    pub slot: usize,
    /// Bytes transferred, or a negative errno.
    pub result: i64,
}

pub trait Engine {
    fn kind(&self) -> EngineKind;
    /// Prepares a request; it starts at the next `submit_and_wait` at the latest.
    ///
    /// # Safety
    /// `req.buf` must be valid for `req.len` bytes until the request's completion is
    /// reaped, or until the engine is dropped (engines wait for requests in flight
    /// when dropped).
    unsafe fn queue(&mut self, req: Request) -> io::Result<()>;
    /// Submits what is queued and waits until at least `min` requests completed,
    /// appending them to `done`.
    fn submit_and_wait(&mut self, min: usize, done: &mut Vec<Completion>) -> io::Result<()>;
    /// Submits what is queued without looking for completions (sync engines run
    /// nothing here: their requests run when reaped).
    fn submit(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// Appends the slots whose completion the kernel has already posted, without
    /// waiting; those completions still come back from the next `submit_and_wait`.
    /// Called right after `submit`, it tells which requests the device answered
    /// before the submission call returned (sync engines have nothing to tell).
    fn posted(&mut self, _slots: &mut Vec<usize>) {}
}

/// The engine asked for, or with `fallback`, the first of io_uring, libaio, psync
/// that can be set up. Returns the engine and why others were skipped.
pub fn open(
    wanted: Option<EngineKind>,
    depth: usize,
) -> io::Result<(Box<dyn Engine + Send>, Vec<String>)> {
    let order: Vec<EngineKind> = match wanted {
        Some(k) => vec![k],
        None => vec![EngineKind::IoUring, EngineKind::Libaio, EngineKind::Psync],
    };
    let mut skipped = Vec::new();
    for kind in order {
        let made: io::Result<Box<dyn Engine + Send>> = match kind {
            EngineKind::IoUring => uring::Uring::new(depth).map(|e| Box::new(e) as _),
            EngineKind::Libaio => aio::Aio::new(depth).map(|e| Box::new(e) as _),
            EngineKind::Psync | EngineKind::Sync => Ok(Box::new(SyncEngine::new(kind))),
        };
        match made {
            Ok(engine) => return Ok((engine, skipped)),
            Err(e) if wanted.is_none() => {
                skipped.push(format!("{} unavailable ({e})", kind.name()))
            }
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other("no I/O engine could be set up"))
}

fn errno_result(ret: isize) -> i64 {
    if ret < 0 {
        -(io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO) as i64)
    } else {
        ret as i64
    }
}

/// psync and sync: the request runs in `submit_and_wait`, one at a time.
struct SyncEngine {
    kind: EngineKind,
    queued: Vec<Request>,
}

// SAFETY: the raw buffer pointers in queued requests point into buffers owned by the
// job thread that owns the engine.
unsafe impl Send for SyncEngine {}

impl SyncEngine {
    fn new(kind: EngineKind) -> Self {
        Self {
            kind,
            queued: Vec::new(),
        }
    }

    fn run(&self, r: &Request) -> i64 {
        // SAFETY: the buffer is valid for `len` bytes (the job owns it); fd is open.
        let ret = unsafe {
            match (r.op, self.kind) {
                (Op::Datasync, _) => libc::fdatasync(r.fd) as isize,
                (Op::Fsync, _) => libc::fsync(r.fd) as isize,
                (Op::Read, EngineKind::Sync) => {
                    libc::lseek(r.fd, r.offset as i64, libc::SEEK_SET);
                    libc::read(r.fd, r.buf.cast(), r.len)
                }
                (Op::Write, EngineKind::Sync) => {
                    libc::lseek(r.fd, r.offset as i64, libc::SEEK_SET);
                    libc::write(r.fd, r.buf.cast(), r.len)
                }
                (Op::Read, _) => libc::pread(r.fd, r.buf.cast(), r.len, r.offset as i64),
                (Op::Write, _) => libc::pwrite(r.fd, r.buf.cast(), r.len, r.offset as i64),
            }
        };
        errno_result(ret)
    }
}

impl Engine for SyncEngine {
    fn kind(&self) -> EngineKind {
        self.kind
    }

    unsafe fn queue(&mut self, req: Request) -> io::Result<()> {
        self.queued.push(req);
        Ok(())
    }

    fn submit_and_wait(&mut self, _min: usize, done: &mut Vec<Completion>) -> io::Result<()> {
        for r in std::mem::take(&mut self.queued) {
            done.push(Completion {
                slot: r.slot,
                result: self.run(&r),
            });
        }
        Ok(())
    }
}

mod uring {
    use super::*;
    use io_uring::{IoUring, opcode, types};

    pub struct Uring {
        ring: IoUring,
        /// Requests handed to the kernel and not yet reaped.
        in_flight: usize,
        /// Completions taken off the ring by `posted`, for the next `submit_and_wait`.
        early: Vec<Completion>,
    }

    impl Uring {
        pub fn new(depth: usize) -> io::Result<Self> {
            let entries = depth.max(1).next_power_of_two() as u32;
            let ring = IoUring::new(entries)?;
            // Kernels 5.1-5.5 set up a ring but lack these operations; fall back then.
            let mut probe = io_uring::Probe::new();
            if ring.submitter().register_probe(&mut probe).is_ok() {
                for code in [opcode::Read::CODE, opcode::Write::CODE, opcode::Fsync::CODE] {
                    if !probe.is_supported(code) {
                        return Err(io::Error::new(
                            io::ErrorKind::Unsupported,
                            "this kernel's io_uring lacks read/write/fsync",
                        ));
                    }
                }
            } else {
                return Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    "io_uring without probing (kernel older than 5.6)",
                ));
            }
            Ok(Self {
                ring,
                in_flight: 0,
                early: Vec::new(),
            })
        }

        /// Moves the completions the ring holds into `early`.
        fn reap_ready_into_early(&mut self) {
            for cqe in self.ring.completion() {
                self.in_flight -= 1;
                self.early.push(Completion {
                    slot: cqe.user_data() as usize,
                    result: cqe.result() as i64,
                });
            }
        }
    }

    impl Drop for Uring {
        /// Closing a ring does not wait for its requests, and their buffers are freed
        /// right after the engine: reap them first.
        fn drop(&mut self) {
            while self.in_flight > 0 {
                if self.ring.submit_and_wait(1).is_err() {
                    break;
                }
                let reaped = self.ring.completion().count();
                self.in_flight = self.in_flight.saturating_sub(reaped);
            }
        }
    }

    impl Engine for Uring {
        fn kind(&self) -> EngineKind {
            EngineKind::IoUring
        }

        unsafe fn queue(&mut self, r: Request) -> io::Result<()> {
            let fd = types::Fd(r.fd);
            let entry = match r.op {
                Op::Read => opcode::Read::new(fd, r.buf, r.len as u32)
                    .offset(r.offset)
                    .build(),
                Op::Write => opcode::Write::new(fd, r.buf, r.len as u32)
                    .offset(r.offset)
                    .build(),
                Op::Datasync => opcode::Fsync::new(fd)
                    .flags(types::FsyncFlags::DATASYNC)
                    .build(),
                Op::Fsync => opcode::Fsync::new(fd).build(),
            }
            .user_data(r.slot as u64);
            // SAFETY: the buffer stays valid until the completion is reaped: the job
            // owns it and does not reuse the slot before then.
            unsafe {
                if self.ring.submission().push(&entry).is_err() {
                    self.ring.submit()?;
                    self.ring
                        .submission()
                        .push(&entry)
                        .map_err(|_| io::Error::other("io_uring submission queue full"))?;
                }
            }
            self.in_flight += 1;
            Ok(())
        }

        fn submit(&mut self) -> io::Result<()> {
            self.ring.submit().map(|_| ())
        }

        fn posted(&mut self, slots: &mut Vec<usize>) {
            let from = self.early.len();
            self.reap_ready_into_early();
            slots.extend(self.early[from..].iter().map(|c| c.slot));
        }

        fn submit_and_wait(&mut self, min: usize, done: &mut Vec<Completion>) -> io::Result<()> {
            let min = min.saturating_sub(self.early.len());
            done.append(&mut self.early);
            // Nothing to submit and enough completions already: no system call.
            if min > 0 || !self.ring.submission().is_empty() {
                loop {
                    match self.ring.submit_and_wait(min) {
                        Ok(_) => break,
                        Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                        Err(e) => return Err(e),
                    }
                }
            }
            self.reap_ready_into_early();
            done.append(&mut self.early);
            Ok(())
        }
    }
}

mod aio {
    //! Linux native AIO through the raw system calls (no libaio library needed).
    use super::*;

    type AioContext = libc::c_ulong;

    /// The kernel's `struct iocb` (linux/aio_abi.h), little-endian layout.
    #[repr(C)]
    #[derive(Default, Clone, Copy)]
    struct Iocb {
        data: u64,
        key: u32,
        rw_flags: i32,
        opcode: u16,
        reqprio: i16,
        fildes: u32,
        buf: u64,
        nbytes: u64,
        offset: i64,
        reserved2: u64,
        flags: u32,
        resfd: u32,
    }

    #[repr(C)]
    #[derive(Default, Clone, Copy)]
    struct IoEvent {
        data: u64,
        obj: u64,
        res: i64,
        res2: i64,
    }

    /// The header of the completion ring the kernel maps at the context's address
    /// (fs/aio.c `struct aio_ring`); its events follow `header_length` bytes in.
    #[repr(C)]
    #[allow(dead_code)] // the layout needs every field; some are never read
    struct RingHeader {
        id: u32,
        nr: u32,
        head: u32,
        tail: u32,
        magic: u32,
        compat_features: u32,
        incompat_features: u32,
        header_length: u32,
    }

    const RING_MAGIC: u32 = 0xa10a_10a1;

    const CMD_PREAD: u16 = 0;
    const CMD_PWRITE: u16 = 1;
    const CMD_FSYNC: u16 = 2;
    const CMD_FDSYNC: u16 = 3;

    pub struct Aio {
        ctx: AioContext,
        /// One control block per slot. The vector is never resized, so the addresses
        /// handed to the kernel stay valid.
        iocbs: Vec<Iocb>,
        pending: Vec<*mut Iocb>,
        events: Vec<IoEvent>,
        /// Requests the kernel accepted and has not completed.
        in_kernel: usize,
    }

    // SAFETY: the context and control blocks belong to the job thread owning the engine.
    unsafe impl Send for Aio {}

    impl Aio {
        pub fn new(depth: usize) -> io::Result<Self> {
            let mut ctx: AioContext = 0;
            // SAFETY: io_setup writes the new context id into `ctx`.
            let ret = unsafe {
                libc::syscall(libc::SYS_io_setup, depth.max(1) as libc::c_long, &mut ctx)
            };
            if ret < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(Self {
                ctx,
                iocbs: vec![Iocb::default(); depth.max(1)],
                pending: Vec::with_capacity(depth),
                events: vec![IoEvent::default(); depth.max(1)],
                in_kernel: 0,
            })
        }
    }

    impl Drop for Aio {
        fn drop(&mut self) {
            // SAFETY: destroying a context we created; io_destroy cancels what it can
            // and waits for the rest, so no request outlives the buffers.
            unsafe { libc::syscall(libc::SYS_io_destroy, self.ctx) };
        }
    }

    impl Engine for Aio {
        fn kind(&self) -> EngineKind {
            EngineKind::Libaio
        }

        unsafe fn queue(&mut self, r: Request) -> io::Result<()> {
            let cb = self
                .iocbs
                .get_mut(r.slot)
                .ok_or_else(|| io::Error::other("request slot beyond the queue depth"))?;
            *cb = Iocb {
                data: r.slot as u64,
                opcode: match r.op {
                    Op::Read => CMD_PREAD,
                    Op::Write => CMD_PWRITE,
                    Op::Datasync => CMD_FDSYNC,
                    Op::Fsync => CMD_FSYNC,
                },
                fildes: r.fd as u32,
                buf: r.buf as u64,
                nbytes: r.len as u64,
                offset: r.offset as i64,
                ..Iocb::default()
            };
            self.pending.push(cb);
            Ok(())
        }

        fn submit(&mut self) -> io::Result<()> {
            while !self.pending.is_empty() {
                // SAFETY: the pointers refer to control blocks owned by self, never moved.
                let ret = unsafe {
                    libc::syscall(
                        libc::SYS_io_submit,
                        self.ctx,
                        self.pending.len() as libc::c_long,
                        self.pending.as_mut_ptr(),
                    )
                };
                if ret < 0 {
                    let e = io::Error::last_os_error();
                    // Out of kernel resources: wait for some of ours to finish, unless
                    // none are out there to wait for.
                    if e.raw_os_error() == Some(libc::EAGAIN) && self.in_kernel > 0 {
                        break;
                    }
                    return Err(e);
                }
                self.pending.drain(..ret as usize);
                self.in_kernel += ret as usize;
            }
            Ok(())
        }

        fn posted(&mut self, slots: &mut Vec<usize>) {
            use std::sync::atomic::{AtomicU32, Ordering};
            let ring = self.ctx as *const RingHeader;
            // SAFETY: the context id is the address of the ring the kernel mapped
            // into this process at io_setup; it stays mapped until io_destroy. The
            // kernel writes an event before it moves `tail` (release), so events
            // between `head` and an acquired `tail` are complete. Only reading: the
            // events are still consumed by io_getevents.
            unsafe {
                if std::ptr::addr_of!((*ring).magic).read_volatile() != RING_MAGIC
                    || std::ptr::addr_of!((*ring).incompat_features).read_volatile() != 0
                {
                    return;
                }
                let nr = std::ptr::addr_of!((*ring).nr).read_volatile();
                let header = std::ptr::addr_of!((*ring).header_length).read_volatile();
                let head =
                    (*std::ptr::addr_of!((*ring).head).cast::<AtomicU32>()).load(Ordering::Acquire);
                let tail =
                    (*std::ptr::addr_of!((*ring).tail).cast::<AtomicU32>()).load(Ordering::Acquire);
                let events = ring.cast::<u8>().add(header as usize).cast::<IoEvent>();
                let mut i = head;
                while i != tail && i < nr {
                    slots.push(events.add(i as usize).read_volatile().data as usize);
                    i = (i + 1) % nr;
                }
            }
        }

        fn submit_and_wait(&mut self, min: usize, done: &mut Vec<Completion>) -> io::Result<()> {
            self.submit()?;
            loop {
                // SAFETY: `events` has room for its length; a null timeout waits.
                let ret = unsafe {
                    libc::syscall(
                        libc::SYS_io_getevents,
                        self.ctx,
                        min as libc::c_long,
                        self.events.len() as libc::c_long,
                        self.events.as_mut_ptr(),
                        std::ptr::null_mut::<libc::timespec>(),
                    )
                };
                if ret < 0 {
                    let e = io::Error::last_os_error();
                    if e.raw_os_error() == Some(libc::EINTR) {
                        continue;
                    }
                    return Err(e);
                }
                self.in_kernel -= ret as usize;
                for ev in &self.events[..ret as usize] {
                    done.push(Completion {
                        slot: ev.data as usize,
                        result: ev.res,
                    });
                }
                return Ok(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    /// A buffered read of cached data completes inside the submission call (libaio
    /// runs it there; io_uring serves it inline), so `posted` names it, and its
    /// completion still comes back, once, from `submit_and_wait`.
    #[test]
    fn async_engines_name_what_completed_during_submission() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cached");
        std::fs::write(&path, [7u8; 8192]).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        for kind in [EngineKind::IoUring, EngineKind::Libaio] {
            let mut engine = match open(Some(kind), 4) {
                Ok((e, _)) => e,
                Err(e) => {
                    crate::strict::missing(&format!("the {} engine ({e})", kind.name()), "");
                    continue;
                }
            };
            let mut buf = vec![0u8; 4096];
            let request = Request {
                fd: file.as_raw_fd(),
                slot: 3,
                op: Op::Read,
                offset: 4096,
                len: 4096,
                buf: buf.as_mut_ptr(),
            };
            // SAFETY: `buf` outlives the engine's use of it: reaped below.
            unsafe { engine.queue(request) }.unwrap();
            engine.submit().unwrap();
            let mut posted = Vec::new();
            engine.posted(&mut posted);
            assert_eq!(posted, [3], "{}", kind.name());
            let mut done = Vec::new();
            engine.submit_and_wait(1, &mut done).unwrap();
            let got: Vec<(usize, i64)> = done.iter().map(|c| (c.slot, c.result)).collect();
            assert_eq!(got, [(3, 4096)], "{}", kind.name());
            assert_eq!(buf[0], 7);
        }
    }
}

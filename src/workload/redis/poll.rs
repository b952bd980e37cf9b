//! The event loop's two kernel objects: an epoll set (level-triggered, one token per
//! connection) and a timerfd that wakes an open-loop sender at the nanosecond its next
//! request is due. Plus the clock both use, CLOCK_MONOTONIC in nanoseconds.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// Nanoseconds on CLOCK_MONOTONIC (the clock `Instant` and timerfd use).
#[inline]
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the struct we pass; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

pub const READ: u32 = libc::EPOLLIN as u32 | libc::EPOLLRDHUP as u32;
pub const WRITE: u32 = libc::EPOLLOUT as u32;

pub struct Epoll {
    fd: OwnedFd,
    events: Vec<libc::epoll_event>,
}

fn check(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

impl Epoll {
    pub fn new(capacity: usize) -> io::Result<Self> {
        // SAFETY: plain syscall; the descriptor is owned from here on.
        let fd = check(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
        Ok(Self {
            // SAFETY: fd was just created and is ours.
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            events: vec![libc::epoll_event { events: 0, u64: 0 }; capacity.clamp(16, 4096)],
        })
    }

    fn ctl(&self, op: libc::c_int, fd: RawFd, token: u64, interest: u32) -> io::Result<()> {
        let mut ev = libc::epoll_event {
            events: interest,
            u64: token,
        };
        // SAFETY: ev lives across the call; fd validity is the kernel's to check.
        check(unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), op, fd, &mut ev) }).map(|_| ())
    }

    pub fn add(&self, fd: RawFd, token: u64, interest: u32) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_ADD, fd, token, interest)
    }

    pub fn modify(&self, fd: RawFd, token: u64, interest: u32) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_MOD, fd, token, interest)
    }

    pub fn delete(&self, fd: RawFd) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_DEL, fd, 0, 0)
    }

    /// Waits up to `timeout_ms` (-1 = forever) and returns the ready (token, events).
    pub fn wait(&mut self, timeout_ms: i32) -> io::Result<&[libc::epoll_event]> {
        // SAFETY: the kernel writes at most `events.len()` entries into our vector.
        let n = unsafe {
            libc::epoll_wait(
                self.fd.as_raw_fd(),
                self.events.as_mut_ptr(),
                self.events.len() as i32,
                timeout_ms,
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                return Ok(&self.events[..0]);
            }
            return Err(e);
        }
        Ok(&self.events[..n as usize])
    }
}

/// A one-shot timer on CLOCK_MONOTONIC, armed at absolute times.
pub struct Timer {
    fd: OwnedFd,
}

impl Timer {
    pub fn new() -> io::Result<Self> {
        // SAFETY: plain syscall; the descriptor is owned from here on.
        let fd = check(unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        })?;
        Ok(Self {
            // SAFETY: fd was just created and is ours.
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Fires once at `at_ns` (CLOCK_MONOTONIC); a time in the past fires at once.
    pub fn arm_at(&self, at_ns: u64) -> io::Result<()> {
        let at_ns = at_ns.max(1);
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: (at_ns / 1_000_000_000) as libc::time_t,
                tv_nsec: (at_ns % 1_000_000_000) as libc::c_long,
            },
        };
        // SAFETY: spec lives across the call; a null old-value pointer is allowed.
        check(unsafe {
            libc::timerfd_settime(
                self.fd.as_raw_fd(),
                libc::TFD_TIMER_ABSTIME,
                &spec,
                std::ptr::null_mut(),
            )
        })
        .map(|_| ())
    }

    /// Consumes an expiry so the level-triggered epoll stops reporting it.
    pub fn clear(&self) {
        let mut buf = [0u8; 8];
        // SAFETY: reading 8 bytes into an 8-byte buffer; EAGAIN is fine.
        unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), 8) };
    }
}

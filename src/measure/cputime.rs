//! CPU time used by this process (getrusage), to report CPU per operation and to show
//! when a run was starved (wall time far above user + system time).

use serde::{Deserialize, Serialize};
use std::time::Duration;

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuTime {
    pub user_s: f64,
    pub system_s: f64,
}

impl CpuTime {
    /// CPU time of the whole process.
    pub fn now() -> Self {
        Self::of(libc::RUSAGE_SELF)
    }

    fn of(who: libc::c_int) -> Self {
        // SAFETY: getrusage writes a plain struct we own; `who` is a valid selector.
        let usage = unsafe {
            let mut usage: libc::rusage = std::mem::zeroed();
            libc::getrusage(who, &mut usage);
            usage
        };
        let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        Self {
            user_s: secs(usage.ru_utime),
            system_s: secs(usage.ru_stime),
        }
    }

    /// CPU time of the whole process plus that of its children that have ended and
    /// been waited for (and, through them, their own children): what a run of
    /// child programs cost.
    pub fn with_children_now() -> Self {
        let (own, children) = (Self::of(libc::RUSAGE_SELF), Self::of(libc::RUSAGE_CHILDREN));
        CpuTime {
            user_s: own.user_s + children.user_s,
            system_s: own.system_s + children.system_s,
        }
    }

    /// CPU time of the calling thread only (RUSAGE_THREAD).
    pub fn thread_now() -> Self {
        Self::of(libc::RUSAGE_THREAD)
    }

    pub fn since(&self, earlier: &CpuTime) -> CpuTime {
        CpuTime {
            user_s: (self.user_s - earlier.user_s).max(0.0),
            system_s: (self.system_s - earlier.system_s).max(0.0),
        }
    }

    pub fn total_s(&self) -> f64 {
        self.user_s + self.system_s
    }

    /// Busy CPUs over a wall-clock span: 2.0 means two cores fully used.
    pub fn utilisation(&self, wall: Duration) -> f64 {
        let wall = wall.as_secs_f64();
        if wall > 0.0 {
            self.total_s() / wall
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_loop_uses_cpu() {
        let before = CpuTime::now();
        let start = std::time::Instant::now();
        let mut x = 0u64;
        while start.elapsed() < Duration::from_millis(50) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let used = CpuTime::now().since(&before);
        assert!(used.total_s() > 0.01, "{used:?}");
    }

    #[test]
    fn a_waited_childs_cpu_is_counted() {
        let before = CpuTime::with_children_now();
        // A shell loop of about 0.1 s of CPU, in a child process.
        let status = std::process::Command::new("sh")
            .args(["-c", "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done"])
            .status()
            .unwrap();
        assert!(status.success());
        let used = CpuTime::with_children_now().since(&before);
        let own = CpuTime::now().since(&before);
        assert!(used.total_s() > 0.02, "{used:?}");
        assert!(used.total_s() > own.total_s(), "{used:?} vs own {own:?}");
    }
}

//! The timing harness of UnixBench's programs: a SIGALRM after the test's duration
//! ends the loop. The handler only raises a flag; interrupted system calls return
//! EINTR (no SA_RESTART), so blocking loops notice it too.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

static FIRED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_alarm(_: libc::c_int) {
    FIRED.store(true, Ordering::Relaxed);
}

/// Arms a one-shot alarm `after` from now (sub-second durations allowed).
pub fn arm(after: Duration) -> std::io::Result<()> {
    FIRED.store(false, Ordering::Relaxed);
    // SAFETY: installing a handler that only stores to an atomic is async-signal-safe;
    // the structs are zero-initialised plain C data.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_alarm as *const () as usize;
        libc::sigemptyset(&mut action.sa_mask);
        action.sa_flags = 0;
        if libc::sigaction(libc::SIGALRM, &action, std::ptr::null_mut()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut timer: libc::itimerval = std::mem::zeroed();
        timer.it_value.tv_sec = after.as_secs() as libc::time_t;
        timer.it_value.tv_usec = after.subsec_micros() as libc::suseconds_t;
        if timer.it_value.tv_sec == 0 && timer.it_value.tv_usec == 0 {
            timer.it_value.tv_usec = 1;
        }
        if libc::setitimer(libc::ITIMER_REAL, &timer, std::ptr::null_mut()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// True once the alarm went off.
#[inline(always)]
pub fn fired() -> bool {
    FIRED.load(Ordering::Relaxed)
}

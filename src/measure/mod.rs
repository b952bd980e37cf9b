//! The measurement core: the threaded event runner, latency histograms, CPU-time
//! accounting and summary statistics. Nothing here knows about terminals or peers.

pub mod cputime;
pub mod fio_histogram;
pub mod hdr;
pub mod histogram;
pub mod phases;
pub mod rng;
pub mod stats;

use std::sync::atomic::{AtomicBool, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);

/// Asks every running measurement to stop at its next event (Ctrl-C lands here).
pub fn request_stop() {
    STOP.store(true, Ordering::Relaxed);
}

/// True once a stop was requested; a run that sees it is reported as interrupted.
#[inline]
pub fn stop_requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

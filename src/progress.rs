//! Progress on a terminal: a bar on stderr while a native run lasts, nothing when
//! stderr is piped or redirected, so output files and pipes stay clean. The bar
//! appears after a second, so short runs do not flash one.

use crate::workload::runner::Observer;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// What "done" means for the bar.
#[derive(Debug, Clone, Copy)]
pub enum Expect {
    /// The run ends after this long (a time limit).
    Time(Duration),
    /// The run ends after this many units (events, passes, sizes).
    Units(u64),
}

pub struct Progress {
    bar: Option<ProgressBar>,
    expect: Expect,
    /// Runs made of several measurements report time and units per measurement;
    /// when they go backwards a new one began, and what the last one reached is kept.
    base: AtomicU64,
    last: AtomicU64,
    created: Instant,
    shown: AtomicBool,
}

const SHOW_AFTER: Duration = Duration::from_secs(1);

impl Progress {
    /// A bar labelled `label`, shown only when stderr is a terminal.
    pub fn new(label: &str, expect: Expect) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let len = match expect {
                Expect::Time(d) => d.as_millis() as u64,
                Expect::Units(n) => n,
            };
            let bar = ProgressBar::with_draw_target(Some(len.max(1)), ProgressDrawTarget::hidden());
            bar.set_style(
                ProgressStyle::with_template("{prefix:>12} [{bar:30}] {percent:>3}%  {elapsed}")
                    .expect("valid template")
                    .progress_chars("=> "),
            );
            bar.set_prefix(label.to_string());
            bar
        });
        Self {
            bar,
            expect,
            base: AtomicU64::new(0),
            last: AtomicU64::new(0),
            created: Instant::now(),
            shown: AtomicBool::new(false),
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl Observer for Progress {
    fn progress(&self, p: &crate::workload::observe::Progress) {
        self.tick(p.elapsed, p.done);
    }
}

impl Progress {
    /// Moves the bar: to `elapsed` for a timed run, to `units` for a counted one.
    pub fn tick(&self, elapsed: Duration, units: u64) {
        if let Some(bar) = &self.bar {
            if !self.shown.load(Ordering::Relaxed) && self.created.elapsed() >= SHOW_AFTER {
                bar.set_draw_target(ProgressDrawTarget::stderr());
                self.shown.store(true, Ordering::Relaxed);
            }
            let now = match self.expect {
                Expect::Time(_) => elapsed.as_millis() as u64,
                Expect::Units(_) => units,
            };
            let last = self.last.swap(now, Ordering::Relaxed);
            if now < last {
                self.base.fetch_add(last, Ordering::Relaxed);
            }
            bar.set_position(self.base.load(Ordering::Relaxed) + now);
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// A countdown to the next step of a schedule (`soak`'s next slice), on stderr when it
/// is a terminal; nothing otherwise.
pub struct Countdown {
    bar: Option<ProgressBar>,
}

impl Countdown {
    pub fn new(label: &str) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            // Drawn from the first `show`, so a wait of nothing draws nothing.
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
            bar.set_style(
                ProgressStyle::with_template("{prefix:>12} {msg}").expect("valid template"),
            );
            bar.set_prefix(label.to_string());
            bar
        });
        Self { bar }
    }

    /// Shows the time left, to the second.
    pub fn show(&self, left: Duration) {
        if let Some(bar) = &self.bar {
            if bar.is_hidden() {
                bar.set_draw_target(ProgressDrawTarget::stderr());
            }
            let secs = Duration::from_secs(left.as_secs_f64().ceil() as u64);
            bar.set_message(format!(
                "starts in {} (Ctrl-C stops; the soak can be resumed)",
                crate::units::format_duration(secs)
            ));
        }
    }
}

impl Drop for Countdown {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

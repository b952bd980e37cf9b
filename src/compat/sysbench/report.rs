//! sysbench 1.0.20's output layout, field for field (format strings in the reference
//! §1.5 and the captured outputs): the run header, interval lines, the histogram and
//! the final report.

use crate::measure::histogram::Histogram;
use crate::model::{Outcome, fairness};
use crate::workload::disk::fileio::Counters;
use crate::workload::observe::{Observer, Snapshot};
use std::io::Write;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

pub const VERSION: &str = "1.0.20";

pub fn banner() -> String {
    format!(
        "sysbench {VERSION} (using hostbench {})\n\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// What the personality prints while the workers run.
pub struct IntervalPrinter {
    /// `None` for tests that print generic lines; `Some(block)` prints MiB/sec.
    pub block_size: Option<u64>,
    pub percentile: u32,
    /// Verbosity below 3 prints no interval lines.
    pub silent: bool,
}

impl Observer for IntervalPrinter {
    fn snapshot(&self, s: &Snapshot<'_>) {
        let Snapshot::Interval(i) = s else {
            return;
        };
        if self.silent {
            return;
        }
        let line = match self.block_size {
            Some(block) => format!(
                "[ {:.0}s ] {:.2} MiB/sec\n",
                i.at.as_secs_f64(),
                i.events as f64 * block as f64 / 1048576.0 / i.span.as_secs_f64()
            ),
            None => format!(
                "[ {:.0}s ] thds: {} eps: {:.2} lat (ms,{}%): {:.2}\n",
                i.at.as_secs_f64(),
                i.threads_running,
                i.events_per_sec(),
                self.percentile,
                percentile_ms(&i.histogram, self.percentile)
            ),
        };
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(line.as_bytes());
        let _ = out.flush();
    }
}

/// fileio's interval line: `[ 1s ] reads: 2.80 MiB/s writes: 1.87 MiB/s fsyncs: 273.93/s latency (ms,95%): 4.028`.
pub struct FileioIntervalPrinter {
    counters: Arc<Counters>,
    /// Bytes read, bytes written and fsyncs at the previous line.
    last: Mutex<[u64; 3]>,
    percentile: u32,
    silent: bool,
}

impl FileioIntervalPrinter {
    pub fn new(counters: Arc<Counters>, percentile: u32, silent: bool) -> Self {
        Self {
            counters,
            last: Mutex::new([0; 3]),
            percentile,
            silent,
        }
    }
}

impl Observer for FileioIntervalPrinter {
    fn snapshot(&self, s: &Snapshot<'_>) {
        let Snapshot::Interval(i) = s else {
            return;
        };
        let now = [
            self.counters.bytes_read.load(Ordering::Relaxed),
            self.counters.bytes_written.load(Ordering::Relaxed),
            self.counters.fsyncs.load(Ordering::Relaxed),
        ];
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let span = i.span.as_secs_f64().max(1e-9);
        let delta = |k: usize| now[k].saturating_sub(last[k]) as f64 / span;
        let line = format!(
            "[ {:.0}s ] reads: {:.2} MiB/s writes: {:.2} MiB/s fsyncs: {:.2}/s latency (ms,{}%): {:.3}\n",
            i.at.as_secs_f64(),
            delta(0) / 1048576.0,
            delta(1) / 1048576.0,
            delta(2),
            self.percentile,
            percentile_ms(&i.histogram, self.percentile)
        );
        *last = now;
        if !self.silent {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(line.as_bytes());
            let _ = out.flush();
        }
    }
}

fn percentile_ms(h: &Histogram, p: u32) -> f64 {
    if p == 0 {
        return 0.0;
    }
    h.percentile_ns(p as f64).unwrap_or(0.0) / 1e6
}

/// `Latency histogram (values are in milliseconds)` and one line per non-empty bucket,
/// ending with sysbench's single-space line.
pub fn histogram(h: &Histogram) -> String {
    let mut out = String::from(
        "Latency histogram (values are in milliseconds)\n       value  ------------- distribution ------------- count\n",
    );
    let max = h.counts.iter().copied().max().unwrap_or(0).max(1);
    for (ns, count) in h.nonempty() {
        let stars = ((count as f64 * 40.0 / max as f64) + 0.5).floor() as usize;
        out += &format!("{:12.3} |{:<40} {}\n", ns / 1e6, "*".repeat(stars), count);
    }
    out += " \n";
    out
}

/// From `General statistics:` to the end of `Threads fairness:`.
pub fn general_statistics(o: &Outcome, percentile: u32) -> String {
    let events: u64 = o.threads.iter().map(|t| t.events).sum();
    let lat = o.latency.as_ref();
    let ms = |f: fn(&crate::model::Latency) -> f64| lat.map_or(0.0, |l| f(l) / 1e6);
    let mut out = String::from("General statistics:\n");
    out += &format!(
        "    total time:                          {:.4}s\n",
        o.elapsed_s
    );
    out += &format!("    total number of events:              {events}\n\n");
    out += "Latency (ms):\n";
    out += &format!("         min: {:39.2}\n", ms(|l| l.min_ns));
    out += &format!("         avg: {:39.2}\n", ms(|l| l.mean_ns));
    out += &format!("         max: {:39.2}\n", ms(|l| l.max_ns));
    if percentile == 0 {
        out += "         percentile stats:               disabled\n";
    } else {
        // sysbench's rule: the bucket value itself, which can exceed the max printed
        // above it (the model's percentiles are bounded by the extremes).
        let p = lat
            .and_then(|l| l.histogram().percentile_ns(percentile as f64))
            .unwrap_or(0.0)
            / 1e6;
        out += &format!("        {percentile:3}th percentile: {p:27.2}\n");
    }
    out += &format!("         sum: {:39.2}\n\n", ms(|l| l.sum_ns));
    let ((ev_avg, ev_sd), (t_avg, t_sd)) = fairness(&o.threads);
    out += "Threads fairness:\n";
    out += &format!("    events (avg/stddev):           {ev_avg:.4}/{ev_sd:3.2}\n");
    out += &format!("    execution time (avg/stddev):   {t_avg:.4}/{t_sd:3.2}\n\n");
    out
}

pub fn cpu_speed(o: &Outcome) -> String {
    let eps = o.metric("events_per_sec", None).map_or(0.0, |m| m.value);
    format!("CPU speed:\n    events per second: {eps:8.2}\n")
}

pub fn memory_totals(o: &Outcome, block_size: u64, oper_none: bool) -> String {
    let ops = o.metric("operations", None).map_or(0.0, |m| m.value);
    let per_sec = o.metric("ops_per_sec", None).map_or(0.0, |m| m.value);
    let mut out = format!("Total operations: {ops:.0} ({per_sec:8.2} per second)\n\n");
    if !oper_none {
        let mib = ops * block_size as f64 / 1048576.0;
        let mib_s = per_sec * block_size as f64 / 1048576.0;
        out += &format!("{mib:4.2} MiB transferred ({mib_s:4.2} MiB/sec)\n\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::histogram::Layout;

    #[test]
    fn histogram_lines() {
        let mut h = Histogram::new(Layout::SYSBENCH);
        for _ in 0..16 {
            h.record(270_000.0);
        }
        h.record(330_000.0);
        let text = histogram(&h);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[2],
            "       0.270 |**************************************** 16"
        );
        // 1 * 40 / 16 = 2.5 rounds half up to 3 stars.
        assert_eq!(
            lines[3],
            "       0.330 |***                                      1"
        );
        assert_eq!(lines[4], " ");
    }

    #[test]
    fn the_percentile_is_sysbench_s_bucket_even_above_the_max() {
        // 3.6 ms falls in the sysbench bucket of 3.62 ms: sysbench prints a 95th
        // percentile of 3.62 under a max of 3.60, and so does the personality, though
        // the model's percentile (native output, the store) is bounded at 3.60.
        let mut h = Histogram::new(Layout::SYSBENCH);
        h.record(3_600_000.0);
        let lat =
            crate::model::Latency::from_histogram(&h, 3_600_000, 3_600_000, 3_600_000, &[95.0]);
        assert_eq!(lat.percentile(95.0), Some(3_600_000.0));
        let mut o = Outcome::new(
            "cpu",
            serde_json::Value::Null,
            crate::host::HostInfo::detect(),
        );
        o.latency = Some(lat);
        let text = general_statistics(&o, 95);
        assert!(
            text.contains("         max:                                    3.60\n"),
            "{text}"
        );
        assert!(
            text.contains("         95th percentile:                        3.62\n"),
            "{text}"
        );
    }
}

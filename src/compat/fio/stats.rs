//! The numbers fio reports, derived from hostbench's job results with fio's
//! formulas (reference/disk.md 1.7): per-direction runtime in ms rounded up,
//! `bw_bytes = 1000 * io_bytes / runtime`, `bw = bw_bytes / 1024`, IOPS as a
//! float, 500 ms rate samples, group aggregates. All three output formats read
//! from here, so they cannot disagree.

use super::options::JobOptions;
use crate::measure::fio_histogram::LatencyClasses;
use crate::workload::disk::job::{DirStats, JobResult};

/// fio's directions in output order; trim is always empty here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    Read,
    Write,
    Trim,
}

impl Dir {
    pub const ALL: [Dir; 3] = [Dir::Read, Dir::Write, Dir::Trim];

    pub fn key(self) -> &'static str {
        match self {
            Dir::Read => "read",
            Dir::Write => "write",
            Dir::Trim => "trim",
        }
    }
}

/// min/max/mean/stddev/count of rate samples.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SampleStats {
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    pub dev: f64,
    pub n: usize,
}

impl SampleStats {
    fn of(values: &[u64]) -> Self {
        if values.is_empty() {
            return Self::default();
        }
        let n = values.len();
        let mean = values.iter().sum::<u64>() as f64 / n as f64;
        let var = if n > 1 {
            values
                .iter()
                .map(|&v| (v as f64 - mean).powi(2))
                .sum::<f64>()
                / (n - 1) as f64
        } else {
            0.0
        };
        Self {
            min: *values.iter().min().unwrap_or(&0),
            max: *values.iter().max().unwrap_or(&0),
            mean,
            dev: var.sqrt(),
            n,
        }
    }
}

/// One direction of one report.
#[derive(Debug, Clone, Copy, Default)]
pub struct DirFigures {
    pub io_bytes: u64,
    pub total_ios: u64,
    pub runtime_ms: u64,
    pub bw_bytes: u64,
    /// KiB/s.
    pub bw: u64,
    pub iops: f64,
    pub bw_samples: SampleStats,
    pub iops_samples: SampleStats,
}

/// One report: a job clone, or with `group_reporting` all jobs of a group merged.
pub struct Report<'a> {
    pub name: String,
    pub groupid: usize,
    /// Threads merged into this report.
    pub jobs: usize,
    pub opts: &'a JobOptions,
    pub result: JobResult,
    /// Sum of the merged threads' measured spans, ms (fio's `total_run_time`).
    pub job_runtime_ms: u64,
    /// Wall clock from start to end, whole seconds (ramp included).
    pub elapsed_s: u64,
    /// Per-500 ms [read ops, write ops, read bytes, write bytes], threads summed.
    pub windows: Vec<[u64; 4]>,
    pub window_ms: u64,
    /// Per direction, measured span of each merged thread in ms.
    runtimes: [u64; 2],
}

fn ceil_ms(d: std::time::Duration) -> u64 {
    (d.as_micros() as u64).div_ceil(1000)
}

impl<'a> Report<'a> {
    /// Merges `threads` (at least one) into one report.
    pub fn new(
        name: String,
        groupid: usize,
        opts: &'a JobOptions,
        threads: &[&JobResult],
        elapsed_s: u64,
    ) -> Self {
        let mut result = threads[0].clone();
        for t in &threads[1..] {
            result.merge(t);
        }
        let runtime_of = |pick: fn(&JobResult) -> &DirStats| {
            threads
                .iter()
                .filter(|t| pick(t).ops > 0)
                .map(|t| ceil_ms(t.elapsed))
                .max()
                .unwrap_or(0)
        };
        let runtimes = [runtime_of(|t| &t.read), runtime_of(|t| &t.write)];
        Self {
            name,
            groupid,
            jobs: threads.len(),
            opts,
            job_runtime_ms: threads.iter().map(|t| ceil_ms(t.elapsed)).sum(),
            elapsed_s,
            windows: result.windows.clone(),
            window_ms: result.window.as_millis() as u64,
            result,
            runtimes,
        }
    }

    pub fn stats(&self, d: Dir) -> Option<&DirStats> {
        match d {
            Dir::Read => Some(&self.result.read),
            Dir::Write => Some(&self.result.write),
            Dir::Trim => None,
        }
    }

    pub fn figures(&self, d: Dir) -> DirFigures {
        let (Some(s), k) = (self.stats(d), d as usize) else {
            return DirFigures::default();
        };
        let runtime_ms = self.runtimes[k];
        let bw_bytes = (1000 * s.bytes).checked_div(runtime_ms).unwrap_or(0);
        let per_sec = 1000 / self.window_ms.max(1);
        let bw: Vec<u64> = self
            .windows
            .iter()
            .map(|w| w[2 + k] * per_sec / 1024)
            .collect();
        let iops: Vec<u64> = self.windows.iter().map(|w| w[k] * per_sec).collect();
        let active = s.ops > 0;
        DirFigures {
            io_bytes: s.bytes,
            total_ios: s.ops,
            runtime_ms,
            bw_bytes,
            bw: bw_bytes / 1024,
            iops: if runtime_ms > 0 {
                1000.0 * s.ops as f64 / runtime_ms as f64
            } else {
                0.0
            },
            bw_samples: if active {
                SampleStats::of(&bw)
            } else {
                SampleStats::default()
            },
            iops_samples: if active {
                SampleStats::of(&iops)
            } else {
                SampleStats::default()
            },
        }
    }

    /// CPU use as fio states it: % of one CPU over the threads' runtime.
    pub fn cpu_percent(&self) -> (f64, f64) {
        let ms = self.job_runtime_ms.max(1) as f64;
        (
            self.result.cpu.user_s * 1e5 / ms,
            self.result.cpu.system_s * 1e5 / ms,
        )
    }

    /// Completion-latency classes over reads and writes together.
    pub fn classes(&self) -> LatencyClasses {
        let mut c = LatencyClasses::default();
        for s in [&self.result.read, &self.result.write] {
            if let Some(f) = &s.fio {
                c.merge(&f.classes);
            }
        }
        c
    }

    /// Requests in flight at issue, as percentages of all issued.
    pub fn depth_percent(map: &[u64; 7]) -> [f64; 7] {
        let total: u64 = map.iter().sum();
        let mut out = [0.0; 7];
        if total > 0 {
            for (o, &c) in out.iter_mut().zip(map) {
                *o = 100.0 * c as f64 / total as f64;
            }
        }
        out
    }
}

/// "Run status group" figures of one direction.
#[derive(Debug, Clone, Copy, Default)]
pub struct GroupDir {
    pub io_bytes: u64,
    /// Aggregate: all bytes over the longest runtime, bytes/s.
    pub agg_bw: u64,
    pub min_bw: u64,
    pub max_bw: u64,
    pub min_run: u64,
    pub max_run: u64,
}

pub fn group_dir(reports: &[&Report], d: Dir) -> GroupDir {
    let figs: Vec<DirFigures> = reports
        .iter()
        .map(|r| r.figures(d))
        .filter(|f| f.runtime_ms > 0)
        .collect();
    if figs.is_empty() {
        return GroupDir::default();
    }
    let io: u64 = figs.iter().map(|f| f.io_bytes).sum();
    let max_run = figs.iter().map(|f| f.runtime_ms).max().unwrap_or(0);
    GroupDir {
        io_bytes: io,
        agg_bw: (io * 1000).checked_div(max_run).unwrap_or(0),
        min_bw: figs.iter().map(|f| f.bw_bytes).min().unwrap_or(0),
        max_bw: figs.iter().map(|f| f.bw_bytes).max().unwrap_or(0),
        min_run: figs.iter().map(|f| f.runtime_ms).min().unwrap_or(0),
        max_run,
    }
}

/// fio's `per=`: a report's mean bandwidth as a share of its group's aggregate.
pub fn share_of_group(mean_kib: f64, group: &GroupDir) -> f64 {
    let agg_kib = group.agg_bw / 1024;
    if agg_kib == 0 {
        0.0
    } else {
        (mean_kib * 100.0 / agg_kib as f64).min(100.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_stats_use_n_minus_one() {
        let s = SampleStats::of(&[117088, 139048]);
        assert_eq!((s.min, s.max, s.n), (117088, 139048, 2));
        assert!((s.mean - 128068.0).abs() < 1e-9);
        // fio 3.33 printed bw_dev 15528.064915 for these two samples.
        assert!((s.dev - 15528.064915).abs() < 1e-3, "{}", s.dev);
    }
}

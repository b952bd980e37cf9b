//! fio's default ("normal") human report, line for line as fio 3.33 lays it out
//! (reference/disk.md 1.10): per-job blocks, "Run status group" lines and
//! "Disk stats".

use super::Summary;
use super::stats::{Dir, GroupDir, Report, group_dir, share_of_group};
use crate::measure::fio_histogram::{CLASS_BOUNDS, FioHistogram, LatencyClasses};
use std::fmt::Write;

/// fio's compact numbers: at most `digits` digits, scaled by 1000 (or 1024 with
/// `pow2`) under a prefix, the last step's remainder shown as decimals when there
/// is room (`22.0k`, `86.1MiB/s`, `4096KiB`, `6647.2k`).
pub fn compact(num: u64, digits: usize, pow2: bool, unit: &str) -> String {
    let thousand: u64 = if pow2 { 1024 } else { 1000 };
    let prefixes: [&str; 6] = if pow2 {
        ["", "Ki", "Mi", "Gi", "Ti", "Pi"]
    } else {
        ["", "k", "M", "G", "T", "P"]
    };
    let len = |n: u64| n.to_string().len();
    let (mut n, mut idx, mut rem) = (num, 0usize, None);
    while len(n) > digits && idx + 1 < prefixes.len() {
        rem = Some(n % thousand);
        n /= thousand;
        idx += 1;
    }
    let Some(r) = rem else {
        return format!("{n}{}{unit}", prefixes[idx]);
    };
    let room = digits.saturating_sub(len(n) + 1);
    if room == 0 {
        let n = n + u64::from(r >= thousand / 2);
        return format!("{n}{}{unit}", prefixes[idx]);
    }
    let frac = format!("{:.*}", room, r as f64 / thousand as f64);
    // Rounding 0.96 to one decimal gives "1.0": carry it rather than print "22.0k"
    // for 22,999.
    let (n, decimals) = match frac.strip_prefix("1.") {
        Some(zeros) => (n + 1, zeros.to_string()),
        None => (n, frac[2..].to_string()),
    };
    format!("{n}.{decimals}{}{unit}", prefixes[idx])
}

/// Bandwidth in the job's base first, the other in parentheses.
fn bw_pair(bytes_per_sec: u64, kb_base: u64) -> (String, String) {
    let iec = compact(bytes_per_sec, 4, true, "B/s");
    let si = compact(bytes_per_sec, 4, false, "B/s");
    if kb_base == 1000 {
        (si, iec)
    } else {
        (iec, si)
    }
}

fn size_pair(bytes: u64, kb_base: u64) -> (String, String) {
    let iec = compact(bytes, 4, true, "B");
    let si = compact(bytes, 4, false, "B");
    if kb_base == 1000 {
        (si, iec)
    } else {
        (iec, si)
    }
}

/// The unit fio picks for a min/max/avg/stdev line, and the divisor.
fn stat_unit(h: &FioHistogram) -> (&'static str, u64) {
    let (min, max, dev) = (h.min(), h.max(), h.stddev());
    if min > 2_000_000 && max > 99_999_999 && dev > 1_000_000.0 {
        ("msec", 1_000_000)
    } else if min > 2000 && max > 99_999 && dev > 1000.0 {
        ("usec", 1000)
    } else {
        ("nsec", 1)
    }
}

fn stat_line(out: &mut String, label: &str, h: &FioHistogram) {
    let (unit, div) = stat_unit(h);
    let _ = writeln!(
        out,
        "{label} ({unit}): min={}, max={}, avg={:5.2}, stdev={:5.2}",
        compact(h.min() / div, 6, false, ""),
        compact(h.max() / div, 6, false, ""),
        h.mean() / div as f64,
        h.stddev() / div as f64
    );
}

fn percentile_block(out: &mut String, label: &str, h: &FioHistogram, list: &[f64]) {
    let values: Vec<u64> = list.iter().map(|&p| h.percentile(p)).collect();
    let (lo, hi) = (
        values.iter().copied().min().unwrap_or(0),
        values.iter().copied().max().unwrap_or(0),
    );
    let (unit, div) = if lo > 2_000_000 && hi > 99_999_999 {
        ("msec", 1_000_000)
    } else if lo > 2000 && hi > 99_999 {
        ("usec", 1000)
    } else {
        ("nsec", 1)
    };
    let _ = writeln!(out, "    {label} percentiles ({unit}):");
    let width = values
        .iter()
        .map(|v| v.div_ceil(div).to_string().len())
        .max()
        .unwrap_or(1)
        .max(5);
    for (i, (p, v)) in list.iter().zip(&values).enumerate() {
        if i % 4 == 0 {
            out.push_str("     |");
        }
        let last = i + 1 == list.len();
        let _ = write!(
            out,
            " {:5.2}th=[{:>width$}]{}",
            p,
            v.div_ceil(div),
            if last {
                "\n"
            } else if i % 4 == 3 {
                ",\n"
            } else {
                ","
            }
        );
    }
}

fn direction(out: &mut String, r: &Report, d: Dir, group: &GroupDir) {
    let f = r.figures(d);
    let Some(s) = r.stats(d) else { return };
    let Some(times) = &s.fio else { return };
    let kb = r.opts.kb_base;
    let (bw, bw_alt) = bw_pair(f.bw_bytes, kb);
    let (io, _) = size_pair(f.io_bytes, kb);
    let _ = writeln!(
        out,
        "  {}: IOPS={}, BW={bw} ({bw_alt})({io}/{}msec){}",
        d.key(),
        compact(f.iops.round() as u64, 4, false, ""),
        f.runtime_ms,
        if d == Dir::Write {
            "; 0 zone resets"
        } else {
            ""
        }
    );
    if times.slat.samples() > 0 {
        stat_line(out, "    slat", &times.slat);
    }
    stat_line(out, "    clat", &times.clat);
    stat_line(out, "     lat", &times.lat);
    if r.opts.clat_percentiles {
        percentile_block(out, "clat", &times.clat, &r.opts.percentile_list);
    }
    if r.opts.lat_percentiles {
        percentile_block(out, " lat", &times.lat, &r.opts.percentile_list);
    }
    let b = f.bw_samples;
    if b.n > 0 {
        let (unit, scale) = match (b.mean > (kb * kb) as f64, kb) {
            (true, 1000) => ("MB", kb as f64),
            (true, _) => ("MiB", kb as f64),
            (false, 1000) => ("kB", 1.0),
            (false, _) => ("KiB", 1.0),
        };
        let _ = writeln!(
            out,
            "   bw ({unit:>5}/s): min={:5}, max={:5}, per={:.2}%, avg={:5.2}, stdev={:5.2}, samples={}",
            (b.min as f64 / scale) as u64,
            (b.max as f64 / scale) as u64,
            share_of_group(b.mean, group),
            b.mean / scale,
            b.dev / scale,
            b.n
        );
        let i = f.iops_samples;
        let _ = writeln!(
            out,
            "   iops        : min={:5}, max={:5}, avg={:5.2}, stdev={:5.2}, samples={}",
            i.min, i.max, i.mean, i.dev, i.n
        );
    }
}

/// `  lat (usec)   : 250=13.79%, 500=81.37%` rows, five entries a line.
fn latency_rows(out: &mut String, classes: &LatencyClasses) {
    let total = classes.total();
    if total == 0 {
        return;
    }
    for (row, unit) in ["nsec", "usec", "msec"].iter().enumerate() {
        let count = if row == 2 { 12 } else { 10 };
        let entries: Vec<String> = (0..count)
            .filter_map(|k| {
                let c = classes.0[row * 10 + k];
                (c > 0).then(|| {
                    let label = match k {
                        10 => "2000".to_string(),
                        11 => ">=2000".to_string(),
                        _ => CLASS_BOUNDS[k].to_string(),
                    };
                    let pct = (100.0 * c as f64 / total as f64).max(0.01);
                    format!("{label}={pct:.2}%")
                })
            })
            .collect();
        for chunk in entries.chunks(5) {
            let _ = writeln!(out, "  lat ({unit})   : {}", chunk.join(", "));
        }
    }
}

fn depth_line(label: &str, keys: &[&str; 7], map: &[u64; 7]) -> String {
    let pcts = Report::depth_percent(map);
    let parts: Vec<String> = keys
        .iter()
        .zip(pcts)
        .zip(map)
        .map(|((k, p), &c)| {
            let p = if c > 0 { p.max(0.1) } else { 0.0 };
            format!("{k}={p:.1}%")
        })
        .collect();
    format!("{label}: {}\n", parts.join(", "))
}

fn job_block(out: &mut String, r: &Report, group: &[GroupDir; 2], summary: &Summary) {
    let _ = writeln!(
        out,
        "{}: (groupid={}, jobs={}): err= 0: pid={}: {}",
        r.name, r.groupid, r.jobs, summary.pid, summary.time_text
    );
    for (k, d) in [Dir::Read, Dir::Write].into_iter().enumerate() {
        if r.figures(d).total_ios > 0 {
            direction(out, r, d, &group[k]);
        }
    }
    latency_rows(out, &r.classes());
    if let Some(f) = &r.result.sync.fio
        && f.lat.samples() > 0
    {
        out.push_str("  fsync/fdatasync/sync_file_range:\n");
        stat_line(out, "    sync", &f.lat);
        percentile_block(out, "sync", &f.lat, &r.opts.percentile_list);
    }
    let (usr, sys) = r.cpu_percent();
    let res = &r.result;
    let _ = writeln!(
        out,
        "  cpu          : usr={usr:.2}%, sys={sys:.2}%, ctx={}, majf={}, minf={}",
        res.ctx, res.major_faults, res.minor_faults
    );
    out.push_str(&depth_line(
        "  IO depths    ",
        &["1", "2", "4", "8", "16", "32", ">=64"],
        &res.depth_levels,
    ));
    let batch_keys = ["0", "4", "8", "16", "32", "64", ">=64"];
    out.push_str(&depth_line(
        "     submit    ",
        &batch_keys,
        &res.submit_batches,
    ));
    out.push_str(&depth_line(
        "     complete  ",
        &batch_keys,
        &res.complete_batches,
    ));
    let _ = writeln!(
        out,
        "     issued rwts: total={},{},0,0 short=0,0,0,0 dropped=0,0,0,0",
        res.read.ops, res.write.ops
    );
    let _ = writeln!(
        out,
        "     latency   : target=0, window=0, percentile=100.00%, depth={}",
        r.opts.iodepth
    );
}

/// The lines printed before the jobs start (one per job section).
pub fn job_header(o: &super::options::JobOptions, groupid: usize) -> String {
    let range = |d: &crate::workload::disk::job::SizeDist| {
        format!(
            "{}-{}",
            compact(d.min() as u64, 4, true, "B"),
            compact(d.max() as u64, 4, true, "B")
        )
    };
    let mut s = format!(
        "{}: (g={groupid}): rw={}, bs=(R) {}, (W) {}, (T) {}, ioengine={}, iodepth={}\n",
        o.name,
        o.rw_text,
        range(&o.bs[0]),
        range(&o.bs[1]),
        range(&o.bs[0]),
        o.ioengine.name(),
        o.iodepth
    );
    if o.numjobs > 1 {
        s.push_str("...\n");
    }
    s
}

pub fn render(summary: &Summary) -> String {
    let mut out = String::new();
    for (g, members) in &summary.groups {
        let reports: Vec<&Report> = members.iter().map(|&i| &summary.reports[i]).collect();
        let group = [
            group_dir(&reports, Dir::Read),
            group_dir(&reports, Dir::Write),
        ];
        let _ = g;
        for r in &reports {
            job_block(&mut out, r, &group, summary);
        }
    }
    for (g, members) in &summary.groups {
        let reports: Vec<&Report> = members.iter().map(|&i| &summary.reports[i]).collect();
        let _ = writeln!(out, "\nRun status group {g} (all jobs):");
        let kb = reports.first().map_or(1024, |r| r.opts.kb_base);
        for (label, d) in [("   READ", Dir::Read), ("  WRITE", Dir::Write)] {
            let gd = group_dir(&reports, d);
            if gd.max_run == 0 {
                continue;
            }
            let (agg, agg_alt) = bw_pair(gd.agg_bw, kb);
            let (min, min_alt) = bw_pair(gd.min_bw, kb);
            let (max, max_alt) = bw_pair(gd.max_bw, kb);
            let (io, io_alt) = size_pair(gd.io_bytes, kb);
            let _ = writeln!(
                out,
                "{label}: bw={agg} ({agg_alt}), {min}-{max} ({min_alt}-{max_alt}), io={io} ({io_alt}), run={}-{}msec",
                gd.min_run, gd.max_run
            );
        }
    }
    if !summary.disks.is_empty() {
        out.push_str("\nDisk stats (read/write):\n");
        for d in &summary.disks {
            let _ = writeln!(
                out,
                "  {}: ios={}/{}, merge={}/{}, ticks={}/{}, in_queue={}, util={:.2}%",
                d.name,
                d.read_ios,
                d.write_ios,
                d.read_merges,
                d.write_merges,
                d.read_ticks,
                d.write_ticks,
                d.in_queue,
                d.util
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_numbers_read_like_fios() {
        // Each pair was printed by fio 3.33 (captures in reference/disk.md and ours).
        assert_eq!(compact(22030, 4, false, ""), "22.0k");
        assert_eq!(compact(4774, 4, false, ""), "4774");
        assert_eq!(compact(98500, 4, false, ""), "98.5k");
        assert_eq!(compact(90_300_000, 4, true, "B/s"), "86.1MiB/s");
        assert_eq!(compact(90_300_000, 4, false, "B/s"), "90.3MB/s");
        assert_eq!(compact(4_194_304, 4, true, "B"), "4096KiB");
        assert_eq!(compact(4_194_304, 4, false, "B"), "4194kB");
        assert_eq!(compact(19_574_784, 4, true, "B"), "18.7MiB");
        assert_eq!(compact(6_647_200, 6, false, ""), "6647.2k");
        assert_eq!(compact(18_021_000, 6, false, ""), "18021k");
        assert_eq!(compact(65536, 4, true, "B"), "64.0KiB");
        assert_eq!(compact(4096, 4, true, "B"), "4096B");
        assert_eq!(compact(0, 4, true, "B"), "0B");
        // fio would print "22.0k" here; the carry makes it right.
        assert_eq!(compact(22_999, 4, false, ""), "23.0k");
        assert_eq!(compact(u64::MAX, 4, true, "B"), "16384PiB");
    }
}

//! `--output-format=json` and `json+`: fio's key names, units and layout
//! (reference/disk.md 1.9), including its `"key" : value` spacing and six-decimal
//! floats, so fio-plot and scripts that read fio's JSON read ours. `json+` adds the
//! histogram's non-empty buckets as `bins`. One key is ours: `"hostbench"`, the
//! version that produced the document (consumers ignore keys they do not know).

use super::Summary;
use super::stats::{Dir, Report, group_dir, share_of_group};
use crate::measure::fio_histogram::FioHistogram;

/// A writer for fio's JSON style: two-space indents, `"key" : value`.
struct Writer {
    out: String,
    /// Whether the open container already has an item.
    has_items: Vec<bool>,
}

impl Writer {
    fn new() -> Self {
        Self {
            out: String::new(),
            has_items: Vec::new(),
        }
    }

    fn item_start(&mut self, key: Option<&str>) {
        if let Some(has) = self.has_items.last_mut() {
            self.out.push_str(if *has { ",\n" } else { "\n" });
            *has = true;
        }
        for _ in 0..self.has_items.len() {
            self.out.push_str("  ");
        }
        if let Some(k) = key {
            self.out.push_str(&quote(k));
            self.out.push_str(" : ");
        }
    }

    fn open(&mut self, key: Option<&str>, brace: char) {
        self.item_start(key);
        self.out.push(brace);
        self.has_items.push(false);
    }

    fn close(&mut self, brace: char) {
        let had = self.has_items.pop().unwrap_or(false);
        if had {
            self.out.push('\n');
            for _ in 0..self.has_items.len() {
                self.out.push_str("  ");
            }
        }
        self.out.push(brace);
    }

    fn raw(&mut self, key: &str, value: &str) {
        self.item_start(Some(key));
        self.out.push_str(value);
    }

    fn str(&mut self, key: &str, value: &str) {
        self.raw(key, &quote(value));
    }

    fn u(&mut self, key: &str, value: u64) {
        self.raw(key, &value.to_string());
    }

    fn f(&mut self, key: &str, value: f64) {
        let v = if value.is_finite() { value } else { 0.0 };
        self.raw(key, &format!("{v:.6}"));
    }
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

fn latency(w: &mut Writer, key: &str, h: &FioHistogram, percentiles: Option<&[f64]>, bins: bool) {
    w.open(Some(key), '{');
    w.u("min", h.min());
    w.u("max", h.max());
    w.f("mean", h.mean());
    w.f("stddev", h.stddev());
    w.u("N", h.samples());
    if let Some(list) = percentiles
        && h.samples() > 0
    {
        w.open(Some("percentile"), '{');
        for &p in list {
            w.u(&format!("{p:.6}"), h.percentile(p));
        }
        w.close('}');
        if bins {
            w.open(Some("bins"), '{');
            for (value, count) in h.bins() {
                w.u(&value.to_string(), count);
            }
            w.close('}');
        }
    }
    w.close('}');
}

fn direction(w: &mut Writer, r: &Report, d: Dir, agg: u64, plus: bool) {
    let f = r.figures(d);
    let empty = FioHistogram::new();
    let times = r.stats(d).and_then(|s| s.fio.as_deref());
    let list = r.opts.percentile_list.as_slice();
    w.open(Some(d.key()), '{');
    w.u("io_bytes", f.io_bytes);
    w.u("io_kbytes", f.io_bytes >> 10);
    w.u("bw_bytes", f.bw_bytes);
    w.u("bw", f.bw);
    w.f("iops", f.iops);
    w.u("runtime", f.runtime_ms);
    w.u("total_ios", f.total_ios);
    w.u("short_ios", 0);
    w.u("drop_ios", 0);
    latency(w, "slat_ns", times.map_or(&empty, |t| &t.slat), None, false);
    latency(
        w,
        "clat_ns",
        times.map_or(&empty, |t| &t.clat),
        r.opts.clat_percentiles.then_some(list),
        plus,
    );
    latency(
        w,
        "lat_ns",
        times.map_or(&empty, |t| &t.lat),
        r.opts.lat_percentiles.then_some(list),
        plus && !r.opts.clat_percentiles,
    );
    let b = f.bw_samples;
    w.u("bw_min", b.min);
    w.u("bw_max", b.max);
    let group = super::stats::GroupDir {
        agg_bw: agg,
        ..Default::default()
    };
    w.f(
        "bw_agg",
        if b.n > 0 {
            share_of_group(b.mean, &group)
        } else {
            0.0
        },
    );
    w.f("bw_mean", b.mean);
    w.f("bw_dev", b.dev);
    w.u("bw_samples", b.n as u64);
    let i = f.iops_samples;
    w.u("iops_min", i.min);
    w.u("iops_max", i.max);
    w.f("iops_mean", i.mean);
    w.f("iops_stddev", i.dev);
    w.u("iops_samples", i.n as u64);
    w.close('}');
}

fn depth_map(w: &mut Writer, key: &str, keys: &[&str; 7], map: &[u64; 7]) {
    w.open(Some(key), '{');
    for ((k, p), &c) in keys.iter().zip(Report::depth_percent(map)).zip(map) {
        w.f(k, if c > 0 { p.max(0.1) } else { 0.0 });
    }
    w.close('}');
}

fn job(w: &mut Writer, r: &Report, aggs: [u64; 2], plus: bool) {
    w.open(None, '{');
    w.str("jobname", &r.name);
    w.u("groupid", r.groupid as u64);
    w.u("error", 0);
    w.u("eta", 0);
    w.u("elapsed", r.elapsed_s);
    w.open(Some("job options"), '{');
    for (k, v) in &r.opts.given {
        w.str(k, v);
    }
    w.close('}');
    direction(w, r, Dir::Read, aggs[0], plus);
    direction(w, r, Dir::Write, aggs[1], plus);
    direction(w, r, Dir::Trim, 0, plus);
    w.open(Some("sync"), '{');
    let sync = &r.result.sync;
    w.u("total_ios", sync.ops);
    let empty = FioHistogram::new();
    latency(
        w,
        "lat_ns",
        sync.fio.as_deref().map_or(&empty, |f| &f.lat),
        Some(&r.opts.percentile_list),
        plus,
    );
    w.close('}');
    let (usr, sys) = r.cpu_percent();
    w.u("job_runtime", r.job_runtime_ms);
    w.f("usr_cpu", usr);
    w.f("sys_cpu", sys);
    w.u("ctx", r.result.ctx);
    w.u("majf", r.result.major_faults);
    w.u("minf", r.result.minor_faults);
    let batch = ["0", "4", "8", "16", "32", "64", ">=64"];
    depth_map(
        w,
        "iodepth_level",
        &["1", "2", "4", "8", "16", "32", ">=64"],
        &r.result.depth_levels,
    );
    depth_map(w, "iodepth_submit", &batch, &r.result.submit_batches);
    depth_map(w, "iodepth_complete", &batch, &r.result.complete_batches);
    let classes = r.classes();
    let total = classes.total().max(1) as f64;
    for (row, key) in ["latency_ns", "latency_us", "latency_ms"]
        .iter()
        .enumerate()
    {
        w.open(Some(key), '{');
        let count = if row == 2 { 12 } else { 10 };
        for k in 0..count {
            let label = match k {
                10 => "2000".to_string(),
                11 => ">=2000".to_string(),
                _ => crate::measure::fio_histogram::CLASS_BOUNDS[k].to_string(),
            };
            w.f(&label, 100.0 * classes.0[row * 10 + k] as f64 / total);
        }
        w.close('}');
    }
    w.u("latency_depth", r.opts.iodepth as u64);
    w.u("latency_target", 0);
    w.f("latency_percentile", 100.0);
    w.u("latency_window", 0);
    w.close('}');
}

pub fn render(summary: &Summary, plus: bool) -> String {
    let mut w = Writer::new();
    w.open(None, '{');
    w.str("fio version", super::FIO_VERSION);
    w.str("hostbench", env!("CARGO_PKG_VERSION"));
    w.u("timestamp", summary.timestamp_ms / 1000);
    w.u("timestamp_ms", summary.timestamp_ms);
    w.str("time", &summary.time_text);
    if !summary.global_options.is_empty() {
        w.open(Some("global options"), '{');
        for (k, v) in &summary.global_options {
            w.str(k, v);
        }
        w.close('}');
    }
    w.open(Some("jobs"), '[');
    for members in summary.groups.iter().map(|g| &g.1) {
        let reports: Vec<&Report> = members.iter().map(|&i| &summary.reports[i]).collect();
        let aggs = [
            group_dir(&reports, Dir::Read).agg_bw,
            group_dir(&reports, Dir::Write).agg_bw,
        ];
        for r in reports {
            job(&mut w, r, aggs, plus);
        }
    }
    w.close(']');
    if !summary.disks.is_empty() {
        w.open(Some("disk_util"), '[');
        for d in &summary.disks {
            w.open(None, '{');
            w.str("name", &d.name);
            w.u("read_ios", d.read_ios);
            w.u("write_ios", d.write_ios);
            w.u("read_merges", d.read_merges);
            w.u("write_merges", d.write_merges);
            w.u("read_ticks", d.read_ticks);
            w.u("write_ticks", d.write_ticks);
            w.u("in_queue", d.in_queue);
            w.f("util", d.util);
            w.close('}');
        }
        w.close(']');
    }
    w.close('}');
    w.out.push('\n');
    w.out
}

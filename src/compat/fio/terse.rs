//! `--output-format=terse` / `--minimal`: fio's semicolon-separated version 3
//! line, one per report. Latencies are in µs (integers for min/max and
//! percentiles, six decimals for mean and deviation), bandwidth in KiB/s.

use super::Summary;
use super::stats::{Dir, Report, group_dir, share_of_group};
use crate::measure::fio_histogram::FioHistogram;

fn latency(fields: &mut Vec<String>, h: &FioHistogram) {
    fields.push((h.min() / 1000).to_string());
    fields.push((h.max() / 1000).to_string());
    fields.push(format!("{:.6}", h.mean() / 1000.0));
    fields.push(format!("{:.6}", h.stddev() / 1000.0));
}

fn direction(fields: &mut Vec<String>, r: &Report, d: Dir, agg: u64) {
    let f = r.figures(d);
    let empty = FioHistogram::new();
    let times = r.stats(d).and_then(|s| s.fio.as_deref());
    fields.push((f.io_bytes >> 10).to_string());
    fields.push(f.bw.to_string());
    fields.push((f.iops.round() as u64).to_string());
    fields.push(f.runtime_ms.to_string());
    latency(fields, times.map_or(&empty, |t| &t.slat));
    let clat = times.map_or(&empty, |t| &t.clat);
    latency(fields, clat);
    let list = &r.opts.percentile_list;
    for k in 0..20 {
        fields.push(match list.get(k) {
            Some(&p) if r.opts.clat_percentiles => {
                format!("{p:.6}%={}", clat.percentile(p) / 1000)
            }
            _ => "0%=0".to_string(),
        });
    }
    latency(fields, times.map_or(&empty, |t| &t.lat));
    let b = f.bw_samples;
    let group = super::stats::GroupDir {
        agg_bw: agg,
        ..Default::default()
    };
    fields.push(b.min.to_string());
    fields.push(b.max.to_string());
    let per = if b.n > 0 {
        share_of_group(b.mean, &group)
    } else {
        0.0
    };
    fields.push(format!("{per:.6}%"));
    fields.push(format!("{:.6}", b.mean));
    fields.push(format!("{:.6}", b.dev));
}

fn line(r: &Report, aggs: [u64; 2], summary: &Summary) -> String {
    let mut fields: Vec<String> = vec![
        "3".into(),
        super::FIO_VERSION.into(),
        r.name.clone(),
        r.groupid.to_string(),
        "0".into(),
    ];
    direction(&mut fields, r, Dir::Read, aggs[0]);
    direction(&mut fields, r, Dir::Write, aggs[1]);
    let (usr, sys) = r.cpu_percent();
    fields.push(format!("{usr:.6}%"));
    fields.push(format!("{sys:.6}%"));
    fields.push(r.result.ctx.to_string());
    fields.push(r.result.major_faults.to_string());
    fields.push(r.result.minor_faults.to_string());
    for (p, &c) in Report::depth_percent(&r.result.depth_levels)
        .iter()
        .zip(&r.result.depth_levels)
    {
        fields.push(format!("{:.1}%", if c > 0 { p.max(0.1) } else { 0.0 }));
    }
    let classes = r.classes();
    let total = classes.total().max(1) as f64;
    for k in 10..32 {
        fields.push(format!("{:.2}%", 100.0 * classes.0[k] as f64 / total));
    }
    for d in &summary.disks {
        fields.extend([
            d.name.clone(),
            d.read_ios.to_string(),
            d.write_ios.to_string(),
            d.read_merges.to_string(),
            d.write_merges.to_string(),
            d.read_ticks.to_string(),
            d.write_ticks.to_string(),
            d.in_queue.to_string(),
            format!("{:.2}%", d.util),
        ]);
    }
    fields.join(";") + "\n"
}

pub fn render(summary: &Summary) -> String {
    let mut out = String::new();
    for members in summary.groups.iter().map(|g| &g.1) {
        let reports: Vec<&Report> = members.iter().map(|&i| &summary.reports[i]).collect();
        let aggs = [
            group_dir(&reports, Dir::Read).agg_bw,
            group_dir(&reports, Dir::Write).agg_bw,
        ];
        for r in reports {
            out.push_str(&line(r, aggs, summary));
        }
    }
    out
}

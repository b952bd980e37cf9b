//! The one conversion from a disk job's raw result to an `Outcome`, for every front
//! end that runs the job loop: the native `hostbench disk` tests and the fio
//! personality's reports. Two outcomes of the same job description get the same
//! params and metrics, whoever ran them, so `compare` sets a `hostbench disk --tests
//! randread` beside a `fio --rw=randread --bs=4k --iodepth=32 --direct=1 …` row for
//! row.
//!
//! Params are fio's words for what the job measured: `rw`, `bs` (or `bsrange`,
//! `bssplit`), `iodepth`, `numjobs`, `ioengine` (the engine that ran, not the one
//! asked for), `direct`, `rwmixread` for mixed patterns, `fsync`/`fdatasync` when
//! writes are synced, and `size` for buffered I/O, where the file's size against the
//! page cache decides what is measured. How long a job ran, its ramp, its files'
//! names and its seed only bound the run: they are not params.

use super::engine::{EngineKind, Op};
use super::files;
use super::job::{DirStats, IoPlan, JobResult, Pattern, SizeDist};
use crate::host::HostInfo;
use crate::model::{CpuUse, Latency, Metric, Outcome, Params, Sample, Unit};
use crate::units::format_bytes;
use std::collections::BTreeMap;
use std::path::Path;

/// The latency percentiles every disk outcome carries, as `{dir}_latency_p{p}`.
pub const PERCENTILES: [f64; 4] = [50.0, 90.0, 99.0, 99.9];

/// Where a job's files were, for the notes that say what the figures are worth.
#[derive(Debug, Clone, PartialEq)]
pub struct Place {
    /// The file system's name (`ext4`, `tmpfs`).
    pub fs: &'static str,
    pub ram_backed: bool,
    /// The device under the file system, or `unknown`.
    pub device: String,
}

impl Place {
    /// The file system and device holding `dir`.
    pub fn of(dir: &Path) -> Self {
        let magic = files::statfs(dir).map(|(_, m)| m).ok();
        Place {
            fs: magic.map_or("an unknown file system", files::fs_name),
            ram_backed: magic.is_some_and(files::ram_backed),
            device: files::device_of(dir).unwrap_or_else(|| "unknown".into()),
        }
    }
}

/// What a job ran, beside its raw result: enough to name the measurement.
#[derive(Debug, Clone)]
pub struct Ran<'a> {
    /// The native test's name, or the fio job's.
    pub name: &'a str,
    pub plan: &'a IoPlan,
    /// Clones of the job that ran together (fio's `numjobs`, the native `--jobs`).
    pub numjobs: usize,
    /// Threads merged into this result: `numjobs` for a whole job, 1 for one of
    /// fio's per-clone reports, more for a fio group of several jobs.
    pub threads: usize,
    /// Bytes of one clone's file(s): what its I/O spreads over.
    pub size: u64,
    pub place: &'a Place,
    /// The spec as the front end gave it (the native test, the fio job's options).
    pub spec: serde_json::Value,
}

/// A size as fio's options write it: `4k`, `1m`, `5g`, `512`.
pub fn fio_size(n: u64) -> String {
    for (shift, suffix) in [(40, "t"), (30, "g"), (20, "m"), (10, "k")] {
        if n >= 1 << shift && n.is_multiple_of(1 << shift) {
            return format!("{}{suffix}", n >> shift);
        }
    }
    n.to_string()
}

/// fio's `rw=` for a pattern.
pub fn rw_word(p: Pattern) -> &'static str {
    match p {
        Pattern::Read => "read",
        Pattern::Write | Pattern::Fsync => "write",
        Pattern::RandRead => "randread",
        Pattern::RandWrite => "randwrite",
        Pattern::RandRw => "randrw",
        Pattern::ReadWrite => "rw",
    }
}

/// The option a size distribution is written with, and its value.
fn sizes_option(d: &SizeDist) -> (&'static str, String) {
    match d {
        SizeDist::Fixed(b) => ("bs", fio_size(*b as u64)),
        SizeDist::Range { min, max } => (
            "bsrange",
            format!("{}-{}", fio_size(*min as u64), fio_size(*max as u64)),
        ),
        SizeDist::Split(v) => (
            "bssplit",
            v.iter()
                .map(|(b, pct)| format!("{}/{pct}", fio_size(*b as u64)))
                .collect::<Vec<_>>()
                .join(":"),
        ),
    }
}

/// What identifies the measurement, in fio's words (see the module's text). `engine`
/// is the engine that ran.
pub fn params(ran: &Ran, engine: EngineKind) -> Params {
    let plan = ran.plan;
    let mut p = Params::new();
    let mut set = |k: &str, v: String| {
        p.insert(k.to_string(), v);
    };
    let pattern = plan.pattern;
    set("rw", rw_word(pattern).into());
    let (read, write) = (
        sizes_option(&plan.read_sizes),
        sizes_option(&plan.write_sizes),
    );
    let (key, value) = match (pattern.reads(), pattern.writes()) {
        (true, false) => read,
        (false, _) => write,
        (true, true) if read == write => read,
        // Different sizes per direction: fio's `bs=READ,WRITE`.
        (true, true) => (
            if read.0 == write.0 { read.0 } else { "bs" },
            format!("{},{}", read.1, write.1),
        ),
    };
    set(key, value);
    set("iodepth", plan.iodepth.to_string());
    set("numjobs", ran.numjobs.to_string());
    set("ioengine", engine.name().into());
    set("direct", u8::from(plan.direct).to_string());
    if pattern.reads() && pattern.writes() {
        set("rwmixread", plan.read_pct.to_string());
    }
    if plan.sync_every > 0 && pattern.writes() {
        let key = if plan.sync_op == Op::Fsync {
            "fsync"
        } else {
            "fdatasync"
        };
        set(key, plan.sync_every.to_string());
    }
    if !plan.direct {
        set("size", fio_size(ran.size));
    }
    p
}

fn latency_of(d: &DirStats) -> Latency {
    Latency::from_histogram(
        &d.latency,
        d.min_ns,
        d.max_ns,
        d.sum_ns as u128,
        &PERCENTILES,
    )
}

/// The outcome of one job (or one fio report): workload `disk`, the job's params,
/// per direction IOPS, bytes/s and latency percentiles, the syncs' rate and latency,
/// CPU per I/O, the per-window rates as the series, and notes on what the figures
/// are worth.
pub fn outcome(ran: &Ran, r: &JobResult) -> Outcome {
    let plan = ran.plan;
    let mut o = Outcome::new("disk", ran.spec.clone(), HostInfo::detect());
    o.params = params(ran, r.engine);
    let secs = r.elapsed.as_secs_f64();
    // Zero says "nothing measured" (Outcome::measured_nothing).
    o.elapsed_s = if r.measuring_began { secs } else { 0.0 };
    o.interrupted = r.interrupted;
    o.cpu_time = CpuUse::over(&r.cpu, r.elapsed);
    let threads = ran.threads;
    let push = |o: &mut Outcome, name: &str, value: f64, unit: Unit| {
        o.push(Metric::new(name, value, unit).threads(threads));
    };
    let syncing = plan.sync_every > 0 && plan.pattern.writes();
    for (dir, d, asked) in [
        ("read", &r.read, plan.pattern.reads()),
        ("write", &r.write, plan.pattern.writes()),
    ] {
        if d.ops == 0 && !asked {
            continue;
        }
        push(
            &mut o,
            &format!("{dir}_iops"),
            d.ops as f64 / secs,
            Unit::OpsPerSec,
        );
        push(
            &mut o,
            &format!("{dir}_bytes_per_sec"),
            d.bytes as f64 / secs,
            Unit::BytesPerSec,
        );
        let lat = latency_of(d);
        for p in &lat.percentiles {
            push(
                &mut o,
                &format!("{dir}_latency_p{}", p.p),
                p.ns,
                Unit::Nanoseconds,
            );
        }
        push(
            &mut o,
            &format!("{dir}_latency_max"),
            lat.max_ns,
            Unit::Nanoseconds,
        );
        if o.latency.is_none() {
            o.latency = Some(lat);
        }
    }
    if syncing {
        let lat = latency_of(&r.sync);
        push(
            &mut o,
            "fsync_per_sec",
            r.sync.ops as f64 / secs,
            Unit::OpsPerSec,
        );
        for p in &lat.percentiles {
            push(
                &mut o,
                &format!("fsync_latency_p{}", p.p),
                p.ns,
                Unit::Nanoseconds,
            );
        }
        o.latency = Some(lat);
    }
    let ios = r.read.ops + r.write.ops + r.sync.ops;
    if ios > 0 {
        push(
            &mut o,
            "cpu_per_io",
            r.cpu.total_s() * 1e9 / ios as f64,
            Unit::Nanoseconds,
        );
    }
    o.series = series(r);
    notes(&mut o, ran, r);
    crate::workload::bursts::judge(&mut o);
    o
}

/// The per-window figures as rates per second.
fn series(r: &JobResult) -> Vec<Sample> {
    let span = r.window.as_secs_f64().max(1e-9);
    r.windows
        .iter()
        .enumerate()
        .map(|(i, w)| Sample {
            at_s: (i + 1) as f64 * span,
            span_s: span,
            values: BTreeMap::from([
                ("read_iops".into(), w[0] as f64 / span),
                ("write_iops".into(), w[1] as f64 / span),
                ("read_bytes_per_sec".into(), w[2] as f64 / span),
                ("write_bytes_per_sec".into(), w[3] as f64 / span),
            ]),
        })
        .collect()
}

fn notes(o: &mut Outcome, ran: &Ran, r: &JobResult) {
    let plan = ran.plan;
    let place = ran.place;
    let syncing = plan.sync_every > 0 && plan.pattern.writes();
    let measured = match plan.runtime {
        Some(rt) => format!(
            "{:.0} s after a {:.0} s ramp",
            rt.as_secs_f64(),
            plan.ramp.as_secs_f64()
        ),
        None => format!(
            "{:.1} s to do its bytes, after a {:.0} s ramp",
            r.elapsed.as_secs_f64(),
            plan.ramp.as_secs_f64()
        ),
    };
    o.note(format!(
        "{} on {} ({}), engine {}{}, {} I/O, depth {}, {} job(s), {} file, {measured}",
        ran.name,
        place.fs,
        place.device,
        r.engine.name(),
        if r.skipped_engines.is_empty() {
            String::new()
        } else {
            format!(" ({})", r.skipped_engines.join("; "))
        },
        if plan.direct { "direct" } else { "buffered" },
        if r.engine.is_async() { plan.iodepth } else { 1 },
        ran.numjobs,
        format_bytes(ran.size),
    ));
    if place.ram_backed {
        o.note(format!(
            "{} keeps files in RAM: these are memory figures, not a disk's",
            place.fs
        ));
    }
    if !plan.direct && plan.pattern.reads() {
        o.note("buffered reads of a file just written come from the page cache: memory speed, not the disk's");
    }
    if !plan.direct && plan.pattern.writes() && !syncing {
        o.note("buffered writes land in the page cache first: the rate is memory's until writeback catches up");
    }
    if !plan.direct && r.engine == EngineKind::Libaio {
        o.note("libaio without direct I/O blocks at submission, so the queue depth is not reached");
    }
    if !r.engine.is_async() && plan.iodepth > 1 {
        o.note(format!(
            "{} completes one request at a time: depth {} was not reached",
            r.engine.name(),
            plan.iodepth
        ));
    }
    if r.interrupted {
        o.note("interrupted: the run was stopped early; figures cover the part that ran");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::cputime::CpuTime;
    use crate::measure::histogram::{Histogram, Layout};
    use std::time::Duration;

    fn plan(pattern: Pattern, bs: usize, iodepth: usize, direct: bool) -> IoPlan {
        super::super::job::JobSpec {
            pattern,
            block_size: bs,
            iodepth,
            jobs: 1,
            read_pct: 70,
            runtime: Duration::from_secs(10),
            ramp: Duration::from_secs(2),
            direct,
            engine: None,
            seed: 1,
        }
        .plan()
    }

    fn stats(ops: u64, bytes: u64, lat_ns: u64) -> DirStats {
        let mut latency = Histogram::new(Layout::NATIVE);
        for _ in 0..ops {
            latency.record(lat_ns as f64);
        }
        DirStats {
            ops,
            bytes,
            latency,
            min_ns: if ops == 0 { u64::MAX } else { lat_ns },
            max_ns: if ops == 0 { 0 } else { lat_ns },
            sum_ns: ops * lat_ns,
            fio: None,
        }
    }

    fn result(read: DirStats, write: DirStats, sync: DirStats, engine: EngineKind) -> JobResult {
        JobResult {
            read,
            write,
            sync,
            windows: vec![[1000, 0, 4_096_000, 0], [3000, 0, 12_288_000, 0]],
            window: Duration::from_millis(500),
            elapsed: Duration::from_secs(2),
            cpu: CpuTime {
                user_s: 0.1,
                system_s: 0.3,
            },
            ctx: 0,
            minor_faults: 0,
            major_faults: 0,
            depth_levels: [0; 7],
            submit_batches: [0; 7],
            complete_batches: [0; 7],
            engine,
            skipped_engines: vec![],
            interrupted: false,
            measuring_began: true,
        }
    }

    fn place() -> Place {
        Place {
            fs: "ext4",
            ram_backed: false,
            device: "vda".into(),
        }
    }

    fn value(o: &Outcome, name: &str) -> f64 {
        o.metric(name, None)
            .unwrap_or_else(|| panic!("no {name}"))
            .value
    }

    #[test]
    fn a_random_read_job_becomes_iops_throughput_and_latency() {
        let plan = plan(Pattern::RandRead, 4096, 32, true);
        let place = place();
        let ran = Ran {
            name: "randread",
            plan: &plan,
            numjobs: 1,
            threads: 1,
            size: 1 << 30,
            place: &place,
            spec: serde_json::json!({"name": "randread"}),
        };
        let r = result(
            stats(20_000, 20_000 * 4096, 250_000),
            stats(0, 0, 0),
            stats(0, 0, 0),
            EngineKind::IoUring,
        );
        let o = outcome(&ran, &r);
        assert_eq!(o.workload, "disk");
        let want: Params = [
            ("rw", "randread"),
            ("bs", "4k"),
            ("iodepth", "32"),
            ("numjobs", "1"),
            ("ioengine", "io_uring"),
            ("direct", "1"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(o.params, want);
        assert_eq!(value(&o, "read_iops"), 10_000.0);
        assert_eq!(value(&o, "read_bytes_per_sec"), 10_000.0 * 4096.0);
        let p50 = value(&o, "read_latency_p50");
        assert!((p50 - 250_000.0).abs() / 250_000.0 < 0.05, "{p50}");
        assert!(o.metric("read_latency_p99.9", None).is_some());
        assert!(o.metric("write_iops", None).is_none());
        assert!(o.metric("fsync_per_sec", None).is_none());
        assert_eq!(value(&o, "cpu_per_io"), 0.4e9 / 20_000.0);
        let m = o.metric("read_iops", None).unwrap();
        assert_eq!((m.threads, m.variant.as_deref()), (Some(1), None));
        assert_eq!(m.better, crate::model::Better::Higher);
        // 500 ms windows as rates per second.
        assert_eq!(o.series.len(), 2);
        assert_eq!(o.series[1].at_s, 1.0);
        assert_eq!(o.series[1].values["read_iops"], 6000.0);
        assert!(
            o.notes[0].starts_with("randread on ext4 (vda), engine io_uring, direct I/O, depth 32")
        );
    }

    #[test]
    fn a_synced_buffered_write_job_has_fsync_figures_and_its_size() {
        let plan = plan(Pattern::Fsync, 4096, 1, false);
        let place = place();
        let ran = Ran {
            name: "fsync",
            plan: &plan,
            numjobs: 1,
            threads: 1,
            size: 1 << 30,
            place: &place,
            spec: serde_json::Value::Null,
        };
        let r = result(
            stats(0, 0, 0),
            stats(1000, 1000 * 4096, 20_000),
            stats(1000, 0, 1_000_000),
            EngineKind::Psync,
        );
        let o = outcome(&ran, &r);
        assert_eq!(o.params["rw"], "write");
        assert_eq!(o.params["fdatasync"], "1");
        assert_eq!(o.params["direct"], "0");
        assert_eq!(o.params["size"], "1g");
        assert_eq!(o.params["ioengine"], "psync");
        assert!(!o.params.contains_key("rwmixread"));
        assert_eq!(value(&o, "fsync_per_sec"), 500.0);
        assert_eq!(value(&o, "write_iops"), 500.0);
        let l = value(&o, "fsync_latency_p99");
        assert!((l - 1e6).abs() / 1e6 < 0.05, "{l}");
        assert_eq!(o.latency.as_ref().unwrap().count, 1000);
        assert!(
            !o.notes.iter().any(|n| n.contains("page cache first")),
            "{:?}",
            o.notes
        );
    }

    #[test]
    fn mixed_jobs_and_size_distributions_in_fios_words() {
        let mut plan = plan(Pattern::RandRw, 4096, 64, true);
        plan.write_sizes = SizeDist::Split(vec![(4096, 10), (65536, 90)]);
        let place = place();
        let ran = Ran {
            name: "m",
            plan: &plan,
            numjobs: 4,
            threads: 4,
            size: 5 << 30,
            place: &place,
            spec: serde_json::Value::Null,
        };
        let p = params(&ran, EngineKind::Libaio);
        assert_eq!(p["rw"], "randrw");
        assert_eq!(p["rwmixread"], "70");
        assert_eq!(p["bs"], "4k,4k/10:64k/90");
        assert_eq!(p["numjobs"], "4");
        assert!(!p.contains_key("size"));
        let mut ranged = plan.clone();
        ranged.read_sizes = SizeDist::Range {
            min: 4096,
            max: 1 << 20,
        };
        ranged.write_sizes = ranged.read_sizes.clone();
        let ran = Ran {
            plan: &ranged,
            ..ran
        };
        assert_eq!(params(&ran, EngineKind::Libaio)["bsrange"], "4k-1m");
    }

    #[test]
    fn sizes_as_fio_writes_them() {
        assert_eq!(fio_size(4096), "4k");
        assert_eq!(fio_size(1 << 20), "1m");
        assert_eq!(fio_size(256 << 10), "256k");
        assert_eq!(fio_size(5 << 30), "5g");
        assert_eq!(fio_size(1536 << 10), "1536k");
        assert_eq!(fio_size(512), "512");
    }
}

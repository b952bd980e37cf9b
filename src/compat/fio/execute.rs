//! Running the jobs: laying out their files, running each batch's jobs together
//! with fio's status line, and gathering the results into reports.

use super::diskstats::DiskUtil;
use super::error::{FioError, PlanError, RunError};
use super::plan::{Prepared, is_block_device};
use super::stats::Report;
use super::{Summary, ctime};
use crate::model::Outcome;
use crate::workload::disk::engine::EngineKind;
use crate::workload::disk::files;
use crate::workload::disk::job::{self, JobResult};
use crate::workload::disk::outcome::{self as disk_outcome, Place, Ran};
use crate::workload::observe::{Observer, Progress, Quiet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Lays out the files of a batch that are missing or short. Returns the
/// "Laying out IO file" lines fio prints.
pub(super) fn lay_out(batch: &[&Prepared]) -> Result<String, FioError> {
    let mut lines = String::new();
    let mut done: Vec<PathBuf> = Vec::new();
    for p in batch {
        for clone in &p.targets {
            let (mut count, mut bytes) = (0u64, 0u64);
            for t in clone {
                if done.contains(&t.path) || is_block_device(&t.path) {
                    continue;
                }
                done.push(t.path.clone());
                let have = std::fs::metadata(&t.path).map_or(0, |m| m.len());
                if have >= t.size {
                    continue;
                }
                if let Some(parent) = t.path.parent().filter(|p| !p.as_os_str().is_empty())
                    && !parent.is_dir()
                {
                    return Err(PlanError::NoDirectory {
                        job: p.job.opts.name.clone(),
                        dir: parent.to_path_buf(),
                    }
                    .into());
                }
                // Reads need data to read; pure write jobs only need the space.
                let with_data = p.plan.pattern.reads();
                files::extend(&t.path, t.size, with_data, 0x1a70u64, &Quiet).map_err(
                    |e| match e {
                        files::FileError::Interrupted => RunError::Interrupted,
                        e => RunError::LayOut(e),
                    },
                )?;
                count += 1;
                bytes += t.size;
            }
            if count > 0 {
                lines.push_str(&format!(
                    "{}: Laying out IO file ({} file{} / {}MiB)\n",
                    p.job.opts.name,
                    count,
                    if count == 1 { "" } else { "s" },
                    bytes >> 20
                ));
            }
        }
    }
    Ok(lines)
}

/// A target whose data is in RAM (a file on tmpfs, a RAM disk, a loop device over a
/// tmpfs file) measures memory: say so on stderr.
pub(super) fn warn_about_file_systems(batch: &[&Prepared]) {
    for p in batch {
        let Some(t) = p.targets.first().and_then(|t| t.first()) else {
            continue;
        };
        if let Some(what) = files::memory_behind(&t.path) {
            eprintln!(
                "fio: note: job '{}' runs on {what}, which keeps its data in RAM: the figures are memory's, not a disk's",
                p.job.opts.name,
            );
        }
    }
}

/// fio's status line on a terminal: `Jobs: 2 (f=2): [r(2)][45.0%][eta 00m:06s]`.
pub(super) struct Status {
    enabled: bool,
    jobs: usize,
    letter: char,
    planned: Option<Duration>,
    last: std::sync::Mutex<Instant>,
}

impl Observer for Status {
    fn progress(&self, p: &Progress) {
        self.tick(p.elapsed);
    }
}

impl Status {
    fn tick(&self, at: Duration) {
        if !self.enabled {
            return;
        }
        let Ok(mut last) = self.last.lock() else {
            return;
        };
        if last.elapsed() < Duration::from_millis(500) {
            return;
        }
        *last = Instant::now();
        let (pct, eta) = match self.planned {
            Some(p) if !p.is_zero() => {
                let left = p.saturating_sub(at).as_secs();
                (
                    format!(
                        "{:.1}%",
                        (at.as_secs_f64() / p.as_secs_f64() * 100.0).min(100.0)
                    ),
                    format!("{:02}m:{:02}s", left / 60, left % 60),
                )
            }
            _ => ("-.-%".into(), "--m:--s".into()),
        };
        eprint!(
            "\rJobs: {} (f={}): [{}({})][{pct}][eta {eta}]\x1b[K",
            self.jobs, self.jobs, self.letter, self.jobs
        );
    }

    fn clear(&self) {
        if self.enabled {
            eprint!("\r\x1b[K");
        }
    }
}

/// Runs a batch's jobs together; each job's clone results and wall time.
pub(super) fn run_batch(
    batch: &[&Prepared],
    show_eta: bool,
) -> Result<Vec<(Vec<JobResult>, Duration)>, RunError> {
    let threads: usize = batch.iter().map(|p| p.targets.len()).sum();
    let planned = batch
        .iter()
        .map(|p| p.plan.runtime.map(|r| r + p.plan.ramp + p.plan.start_delay))
        .collect::<Option<Vec<_>>>()
        .and_then(|v| v.into_iter().max());
    let letter = match batch[0].plan.pattern {
        job::Pattern::Read => 'R',
        job::Pattern::RandRead => 'r',
        job::Pattern::Write => 'W',
        job::Pattern::RandWrite => 'w',
        job::Pattern::ReadWrite => 'M',
        _ => 'm',
    };
    let status = Status {
        enabled: show_eta,
        jobs: threads,
        letter,
        planned,
        last: std::sync::Mutex::new(Instant::now()),
    };
    let results: Vec<Result<(Vec<JobResult>, Duration), job::JobError>> =
        std::thread::scope(|scope| {
            let handles: Vec<_> = batch
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let status = &status;
                    scope.spawn(move || {
                        let start = Instant::now();
                        // The first job of the batch drives the status line; every
                        // job stops on Ctrl-C.
                        let observer: &dyn Observer = if i == 0 { status } else { &Quiet };
                        let r = job::run_threads(&p.plan, &p.targets, observer)?;
                        if p.job.opts.end_fsync && p.plan.pattern.writes() {
                            for t in p.targets.iter().flatten() {
                                if let Ok(f) = std::fs::OpenOptions::new().write(true).open(&t.path)
                                {
                                    let _ = f.sync_all();
                                }
                            }
                        }
                        Ok((r, start.elapsed()))
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("fio job thread panicked"))
                .collect()
        });
    status.clear();
    results
        .into_iter()
        .map(|r| r.map_err(RunError::Job))
        .collect()
}

/// Where a job's first file is, for the outcome's notes.
fn place_of(p: &Prepared) -> Place {
    let Some(path) = p.targets.first().and_then(|t| t.first()).map(|t| &t.path) else {
        return Place::of(Path::new("."));
    };
    if is_block_device(path) {
        return Place {
            fs: "a block device",
            ram_backed: false,
            device: path.display().to_string(),
        };
    }
    Place::of(
        path.parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new(".")),
    )
}

/// The outcome of one report: the disk workload's conversion, with the job's plan
/// (the first job's, for a group) and its options as written for the spec.
fn report_outcome(report: &Report, p: &Prepared, globals: &[(String, String)]) -> Outcome {
    let options = |given: &[(String, String)]| -> serde_json::Map<String, serde_json::Value> {
        given
            .iter()
            .map(|(k, v)| (k.clone(), serde_json::Value::from(v.as_str())))
            .collect()
    };
    let place = place_of(p);
    let ran = Ran {
        name: &report.name,
        plan: &p.plan,
        numjobs: p.targets.len(),
        threads: report.jobs,
        size: p
            .targets
            .first()
            .map_or(0, |files| files.iter().map(|t| t.size).sum()),
        place: &place,
        spec: serde_json::json!({
            "name": report.name,
            "global options": options(globals),
            "job options": options(&p.job.opts.given),
        }),
    };
    let mut o = disk_outcome::outcome(&ran, &report.result);
    if let Some((answered, ops, call)) = answered_in_submit(report) {
        o.note(answered_note(answered, ops, call));
    }
    if report.jobs > p.targets.len() {
        o.note(format!(
            "group_reporting merged {} threads of several jobs: the params are those of '{}', the first",
            report.jobs, p.job.opts.name
        ));
    }
    o
}

/// Requests the device answered before the call that submitted them returned,
/// of all the report's requests, and that call's name; `None` when there were none.
/// fio starts clat at that return (reference/disk.md 1.6), so their clat is only
/// the wait to be reaped and the device's time is in their slat: the figures keep
/// fio's rule (fio 3.33 prints the same minimum on the same disk), and
/// [`answered_note`] says where they come from.
pub(super) fn answered_in_submit(report: &Report) -> Option<(u64, u64, &'static str)> {
    let call = match report.result.engine {
        EngineKind::IoUring => "io_uring_enter",
        EngineKind::Libaio => "io_submit",
        _ => return None,
    };
    let (r, w) = (&report.result.read, &report.result.write);
    let answered = |d: &job::DirStats| d.fio.as_ref().map_or(0, |f| f.answered_in_submit);
    let n = answered(r) + answered(w);
    (n > 0).then_some((n, r.ops + w.ops, call))
}

/// Why clat can read below a microsecond on a disk, for `answered` of `ops` requests.
pub(super) fn answered_note(answered: u64, ops: u64, calls: &str) -> String {
    format!(
        "{} of {} requests ({:.2} %) were complete before the {calls} call submitting them returned: \
         fio starts clat at that return, so for these the device's time is in slat and clat is only \
         the wait to be reaped (which is how clat can read below a microsecond); lat is each \
         request's whole time",
        crate::units::thousands(answered as f64, 0),
        crate::units::thousands(ops as f64, 0),
        100.0 * answered as f64 / ops.max(1) as f64
    )
}

/// The reports fio prints, and one outcome per report to keep.
pub(super) fn summarise<'a>(
    prepared: &'a [Prepared<'a>],
    finished: &[(usize, Vec<JobResult>, Duration)],
    disks: Vec<DiskUtil>,
    global_options: Vec<(String, String)>,
    timestamp_ms: u64,
) -> (Summary<'a>, Vec<Outcome>) {
    let mut reports: Vec<Report<'a>> = Vec::new();
    let mut outcomes: Vec<Outcome> = Vec::new();
    let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
    let max_group = prepared.iter().map(|p| p.job.groupid).max().unwrap_or(0);
    for g in 0..=max_group {
        let members: Vec<&(usize, Vec<JobResult>, Duration)> = finished
            .iter()
            .filter(|(i, ..)| prepared[*i].job.groupid == g)
            .collect();
        let Some(first) = members.first() else {
            continue;
        };
        let first_opts = &prepared[first.0].job.opts;
        let mut indexes = Vec::new();
        if first_opts.group_reporting {
            let threads: Vec<&JobResult> = members.iter().flat_map(|m| m.1.iter()).collect();
            let wall = members.iter().map(|m| m.2).max().unwrap_or_default();
            indexes.push(reports.len());
            let report = Report::new(
                first_opts.name.clone(),
                g,
                first_opts,
                &threads,
                wall.as_secs_f64().round() as u64,
            );
            outcomes.push(report_outcome(&report, &prepared[first.0], &global_options));
            reports.push(report);
        } else {
            for (i, results, wall) in members {
                let opts = &prepared[*i].job.opts;
                for r in results {
                    indexes.push(reports.len());
                    let report = Report::new(
                        opts.name.clone(),
                        g,
                        opts,
                        &[r],
                        wall.as_secs_f64().round() as u64,
                    );
                    outcomes.push(report_outcome(&report, &prepared[*i], &global_options));
                    reports.push(report);
                }
            }
        }
        groups.push((g, indexes));
    }
    let summary = Summary {
        reports,
        groups,
        disks,
        global_options,
        timestamp_ms,
        time_text: ctime((timestamp_ms / 1000) as i64),
        pid: std::process::id(),
    };
    (summary, outcomes)
}

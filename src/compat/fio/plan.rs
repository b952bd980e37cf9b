//! From fio's sections to runnable jobs: [global] inheritance, groups and
//! batches, each clone's files and sizes, and the `IoPlan` the disk loop runs.

use super::Invocation;
use super::error::PlanError;
use super::jobfile::{Entry, Section};
use super::options::{self, JobOptions, JobSize};
use crate::workload::disk::engine::{self, EngineKind, Op};
use crate::workload::disk::job::{FileTarget, IoPlan};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A job and where it runs.
#[derive(Debug)]
pub(super) struct Job {
    pub(super) opts: JobOptions,
    pub(super) groupid: usize,
    /// Jobs of one batch run together; a `stonewall` starts the next batch.
    pub(super) batch: usize,
}

/// Options as written, `(name, value)`, for JSON's "job options" and "global options".
pub(super) type Given = Vec<(String, String)>;

pub(super) fn apply_entries(
    o: &mut JobOptions,
    entries: &[Entry],
    record: &mut Vec<(String, String)>,
) -> Result<(), PlanError> {
    for e in entries {
        options::apply(o, &e.key, e.value.as_deref()).map_err(|error| PlanError::Option {
            origin: e.origin.clone(),
            error,
        })?;
        if let Some(v) = &e.value {
            record.push((e.key.clone(), v.clone()));
        }
    }
    Ok(())
}

/// Applies [global] sections and job sections in order (a job sees the globals
/// above it), then numbers groups and batches.
pub(super) fn build_jobs(inv: &Invocation) -> Result<(Vec<Job>, Given), PlanError> {
    let mut base = JobOptions::default();
    let mut global_given = Vec::new();
    apply_entries(&mut base, &inv.cli_global, &mut global_given)?;
    let mut all: Vec<JobOptions> = Vec::new();
    let mut add_sections = |sections: &[Section],
                            global: &mut JobOptions,
                            global_given: &mut Vec<(String, String)>|
     -> Result<(), PlanError> {
        for s in sections {
            if s.is_global() {
                apply_entries(global, &s.entries, global_given)?;
                continue;
            }
            let mut o = global.clone();
            o.given.clear();
            o.name = s.name.clone();
            let mut given = Vec::new();
            apply_entries(&mut o, &s.entries, &mut given)?;
            o.given = given;
            all.push(o);
        }
        Ok(())
    };
    let mut cli_base = base.clone();
    add_sections(&inv.cli_sections, &mut cli_base, &mut global_given)?;
    for path in &inv.job_files {
        let sections = super::jobfile::read(path)?;
        let mut global = base.clone();
        add_sections(&sections, &mut global, &mut global_given)?;
    }
    if !inv.only_sections.is_empty() {
        all.retain(|o| inv.only_sections.contains(&o.name));
    }
    if all.is_empty() {
        return Err(PlanError::NoJobs);
    }
    let (mut group, mut batch) = (0, 0);
    let jobs = all
        .into_iter()
        .enumerate()
        .map(|(i, opts)| {
            if i > 0 && opts.stonewall {
                group += 1;
                batch += 1;
            } else if i > 0 && opts.new_group {
                group += 1;
            }
            Job {
                opts,
                groupid: group,
                batch,
            }
        })
        .collect();
    Ok((jobs, global_given))
}

/// A job ready to run: its plan, each clone's files, and what to lay out first.
pub(super) struct Prepared<'a> {
    pub(super) job: &'a Job,
    pub(super) plan: IoPlan,
    pub(super) targets: Vec<Vec<FileTarget>>,
}

/// fio's `filename` list: `:`-separated, `\:` for a colon in a name.
pub(super) fn split_names(list: &str) -> Vec<String> {
    let mut names = vec![String::new()];
    let mut chars = list.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                names.last_mut().expect("non-empty").push(':');
                chars.next();
            }
            ':' => names.push(String::new()),
            c => names.last_mut().expect("non-empty").push(c),
        }
    }
    names.retain(|n| !n.is_empty());
    names
}

pub(super) fn is_block_device(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device())
}

/// Size of an existing file or block device.
pub(super) fn existing_size(path: &Path) -> Option<u64> {
    use std::io::Seek;
    let meta = std::fs::metadata(path).ok()?;
    if meta.file_type().is_block_device() {
        let mut f = std::fs::File::open(path).ok()?;
        return f.seek(std::io::SeekFrom::End(0)).ok();
    }
    (meta.is_file() && meta.len() > 0).then_some(meta.len())
}

/// The engine that will run: the one asked for, or the next that works, said on
/// stderr (fio would fail; a benchmark that still measures is more useful).
pub(super) fn resolve_engine(wanted: EngineKind, depth: usize) -> EngineKind {
    match engine::open(Some(wanted), depth.max(1)) {
        Ok(_) => wanted,
        Err(e) => match engine::open(None, depth.max(1)) {
            Ok((eng, _)) => {
                let got = eng.kind();
                eprintln!(
                    "fio: note: ioengine={} is unavailable here ({e}); hostbench runs {} instead",
                    wanted.name(),
                    got.name()
                );
                got
            }
            Err(_) => wanted,
        },
    }
}

pub(super) fn prepare(job: &Job, allow_device: bool) -> Result<Prepared<'_>, PlanError> {
    let o = &job.opts;
    let name = &o.name;
    if o.time_based && o.runtime.is_none() {
        return Err(PlanError::NoRuntime { job: name.clone() });
    }
    let dirs: Vec<String> = o.directory.as_deref().map(split_names).unwrap_or_default();
    let dir_for = |clone: usize| -> PathBuf {
        dirs.get(clone % dirs.len().max(1))
            .map_or_else(|| PathBuf::from("."), PathBuf::from)
    };
    let clones = o.numjobs as usize;
    let names_for = |clone: usize| -> Vec<PathBuf> {
        match &o.filename {
            Some(list) => split_names(list)
                .into_iter()
                .map(|n| dir_for(0).join(n))
                .collect(),
            None => (0..o.nrfiles)
                .map(|f| dir_for(clone).join(format!("{name}.{clone}.{f}")))
                .collect(),
        }
    };
    let min_bs = o.bs[0].min().min(o.bs[1].min()) as u64;
    let max_bs = o.bs[0].max().max(o.bs[1].max()) as u64;
    let mut targets = Vec::with_capacity(clones);
    for clone in 0..clones {
        let paths = names_for(clone);
        if paths.is_empty() {
            return Err(PlanError::NoFile { job: name.clone() });
        }
        for p in &paths {
            if is_block_device(p) && o.pattern.writes() && !allow_device {
                return Err(PlanError::Device {
                    job: name.clone(),
                    path: p.clone(),
                    rw: o.rw_text.clone(),
                });
            }
        }
        let nfiles = paths.len() as u64;
        let existing: Option<u64> = paths.iter().map(|p| existing_size(p)).sum();
        let total = match &o.size {
            Some(JobSize::Bytes(n)) => *n,
            Some(JobSize::Percent(p)) => {
                let whole = existing.ok_or_else(|| PlanError::ShareOfNothing {
                    job: name.clone(),
                    percent: *p,
                })?;
                (whole as f64 * p / 100.0) as u64
            }
            None => match (o.filesize, existing) {
                (Some(fs), _) => fs * nfiles,
                (None, Some(n)) => n,
                (None, None) => {
                    return Err(PlanError::NoSize {
                        job: name.clone(),
                        path: paths[0].clone(),
                    });
                }
            },
        };
        let file_size = o.filesize.unwrap_or(total / nfiles);
        if file_size < max_bs {
            return Err(PlanError::FileTooSmall {
                job: name.clone(),
                file_size,
                block: max_bs,
            });
        }
        // Whole blocks only, as fio rounds its file sizes.
        let file_size = file_size / min_bs * min_bs;
        targets.push(
            paths
                .into_iter()
                .map(|path| FileTarget {
                    path,
                    size: file_size,
                    seq_start: 0,
                })
                .collect::<Vec<_>>(),
        );
    }
    let io_limit = if o.time_based {
        None
    } else {
        Some(
            o.io_size
                .unwrap_or_else(|| targets[0].iter().map(|t| t.size).sum()),
        )
    };
    let seed = match (o.randseed, o.randrepeat) {
        (Some(s), _) => s,
        (None, true) => 0x05ee_df10,
        (None, false) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64),
    };
    let (sync_every, sync_op) = match (o.fsync, o.fdatasync) {
        (n, _) if n > 0 => (n, Op::Fsync),
        (_, n) => (n, Op::Datasync),
    };
    let plan = IoPlan {
        pattern: o.pattern,
        read_sizes: o.bs[0].clone(),
        write_sizes: o.bs[1].clone(),
        iodepth: o.iodepth as usize,
        read_pct: o.rwmixread,
        direct: o.direct,
        engine: Some(resolve_engine(o.ioengine, o.iodepth as usize)),
        seed,
        ramp: o.ramp_time,
        runtime: o.runtime,
        io_limit,
        loops: o.loops,
        random_map: !o.norandommap,
        submit_batch: if o.iodepth_batch_submit == 0 {
            o.iodepth as usize
        } else {
            o.iodepth_batch_submit as usize
        },
        sync_every,
        sync_op,
        start_delay: o.startdelay,
        window: Duration::from_millis(500),
        detailed: true,
    };
    Ok(Prepared { job, plan, targets })
}

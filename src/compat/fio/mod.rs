//! The `fio` personality: `hostbench fio …` (or a `fio` symlink) reads fio job
//! files and command lines, runs the jobs on hostbench's disk engine, and prints
//! fio's reports: normal, json, json+ and terse, to stdout or `--output`.
//!
//! Jobs run as fio runs them: `numjobs` clones each, jobs up to the next
//! `stonewall` together, reporting groups split by `stonewall` and `new_group`,
//! `group_reporting` merging a group into one report. Differences from fio are
//! listed in docs/compat-fio.md; the main one is that statistics after `ramp_time`
//! are kept for every thread of a group (fio loses some with `group_reporting`).

pub mod diskstats;
mod jobfile;
mod json;
mod normal;
mod options;
mod stats;
mod terse;

use crate::measure::stop_requested;
use crate::workload::disk::engine::{self, EngineKind, Op};
use crate::workload::disk::files;
use crate::workload::disk::job::{self, FileTarget, IoPlan, JobResult};
use diskstats::DiskUtil;
use jobfile::{Entry, Section};
use options::{JobOptions, JobSize};
use stats::Report;
use std::io::{IsTerminal, Write};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// The fio release whose output this personality reproduces; `--version` prints
/// it so scripts that check for fio 3 features keep working.
pub const FIO_VERSION: &str = "fio-3.33";

/// Everything the output formats need about a finished run.
pub struct Summary<'a> {
    pub reports: Vec<Report<'a>>,
    /// (group id, indexes into `reports`).
    pub groups: Vec<(usize, Vec<usize>)>,
    pub disks: Vec<DiskUtil>,
    pub global_options: Vec<(String, String)>,
    pub timestamp_ms: u64,
    pub time_text: String,
    pub pid: u32,
}

#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Formats {
    normal: bool,
    json: bool,
    json_plus: bool,
    terse: bool,
}

#[derive(Debug, Default)]
struct Invocation {
    formats: Formats,
    output: Option<PathBuf>,
    job_files: Vec<PathBuf>,
    /// Options before the first `--name`: defaults for every job.
    cli_global: Vec<Entry>,
    /// `--name=...` sections and their options, in order.
    cli_sections: Vec<Section>,
    only_sections: Vec<String>,
    parse_only: bool,
    allow_device: bool,
    show_eta: Option<bool>,
}

/// Why a run could not go on: bad input (exit 2) or a failure while running (1).
enum Failure {
    Usage(String),
    Run(String),
}

impl From<String> for Failure {
    fn from(s: String) -> Self {
        Failure::Usage(s)
    }
}

const HELP: &str = "\
hostbench's fio personality (reproduces fio-3.33's options and reports)

usage: fio [options] [job options] <job file(s)>
  --output=FILE          write the report to FILE (replaced whole, never half-written)
  --output-format=LIST   normal, json, json+ or terse (comma-separated for several)
  --minimal              terse output
  --section=NAME         run only this job section (repeatable)
  --parse-only           check the job options and exit
  --eta=always|never|auto  the progress line on a terminal (stderr)
  --allow-device         let write jobs write to a block device (refused by default)
  --version              print fio's version this personality follows
Job options (--name=JOB starts a job; options before it apply to all jobs):
  name rw/readwrite rwmixread rwmixwrite bs bsrange bssplit size io_size filesize
  filename directory nrfiles numjobs iodepth ioengine(io_uring libaio psync sync)
  iodepth_batch_submit/iodepth_batch direct buffered runtime time_based ramp_time startdelay loops norandommap
  randrepeat randseed fsync fdatasync end_fsync invalidate thread stonewall
  new_group group_reporting kb_base percentile_list clat_percentiles lat_percentiles
Any other option is refused by name. See docs/compat-fio.md.
";

pub fn main(args: &[String]) -> ExitCode {
    let inv = match parse_args(args) {
        Ok(Some(inv)) => inv,
        Ok(None) => return ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("fio: {msg}");
            return ExitCode::from(2);
        }
    };
    match run(&inv) {
        Ok(code) => code,
        Err(Failure::Usage(msg)) => {
            eprintln!("fio: {msg}");
            ExitCode::from(2)
        }
        Err(Failure::Run(msg)) => {
            eprintln!("fio: {msg}");
            ExitCode::from(1)
        }
    }
}

fn parse_formats(v: &str) -> Result<Formats, String> {
    let mut f = Formats::default();
    for part in v.split(',') {
        match part.trim() {
            "normal" => f.normal = true,
            "json" => f.json = true,
            "json+" => f.json_plus = true,
            "terse" => f.terse = true,
            other => {
                return Err(format!(
                    "--output-format: '{other}' is not a format: use normal, json, json+ or terse"
                ));
            }
        }
    }
    Ok(f)
}

/// `None` when the invocation only asked for help or the version.
fn parse_args(args: &[String]) -> Result<Option<Invocation>, String> {
    let mut inv = Invocation::default();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        let Some(opt) = arg.strip_prefix("--").or_else(|| {
            arg.strip_prefix('-')
                .filter(|o| o.len() > 1 && !o.starts_with('-'))
        }) else {
            if arg == "-" {
                return Err("reading a job file from stdin is not supported: name the file".into());
            }
            inv.job_files.push(PathBuf::from(arg));
            continue;
        };
        let (key, value) = match opt.split_once('=') {
            Some((k, v)) => (k.to_string(), Some(v.to_string())),
            None => (opt.to_string(), None),
        };
        // A value in the next argument (`--bs 4k`) for options that need one.
        let mut take_value = |value: Option<String>| -> Result<String, String> {
            match value {
                Some(v) => Ok(v),
                None if i < args.len() => {
                    i += 1;
                    Ok(args[i - 1].clone())
                }
                None => Err(format!("--{key} needs a value")),
            }
        };
        match key.as_str() {
            "version" | "v" => {
                println!("{FIO_VERSION}");
                return Ok(None);
            }
            "help" | "h" => {
                print!("{HELP}");
                return Ok(None);
            }
            "output" | "o" => inv.output = Some(PathBuf::from(take_value(value)?)),
            "output-format" => inv.formats = parse_formats(&take_value(value)?)?,
            "minimal" => inv.formats.terse = true,
            "section" => inv.only_sections.push(take_value(value)?),
            "parse-only" => inv.parse_only = true,
            "allow-device" => inv.allow_device = true,
            "eta" => {
                inv.show_eta = match take_value(value)?.as_str() {
                    "always" => Some(true),
                    "never" => Some(false),
                    "auto" => None,
                    other => {
                        return Err(format!(
                            "--eta: '{other}' is not a choice: use always, never or auto"
                        ));
                    }
                }
            }
            "eta-newline" | "eta-interval" => {
                take_value(value)?;
            }
            "name" => {
                let name = take_value(value)?;
                inv.cli_sections.push(Section {
                    name: name.clone(),
                    entries: vec![Entry {
                        key: "name".into(),
                        value: Some(name),
                        origin: "command line".into(),
                    }],
                });
            }
            _ => {
                let Some((kind, _)) = options::lookup(&key) else {
                    return Err(format!(
                        "option '--{key}' is not supported by hostbench's fio (unknown, or not implemented); \
                         remove it, or see docs/compat-fio.md for the options it runs"
                    ));
                };
                let value = match (value, kind) {
                    (Some(v), _) => Some(v),
                    (None, options::Kind::Switch) => None,
                    (None, options::Kind::Value) => Some(take_value(None)?),
                };
                let entry = Entry {
                    key,
                    value,
                    origin: "command line".into(),
                };
                match inv.cli_sections.last_mut() {
                    Some(s) => s.entries.push(entry),
                    None => inv.cli_global.push(entry),
                }
            }
        }
    }
    if inv.formats == Formats::default() {
        inv.formats.normal = true;
    }
    Ok(Some(inv))
}

/// A job and where it runs.
#[derive(Debug)]
struct Job {
    opts: JobOptions,
    groupid: usize,
    /// Jobs of one batch run together; a `stonewall` starts the next batch.
    batch: usize,
}

/// Options as written, `(name, value)`, for JSON's "job options" and "global options".
type Given = Vec<(String, String)>;

fn apply_entries(
    o: &mut JobOptions,
    entries: &[Entry],
    record: &mut Vec<(String, String)>,
) -> Result<(), String> {
    for e in entries {
        options::apply(o, &e.key, e.value.as_deref())
            .map_err(|msg| format!("{}: {msg}", e.origin))?;
        if let Some(v) = &e.value {
            record.push((e.key.clone(), v.clone()));
        }
    }
    Ok(())
}

/// Applies [global] sections and job sections in order (a job sees the globals
/// above it), then numbers groups and batches.
fn build_jobs(inv: &Invocation) -> Result<(Vec<Job>, Given), String> {
    let mut base = JobOptions::default();
    let mut global_given = Vec::new();
    apply_entries(&mut base, &inv.cli_global, &mut global_given)?;
    let mut all: Vec<JobOptions> = Vec::new();
    let mut add_sections = |sections: &[Section],
                            global: &mut JobOptions,
                            global_given: &mut Vec<(String, String)>|
     -> Result<(), String> {
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
        let sections = jobfile::read(path)?;
        let mut global = base.clone();
        add_sections(&sections, &mut global, &mut global_given)?;
    }
    if !inv.only_sections.is_empty() {
        all.retain(|o| inv.only_sections.contains(&o.name));
    }
    if all.is_empty() {
        return Err(
            "no jobs defined: give a job file, or options and --name=JOB (see --help)".into(),
        );
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
struct Prepared<'a> {
    job: &'a Job,
    plan: IoPlan,
    targets: Vec<Vec<FileTarget>>,
}

/// fio's `filename` list: `:`-separated, `\:` for a colon in a name.
fn split_names(list: &str) -> Vec<String> {
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

fn is_block_device(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device())
}

/// Size of an existing file or block device.
fn existing_size(path: &Path) -> Option<u64> {
    use std::io::Seek;
    let meta = std::fs::metadata(path).ok()?;
    if meta.file_type().is_block_device() {
        let mut f = std::fs::File::open(path).ok()?;
        return f.seek(std::io::SeekFrom::End(0)).ok();
    }
    (meta.is_file() && meta.len() > 0).then_some(meta.len())
}

pub fn engine_name(o: &JobOptions) -> &'static str {
    o.ioengine.name()
}

/// The engine that will run: the one asked for, or the next that works, said on
/// stderr (fio would fail; a benchmark that still measures is more useful).
fn resolve_engine(wanted: EngineKind, depth: usize) -> EngineKind {
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

fn prepare(job: &Job, allow_device: bool) -> Result<Prepared<'_>, String> {
    let o = &job.opts;
    let name = &o.name;
    if o.time_based && o.runtime.is_none() {
        return Err(format!(
            "job '{name}': time_based needs a runtime (e.g. runtime=60)"
        ));
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
            return Err(format!("job '{name}': filename= names no file"));
        }
        for p in &paths {
            if is_block_device(p) && o.pattern.writes() && !allow_device {
                return Err(format!(
                    "job '{name}': {} is a block device and rw={} writes to it, destroying what it holds; \
                     pass --allow-device if that is really meant",
                    p.display(),
                    o.rw_text
                ));
            }
        }
        let nfiles = paths.len() as u64;
        let existing: Option<u64> = paths.iter().map(|p| existing_size(p)).sum();
        let total = match &o.size {
            Some(JobSize::Bytes(n)) => *n,
            Some(JobSize::Percent(p)) => {
                let whole = existing.ok_or_else(|| {
                    format!(
                        "job '{name}': size={p}% needs existing files to take a share of; give size= in bytes"
                    )
                })?;
                (whole as f64 * p / 100.0) as u64
            }
            None => match (o.filesize, existing) {
                (Some(fs), _) => fs * nfiles,
                (None, Some(n)) => n,
                (None, None) => {
                    return Err(format!(
                        "job '{name}': you need to specify size= ({} does not exist yet)",
                        paths[0].display()
                    ));
                }
            },
        };
        let file_size = o.filesize.unwrap_or(total / nfiles);
        if file_size < max_bs {
            return Err(format!(
                "job '{name}': each file would hold {file_size} bytes, less than one {max_bs}-byte block; \
                 raise size= or lower bs="
            ));
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

/// Lays out the files of a batch that are missing or short. Returns the
/// "Laying out IO file" lines fio prints.
fn lay_out(batch: &[&Prepared]) -> Result<String, Failure> {
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
                    return Err(Failure::Usage(format!(
                        "job '{}': directory {} does not exist: create it or change directory=",
                        p.job.opts.name,
                        parent.display()
                    )));
                }
                // Reads need data to read; pure write jobs only need the space.
                let with_data = p.plan.pattern.reads();
                files::extend(&t.path, t.size, with_data, 0x1a70u64)
                    .map_err(|e| Failure::Run(e.to_string()))?;
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

/// Direct I/O on a RAM-backed file system measures memory: say so on stderr.
fn warn_about_file_systems(batch: &[&Prepared]) {
    for p in batch {
        let Some(t) = p.targets.first().and_then(|t| t.first()) else {
            continue;
        };
        let dir = t.path.parent().filter(|d| !d.as_os_str().is_empty());
        if let Ok((_, magic)) = files::statfs(dir.unwrap_or(Path::new(".")))
            && files::ram_backed(magic)
        {
            eprintln!(
                "fio: note: job '{}' runs on {}, which keeps files in RAM: the figures are memory's, not a disk's",
                p.job.opts.name,
                files::fs_name(magic)
            );
        }
    }
}

/// fio's status line on a terminal: `Jobs: 2 (f=2): [r(2)][45.0%][eta 00m:06s]`.
struct Status {
    enabled: bool,
    jobs: usize,
    letter: char,
    planned: Option<Duration>,
    last: std::sync::Mutex<Instant>,
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
fn run_batch(
    batch: &[&Prepared],
    show_eta: bool,
) -> Result<Vec<(Vec<JobResult>, Duration)>, Failure> {
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
                        let tick = |d: Duration| {
                            if i == 0 {
                                status.tick(d)
                            }
                        };
                        let r = job::run_threads(&p.plan, &p.targets, &tick)?;
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
        .map(|r| r.map_err(|e| Failure::Run(e.to_string())))
        .collect()
}

/// `Sun Nov 29 21:41:37 2026`, local time, as fio prints it.
fn ctime(secs: i64) -> String {
    // SAFETY: localtime_r fills a struct we own from a valid time_t.
    let tm = unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        let t = secs as libc::time_t;
        libc::localtime_r(&t, &mut tm);
        tm
    };
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{} {} {:2} {:02}:{:02}:{:02} {}",
        DAYS[tm.tm_wday.clamp(0, 6) as usize],
        MONTHS[tm.tm_mon.clamp(0, 11) as usize],
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        tm.tm_year + 1900
    )
}

/// Writes `text` to `path` whole: into a temporary file beside it, then renamed,
/// so a failure never leaves half a report behind.
fn write_output(path: &Path, text: &str) -> Result<(), Failure> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let fail = |e: std::io::Error| Failure::Run(format!("--output {}: {e}", path.display()));
    let name = path
        .file_name()
        .map_or_else(|| "output".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{name}.hostbench-{}.tmp", std::process::id()));
    let result = std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(fail(e));
    }
    Ok(())
}

fn run(inv: &Invocation) -> Result<ExitCode, Failure> {
    let (jobs, global_options) = build_jobs(inv)?;
    let prepared: Vec<Prepared> = jobs
        .iter()
        .map(|j| prepare(j, inv.allow_device))
        .collect::<Result<_, _>>()?;
    if inv.parse_only {
        return Ok(ExitCode::SUCCESS);
    }
    let to_stdout = inv.output.is_none();
    let mut text = String::new();
    let emit = |s: &str, text: &mut String| {
        if to_stdout {
            print!("{s}");
            let _ = std::io::stdout().flush();
        } else {
            text.push_str(s);
        }
    };
    if inv.formats.normal {
        let mut header = String::new();
        for p in &prepared {
            header.push_str(&normal::job_header(&p.job.opts, p.job.groupid));
        }
        let threads: usize = prepared.iter().map(|p| p.targets.len()).sum();
        let kind = if jobs.iter().all(|j| j.opts.thread) {
            "thread"
        } else {
            "process"
        };
        header.push_str(&format!(
            "{FIO_VERSION}\nStarting {threads} {kind}{}\n",
            if threads == 1 {
                ""
            } else if kind == "process" {
                "es"
            } else {
                "s"
            }
        ));
        emit(&header, &mut text);
    }
    let show_eta = inv
        .show_eta
        .unwrap_or_else(|| std::io::stderr().is_terminal());
    let start_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let all_paths: Vec<PathBuf> = prepared
        .iter()
        .flat_map(|p| p.targets.iter().flatten().map(|t| t.path.clone()))
        .collect();
    let mut watches = None;
    let mut finished: Vec<(usize, Vec<JobResult>, Duration)> = Vec::new();
    let batches = prepared.last().map_or(0, |p| p.job.batch + 1);
    for b in 0..batches {
        if stop_requested() {
            break;
        }
        let batch: Vec<&Prepared> = prepared.iter().filter(|p| p.job.batch == b).collect();
        let layout = lay_out(&batch)?;
        if inv.formats.normal && !layout.is_empty() {
            emit(&layout, &mut text);
        }
        warn_about_file_systems(&batch);
        for p in &batch {
            if p.job.opts.invalidate && !p.plan.direct {
                p.targets
                    .iter()
                    .flatten()
                    .for_each(|t| files::drop_cache(&t.path));
            }
        }
        // Disk counters start with the first measured batch, after its layout.
        watches.get_or_insert_with(|| diskstats::watch(&all_paths));
        let results = run_batch(&batch, show_eta)?;
        for (p, (r, wall)) in batch.iter().zip(results) {
            let index = prepared
                .iter()
                .position(|q| std::ptr::eq(q.job, p.job))
                .expect("a prepared job");
            finished.push((index, r, wall));
        }
    }
    let interrupted = stop_requested();
    let disks: Vec<DiskUtil> = watches
        .unwrap_or_default()
        .iter()
        .filter_map(|w| w.finish())
        .collect();
    let summary = summarise(&prepared, &finished, disks, global_options, start_ms);
    let mut out = String::new();
    if inv.formats.json_plus {
        out.push_str(&json::render(&summary, true));
    } else if inv.formats.json {
        out.push_str(&json::render(&summary, false));
    }
    if inv.formats.terse {
        out.push_str(&terse::render(&summary));
    }
    if inv.formats.normal {
        out.push('\n');
        out.push_str(&normal::render(&summary));
    }
    emit(&out, &mut text);
    if let Some(path) = &inv.output {
        write_output(path, &text)?;
    }
    if interrupted {
        eprintln!("fio: terminating on signal 2 (the report covers what ran)");
        return Ok(ExitCode::from(130));
    }
    Ok(ExitCode::SUCCESS)
}

fn summarise<'a>(
    prepared: &'a [Prepared<'a>],
    finished: &[(usize, Vec<JobResult>, Duration)],
    disks: Vec<DiskUtil>,
    global_options: Vec<(String, String)>,
    timestamp_ms: u64,
) -> Summary<'a> {
    let mut reports: Vec<Report<'a>> = Vec::new();
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
            reports.push(Report::new(
                first_opts.name.clone(),
                g,
                first_opts,
                &threads,
                wall.as_secs_f64().round() as u64,
            ));
        } else {
            for (i, results, wall) in members {
                let opts = &prepared[*i].job.opts;
                for r in results {
                    indexes.push(reports.len());
                    reports.push(Report::new(
                        opts.name.clone(),
                        g,
                        opts,
                        &[r],
                        wall.as_secs_f64().round() as u64,
                    ));
                }
            }
        }
        groups.push((g, indexes));
    }
    Summary {
        reports,
        groups,
        disks,
        global_options,
        timestamp_ms,
        time_text: ctime((timestamp_ms / 1000) as i64),
        pid: std::process::id(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn options_before_the_first_name_are_global() {
        let inv = parse_args(&args(
            "--filename=/tmp/f --size=5G --rw=randread --bs 4k --name=rand_read_4k --iodepth=8",
        ))
        .unwrap()
        .unwrap();
        assert_eq!(inv.cli_global.len(), 4);
        assert_eq!(inv.cli_sections.len(), 1);
        let (jobs, globals) = build_jobs(&inv).unwrap();
        assert_eq!(jobs.len(), 1);
        assert_eq!(jobs[0].opts.iodepth, 8);
        assert_eq!(jobs[0].opts.bs[0].min(), 4096);
        assert_eq!(globals.len(), 4);
        assert_eq!(
            jobs[0].opts.given,
            [
                ("name".into(), "rand_read_4k".into()),
                ("iodepth".into(), "8".into())
            ]
        );
    }

    #[test]
    fn stonewall_and_new_group_split_batches_and_groups() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("j.fio");
        std::fs::write(
            &file,
            "[global]\nsize=1m\n[a]\n[b]\n[c]\nstonewall\n[d]\nnew_group\n",
        )
        .unwrap();
        let inv = parse_args(&[file.display().to_string()]).unwrap().unwrap();
        let (jobs, _) = build_jobs(&inv).unwrap();
        let layout: Vec<(usize, usize)> = jobs.iter().map(|j| (j.groupid, j.batch)).collect();
        assert_eq!(layout, [(0, 0), (0, 0), (1, 1), (2, 1)]);
    }

    #[test]
    fn bad_input_names_what_is_wrong() {
        let e = parse_args(&args("--rate_iops=100 --name=x")).err().unwrap();
        assert!(e.contains("'--rate_iops'"), "{e}");
        let e = parse_args(&args("--output-format=xml")).err().unwrap();
        assert!(e.contains("xml"), "{e}");
        let inv = parse_args(&args("--rw=sideways --name=x"))
            .unwrap()
            .unwrap();
        let e = build_jobs(&inv).err().unwrap();
        assert!(e.contains("sideways"), "{e}");
        let inv = parse_args(&args("--rw=read")).unwrap().unwrap();
        assert!(build_jobs(&inv).err().unwrap().contains("no jobs"));
    }

    #[test]
    fn filename_lists_split_on_unescaped_colons() {
        assert_eq!(split_names("a:b\\:c::d"), ["a", "b:c", "d"]);
    }

    #[test]
    fn ctime_looks_like_fios() {
        let t = ctime(0);
        assert_eq!(t.len(), 24, "{t}");
        assert!(t.ends_with("1970") || t.ends_with("1969"), "{t}");
    }
}

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
mod error;
mod execute;
mod jobfile;
mod json;
mod normal;
pub(crate) mod options;
mod plan;
mod stats;
mod terse;

use crate::measure::stop_requested;
use crate::workload::disk::files;
use crate::workload::disk::job::JobResult;
use diskstats::DiskUtil;
pub use error::{ArgError, FioError, PlanError, RunError};
use execute::{
    answered_in_submit, answered_note, lay_out, run_batch, summarise, warn_about_file_systems,
};
use jobfile::{Entry, Section};
use plan::{Prepared, build_jobs, prepare};
use stats::Report;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

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
pub(in crate::compat) struct Invocation {
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
Any other option is refused by name. See docs/compat-fio.md.
";

/// `--help`: the fixed part, with the job options listed from the option table.
fn help() -> String {
    let (head, tail) = HELP
        .split_once("Any other option")
        .expect("HELP names what is refused");
    format!(
        "{head}{}  (ioengine: io_uring, libaio, psync or sync)\nAny other option{tail}",
        options::help_list(88)
    )
}

pub fn main(args: &[String], record: &mut crate::compat::Record) -> ExitCode {
    match parse_and_run(args, record) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("fio: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

fn parse_and_run(
    args: &[String],
    record: &mut crate::compat::Record,
) -> Result<ExitCode, FioError> {
    let Some(inv) = parse_args(args)? else {
        // --help or --version, printed.
        return Ok(ExitCode::SUCCESS);
    };
    run(&inv, record)
}

fn parse_formats(v: &str) -> Result<Formats, ArgError> {
    let mut f = Formats::default();
    for part in v.split(',') {
        match part.trim() {
            "normal" => f.normal = true,
            "json" => f.json = true,
            "json+" => f.json_plus = true,
            "terse" => f.terse = true,
            other => {
                return Err(ArgError::Format {
                    format: other.into(),
                });
            }
        }
    }
    Ok(f)
}

/// `None` when the invocation only asked for help or the version.
pub(in crate::compat) fn parse_args(args: &[String]) -> Result<Option<Invocation>, ArgError> {
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
                return Err(ArgError::Stdin);
            }
            inv.job_files.push(PathBuf::from(arg));
            continue;
        };
        let (key, value) = match opt.split_once('=') {
            Some((k, v)) => (k.to_string(), Some(v.to_string())),
            None => (opt.to_string(), None),
        };
        // A value in the next argument (`--bs 4k`) for options that need one.
        let mut take_value = |value: Option<String>| -> Result<String, ArgError> {
            match value {
                Some(v) => Ok(v),
                None if i < args.len() => {
                    i += 1;
                    Ok(args[i - 1].clone())
                }
                None => Err(ArgError::NoValue {
                    option: key.clone(),
                }),
            }
        };
        match key.as_str() {
            "version" | "v" => {
                println!("{FIO_VERSION}");
                return Ok(None);
            }
            "help" | "h" => {
                print!("{}", help());
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
                        return Err(ArgError::Eta {
                            choice: other.into(),
                        });
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
                    return Err(ArgError::Unknown { option: key });
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

/// The command line parsed and its jobs built (every option value parsed), for the
/// parsers' fuzz tests (src/fuzzing.rs): nothing is opened or run. Job files named on
/// the line are dropped, not read: reading them is I/O, and their text has its own
/// fuzzer (`parse_job_text`).
pub(crate) fn parse_jobs(args: &[String]) -> Result<(), FioError> {
    let Some(mut inv) = parse_args(args)? else {
        return Ok(());
    };
    inv.job_files.clear();
    build_jobs(&inv).map(drop).map_err(FioError::from)
}

/// A job file's text parsed and its jobs built, as `parse_jobs` does for a command
/// line; `path` names it and anchors its includes, which are read (the fuzzer keeps
/// them to paths that do not exist).
pub(crate) fn parse_job_text(text: &str, path: &Path) {
    let Ok(sections) = jobfile::parse(text, path) else {
        return;
    };
    let inv = Invocation {
        cli_sections: sections,
        ..Invocation::default()
    };
    let _ = build_jobs(&inv);
}

/// `Sun Nov 29 21:41:37 2026`, local time, as fio prints it (ctime(3)'s layout).
fn ctime(secs: i64) -> String {
    crate::host::local_time(secs, "%a %b %e %H:%M:%S %Y")
}

/// Writes `text` to `path` whole (see `fsutil::write_atomically`), so a failure never
/// leaves half a report behind.
fn write_output(path: &Path, text: &str) -> Result<(), RunError> {
    crate::fsutil::write_atomically(path, text.as_bytes()).map_err(|source| RunError::Output {
        path: path.to_path_buf(),
        source,
    })
}

/// A soak slice runs every job time-based for the slice's length, whatever its
/// `runtime`, `time_based` and sizes say (its ramp and start delay still apply).
fn apply_slice(jobs: &mut [plan::Job], slice: Option<Duration>) {
    let Some(slice) = slice else { return };
    for j in jobs {
        j.opts.runtime = Some(slice);
        j.opts.time_based = true;
    }
}

/// One line on stderr for the whole run when the device answered requests before
/// their submission call returned (the figures stay fio's; see `answered_note`).
fn note_answered_in_submit(summary: &Summary) {
    let found: Vec<(u64, u64, &str)> = summary
        .reports
        .iter()
        .filter_map(answered_in_submit)
        .collect();
    if found.is_empty() {
        return;
    }
    let answered = found.iter().map(|f| f.0).sum();
    let ops = found.iter().map(|f| f.1).sum();
    let mut calls: Vec<&str> = found.iter().map(|f| f.2).collect();
    calls.sort_unstable();
    calls.dedup();
    eprintln!(
        "fio: note: {}",
        answered_note(answered, ops, &calls.join(" or "))
    );
}

fn run(inv: &Invocation, record: &mut crate::compat::Record) -> Result<ExitCode, FioError> {
    let (mut jobs, global_options) = build_jobs(inv)?;
    apply_slice(&mut jobs, record.slice);
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
    let (summary, outcomes) = summarise(&prepared, &finished, disks, global_options, start_ms);
    note_answered_in_submit(&summary);
    for o in outcomes {
        record.keep(o);
    }
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
        assert_eq!(
            e,
            ArgError::Unknown {
                option: "rate_iops".into()
            }
        );
        assert!(e.to_string().contains("'--rate_iops'"), "{e}");
        let e = parse_args(&args("--output-format=xml")).err().unwrap();
        assert_eq!(
            e.to_string(),
            "--output-format: 'xml' is not a format: use normal, json, json+ or terse"
        );
        let e = parse_args(&args("--name=x --bs")).err().unwrap();
        assert_eq!(e.to_string(), "--bs needs a value");
        let inv = parse_args(&args("--rw=sideways --name=x"))
            .unwrap()
            .unwrap();
        let e = build_jobs(&inv).err().unwrap();
        assert_eq!(
            e.to_string(),
            "command line: rw=sideways: 'sideways' is not an I/O pattern: use read, write, \
             randread, randwrite, rw or randrw"
        );
        let PlanError::Option { origin, error } = e else {
            panic!("{e:?}")
        };
        assert_eq!(origin, "command line");
        assert!(matches!(
            error,
            options::OptionError::Invalid {
                problem: options::ValueError::Pattern { .. },
                ..
            }
        ));
        let inv = parse_args(&args("--rw=read")).unwrap().unwrap();
        assert!(matches!(build_jobs(&inv), Err(PlanError::NoJobs)));
    }

    #[test]
    fn bad_input_exits_2_and_run_failures_1() {
        let usage = parse_jobs(&args("--bs=0 --name=x")).unwrap_err();
        assert_eq!(usage.exit_code(), 2, "{usage}");
        assert_eq!(FioError::from(ArgError::Stdin).exit_code(), 2);
        let run = FioError::from(RunError::Output {
            path: "/x/y".into(),
            source: std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        });
        assert_eq!(run.exit_code(), 1);
        assert_eq!(run.to_string(), "--output /x/y: permission denied");
        assert!(std::error::Error::source(&run).is_some());
    }

    #[test]
    fn filename_lists_split_on_unescaped_colons() {
        assert_eq!(plan::split_names("a:b\\:c::d"), ["a", "b:c", "d"]);
    }

    #[test]
    fn ctime_looks_like_fios() {
        let t = ctime(0);
        assert_eq!(t.len(), 24, "{t}");
        assert!(t.ends_with("1970") || t.ends_with("1969"), "{t}");
        for secs in [1_795_988_497, 1_796_600_000] {
            let want = crate::host::date_command(secs, None, "%a %b %e %H:%M:%S %Y");
            assert_eq!(ctime(secs), want);
        }
    }
}

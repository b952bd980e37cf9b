use super::save::SaveArgs;
use super::{CliError, finished, parse_duration, parse_size, parse_thread_count, print_doc};
use crate::model::Outcome;
use crate::progress::{Expect, Progress};
use crate::report::{Document, Format, Outcomes, SummaryTable};
use crate::workload::disk::engine::EngineKind;
use crate::workload::disk::job::{JobSpec, Pattern};
use crate::workload::disk::{self, DiskError, DiskSpec, DiskTest, STANDARD};
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Debug, Args)]
pub struct DiskArgs {
    /// Directory to test: hostbench makes a directory of its own under it and removes it afterwards.
    #[arg(long, default_value = ".", value_name = "DIR")]
    dir: PathBuf,
    /// Tests of the standard set to run (default: all): randread, randwrite, randread-qd1,
    /// seqread, seqwrite, mixed, fsync.
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    tests: Vec<String>,
    /// A custom test instead of the standard set.
    #[arg(long, value_enum)]
    pattern: Option<PatternArg>,
    /// Block size (with --pattern, or overriding the chosen tests').
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    bs: Option<u64>,
    /// Requests in flight per job.
    #[arg(long, value_name = "N")]
    iodepth: Option<usize>,
    /// Threads (fio's jobs): N or `all`, each with its own file descriptor and queue.
    #[arg(long, value_name = "N", value_parser = parse_thread_count)]
    threads: Option<usize>,
    /// Share of reads in mixed tests, in percent.
    #[arg(long, value_name = "PCT")]
    rwmix: Option<u32>,
    /// Size of the test file; make it larger than any cache in front of the disk.
    #[arg(long, default_value = "1G", value_name = "SIZE", value_parser = parse_size)]
    size: u64,
    /// Measured time per test (fio's runtime).
    #[arg(long, default_value = "10s", value_name = "DURATION", value_parser = parse_duration)]
    time: Duration,
    /// Warm-up per test, not counted (fio's ramp_time).
    #[arg(long, default_value = "2s", value_name = "DURATION", value_parser = parse_duration)]
    warmup: Duration,
    /// I/O engine (default: io_uring, else libaio, else psync).
    #[arg(long, value_enum)]
    engine: Option<EngineArg>,
    /// Go through the page cache instead of direct I/O.
    #[arg(long)]
    buffered: bool,
    /// Print the results as one JSON document (schema: docs/json.md).
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    expect: super::ExpectArgs,
    #[command(flatten)]
    save: SaveArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum PatternArg {
    Read,
    Write,
    Randread,
    Randwrite,
    Randrw,
    Readwrite,
    Fsync,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum EngineArg {
    #[value(name = "io_uring")]
    IoUring,
    Libaio,
    Psync,
    Sync,
}

impl DiskArgs {
    fn spec(&self) -> Result<DiskSpec, CliError> {
        let engine = self.engine.map(|e| match e {
            EngineArg::IoUring => EngineKind::IoUring,
            EngineArg::Libaio => EngineKind::Libaio,
            EngineArg::Psync => EngineKind::Psync,
            EngineArg::Sync => EngineKind::Sync,
        });
        let direct = !self.buffered;
        let mut tests: Vec<DiskTest> = match self.pattern {
            Some(p) => {
                if !self.tests.is_empty() {
                    return Err(CliError::Usage(
                        "--pattern and --tests exclude each other: give one".into(),
                    ));
                }
                let pattern = match p {
                    PatternArg::Read => Pattern::Read,
                    PatternArg::Write => Pattern::Write,
                    PatternArg::Randread => Pattern::RandRead,
                    PatternArg::Randwrite => Pattern::RandWrite,
                    PatternArg::Randrw => Pattern::RandRw,
                    PatternArg::Readwrite => Pattern::ReadWrite,
                    PatternArg::Fsync => Pattern::Fsync,
                };
                vec![DiskTest {
                    name: format!("{p:?}").to_lowercase(),
                    job: JobSpec {
                        pattern,
                        block_size: 4096,
                        iodepth: 32,
                        jobs: 1,
                        read_pct: 70,
                        runtime: self.time,
                        ramp: self.warmup,
                        direct,
                        engine,
                        seed: 0x5eed,
                    },
                }]
            }
            None => {
                let names: Vec<&str> = if self.tests.is_empty() {
                    STANDARD.to_vec()
                } else {
                    self.tests.iter().map(String::as_str).collect()
                };
                names
                    .iter()
                    .map(|n| {
                        disk::standard_test(n, self.time, self.warmup, engine, direct).ok_or_else(
                            || {
                                CliError::Usage(format!(
                                    "--tests: unknown test '{n}': use {}",
                                    STANDARD.join(", ")
                                ))
                            },
                        )
                    })
                    .collect::<Result<_, _>>()?
            }
        };
        for t in &mut tests {
            if let Some(bs) = self.bs {
                t.job.block_size = usize::try_from(bs).unwrap_or(usize::MAX);
            }
            if let Some(d) = self.iodepth {
                t.job.iodepth = d;
            }
            if let Some(j) = self.threads {
                t.job.jobs = j;
            }
            if let Some(r) = self.rwmix {
                t.job.read_pct = r;
            }
        }
        Ok(DiskSpec {
            dir: self.dir.clone(),
            size: self.size,
            tests,
        })
    }
}

pub fn execute(args: DiskArgs) -> Result<ExitCode, CliError> {
    let spec = args.spec()?;
    spec.validate()?;
    let promise = args.expect.promise()?;
    args.save.check()?;
    let total: Duration = spec.tests.iter().map(|t| t.job.runtime + t.job.ramp).sum();
    // The bar adds up the tests: each test's progress starts again from zero.
    let progress = Progress::new("disk", Expect::Time(total));
    let outcomes = match disk::run(&spec, &progress) {
        Ok(o) => o,
        Err(DiskError::Spec(e)) => return Err(CliError::Spec(e)),
        Err(e) if e.is_usage() => return Err(CliError::Usage(e.to_string())),
        Err(e) => {
            progress.finish();
            eprintln!("hostbench: error: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    progress.finish();
    let interrupted = crate::measure::stop_requested() || outcomes.iter().any(|o| o.interrupted);
    let outcomes = drop_unmeasured(&spec, outcomes);
    if outcomes.is_empty() {
        return Ok(finished(interrupted));
    }
    let expectation = promise
        .as_ref()
        .map(|p| args.expect.expectation(p, &outcomes));
    let below_promise = expectation.as_ref().is_some_and(|e| !e.pass());
    let doc = Document::Outcomes(Outcomes {
        summary: Some(SummaryTable::disk(&outcomes)),
        expectation,
        ..Outcomes::new(&outcomes)
    });
    print_doc(Format::text_or_json(args.json), &doc)?;
    args.save.save("disk", None, &outcomes)?;
    if below_promise && !interrupted {
        return Ok(ExitCode::from(1));
    }
    Ok(finished(interrupted))
}

/// The tests stopped before their measured part (Ctrl-C during the warm-up) gave zeros
/// that mean nothing: they are said so on stderr, and neither shown nor saved.
fn drop_unmeasured(spec: &DiskSpec, outcomes: Vec<Outcome>) -> Vec<Outcome> {
    spec.tests
        .iter()
        .zip(outcomes)
        .filter_map(|(test, o)| {
            if !o.measured_nothing() {
                return Some(o);
            }
            eprintln!(
                "hostbench: {} was stopped during its warm-up (--warmup {}): nothing was measured, so nothing is shown or saved",
                test.name,
                crate::units::format_duration(test.job.ramp)
            );
            None
        })
        .collect()
}

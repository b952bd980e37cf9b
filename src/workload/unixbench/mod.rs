//! A UnixBench-style system index: UnixBench 5.1.3's twelve index tests, written from
//! their descriptions (reference §5), run the way its `Run` script runs them — each
//! copy a separate process with its own alarm, N copies started back to back, passes
//! separated by `sync; sleep`, the worst third of the passes dropped — and indexed
//! against the same baselines. The scores are comparable with UnixBench's in method,
//! not identical: the compiled tests are rustc's, not gcc's (see `environment`).

pub mod alarm;
pub mod catalogue;
pub mod dhrystone;
pub mod environment;
pub mod fstime;
pub mod index;
pub mod kernel;
pub mod outcome;
pub mod program;
pub mod shell;
pub mod whetstone;

use crate::measure::cputime::CpuTime;
use crate::workload::SpecError;
use crate::workload::observe::{Observer, Progress, Snapshot};
use catalogue::{Repeat, Test};
use environment::Environment;
use index::{CopyReport, Index, Pass, Score};
use serde::Serialize;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime};
use thiserror::Error;

/// The copies UnixBench's `Run` is capped at for its system tests (5.1.3).
pub const MAX_COPIES: usize = 16;

#[derive(Debug, Clone, Serialize)]
pub struct UnixbenchSpec {
    /// UnixBench test names, in the order to run.
    pub tests: Vec<&'static str>,
    /// Copy counts; the whole list of tests runs once per entry.
    pub copies: Vec<usize>,
    /// `-i N`: passes of long tests (short ones get `max(1, (N+1)/3)`).
    pub iterations: Option<u32>,
    /// Shorter runs (a tenth of each duration, 3 and 1 passes, no settling sleeps):
    /// not comparable with full runs.
    pub quick: bool,
    /// Seconds every test runs for, overriding the durations (quick mode only).
    pub seconds: Option<f64>,
    /// Where the working directory (scripts, file-copy files) goes.
    pub dir: PathBuf,
}

impl UnixbenchSpec {
    pub fn validate(&self) -> Result<(), SpecError> {
        if self.tests.is_empty() {
            return Err(SpecError::new(
                "tests",
                "no test to run",
                "name at least one test",
            ));
        }
        if let Some(c) = self.copies.iter().find(|&&c| c == 0 || c > 4096) {
            return Err(SpecError::new(
                format!("copies={c}"),
                "copy count out of range",
                "use 1 to 4096",
            ));
        }
        if self.iterations == Some(0) {
            return Err(SpecError::new(
                "iterations=0",
                "no pass would run",
                "use -i 1 or more",
            ));
        }
        if let Some(s) = self.seconds {
            if !self.quick {
                return Err(SpecError::new(
                    "seconds",
                    "custom durations only exist in quick mode",
                    "add --quick, or drop --time to run UnixBench's durations",
                ));
            }
            if !(0.05..=3600.0).contains(&s) {
                return Err(SpecError::new(
                    format!("seconds={s}"),
                    "duration out of range",
                    "use 0.05 to 3600",
                ));
            }
        }
        if !self.dir.is_dir() {
            return Err(SpecError::new(
                format!("dir={}", self.dir.display()),
                "not a directory",
                "give an existing directory for the working files",
            ));
        }
        Ok(())
    }

    /// How many passes `test` gets.
    pub fn passes(&self, test: &Test) -> u32 {
        let long = self.iterations.unwrap_or(if self.quick { 3 } else { 10 });
        match test.repeat {
            Repeat::Long => long,
            Repeat::Short if self.iterations.is_none() && !self.quick => 3,
            Repeat::Short => ((long + 1) / 3).max(1),
        }
    }

    /// How long `test`'s program runs, in seconds.
    pub fn seconds(&self, test: &Test) -> f64 {
        match (self.seconds, self.quick) {
            (Some(s), _) => s,
            (None, true) => test.seconds as f64 / 10.0,
            (None, false) => test.seconds as f64,
        }
    }
}

/// One test at one copy count.
#[derive(Debug, Clone, Serialize)]
pub struct TestResult {
    pub test: Test,
    pub passes: Vec<Pass>,
    /// `None` when no pass produced a usable count (interrupted, or a duration too
    /// short for one loop); such a test is left out of the index.
    pub score: Option<Score>,
}

/// All tests at one copy count: one block of UnixBench's report.
#[derive(Debug, Clone, Serialize)]
pub struct CopiesResult {
    pub copies: usize,
    #[serde(with = "unix_seconds")]
    pub started: SystemTime,
    /// `started` in RFC 3339, UTC (the outcome's `started_at`).
    #[serde(skip)]
    pub started_at: String,
    #[serde(with = "unix_seconds")]
    pub ended: SystemTime,
    pub tests: Vec<TestResult>,
    /// Tests skipped because UnixBench 5.1.3 runs system tests with at most 16 copies.
    pub skipped: Vec<&'static str>,
    pub index: Option<Index>,
    /// CPU time of hostbench and of every program it ran for this copy count (the
    /// copies are child processes, so their own rusage is what counts).
    pub cpu: CpuTime,
}

mod unix_seconds {
    use std::time::SystemTime;
    pub fn serialize<S: serde::Serializer>(t: &SystemTime, s: S) -> Result<S::Ok, S::Error> {
        let secs = t
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        s.serialize_f64(secs)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct SuiteResult {
    pub runs: Vec<CopiesResult>,
    /// Quick mode: not comparable with full runs.
    pub quick: bool,
    pub environment: Environment,
    pub interrupted: bool,
}

#[derive(Debug, Error)]
pub enum RunError {
    #[error("{0}")]
    Spec(#[from] SpecError),
    #[error("{test}: {source}")]
    Test {
        test: &'static str,
        source: PassError,
    },
    #[error("working directory {dir}: {source}")]
    Dir {
        dir: PathBuf,
        source: std::io::Error,
    },
}

/// Why a pass of a test produced no result.
#[derive(Debug, Error)]
pub enum PassError {
    #[error("cannot find hostbench's own binary: {0}")]
    OwnBinary(#[source] std::io::Error),
    #[error("cannot start {}: {source}", .exe.display())]
    Start {
        exe: PathBuf,
        source: std::io::Error,
    },
    /// Waiting for a program that was started failed.
    #[error("{0}")]
    Wait(#[source] std::io::Error),
    /// The program printed nothing and gave no result lines.
    #[error("program ended without a result ({status})")]
    NoResult { status: std::process::ExitStatus },
    /// The program gave no result lines; this is what it printed instead.
    #[error("{output}")]
    Failed { output: String },
    #[error("a copy's thread panicked")]
    Panicked,
}

/// What the suite tells its observer as it goes (`Snapshot::Suite`); UnixBench's
/// `Run` prints `1 x Dhrystone 2 using register variables  1 2 3 …` from these.
#[derive(Debug)]
pub enum SuiteEvent<'a> {
    /// A test begins at a copy count, with this many passes to run.
    TestStarted {
        test: &'a Test,
        copies: usize,
        passes: u32,
    },
    /// Pass `pass` (from 1) of a test begins.
    PassStarted { test: &'a Test, pass: u32 },
    /// A test's passes are done (or it was stopped).
    TestFinished(&'a TestResult),
}

/// The working directory: the shell test's scripts and input, and `tmp/` for the file
/// tests. Removed when dropped.
struct WorkDir {
    root: PathBuf,
}

impl WorkDir {
    fn create(parent: &Path) -> Result<WorkDir, RunError> {
        // Absolute: the programs run with the directory as their working directory.
        let parent = std::path::absolute(parent).map_err(|source| RunError::Dir {
            dir: parent.into(),
            source,
        })?;
        let root = parent.join(format!("hostbench-unixbench-{}", std::process::id()));
        let made = std::fs::create_dir(&root)
            .and_then(|_| std::fs::create_dir(root.join("tmp")))
            .and_then(|_| shell::prepare(&root));
        let dir = WorkDir { root };
        made.map_err(|source| RunError::Dir {
            dir: dir.root.clone(),
            source,
        })?;
        Ok(dir)
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// Runs the tests once per copy count. The observer gets each test's and pass's
/// start and each test's end as `Snapshot::Suite`, progress (passes finished, the
/// copy count's position as the phase) about ten times a second, and is asked
/// whether to stop between passes.
pub fn run(spec: &UnixbenchSpec, observer: &dyn Observer) -> Result<SuiteResult, RunError> {
    spec.validate()?;
    let suite = Suite {
        spec,
        observer,
        work: WorkDir::create(&spec.dir)?,
        clock: Instant::now(),
        passes: AtomicU64::new(0),
        phase: AtomicUsize::new(0),
        over: AtomicBool::new(false),
    };
    std::thread::scope(|scope| {
        scope.spawn(|| suite.report_progress());
        let result = suite.run();
        suite.over.store(true, Ordering::Relaxed);
        result
    })
}

/// One run of the suite.
struct Suite<'a> {
    spec: &'a UnixbenchSpec,
    observer: &'a dyn Observer,
    work: WorkDir,
    clock: Instant,
    /// Passes finished so far, over all copy counts.
    passes: AtomicU64,
    /// Which copy count is running (its index in the spec).
    phase: AtomicUsize,
    over: AtomicBool,
}

impl Suite<'_> {
    fn run(&self) -> Result<SuiteResult, RunError> {
        let tests: Vec<Test> = self
            .spec
            .tests
            .iter()
            .filter_map(|n| catalogue::by_name(n))
            .collect();
        let mut runs = Vec::new();
        let mut interrupted = false;
        for (phase, &copies) in self.spec.copies.iter().enumerate() {
            self.phase.store(phase, Ordering::Relaxed);
            let (run, stopped) = self.copies_run(&tests, copies)?;
            runs.push(run);
            interrupted |= stopped;
            if interrupted {
                break;
            }
        }
        Ok(SuiteResult {
            runs,
            quick: self.spec.quick,
            environment: Environment::detect(),
            interrupted,
        })
    }

    /// Every test at one copy count; true when stopped.
    fn copies_run(&self, tests: &[Test], copies: usize) -> Result<(CopiesResult, bool), RunError> {
        let started = SystemTime::now();
        let started_at = crate::host::now_rfc3339();
        let cpu_before = CpuTime::with_children_now();
        let mut results = Vec::new();
        let mut skipped = Vec::new();
        let mut interrupted = false;
        for test in tests {
            if copies > MAX_COPIES {
                skipped.push(test.name);
                continue;
            }
            let result = self.run_test(test, copies)?;
            self.observer
                .snapshot(&Snapshot::Suite(&SuiteEvent::TestFinished(&result)));
            interrupted |= self.observer.stop_requested();
            results.push(result);
            if interrupted {
                break;
            }
        }
        let scores: Vec<(Test, f64)> = sorted(&results)
            .iter()
            .filter_map(|r| Some((r.test, r.score.as_ref()?.value)))
            .collect();
        let run = CopiesResult {
            copies,
            started,
            started_at,
            ended: SystemTime::now(),
            index: index::index(&scores),
            tests: results,
            skipped,
            cpu: CpuTime::with_children_now().since(&cpu_before),
        };
        Ok((run, interrupted))
    }

    fn run_test(&self, test: &Test, copies: usize) -> Result<TestResult, RunError> {
        let spec = self.spec;
        let passes = spec.passes(test);
        self.observer
            .snapshot(&Snapshot::Suite(&SuiteEvent::TestStarted {
                test,
                copies,
                passes,
            }));
        let invocation = program::Invocation {
            test: test.name,
            seconds: spec.seconds(test),
            quick: spec.quick,
            dir: self.work.root.join("tmp"),
        };
        let mut done = Vec::new();
        for pass in 1..=passes {
            if self.observer.stop_requested() {
                break;
            }
            if !spec.quick {
                settle(self.observer);
            }
            self.observer
                .snapshot(&Snapshot::Suite(&SuiteEvent::PassStarted { test, pass }));
            let outcome = run_pass(&invocation, copies, &self.work.root);
            self.passes.fetch_add(1, Ordering::Relaxed);
            match outcome {
                Ok(reports) => done.extend(Pass::from_copies(&reports)),
                Err(_) if self.observer.stop_requested() => break,
                Err(source) => {
                    return Err(RunError::Test {
                        test: test.name,
                        source,
                    });
                }
            }
        }
        Ok(TestResult {
            test: *test,
            score: index::combine(&done),
            passes: done,
        })
    }

    /// Progress about ten times a second until the suite is over (its programs run
    /// as child processes, so the clock is what moves).
    fn report_progress(&self) {
        while !self.over.load(Ordering::Relaxed) {
            self.observer.progress(&Progress {
                elapsed: self.clock.elapsed(),
                done: self.passes.load(Ordering::Relaxed),
                phase: self.phase.load(Ordering::Relaxed),
            });
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// Results in the report's order (by label).
pub fn sorted(results: &[TestResult]) -> Vec<&TestResult> {
    let mut v: Vec<&TestResult> = results.iter().collect();
    v.sort_by(|a, b| index::report_order(&a.test, &b.test));
    v
}

/// UnixBench's "attempt to flush buffers" before every pass: `sync; sleep 1; sync; sleep 2`.
fn settle(observer: &dyn Observer) {
    for pause in [1, 2] {
        // SAFETY: sync(2) takes no arguments.
        unsafe { libc::sync() };
        let until = Instant::now() + Duration::from_secs(pause);
        while Instant::now() < until && !observer.stop_requested() {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Starts `copies` programs back to back, each timed from just before it starts to
/// the end of its output (as `Run` times the `sh -c` child), and collects their
/// result lines.
fn run_pass(
    invocation: &program::Invocation,
    copies: usize,
    cwd: &Path,
) -> Result<Vec<CopyReport>, PassError> {
    let exe = std::env::current_exe().map_err(PassError::OwnBinary)?;
    let (exe, args) = invocation.command(&exe);
    let handles: Vec<_> = (0..copies)
        .map(|_| {
            let mut command = Command::new(&exe);
            command
                .args(&args)
                .current_dir(cwd)
                // UnixBench forces this locale; without it installed, C is used.
                .env("LANG", "en_US.utf8")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped());
            let exe = exe.clone();
            std::thread::spawn(move || -> Result<CopyReport, PassError> {
                let start = Instant::now();
                let mut child = command
                    .spawn()
                    .map_err(|source| PassError::Start { exe, source })?;
                let mut output = String::new();
                if let Some(mut stderr) = child.stderr.take() {
                    let _ = stderr.read_to_string(&mut output);
                }
                let elapsed = start.elapsed().as_secs_f64();
                let status = child.wait().map_err(PassError::Wait)?;
                parse_report(&output, elapsed).ok_or_else(|| {
                    let text = output.trim();
                    if text.is_empty() {
                        PassError::NoResult { status }
                    } else {
                        PassError::Failed {
                            output: text.to_string(),
                        }
                    }
                })
            })
        })
        .collect();
    let mut reports = Vec::new();
    for h in handles {
        reports.push(h.join().map_err(|_| PassError::Panicked)??);
    }
    Ok(reports)
}

/// Reads a program's `COUNT|…` and `TIME|…` lines; when a key repeats the last wins.
pub fn parse_report(output: &str, elapsed: f64) -> Option<CopyReport> {
    let mut count = None;
    let mut time = None;
    for line in output.lines() {
        let fields: Vec<&str> = line.trim().split('|').collect();
        match fields.as_slice() {
            ["COUNT", value, timebase, unit] => {
                count = Some((
                    value.parse::<f64>().ok()?,
                    timebase.parse::<f64>().ok()?,
                    unit.to_string(),
                ));
            }
            ["TIME", seconds] => time = seconds.parse::<f64>().ok(),
            _ => {}
        }
    }
    let (count, timebase, unit) = count?;
    Some(CopyReport {
        count,
        timebase,
        unit,
        time,
        elapsed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(quick: bool, iterations: Option<u32>) -> UnixbenchSpec {
        UnixbenchSpec {
            tests: vec!["dhry2reg"],
            copies: vec![1],
            iterations,
            quick,
            seconds: None,
            dir: std::env::temp_dir(),
        }
    }

    #[test]
    fn passes_follow_run() {
        let long = catalogue::by_name("pipe").unwrap();
        let short = catalogue::by_name("execl").unwrap();
        assert_eq!(
            (
                spec(false, None).passes(&long),
                spec(false, None).passes(&short)
            ),
            (10, 3)
        );
        assert_eq!(
            (
                spec(false, Some(1)).passes(&long),
                spec(false, Some(1)).passes(&short)
            ),
            (1, 1)
        );
        assert_eq!(
            (
                spec(false, Some(5)).passes(&long),
                spec(false, Some(5)).passes(&short)
            ),
            (5, 2)
        );
        assert_eq!(
            (
                spec(true, None).passes(&long),
                spec(true, None).passes(&short)
            ),
            (3, 1)
        );
        assert_eq!(spec(true, None).seconds(&short), 3.0);
    }

    #[test]
    fn report_lines_last_wins() {
        let r = parse_report(
            "noise\nCOUNT|10|0|KBps\nTIME|2.0\nCOUNT|500|0|KBps\nTIME|30.0\n",
            31.5,
        )
        .unwrap();
        assert_eq!(
            (r.count, r.timebase, r.unit.as_str(), r.time, r.elapsed),
            (500.0, 0.0, "KBps", Some(30.0), 31.5)
        );
        assert!(parse_report("Exec failed", 1.0).is_none());
    }

    #[test]
    fn seconds_need_quick() {
        let mut s = spec(false, None);
        s.seconds = Some(1.0);
        assert!(s.validate().is_err());
        s.quick = true;
        assert!(s.validate().is_ok());
    }
}

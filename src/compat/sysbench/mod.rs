//! The `sysbench` personality: sysbench 1.0.20's command lines (`cpu`, `memory`,
//! `threads`, `mutex`), its messages, and its report layout, over hostbench's own
//! workloads. Reached as `hostbench sysbench ...` or through a `sysbench` symlink.
//!
//! Deliberate differences, documented in docs/compat-sysbench.md: the banner names
//! hostbench; `--rate`, `--report-checkpoints`, `--forced-shutdown`, `--debug` and
//! `--config-file` are refused with a message instead of half-working; Ctrl-C prints
//! the partial report (sysbench dies without one).

mod fileio;
mod help;
pub mod options;
pub mod report;

use crate::measure::histogram::Layout;
use crate::model::Outcome;
use crate::workload::cpu::{self, CpuSpec};
use crate::workload::memory::block::{self, Access, BlockSpec, Oper, Scope};
use crate::workload::runner::RunOptions;
use crate::workload::sched::{self, MutexSpec, ThreadsSpec};
use crate::workload::{MAX_THREADS, SpecError};
use options::{CommandLine, Kind, parse_bool, parse_int, parse_size};
use report::IntervalPrinter;
use std::process::ExitCode;
use std::time::Duration;

/// A message and where it goes; every failure exits 1, as sysbench's do.
pub(super) enum Fail {
    /// Printed on stdout (sysbench's FATAL messages).
    Stdout(String),
    /// Printed on stderr.
    Stderr(String),
}

/// Output that follows the verbosity rule: notices (level 3) print only at >= 3.
pub(super) struct Log {
    verbosity: i64,
}

impl Log {
    fn notice(&self, text: &str) {
        if self.verbosity >= 3 {
            print!("{text}");
        }
    }
    fn info(&self, text: &str) {
        if self.verbosity >= 4 {
            print!("{text}");
        }
    }
    fn debug(&self, text: &str) {
        if self.verbosity >= 5 {
            print!("{text}");
        }
    }
}

pub fn main(args: &[String], record: &mut crate::compat::Record) -> ExitCode {
    match run(args, record) {
        Ok(code) => code,
        Err(Fail::Stdout(msg)) => {
            print!("{msg}");
            ExitCode::from(1)
        }
        Err(Fail::Stderr(msg)) => {
            eprint!("{msg}");
            ExitCode::from(1)
        }
    }
}

/// General options after sysbench's checks and its deprecated aliases.
pub(super) struct General {
    threads: usize,
    time: i64,
    events: i64,
    report_interval: i64,
    percentile: u32,
    histogram: bool,
    verbosity: i64,
    rand_seed: i64,
    validate: bool,
}

pub(super) fn int_option(line: &CommandLine, name: &str, default: i64) -> Result<i64, Fail> {
    match line.text(name) {
        None => Ok(default),
        Some(v) => parse_int(v).ok_or_else(|| {
            Fail::Stderr(format!(
                "Invalid value for the '{}' option: '{v}'\n",
                name.replace('-', "_")
            ))
        }),
    }
}

fn bool_option(line: &CommandLine, name: &str) -> Result<bool, Fail> {
    match line.options.get(name) {
        None => Ok(false),
        Some(v) => parse_bool(v.as_deref()).ok_or_else(|| invalid_option(line, name)),
    }
}

fn invalid_option(line: &CommandLine, name: &str) -> Fail {
    let raw = line
        .raw
        .iter()
        .rev()
        .find(|(n, _)| n == name)
        .map_or(name.to_string(), |(_, r)| r.clone());
    Fail::Stderr(format!("invalid option: {raw}\n"))
}

fn run(args: &[String], record: &mut crate::compat::Record) -> Result<ExitCode, Fail> {
    let line = CommandLine::parse(args);
    let via_test_option = line.text("test").map(str::to_string);
    if via_test_option.is_some() {
        eprintln!(
            "WARNING: the --test option is deprecated. You can pass a script name or path on the command line without any options."
        );
    }
    let max_positionals = if via_test_option.is_some() { 1 } else { 2 };
    if let Some(extra) = line.positionals.get(max_positionals) {
        return Err(Fail::Stderr(format!(
            "Unrecognized command line argument: {extra}\n"
        )));
    }
    // Booleans of the general table are checked as sysbench does, before anything runs.
    if line.given("help") && bool_option(&line, "help")? {
        print!("{}", help::general());
        return Ok(ExitCode::SUCCESS);
    }
    if line.given("version") && bool_option(&line, "version")? {
        println!("sysbench {}", report::VERSION);
        return Ok(ExitCode::SUCCESS);
    }
    let mut general = general_options(&line)?;
    if let Some(slice) = record.slice {
        // A soak slice: the slice's length replaces --time (whole seconds, as
        // sysbench counts them).
        general.time = slice.as_secs_f64().round().max(1.0) as i64;
    }
    let log = Log {
        verbosity: general.verbosity,
    };
    log.notice(&report::banner());

    let (test, command) = match &via_test_option {
        Some(t) => (Some(t.clone()), line.positionals.first().cloned()),
        None => (
            line.positionals.first().cloned(),
            line.positionals.get(1).cloned(),
        ),
    };
    let Some(test) = test else {
        // sysbench would read a Lua script from standard input; hostbench runs none.
        return Ok(ExitCode::SUCCESS);
    };
    let Some(test_defs) = options::test_options(&test) else {
        return Err(Fail::Stdout(format!(
            "FATAL: Cannot find benchmark '{test}': no such built-in test, file or module\n"
        )));
    };
    for (name, _) in &line.raw {
        let known = options::is_general(name) || test_defs.iter().any(|d| d.name == name.as_str());
        if !known {
            return Err(invalid_option(&line, name));
        }
    }
    for d in test_defs.iter().filter(|d| d.kind == Kind::Bool) {
        bool_option(&line, d.name)?;
    }
    match command.as_deref() {
        None => {
            return Err(Fail::Stderr(format!(
                "The '{test}' test requires a command argument. See 'sysbench {test} help'\n"
            )));
        }
        Some("help") => {
            print!("{}", help::test(&test, test_defs));
            return Ok(ExitCode::SUCCESS);
        }
        Some(cmd @ ("prepare" | "cleanup" | "run")) if test == "fileio" => {
            refuse_unsupported(&line)?;
            return fileio::command(cmd, &line, &general, &log, record);
        }
        Some(cmd @ ("prepare" | "cleanup" | "prewarm")) => {
            return Err(Fail::Stderr(format!(
                "'{test}' test does not implement the '{cmd}' command.\n"
            )));
        }
        Some("run") => {}
        Some(other) => return Err(Fail::Stderr(format!("Unknown command: {other}\n"))),
    }
    refuse_unsupported(&line)?;
    let (code, outcome) = run_test(&test, &line, &general, &log)?;
    record.keep(outcome);
    Ok(code)
}

/// What `run` checks before anything runs — the general options, the test's name and
/// its options' values (fileio's whole spec) — for the fuzzers (`compat::parse_only`).
/// Nothing runs; only sysbench's own warnings print.
pub(super) fn parse_only(args: &[String]) {
    let line = CommandLine::parse(args);
    let Ok(general) = general_options(&line) else {
        return;
    };
    let test = line
        .text("test")
        .or(line.positionals.first().map(String::as_str));
    let Some(defs) = test.and_then(options::test_options) else {
        return;
    };
    if test == Some("fileio") {
        let _ = fileio::spec(&line, &general);
        return;
    }
    for d in defs {
        let _ = match d.kind {
            Kind::Int => int_option(&line, d.name, 0).is_ok(),
            Kind::Bool => bool_option(&line, d.name).is_ok(),
            Kind::Size => line.text(d.name).map(parse_size).is_some(),
            Kind::Text | Kind::List | Kind::Float => true,
        };
    }
}

fn general_options(line: &CommandLine) -> Result<General, Fail> {
    let mut threads = int_option(line, "threads", 1)?;
    let mut time = int_option(line, "time", 10)?;
    let mut events = int_option(line, "events", 0)?;
    let report_interval = int_option(line, "report-interval", 0)?;
    let percentile = int_option(line, "percentile", 95)?;
    let mut verbosity = int_option(line, "verbosity", 3)?;
    let rand_seed = int_option(line, "rand-seed", 0)?;
    for name in [
        "rand-spec-iter",
        "rand-spec-pct",
        "rand-spec-res",
        "rate",
        "tx-rate",
    ] {
        int_option(line, name, 0)?;
    }
    let num_threads = int_option(line, "num-threads", 1)?;
    let max_requests = int_option(line, "max-requests", 0)?;
    let max_time = int_option(line, "max-time", 0)?;
    let histogram = bool_option(line, "histogram")?;
    let validate = bool_option(line, "validate")?;
    bool_option(line, "debug")?;

    if !(0..=5).contains(&verbosity) {
        // sysbench stores verbosity in a byte: -1 shows as 255.
        return Err(Fail::Stdout(format!(
            "Invalid value for verbosity: {}\n",
            verbosity as u8
        )));
    }
    // Deprecated aliases override the new names when set to something else than
    // their default, and say so, before the banner, in sysbench's order.
    if num_threads != 1 {
        println_if(
            verbosity,
            "WARNING: --num-threads is deprecated, use --threads instead",
        );
        threads = num_threads;
    }
    if max_requests != 0 {
        println_if(
            verbosity,
            "WARNING: --max-requests is deprecated, use --events instead",
        );
        events = max_requests;
    }
    if max_time != 0 {
        println_if(
            verbosity,
            "WARNING: --max-time is deprecated, use --time instead",
        );
        time = max_time;
    }
    if int_option(line, "tx-rate", 0)? != 0 {
        println_if(
            verbosity,
            "WARNING: --tx-rate is deprecated, use --rate instead",
        );
    }
    if threads == 0 || threads > MAX_THREADS as i64 {
        return Err(Fail::Stdout(format!(
            "FATAL: Invalid value for --threads: {threads}.\n\n"
        )));
    }
    if threads < 0 {
        return Err(Fail::Stdout("FATAL: Memory allocation failure.\n\n".into()));
    }
    if !(0..=100).contains(&percentile) {
        return Err(Fail::Stdout(format!(
            "FATAL: Invalid value for --percentile: {percentile}\n"
        )));
    }
    if histogram && percentile == 0 {
        return Err(Fail::Stdout(
            "FATAL: --histogram cannot be used with --percentile=0\n".into(),
        ));
    }
    if let Some(kind) = line.text("rand-type")
        && !["uniform", "gaussian", "special", "pareto"].contains(&kind)
    {
        return Err(Fail::Stdout(format!(
            "FATAL: Invalid random numbers distribution: {kind}.\n"
        )));
    }
    if let Some(size) = line.text("thread-stack-size")
        && parse_size(size) == 0
    {
        return Err(Fail::Stdout(
            "FATAL: Invalid value for thread-stack-size: 0.\n\n".into(),
        ));
    }
    if time == 0 && events == 0 {
        println!("WARNING: Both event and time limits are disabled, running an endless test");
    }
    verbosity = verbosity.clamp(0, 5);
    Ok(General {
        threads: threads as usize,
        time,
        events,
        report_interval,
        percentile: percentile as u32,
        histogram,
        verbosity,
        rand_seed,
        validate,
    })
}

/// Deprecation warnings print at any verbosity, as in sysbench.
fn println_if(_verbosity: i64, text: &str) {
    println!("{text}");
}

/// Options sysbench has that hostbench does not reproduce: refused by name rather
/// than silently ignored.
fn refuse_unsupported(line: &CommandLine) -> Result<(), Fail> {
    let set = |name: &str, default: &str| {
        line.text(name)
            .is_some_and(|v| v != default && !v.is_empty())
    };
    let unsupported = [
        ("rate", set("rate", "0")),
        ("tx-rate", set("tx-rate", "0")),
        ("report-checkpoints", set("report-checkpoints", "")),
        ("forced-shutdown", set("forced-shutdown", "off")),
        ("debug", bool_option(line, "debug").unwrap_or(false)),
        ("config-file", line.given("config-file")),
    ];
    if let Some((name, _)) = unsupported.iter().find(|(_, on)| *on) {
        return Err(Fail::Stdout(format!(
            "FATAL: --{name} is not supported by hostbench's sysbench personality; remove it (see docs/compat-sysbench.md)\n"
        )));
    }
    Ok(())
}

pub(super) fn run_options(general: &General, events_apply: bool) -> RunOptions {
    RunOptions {
        // Negative limits behave as "none", as sysbench's unsigned arithmetic makes them.
        time: (general.time > 0).then(|| Duration::from_secs(general.time as u64)),
        events: (events_apply && general.events > 0).then_some(general.events as u64),
        report_interval: (general.report_interval > 0)
            .then(|| Duration::from_secs(general.report_interval as u64)),
        layout: Layout::SYSBENCH,
    }
}

pub(super) fn header(general: &General, log: &Log) {
    let mut text = String::from("Running the test with following options:\n");
    text += &format!("Number of threads: {}\n", general.threads);
    if general.report_interval != 0 {
        text += &format!(
            "Report intermediate results every {} second(s)\n",
            general.report_interval
        );
    }
    if general.validate {
        text += "Validation checks: on.\n\n";
    }
    if general.rand_seed != 0 {
        text += &format!(
            "Initializing random number generator from seed ({}).\n",
            general.rand_seed
        );
    } else {
        text += "Initializing random number generator from current time\n";
    }
    text += "\n\n";
    log.notice(&text);
}

pub(super) fn starting_workers(general: &General, log: &Log) {
    log.notice("Initializing worker threads...\n\n");
    for t in 0..general.threads {
        log.debug(&format!(
            "DEBUG: Worker thread (#{t}) started\nDEBUG: Worker thread (#{t}) initialized\n"
        ));
    }
    if general.report_interval > 0 {
        log.debug("DEBUG: Reporting thread started\n");
    }
    log.notice("Threads started!\n\n");
}

/// After the workers stop: verbosity-4 messages, then the histogram if asked for.
pub(super) fn finished(o: &Outcome, general: &General, log: &Log, quota_ended: bool) {
    let events: u64 = o.threads.iter().map(|t| t.events).sum();
    if !quota_ended && !o.interrupted {
        let reason = if general.events > 0 && events >= general.events as u64 {
            "Event limit exceeded, exiting...\n"
        } else {
            "Time limit exceeded, exiting...\n"
        };
        log.info(reason);
        if general.threads > 1 {
            log.info(&format!(
                "(last message repeated {} times)\n",
                general.threads - 1
            ));
        }
    }
    log.info("Done.\n\n");
    if general.histogram
        && let Some(lat) = &o.latency
    {
        log.notice(&report::histogram(&lat.histogram()));
    }
}

pub(super) fn closing(o: &Outcome, general: &General, log: &Log) -> ExitCode {
    log.notice("\n");
    log.notice(&report::general_statistics(o, general.percentile));
    if o.interrupted {
        eprintln!("hostbench: interrupted; the report covers the part that ran");
        return ExitCode::from(130);
    }
    ExitCode::SUCCESS
}

fn spec_error(e: SpecError) -> Fail {
    Fail::Stdout(format!("FATAL: {e}\n"))
}

/// Runs a test and prints sysbench's report; returns the exit code and the outcome
/// to keep.
fn run_test(
    test: &str,
    line: &CommandLine,
    general: &General,
    log: &Log,
) -> Result<(ExitCode, Outcome), Fail> {
    let t = Test {
        line,
        general,
        log,
        percentiles: if general.percentile > 0 {
            vec![general.percentile as f64]
        } else {
            vec![]
        },
    };
    match test {
        "cpu" => t.cpu(),
        "memory" => t.memory(),
        "threads" => t.threads(),
        "mutex" => t.mutex(),
        _ => unreachable!("test names come from options::TESTS"),
    }
}

/// One run of a built-in test: its options, sysbench's messages around it, and the
/// report.
struct Test<'a> {
    line: &'a CommandLine,
    general: &'a General,
    log: &'a Log,
    /// `--percentile`, as the workloads take it.
    percentiles: Vec<f64>,
}

impl Test<'_> {
    fn printer(&self, block_size: Option<u64>) -> IntervalPrinter {
        IntervalPrinter {
            block_size,
            percentile: self.general.percentile,
            silent: self.log.verbosity < 3,
        }
    }

    fn cpu(&self) -> Result<(ExitCode, Outcome), Fail> {
        let max_prime = int_option(self.line, "cpu-max-prime", 10_000)?;
        if max_prime <= 0 {
            return Err(Fail::Stdout(format!(
                "FATAL: Invalid value of cpu-max-prime: {max_prime}.\n"
            )));
        }
        header(self.general, self.log);
        self.log.info("Doing CPU performance benchmark\n\n");
        self.log
            .notice(&format!("Prime numbers limit: {max_prime}\n\n"));
        let spec = CpuSpec {
            run: run_options(self.general, true),
            threads: vec![self.general.threads],
            max_prime: (max_prime as u64).max(3),
            percentiles: self.percentiles.clone(),
        };
        starting_workers(self.general, self.log);
        let p = self.printer(None);
        let outcome = cpu::run(&spec, &p).map_err(spec_error)?;
        finished(&outcome, self.general, self.log, false);
        self.log.notice(&report::cpu_speed(&outcome));
        Ok((closing(&outcome, self.general, self.log), outcome))
    }

    fn memory(&self) -> Result<(ExitCode, Outcome), Fail> {
        let raw_block = self.line.text("memory-block-size").unwrap_or("1K");
        let block_size = parse_size(raw_block);
        if block_size < 8 || !block_size.is_power_of_two() {
            let shown = if self.line.options.get("memory-block-size") == Some(&None) {
                "(null)"
            } else {
                raw_block
            };
            return Err(Fail::Stdout(format!(
                "FATAL: Invalid value for memory-block-size: {shown}\n"
            )));
        }
        let total_size = parse_size(self.line.text("memory-total-size").unwrap_or("100G"));
        let choice = |name: &str,
                      default: &'static str,
                      allowed: &[&'static str]|
         -> Result<&'static str, Fail> {
            let v = self.line.text(name).unwrap_or(default);
            allowed
                .iter()
                .find(|a| **a == v)
                .copied()
                .ok_or_else(|| Fail::Stdout(format!("FATAL: Invalid value for {name}: {v}\n")))
        };
        let oper = choice("memory-oper", "write", &["read", "write", "none"])?;
        let access = choice("memory-access-mode", "seq", &["seq", "rnd"])?;
        let scope = choice("memory-scope", "global", &["global", "local"])?;
        let spec = BlockSpec {
            // sysbench's memory test ignores --events.
            run: run_options(self.general, false),
            threads: self.general.threads,
            block_size,
            total_size,
            oper: match oper {
                "read" => Oper::Read,
                "write" => Oper::Write,
                _ => Oper::None,
            },
            access: if access == "rnd" {
                Access::Rnd
            } else {
                Access::Seq
            },
            scope: if scope == "local" {
                Scope::Local
            } else {
                Scope::Global
            },
            hugetlb: bool_option(self.line, "memory-hugetlb")?,
            seed: (self.general.rand_seed != 0).then_some(self.general.rand_seed as u64),
            percentiles: self.percentiles.clone(),
        };
        header(self.general, self.log);
        self.log.notice(&format!(
            "Running memory speed test with the following options:\n  block size: {}KiB\n  total size: {}MiB\n  operation: {oper}\n  scope: {scope}\n\n",
            block_size / 1024,
            total_size / 1048576
        ));
        spec.validate()
            .map_err(|_| Fail::Stdout("FATAL: Failed to allocate buffer!\n".into()))?;
        starting_workers(self.general, self.log);
        let p = self.printer(Some(block_size));
        let outcome = block::run(&spec, &p).map_err(|e| {
            if spec.hugetlb {
                Fail::Stdout(format!(
                    "FATAL: Failed to allocate {} bytes from HugeTLB memory. ({e})\nFATAL: Failed to allocate buffer!\n",
                    block_size
                ))
            } else {
                spec_error(e)
            }
        })?;
        let events: u64 = outcome.threads.iter().map(|t| t.events).sum();
        let quota_ended = spec
            .quota_per_thread()
            .is_some_and(|q| events >= q * self.general.threads as u64);
        finished(&outcome, self.general, self.log, quota_ended);
        self.log.notice(&report::memory_totals(
            &outcome,
            block_size,
            spec.oper == Oper::None,
        ));
        Ok((closing(&outcome, self.general, self.log), outcome))
    }

    fn threads(&self) -> Result<(ExitCode, Outcome), Fail> {
        let yields = int_option(self.line, "thread-yields", 1000)?;
        let locks = int_option(self.line, "thread-locks", 8)?;
        if locks <= 0 || yields < 0 {
            let (name, v) = if locks <= 0 {
                ("thread-locks", locks)
            } else {
                ("thread-yields", yields)
            };
            return Err(Fail::Stdout(format!(
                "FATAL: Invalid value for {name}: {v}.\n"
            )));
        }
        header(self.general, self.log);
        self.log.info(&format!(
            "Doing thread subsystem performance test\nThread yields per test: {yields} Locks used: {locks}\n"
        ));
        let spec = ThreadsSpec {
            run: run_options(self.general, true),
            threads: self.general.threads,
            yields: yields.max(0) as u64,
            locks: locks as usize,
            percentiles: self.percentiles.clone(),
        };
        starting_workers(self.general, self.log);
        let p = self.printer(None);
        let outcome = sched::run_threads(&spec, &p).map_err(spec_error)?;
        finished(&outcome, self.general, self.log, false);
        Ok((closing(&outcome, self.general, self.log), outcome))
    }

    fn mutex(&self) -> Result<(ExitCode, Outcome), Fail> {
        let num = int_option(self.line, "mutex-num", 4096)?;
        let locks = int_option(self.line, "mutex-locks", 50_000)?;
        let loops = int_option(self.line, "mutex-loops", 10_000)?;
        for (name, v) in [
            ("mutex-num", num),
            ("mutex-locks", locks),
            ("mutex-loops", loops),
        ] {
            if v < 0 || (v == 0 && name != "mutex-loops") {
                return Err(Fail::Stdout(format!(
                    "FATAL: Invalid value for {name}: {v}.\n"
                )));
            }
        }
        header(self.general, self.log);
        self.log.info("Doing mutex performance test\n");
        let spec = MutexSpec {
            run: run_options(self.general, true),
            threads: self.general.threads,
            mutexes: num as usize,
            locks: locks as u64,
            loops: loops as u64,
            percentiles: self.percentiles.clone(),
        };
        starting_workers(self.general, self.log);
        let p = self.printer(None);
        let outcome = sched::run_mutex(&spec, &p).map_err(spec_error)?;
        // Every thread runs its one event to the end: no limit message.
        finished(&outcome, self.general, self.log, true);
        Ok((closing(&outcome, self.general, self.log), outcome))
    }
}

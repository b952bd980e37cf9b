//! The UnixBench personality: `./Run`'s command line (`hostbench unixbench [-q|-v]
//! [-i N] [-c N]… [test …]`) and UnixBench 5.1.3's text report, once per copy count.
//! The tests are hostbench's UnixBench-style reimplementation
//! (`workload::unixbench`); the header says so.
//!
//! Each copy count's block is kept as one outcome (workload `index`, the same
//! conversion as `hostbench index`). A soak slice's length is not applied: UnixBench's
//! durations are fixed per test and its index is only defined for them, so there is
//! no honest way to make `./Run` last a given time.

mod report;

use crate::measure::stop_requested;
use crate::workload::observe::{Observer, Snapshot};
use crate::workload::unixbench::catalogue;
use crate::workload::unixbench::{self, SuiteEvent, UnixbenchSpec};
use std::io::Write;
use std::process::ExitCode;

/// Environment variable that shortens every test to this many seconds (quick mode,
/// labelled in the report); meant for hostbench's own tests.
pub const QUICK_SECONDS_VAR: &str = "HOSTBENCH_UNIXBENCH_QUICK_SECONDS";

#[derive(Debug, Clone, PartialEq)]
pub(in crate::compat) struct Args {
    /// 0 quiet, 1 normal, 2 verbose.
    verbose: u8,
    iterations: Option<u32>,
    copies: Vec<usize>,
    tests: Vec<&'static str>,
}

const USAGE: &str = "Usage: hostbench unixbench [-q | -v] [-i <n>] [-c <n> [-c <n> ...]] [test ...]

UnixBench 5.1.3's Run, reimplemented by hostbench (a UnixBench-style index: the same tests,
durations, passes and baselines, hostbench's own programs).

  -q         no progress lines, only the report
  -v         verbose: the tests to run and each copy count
  -i <n>     passes of the long tests (short tests: max(1, (n+1)/3)); default 10 and 3
  -c <n>     run the tests with n parallel copies; repeat for several runs
             (default: 1 copy, then one per CPU)
  test       index (default) or test names and groups:";

fn usage() -> String {
    format!("{USAGE}\n             {}\n", catalogue::known_names())
}

/// A `./Run` command line that is refused (printed after `Run: `, with the usage).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgError {
    #[error("option {flag} needs a number")]
    NoNumber { flag: &'static str },
    #[error("option {flag}: \"{value}\" is not a positive whole number")]
    NotPositive { flag: &'static str, value: String },
    #[error("option -c: {copies} copies is more than {MAX_COPIES}")]
    TooManyCopies { copies: u64 },
    #[error("unknown option {option}")]
    UnknownOption { option: String },
    #[error(
        "unknown test \"{test}\" (hostbench knows: {})",
        catalogue::known_names()
    )]
    UnknownTest { test: String },
}

/// The most copies `-c` runs at once.
const MAX_COPIES: u64 = 4096;

pub(in crate::compat) fn parse(words: &[String]) -> Result<Args, ArgError> {
    let mut args = Args {
        verbose: 1,
        iterations: None,
        copies: Vec::new(),
        tests: Vec::new(),
    };
    let mut words = words.iter();
    let number = |flag: &'static str, value: Option<&String>| -> Result<u64, ArgError> {
        let value = value.ok_or(ArgError::NoNumber { flag })?;
        value
            .parse::<u64>()
            .ok()
            .filter(|&n| n >= 1)
            .ok_or_else(|| ArgError::NotPositive {
                flag,
                value: value.clone(),
            })
    };
    while let Some(word) = words.next() {
        match word.as_str() {
            "-q" => args.verbose = 0,
            "-v" => args.verbose = 2,
            "-i" => args.iterations = Some(number("-i", words.next())?.min(1000) as u32),
            "-c" => {
                let c = number("-c", words.next())?;
                if c > MAX_COPIES {
                    return Err(ArgError::TooManyCopies { copies: c });
                }
                args.copies.push(c as usize);
            }
            w if w.starts_with('-') => {
                return Err(ArgError::UnknownOption { option: w.into() });
            }
            w => {
                let tests =
                    catalogue::expand(w).ok_or_else(|| ArgError::UnknownTest { test: w.into() })?;
                args.tests.extend(tests.iter().map(|t| t.name));
            }
        }
    }
    Ok(args)
}

pub fn main(words: &[String], record: &mut crate::compat::Record) -> ExitCode {
    if words.iter().any(|w| w == "-h" || w == "--help") {
        print!("{}", usage());
        return ExitCode::SUCCESS;
    }
    let mut args = match parse(words) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("Run: {e}\n\n{}", usage());
            return ExitCode::from(2);
        }
    };
    let system = report::SystemInfo::detect();
    if args.tests.is_empty() {
        args.tests = catalogue::index_tests().iter().map(|t| t.name).collect();
    }
    if args.copies.is_empty() {
        args.copies.push(1);
        if system.cpus.len() > 1 {
            args.copies.push(system.cpus.len());
        }
    }
    // For hostbench's own tests: every test this many seconds, in quick mode.
    let seconds = std::env::var(QUICK_SECONDS_VAR)
        .ok()
        .and_then(|s| s.parse::<f64>().ok());
    let spec = UnixbenchSpec {
        tests: args.tests.clone(),
        copies: args.copies.clone(),
        iterations: args.iterations,
        quick: seconds.is_some(),
        seconds,
        dir: std::env::temp_dir(),
    };
    if let Err(e) = spec.validate() {
        eprintln!("Run: {e}");
        return ExitCode::from(2);
    }
    if args.verbose > 1 {
        let _ = writeln!(
            std::io::stdout(),
            "\nTests to run: {}",
            args.tests.join(", ")
        );
    }
    let watch = Progress {
        verbose: args.verbose,
    };
    let result = match unixbench::run(&spec, &watch) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("\n**********************************************");
            eprintln!("Run: {e}; aborting");
            return ExitCode::from(1);
        }
    };
    let mut text = String::new();
    if args.verbose > 0 {
        text += &format!("\n{}\n", "=".repeat(72));
    }
    text += &report::render(&system, &result);
    let _ = std::io::stdout().write_all(text.as_bytes());
    let host = crate::host::HostInfo::detect();
    for outcome in unixbench::outcome::to_outcomes(&spec, &result, host) {
        record.keep(outcome);
    }
    if result.interrupted || stop_requested() {
        ExitCode::from(130)
    } else {
        ExitCode::SUCCESS
    }
}

/// `Run`'s progress lines: `\n1 x Dhrystone 2 using register variables  1 2 3 …`.
struct Progress {
    verbose: u8,
}

impl Observer for Progress {
    fn snapshot(&self, snapshot: &Snapshot<'_>) {
        let Snapshot::Suite(event) = snapshot else {
            return;
        };
        if self.verbose == 0 {
            return;
        }
        let mut out = std::io::stdout();
        let _ = match event {
            SuiteEvent::TestStarted { test, copies, .. } => {
                write!(out, "\n{copies} x {} ", test.label)
            }
            SuiteEvent::PassStarted { pass, .. } => write!(out, " {pass}"),
            SuiteEvent::TestFinished(_) => writeln!(out),
        };
        let _ = out.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn seed_001_command_line() {
        let a = parse(&words("-c 1 -c 4")).unwrap();
        assert_eq!(a.copies, vec![1, 4]);
        assert!(a.tests.is_empty());
        assert_eq!(a.verbose, 1);
    }

    #[test]
    fn tests_groups_and_options() {
        let a = parse(&words("-q -i 3 dhry2reg whetstone shell")).unwrap();
        assert_eq!(a.verbose, 0);
        assert_eq!(a.iterations, Some(3));
        assert_eq!(
            a.tests,
            vec![
                "dhry2reg",
                "whetstone-double",
                "shell1",
                "shell8",
                "shell16"
            ]
        );
    }

    #[test]
    fn bad_input_names_the_problem() {
        let err = |line: &str| parse(&words(line)).unwrap_err();
        assert_eq!(err("-c"), ArgError::NoNumber { flag: "-c" });
        assert_eq!(err("-c").to_string(), "option -c needs a number");
        assert_eq!(
            err("-c 0").to_string(),
            "option -c: \"0\" is not a positive whole number"
        );
        assert_eq!(
            err("-i x"),
            ArgError::NotPositive {
                flag: "-i",
                value: "x".into()
            }
        );
        assert_eq!(err("-c 4097"), ArgError::TooManyCopies { copies: 4097 });
        assert_eq!(
            err("-c 4097").to_string(),
            "option -c: 4097 copies is more than 4096"
        );
        assert!(
            err("gears")
                .to_string()
                .starts_with("unknown test \"gears\" (hostbench knows: dhry2reg ")
        );
        assert_eq!(err("--fast").to_string(), "unknown option --fast");
    }
}

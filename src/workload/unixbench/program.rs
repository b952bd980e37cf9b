//! The test programs' side. Each copy of a test runs as a process of its own, as in
//! UnixBench: the driver starts `hostbench __unixbench-program <test> key=value…`,
//! which loops until its own alarm and prints UnixBench's result lines on stderr
//! (`COUNT|value|timebase|unit`, `TIME|seconds`). This entry runs before anything
//! else in `main` (no Ctrl-C thread), so the process is single-threaded and the
//! tests may `fork`.

use super::catalogue::{Program, by_name};
use super::{alarm, dhrystone, fstime, kernel, shell, whetstone};
use std::ffi::{CString, OsString};
use std::io::{Error, Result};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// The hidden first argument that selects a test program.
pub const ENTRY: &str = "__unixbench-program";
const EXECL_NEXT: &str = "execl-next";

/// Runs a test program if `args` (argv without argv[0]) asks for one.
pub fn main_if_program(args: &[OsString]) -> Option<ExitCode> {
    if args.first()? != ENTRY {
        return None;
    }
    let args: Vec<String> = args[1..]
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let result = if args.first().map(String::as_str) == Some(EXECL_NEXT) {
        execl_next(&args[1..])
    } else {
        run(&args)
    };
    Some(match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hostbench {ENTRY}: {e}");
            ExitCode::from(1)
        }
    })
}

/// What the driver passes to a program.
#[derive(Debug, Clone)]
pub struct Invocation {
    pub test: &'static str,
    pub seconds: f64,
    pub quick: bool,
    /// The working directory's scratch directory for the file tests.
    pub dir: PathBuf,
}

/// The execl test's own small program, installed next to `hostbench` (see
/// `src/bin/hostbench-execl.rs` for why it is separate).
pub fn execl_helper() -> Option<PathBuf> {
    let helper = std::env::current_exe()
        .ok()?
        .with_file_name("hostbench-execl");
    helper.is_file().then_some(helper)
}

impl Invocation {
    /// The program and arguments that run one copy of the test.
    pub fn command(&self, hostbench: &std::path::Path) -> (PathBuf, Vec<OsString>) {
        if self.test == "execl"
            && let Some(helper) = execl_helper()
        {
            let clock = match Clock::for_duration(self.seconds) {
                Clock::Wall => "wall",
                Clock::Monotonic => "mono",
            };
            return (helper, vec![self.seconds.to_string().into(), clock.into()]);
        }
        (hostbench.to_path_buf(), self.args())
    }

    pub fn args(&self) -> Vec<OsString> {
        let mut dir = OsString::from("dir=");
        dir.push(&self.dir);
        vec![
            ENTRY.into(),
            self.test.into(),
            format!("seconds={}", self.seconds).into(),
            format!("quick={}", u8::from(self.quick)).into(),
            dir,
        ]
    }
}

fn value<'a>(args: &'a [String], key: &str) -> Result<&'a str> {
    args.iter()
        .find_map(|a| a.strip_prefix(key)?.strip_prefix('='))
        .ok_or_else(|| Error::other(format!("missing {key}=")))
}

fn report_count(count: impl std::fmt::Display, timebase: u32, unit: &str) {
    eprintln!("COUNT|{count}|{timebase}|{unit}");
}

fn run(args: &[String]) -> Result<()> {
    let name = args.first().ok_or_else(|| Error::other("no test name"))?;
    let test = by_name(name).ok_or_else(|| Error::other(format!("unknown test {name}")))?;
    let seconds: f64 = value(args, "seconds")?
        .parse()
        .map_err(|_| Error::other("seconds= is not a number"))?;
    let quick = value(args, "quick")? == "1";
    let dir = PathBuf::from(value(args, "dir")?);
    let duration = Duration::from_secs_f64(seconds);
    match test.program {
        Program::Dhrystone => {
            alarm::arm(duration)?;
            report_count(dhrystone::run(), 1, "lps");
        }
        Program::Whetstone => {
            let calibrate = if quick {
                duration / 20
            } else {
                Duration::from_millis(500)
            };
            let w = whetstone::run(duration, calibrate);
            report_count(format!("{:.3}", w.mwips), 0, "MWIPS");
            eprintln!("TIME|{:.3}", w.time_used);
        }
        Program::FileCopy {
            bufsize,
            max_blocks,
        } => {
            let settings = fstime::Settings {
                dir,
                bufsize,
                max_blocks,
                copy: duration,
                warmup: if quick {
                    duration / 4
                } else {
                    Duration::from_secs(2)
                },
                settle: !quick,
            };
            let copy = fstime::run(&settings)?;
            report_count(copy.kbps, 0, "KBps");
            eprintln!("TIME|{:.1}", copy.seconds);
        }
        Program::Pipe => {
            alarm::arm(duration)?;
            report_count(kernel::pipe_throughput()?, 1, "lps");
        }
        Program::Context1 => {
            alarm::arm(duration)?;
            report_count(kernel::context_switch()?, 1, "lps");
        }
        Program::Spawn => {
            alarm::arm(duration)?;
            report_count(kernel::process_creation()?, 1, "lps");
        }
        Program::Syscall => {
            alarm::arm(duration)?;
            report_count(kernel::syscall_mix()?, 1, "lps");
        }
        Program::Shell { concurrency } => {
            alarm::arm(duration)?;
            let cwd = std::env::current_dir()?;
            report_count(shell::looper(&cwd, concurrency)?, 60, "lpm");
        }
        Program::Execl => {
            let exe = std::env::current_exe()?;
            let start = Clock::for_duration(seconds).now();
            execl_step(&exe.into_os_string(), seconds, 0, start)?;
        }
    }
    Ok(())
}

/// Execl's clock: whole seconds of `time()` for whole-second durations (UnixBench's
/// behaviour, which ends the test between duration-1 and duration seconds), the
/// monotonic clock in nanoseconds for the short durations of quick mode.
#[derive(Clone, Copy)]
enum Clock {
    Wall,
    Monotonic,
}

impl Clock {
    fn for_duration(seconds: f64) -> Clock {
        if seconds.fract() == 0.0 && seconds >= 1.0 {
            Clock::Wall
        } else {
            Clock::Monotonic
        }
    }

    fn now(self) -> u64 {
        match self {
            // SAFETY: time(NULL) only reads the clock.
            Clock::Wall => unsafe { libc::time(std::ptr::null_mut()) as u64 },
            Clock::Monotonic => {
                let mut ts = libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                };
                // SAFETY: `ts` is a valid timespec.
                unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
                ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
            }
        }
    }

    fn expired(self, start: u64, seconds: f64) -> bool {
        let passed = self.now().saturating_sub(start);
        match self {
            Clock::Wall => passed as f64 >= seconds,
            Clock::Monotonic => passed as f64 >= seconds * 1e9,
        }
    }
}

/// One execl iteration: count, and either report or replace this process with the
/// next iteration.
fn execl_step(exe: &OsString, seconds: f64, done: u64, start: u64) -> Result<()> {
    let iterations = done + 1;
    if Clock::for_duration(seconds).expired(start, seconds) {
        report_count(iterations, 1, "lps");
        return Ok(());
    }
    let cstr = |s: &[u8]| CString::new(s).map_err(Error::other);
    let path = cstr(exe.as_bytes())?;
    let argv = [
        path.clone(),
        cstr(ENTRY.as_bytes())?,
        cstr(EXECL_NEXT.as_bytes())?,
        cstr(seconds.to_string().as_bytes())?,
        cstr(iterations.to_string().as_bytes())?,
        cstr(start.to_string().as_bytes())?,
    ];
    let mut ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    ptrs.push(std::ptr::null());
    // SAFETY: NUL-terminated strings and a NULL-terminated array that outlive the call.
    unsafe { libc::execv(path.as_ptr(), ptrs.as_ptr()) };
    let e = Error::last_os_error();
    Err(Error::new(
        e.kind(),
        format!("exec failed at iteration {iterations}: {e}"),
    ))
}

fn execl_next(args: &[String]) -> Result<()> {
    let bad = || Error::other("execl-next: expected <seconds> <count> <start>");
    let [seconds, done, start] = args else {
        return Err(bad());
    };
    let exe = std::env::args_os().next().ok_or_else(bad)?;
    execl_step(
        &exe,
        seconds.parse().map_err(|_| bad())?,
        done.parse().map_err(|_| bad())?,
        start.parse().map_err(|_| bad())?,
    )
}

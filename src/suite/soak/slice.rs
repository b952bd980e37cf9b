//! One slice: the current executable started with the workload's command line. A
//! native one gets its time option set to the slice's duration and `--json
//! --no-save`, and its JSON outcome is parsed back; a personality (`fio seed.fio`)
//! runs its peer's command line unchanged, with the duration, an outcomes file and
//! `HOSTBENCH_NO_SAVE` in its environment (`compat::keep`), and its report discarded. A process per slice keeps a slice's threads, buffers and
//! files away from the scheduler, and a workload that crashes costs one slice.
//!
//! Ctrl-C from a terminal reaches the child too (same process group); a stop
//! requested any other way is forwarded as SIGINT. The child gets SIGINT as well if
//! the soak process dies (PR_SET_PDEATHSIG), so a killed soak leaves no workload
//! running on its own.

use super::Slicing;
use crate::env;
use crate::measure::stop_requested;
use crate::model::Outcome;
use crate::progress::{Countdown, Expect, Progress};
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Sleep steps while waiting: short, so Ctrl-C is answered at once.
const STEP: Duration = Duration::from_millis(100);

/// Lines of the workload's stderr kept for the note of a failed slice.
const KEEP_LINES: usize = 3;

/// What running a slice gave.
#[derive(Debug)]
pub enum Ran {
    Measured(Vec<Outcome>),
    /// Ctrl-C: nothing to record.
    Interrupted,
    /// The workload refused its command line (exit 2), with its message.
    Refused(String),
    /// It ran and failed (exit 1 without a result, a crash), with its message.
    Failed(String),
}

/// Sleeps until `due_ms` (Unix ms) in short steps, with a countdown on a terminal.
/// False when a stop was requested meanwhile.
pub fn wait_until(due_ms: i64, label: &str) -> bool {
    let countdown = Countdown::new(label);
    loop {
        if stop_requested() {
            return false;
        }
        let left = due_ms - super::now_ms();
        if left <= 0 {
            return true;
        }
        let left = Duration::from_millis(left as u64);
        countdown.show(left);
        std::thread::sleep(left.min(STEP));
    }
}

/// The argument the workload's time option gets: whole seconds when they are.
fn duration_arg(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}

/// The command line of a slice (after the executable).
pub fn command_line(workload: &[String], option: &str, duration: Duration) -> Vec<String> {
    let mut args = workload.to_vec();
    args.extend([
        option.to_string(),
        duration_arg(duration),
        "--json".into(),
        "--no-save".into(),
    ]);
    args
}

/// Outcomes from a command's `--json`: one outcome, or a document with `outcomes`.
pub fn parse_outcomes(stdout: &[u8]) -> Option<Vec<Outcome>> {
    let value: serde_json::Value = serde_json::from_slice(stdout).ok()?;
    match value.get("outcomes") {
        Some(list) => serde_json::from_value(list.clone()).ok(),
        None => serde_json::from_value(value).ok().map(|o| vec![o]),
    }
}

/// Where a personality slice writes its outcomes: a file of this process's own in the
/// temporary directory, removed when dropped.
struct OutcomesFile(std::path::PathBuf);

impl OutcomesFile {
    fn new() -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        OutcomesFile(std::env::temp_dir().join(format!(
            "hostbench-slice-{}-{nanos}.json",
            std::process::id()
        )))
    }

    fn read(&self) -> Option<Vec<Outcome>> {
        serde_json::from_slice(&std::fs::read(&self.0).ok()?).ok()
    }
}

impl Drop for OutcomesFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Runs one slice and waits for it, with a progress bar on a terminal.
pub fn run(workload: &[String], slicing: Slicing, duration: Duration, label: &str) -> Ran {
    let exe = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => return Ran::Failed(format!("cannot find the hostbench executable: {e}")),
    };
    let mut command = Command::new(exe);
    let outcomes_file = match slicing {
        Slicing::Option(option) => {
            command.args(command_line(workload, option, duration));
            None
        }
        Slicing::Personality => {
            let file = OutcomesFile::new();
            command
                .args(workload)
                .env(env::SLICE_SECONDS, format!("{}", duration.as_secs_f64()))
                .env(env::OUTCOMES, &file.0)
                .env(env::NO_SAVE, "1");
            Some(file)
        }
    };
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: prctl and getppid are async-signal-safe system calls; nothing is
    // allocated between fork and exec.
    unsafe {
        command.pre_exec(move || {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGINT as libc::c_ulong);
            if libc::getppid() != parent {
                // The soak died before prctl took effect.
                libc::_exit(130);
            }
            Ok(())
        });
    }
    let mut child = match command.spawn() {
        Ok(c) => c,
        Err(e) => return Ran::Failed(format!("cannot start the workload: {e}")),
    };
    // Both pipes are drained on threads: a full pipe would stall the workload.
    let mut stdout = child.stdout.take().expect("piped");
    let out_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stdout.read_to_end(&mut buf);
        buf
    });
    let stderr = child.stderr.take().expect("piped");
    let err_reader = std::thread::spawn(move || {
        // Passed through as it comes (warnings, errors); the last lines are kept.
        let mut kept: Vec<String> = Vec::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            eprintln!("{line}");
            kept.push(line);
            if kept.len() > KEEP_LINES {
                kept.remove(0);
            }
        }
        kept
    });
    let progress = Progress::new(label, Expect::Time(duration));
    let started = Instant::now();
    let mut forwarded = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) => {}
            Err(e) => break Err(e),
        }
        if stop_requested() && !forwarded {
            // SAFETY: kill(2) on our own child's pid.
            unsafe {
                libc::kill(child.id() as libc::pid_t, libc::SIGINT);
            }
            forwarded = true;
        }
        progress.tick(started.elapsed().min(duration), 0);
        std::thread::sleep(Duration::from_millis(50));
    };
    progress.finish();
    let stdout = out_reader.join().unwrap_or_default();
    let message = err_reader
        .join()
        .unwrap_or_default()
        .iter()
        .map(|l| l.strip_prefix("hostbench: error: ").unwrap_or(l))
        .collect::<Vec<_>>()
        .join(" / ");
    let status = match status {
        Ok(s) => s,
        Err(e) => return Ran::Failed(format!("lost the workload process: {e}")),
    };
    let interrupted = |status_code: Option<i32>, outcomes: &Option<Vec<Outcome>>| {
        status_code == Some(130) || outcomes.iter().flatten().any(|o| o.interrupted)
    };
    let outcomes = match &outcomes_file {
        Some(file) => file.read(),
        None => parse_outcomes(&stdout),
    }
    .filter(|o| !o.is_empty());
    if interrupted(status.code(), &outcomes) {
        // A terminal's Ctrl-C reaches both processes; give ours a moment to see it.
        std::thread::sleep(STEP);
    }
    if stop_requested() {
        return Ran::Interrupted;
    }
    if interrupted(status.code(), &outcomes) {
        return Ran::Failed("the workload was interrupted by a signal of its own".into());
    }
    match (status.code(), outcomes) {
        // 1 with a result: measured, and a check (e.g. --expect) failed.
        (Some(0 | 1), Some(outcomes)) => Ran::Measured(outcomes),
        (Some(2), _) => Ran::Refused(message),
        (Some(code), _) => Ran::Failed(if message.is_empty() {
            format!("the workload exited with status {code}")
        } else {
            message
        }),
        (None, _) => {
            use std::os::unix::process::ExitStatusExt;
            Ran::Failed(format!(
                "the workload was killed by signal {}",
                status.signal().unwrap_or(0)
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slice_command_lines() {
        let w: Vec<String> = ["cpu", "--threads", "1"].map(String::from).to_vec();
        assert_eq!(
            command_line(&w, "--time", Duration::from_secs(600)).join(" "),
            "cpu --threads 1 --time 600s --json --no-save"
        );
        assert_eq!(duration_arg(Duration::from_millis(1500)), "1500ms");
    }

    #[test]
    fn outcomes_parse_from_both_json_shapes() {
        let o = Outcome::new(
            "cpu",
            serde_json::json!({}),
            crate::host::HostInfo::detect(),
        );
        let one = serde_json::to_vec(&o).unwrap();
        assert_eq!(parse_outcomes(&one).unwrap().len(), 1);
        let doc = serde_json::to_vec(&serde_json::json!({"outcomes": [o.clone(), o]})).unwrap();
        assert_eq!(parse_outcomes(&doc).unwrap().len(), 2);
        assert!(parse_outcomes(b"not json").is_none());
    }
}

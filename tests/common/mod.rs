#![allow(dead_code)]

mod strict;
pub use strict::missing;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Once;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// hostbench with a data directory of its own (XDG_DATA_HOME), so the runs tests make
/// are saved there and never in the user's results database.
pub fn hostbench() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hostbench"));
    c.env("XDG_DATA_HOME", data_home());
    c
}

/// A fresh directory under cargo's test scratch space for each call; those left by
/// earlier test processes are removed on the first call.
pub fn data_home() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    static CLEAN: Once = Once::new();
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("xdg-data");
    CLEAN.call_once(|| {
        for entry in std::fs::read_dir(&root).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let pid = name.split('-').next().unwrap_or("");
            if !Path::new("/proc").join(pid).exists() {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    });
    let dir = root.join(format!(
        "{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).expect("test data directory");
    dir
}

/// hostbench on a results database of the test's own (`--db`).
pub fn with_db(db: &Path, args: &[&str]) -> Output {
    hostbench()
        .args(args)
        .arg("--db")
        .arg(db)
        .output()
        .expect("hostbench runs")
}

pub fn run(args: &[&str]) -> Output {
    hostbench().args(args).output().expect("hostbench runs")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The number after `label` on the first line that contains it.
pub fn number_after(text: &str, label: &str) -> f64 {
    let line = text
        .lines()
        .find(|l| l.contains(label))
        .unwrap_or_else(|| panic!("no line with {label:?} in:\n{text}"));
    let rest = &line[line.find(label).unwrap() + label.len()..];
    let num: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    num.parse()
        .unwrap_or_else(|_| panic!("no number after {label:?} in {line:?}"))
}

pub fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Bytes a child wrote, as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs a command with its output captured and a time bound: a run that overruns is
/// killed and the test fails with what it had printed.
pub fn run_bounded(mut cmd: Command, limit: Duration) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    let start = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().expect("output");
            panic!(
                "timed out after {limit:?}; stdout:\n{}\nstderr:\n{}",
                text(&out.stdout),
                text(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts `cmd` with its output captured, does `meanwhile` (kills its server, say)
/// once `delay` has passed, and returns its output; the command must end within
/// 10 s of that.
pub fn run_interrupted(mut cmd: Command, delay: Duration, meanwhile: impl FnOnce()) -> Output {
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    std::thread::sleep(delay);
    meanwhile();
    let start = Instant::now();
    let out = child.wait_with_output().expect("output");
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "still running {:?} after the interruption",
        start.elapsed()
    );
    out
}

/// The value of the metric `name` (the one without a variant) in a `--json` document.
pub fn metric(doc: &serde_json::Value, name: &str) -> f64 {
    doc["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name && m.get("variant").is_none())
        .unwrap_or_else(|| panic!("no metric {name}"))["value"]
        .as_f64()
        .unwrap()
}

/// A loop device over a small file of its own, for tests that need a block device to
/// point at (a refusal to write one): should hostbench ever write to it, only that
/// file changes, never a disk of the host. Detached and its file removed on drop.
pub struct LoopDevice {
    pub path: String,
    backing: PathBuf,
}

/// What the loop device's file holds until something writes to the device.
const LOOP_FILL: u8 = 0xa5;
const LOOP_BYTES: usize = 1 << 20;

impl LoopDevice {
    /// `None` (after `missing`) without root, losetup or a loop driver.
    pub fn new() -> Option<Self> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            missing(
                "root (to attach a loop device)",
                "run the tests as root, as CI does",
            );
            return None;
        }
        if !have("losetup") {
            missing("losetup", "install Debian's mount package");
            return None;
        }
        let backing = data_home().join("loop.img");
        std::fs::write(&backing, vec![LOOP_FILL; LOOP_BYTES]).expect("loop device file");
        let out = Command::new("losetup")
            .arg("--find")
            .arg("--show")
            .arg(&backing)
            .output()
            .expect("losetup runs");
        if !out.status.success() {
            let _ = std::fs::remove_file(&backing);
            missing(
                &format!("a free loop device ({})", text(&out.stderr).trim()),
                "load the kernel's loop driver (modprobe loop) or free one (losetup -D)",
            );
            return None;
        }
        Some(LoopDevice {
            path: text(&out.stdout).trim().to_string(),
            backing,
        })
    }

    /// Whether nothing was written to the device.
    pub fn untouched(&self) -> bool {
        // Writes through the device reach the file once the loop driver flushes.
        let _ = Command::new("blockdev")
            .args(["--flushbufs", &self.path])
            .status();
        std::fs::read(&self.backing)
            .is_ok_and(|b| b.len() == LOOP_BYTES && b.iter().all(|&x| x == LOOP_FILL))
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.path]).status();
        let _ = std::fs::remove_file(&self.backing);
    }
}

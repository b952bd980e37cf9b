//! `hostbench disk`: every engine runs, results are sane, only its own files are
//! touched and all are removed, bad input is refused, and — where the blkio cgroup
//! controller exists — a disk throttled to a known speed measures as that speed.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

fn disk_json(dir: &Path, extra: &[&str]) -> Value {
    let mut args = vec![
        "disk",
        "--dir",
        dir.to_str().unwrap(),
        "--size",
        "16M",
        "--time",
        "1s",
        "--warmup",
        "200ms",
        "--json",
    ];
    args.extend_from_slice(extra);
    let out = run(&args);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("JSON document")
}

fn metric(o: &Value, name: &str) -> f64 {
    o["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {o}"))["value"]
        .as_f64()
        .unwrap()
}

fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn standard_tests_measure_and_clean_up() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("precious"), b"user data").unwrap();
    let v = disk_json(dir.path(), &["--tests", "randread,seqwrite,mixed,fsync"]);
    let outcomes = v["outcomes"].as_array().unwrap();
    assert_eq!(outcomes.len(), 4);
    assert!(metric(&outcomes[0], "read_iops") > 0.0);
    assert!(metric(&outcomes[1], "write_bytes_per_sec") > 0.0);
    assert!(
        metric(&outcomes[2], "read_iops") > metric(&outcomes[2], "write_iops"),
        "70/30 mix"
    );
    assert!(metric(&outcomes[3], "fsync_per_sec") > 0.0);
    assert!(metric(&outcomes[0], "cpu_per_io") > 0.0);
    assert!(!outcomes[0]["series"].as_array().unwrap().is_empty());
    let note = outcomes[0]["notes"][0].as_str().unwrap();
    assert!(
        note.contains("direct I/O") && note.contains("engine"),
        "{note}"
    );
    assert_eq!(leftovers(dir.path()), ["precious"]);
    assert_eq!(
        std::fs::read(dir.path().join("precious")).unwrap(),
        b"user data"
    );
}

#[test]
fn every_engine_runs() {
    let dir = tempfile::tempdir().unwrap();
    for engine in ["io_uring", "libaio", "psync", "sync"] {
        let v = disk_json(
            dir.path(),
            &["--tests", "randread", "--engine", engine, "--iodepth", "4"],
        );
        let o = &v["outcomes"][0];
        assert!(metric(o, "read_iops") > 0.0, "{engine}");
        assert!(
            o["notes"][0]
                .as_str()
                .unwrap()
                .contains(&format!("engine {engine}")),
            "{engine}: {}",
            o["notes"]
        );
    }
}

#[test]
fn custom_pattern_and_buffered() {
    let dir = tempfile::tempdir().unwrap();
    let v = disk_json(
        dir.path(),
        &[
            "--pattern",
            "readwrite",
            "--bs",
            "64K",
            "--rwmix",
            "50",
            "--buffered",
            "--threads",
            "2",
        ],
    );
    let o = &v["outcomes"][0];
    assert!(metric(o, "read_iops") > 0.0 && metric(o, "write_iops") > 0.0);
    assert!(
        o["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains("page cache"))
    );
}

#[test]
fn bad_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let cases: &[(&[&str], i32, &str)] = &[
        (
            &["disk", "--dir", "/nonexistent/place", "--size", "1M"],
            2,
            "/nonexistent/place",
        ),
        (&["disk", "--dir", d, "--bs", "1000"], 2, "bs=1000"),
        (&["disk", "--dir", d, "--tests", "bogus"], 2, "bogus"),
        (&["disk", "--dir", d, "--iodepth", "0"], 2, "iodepth"),
        (&["disk", "--dir", d, "--size", "8Q"], 2, "8Q"),
        (
            &["disk", "--dir", d, "--size", "1000T", "--tests", "randread"],
            1,
            "not enough free space",
        ),
    ];
    for (args, code, needle) in cases {
        let out = run(args);
        assert_eq!(out.status.code(), Some(*code), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(needle), "{args:?}: {}", stderr(&out));
    }
    assert!(leftovers(dir.path()).is_empty());
    if Path::new("/dev/shm").exists() {
        let out = run(&[
            "disk", "--dir", "/dev/shm", "--size", "1M", "--tests", "randread",
        ]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains("RAM"), "{}", stderr(&out));
    } else {
        missing(
            "/dev/shm (a RAM-backed directory to refuse)",
            "mount a tmpfs there: mount -t tmpfs tmpfs /dev/shm",
        );
    }
}

#[test]
fn ctrl_c_removes_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let child = hostbench()
        .args([
            "disk",
            "--dir",
            dir.path().to_str().unwrap(),
            "--size",
            "16M",
            "--tests",
            "randread",
            "--time",
            "30s",
            "--json",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["outcomes"][0]["interrupted"], true);
    assert!(leftovers(dir.path()).is_empty());
}

/// Ctrl-C during the warm-up: nothing was measured, so no table of zeros is printed
/// and no run is saved (it was kept as "0.00 IOPS, 0.0 ns").
#[test]
fn ctrl_c_during_the_warm_up_keeps_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let child = hostbench()
        .args(["disk", "--dir", data.to_str().unwrap(), "--size", "16M"])
        .args(["--tests", "randread", "--time", "5s", "--warmup", "30s"])
        .args(["--db", db.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(
        err.contains(
            "randread was stopped during its warm-up (--warmup 30.0s): nothing was measured"
        ),
        "{err}"
    );
    assert!(!err.contains("saved as run"), "{err}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("ops/s"));
    let history = hostbench()
        .args(["history", "--json", "--db", db.to_str().unwrap()])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&history.stdout).unwrap();
    assert_eq!(
        v["runs"].as_array().map(Vec::len),
        Some(0),
        "{}",
        String::from_utf8_lossy(&history.stdout)
    );
}

/// A blkio (cgroup v1) group of the test's own, for the test directory's device, with
/// its limits lifted and the group removed however the test ends.
struct BlkioGroup(std::path::PathBuf, String);

impl BlkioGroup {
    /// The group and a test directory on the throttled device; None (after `missing`)
    /// without the controller or root.
    fn new() -> Option<(BlkioGroup, tempfile::TempDir)> {
        let cgroups = Path::new("/sys/fs/cgroup/blkio");
        if !cgroups.join("blkio.throttle.read_iops_device").exists() {
            missing(
                &format!("the cgroup-v1 blkio controller at {}", cgroups.display()),
                "run the tests on a host whose kernel mounts it (as this project's machines do)",
            );
            return None;
        }
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            missing(
                "root",
                "run the tests as root: a throttle is set by writing to the blkio cgroup",
            );
            return None;
        }
        let dir = tempfile::tempdir_in(
            std::env::var("HOSTBENCH_TEST_DISK_DIR").unwrap_or_else(|_| "/var/tmp".into()),
        )
        .unwrap();
        let dev = {
            use std::os::unix::fs::MetadataExt;
            let d = std::fs::metadata(dir.path()).unwrap().dev();
            format!("{}:{}", libc::major(d), libc::minor(d))
        };
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let cg = BlkioGroup(
            cgroups.join(format!("hostbench-truth-{}-{n}", std::process::id())),
            dev,
        );
        std::fs::create_dir(&cg.0).unwrap();
        Some((cg, dir))
    }

    fn limit(&self, file: &str, value: u64) {
        std::fs::write(self.0.join(file), format!("{} {value}", self.1)).unwrap();
    }
}

impl Drop for BlkioGroup {
    fn drop(&mut self) {
        for f in [
            "blkio.throttle.read_iops_device",
            "blkio.throttle.read_bps_device",
        ] {
            let _ = std::fs::write(self.0.join(f), format!("{} 0", self.1));
        }
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// A burst: the throttle starts at 8,000 IOPS and the test lowers it to 2,000 four
/// seconds into a 10 s run. Both phases must read within 5 % of their limits, the
/// switch within 1 s of when the test made it, and the headline must be the
/// sustained 2,000.
#[test]
fn a_throttle_lowered_mid_run_reads_as_burst_then_sustained() {
    let Some((cg, dir)) = BlkioGroup::new() else {
        return;
    };
    const FILE: &str = "blkio.throttle.read_iops_device";
    cg.limit(FILE, 8000);
    let script = format!(
        "echo $$ > {}/cgroup.procs && exec {} disk --dir {} --size 64M --tests randread \
         --time 10s --warmup 1s --json --no-save",
        cg.0.display(),
        env!("CARGO_BIN_EXE_hostbench"),
        dir.path().display()
    );
    let mut child = std::process::Command::new("sh")
        .args(["-c", &script])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The run's measured part starts after the layout and the 1 s warm-up; the end
    // is known more surely than the start, so the switch is placed from the end.
    std::thread::sleep(Duration::from_secs(6));
    cg.limit(FILE, 2000);
    let switched = std::time::Instant::now();
    let mut stdout = Vec::new();
    std::io::Read::read_to_end(child.stdout.as_mut().unwrap(), &mut stdout).unwrap();
    let ended = std::time::Instant::now();
    let status = child.wait().unwrap();
    assert!(status.success());
    let v: Value = serde_json::from_slice(&stdout).unwrap();
    let o = &v["outcomes"][0];
    let sustained = metric(o, "read_iops");
    let burst = metric(o, "read_iops_burst");
    let burst_s = metric(o, "burst_seconds");
    let expected_burst_s = 10.0 - (ended - switched).as_secs_f64();
    assert!(
        (sustained / 2000.0 - 1.0).abs() <= 0.05,
        "sustained {sustained:.0} IOPS, limit 2000"
    );
    assert!(
        (burst / 8000.0 - 1.0).abs() <= 0.05,
        "burst {burst:.0} IOPS, limit 8000"
    );
    assert!(
        (burst_s - expected_burst_s).abs() <= 1.0,
        "burst of {burst_s:.1} s, the switch came {expected_burst_s:.1} s into the run"
    );
    let notes = o["notes"].to_string();
    assert!(
        notes.contains("burst, then a lower sustained rate"),
        "{notes}"
    );
}

/// A disk of known speed: the blkio cgroup (v1) throttles this process's reads of the
/// device under the test directory, and the measurement must land on the limit, from
/// above as from below: a figure inflated by the way it is computed fails as a low
/// one does.
#[test]
fn throttled_device_measures_its_limit() {
    let Some((cg, dir)) = BlkioGroup::new() else {
        return;
    };
    let dev = cg.1.clone();
    // Runs `args` under the limit; returns stdout as JSON.
    let under_limit = |limit_file: &str, limit: u64, args: &str| -> Value {
        std::fs::write(cg.0.join(limit_file), format!("{dev} {limit}")).unwrap();
        let script = format!(
            "echo $$ > {}/cgroup.procs && exec {} {args}",
            cg.0.display(),
            env!("CARGO_BIN_EXE_hostbench"),
        );
        let out = std::process::Command::new("sh")
            .args(["-c", &script])
            .env("XDG_DATA_HOME", data_home())
            .output()
            .unwrap();
        std::fs::write(cg.0.join(limit_file), format!("{dev} 0")).unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let measure = |limit_file: &str, limit: u64, test: &str, metric_name: &str| -> f64 {
        let v = under_limit(
            limit_file,
            limit,
            &format!(
                "disk --dir {} --size 64M --tests {test} --time 4s --warmup 1s --json",
                dir.path().display()
            ),
        );
        metric(&v["outcomes"][0], metric_name)
    };
    let iops = measure(
        "blkio.throttle.read_iops_device",
        400,
        "randread",
        "read_iops",
    );
    let bps = measure(
        "blkio.throttle.read_bps_device",
        16 << 20,
        "seqread",
        "read_bytes_per_sec",
    );
    // The fio personality on the same throttled device, fio's own command line.
    let fio = under_limit(
        "blkio.throttle.read_iops_device",
        400,
        &format!(
            "fio --name=truth --filename={}/fio.0 --size=64m --direct=1 --rw=randread --bs=4k \
             --ioengine=libaio --iodepth=16 --runtime=4 --ramp_time=1 --time_based --output-format=json",
            dir.path().display()
        ),
    );
    let fio_iops = fio["jobs"][0]["read"]["iops"].as_f64().unwrap();
    drop(cg);
    // The throttle hands out exactly its budget while requests queue at depth, so a
    // correct figure is the limit itself: here native randread, seqread and the fio
    // personality all read 400.00 IOPS and 16 MiB/s to 0.01 % in eleven runs (alone,
    // beside the other disk tests, and under a 2-CPU stress-ng), and Debian's fio
    // reads 399.9 to 400.6. One per cent (16 requests of the 1600, or a 40 ms slip of
    // the ramp's boundary) leaves room for a busy host yet fails the error this band
    // caught: a span cut at the last throttle burst, which read 409 IOPS (+2.3 %).
    const TOLERANCE: f64 = 0.01;
    let within = |measured: f64, limit: f64| (measured / limit - 1.0).abs() <= TOLERANCE;
    let what = |measured: f64, limit: f64, unit: &str| {
        format!(
            "{measured:.1} {unit} against a limit of {limit} {unit} on {dev}: {:+.1} %, \
             outside ±{:.0} % (far above: the throttle did not take)",
            (measured / limit - 1.0) * 100.0,
            TOLERANCE * 100.0
        )
    };
    assert!(within(iops, 400.0), "{}", what(iops, 400.0, "IOPS"));
    assert!(
        within(fio_iops, 400.0),
        "fio personality: {}",
        what(fio_iops, 400.0, "IOPS")
    );
    let limit_bps = (16u64 << 20) as f64;
    assert!(within(bps, limit_bps), "{}", what(bps, limit_bps, "B/s"));
}

/// `--expect` measures against a provider's promise: the percentage achieved, and
/// exit 1 below the threshold; a bad spec is refused before anything runs.
#[test]
fn expect_checks_a_providers_promise() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let base = [
        "disk", "--dir", d, "--size", "16M", "--tests", "randread", "--time", "1s", "--warmup",
        "200ms",
    ];
    // A promise far above any disk: measured as a small share, so exit 1.
    let mut args = base.to_vec();
    args.extend([
        "--expect",
        "aws:io2:1000GiB:iops=1000000000:mbps=100",
        "--json",
    ]);
    let out = run(&args);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let e = &v["expectation"];
    assert_eq!(e["pass"], false);
    assert_eq!(e["checks"][0]["test"], "randread");
    let measured = e["checks"][0]["measured"].as_f64().unwrap();
    let percent = e["checks"][0]["percent"].as_f64().unwrap();
    assert!((percent - measured / 1e9 * 100.0).abs() < 1e-9);
    // Seed 002's disk, with a threshold any disk meets.
    let mut args = base.to_vec();
    args.extend([
        "--expect",
        "tencent:premium:100GiB",
        "--expect-threshold",
        "0",
    ]);
    let out = run(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("of the promised 2,600 IOPS"),
        "{}",
        stdout(&out)
    );
    // Refused up front, naming the fix.
    let mut args = base.to_vec();
    args.extend(["--expect", "tencent:floppy:100GiB"]);
    let started = std::time::Instant::now();
    let out = run(&args);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("CLOUD_PREMIUM"), "{}", stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(1));
}

#[test]
fn limits_lists_the_promises() {
    let out = run(&["limits", "tencent", "--disk-size", "100GiB"]);
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(
        text.contains("CLOUD_PREMIUM") && text.contains("2,600"),
        "{text}"
    );
    let out = run(&["limits", "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v.as_array()
            .unwrap()
            .iter()
            .all(|o| o["source"].as_str().unwrap().starts_with("http"))
    );
    assert_eq!(run(&["limits", "nocloud"]).status.code(), Some(2));
}

/// Every row of `hostbench limits` says what the type promises, or in words why it
/// promises nothing: no bare dash with a unit after it (`- MB/s`).
#[test]
fn every_limits_row_reads() {
    let out = run(&["limits", "--disk-size", "500GiB"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    for line in text.lines().skip(1).take_while(|l| !l.is_empty()) {
        let cells: Vec<&str> = line
            .split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect();
        // provider, type, model, IOPS, throughput, then the two at-size figures.
        let (iops, throughput) = (cells[3], cells[4]);
        for cell in [iops, throughput] {
            assert!(
                cell.chars().any(|c| c.is_ascii_digit())
                    || cell == "none published"
                    || cell == "not on record",
                "{line}"
            );
        }
    }
    let row = |kind: &str| {
        text.lines()
            .find(|l| l.split_whitespace().nth(1) == Some(kind))
            .unwrap_or_else(|| panic!("no {kind} row: {text}"))
            .to_string()
    };
    assert!(row("cloud").contains("none published"), "{}", row("cloud"));
    // AWS gp2 grows 3 IOPS per GiB from nothing: 1,500 at 500 GiB.
    assert!(row("gp2").contains("min(3/GiB, 16000)"), "{}", row("gp2"));
    assert!(row("gp2").contains("1,500"), "{}", row("gp2"));
}

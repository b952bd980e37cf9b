//! The fio personality: COMPAT.md's job file and command lines run unchanged (sizes
//! and times shrunk), the reports have fio's layout, keys and fields — checked
//! against Debian's fio side by side where it is installed — and bad input is
//! refused by name.

mod common;

use common::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Output;

fn fio_hb(dir: &Path, args: &[&str]) -> Output {
    let mut full = vec!["fio"];
    full.extend_from_slice(args);
    hostbench().current_dir(dir).args(&full).output().unwrap()
}

fn fio_real(dir: &Path, args: &[&str]) -> Output {
    std::process::Command::new("fio")
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

/// Seed 001's job file with its sizes and times shrunk; `stonewall` on the section
/// line for one job, as one copy of the vendor's guide writes it.
fn seed_job_file(dir: &Path) -> String {
    format!(
        "[global]\nioengine=libaio\ndirect=1\nthread=1\nnorandommap=1\nrandrepeat=0\nruntime=1\n\
         ramp_time=1\nsize=16m\ndirectory={}\n\
         [read4k-rand]\nstonewall\ngroup_reporting\nbs=4k\nrw=randread\nnumjobs=8\niodepth=32\n\
         [read64k-seq] stonewall\ngroup_reporting\nbs=64k\nrw=read\nnumjobs=4\niodepth=8\n\
         [write4k-rand]\nstonewall\ngroup_reporting\nbs=4k\nrw=randwrite\nnumjobs=2\niodepth=4\n\
         [write64k-seq]\nstonewall\ngroup_reporting\nbs=64k\nrw=write\nnumjobs=2\niodepth=4\n",
        dir.display()
    )
}

#[test]
fn seed_job_file_runs_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("fio_sys.conf");
    std::fs::write(&job, seed_job_file(dir.path())).unwrap();
    let out = fio_hb(dir.path(), &[job.to_str().unwrap(), "--output-format=json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let jobs = v["jobs"].as_array().unwrap();
    // group_reporting: one entry per group, named after its job.
    let names: Vec<&str> = jobs
        .iter()
        .map(|j| j["jobname"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["read4k-rand", "read64k-seq", "write4k-rand", "write64k-seq"]
    );
    for (i, (j, dir)) in jobs
        .iter()
        .zip(["read", "read", "write", "write"])
        .enumerate()
    {
        assert_eq!(j["groupid"], i);
        assert!(j[dir]["total_ios"].as_u64().unwrap() > 0, "{j}");
        assert!(j[dir]["iops"].as_f64().unwrap() > 0.0);
        assert_eq!(j["latency_depth"], [32, 8, 4, 4][i]);
    }
    // Each clone works on its own file: jobname.clone.file, as fio names them.
    for f in ["read4k-rand.7.0", "read64k-seq.3.0", "write64k-seq.1.0"] {
        assert!(dir.path().join(f).exists(), "{f}");
    }
    assert_eq!(v["global options"]["ioengine"], "libaio");
}

/// COMPAT.md's four command lines from seed 002, sizes and times shrunk.
#[test]
fn seed_command_lines_run_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let file = format!("--filename={}/testfile", dir.path().display());
    for (rw, bs, depth, jobs, name, label) in [
        ("randread", "4k", "64", "4", "rand_read_4k", "read: IOPS="),
        (
            "randwrite",
            "4k",
            "64",
            "4",
            "rand_write_4k",
            "write: IOPS=",
        ),
        ("read", "256k", "32", "2", "seq_read_256k", "read: IOPS="),
        ("write", "256k", "32", "2", "seq_write_256k", "write: IOPS="),
    ] {
        let args = [
            file.as_str(),
            "--size=32m",
            "--direct=1",
            &format!("--rw={rw}"),
            &format!("--bs={bs}"),
            "--ioengine=libaio",
            &format!("--iodepth={depth}"),
            "--runtime=1",
            &format!("--numjobs={jobs}"),
            &format!("--name={name}"),
        ];
        let out = fio_hb(dir.path(), &args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        let text = stdout(&out);
        assert_eq!(
            text.matches(label).count(),
            jobs.parse::<usize>().unwrap(),
            "{text}"
        );
        assert!(
            text.contains(&format!("{name}: (groupid=0, jobs=1)")),
            "{text}"
        );
        assert!(text.contains("Run status group 0 (all jobs):"), "{text}");
    }
}

/// The labels of fio's normal report in order, numbers and units left out, and
/// without the rows whose presence depends on the data: the latency classes, and
/// the bw/iops sample lines (none when a job ends within one 500 ms window).
fn skeleton(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.trim_start().starts_with("lat (") || l.contains("): min="))
        .filter(|l| !l.starts_with("   bw (") && !l.starts_with("   iops        :"))
        .filter(|l| !l.contains("Laying out") && !l.trim().is_empty())
        .map(|l| {
            let label: String = l
                .chars()
                .take_while(|c| !c.is_ascii_digit() && *c != '=')
                .collect();
            label
                .replace("(nsec)", "(unit)")
                .replace("(usec)", "(unit)")
                .replace("(msec)", "(unit)")
        })
        .collect()
}

fn json_keys(v: &Value, prefix: &str, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                let path = format!("{prefix}/{k}");
                out.insert(path.clone());
                // Percentile and bucket keys are data; options echo what was given.
                if !["percentile", "bins", "job options", "global options"].contains(&k.as_str()) {
                    json_keys(v, &path, out);
                }
            }
        }
        Value::Array(a) => {
            if let Some(first) = a.first() {
                json_keys(first, &format!("{prefix}[]"), out);
            }
        }
        _ => {}
    }
}

fn parse_json(out: &Output) -> Value {
    let text = stdout(out);
    let start = text.find('{').expect("a JSON document");
    serde_json::from_str(&text[start..]).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// Side by side with Debian's fio: the same command gives the same report layout,
/// the same JSON keys, and terse lines with the same number of fields.
#[test]
fn reports_match_real_fio() {
    if !have("fio") {
        missing("fio", "scripts/test.sh installs it (Debian: fio)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = format!("--filename={}/f", dir.path().display());
    let cases: [&[&str]; 3] = [
        &[
            "--size=16m",
            "--direct=1",
            "--rw=randrw",
            "--rwmixread=70",
            "--bs=4k",
            "--ioengine=libaio",
            "--iodepth=4",
            "--runtime=1",
            "--time_based",
            "--name=mixed",
        ],
        &[
            "--size=4m",
            "--rw=write",
            "--bs=4k",
            "--ioengine=sync",
            "--fdatasync=1",
            "--name=fsync",
        ],
        &[
            "--size=16m",
            "--direct=1",
            "--rw=read",
            "--bs=64k",
            "--ioengine=psync",
            "--numjobs=2",
            "--group_reporting",
            "--runtime=1",
            "--time_based",
            "--name=seq",
        ],
    ];
    for case in cases {
        let mut args = vec![file.as_str()];
        args.extend_from_slice(case);
        let (o, t) = (fio_hb(dir.path(), &args), fio_real(dir.path(), &args));
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        assert!(
            t.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&t.stderr)
        );
        let (ot, tt) = (stdout(&o), String::from_utf8_lossy(&t.stdout).into_owned());
        // fio-3.33 prints clat and lat in one unit when they are close; the unit
        // is part of the label we compare, so normalise both sides the same way.
        assert_eq!(
            skeleton(&ot),
            skeleton(&tt),
            "{args:?}\n--- hostbench ---\n{ot}\n--- fio ---\n{tt}"
        );
        if case.contains(&"--time_based") {
            for text in [&ot, &tt] {
                assert!(
                    text.contains("   bw (") && text.contains("   iops        : min="),
                    "{text}"
                );
            }
        }
        for format in ["--output-format=json", "--output-format=json+"] {
            let mut a = args.clone();
            a.push(format);
            let (o, t) = (fio_hb(dir.path(), &a), fio_real(dir.path(), &a));
            let (mut ok, mut tk) = (BTreeSet::new(), BTreeSet::new());
            json_keys(&parse_json(&o), "", &mut ok);
            json_keys(&parse_json(&t), "", &mut tk);
            ok.remove("/hostbench");
            assert_eq!(ok, tk, "{a:?}");
        }
        let mut a = args.clone();
        a.push("--minimal");
        let (o, t) = (fio_hb(dir.path(), &a), fio_real(dir.path(), &a));
        let fields = |out: &Output| stdout(out).trim().split(';').count();
        assert_eq!(
            fields(&o),
            fields(&t),
            "{a:?}\n{}\n{}",
            stdout(&o),
            stdout(&t)
        );
    }
}

#[test]
fn output_file_is_written_whole() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let out = fio_hb(
        dir.path(),
        &[
            "--name=j",
            "--size=4m",
            "--rw=read",
            "--output-format=json",
            &format!("--output={}", report.display()),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).is_empty());
    let v: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(v["jobs"][0]["read"]["io_bytes"], 4 << 20);
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().all(|n| !n.contains("tmp")),
        "temporary files left: {names:?}"
    );
}

#[test]
fn size_limited_jobs_cover_every_block_once() {
    // Without norandommap, a random job of `size` bytes reads each block once.
    let dir = tempfile::tempdir().unwrap();
    let out = fio_hb(
        dir.path(),
        &[
            "--name=cover",
            "--size=8m",
            "--rw=randread",
            "--bs=4k",
            "--loops=2",
            "--output-format=json",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["jobs"][0]["read"]["total_ios"], 2 * 2048);
    assert_eq!(v["jobs"][0]["read"]["io_bytes"], 16 << 20);
}

#[test]
fn bad_input_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases: [(&[&str], &str); 6] = [
        (
            &["--name=x", "--size=1m", "--rate_iops=100"],
            "'--rate_iops'",
        ),
        (&["--name=x", "--size=1m", "--rw=sideways"], "sideways"),
        (&["--name=x", "--bs=4k"], "size="),
        (
            &["--name=x", "--size=1m", "--ioengine=posixaio"],
            "posixaio",
        ),
        (&["--name=x", "--size=1m", "--time_based"], "runtime"),
        (&["/nonexistent/job.fio"], "/nonexistent/job.fio"),
    ];
    for (args, needle) in cases {
        let out = fio_hb(d, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(needle), "{args:?}: {}", stderr(&out));
    }
    // A job file with a typo names the file and line.
    let job = d.join("typo.fio");
    std::fs::write(&job, "[global]\nsize=1m\n[j]\nbs=4k\niodepht=4\n").unwrap();
    let out = fio_hb(d, &[job.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("typo.fio:5"), "{}", stderr(&out));
    // Nothing was created by the refused runs.
    let left: Vec<_> = std::fs::read_dir(d).unwrap().collect();
    assert_eq!(left.len(), 1, "{left:?}");
}

#[test]
fn writing_a_block_device_needs_a_flag() {
    // A loop device of the test's own, so a regression costs a scratch file, not the
    // host's disk.
    let Some(dev) = LoopDevice::new() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = fio_hb(
        dir.path(),
        &[
            &format!("--filename={}", dev.path),
            "--rw=write",
            "--name=danger",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--allow-device"), "{}", stderr(&out));
    assert!(dev.untouched(), "{} was written", dev.path);
}

/// Ctrl-C while the file is being laid out: exit 130 as for Ctrl-C during the jobs
/// (it was 1, an error), and the half-made file is gone.
#[test]
fn ctrl_c_during_the_layout_exits_130_and_leaves_no_file() {
    let dir = tempfile::tempdir_in(
        std::env::var("HOSTBENCH_TEST_DISK_DIR").unwrap_or_else(|_| "/var/tmp".into()),
    )
    .unwrap();
    let child = hostbench()
        .current_dir(dir.path())
        .env("HOSTBENCH_NO_SAVE", "1")
        .args(["fio", "--name=big", "--size=3g", "--rw=read", "--runtime=5"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1200));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("fio: terminating on signal 2"),
        "{}",
        stderr(&out)
    );
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

/// Ctrl-C during the ramp: fio's report of zeros is printed as fio prints it, but
/// the run is not kept (it measured nothing).
#[test]
fn ctrl_c_during_the_ramp_keeps_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("runs.db");
    let child = hostbench()
        .current_dir(dir.path())
        .env("HOSTBENCH_DB", &db)
        .env("HOSTBENCH_DEBUG", "1")
        .args(["fio", "--name=ramp", "--size=16m", "--rw=randread"])
        .args(["--ramp_time=30", "--runtime=5", "--time_based"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2000));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("not kept: interrupted before anything was measured"),
        "{}",
        stderr(&out)
    );
    assert!(!stderr(&out).contains("kept as run"), "{}", stderr(&out));
}

#[test]
fn ctrl_c_prints_what_ran() {
    let dir = tempfile::tempdir().unwrap();
    let child = hostbench()
        .current_dir(dir.path())
        .args([
            "fio",
            "--name=stop",
            "--size=16m",
            "--rw=randread",
            "--runtime=30",
            "--time_based",
            "--output-format=json",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2000));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(stderr(&out).contains("terminating on signal 2"));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let runtime = v["jobs"][0]["read"]["runtime"].as_u64().unwrap();
    assert!((100..10_000).contains(&runtime), "{runtime}");
}

/// A loop device attached for one test and detached however the test ends.
struct Loop(String);

impl Loop {
    fn over(file: &Path) -> Loop {
        let o = std::process::Command::new("losetup")
            .args(["-f", "--show"])
            .arg(file)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        Loop(String::from_utf8_lossy(&o.stdout).trim().to_string())
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = std::process::Command::new("losetup")
            .args(["-d", &self.0])
            .status();
    }
}

/// The RAM note is about where the data is: a block device is not "on tmpfs" because
/// its node sits in /dev (it said so of every device); a loop device over a tmpfs
/// file is, and a file on tmpfs still is.
#[test]
fn the_ram_note_follows_the_data_not_the_device_node() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 || !have("losetup") {
        missing(
            "root and losetup",
            "run the tests as root on a host with util-linux (loop devices are attached)",
        );
        return;
    }
    let disk = tempfile::tempdir_in("/var/tmp").unwrap();
    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    let note_for = |target: &str| {
        let o = hostbench()
            .current_dir(disk.path())
            .env("HOSTBENCH_NO_SAVE", "1")
            .args(["fio", "--name=j", "--rw=read", "--size=4m", "--runtime=1"])
            .arg(format!("--filename={target}"))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        stderr(&o)
            .lines()
            .find(|l| l.contains("keeps its data in RAM"))
            .map(str::to_string)
    };
    let mut images = Vec::new();
    for dir in [disk.path(), shm.path()] {
        let img = dir.join("loop.img");
        std::fs::File::create(&img)
            .unwrap()
            .set_len(16 << 20)
            .unwrap();
        images.push(img);
    }
    let on_disk = Loop::over(&images[0]);
    let on_shm = Loop::over(&images[1]);
    assert_eq!(note_for(&on_disk.0), None);
    let note = note_for(&on_shm.0).expect("a note for a loop device over tmpfs");
    assert!(
        note.contains(&format!("{}, a loop device over ", on_shm.0)) && note.contains("on tmpfs"),
        "{note}"
    );
    let file = shm.path().join("f");
    let note = note_for(file.to_str().unwrap()).expect("a note for a file on tmpfs");
    assert!(note.contains("runs on tmpfs"), "{note}");
}

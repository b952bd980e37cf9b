//! The sysbench personality: every sysbench cpu/memory line of COMPAT.md (with a short
//! --time), sysbench's fields and their arithmetic, its messages for bad input, and the
//! report's line structure against Debian's real sysbench on the same command.

mod common;
use common::*;
use std::process::Output;

fn sysbench(args: &[&str]) -> Output {
    let mut full = vec!["sysbench"];
    full.extend_from_slice(args);
    run(&full)
}

/// Checks the generic report and returns (events, total time, eps-or-0).
fn check_general_report(text: &str) -> (f64, f64) {
    for field in [
        "General statistics:",
        "Latency (ms):",
        "         min:",
        "         avg:",
        "         max:",
        "         95th percentile:",
        "         sum:",
        "Threads fairness:",
        "    events (avg/stddev):",
        "    execution time (avg/stddev):",
    ] {
        assert!(text.contains(field), "missing {field:?} in:\n{text}");
    }
    let events = number_after(text, "total number of events:");
    let time = number_after(text, "total time:");
    assert!(events > 0.0 && time > 0.0, "{text}");
    let min = number_after(text, "min:");
    let max = number_after(text, "max:");
    assert!(min <= max, "{text}");
    (events, time)
}

/// COMPAT.md: `sysbench --threads=4 --time=60 --report-interval=5 cpu run`, shortened.
#[test]
fn cpu_with_threads_and_intervals() {
    let out = sysbench(&[
        "--threads=4",
        "--time=3",
        "--report-interval=1",
        "cpu",
        "run",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("sysbench 1.0.20 "), "{text}");
    assert!(text.contains("Number of threads: 4\nReport intermediate results every 1 second(s)\n"));
    let intervals: Vec<&str> = text.lines().filter(|l| l.starts_with("[ ")).collect();
    assert!((1..=3).contains(&intervals.len()), "{text}");
    assert!(
        intervals[0].starts_with("[ 1s ] thds: "),
        "{}",
        intervals[0]
    );
    assert!(intervals[0].contains(" eps: ") && intervals[0].contains(" lat (ms,95%): "));
    let eps = number_after(&text, "events per second:");
    let (events, time) = check_general_report(&text);
    assert!(
        (events / time / eps - 1.0).abs() < 0.01,
        "eps {eps} != {events}/{time}"
    );
    let fairness = number_after(&text, "events (avg/stddev):");
    assert!((fairness * 4.0 - events).abs() < 1.0);
}

/// COMPAT.md: `sysbench cpu --cpu-max-prime=20000 run`.
#[test]
fn cpu_max_prime() {
    let out = sysbench(&["cpu", "--cpu-max-prime=20000", "--time=1", "run"]);
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(text.contains("Prime numbers limit: 20000\n"), "{text}");
    assert!(
        text.contains("CPU speed:\n    events per second:"),
        "{text}"
    );
    check_general_report(&text);
}

fn check_memory(args: &[&str], block: f64, header: &str) {
    let out = sysbench(args);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains(header), "{header:?} not in:\n{text}");
    let ops = number_after(&text, "Total operations:");
    let per_sec = text
        .lines()
        .find(|l| l.starts_with("Total operations:"))
        .unwrap();
    assert!(per_sec.ends_with(" per second)"), "{per_sec}");
    let line = text
        .lines()
        .find(|l| l.contains("MiB transferred ("))
        .expect("MiB line");
    let transferred: f64 = line.split_whitespace().next().unwrap().parse().unwrap();
    assert!(
        (transferred - ops * block / 1048576.0).abs() < 0.01,
        "{line}"
    );
    assert!(line.ends_with(" MiB/sec)"), "{line}");
    let (events, _) = check_general_report(&text);
    assert_eq!(events, ops);
}

/// COMPAT.md's three memory lines (time-bounded where the total would take long).
#[test]
fn memory_lines_from_compat() {
    check_memory(
        &[
            "memory",
            "--memory-block-size=8K",
            "--memory-total-size=10G",
            "--memory-oper=read",
            "--memory-access-mode=rnd",
            "--time=1",
            "run",
        ],
        8192.0,
        "  block size: 8KiB\n  total size: 10240MiB\n  operation: read\n  scope: global\n",
    );
    check_memory(
        &[
            "memory",
            "--memory-block-size=8K",
            "--memory-total-size=10G",
            "--memory-oper=write",
            "--time=1",
            "run",
        ],
        8192.0,
        "operation: write",
    );
    check_memory(
        &[
            "memory",
            "--memory-block-size=1M",
            "--memory-total-size=2G",
            "--memory-oper=write",
            "run",
        ],
        1048576.0,
        "  block size: 1024KiB\n  total size: 2048MiB\n",
    );
}

#[test]
fn memory_quota_is_exact() {
    let out = sysbench(&[
        "--threads=2",
        "memory",
        "--memory-block-size=4K",
        "--memory-total-size=40M",
        "run",
    ]);
    let text = stdout(&out);
    assert_eq!(number_after(&text, "Total operations:"), 10240.0, "{text}");
}

#[test]
fn deprecated_options_warn_and_work() {
    let out = sysbench(&["--test=cpu", "--max-time=1", "--max-requests=0", "run"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).starts_with("WARNING: the --test option is deprecated."));
    let text = stdout(&out);
    assert!(
        text.starts_with("WARNING: --max-time is deprecated, use --time instead\nsysbench 1.0.20"),
        "{text}"
    );
    assert!(number_after(&text, "total time:") < 3.0);
    let out = sysbench(&[
        "--num-threads=2",
        "--max-requests=50",
        "--max-time=0",
        "cpu",
        "run",
    ]);
    let text = stdout(&out);
    assert!(text.contains("WARNING: --num-threads is deprecated"));
    assert!(text.contains("Number of threads: 2"));
    assert_eq!(number_after(&text, "total number of events:"), 50.0);
}

#[test]
fn percentile_histogram_and_verbosity() {
    let text = stdout(&sysbench(&[
        "cpu",
        "--time=1",
        "--percentile=99",
        "--histogram",
        "run",
    ]));
    assert!(text.contains("         99th percentile:"), "{text}");
    assert!(text.contains("Latency histogram (values are in milliseconds)\n       value  ------------- distribution ------------- count\n"));
    assert!(text.contains("\n \nCPU speed:"), "{text}");
    let text = stdout(&sysbench(&["cpu", "--time=1", "--percentile=0", "run"]));
    assert!(text.contains("         percentile stats:               disabled\n"));
    let quiet = sysbench(&["cpu", "--time=1", "--verbosity=0", "run"]);
    assert!(quiet.status.success());
    assert_eq!(stdout(&quiet), "");
    let loud = stdout(&sysbench(&[
        "--threads=2",
        "cpu",
        "--time=1",
        "--verbosity=5",
        "run",
    ]));
    assert!(
        loud.contains("DEBUG: Worker thread (#1) initialized\nThreads started!"),
        "{loud}"
    );
    assert!(
        loud.contains(
            "Time limit exceeded, exiting...\n(last message repeated 1 times)\nDone.\n\n"
        ),
        "{loud}"
    );
}

#[test]
fn threads_and_mutex_tests() {
    let text = stdout(&sysbench(&[
        "--threads=2",
        "--time=1",
        "threads",
        "--thread-yields=100",
        "run",
    ]));
    assert!(
        text.contains("Threads started!\n\n\nGeneral statistics:"),
        "{text}"
    );
    check_general_report(&text);
    let text = stdout(&sysbench(&[
        "--threads=2",
        "mutex",
        "--mutex-locks=2000",
        "run",
    ]));
    let (events, _) = check_general_report(&text);
    assert_eq!(events, 2.0);
}

#[test]
fn help_and_version() {
    let out = sysbench(&["--version"]);
    assert_eq!(stdout(&out), "sysbench 1.0.20\n");
    let text = stdout(&sysbench(&["--help"]));
    assert!(text.starts_with("Usage:\n  sysbench [options]... [testname] [command]\n"));
    assert!(
        text.contains("  --threads=N ")
            && text.contains("  memory - Memory functions speed test\n")
    );
    let text = stdout(&sysbench(&["memory", "help"]));
    assert!(
        text.contains(
            "memory options:\n  --memory-block-size=SIZE    size of memory block for test [1K]\n"
        ),
        "{text}"
    );
}

/// sysbench's own messages and exit code 1; never a panic.
#[test]
fn bad_input_gets_sysbench_messages() {
    let cases: &[(&[&str], &str, &str)] = &[
        (
            &["--threads=0", "cpu", "run"],
            "FATAL: Invalid value for --threads: 0.\n\n",
            "",
        ),
        (
            &["--threads=abc", "cpu", "run"],
            "",
            "Invalid value for the 'threads' option: 'abc'\n",
        ),
        (
            &["--percentile=101", "cpu", "run"],
            "FATAL: Invalid value for --percentile: 101\n",
            "",
        ),
        (
            &["--bogus=1", "cpu", "run"],
            "sysbench 1.0.20",
            "invalid option: --bogus=1\n",
        ),
        (
            &["cpu", "--histogram=yes", "run"],
            "",
            "invalid option: --histogram=yes\n",
        ),
        (
            &["nosuchtest", "run"],
            "FATAL: Cannot find benchmark 'nosuchtest': no such built-in test, file or module\n",
            "",
        ),
        (&["cpu", "nosuchcmd"], "", "Unknown command: nosuchcmd\n"),
        (
            &["cpu"],
            "",
            "The 'cpu' test requires a command argument. See 'sysbench cpu help'\n",
        ),
        (
            &["cpu", "prepare"],
            "",
            "'cpu' test does not implement the 'prepare' command.\n",
        ),
        (
            &["cpu", "run", "extra"],
            "",
            "Unrecognized command line argument: extra\n",
        ),
        (
            &["cpu", "--cpu-max-prime=0", "run"],
            "FATAL: Invalid value of cpu-max-prime: 0.\n",
            "",
        ),
        (
            &["memory", "--memory-block-size=12K", "run"],
            "FATAL: Invalid value for memory-block-size: 12K\n",
            "",
        ),
        (
            &["memory", "--memory-block-size=99999T", "run"],
            "FATAL: Invalid value for memory-block-size: 99999T\n",
            "",
        ),
        (
            &["memory", "--memory-oper=bogus", "run"],
            "FATAL: Invalid value for memory-oper: bogus\n",
            "",
        ),
        (
            &["--verbosity=9", "cpu", "run"],
            "Invalid value for verbosity: 9\n",
            "",
        ),
        (
            &["--rate=10", "cpu", "run"],
            "FATAL: --rate is not supported",
            "",
        ),
    ];
    for (args, out_needle, err_needle) in cases {
        let out = sysbench(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(
            stdout(&out).contains(out_needle),
            "{args:?} stdout: {}",
            stdout(&out)
        );
        assert!(
            stderr(&out).contains(err_needle),
            "{args:?} stderr: {}",
            stderr(&out)
        );
        assert!(!stderr(&out).contains("panicked"), "{args:?}");
    }
    // sysbench turns an unparsable total size into 0, which means "no quota".
    let out = sysbench(&["memory", "--memory-total-size=8Q", "--time=1", "run"]);
    assert!(out.status.success());
    assert!(stdout(&out).contains("  total size: 0MiB\n"));
}

#[test]
fn symlink_invocation() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("sysbench");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_hostbench"), &link).unwrap();
    let out = std::process::Command::new(&link)
        .arg("--version")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "sysbench 1.0.20\n");
}

/// The report's skeleton (every line with its numbers blanked out) must equal real
/// sysbench's on the same command.
fn skeleton(text: &str) -> Vec<String> {
    text.lines()
        // The banner names the implementation.
        .filter(|l| !l.starts_with("sysbench 1.0.20 ("))
        .map(|l| {
            let mut s = String::new();
            let mut in_number = false;
            for c in l.chars() {
                if c.is_ascii_digit() || (in_number && c == '.') {
                    if !in_number {
                        s.push('#');
                    }
                    in_number = true;
                } else {
                    in_number = false;
                    s.push(c);
                }
            }
            // Column padding shifts with the width of the numbers, also inside
            // "(%8.2f per second)": drop the spaces that pad a number.
            s.split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .replace(" #", "#")
        })
        .collect()
}

#[test]
fn line_structure_matches_real_sysbench() {
    if !have("sysbench") {
        missing("sysbench", "scripts/test.sh installs it (Debian: sysbench)");
        return;
    }
    let commands: &[&[&str]] = &[
        &["cpu", "--time=1", "run"],
        &[
            "--threads=2",
            "--time=1",
            "cpu",
            "--cpu-max-prime=20000",
            "run",
        ],
        &["--percentile=99", "--time=1", "cpu", "run"],
        &[
            "memory",
            "--memory-block-size=8K",
            "--memory-total-size=100M",
            "--memory-oper=read",
            "--memory-access-mode=rnd",
            "run",
        ],
        &[
            "memory",
            "--memory-block-size=1M",
            "--memory-total-size=2G",
            "--memory-oper=write",
            "run",
        ],
        &[
            "memory",
            "--memory-oper=none",
            "--memory-total-size=10M",
            "run",
        ],
        &["--threads=2", "--time=1", "threads", "run"],
        &["--threads=2", "mutex", "--mutex-locks=5000", "run"],
        &["--rand-seed=5", "--verbosity=4", "--time=1", "cpu", "run"],
        &["cpu", "help"],
        &["--test=cpu", "--max-time=1", "run"],
    ];
    let here = std::path::Path::new(".");
    for args in commands {
        assert_same_structure(args, here, here);
    }
}

/// Runs hostbench's personality in `ours` and real sysbench in `theirs` with `args`;
/// exit codes and line skeletons must be equal.
fn assert_same_structure(args: &[&str], ours: &std::path::Path, theirs: &std::path::Path) {
    let o = in_dir(ours, args);
    let t = std::process::Command::new("sysbench")
        .current_dir(theirs)
        .args(args)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), t.status.code(), "{args:?}");
    let (o, t) = (stdout(&o), String::from_utf8_lossy(&t.stdout).into_owned());
    assert_eq!(
        skeleton(&o),
        skeleton(&t),
        "{args:?}\n--- hostbench ---\n{o}\n--- sysbench ---\n{t}"
    );
}

fn in_dir(dir: &std::path::Path, args: &[&str]) -> Output {
    let mut full = vec!["sysbench"];
    full.extend_from_slice(args);
    hostbench().current_dir(dir).args(&full).output().unwrap()
}

/// COMPAT.md's three fileio command lines (sizes and times shrunk).
#[test]
fn fileio_lines_from_compat() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let seqwr = [
        "--threads=4",
        "--time=2",
        "--report-interval=1",
        "fileio",
        "--file-num=2",
        "--file-total-size=32M",
        "--file-test-mode=seqwr",
    ];
    let out = in_dir(d, &[&seqwr[..], &["prepare"]].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out)
            .contains("2 files, 16384Kb each, 32Mb total\nCreating files for the test...\n"),
        "{}",
        stdout(&out)
    );
    let out = in_dir(d, &[&seqwr[..], &["run"]].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("Doing sequential write (creation) test\n"),
        "{text}"
    );
    assert!(text.contains("[ 1s ] reads: 0.00 MiB/s writes: "), "{text}");
    assert!(number_after(&text, "written, MiB/s:") > 0.0);
    check_general_report(&text);

    let out = in_dir(d, &[&seqwr[..], &["cleanup"]].concat());
    assert!(out.status.success());

    let rndrw = [
        "--threads=32",
        "--time=2",
        "--test=fileio",
        "--file-num=1",
        "--file-block-size=8192",
        "--file-total-size=16M",
        "--file-test-mode=rndrw",
        "--verbosity=5",
    ];
    let out = in_dir(d, &[&rndrw[..], &["prepare"]].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    let out = in_dir(d, &[&rndrw[..], &["run"]].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let (reads, writes) = (
        number_after(&text, "reads/s:"),
        number_after(&text, "writes/s:"),
    );
    assert!((reads / writes - 1.5).abs() < 0.05, "{reads} / {writes}");
    assert!(text.contains("DEBUG: Worker thread (#31) initialized"));
    let out = in_dir(d, &[&rndrw[..], &["cleanup"]].concat());
    assert!(out.status.success());

    let out = in_dir(
        d,
        &[
            "fileio",
            "--file-test-mode=rndrw",
            "--file-total-size=16M",
            "--max-time=1",
            "--max-requests=0",
            "run",
        ],
    );
    // 128 files of 16M/128 were not prepared: sysbench's own complaint.
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("FATAL: Cannot open file 'test_file.0' errno = 2 (No such file or directory)\nWARNING: Did you forget to run the prepare step?\n"));
    let out = in_dir(
        d,
        &[
            "fileio",
            "--file-total-size=16M",
            "--file-test-mode=rndrw",
            "prepare",
        ],
    );
    assert!(out.status.success());
    let out = in_dir(
        d,
        &[
            "fileio",
            "--file-test-mode=rndrw",
            "--file-total-size=16M",
            "--max-time=1",
            "--max-requests=0",
            "run",
        ],
    );
    assert!(out.status.success(), "{}", stdout(&out));
    assert!(stdout(&out).starts_with("WARNING: --max-time is deprecated, use --time instead\n"));
    let out = in_dir(d, &["fileio", "--file-total-size=16M", "cleanup"]);
    assert!(out.status.success());
    assert_eq!(
        std::fs::read_dir(d).unwrap().count(),
        0,
        "cleanup left files"
    );
}

#[test]
fn fileio_structure_matches_real_sysbench() {
    if !have("sysbench") {
        missing("sysbench", "scripts/test.sh installs it (Debian: sysbench)");
        return;
    }
    let ours_dir = tempfile::tempdir().unwrap();
    let theirs_dir = tempfile::tempdir().unwrap();
    let base = ["fileio", "--file-num=4", "--file-total-size=16M"];
    let commands: Vec<Vec<&str>> = vec![
        vec!["prepare"],
        vec!["prepare"],
        vec!["--file-test-mode=rndrw", "--time=1", "run"],
        vec![
            "--file-test-mode=seqrd",
            "--time=1",
            "--file-extra-flags=direct",
            "--file-merged-requests=4",
            "run",
        ],
        vec![
            "--file-test-mode=rndwr",
            "--events=500",
            "--time=0",
            "--file-fsync-freq=0",
            "--file-fsync-end=off",
            "run",
        ],
        vec![
            "--file-test-mode=seqrewr",
            "--time=1",
            "--file-fsync-all",
            "run",
        ],
        vec!["run"],
        vec!["--file-test-mode=bogus", "run"],
        vec!["cleanup"],
        vec!["--file-test-mode=rndrd", "--time=1", "run"],
    ];
    for extra in commands {
        let args: Vec<&str> = base.iter().copied().chain(extra.iter().copied()).collect();
        assert_same_structure(&args, ours_dir.path(), theirs_dir.path());
    }
    // Sizes that do not divide into MiB or blocks, and values sysbench reads loosely.
    let base = ["fileio", "--file-num=3", "--file-total-size=1000K"];
    let commands: Vec<Vec<&str>> = vec![
        vec!["prepare"],
        vec!["--file-test-mode=rndrw", "--time=1", "run"],
        vec![
            "--file-test-mode=rndwr",
            "--file-fsync-freq=-5",
            "--time=1",
            "run",
        ],
        vec![
            "--file-test-mode=rndrw",
            "--file-rw-ratio=abc",
            "--time=1",
            "run",
        ],
        vec![
            "--file-test-mode=rndrw",
            "--file-rw-ratio=-1",
            "--time=1",
            "run",
        ],
    ];
    for extra in commands {
        let args: Vec<&str> = base.iter().copied().chain(extra.iter().copied()).collect();
        assert_same_structure(&args, ours_dir.path(), theirs_dir.path());
    }
    // sysbench writes whole blocks: each file grows to a multiple of the block size.
    for i in 0..3 {
        let size = |d: &std::path::Path| {
            std::fs::metadata(d.join(format!("test_file.{i}")))
                .unwrap()
                .len()
        };
        assert_eq!(size(ours_dir.path()), size(theirs_dir.path()));
    }
}

/// Ctrl-C during `fileio prepare` stops the writing at once and exits 130 (sysbench
/// dies of the signal), saying how far it got; the next prepare extends the files.
#[test]
fn ctrl_c_stops_fileio_prepare() {
    let dir = tempfile::tempdir().unwrap();
    // 16 GiB: far more than this disk writes in the half second before the signal.
    let args = [
        "sysbench",
        "fileio",
        "--file-total-size=16G",
        "--file-num=4",
        "prepare",
    ];
    let child = hostbench()
        .current_dir(dir.path())
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let started = std::time::Instant::now();
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "prepare went on for {:?} after Ctrl-C",
        started.elapsed()
    );
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("interrupted while writing 'test_file."),
        "{}",
        stderr(&out)
    );
    let written: u64 = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    assert!(written < 16 << 30, "{written}");
}

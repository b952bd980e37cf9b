//! Bad input around the results store and the commands that fill it: each is named
//! with what would be valid, exits 2 without a panic, and leaves the store as it
//! was — an unknown run, a file that is not a results database, a `--db` in a missing
//! directory, a disk directory that cannot be written, a malformed or unknown
//! `--expect`. A store that fails by itself (truncated, locked, a save that fails
//! half-way) is named the same way and leaves the store as it was, but exits 1: the
//! user's input was fine.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

const QUICK_CPU: [&str; 6] = ["cpu", "--threads", "1", "--events", "40", "--time=0"];

fn saved(db: &Path) -> i64 {
    let out = with_db(db, &QUICK_CPU);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    let line = err
        .lines()
        .find(|l| l.starts_with("saved as run "))
        .unwrap_or_else(|| panic!("no 'saved as run' in stderr:\n{err}"));
    line["saved as run ".len()..].trim().parse().unwrap()
}

/// Exit 2 (bad input), a message naming `names`, and no panic.
fn refused(out: &Output, what: &str, names: &[&str]) {
    ended(out, 2, what, names);
}

/// Exit 1 (the store failed, not the input), a message naming `names`, no panic.
fn failed(out: &Output, what: &str, names: &[&str]) {
    ended(out, 1, what, names);
}

fn ended(out: &Output, code: i32, what: &str, names: &[&str]) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(code), "{what}: {err}");
    assert!(!err.contains("panicked"), "{what}: {err}");
    for n in names {
        assert!(err.contains(n), "{what}: no {n:?} in: {err}");
    }
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn count(db: &Path, table: &str) -> i64 {
    rusqlite::Connection::open(db)
        .unwrap()
        .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
        .unwrap()
}

const TABLES: [&str; 8] = [
    "hosts",
    "runs",
    "labels",
    "outcomes",
    "metrics",
    "histograms",
    "histogram_buckets",
    "series",
];

#[test]
fn an_unknown_run_is_named_with_the_runs_there_are() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    // Before anything was saved: the database is named, and not created.
    let out = with_db(&db, &["report", "3"]);
    refused(
        &out,
        "report on no database",
        &["no results database", "results.db"],
    );
    assert!(!db.exists());

    assert_eq!(saved(&db), 1);
    assert_eq!(saved(&db), 2);
    for args in [
        &["show", "9"][..],
        &["report", "9"],
        &["report", "1,9"],
        &["compare", "1", "9"],
        &["report", "--compare", "9", "1"],
    ] {
        let out = with_db(&db, args);
        refused(
            &out,
            &format!("{args:?}"),
            &["no run 9", "runs 1 to 2 are stored", "hostbench history"],
        );
    }
    for (args, says) in [
        (&["report", "abc"][..], "'abc' is not a run"),
        (&["report", "0"], "'0' is not a run"),
        (&["report", "host:"], "'host:' is not a run"),
        (&["report", "label:novalue"], "KEY=VALUE"),
        (&["report", "host:no-such-host"], "hostbench history"),
        (&["report", "--compare", "1", "host:nobody"], "host:nobody"),
        (&["report", "1", "--workload", "disk"], "no disk results"),
        (
            &["report", "--compare", "1", "2", "--format", "openmetrics"],
            "not a comparison",
        ),
    ] {
        let out = with_db(&db, args);
        refused(&out, &format!("{args:?}"), &[says]);
    }
    // -o: never over the database, never half a file in a missing directory.
    let before = std::fs::read(&db).unwrap();
    let out = with_db(&db, &["report", "1", "-o", db.to_str().unwrap()]);
    refused(&out, "-o the database", &["report's own input"]);
    assert_eq!(std::fs::read(&db).unwrap(), before);
    let out = with_db(&db, &["report", "1", "-o", "/nonexistent-dir/r.html"]);
    refused(
        &out,
        "-o in a missing directory",
        &["/nonexistent-dir/r.html"],
    );
    // RUN, --last, --compare and --input are one choice.
    let out = with_db(&db, &["report", "1", "--last"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let out = with_db(&db, &["report"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

/// A database cut short, in three ways (a failure of the store: exit 1), and a file
/// that is not SQLite at all (bad input: exit 2).
#[test]
fn a_corrupt_or_truncated_database_is_named_and_not_modified() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.db");
    for _ in 0..3 {
        saved(&good);
    }
    let whole = std::fs::read(&good).unwrap();
    assert!(whole.len() > 4 * 4096, "{} bytes", whole.len());
    let cases: Vec<(&str, Vec<u8>, &str, i32)> = vec![
        (
            "text.db",
            b"not a database, somebody's notes\n".repeat(40),
            "not a hostbench results database",
            2,
        ),
        (
            "header-only.db",
            whole[..50].to_vec(),
            "not a hostbench results database",
            2,
        ),
        ("first-page.db", whole[..1000].to_vec(), "truncated", 1),
        ("two-pages.db", whole[..8192].to_vec(), "truncated", 1),
        (
            "most.db",
            whole[..whole.len() - 4096].to_vec(),
            "truncated",
            1,
        ),
    ];
    for (name, bytes, says, code) in cases {
        let sub = dir.path().join(name.replace('.', "-"));
        std::fs::create_dir(&sub).unwrap();
        let db = sub.join(name);
        std::fs::write(&db, &bytes).unwrap();
        for args in [
            &["history"][..],
            &["show", "1"],
            &["report", "1"],
            &["report", "--last", "--format", "markdown"],
            &["report", "--compare", "1", "2"],
            &["export", "--format", "openmetrics"],
            &QUICK_CPU,
        ] {
            let out = with_db(&db, args);
            ended(
                &out,
                code,
                &format!("{name} {args:?}"),
                &[db.to_str().unwrap(), says],
            );
            assert_eq!(
                std::fs::read(&db).unwrap(),
                bytes,
                "{name} {args:?} changed it"
            );
            assert_eq!(
                files_in(&sub),
                [name],
                "{name} {args:?} left files beside it"
            );
        }
    }
}

/// A `--db` in a directory that does not exist is the user's input (exit 2), for a
/// save as for a report, and makes no directory. (A database damaged on disk, the store
/// failing, exits 1: tests/store.rs.)
#[test]
fn a_db_in_a_missing_directory_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let typo = dir.path().join("typo").join("results.db");
    for args in [&QUICK_CPU[..], &["report", "1"]] {
        let out = with_db(&typo, args);
        refused(
            &out,
            &format!("--db in a missing directory {args:?}"),
            &["typo"],
        );
    }
    assert!(!typo.parent().unwrap().exists());
}

#[test]
fn a_locked_database_is_waited_for_then_named() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    saved(&db);
    let holder = rusqlite::Connection::open(&db).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    // Reading does not need the write lock (WAL): reports still work.
    let out = with_db(&db, &["report", "1", "--format", "markdown"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("## Run 1"), "{}", stdout(&out));
    // A save waits for the lock a bounded time, then says who to wait for.
    let start = Instant::now();
    let out = with_db(&db, &QUICK_CPU);
    let waited = start.elapsed();
    failed(
        &out,
        "save while locked",
        &["locked", db.to_str().unwrap(), "retry"],
    );
    assert!(
        waited >= Duration::from_secs(4),
        "gave up after {waited:?}, without waiting for the lock"
    );
    assert_eq!(count(&db, "runs"), 1);
    // When the lock goes while it waits, the save goes through.
    let child = hostbench()
        .args(QUICK_CPU)
        .arg("--db")
        .arg(&db)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    holder.execute_batch("ROLLBACK").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("saved as run 2"), "{}", stderr(&out));
}

#[test]
fn a_failing_save_leaves_nothing_half_written() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    saved(&db);
    let before: Vec<i64> = TABLES.iter().map(|t| count(&db, t)).collect();
    // runs, outcomes, metrics and buckets are there to lose.
    for i in [1, 3, 4, 6] {
        assert!(before[i] > 0, "{}: {before:?}", TABLES[i]);
    }
    // The last rows a cpu run writes are its histogram's buckets: fail there, after
    // the run, its labels, outcome and metrics went in.
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch(
            "CREATE TRIGGER test_fail BEFORE INSERT ON histogram_buckets
             BEGIN SELECT RAISE(ABORT, 'injected failure'); END;",
        )
        .unwrap();
    let mut args = QUICK_CPU.to_vec();
    args.extend(["--label", "provider=test"]);
    let out = with_db(&db, &args);
    failed(
        &out,
        "failing save",
        &[db.to_str().unwrap(), "injected failure"],
    );
    let after: Vec<i64> = TABLES.iter().map(|t| count(&db, t)).collect();
    assert_eq!(after, before, "rows of {TABLES:?}");
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch("DROP TRIGGER test_fail")
        .unwrap();
    assert_eq!(saved(&db), 2);
}

fn disk_args<'a>(dir: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec![
        "disk", "--dir", dir, "--size", "8M", "--tests", "randread", "--time", "200ms", "--warmup",
        "0s",
    ];
    v.extend_from_slice(extra);
    v
}

#[test]
fn an_unwritable_disk_directory_is_named_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"x").unwrap();
    let missing = dir.path().join("missing");
    let under_file = file.join("sub");
    let cases: Vec<(PathBuf, &str)> = vec![
        (missing.clone(), "No such file"),
        (file.clone(), "not a directory"),
        (under_file, "a-file/sub"),
        // Nobody, root included, makes directories in /proc.
        (PathBuf::from("/proc"), "/proc"),
    ];
    for (bad, says) in &cases {
        let out = with_db(&db, &disk_args(bad.to_str().unwrap(), &[]));
        refused(
            &out,
            &format!("--dir {}", bad.display()),
            &[bad.to_str().unwrap(), says, "--dir"],
        );
        assert!(!stderr(&out).contains("saved as run"));
        // `run` refuses it before its first step, not after minutes of CPU and memory.
        let out = with_db(&db, &["run", "--dir", bad.to_str().unwrap()]);
        refused(
            &out,
            &format!("run --dir {}", bad.display()),
            &[bad.to_str().unwrap(), says, "--dir"],
        );
        assert!(!stdout(&out).contains("cpu"), "{}", stdout(&out));
    }
    // The same check, for commands that measure other things first (`run`), leaves
    // nothing behind when the directory is fine.
    for (bad, _) in &cases {
        let e = hostbench::workload::disk::check_dir(bad).unwrap_err();
        assert!(e.is_usage(), "{e}");
        assert!(e.to_string().contains("--dir"), "{e}");
    }
    let fine = tempfile::tempdir_in(".").unwrap();
    hostbench::workload::disk::check_dir(fine.path()).unwrap();
    assert!(files_in(fine.path()).is_empty());
    // Nothing stored, nothing made.
    let runs = with_db(&db, &["history", "--json"]);
    let runs: serde_json::Value = serde_json::from_slice(&runs.stdout).unwrap();
    assert_eq!(runs["runs"].as_array().map_or(0, |r| r.len()), 0, "{runs}");
    assert!(!missing.exists());
}

#[test]
fn a_bad_expect_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let scratch = tempfile::tempdir_in(".").unwrap();
    let scratch_dir = scratch.path().to_str().unwrap();
    for (expect, says) in [
        ("tencent", &["PROVIDER:TYPE:SIZE", "hostbench limits"][..]),
        ("tencent:premium", &["PROVIDER:TYPE:SIZE"]),
        (
            "tencent:premium:lots",
            &["'tencent:premium:lots'", "PROVIDER:TYPE:SIZE"],
        ),
        ("tencent:premium:0", &["PROVIDER:TYPE:SIZE"]),
        (
            "nosuch:premium:100GiB",
            &["no provider 'nosuch'", "known:", "aws", "tencent"],
        ),
        (
            "tencent:nosuch:100GiB",
            &["no disk type matching 'nosuch'", "its types:", "PREMIUM"],
        ),
    ] {
        for command in ["disk", "run"] {
            let args = if command == "disk" {
                disk_args(scratch_dir, &["--expect", expect])
            } else {
                vec!["run", "--dir", scratch_dir, "--expect", expect]
            };
            let started = Instant::now();
            let out = with_db(&db, &args);
            refused(&out, &format!("{command} --expect {expect}"), says);
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "{command} --expect {expect} measured before refusing"
            );
        }
    }
    let out = with_db(
        &db,
        &disk_args(
            scratch_dir,
            &[
                "--expect",
                "tencent:premium:100GiB",
                "--expect-threshold=-5",
            ],
        ),
    );
    refused(&out, "--expect-threshold -5", &["--expect-threshold -5"]);
    // Nothing saved, the database not even made; no test directory left behind.
    assert!(!db.exists(), "a refused command created the database");
    assert!(
        files_in(scratch.path()).is_empty(),
        "{:?}",
        files_in(scratch.path())
    );
}

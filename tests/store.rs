//! The results store through the CLI: every native run is saved, `show --json` gives
//! back what the command printed, history filters, export, and files that are not
//! ours are refused untouched.

mod common;
use common::*;
use serde_json::Value;
use std::path::PathBuf;
use std::process::Output;

fn json_of(o: &Output) -> Value {
    assert!(o.status.success(), "failed: {}", stderr(o));
    serde_json::from_slice(&o.stdout).expect("valid JSON on stdout")
}

/// The run id from `saved as run N` on stderr.
fn saved_id(o: &Output) -> i64 {
    let err = stderr(o);
    let line = err
        .lines()
        .find(|l| l.starts_with("saved as run "))
        .unwrap_or_else(|| panic!("no 'saved as run' in stderr:\n{err}"));
    line["saved as run ".len()..].trim().parse().unwrap()
}

const QUICK_CPU: [&str; 6] = ["cpu", "--threads", "1", "--events", "40", "--time=0"];

fn db_in(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("results.db")
}

#[test]
fn a_run_is_saved_and_shows_back_as_printed() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let mut args = QUICK_CPU.to_vec();
    args.extend(["--json", "--label", "provider=test", "--label", "size=s"]);
    let out = with_db(&db, &args);
    let printed = json_of(&out); // stdout is only the JSON, the note went to stderr
    let id = saved_id(&out);

    let shown = json_of(&with_db(&db, &["show", &id.to_string(), "--json"]));
    assert_eq!(shown["id"], id);
    assert_eq!(shown["command"], "cpu");
    assert_eq!(shown["labels"]["provider"], "test");
    assert_eq!(shown["labels"]["size"], "s");
    assert_eq!(shown["outcomes"].as_array().unwrap().len(), 1);
    // Every field, including the histogram's buckets and the host, comes back equal.
    assert_eq!(shown["outcomes"][0], printed);

    // The human form is the command's report under a line naming the run.
    let human = with_db(&db, &["show", "last"]);
    assert!(human.status.success());
    let text = stdout(&human);
    assert!(
        text.starts_with(&format!("run {id} · hostbench cpu")),
        "{text}"
    );
    assert!(text.contains("events per second"), "{text}");
}

#[test]
fn several_outcomes_are_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let scratch = tempfile::tempdir_in(".").unwrap();
    let out = with_db(
        &db,
        &[
            "disk",
            "--dir",
            scratch.path().to_str().unwrap(),
            "--size",
            "8M",
            "--tests",
            "randread,seqwrite",
            "--time",
            "300ms",
            "--warmup",
            "0s",
            "--json",
        ],
    );
    let printed = json_of(&out);
    let id = saved_id(&out);
    let shown = json_of(&with_db(&db, &["show", &id.to_string(), "--json"]));
    assert_eq!(shown["outcomes"], printed["outcomes"]);
    let text = stdout(&with_db(&db, &["show", &id.to_string()]));
    assert!(text.contains("Summary"), "the disk summary table: {text}");
}

#[test]
fn no_save_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let mut args = QUICK_CPU.to_vec();
    args.push("--no-save");
    let out = with_db(&db, &args);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("saved as run"));
    assert!(!db.exists());
}

#[test]
fn default_location_is_xdg_data_home() {
    let home = tempfile::tempdir().unwrap();
    let out = hostbench()
        .args(QUICK_CPU)
        .env("XDG_DATA_HOME", home.path())
        .output()
        .unwrap();
    assert_eq!(saved_id(&out), 1);
    assert!(home.path().join("hostbench/results.db").is_file());
    // Without XDG_DATA_HOME: ~/.local/share.
    let out = hostbench()
        .args(QUICK_CPU)
        .env_remove("XDG_DATA_HOME")
        .env("HOME", home.path())
        .output()
        .unwrap();
    assert_eq!(saved_id(&out), 1);
    assert!(
        home.path()
            .join(".local/share/hostbench/results.db")
            .is_file()
    );
}

#[test]
fn files_that_are_not_ours_are_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("garbage.db");
    let bytes: Vec<u8> = (0..4096u32).map(|i| (i * 7919 % 251) as u8).collect();
    std::fs::write(&garbage, &bytes).unwrap();
    for args in [&QUICK_CPU[..], &["history"], &["show", "1"], &["export"]] {
        let out = with_db(&garbage, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = stderr(&out);
        assert!(
            err.contains(garbage.to_str().unwrap()),
            "names the path: {err}"
        );
        assert!(err.contains("not a hostbench results database"), "{err}");
        assert!(!err.contains("panicked"), "{err}");
        assert_eq!(std::fs::read(&garbage).unwrap(), bytes, "{args:?}");
    }
    // A directory, and a path under a file, are named too.
    let out = with_db(dir.path(), &QUICK_CPU);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("directory"), "{}", stderr(&out));
    let out = with_db(&garbage.join("x.db"), &QUICK_CPU);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("x.db"), "{}", stderr(&out));
    // An explicit --db in a directory that does not exist is a mistake, not a new tree.
    let out = with_db(&dir.path().join("typo/results.db"), &QUICK_CPU);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("typo"), "{}", stderr(&out));
    assert!(stderr(&out).contains("does not exist"), "{}", stderr(&out));
    // Nothing but the garbage file is there.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn bad_store_input_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    for (args, says) in [
        (&["cpu", "--label", "novalue"][..], "KEY=VALUE"),
        (&["cpu", "--label", "a=1", "--label", "a=2"], "twice"),
        (&["history", "--since", "yesterday"], "YYYY-MM-DD"),
        (&["show", "abc"], "not a run"),
    ] {
        let out = with_db(&db, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
    }
    // The first saves a run: a later unknown id is named.
    with_db(&db, &QUICK_CPU);
    let out = with_db(&db, &["show", "99"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no run 99"), "{}", stderr(&out));
}

#[test]
fn history_filters_by_label_workload_host_and_date() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let mut a = QUICK_CPU.to_vec();
    a.extend(["--label", "provider=aws"]);
    let ia = saved_id(&with_db(&db, &a));
    let ib = saved_id(&with_db(
        &db,
        &[
            "memory",
            "--mode",
            "latency",
            "--sizes",
            "16K",
            "--time",
            "50ms",
            "--label",
            "provider=gcp",
        ],
    ));
    let ids = |args: &[&str]| -> Vec<i64> {
        let mut v = vec!["history", "--json"];
        v.extend_from_slice(args);
        json_of(&with_db(&db, &v))["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_i64().unwrap())
            .collect()
    };
    assert_eq!(ids(&[]), vec![ia, ib]);
    assert_eq!(ids(&["--label", "provider=aws"]), vec![ia]);
    assert_eq!(ids(&["--label", "provider=azure"]), Vec::<i64>::new());
    assert_eq!(ids(&["--workload", "memory"]), vec![ib]);
    assert_eq!(ids(&["--last", "1"]), vec![ib]);
    let host = json_of(&with_db(&db, &["show", "last", "--json"]))["host"]["hostname"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(ids(&["--host", &host]), vec![ia, ib]);
    assert_eq!(ids(&["--host", "no-such-host"]), Vec::<i64>::new());
    assert_eq!(
        ids(&["--since", "2000-01-01", "--until", "9999-12-31"]),
        vec![ia, ib]
    );
    assert_eq!(ids(&["--until", "2000-01-01"]), Vec::<i64>::new());

    let table = stdout(&with_db(&db, &["history"]));
    assert!(table.lines().next().unwrap().contains("labels"), "{table}");
    assert!(table.contains("provider=gcp"), "{table}");
    assert_eq!(table.lines().count(), 3, "{table}");
}

#[test]
fn history_of_a_missing_database_is_empty_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let out = with_db(&db, &["history"]);
    assert!(out.status.success());
    assert!(stdout(&out).is_empty());
    assert!(
        stderr(&out).contains("no results database"),
        "{}",
        stderr(&out)
    );
    assert!(!db.exists());
}

#[test]
fn export_json_csv_and_atomic_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let mut a = QUICK_CPU.to_vec();
    a.extend(["--label", "note=a,b"]);
    let id = saved_id(&with_db(&db, &a));
    saved_id(&with_db(&db, &QUICK_CPU));

    let doc = json_of(&with_db(&db, &["export", "--run", &id.to_string()]));
    assert_eq!(doc["runs"].as_array().unwrap().len(), 1);
    assert_eq!(doc["runs"][0]["id"], id);
    assert!(doc["runs"][0]["outcomes"][0]["latency"]["buckets"].is_array());

    let csv = stdout(&with_db(&db, &["export", "--format", "csv"]));
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header[0], "run");
    let value_col = header.iter().position(|h| *h == "value").unwrap();
    let eps: Vec<&str> = csv
        .lines()
        .filter(|l| l.contains(",events_per_sec,"))
        .collect();
    assert_eq!(eps.len(), 2, "{csv}");
    // The label with a comma is quoted, so the value column still lines up.
    assert!(eps[0].contains("\"note=a,b\""), "{}", eps[0]);
    let unquoted = eps[1].split(',').collect::<Vec<_>>();
    assert!(unquoted[value_col].parse::<f64>().unwrap() > 0.0);

    let file = dir.path().join("out.csv");
    std::fs::write(&file, "old contents").unwrap();
    let out = with_db(
        &db,
        &["export", "--format", "csv", "-o", file.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), csv);
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    // Never over the database itself, never into a missing directory.
    let out = with_db(&db, &["export", "-o", db.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("results database itself"));
    let out = with_db(&db, &["export", "-o", "/nonexistent-dir/x.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("/nonexistent-dir/x.json"));
    let out = with_db(&db, &["export", "--run", "77"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--run 77"));
}

#[test]
fn concurrent_saves_all_land() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    let children: Vec<_> = (0..4)
        .map(|_| {
            hostbench()
                .args(QUICK_CPU)
                .arg("--db")
                .arg(&db)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut ids: Vec<i64> = children
        .into_iter()
        .map(|c| saved_id(&c.wait_with_output().unwrap()))
        .collect();
    ids.sort();
    assert_eq!(ids, vec![1, 2, 3, 4]);
}

/// Processes that create the same database at once: each sees it empty or migrated,
/// never half made (the header and the tables are read in one snapshot).
#[test]
fn simultaneous_first_opens_all_succeed() {
    for round in 0..8 {
        let dir = tempfile::tempdir().unwrap();
        let db = db_in(&dir);
        let children: Vec<_> = (0..6)
            .map(|_| {
                hostbench()
                    .args(["cpu", "--threads", "1", "--events", "1", "--time=0"])
                    .arg("--db")
                    .arg(&db)
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for c in children {
            let out = c.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "round {round}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

#[test]
fn a_locked_database_is_named_and_left_intact() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    with_db(&db, &QUICK_CPU);
    let holder = rusqlite::Connection::open(&db).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let out = with_db(&db, &QUICK_CPU);
    // The input was fine: another process holds the database (exit 1, not 2).
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("locked"), "{}", stderr(&out));
    assert!(stderr(&out).contains(db.to_str().unwrap()));
    assert!(
        stdout(&out).contains("events per second"),
        "the report still printed"
    );
    holder.execute_batch("ROLLBACK").unwrap();
    drop(holder);
    let runs = json_of(&with_db(&db, &["history", "--json"]));
    assert_eq!(runs["runs"].as_array().unwrap().len(), 1);
}

#[test]
fn a_damaged_database_is_named_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir);
    with_db(&db, &QUICK_CPU);
    // Keep the header (so it is still ours), scribble over the pages after it.
    let mut bytes = std::fs::read(&db).unwrap();
    assert!(bytes.len() > 8192);
    for (i, b) in bytes.iter_mut().enumerate().skip(4096) {
        *b = (i % 253) as u8;
    }
    std::fs::write(&db, &bytes).unwrap();
    for args in [&["history"][..], &["show", "1"], &QUICK_CPU] {
        let out = with_db(&db, args);
        // A store that failed by itself, not bad input: exit 1.
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(db.to_str().unwrap()), "{err}");
        assert!(err.contains("damaged"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

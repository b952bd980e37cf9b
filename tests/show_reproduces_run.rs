//! The store keeps what was printed: `hostbench show N` prints a `hostbench run` as the
//! run printed it — every outcome, the summary with its skipped step and reason, the
//! profile's name — and `report` (JSON, HTML, Markdown) lists the skipped step too.
//!
//! One quick run (about 70 s on 2 cores) with redis-server hidden from PATH (the Redis
//! step looks for it there, `suite::redis_server::find`), so its step is skipped on
//! every host, whatever is installed. Its stdout is compared byte for byte with
//! `show`'s: nothing is masked. `show` adds one line of its own at the top (`run 1 ·
//! the command · started … · saved …`, then a blank line), which says which stored run
//! it is; the rest must be the run's stdout exactly.

mod common;

use common::{hostbench, stderr, stdout};
use serde_json::Value;
use std::ffi::OsString;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs `cmd`, reading its output as it comes; killed after `limit`, failing the test.
fn bounded(mut cmd: Command, limit: Duration) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("hostbench starts");
    let reader = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            v
        })
    };
    let out = reader(Box::new(child.stdout.take().unwrap()));
    let err = reader(Box::new(child.stderr.take().unwrap()));
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

/// A PATH holding every program of this one (as symlinks) except redis-server.
fn path_without_redis(dir: &Path) -> OsString {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let path = std::env::var_os("PATH").unwrap_or_default();
    for d in std::env::split_paths(&path) {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let name = entry.file_name();
            let link = bin.join(&name);
            // The first of a name on PATH wins, as for a lookup.
            if name == "redis-server" || link.symlink_metadata().is_ok() {
                continue;
            }
            std::os::unix::fs::symlink(entry.path(), link).unwrap();
        }
    }
    bin.into_os_string()
}

/// hostbench on the test's database (HOSTBENCH_DB) and PATH, at a width of `columns`
/// (None: COLUMNS unset, stdout a pipe, so the default width).
fn command(db: &Path, path: &OsString, columns: Option<&str>) -> Command {
    let mut c = hostbench();
    c.env("HOSTBENCH_DB", db).env("PATH", path);
    match columns {
        Some(w) => c.env("COLUMNS", w),
        None => c.env_remove("COLUMNS"),
    };
    c
}

/// From the summary's heading to the end.
fn summary(text: &str) -> &str {
    let at = text
        .find("Summary (")
        .unwrap_or_else(|| panic!("no summary in:\n{text}"));
    &text[at..]
}

fn widest(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

fn os_release() -> String {
    std::fs::read_to_string("/etc/os-release")
        .or_else(|_| std::fs::read_to_string("/usr/lib/os-release"))
        .unwrap_or_default()
}

#[test]
fn show_prints_the_run_as_it_was_printed() {
    let scratch = tempfile::tempdir().unwrap();
    let db = scratch.path().join("results.db");
    let work = scratch.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let path = path_without_redis(scratch.path());

    let mut run = command(&db, &path, Some("80"));
    run.args(["run", "--profile", "quick", "--dir"]).arg(&work);
    let out = bounded(run, Duration::from_secs(600));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let live = stdout(&out);
    let reason = hostbench::suite::redis_server::not_installed_on(&os_release());
    assert!(
        stderr(&out).contains(&format!("hostbench: redis step skipped: {reason}")),
        "{}",
        stderr(&out)
    );

    // What the run printed: the profile as --profile takes it, the skipped row, and
    // the last line saying what was not measured; fit in the 80 columns asked for.
    let table = summary(&live);
    assert!(table.starts_with("Summary (quick profile)\n"), "{table}");
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("  redis ") && l.contains(" skipped ")),
        "{table}"
    );
    assert_eq!(table.lines().last(), Some("Not measured: redis (skipped)."));
    assert!(widest(table) <= 80, "wider than COLUMNS=80:\n{table}");

    // `show`, at the same width: its own first line, a blank line, then the run's
    // stdout byte for byte.
    let mut show = command(&db, &path, Some("80"));
    show.args(["show", "1"]);
    let shown = show.output().unwrap();
    assert!(shown.status.success(), "{}", stderr(&shown));
    let shown = stdout(&shown);
    let (head, rest) = shown.split_once("\n\n").unwrap();
    assert!(
        head.starts_with("run 1 · hostbench run --profile quick --dir ") && !head.contains('\n'),
        "{head}"
    );
    if rest != live {
        let at = live
            .lines()
            .zip(rest.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(live.lines().count().min(rest.lines().count()));
        panic!(
            "show differs from the run at line {}:\nrun:  {:?}\nshow: {:?}",
            at + 1,
            live.lines().nth(at),
            rest.lines().nth(at)
        );
    }

    // Without COLUMNS, on a pipe: the documented default width.
    let mut show = command(&db, &path, None);
    show.args(["show", "1"]);
    let shown = stdout(&show.output().unwrap());
    assert!(widest(summary(&shown)) <= 100, "{}", summary(&shown));

    // The reports of the run list the step with its reason.
    let report = |format: &str| {
        let mut c = command(&db, &path, None);
        c.args(["report", "1", "--format", format]);
        // Read as it comes: a report is larger than a pipe holds.
        let out = c.output().unwrap();
        assert!(out.status.success(), "{format}: {}", stderr(&out));
        stdout(&out)
    };
    let json: Value = serde_json::from_str(&report("json")).unwrap();
    assert_eq!(
        json["runs"][0]["problems"],
        serde_json::json!([{
            "step": "redis",
            "area": "redis",
            "status": "skipped",
            "reason": reason,
        }]),
        "{}",
        json["runs"][0]["problems"]
    );
    let html = report("html");
    assert!(
        html.contains(&format!(
            "<tr><td>redis</td><td>skipped</td><td>{reason}</td></tr>"
        )),
        "no redis row in the page's summary"
    );
    assert!(html.contains("Not measured: redis (skipped)."));
    let markdown = report("markdown");
    assert!(
        markdown.contains(&format!("| redis | skipped | {reason} |")),
        "{markdown}"
    );
}

//! One renderer per format, chosen in one place: the commands that print the same
//! document print the same bytes, a format without a layout for a document is
//! refused (exit 2) naming both and the formats that have one, before anything is
//! read; shell completions and the manual page come from the same definition as the
//! command line.

mod common;
use clap::CommandFactory;
use common::*;
use std::path::Path;
use std::process::Output;

fn ok(out: Output, what: &str) -> String {
    assert!(out.status.success(), "{what}: {}", stderr(&out));
    stdout(&out)
}

fn refused(out: &Output, what: &str, says: &str) {
    assert_eq!(out.status.code(), Some(2), "{what}: {}", stderr(out));
    assert!(stderr(out).contains(says), "{what}: {}", stderr(out));
    assert!(out.stdout.is_empty(), "{what}: {}", stdout(out));
}

/// Two cpu runs (labels a and b) and a soak of two slices, in a new database.
fn database(dir: &Path) -> std::path::PathBuf {
    let db = dir.join("results.db");
    for provider in ["a", "b"] {
        ok(
            with_db(
                &db,
                &[
                    "cpu",
                    "--threads",
                    "1",
                    "--events",
                    "200",
                    "--time=0",
                    "--label",
                    &format!("provider={provider}"),
                ],
            ),
            "cpu",
        );
    }
    // soak's own options (--db among them) before the workload's.
    let out = hostbench()
        .arg("soak")
        .arg("--db")
        .arg(&db)
        .args([
            "--every",
            "1s",
            "--for",
            "2s",
            "--time",
            "200ms",
            "cpu",
            "--threads",
            "1",
        ])
        .output()
        .unwrap();
    // 1: a slice was flagged (two short slices can differ that much); judged all the same.
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "soak: {}",
        stderr(&out)
    );
    assert!(stdout(&out).contains("verdict: "), "{}", stdout(&out));
    db
}

#[test]
fn one_document_prints_the_same_from_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path());
    let q = |args: &[&str]| ok(with_db(&db, args), &format!("{args:?}"));
    // Stored runs: `export` and `report` hand over the same document.
    for format in ["text", "json", "csv", "markdown", "html", "openmetrics"] {
        let export = q(&["export", "--run", "1", "--run", "2", "--format", format]);
        let report = q(&["report", "1,2", "--format", format]);
        assert_eq!(export, report, "{format}");
        assert!(!export.is_empty(), "{format}");
    }
    // One run: `show` is `report RUN --format text`.
    assert_eq!(q(&["show", "1"]), q(&["report", "1", "--format", "text"]));
    // A comparison: `compare` is `report --compare --format text|json`.
    let groups = ["label:provider=a", "label:provider=b"];
    assert_eq!(
        q(&["compare", groups[0], groups[1]]),
        q(&[
            "report",
            "--compare",
            groups[0],
            groups[1],
            "--format",
            "text"
        ])
    );
    assert_eq!(
        q(&["compare", groups[0], groups[1], "--json"]),
        q(&[
            "report",
            "--compare",
            groups[0],
            groups[1],
            "--format",
            "json"
        ])
    );
    // A soak: `soak --show` is `report --soak --format text|json`.
    assert_eq!(
        q(&["soak", "--show", "1"]),
        q(&["report", "--soak", "1", "--format", "text"])
    );
    assert_eq!(
        q(&["soak", "--show", "1", "--json"]),
        q(&["report", "--soak", "1", "--format", "json"])
    );
    // A result file in CSV: the run's columns are empty, the metrics are there.
    let outcome = dir.path().join("outcome.json");
    let json = q(&[
        "cpu",
        "--threads",
        "1",
        "--events",
        "100",
        "--time=0",
        "--json",
        "--no-save",
    ]);
    std::fs::write(&outcome, &json).unwrap();
    let csv = q(&[
        "report",
        "--input",
        outcome.to_str().unwrap(),
        "--format",
        "csv",
    ]);
    let row = csv
        .lines()
        .find(|l| l.contains(",events_per_sec,"))
        .unwrap_or_else(|| panic!("{csv}"));
    assert!(
        row.starts_with(','),
        "no run id for a file's outcome: {row}"
    );
}

#[test]
fn a_format_without_a_layout_is_refused_before_anything_is_read() {
    let dir = tempfile::tempdir().unwrap();
    // No database at all: the format is judged first.
    let db = dir.path().join("none.db");
    for (args, says) in [
        (
            &["report", "--soak", "1", "--format", "csv"][..],
            "CSV has no layout for a soak; use --format text|json|markdown|html",
        ),
        (
            &["report", "--compare", "1", "2", "--format", "openmetrics"],
            "OpenMetrics has no layout for a comparison; use --format text|json|markdown|html",
        ),
        (
            &["report", "--soak", "1", "--format", "openmetrics"],
            "export --label soak=ID --format openmetrics",
        ),
        (
            &["report", "--compare", "1", "2", "--format", "csv"],
            "CSV has no layout for a comparison",
        ),
    ] {
        let out = with_db(&db, args);
        refused(&out, &format!("{args:?}"), says);
        assert!(!db.exists(), "{args:?} created the database");
    }
    let out = with_db(&db, &["export", "--format", "yaml"]);
    refused(
        &out,
        "yaml",
        "possible values: text, json, csv, markdown, html, openmetrics",
    );
}

/// The commands as clap knows them (those a user can type).
fn commands() -> Vec<String> {
    let names: Vec<String> = hostbench::cli::Cli::command()
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .map(|c| c.get_name().to_string())
        .collect();
    for known in [
        "run",
        "cpu",
        "disk",
        "net",
        "report",
        "soak",
        "completions",
        "man",
    ] {
        assert!(names.iter().any(|n| n == known), "{known} in {names:?}");
    }
    names
}

#[test]
fn completions_know_every_command() {
    let bash = ok(run(&["completions", "bash"]), "bash");
    assert!(bash.contains("complete -F _hostbench"), "{bash}");
    // The words offered after `hostbench`, and a case for each command's own words.
    let top = bash
        .lines()
        .find(|l| l.trim_start().starts_with("opts=\"-h -V --help --version"))
        .unwrap_or_else(|| panic!("no top-level words: {bash}"));
    let words: Vec<&str> = top.trim().trim_end_matches('"').split(' ').collect();
    for name in commands() {
        assert!(words.contains(&name.as_str()), "{name} not in {top}");
        assert!(
            bash.contains(&format!("hostbench,{name})")),
            "no case for {name}"
        );
    }
    // An option of a command, and a value of one.
    assert!(bash.contains("--max-prime"), "cpu's options");
    assert!(bash.contains("openmetrics"), "report's formats");
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let script = ok(run(&["completions", shell]), shell);
        for name in commands() {
            assert!(script.contains(name.as_str()), "{shell}: {name}");
        }
    }
    let out = run(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("bash"), "{}", stderr(&out));
}

#[test]
fn the_manual_has_every_command() {
    let page = ok(run(&["man"]), "man");
    assert!(page.contains(".TH HOSTBENCH 1 "), "{page}");
    assert!(page.contains(".SH SUBCOMMANDS"), "{page}");
    for name in commands() {
        assert!(
            page.contains(&format!("hostbench\\-{}(1)", name.replace('-', "\\-"))),
            "{name} is not on the page"
        );
        // Each has a page of its own.
        let own = ok(run(&["man", &name]), &name);
        let title = format!(".TH HOSTBENCH-{} 1 ", name.to_uppercase());
        assert!(own.contains(&title), "{name}: {own}");
    }
    let cpu = ok(run(&["man", "cpu"]), "man cpu");
    assert!(cpu.contains("\\-\\-max\\-prime"), "{cpu}");
    let serve = ok(run(&["man", "net", "serve"]), "man net serve");
    assert!(serve.contains(".TH HOSTBENCH-NET-SERVE 1 "), "{serve}");
    let out = run(&["man", "nope"]);
    refused(&out, "man nope", "no command 'nope': use one of run, cpu");
    let out = run(&["man", "cpu", "x"]);
    refused(&out, "man cpu x", "`hostbench cpu` has no commands");
    if have("groff") {
        let mut groff = std::process::Command::new("groff")
            // -k: UTF-8 input through preconv, as man does.
            .args(["-k", "-man", "-ww", "-z"])
            .stdin(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        groff
            .stdin
            .take()
            .unwrap()
            .write_all(page.as_bytes())
            .unwrap();
        let out = groff.wait_with_output().unwrap();
        assert!(out.stderr.is_empty(), "groff: {}", stderr(&out));
    }
}

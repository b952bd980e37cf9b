//! Every personality run is kept like a native one (issue 12): the guides' own command
//! lines, through a `sysbench -> hostbench` symlink, land in the store with their
//! exact command line and labels from the environment, compare across "hosts" with ±,
//! meet the native command's runs of the same parameters, are refused against runs of
//! other parameters, and soak. Saving never changes the peer's output or exit code.
//!
//! sysbench's cpu test stands for all personalities here; each family's own tests
//! check that its personality keeps its outcomes.

mod common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A directory with a `sysbench` symlink to hostbench, as a user would make one.
struct Peer {
    dir: tempfile::TempDir,
    data: PathBuf,
}

impl Peer {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_hostbench"), dir.path().join("sysbench"))
            .unwrap();
        Peer {
            dir,
            data: data_home(),
        }
    }

    fn db(&self) -> PathBuf {
        self.data.join("hostbench/results.db")
    }

    /// `sysbench ARGS` with the environment `env` adds.
    fn sysbench(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut c = Command::new(self.dir.path().join("sysbench"));
        c.args(args).env("XDG_DATA_HOME", &self.data);
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    }

    fn hostbench(&self, args: &[&str]) -> Output {
        hostbench()
            .env("XDG_DATA_HOME", &self.data)
            .args(args)
            .output()
            .unwrap()
    }

    fn history(&self) -> Vec<Value> {
        let out = self.hostbench(&["history", "--json"]);
        if !out.status.success() {
            return Vec::new();
        }
        let doc: Value = serde_json::from_slice(&out.stdout).expect("history --json");
        doc.as_array()
            .or_else(|| doc["runs"].as_array())
            .cloned()
            .unwrap_or_default()
    }
}

const CPU: [&str; 4] = ["cpu", "--cpu-max-prime=2000", "--time=1", "run"];

/// The report with every number replaced by `N` and runs of spaces by one (columns
/// are padded to the numbers' widths): what must not change when saving.
fn shape(text: &str) -> String {
    let mut out = String::new();
    let mut in_number = false;
    for c in text.chars() {
        if c == ' ' && out.ends_with(' ') {
            continue;
        }
        if c.is_ascii_digit() || (in_number && c == '.') {
            if !in_number {
                out.push('N');
            }
            in_number = true;
        } else {
            in_number = false;
            out.push(c);
        }
    }
    out
}

#[test]
fn sysbench_runs_are_kept_with_their_command_line_and_labels() {
    let peer = Peer::new();
    let kept = peer.sysbench(&CPU, &[("HOSTBENCH_LABEL", "vm=a,provider=p")]);
    assert!(kept.status.success(), "{}", stderr(&kept));
    assert_eq!(stderr(&kept), "", "saving adds no line to stderr");
    let runs = peer.history();
    assert_eq!(runs.len(), 1, "{runs:?}");
    let run = &runs[0];
    assert_eq!(run["command"], "sysbench");
    assert_eq!(
        run["command_line"],
        serde_json::json!(["sysbench", "cpu", "--cpu-max-prime=2000", "--time=1", "run"])
    );
    assert_eq!(run["labels"]["vm"], "a");
    assert_eq!(run["labels"]["provider"], "p");
    let shown = stdout(&peer.hostbench(&["show", &run["id"].to_string()]));
    assert!(
        shown.contains("sysbench cpu --cpu-max-prime=2000 --time=1 run"),
        "{shown}"
    );

    // Not saving prints the same report, number for number in shape.
    let unsaved = peer.sysbench(&CPU, &[("HOSTBENCH_NO_SAVE", "1")]);
    assert!(unsaved.status.success());
    assert_eq!(shape(&stdout(&unsaved)), shape(&stdout(&kept)));
    assert_eq!(peer.history().len(), 1, "HOSTBENCH_NO_SAVE keeps nothing");
}

#[test]
fn a_store_that_cannot_be_written_changes_nothing_the_peer_prints() {
    let peer = Peer::new();
    let foreign = peer.dir.path().join("notes.txt");
    std::fs::write(&foreign, "my notes, not a database\n").unwrap();
    let reference = peer.sysbench(&CPU, &[("HOSTBENCH_NO_SAVE", "1")]);
    for (db, label) in [
        (foreign.to_str().unwrap(), "vm=a"),
        ("/nonexistent/dir/results.db", "vm=a"),
        (peer.db().to_str().unwrap(), "not a label"),
    ] {
        let out = peer.sysbench(&CPU, &[("HOSTBENCH_DB", db), ("HOSTBENCH_LABEL", label)]);
        assert_eq!(out.status.code(), Some(0), "{db}: {}", stderr(&out));
        assert_eq!(stderr(&out), "", "{db}");
        assert_eq!(shape(&stdout(&out)), shape(&stdout(&reference)), "{db}");
    }
    assert_eq!(
        std::fs::read_to_string(&foreign).unwrap(),
        "my notes, not a database\n",
        "a user's file is never touched"
    );
    // HOSTBENCH_DEBUG says why.
    let out = peer.sysbench(
        &CPU,
        &[
            ("HOSTBENCH_DB", foreign.to_str().unwrap()),
            ("HOSTBENCH_DEBUG", "1"),
        ],
    );
    assert!(out.status.success());
    assert!(
        stderr(&out).contains("not kept") && stderr(&out).contains("notes.txt"),
        "{}",
        stderr(&out)
    );
    // A failing peer line exits as sysbench does and keeps nothing.
    let bad = peer.sysbench(&["cpu", "--cpu-max-prime=0", "run"], &[]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(peer.history().is_empty());
}

fn ids(runs: &[Value], vm: &str) -> Vec<String> {
    runs.iter()
        .filter(|r| r["labels"]["vm"] == vm)
        .map(|r| r["id"].to_string())
        .collect()
}

#[test]
fn guides_command_lines_compare_two_hosts_with_uncertainty() {
    let peer = Peer::new();
    for vm in ["a", "a", "a", "b", "b", "b"] {
        let label = format!("vm={vm}");
        let out = peer.sysbench(&CPU, &[("HOSTBENCH_LABEL", &label)]);
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let runs = peer.history();
    assert_eq!(ids(&runs, "a").len(), 3);
    let out = peer.hostbench(&["compare", "label:vm=a", "label:vm=b"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let eps = text
        .lines()
        .find(|l| l.contains("events per second"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(eps.contains(" ± ") && eps.contains("x "), "{eps}");
    assert!(text.contains("3 runs"), "{text}");

    let out = peer.hostbench(&["compare", "label:vm=a", "label:vm=b", "--json"]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == "events_per_sec")
        .unwrap();
    assert_eq!(row["params"]["max-prime"], "2000");
    assert!(row["ratios"][1]["uncertainty"].as_f64().unwrap() > 0.0);

    let page = peer.dir.path().join("cmp.html");
    let out = peer.hostbench(&[
        "report",
        "--compare",
        "label:vm=a",
        "label:vm=b",
        "-o",
        page.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("events per second") && html.contains("<svg"),
        "{html}"
    );
}

#[test]
fn personality_and_native_runs_of_the_same_params_meet_and_others_are_refused() {
    let peer = Peer::new();
    let out = peer.sysbench(&CPU, &[("HOSTBENCH_LABEL", "via=sysbench")]);
    assert!(out.status.success());
    let native = peer.hostbench(&[
        "cpu",
        "--threads",
        "1",
        "--max-prime",
        "2000",
        "--time",
        "1",
        "--label",
        "via=native",
    ]);
    assert!(native.status.success(), "{}", stderr(&native));
    let out = peer.hostbench(&["compare", "label:via=sysbench", "label:via=native"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.lines()
            .any(|l| l.contains("events per second") && l.contains("x ")),
        "{text}"
    );

    let other = peer.sysbench(
        &["cpu", "--cpu-max-prime=1000", "--time=1", "run"],
        &[("HOSTBENCH_LABEL", "via=other")],
    );
    assert!(other.status.success());
    let out = peer.hostbench(&["compare", "label:via=sysbench", "label:via=other"]);
    assert_eq!(out.status.code(), Some(2));
    let e = stderr(&out);
    assert!(
        e.contains("max-prime 2000 in A (label:via=sysbench), 1000 in B (label:via=other)"),
        "{e}"
    );
}

fn soak_id(out: &Output) -> String {
    let text = stdout(out);
    text.split_whitespace()
        .nth(1)
        .map(|w| w.trim_end_matches(':').to_string())
        .unwrap_or_else(|| panic!("{text}"))
}

#[test]
fn a_soak_runs_the_guides_command_line_as_its_slices() {
    let peer = Peer::new();
    let db = peer.db();
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    let out = run_bounded(
        {
            let mut c = hostbench();
            c.env("XDG_DATA_HOME", &peer.data).args([
                "soak",
                "--every",
                "2s",
                "--for",
                "5s",
                "--time",
                "1s",
                "--label",
                "vm=a",
                // The machine is shared: flag only a slice that measured next to
                // nothing, so the verdict (exit 1 when flagged) is not the load's.
                "--threshold",
                "1",
                "--",
                "sysbench",
                "cpu",
                "--cpu-max-prime=2000",
                "--time=60",
                "run",
            ]);
            c
        },
        std::time::Duration::from_secs(30),
    );
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let runs = peer.history();
    assert_eq!(runs.len(), 3, "{runs:?}");
    for r in &runs {
        assert_eq!(r["command"], "sysbench");
        assert_eq!(r["labels"]["vm"], "a");
        assert!(r["labels"]["slice"].is_string());
    }
    // --time=60 was replaced by the slice's length.
    let show: Value = serde_json::from_slice(
        &peer
            .hostbench(&["show", &runs[0]["id"].to_string(), "--json"])
            .stdout,
    )
    .unwrap();
    let elapsed = show["outcomes"][0]["elapsed_s"].as_f64().unwrap();
    assert!(elapsed < 5.0, "a slice ran {elapsed} s");
    let id = soak_id(&out);
    let page = peer.dir.path().join("soak.html");
    let out = peer.hostbench(&["report", "--soak", &id, "-o", page.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(std::fs::read_to_string(&page).unwrap().contains("<svg"));
    assert!(db_exists(&db));
}

fn db_exists(db: &Path) -> bool {
    db.is_file()
}

#[test]
fn a_soak_runs_seed_002s_fio_job_file_as_it_is() {
    // The job file as the guide gives it (only the file's place and size differ: see the
    // fixture), its runtime set to the slice by the soak.
    let peer = Peer::new();
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("seed002.fio");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/seed002.fio"),
        &job,
    )
    .unwrap();
    let mut c = hostbench();
    c.current_dir(dir.path())
        .env("XDG_DATA_HOME", &peer.data)
        .args([
            "soak",
            "--every",
            "20s",
            "--for",
            "20s",
            "--time",
            "1s",
            "--threshold",
            "1",
            "--",
            "fio",
            "seed002.fio",
        ]);
    let out = run_bounded(c, std::time::Duration::from_secs(60));
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("IOPS"), "{}", stdout(&out));
    let runs = peer.history();
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0]["command"], "fio");
    let line = runs[0]["command_line"].as_array().unwrap();
    assert_eq!(line[1], "fio");
    assert_eq!(
        line[2],
        job.display().to_string(),
        "the job file, made absolute"
    );
    let shown: Value = serde_json::from_slice(
        &peer
            .hostbench(&["show", &runs[0]["id"].to_string(), "--json"])
            .stdout,
    )
    .unwrap();
    let outcomes = shown["outcomes"].as_array().unwrap();
    assert!(outcomes.len() >= 5, "one outcome per fio report");
    for o in outcomes {
        let s = o["elapsed_s"].as_f64().unwrap();
        assert!(
            (0.5..3.0).contains(&s),
            "a job ran {s} s, not the slice's 1 s"
        );
    }
    let page = dir.path().join("soak.html");
    let id = soak_id(&out);
    let r = peer.hostbench(&["report", "--soak", &id, "-o", page.to_str().unwrap()]);
    assert!(r.status.success(), "{}", stderr(&r));
    assert!(std::fs::read_to_string(&page).unwrap().contains("<svg"));
}

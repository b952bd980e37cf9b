//! Every output format, rendered from fixed inputs and compared byte for byte with
//! what it was when these goldens were recorded (before the renderers were moved
//! behind one interface): a change to any layout shows up here.
//!
//! Inputs: `tests/golden/render/runs.json` (an export of real runs: cpu, memory,
//! disk, net, a sysbench personality run and a whole `run`), `soaks.json` (two real
//! soaks and three made up: stopped with a missed and a flagged slice, one with a
//! failed slice, one with none yet). Outputs: `tests/golden/render/out/NAME`; a
//! large one is kept as its length and SHA-256 only. `HOSTBENCH_BLESS=1` records
//! them anew; a mismatch leaves the output in the target directory to diff.
//!
//! The goldens were recorded with the old free functions (`text::outcome`,
//! `html::render_runs`, `compare_page::html`, `soak::text`, ...; see this file in
//! the commit that added it); the same inputs now go through `report::render`.

use hostbench::model::Outcome;
use hostbench::store::StoredRun;
use hostbench::store::soak::Soak;
use hostbench::suite::compare::{Group, compare};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/render")
}

/// Outputs up to this size are kept whole (readable diffs); larger ones as a hash.
const WHOLE: usize = 32 * 1024;

fn digest(text: &str) -> String {
    let hash = Sha256::digest(text.as_bytes());
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    format!("{} bytes, sha256 {hex}\n", text.len())
}

fn check(name: &str, actual: &str) {
    let path = golden_dir().join("out").join(name);
    let kept = if actual.len() <= WHOLE {
        actual.to_string()
    } else {
        digest(actual)
    };
    if std::env::var_os("HOSTBENCH_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &kept).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (HOSTBENCH_BLESS=1 records it)", path.display()));
    if expected != kept {
        let left = Path::new(env!("CARGO_TARGET_TMPDIR")).join("golden-actual");
        std::fs::create_dir_all(&left).unwrap();
        std::fs::write(left.join(name), actual).unwrap();
        let line = expected
            .lines()
            .zip(kept.lines())
            .position(|(a, b)| a != b)
            .map_or("the end".to_string(), |n| format!("line {}", n + 1));
        panic!(
            "{name} changed (first difference at {line}); the output is in {}",
            left.join(name).display()
        );
    }
}

/// The fixture's runs as the store gives them back: its rows are old ones (a p99.9
/// above the max among them), which the store bounds when it loads them.
fn runs() -> Vec<StoredRun> {
    let text = std::fs::read_to_string(golden_dir().join("runs.json")).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut runs: Vec<StoredRun> = serde_json::from_value(doc["runs"].clone()).unwrap();
    for run in &mut runs {
        run.outcomes.iter_mut().for_each(|o| o.bound_percentiles());
    }
    runs
}

fn soaks() -> Vec<Soak> {
    let text = std::fs::read_to_string(golden_dir().join("soaks.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn run(runs: &[StoredRun], id: i64) -> &StoredRun {
    runs.iter().find(|r| r.info.id == id).unwrap()
}

/// The runs with label provider=`p`, as `compare label:provider=p` selects them.
fn group(runs: &[StoredRun], p: &str, workload: Option<&str>) -> Group {
    let mut runs: Vec<StoredRun> = runs
        .iter()
        .filter(|r| r.info.labels.get("provider").map(String::as_str) == Some(p))
        .cloned()
        .collect();
    if let Some(w) = workload {
        for r in &mut runs {
            r.outcomes.retain(|o| o.workload == w);
        }
        runs.retain(|r| !r.outcomes.is_empty());
    }
    Group {
        name: format!("label:provider={p}"),
        runs,
    }
}

mod new {
    //! Every output through the one interface: a `Document`, a `Format`, `render`.
    use super::*;
    use hostbench::report::{
        Compared, Document, Expectation, Format, Live, Outcomes, Runs, Soaked, SummaryTable,
        render, renderer,
    };

    fn r(format: Format, doc: &Document) -> String {
        render(format, doc).unwrap()
    }
    /// The common layout of an outcome. A `net` outcome's document has net's own
    /// layout (as `net`, `show` and `run` always printed it); the golden, recorded
    /// with `text::outcome` for every outcome, has the common one for it too.
    pub fn outcome_text(o: &Outcome) -> String {
        let text = r(Format::Text, &Document::from(o));
        if o.workload == "net" {
            assert_eq!(text, hostbench::report::text::net(o));
            return hostbench::report::text::outcome(o);
        }
        text
    }
    pub fn outcome_json(o: &Outcome) -> String {
        r(Format::Json, &Document::from(o))
    }
    /// `run --json` (with `--expect`: the promise check too).
    pub fn run_document(outcomes: &[Outcome], expect: bool) -> String {
        let lines = hostbench::suite::run::summarise(outcomes);
        let promise = hostbench::limits::promise("tencent:premium:100GiB").unwrap();
        let doc = Document::Outcomes(Outcomes {
            summary: Some(SummaryTable::areas("Summary".into(), &lines)),
            expectation: expect.then(|| Expectation::new(&promise, outcomes, 90.0)),
            ..Outcomes::new(outcomes)
        });
        r(Format::Json, &doc)
    }
    fn outcomes<'a>(title: &str, o: &'a [Outcome]) -> Document<'a> {
        Document::Outcomes(Outcomes {
            title: Some(title.to_string()),
            ..Outcomes::new(o)
        })
    }
    pub fn outcomes_html(title: &str, o: &[Outcome]) -> String {
        r(Format::Html, &outcomes(title, o))
    }
    pub fn outcomes_markdown(title: &str, o: &[Outcome]) -> String {
        r(Format::Markdown, &outcomes(title, o))
    }
    pub fn outcomes_openmetrics(o: &[Outcome]) -> String {
        r(Format::OpenMetrics, &outcomes("", o))
    }
    fn runs<'a>(title: &str, runs: &'a [StoredRun]) -> Document<'a> {
        Document::Runs(Runs {
            runs,
            title: Some(title.to_string()),
        })
    }
    pub fn runs_html(title: &str, set: &[StoredRun]) -> String {
        r(Format::Html, &runs(title, set))
    }
    pub fn runs_markdown(title: &str, set: &[StoredRun]) -> String {
        r(Format::Markdown, &runs(title, set))
    }
    pub fn runs_csv(set: &[StoredRun]) -> String {
        r(Format::Csv, &runs("", set))
    }
    pub fn runs_openmetrics(set: &[StoredRun]) -> String {
        r(Format::OpenMetrics, &runs("", set))
    }
    fn compared(format: Format, title: &str, g: &[Group]) -> String {
        let comparison = compare(g).unwrap();
        let doc = Document::Comparison(Compared {
            comparison: &comparison,
            groups: g,
            title: Some(title.to_string()),
        });
        r(format, &doc)
    }
    pub fn comparison_text(g: &[Group]) -> String {
        compared(Format::Text, "", g)
    }
    pub fn comparison_json(g: &[Group]) -> String {
        compared(Format::Json, "", g)
    }
    pub fn comparison_html(title: &str, g: &[Group]) -> String {
        compared(Format::Html, title, g)
    }
    pub fn comparison_markdown(title: &str, g: &[Group]) -> String {
        compared(Format::Markdown, title, g)
    }
    fn soaked(format: Format, title: Option<&str>, s: &Soak) -> String {
        let summary = hostbench::suite::soak::summarise(s, None);
        let doc = Document::Soak(Soaked {
            soak: s,
            summary: &summary,
            title: title.map(str::to_string),
        });
        r(format, &doc)
    }
    pub fn soak_text(s: &Soak) -> String {
        soaked(Format::Text, None, s)
    }
    pub fn soak_json(s: &Soak) -> String {
        soaked(Format::Json, None, s)
    }
    pub fn soak_html(title: &str, s: &Soak) -> String {
        soaked(Format::Html, Some(title), s)
    }
    pub fn soak_markdown(title: &str, s: &Soak) -> String {
        soaked(Format::Markdown, Some(title), s)
    }
    /// What `soak` prints while it runs: the opening lines, the column heads, a line
    /// per slice against the median so far, then the summary.
    pub fn soak_live(s: &Soak) -> String {
        let text = renderer(Format::Text);
        let summary = hostbench::suite::soak::summarise(s, None);
        let f = s.slices.iter().find_map(|x| x.figure.as_ref());
        let mut out = text.live(&Live::SoakStart(s)).unwrap();
        out += &text.live(&Live::SoakColumns(s, f)).unwrap();
        for slice in &s.slices {
            out += &text.live(&Live::Slice(s, slice)).unwrap();
        }
        let doc = Document::Soak(Soaked {
            soak: s,
            summary: &summary,
            title: None,
        });
        out + &text.end(&doc).unwrap()
    }
}

use new as r;

#[test]
fn outcomes_as_text_and_json() {
    let runs = runs();
    let mut text = String::new();
    let mut json = String::new();
    for run in &runs {
        for (i, o) in run.outcomes.iter().enumerate() {
            let head = format!("=== run {} outcome {i} ({})\n", run.info.id, o.workload);
            text += &head;
            text += &r::outcome_text(o);
            json += &head;
            json += &r::outcome_json(o);
        }
    }
    check("outcomes.txt", &text);
    check("outcomes.json", &json);
    let whole = &run(&runs, 18).outcomes;
    check("run-document.json", &r::run_document(whole, false));
    let disk = &run(&runs, 6).outcomes;
    check("disk-document-expect.json", &r::run_document(disk, true));
}

#[test]
fn outcomes_as_pages_and_openmetrics() {
    let runs = runs();
    for id in [6, 18] {
        let o = &run(&runs, id).outcomes;
        let title = format!("outcomes of run {id} <&>");
        check(&format!("outcomes-{id}.html"), &r::outcomes_html(&title, o));
        check(
            &format!("outcomes-{id}.md"),
            &r::outcomes_markdown(&title, o),
        );
        check(&format!("outcomes-{id}.om"), &r::outcomes_openmetrics(o));
    }
}

#[test]
fn stored_runs_as_pages_csv_and_openmetrics() {
    let runs = runs();
    let few: Vec<StoredRun> = [1, 6, 9].iter().map(|&id| run(&runs, id).clone()).collect();
    for (name, set) in [("few", &few[..]), ("all", &runs[..]), ("one", &runs[..1])] {
        let title = format!("hostbench runs ({name})");
        check(&format!("runs-{name}.html"), &r::runs_html(&title, set));
        check(&format!("runs-{name}.md"), &r::runs_markdown(&title, set));
        check(&format!("runs-{name}.csv"), &r::runs_csv(set));
        check(&format!("runs-{name}.om"), &r::runs_openmetrics(set));
    }
    let run18 = std::slice::from_ref(run(&runs, 18));
    check("runs-18.md", &r::runs_markdown("the whole run", run18));
}

#[test]
fn comparisons_in_every_format() {
    let runs = runs();
    let cases = [
        ("ab", vec![group(&runs, "a", None), group(&runs, "b", None)]),
        (
            "abr-cpu",
            vec![
                group(&runs, "a", Some("cpu")),
                group(&runs, "b", Some("cpu")),
                group(&runs, "r", Some("cpu")),
            ],
        ),
        (
            "ar-disk",
            vec![
                group(&runs, "a", Some("disk")),
                group(&runs, "r", Some("disk")),
            ],
        ),
    ];
    for (name, groups) in &cases {
        let title = format!("hostbench compare {name}");
        check(&format!("compare-{name}.txt"), &r::comparison_text(groups));
        check(&format!("compare-{name}.json"), &r::comparison_json(groups));
        check(
            &format!("compare-{name}.html"),
            &r::comparison_html(&title, groups),
        );
        check(
            &format!("compare-{name}.md"),
            &r::comparison_markdown(&title, groups),
        );
    }
}

#[test]
fn soaks_in_every_format() {
    for s in soaks() {
        let id = s.id;
        let title = format!("hostbench soak {id}");
        check(&format!("soak-{id}.txt"), &r::soak_text(&s));
        check(&format!("soak-{id}-live.txt"), &r::soak_live(&s));
        check(&format!("soak-{id}.json"), &r::soak_json(&s));
        check(&format!("soak-{id}.html"), &r::soak_html(&title, &s));
        check(&format!("soak-{id}.md"), &r::soak_markdown(&title, &s));
    }
}

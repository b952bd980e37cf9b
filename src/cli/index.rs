//! `hostbench index`: the UnixBench-style system index (UnixBench 5.1.3's twelve
//! tests, passes and baselines, hostbench's programs) as a table or JSON.

use super::save::SaveArgs;
use super::{CliError, finished, parse_thread_count};
use crate::host::HostInfo;
use crate::progress::{Expect, Progress};
use crate::report::table::Table;
use crate::units::thousands;
use crate::workload::unixbench::catalogue;
use crate::workload::unixbench::{self, SuiteResult, UnixbenchSpec, sorted};
use clap::Args;
use serde::Serialize;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct IndexArgs {
    /// Copy counts: `all` (1 copy, then one per CPU, as UnixBench), `N`, or a list `1,4`.
    #[arg(long, default_value = "all", value_name = "LIST")]
    copies: String,
    /// UnixBench test names or groups, comma-separated (default: the twelve of the index).
    #[arg(long, default_value = "index", value_name = "LIST")]
    tests: String,
    /// Passes of the long tests (short tests get max(1, (N+1)/3)); default 10 and 3.
    #[arg(short, long, value_name = "N")]
    iterations: Option<u32>,
    /// A tenth of each duration, 3 and 1 passes, no settling pauses (a few minutes).
    /// Quick results are labelled and not comparable with full runs.
    #[arg(long)]
    quick: bool,
    /// With --quick: seconds every test runs for (e.g. 0.5).
    #[arg(long, value_name = "SECONDS", requires = "quick")]
    seconds: Option<f64>,
    /// Where the working directory (scripts, file-copy files) is made and removed.
    #[arg(long, default_value = ".", value_name = "DIR")]
    dir: std::path::PathBuf,
    /// Print the result as JSON (schema: docs/json.md, "UnixBench-style index").
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    save: SaveArgs,
}

fn copy_counts(spec: &str) -> Result<Vec<usize>, CliError> {
    if spec.trim() == "all" {
        let all = parse_thread_count("all").map_err(CliError::Usage)?;
        return Ok(if all > 1 { vec![1, all] } else { vec![1] });
    }
    spec.split(',')
        .map(|s| parse_thread_count(s).map_err(|e| CliError::Usage(format!("--copies: {e}"))))
        .collect()
}

fn test_names(spec: &str) -> Result<Vec<&'static str>, CliError> {
    let mut names = Vec::new();
    for word in spec.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        let tests = catalogue::expand(word).ok_or_else(|| {
            CliError::Usage(format!(
                "--tests: unknown test '{word}'; use one of: {}",
                catalogue::known_names()
            ))
        })?;
        names.extend(tests.iter().map(|t| t.name));
    }
    Ok(names)
}

pub fn execute(args: IndexArgs) -> Result<ExitCode, CliError> {
    let spec = UnixbenchSpec {
        tests: test_names(&args.tests)?,
        copies: copy_counts(&args.copies)?,
        iterations: args.iterations,
        quick: args.quick,
        seconds: args.seconds,
        dir: args.dir.clone(),
    };
    spec.validate()?;
    args.save.check()?;
    let total_passes: u64 = spec
        .tests
        .iter()
        .filter_map(|n| catalogue::by_name(n))
        .map(|t| spec.passes(&t) as u64)
        .sum::<u64>()
        * spec.copies.len() as u64;
    // The bar counts passes finished (the suite's progress).
    let bar = Progress::new("index", Expect::Units(total_passes));
    let started_at = crate::host::now_rfc3339();
    let result = unixbench::run(&spec, &bar).map_err(|e| match e {
        unixbench::RunError::Spec(s) => CliError::Spec(s),
        other => CliError::Usage(other.to_string()),
    })?;
    bar.finish();
    let host = HostInfo::detect();
    let stored = unixbench::outcome::to_outcomes(&spec, &result, host.clone());
    if args.json {
        let doc = Document::new(&spec, &result, host, started_at);
        let json = serde_json::to_string_pretty(&doc).expect("the index document serialises");
        write_stdout(&(json + "\n"));
    } else {
        write_stdout(&render(&spec, &result, &host));
    }
    args.save.save("index", None, &stored)?;
    Ok(finished(result.interrupted))
}

/// Prints without panicking when stdout is a closed pipe (`| head`).
fn write_stdout(text: &str) {
    use std::io::Write;
    let _ = std::io::stdout().write_all(text.as_bytes());
}

/// What `--json` prints (docs/json.md).
#[derive(Serialize)]
struct Document<'a> {
    schema_version: u32,
    tool: &'static str,
    tool_version: &'static str,
    workload: &'static str,
    /// Always "UnixBench-style": never UnixBench's own score.
    kind: &'static str,
    quick: bool,
    /// False for quick runs: their figures are not comparable with full runs.
    comparable_with_full_runs: bool,
    started_at: String,
    interrupted: bool,
    spec: &'a UnixbenchSpec,
    environment: &'a unixbench::environment::Environment,
    runs: Vec<RunDoc<'a>>,
    host: HostInfo,
}

#[derive(Serialize)]
struct RunDoc<'a> {
    copies: usize,
    /// The index (geometric mean of the tests' indexes), if any indexed test ran.
    index_score: Option<f64>,
    partial: bool,
    tests: Vec<TestDoc<'a>>,
    skipped: &'a [&'static str],
}

#[derive(Serialize)]
struct TestDoc<'a> {
    test: &'static str,
    label: &'static str,
    result: Option<f64>,
    unit: Option<&'a str>,
    time_s: Option<f64>,
    samples: usize,
    baseline: Option<f64>,
    index: Option<f64>,
    passes: &'a [unixbench::index::Pass],
}

impl<'a> Document<'a> {
    fn new(
        spec: &'a UnixbenchSpec,
        result: &'a SuiteResult,
        host: HostInfo,
        started_at: String,
    ) -> Self {
        let runs = result
            .runs
            .iter()
            .map(|run| RunDoc {
                copies: run.copies,
                index_score: run.index.as_ref().map(|i| i.score),
                partial: run.index.as_ref().is_none_or(|i| i.partial),
                skipped: &run.skipped,
                tests: sorted(&run.tests)
                    .into_iter()
                    .map(|r| TestDoc {
                        test: r.test.name,
                        label: r.test.label,
                        result: r.score.as_ref().map(|s| s.value),
                        unit: r.score.as_ref().map(|s| s.unit.as_str()),
                        time_s: r.score.as_ref().map(|s| s.time),
                        samples: r.score.as_ref().map_or(0, |s| s.samples),
                        baseline: r.test.baseline,
                        index: r
                            .score
                            .as_ref()
                            .zip(r.test.baseline)
                            .map(|(s, b)| s.value / b * 10.0),
                        passes: &r.passes,
                    })
                    .collect(),
            })
            .collect();
        Document {
            schema_version: crate::model::SCHEMA_VERSION,
            tool: "hostbench",
            tool_version: env!("CARGO_PKG_VERSION"),
            workload: "index",
            kind: "UnixBench-style",
            quick: spec.quick,
            comparable_with_full_runs: !spec.quick,
            started_at,
            interrupted: result.interrupted,
            spec,
            environment: &result.environment,
            runs,
            host,
        }
    }
}

fn render(spec: &UnixbenchSpec, result: &SuiteResult, host: &HostInfo) -> String {
    let mut out = format!(
        "UnixBench-style system index (hostbench) · {}\n",
        host.summary()
    );
    if spec.quick {
        out += "QUICK MODE: shorter runs and fewer passes; NOT comparable with full runs or UnixBench scores\n";
    }
    if result.interrupted {
        out += "INTERRUPTED: partial results\n";
    }
    for run in &result.runs {
        out += &format!(
            "\n{} {}\n",
            run.copies,
            if run.copies == 1 {
                "copy"
            } else {
                "parallel copies"
            }
        );
        let mut table = Table::new(
            &[
                "test", "result", "unit", "time", "samples", "baseline", "index",
            ],
            &[false, true, false, true, true, true, true],
        );
        for r in sorted(&run.tests) {
            let Some(s) = &r.score else {
                table.row(vec![
                    r.test.label.to_string(),
                    "no result".into(),
                    String::new(),
                    String::new(),
                    "0".into(),
                    r.test
                        .baseline
                        .map(|b| format!("{b:.1}"))
                        .unwrap_or_default(),
                    String::new(),
                ]);
                continue;
            };
            table.row(vec![
                r.test.label.to_string(),
                thousands(s.value, 1),
                s.unit.clone(),
                format!("{:.1} s", s.time),
                s.samples.to_string(),
                r.test
                    .baseline
                    .map(|b| format!("{b:.1}"))
                    .unwrap_or_default(),
                r.test
                    .baseline
                    .map(|b| format!("{:.1}", s.value / b * 10.0))
                    .unwrap_or_default(),
            ]);
        }
        out += &table.render("  ");
        if !run.skipped.is_empty() {
            out += &format!(
                "  skipped with more than {} copies (as UnixBench 5.1.3 does): {}\n",
                unixbench::MAX_COPIES,
                run.skipped.join(" ")
            );
        }
        if let Some(index) = &run.index {
            out += &format!(
                "  UnixBench-style index{}: {:.1}\n",
                if index.partial {
                    format!(
                        " (partial: {} of {} tests)",
                        index.rows.len(),
                        catalogue::INDEX_SIZE
                    )
                } else {
                    String::new()
                },
                index.score
            );
        }
    }
    out.push('\n');
    for note in &result.environment.notes {
        out += &format!("  note: {note}\n");
    }
    out
}

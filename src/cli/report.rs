//! `hostbench report`: stored runs, a comparison of them, a soak or a JSON result
//! file as one self-contained HTML page (inline SVG charts, nothing fetched), as
//! Markdown, as OpenMetrics text for node_exporter's textfile collector, or in any
//! other format `report::Format` has a layout for.

use super::CliError;
use super::compare::{group, selector};
use super::history::{load_run, print_stdout, same_file};
use super::save::DbArg;
use crate::fsutil::write_atomically;
use crate::model::Outcome;
use crate::report::{self, Compared, Document, Format, Kind, Outcomes, Runs};
use crate::store::{self, Location, Store};
use clap::{ArgGroup, Args};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("source").required(true)))]
pub struct ReportArgs {
    /// The stored run to report: its id (12), several (12,13), last, host:NAME or
    /// label:KEY=VALUE (every run that matches), as `hostbench compare` takes them.
    #[arg(value_name = "RUN", group = "source")]
    run: Option<String>,
    /// The newest N stored runs [N: 1], as `hostbench history --last N` lists them.
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "1", group = "source")]
    last: Option<usize>,
    /// Stored runs, hosts or labels side by side (the first is the reference), as
    /// `hostbench compare A B [C...]` takes them: bar charts, ratios, geometric means.
    #[arg(long, value_name = "GROUP", num_args = 2.., group = "source")]
    compare: Vec<String>,
    /// A JSON result written by a hostbench command's --json (one outcome, or a
    /// document with "outcomes") instead of the store.
    #[arg(long, value_name = "FILE", group = "source")]
    input: Option<PathBuf>,
    /// A stored soak (`hostbench soak`): its timeline chart with the threshold and
    /// flagged slices, and its statistics.
    #[arg(long, value_name = "ID", group = "source")]
    soak: Option<i64>,
    /// Only this workload's results (cpu, memory, disk, net, redis, index, ...).
    #[arg(long, value_name = "NAME")]
    workload: Option<String>,
    /// Write the report here (replaced whole, never left half-written); default: stdout.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// The output format (csv and openmetrics: runs and result files, not a
    /// comparison or a soak).
    #[arg(long, value_enum, default_value = "html")]
    format: Format,
    /// Title at the top of the page [default: what it reports].
    #[arg(long)]
    title: Option<String>,
    #[command(flatten)]
    db: DbArg,
}

fn read_outcomes(path: &PathBuf) -> Result<Vec<Outcome>, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::Usage(format!("--input {}: {e}", path.display())))?;
    parse_outcomes(&text).map_err(|e| {
        CliError::Usage(format!(
            "--input {}: not a hostbench JSON result ({e}); write one with a command's --json",
            path.display()
        ))
    })
}

/// A hostbench JSON result as `--input` reads it: one outcome, or a document with
/// `outcomes` (the fuzzers' `report_input` feeds it too).
pub(crate) fn parse_outcomes(text: &str) -> Result<Vec<Outcome>, serde_json::Error> {
    let value: serde_json::Value = serde_json::from_str(text)?;
    let mut outcomes: Vec<Outcome> = match value.get("outcomes") {
        Some(list) => serde_json::from_value(list.clone())?,
        None => vec![serde_json::from_value(value)?],
    };
    // A file written before percentiles were bounded can hold a p99.9 above the max.
    outcomes.iter_mut().for_each(Outcome::bound_percentiles);
    Ok(outcomes)
}

/// The store to read, or what to do when there is none yet.
fn open_store(db: &DbArg) -> Result<Box<dyn Store>, CliError> {
    let location = db.location()?;
    store::open_existing(&location)?.ok_or_else(|| {
        CliError::Usage(format!(
            "no results database at {} yet: save runs first (every native command saves its run), or give --db PATH",
            location.display()
        ))
    })
}

fn from_file(args: &ReportArgs, path: &PathBuf) -> Result<String, CliError> {
    let mut outcomes = read_outcomes(path)?;
    if outcomes.is_empty() {
        return Err(CliError::Usage(format!(
            "--input {}: it holds no results",
            path.display()
        )));
    }
    if let Some(w) = &args.workload {
        outcomes.retain(|o| &o.workload == w);
        if outcomes.is_empty() {
            return Err(CliError::Usage(format!(
                "--input {}: no {w} results in it",
                path.display()
            )));
        }
    }
    let doc = Document::Outcomes(Outcomes {
        title: args.title.clone(),
        ..Outcomes::new(&outcomes)
    });
    Ok(report::render(args.format, &doc)?)
}

fn from_runs(args: &ReportArgs, store: &dyn Store) -> Result<String, CliError> {
    let mut runs = match (&args.run, args.last) {
        (_, Some(n)) => newest(store, n)?,
        (Some(which), None) => group(store, which, None)?.runs,
        (None, None) => vec![load_run(store, "last")?],
    };
    if let Some(w) = &args.workload {
        for run in &mut runs {
            run.outcomes.retain(|o| &o.workload == w);
        }
        runs.retain(|r| !r.outcomes.is_empty());
        if runs.is_empty() {
            return Err(CliError::Usage(format!(
                "--workload {w}: the selected runs have no {w} results; `hostbench history --workload {w}` lists the runs that do"
            )));
        }
    }
    let doc = Document::Runs(Runs {
        runs: &runs,
        title: args.title.clone(),
    });
    Ok(report::render(args.format, &doc)?)
}

/// `--last N`: the newest N runs, oldest first (as `history --last N` lists them).
fn newest(store: &dyn Store, n: usize) -> Result<Vec<crate::store::StoredRun>, CliError> {
    if n == 0 {
        return Err(CliError::Usage(
            "--last 0: give how many of the newest runs to report (1 or more)".into(),
        ));
    }
    let infos = store.list(&crate::store::RunFilter {
        last: Some(n),
        ..Default::default()
    })?;
    if infos.is_empty() {
        return Err(CliError::Usage(format!(
            "{}: no runs stored yet",
            store.location()
        )));
    }
    infos
        .iter()
        .map(|info| load_run(store, &info.id.to_string()))
        .collect()
}

fn from_comparison(args: &ReportArgs, store: &dyn Store) -> Result<String, CliError> {
    let groups = args
        .compare
        .iter()
        .map(|g| group(store, g, args.workload.as_deref()))
        .collect::<Result<Vec<_>, _>>()?;
    let comparison =
        crate::suite::compare::compare(&groups).map_err(|e| CliError::Usage(e.to_string()))?;
    let doc = Document::Comparison(Compared {
        comparison: &comparison,
        groups: &groups,
        title: args.title.clone(),
    });
    Ok(report::render(args.format, &doc)?)
}

pub fn execute(args: ReportArgs) -> Result<ExitCode, CliError> {
    // What can be checked without the database is checked first.
    if let Some(which) = &args.run
        && selector(which).is_err()
    {
        return Err(CliError::Usage(format!(
            "'{which}' is not a run: give a run id from `hostbench history` (12), several (12,13), last, host:NAME or label:KEY=VALUE"
        )));
    }
    for g in &args.compare {
        selector(g)?;
    }
    let kind = if args.soak.is_some() {
        Kind::Soak
    } else if !args.compare.is_empty() {
        Kind::Comparison
    } else if args.input.is_some() {
        Kind::Outcomes
    } else {
        Kind::Runs
    };
    report::check(args.format, kind)?;
    if let Some(out) = &args.output {
        let own_input = match &args.input {
            Some(input) => same_file(out, input),
            None => {
                let Location::Sqlite { path: db, .. } = args.db.location()?;
                same_file(out, &db)
            }
        };
        if own_input {
            return Err(CliError::Usage(format!(
                "-o {}: that is the report's own input: write the report to another file",
                out.display()
            )));
        }
    }
    let text = match (&args.input, args.soak) {
        (_, Some(id)) => super::soak::report(&args.db, id, args.format, args.title.clone())?,
        (Some(path), None) => from_file(&args, path)?,
        (None, None) => {
            let store = open_store(&args.db)?;
            if args.compare.is_empty() {
                from_runs(&args, store.as_ref())?
            } else {
                from_comparison(&args, store.as_ref())?
            }
        }
    };
    match &args.output {
        None => print_stdout(&text),
        Some(path) => write_atomically(path, text.as_bytes()).map_err(|e| {
            CliError::Usage(format!(
                "-o {}: cannot write it ({e}); check the directory exists and is writable",
                path.display()
            ))
        })?,
    }
    Ok(ExitCode::SUCCESS)
}

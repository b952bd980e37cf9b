//! `hostbench compare A B [C...]`: stored runs, hosts or labels side by side.

use super::history::load_run;
use super::save::DbArg;
use super::{CliError, print_doc};
use crate::report::{Compared, Document, Format};
use crate::store::{self, Labels, RunFilter, Store, StoredRun};
use crate::suite::compare::{Group, compare};
use clap::Args;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Two or more groups, the first the reference: a run id (12), several runs taken
    /// as repeats (12,13,14), `last`, `host:NAME` (that host's runs) or
    /// `label:KEY=VALUE[,KEY=VALUE]` (the runs with those labels).
    #[arg(value_name = "GROUP", num_args = 2.., required = true)]
    groups: Vec<String>,
    /// Only this workload's metrics (cpu, memory, disk, net, redis, index, ...).
    #[arg(long, value_name = "NAME")]
    workload: Option<String>,
    #[command(flatten)]
    db: DbArg,
    /// Print the comparison as JSON.
    #[arg(long)]
    json: bool,
}

/// What one argument selects.
pub(super) enum Selector {
    Runs(Vec<String>),
    Filter(RunFilter),
}

pub(super) fn selector(arg: &str) -> Result<Selector, CliError> {
    let bad = |why: &str| {
        CliError::Usage(format!(
            "'{arg}' is not a group: {why}; give a run id (12), runs (12,13,14), last, host:NAME or label:KEY=VALUE"
        ))
    };
    if let Some(host) = arg.strip_prefix("host:") {
        if host.is_empty() {
            return Err(bad("no host name"));
        }
        return Ok(Selector::Filter(RunFilter {
            host: Some(host.to_string()),
            ..RunFilter::default()
        }));
    }
    if let Some(pairs) = arg.strip_prefix("label:") {
        let mut labels = Labels::new();
        for pair in pairs.split(',') {
            let (k, v) = store::parse_label(pair).map_err(|e| bad(&e.to_string()))?;
            labels.insert(k, v);
        }
        return Ok(Selector::Filter(RunFilter {
            labels,
            ..RunFilter::default()
        }));
    }
    let ids: Vec<String> = arg.split(',').map(|s| s.trim().to_string()).collect();
    if ids
        .iter()
        .all(|id| id == "last" || id.parse::<i64>().is_ok_and(|n| n > 0))
    {
        return Ok(Selector::Runs(ids));
    }
    Err(bad("not a run id"))
}

/// The runs an argument selects, as a group (`report` uses it too).
pub(super) fn group(
    store: &dyn Store,
    arg: &str,
    workload: Option<&str>,
) -> Result<Group, CliError> {
    let mut runs: Vec<StoredRun> = match selector(arg)? {
        Selector::Runs(ids) => ids
            .iter()
            .map(|id| load_run(store, id))
            .collect::<Result<_, _>>()?,
        Selector::Filter(filter) => {
            let mut runs = Vec::new();
            for info in store.list(&filter)? {
                if let Some(run) = store.load(info.id)? {
                    runs.push(run);
                }
            }
            runs
        }
    };
    if let Some(w) = workload {
        for run in &mut runs {
            run.outcomes.retain(|o| o.workload == w);
        }
        runs.retain(|r| !r.outcomes.is_empty());
    }
    if runs.is_empty() {
        let only = workload.map_or(String::new(), |w| format!(" with {w} results"));
        return Err(CliError::Usage(format!(
            "{arg}: no stored run{only} matches in {}: `hostbench history` lists the runs, hosts and labels",
            store.location()
        )));
    }
    Ok(Group {
        name: arg.to_string(),
        runs,
    })
}

pub fn execute(args: CompareArgs) -> Result<ExitCode, CliError> {
    // Bad selectors are named before the database is opened.
    for g in &args.groups {
        selector(g)?;
    }
    let location = args.db.location()?;
    let store = store::open_existing(&location)?.ok_or_else(|| {
        CliError::Usage(format!(
            "no results database at {} yet: save runs first (any native command saves its run)",
            location.display()
        ))
    })?;
    let groups = args
        .groups
        .iter()
        .map(|g| group(store.as_ref(), g, args.workload.as_deref()))
        .collect::<Result<Vec<_>, _>>()?;
    let comparison = compare(&groups).map_err(|e| CliError::Usage(e.to_string()))?;
    let doc = Document::Comparison(Compared {
        comparison: &comparison,
        groups: &groups,
        title: None,
    });
    print_doc(Format::text_or_json(args.json), &doc)?;
    Ok(ExitCode::SUCCESS)
}

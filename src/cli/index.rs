//! `hostbench index`: the UnixBench-style system index (UnixBench 5.1.3's twelve
//! tests, passes and baselines, hostbench's programs) as a table or JSON.

use super::save::SaveArgs;
use super::{CliError, finished, parse_thread_count, print_doc};
use crate::host::HostInfo;
use crate::progress::{Expect, Progress};
use crate::report::{Document, Format, Indexed};
use crate::workload::unixbench::catalogue;
use crate::workload::unixbench::{self, UnixbenchSpec};
use clap::Args;
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
    #[arg(long, value_name = "N")]
    iterations: Option<u32>,
    /// A tenth of each duration, 3 and 1 passes, no settling pauses (a few minutes).
    /// Quick results are labelled and not comparable with full runs.
    #[arg(long)]
    quick: bool,
    /// With --quick: how long every test runs (e.g. 500ms).
    #[arg(long, value_name = "DURATION", value_parser = super::parse_duration, requires = "quick")]
    time: Option<std::time::Duration>,
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
        seconds: args.time.map(|t| t.as_secs_f64()),
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
    let doc = Document::Index(Indexed {
        spec: &spec,
        result: &result,
        host: &host,
        started_at: &started_at,
    });
    print_doc(Format::text_or_json(args.json), &doc)?;
    args.save.save("index", None, &stored)?;
    Ok(finished(result.interrupted))
}

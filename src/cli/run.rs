use super::save::SaveArgs;
use super::{CliError, finished};
use crate::measure::stop_requested;
use crate::progress::{Expect, Progress};
use crate::report;
use crate::report::table::Table;
use crate::suite::run::{Options, Profile, StepError, plan, summarise};
use clap::Args;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// quick (under a minute), standard (several minutes) or full (about half an hour).
    #[arg(long, value_enum, default_value = "quick")]
    profile: Profile,
    /// Directory for the disk tests: hostbench makes a directory of its own under it
    /// and removes it afterwards.
    #[arg(long, default_value = ".", value_name = "DIR")]
    dir: std::path::PathBuf,
    /// Print all results and the summary as one JSON document.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    save: SaveArgs,
    #[command(flatten)]
    expect: super::ExpectArgs,
}

pub fn execute(args: RunArgs) -> Result<ExitCode, CliError> {
    let promise = args.expect.promise()?;
    args.save.check()?;
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let steps = plan(&Options {
        profile: args.profile,
        cpus,
        dir: args.dir.clone(),
    });
    let mut outcomes = Vec::new();
    let mut failed = false;
    for (i, step) in steps.iter().enumerate() {
        if stop_requested() {
            break;
        }
        let label = format!("{}/{} {}", i + 1, steps.len(), step.label());
        let progress = Progress::new(&label, Expect::Time(step.estimate()));
        let result = step.run(&progress);
        progress.finish();
        match result {
            Ok(done) => {
                for outcome in done {
                    if !args.json {
                        println!("{}", report::text::outcome(&outcome));
                    }
                    outcomes.push(outcome);
                }
            }
            Err(StepError::Spec(e)) => return Err(e.into()),
            Err(StepError::Disk(e)) if e.is_usage() => return Err(CliError::Usage(e.to_string())),
            // A failed step does not lose the others: say why and go on.
            Err(StepError::Disk(e)) => {
                eprintln!("hostbench: {} step failed: {e}", step.label());
                failed = true;
            }
        }
    }
    let summary = summarise(&outcomes);
    let verdict = promise.as_ref().map(|p| args.expect.verdict(p, &outcomes));
    if args.json {
        println!(
            "{}",
            report::json::document_with(&outcomes, &summary, verdict.as_ref().map(|v| v.0.clone()))
        );
    } else {
        let mut table = Table::new(&["area", "result", "verdict"], &[false, false, false]);
        for line in &summary {
            table.row(vec![
                line.area.clone(),
                line.headline.clone(),
                line.verdict.clone(),
            ]);
        }
        println!("Summary ({:?} profile)", args.profile);
        print!("{}", table.render("  "));
        if let Some((_, text, _)) = &verdict {
            print!("\n{text}");
        }
    }
    let profile = format!("{:?}", args.profile).to_lowercase();
    args.save.save("run", Some(&profile), &outcomes)?;
    if failed || verdict.as_ref().is_some_and(|v| !v.2) {
        return Ok(ExitCode::from(1));
    }
    Ok(finished(
        outcomes.iter().any(|o| o.interrupted) || stop_requested(),
    ))
}

use super::history::print_stdout;
use super::save::SaveArgs;
use super::{CliError, finished};
use crate::measure::stop_requested;
use crate::progress::{Expect, Progress};
use crate::report::{self, Document, Format, Live, Outcomes, SummaryTable};
use crate::store::{StepProblem, StepStatus};
use crate::suite::net_step::{Peer, parse_peer};
use crate::suite::redis_url;
use crate::suite::run::{Options, Profile, StepError, heading, interrupted, plan, summarise_with};
use clap::Args;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// quick (about 90 s on 2 cores), standard (about 10 minutes) or full (about an hour).
    #[arg(long, value_enum, default_value = "quick")]
    profile: Profile,
    /// Directory for the disk and index tests: hostbench makes a directory of its own
    /// under it and removes it afterwards.
    #[arg(long, default_value = ".", value_name = "DIR")]
    dir: std::path::PathBuf,
    /// Measure the network path to a host running `hostbench net serve` (default port
    /// 12866). Without it, the network step runs on loopback (this host's stack only).
    #[arg(long, value_name = "HOST[:PORT]")]
    peer: Option<String>,
    /// The --peer's shared secret, when it runs `hostbench net serve --secret`.
    #[arg(long, value_name = "SECRET", requires = "peer")]
    secret: Option<String>,
    /// Measure this Redis: redis://[user:password@]host[:port][/db] or unix:///path.
    /// Without it, a redis-server is started for the step when one is installed.
    /// Only keys under hostbench:run: are touched, and removed afterwards.
    #[arg(long, value_name = "URL")]
    redis: Option<String>,
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
    // Bad input costs no time: everything given is checked before the first step.
    let peer = args
        .peer
        .as_deref()
        .map(check_peer)
        .transpose()?
        .map(|p| Peer {
            secret: args.secret.clone(),
            ..p
        });
    let redis = args
        .redis
        .as_deref()
        .map(|u| redis_url::parse(u).map(|url| (u.to_string(), url)))
        .transpose()
        .map_err(|e| CliError::Usage(e.to_string()))?;
    args.save.check()?;
    crate::workload::disk::check_dir(&args.dir).map_err(|e| CliError::Usage(e.to_string()))?;
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let format = Format::text_or_json(args.json);
    let renderer = report::renderer(format);
    let steps = plan(&Options {
        profile: args.profile,
        cpus,
        dir: args.dir.clone(),
        peer,
        redis,
    });
    let mut outcomes = Vec::new();
    let mut problems = Vec::new();
    let mut failed = false;
    for (i, step) in steps.iter().enumerate() {
        if stop_requested() {
            break;
        }
        let label = format!("{}/{} {}", i + 1, steps.len(), step.label());
        let progress = Progress::new(&label, Expect::Time(step.estimate()));
        let result = step.run(&progress);
        progress.finish();
        let (done, problem) = match result {
            Ok(done) => (done, None),
            Err(StepError::Spec(e)) => return Err(e.into()),
            Err(StepError::Disk(e)) if e.is_usage() => return Err(CliError::Usage(e.to_string())),
            // A failed step does not lose the others: say why and go on.
            Err(StepError::Disk(e)) => (vec![], Some((StepStatus::Failed, e.to_string()))),
            Err(StepError::Failed { message, kept }) => (kept, Some((StepStatus::Failed, message))),
            Err(StepError::Unavailable(why)) => (vec![], Some((StepStatus::Skipped, why))),
        };
        for outcome in done {
            if let Some(text) = renderer.live(&Live::Outcome(&outcome)) {
                print_stdout(&text);
            }
            outcomes.push(outcome);
        }
        if let Some((status, reason)) = problem {
            eprintln!(
                "hostbench: {} step {}: {reason}",
                step.label(),
                status.as_str()
            );
            failed |= status == StepStatus::Failed;
            problems.push(StepProblem {
                step: step.label().into(),
                area: step.area().into(),
                status,
                reason,
            });
        }
    }
    if stop_requested() {
        problems.push(interrupted());
    }
    let lines = summarise_with(&outcomes, &problems);
    let expectation = promise
        .as_ref()
        .map(|p| args.expect.expectation(p, &outcomes));
    let below_promise = expectation.as_ref().is_some_and(|e| !e.pass());
    let profile = args.profile.name();
    let doc = Document::Outcomes(Outcomes {
        outcomes: &outcomes,
        summary: Some(SummaryTable::areas(heading(Some(profile)), &lines)),
        expectation,
        title: None,
    });
    // The steps' outcomes were printed as they came (in text): the rest of it.
    print_stdout(&renderer.end(&doc)?);
    args.save
        .save_with("run", Some(profile), &outcomes, &problems)?;
    if failed || below_promise {
        return Ok(ExitCode::from(1));
    }
    Ok(finished(
        outcomes.iter().any(|o| o.interrupted) || stop_requested(),
    ))
}

/// `--peer` parses and its name resolves, or the run does not start.
fn check_peer(text: &str) -> Result<Peer, CliError> {
    let peer = parse_peer(text).map_err(|e| CliError::Usage(e.to_string()))?;
    crate::workload::net::resolve(&peer.host, peer.port, crate::workload::net::Family::Any)
        .map_err(|e| CliError::Usage(format!("--peer '{text}': {e}")))?;
    Ok(peer)
}

//! `hostbench soak`: a workload on a schedule (seed 002's "10 minutes of 4k random
//! 70/30 every hour for a day"), every slice stored, resumable, judged by its CV,
//! deepest drop and the slices below a share of the median. The schedule and the
//! slices live in `suite::soak`; the text and the pages are `report`'s (a
//! `Document::Soak`, its timeline printed live as `Live` pieces).

use super::history::print_stdout;
use super::save::DbArg;
use super::{CliError, parse_duration, print_doc};
use crate::report::{self, Document, Format, Live, Soaked};
use crate::store::soak::{Slice, Soak, SoakPlan, SoakState};
use crate::store::{self, Labels, Store};
use crate::suite::soak::{self as soak, End, SoakError, stats::Kind};
use clap::{Args, Parser};
use std::process::ExitCode;
use std::time::Duration;

#[derive(Debug, Args)]
#[command(
    after_help = "The workload is a native command line: cpu, memory, disk, net or redis with \
                  their own options, after soak's options. Each slice runs it with its --time \
                  set to soak's --time. \
                  Or a peer's command line, as the guides give it: sysbench … run, fio JOBFILE, \
                  iperf3 -c HOST, netperf -H HOST, ping HOST, redis-benchmark … (after `--`, e.g. `hostbench soak \
                  --every 1h --for 24h --time 10m -- fio seed.fio`); each slice runs it for \
                  --time whatever its own time option says (fio: every job time-based). \
                  Default: `disk --tests mixed` in the current directory (4 KiB random, 70 % \
                  reads, 32 in flight).\n\
                  Ctrl-C stops after saving the finished slices; `hostbench soak --resume ID` \
                  continues on the original schedule, recording the slices whose time passed \
                  meanwhile as missed.\n\
                  Exit status: 0 finished, 1 finished with flagged slices (or the first slice \
                  failed), 2 bad input, 130 stopped.",
    group(clap::ArgGroup::new("mode").args(["resume", "show", "list"]).multiple(false))
)]
pub struct SoakArgs {
    /// Start a slice every DURATION [default: 1h].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    every: Option<Duration>,
    /// Keep going for DURATION from the first slice [default: 24h].
    #[arg(long = "for", value_name = "DURATION", value_parser = parse_duration)]
    total: Option<Duration>,
    /// Each slice measures for DURATION [default: 10m].
    #[arg(long = "time", value_name = "DURATION", value_parser = parse_duration)]
    duration: Option<Duration>,
    /// Flag slices below PCT % of the median (of the slices' headline figure) [default: 80].
    #[arg(long, value_name = "PCT")]
    threshold: Option<f64>,
    /// Continue soak ID on its original schedule (after a restart or Ctrl-C).
    #[arg(long, value_name = "ID", conflicts_with_all = ["every", "total", "duration", "threshold", "labels", "workload"])]
    resume: Option<i64>,
    /// Print soak ID's timeline, statistics and verdict from the store (--threshold re-judges it).
    #[arg(long, value_name = "ID", conflicts_with_all = ["every", "total", "duration", "labels", "workload"])]
    show: Option<i64>,
    /// List the soaks in the store.
    #[arg(long, conflicts_with_all = ["every", "total", "duration", "threshold", "labels", "workload"])]
    list: bool,
    /// Label every slice's run, e.g. --label provider=tencent (repeatable); each also
    /// gets soak=ID and slice=N.
    #[arg(long = "label", value_name = "KEY=VALUE", value_parser = store::parse_label)]
    labels: Vec<(String, String)>,
    /// Print the soak (plan, slices, statistics, verdict) as JSON; the live timeline goes to stderr.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    db: DbArg,
    /// The workload's command line [default: disk --tests mixed].
    #[arg(
        value_name = "WORKLOAD",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    workload: Vec<String>,
}

fn usage(e: impl std::fmt::Display) -> CliError {
    CliError::Usage(e.to_string())
}

fn from_soak(e: SoakError) -> CliError {
    match e {
        SoakError::Spec(e) => CliError::Spec(e),
        SoakError::Store(e) => CliError::Store(e),
    }
}

pub fn execute(args: SoakArgs) -> Result<ExitCode, CliError> {
    if let Some(id) = args.show {
        return show(&args, id);
    }
    if args.list {
        return list(&args);
    }
    if let Some(id) = args.resume {
        return resume(&args, id);
    }
    start(&args)
}

/// A stored soak, or the error naming the id and the way to find one.
fn load(db: &DbArg, id: i64) -> Result<(Box<dyn Store>, Soak), CliError> {
    let location = db.location()?;
    let missing = || {
        usage(format!(
            "soak {id}: no such soak in {}; `hostbench soak --list` lists them",
            location.display()
        ))
    };
    let store = store::open_existing(&location)?.ok_or_else(missing)?;
    let soak = store.load_soak(id)?.ok_or_else(missing)?;
    Ok((store, soak))
}

fn check_threshold(t: f64) -> Result<f64, CliError> {
    if t.is_finite() && t > 0.0 && t <= 100.0 {
        Ok(t)
    } else {
        Err(usage(format!(
            "--threshold {t}: give a share of the median in percent, above 0 and at most 100, e.g. 80"
        )))
    }
}

fn show(args: &SoakArgs, id: i64) -> Result<ExitCode, CliError> {
    let threshold = args.threshold.map(check_threshold).transpose()?;
    let (_, soak) = load(&args.db, id)?;
    let summary = soak::summarise(&soak, threshold);
    print_doc(
        Format::text_or_json(args.json),
        &Document::Soak(Soaked {
            soak: &soak,
            summary: &summary,
            title: None,
        }),
    )?;
    Ok(ExitCode::SUCCESS)
}

fn list(args: &SoakArgs) -> Result<ExitCode, CliError> {
    let location = args.db.location()?;
    let soaks = match store::open_existing(&location)? {
        Some(store) => store.list_soaks()?,
        None => Vec::new(),
    };
    let text = report::render(Format::text_or_json(args.json), &Document::Soaks(&soaks))?;
    if text.is_empty() {
        eprintln!("no soaks in {}", location.display());
    }
    print_stdout(&text);
    Ok(ExitCode::SUCCESS)
}

/// Checks the workload's command line as the slices will run it, without running it.
fn check_workload(words: &[String], duration: Duration) -> Result<(), CliError> {
    let option = match soak::slicing(words)? {
        soak::Slicing::Option(option) => option,
        // A peer's grammar is the peer's: its first slice refuses a bad line (exit 2),
        // and the soak ends there with that message.
        soak::Slicing::Personality => return Ok(()),
    };
    let mut argv = vec!["hostbench".to_string()];
    argv.extend(soak::slice::command_line(words, option, duration));
    if let Err(e) = super::Cli::try_parse_from(&argv) {
        let text = e.to_string();
        let first = text
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim_start_matches("error: ");
        return Err(usage(format!(
            "the workload `{}` is refused: {first}; run `hostbench {} --help` for its options",
            words.join(" "),
            words[0]
        )));
    }
    Ok(())
}

fn start(args: &SoakArgs) -> Result<ExitCode, CliError> {
    let every = args.every.unwrap_or(Duration::from_secs(3600));
    let total = args.total.unwrap_or(Duration::from_secs(24 * 3600));
    let duration = args.duration.unwrap_or(Duration::from_secs(600));
    soak::check_schedule(every, total, duration)?;
    let threshold = check_threshold(args.threshold.unwrap_or(soak::DEFAULT_THRESHOLD_PERCENT))?;
    let words = soak::workload_words(&args.workload)?;
    check_workload(&words, duration)?;
    let mut labels = Labels::new();
    for (k, v) in &args.labels {
        if k == "soak" || k == "slice" {
            return Err(usage(format!(
                "--label {k}={v}: soak sets the labels soak and slice itself; use another key"
            )));
        }
        if let Some(old) = labels.insert(k.clone(), v.clone()) {
            return Err(usage(format!(
                "--label {k} is given twice ({old} and {v}): give each key once"
            )));
        }
    }
    let mut store = store::open(&args.db.location()?)?;
    let plan = SoakPlan {
        workload: words,
        start_ms: soak::now_ms(),
        every_ms: every.as_millis() as i64,
        for_ms: total.as_millis() as i64,
        duration_ms: duration.as_millis() as i64,
        threshold_pct: threshold,
        labels,
    };
    let twin = store.list_soaks()?.into_iter().rev().find(|s| {
        matches!(s.state, SoakState::Running | SoakState::Stopped)
            && s.plan.workload == plan.workload
            && (s.plan.every_ms, s.plan.for_ms, s.plan.duration_ms)
                == (plan.every_ms, plan.for_ms, plan.duration_ms)
            && s.plan.start_ms + s.plan.for_ms > plan.start_ms
            && soak::running_elsewhere(s).is_none()
    });
    let id = store.create_soak(&plan)?;
    if let Some(t) = twin {
        eprintln!(
            "note: soak {} has the same workload and schedule and is unfinished; this is a new soak ({id}). \
             To continue that one instead: hostbench soak --resume {}",
            t.id, t.id
        );
    }
    let soak = store
        .load_soak(id)?
        .ok_or_else(|| usage(format!("soak {id} vanished from the store")))?;
    drive(store, soak, Format::text_or_json(args.json))
}

fn resume(args: &SoakArgs, id: i64) -> Result<ExitCode, CliError> {
    let (mut store, soak) = load(&args.db, id)?;
    match soak.state {
        SoakState::Failed => {
            return Err(usage(format!(
                "soak {id} failed at its first slice (its workload was refused); start a new soak with a corrected workload"
            )));
        }
        SoakState::Finished => {
            eprintln!("soak {id} is finished; its result:");
            let summary = soak::summarise(&soak, None);
            print_doc(
                Format::text_or_json(args.json),
                &Document::Soak(Soaked {
                    soak: &soak,
                    summary: &summary,
                    title: None,
                }),
            )?;
            return Ok(ExitCode::SUCCESS);
        }
        SoakState::Running | SoakState::Stopped => {}
    }
    if let Some(pid) = soak::running_elsewhere(&soak) {
        return Err(usage(format!(
            "soak {id} is running in process {pid}; stop that one first (Ctrl-C, or kill {pid}), then resume"
        )));
    }
    soak::slicing(&soak.plan.workload)?;
    store.set_soak_state(id, SoakState::Running, Some(std::process::id()))?;
    eprintln!(
        "resuming soak {id}: {} of {} slices recorded",
        soak.slices.len(),
        soak.plan.slice_count()
    );
    drive(store, soak, Format::text_or_json(args.json))
}

/// Runs the remaining slices with the live timeline, then records how it ended.
fn drive(mut store: Box<dyn Store>, mut soak: Soak, format: Format) -> Result<ExitCode, CliError> {
    let renderer = report::renderer(format);
    // The timeline as it happens: on stdout in a format that prints as it goes, else
    // (JSON at the end) as text on stderr.
    let say = |piece: Live| match renderer.live(&piece) {
        Some(text) => {
            print!("{text}");
            use std::io::Write;
            let _ = std::io::stdout().flush();
        }
        None => eprint!("{}", report::text::live(&piece)),
    };
    say(Live::SoakStart(&soak));
    let mut headed = false;
    let mut head = |soak: &Soak, slice: &Slice| {
        if !headed {
            let f = slice
                .figure
                .as_ref()
                .or_else(|| soak.slices.iter().find_map(|s| s.figure.as_ref()));
            say(Live::SoakColumns(soak, f));
            headed = true;
        }
    };
    // A resumed soak shows what it had first.
    for slice in &soak.slices {
        head(&soak, slice);
        say(Live::Slice(&soak, slice));
    }
    let mut shown = |soak: &Soak, slice: &Slice| {
        head(soak, slice);
        say(Live::Slice(soak, slice));
    };
    let end = soak::drive(store.as_mut(), &mut soak, &mut shown).map_err(from_soak)?;
    let (state, code) = match &end {
        End::Finished => (SoakState::Finished, None),
        End::Stopped => (SoakState::Stopped, Some(ExitCode::from(130))),
        End::Refused(_) => (SoakState::Failed, Some(ExitCode::from(2))),
        End::FirstFailed(_) => (SoakState::Failed, Some(ExitCode::from(1))),
    };
    if state == SoakState::Failed && soak.slices.is_empty() {
        // Nothing was recorded: the error is the whole story, keep no empty soak.
        store.delete_soak(soak.id)?;
    } else {
        store.set_soak_state(soak.id, state, None)?;
    }
    soak.state = state;
    match end {
        End::Refused(message) => {
            return Err(usage(format!(
                "the workload `{}` was refused: {message}",
                soak.plan.workload.join(" ")
            )));
        }
        End::FirstFailed(message) => {
            eprintln!(
                "hostbench: error: the first slice of `{}` failed: {message}; nothing was kept: fix it and start the soak again",
                soak.plan.workload.join(" ")
            );
            return Ok(ExitCode::from(1));
        }
        End::Finished | End::Stopped => {}
    }
    let summary = soak::summarise(&soak, None);
    let doc = Document::Soak(Soaked {
        soak: &soak,
        summary: &summary,
        title: None,
    });
    // The slices were printed as they came (in text): the statistics and verdict.
    print_stdout(&renderer.end(&doc)?);
    if state == SoakState::Stopped {
        eprintln!(
            "stopped; the finished slices are saved. Continue with: hostbench soak --resume {}",
            soak.id
        );
    }
    let nothing_measured = summary.measured == 0 && summary.failed > 0;
    Ok(code.unwrap_or(
        if summary.verdict.kind == Kind::Unstable || nothing_measured {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        },
    ))
}

/// `hostbench report --soak ID`: a stored soak in `format` (a page by default).
pub fn report(
    db: &DbArg,
    id: i64,
    format: Format,
    title: Option<String>,
) -> Result<String, CliError> {
    let (_, soak) = load(db, id)?;
    let summary = soak::summarise(&soak, None);
    let doc = Document::Soak(Soaked {
        soak: &soak,
        summary: &summary,
        title,
    });
    Ok(report::render(format, &doc)?)
}

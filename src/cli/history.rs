//! `hostbench history`, `show` and `export`: reading the results store.

use super::save::DbArg;
use super::{CliError, print_doc};
use crate::report::{self, Document, Format, History, Runs};
use crate::store::{self, Labels, Location, RunFilter, Store, StoredRun};
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Which runs: the filters `history` and `export` share.
#[derive(Debug, Args, Clone, Default)]
pub struct FilterArgs {
    /// Runs on this host (its hostname, exactly).
    #[arg(long, value_name = "NAME")]
    host: Option<String>,
    /// Runs with this label (repeatable: all must match).
    #[arg(long = "label", value_name = "KEY=VALUE", value_parser = parse_label)]
    labels: Vec<(String, String)>,
    /// Runs that measured this workload: cpu, memory, disk, net, redis, index, ...
    #[arg(long, value_name = "NAME")]
    workload: Option<String>,
    /// Runs started on or after this time: YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS], UTC.
    #[arg(long, value_name = "DATE", value_parser = parse_since)]
    since: Option<String>,
    /// Runs started on or before this time (a bare date includes its whole day).
    #[arg(long, value_name = "DATE", value_parser = parse_until)]
    until: Option<String>,
    /// Only the newest N of the runs that match.
    #[arg(long, value_name = "N")]
    last: Option<usize>,
}

fn parse_label(s: &str) -> Result<(String, String), String> {
    store::parse_label(s).map_err(|e| e.to_string())
}

fn parse_since(s: &str) -> Result<String, String> {
    store::parse_when(s, false).map_err(|e| e.to_string())
}

fn parse_until(s: &str) -> Result<String, String> {
    store::parse_when(s, true).map_err(|e| e.to_string())
}

impl FilterArgs {
    fn filter(&self) -> RunFilter {
        RunFilter {
            host: self.host.clone(),
            labels: self.labels.iter().cloned().collect::<Labels>(),
            workload: self.workload.clone(),
            since: self.since.clone(),
            until: self.until.clone(),
            ids: Vec::new(),
            last: self.last,
        }
    }
}

#[derive(Debug, Args)]
pub struct HistoryArgs {
    #[command(flatten)]
    filter: FilterArgs,
    #[command(flatten)]
    db: DbArg,
    /// Print the runs as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The run: its id (from `hostbench history`), or `last`.
    #[arg(value_name = "RUN")]
    run: String,
    #[command(flatten)]
    db: DbArg,
    /// Print the stored run as JSON: its outcomes exactly as the command's --json printed them.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    #[command(flatten)]
    filter: FilterArgs,
    /// Only these runs (repeatable), on top of the filters.
    #[arg(long = "run", value_name = "ID")]
    runs: Vec<i64>,
    /// The output format (json: every run with all its outcomes, histograms and
    /// series included).
    #[arg(long, value_enum, default_value = "json")]
    format: Format,
    /// Write to FILE (replaced whole, never left half-written) instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,
    #[command(flatten)]
    db: DbArg,
}

/// Opens the store to read; None (after saying so) when nothing was saved there yet.
pub(super) fn open_to_read(db: &DbArg) -> Result<Option<Box<dyn Store>>, CliError> {
    let location = db.location()?;
    let store = store::open_existing(&location)?;
    if store.is_none() {
        eprintln!(
            "hostbench: no results database at {} yet: native commands (cpu, memory, disk, redis, run, ...) save their runs there",
            location.display()
        );
    }
    Ok(store)
}

pub fn history(args: HistoryArgs) -> Result<ExitCode, CliError> {
    let store = open_to_read(&args.db)?;
    let runs = match &store {
        Some(s) => s.list(&args.filter.filter())?,
        None => Vec::new(),
    };
    let doc = Document::History(History {
        database: args.db.location()?.display(),
        runs: &runs,
    });
    let text = report::render(Format::text_or_json(args.json), &doc)?;
    // Nothing to list (text says nothing): say why, unless there was no store at all.
    if text.is_empty() && store.is_some() {
        eprintln!("hostbench: no stored run matches");
    }
    print_stdout(&text);
    Ok(ExitCode::SUCCESS)
}

/// A run by id or `last`; an unknown one names the way to find a real one.
pub(super) fn load_run(store: &dyn Store, which: &str) -> Result<StoredRun, CliError> {
    let id = if which == "last" {
        let newest = store.list(&RunFilter {
            last: Some(1),
            ..RunFilter::default()
        })?;
        newest
            .first()
            .map(|r| r.id)
            .ok_or_else(|| CliError::Usage(format!("{}: no runs stored yet", store.location())))?
    } else {
        which.parse::<i64>().map_err(|_| {
            CliError::Usage(format!(
                "'{which}' is not a run: give a run id from `hostbench history`, or `last`"
            ))
        })?
    };
    match store.load(id)? {
        Some(run) => Ok(run),
        None => Err(CliError::Usage(format!(
            "no run {id} in {}: {}; `hostbench history` lists them",
            store.location(),
            stored_ids(store)?
        ))),
    }
}

/// Which run ids exist, for the message about one that does not:
/// `runs 1 to 5 are stored`, `4 runs between 2 and 9 are stored`.
fn stored_ids(store: &dyn Store) -> Result<String, CliError> {
    let ids: Vec<i64> = store
        .list(&RunFilter::default())?
        .iter()
        .map(|r| r.id)
        .collect();
    Ok(match (ids.first(), ids.last()) {
        (Some(&a), Some(&b)) if a == b => format!("only run {a} is stored"),
        (Some(&a), Some(&b)) if (b - a + 1) as usize == ids.len() => {
            format!("runs {a} to {b} are stored")
        }
        (Some(&a), Some(&b)) => format!("{} runs between {a} and {b} are stored", ids.len()),
        _ => "no runs are stored yet".into(),
    })
}

pub fn show(args: ShowArgs) -> Result<ExitCode, CliError> {
    if args.run != "last" && args.run.parse::<i64>().is_err() {
        return Err(CliError::Usage(format!(
            "'{}' is not a run: give a run id from `hostbench history`, or `last`",
            args.run
        )));
    }
    let location = args.db.location()?;
    let Some(store) = store::open_existing(&location)? else {
        return Err(CliError::Usage(format!(
            "no run {} in {}: no results database there yet",
            args.run,
            location.display()
        )));
    };
    let run = load_run(store.as_ref(), &args.run)?;
    print_doc(Format::text_or_json(args.json), &Document::Run(&run))?;
    Ok(ExitCode::SUCCESS)
}

pub fn export(args: ExportArgs) -> Result<ExitCode, CliError> {
    let location = args.db.location()?;
    if let (Some(out), Location::Sqlite { path: db, .. }) = (&args.output, &location)
        && same_file(out, db)
    {
        return Err(CliError::Usage(format!(
            "--output {} is the results database itself: write the export to another file",
            out.display()
        )));
    }
    let mut runs = Vec::new();
    if let Some(store) = open_to_read(&args.db)? {
        let mut filter = args.filter.filter();
        filter.ids = args.runs.clone();
        for info in store.list(&filter)? {
            if let Some(run) = store.load(info.id)? {
                runs.push(run);
            }
        }
        if let Some(missing) = args
            .runs
            .iter()
            .find(|id| !runs.iter().any(|r| r.info.id == **id))
        {
            return Err(CliError::Usage(format!(
                "--run {missing}: no such run in {} (or the other filters leave it out): `hostbench history` lists the runs",
                store.location()
            )));
        }
    }
    let doc = Document::Runs(Runs {
        runs: &runs,
        title: None,
    });
    let text = report::render(args.format, &doc)?;
    match &args.output {
        None => print_stdout(&text),
        Some(path) => {
            crate::fsutil::write_atomically(path, text.as_bytes()).map_err(|e| {
                CliError::Usage(format!(
                    "--output {}: cannot write it ({e}); check the directory exists and is writable",
                    path.display()
                ))
            })?;
            let plural = if runs.len() == 1 { "" } else { "s" };
            eprintln!("exported {} run{plural} to {}", runs.len(), path.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Where stdout is not a terminal and COLUMNS is unset (a pipe, a file, a test), text
/// tables fit in this many characters.
pub const DEFAULT_WIDTH: usize = 100;

/// The width the text tables fit in: COLUMNS when it is a positive number, else the
/// terminal's when stdout is one, else `DEFAULT_WIDTH`. The same rule for every
/// command, so `show` prints a run's summary as the run did in the same terminal.
pub(super) fn terminal_width() -> usize {
    use std::io::IsTerminal;
    let tty = std::io::stdout().is_terminal().then(tty_columns).flatten();
    width_from(std::env::var("COLUMNS").ok().as_deref(), tty)
}

fn width_from(columns: Option<&str>, tty: Option<usize>) -> usize {
    columns
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c > 0)
        .or(tty)
        .unwrap_or(DEFAULT_WIDTH)
}

/// The terminal's columns (TIOCGWINSZ on stdout), when it says.
fn tty_columns() -> Option<usize> {
    let mut size: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: TIOCGWINSZ writes one winsize into the struct we own.
    let ok = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut size) } == 0;
    (ok && size.ws_col > 0).then_some(size.ws_col as usize)
}

/// Writes a report to stdout; a closed pipe (`| head`) ends it quietly, as for any filter.
pub(super) fn print_stdout(text: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    let _ = stdout
        .write_all(text.as_bytes())
        .and_then(|_| stdout.flush());
}

pub(super) fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn width_is_columns_else_the_terminal_else_the_default() {
        assert_eq!(width_from(Some("72"), Some(200)), 72);
        assert_eq!(width_from(Some(" 80 "), None), 80);
        assert_eq!(width_from(None, Some(200)), 200);
        for bad in ["0", "wide", "", "-5"] {
            assert_eq!(width_from(Some(bad), Some(132)), 132, "{bad}");
            assert_eq!(width_from(Some(bad), None), DEFAULT_WIDTH, "{bad}");
        }
        assert_eq!(width_from(None, None), DEFAULT_WIDTH);
    }
}

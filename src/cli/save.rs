//! The one hook through which every native command keeps its results: flatten
//! `SaveArgs` into the command's arguments, call `check()` before measuring (a bad
//! `--db` fails before minutes of work) and `save()` with the outcomes afterwards.

use super::CliError;
use crate::model::Outcome;
use crate::store::{self, Labels, Location, NewRun, StepProblem};
use clap::Args;

/// `--db PATH`: where results are kept (commands that save and commands that read).
#[derive(Debug, Args, Clone, Default)]
pub struct DbArg {
    /// Results database [default: $HOSTBENCH_DB, else
    /// $XDG_DATA_HOME/hostbench/results.db, else ~/.local/share/hostbench/results.db].
    #[arg(long = "db", id = "results_db", value_name = "PATH")]
    pub db: Option<String>,
}

impl DbArg {
    /// `--db`, else `HOSTBENCH_DB` (which personalities read too), else the default.
    pub fn location(&self) -> Result<Location, CliError> {
        let env = std::env::var(crate::env::DB).ok();
        Ok(Location::resolve(self.db.as_deref().or(env.as_deref()))?)
    }
}

#[derive(Debug, Args, Clone, Default)]
pub struct SaveArgs {
    #[command(flatten)]
    pub db: DbArg,
    /// Label the saved run, e.g. --label provider=aws --label type=c6i.large (repeatable);
    /// `history`, `export` and `compare label:provider=aws` select runs by label.
    #[arg(long = "label", value_name = "KEY=VALUE", value_parser = parse_label)]
    pub labels: Vec<(String, String)>,
    /// Do not save this run in the results database (as HOSTBENCH_NO_SAVE=1 does).
    #[arg(long)]
    pub no_save: bool,
}

fn parse_label(s: &str) -> Result<(String, String), String> {
    store::parse_label(s).map_err(|e| e.to_string())
}

impl SaveArgs {
    fn labels(&self) -> Result<Labels, CliError> {
        let mut labels = Labels::new();
        for (k, v) in &self.labels {
            if let Some(old) = labels.insert(k.clone(), v.clone()) {
                return Err(CliError::Usage(format!(
                    "--label {k} is given twice ({old} and {v}): give each key once"
                )));
            }
        }
        Ok(labels)
    }

    fn saving(&self) -> bool {
        !self.no_save && !crate::env::on(crate::env::NO_SAVE)
    }

    /// Before measuring: the labels parse and the database opens (created or migrated).
    pub fn check(&self) -> Result<(), CliError> {
        self.labels()?;
        if !self.saving() {
            return Ok(());
        }
        store::open(&self.db.location()?)?;
        Ok(())
    }

    /// Saves the outcomes as one run and says so on stderr (stdout stays the report or
    /// the JSON). `profile` is `hostbench run`'s. Nothing measured, nothing saved.
    pub fn save(
        &self,
        command: &str,
        profile: Option<&str>,
        outcomes: &[Outcome],
    ) -> Result<Option<i64>, CliError> {
        self.save_with(command, profile, outcomes, &[])
    }

    /// `save`, with the steps that gave no result (`run`'s skipped, failed and
    /// interrupted steps), so `show` prints them as the run did.
    pub fn save_with(
        &self,
        command: &str,
        profile: Option<&str>,
        outcomes: &[Outcome],
        problems: &[StepProblem],
    ) -> Result<Option<i64>, CliError> {
        let outcomes: Vec<Outcome> = outcomes
            .iter()
            .filter(|o| !o.measured_nothing())
            .cloned()
            .collect();
        if !self.saving() || outcomes.is_empty() {
            return Ok(None);
        }
        let labels = self.labels()?;
        let mut db = store::open(&self.db.location()?)?;
        for note in db.take_notes() {
            eprintln!("hostbench: note: {note}");
        }
        let command_line = command_line();
        let run = NewRun {
            command,
            command_line: &command_line,
            labels: &labels,
            profile,
            outcomes: &outcomes,
        };
        let id = db.save_with(&run, problems)?;
        eprintln!("saved as run {id}");
        Ok(Some(id))
    }
}

/// This process's command line as typed, the program's file name first.
pub fn command_line() -> Vec<String> {
    let mut words: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    if let Some(first) = words.first_mut()
        && let Some(name) = std::path::Path::new(first.as_str()).file_name()
    {
        *first = name.to_string_lossy().into_owned();
    }
    words
}

//! `hostbench report`: a results file turned into one self-contained HTML page
//! (inline SVG charts, nothing fetched) or Markdown.

use super::CliError;
use crate::model::Outcome;
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A JSON result written by a hostbench command's --json (one outcome, or a
    /// document with "outcomes").
    #[arg(long, value_name = "FILE", required_unless_present = "soak")]
    input: Option<PathBuf>,
    /// A stored soak (`hostbench soak`): its timeline chart with the threshold and
    /// flagged slices, and its statistics.
    #[arg(long, value_name = "ID", conflicts_with = "input")]
    soak: Option<i64>,
    #[command(flatten)]
    db: super::save::DbArg,
    /// Write the report here (replaced whole); default: stdout.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "html")]
    format: Format,
    /// Title at the top of the page.
    #[arg(long, default_value = "hostbench report")]
    title: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Html,
    Markdown,
}

fn read_outcomes(path: &PathBuf) -> Result<Vec<Outcome>, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::Usage(format!("--input {}: {e}", path.display())))?;
    let bad = |e: serde_json::Error| {
        CliError::Usage(format!(
            "--input {}: not a hostbench JSON result ({e}); write one with a command's --json",
            path.display()
        ))
    };
    let value: serde_json::Value = serde_json::from_str(&text).map_err(bad)?;
    match value.get("outcomes") {
        Some(list) => serde_json::from_value(list.clone()).map_err(bad),
        None => Ok(vec![serde_json::from_value(value).map_err(bad)?]),
    }
}

pub fn execute(args: ReportArgs) -> Result<ExitCode, CliError> {
    let text = match (args.soak, &args.input) {
        (Some(id), _) => {
            let title = (args.title != "hostbench report").then_some(args.title.as_str());
            super::soak::report(&args.db, id, args.format == Format::Html, title)?
        }
        (None, input) => {
            let outcomes = read_outcomes(input.as_ref().expect("clap requires --input"))?;
            match args.format {
                Format::Html => crate::report::html::render(&args.title, &outcomes),
                Format::Markdown => crate::report::html::markdown(&args.title, &outcomes),
            }
        }
    };
    match &args.output {
        None => print!("{text}"),
        Some(path) => {
            // Beside the target, then renamed: never half a report.
            let tmp = path.with_file_name(format!(
                ".{}.hostbench-{}.tmp",
                path.file_name()
                    .map_or("report".into(), |n| n.to_string_lossy()),
                std::process::id()
            ));
            let written = std::fs::write(&tmp, &text).and_then(|()| std::fs::rename(&tmp, path));
            if let Err(e) = written {
                let _ = std::fs::remove_file(&tmp);
                return Err(CliError::Usage(format!("-o {}: {e}", path.display())));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

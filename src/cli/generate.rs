//! `hostbench completions SHELL` and `hostbench man [COMMAND]`: the shell completion
//! script and the roff manual page, generated from the same clap definition that
//! parses the command line, so they never fall behind it. Both print to stdout, so
//! a package build can write them as files (`hostbench man > hostbench.1`).

use super::history::print_stdout;
use super::{Cli, CliError};
use clap::{Args, CommandFactory};
use clap_complete::Shell;
use std::process::ExitCode;

#[derive(Debug, Args)]
#[command(after_help = "Install, e.g.: \
    hostbench completions bash > ~/.local/share/bash-completion/completions/hostbench; \
    hostbench completions zsh > ~/.zfunc/_hostbench (with fpath+=~/.zfunc before compinit); \
    hostbench completions fish > ~/.config/fish/completions/hostbench.fish.")]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    shell: Shell,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Read it with `hostbench man | man -l -`; install it with \
    `hostbench man > /usr/local/share/man/man1/hostbench.1` (and `hostbench man cpu > \
    …/hostbench-cpu.1` for each command the page lists)."
)]
pub struct ManArgs {
    /// A command's own page (`cpu`, `net serve`) instead of hostbench's.
    #[arg(value_name = "COMMAND")]
    command: Vec<String>,
}

pub fn completions(args: CompletionsArgs) -> Result<ExitCode, CliError> {
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "hostbench", &mut out);
    print_stdout(&String::from_utf8_lossy(&out));
    Ok(ExitCode::SUCCESS)
}

pub fn man(args: ManArgs) -> Result<ExitCode, CliError> {
    let mut page = Cli::command();
    page.build();
    for (i, word) in args.command.iter().enumerate() {
        let names: Vec<String> = page
            .get_subcommands()
            .filter(|s| !s.is_hide_set() && s.get_name() != "help")
            .map(|s| s.get_name().to_string())
            .collect();
        let here = std::iter::once("hostbench")
            .chain(args.command[..i].iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ");
        page = page
            .find_subcommand(word)
            .filter(|s| !s.is_hide_set() && s.get_name() != "help")
            .cloned()
            .ok_or_else(|| {
                CliError::Usage(if names.is_empty() {
                    format!(
                        "`{here}` has no commands: its page is `hostbench man{}`",
                        &here[9..]
                    )
                } else {
                    format!(
                        "`{here}` has no command '{word}': use one of {}",
                        names.join(", ")
                    )
                })
            })?;
    }
    let title = std::iter::once("hostbench")
        .chain(args.command.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join("-")
        .to_uppercase();
    let man = clap_mangen::Man::new(page)
        .title(title)
        .source(format!("hostbench {}", env!("CARGO_PKG_VERSION")))
        .manual("hostbench manual");
    let mut out = Vec::new();
    man.render(&mut out)
        .map_err(|e| CliError::Usage(format!("the manual page could not be written: {e}")))?;
    print_stdout(&String::from_utf8_lossy(&out));
    Ok(ExitCode::SUCCESS)
}

//! `hostbench limits`: the providers' published disk promises hostbench knows,
//! and what they give for a size.

use super::{CliError, parse_size, print_doc};
use crate::limits::{self, DiskOffer};
use crate::report::{Document, Format, Offers};
use clap::Args;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct LimitsArgs {
    /// Only this provider (tencent, alibaba, huawei, aws, azure, gcp).
    provider: Option<String>,
    /// Show what each type promises for a disk of this size (e.g. 100GiB).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    disk_size: Option<u64>,
    /// Print the offers (with sources and notes) as JSON.
    #[arg(long)]
    json: bool,
}

pub fn execute(args: LimitsArgs) -> Result<ExitCode, CliError> {
    let offers: Vec<DiskOffer> = limits::offers()
        .into_iter()
        .filter(|o| {
            args.provider
                .as_deref()
                .is_none_or(|p| o.provider.eq_ignore_ascii_case(p))
        })
        .collect();
    if offers.is_empty() {
        let mut names: Vec<String> = limits::offers().into_iter().map(|o| o.provider).collect();
        names.dedup();
        return Err(CliError::Usage(format!(
            "no provider '{}': use one of {}",
            args.provider.unwrap_or_default(),
            names.join(", ")
        )));
    }
    let doc = Document::Offers(Offers {
        offers: &offers,
        size: args.disk_size,
    });
    print_doc(Format::text_or_json(args.json), &doc)?;
    Ok(ExitCode::SUCCESS)
}

//! `hostbench limits`: the providers' published disk promises hostbench knows,
//! and what they give for a size.

use super::{CliError, parse_size};
use crate::limits::{self, DiskOffer};
use crate::report::table::Table;
use clap::Args;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct LimitsArgs {
    /// Only this provider (tencent, alibaba, huawei, aws, azure, gcp).
    provider: Option<String>,
    /// Show what each type promises for a disk of this size (e.g. 100GiB).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    size: Option<u64>,
    /// Print the offers (with sources and notes) as JSON.
    #[arg(long)]
    json: bool,
}

fn formula(base: Option<f64>, per_gib: Option<f64>, max: Option<f64>) -> String {
    match (base, per_gib, max) {
        (Some(b), Some(p), Some(m)) if p > 0.0 => format!("min({b} + {p}/GiB, {m})"),
        (Some(b), _, Some(m)) if b == m => format!("{b}"),
        (Some(b), _, Some(m)) => format!("{b} (up to {m})"),
        (Some(b), _, None) => format!("{b}"),
        (None, _, Some(m)) => format!("up to {m}"),
        _ => "-".into(),
    }
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
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&offers).expect("offers serialise")
        );
        return Ok(ExitCode::SUCCESS);
    }
    let mut headers = vec!["provider", "type", "model", "IOPS", "throughput"];
    if args.size.is_some() {
        headers.extend(["IOPS at size", "MB/s at size"]);
    }
    let right: Vec<bool> = headers.iter().map(|h| h.contains("at size")).collect();
    let mut t = Table::new(&headers, &right);
    for o in &offers {
        let unit = o.mbps_unit.as_deref().unwrap_or("MB/s");
        let mut row = vec![
            o.provider.clone(),
            o.kind.clone(),
            format!(
                "{}{}",
                o.model,
                if o.verified { "" } else { " (unverified)" }
            ),
            formula(o.iops_base, o.iops_per_gib, o.iops_max),
            format!(
                "{} {unit}",
                formula(o.mbps_base, o.mbps_per_gib, o.mbps_max)
            ),
        ];
        if let Some(bytes) = args.size {
            let spec = format!("{}:{}:{bytes}", o.provider, o.kind.replace(' ', "_"));
            // Tiers are matched by size, so evaluate each tier's own numbers.
            let p = if o.model == "fixed-tier" {
                None
            } else {
                limits::promise(&spec).ok()
            };
            row.push(
                p.as_ref()
                    .and_then(|p| p.iops)
                    .map_or("-".into(), |v| crate::units::thousands(v, 0)),
            );
            row.push(
                p.as_ref()
                    .and_then(|p| p.bytes_per_sec)
                    .map_or("-".into(), |v| format!("{:.1}", v / 1e6)),
            );
        }
        t.row(row);
    }
    print!("{}", t.render("  "));
    println!(
        "\nFormulas: value = max(floor, min(base + per-GiB × size, max)). Sources, notes and\n\
         caveats: `hostbench limits --json`. Check a disk: `hostbench disk --expect tencent:premium:100GiB`."
    );
    Ok(ExitCode::SUCCESS)
}

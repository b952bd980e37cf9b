//! One meaning per flag, checked over clap's whole command tree: a long flag that
//! several native commands take means the same there and takes the same kind of
//! value, a short flag stands for the same long flag everywhere, and a meaning that
//! has a flag already does not get a second name. (Personalities keep their peers'
//! spellings; they do not parse with clap and are not in this tree.)

/// The long flags that more than one native command takes: what each means, and the
/// value it takes (clap's value name, or "" for a switch). A flag missing here that a
/// second command starts to take fails the test: say what it means, once.
pub const SHARED: &[(&str, &str, &[&str])] = &[
    ("db", "the results database", &["PATH"]),
    (
        "label",
        "a run's label: given to a saved run, or selecting runs by it",
        &["KEY=VALUE"],
    ),
    ("no-save", "do not keep this run", &[""]),
    ("json", "print the result as JSON", &[""]),
    ("time", "how long to measure", &["DURATION"]),
    (
        "warmup",
        "time before measuring, not counted",
        &["DURATION"],
    ),
    (
        "threads",
        "worker threads, N or all (cpu: a list of counts, run in turn)",
        &["N", "LIST"],
    ),
    ("events", "stop after this many events", &["N"]),
    (
        "report-interval",
        "intermediate results every DURATION",
        &["DURATION"],
    ),
    ("dir", "the directory to test in or work in", &["DIR"]),
    ("tests", "which of the command's tests to run", &["LIST"]),
    ("iterations", "passes over the tests", &["N"]),
    ("port", "the server's TCP port", &["PORT"]),
    ("secret", "the network server's shared secret", &["SECRET"]),
    (
        "rate",
        "open loop: offer load at this fixed rate instead of as fast as possible",
        &["RATE"],
    ),
    (
        "expect",
        "a provider's disk promise to measure against",
        &["PROVIDER:TYPE:SIZE"],
    ),
    (
        "expect-threshold",
        "the share of --expect's promise that passes",
        &["PCT"],
    ),
    (
        "workload",
        "only this workload's runs or results",
        &["NAME"],
    ),
    (
        "host",
        "runs measured on this host (its hostname)",
        &["NAME"],
    ),
    ("since", "runs started on or after DATE", &["DATE"]),
    ("until", "runs started on or before DATE", &["DATE"]),
    ("last", "the newest N stored runs", &["N"]),
    ("format", "the output format", &["FORMAT"]),
    ("output", "write to FILE instead of stdout", &["FILE"]),
];

/// Second names for a meaning that has a flag: (the other name, the flag to use).
pub const SYNONYMS: &[(&str, &str)] = &[
    ("results-db", "db"),
    ("database", "db"),
    ("runtime", "time"),
    ("duration", "time"),
    ("seconds", "time"),
    ("max-duration", "max-time"),
    ("ramp", "warmup"),
    ("jobs", "threads"),
    ("numjobs", "threads"),
    ("interval", "report-interval"),
    ("out", "output"),
];

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;
    use std::collections::BTreeMap;

    /// One use of a flag: the command path, its short letter, its value name.
    struct Use {
        command: String,
        short: Option<char>,
        value: String,
    }

    fn walk(c: &clap::Command, path: &str, out: &mut BTreeMap<String, Vec<Use>>) {
        for a in c.get_arguments() {
            let Some(long) = a.get_long() else { continue };
            if matches!(long, "help" | "version") {
                continue;
            }
            let value = if a.get_action().takes_values() {
                a.get_value_names()
                    .map(|v| v.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(" "))
                    .unwrap_or_else(|| a.get_id().as_str().to_uppercase())
            } else {
                String::new()
            };
            out.entry(long.to_string()).or_default().push(Use {
                command: path.to_string(),
                short: a.get_short(),
                value,
            });
        }
        for s in c.get_subcommands() {
            walk(s, &format!("{path} {}", s.get_name()), out);
        }
    }

    fn flags() -> BTreeMap<String, Vec<Use>> {
        let mut out = BTreeMap::new();
        walk(&crate::cli::Cli::command(), "hostbench", &mut out);
        out
    }

    fn commands(uses: &[Use]) -> String {
        uses.iter()
            .map(|u| format!("{} ({})", u.command, u.value))
            .collect::<Vec<_>>()
            .join(", ")
    }

    #[test]
    fn a_long_flag_means_one_thing_everywhere() {
        let mut clashes = Vec::new();
        for (long, uses) in &flags() {
            let shared = SHARED.iter().find(|s| s.0 == long);
            match shared {
                Some((_, meaning, values)) => {
                    for u in uses.iter().filter(|u| !values.contains(&u.value.as_str())) {
                        clashes.push(format!(
                            "--{long} means {meaning} (value {values:?}), but `{}` takes it with value {:?}",
                            u.command, u.value
                        ));
                    }
                }
                None if uses.len() > 1 => clashes.push(format!(
                    "--{long} is taken by {}: add it to SHARED with its one meaning, or rename one",
                    commands(uses)
                )),
                None => {}
            }
        }
        assert!(clashes.is_empty(), "{}", clashes.join("\n"));
    }

    #[test]
    fn a_short_flag_stands_for_one_long_flag() {
        let mut by_short: BTreeMap<char, Vec<(String, String)>> = BTreeMap::new();
        for (long, uses) in &flags() {
            for u in uses {
                if let Some(c) = u.short {
                    by_short
                        .entry(c)
                        .or_default()
                        .push((long.clone(), u.command.clone()));
                }
            }
        }
        let clashes: Vec<String> = by_short
            .iter()
            .filter(|(_, v)| v.iter().any(|(l, _)| *l != v[0].0))
            .map(|(c, v)| format!("-{c}: {v:?}"))
            .collect();
        assert!(clashes.is_empty(), "{}", clashes.join("\n"));
    }

    #[test]
    fn a_meaning_has_one_name() {
        let flags = flags();
        let second: Vec<String> = SYNONYMS
            .iter()
            .filter_map(|(other, canonical)| {
                let uses = flags.get(*other)?;
                Some(format!(
                    "--{other} ({}): the same meaning has the flag --{canonical}",
                    commands(uses)
                ))
            })
            .collect();
        assert!(second.is_empty(), "{}", second.join("\n"));
    }

    /// The table describes the tree as it is: every entry is shared by two commands.
    #[test]
    fn the_table_has_no_stale_entries() {
        let flags = flags();
        for (long, _, _) in SHARED {
            let n = flags.get(*long).map_or(0, Vec::len);
            assert!(
                n > 1,
                "--{long} is in SHARED but {n} command(s) take it: drop it"
            );
        }
    }
}

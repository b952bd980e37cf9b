//! sysbench's help pages, listing the options this personality accepts.

use super::options::{Def, GENERAL, Kind, LATENCY, LOG, NO_DEFAULT, RANDOM, TESTS};

fn signature(d: &Def) -> String {
    match d.kind {
        Kind::Int | Kind::Float => format!("--{}=N", d.name),
        Kind::List => format!("--{}=[LIST,...]", d.name),
        Kind::Bool => format!("--{}[=on|off]", d.name),
        Kind::Size => format!("--{}=SIZE", d.name),
        Kind::Text => format!("--{}=STRING", d.name),
    }
}

/// Option lines padded to the section's longest signature plus one space.
fn section(defs: &[Def]) -> String {
    let width = defs.iter().map(|d| signature(d).len()).max().unwrap_or(0);
    defs.iter()
        .filter(|d| d.name != "test")
        .map(|d| {
            let default = if d.default == NO_DEFAULT {
                String::new()
            } else {
                format!(" [{}]", d.default)
            };
            format!("  {:<width$} {}{default}\n", signature(d), d.help)
        })
        .collect()
}

pub fn general() -> String {
    let mut out = String::from(
        "Usage:\n  sysbench [options]... [testname] [command]\n\nCommands implemented by most tests: prepare run cleanup help\n\n",
    );
    out += "General options:\n";
    out += &section(GENERAL);
    out += "\nPseudo-Random Numbers Generator options:\n";
    out += &section(RANDOM);
    out += "\nLog options:\n";
    out += &section(LOG);
    out += "\n";
    out += &section(LATENCY);
    out += "\nCompiled-in tests:\n";
    for (name, desc, _) in TESTS {
        out += &format!("  {name} - {desc}\n");
    }
    out += "\nSee 'sysbench <testname> help' for a list of options for each test.\n\n";
    out
}

pub fn test(name: &str, defs: &[Def]) -> String {
    format!("{name} options:\n{}\n", section(defs))
}

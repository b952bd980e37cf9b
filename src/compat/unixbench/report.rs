//! UnixBench 5.1.3's text report: the system header, then per copy count the
//! `Benchmark Run` lines, one line per test, and the index table.

use crate::workload::unixbench::{CopiesResult, SuiteResult, index, sorted};
use std::fmt::Write;
use std::process::Command;
use std::time::SystemTime;

/// What `Run`'s `getSystemInfo` collects.
pub struct SystemInfo {
    name: String,
    os: String,
    release: String,
    version: String,
    machine: String,
    platform: String,
    pub cpus: Vec<Cpu>,
    load: String,
    runlevel: String,
}

pub struct Cpu {
    model: String,
    bogomips: f64,
    flags: String,
}

fn command_output(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

/// The CPU flags `Run` names, by flag.
const FLAG_NAMES: [(&str, &str); 14] = [
    ("pae", "Physical Address Ext"),
    ("sep", "SYSENTER/SYSEXIT"),
    ("syscall", "SYSCALL/SYSRET"),
    ("mmx", "MMX"),
    ("mmxext", "AMD MMX"),
    ("cxmmx", "Cyrix MMX"),
    ("xmm", "Streaming SIMD"),
    ("xmm2", "Streaming SIMD-2"),
    ("xmm3", "Streaming SIMD-3"),
    ("ht", "Hyper-Threading"),
    ("ia64", "IA-64 processor"),
    ("lm", "x86-64"),
    ("vmx", "Intel virtualization"),
    ("svm", "AMD virtualization"),
];

fn describe_flags(flags: &str) -> String {
    let mut sorted: Vec<&str> = flags.split_whitespace().collect();
    sorted.sort_unstable();
    sorted
        .iter()
        .filter_map(|f| FLAG_NAMES.iter().find(|(k, _)| k == f).map(|(_, v)| *v))
        .collect::<Vec<_>>()
        .join(", ")
}

fn parse_cpus(cpuinfo: &str) -> Vec<Cpu> {
    let mut cpus: Vec<Cpu> = Vec::new();
    for line in cpuinfo.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        match key {
            "processor" => cpus.push(Cpu {
                model: String::new(),
                bogomips: 0.0,
                flags: String::new(),
            }),
            "model name" => {
                if let Some(c) = cpus.last_mut() {
                    c.model = value.split_whitespace().collect::<Vec<_>>().join(" ");
                }
            }
            "bogomips" => {
                if let Some(c) = cpus.last_mut() {
                    c.bogomips = value.parse().unwrap_or(0.0);
                }
            }
            "flags" => {
                if let Some(c) = cpus.last_mut() {
                    c.flags = describe_flags(value);
                }
            }
            _ => {}
        }
    }
    cpus
}

impl SystemInfo {
    pub fn detect() -> SystemInfo {
        let uname = |flag: &str| command_output("uname", &[flag]);
        let runlevel = command_output("runlevel", &[]);
        SystemInfo {
            name: command_output("hostname", &[]),
            os: Some(uname("-o"))
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| uname("-s")),
            release: uname("-r"),
            version: uname("-v"),
            machine: uname("-m"),
            platform: uname("-i"),
            cpus: parse_cpus(&std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default()),
            load: command_output("uptime", &[]),
            runlevel: runlevel.split(' ').nth(1).unwrap_or(&runlevel).to_string(),
        }
    }
}

fn local_time(t: SystemTime, format: &str) -> String {
    let secs = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    crate::host::local_time(secs, format)
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The whole report: header, then one block per copy count.
pub fn render(system: &SystemInfo, result: &SuiteResult) -> String {
    let env = &result.environment;
    let mut out = String::new();
    let _ = writeln!(out, "   BYTE UNIX Benchmarks (Version 5.1.3)\n");
    let _ = writeln!(
        out,
        "   UnixBench-style run by hostbench {}: UnixBench's tests and baselines, hostbench's programs",
        env!("CARGO_PKG_VERSION")
    );
    if result.quick {
        let _ = writeln!(
            out,
            "   QUICK MODE: shortened tests; NOT comparable with full runs"
        );
    }
    let _ = writeln!(out, "   System: {}: {}", system.name, system.os);
    let _ = writeln!(
        out,
        "   OS: {} -- {} -- {}",
        system.os, system.release, system.version
    );
    let _ = writeln!(out, "   Machine: {} ({})", system.machine, system.platform);
    let _ = writeln!(out, "   Language: {}", env.language_line());
    if system.cpus.is_empty() {
        let _ = writeln!(out, "   CPU: no details available");
    }
    for (i, cpu) in system.cpus.iter().enumerate() {
        let _ = writeln!(
            out,
            "   CPU {i}: {} ({:.1} bogomips)",
            cpu.model, cpu.bogomips
        );
        let _ = writeln!(out, "          {}", cpu.flags);
    }
    let _ = writeln!(out, "   {}; runlevel {}\n", system.load, system.runlevel);
    for run in &result.runs {
        out += &render_run(system, run);
    }
    for note in &env.notes {
        let _ = writeln!(out, "Note: {note}");
    }
    if let Some(one) = result.runs.iter().find(|r| r.copies == 1) {
        for many in &result.runs {
            if let Some(note) = index::scaling_note(one, many) {
                let _ = writeln!(out, "Note: {note}");
            }
        }
    }
    if result.interrupted {
        let _ = writeln!(
            out,
            "Note: interrupted; the results cover the passes that ran"
        );
    }
    out
}

fn render_run(system: &SystemInfo, run: &CopiesResult) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", "-".repeat(72));
    let _ = writeln!(
        out,
        "Benchmark Run: {} {} - {}",
        local_time(run.started, "%a %b %d %Y"),
        local_time(run.started, "%H:%M:%S"),
        local_time(run.ended, "%H:%M:%S")
    );
    let _ = writeln!(
        out,
        "{} in system; running {} of tests\n",
        plural(system.cpus.len(), "CPU", "CPUs"),
        plural(run.copies, "parallel copy", "parallel copies")
    );
    for r in sorted(&run.tests) {
        if let Some(s) = &r.score {
            let _ = writeln!(
                out,
                "{:<40} {:>12.1} {:<5} ({:.1} s, {} samples)",
                r.test.label, s.value, s.unit, s.time, s.samples
            );
        }
    }
    out.push('\n');
    if let Some(index) = &run.index {
        let head = if index.partial {
            "System Benchmarks Partial Index"
        } else {
            "System Benchmarks Index Values"
        };
        let _ = writeln!(
            out,
            "{:<40} {:>12} {:>12} {:>8}",
            head, "BASELINE", "RESULT", "INDEX"
        );
        for row in &index.rows {
            let _ = writeln!(
                out,
                "{:<40} {:>12.1} {:>12.1} {:>8.1}",
                row.label, row.baseline, row.result, row.index
            );
        }
        // Tests outside the index (shell16) are listed without a baseline.
        for r in sorted(&run.tests) {
            if r.test.baseline.is_none()
                && let Some(s) = &r.score
            {
                let _ = writeln!(
                    out,
                    "{:<40} {:>12} {:>12.1} {:>8}",
                    r.test.label, "---", s.value, "---"
                );
            }
        }
        let title = if index.partial {
            "System Benchmarks Index Score (Partial Only)"
        } else {
            "System Benchmarks Index Score"
        };
        let _ = writeln!(out, "{:<40} {:>12} {:>12} {:>8}", "", "", "", "========");
        let _ = writeln!(out, "{:<66} {:>8.1}\n", title, index.score);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The header's date and times, as `Run` prints them with strftime.
    #[test]
    fn header_times_are_local_as_run_prints_them() {
        let t = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_795_988_954);
        for f in ["%a %b %d %Y", "%H:%M:%S"] {
            let want = crate::host::date_command(1_795_988_954, None, f);
            assert_eq!(local_time(t, f), want);
        }
    }

    #[test]
    fn flags_as_run_names_them() {
        assert_eq!(
            describe_flags("fpu pae sep mmx syscall lm ht"),
            "Hyper-Threading, x86-64, MMX, Physical Address Ext, SYSENTER/SYSEXIT, SYSCALL/SYSRET"
        );
    }

    #[test]
    fn cpus_from_cpuinfo() {
        let cpus = parse_cpus(
            "processor\t: 0\nmodel name\t: Intel Xeon  E312xx\nbogomips\t: 4400.00\nflags\t: lm mmx\n\n\
             processor\t: 1\nmodel name\t: Intel Xeon E312xx\nbogomips\t: 4400.00\n",
        );
        assert_eq!(cpus.len(), 2);
        assert_eq!(cpus[0].model, "Intel Xeon E312xx");
        assert_eq!(cpus[0].flags, "x86-64, MMX");
        assert_eq!(cpus[1].bogomips, 4400.0);
    }
}

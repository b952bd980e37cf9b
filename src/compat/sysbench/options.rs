//! sysbench 1.0.20's command-line grammar: `--name=value` options anywhere on the
//! line (`_` and `-` interchangeable in names), up to two positionals (test, command),
//! and its value rules: decimal int32s, lower-case booleans, sizes whose first
//! character after the digits picks a power of 1024 (anything else gives 0).

use std::collections::BTreeMap;

/// The value types sysbench's option table knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Int,
    Bool,
    Size,
    Text,
    /// A comma-separated list (`--file-extra-flags`).
    List,
    /// A number that may have a fraction (`--file-rw-ratio`); shown as `N`.
    Float,
}

/// A default sysbench's help does not print.
pub const NO_DEFAULT: &str = "\u{0}";

/// An option sysbench accepts: name (with dashes), type, help text, default as printed.
pub struct Def {
    pub name: &'static str,
    pub kind: Kind,
    pub help: &'static str,
    pub default: &'static str,
}

const fn def(name: &'static str, kind: Kind, help: &'static str, default: &'static str) -> Def {
    Def {
        name,
        kind,
        help,
        default,
    }
}

pub const GENERAL: &[Def] = &[
    def("threads", Kind::Int, "number of threads to use", "1"),
    def("events", Kind::Int, "limit for total number of events", "0"),
    def(
        "time",
        Kind::Int,
        "limit for total execution time in seconds",
        "10",
    ),
    def(
        "forced-shutdown",
        Kind::Text,
        "number of seconds to wait after the --time limit before forcing shutdown, or 'off' to disable",
        "off",
    ),
    def(
        "thread-stack-size",
        Kind::Size,
        "size of stack per thread",
        "64K",
    ),
    def(
        "rate",
        Kind::Int,
        "average transactions rate. 0 for unlimited rate",
        "0",
    ),
    def(
        "report-interval",
        Kind::Int,
        "periodically report intermediate statistics with a specified interval in seconds. 0 disables intermediate reports",
        "0",
    ),
    def(
        "report-checkpoints",
        Kind::Text,
        "dump full statistics and reset all counters at specified points in time",
        "",
    ),
    def("debug", Kind::Bool, "print more debugging info", "off"),
    def(
        "validate",
        Kind::Bool,
        "perform validation checks where possible",
        "off",
    ),
    def("help", Kind::Bool, "print help and exit", "off"),
    def("version", Kind::Bool, "print version and exit", "off"),
    def(
        "config-file",
        Kind::Text,
        "File containing command line options",
        "",
    ),
    def("tx-rate", Kind::Int, "deprecated alias for --rate", "0"),
    def(
        "max-requests",
        Kind::Int,
        "deprecated alias for --events",
        "0",
    ),
    def("max-time", Kind::Int, "deprecated alias for --time", "0"),
    def(
        "num-threads",
        Kind::Int,
        "deprecated alias for --threads",
        "1",
    ),
    def("test", Kind::Text, "deprecated: the test to run", ""),
];

pub const RANDOM: &[Def] = &[
    def(
        "rand-type",
        Kind::Text,
        "random numbers distribution {uniform,gaussian,special,pareto}",
        "special",
    ),
    def(
        "rand-spec-iter",
        Kind::Int,
        "number of iterations used for numbers generation",
        "12",
    ),
    def(
        "rand-spec-pct",
        Kind::Int,
        "percentage of values to be treated as 'special' (for special distribution)",
        "1",
    ),
    def(
        "rand-spec-res",
        Kind::Int,
        "percentage of 'special' values to use (for special distribution)",
        "75",
    ),
    def(
        "rand-seed",
        Kind::Int,
        "seed for random number generator. When 0, the current time is used as a RNG seed.",
        "0",
    ),
    def(
        "rand-pareto-h",
        Kind::Text,
        "parameter h for pareto distribution",
        "0.2",
    ),
];

pub const LOG: &[Def] = &[def(
    "verbosity",
    Kind::Int,
    "verbosity level {5 - debug, 0 - only critical messages}",
    "3",
)];

pub const LATENCY: &[Def] = &[
    def(
        "percentile",
        Kind::Int,
        "percentile to calculate in latency statistics (1-100). Use the special value of 0 to disable percentile calculations",
        "95",
    ),
    def(
        "histogram",
        Kind::Bool,
        "print latency histogram in report",
        "off",
    ),
];

pub const CPU: &[Def] = &[def(
    "cpu-max-prime",
    Kind::Int,
    "upper limit for primes generator",
    "10000",
)];

pub const MEMORY: &[Def] = &[
    def(
        "memory-block-size",
        Kind::Size,
        "size of memory block for test",
        "1K",
    ),
    def(
        "memory-total-size",
        Kind::Size,
        "total size of data to transfer",
        "100G",
    ),
    def(
        "memory-scope",
        Kind::Text,
        "memory access scope {global,local}",
        "global",
    ),
    def(
        "memory-hugetlb",
        Kind::Bool,
        "allocate memory from HugeTLB pool",
        "off",
    ),
    def(
        "memory-oper",
        Kind::Text,
        "type of memory operations {read, write, none}",
        "write",
    ),
    def(
        "memory-access-mode",
        Kind::Text,
        "memory access mode {seq,rnd}",
        "seq",
    ),
];

pub const FILEIO: &[Def] = &[
    def("file-num", Kind::Int, "number of files to create", "128"),
    def(
        "file-block-size",
        Kind::Int,
        "block size to use in all IO operations",
        "16384",
    ),
    def(
        "file-total-size",
        Kind::Size,
        "total size of files to create",
        "2G",
    ),
    def(
        "file-test-mode",
        Kind::Text,
        "test mode {seqwr, seqrewr, seqrd, rndrd, rndwr, rndrw}",
        NO_DEFAULT,
    ),
    def(
        "file-io-mode",
        Kind::Text,
        "file operations mode {sync,async,mmap}",
        "sync",
    ),
    def(
        "file-async-backlog",
        Kind::Int,
        "number of asynchronous operatons to queue per thread",
        "128",
    ),
    def(
        "file-extra-flags",
        Kind::List,
        "list of additional flags to use to open files {sync,dsync,direct}",
        "",
    ),
    def(
        "file-fsync-freq",
        Kind::Int,
        "do fsync() after this number of requests (0 - don't use fsync())",
        "100",
    ),
    def(
        "file-fsync-all",
        Kind::Bool,
        "do fsync() after each write operation",
        "off",
    ),
    def(
        "file-fsync-end",
        Kind::Bool,
        "do fsync() at the end of test",
        "on",
    ),
    def(
        "file-fsync-mode",
        Kind::Text,
        "which method to use for synchronization {fsync, fdatasync}",
        "fsync",
    ),
    def(
        "file-merged-requests",
        Kind::Int,
        "merge at most this number of IO requests if possible (0 - don't merge)",
        "0",
    ),
    def(
        "file-rw-ratio",
        Kind::Float,
        "reads/writes ratio for combined test",
        "1.5",
    ),
];

pub const THREADS: &[Def] = &[
    def(
        "thread-yields",
        Kind::Int,
        "number of yields to do per request",
        "1000",
    ),
    def("thread-locks", Kind::Int, "number of locks per thread", "8"),
];

pub const MUTEX: &[Def] = &[
    def("mutex-num", Kind::Int, "total size of mutex array", "4096"),
    def(
        "mutex-locks",
        Kind::Int,
        "number of mutex locks to do per thread",
        "50000",
    ),
    def(
        "mutex-loops",
        Kind::Int,
        "number of empty loops to do outside mutex lock",
        "10000",
    ),
];

/// The built-in tests: name, description, options.
pub const TESTS: &[(&str, &str, &[Def])] = &[
    ("fileio", "File I/O test", FILEIO),
    ("cpu", "CPU performance test", CPU),
    ("memory", "Memory functions speed test", MEMORY),
    ("threads", "Threads subsystem performance test", THREADS),
    ("mutex", "Mutex performance test", MUTEX),
];

pub fn test_options(test: &str) -> Option<&'static [Def]> {
    TESTS.iter().find(|t| t.0 == test).map(|t| t.2)
}

fn find(defs: &[Def], name: &str) -> bool {
    defs.iter().any(|d| d.name == name)
}

pub fn is_general(name: &str) -> bool {
    [GENERAL, RANDOM, LOG, LATENCY]
        .iter()
        .any(|defs| find(defs, name))
}

/// A command line split into options and positionals.
#[derive(Debug, Default)]
pub struct CommandLine {
    /// Last value wins; `None` for a bare `--flag`.
    pub options: BTreeMap<String, Option<String>>,
    /// Options as typed, for "invalid option" messages, with their normalised names.
    pub raw: Vec<(String, String)>,
    pub positionals: Vec<String>,
}

impl CommandLine {
    pub fn parse(args: &[String]) -> Self {
        let mut line = CommandLine::default();
        for arg in args {
            if let Some(body) = arg.strip_prefix("--") {
                let (name, value) = match body.split_once('=') {
                    Some((n, v)) => (n, Some(v.to_string())),
                    None => (body, None),
                };
                let name = name.replace('_', "-");
                line.raw.push((name.clone(), arg.clone()));
                line.options.insert(name, value);
            } else {
                line.positionals.push(arg.clone());
            }
        }
        line
    }

    pub fn given(&self, name: &str) -> bool {
        self.options.contains_key(name)
    }

    pub fn text(&self, name: &str) -> Option<&str> {
        self.options.get(name).map(|v| v.as_deref().unwrap_or(""))
    }
}

/// sysbench's integer rule: optional blanks and sign, decimal digits, int32 range.
/// An empty value is 0.
pub fn parse_int(value: &str) -> Option<i64> {
    let v = value.trim_start();
    if v.is_empty() {
        return Some(0);
    }
    let n: i64 = v.strip_prefix('+').unwrap_or(v).parse().ok()?;
    if !v.starts_with(['+', '-']) && !v.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    (i32::MIN as i64..=i32::MAX as i64)
        .contains(&n)
        .then_some(n)
}

/// sysbench's booleans: bare flag, `on`, `off`, `1`, `0`, `true`, `false` (lower case).
pub fn parse_bool(value: Option<&str>) -> Option<bool> {
    match value {
        None | Some("on") | Some("1") | Some("true") => Some(true),
        Some("off") | Some("0") | Some("false") => Some(false),
        Some(_) => None,
    }
}

/// sysbench's sizes: digits, then the first character picks K/M/G/T (powers of 1024)
/// and the rest is ignored; no digits or any other character gives 0.
pub fn parse_size(value: &str) -> u64 {
    let digits_end = value
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(value.len());
    if digits_end == 0 {
        return 0;
    }
    let Ok(n) = value[..digits_end].parse::<u64>() else {
        return 0;
    };
    let shift = match value[digits_end..].chars().next() {
        None => 0,
        Some('k' | 'K') => 10,
        Some('m' | 'M') => 20,
        Some('g' | 'G') => 30,
        Some('t' | 'T') => 40,
        Some(_) => return 0,
    };
    n.checked_mul(1 << shift).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ints() {
        assert_eq!(parse_int("4"), Some(4));
        assert_eq!(parse_int("+2"), Some(2));
        assert_eq!(parse_int(" 2"), Some(2));
        assert_eq!(parse_int("-1"), Some(-1));
        assert_eq!(parse_int(""), Some(0));
        for bad in ["2abc", "0x2", "1e1", "1.5", "abc", "2147483648", "- 1"] {
            assert_eq!(parse_int(bad), None, "{bad}");
        }
        assert_eq!(parse_int("-2147483648"), Some(-2147483648));
    }

    #[test]
    fn bools() {
        assert_eq!(parse_bool(None), Some(true));
        assert_eq!(parse_bool(Some("off")), Some(false));
        assert_eq!(parse_bool(Some("ON")), None);
        assert_eq!(parse_bool(Some("yes")), None);
        assert_eq!(parse_bool(Some("")), None);
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("8K"), 8192);
        assert_eq!(parse_size("8k"), 8192);
        assert_eq!(parse_size("8KB"), 8192);
        assert_eq!(parse_size("8Kxyz"), 8192);
        assert_eq!(parse_size("10G"), 10 << 30);
        assert_eq!(parse_size("1M "), 1 << 20);
        assert_eq!(parse_size("4096"), 4096);
        assert_eq!(parse_size("010M"), 10 << 20);
        for zero in ["8Q", "8 ", "1.5G", "-1", "+8M", " 8M", "", "abc"] {
            assert_eq!(parse_size(zero), 0, "{zero:?}");
        }
    }

    #[test]
    fn command_line() {
        let args: Vec<String> = [
            "--threads=2",
            "cpu",
            "--cpu_max_prime=100",
            "run",
            "--histogram",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let line = CommandLine::parse(&args);
        assert_eq!(line.positionals, ["cpu", "run"]);
        assert_eq!(line.text("cpu-max-prime"), Some("100"));
        assert_eq!(line.options.get("histogram"), Some(&None));
    }

    /// A cheap fuzz of the grammar: arbitrary arguments give a value or an error,
    /// never a panic.
    #[test]
    fn grammar_never_panics() {
        let alphabet: Vec<char> = "-=_+ 0123456789kKmMgGtTxyzabcdefghijklmnopqrstuvw.\u{0}é"
            .chars()
            .collect();
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..5_000 {
            let args: Vec<String> = (0..next() % 5)
                .map(|_| {
                    let len = (next() % 14) as usize;
                    let body: String = (0..len)
                        .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                        .collect();
                    if next() % 2 == 0 {
                        format!("--{body}")
                    } else {
                        body
                    }
                })
                .collect();
            let line = CommandLine::parse(&args);
            for value in line.options.values().flatten() {
                let _ = (parse_int(value), parse_size(value), parse_bool(Some(value)));
            }
        }
    }
}

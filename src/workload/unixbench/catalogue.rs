//! The tests of UnixBench 5.1.3's index: names, report labels, the SPARCstation 20-61
//! ("George") baselines, how many passes each gets and what each program measures.
//! Numbers from reference §5.2–5.3 (`pgms/index.base` and `Run`'s test parameters).

use serde::Serialize;

/// How many passes a test gets: `long` ones 10 (or `-i N`), `short` ones 3
/// (or `max(1, (N+1)/3)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Repeat {
    Long,
    Short,
}

/// What a test's program does; the durations are UnixBench's own arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Program {
    Dhrystone,
    Whetstone,
    Execl,
    FileCopy { bufsize: usize, max_blocks: usize },
    Pipe,
    Context1,
    Spawn,
    Syscall,
    Shell { concurrency: usize },
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Test {
    /// UnixBench's test name (`dhry2reg`, `fstime`, `shell8`).
    pub name: &'static str,
    /// The label in UnixBench's report.
    pub label: &'static str,
    /// Baseline score (index 10.0), or `None` for tests outside the index.
    pub baseline: Option<f64>,
    pub repeat: Repeat,
    pub program: Program,
    /// Seconds UnixBench runs the program for (whetstone: its calibrated target).
    pub seconds: u32,
}

const fn test(
    name: &'static str,
    label: &'static str,
    baseline: Option<f64>,
    repeat: Repeat,
    program: Program,
    seconds: u32,
) -> Test {
    Test {
        name,
        label,
        baseline,
        repeat,
        program,
        seconds,
    }
}

use Program::*;
use Repeat::*;

/// Every test hostbench can run, in UnixBench's `index` order, then shell16.
pub const TESTS: [Test; 13] = [
    test(
        "dhry2reg",
        "Dhrystone 2 using register variables",
        Some(116700.0),
        Long,
        Dhrystone,
        10,
    ),
    test(
        "whetstone-double",
        "Double-Precision Whetstone",
        Some(55.0),
        Long,
        Whetstone,
        10,
    ),
    test("execl", "Execl Throughput", Some(43.0), Short, Execl, 30),
    test(
        "fstime",
        "File Copy 1024 bufsize 2000 maxblocks",
        Some(3960.0),
        Short,
        FileCopy {
            bufsize: 1024,
            max_blocks: 2000,
        },
        30,
    ),
    test(
        "fsbuffer",
        "File Copy 256 bufsize 500 maxblocks",
        Some(1655.0),
        Short,
        FileCopy {
            bufsize: 256,
            max_blocks: 500,
        },
        30,
    ),
    test(
        "fsdisk",
        "File Copy 4096 bufsize 8000 maxblocks",
        Some(5800.0),
        Short,
        FileCopy {
            bufsize: 4096,
            max_blocks: 8000,
        },
        30,
    ),
    test("pipe", "Pipe Throughput", Some(12440.0), Long, Pipe, 10),
    test(
        "context1",
        "Pipe-based Context Switching",
        Some(4000.0),
        Long,
        Context1,
        10,
    ),
    test("spawn", "Process Creation", Some(126.0), Short, Spawn, 30),
    test(
        "syscall",
        "System Call Overhead",
        Some(15000.0),
        Long,
        Syscall,
        10,
    ),
    test(
        "shell1",
        "Shell Scripts (1 concurrent)",
        Some(42.4),
        Short,
        Shell { concurrency: 1 },
        60,
    ),
    test(
        "shell8",
        "Shell Scripts (8 concurrent)",
        Some(6.0),
        Short,
        Shell { concurrency: 8 },
        60,
    ),
    test(
        "shell16",
        "Shell Scripts (16 concurrent)",
        None,
        Short,
        Shell { concurrency: 16 },
        60,
    ),
];

/// The twelve tests of the index (`./Run` with no test names).
pub fn index_tests() -> Vec<Test> {
    TESTS
        .iter()
        .copied()
        .filter(|t| t.baseline.is_some())
        .collect()
}

/// The tests of the index that a category in `index.base` counts: all twelve.
pub const INDEX_SIZE: usize = 12;

pub fn by_name(name: &str) -> Option<Test> {
    TESTS.iter().copied().find(|t| t.name == name)
}

/// UnixBench's test names and groups (`Run`'s `$testList`), as far as hostbench
/// implements them: a name expands to tests, or `None` when it is unknown.
pub fn expand(word: &str) -> Option<Vec<Test>> {
    let names: &[&str] = match word {
        "index" => &[
            "dhry2reg",
            "whetstone-double",
            "execl",
            "fstime",
            "fsbuffer",
            "fsdisk",
            "pipe",
            "context1",
            "spawn",
            "syscall",
            "shell1",
            "shell8",
        ],
        "dhry" | "dhrystone" => &["dhry2reg"],
        "whets" | "whetstone" => &["whetstone-double"],
        "shell" | "load" => &["shell1", "shell8", "shell16"],
        "oldsystem" => &[
            "execl", "fstime", "fsbuffer", "fsdisk", "pipe", "context1", "spawn", "syscall",
        ],
        "system" => &[
            "execl", "fstime", "fsbuffer", "fsdisk", "pipe", "context1", "spawn", "syscall",
            "shell1", "shell8", "shell16",
        ],
        name => return by_name(name).map(|t| vec![t]),
    };
    Some(names.iter().filter_map(|n| by_name(n)).collect())
}

/// Names `expand` accepts, for error messages.
pub fn known_names() -> String {
    let mut names: Vec<&str> = TESTS.iter().map(|t| t.name).collect();
    names.extend([
        "index",
        "dhry",
        "dhrystone",
        "whets",
        "whetstone",
        "shell",
        "load",
        "oldsystem",
        "system",
    ]);
    names.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_has_twelve_tests_with_baselines() {
        assert_eq!(index_tests().len(), INDEX_SIZE);
        assert_eq!(expand("index").unwrap(), index_tests());
        assert_eq!(by_name("shell1").unwrap().baseline, Some(42.4));
        assert!(expand("bogus").is_none());
    }
}

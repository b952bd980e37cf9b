//! UnixBench's shell-script test, from reference §5.4: a looper runs `multi.sh N` over
//! and over until the alarm and counts the runs that finished; `multi.sh` starts N
//! background copies of `tst.sh` and waits for them; `tst.sh` sorts a text file, dumps
//! it with `od` and sorts that numerically, greps it through `tee` into `wc`, and
//! removes its files. UnixBench's input file (`sort.src`) is GPL data, so hostbench
//! writes its own text of the same size and shape (362 lines, 8546 bytes).

use super::alarm;
use std::io::{Error, Result};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Starts N copies of tst.sh and waits; counts with `expr` as UnixBench 5.1.3 does
/// (one more process per copy).
const MULTI_SH: &str = r#"#!/bin/sh
# hostbench: N concurrent runs of tst.sh (UnixBench 5.1.3's shell test)
copies=$1
n=1
while [ $n -le $copies ]; do
	/bin/sh "$HOSTBENCH_SHELL_DIR/tst.sh" &
	n=`expr $n + 1`
done
wait
"#;

/// One run's work: sort, od | sort -n, grep | tee | wc, then remove the files.
const TST_SH: &str = r#"#!/bin/sh
# hostbench: one shell-script work unit (UnixBench 5.1.3's tst.sh workload)
sort <sort.src >sort.$$
od sort.$$ | sort -n -k 1 >od.$$
grep the sort.$$ | tee grep.$$ | wc >wc.$$
rm sort.$$ grep.$$ od.$$ wc.$$
"#;

pub const INPUT_LINES: usize = 362;
pub const INPUT_BYTES: usize = 8546;

/// A deterministic text of `INPUT_LINES` lines and `INPUT_BYTES` bytes that reads like
/// a shell script: indented words, assignments, some lines with "the".
pub fn input_text() -> String {
    const WORDS: [&str; 40] = [
        "the", "cd", "echo", "export", "PATH", "HOME", "if", "then", "fi", "for", "do", "done",
        "test", "-d", "-f", "$TMPDIR", "$BINDIR", "results", "file", "run", "copy", "time",
        "bench", "mark", "system", "mode", "umask", "022", "exit", "while", "read", "line", "case",
        "esac", "in", "of", "to", "and", "with", "pwd",
    ];
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move |n: usize| -> usize {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 33) as usize) % n
    };
    let mut lines: Vec<String> = Vec::with_capacity(INPUT_LINES);
    let average = INPUT_BYTES / INPUT_LINES - 1;
    for i in 0..INPUT_LINES {
        let mut line = "\t".repeat(next(3));
        let target = average / 2 + next(average);
        while line.len() < target {
            if !line.trim().is_empty() {
                line.push(' ');
            }
            line += WORDS[next(WORDS.len())];
            if next(7) == 0 {
                line += &format!("={}", next(1000));
            }
        }
        if i % 5 == 0 {
            line += " the";
        }
        lines.push(line);
    }
    // Adjust the last lines so the total is exact (each line plus its newline).
    let mut total: usize = lines.iter().map(|l| l.len() + 1).sum();
    let mut i = lines.len();
    while total != INPUT_BYTES {
        i = if i == 0 { lines.len() - 1 } else { i - 1 };
        let line = &mut lines[i];
        if total > INPUT_BYTES && line.len() > 1 {
            line.pop();
            total -= 1;
        } else if total < INPUT_BYTES {
            line.push('x');
            total += 1;
        }
    }
    lines.join("\n") + "\n"
}

/// Writes sort.src, multi.sh and tst.sh into `dir` (the test's working directory).
pub fn prepare(dir: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(dir.join("sort.src"), input_text())?;
    for (name, text) in [("multi.sh", MULTI_SH), ("tst.sh", TST_SH)] {
        let path = dir.join(name);
        std::fs::write(&path, text)?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(())
}

/// The looper: runs `multi.sh concurrency` until the alarm; counts completed runs.
pub fn looper(dir: &Path, concurrency: usize) -> Result<u64> {
    let multi: PathBuf = dir.join("multi.sh");
    let mut completed = 0u64;
    while !alarm::fired() {
        let status = Command::new(&multi)
            .arg(concurrency.to_string())
            .current_dir(dir)
            .env("HOSTBENCH_SHELL_DIR", dir)
            .stdin(Stdio::null())
            .status()
            .map_err(|e| Error::new(e.kind(), format!("{}: {e}", multi.display())))?;
        if alarm::fired() {
            // UnixBench's looper reports from its alarm handler: a run still going
            // then is not counted.
            break;
        }
        if !status.success() {
            return Err(Error::other(format!("multi.sh {concurrency}: {status}")));
        }
        completed += 1;
    }
    Ok(completed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_has_unixbench_shape() {
        let text = input_text();
        assert_eq!(text.len(), INPUT_BYTES);
        assert_eq!(text.lines().count(), INPUT_LINES);
        assert!(text.lines().filter(|l| l.contains("the")).count() > 50);
        assert_eq!(text, input_text(), "deterministic");
    }

    #[test]
    fn one_run_of_the_scripts_succeeds_and_cleans_up() {
        let dir = tempfile::tempdir().unwrap();
        prepare(dir.path()).unwrap();
        let status = Command::new(dir.path().join("multi.sh"))
            .arg("2")
            .current_dir(dir.path())
            .env("HOSTBENCH_SHELL_DIR", dir.path())
            .status()
            .unwrap();
        assert!(status.success());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 3);
    }
}

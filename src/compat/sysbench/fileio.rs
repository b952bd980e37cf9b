//! sysbench's `fileio` test: `prepare`, `run`, `cleanup`, its options and its 1.0.20
//! output, over `workload::disk::fileio`.

use super::options::{CommandLine, FILEIO, parse_bool, parse_size};
use super::report::FileioIntervalPrinter;
use super::{
    Fail, General, Log, closing, finished, header, int_option, run_options, starting_workers,
};
use crate::units::format_size_g;
use crate::workload::disk::fileio::{
    self, ExtraFlags, FileAction, FileMode, FileTest, FileioSpec, IoMode,
};
use std::process::ExitCode;

pub(super) fn spec(line: &CommandLine, general: &General) -> Result<FileioSpec, Fail> {
    let int = |name: &str, default: i64| int_option(line, name, default);
    let bool_opt = |name: &str, default: bool| -> Result<bool, Fail> {
        match line.options.get(name) {
            None => Ok(default),
            Some(v) => parse_bool(v.as_deref()).ok_or_else(|| {
                Fail::Stderr(format!(
                    "invalid option: --{name}={}\n",
                    v.as_deref().unwrap_or("")
                ))
            }),
        }
    };
    let mode =
        match line.text("file-test-mode") {
            None => None,
            Some(m) => Some(FileMode::parse(m).ok_or_else(|| {
                Fail::Stdout(format!("FATAL: Invalid IO operations mode: {m}.\n"))
            })?),
        };
    let io_mode = line.text("file-io-mode").unwrap_or("sync");
    let io_mode = IoMode::parse(io_mode)
        .ok_or_else(|| Fail::Stdout(format!("FATAL: Invalid IO mode: {io_mode}.\n")))?;
    let mut extra_flags = ExtraFlags::default();
    for flag in line
        .text("file-extra-flags")
        .unwrap_or("")
        .split(',')
        .filter(|f| !f.is_empty())
    {
        match flag {
            "sync" => extra_flags.sync = true,
            "dsync" => extra_flags.dsync = true,
            "direct" => extra_flags.direct = true,
            other => {
                return Err(Fail::Stdout(format!(
                    "FATAL: Invalid value for file-extra-flags: {other}\n"
                )));
            }
        }
    }
    let fdatasync = match line.text("file-fsync-mode").unwrap_or("fsync") {
        "fsync" => false,
        "fdatasync" => true,
        m => return Err(Fail::Stdout(format!("FATAL: Invalid fsync mode: {m}.\n"))),
    };
    // sysbench reads the ratio with atof: a numeric prefix, else 0.
    let rw_ratio = line.text("file-rw-ratio").map_or(1.5, atof);
    if rw_ratio < 0.0 || !rw_ratio.is_finite() {
        return Err(Fail::Stdout(format!(
            "FATAL: Invalid value for --file-rw-ratio: {rw_ratio:.6}.\n"
        )));
    }
    let file_num = int("file-num", 128)?;
    let block_size = parse_size(line.text("file-block-size").unwrap_or("16384")) as i64;
    let fsync_freq = int("file-fsync-freq", 100)?;
    if fsync_freq < 0 {
        return Err(Fail::Stdout(format!(
            "FATAL: Invalid value for file-fsync-freq: {fsync_freq}.\n"
        )));
    }
    let merged = int("file-merged-requests", 0)?;
    let backlog = int("file-async-backlog", 128)?;
    if backlog <= 0 {
        return Err(Fail::Stdout(format!(
            "FATAL: Invalid value for file-async-backlog: {backlog}.\n"
        )));
    }
    for (name, v) in [("file-num", file_num), ("file-block-size", block_size)] {
        if v <= 0 {
            return Err(Fail::Stdout(format!(
                "FATAL: Invalid value for {name}: {v}.\n"
            )));
        }
    }
    let total_size = parse_size(line.text("file-total-size").unwrap_or("2G"));
    let s = FileioSpec {
        run: run_options(general, true),
        threads: general.threads,
        dir: ".".into(),
        file_num: file_num as usize,
        block_size: block_size as usize,
        total_size,
        mode,
        extra_flags,
        io_mode,
        async_backlog: backlog as usize,
        fsync_freq: fsync_freq.max(0) as u64,
        fsync_all: bool_opt("file-fsync-all", false)?,
        fsync_end: bool_opt("file-fsync-end", true)?,
        fdatasync,
        merged_requests: merged.max(0) as u64,
        rw_ratio,
        seed: (general.rand_seed != 0).then_some(general.rand_seed as u64),
        percentiles: if general.percentile > 0 {
            vec![general.percentile as f64]
        } else {
            vec![]
        },
    };
    s.validate()
        .map_err(|e| Fail::Stdout(format!("FATAL: {e}\n")))?;
    Ok(s)
}

/// C's atof: the longest numeric prefix (after spaces), 0 when there is none.
fn atof(s: &str) -> f64 {
    let t = s.trim_start();
    (1..=t.len())
        .rev()
        .filter(|&n| t.is_char_boundary(n))
        .find_map(|n| {
            let p = &t[..n];
            // Rust accepts "inf"/"nan" spellings C would too; require a digit.
            p.bytes()
                .any(|b| b.is_ascii_digit())
                .then(|| p.parse::<f64>().ok())
                .flatten()
        })
        .unwrap_or(0.0)
}

fn flags_text(f: ExtraFlags) -> String {
    let mut s = String::new();
    for (on, name) in [(f.sync, "sync"), (f.dsync, "dsync"), (f.direct, "directio")] {
        if on {
            s += name;
            s.push(' ');
        }
    }
    if s.is_empty() { "(none)".into() } else { s }
}

pub(super) fn command(
    cmd: &str,
    line: &CommandLine,
    general: &General,
    log: &Log,
    record: &mut crate::compat::Record,
) -> Result<ExitCode, Fail> {
    let s = spec(line, general)?;
    match cmd {
        "prepare" => prepare(&s, log),
        "cleanup" => {
            log.notice("Removing test files...\n");
            fileio::cleanup(&s).map_err(|e| Fail::Stdout(format!("FATAL: {e}\n")))?;
            Ok(ExitCode::SUCCESS)
        }
        _ => {
            let (code, outcome) = run(&s, general, log)?;
            record.keep(outcome);
            Ok(code)
        }
    }
}

fn prepare(s: &FileioSpec, log: &Log) -> Result<ExitCode, Fail> {
    log.notice(&format!(
        "{} files, {}Kb each, {}Mb total\nCreating files for the test...\nExtra file open flags: {}\n",
        s.file_num,
        s.file_size() / 1024,
        s.total_size / 1048576,
        flags_text(s.extra_flags)
    ));
    let result = fileio::prepare(s, &mut |name, action| {
        log.notice(&match action {
            FileAction::Created => format!("Creating file {name}\n"),
            FileAction::Reused => format!("Reusing existing file {name}\n"),
            FileAction::Extended => format!("Extending existing file {name}\n"),
        })
    });
    let (bytes, took) = match result {
        Ok(done) => done,
        // sysbench dies of the signal (the shell's 130); hostbench says how far it got.
        Err(e @ fileio::FileioError::Interrupted { .. }) => {
            eprintln!("{e}");
            return Ok(ExitCode::from(130));
        }
        Err(e) => return Err(Fail::Stdout(format!("FATAL: {e}\n"))),
    };
    if bytes == 0 {
        log.notice("No bytes written.\n");
    } else {
        let secs = took.as_secs_f64();
        log.notice(&format!(
            "{bytes} bytes written in {secs:.2} seconds ({:.2} MiB/sec).\n",
            bytes as f64 / 1048576.0 / secs.max(1e-9)
        ));
    }
    Ok(ExitCode::SUCCESS)
}

fn run(
    s: &FileioSpec,
    general: &General,
    log: &Log,
) -> Result<(ExitCode, crate::model::Outcome), Fail> {
    let Some(mode) = s.mode else {
        return Err(Fail::Stdout(format!(
            "FATAL: Missing required argument: --file-test-mode\n\n{}",
            super::help::test("fileio", FILEIO)
        )));
    };
    header(general, log);
    let mut text = format!(
        "Extra file open flags: {}\n{} files, {} each\n{} total file size\nBlock size {}KiB\n",
        flags_text(s.extra_flags),
        s.file_num,
        format_size_g(s.file_size()),
        format_size_g(s.file_size() * s.file_num as u64),
        s.block_size / 1024
    );
    if s.merged_requests > 0 {
        text += &format!(
            "Merging requests up to {}KiB for sequential IO.\n",
            s.block_size as u64 * s.merged_requests / 1024
        );
    }
    if !mode.sequential() {
        text += &format!(
            "Number of IO requests: {}\nRead/Write ratio for combined random IO test: {:.2}\n",
            general.events.max(0),
            s.rw_ratio
        );
    }
    if s.fsync_all {
        text += "Calling fsync() after each write operation.\n";
    } else {
        if s.fsync_freq > 0 {
            text += &format!(
                "Periodic FSYNC enabled, calling fsync() each {} requests.\n",
                s.fsync_freq
            );
        }
        if s.fsync_end {
            text += "Calling fsync() at the end of test, Enabled.\n";
        }
    }
    text += &format!(
        "Using {} I/O mode\nDoing {} test\n",
        s.io_mode.description(),
        mode.description()
    );
    log.notice(&text);
    let test = FileTest::open(s).map_err(|e| {
        let hint = match e {
            fileio::FileioError::Open { .. } => "WARNING: Did you forget to run the prepare step?\n",
            fileio::FileioError::TooSmall { .. } => {
                "WARNING: Did you run 'prepare' with different --file-total-size or --file-num values?\n"
            }
            _ => "",
        };
        Fail::Stdout(format!("FATAL: {e}\n{hint}"))
    })?;
    starting_workers(general, log);
    let printer =
        FileioIntervalPrinter::new(test.counters(), general.percentile, log.verbosity < 3);
    let outcome = test
        .run(&printer)
        .map_err(|e| Fail::Stdout(format!("FATAL: {e}\n")))?;
    finished(&outcome, general, log, false);
    let rate = |name: &str| outcome.metric(name, None).map_or(0.0, |m| m.value);
    log.notice(&format!(
        "\nFile operations:\n    reads/s:                      {:.2}\n    writes/s:                     {:.2}\n    fsyncs/s:                     {:.2}\n\nThroughput:\n    read, MiB/s:                  {:.2}\n    written, MiB/s:               {:.2}\n",
        rate("reads_per_sec"),
        rate("writes_per_sec"),
        rate("fsyncs_per_sec"),
        rate("read_bytes_per_sec") / 1048576.0,
        rate("write_bytes_per_sec") / 1048576.0
    ));
    Ok((closing(&outcome, general, log), outcome))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_names() {
        assert_eq!(flags_text(ExtraFlags::default()), "(none)");
        let f = ExtraFlags {
            sync: true,
            dsync: true,
            direct: false,
        };
        assert_eq!(flags_text(f), "sync dsync ");
    }
}

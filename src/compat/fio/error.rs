//! The fio personality's errors, by where they arise: the command line
//! (`ArgError`), a job file's text (`JobFileError`), one option's value
//! (`OptionError`, `ValueError`), the jobs built from them (`PlanError`) and a run
//! that fails (`RunError`). `FioError` is any of them, with its exit code: bad
//! input is 2, a failure while running 1. Each Display is the line printed after
//! `fio: `.

use crate::workload::disk::files::FileError;
use crate::workload::disk::job::JobError;
use std::io;
use std::path::PathBuf;
use thiserror::Error;

/// Why the personality stopped before, or while, running the jobs.
#[derive(Debug, Error)]
pub enum FioError {
    #[error(transparent)]
    Args(#[from] ArgError),
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Run(#[from] RunError),
}

impl FioError {
    /// 2 for bad input (the command line, a job file, an option, a job that cannot
    /// be laid out), 1 for a failure while running, 130 for Ctrl-C during the layout.
    pub fn exit_code(&self) -> u8 {
        match self {
            FioError::Args(_) | FioError::Plan(_) => 2,
            FioError::Run(RunError::Interrupted) => 130,
            FioError::Run(_) => 1,
        }
    }
}

/// A command line the personality refuses, before any job file is read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ArgError {
    /// `-` as a job file.
    #[error("reading a job file from stdin is not supported: name the file")]
    Stdin,
    /// `--output`, `--name`, `--bs` … as the last argument.
    #[error("--{option} needs a value")]
    NoValue { option: String },
    #[error("--output-format: '{format}' is not a format: use normal, json, json+ or terse")]
    Format { format: String },
    #[error("--eta: '{choice}' is not a choice: use always, never or auto")]
    Eta { choice: String },
    #[error(
        "option '--{option}' is not supported by hostbench's fio (unknown, or not implemented); \
         remove it, or see docs/compat-fio.md for the options it runs"
    )]
    Unknown { option: String },
}

/// A job file whose text is not a job file. `origin` is `FILE:LINE`.
#[derive(Debug, Error)]
pub enum JobFileError {
    #[error("{path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{path}: includes nest deeper than {max} levels (an include loop?)")]
    TooDeep { path: PathBuf, max: usize },
    #[error("{origin}: an included file may not start sections ('{line}')")]
    SectionInInclude { origin: String, line: String },
    #[error("{origin}: '{line}' has no closing ']'")]
    Unclosed { origin: String, line: String },
    #[error("{origin}: a section needs a name: [global] or [job]")]
    NoSectionName { origin: String },
    #[error("{origin}: include before any [section]")]
    IncludeFirst { origin: String },
    #[error("{origin}: '{line}' comes before any [section]; put it under [global]")]
    BeforeSection { origin: String, line: String },
    #[error("{origin}: '{line}' has no option name")]
    NoKey { origin: String, line: String },
    /// `${VAR` in a value.
    #[error("{origin}: '${{' without a closing '}}' in '{value}'")]
    UnclosedVariable { origin: String, value: String },
    #[error(
        "{origin}: '${word}' in '{value}' is not a keyword: use ${{VAR}}, $ncpus, $pagesize or $mb_memory"
    )]
    Keyword {
        origin: String,
        word: String,
        value: String,
    },
    #[error(
        "{origin}: arithmetic expressions like '{value}' are not implemented; write the number"
    )]
    Arithmetic { origin: String, value: String },
}

/// A job option that cannot be applied, named as it was written.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum OptionError {
    #[error(
        "option '{option}' is not supported by hostbench's fio (unknown, or not implemented); \
         remove it, or see docs/compat-fio.md for the options it runs"
    )]
    Unknown { option: String },
    /// An option that takes a value, written bare.
    #[error("option '{option}' needs a value: {option}=...")]
    NoValue { option: String },
    #[error("{option}={value}: {problem}")]
    Invalid {
        option: String,
        value: String,
        #[source]
        problem: ValueError,
    },
}

/// What is wrong with an option's value; `text` is the value, or the part of it at
/// fault, as written.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ValueError {
    #[error("'{text}' is not an I/O pattern: use read, write, randread, randwrite, rw or randrw")]
    Pattern { text: String },
    #[error("'{text}': the ':N' sequencer suffix is not implemented; drop it")]
    Sequencer { text: String },
    #[error("'{text}': trim workloads are not implemented")]
    Trim { text: String },
    #[error("'{text}' is not a percentage from 0 to 100")]
    Percent { text: String },
    /// `size=N%`: a share of the file or device.
    #[error("'{text}' is not a percentage from 1% to 100%")]
    SizePercent { text: String },
    #[error("'{text}' is not a number from {min} to {max}")]
    Count { text: String, min: u64, max: u64 },
    #[error("'{text}' is not a switch value: use 1 or 0")]
    Switch { text: String },
    #[error(
        "'{text}' is not a size: use a number with an optional k, m, g, t or p suffix (4k, 512m, 1g)"
    )]
    Size { text: String },
    /// A size whose bytes overflow 64 bits.
    #[error("'{text}' is too large")]
    SizeTooLarge { text: String },
    #[error("'{text}' is not a time: use seconds, or a suffix like 500ms, 2m, 1h")]
    Time { text: String },
    /// Over 10^9 seconds.
    #[error("'{text}' is too long")]
    TimeTooLong { text: String },
    #[error("a block size of 0 does no I/O")]
    ZeroBlock,
    #[error("block sizes above 1 GiB are not supported")]
    BlockTooLarge { bytes: u64 },
    /// More than read, write and trim values.
    #[error("'{text}': give one value, or read,write[,trim] values")]
    Directions { text: String },
    #[error("'{text}' is not a range: write it as 4k-64k")]
    NotARange { text: String },
    #[error("'{text}': the smaller size comes first")]
    RangeOrder { text: String },
    #[error("at most 64 sizes per direction")]
    SplitSizes { count: usize },
    #[error("'{text}': the shares add up to {total} %, more than 100")]
    SharesOver { text: String, total: u32 },
    #[error("'{text}': the shares add up to {total} %, not 100")]
    SharesNot100 { text: String, total: u32 },
    #[error("engine '{engine}' is not implemented: use io_uring, libaio, psync or sync")]
    Engine { engine: String },
    #[error("'{text}' is not a seed: use a whole number")]
    Seed { text: String },
    #[error("'{text}' is not a kb_base: use 1024 or 1000")]
    KbBase { text: String },
    #[error("'{text}' is not a percentile from 0 to 100")]
    Percentile { text: String },
    #[error("give 1 to 20 percentiles, separated by ':'")]
    PercentileCount { count: usize },
}

/// Jobs that cannot be built from their sections, or laid out as written.
#[derive(Debug, Error)]
pub enum PlanError {
    #[error(transparent)]
    JobFile(#[from] JobFileError),
    /// `origin` is `FILE:LINE` or `command line`.
    #[error("{origin}: {error}")]
    Option {
        origin: String,
        #[source]
        error: OptionError,
    },
    #[error("no jobs defined: give a job file, or options and --name=JOB (see --help)")]
    NoJobs,
    #[error("job '{job}': time_based needs a runtime (e.g. runtime=60)")]
    NoRuntime { job: String },
    #[error("job '{job}': filename= names no file")]
    NoFile { job: String },
    #[error(
        "job '{job}': {path} is a block device and rw={rw} writes to it, destroying what it holds; \
         pass --allow-device if that is really meant"
    )]
    Device {
        job: String,
        path: PathBuf,
        rw: String,
    },
    #[error(
        "job '{job}': size={percent}% needs existing files to take a share of; give size= in bytes"
    )]
    ShareOfNothing { job: String, percent: f64 },
    #[error("job '{job}': you need to specify size= ({path} does not exist yet)")]
    NoSize { job: String, path: PathBuf },
    #[error(
        "job '{job}': each file would hold {file_size} bytes, less than one {block}-byte block; \
         raise size= or lower bs="
    )]
    FileTooSmall {
        job: String,
        file_size: u64,
        block: u64,
    },
    #[error("job '{job}': directory {dir} does not exist: create it or change directory=")]
    NoDirectory { job: String, dir: PathBuf },
}

/// A failure while running: laying out a file, a job's I/O, writing `--output`.
#[derive(Debug, Error)]
pub enum RunError {
    /// Ctrl-C before any job ran (while laying out the files): exit 130.
    #[error("terminating on signal 2 (while laying out the files: no job ran)")]
    Interrupted,
    #[error(transparent)]
    LayOut(FileError),
    #[error(transparent)]
    Job(JobError),
    #[error("--output {path}: {source}")]
    Output {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

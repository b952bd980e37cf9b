//! The results store: every native run is kept, so history, show, export and compare
//! work offline. One trait, `Store`, so a PostgreSQL backend for fleets can follow
//! without touching a workload or a command; SQLite (`sqlite.rs`) is the default.
//!
//! A run is what one command invocation measured: its outcomes, the host, labels the
//! user gave (`--label provider=aws`), the command and profile.

mod schema;
pub mod soak;
pub mod sqlite;
pub mod steps;

use crate::host::HostInfo;
use crate::model::Outcome;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use thiserror::Error;

pub use schema::LATEST_VERSION;
pub use steps::{StepProblem, StepStatus};

/// `provider=aws`, `type=c6i.large`: free-form, one value per key.
pub type Labels = BTreeMap<String, String>;

/// What a command hands the store after it measured.
#[derive(Debug, Clone)]
pub struct NewRun<'a> {
    /// `cpu`, `disk`, `run`, ... or the personality (`sysbench`, `fio`, ...).
    pub command: &'a str,
    /// The words as typed, the program's file name first (`sysbench cpu run`).
    pub command_line: &'a [String],
    pub labels: &'a Labels,
    /// The profile of `hostbench run`.
    pub profile: Option<&'a str>,
    pub outcomes: &'a [Outcome],
}

/// A stored run without its outcomes: what `history` lists.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunInfo {
    pub id: i64,
    /// When the first measurement started (RFC 3339, UTC).
    pub started_at: String,
    pub saved_at: String,
    pub command: String,
    /// The words as typed, the program's file name first; empty for runs saved by a
    /// hostbench that did not record them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command_line: Vec<String>,
    pub labels: Labels,
    pub profile: Option<String>,
    /// Some measurement was cut short (Ctrl-C): figures cover what ran.
    pub interrupted: bool,
    /// The `Outcome` schema version the run was measured with.
    pub schema_version: u32,
    pub tool_version: String,
    /// The workloads of its outcomes, in order, without repeats.
    pub workloads: Vec<String>,
    pub outcome_count: usize,
    /// The run's first rate (events/s, ops/s, bytes/s), else its first metric: one
    /// figure for a listing.
    pub headline: Option<crate::model::Metric>,
    /// The machine, without the per-run state (load, steal) that each outcome keeps.
    pub host: HostInfo,
}

impl RunInfo {
    /// The command as typed (`sysbench cpu --cpu-max-prime=20000 run`), words with
    /// spaces or quotes quoted; for runs saved without their line,
    /// `hostbench COMMAND [--profile P]`.
    pub fn command_text(&self) -> String {
        if self.command_line.is_empty() {
            let profile = self
                .profile
                .as_deref()
                .map(|p| format!(" --profile {p}"))
                .unwrap_or_default();
            return format!("hostbench {}{profile}", self.command);
        }
        let quote = |w: &String| {
            if !w.is_empty() && !w.contains(|c: char| c.is_whitespace() || "'\"$`\\".contains(c)) {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        };
        self.command_line
            .iter()
            .map(quote)
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// A run with everything it measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StoredRun {
    #[serde(flatten)]
    pub info: RunInfo,
    pub outcomes: Vec<Outcome>,
    /// The steps of `hostbench run` that did not give their result, with the reason
    /// the run printed (none for other commands, and for runs saved before schema 5).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<StepProblem>,
}

/// Which runs `history`, `export` and `compare` look at. Empty fields match all.
#[derive(Debug, Clone, Default)]
pub struct RunFilter {
    /// Host name, exactly as `hostname` reports it.
    pub host: Option<String>,
    /// Every pair must be on the run.
    pub labels: Labels,
    /// The run has an outcome of this workload (`cpu`, `memory`, `disk`, ...).
    pub workload: Option<String>,
    /// Started at or after (RFC 3339, compared as text: all stored times are UTC `Z`).
    pub since: Option<String>,
    /// Started before.
    pub until: Option<String>,
    /// Only these run ids.
    pub ids: Vec<i64>,
    /// The newest N of what matches (still listed oldest first).
    pub last: Option<usize>,
}

/// The results store. Implementations keep every field of an `Outcome`, so what
/// `show --json` prints equals what the command printed.
pub trait Store {
    /// Where the store lives, for messages (a path or a URL without password).
    fn location(&self) -> String;
    /// Notes about the store found while opening it (a journal mode it could not
    /// switch to), for the command to print where its output allows.
    fn take_notes(&mut self) -> Vec<String> {
        Vec::new()
    }
    /// Saves one run in one transaction and returns its id.
    fn save(&mut self, run: &NewRun) -> Result<i64, StoreError> {
        self.save_with(run, &[])
    }
    /// Saves one run with the steps that did not give their result (`hostbench run`'s
    /// skipped, failed and interrupted steps), in one transaction; returns its id.
    fn save_with(&mut self, run: &NewRun, problems: &[StepProblem]) -> Result<i64, StoreError>;
    /// Runs matching `filter`, oldest first.
    fn list(&self, filter: &RunFilter) -> Result<Vec<RunInfo>, StoreError>;
    /// One run with its outcomes, or None when there is no such id.
    fn load(&self, id: i64) -> Result<Option<StoredRun>, StoreError>;

    /// Records a new soak (state `running`, this process) and returns its id.
    fn create_soak(&mut self, plan: &soak::SoakPlan) -> Result<i64, StoreError>;
    /// One soak with its slices, or None when there is no such id.
    fn load_soak(&self, id: i64) -> Result<Option<soak::Soak>, StoreError>;
    /// Every soak, oldest first (with their slices).
    fn list_soaks(&self) -> Result<Vec<soak::Soak>, StoreError>;
    /// Records one slice, and with it the run holding its outcomes, in one
    /// transaction; returns the run's id. A slice is recorded once.
    fn save_slice(
        &mut self,
        soak_id: i64,
        slice: &soak::Slice,
        run: Option<&NewRun>,
    ) -> Result<Option<i64>, StoreError>;
    /// Removes a soak that recorded nothing (its workload was refused at once).
    fn delete_soak(&mut self, id: i64) -> Result<(), StoreError>;
    /// Marks the soak running (by `pid`), stopped, finished or failed.
    fn set_soak_state(
        &mut self,
        id: i64,
        state: soak::SoakState,
        pid: Option<u32>,
    ) -> Result<(), StoreError>;
}

/// Where results go: `--db PATH` (or, in time, `--db postgres://...`).
#[derive(Debug, Clone, PartialEq)]
pub enum Location {
    /// A SQLite file. Its directory is made when missing only for the default
    /// location: a mistyped `--db` directory is an error, not a new tree.
    Sqlite { path: PathBuf, make_dir: bool },
}

impl Location {
    /// `--db` as given; without it, `$XDG_DATA_HOME/hostbench/results.db`
    /// (`~/.local/share/hostbench/results.db` when XDG_DATA_HOME is unset).
    pub fn resolve(db: Option<&str>) -> Result<Self, StoreError> {
        match db {
            Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
                Err(StoreError::Unsupported {
                    location: redact(url),
                })
            }
            Some("") => Err(StoreError::NoLocation),
            Some(path) => Ok(Location::sqlite(path)),
            None => default_path().map(|path| Location::Sqlite {
                path,
                make_dir: true,
            }),
        }
    }

    /// A SQLite file at a path the user gave.
    pub fn sqlite(path: impl Into<PathBuf>) -> Self {
        Location::Sqlite {
            path: path.into(),
            make_dir: false,
        }
    }

    pub fn display(&self) -> String {
        match self {
            Location::Sqlite { path, .. } => path.display().to_string(),
        }
    }
}

fn default_path() -> Result<PathBuf, StoreError> {
    // The XDG spec says a relative XDG_DATA_HOME is invalid and must be ignored.
    let xdg = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    let base = match xdg {
        Some(p) => p,
        None => std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .ok_or(StoreError::NoLocation)?
            .join(".local/share"),
    };
    Ok(base.join("hostbench").join("results.db"))
}

/// A URL for messages, without its password.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let creds = &url[scheme + 3..at];
            let user = creds.split(':').next().unwrap_or("");
            format!("{}{user}@{}", &url[..scheme + 3], &url[at + 1..])
        }
        _ => url.to_string(),
    }
}

/// Opens the store for saving: creates the file (and its directory) when missing,
/// migrates an older schema forward.
pub fn open(location: &Location) -> Result<Box<dyn Store>, StoreError> {
    match location {
        Location::Sqlite { path, make_dir } => {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                if *make_dir {
                    std::fs::create_dir_all(dir).map_err(|e| StoreError::Open {
                        path: path.clone(),
                        source: Box::new(e),
                    })?;
                } else if !dir.is_dir() {
                    return Err(StoreError::Open {
                        path: path.clone(),
                        source: if dir.exists() {
                            format!("{} is not a directory", dir.display())
                        } else {
                            format!("directory {} does not exist", dir.display())
                        }
                        .into(),
                    });
                }
            }
            Ok(Box::new(sqlite::SqliteStore::open(path, true)?))
        }
    }
}

/// Opens an existing store for reading; `None` when nothing was ever saved there.
pub fn open_existing(location: &Location) -> Result<Option<Box<dyn Store>>, StoreError> {
    match location {
        Location::Sqlite { path, .. } => {
            if !path.exists() {
                return Ok(None);
            }
            Ok(Some(Box::new(sqlite::SqliteStore::open(path, false)?)))
        }
    }
}

/// Everything that can go wrong with the store names the database and the way out.
#[derive(Debug, Error)]
pub enum StoreError {
    #[error(
        "no place for the results database: HOME and XDG_DATA_HOME are unset; give --db PATH, or --no-save"
    )]
    NoLocation,
    #[error(
        "{location}: PostgreSQL results databases are not supported yet; give --db with a file path (SQLite)"
    )]
    Unsupported { location: String },
    #[error(
        "{}: not a hostbench results database ({why}); it was left untouched: give --db another path, or move the file away",
        path.display()
    )]
    NotOurs { path: PathBuf, why: String },
    #[error(
        "{}: written by a newer hostbench (schema {found}, this one knows up to {known}); it was left untouched: upgrade hostbench, or give --db another path",
        path.display()
    )]
    Newer {
        path: PathBuf,
        found: u32,
        known: u32,
    },
    #[error(
        "{}: cannot use the results database: {source}; check the path and its permissions, give --db another path, or --no-save",
        path.display()
    )]
    Open {
        path: PathBuf,
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error(
        "{}: the results database is locked by another process; wait for it to finish and retry, or give --db another path",
        path.display()
    )]
    Locked { path: PathBuf },
    #[error(
        "{}: the results database is damaged ({source}); nothing was changed: keep a copy, and give --db another path",
        path.display()
    )]
    Corrupt {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error(
        "{}: the results database is truncated (its header counts {expected} bytes, the file has {found}); nothing was changed: restore it from a copy, or give --db another path",
        path.display()
    )]
    Truncated {
        path: PathBuf,
        expected: u64,
        found: u64,
    },
    #[error("{}: {what}: {source}", path.display())]
    Sql {
        path: PathBuf,
        what: String,
        source: rusqlite::Error,
    },
    #[error("{}: stored data does not read back ({what}); was the file edited by hand?", path.display())]
    Decode { path: PathBuf, what: String },
}

impl StoreError {
    pub(crate) fn sql(path: &Path, what: &str, e: rusqlite::Error) -> Self {
        use rusqlite::ErrorCode;
        match e.sqlite_error_code() {
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => StoreError::Locked {
                path: path.to_path_buf(),
            },
            Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => StoreError::Corrupt {
                path: path.to_path_buf(),
                source: e,
            },
            Some(ErrorCode::CannotOpen | ErrorCode::PermissionDenied | ErrorCode::ReadOnly) => {
                StoreError::Open {
                    path: path.to_path_buf(),
                    source: Box::new(e),
                }
            }
            _ => StoreError::Sql {
                path: path.to_path_buf(),
                what: what.into(),
                source: e,
            },
        }
    }

    /// Whether the user's input is at fault (a location that cannot hold a results
    /// database, or a file that is not one this hostbench may use), which another
    /// `--db` or `--no-save` fixes; otherwise the store failed by itself (an I/O
    /// error, a full disk, a lock held elsewhere, a damaged file).
    pub fn is_usage(&self) -> bool {
        use std::io::ErrorKind as K;
        match self {
            StoreError::NoLocation
            | StoreError::Unsupported { .. }
            | StoreError::NotOurs { .. }
            | StoreError::Newer { .. } => true,
            StoreError::Open { source, .. } => {
                if let Some(e) = source.downcast_ref::<std::io::Error>() {
                    matches!(
                        e.kind(),
                        K::NotFound
                            | K::PermissionDenied
                            | K::NotADirectory
                            | K::IsADirectory
                            | K::ReadOnlyFilesystem
                            | K::InvalidFilename
                            | K::InvalidInput
                    )
                } else if let Some(e) = source.downcast_ref::<rusqlite::Error>() {
                    matches!(
                        e.sqlite_error_code(),
                        Some(
                            rusqlite::ErrorCode::CannotOpen
                                | rusqlite::ErrorCode::PermissionDenied
                                | rusqlite::ErrorCode::ReadOnly
                        )
                    )
                } else {
                    // The path's own checks (`directory … does not exist`).
                    true
                }
            }
            StoreError::Locked { .. }
            | StoreError::Corrupt { .. }
            | StoreError::Truncated { .. }
            | StoreError::Sql { .. }
            | StoreError::Decode { .. } => false,
        }
    }
}

/// The label of a run's outcome for people: `disk (randread)`, `memory (latency)`.
pub fn outcome_test(o: &Outcome) -> Option<String> {
    o.spec
        .get("name")
        .or_else(|| o.spec.get("mode"))
        .and_then(|v| v.as_str())
        .map(str::to_string)
}

/// A `--label` (or `HOSTBENCH_LABEL`, `label:` group) that is not `KEY=VALUE`;
/// `text` is the label as given.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LabelError {
    #[error("'{text}' is not a label: write KEY=VALUE, e.g. provider=aws")]
    NoValue { text: String },
    #[error("'{text}': a label key is letters, digits, '_', '-' or '.', e.g. provider=aws")]
    Key { text: String },
}

/// A `--since`/`--until` that is not a date (or a time) hostbench reads.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("'{text}' is not a date: write YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS] (UTC), e.g. 2026-11-29")]
pub struct DateError {
    pub text: String,
}

/// `provider=aws` -> (`provider`, `aws`): a key of letters, digits, `_`, `-`, `.`.
pub fn parse_label(s: &str) -> Result<(String, String), LabelError> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| LabelError::NoValue { text: s.into() })?;
    let k = k.trim();
    if k.is_empty()
        || !k
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    {
        return Err(LabelError::Key { text: s.into() });
    }
    Ok((k.to_string(), v.to_string()))
}

/// A date or time for `--since`/`--until`, as the stored RFC 3339 text compares:
/// `2026-11-29` -> `2026-11-29T00:00:00Z`; `2026-11-29T10:00` and `...:00Z` taken as UTC.
/// `end_of_day` makes a bare date include its whole day (for `--until`).
pub fn parse_when(s: &str, end_of_day: bool) -> Result<String, DateError> {
    let t = s.trim().trim_end_matches('Z');
    let bad = || DateError { text: s.into() };
    let (date, time) = match t.split_once(['T', ' ']) {
        Some((d, tm)) => (d, Some(tm)),
        None => (t, None),
    };
    let nums = |part: &str, sep: char, n: usize| -> Option<Vec<u32>> {
        let v: Vec<u32> = part
            .split(sep)
            .map(|x| x.parse().ok().filter(|_| !x.is_empty() && x.len() <= 4))
            .collect::<Option<_>>()?;
        (v.len() == n).then_some(v)
    };
    let d = nums(date, '-', 3).ok_or_else(bad)?;
    if !(1970..=9999).contains(&d[0]) || !(1..=12).contains(&d[1]) || !(1..=31).contains(&d[2]) {
        return Err(bad());
    }
    let (h, m, sec) = match time {
        None if end_of_day => (23, 59, 59),
        None => (0, 0, 0),
        Some(tm) => {
            let v = nums(tm, ':', 3).or_else(|| nums(tm, ':', 2).map(|v| vec![v[0], v[1], 0]));
            let v = v.ok_or_else(bad)?;
            if v[0] > 23 || v[1] > 59 || v[2] > 60 {
                return Err(bad());
            }
            (v[0], v[1], v[2])
        }
    };
    Ok(format!(
        "{:04}-{:02}-{:02}T{h:02}:{m:02}:{sec:02}Z",
        d[0], d[1], d[2]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_parse() {
        assert_eq!(
            parse_label("provider=aws").unwrap(),
            ("provider".into(), "aws".into())
        );
        assert_eq!(parse_label("k=a=b").unwrap(), ("k".into(), "a=b".into()));
        assert_eq!(
            parse_label("novalue"),
            Err(LabelError::NoValue {
                text: "novalue".into()
            })
        );
        assert_eq!(
            parse_label("=x"),
            Err(LabelError::Key { text: "=x".into() })
        );
        assert_eq!(
            parse_label("a b=x").unwrap_err().to_string(),
            "'a b=x': a label key is letters, digits, '_', '-' or '.', e.g. provider=aws"
        );
    }

    #[test]
    fn dates_parse() {
        assert_eq!(
            parse_when("2026-11-29", false).unwrap(),
            "2026-11-29T00:00:00Z"
        );
        assert_eq!(
            parse_when("2026-11-29", true).unwrap(),
            "2026-11-29T23:59:59Z"
        );
        assert_eq!(
            parse_when("2026-11-29T10:05", true).unwrap(),
            "2026-11-29T10:05:00Z"
        );
        assert_eq!(
            parse_when("2026-11-29T10:05:07Z", false).unwrap(),
            "2026-11-29T10:05:07Z"
        );
        for bad in ["yesterday", "2026-13-01", "2026-11", "2026-11-29T25:00", ""] {
            assert_eq!(
                parse_when(bad, false),
                Err(DateError { text: bad.into() }),
                "{bad}"
            );
        }
    }

    #[test]
    fn postgres_is_named_not_pretended() {
        let e = Location::resolve(Some("postgres://bench:secret@db/results")).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("not supported yet"), "{msg}");
        assert!(!msg.contains("secret"), "{msg}");
    }
}

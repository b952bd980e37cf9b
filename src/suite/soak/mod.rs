//! `hostbench soak`: one workload run on a fixed schedule (every hour for a day, say),
//! each slice stored as a run of its own and linked to the soak, so a restart resumes
//! on the original schedule and the result (timeline, CV, deepest drop, flagged
//! slices) is recomputed from the store at any time.
//!
//! A slice is the current executable started with the workload's command line
//! (`slice.rs`): a native one with its time option set to the slice and `--json
//! --no-save`, or a peer's (`fio seed.fio`, `sysbench cpu run`) with the slice's
//! length and an outcomes file in its environment (`compat::keep`). The workload runs
//! exactly as the user would run it, isolated from the scheduler, and Ctrl-C reaches
//! it as a signal.

pub mod slice;
pub mod stats;

use crate::measure::stop_requested;
use crate::model::{Better, Outcome, Unit};
use crate::store::soak::{Figure, Slice, SliceStatus, Soak, SoakPlan, SoakState};
use crate::store::{NewRun, Store, StoreError};
use crate::workload::SpecError;
use serde::Serialize;
use std::time::Duration;

/// The default workload: seed 002's hourly stability slice, 4 KiB random I/O, 70 %
/// reads, 32 requests in flight (the disk standard set's `mixed` test).
pub const DEFAULT_WORKLOAD: [&str; 3] = ["disk", "--tests", "mixed"];

/// The native workloads a soak can run, and the option each takes its time from.
pub const WORKLOADS: [(&str, &str); 5] = [
    ("cpu", "--time"),
    ("memory", "--time"),
    ("disk", "--time"),
    ("net", "--time"),
    ("redis", "--time"),
];

/// The personalities a soak can run: each applies the slice's length to its own time
/// option (sysbench `--time`, fio `runtime` with `time_based`, iperf3 `-t`, netperf
/// `-l`, ping's deadline; redis-benchmark shares the slice among its tests, each bound
/// by time instead of `-n`). The others have none, or measure nothing on their own.
pub const PERSONALITIES: [&str; 6] = [
    "sysbench",
    "fio",
    "iperf3",
    "netperf",
    "ping",
    "redis-benchmark",
];

/// Personalities a soak refuses: why, and what to soak instead.
const UNSLICEABLE: [(&str, &str, &str); 3] = [
    (
        "unixbench",
        "its tests have fixed lengths of their own",
        "soak a single workload such as `cpu`",
    ),
    (
        "dd",
        "it copies a byte count, not for a time",
        "soak `disk --tests write` or `fio JOBFILE`",
    ),
    (
        "netserver",
        "the server side measures nothing",
        "soak the client, `netperf -H HOST`",
    ),
];

/// How a slice applies its length to the workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slicing {
    /// A native command: this option gets the duration (`--time`).
    Option(&'static str),
    /// A personality: the duration goes in its environment, its outcomes come back in a
    /// file (`compat::keep`).
    Personality,
}

/// The default threshold: a slice below 80 % of the median is flagged. Seed 002's
/// cloud disk moved about 10 % over a day (2310..2590 IOPS) and was judged stable;
/// 80 % sits twice that swing below the median, so ordinary noise is not flagged and
/// a real fall (a noisy neighbour, exhausted burst credits, throttling) is.
pub const DEFAULT_THRESHOLD_PERCENT: f64 = 80.0;

fn words_of(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// Whether `words` carry option `long` (also as `--long=value`, or `short`).
fn has_option(words: &[String], long: &str, short: Option<&str>) -> bool {
    words.iter().any(|w| {
        w == long
            || w.strip_prefix(long)
                .is_some_and(|rest| rest.starts_with('='))
            || short.is_some_and(|s| w == s || (w.starts_with(s) && w.len() > s.len()))
    })
}

/// How soak's `--time` reaches `words`' workload, refusing workloads without a time
/// option and options the soak sets itself.
pub fn slicing(words: &[String]) -> Result<Slicing, SpecError> {
    let Some(name) = words.first() else {
        return Err(SpecError::new(
            "soak",
            "no workload",
            "give one, e.g. `cpu --threads 1`",
        ));
    };
    if PERSONALITIES.contains(&name.as_str()) {
        return personality_slicing(words).map(|()| Slicing::Personality);
    }
    if let Some((_, why, instead)) = UNSLICEABLE.iter().find(|(n, ..)| n == name) {
        return Err(SpecError::new(
            format!("workload '{name}'"),
            format!("a soak cannot slice it: {why}"),
            *instead,
        ));
    }
    time_option(words).map(Slicing::Option)
}

/// A peer's command line that a slice can run: one that measures something.
fn personality_slicing(words: &[String]) -> Result<(), SpecError> {
    let (name, rest) = (&words[0], &words[1..]);
    let refuse = |problem: &str, fix: &str| {
        Err(SpecError::new(
            format!("workload `{}`", words.join(" ")),
            problem.to_string(),
            fix.to_string(),
        ))
    };
    match name.as_str() {
        "sysbench" if !rest.iter().any(|w| w == "run") => refuse(
            "only sysbench's `run` command measures",
            "soak e.g. `sysbench cpu --cpu-max-prime=20000 run` (prepare fileio's files first)",
        ),
        "fio"
            if !rest.iter().any(|w| !w.starts_with('-'))
                && !rest.iter().any(|w| w.starts_with("--name")) =>
        {
            refuse(
                "no job file and no --name job",
                "give the job file, e.g. `fio seed.fio`",
            )
        }
        "iperf3"
            if !rest
                .iter()
                .any(|w| w == "-c" || w.starts_with("-c") || w.starts_with("--client")) =>
        {
            refuse(
                "only iperf3's client measures",
                "soak `iperf3 -c HOST` with `iperf3 -s` (or `hostbench iperf3 -s`) running on HOST",
            )
        }
        _ => Ok(()),
    }
}

/// The option of a native workload that soak's `--time` is given to, refusing workloads
/// without one and options the soak sets itself.
pub fn time_option(words: &[String]) -> Result<&'static str, SpecError> {
    let Some(name) = words.first() else {
        return Err(SpecError::new(
            "soak",
            "no workload",
            "give one, e.g. `cpu --threads 1`",
        ));
    };
    let names = || {
        WORKLOADS
            .iter()
            .map(|w| w.0)
            .chain(PERSONALITIES)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some(&(_, option)) = WORKLOADS.iter().find(|w| w.0 == name) else {
        return Err(SpecError::new(
            format!("workload '{name}'"),
            "not a workload soak can run",
            format!(
                "use one of {} with its native options, e.g. `hostbench soak --every 1h cpu --threads 1`",
                names()
            ),
        ));
    };
    let rest = &words[1..];
    if name == "net" && rest.first().is_some_and(|w| w == "serve") {
        return Err(SpecError::new(
            "net serve",
            "the server side measures nothing",
            "soak the client: `net TCP_STREAM HOST`, with `hostbench net serve` running on HOST",
        ));
    }
    let short = (name == "net").then_some("-t");
    if has_option(rest, option, short) {
        return Err(SpecError::new(
            format!("{name} {option}"),
            format!("soak sets the workload's {option} from its own --time"),
            format!("drop {option} from the workload and give soak --time, before the workload"),
        ));
    }
    let reserved = ["--json", "--no-save", "--label", "--db"];
    if let Some(opt) = reserved.iter().find(|o| has_option(rest, o, None)) {
        return Err(SpecError::new(
            format!("{name} {opt}"),
            "soak gives every slice --json --no-save and stores it itself",
            "give --db and --label to soak, before the workload",
        ));
    }
    Ok(option)
}

/// The workload's command line as the soak will store and run it: the default when
/// none is given, and disk's test directory made absolute, so a soak resumed from
/// another directory still tests the same disk.
pub fn workload_words(given: &[String]) -> Result<Vec<String>, SpecError> {
    let mut words = if given.is_empty() {
        words_of(&DEFAULT_WORKLOAD)
    } else {
        given.to_vec()
    };
    if slicing(&words)? == Slicing::Personality {
        absolute_files(&mut words)?;
        return Ok(words);
    }
    if words[0] == "disk" {
        let cwd = std::env::current_dir().map_err(|e| {
            SpecError::new(
                "disk --dir",
                format!("the current directory is unusable ({e})"),
                "give --dir with an absolute path",
            )
        })?;
        let absolute = |d: &str| cwd.join(d).display().to_string();
        match words
            .iter()
            .position(|w| w == "--dir" || w.starts_with("--dir="))
        {
            None => words.extend(["--dir".to_string(), absolute(".")]),
            Some(i) if words[i] == "--dir" => {
                if let Some(d) = words.get(i + 1).cloned() {
                    words[i + 1] = absolute(&d);
                }
            }
            Some(i) => {
                let d = words[i]["--dir=".len()..].to_string();
                words[i] = format!("--dir={}", absolute(&d));
            }
        }
    }
    Ok(words)
}

/// A peer's words that name existing files (a fio job file) made absolute, so a soak
/// resumed from another directory runs the same job. (Paths inside a job file resolve
/// against the directory the soak runs in, as they do for fio.)
fn absolute_files(words: &mut [String]) -> Result<(), SpecError> {
    let cwd = std::env::current_dir().map_err(|e| {
        SpecError::new(
            "soak",
            format!("the current directory is unusable ({e})"),
            "run the soak from a directory that exists",
        )
    })?;
    for w in words.iter_mut().skip(1) {
        if !w.starts_with('-') && std::path::Path::new(w.as_str()).is_file() {
            *w = cwd.join(w.as_str()).display().to_string();
        }
    }
    Ok(())
}

/// `--every`, `--for`, `--time` checked together.
pub fn check_schedule(
    every: Duration,
    total: Duration,
    duration: Duration,
) -> Result<(), SpecError> {
    if every < Duration::from_secs(1) {
        return Err(SpecError::new(
            format!("--every {}", crate::units::format_duration(every)),
            "slices must be at least a second apart",
            "give e.g. --every 1h",
        ));
    }
    if duration < Duration::from_millis(100) {
        return Err(SpecError::new(
            format!("--time {}", crate::units::format_duration(duration)),
            "too short to measure anything",
            "give e.g. --time 10m (at least 100ms)",
        ));
    }
    if duration > every {
        return Err(SpecError::new(
            format!(
                "--time {} with --every {}",
                crate::units::format_duration(duration),
                crate::units::format_duration(every)
            ),
            "a slice would run into the next one",
            "make --time at most --every",
        ));
    }
    if total.is_zero() {
        return Err(SpecError::new(
            format!("--for {}", crate::units::format_duration(total)),
            "the soak would have no slice",
            "give e.g. --for 24h",
        ));
    }
    if total.as_millis() / every.as_millis() > 100_000 {
        return Err(SpecError::new(
            format!(
                "--for {} with --every {}",
                crate::units::format_duration(total),
                crate::units::format_duration(every)
            ),
            "more than 100000 slices",
            "slice less often or for less long",
        ));
    }
    Ok(())
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// `2026-11-30 01:00:00` (UTC) for a Unix-ms time.
pub fn utc(ms: i64) -> String {
    use jiff::Timestamp;
    let t = Timestamp::from_millisecond(ms).unwrap_or(if ms < 0 {
        Timestamp::MIN
    } else {
        Timestamp::MAX
    });
    t.strftime("%Y-%m-%d %H:%M:%S").to_string()
}

/// The figure a slice is judged by. Disk: the IOPS of its (first) test, reads and
/// writes together, as seed 002 charts the 70/30 test; an fsync test, fsyncs/s.
/// Otherwise the first rate the workload reports (cpu: events/s of its first thread
/// count; memory: its first rate; net: the receiver's throughput; redis: ops/s).
pub fn headline(outcomes: &[Outcome]) -> Option<Figure> {
    let first = outcomes.first()?;
    if first.workload == "disk" {
        let iops: Vec<f64> = first
            .metrics
            .iter()
            .filter(|m| m.name == "read_iops" || m.name == "write_iops")
            .map(|m| m.value)
            .collect();
        if !iops.is_empty() {
            return Some(Figure {
                metric: "iops".into(),
                value: iops.iter().sum(),
                unit: Unit::OpsPerSec,
                better: Better::Higher,
            });
        }
    }
    let rate = outcomes
        .iter()
        .flat_map(|o| &o.metrics)
        .find(|m| {
            matches!(
                m.unit,
                Unit::EventsPerSec | Unit::OpsPerSec | Unit::BytesPerSec
            )
        })
        .or_else(|| first.metrics.first())?;
    Some(Figure {
        metric: rate.name.clone(),
        value: rate.value,
        unit: rate.unit,
        better: rate.better,
    })
}

/// The result of a soak as `soak --show`, `--json` and the report give it.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub slices_planned: u32,
    pub measured: usize,
    pub missed: usize,
    pub failed: usize,
    /// The figure judged (from the first measured slice).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<Unit>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stats: Option<stats::Stats>,
    pub verdict: stats::Verdict,
}

/// Statistics and verdict from the slices stored so far; `threshold` overrides the
/// soak's own (to re-judge a finished soak).
pub fn summarise(soak: &Soak, threshold: Option<f64>) -> Summary {
    let first = soak.slices.iter().find_map(|s| s.figure.as_ref());
    let metric = first.map(|f| f.metric.clone());
    let points: Vec<stats::Point> = soak
        .slices
        .iter()
        .filter(|s| s.status == SliceStatus::Done)
        .filter_map(|s| {
            let f = s.figure.as_ref()?;
            (Some(&f.metric) == metric.as_ref()).then_some(stats::Point {
                seq: s.seq,
                value: f.value,
            })
        })
        .collect();
    let better = first.map_or(Better::Higher, |f| f.better);
    let stats = stats::compute(
        &points,
        threshold.unwrap_or(soak.plan.threshold_pct),
        better,
    );
    let count = |st: SliceStatus| soak.slices.iter().filter(|s| s.status == st).count();
    let (missed, failed) = (count(SliceStatus::Missed), count(SliceStatus::Failed));
    let verdict = stats::verdict(stats.as_ref(), missed, failed, |seq| {
        format!("{} UTC", utc(soak.plan.due_ms(seq)))
    });
    Summary {
        slices_planned: soak.plan.slice_count(),
        measured: points.len(),
        missed,
        failed,
        metric,
        unit: first.map(|f| f.unit),
        stats,
        verdict,
    }
}

/// How a soak run ended.
#[derive(Debug)]
pub enum End {
    /// Every slice is recorded.
    Finished,
    /// Ctrl-C: finished slices are saved; `--resume` continues.
    Stopped,
    /// The workload refused its command line before any slice measured (exit 2).
    Refused(String),
    /// The first slice failed (a server down, a directory unusable): nothing was
    /// recorded, and a schedule of failures would tell nothing.
    FirstFailed(String),
}

#[derive(Debug, thiserror::Error)]
pub enum SoakError {
    #[error("{0}")]
    Spec(#[from] SpecError),
    #[error("{0}")]
    Store(#[from] StoreError),
}

/// How late a slice may start and still count: until it would end at the next
/// slot, plus a little for process start-up.
pub fn grace_ms(plan: &SoakPlan) -> i64 {
    (plan.every_ms - plan.duration_ms).max(0) + (plan.every_ms / 10).min(1000)
}

/// Runs the soak's remaining slices on its schedule. Slices already recorded are
/// skipped; those whose time passed (beyond `grace_ms`) are recorded as missed.
/// `shown` gets every slice as it is recorded.
pub fn drive(
    store: &mut dyn Store,
    soak: &mut Soak,
    shown: &mut dyn FnMut(&Soak, &Slice),
) -> Result<End, SoakError> {
    let plan = soak.plan.clone();
    let slicing = slicing(&plan.workload)?;
    let total = plan.slice_count();
    let grace = grace_ms(&plan);
    let began = now_ms();
    let duration = Duration::from_millis(plan.duration_ms as u64);
    for seq in 0..total {
        if soak.slices.iter().any(|s| s.seq == seq) {
            continue;
        }
        if stop_requested() {
            return Ok(End::Stopped);
        }
        let due = plan.due_ms(seq);
        let mut slice = Slice {
            seq,
            due_ms: due,
            status: SliceStatus::Missed,
            run_id: None,
            started_at: None,
            figure: None,
            note: None,
        };
        if now_ms() > due + grace {
            slice.note = Some(if due + grace < began {
                "hostbench was not running".into()
            } else {
                "the slice before ran into its time".into()
            });
            record(store, soak, slice, None, shown)?;
            continue;
        }
        let label = format!("slice {}/{total}", seq + 1);
        if !slice::wait_until(due, &label) {
            return Ok(End::Stopped);
        }
        slice.started_at = Some(crate::host::now_rfc3339());
        match slice::run(&plan.workload, slicing, duration, &label) {
            slice::Ran::Measured(outcomes) => {
                slice.status = SliceStatus::Done;
                slice.figure = headline(&outcomes);
                if let Some(o) = outcomes.first() {
                    slice.started_at = Some(o.started_at.clone());
                }
                if slice.figure.is_none() {
                    slice.note = Some("the workload reported no figure".into());
                }
                let mut labels = plan.labels.clone();
                labels.insert("soak".into(), soak.id.to_string());
                labels.insert("slice".into(), (seq + 1).to_string());
                let command_line: Vec<String> = std::iter::once("hostbench".to_string())
                    .chain(plan.workload.iter().cloned())
                    .collect();
                let run = NewRun {
                    command: &plan.workload[0],
                    command_line: &command_line,
                    labels: &labels,
                    profile: None,
                    outcomes: &outcomes,
                };
                record(store, soak, slice, Some(&run), shown)?;
            }
            slice::Ran::Interrupted => return Ok(End::Stopped),
            slice::Ran::Refused(message) => {
                if !soak.slices.iter().any(|s| s.status == SliceStatus::Done) {
                    return Ok(End::Refused(message));
                }
                slice.status = SliceStatus::Failed;
                slice.note = Some(message);
                record(store, soak, slice, None, shown)?;
            }
            slice::Ran::Failed(message) => {
                if soak.slices.is_empty() {
                    return Ok(End::FirstFailed(message));
                }
                slice.status = SliceStatus::Failed;
                slice.note = Some(message);
                record(store, soak, slice, None, shown)?;
            }
        }
    }
    Ok(End::Finished)
}

fn record(
    store: &mut dyn Store,
    soak: &mut Soak,
    mut slice: Slice,
    run: Option<&NewRun>,
    shown: &mut dyn FnMut(&Soak, &Slice),
) -> Result<(), StoreError> {
    slice.run_id = store.save_slice(soak.id, &slice, run)?;
    let seq = slice.seq;
    soak.slices.push(slice);
    soak.slices.sort_by_key(|s| s.seq);
    if let Some(recorded) = soak.slices.iter().find(|s| s.seq == seq) {
        shown(soak, recorded);
    }
    Ok(())
}

/// Whether another live process is running this soak.
pub fn running_elsewhere(soak: &Soak) -> Option<u32> {
    let pid = soak.pid.filter(|_| soak.state == SoakState::Running)?;
    if pid == std::process::id() {
        return None;
    }
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let words: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
    words.iter().any(|w| *w == b"soak").then_some(pid)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn personalities_slice_through_their_environment() {
        assert_eq!(
            slicing(&w("sysbench cpu --cpu-max-prime=20000 run")).unwrap(),
            Slicing::Personality
        );
        assert_eq!(slicing(&w("fio seed.fio")).unwrap(), Slicing::Personality);
        assert_eq!(
            slicing(&w("iperf3 -c 10.0.0.2 -P 4")).unwrap(),
            Slicing::Personality
        );
        assert_eq!(
            slicing(&w("cpu --threads 1")).unwrap(),
            Slicing::Option("--time")
        );
        let e = slicing(&w("sysbench cpu")).unwrap_err().to_string();
        assert!(e.contains("`run`"), "{e}");
        let e = slicing(&w("iperf3 -s")).unwrap_err().to_string();
        assert!(e.contains("client"), "{e}");
        assert!(slicing(&w("fio")).is_err());
        assert_eq!(
            slicing(&w("redis-benchmark -q -t set")).unwrap(),
            Slicing::Personality
        );
        for name in ["unixbench -c 1", "dd if=/dev/zero of=x", "netserver"] {
            let e = slicing(&w(name)).unwrap_err().to_string();
            assert!(e.contains("cannot slice"), "{e}");
        }
    }

    #[test]
    fn a_job_file_is_made_absolute() {
        // Tests run in the package's directory, where Cargo.toml is a file.
        let words = workload_words(&w("fio Cargo.toml --minimal nonexistent.fio")).unwrap();
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(words[1], cwd.join("Cargo.toml").display().to_string());
        assert_eq!(words[2..], ["--minimal", "nonexistent.fio"]);
    }

    #[test]
    fn time_options_per_workload() {
        assert_eq!(time_option(&w("cpu --threads 1")).unwrap(), "--time");
        assert_eq!(time_option(&w("disk --tests mixed")).unwrap(), "--time");
        assert_eq!(time_option(&w("redis -c 4")).unwrap(), "--time");
        assert_eq!(time_option(&w("memory --mode block")).unwrap(), "--time");
        assert_eq!(time_option(&w("memory --block-size 1K")).unwrap(), "--time");
        assert_eq!(time_option(&w("redis --dbnum 3")).unwrap(), "--time");
        assert_eq!(time_option(&w("memory")).unwrap(), "--time");
    }

    #[test]
    fn refusals_name_the_input() {
        let e = time_option(&w("fio --rw=randread")).unwrap_err();
        assert!(e.to_string().starts_with("workload 'fio'"), "{e}");
        let e = time_option(&w("cpu --time 5s")).unwrap_err();
        assert!(e.to_string().starts_with("cpu --time"), "{e}");
        let e = time_option(&w("disk --time=5s")).unwrap_err();
        assert!(e.to_string().starts_with("disk --time"), "{e}");
        assert!(time_option(&w("redis --db x.db")).is_err());
        let e = time_option(&w("net TCP_STREAM h -t5")).unwrap_err();
        assert!(e.to_string().starts_with("net --time"), "{e}");
        assert!(time_option(&w("net serve")).is_err());
        assert!(time_option(&w("cpu --json")).is_err());
        assert!(time_option(&w("cpu --db x.db")).is_err());
        assert!(time_option(&[]).is_err());
    }

    #[test]
    fn disk_dir_becomes_absolute() {
        let words = workload_words(&[]).unwrap();
        assert_eq!(&words[..3], &w("disk --tests mixed")[..]);
        assert_eq!(words[3], "--dir");
        assert!(std::path::Path::new(&words[4]).is_absolute());
        let words = workload_words(&w("disk --dir=sub --tests mixed")).unwrap();
        assert!(words[1].starts_with("--dir=/") && words[1].ends_with("/sub"));
    }

    #[test]
    fn schedules() {
        let s = |x: &str| crate::units::parse_duration(x).unwrap();
        assert!(check_schedule(s("1h"), s("24h"), s("10m")).is_ok());
        assert!(check_schedule(s("2s"), s("7s"), s("1s")).is_ok());
        let e = check_schedule(s("1m"), s("1h"), s("2m")).unwrap_err();
        assert!(
            e.to_string().contains("--time 2m00s with --every 1m00s"),
            "{e}"
        );
        assert!(check_schedule(s("1h"), s("0s"), s("1m")).is_err());
        assert!(check_schedule(s("100ms"), s("1h"), s("50ms")).is_err());
        let plan = SoakPlan {
            workload: w("cpu"),
            start_ms: 1000,
            every_ms: 2000,
            for_ms: 7000,
            duration_ms: 1000,
            threshold_pct: 80.0,
            labels: Default::default(),
        };
        // Slots at 0, 2, 4, 6 s: four slices; slice 3 is due at start + 6 s.
        assert_eq!(plan.slice_count(), 4);
        assert_eq!(plan.due_ms(3), 7000);
        assert_eq!(grace_ms(&plan), 1200);
        assert_eq!(utc(1_796_000_000_000), "2026-11-30 00:53:20");
        assert_eq!(utc(1_796_000_000_999), "2026-11-30 00:53:20");
        assert_eq!(utc(-1), "1969-12-31 23:59:59");
    }
}

//! fio's job options: their names and aliases, fio's number and time grammar
//! (including `kb_base`'s swapped meaning of `KiB` and `KB`), and the typed job
//! they build. An option that is not here is an error naming it: a benchmark that
//! silently ignored `rate_iops=100` would report the wrong thing.

pub use super::error::{OptionError, ValueError};
use crate::workload::disk::engine::EngineKind;
use crate::workload::disk::job::{Pattern, SizeDist};
use std::time::Duration;

/// fio's default `percentile_list`.
pub const DEFAULT_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

#[derive(Debug, Clone, PartialEq)]
pub enum JobSize {
    Bytes(u64),
    /// A share of the file or device, in percent.
    Percent(f64),
}

/// One job section after its [global] sections and its own options were applied.
#[derive(Debug, Clone)]
pub struct JobOptions {
    pub name: String,
    pub pattern: Pattern,
    pub rw_text: String,
    pub rwmixread: u32,
    /// Request sizes: reads, writes.
    pub bs: [SizeDist; 2],
    pub size: Option<JobSize>,
    pub io_size: Option<u64>,
    pub filesize: Option<u64>,
    pub filename: Option<String>,
    pub directory: Option<String>,
    pub nrfiles: u32,
    pub numjobs: u32,
    pub iodepth: u32,
    /// Requests per submission call (0: iodepth).
    pub iodepth_batch_submit: u32,
    pub ioengine: EngineKind,
    pub direct: bool,
    pub runtime: Option<Duration>,
    pub time_based: bool,
    pub ramp_time: Duration,
    pub startdelay: Duration,
    pub loops: u32,
    pub norandommap: bool,
    pub randrepeat: bool,
    pub randseed: Option<u64>,
    pub fsync: u32,
    pub fdatasync: u32,
    pub end_fsync: bool,
    pub invalidate: bool,
    pub thread: bool,
    pub stonewall: bool,
    pub new_group: bool,
    pub group_reporting: bool,
    pub kb_base: u64,
    pub percentile_list: Vec<f64>,
    pub clat_percentiles: bool,
    pub lat_percentiles: bool,
    pub description: Option<String>,
    /// The options as given in this job's own section, for JSON's "job options".
    pub given: Vec<(String, String)>,
}

impl Default for JobOptions {
    fn default() -> Self {
        Self {
            name: String::new(),
            pattern: Pattern::Read,
            rw_text: "read".into(),
            rwmixread: 50,
            bs: [SizeDist::Fixed(4096), SizeDist::Fixed(4096)],
            size: None,
            io_size: None,
            filesize: None,
            filename: None,
            directory: None,
            nrfiles: 1,
            numjobs: 1,
            iodepth: 1,
            iodepth_batch_submit: 1,
            // fio's default engine on Linux.
            ioengine: EngineKind::Psync,
            direct: false,
            runtime: None,
            time_based: false,
            ramp_time: Duration::ZERO,
            startdelay: Duration::ZERO,
            loops: 1,
            norandommap: false,
            randrepeat: true,
            randseed: None,
            fsync: 0,
            fdatasync: 0,
            end_fsync: false,
            invalidate: true,
            thread: false,
            stonewall: false,
            new_group: false,
            group_reporting: false,
            kb_base: 1024,
            percentile_list: DEFAULT_PERCENTILES.to_vec(),
            clat_percentiles: true,
            lat_percentiles: false,
            description: None,
            given: Vec::new(),
        }
    }
}

/// Whether an option takes a value, or is a switch that may stand alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Value,
    Switch,
}

type Apply = fn(&mut JobOptions, &str) -> Result<(), ValueError>;

struct Def {
    names: &'static [&'static str],
    kind: Kind,
    apply: Apply,
}

const DEFS: &[Def] = &[
    Def {
        names: &["name"],
        kind: Kind::Value,
        apply: |o, v| {
            o.name = v.to_string();
            Ok(())
        },
    },
    Def {
        names: &["description"],
        kind: Kind::Value,
        apply: |o, v| {
            o.description = Some(v.to_string());
            Ok(())
        },
    },
    Def {
        names: &["rw", "readwrite"],
        kind: Kind::Value,
        apply: |o, v| {
            o.pattern = parse_rw(v)?;
            o.rw_text = v.to_string();
            Ok(())
        },
    },
    Def {
        names: &["rwmixread"],
        kind: Kind::Value,
        apply: |o, v| {
            o.rwmixread = parse_percent(v)?;
            Ok(())
        },
    },
    Def {
        names: &["rwmixwrite"],
        kind: Kind::Value,
        apply: |o, v| {
            // The one given later wins, as in fio.
            o.rwmixread = 100 - parse_percent(v)?;
            Ok(())
        },
    },
    Def {
        names: &["bs", "blocksize"],
        kind: Kind::Value,
        apply: |o, v| {
            let base = o.kb_base;
            o.bs = per_direction(v, |s| {
                parse_size(s, base).and_then(nonzero).map(SizeDist::Fixed)
            })?;
            Ok(())
        },
    },
    Def {
        names: &["bsrange", "blocksize_range"],
        kind: Kind::Value,
        apply: |o, v| {
            let base = o.kb_base;
            o.bs = per_direction(v, |s| {
                let (lo, hi) = s
                    .split_once('-')
                    .ok_or_else(|| ValueError::NotARange { text: s.into() })?;
                let (min, max) = (
                    nonzero(parse_size(lo, base)?)?,
                    nonzero(parse_size(hi, base)?)?,
                );
                if min > max {
                    return Err(ValueError::RangeOrder { text: s.into() });
                }
                Ok(SizeDist::Range { min, max })
            })?;
            Ok(())
        },
    },
    Def {
        names: &["bssplit"],
        kind: Kind::Value,
        apply: |o, v| {
            let base = o.kb_base;
            o.bs = per_direction(v, |s| parse_bssplit(s, base))?;
            Ok(())
        },
    },
    Def {
        names: &["size"],
        kind: Kind::Value,
        apply: |o, v| {
            o.size = Some(match v.trim().strip_suffix('%') {
                Some(p) => JobSize::Percent(
                    p.trim()
                        .parse::<f64>()
                        .ok()
                        .filter(|p| *p > 0.0 && *p <= 100.0)
                        .ok_or_else(|| ValueError::SizePercent { text: v.into() })?,
                ),
                None => JobSize::Bytes(parse_size(v, o.kb_base)?),
            });
            Ok(())
        },
    },
    Def {
        names: &["io_size", "io_limit"],
        kind: Kind::Value,
        apply: |o, v| {
            o.io_size = Some(parse_size(v, o.kb_base)?);
            Ok(())
        },
    },
    Def {
        names: &["filesize"],
        kind: Kind::Value,
        apply: |o, v| {
            o.filesize = Some(parse_size(v, o.kb_base)?);
            Ok(())
        },
    },
    Def {
        names: &["filename"],
        kind: Kind::Value,
        apply: |o, v| {
            o.filename = Some(v.to_string());
            Ok(())
        },
    },
    Def {
        names: &["directory"],
        kind: Kind::Value,
        apply: |o, v| {
            o.directory = Some(v.to_string());
            Ok(())
        },
    },
    Def {
        names: &["nrfiles", "nr_files"],
        kind: Kind::Value,
        apply: |o, v| {
            o.nrfiles = parse_count(v, 1, 4096)?;
            Ok(())
        },
    },
    Def {
        names: &["numjobs"],
        kind: Kind::Value,
        apply: |o, v| {
            o.numjobs = parse_count(v, 1, crate::workload::MAX_THREADS as u64)?;
            Ok(())
        },
    },
    Def {
        names: &["iodepth"],
        kind: Kind::Value,
        apply: |o, v| {
            o.iodepth = parse_count(v, 1, 65536)?;
            Ok(())
        },
    },
    Def {
        names: &["iodepth_batch_submit", "iodepth_batch"],
        kind: Kind::Value,
        apply: |o, v| {
            o.iodepth_batch_submit = parse_count(v, 0, 65536)?;
            Ok(())
        },
    },
    Def {
        names: &["ioengine"],
        kind: Kind::Value,
        apply: |o, v| {
            o.ioengine = match v.trim() {
                "io_uring" | "libaio" | "psync" | "sync" => EngineKind::parse(v.trim()).unwrap(),
                // pvsync/pvsync2/vsync are pread/pwrite family variants.
                "pvsync" | "pvsync2" => EngineKind::Psync,
                "vsync" => EngineKind::Sync,
                other => {
                    return Err(ValueError::Engine {
                        engine: other.into(),
                    });
                }
            };
            Ok(())
        },
    },
    Def {
        names: &["direct"],
        kind: Kind::Switch,
        apply: |o, v| {
            o.direct = parse_bool(v)?;
            Ok(())
        },
    },
    Def {
        names: &["buffered"],
        kind: Kind::Switch,
        apply: |o, v| {
            o.direct = !parse_bool(v)?;
            Ok(())
        },
    },
    Def {
        names: &["runtime", "timeout"],
        kind: Kind::Value,
        apply: |o, v| {
            let d = parse_time(v)?;
            o.runtime = (!d.is_zero()).then_some(d);
            Ok(())
        },
    },
    Def {
        names: &["time_based"],
        kind: Kind::Switch,
        apply: |o, v| {
            o.time_based = parse_bool(v)?;
            Ok(())
        },
    },
    Def {
        names: &["ramp_time"],
        kind: Kind::Value,
        apply: |o, v| {
            o.ramp_time = parse_time(v)?;
            Ok(())
        },
    },
    Def {
        names: &["startdelay"],
        kind: Kind::Value,
        apply: |o, v| {
            o.startdelay = parse_time(v)?;
            Ok(())
        },
    },
    Def {
        names: &["loops"],
        kind: Kind::Value,
        apply: |o, v| {
            o.loops = parse_count(v, 1, 1 << 20)?;
            Ok(())
        },
    },
    Def {
        names: &["norandommap"],
        kind: Kind::Switch,
        apply: |o, v| {
            o.norandommap = parse_bool(v)?;
            Ok(())
        },
    },
    Def {
        names: &["randrepeat"],
        kind: Kind::Switch,
        apply: |o, v| {
            o.randrepeat = parse_bool(v)?;
            Ok(())
        },
    },
    Def {
        names: &["randseed"],
        kind: Kind::Value,
        apply: |o, v| {
            o.randseed = Some(
                v.trim()
                    .parse()
                    .map_err(|_| ValueError::Seed { text: v.into() })?,
            );
            Ok(())
        },
    },
    Def {
        names: &["fsync"],
        kind: Kind::Value,
        apply: |o, v| {
            o.fsync = parse_count(v, 0, u32::MAX as u64)?;
            Ok(())
        },
    },
    Def {
        names: &["fdatasync"],
        kind: Kind::Value,
        apply: |o, v| {
            o.fdatasync = parse_count(v, 0, u32::MAX as u64)?;
            Ok(())
        },
    },
    Def {
        names: &["end_fsync"],
        kind: Kind::Switch,
        apply: |o, v| {
            o.end_fsync = parse_bool(v)?;
            Ok(())
        },
    },
    Def {
        names: &["invalidate"],
        kind: Kind::Switch,
        apply: |o, v| {
            o.invalidate = parse_bool(v)?;
            Ok(())
        },
    },
    Def {
        names: &["thread"],
        kind: Kind::Switch,
        apply: |o, v| {
            o.thread = parse_bool(v)?;
            Ok(())
        },
    },
    Def {
        names: &["stonewall", "wait_for_previous"],
        kind: Kind::Switch,
        apply: |o, v| {
            o.stonewall = parse_bool(v)?;
            Ok(())
        },
    },
    Def {
        names: &["new_group"],
        kind: Kind::Switch,
        apply: |o, v| {
            o.new_group = parse_bool(v)?;
            Ok(())
        },
    },
    Def {
        names: &["group_reporting"],
        kind: Kind::Switch,
        apply: |o, v| {
            o.group_reporting = parse_bool(v)?;
            Ok(())
        },
    },
    Def {
        names: &["kb_base"],
        kind: Kind::Value,
        apply: |o, v| {
            o.kb_base = match v.trim() {
                "1024" => 1024,
                "1000" => 1000,
                _ => return Err(ValueError::KbBase { text: v.into() }),
            };
            Ok(())
        },
    },
    Def {
        names: &["percentile_list"],
        kind: Kind::Value,
        apply: |o, v| {
            let list: Result<Vec<f64>, ValueError> = v
                .split(':')
                .map(|p| {
                    p.trim()
                        .parse::<f64>()
                        .ok()
                        .filter(|p| (0.0..=100.0).contains(p))
                        .ok_or_else(|| ValueError::Percentile { text: p.into() })
                })
                .collect();
            let list = list?;
            if list.is_empty() || list.len() > 20 {
                return Err(ValueError::PercentileCount { count: list.len() });
            }
            o.percentile_list = list;
            Ok(())
        },
    },
    Def {
        names: &["clat_percentiles"],
        kind: Kind::Switch,
        apply: |o, v| {
            o.clat_percentiles = parse_bool(v)?;
            Ok(())
        },
    },
    Def {
        names: &["lat_percentiles"],
        kind: Kind::Switch,
        apply: |o, v| {
            o.lat_percentiles = parse_bool(v)?;
            Ok(())
        },
    },
];

/// The job options `--help` lists, from the table itself: every option it runs, each
/// with its aliases (`rw/readwrite`), wrapped to `width` columns under a two-space
/// indent. A new option appears in the help by being in the table.
pub fn help_list(width: usize) -> String {
    let mut out = String::new();
    let mut line = String::from(" ");
    for d in DEFS {
        let word = d.names.join("/");
        if line.len() + 1 + word.len() > width && !line.trim().is_empty() {
            out += &line;
            out.push('\n');
            line = String::from(" ");
        }
        line.push(' ');
        line += &word;
    }
    if !line.trim().is_empty() {
        out += &line;
        out.push('\n');
    }
    out
}

/// How an option is written: `Kind` and canonical name, if hostbench knows it.
pub fn lookup(name: &str) -> Option<(Kind, &'static str)> {
    DEFS.iter()
        .find(|d| d.names.contains(&name))
        .map(|d| (d.kind, d.names[0]))
}

/// Applies `name=value` (value `None` for a bare switch) to a job.
pub fn apply(o: &mut JobOptions, name: &str, value: Option<&str>) -> Result<(), OptionError> {
    let def = DEFS
        .iter()
        .find(|d| d.names.contains(&name))
        .ok_or_else(|| OptionError::Unknown {
            option: name.into(),
        })?;
    let v = match (value, def.kind) {
        (Some(v), _) => v,
        (None, Kind::Switch) => "1",
        (None, Kind::Value) => {
            return Err(OptionError::NoValue {
                option: name.into(),
            });
        }
    };
    (def.apply)(o, v).map_err(|problem| OptionError::Invalid {
        option: name.into(),
        value: v.into(),
        problem,
    })
}

fn parse_rw(v: &str) -> Result<Pattern, ValueError> {
    let v = v.trim();
    if v.contains(':') {
        return Err(ValueError::Sequencer { text: v.into() });
    }
    Ok(match v {
        "read" => Pattern::Read,
        "write" => Pattern::Write,
        "randread" => Pattern::RandRead,
        "randwrite" => Pattern::RandWrite,
        "rw" | "readwrite" => Pattern::ReadWrite,
        "randrw" => Pattern::RandRw,
        "trim" | "randtrim" | "trimwrite" | "randtrimwrite" => {
            return Err(ValueError::Trim { text: v.into() });
        }
        _ => return Err(ValueError::Pattern { text: v.into() }),
    })
}

fn parse_percent(v: &str) -> Result<u32, ValueError> {
    v.trim()
        .parse::<u32>()
        .ok()
        .filter(|p| *p <= 100)
        .ok_or_else(|| ValueError::Percent { text: v.into() })
}

fn parse_count(v: &str, min: u64, max: u64) -> Result<u32, ValueError> {
    parse_size(v, 1024)
        .ok()
        .filter(|n| (min..=max).contains(n))
        .map(|n| n as u32)
        .ok_or_else(|| ValueError::Count {
            text: v.into(),
            min,
            max,
        })
}

fn parse_bool(v: &str) -> Result<bool, ValueError> {
    match v.trim() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(ValueError::Switch { text: v.into() }),
    }
}

fn nonzero(n: u64) -> Result<usize, ValueError> {
    if n == 0 {
        Err(ValueError::ZeroBlock)
    } else if n > 1 << 30 {
        Err(ValueError::BlockTooLarge { bytes: n })
    } else {
        Ok(n as usize)
    }
}

/// `a` (both), or `r,w[,t]` with an empty part keeping the read one.
fn per_direction(
    v: &str,
    parse: impl Fn(&str) -> Result<SizeDist, ValueError>,
) -> Result<[SizeDist; 2], ValueError> {
    let parts: Vec<&str> = v.split(',').collect();
    if parts.len() > 3 {
        return Err(ValueError::Directions { text: v.into() });
    }
    let read = parse(parts[0])?;
    let write = match parts.get(1).map(|s| s.trim()) {
        Some("") | None => read.clone(),
        Some(w) => parse(w)?,
    };
    Ok([read, write])
}

/// `4k/10:64k/50:32k/40`; a blank share splits what is left evenly.
fn parse_bssplit(s: &str, base: u64) -> Result<SizeDist, ValueError> {
    let mut entries: Vec<(usize, Option<u32>)> = Vec::new();
    for part in s.split(':') {
        let (size, pct) = match part.split_once('/') {
            Some((size, pct)) if !pct.trim().is_empty() => (size, Some(parse_percent(pct)?)),
            Some((size, _)) => (size, None),
            None => (part, None),
        };
        entries.push((nonzero(parse_size(size, base)?)?, pct));
    }
    if entries.len() > 64 {
        return Err(ValueError::SplitSizes {
            count: entries.len(),
        });
    }
    let given: u32 = entries.iter().filter_map(|e| e.1).sum();
    if given > 100 {
        return Err(ValueError::SharesOver {
            text: s.into(),
            total: given,
        });
    }
    let blanks = entries.iter().filter(|e| e.1.is_none()).count() as u32;
    let mut left = 100 - given;
    let mut out = Vec::new();
    let mut blank_seen = 0;
    for (size, pct) in entries {
        let pct = pct.unwrap_or_else(|| {
            blank_seen += 1;
            let share = if blank_seen == blanks {
                left
            } else {
                (100 - given) / blanks
            };
            left -= share;
            share
        });
        out.push((size, pct));
    }
    let total: u32 = out.iter().map(|e| e.1).sum();
    if total != 100 {
        return Err(ValueError::SharesNot100 {
            text: s.into(),
            total,
        });
    }
    Ok(SizeDist::Split(out))
}

/// fio's sizes: a number with an optional `k m g t p` (optionally `b`/`i`) suffix.
/// With `kb_base=1024` the short and `KB` forms are powers of 1024 and the IEC
/// forms (`KiB`) powers of 1000 — fio's compatibility rule; `kb_base=1000` swaps
/// them. A `0x` prefix is hexadecimal.
pub fn parse_size(v: &str, kb_base: u64) -> Result<u64, ValueError> {
    let t = v.trim();
    let bad = || ValueError::Size { text: v.into() };
    if t.is_empty() {
        return Err(bad());
    }
    if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return u64::from_str_radix(hex, 16).map_err(|_| bad());
    }
    let split = t
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    let suffix = suffix.trim().to_ascii_lowercase();
    let (letter, rest) = match suffix.chars().next() {
        Some(c) => (Some(c), &suffix[c.len_utf8()..]),
        None => (None, ""),
    };
    let power = match letter {
        None => 0,
        Some('b') if rest.is_empty() => 0,
        Some('k') => 1,
        Some('m') => 2,
        Some('g') => 3,
        Some('t') => 4,
        Some('p') => 5,
        _ => return Err(bad()),
    };
    let unit: u64 = match rest {
        // The three-letter IEC form means the other base (fio's rule).
        "ib" => {
            if kb_base == 1024 {
                1000
            } else {
                1024
            }
        }
        "" | "b" | "i" => kb_base,
        _ => return Err(bad()),
    };
    let mult = unit.checked_pow(power).ok_or_else(bad)?;
    if num.contains('.') {
        let f: f64 = num.parse().map_err(|_| bad())?;
        let bytes = f * mult as f64;
        if !bytes.is_finite() || bytes >= u64::MAX as f64 {
            return Err(bad());
        }
        return Ok(bytes as u64);
    }
    let n: u64 = num.parse().map_err(|_| bad())?;
    n.checked_mul(mult)
        .ok_or_else(|| ValueError::SizeTooLarge { text: v.into() })
}

/// fio's times: seconds unless suffixed with d, h, m, s, ms/msec, us/usec.
pub fn parse_time(v: &str) -> Result<Duration, ValueError> {
    let t = v.trim().to_ascii_lowercase();
    let split = t
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    let n: f64 = num
        .parse()
        .ok()
        .filter(|n: &f64| n.is_finite() && *n >= 0.0)
        .ok_or_else(|| ValueError::Time { text: v.into() })?;
    let secs = match suffix.trim() {
        "" | "s" | "sec" => n,
        "ms" | "msec" => n / 1e3,
        "us" | "usec" => n / 1e6,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        "d" => n * 86400.0,
        _ => return Err(ValueError::Time { text: v.into() }),
    };
    if secs > 1e9 {
        return Err(ValueError::TimeTooLong { text: v.into() });
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_fios_kb_base_rule() {
        // Measured with fio 3.33 (reference/disk.md 1.3).
        assert_eq!(parse_size("1m", 1024), Ok(1048576));
        assert_eq!(parse_size("1mi", 1024), Ok(1048576));
        assert_eq!(parse_size("1MiB", 1024), Ok(1000000));
        assert_eq!(parse_size("1MB", 1024), Ok(1048576));
        assert_eq!(parse_size("1m", 1000), Ok(1000000));
        assert_eq!(parse_size("1MiB", 1000), Ok(1048576));
        assert_eq!(parse_size("4k", 1024), Ok(4096));
        assert_eq!(parse_size("512", 1024), Ok(512));
        assert_eq!(parse_size("0x1000", 1024), Ok(4096));
        assert_eq!(parse_size("1.5k", 1024), Ok(1536));
        for bad in ["", "k", "4q", "4kk", "-1", "99999999999999999999999"] {
            assert_eq!(
                parse_size(bad, 1024),
                Err(ValueError::Size { text: bad.into() }),
                "{bad}"
            );
        }
        assert_eq!(
            parse_size("99999999p", 1024),
            Err(ValueError::SizeTooLarge {
                text: "99999999p".into()
            })
        );
    }

    #[test]
    fn times_default_to_seconds() {
        assert_eq!(parse_time("60"), Ok(Duration::from_secs(60)));
        assert_eq!(parse_time("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_time("2m"), Ok(Duration::from_secs(120)));
        assert!(parse_time("soon").is_err());
        assert!(parse_time("-3").is_err());
    }

    #[test]
    fn block_sizes_per_direction_and_splits() {
        let mut o = JobOptions::default();
        apply(&mut o, "bs", Some("8k,32k")).unwrap();
        assert_eq!(o.bs, [SizeDist::Fixed(8192), SizeDist::Fixed(32768)]);
        apply(&mut o, "bssplit", Some("4k/10:64k/50:32k/40")).unwrap();
        assert_eq!(
            o.bs[0],
            SizeDist::Split(vec![(4096, 10), (65536, 50), (32768, 40)])
        );
        apply(&mut o, "bssplit", Some("4k/20:8k:16k")).unwrap();
        assert_eq!(
            o.bs[1],
            SizeDist::Split(vec![(4096, 20), (8192, 40), (16384, 40)])
        );
        apply(&mut o, "bsrange", Some("1k-16k")).unwrap();
        assert_eq!(
            o.bs[0],
            SizeDist::Range {
                min: 1024,
                max: 16384
            }
        );
        let problem = |o: &mut JobOptions, name: &str, v: &str| match apply(o, name, Some(v)) {
            Err(OptionError::Invalid { problem, .. }) => problem,
            other => panic!("{name}={v}: {other:?}"),
        };
        assert_eq!(
            problem(&mut o, "bssplit", "4k/80:8k/40"),
            ValueError::SharesOver {
                text: "4k/80:8k/40".into(),
                total: 120
            }
        );
        assert_eq!(
            problem(&mut o, "bsrange", "16k-1k"),
            ValueError::RangeOrder {
                text: "16k-1k".into()
            }
        );
        assert_eq!(problem(&mut o, "bs", "0"), ValueError::ZeroBlock);
    }

    #[test]
    fn unknown_options_are_named() {
        let mut o = JobOptions::default();
        let e = apply(&mut o, "rate_iops", Some("100")).unwrap_err();
        assert_eq!(
            e,
            OptionError::Unknown {
                option: "rate_iops".into()
            }
        );
        assert!(
            e.to_string()
                .starts_with("option 'rate_iops' is not supported"),
            "{e}"
        );
        let e = apply(&mut o, "bs", None).unwrap_err();
        assert_eq!(e.to_string(), "option 'bs' needs a value: bs=...");
        let e = apply(&mut o, "iodepth", Some("0")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "iodepth=0: '0' is not a number from 1 to 65536"
        );
        assert!(matches!(
            e,
            OptionError::Invalid {
                problem: ValueError::Count {
                    min: 1,
                    max: 65536,
                    ..
                },
                ..
            }
        ));
        apply(&mut o, "time_based", None).unwrap();
        assert!(o.time_based);
    }

    #[test]
    fn later_mix_wins() {
        let mut o = JobOptions::default();
        apply(&mut o, "rwmixread", Some("70")).unwrap();
        apply(&mut o, "rwmixwrite", Some("40")).unwrap();
        assert_eq!(o.rwmixread, 60);
    }

    #[test]
    fn arbitrary_values_never_panic() {
        let mut rng = crate::measure::rng::Xoroshiro128Plus::seeded(7);
        let alphabet = b"0123456789.kmgtpKMGTPbBiIx-:/%, \t";
        let names: Vec<&str> = DEFS.iter().flat_map(|d| d.names.iter().copied()).collect();
        for _ in 0..50_000 {
            let len = rng.below(12);
            let v: String = (0..len)
                .map(|_| alphabet[rng.below(alphabet.len())] as char)
                .collect();
            let _ = parse_size(&v, 1024);
            let _ = parse_size(&v, 1000);
            let _ = parse_time(&v);
            let mut o = JobOptions::default();
            let _ = apply(&mut o, names[rng.below(names.len())], Some(&v));
        }
    }

    #[test]
    fn the_help_lists_every_option_of_the_table() {
        let help = help_list(80);
        for d in DEFS {
            assert!(help.contains(&d.names.join("/")), "{} missing", d.names[0]);
        }
        assert!(help.lines().all(|l| l.len() <= 80), "{help}");
    }
}

//! A dd copy as a measurement: what was copied, between which kinds of file, with
//! which flags, and how fast. The dd personality runs the copy and prints GNU dd's
//! lines; this is the one conversion of its raw result to an `Outcome` (workload
//! `dd`).
//!
//! Params are dd's words for what the copy measured: `bs` (or `ibs` and `obs`),
//! `count` when given (with `bs` it fixes how much is written, which decides how much
//! of a buffered write the page cache absorbs and how far one final `fdatasync` is
//! amortised), `iflag`/`oflag` (`direct`, `dsync`, `sync`), `conv` (`fdatasync`,
//! `fsync`, `notrunc`: the conversions that change what the disk does), and `if`/`of`
//! as kinds, not paths: `/dev/zero` to `file` is a write test, `file` to `/dev/null`
//! a read test, wherever the file is.

use crate::host::HostInfo;
use crate::model::{Metric, Outcome, Params, Unit};
use std::os::fd::RawFd;
use std::time::Duration;

/// What one end of a copy is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// A regular file.
    File,
    /// A block device (a disk read as a whole).
    BlockDevice,
    /// A character device other than a terminal, by its path: `/dev/zero`,
    /// `/dev/null`, `/dev/urandom`.
    Device(String),
    Terminal,
    /// A pipe, socket or anything else.
    Pipe,
}

impl End {
    /// What `fd` is open on.
    pub fn of_fd(fd: RawFd) -> End {
        // SAFETY: fstat fills a plain struct we own.
        let mode = unsafe {
            let mut st: libc::stat = std::mem::zeroed();
            if libc::fstat(fd, &mut st) != 0 {
                return End::Pipe;
            }
            st.st_mode & libc::S_IFMT
        };
        match mode {
            libc::S_IFREG => End::File,
            libc::S_IFBLK => End::BlockDevice,
            libc::S_IFCHR => {
                let name = std::fs::read_link(format!("/proc/self/fd/{fd}"))
                    .map(|p| p.display().to_string())
                    .unwrap_or_default();
                if name.starts_with("/dev/pts/") || name.starts_with("/dev/tty") {
                    End::Terminal
                } else if name.is_empty() {
                    End::Device("a character device".into())
                } else {
                    End::Device(name)
                }
            }
            _ => End::Pipe,
        }
    }

    /// The param's value.
    pub fn word(&self) -> &str {
        match self {
            End::File => "file",
            End::BlockDevice => "block device",
            End::Device(path) => path,
            End::Terminal => "terminal",
            End::Pipe => "pipe",
        }
    }

    fn is_storage(&self) -> bool {
        matches!(self, End::File | End::BlockDevice)
    }
}

/// What a copy ran, in dd's terms.
#[derive(Debug, Clone, PartialEq)]
pub struct CopySpec {
    pub input: End,
    pub output: End,
    pub ibs: usize,
    pub obs: usize,
    /// `bs=` was given (one size for both).
    pub bs: bool,
    pub count: Option<u64>,
    /// Flags given, in dd's words (`direct`, `dsync`, `sync`).
    pub iflag: Vec<&'static str>,
    pub oflag: Vec<&'static str>,
    /// Conversions given (`fdatasync`, `fsync`, `notrunc`, `sync`).
    pub conv: Vec<&'static str>,
}

/// What a copy did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Copied {
    pub bytes: u64,
    pub elapsed: Duration,
    pub interrupted: bool,
}

/// A size as dd's operands write it: `64K`, `1M`, `1G`, `4096`.
fn dd_size(n: usize) -> String {
    let n = n as u64;
    for (shift, suffix) in [(40, "T"), (30, "G"), (20, "M"), (10, "K")] {
        if n >= 1 << shift && n.is_multiple_of(1 << shift) {
            return format!("{}{suffix}", n >> shift);
        }
    }
    n.to_string()
}

impl CopySpec {
    /// What identifies the measurement (see the module's text).
    pub fn params(&self) -> Params {
        let mut p = Params::new();
        let mut set = |k: &str, v: String| {
            p.insert(k.to_string(), v);
        };
        if self.bs {
            set("bs", dd_size(self.ibs));
        } else {
            set("ibs", dd_size(self.ibs));
            set("obs", dd_size(self.obs));
        }
        if let Some(c) = self.count {
            set("count", c.to_string());
        }
        let words = |given: &[&'static str], order: &[&str]| -> String {
            order
                .iter()
                .filter(|w| given.contains(w))
                .copied()
                .collect::<Vec<_>>()
                .join(",")
        };
        for (key, given) in [("iflag", &self.iflag), ("oflag", &self.oflag)] {
            let w = words(given, &["direct", "dsync", "sync"]);
            if !w.is_empty() {
                set(key, w);
            }
        }
        let conv = words(&self.conv, &["fdatasync", "fsync", "notrunc"]);
        if !conv.is_empty() {
            set("conv", conv);
        }
        set("if", self.input.word().to_string());
        set("of", self.output.word().to_string());
        p
    }

    /// `write` (from a device such as /dev/zero to storage), `read` (from storage to
    /// a sink such as /dev/null), or `copy`.
    pub fn kind(&self) -> &'static str {
        match (self.input.is_storage(), self.output.is_storage()) {
            (false, true) => "write",
            (true, false) => "read",
            _ => "copy",
        }
    }

    /// Whether the copy's writes reach the disk before it ends.
    fn writes_durably(&self) -> bool {
        self.conv.iter().any(|c| *c == "fdatasync" || *c == "fsync")
            || self
                .oflag
                .iter()
                .any(|f| matches!(*f, "direct" | "dsync" | "sync"))
    }
}

/// The copy's outcome: its rate (`bytes_per_sec`) and amount (`bytes_transferred`).
pub fn outcome(spec: &CopySpec, c: &Copied) -> Outcome {
    let kind = spec.kind();
    let json = serde_json::json!({
        "name": kind,
        "if": spec.input.word(),
        "of": spec.output.word(),
        "ibs": spec.ibs,
        "obs": spec.obs,
        "count": spec.count,
        "iflag": spec.iflag,
        "oflag": spec.oflag,
        "conv": spec.conv,
    });
    let mut o = Outcome::new("dd", json, HostInfo::detect());
    o.params = spec.params();
    let secs = c.elapsed.as_secs_f64();
    o.elapsed_s = secs;
    o.interrupted = c.interrupted;
    if secs > 0.0 {
        o.push(Metric::new(
            "bytes_per_sec",
            c.bytes as f64 / secs,
            Unit::BytesPerSec,
        ));
    }
    o.push(Metric::new(
        "bytes_transferred",
        c.bytes as f64,
        Unit::Bytes,
    ));
    if spec.output == End::File && !spec.writes_durably() {
        o.note("buffered writes without conv=fdatasync (or oflag=direct/dsync): the rate is the page cache's, not the disk's");
    }
    if spec.input.is_storage() && !spec.iflag.contains(&"direct") {
        o.note("buffered reads: a file read soon after it was written comes from the page cache, at memory speed");
    }
    if c.interrupted {
        o.note("interrupted: the copy was stopped early; the rate covers the part that ran");
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(args: (&str, &str)) -> CopySpec {
        let end = |w: &str| match w {
            "file" => End::File,
            other => End::Device(other.into()),
        };
        CopySpec {
            input: end(args.0),
            output: end(args.1),
            ibs: 64 << 10,
            obs: 64 << 10,
            bs: true,
            count: Some(16 << 10),
            iflag: vec![],
            oflag: vec![],
            conv: vec!["fdatasync"],
        }
    }

    #[test]
    fn a_write_test_in_dds_words() {
        // dd if=/dev/zero of=test bs=64k count=16k conv=fdatasync
        let s = spec(("/dev/zero", "file"));
        let c = Copied {
            bytes: 1 << 30,
            elapsed: Duration::from_secs(4),
            interrupted: false,
        };
        let o = outcome(&s, &c);
        assert_eq!(o.workload, "dd");
        let p: Vec<(&str, &str)> = o
            .params
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            p,
            [
                ("bs", "64K"),
                ("conv", "fdatasync"),
                ("count", "16384"),
                ("if", "/dev/zero"),
                ("of", "file")
            ]
        );
        let rate = o.metric("bytes_per_sec", None).unwrap();
        assert_eq!(
            (rate.value, rate.unit),
            ((1u64 << 28) as f64, Unit::BytesPerSec)
        );
        assert_eq!(rate.better, crate::model::Better::Higher);
        let total = o.metric("bytes_transferred", None).unwrap();
        assert_eq!(
            (total.value, total.unit),
            ((1u64 << 30) as f64, Unit::Bytes)
        );
        assert_eq!(o.spec["name"], "write");
        assert!(o.notes.is_empty(), "{:?}", o.notes);
    }

    #[test]
    fn flags_and_kinds_name_the_measurement() {
        // dd if=/dev/zero of=/tmp/test1.img bs=1G count=1 oflag=dsync
        let mut s = spec(("/dev/zero", "file"));
        (s.ibs, s.obs, s.count, s.conv) = (1 << 30, 1 << 30, Some(1), vec![]);
        s.oflag = vec!["sync", "dsync"];
        let p = s.params();
        assert_eq!(p["bs"], "1G");
        assert_eq!(p["oflag"], "dsync,sync");
        assert!(!p.contains_key("conv") && !p.contains_key("iflag"));
        // dd of=/dev/null if=1.img bs=4096: a read test, without a count.
        let mut r = spec(("file", "/dev/null"));
        (r.ibs, r.obs, r.count, r.conv) = (4096, 4096, None, vec![]);
        assert_eq!(r.kind(), "read");
        let p = r.params();
        assert_eq!((p["bs"].as_str(), p["if"].as_str()), ("4K", "file"));
        assert!(!p.contains_key("count"));
        let o = outcome(
            &r,
            &Copied {
                bytes: 4096,
                elapsed: Duration::from_millis(1),
                interrupted: false,
            },
        );
        assert!(o.notes[0].contains("page cache"), "{:?}", o.notes);
        // ibs and obs apart; conv=sync pads blocks and is no param.
        r.bs = false;
        r.obs = 512;
        r.conv = vec!["sync", "notrunc"];
        let p = r.params();
        assert_eq!((p["ibs"].as_str(), p["obs"].as_str()), ("4K", "512"));
        assert_eq!(p["conv"], "notrunc");
        assert!(!p.contains_key("bs"));
    }

    #[test]
    fn unsynced_writes_are_flagged() {
        let mut s = spec(("/dev/zero", "file"));
        s.conv.clear();
        let o = outcome(
            &s,
            &Copied {
                bytes: 1,
                elapsed: Duration::from_millis(1),
                interrupted: true,
            },
        );
        assert!(o.notes.iter().any(|n| n.contains("page cache")));
        assert!(o.interrupted);
    }
}

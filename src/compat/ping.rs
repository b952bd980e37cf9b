//! The `ping` personality: iputils' command line (`-c -i -W -s -q -4 -6 -w`) and its
//! output, over `workload::net::ping` (ICMP datagram socket, else raw; `--tcp PORT` is
//! hostbench's own addition for hosts where ICMP is not allowed, and `--json` prints
//! the native result model). `hostbench ping` is this personality: iputils' grammar is
//! the native one for ping.
//!
//! Each run is kept as one `ping` outcome (`workload::net::ping::to_outcome`). As a
//! soak slice it runs for the slice's length, as `-w SLICE` would, and without `-c`:
//! a count would end the slice early and leave the rest of it unmeasured.

use crate::workload::net::Family;
use crate::workload::net::ping::{self, PingResult, PingSpec, Reply};
use crate::workload::observe::{Observer, Snapshot};
use std::net::IpAddr;
use std::process::ExitCode;
use std::time::Duration;
use thiserror::Error;

const USAGE: &str = "\nUsage\n  ping [options] <destination>\n\nOptions:\n  -c <count>         stop after <count> replies\n  -i <interval>      seconds between sending each packet\n  -q                 quiet output\n  -s <size>          use <size> as number of data bytes to be sent\n  -W <timeout>       time to wait for response\n  -w <deadline>      reply wait <deadline> in seconds\n  -4                 use IPv4\n  -6                 use IPv6\n  --tcp <port>       time TCP connects to <port> instead of ICMP (hostbench)\n  --json             print hostbench's result model as JSON\n";

pub(super) struct Options {
    spec: PingSpec,
    quiet: bool,
    json: bool,
}

/// A command line iputils' ping refuses (or `-h`); Display is iputils' text, usage
/// included where it prints it. Printed on stderr, exit 2.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ArgError {
    #[error("ping: option requires an argument -- 'tcp'")]
    MissingTcpPort,
    #[error("ping: option requires an argument -- '{option}'{USAGE}")]
    MissingValue { option: char },
    /// A value that does not parse as what the option takes.
    #[error("ping: invalid {what}: '{value}'")]
    Invalid { what: &'static str, value: String },
    #[error("ping: invalid argument: '{value}': out of range: 1 <= value <= 9223372036854775807")]
    CountRange { value: String },
    #[error("ping: cannot flood, minimal interval allowed is 2ms")]
    Flood { interval: Duration },
    #[error("ping: invalid argument: '{value}': out of range: 0 <= value <= 65507")]
    SizeRange { value: String },
    /// `-h`: iputils prints its usage on stderr and exits 2, as for an error.
    #[error("{}", USAGE.trim_start())]
    Help,
    #[error("ping: invalid option -- '{option}'{USAGE}")]
    UnknownOption { option: char },
    #[error("ping: unexpected argument '{arg}'{USAGE}")]
    UnexpectedArgument { arg: String },
    #[error("ping: usage error: Destination address required{USAGE}")]
    NoDestination,
}

pub(super) fn parse(args: &[String]) -> Result<Options, ArgError> {
    let mut spec = PingSpec {
        host: String::new(),
        family: Family::Any,
        count: None,
        interval: Duration::from_secs(1),
        timeout: Duration::from_secs(10),
        size: 56,
        tcp_port: None,
    };
    let mut quiet = false;
    let mut json = false;
    let mut deadline = None;
    let mut host = None;
    let mut i = 0;
    let bad = |what: &'static str, v: &str| ArgError::Invalid {
        what,
        value: v.into(),
    };
    while i < args.len() {
        let a = args[i].as_str();
        if a == "--json" {
            json = true;
        } else if a == "--tcp" {
            i += 1;
            let v = args.get(i).ok_or(ArgError::MissingTcpPort)?;
            spec.tcp_port = Some(v.parse().map_err(|_| bad("port", v))?);
        } else if let Some(flags) = a.strip_prefix('-').filter(|f| !f.is_empty()) {
            let c = flags.chars().next().unwrap_or(' ');
            let takes = "ciWswt".contains(c);
            let value = if takes {
                if flags.len() > 1 {
                    flags[1..].to_string()
                } else {
                    i += 1;
                    args.get(i)
                        .cloned()
                        .ok_or(ArgError::MissingValue { option: c })?
                }
            } else {
                String::new()
            };
            let secs = |v: &str, what: &'static str| -> Result<Duration, ArgError> {
                v.parse::<f64>()
                    .ok()
                    .filter(|s| s.is_finite() && *s >= 0.0 && *s < 1e9)
                    .map(Duration::from_secs_f64)
                    .ok_or_else(|| bad(what, v))
            };
            match c {
                'c' => {
                    let n: u64 = value.parse().map_err(|_| bad("argument", &value))?;
                    if n == 0 {
                        return Err(ArgError::CountRange { value });
                    }
                    spec.count = Some(n);
                }
                'i' => {
                    spec.interval = secs(&value, "interval")?;
                    if spec.interval < Duration::from_millis(2) {
                        return Err(ArgError::Flood {
                            interval: spec.interval,
                        });
                    }
                }
                'W' => spec.timeout = secs(&value, "timeout")?,
                'w' => deadline = Some(secs(&value, "deadline")?),
                's' => {
                    spec.size = value.parse().map_err(|_| bad("packet size", &value))?;
                    if spec.size > 65507 {
                        return Err(ArgError::SizeRange { value });
                    }
                }
                't' => {}
                'q' => quiet = true,
                '4' => spec.family = Family::V4,
                '6' => spec.family = Family::V6,
                'h' => return Err(ArgError::Help),
                _ => return Err(ArgError::UnknownOption { option: c }),
            }
        } else if host.is_none() {
            host = Some(a.to_string());
        } else {
            return Err(ArgError::UnexpectedArgument { arg: a.into() });
        }
        i += 1;
    }
    spec.host = host.ok_or(ArgError::NoDestination)?;
    if let Some(d) = deadline {
        apply_deadline(&mut spec, d);
    }
    Ok(Options { spec, quiet, json })
}

/// -w: stop after the deadline; expressed as a probe count at the interval.
fn apply_deadline(spec: &mut PingSpec, d: Duration) {
    let n = (d.as_secs_f64() / spec.interval.as_secs_f64().max(1e-3))
        .ceil()
        .max(1.0) as u64;
    spec.count = Some(spec.count.map_or(n, |c| c.min(n)));
}

/// Prints a line per reply, as iputils does, unless quiet.
struct Replies<'a> {
    spec: &'a PingSpec,
    ip: IpAddr,
    quiet: bool,
}

impl Observer for Replies<'_> {
    fn snapshot(&self, s: &Snapshot<'_>) {
        if let Snapshot::Ping(r) = s
            && !self.quiet
        {
            println!("{}", text::reply(self.spec, self.ip, r));
        }
    }
}

pub fn main(args: &[String], record: &mut super::Record) -> ExitCode {
    let mut o = match parse(args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{}", e.to_string().trim_end());
            return ExitCode::from(2);
        }
    };
    if let Some(slice) = record.slice {
        o.spec.count = None;
        apply_deadline(&mut o.spec, slice);
    }
    let ip = match ping::target(&o.spec) {
        Ok(ip) => ip,
        Err(_) => {
            eprintln!("ping: {}: Name or service not known", o.spec.host);
            return ExitCode::from(2);
        }
    };
    if !o.json {
        println!("{}", text::banner(&o.spec, ip));
    }
    let replies = Replies {
        spec: &o.spec,
        ip,
        quiet: o.quiet || o.json,
    };
    match ping::run(&o.spec, &replies) {
        Ok(r) => {
            let out = ping::to_outcome(&o.spec, &r);
            if o.json {
                println!("{}", crate::report::json::outcome(&out));
            } else {
                print!("{}", text::summary(&o.spec, &r));
            }
            record.keep(out);
            // iputils: 0 when any reply came, 1 when none did.
            if r.received() > 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(e) => {
            eprintln!("ping: {e}");
            ExitCode::from(2)
        }
    }
}

/// iputils' per-reply time from whole µs: below 1 ms every µs (`0.089`); above, the
/// ms rounded half up to 2 decimals, 1, then none, each width from the value that
/// rounds up into it (9.995 ms prints `10.0`, 99.95 ms `100`).
pub fn format_time(us: u64) -> String {
    if us >= 100_000 - 50 {
        format!("{}", (us + 500) / 1000)
    } else if us >= 10_000 - 5 {
        let r = us + 50;
        format!("{}.{}", r / 1000, r % 1000 / 100)
    } else if us >= 1000 {
        let r = us + 5;
        format!("{}.{:02}", r / 1000, r % 1000 / 10)
    } else {
        ms3(us)
    }
}

/// iputils' summary figures, integer microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stats {
    pub min_us: u64,
    pub avg_us: u64,
    pub max_us: u64,
    pub mdev_us: u64,
}

/// iputils' summary arithmetic over whole-µs round trips: sums in doubles, `avg` the
/// truncated mean, `mdev` the floor of the square root of the truncated variance,
/// which it takes as `(tsum2 - tsum²/n) / n` (less rounding for small times) while
/// tsum is below 2^31 µs and as `tsum2/n - avg²` beyond.
pub fn stats(rtts_us: &[u64]) -> Option<Stats> {
    let n = rtts_us.len() as f64;
    let sum: f64 = rtts_us.iter().map(|&r| r as f64).sum();
    let sum2: f64 = rtts_us.iter().map(|&r| (r as f64) * (r as f64)).sum();
    let avg = (sum / n) as i64;
    let var = if sum < f64::from(i32::MAX) {
        ((sum2 - sum * sum / n) / n) as i64
    } else {
        (sum2 / n - (avg as f64) * (avg as f64)) as i64
    };
    Some(Stats {
        min_us: *rtts_us.iter().min()?,
        avg_us: avg as u64,
        max_us: *rtts_us.iter().max()?,
        mdev_us: isqrt(var.max(0) as u64),
    })
}

/// The largest integer whose square is at most `v`.
fn isqrt(v: u64) -> u64 {
    let mut x = (v as f64).sqrt() as u64;
    while x.checked_mul(x).is_none_or(|sq| sq > v) {
        x -= 1;
    }
    while (x + 1).checked_mul(x + 1).is_some_and(|sq| sq <= v) {
        x += 1;
    }
    x
}

/// The replies' round trips as iputils has them: whole µs.
fn rtts_us(r: &PingResult) -> Vec<u64> {
    r.replies.iter().map(Reply::rtt_us).collect()
}

/// `%ld.%03ld` of microseconds as milliseconds.
pub fn ms3(us: u64) -> String {
    format!("{}.{:03}", us / 1000, us % 1000)
}

/// C's `%g` (6 significant digits, no trailing zeros) for the loss percentage.
pub fn g6(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let digits = (5 - v.abs().log10().floor() as i32).max(0) as usize;
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// iputils' output: the banner, a line per reply, the two summary lines.
pub mod text {
    use super::*;

    pub fn banner(spec: &PingSpec, ip: IpAddr) -> String {
        let name = if spec.host == ip.to_string() {
            ip.to_string()
        } else {
            spec.host.clone()
        };
        match (ip, spec.tcp_port) {
            (_, Some(port)) => format!("PING {name} ({ip}) TCP port {port}"),
            (IpAddr::V4(_), None) => {
                format!(
                    "PING {name} ({ip}) {}({}) bytes of data.",
                    spec.size,
                    spec.size + 28
                )
            }
            (IpAddr::V6(_), None) => format!("PING {name}({ip}) {} data bytes", spec.size),
        }
    }

    pub fn reply(spec: &PingSpec, ip: IpAddr, r: &Reply) -> String {
        let from = if spec.host == ip.to_string() {
            ip.to_string()
        } else {
            format!("{} ({ip})", spec.host)
        };
        match spec.tcp_port {
            Some(port) => format!(
                "{}from {from} port {port}: tcp_seq={} time={} ms",
                if r.refused { "refused " } else { "connected " },
                r.seq,
                format_time(r.rtt_us())
            ),
            None => {
                let ttl = r.ttl.map(|t| format!(" ttl={t}")).unwrap_or_default();
                format!(
                    "{} bytes from {from}: icmp_seq={}{ttl} time={} ms",
                    r.bytes,
                    r.seq,
                    format_time(r.rtt_us())
                )
            }
        }
    }

    pub fn summary(spec: &PingSpec, r: &PingResult) -> String {
        let mut s = format!("\n--- {} ping statistics ---\n", spec.host);
        s += &format!(
            "{} packets transmitted, {} received, {}% packet loss, time {}ms\n",
            r.transmitted,
            r.received(),
            g6(r.loss_percent()),
            // Rounded to the ms, as iputils does.
            (r.elapsed.as_micros() + 500) / 1000
        );
        if let Some(st) = stats(&rtts_us(r)) {
            s += &format!(
                "rtt min/avg/max/mdev = {}/{}/{}/{} ms\n",
                ms3(st.min_us),
                ms3(st.avg_us),
                ms3(st.max_us),
                ms3(st.mdev_us)
            );
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Options, ArgError> {
        parse(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn formats() {
        assert_eq!(format_time(89), "0.089");
        assert_eq!(format_time(999), "0.999");
        assert_eq!(format_time(1234), "1.23");
        assert_eq!(format_time(12345), "12.3");
        assert_eq!(format_time(123456), "123");
        // iputils rounds half up, and a value that rounds into the next width takes it.
        assert_eq!(format_time(1005), "1.01");
        assert_eq!(format_time(9994), "9.99");
        assert_eq!(format_time(9995), "10.0");
        assert_eq!(format_time(10_050), "10.1");
        assert_eq!(format_time(99_949), "99.9");
        assert_eq!(format_time(99_950), "100");
        assert_eq!(format_time(100_499), "100");
        assert_eq!(format_time(100_500), "101");
        assert_eq!(ms3(194), "0.194");
        assert_eq!(g6(0.0), "0");
        assert_eq!(g6(20.0), "20");
        assert_eq!(g6(100.0 / 3.0), "33.3333");
    }

    #[test]
    fn stats_as_iputils_computes_them() {
        // Five replies: tsum 970, tsum2 369,900; (369900 - 970²/5) / 5 = 36,344; √ = 190.6.
        let s = stats(&[40, 570, 120, 130, 110]).unwrap();
        assert_eq!(
            (s.min_us, s.avg_us, s.max_us, s.mdev_us),
            (40, 194, 570, 190)
        );
        // Two replies 1 µs apart: the true mdev is 0.5 µs, which iputils' order of
        // computation truncates to 0 (sum2/n - avg² in integers would give 6).
        assert_eq!(stats(&[40, 41]).unwrap().mdev_us, 0);
        // 100 µs apart: mdev 50.
        assert_eq!(stats(&[100, 200]).unwrap().mdev_us, 50);
        assert_eq!(stats(&[]), None);
        assert_eq!(stats(&[7]).unwrap().mdev_us, 0);
    }

    #[test]
    fn summary_in_whole_microseconds() {
        let reply = |seq, rtt_ns| Reply {
            seq,
            rtt_ns,
            ttl: Some(64),
            bytes: 64,
            refused: false,
        };
        let spec = p(&["127.0.0.1"]).unwrap().spec;
        let r = PingResult {
            target: "127.0.0.1".parse().unwrap(),
            method: ping::Method::IcmpDgram,
            transmitted: 2,
            replies: vec![reply(1, 45_999), reply(2, 71_001)],
            elapsed: Duration::from_micros(1_001_600),
            interrupted: false,
        };
        let ip = r.target;
        // Truncated to the µs as iputils' timestamps are, 3 decimals below 1 ms.
        assert!(text::reply(&spec, ip, &r.replies[0]).ends_with("time=0.045 ms"));
        assert!(text::summary(&spec, &r).ends_with(
            "2 packets transmitted, 2 received, 0% packet loss, time 1002ms\n\
             rtt min/avg/max/mdev = 0.045/0.058/0.071/0.013 ms\n"
        ));
    }

    #[test]
    fn options() {
        let o = p(&[
            "-c", "5", "-i0.2", "-W", "1", "-s", "100", "-q", "-4", "host",
        ])
        .unwrap();
        assert_eq!(o.spec.count, Some(5));
        assert_eq!(o.spec.interval, Duration::from_millis(200));
        assert_eq!(
            (o.spec.size, o.quiet, o.spec.host.as_str()),
            (100, true, "host")
        );
        let o = p(&["--tcp", "22", "-w", "3", "h"]).unwrap();
        assert_eq!((o.spec.tcp_port, o.spec.count), (Some(22), Some(3)));
        for bad in [
            vec!["-c", "0", "h"],
            vec!["-c"],
            vec![],
            vec!["-i", "0.001", "h"],
            vec!["-Z", "h"],
        ] {
            assert!(p(&bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            p(&["-c", "0", "h"]).err(),
            Some(ArgError::CountRange { value: "0".into() })
        );
        assert_eq!(p(&[]).err(), Some(ArgError::NoDestination));
        assert_eq!(
            p(&["-i", "x", "h"]).err().map(|e| e.to_string()),
            Some("ping: invalid interval: 'x'".into())
        );
    }
}

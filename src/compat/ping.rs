//! The `ping` personality: iputils' command line (`-c -i -W -s -q -4 -6 -w`) and its
//! output, over `net::ping` (ICMP datagram socket, else raw; `--tcp PORT` is
//! hostbench's own addition for hosts where ICMP is not allowed, and `--json` prints
//! the native result model). `hostbench ping` is this personality: iputils' grammar is
//! the native one for ping.

use crate::net::Family;
use crate::net::ping::{self, PingSpec, text};
use std::process::ExitCode;
use std::time::Duration;

const USAGE: &str = "\nUsage\n  ping [options] <destination>\n\nOptions:\n  -c <count>         stop after <count> replies\n  -i <interval>      seconds between sending each packet\n  -q                 quiet output\n  -s <size>          use <size> as number of data bytes to be sent\n  -W <timeout>       time to wait for response\n  -w <deadline>      reply wait <deadline> in seconds\n  -4                 use IPv4\n  -6                 use IPv6\n  --tcp <port>       time TCP connects to <port> instead of ICMP (hostbench)\n  --json             print hostbench's result model as JSON\n";

pub(super) struct Options {
    spec: PingSpec,
    quiet: bool,
    json: bool,
    deadline: Option<Duration>,
}

pub(super) fn parse(args: &[String]) -> Result<Options, String> {
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
    let bad = |what: &str, v: &str| format!("ping: invalid {what}: '{v}'");
    while i < args.len() {
        let a = args[i].as_str();
        if a == "--json" {
            json = true;
        } else if a == "--tcp" {
            i += 1;
            let v = args
                .get(i)
                .ok_or("ping: option requires an argument -- 'tcp'")?;
            spec.tcp_port = Some(v.parse().map_err(|_| bad("port", v))?);
        } else if let Some(flags) = a.strip_prefix('-').filter(|f| !f.is_empty()) {
            let c = flags.chars().next().unwrap_or(' ');
            let takes = "ciWswt".contains(c);
            let value = if takes {
                if flags.len() > 1 {
                    flags[1..].to_string()
                } else {
                    i += 1;
                    args.get(i).cloned().ok_or_else(|| {
                        format!("ping: option requires an argument -- '{c}'{USAGE}")
                    })?
                }
            } else {
                String::new()
            };
            let secs = |v: &str, what: &str| -> Result<Duration, String> {
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
                        return Err(format!(
                            "ping: invalid argument: '{value}': out of range: 1 <= value <= 9223372036854775807"
                        ));
                    }
                    spec.count = Some(n);
                }
                'i' => {
                    spec.interval = secs(&value, "interval")?;
                    if spec.interval < Duration::from_millis(2) {
                        return Err("ping: cannot flood, minimal interval allowed is 2ms".into());
                    }
                }
                'W' => spec.timeout = secs(&value, "timeout")?,
                'w' => deadline = Some(secs(&value, "deadline")?),
                's' => {
                    spec.size = value.parse().map_err(|_| bad("packet size", &value))?;
                    if spec.size > 65507 {
                        return Err(format!(
                            "ping: invalid argument: '{value}': out of range: 0 <= value <= 65507"
                        ));
                    }
                }
                't' => {}
                'q' => quiet = true,
                '4' => spec.family = Family::V4,
                '6' => spec.family = Family::V6,
                'h' => return Err(USAGE.trim_start().to_string()),
                _ => return Err(format!("ping: invalid option -- '{c}'{USAGE}")),
            }
        } else if host.is_none() {
            host = Some(a.to_string());
        } else {
            return Err(format!("ping: unexpected argument '{a}'{USAGE}"));
        }
        i += 1;
    }
    spec.host =
        host.ok_or_else(|| format!("ping: usage error: Destination address required{USAGE}"))?;
    if let Some(d) = deadline {
        // -w: stop after the deadline; expressed as a probe count at the interval.
        let n = (d.as_secs_f64() / spec.interval.as_secs_f64().max(1e-3))
            .ceil()
            .max(1.0) as u64;
        spec.count = Some(spec.count.map_or(n, |c| c.min(n)));
    }
    Ok(Options {
        spec,
        quiet,
        json,
        deadline,
    })
}

pub fn main(args: &[String], _record: &mut super::Record) -> ExitCode {
    let o = match parse(args) {
        Ok(o) => o,
        Err(msg) => {
            eprintln!("{}", msg.trim_end());
            return ExitCode::from(2);
        }
    };
    let _ = o.deadline;
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
    let quiet = o.quiet || o.json;
    let spec = o.spec.clone();
    let result = ping::run(&o.spec, &mut |r| {
        if !quiet {
            println!("{}", text::reply(&spec, ip, r));
        }
    });
    match result {
        Ok(r) => {
            if o.json {
                let out = ping::to_outcome(&o.spec, &r);
                println!("{}", crate::report::json::outcome(&out));
            } else {
                print!("{}", text::summary(&o.spec, &r));
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Options, String> {
        parse(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
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
    }
}

//! redis-benchmark 7.x's command line: its options, its defaults and its quirks
//! (`-P 0` means 1, `--threads` caps at 500, `--precision` clamps to 0..4 with 0
//! refused instead of crashing, the first word that is not an option starts a
//! custom command).

use crate::workload::redis::conn::{Endpoint, REPLY_TIMEOUT as DEFAULT_TIMEOUT};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    pub host: String,
    pub port: u16,
    pub socket: Option<PathBuf>,
    pub password: Option<String>,
    pub user: Option<String>,
    pub clients: usize,
    pub requests: u64,
    pub datasize: usize,
    pub dbnum: u32,
    pub resp3: bool,
    pub threads: usize,
    pub cluster: bool,
    pub tracking: bool,
    pub keepalive: bool,
    pub keyspace: Option<u64>,
    pub pipeline: usize,
    pub quiet: bool,
    pub precision: u32,
    pub csv: bool,
    pub loop_forever: bool,
    pub tests: Option<String>,
    pub idle: bool,
    pub stdin_last_arg: bool,
    pub seed: Option<u32>,
    /// `--timeout` (hostbench's own): how long a run waits without any reply before
    /// it gives up; None waits forever (`--timeout 0`, redis-benchmark's behaviour).
    pub timeout: Option<Duration>,
    /// A custom command given after the options.
    pub command: Vec<String>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            host: "127.0.0.1".into(),
            port: 6379,
            socket: None,
            password: None,
            user: None,
            clients: 50,
            requests: 100_000,
            datasize: 3,
            dbnum: 0,
            resp3: false,
            threads: 0,
            cluster: false,
            tracking: false,
            keepalive: true,
            keyspace: None,
            pipeline: 1,
            quiet: false,
            precision: 3,
            csv: false,
            loop_forever: false,
            tests: None,
            idle: false,
            stdin_last_arg: false,
            seed: None,
            timeout: Some(DEFAULT_TIMEOUT),
            command: Vec::new(),
        }
    }
}

/// What the command line asks for.
#[derive(Debug, PartialEq)]
pub enum Parsed {
    Run(Box<Options>),
    Help,
    Version,
}

/// A usage error: the message, then the usage text, exit 1 (as redis-benchmark).
#[derive(Debug, PartialEq, Eq)]
pub struct UsageError(pub String);

/// Warnings redis-benchmark prints to stderr while parsing.
pub type Warnings = Vec<String>;

pub fn parse(args: &[String]) -> Result<(Parsed, Warnings), UsageError> {
    let mut o = Options::default();
    let mut warnings = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        if !arg.starts_with('-') {
            o.command = args[i..].to_vec();
            break;
        }
        let mut value = || -> Result<&str, UsageError> {
            i += 1;
            args.get(i).map(String::as_str).ok_or_else(|| {
                UsageError(format!(
                    "Invalid option \"{arg}\" or option argument missing"
                ))
            })
        };
        match arg {
            "-c" => o.clients = number(arg, value()?)?.max(0) as usize,
            "-n" => o.requests = number(arg, value()?)?.max(0) as u64,
            "-k" => o.keepalive = number(arg, value()?)? != 0,
            "-h" => o.host = value()?.to_string(),
            "-p" => {
                let v = number(arg, value()?)?;
                o.port = u16::try_from(v).map_err(|_| UsageError("Invalid server port.".into()))?;
            }
            "-s" => o.socket = Some(PathBuf::from(value()?)),
            "-a" => o.password = Some(value()?.to_string()),
            "--user" => o.user = Some(value()?.to_string()),
            "-u" => apply_uri(&mut o, value()?)?,
            "-d" => o.datasize = number(arg, value()?)?.clamp(1, 1 << 30) as usize,
            "-P" => o.pipeline = number(arg, value()?)?.max(1) as usize,
            "-r" => o.keyspace = Some(number(arg, value()?)?.max(0) as u64),
            "-q" => o.quiet = true,
            "--csv" => o.csv = true,
            "-l" => o.loop_forever = true,
            "-I" => o.idle = true,
            "-e" => warnings.push(
                "WARNING: -e option has no effect. We now immediately exit on error to avoid false results.".into(),
            ),
            "-x" => o.stdin_last_arg = true,
            "-t" => o.tests = Some(format!(",{},", value()?.to_lowercase())),
            "--dbnum" => o.dbnum = number(arg, value()?)?.max(0) as u32,
            "-3" => o.resp3 = true,
            "--threads" => {
                let t = number(arg, value()?)?.max(0) as usize;
                if t > 500 {
                    warnings.push("WARNING: Too many threads, limiting threads to 500.".into());
                }
                o.threads = t.min(500);
            }
            "--cluster" => o.cluster = true,
            "--enable-tracking" => o.tracking = true,
            "--precision" => {
                let p = number(arg, value()?)?;
                o.precision = if p < 0 { 3 } else { p.min(4) as u32 };
                if o.precision == 0 {
                    // redis-benchmark crashes here; an HdrHistogram needs at least one figure.
                    return Err(UsageError(
                        "--precision 0 is not supported (HdrHistogram needs 1 to 4 significant figures)"
                            .into(),
                    ));
                }
            }
            "--seed" => o.seed = Some(number(arg, value()?)? as u32),
            "--timeout" => o.timeout = seconds(arg, value()?)?,
            "--help" => return Ok((Parsed::Help, warnings)),
            "-v" | "--version" => return Ok((Parsed::Version, warnings)),
            "--tls" | "--sni" | "--cacert" | "--cacertdir" | "--insecure" | "--cert" | "--key"
            | "--tls-ciphers" | "--tls-ciphersuites" => {
                return Err(UsageError(format!(
                    "{arg}: TLS is not supported by hostbench's redis-benchmark; \
                     run it against a plain TCP or Unix socket endpoint"
                )));
            }
            _ => {
                return Err(UsageError(format!(
                    "Invalid option \"{arg}\" or option argument missing"
                )));
            }
        }
        i += 1;
    }
    if o.user.is_some() && o.password.is_none() {
        warnings.push("WARNING: --user needs -a <password>; the user is ignored.".into());
        o.user = None;
    }
    Ok((Parsed::Run(Box::new(o)), warnings))
}

/// An integer as redis-benchmark reads it, but refusing what atoi would silently turn
/// into 0.
fn number(option: &str, v: &str) -> Result<i64, UsageError> {
    v.trim().parse::<i64>().map_err(|_| {
        UsageError(format!(
            "Invalid option \"{option}\": \"{v}\" is not a number"
        ))
    })
}

/// Seconds, fractions allowed; 0 is no timeout.
fn seconds(option: &str, v: &str) -> Result<Option<Duration>, UsageError> {
    let s = v
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.0 && *s <= 1e6);
    match s {
        Some(0.0) => Ok(None),
        Some(s) => Ok(Some(Duration::from_secs_f64(s))),
        None => Err(UsageError(format!(
            "Invalid option \"{option}\": \"{v}\" is not a number of seconds (0 waits forever)"
        ))),
    }
}

/// `redis://[user:]password@host:port/dbnum`; user and password percent-decoded.
fn apply_uri(o: &mut Options, uri: &str) -> Result<(), UsageError> {
    let bad = |why: &str| UsageError(format!("Invalid URI \"{uri}\": {why}"));
    let rest = if let Some(r) = uri.strip_prefix("redis://") {
        r
    } else if uri.starts_with("rediss://") {
        return Err(bad("TLS (rediss://) is not supported"));
    } else {
        return Err(bad("it must start with redis://"));
    };
    let (auth, rest) = match rest.rsplit_once('@') {
        Some((a, r)) => (Some(a), r),
        None => (None, rest),
    };
    if let Some(auth) = auth {
        match auth.split_once(':') {
            Some((user, pw)) => {
                if !user.is_empty() {
                    o.user = Some(percent_decode(user));
                }
                o.password = Some(percent_decode(pw));
            }
            None => o.password = Some(percent_decode(auth)),
        }
    }
    let (hostport, db) = match rest.split_once('/') {
        Some((h, d)) => (h, Some(d)),
        None => (rest, None),
    };
    let (host, port) = if let Some(h) = hostport.strip_prefix('[') {
        let (h, after) = h.split_once(']').ok_or_else(|| bad("unclosed '['"))?;
        (h, after.strip_prefix(':'))
    } else {
        match hostport.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (hostport, None),
        }
    };
    if !host.is_empty() {
        o.host = host.to_string();
    }
    if let Some(p) = port {
        o.port = p.parse().map_err(|_| bad("bad port"))?;
    }
    if let Some(d) = db.filter(|d| !d.is_empty()) {
        o.dbnum = d.parse().map_err(|_| bad("bad database number"))?;
    }
    Ok(())
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2]))
        {
            out.push(h * 16 + l);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

impl Options {
    pub fn endpoint(&self) -> Endpoint {
        match &self.socket {
            Some(p) => Endpoint::Unix(p.clone()),
            None => Endpoint::Tcp {
                host: self.host.clone(),
                port: self.port,
            },
        }
    }

    /// redis-benchmark's `test_is_selected`: no `-t`, or `,name,` in `,list,`.
    pub fn selected(&self, name: &str) -> bool {
        match &self.tests {
            None => true,
            Some(list) => list.contains(&format!(",{name},")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Options {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        match parse(&args).unwrap().0 {
            Parsed::Run(o) => *o,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn seed_command_lines_parse() {
        let o = run(&["-c", "1000", "-n", "300000", "-t", "get,set"]);
        assert_eq!((o.clients, o.requests), (1000, 300_000));
        assert!(o.selected("get") && o.selected("set") && !o.selected("incr"));
        let o = run(&[
            "--threads",
            "4",
            "-c",
            "1000",
            "-n",
            "300000",
            "-t",
            "get,set",
        ]);
        assert_eq!(o.threads, 4);
    }

    #[test]
    fn quirks() {
        assert_eq!(run(&["-P", "0"]).pipeline, 1);
        assert_eq!(run(&["-d", "0"]).datasize, 1);
        assert_eq!(run(&["--threads", "900"]).threads, 500);
        assert_eq!(run(&["--precision", "9"]).precision, 4);
        assert_eq!(run(&["--precision", "-1"]).precision, 3);
        assert!(run(&["-t", "SET"]).selected("set"));
        let o = run(&["-q", "set", "foo", "bar"]);
        assert_eq!(o.command, ["set", "foo", "bar"]);
        assert!(o.quiet);
    }

    #[test]
    fn uri() {
        let o = run(&["-u", "redis://bob:p%40ss@10.0.0.1:7000/3"]);
        assert_eq!(o.user.as_deref(), Some("bob"));
        assert_eq!(o.password.as_deref(), Some("p@ss"));
        assert_eq!((o.host.as_str(), o.port, o.dbnum), ("10.0.0.1", 7000, 3));
        let o = run(&["-u", "redis://[::1]:6380"]);
        assert_eq!((o.host.as_str(), o.port), ("::1", 6380));
    }

    #[test]
    fn errors() {
        let p = |a: &[&str]| parse(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert!(
            p(&["-c"])
                .unwrap_err()
                .0
                .contains("option argument missing")
        );
        assert!(
            p(&["--bogus"])
                .unwrap_err()
                .0
                .contains("Invalid option \"--bogus\"")
        );
        assert_eq!(p(&["-p", "70000"]).unwrap_err().0, "Invalid server port.");
        assert!(p(&["-c", "many"]).unwrap_err().0.contains("not a number"));
        assert!(p(&["--precision", "0"]).is_err());
        assert!(p(&["--timeout", "soon"]).unwrap_err().0.contains("seconds"));
    }

    #[test]
    fn timeout_is_settable() {
        assert_eq!(run(&[]).timeout, Some(DEFAULT_TIMEOUT));
        assert_eq!(
            run(&["--timeout", "0.5"]).timeout,
            Some(Duration::from_millis(500))
        );
        assert_eq!(run(&["--timeout", "0"]).timeout, None);
    }
}

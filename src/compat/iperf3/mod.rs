//! The `iperf3` personality, wire-compatible with iperf3 3.x in both directions:
//! `hostbench iperf3 -c HOST` against a stock `iperf3 -s`, and a stock client against
//! `hostbench iperf3 -s`. Options follow iperf3 3.12's getopt grammar (`-t5`, `-Ru`,
//! `--time=5`); output follows its text layout and its `-J` keys.
//!
//! Differences, on purpose: `-D` (daemon) runs in the foreground; RSA authentication,
//! SCTP, `-F`, `-A`, `-Z`, `--fq-rate` and TOS are refused or ignored as documented in
//! the help; the server refuses a second client while a test runs, as iperf3 does.
//!
//! This is the command line, the control flow (`client`, `server`) and the output
//! (`output`, `json`); the protocol, streams and accounting are
//! `workload::net::iperf3`. A client run is kept as one `net` outcome with the same
//! metrics and params as `hostbench net TCP_STREAM` (or UDP_STREAM); a server keeps
//! nothing. As a soak slice, the slice's length replaces `-t` (and `-n`/`-k`).

mod client;
mod error;
mod json;
mod output;
mod server;

use crate::workload::net::Family;
use crate::workload::net::iperf3::wire;
pub use error::{ArgError, Iperf3Error, ParamProblem};
use output::Units;
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct Options {
    pub server: bool,
    pub client: Option<String>,
    pub port: u16,
    pub units: Units,
    pub interval: Option<Duration>,
    pub time: u64,
    pub bytes: u64,
    pub blocks: u64,
    pub len: Option<u64>,
    pub parallel: u32,
    pub reverse: bool,
    pub bidir: bool,
    pub udp: bool,
    /// bits/s per stream; None = the protocol's default (1 Mbit/s UDP, unlimited TCP).
    pub bitrate: Option<u64>,
    pub window: u64,
    pub omit: u64,
    pub json: bool,
    pub one_off: bool,
    pub family: Family,
    pub verbose: bool,
    pub nodelay: bool,
    pub congestion: Option<String>,
    pub mss: u64,
    pub bind: Option<String>,
    pub logfile: Option<String>,
    pub title: Option<String>,
    pub connect_timeout: Option<Duration>,
    pub idle_timeout: Option<Duration>,
    pub rcv_timeout: Duration,
    pub udp64: bool,
    pub get_server_output: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            server: false,
            client: None,
            port: wire::DEFAULT_PORT,
            units: Units::default(),
            interval: Some(Duration::from_secs(1)),
            time: 10,
            bytes: 0,
            blocks: 0,
            len: None,
            parallel: 1,
            reverse: false,
            bidir: false,
            udp: false,
            bitrate: None,
            window: 0,
            omit: 0,
            json: false,
            one_off: false,
            family: Family::Any,
            verbose: false,
            nodelay: false,
            congestion: None,
            mss: 0,
            bind: None,
            logfile: None,
            title: None,
            connect_timeout: None,
            idle_timeout: None,
            rcv_timeout: Duration::from_secs(120),
            udp64: false,
            get_server_output: false,
        }
    }
}

const USAGE: &str =
    "Usage: iperf3 [-s|-c host] [options]\n       iperf3 [-h|--help] [-v|--version]\n";

const HELP: &str = "Usage: iperf3 [-s|-c host] [options]
       iperf3 [-h|--help] [-v|--version]

Server or Client:
  -p, --port      #         server port to listen on/connect to
  -f, --format   [kmgtKMGT] format to report: Kbits, Mbits, Gbits, Tbits
  -i, --interval  #         seconds between periodic throughput reports
  -B, --bind      <host>    bind to the interface associated with the address <host>
  -V, --verbose             more detailed output
  -J, --json                output in JSON format
  --logfile f               send output to a log file
  --rcv-timeout #           idle timeout for receiving data (default 120000 ms;
                            hostbench: also the wait for the server's results)
  -v, --version             show version information and quit
  -h, --help                show this message and quit
Server specific:
  -s, --server              run in server mode
  -D, --daemon              accepted; hostbench stays in the foreground
  -1, --one-off             handle one client connection then exit
  --idle-timeout #          restart idle server after # seconds
Client specific:
  -c, --client    <host>    run in client mode, connecting to <host>
  -u, --udp                 use UDP rather than TCP
  --connect-timeout #       timeout for control connection setup (ms; hostbench:
                            also each answer of the server until the test runs,
                            default 10000)
  -b, --bitrate #[KMG][/#]  target bitrate in bits/sec (0 for unlimited)
                            (default 1 Mbit/sec for UDP, unlimited for TCP)
  -t, --time      #         time in seconds to transmit for (default 10 secs)
  -n, --bytes     #[KMG]    number of bytes to transmit (instead of -t)
  -k, --blockcount #[KMG]   number of blocks (packets) to transmit (instead of -t or -n)
  -l, --length    #[KMG]    length of buffer to read or write
                            (default 128 KB for TCP, dynamic or 1460 for UDP)
  -P, --parallel  #         number of parallel client streams to run
  -R, --reverse             run in reverse mode (server sends, client receives)
  --bidir                   run in bidirectional mode.
  -w, --window    #[KMG]    set send/receive socket buffer sizes
  -C, --congestion <algo>   set TCP congestion control algorithm
  -M, --set-mss   #         set TCP maximum segment size (MTU - 40 bytes)
  -N, --no-delay            set TCP no delay, disabling Nagle's Algorithm
  -4, --version4            only use IPv4
  -6, --version6            only use IPv6
  -O, --omit N              perform pre-test for N seconds and omit the pre-test statistics
  -T, --title str           prefix every output line with this string
  --get-server-output       accepted (the server's output is not fetched)
  --udp-counters-64bit      use 64-bit counters in UDP test packets

[KMG] indicates options that support a K/M/G suffix for kilo-, mega-, or giga-

This is hostbench's iperf3 personality, wire-compatible with iperf3 3.x.
";

fn invalid(what: &'static str, value: &str) -> ParamProblem {
    ParamProblem::Invalid {
        what,
        value: value.into(),
    }
}

/// iperf3's size grammar: K/M/G/T are powers of 1024.
fn parse_size(s: &str, what: &'static str) -> Result<u64, ParamProblem> {
    parse_scaled(s, 1024.0).ok_or_else(|| invalid(what, s))
}

fn parse_scaled(s: &str, base: f64) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.chars().last()? {
        c @ ('k' | 'K' | 'm' | 'M' | 'g' | 'G' | 't' | 'T') => {
            let p = match c.to_ascii_lowercase() {
                'k' => 1,
                'm' => 2,
                'g' => 3,
                _ => 4,
            };
            (&s[..s.len() - 1], base.powi(p))
        }
        _ => (s, 1.0),
    };
    let v: f64 = num.parse().ok()?;
    (v.is_finite() && v >= 0.0 && v * mult < 1.8e19).then_some((v * mult) as u64)
}

fn parse_num<T: std::str::FromStr>(s: &str, what: &'static str) -> Result<T, ParamProblem> {
    s.trim().parse().map_err(|_| invalid(what, s))
}

/// Which options take a value (long name, short letter).
const WITH_VALUE: &[(&str, char)] = &[
    ("port", 'p'),
    ("format", 'f'),
    ("interval", 'i'),
    ("client", 'c'),
    ("bitrate", 'b'),
    ("bandwidth", 'b'),
    ("time", 't'),
    ("bytes", 'n'),
    ("blockcount", 'k'),
    ("length", 'l'),
    ("parallel", 'P'),
    ("window", 'w'),
    ("congestion", 'C'),
    ("set-mss", 'M'),
    ("omit", 'O'),
    ("title", 'T'),
    ("bind", 'B'),
    ("tos", 'S'),
    ("affinity", 'A'),
    ("file", 'F'),
    ("pidfile", 'I'),
    ("flowlabel", 'L'),
    ("logfile", '\0'),
    ("connect-timeout", '\0'),
    ("idle-timeout", '\0'),
    ("rcv-timeout", '\0'),
    ("snd-timeout", '\0'),
    ("cport", '\0'),
    ("pacing-timer", '\0'),
    ("fq-rate", '\0'),
    ("extra-data", '\0'),
    ("dscp", '\0'),
    ("server-bitrate-limit", '\0'),
    ("bind-dev", '\0'),
];

const FLAGS: &[(&str, char)] = &[
    ("server", 's'),
    ("daemon", 'D'),
    ("one-off", '1'),
    ("udp", 'u'),
    ("reverse", 'R'),
    ("bidir", '\0'),
    ("json", 'J'),
    ("verbose", 'V'),
    ("no-delay", 'N'),
    ("version4", '4'),
    ("version6", '6'),
    ("zerocopy", 'Z'),
    ("forceflush", '\0'),
    ("get-server-output", '\0'),
    ("udp-counters-64bit", '\0'),
    ("repeating-payload", '\0'),
    ("dont-fragment", '\0'),
    ("help", 'h'),
    ("version", 'v'),
    ("debug", 'd'),
    ("timestamps", '\0'),
];

pub(in crate::compat) enum Parsed {
    Run(Box<Options>),
    Help,
    Version,
}

/// getopt_long, the way iperf3 uses it: `-t5`, `-t 5`, `--time 5`, `--time=5`, `-uR`.
fn split_args(args: &[String]) -> Result<Vec<(String, Option<String>)>, ArgError> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if let Some(long) = a.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            if WITH_VALUE.iter().any(|(l, _)| *l == name) {
                let v = match inline {
                    Some(v) => v,
                    None => {
                        let v = args
                            .get(i)
                            .cloned()
                            .ok_or_else(|| ArgError::MissingLongValue {
                                option: name.into(),
                            })?;
                        i += 1;
                        v
                    }
                };
                out.push((name.to_string(), Some(v)));
            } else if FLAGS.iter().any(|(l, _)| *l == name) {
                out.push((name.to_string(), None));
            } else {
                return Err(ArgError::UnknownLong {
                    option: name.into(),
                });
            }
        } else if let Some(shorts) = a.strip_prefix('-').filter(|s| !s.is_empty()) {
            let chars: Vec<char> = shorts.chars().collect();
            let mut j = 0;
            while j < chars.len() {
                let c = chars[j];
                j += 1;
                if let Some((name, _)) = WITH_VALUE.iter().find(|(_, s)| *s == c) {
                    let rest: String = chars[j..].iter().collect();
                    let v = if !rest.is_empty() {
                        rest
                    } else {
                        let v = args
                            .get(i)
                            .cloned()
                            .ok_or(ArgError::MissingShortValue { option: c })?;
                        i += 1;
                        v
                    };
                    out.push((name.to_string(), Some(v)));
                    break;
                } else if let Some((name, _)) = FLAGS.iter().find(|(_, s)| *s == c) {
                    out.push((name.to_string(), None));
                } else {
                    return Err(ArgError::UnknownShort { option: c });
                }
            }
        } else {
            return Err(ParamProblem::UnexpectedArgument { arg: a.clone() }.into());
        }
    }
    Ok(out)
}

pub(in crate::compat) fn parse(args: &[String]) -> Result<Parsed, ArgError> {
    let mut o = Options::default();
    let mut time_given = false;
    for (name, value) in split_args(args)? {
        let v = value.unwrap_or_default();
        match name.as_str() {
            "help" => return Ok(Parsed::Help),
            "version" => return Ok(Parsed::Version),
            "server" => o.server = true,
            "client" => o.client = Some(v),
            "port" => o.port = parse_num(&v, "port")?,
            "format" => {
                let c = v.chars().next().unwrap_or(' ');
                if v.len() != 1 || !"kmgtKMGT".contains(c) {
                    return Err(ParamProblem::Format { value: v }.into());
                }
                o.units = Units { fixed: Some(c) };
            }
            "interval" => {
                let s: f64 = parse_num(&v, "report interval")?;
                if s != 0.0 && !(0.1..=60.0).contains(&s) {
                    return Err(ParamProblem::Interval { seconds: v }.into());
                }
                o.interval = (s > 0.0).then(|| Duration::from_secs_f64(s));
            }
            "time" => {
                o.time = parse_num(&v, "time")?;
                time_given = true;
            }
            "bytes" => o.bytes = parse_size(&v, "number of bytes")?,
            "blockcount" => o.blocks = parse_size(&v, "block count")?,
            "length" => o.len = Some(parse_size(&v, "block length")?),
            "parallel" => o.parallel = parse_num(&v, "number of streams")?,
            "reverse" => o.reverse = true,
            "bidir" => o.bidir = true,
            "udp" => o.udp = true,
            "bitrate" | "bandwidth" => {
                let rate = v.split('/').next().unwrap_or("");
                o.bitrate = Some(parse_scaled(rate, 1000.0).ok_or_else(|| invalid("bitrate", &v))?);
            }
            "window" => o.window = parse_size(&v, "window size")?,
            "omit" => o.omit = parse_num(&v, "omit")?,
            "json" => o.json = true,
            "one-off" => o.one_off = true,
            "daemon" => {}
            "version4" => o.family = Family::V4,
            "version6" => o.family = Family::V6,
            "verbose" => o.verbose = true,
            "no-delay" => o.nodelay = true,
            "congestion" => o.congestion = Some(v),
            "set-mss" => o.mss = parse_num(&v, "MSS")?,
            "bind" => o.bind = Some(v),
            "logfile" => o.logfile = Some(v),
            "title" => o.title = Some(v),
            "connect-timeout" => {
                o.connect_timeout = Some(Duration::from_millis(parse_num(&v, "connect timeout")?))
            }
            "idle-timeout" => {
                o.idle_timeout = Some(Duration::from_secs(parse_num(&v, "idle timeout")?))
            }
            "rcv-timeout" => {
                o.rcv_timeout = Duration::from_millis(parse_num(&v, "receive timeout")?)
            }
            "udp-counters-64bit" => o.udp64 = true,
            "get-server-output" => o.get_server_output = true,
            "file" | "affinity" | "zerocopy" | "tos" | "dscp" | "flowlabel" | "fq-rate" => {
                return Err(ParamProblem::Unsupported { option: name }.into());
            }
            // Accepted and without effect here: output flushing, timestamps, debug, pacing.
            _ => {}
        }
    }
    if o.server == o.client.is_some() {
        return Err(ParamProblem::Role.into());
    }
    if o.client.is_some() {
        if o.parallel == 0 || o.parallel > wire::MAX_STREAMS {
            return Err(ParamProblem::Parallel {
                streams: o.parallel,
                max: wire::MAX_STREAMS,
            }
            .into());
        }
        if o.time > wire::MAX_TIME {
            return Err(ParamProblem::Duration { seconds: o.time }.into());
        }
        if o.reverse && o.bidir {
            return Err(ParamProblem::ReverseAndBidir.into());
        }
        if (o.bytes > 0 || o.blocks > 0) && time_given {
            return Err(ParamProblem::EndConditions.into());
        }
        if let Some(l) = o.len {
            let (min, max) = if o.udp {
                (wire::MIN_UDP_BLOCKSIZE, wire::MAX_UDP_BLOCKSIZE)
            } else {
                (1, wire::MAX_BLOCKSIZE)
            };
            if !(min..=max).contains(&l) {
                return Err(ParamProblem::BlockSize { len: l, min, max }.into());
            }
        }
    }
    Ok(Parsed::Run(Box::new(o)))
}

pub fn main(args: &[String], record: &mut crate::compat::Record) -> ExitCode {
    let mut o = match parse(args) {
        Ok(Parsed::Run(o)) => o,
        Ok(Parsed::Help) => {
            print!("{HELP}");
            return ExitCode::SUCCESS;
        }
        Ok(Parsed::Version) => {
            println!(
                "iperf 3.12 (hostbench {} personality)\n{}",
                env!("CARGO_PKG_VERSION"),
                json::system_info()
            );
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprint!("{e}");
            return ExitCode::from(1);
        }
    };
    if let Some(slice) = record.slice
        && !o.server
    {
        // A soak slice: the slice's length replaces -t, and ends a -n/-k test too.
        o.time = slice.as_secs_f64().round().max(1.0) as u64;
        (o.bytes, o.blocks) = (0, 0);
    }
    let out = match Out::open(o.logfile.as_deref(), o.title.clone()) {
        Ok(out) => out,
        Err(e) => {
            eprintln!("iperf3: error - unable to open log file: {e}");
            return ExitCode::from(1);
        }
    };
    let result = if o.server {
        server::run(&o, &out)
    } else {
        client::run(&o, &out).map(|run| record.keep(run.to_outcome()))
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if o.json && o.server {
                out.json(
                    &serde_json::json!({"start": {}, "intervals": [], "end": {}, "error": e.to_string()}),
                );
            } else if !o.json {
                out.err(&format!("iperf3: error - {e}"));
            }
            ExitCode::from(1)
        }
    }
}

/// Where output goes: stdout or `--logfile`, each line prefixed with `-T`'s title.
/// Shared by the flow and the interval observer, hence the lock.
pub struct Out {
    file: Option<Mutex<std::fs::File>>,
    title: Option<String>,
}

impl Out {
    fn open(path: Option<&str>, title: Option<String>) -> std::io::Result<Out> {
        let file = match path {
            Some(p) => Some(Mutex::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(p)?,
            )),
            None => None,
        };
        Ok(Out { file, title })
    }

    pub fn line(&self, text: &str) {
        use std::io::Write;
        let mut s = String::new();
        for l in text.split('\n') {
            if let Some(t) = &self.title {
                s += t;
                s += ":  ";
            }
            s += l;
            s.push('\n');
        }
        match &self.file {
            Some(f) => {
                let _ = f.lock().expect("log file").write_all(s.as_bytes());
            }
            None => {
                let mut so = std::io::stdout().lock();
                let _ = so.write_all(s.as_bytes());
                let _ = so.flush();
            }
        }
    }

    /// Errors go to stderr (or the log file), as iperf3's do.
    pub fn err(&self, text: &str) {
        match &self.file {
            Some(f) => {
                use std::io::Write;
                let _ = writeln!(f.lock().expect("log file"), "{text}");
            }
            None => eprintln!("{text}"),
        }
    }

    /// A JSON document, unprefixed.
    pub fn json(&self, v: &serde_json::Value) {
        let text = serde_json::to_string_pretty(v).expect("JSON values serialise");
        match &self.file {
            Some(f) => {
                use std::io::Write;
                let _ = writeln!(f.lock().expect("log file"), "{text}");
            }
            None => println!("{text}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(args: &[&str]) -> Result<Options, ArgError> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        match parse(&args)? {
            Parsed::Run(o) => Ok(*o),
            _ => panic!("not a run: {args:?}"),
        }
    }

    #[test]
    fn getopt_forms() {
        let o = opts(&[
            "-c",
            "h",
            "-t5",
            "-P",
            "4",
            "-uR",
            "--bitrate=10M",
            "-l",
            "1K",
        ])
        .unwrap();
        assert_eq!(o.client.as_deref(), Some("h"));
        assert_eq!((o.time, o.parallel, o.udp, o.reverse), (5, 4, true, true));
        assert_eq!(o.bitrate, Some(10_000_000));
        assert_eq!(o.len, Some(1024));
        let o = opts(&["-s", "-p", "15201", "-1", "-J"]).unwrap();
        assert!(o.server && o.one_off && o.json && o.port == 15201);
        let o = opts(&[
            "-c", "h", "-n", "10M", "-w", "256K", "--bidir", "-O", "1", "-i", "0.5",
        ])
        .unwrap();
        assert_eq!((o.bytes, o.window, o.omit), (10 << 20, 256 << 10, 1));
        assert!(o.bidir);
    }

    #[test]
    fn bad_command_lines_name_the_problem() {
        for (args, words) in [
            (vec!["-t", "5"], "client (-c) or server (-s)"),
            (vec!["-c", "h", "-P", "500"], "parallel"),
            (vec!["-c", "h", "--frobnicate"], "unrecognized option"),
            (vec!["-c", "h", "-t"], "requires an argument"),
            (vec!["-c", "h", "-u", "-l", "70000"], "block size"),
            (
                vec!["-c", "h", "-R", "--bidir"],
                "reverse and bidirectional",
            ),
            (vec!["-c", "h", "-t", "x"], "invalid time"),
            (vec!["-c", "h", "-f", "q"], "format"),
        ] {
            let e = opts(&args).unwrap_err().to_string();
            assert!(e.contains(words), "{args:?}: {e}");
        }
        assert!(matches!(
            opts(&["-c", "h", "-R", "--bidir"]),
            Err(ArgError::Parameter(ParamProblem::ReverseAndBidir))
        ));
        assert!(matches!(
            opts(&["-c", "h", "-t"]),
            Err(ArgError::MissingShortValue { option: 't' })
        ));
        assert_eq!(
            opts(&["-c", "h", "-t", "x"]).unwrap_err().to_string(),
            format!("iperf3: parameter error - invalid time 'x'\n{USAGE}")
        );
    }
}

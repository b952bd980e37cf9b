//! The `netperf` personality: netperf 2.7's command line (global options, then the
//! test's after `--`) and its output blocks, over hostbench's own client and protocol.
//! It pairs with the `netserver` personality (or `hostbench net serve -p 12865`), not
//! with a real netserver: netperf's wire format is raw C structs (reference §1.5).
//!
//! Differences, on purpose: throughput is measured at the receiver (netperf's own
//! TCP_STREAM number is the sender's); CPU utilisation (`-c`/`-C`) is the CPU time of
//! the processes doing the test, as a share of all CPUs, not /proc/stat's whole system.

use super::getopt::ShortOpts;
use crate::model::Outcome;
use crate::workload::net::client::{self, ClientSpec};
use crate::workload::net::protocol::TestRequest;
use crate::workload::net::sock::SockOpts;
use crate::workload::net::{Family, TestKind, outcome};
use crate::workload::observe::Quiet;
use std::process::ExitCode;
use thiserror::Error;

/// netserver's port, which the netserver personality listens on too.
pub const NETSERVER_PORT: u16 = 12865;

#[derive(Debug, Clone)]
pub(super) struct Options {
    host: String,
    family: Family,
    port: u16,
    length: i64,
    test: TestKind,
    /// -f: one of G M K g m k
    units: char,
    headers: bool,
    verbosity: i64,
    local_cpu: bool,
    remote_cpu: bool,
    send_size: Option<u64>,
    recv_size: Option<u64>,
    local_sndbuf: u64,
    local_rcvbuf: u64,
    remote_sndbuf: u64,
    remote_rcvbuf: u64,
    request: u64,
    response: u64,
    nodelay: bool,
    /// -o / -O / -k with their selector lists
    output: Option<(char, Vec<String>)>,
}

const USAGE: &str = "\nUsage: netperf [global options] -- [test options] \n\nGlobal options: -H host -l testlen -t testname -p port -f G|M|K|g|m|k -P 0|1 -v level -j -c -C\nTest options (TCP/UDP tests): -m send -M recv -s lsnd,lrcv -S rsnd,rrcv -r req,rsp -D -o|-O|-k [list]\n\nThis is hostbench's netperf personality: it pairs with `hostbench netserver`.\nIt gives up when the server does not accept within 5 s, does not answer a step\nwithin 10 s, or sends no result within the test's length + 30 s.\n";

/// A command line netperf would refuse; Display is the whole message, usage included.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("netperf: {0}\n{USAGE}")]
pub struct ArgError(pub ArgProblem);

/// What is wrong with the command line, in netperf's words.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ArgProblem {
    #[error("option {option} requires an argument")]
    MissingValue { option: String },
    #[error("test option {option} requires an argument")]
    MissingTestValue { option: String },
    #[error("invalid test length '{value}'")]
    Length { value: String },
    #[error("test length must not be 0")]
    ZeroLength,
    #[error(
        "test '{value}' is not supported: use TCP_STREAM, TCP_MAERTS, TCP_RR, TCP_CRR, UDP_STREAM or UDP_RR"
    )]
    Test { value: String },
    #[error("invalid port '{value}'")]
    Port { value: String },
    #[error("invalid format '{value}': use G, M, K, g, m or k")]
    Format { value: String },
    #[error("invalid verbosity '{value}'")]
    Verbosity { value: String },
    #[error("invalid option -- '{option}'")]
    UnknownOption { option: String },
    #[error("invalid test option -- '{option}'")]
    UnknownTestOption { option: String },
    /// A size or size pair (`-m`, `-s`, `-r`, …) that netperf's convert() cannot read.
    #[error("invalid {what} '{value}'")]
    Size { what: &'static str, value: String },
    #[error("{what} {size} is out of range (1 to {max})")]
    SizeRange {
        what: &'static str,
        size: u64,
        max: u64,
    },
}

impl From<ArgProblem> for ArgError {
    fn from(p: ArgProblem) -> Self {
        ArgError(p)
    }
}

/// What a command line asks for: a test, netperf's usage (`-h`) or its version (`-V`).
#[derive(Debug)]
pub(super) enum Parsed {
    Run(Box<Options>),
    Help,
    Version,
}

/// netperf's convert(): K/M/G are powers of 2, k/m/g of 10.
fn convert(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult): (&str, u64) = match s.chars().last()? {
        'K' => (&s[..s.len() - 1], 1 << 10),
        'M' => (&s[..s.len() - 1], 1 << 20),
        'G' => (&s[..s.len() - 1], 1 << 30),
        'k' => (&s[..s.len() - 1], 1_000),
        'm' => (&s[..s.len() - 1], 1_000_000),
        'g' => (&s[..s.len() - 1], 1_000_000_000),
        _ => (s, 1),
    };
    num.parse::<u64>().ok()?.checked_mul(mult)
}

/// `a,b`, `a` (both), `,b` (second only).
fn pair(s: &str, what: &'static str) -> Result<(Option<u64>, Option<u64>), ArgProblem> {
    let bad = || ArgProblem::Size {
        what,
        value: s.into(),
    };
    let (a, b) = match s.split_once(',') {
        Some((a, b)) => (a, Some(b)),
        None => (s, None),
    };
    let a = if a.is_empty() {
        None
    } else {
        Some(convert(a).ok_or_else(bad)?)
    };
    let b = match b {
        Some("") => None,
        Some(b) => Some(convert(b).ok_or_else(bad)?),
        None => a,
    };
    Ok((a, b))
}

pub(super) fn parse(args: &[String]) -> Result<Parsed, ArgError> {
    let split = args.iter().position(|a| a == "--").unwrap_or(args.len());
    let (global, test) = (&args[..split], args.get(split + 1..).unwrap_or(&[]));
    let mut o = Options::default();
    let units_given = match o.global_options(global)? {
        Globals::Done { units_given } => units_given,
        Globals::Help => return Ok(Parsed::Help),
        Globals::Version => return Ok(Parsed::Version),
    };
    o.test_options(test)?;
    o.check(units_given)?;
    Ok(Parsed::Run(Box::new(o)))
}

/// Where the global options led: on to the test's, or to `-h` or `-V`, which end the
/// command line where they stand.
enum Globals {
    Done { units_given: bool },
    Help,
    Version,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            host: "localhost".into(),
            family: Family::Any,
            port: NETSERVER_PORT,
            length: 10,
            test: TestKind::TcpStream,
            units: 'm',
            headers: true,
            verbosity: 1,
            local_cpu: false,
            remote_cpu: false,
            send_size: None,
            recv_size: None,
            local_sndbuf: 0,
            local_rcvbuf: 0,
            remote_sndbuf: 0,
            remote_rcvbuf: 0,
            request: 1,
            response: 1,
            nodelay: false,
            output: None,
        }
    }
}

impl Options {
    /// netperf's global options, and whether `-f` was among them.
    fn global_options(&mut self, global: &[String]) -> Result<Globals, ArgProblem> {
        let o = self;
        let mut units_given = false;
        let mut opts = ShortOpts::new(global);
        while let Some(opt) = opts.next_opt() {
            let flag = opt.flag;
            let mut value = || {
                opts.value(&opt)
                    .map(str::to_string)
                    .ok_or_else(|| ArgProblem::MissingValue {
                        option: flag.into(),
                    })
            };
            match flag {
                "-h" => return Ok(Globals::Help),
                "-V" => return Ok(Globals::Version),
                "-H" => {
                    let v = value()?;
                    let (h, fam) = v.split_once(',').unwrap_or((&v, ""));
                    o.host = h.to_string();
                    match fam {
                        "4" | "inet" => o.family = Family::V4,
                        "6" | "inet6" => o.family = Family::V6,
                        _ => {}
                    }
                }
                "-l" => {
                    let v = value()?;
                    o.length = v
                        .trim()
                        .parse()
                        .map_err(|_| ArgProblem::Length { value: v.clone() })?;
                    if o.length == 0 {
                        return Err(ArgProblem::ZeroLength);
                    }
                }
                "-t" => {
                    let v = value()?;
                    o.test =
                        TestKind::parse(&v).ok_or_else(|| ArgProblem::Test { value: v.clone() })?;
                }
                "-p" => {
                    let v = value()?;
                    let port = v.split(',').next().unwrap_or("");
                    o.port = port
                        .parse()
                        .map_err(|_| ArgProblem::Port { value: v.clone() })?;
                }
                "-f" => {
                    let v = value()?;
                    let c = v.chars().next().unwrap_or(' ');
                    if !"GMKgmk".contains(c) || v.len() != 1 {
                        return Err(ArgProblem::Format { value: v });
                    }
                    o.units = c;
                    units_given = true;
                }
                "-P" => {
                    let v = value()?;
                    o.headers = v.trim() != "0";
                }
                "-v" => {
                    let v = value()?;
                    o.verbosity = v
                        .trim()
                        .parse()
                        .map_err(|_| ArgProblem::Verbosity { value: v.clone() })?;
                }
                // The CPU rate that may follow is netperf's calibration: not needed here.
                "-c" => {
                    o.local_cpu = true;
                    let _ = opts.optional(&opt);
                }
                "-C" => {
                    o.remote_cpu = true;
                    let _ = opts.optional(&opt);
                }
                "-4" => o.family = Family::V4,
                "-6" => o.family = Family::V6,
                "-j" | "-D" | "-N" => {}
                // Accepted for compatibility; the value has no effect here.
                "-L" | "-T" | "-I" | "-i" | "-o" | "-O" | "-a" | "-A" | "-b" | "-w" | "-W"
                | "-Z" | "-F" | "-n" => {
                    let _ = value()?;
                }
                other => {
                    return Err(ArgProblem::UnknownOption {
                        option: other.into(),
                    });
                }
            }
        }
        Ok(Globals::Done { units_given })
    }

    /// The test's options, after `--`.
    fn test_options(&mut self, test: &[String]) -> Result<(), ArgProblem> {
        let o = self;
        let mut opts = ShortOpts::new(test);
        while let Some(opt) = opts.next_opt() {
            let flag = opt.flag;
            let mut value = || {
                opts.value(&opt)
                    .map(str::to_string)
                    .ok_or_else(|| ArgProblem::MissingTestValue {
                        option: flag.into(),
                    })
            };
            match flag {
                "-m" => o.send_size = pair(&value()?, "send size")?.0,
                "-M" => o.recv_size = pair(&value()?, "receive size")?.0,
                "-s" => {
                    let (a, b) = pair(&value()?, "local socket size")?;
                    o.local_sndbuf = a.unwrap_or(0);
                    o.local_rcvbuf = b.unwrap_or(0);
                }
                "-S" => {
                    let (a, b) = pair(&value()?, "remote socket size")?;
                    o.remote_sndbuf = a.unwrap_or(0);
                    o.remote_rcvbuf = b.unwrap_or(0);
                }
                "-r" => {
                    let (a, b) = pair(&value()?, "request/response size")?;
                    o.request = a.unwrap_or(1);
                    o.response = b.unwrap_or(o.request);
                }
                "-D" => o.nodelay = true,
                "-4" => o.family = Family::V4,
                "-6" => o.family = Family::V6,
                "-o" | "-O" | "-k" => {
                    let names = opts
                        .optional(&opt)
                        .map(|l| {
                            l.split(',')
                                .map(|s| s.trim().to_ascii_uppercase())
                                .filter(|s| !s.is_empty())
                                .collect()
                        })
                        .unwrap_or_default();
                    o.output = Some((flag.chars().nth(1).expect("flag letter"), names));
                }
                // -R (allow routing), -P (data ports), -p (port range), -K (congestion), -T.
                "-R" | "-P" | "-p" | "-K" | "-T" | "-b" | "-c" | "-n" | "-N" => {
                    let _ = value()?;
                }
                other => {
                    return Err(ArgProblem::UnknownTestOption {
                        option: other.into(),
                    });
                }
            }
        }
        Ok(())
    }

    /// RR tests print transactions unless `-f` says otherwise; sizes within bounds.
    fn check(&mut self, units_given: bool) -> Result<(), ArgProblem> {
        let o = self;
        if !units_given && o.test.is_rr() {
            o.units = 'x';
        }
        let max = if o.test.is_udp() { 65507 } else { 16 << 20 };
        for (what, size) in [
            ("send size", o.send_size.unwrap_or(1)),
            ("receive size", o.recv_size.unwrap_or(1)),
            ("request size", o.request),
            ("response size", o.response),
        ] {
            if size == 0 || size > max {
                return Err(ArgProblem::SizeRange { what, size, max });
            }
        }
        Ok(())
    }
}

pub fn main(args: &[String], record: &mut super::Record) -> ExitCode {
    let mut o = match parse(args) {
        Ok(Parsed::Run(o)) => o,
        Ok(Parsed::Help) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Ok(Parsed::Version) => {
            println!(
                "Netperf version 2.7.1 (hostbench {} personality)",
                env!("CARGO_PKG_VERSION")
            );
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprint!("{e}");
            return ExitCode::from(1);
        }
    };
    if let Some(slice) = record.slice {
        // A soak slice: the slice's length replaces -l (a time, never a count).
        o.length = slice.as_secs_f64().round().max(1.0) as i64;
    }
    let (init_snd, init_rcv) = initial_buffers(&o);
    let send_size = o.send_size.unwrap_or(if o.test.is_udp() {
        init_snd.min(65507)
    } else {
        init_snd
    });
    let spec = client_spec(&o, send_size);
    if o.headers && o.verbosity >= 0 && o.output.is_none() {
        println!("{}", banner(&o));
    }
    let result = match client::run(&spec, &Quiet) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("netperf: {e}");
            if matches!(e, crate::workload::net::NetError::Connect { .. }) {
                eprintln!(
                    "establish control: are you sure there is a netserver listening on {} at port {}?",
                    o.host, o.port
                );
            }
            return ExitCode::from(1);
        }
    };
    let out = outcome::to_outcome(&result, &o.host);
    print!("{}", render(&o, &out, (init_snd, init_rcv), send_size));
    record.keep(out);
    ExitCode::SUCCESS
}

/// The test netperf's options ask for: `-l` seconds, or (negative) bytes or
/// transactions.
fn client_spec(o: &Options, send_size: u64) -> ClientSpec {
    let count = if o.length < 0 {
        o.length.unsigned_abs()
    } else {
        0
    };
    let request = TestRequest {
        test: o.test,
        duration_ms: if o.length > 0 {
            o.length as u64 * 1000
        } else {
            0
        },
        bytes: if o.test.is_rr() { 0 } else { count },
        transactions: if o.test.is_rr() { count } else { 0 },
        parallel: 1,
        send_size: send_size.max(1) as u32,
        recv_size: o.recv_size.unwrap_or(send_size).max(1) as u32,
        request_size: o.request as u32,
        response_size: o.response as u32,
        server_sndbuf: o.remote_sndbuf as u32,
        server_rcvbuf: o.remote_rcvbuf as u32,
        rate_bps: 0,
        interval_ms: 0,
        nodelay: o.nodelay,
    };
    let mut spec = ClientSpec::new(&o.host, o.port, request);
    spec.family = o.family;
    spec.local = SockOpts {
        sndbuf: o.local_sndbuf as u32,
        rcvbuf: o.local_rcvbuf as u32,
        nodelay: o.nodelay,
    };
    spec
}

/// The socket sizes netperf shows are those at socket creation, before autotuning.
fn initial_buffers(o: &Options) -> (u64, u64) {
    let ty = if o.test.is_udp() {
        socket2::Type::DGRAM
    } else {
        socket2::Type::STREAM
    };
    match socket2::Socket::new(socket2::Domain::IPV4, ty, None) {
        Ok(s) => {
            let _ = SockOpts {
                sndbuf: o.local_sndbuf as u32,
                rcvbuf: o.local_rcvbuf as u32,
                nodelay: false,
            }
            .apply(&s);
            (
                s.send_buffer_size().unwrap_or(16384) as u64,
                s.recv_buffer_size().unwrap_or(131072) as u64,
            )
        }
        Err(_) => (16384, 131072),
    }
}

fn banner(o: &Options) -> String {
    let fam = match o.family {
        Family::V6 => "AF_INET6",
        _ => "AF_INET",
    };
    let ip = crate::workload::net::resolve(&o.host, o.port, o.family)
        .ok()
        .and_then(|a| a.first().map(|a| a.ip().to_string()))
        .filter(|ip| *ip != o.host)
        .unwrap_or_default();
    let (what, burst) = match o.test {
        TestKind::TcpStream => ("TCP STREAM", ""),
        TestKind::TcpMaerts => ("TCP MAERTS", ""),
        TestKind::TcpRr => ("TCP REQUEST/RESPONSE", " : first burst 0"),
        TestKind::TcpCrr => ("TCP Connect/Request/Response", ""),
        TestKind::UdpStream => ("UDP STREAM", ""),
        TestKind::UdpRr => ("UDP REQUEST/RESPONSE", " : first burst 0"),
    };
    format!(
        "MIGRATED {what} TEST from 0.0.0.0 (0.0.0.0) port 0 {fam} to {} ({ip}) port 0 {fam}{burst}",
        o.host
    )
}

fn units_label(u: char) -> &'static str {
    match u {
        'G' => "GBytes/sec",
        'M' => "MBytes/sec",
        'K' => "KBytes/sec",
        'g' => "10^9bits/sec",
        'k' => "10^3bits/sec",
        'x' => "Trans/s",
        _ => "10^6bits/sec",
    }
}

/// Bytes per second in netperf's `-f` unit.
fn in_units(bytes_per_sec: f64, u: char) -> f64 {
    match u {
        'G' => bytes_per_sec / (1u64 << 30) as f64,
        'M' => bytes_per_sec / (1u64 << 20) as f64,
        'K' => bytes_per_sec / 1024.0,
        'g' => bytes_per_sec * 8.0 / 1e9,
        'k' => bytes_per_sec * 8.0 / 1e3,
        _ => bytes_per_sec * 8.0 / 1e6,
    }
}

fn render(o: &Options, out: &Outcome, init: (u64, u64), send_size: u64) -> String {
    let m = |n: &str| out.metric(n, None).map_or(0.0, |m| m.value);
    let headline = if o.test.is_rr() {
        m(outcome::names::TRANSACTIONS_PER_SEC)
    } else {
        in_units(m(outcome::names::THROUGHPUT), o.units)
    };
    if let Some((kind, names)) = &o.output {
        return selectors(o, out, *kind, names, headline);
    }
    if o.verbosity <= 0 {
        return format!("{headline:.2}\n");
    }
    let elapsed = out.elapsed_s;
    let (lsnd, lrcv) = init;
    let (rsnd, rrcv) = (m("remote_sndbuf") as u64, m("remote_rcvbuf") as u64);
    let cpu = o.local_cpu || o.remote_cpu;
    let (lcpu, rcpu) = (m("local_cpu_percent"), m("remote_cpu_percent"));
    let mut s = String::new();
    match o.test {
        TestKind::TcpStream | TestKind::TcpMaerts => {
            let (recv_sock, send_sock) = if o.test == TestKind::TcpStream {
                (rrcv, lsnd)
            } else {
                (lrcv, rsnd)
            };
            let elapsed = m("receiver_elapsed").max(elapsed);
            if o.headers {
                if cpu {
                    s += "Recv   Send    Send                          Utilization       Service Demand\n";
                    s += "Socket Socket  Message  Elapsed              Send     Recv     Send    Recv\n";
                    s += "Size   Size    Size     Time     Throughput  local    remote   local   remote\n";
                    s += &format!(
                        "bytes  bytes   bytes    secs.    {:<11} % S      % S      us/KB   us/KB\n\n",
                        units_label(o.units).trim_end_matches("ec")
                    );
                } else {
                    s += "Recv   Send    Send                          \n";
                    s += "Socket Socket  Message  Elapsed              \n";
                    s += "Size   Size    Size     Time     Throughput  \n";
                    s += &format!(
                        "bytes  bytes   bytes    secs.    {}  \n\n",
                        units_label(o.units)
                    );
                }
            }
            if cpu {
                let kb = m("bytes_received") / 1024.0;
                let sd = |pct: f64, cpus: f64| {
                    if kb > 0.0 {
                        pct / 100.0 * cpus * elapsed * 1e6 / kb
                    } else {
                        0.0
                    }
                };
                let cpus = out.host.logical_cpus as f64;
                s += &format!(
                    "{recv_sock:6} {send_sock:6} {send_size:6}    {elapsed:<6.2}   {headline:7.2}   {lcpu:<6.2}   {rcpu:<6.2}   {:<6.3}  {:<6.3} \n",
                    sd(lcpu, cpus),
                    sd(rcpu, cpus)
                );
            } else {
                s += &format!(
                    "{recv_sock:6} {send_sock:6} {send_size:6}    {elapsed:<6.2}   {headline:7.2}   \n"
                );
            }
        }
        TestKind::UdpStream => {
            if o.headers {
                s += "Socket  Message  Elapsed      Messages                \n";
                s += "Size    Size     Time         Okay Errors   Throughput\n";
                s += &format!(
                    "bytes   bytes    secs            #      #   {}\n\n",
                    units_label(o.units)
                );
            }
            let sent = in_units(m(outcome::names::SENDER_THROUGHPUT), o.units);
            s += &format!(
                "{lsnd:6}   {send_size:6}   {:<7.2}   {:7} {:6}    {sent:7.2}\n",
                m("sender_elapsed"),
                m("datagrams_sent") as u64,
                m("send_errors") as u64
            );
            s += &format!(
                "{rrcv:6}           {:<7.2}   {:7}           {headline:7.2}\n",
                m("receiver_elapsed").max(m("sender_elapsed")),
                m("datagrams_received") as u64
            );
        }
        TestKind::TcpRr | TestKind::TcpCrr | TestKind::UdpRr => {
            if o.headers {
                if cpu {
                    s += "Local /Remote\n";
                    s += "Socket Size   Request Resp.  Elapsed Trans.   CPU    CPU    S.dem   S.dem\n";
                    s += "Send   Recv   Size    Size   Time    Rate     local  remote local   remote\n";
                    s += "bytes  bytes  bytes   bytes  secs.   per sec  % S    % S    us/Tr   us/Tr\n\n";
                } else {
                    s += "Local /Remote\n";
                    s += "Socket Size   Request  Resp.   Elapsed  Trans.\n";
                    s += "Send   Recv   Size     Size    Time     Rate         \n";
                    s += "bytes  Bytes  bytes    bytes   secs.    per sec   \n\n";
                }
            }
            if cpu {
                let cpus = out.host.logical_cpus as f64;
                let sd = |pct: f64| {
                    if headline > 0.0 {
                        pct / 100.0 * cpus * 1e6 / headline
                    } else {
                        0.0
                    }
                };
                s += &format!(
                    "{lsnd:<6} {lrcv:<6} {:<6}  {:<6} {elapsed:<6.2}  {headline:<8.2} {lcpu:<6.2} {rcpu:<6.2} {:<7.3} {:<7.3}\n",
                    o.request,
                    o.response,
                    sd(lcpu),
                    sd(rcpu)
                );
            } else {
                s += &format!(
                    "{lsnd:<6} {lrcv:<6} {:<6}   {:<6}  {elapsed:<6.2}   {headline:7.2}   \n",
                    o.request, o.response
                );
            }
            s += &format!("{rsnd:<6} {rrcv:<6}\n");
        }
    }
    if o.verbosity >= 2 {
        if let Some(lat) = &out.latency {
            s += &format!(
                "\nLatency (us): min {:.0} mean {:.2} p50 {:.0} p90 {:.0} p99 {:.0} max {:.0} stddev {:.2}\n",
                lat.min_ns / 1e3,
                lat.mean_ns / 1e3,
                lat.percentile(50.0).unwrap_or(0.0) / 1e3,
                lat.percentile(90.0).unwrap_or(0.0) / 1e3,
                lat.percentile(99.0).unwrap_or(0.0) / 1e3,
                lat.max_ns / 1e3,
                m("latency_stddev") / 1e3
            );
        }
        if o.test == TestKind::TcpStream || o.test == TestKind::TcpMaerts {
            s += &format!("\nTCP retransmissions: {}\n", m("retransmits") as u64);
        }
    }
    s
}

/// The omni output selectors (`-- -o/-O/-k LIST`) hostbench can fill.
fn selector(
    o: &Options,
    out: &Outcome,
    name: &str,
    headline: f64,
) -> Option<(&'static str, String)> {
    let m = |n: &str| out.metric(n, None).map(|m| m.value);
    let us = |n: &str| m(n).map(|v| v / 1e3);
    let int_us = |n: &str| us(n).map(|v| format!("{:.0}", v));
    Some(match name {
        "THROUGHPUT" => ("Throughput", format!("{headline:.2}")),
        "THROUGHPUT_UNITS" => (
            "Throughput Units",
            units_label(o.units).replace("/sec", "/s"),
        ),
        "MIN_LATENCY" => ("Minimum Latency Microseconds", int_us("latency_min")?),
        "MAX_LATENCY" => ("Maximum Latency Microseconds", int_us("latency_max")?),
        "MEAN_LATENCY" => (
            "Mean Latency Microseconds",
            format!("{:.2}", us("latency_mean")?),
        ),
        "P50_LATENCY" => (
            "50th Percentile Latency Microseconds",
            int_us("latency_p50")?,
        ),
        "P90_LATENCY" => (
            "90th Percentile Latency Microseconds",
            int_us("latency_p90")?,
        ),
        "P99_LATENCY" => (
            "99th Percentile Latency Microseconds",
            int_us("latency_p99")?,
        ),
        "STDDEV_LATENCY" => (
            "Stddev Latency Microseconds",
            format!("{:.2}", us("latency_stddev")?),
        ),
        "TRANSACTION_RATE" => (
            "Transaction Rate Tran/s",
            format!("{:.3}", m(outcome::names::TRANSACTIONS_PER_SEC)?),
        ),
        "RT_LATENCY" => {
            let tps = m(outcome::names::TRANSACTIONS_PER_SEC)?;
            (
                "Round Trip Latency usec/tran",
                format!("{:.3}", if tps > 0.0 { 1e6 / tps } else { 0.0 }),
            )
        }
        "LOCAL_CPU_UTIL" => (
            "Local CPU Util %",
            format!("{:.2}", m("local_cpu_percent")?),
        ),
        "REMOTE_CPU_UTIL" => (
            "Remote CPU Util %",
            format!("{:.2}", m("remote_cpu_percent")?),
        ),
        "ELAPSED_TIME" => ("Elapsed Time (sec)", format!("{:.2}", out.elapsed_s)),
        "PROTOCOL" => (
            "Protocol",
            if o.test.is_udp() { "UDP" } else { "TCP" }.into(),
        ),
        "LOCAL_TRANSPORT_RETRANS" | "REMOTE_TRANSPORT_RETRANS" => (
            "Transport Retransmissions",
            format!("{:.0}", m("retransmits").unwrap_or(0.0)),
        ),
        "TRANSPORT_MSS" => (
            "Transport MSS bytes",
            format!("{:.0}", m("mss").unwrap_or(-1.0)),
        ),
        "LOCAL_SEND_SIZE" => ("Local Send Size", format!("{}", o.send_size.unwrap_or(0))),
        "REQUEST_SIZE" => ("Request Size Bytes", o.request.to_string()),
        "RESPONSE_SIZE" => ("Response Size Bytes", o.response.to_string()),
        _ => return None,
    })
}

fn selectors(o: &Options, out: &Outcome, kind: char, names: &[String], headline: f64) -> String {
    let default: Vec<String> = if o.test.is_rr() {
        [
            "THROUGHPUT",
            "THROUGHPUT_UNITS",
            "MIN_LATENCY",
            "MEAN_LATENCY",
            "P50_LATENCY",
            "P90_LATENCY",
            "P99_LATENCY",
            "MAX_LATENCY",
            "STDDEV_LATENCY",
        ]
        .map(String::from)
        .to_vec()
    } else {
        ["THROUGHPUT", "THROUGHPUT_UNITS"]
            .map(String::from)
            .to_vec()
    };
    let names = if names.is_empty() { &default } else { names };
    let fields: Vec<(String, &'static str, String)> = names
        .iter()
        .map(|n| {
            let (label, value) =
                selector(o, out, n, headline).unwrap_or(("Unknown Selector", "-".into()));
            (n.clone(), label, value)
        })
        .collect();
    match kind {
        'k' => fields
            .iter()
            .map(|(n, _, v)| format!("{n}={v}\n"))
            .collect(),
        'o' => format!(
            "{}\n{}\n",
            fields.iter().map(|f| f.1).collect::<Vec<_>>().join(","),
            fields
                .iter()
                .map(|f| f.2.as_str())
                .collect::<Vec<_>>()
                .join(",")
        ),
        _ => {
            let width = |f: &(String, &str, String)| f.1.len().max(f.2.len()).min(20);
            format!(
                "{}\n{}\n",
                fields
                    .iter()
                    .map(|f| format!("{:<w$}", f.1, w = width(f)))
                    .collect::<Vec<_>>()
                    .join(" "),
                fields
                    .iter()
                    .map(|f| format!("{:<w$}", f.2, w = width(f)))
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(args: &[&str]) -> Result<Options, ArgError> {
        let a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        match parse(&a)? {
            Parsed::Run(o) => Ok(*o),
            other => panic!("not a test: {other:?}"),
        }
    }

    #[test]
    fn seed_command_lines_parse() {
        let o = opts(&["-H", "58.67.219.89", "-l", "20", "-t", "TCP_STREAM"]).unwrap();
        assert_eq!(
            (o.host.as_str(), o.length, o.test),
            ("58.67.219.89", 20, TestKind::TcpStream)
        );
        let o = opts(&["-t", "UDP_STREAM", "-H", "h", "--", "-m", "1024", "-R", "1"]).unwrap();
        assert_eq!((o.test, o.send_size), (TestKind::UdpStream, Some(1024)));
        let o = opts(&[
            "-H", "h", "-l", "20", "-t", "UDP_RR", "-l", "20", "--", "-R", "1",
        ])
        .unwrap();
        assert_eq!((o.test, o.units), (TestKind::UdpRr, 'x'));
        let o = opts(&[
            "-H",
            "h",
            "-t",
            "TCP_RR",
            "--",
            "-r",
            "64,1K",
            "-o",
            "P50_LATENCY,THROUGHPUT",
        ])
        .unwrap();
        assert_eq!((o.request, o.response), (64, 1024));
        assert_eq!(
            o.output,
            Some(('o', vec!["P50_LATENCY".into(), "THROUGHPUT".into()]))
        );
        let o = opts(&[
            "-Hh", "-l", "-1000", "-f", "g", "-P", "0", "--", "-s", "1M", "-S", ",128k",
        ])
        .unwrap();
        assert_eq!((o.length, o.units, o.headers), (-1000, 'g', false));
        assert_eq!(
            (o.local_sndbuf, o.local_rcvbuf, o.remote_rcvbuf),
            (1 << 20, 1 << 20, 128_000)
        );
    }

    #[test]
    fn bad_lines_are_errors() {
        for args in [
            vec!["-t", "SCTP_STREAM"],
            vec!["-l"],
            vec!["-f", "q"],
            vec!["-Q"],
            vec!["-t", "UDP_STREAM", "--", "-m", "70000"],
            vec!["--", "-m", "abc"],
        ] {
            assert!(opts(&args).is_err(), "{args:?}");
        }
        assert_eq!(
            opts(&["-t", "UDP_STREAM", "--", "-m", "70000"]).unwrap_err(),
            ArgError(ArgProblem::SizeRange {
                what: "send size",
                size: 70000,
                max: 65507
            })
        );
        assert_eq!(
            opts(&["-Q"]).unwrap_err().to_string(),
            format!("netperf: invalid option -- '-Q'\n{USAGE}")
        );
        let a: Vec<String> = vec!["-V".into(), "-Q".into()];
        assert!(matches!(parse(&a), Ok(Parsed::Version)));
    }

    #[test]
    fn convert_follows_netperf() {
        assert_eq!(convert("16K"), Some(16384));
        assert_eq!(convert("16k"), Some(16000));
        assert_eq!(convert("1M"), Some(1 << 20));
        assert_eq!(convert("x"), None);
    }
}

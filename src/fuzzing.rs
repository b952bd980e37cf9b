//! One entry per fuzz target: every parser of outside input, fed raw bytes. The
//! fuzzers (`fuzz/fuzz_targets/`, `cargo +nightly fuzz`) and the replay test
//! (`tests/fuzz_corpus.rs`, stable `cargo test`) call these and nothing else, so a
//! crash the fuzzer found replays the same way in CI. See docs/fuzzing.md.
//!
//! The rule each entry checks is "no panic": results and errors are dropped (whatever
//! their type). Nothing here runs a workload, opens a socket or reads a file: the
//! protocol readers read from the bytes themselves (`&[u8]` is a reader).

use crate::compat::fio::options::{self as fio_options, JobOptions};
use crate::workload::net::iperf3::wire::{self, Params, Results};
use crate::workload::net::protocol::{self, Message};
use crate::workload::redis::{cluster, conn, resp};
use std::io::Read;
use std::path::Path;

/// A target's entry: the fuzzer's bytes in, a panic the only failure.
pub type Target = fn(&[u8]);

/// Every target by its name (a `fuzz/fuzz_targets/` file and a `fuzz/corpus/` folder).
pub const TARGETS: &[(&str, Target)] = &[
    ("fio_jobfile", fio_jobfile),
    ("fio_option", fio_option),
    ("fio_argv", fio_argv),
    ("argv", argv),
    ("units", units),
    ("resp", resp),
    ("redis_cluster_nodes", redis_cluster_nodes),
    ("iperf3_wire", iperf3_wire),
    ("iperf3_json", iperf3_json),
    ("net_protocol", net_protocol),
    ("report_input", report_input),
];

/// Lines of the input, as the parsers' callers decode outside bytes (lossily).
fn lines(data: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(data)
        .lines()
        .map(str::to_string)
        .collect()
}

/// A fio job file's text, with its [global] inheritance and every option value
/// (`fio::parse_job_text`). Relative includes resolve under `/dev/null/`, which no
/// file can be in; an absolute one becomes a comment, so nothing is ever read.
pub fn fio_jobfile(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let absolute_include = |line: &str| {
        line.trim()
            .strip_prefix("include")
            .is_some_and(|rest| rest.starts_with([' ', '\t']) && rest.trim().starts_with('/'))
    };
    let text = if text.lines().any(absolute_include) {
        text.lines()
            .map(|l| if absolute_include(l) { ";" } else { l })
            .collect::<Vec<_>>()
            .join("\n")
    } else {
        text.into_owned()
    };
    crate::compat::fio::parse_job_text(&text, Path::new("/dev/null/fuzz.fio"));
}

/// fio option values, one `name=value` (or bare `name`) per line, applied to one job
/// in order (so `kb_base` changes the sizes after it); each value also through fio's
/// number and time grammars directly.
pub fn fio_option(data: &[u8]) {
    let mut job = JobOptions::default();
    for line in lines(data) {
        let (name, value) = match line.split_once('=') {
            Some((n, v)) => (n.trim(), Some(v)),
            None => (line.trim(), None),
        };
        let _ = fio_options::apply(&mut job, name, value);
        let v = value.unwrap_or(name);
        let _ = fio_options::parse_size(v, 1024);
        let _ = fio_options::parse_size(v, 1000);
        let _ = fio_options::parse_time(v);
    }
}

/// fio's command line, one word per line, through `fio::parse_jobs`: the options, the
/// jobs they define and every value in them.
pub fn fio_argv(data: &[u8]) {
    crate::compat::parse_only("fio", &lines(data));
}

/// A personality's command line: the first line names it (`sysbench`, `dd`, `fio`,
/// `redis-benchmark`, `iperf3`, `netperf`, `netserver`, `ping`, `unixbench`, or
/// `hostbench` for the native one), each further line is a word.
pub fn argv(data: &[u8]) {
    let words = lines(data);
    let Some((name, args)) = words.split_first() else {
        return;
    };
    if name == "hostbench" {
        use clap::Parser;
        let _ = crate::cli::Cli::try_parse_from(words.iter());
        return;
    }
    crate::compat::parse_only(name, args);
}

/// hostbench's sizes and durations (`units`), and sysbench's integers, booleans and
/// sizes: one value per line; what parses is printed back through the formatters.
pub fn units(data: &[u8]) {
    use crate::compat::sysbench::options as sysbench;
    for v in lines(data) {
        if let Ok(n) = crate::units::parse_size(&v) {
            let _ = crate::units::format_bytes(n);
            let _ = crate::units::format_size_g(n);
        }
        if let Ok(d) = crate::units::parse_duration(&v) {
            let _ = crate::units::format_duration(d);
        }
        let _ = sysbench::parse_size(&v);
        let _ = sysbench::parse_int(&v);
        let _ = sysbench::parse_bool(Some(&v));
    }
}

/// A Redis server's byte stream: reply after reply, as the load loops and the
/// blocking queries cut and read them.
pub fn resp(data: &[u8]) {
    let mut pos = 0;
    while let Ok(resp::Scan::Frame { len, .. }) = resp::scan(&data[pos..]) {
        assert!(
            len > 0 && len <= data.len() - pos,
            "a frame of {len} bytes in {} left",
            data.len() - pos
        );
        let frame = &data[pos..pos + len];
        let _ = resp::first_line(frame);
        let _ = conn::strings(frame);
        pos += len;
    }
}

/// A `CLUSTER NODES` reply's text.
pub fn redis_cluster_nodes(data: &[u8]) {
    let entry = conn::Endpoint::Tcp {
        host: "127.0.0.1".into(),
        port: 6379,
    };
    if let Ok(topology) = cluster::parse_nodes(&String::from_utf8_lossy(data), &entry) {
        let _ = topology.owners();
    }
}

/// iperf3's control connection as its server reads it: the cookie, the client's
/// parameters, then state bytes, with the results JSON after `EXCHANGE_RESULTS`; and
/// the first bytes as a UDP connect reply.
pub fn iperf3_wire(data: &[u8]) {
    let _ = wire::is_udp_reply(&data[..data.len().min(4)]);
    let mut r = data;
    let mut cookie = [0u8; wire::COOKIE_SIZE];
    if r.read_exact(&mut cookie).is_err() {
        return;
    }
    let _ = wire::cookie_text(&cookie);
    match wire::read_json(&mut r, wire::MAX_PARAMS_JSON) {
        Ok(v) => drop(Params::from_json(&v)),
        Err(wire::WireError::Read(_)) => return,
        Err(_) => {}
    }
    while let Ok(state) = wire::read_state(&mut r) {
        if state == wire::EXCHANGE_RESULTS {
            match wire::read_json(&mut r, wire::MAX_RESULTS_JSON) {
                Ok(v) => drop(Results::from_json(&v)),
                Err(wire::WireError::Read(_)) => return,
                Err(_) => {}
            }
        }
    }
}

/// An iperf3 JSON message body, read as parameters and as results.
pub fn iperf3_json(data: &[u8]) {
    if let Ok(v) = wire::parse_json(data) {
        if let Ok(p) = Params::from_json(&v) {
            let _ = p.to_json();
        }
        if let Ok(r) = Results::from_json(&v) {
            let _ = r.to_json();
        }
    }
}

/// hostbench's control protocol as its server and client read it: frame after frame,
/// each request checked against the server's limits (with and without a rate cap),
/// tokens unhexed, every message written back out; the first bytes also as a data
/// connection's header.
pub fn net_protocol(data: &[u8]) {
    let _ = protocol::parse_data_header(&data[..data.len().min(protocol::DATA_HEADER_LEN)]);
    let any = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    let limits = crate::workload::net::server::ServerConfig::new(any).limits;
    let capped = protocol::Limits {
        max_rate_bps: 1_000_000_000,
        ..limits
    };
    let mut r = data;
    while let Ok(msg) = protocol::read_message(&mut r) {
        match &msg {
            Message::Start(req) => {
                let _ = crate::workload::net::server::check_request(req, &limits);
                let _ = crate::workload::net::server::check_request(req, &capped);
            }
            Message::Ready { token, .. } => {
                let _ = protocol::unhex_token(token);
            }
            Message::Auth { proof } => {
                let _ = protocol::same(proof, &"0".repeat(64));
            }
            _ => {}
        }
        let _ = msg.kind();
        let _ = protocol::encode(&msg);
    }
}

/// A JSON result as `hostbench report --input FILE` reads it, then rendered in every
/// format the way that command renders it.
pub fn report_input(data: &[u8]) {
    let Ok(outcomes) = crate::cli::report::parse_outcomes(&String::from_utf8_lossy(data)) else {
        return;
    };
    if outcomes.is_empty() {
        return;
    }
    let doc = crate::report::Document::Outcomes(crate::report::Outcomes::new(&outcomes));
    for format in crate::report::Format::ALL {
        let _ = crate::report::render(format, &doc);
    }
}

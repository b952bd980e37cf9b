//! Every personality's command-line parser against random command lines built from
//! its own options and hostile values: each gives options or an error, never a panic.
//! (A byte slice through `-é` once did.) Parsers only: nothing here runs, connects,
//! reads or writes.

use std::panic::{AssertUnwindSafe, catch_unwind};

/// Values that have broken parsers: non-ASCII, empty, huge, negative, odd units.
const VALUES: &[&str] = &[
    "",
    "0",
    "1",
    "-1",
    "4k",
    "1M",
    "2x3",
    "1.5",
    "1e309",
    "NaN",
    "18446744073709551616",
    "99999999999999999999999",
    "0x10",
    "kiB",
    "B",
    "é",
    "-é",
    // A digit then a multi-byte suffix: a unit parser that slices after the first
    // byte of the suffix panicked on these (fio's sizes, 2026-12).
    "1é",
    "4é/50",
    "1kéb",
    "\u{1F600}",
    "a,b,,c",
    "=",
    "--",
    "-",
    "10s",
    "1h",
    "127.0.0.1",
    "::1",
    "randread",
    "json,terse",
    "fdatasync,notrunc",
    "direct",
];

/// xorshift64: the same command lines on every run, so a failure can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick<'a>(&mut self, list: &[&'a str]) -> &'a str {
        list[(self.next() % list.len() as u64) as usize]
    }
}

/// Command lines of up to eight words: options alone, with a separate value, with a
/// glued one (`-p5`, `--bs=4k`, `bs=4k`), and stray values.
fn command_lines(options: &[&str], count: usize) -> Vec<Vec<String>> {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    (0..count)
        .map(|_| {
            let words = rng.next() % 9;
            let mut line = Vec::new();
            for _ in 0..words {
                let opt = rng.pick(options);
                let value = rng.pick(VALUES);
                match rng.next() % 4 {
                    0 => line.push(opt.to_string()),
                    1 => {
                        line.push(opt.to_string());
                        line.push(value.to_string());
                    }
                    2 if opt.ends_with('=') || !opt.starts_with("--") => {
                        line.push(format!("{opt}{value}"))
                    }
                    _ => line.push(format!("{opt}={value}")),
                }
            }
            line
        })
        .collect()
}

fn never_panics<T>(tool: &str, options: &[&str], parse: impl Fn(&[String]) -> T) {
    for line in command_lines(options, 4_000) {
        let outcome = catch_unwind(AssertUnwindSafe(|| drop(parse(&line))));
        assert!(outcome.is_ok(), "{tool} panicked on {line:?}");
    }
}

#[test]
fn dd() {
    let options = [
        "if=",
        "of=",
        "bs=",
        "ibs=",
        "obs=",
        "count=",
        "skip=",
        "seek=",
        "conv=",
        "iflag=",
        "oflag=",
        "status=",
        "--help",
        "--allow-device",
    ];
    never_panics("dd", &options, super::dd::parse);
}

#[test]
fn fio() {
    let options = [
        "--name",
        "--rw",
        "--bs",
        "--bsrange",
        "--bssplit",
        "--size",
        "--iodepth",
        "--ioengine",
        "--runtime",
        "--time_based",
        "--ramp_time",
        "--numjobs",
        "--direct",
        "--rwmixread",
        "--rwmixwrite",
        "--kb_base",
        "--percentile_list",
        "--group_reporting",
        "--loops",
        "--startdelay",
        "--norandommap",
        "--output-format",
        "--nrfiles",
        "--fsync",
        "--stonewall",
        "--section",
        "--minimal",
        "--version",
        "--help",
        "-h",
        "--randseed",
        "--filename",
    ];
    never_panics("fio", &options, super::fio::parse_args);
    // The option values are parsed when the jobs are built (sizes, block sizes,
    // bssplit, durations): that is where `--size=1é` panicked.
    never_panics("fio jobs", &options, super::fio::parse_jobs);
}

#[test]
fn iperf3() {
    let options = [
        "-c",
        "-s",
        "-p",
        "-t",
        "-n",
        "-k",
        "-P",
        "-R",
        "--bidir",
        "-u",
        "-b",
        "-l",
        "-i",
        "-J",
        "-f",
        "-O",
        "-w",
        "-M",
        "-N",
        "-4",
        "-6",
        "-B",
        "--cport",
        "-V",
        "-1",
        "-T",
        "-C",
        "--forceflush",
        "--get-server-output",
        "--udp-counters-64bit",
        "-Z",
        "-A",
        "--connect-timeout",
        "--version",
        "-h",
    ];
    never_panics("iperf3", &options, super::iperf3::parse);
}

#[test]
fn netperf() {
    let options = [
        "-H", "-l", "-t", "-p", "-f", "-P", "-v", "-c", "-C", "-4", "-6", "-j", "-D", "-N", "-L",
        "-T", "--", "-m", "-M", "-s", "-S", "-r", "-o", "-O", "-k", "-R", "-K", "-n",
    ];
    never_panics("netperf", &options, super::netperf::parse);
}

#[test]
fn netserver() {
    // Not -L: it resolves a name, and these tests send nothing anywhere.
    let options = ["-h", "-D", "-p", "-4", "-6", "-v", "-d", "-f", "-N", "-Z"];
    never_panics("netserver", &options, super::netserver::parse);
}

#[test]
fn ping() {
    let options = [
        "-c", "-i", "-W", "-w", "-s", "-t", "-q", "-4", "-6", "-h", "--tcp", "--json",
    ];
    never_panics("ping", &options, super::ping::parse);
}

#[test]
fn redis_benchmark() {
    let options = [
        "-h",
        "-p",
        "-s",
        "-a",
        "--user",
        "-c",
        "-n",
        "-d",
        "--dbnum",
        "-3",
        "--threads",
        "-k",
        "-r",
        "-P",
        "-q",
        "--precision",
        "--csv",
        "-l",
        "-t",
        "-I",
        "-x",
        "--seed",
        "--cluster",
        "--help",
        "--version",
    ];
    never_panics(
        "redis-benchmark",
        &options,
        super::redis_benchmark::options::parse,
    );
}

#[test]
fn unixbench() {
    let options = [
        "-c",
        "-i",
        "-v",
        "-q",
        "dhry2reg",
        "whetstone-double",
        "execl",
        "fstime",
        "index",
        "system",
        "spawn",
        "shell8",
    ];
    never_panics("unixbench", &options, super::unixbench::parse);
}

//! `hostbench redis`: a duration-based Redis load with warm-up, mixes, key
//! distributions, value-size ranges, sliding-window pipelining and an open-loop
//! fixed-rate mode whose latency is corrected for coordinated omission. `--cluster`
//! spreads it over the masters of a Redis Cluster, routed by each key's slot.

use super::save::SaveArgs;
use super::{CliError, finished, parse_duration, parse_thread_count, print_doc};
use crate::host::HostInfo;
use crate::measure::cputime::CpuTime;
use crate::progress::{Expect, Progress};
use crate::report::{Document, Format, Single};
use crate::units::format_ns;
use crate::workload::SpecError;
use crate::workload::redis::cluster::{self, ClusterRoutes};
use crate::workload::redis::conn::{Endpoint, REPLY_TIMEOUT, RedisError, Setup};
use crate::workload::redis::keys::KeyDist;
use crate::workload::redis::load::{self, LoadSpec, Mix};
use crate::workload::redis::outcome;
use crate::workload::redis::template::Template;
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, Args)]
pub struct RedisArgs {
    /// The Redis server's host name or address.
    #[arg(long, default_value = "127.0.0.1", value_name = "HOST")]
    server: String,
    /// Server port.
    #[arg(long, short = 'p', default_value_t = 6379)]
    port: u16,
    /// Unix socket path (instead of host and port).
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
    /// ACL user (with --password).
    #[arg(long)]
    user: Option<String>,
    /// Password (AUTH); also read from REDISCLI_AUTH.
    #[arg(long)]
    password: Option<String>,
    /// Redis database number to SELECT (redis-benchmark's --dbnum; the results
    /// database is --db).
    #[arg(long, default_value_t = 0, value_name = "N")]
    dbnum: u32,
    /// Speak RESP3 (HELLO 3).
    #[arg(long)]
    resp3: bool,
    /// The server is a Redis Cluster node: read the masters from it (CLUSTER NODES),
    /// give every connection a socket to each master and send each request to the
    /// master that owns its key's slot.
    #[arg(long)]
    cluster: bool,
    /// Connections in total.
    #[arg(long, short = 'c', default_value_t = 50)]
    connections: usize,
    /// Event-loop threads: N or `all` (default: one per CPU, at most one per connection).
    #[arg(long, value_name = "N", value_parser = parse_thread_count)]
    threads: Option<usize>,
    /// Measured time.
    #[arg(long, default_value = "10s", value_name = "DURATION", value_parser = parse_duration)]
    time: Duration,
    /// Warm-up before measuring (requests due then are not counted).
    #[arg(long, default_value = "2s", value_name = "DURATION", value_parser = parse_duration)]
    warmup: Duration,
    /// SET:GET ratio of the default workload.
    #[arg(long, default_value = "1:10", value_name = "SET:GET")]
    ratio: String,
    /// A command template instead of SET/GET (repeatable): `__key__` is a key of the
    /// run's own, `__data__` a value. Weight it as `3:INCR __key__`.
    #[arg(long = "command", value_name = "TEMPLATE")]
    commands: Vec<String>,
    /// Number of distinct keys.
    #[arg(long, default_value_t = 100_000)]
    keys: u64,
    /// How keys are drawn.
    #[arg(long, value_enum, default_value = "uniform")]
    key_pattern: KeyPattern,
    /// Zipf exponent (with --key-pattern zipf).
    #[arg(long, default_value_t = 1.0)]
    zipf_exponent: f64,
    /// Prefix of every key the run touches.
    #[arg(long, default_value = "hostbench:")]
    key_prefix: String,
    /// Value size in bytes, or a range MIN-MAX drawn uniformly.
    #[arg(long, short = 'd', default_value = "32", value_name = "BYTES|MIN-MAX")]
    data_size: String,
    /// Requests in flight per connection (a sliding window; redis-benchmark's -P).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pipeline: usize,
    /// Open loop at this many requests per second in total (e.g. 20000 or 20000/s).
    #[arg(long, value_name = "RATE")]
    rate: Option<String>,
    /// Seed for keys, values and the mix.
    #[arg(long)]
    seed: Option<u64>,
    /// Print the result as JSON (schema: docs/json.md), with the full histogram.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    save: SaveArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum KeyPattern {
    Uniform,
    Sequential,
    Gaussian,
    Zipf,
}

fn bad(input: impl Into<String>, problem: impl Into<String>, fix: impl Into<String>) -> CliError {
    CliError::Spec(SpecError::new(input, problem, fix))
}

impl RedisArgs {
    pub fn spec(&self) -> Result<LoadSpec, CliError> {
        let endpoint = match &self.socket {
            Some(p) => Endpoint::Unix(p.clone()),
            None => Endpoint::Tcp {
                host: self.server.clone(),
                port: self.port,
            },
        };
        let password = self
            .password
            .clone()
            .or_else(|| std::env::var("REDISCLI_AUTH").ok());
        if self.user.is_some() && password.is_none() {
            return Err(bad("--user", "a user needs a password", "add --password"));
        }
        if self.cluster && self.dbnum != 0 {
            return Err(bad(
                format!("--cluster --dbnum {}", self.dbnum),
                "a Redis Cluster has only database 0",
                "drop --dbnum",
            ));
        }
        if !(1..=10_000).contains(&self.connections) {
            return Err(bad(
                format!("--connections {}", self.connections),
                "out of range",
                "use 1 to 10000",
            ));
        }
        if !(1..=100_000).contains(&self.pipeline) {
            return Err(bad(
                format!("--pipeline {}", self.pipeline),
                "out of range",
                "use 1 to 100000",
            ));
        }
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let threads = self.threads.unwrap_or(cpus).min(self.connections);
        if threads == 0 || threads > 1024 {
            return Err(bad(
                format!("--threads {threads}"),
                "out of range",
                "use 1 to 1024",
            ));
        }
        if self.time.is_zero() {
            return Err(bad(
                "--time 0",
                "nothing would be measured",
                "give a duration such as 10s",
            ));
        }
        if self.keys == 0 {
            return Err(bad("--keys 0", "no keys to use", "give at least 1"));
        }
        let mix = if self.commands.is_empty() {
            let (set, get) = self
                .ratio
                .split_once(':')
                .and_then(|(a, b)| {
                    Some((a.trim().parse::<u32>().ok()?, b.trim().parse::<u32>().ok()?))
                })
                .filter(|(a, b)| a + b > 0)
                .ok_or_else(|| {
                    bad(
                        format!("--ratio {}", self.ratio),
                        "not a SET:GET ratio",
                        "write it as two whole numbers, e.g. 1:10 or 1:0",
                    )
                })?;
            [("SET __key__ __data__", set), ("GET __key__", get)]
                .into_iter()
                .filter(|(_, w)| *w > 0)
                .map(|(c, w)| Mix {
                    command: c.into(),
                    weight: w,
                })
                .collect()
        } else {
            self.commands
                .iter()
                .map(|c| weighted(c))
                .collect::<Result<Vec<_>, _>>()?
        };
        for m in &mix {
            Template::parse(&m.command)?;
        }
        let value_size = parse_range(&self.data_size)?;
        let key_dist = match self.key_pattern {
            KeyPattern::Uniform => KeyDist::Uniform,
            KeyPattern::Sequential => KeyDist::Sequential,
            KeyPattern::Gaussian => KeyDist::Gaussian {
                stddev_fraction: 1.0 / 6.0,
            },
            KeyPattern::Zipf => {
                if !(self.zipf_exponent > 0.0 && self.zipf_exponent < 5.0) {
                    return Err(bad(
                        format!("--zipf-exponent {}", self.zipf_exponent),
                        "out of range",
                        "use a value above 0 and below 5 (1 is classic zipf)",
                    ));
                }
                KeyDist::Zipf {
                    exponent: self.zipf_exponent,
                }
            }
        };
        let rate = self.rate.as_deref().map(parse_rate).transpose()?;
        Ok(LoadSpec {
            endpoint,
            setup: Setup {
                user: self.user.clone(),
                password,
                db: Some(self.dbnum),
                resp3: self.resp3,
                tracking: false,
                timeout: Some(REPLY_TIMEOUT),
            },
            connections: self.connections,
            threads,
            pipeline: self.pipeline,
            mix,
            keyspace: self.keys,
            key_prefix: self.key_prefix.clone(),
            key_dist,
            value_size,
            duration: self.time,
            warmup: self.warmup,
            rate,
            seed: self.seed.unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(1, |d| d.as_nanos() as u64)
            }),
            // Filled in by `execute` (it asks the server).
            cluster: None,
        })
    }
}

/// `3:INCR __key__` -> weight 3; a template without a weight weighs 1.
fn weighted(text: &str) -> Result<Mix, CliError> {
    if let Some((w, rest)) = text.split_once(':')
        && let Ok(weight) = w.trim().parse::<u32>()
    {
        if weight == 0 {
            return Err(bad(
                format!("--command {text}"),
                "weight 0",
                "drop the command or give it a weight of 1 or more",
            ));
        }
        return Ok(Mix {
            command: rest.trim().into(),
            weight,
        });
    }
    Ok(Mix {
        command: text.trim().into(),
        weight: 1,
    })
}

fn parse_range(s: &str) -> Result<(usize, usize), CliError> {
    let err = || {
        bad(
            format!("--data-size {s}"),
            "not a size or range",
            "give bytes (32) or a range MIN-MAX (16-4096), each 1 to 512 MiB",
        )
    };
    let one = |t: &str| -> Result<usize, CliError> {
        crate::units::parse_size(t.trim())
            .ok()
            .map(|v| v as usize)
            .filter(|v| (1..=512 << 20).contains(v))
            .ok_or_else(err)
    };
    match s.split_once('-') {
        Some((a, b)) => {
            let (a, b) = (one(a)?, one(b)?);
            if a > b {
                return Err(err());
            }
            Ok((a, b))
        }
        None => {
            let v = one(s)?;
            Ok((v, v))
        }
    }
}

fn parse_rate(s: &str) -> Result<f64, CliError> {
    let t = s.trim().trim_end_matches("/s");
    t.parse::<f64>()
        .ok()
        .filter(|r| r.is_finite() && *r > 0.0 && *r <= 1e8)
        .ok_or_else(|| {
            bad(
                format!("--rate {s}"),
                "not a request rate",
                "give requests per second in total, e.g. 20000 or 20000/s",
            )
        })
}

/// Reads the cluster's masters from the node the spec points at.
fn discover_cluster(spec: &LoadSpec) -> Result<Arc<ClusterRoutes>, RedisError> {
    let topology = cluster::fetch(&spec.endpoint, &spec.setup).map_err(|e| match e {
        RedisError::Reply(m) => RedisError::Other(format!(
            "{} refused CLUSTER NODES: {m} (is it a cluster node, started with --cluster-enabled yes? \
             Without --cluster hostbench benchmarks it as a single server)",
            spec.endpoint
        )),
        other => other,
    })?;
    if topology.masters.is_empty() {
        return Err(RedisError::Other(format!(
            "the cluster behind {} has no master serving slots yet: assign slots \
             (redis-cli --cluster create ...) and try again",
            spec.endpoint
        )));
    }
    let unserved = topology.owners().iter().filter(|o| o.is_none()).count();
    if unserved > 0 {
        return Err(RedisError::Other(format!(
            "{unserved} of {} slots have no master in the cluster behind {}: fix it first \
             (redis-cli --cluster check / fix)",
            cluster::SLOTS,
            spec.endpoint
        )));
    }
    Ok(Arc::new(ClusterRoutes::new(&topology, spec.setup.clone())))
}

pub fn execute(args: RedisArgs) -> Result<ExitCode, CliError> {
    let mut spec = args.spec()?;
    args.save.check()?;
    if args.cluster {
        match discover_cluster(&spec) {
            Ok(routes) => spec.cluster = Some(routes),
            Err(e) => {
                eprintln!("hostbench: error: {e}");
                return Ok(ExitCode::from(1));
            }
        }
    }
    let sockets = spec.connections * spec.endpoints().len();
    if let Err(why) =
        crate::workload::redis::conn::raise_fd_limit((sockets + spec.threads * 2 + 16) as u64)
    {
        return Err(CliError::Usage(format!(
            "cannot open {} connections: {why}; raise `ulimit -n` or use fewer --connections",
            spec.connections
        )));
    }
    let host = HostInfo::detect();
    let progress = Progress::new("redis", Expect::Time(spec.warmup + spec.duration));
    let cpu_start = CpuTime::now();
    let result = load::run(&spec, &progress);
    progress.finish();
    let result = match result {
        Ok(r) => r,
        Err(e) => {
            eprintln!("hostbench: error: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    if let Some(e) = &result.error
        && result.measured_nothing
    {
        // Nothing to show: a table of zeros would read as a measurement.
        eprintln!("hostbench: error: {e}; nothing was measured (not saved)");
        return Ok(ExitCode::from(1));
    }
    let cpu = CpuTime::now().since(&cpu_start);
    let mut o = outcome::build(&spec, &result, cpu, host);
    if let Some(e) = &result.error {
        o.note(format!("PARTIAL RESULTS: the run stopped early: {e}"));
    }
    let doc = Document::Outcome(Single {
        lead: Some(lead(&spec)),
        tail: Some(tail(&o, &spec)),
        ..Single::new(&o)
    });
    print_doc(Format::text_or_json(args.json), &doc)?;
    if let Some(e) = result.error {
        // A failed run is not kept: it would be compared as if it were a measurement.
        eprintln!("hostbench: error: {e}; the results above are partial (not saved)");
        return Ok(ExitCode::from(1));
    }
    args.save.save("redis", None, std::slice::from_ref(&o))?;
    Ok(finished(result.interrupted))
}

/// The line over the common text: the target and the load.
fn lead(spec: &LoadSpec) -> String {
    let target = match &spec.cluster {
        Some(c) => format!(
            "redis cluster via {} ({} masters: {})",
            spec.endpoint,
            c.masters.len(),
            c.masters
                .iter()
                .map(|m| m.endpoint.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None => format!("redis at {}", spec.endpoint),
    };
    let mode = match spec.rate {
        Some(r) => format!("open loop at {r:.0} requests/s"),
        None => format!("closed loop, {} in flight per connection", spec.pipeline),
    };
    format!(
        "{} · {} connections on {} threads · {} · {} keys ({:?}) · {} measured after {} warm-up\n",
        target,
        spec.connections,
        spec.threads,
        mode,
        spec.keyspace,
        spec.key_dist,
        crate::units::format_duration(spec.duration),
        crate::units::format_duration(spec.warmup),
    )
}

/// The lines under it: open-loop latency both ways, the per-second rates.
fn tail(o: &crate::model::Outcome, spec: &LoadSpec) -> String {
    let mut out = String::new();
    if let Some(l) = &o.latency
        && spec.rate.is_some()
    {
        let get = |name: &str| {
            o.metric(name, None)
                .map(|m| format_ns(m.value))
                .unwrap_or_default()
        };
        out += &format!(
            "\n  latency          p50 {:>10}  p99 {:>10}  p99.9 {:>10}  max {:>10}   (from the scheduled send: what users see)\n",
            get("latency_p50"),
            get("latency_p99"),
            get("latency_p99.9"),
            format_ns(l.max_ns)
        );
        out += &format!(
            "  uncorrected      p50 {:>10}  p99 {:>10}  p99.9 {:>10}  max {:>10}   (from the actual write: what closed-loop tools report)\n",
            get("uncorrected_latency_p50"),
            get("uncorrected_latency_p99"),
            get("uncorrected_latency_p99.9"),
            get("uncorrected_latency_max")
        );
    }
    if !o.series.is_empty() {
        out += "\n  per second (ops/s):";
        for s in &o.series {
            out += &format!(
                " {:.0}",
                s.values.get("ops_per_sec").copied().unwrap_or(0.0)
            );
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Wrap {
        #[command(flatten)]
        a: RedisArgs,
    }

    fn spec(args: &[&str]) -> Result<LoadSpec, CliError> {
        let mut v = vec!["x"];
        v.extend_from_slice(args);
        Wrap::try_parse_from(v).unwrap().a.spec()
    }

    #[test]
    fn defaults_are_set_get_one_to_ten() {
        let s = spec(&[]).unwrap();
        assert_eq!(s.mix.len(), 2);
        assert_eq!((s.mix[0].weight, s.mix[1].weight), (1, 10));
        assert_eq!(s.value_size, (32, 32));
        assert!(s.rate.is_none());
    }

    #[test]
    fn options_parse() {
        let s = spec(&[
            "--rate",
            "20000/s",
            "-d",
            "16-1K",
            "--command",
            "3:INCR __key__",
            "--command",
            "GET __key__",
        ])
        .unwrap();
        assert_eq!(s.rate, Some(20000.0));
        assert_eq!(s.value_size, (16, 1024));
        assert_eq!(s.mix[0].weight, 3);
        assert_eq!(s.mix[0].command, "INCR __key__");
    }

    #[test]
    fn bad_input_names_the_fix() {
        for args in [
            &["--ratio", "x"][..],
            &["--rate=-5"],
            &["-d", "9-2"],
            &["--command", "FLUSHALL"],
            &["--command", "SET foo bar"],
            &["--connections", "0"],
            &["--key-pattern", "zipf", "--zipf-exponent", "9"],
        ] {
            let e = spec(args).unwrap_err();
            assert!(matches!(e, CliError::Spec(_)), "{args:?}: {e}");
        }
    }
}

//! Redis results as the one result model, for both front ends: `build` for the
//! native load (throughput, latency corrected and, in open-loop runs, uncorrected,
//! per-command figures, the per-second timeline), `lockstep` for redis-benchmark's
//! model (one outcome per test). Both are workload `redis` with the same metric
//! names and units, and `Measured` names their params: what makes a native run and a
//! redis-benchmark test the same measurement.

use super::keys::KeyDist;
use super::load::{LoadResult, LoadSpec, Mix};
use super::lockstep::{LockstepResult, LockstepSpec};
use crate::host::HostInfo;
use crate::measure::cputime::CpuTime;
use crate::measure::histogram::Histogram;
use crate::model::{CpuUse, Latency, Metric, Outcome, Sample, Unit};
use std::collections::BTreeMap;

pub const PERCENTILES: [f64; 6] = [50.0, 90.0, 95.0, 99.0, 99.9, 99.99];
/// The percentiles each outcome carries as metrics (`latency_p50` ...).
const METRIC_PERCENTILES: [f64; 3] = [50.0, 99.0, 99.9];

/// How requests share a connection beyond one in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pipelining {
    /// redis-benchmark's `-P`: a batch is written, all its replies are awaited, then
    /// the next batch; latency is per batch (write to first reply).
    Batch,
    /// The native `--pipeline`: a sliding window, each reply frees a slot at once;
    /// latency is per request.
    Window,
}

/// What a closed (or open) loop measured, in redis-benchmark's words: the params of
/// a Redis outcome, named here once for both front ends. With one request in flight
/// a batch and a window are the same thing (one request, wait for its reply), so
/// `pipelining` only appears above 1, where they differ.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// The command: `SET`, `GET`, `LRANGE_100 (first 100 elements)`, a custom
    /// command line, or a native mix (`mix SET:GET 1:10`).
    pub test: String,
    /// `-c`: connections.
    pub clients: usize,
    /// `-P`: requests per connection in flight.
    pub pipeline: usize,
    pub pipelining: Pipelining,
    /// `-d`: value size in bytes (or a native range `16-4096`); None where it does
    /// not apply (a custom command carries its own).
    pub data_size: Option<String>,
    /// `-r`: keys drawn at random below this; None: one fixed key.
    pub keyspace: Option<u64>,
    pub cluster: bool,
    /// `-k 0`: a new connection per batch.
    pub reconnect: bool,
    /// `-3` / `--resp3`.
    pub resp3: bool,
    /// `--enable-tracking`.
    pub tracking: bool,
}

impl Measured {
    pub fn apply(&self, o: &mut Outcome) {
        o.param("test", &self.test);
        o.param("clients", self.clients);
        o.param("pipeline", self.pipeline);
        if self.pipeline > 1 {
            o.param(
                "pipelining",
                match self.pipelining {
                    Pipelining::Batch => "batch",
                    Pipelining::Window => "window",
                },
            );
        }
        if let Some(d) = &self.data_size {
            o.param("data-size", d);
        }
        if let Some(k) = self.keyspace {
            o.param("keyspace", k);
        }
        if self.cluster {
            o.param("cluster", "yes");
        }
        if self.reconnect {
            o.param("keepalive", 0);
        }
        if self.resp3 {
            o.param("protocol", "resp3");
        }
        if self.tracking {
            o.param("tracking", "on");
        }
    }

    /// A native run: its mix as the test, its window as the pipeline.
    pub fn native(spec: &LoadSpec) -> Self {
        let (lo, hi) = spec.value_size;
        Measured {
            test: native_test(&spec.mix),
            clients: spec.connections,
            pipeline: spec.pipeline,
            pipelining: Pipelining::Window,
            data_size: Some(if lo == hi {
                lo.to_string()
            } else {
                format!("{lo}-{hi}")
            }),
            keyspace: Some(spec.keyspace),
            cluster: spec.cluster.is_some(),
            reconnect: false,
            resp3: spec.setup.resp3,
            tracking: spec.setup.tracking,
        }
    }
}

/// The native mix as a test: `SET`, `GET` or `INCR` alone are redis-benchmark's
/// tests of that name (one command on a random key, a `-d` value); a SET/GET mix is
/// `mix SET:GET 1:10`; anything else is its templates.
pub fn native_test(mix: &[Mix]) -> String {
    let known = |m: &Mix| match m.command.as_str() {
        "SET __key__ __data__" => Some("SET"),
        "GET __key__" => Some("GET"),
        "INCR __key__" => Some("INCR"),
        _ => None,
    };
    match mix {
        [one] => known(one).map_or_else(|| one.command.clone(), str::to_string),
        [set, get] if known(set) == Some("SET") && known(get) == Some("GET") => {
            format!("mix SET:GET {}:{}", set.weight, get.weight)
        }
        many => format!(
            "mix {}",
            many.iter()
                .map(|m| format!("{}:{}", m.weight, m.command))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Native params beyond the shared ones: the open loop's rate and a key pattern
/// other than uniform (redis-benchmark's `-r` draws uniformly).
fn native_params(spec: &LoadSpec, o: &mut Outcome) {
    Measured::native(spec).apply(o);
    if let Some(rate) = spec.rate {
        o.param("rate", format!("{rate}/s"));
    }
    match spec.key_dist {
        KeyDist::Uniform => {}
        KeyDist::Sequential => o.param("key-pattern", "sequential"),
        KeyDist::Gaussian { .. } => o.param("key-pattern", "gaussian"),
        KeyDist::Zipf { exponent } => {
            o.param("key-pattern", "zipf");
            o.param("zipf-exponent", exponent);
        }
    }
}

pub fn build(spec: &LoadSpec, result: &LoadResult, cpu: CpuTime, host: HostInfo) -> Outcome {
    let spec_json = serde_json::to_value(spec).unwrap_or_default();
    let mut o = Outcome::new("redis", spec_json, host);
    native_params(spec, &mut o);
    let m = &result.measured;
    let secs = result.elapsed.as_secs_f64().max(1e-9);
    let count = m.count();
    o.elapsed_s = result.elapsed.as_secs_f64();
    o.interrupted = result.interrupted;
    o.cpu_time = CpuUse::over(&cpu, result.elapsed + spec.warmup);
    o.push(Metric::new(
        "ops_per_sec",
        count as f64 / secs,
        Unit::OpsPerSec,
    ));
    o.push(Metric::new("operations", count as f64, Unit::Count));
    if let Some(rate) = spec.rate {
        o.push(Metric::new("target_ops_per_sec", rate, Unit::OpsPerSec));
    }
    let lat = latency(&m.corrected, m.min_ns, m.max_ns, m.sum_ns);
    if lat.count > 0 {
        push_percentiles(&mut o, "latency", &lat);
    }
    if m.max_ns > 0 {
        o.push(Metric::new(
            "latency_max",
            m.max_ns as f64,
            Unit::Nanoseconds,
        ));
    }
    if spec.rate.is_some() {
        // Only its max is kept: bounded above (an uncorrected time is never longer
        // than the corrected one of the same request, so the corrected min is no floor).
        for p in METRIC_PERCENTILES {
            if let Some(ns) = m
                .uncorrected
                .percentile_within(p, 0.0, m.uncorrected_max_ns as f64)
            {
                o.push(Metric::new(
                    &format!("uncorrected_latency_p{}", pct(p)),
                    ns,
                    Unit::Nanoseconds,
                ));
            }
        }
        o.push(Metric::new(
            "uncorrected_latency_max",
            m.uncorrected_max_ns as f64,
            Unit::Nanoseconds,
        ));
    }
    if spec.mix.len() > 1 {
        for (mix, (n, h)) in spec.mix.iter().zip(&m.per_command) {
            let name = mix
                .command
                .split_whitespace()
                .next()
                .unwrap_or("")
                .to_uppercase();
            o.push(Metric::new("ops_per_sec", *n as f64 / secs, Unit::OpsPerSec).variant(&name));
            // Within the extremes of all commands: none is kept per command.
            if let Some(ns) = h.percentile_within(99.0, lat.min_ns, lat.max_ns) {
                o.push(Metric::new("latency_p99", ns, Unit::Nanoseconds).variant(&name));
            }
        }
    }
    if let Some(m) = cpu_per_op(cpu, count) {
        o.push(m);
    }
    o.latency = Some(lat);

    let whole = result.elapsed.as_secs() as usize;
    o.series = m
        .timeline
        .iter()
        .take(whole.max(1))
        .enumerate()
        .filter(|(i, _)| *i < whole || result.elapsed.as_secs_f64() >= (*i + 1) as f64)
        .map(|(i, &(n, sum))| {
            let mut values = BTreeMap::new();
            values.insert("ops_per_sec".into(), n as f64);
            if n > 0 {
                values.insert("mean_latency_ns".into(), sum as f64 / n as f64);
            }
            Sample {
                at_s: (i + 1) as f64,
                span_s: 1.0,
                values,
            }
        })
        .collect();

    if spec.rate.is_some() {
        o.note(
            "open loop: latency is timed from when each request was due on the schedule \
             (corrected for coordinated omission); uncorrected_* figures time it from the actual write",
        );
        if m.never_sent > 0 {
            o.note(format!(
                "{} requests fell due but could not be sent before the end (window full): counted with the wait they had",
                m.never_sent
            ));
        }
        if let Some(rate) = spec.rate
            && (count as f64 / secs) < rate * 0.95
        {
            o.note(format!(
                "the target rate of {rate:.0}/s was not reached: the server or the client could not keep up; latency shows the queueing"
            ));
        }
    } else {
        o.note(format!(
            "closed loop: {} connections, {} request(s) in flight each; latency per request from write to reply",
            spec.connections, spec.pipeline
        ));
    }
    if let Some(c) = &spec.cluster {
        o.push(Metric::new("redirects", m.redirects as f64, Unit::Count));
        o.note(format!(
            "cluster: {} masters; each connection holds a socket to every master and sends each request to the owner of its key's slot",
            c.masters.len()
        ));
        if m.redirects > 0 {
            o.note(format!(
                "{} requests were redirected (MOVED/ASK: slots were moving) and are not counted as operations",
                m.redirects
            ));
        }
    }
    if m.unanswered > 0 {
        o.note(format!(
            "{} requests got no reply within the drain time after the end",
            m.unanswered
        ));
    }
    if result.interrupted {
        o.note("interrupted: the run was stopped early; figures cover the part that ran");
    }
    o.note(format!("client: {} event-loop thread(s)", spec.threads));
    o
}

/// The client's CPU time per operation (both front ends).
fn cpu_per_op(cpu: CpuTime, count: u64) -> Option<Metric> {
    (count > 0).then(|| {
        Metric::new(
            "cpu_per_op",
            (cpu.user_s + cpu.system_s) * 1e9 / count as f64,
            Unit::Nanoseconds,
        )
    })
}

/// One redis-benchmark test as it ran.
#[derive(Debug, Clone, Copy)]
pub struct LockstepTest<'a> {
    /// As redis-benchmark titles it (`SET`, `MSET (10 keys)`), or the custom
    /// command line.
    pub title: &'a str,
    /// `-d` for the default tests; None for a custom command (its text is the test).
    pub data_size: Option<usize>,
}

/// A redis-benchmark test as an outcome: the same metrics as a native run
/// (`ops_per_sec`, `latency_p50`, ... in ns, `cpu_per_op`), from the test's HDR
/// histogram (µs, redis-benchmark's resolution).
pub fn lockstep(
    spec: &LockstepSpec,
    test: LockstepTest<'_>,
    result: &LockstepResult,
    cpu: CpuTime,
    host: HostInfo,
) -> Outcome {
    let mut o = Outcome::new("redis", lockstep_spec_json(spec, test), host);
    lockstep_measured(spec, test).apply(&mut o);
    let secs = result.elapsed.as_secs_f64().max(1e-9);
    o.elapsed_s = result.elapsed.as_secs_f64();
    o.interrupted = result.interrupted;
    o.cpu_time = CpuUse::over(&cpu, result.elapsed);
    let h = &result.histogram;
    o.push(Metric::new(
        "ops_per_sec",
        result.finished as f64 / secs,
        Unit::OpsPerSec,
    ));
    o.push(Metric::new(
        "operations",
        result.finished as f64,
        Unit::Count,
    ));
    if !h.is_empty() {
        let lat = Latency::from_hdr(h, &PERCENTILES);
        push_percentiles(&mut o, "latency", &lat);
        o.push(Metric::new("latency_max", lat.max_ns, Unit::Nanoseconds));
        o.latency = Some(lat);
    }
    if let Some(m) = cpu_per_op(cpu, result.finished) {
        o.push(m);
    }
    o.note(if spec.pipeline > 1 {
        format!(
            "redis-benchmark's closed loop: {} clients each write a batch of {} requests and wait for \
             all replies; latency per batch, from its write to the first reply, counted once per reply",
            spec.clients, spec.pipeline
        )
    } else {
        format!(
            "redis-benchmark's closed loop: {} clients, one request in flight each; latency from write to reply",
            spec.clients
        )
    });
    if let Some(d) = spec.duration {
        o.note(format!(
            "time-bound: batches started for {} (a soak slice), not a request count",
            crate::units::format_duration(d)
        ));
    }
    if let Some(e) = &result.error {
        o.note(format!(
            "PARTIAL RESULTS: stopped after {} requests: {e}",
            result.finished
        ));
    }
    if result.interrupted {
        o.note("interrupted: the test was stopped early; figures cover the part that ran");
    }
    o.note(format!("client: {} event-loop thread(s)", spec.threads));
    o
}

fn lockstep_measured(spec: &LockstepSpec, test: LockstepTest<'_>) -> Measured {
    Measured {
        test: test.title.to_string(),
        clients: spec.clients,
        pipeline: spec.pipeline,
        pipelining: Pipelining::Batch,
        data_size: test.data_size.map(|d| d.to_string()),
        keyspace: spec.keyspace,
        cluster: spec.cluster.is_some(),
        reconnect: !spec.keepalive,
        resp3: spec.setup.resp3,
        tracking: spec.setup.tracking,
    }
}

fn lockstep_spec_json(spec: &LockstepSpec, test: LockstepTest<'_>) -> serde_json::Value {
    let masters: Vec<String> = spec
        .cluster
        .iter()
        .flat_map(|c| c.masters.iter().map(|m| m.endpoint.to_string()))
        .collect();
    serde_json::json!({
        "endpoint": spec.endpoint,
        "setup": spec.setup,
        "test": test.title,
        "clients": spec.clients,
        "threads": spec.threads,
        "requests": spec.duration.is_none().then_some(spec.requests),
        "duration": spec.duration.map(|d| d.as_secs_f64()),
        "pipeline": spec.pipeline,
        "keepalive": spec.keepalive,
        "keyspace": spec.keyspace,
        "data_size": test.data_size,
        "precision": spec.precision,
        "cluster_masters": masters,
    })
}

/// `NAME_p50`, `NAME_p99`, `NAME_p99.9` from the latency's (bounded) percentiles.
fn push_percentiles(o: &mut Outcome, name: &str, lat: &Latency) {
    for p in METRIC_PERCENTILES {
        if let Some(ns) = lat.percentile(p) {
            o.push(Metric::new(
                &format!("{name}_p{}", pct(p)),
                ns,
                Unit::Nanoseconds,
            ));
        }
    }
}

fn pct(p: f64) -> String {
    if p.fract() == 0.0 {
        format!("{p:.0}")
    } else {
        format!("{p}")
    }
}

fn latency(h: &Histogram, min: u64, max: u64, sum: u128) -> Latency {
    Latency::from_histogram(h, min, max, sum, &PERCENTILES)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::hdr::HdrHistogram;
    use crate::workload::redis::conn::{Endpoint, Setup};
    use crate::workload::redis::load::Measured as Raw;
    use std::time::Duration;

    fn endpoint() -> Endpoint {
        Endpoint::Tcp {
            host: "127.0.0.1".into(),
            port: 6379,
        }
    }

    fn lockstep_spec(pipeline: usize, keyspace: Option<u64>) -> LockstepSpec {
        LockstepSpec {
            endpoint: endpoint(),
            setup: Setup::default(),
            clients: 50,
            threads: 1,
            requests: 2000,
            duration: None,
            pipeline,
            keepalive: true,
            command: b"PING\r\n".to_vec(),
            keyspace,
            seed: 1,
            precision: 3,
            cluster: None,
        }
    }

    fn native_spec(mix: &[(&str, u32)], pipeline: usize) -> LoadSpec {
        LoadSpec {
            endpoint: endpoint(),
            setup: Setup::default(),
            connections: 50,
            threads: 2,
            pipeline,
            mix: mix
                .iter()
                .map(|(c, w)| Mix {
                    command: c.to_string(),
                    weight: *w,
                })
                .collect(),
            keyspace: 100_000,
            key_prefix: "hostbench:".into(),
            key_dist: KeyDist::Uniform,
            value_size: (3, 3),
            duration: Duration::from_secs(2),
            warmup: Duration::ZERO,
            rate: None,
            seed: 1,
            cluster: None,
        }
    }

    fn value(o: &Outcome, name: &str) -> f64 {
        o.metric(name, None)
            .unwrap_or_else(|| panic!("no {name}"))
            .value
    }

    #[test]
    fn a_redis_benchmark_test_becomes_an_outcome() {
        let mut histogram = HdrHistogram::redis_benchmark(3);
        histogram.record_n(200, 1900);
        histogram.record_n(1000, 100);
        // Percentiles are the HDR buckets' highest equivalents (in µs), as
        // redis-benchmark prints them, in ns.
        let at = |p: f64| histogram.value_at_percentile(p) as f64 * 1e3;
        let (p50, p99, max) = (at(50.0), at(99.0), histogram.max() as f64 * 1e3);
        assert!((p50 / 200_000.0 - 1.0).abs() < 0.05 && (p99 / 1e6 - 1.0).abs() < 0.05);
        let result = LockstepResult {
            histogram,
            finished: 2000,
            elapsed_ms: 500,
            elapsed: Duration::from_millis(500),
            error: None,
            interrupted: false,
        };
        let cpu = CpuTime {
            user_s: 0.1,
            system_s: 0.1,
        };
        let test = LockstepTest {
            title: "SET",
            data_size: Some(3),
        };
        let o = lockstep(
            &lockstep_spec(1, Some(100_000)),
            test,
            &result,
            cpu,
            HostInfo::default(),
        );
        assert_eq!(o.workload, "redis");
        assert_eq!(value(&o, "ops_per_sec"), 4000.0);
        assert_eq!(value(&o, "operations"), 2000.0);
        assert_eq!(value(&o, "latency_p50"), p50);
        assert_eq!(value(&o, "latency_p99"), p99);
        assert_eq!(value(&o, "latency_max"), max);
        assert!((value(&o, "cpu_per_op") - 100_000.0).abs() < 1e-6);
        assert_eq!(
            o.metric("latency_p99", None).unwrap().unit,
            Unit::Nanoseconds
        );
        let params: Vec<(&str, &str)> = o
            .params
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            params,
            [
                ("clients", "50"),
                ("data-size", "3"),
                ("keyspace", "100000"),
                ("pipeline", "1"),
                ("test", "SET")
            ]
        );
        let l = o.latency.unwrap();
        assert_eq!(l.count, 2000);
        assert_eq!(l.histogram().total(), 2000);

        // Without -r there is no keyspace; -P 16 is a batch; -k 0 reconnects.
        let mut spec = lockstep_spec(16, None);
        spec.keepalive = false;
        let o = lockstep(&spec, test, &result, cpu, HostInfo::default());
        assert_eq!(o.params.get("keyspace"), None);
        assert_eq!(o.params["pipelining"], "batch");
        assert_eq!(o.params["keepalive"], "0");
    }

    #[test]
    fn native_params_name_the_same_measurement() {
        let set = native_spec(&[("SET __key__ __data__", 1)], 1);
        let mut o = Outcome::new("redis", serde_json::Value::Null, HostInfo::default());
        native_params(&set, &mut o);
        let mut rb = Outcome::new("redis", serde_json::Value::Null, HostInfo::default());
        lockstep_measured(
            &lockstep_spec(1, Some(100_000)),
            LockstepTest {
                title: "SET",
                data_size: Some(3),
            },
        )
        .apply(&mut rb);
        assert_eq!(o.params, rb.params);

        let mix = native_spec(&[("SET __key__ __data__", 1), ("GET __key__", 10)], 16);
        let mut o = Outcome::new("redis", serde_json::Value::Null, HostInfo::default());
        native_params(&mix, &mut o);
        assert_eq!(o.params["test"], "mix SET:GET 1:10");
        assert_eq!(o.params["pipelining"], "window");
        assert_eq!(
            native_test(&native_spec(&[("3:INCR __key__", 3), ("GET __key__", 1)], 1).mix),
            "mix 3:3:INCR __key__, 1:GET __key__"
        );
    }

    #[test]
    fn a_native_run_carries_its_params_and_metrics() {
        let spec = native_spec(&[("GET __key__", 1)], 1);
        let mut raw = Raw::new(1, 4);
        for _ in 0..1000 {
            raw.per_command[0].0 += 1;
            raw.per_command[0].1.record(100_000.0);
            raw.corrected.record(100_000.0);
        }
        raw.min_ns = 100_000;
        raw.max_ns = 100_000;
        raw.sum_ns = 100_000 * 1000;
        let result = LoadResult {
            measured: raw,
            elapsed: Duration::from_secs(2),
            error: None,
            interrupted: false,
            measured_nothing: false,
        };
        let o = build(
            &spec,
            &result,
            CpuTime {
                user_s: 0.0,
                system_s: 0.0,
            },
            HostInfo::default(),
        );
        assert_eq!(value(&o, "ops_per_sec"), 500.0);
        assert!((value(&o, "latency_p50") / 100_000.0 - 1.0).abs() < 0.02);
        assert_eq!(o.params["test"], "GET");
        assert_eq!(o.params["data-size"], "3");
        assert_eq!(o.params["keyspace"], "100000");
    }
}

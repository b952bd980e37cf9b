//! The redis-benchmark 7.x personality: its options, its default tests (same
//! commands, keys and payload bytes), its lockstep pipelining and its three output
//! forms. It writes the keys redis-benchmark writes (`key:__rand_int__`, `counter:…`,
//! `mylist`, `myset`, `myzset`, `myhash`, `mystream`) and never flushes anything.
//!
//! `--cluster` reads the masters from the -h/-p node's CLUSTER NODES, prints them as
//! redis-benchmark does, spreads the clients over them and gives every key a hash
//! tag of a slot the client's master owns (see `workload::redis::lockstep`).
//!
//! Every test it prints is kept as one outcome (workload `redis`, converted by
//! `workload::redis::outcome::lockstep` with the native run's metric names). As a
//! soak slice (`Record::slice`) the tests share the slice's length evenly, each
//! bound by time instead of `-n`. `--timeout` (hostbench's own) bounds how long a
//! silent server is waited for.

pub mod options;
pub mod report;
mod tests_list;

use crate::compat::Record;
use crate::host::HostInfo;
use crate::measure::cputime::CpuTime;
use crate::model::Outcome;
use crate::workload::observe::{Observer, Snapshot};
use crate::workload::redis::cluster::{self, ClusterRoutes};
use crate::workload::redis::conn::{self, Endpoint, RedisError, Setup};
use crate::workload::redis::lockstep::{self, LockstepResult, LockstepSpec, Tick};
use crate::workload::redis::outcome::{self, LockstepTest};
use crate::workload::redis::resp;
use options::{Options, Parsed};
use report::{HostConfig, TestResult};
use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub const VERSION: &str = "7.2.6";

pub fn main(args: &[String], record: &mut Record) -> ExitCode {
    let (parsed, warnings) = match options::parse(args) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{}\n", e.0);
            eprint!("{}", usage());
            return ExitCode::from(1);
        }
    };
    for w in &warnings {
        eprintln!("{w}");
    }
    match parsed {
        Parsed::Help => {
            print!("{}", usage());
            ExitCode::SUCCESS
        }
        Parsed::Version => {
            println!(
                "redis-benchmark {VERSION} (hostbench {})",
                env!("CARGO_PKG_VERSION")
            );
            ExitCode::SUCCESS
        }
        Parsed::Run(o) => match run(&o, record) {
            Ok(code) => code,
            Err(e) => {
                eprintln!("{e}");
                ExitCode::from(1)
            }
        },
    }
}

fn setup(o: &Options) -> Setup {
    Setup {
        user: o.user.clone(),
        password: o.password.clone(),
        // A cluster has only database 0: redis-benchmark sends no SELECT there.
        db: (!o.cluster).then_some(o.dbnum),
        resp3: o.resp3,
        tracking: o.tracking,
        timeout: o.timeout,
    }
}

/// What cluster mode learnt before the tests: the masters and their settings.
struct Cluster {
    routes: Arc<ClusterRoutes>,
    configs: Vec<Option<HostConfig>>,
}

/// Fetches the masters from the -h/-p node and prints them as redis-benchmark does
/// (on stdout, even with -q or --csv). An unusable cluster is reported here with
/// redis-benchmark's messages, and the run ends with exit 1.
fn discover_cluster(o: &Options, setup: &Setup) -> Result<Result<Cluster, ExitCode>, RedisError> {
    let entry = o.endpoint();
    let topology = match cluster::fetch(&entry, setup) {
        Ok(t) => t,
        Err(RedisError::Reply(message)) => {
            eprintln!("Cluster node {entry} replied with error:\n{message}");
            eprintln!("Failed to fetch cluster configuration from {entry}");
            return Ok(Err(ExitCode::from(1)));
        }
        Err(e @ RedisError::Other(_)) => {
            eprintln!("{e}");
            eprintln!("Failed to fetch cluster configuration from {entry}");
            return Ok(Err(ExitCode::from(1)));
        }
        Err(e) => return Err(e),
    };
    for skipped in &topology.without_slots {
        println!("WARNING: master node {skipped} has no slots, skipping...");
    }
    if topology.masters.len() <= 1 {
        eprintln!("Invalid cluster: {} node(s).", topology.masters.len());
        eprintln!(
            "(redis-benchmark needs at least two masters with slots; benchmark a single master without --cluster)"
        );
        return Ok(Err(ExitCode::from(1)));
    }
    println!("Cluster has {} master nodes:\n", topology.masters.len());
    let mut configs = Vec::with_capacity(topology.masters.len());
    for (i, m) in topology.masters.iter().enumerate() {
        println!("Master {i}: {} {}", m.id, m.endpoint);
        let config = server_config(&m.endpoint, setup)?;
        if config.is_none() {
            eprintln!("WARNING: Could not fetch node CONFIG {}", m.endpoint);
        }
        configs.push(config);
    }
    println!();
    let _ = std::io::stdout().flush();
    Ok(Ok(Cluster {
        routes: Arc::new(ClusterRoutes::new(&topology, setup.clone())),
        configs,
    }))
}

fn run(o: &Options, record: &mut Record) -> Result<ExitCode, RedisError> {
    let setup = setup(o);
    let cluster = if o.cluster {
        match discover_cluster(o, &setup)? {
            Ok(c) => Some(c),
            Err(code) => return Ok(code),
        }
    } else {
        None
    };
    // As redis-benchmark: one thread per master unless --threads says otherwise.
    let threads = match &cluster {
        Some(c) if o.threads == 0 => c.routes.masters.len(),
        _ => o.threads,
    };
    // Each client is a descriptor; -c 1000 needs more than the usual 1024 soft limit.
    // Clients, one epoll set per thread, stdio and the CONFIG connection.
    let needed = (o.clients + threads + 12) as u64;
    conn::raise_fd_limit(needed).map_err(|why| {
        RedisError::Other(format!(
            "cannot open {} clients: {why}; raise the limit with `ulimit -n {needed}` or use fewer clients (-c)",
            o.clients
        ))
    })?;
    if o.idle {
        let endpoints = match &cluster {
            Some(c) => c
                .routes
                .masters
                .iter()
                .map(|m| m.endpoint.clone())
                .collect(),
            None => vec![o.endpoint()],
        };
        return idle(o, &endpoints, &setup, record.slice);
    }
    let command = custom_command(o)?;
    let host_config = if cluster.is_some() {
        None
    } else {
        host_config(o, &setup)?
    };
    let bench = Bench {
        o,
        endpoint: o.endpoint(),
        setup,
        threads,
        host_config,
        cluster,
        command,
        tty: std::io::stdout().is_terminal() && !o.csv,
        seed: o.seed.unwrap_or_else(|| {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0);
            (t as u32) ^ std::process::id()
        }),
        slice: record.slice,
    };
    bench.run(record)
}

/// The custom command after the options, with `-x`'s standard input as its last
/// argument; empty for the default tests.
fn custom_command(o: &Options) -> Result<Vec<String>, RedisError> {
    let mut command = o.command.clone();
    if o.stdin_last_arg && !command.is_empty() {
        let mut data = String::new();
        std::io::stdin()
            .read_to_string(&mut data)
            .map_err(RedisError::Io)?;
        command.push(data);
    }
    Ok(command)
}

/// Everything the tests share once the server is known.
struct Bench<'a> {
    o: &'a Options,
    endpoint: Endpoint,
    setup: Setup,
    /// Event-loop threads (0: redis-benchmark's single-threaded mode, run on one).
    threads: usize,
    host_config: Option<HostConfig>,
    cluster: Option<Cluster>,
    /// A custom command, or empty for the default tests.
    command: Vec<String>,
    /// Whether the `\r` live line is drawn.
    tty: bool,
    seed: u32,
    /// A soak slice: the tests share it evenly, each bound by time, not by -n.
    slice: Option<Duration>,
}

impl Bench<'_> {
    /// The tests, once (or forever with -l), each printed as it ends and kept.
    fn run(&self, record: &mut Record) -> Result<ExitCode, RedisError> {
        let o = self.o;
        if o.csv {
            print!("{}", report::CSV_HEADER);
        }
        loop {
            let tests = self.tests();
            for test in &tests {
                let (text, result, outcome) = self.run_test(test, tests.len())?;
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(text.as_bytes());
                let _ = out.flush();
                // A test cut short by an error is not a measurement; one stopped by
                // Ctrl-C is kept as interrupted, as native runs are.
                if result.error.is_none() && result.finished > 0 {
                    record.keep(outcome);
                }
                if let Some(e) = result.error {
                    return Err(e);
                }
                if result.interrupted {
                    return Ok(ExitCode::from(130));
                }
            }
            // A slice is one round of the tests.
            if !o.loop_forever || self.slice.is_some() || crate::measure::stop_requested() {
                break;
            }
        }
        if !o.csv {
            let _ = std::io::stdout().write_all(b"\n");
        }
        Ok(ExitCode::SUCCESS)
    }

    fn tests(&self) -> Vec<tests_list::Test> {
        if self.command.is_empty() {
            return tests_list::default_tests(self.o);
        }
        if self.o.tests.is_some() {
            eprintln!("WARNING: Option -t is ignored.");
        }
        let mut encoded = Vec::new();
        resp::encode(&mut encoded, &self.command);
        vec![tests_list::Test {
            title: self.command.join(" "),
            command: encoded,
        }]
    }

    fn spec(&self, test: &tests_list::Test, of: usize) -> LockstepSpec {
        let o = self.o;
        let (requests, duration) = match self.slice {
            Some(slice) => (lockstep::UNBOUNDED, Some(slice / of.max(1) as u32)),
            None => (o.requests, None),
        };
        LockstepSpec {
            endpoint: self.endpoint.clone(),
            setup: self.setup.clone(),
            clients: o.clients,
            threads: self.threads.max(1),
            requests,
            duration,
            pipeline: o.pipeline,
            keepalive: o.keepalive,
            command: test.command.clone(),
            keyspace: o.keyspace,
            seed: self.seed,
            precision: o.precision,
            cluster: self.cluster.as_ref().map(|c| Arc::clone(&c.routes)),
        }
    }

    /// Runs one test (of `of`): its report text, raw result and outcome.
    fn run_test(
        &self,
        test: &tests_list::Test,
        of: usize,
    ) -> Result<(String, LockstepResult, Outcome), RedisError> {
        let spec = self.spec(test, of);
        let live = LiveLine::new(&test.title, self.tty);
        let cpu_start = CpuTime::now();
        let result = lockstep::run(&spec, &live)?;
        let cpu = CpuTime::now().since(&cpu_start);
        live.clear();
        let custom = !self.command.is_empty();
        let outcome = outcome::lockstep(
            &spec,
            LockstepTest {
                title: &test.title,
                data_size: (!custom).then_some(self.o.datasize),
            },
            &result,
            cpu,
            HostInfo::detect(),
        );
        let text = self.report(test, &result, custom);
        Ok((text, result, outcome))
    }

    /// The test's report in the form asked for (full, -q or --csv).
    fn report(&self, test: &tests_list::Test, result: &LockstepResult, custom: bool) -> String {
        let o = self.o;
        let budget = match self.slice {
            Some(_) => String::new(),
            None => format!(" of {}", o.requests),
        };
        let partial = match (&result.error, result.interrupted) {
            (Some(e), _) => Some(format!(
                "stopped after {}{budget} requests: {e}",
                result.finished
            )),
            (None, true) => Some(format!(
                "interrupted after {}{budget} requests",
                result.finished
            )),
            _ => None,
        };
        let r = TestResult {
            title: &test.title,
            finished: result.finished,
            elapsed_ms: result.elapsed_ms,
            clients: o.clients,
            datasize: if custom {
                test.command.len()
            } else {
                o.datasize
            },
            keepalive: o.keepalive,
            threads: self.threads,
            host_config: self.host_config.as_ref(),
            cluster: self.cluster.as_ref().map(|c| c.configs.as_slice()),
            histogram: &result.histogram,
            partial,
        };
        if o.csv {
            report::csv(&r)
        } else if o.quiet {
            report::quiet(&r)
        } else {
            report::full(&r)
        }
    }
}

/// `CONFIG GET save` and `CONFIG GET appendonly`, for the header. A server that
/// refuses CONFIG still gets benchmarked (with a warning), one that refuses the
/// credentials does not.
fn host_config(o: &Options, setup: &Setup) -> Result<Option<HostConfig>, RedisError> {
    let config = server_config(&o.endpoint(), setup)?;
    if config.is_none() {
        eprintln!("WARNING: Could not fetch server CONFIG");
    }
    Ok(config)
}

/// One server's `save` and `appendonly` settings; None when it refuses CONFIG, an
/// error when it cannot be reached, does not answer or refuses the credentials.
fn server_config(endpoint: &Endpoint, setup: &Setup) -> Result<Option<HostConfig>, RedisError> {
    let get = |name: &str| -> Result<String, RedisError> {
        let v = conn::query(endpoint, setup, &["CONFIG", "GET", name])?;
        Ok(v.get(1).cloned().unwrap_or_default())
    };
    match get("save").and_then(|save| Ok((save, get("appendonly")?))) {
        Ok((save, appendonly)) => Ok(Some(HostConfig { save, appendonly })),
        Err(
            e
            @ (RedisError::Connect { .. } | RedisError::Setup { .. } | RedisError::NoReply { .. }),
        ) => Err(e),
        Err(RedisError::Reply(m)) if m.starts_with("NOAUTH") || m.starts_with("WRONGPASS") => {
            Err(RedisError::Reply(m))
        }
        Err(_) => Ok(None),
    }
}

/// `-I`: open the clients (spread over `endpoints`) and hold them until Ctrl-C (or,
/// as a soak slice, for the slice's length; nothing is measured either way).
fn idle(
    o: &Options,
    endpoints: &[Endpoint],
    setup: &Setup,
    slice: Option<Duration>,
) -> Result<ExitCode, RedisError> {
    println!(
        "Creating {} idle connections and waiting forever (Ctrl+C when done)",
        o.clients
    );
    let mut held = Vec::with_capacity(o.clients);
    for i in 0..o.clients {
        held.push(conn::connect(&endpoints[i % endpoints.len()], setup)?);
    }
    print!("clients: {}\r", held.len());
    let _ = std::io::stdout().flush();
    let started = std::time::Instant::now();
    while !crate::measure::stop_requested() {
        if slice.is_some_and(|s| started.elapsed() >= s) {
            println!();
            return Ok(ExitCode::SUCCESS);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    println!();
    Ok(ExitCode::from(130))
}

/// The `\r` live line, on a terminal only (piped output stays clean): the observer
/// of a test's run, drawn from its 250 ms ticks.
struct LiveLine<'a> {
    title: &'a str,
    enabled: bool,
    state: Mutex<LineState>,
}

#[derive(Default)]
struct LineState {
    last_len: usize,
    previous: Option<Tick>,
}

impl Observer for LiveLine<'_> {
    fn snapshot(&self, snapshot: &Snapshot<'_>) {
        if let Snapshot::Redis(tick) = snapshot {
            self.tick(**tick);
        }
    }
}

impl<'a> LiveLine<'a> {
    fn new(title: &'a str, enabled: bool) -> Self {
        Self {
            title,
            enabled,
            state: Mutex::new(LineState::default()),
        }
    }

    fn tick(&self, t: Tick) {
        if !self.enabled {
            return;
        }
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let prev = state.previous.unwrap_or(Tick {
            elapsed: Duration::ZERO,
            finished: 0,
            latency_sum_us: 0,
            latency_count: 0,
        });
        let dt = (t.elapsed.as_millis() as f32 - prev.elapsed.as_millis() as f32) / 1000.0;
        let inst_rps = (t.finished - prev.finished) as f32 / dt;
        let overall = t.finished as f32 / (t.elapsed.as_millis() as f32 / 1000.0);
        let mean = |sum: u64, n: u64| sum as f64 / n as f64 / 1000.0;
        let line = report::progress(
            self.title,
            if inst_rps.is_finite() { inst_rps } else { 0.0 },
            if overall.is_finite() { overall } else { 0.0 },
            mean(
                t.latency_sum_us - prev.latency_sum_us,
                t.latency_count - prev.latency_count,
            ),
            mean(t.latency_sum_us, t.latency_count),
        );
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(report::blank(state.last_len).as_bytes());
        let _ = out.write_all(line.as_bytes());
        let _ = out.flush();
        state.last_len = line.len();
        state.previous = Some(t);
    }

    fn clear(&self) {
        if self.enabled {
            let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
            let _ = std::io::stdout().write_all(report::blank(state.last_len).as_bytes());
        }
    }
}

fn usage() -> String {
    format!(
        "Usage: redis-benchmark [OPTIONS] [COMMAND ARGS...]   (hostbench {hb}, redis-benchmark {VERSION} compatible)

Options:
 -h <hostname>      Server hostname (default 127.0.0.1)
 -p <port>          Server port (default 6379)
 -s <socket>        Server socket (overrides host and port)
 -a <password>      Password for Redis Auth
 --user <username>  Used to send ACL style 'AUTH username pass'. Needs -a.
 -u <uri>           Server URI: redis://[user:]password@host:port/dbnum
 -c <clients>       Number of parallel connections (default 50)
 -n <requests>      Total number of requests (default 100000)
 -d <size>          Data size of SET/GET value in bytes (default 3)
 --dbnum <db>       SELECT the specified db number (default 0)
 -3                 Start session in RESP3 protocol mode.
 --threads <num>    Enable multi-thread mode.
 --cluster          Enable cluster mode: read the masters from the -h/-p node
                    (CLUSTER NODES), spread the clients over them (one thread
                    per master unless --threads is given) and put each batch's
                    keys in one slot of the client's master via {{tag}} (default
                    tests use key:{{tag}}:__rand_int__; a custom command must
                    contain {{tag}} in its keys itself).
 --enable-tracking  Send CLIENT TRACKING on before starting benchmark.
 -k <boolean>       1=keep alive 0=reconnect (default 1)
 -r <keyspacelen>   Use random keys for SET/GET/INCR, random values for SADD,
                    random members and scores for ZADD. __rand_int__ in a custom
                    command is replaced by a 12-digit number below keyspacelen.
 -P <numreq>        Pipeline <numreq> requests (default 1, no pipeline).
 -q                 Quiet. Just show query/sec values
 --precision        Number of significant figures of the latency histogram (1..4, default 3)
 --csv              Output in CSV format
 -l                 Loop. Run the tests forever
 -t <tests>         Only run the comma separated list of tests. The test
                    names are the same as the ones produced as output.
                    The -t option is ignored if a specific command is supplied.
 -I                 Idle mode. Just open N idle connections and wait.
 -x                 Read last argument from STDIN.
 --seed <num>       Seed for the random number generator.
 --timeout <sec>    (hostbench) Give up with an error (exit 1) when the server
                    sends no reply for this many seconds (default 10; 0 waits
                    forever, as redis-benchmark does).
 --help             Output this help and exit.
 --version          Output version and exit.

Examples:
 redis-benchmark -c 1000 -n 300000 -t get,set
 redis-benchmark --threads 4 -c 1000 -n 300000 -t get,set -q
 redis-benchmark -r 10000 -n 10000 eval 'return redis.call(\"ping\")' 0

Keys written: key:*, counter:*, mylist, myset, myzset, myhash, mystream (as
redis-benchmark; with --cluster key:{{XYZ}}:*, mylist:{{XYZ}}, ... where XYZ is a hash
tag). Nothing is flushed or deleted.
",
        hb = env!("CARGO_PKG_VERSION")
    )
}

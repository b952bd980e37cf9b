//! The native load: each connection keeps up to `pipeline` requests in flight (a
//! sliding window: a reply frees a slot, which is refilled at once) and every request
//! carries its own timestamps, so latency is per request, not per batch.
//!
//! With a target rate the loop is open: request k of a connection is *due* at a fixed
//! time on a schedule, whether or not the server kept up. Its latency is measured
//! from that due time (corrected for coordinated omission) and, beside it, from the
//! moment it was actually written (uncorrected, what closed-loop tools report).
//! A server stall then shows in the corrected figures as it would to real users.
//!
//! Against a Redis Cluster every connection holds one socket per master and sends
//! each request to the master that owns its key's slot; the window counts requests
//! in flight over all of them. A MOVED reply re-points that slot for the thread,
//! and redirected requests are counted apart, not as operations.

use super::cluster::{self, ClusterRoutes};
use super::conn::{self, Endpoint, Pump, RedisError, ReplyReader, Setup};
use super::keys::{KeyDist, KeyPicker};
use super::poll::{self, Epoll, Timer};
use super::template::{self, Template};
use crate::measure::histogram::{Histogram, Layout};
use crate::measure::rng::Xoroshiro128Plus;
use crate::workload::observe::{Observer, Progress};
use serde::Serialize;
use std::collections::VecDeque;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Debug, Clone, Serialize)]
pub struct Mix {
    pub command: String,
    pub weight: u32,
}

#[derive(Debug, Clone, Serialize)]
pub struct LoadSpec {
    pub endpoint: Endpoint,
    pub setup: Setup,
    pub connections: usize,
    pub threads: usize,
    /// Requests in flight per connection.
    pub pipeline: usize,
    pub mix: Vec<Mix>,
    pub keyspace: u64,
    pub key_prefix: String,
    pub key_dist: KeyDist,
    /// Value sizes in bytes, drawn uniformly from this inclusive range.
    pub value_size: (usize, usize),
    #[serde(with = "secs")]
    pub duration: Duration,
    #[serde(with = "secs")]
    pub warmup: Duration,
    /// Requests per second over all connections (open loop); None = closed loop.
    pub rate: Option<f64>,
    pub seed: u64,
    /// Cluster mode: the masters (`endpoint` is then where they were learnt from).
    #[serde(
        rename = "cluster_masters",
        serialize_with = "masters",
        skip_serializing_if = "Option::is_none"
    )]
    pub cluster: Option<Arc<ClusterRoutes>>,
}

impl LoadSpec {
    /// Where each connection opens a socket: the server, or every master.
    pub fn endpoints(&self) -> Vec<Endpoint> {
        match &self.cluster {
            Some(c) => c.masters.iter().map(|m| m.endpoint.clone()).collect(),
            None => vec![self.endpoint.clone()],
        }
    }
}

fn masters<S: serde::Serializer>(c: &Option<Arc<ClusterRoutes>>, s: S) -> Result<S::Ok, S::Error> {
    let names: Vec<String> = c
        .iter()
        .flat_map(|c| c.masters.iter().map(|m| m.endpoint.to_string()))
        .collect();
    serde::Serialize::serialize(&names, s)
}

mod secs {
    pub fn serialize<S: serde::Serializer>(
        d: &std::time::Duration,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }
}

/// How long replies to requests sent before the end are still awaited.
const DRAIN: Duration = Duration::from_secs(2);
const TIMER_TOKEN: u64 = u64::MAX;
/// An epoll token is `connection << SOCK_BITS | socket`.
const SOCK_BITS: u32 = 16;

/// What a thread measured.
#[derive(Debug, Clone)]
pub struct Measured {
    /// Latency from the due time (open loop) or the send time (closed loop).
    pub corrected: Histogram,
    /// Latency from the actual write (open loop only).
    pub uncorrected: Histogram,
    pub per_command: Vec<(u64, Histogram)>,
    pub min_ns: u64,
    pub max_ns: u64,
    pub sum_ns: u128,
    pub uncorrected_max_ns: u64,
    /// Per second of the measured part: (replies, latency sum in ns).
    pub timeline: Vec<(u64, u128)>,
    /// Requests that were due but never written before the end (open loop).
    pub never_sent: u64,
    /// Requests written whose reply did not come within the drain time.
    pub unanswered: u64,
    /// Cluster mode: requests answered with MOVED or ASK (not counted as operations).
    pub redirects: u64,
    pub bytes_out: u64,
}

impl Measured {
    pub fn new(commands: usize, seconds: usize) -> Self {
        Self {
            corrected: Histogram::new(Layout::NATIVE),
            uncorrected: Histogram::new(Layout::NATIVE),
            per_command: (0..commands)
                .map(|_| (0, Histogram::new(Layout::NATIVE)))
                .collect(),
            min_ns: u64::MAX,
            max_ns: 0,
            sum_ns: 0,
            uncorrected_max_ns: 0,
            timeline: vec![(0, 0); seconds],
            never_sent: 0,
            unanswered: 0,
            redirects: 0,
            bytes_out: 0,
        }
    }

    pub fn count(&self) -> u64 {
        self.per_command.iter().map(|c| c.0).sum()
    }

    fn merge(&mut self, o: &Measured) {
        self.corrected.merge(&o.corrected);
        self.uncorrected.merge(&o.uncorrected);
        for (a, b) in self.per_command.iter_mut().zip(&o.per_command) {
            a.0 += b.0;
            a.1.merge(&b.1);
        }
        self.min_ns = self.min_ns.min(o.min_ns);
        self.max_ns = self.max_ns.max(o.max_ns);
        self.sum_ns += o.sum_ns;
        self.uncorrected_max_ns = self.uncorrected_max_ns.max(o.uncorrected_max_ns);
        for (a, b) in self.timeline.iter_mut().zip(&o.timeline) {
            a.0 += b.0;
            a.1 += b.1;
        }
        self.never_sent += o.never_sent;
        self.unanswered += o.unanswered;
        self.redirects += o.redirects;
        self.bytes_out += o.bytes_out;
    }
}

#[derive(Debug)]
pub struct LoadResult {
    pub measured: Measured,
    /// Length of the measured part actually run.
    pub elapsed: Duration,
    pub error: Option<RedisError>,
    pub interrupted: bool,
    /// The run went its course and not one measured request was answered (`error`
    /// says why): there is nothing to report.
    pub measured_nothing: bool,
}

/// What the workers and the watching thread share.
#[derive(Default)]
struct Shared {
    /// Ctrl-C, the observer or another thread's error: everyone stops.
    stop: AtomicBool,
    /// Replies so far over all threads (the observer's progress).
    replies: AtomicU64,
    error: Mutex<Option<RedisError>>,
}

impl Shared {
    fn fail(&self, e: RedisError) {
        let mut slot = self.error.lock().unwrap_or_else(|p| p.into_inner());
        slot.get_or_insert(e);
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// One socket of a connection: to the server, or to one master of a cluster.
struct Sock {
    fd: OwnedFd,
    reader: ReplyReader,
    /// (due ns, written ns, command index) per request in flight, oldest first.
    inflight: VecDeque<(u64, u64, u8)>,
    out: Vec<u8>,
    out_off: usize,
    wants_write: bool,
}

struct Conn {
    /// One socket, or one per master (in the masters' order) in cluster mode.
    socks: Vec<Sock>,
    /// Requests in flight over all its sockets: the window.
    in_flight: usize,
    next_due: u64,
    interval: u64,
}

impl LoadSpec {
    /// Event-loop threads: as asked, at most one per connection.
    fn worker_threads(&self) -> usize {
        self.threads.clamp(1, self.connections.max(1))
    }

    /// Every connection's sockets, opened before anything is timed, by thread.
    fn open_connections(&self, threads: usize) -> Result<Vec<Vec<Vec<OwnedFd>>>, RedisError> {
        let endpoints = self.endpoints();
        let mut per_thread: Vec<Vec<Vec<OwnedFd>>> = (0..threads).map(|_| Vec::new()).collect();
        for i in 0..self.connections {
            let fds = endpoints
                .iter()
                .map(|e| conn::connect(e, &self.setup))
                .collect::<Result<Vec<_>, _>>()?;
            per_thread[i % threads].push(fds);
            if i % 64 == 63 {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        Ok(per_thread)
    }

    /// The server, or the masters, for messages.
    fn peer(&self) -> String {
        self.endpoints()
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Runs the load. The observer is called from the calling thread: progress (time
/// since the load began, warm-up included, and replies so far) about ten times a
/// second, and asked whether to stop. A run in which the server answered nothing
/// ends with `error` set ([`RedisError::NoReply`]): it measured nothing.
pub fn run(spec: &LoadSpec, observer: &dyn Observer) -> Result<LoadResult, RedisError> {
    let templates: Vec<Template> = spec
        .mix
        .iter()
        .map(|m| Template::parse(&m.command).map_err(|e| RedisError::Other(e.to_string())))
        .collect::<Result<_, _>>()?;
    let threads = spec.worker_threads();
    let per_thread = spec.open_connections(threads)?;
    let shared = Shared::default();
    let seconds = spec.duration.as_secs() as usize + 2;
    let mut total = Measured::new(templates.len(), seconds);
    // A common start a little ahead, so every thread's schedule begins together.
    let t0 = poll::now_ns() + 5_000_000;
    let interrupted = std::thread::scope(|scope| {
        let handles: Vec<_> = per_thread
            .into_iter()
            .enumerate()
            .map(|(t, fds)| {
                let (shared, templates) = (&shared, &templates);
                scope.spawn(move || {
                    let mut w = Worker::new(spec, templates, t, threads, t0, shared);
                    if let Err(e) = w.run(fds, t) {
                        shared.fail(e);
                    }
                    w.measured
                })
            })
            .collect();
        let interrupted = watch(&shared, &handles, observer, t0);
        for h in handles {
            if let Ok(m) = h.join() {
                total.merge(&m);
            }
        }
        interrupted
    });
    let measure_from = t0 + spec.warmup.as_nanos() as u64;
    let ended = poll::now_ns().min(measure_from + spec.duration.as_nanos() as u64);
    let mut error = shared.error.into_inner().unwrap_or_else(|p| p.into_inner());
    let measured_nothing = error.is_none() && !interrupted && total.count() == 0;
    if measured_nothing {
        error = Some(nothing_measured(
            spec,
            shared.replies.load(Ordering::Relaxed),
        ));
    }
    let elapsed = if error.is_some() || interrupted {
        Duration::from_nanos(ended.saturating_sub(measure_from))
    } else {
        spec.duration
    };
    Ok(LoadResult {
        measured: total,
        elapsed,
        error,
        interrupted,
        measured_nothing,
    })
}

/// Why a run that ended normally measured nothing.
fn nothing_measured(spec: &LoadSpec, replies: u64) -> RedisError {
    if replies == 0 {
        return RedisError::NoReply {
            endpoint: spec.peer(),
            waited: spec.warmup + spec.duration + DRAIN,
        };
    }
    RedisError::Other(format!(
        "{} answered {replies} request(s), none of them due in the measured {}: nothing was measured",
        spec.peer(),
        crate::units::format_duration(spec.duration)
    ))
}

/// The calling thread while the workers run: progress and stop requests. True when
/// the observer asked to stop.
fn watch<T>(
    shared: &Shared,
    handles: &[std::thread::ScopedJoinHandle<'_, T>],
    observer: &dyn Observer,
    t0: u64,
) -> bool {
    let mut asked = false;
    let mut next_progress = 0u64;
    while !handles.iter().all(|h| h.is_finished()) {
        if !asked && observer.stop_requested() {
            asked = true;
            shared.stop.store(true, Ordering::Relaxed);
        }
        let now = poll::now_ns();
        if now >= next_progress {
            observer.progress(&Progress::at(
                Duration::from_nanos(now.saturating_sub(t0)),
                shared.replies.load(Ordering::Relaxed),
            ));
            next_progress = now + 100_000_000;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    asked
}

struct Worker<'a> {
    spec: &'a LoadSpec,
    templates: &'a [Template],
    /// Cumulative weights for picking a command.
    cumulative: Vec<u32>,
    keys: KeyPicker,
    rng: Xoroshiro128Plus,
    key_buf: Vec<u8>,
    key_width: usize,
    data: Vec<u8>,
    scratch: Vec<u8>,
    measure_from: u64,
    end: u64,
    t0: u64,
    shared: &'a Shared,
    measured: Measured,
    /// Cluster mode: the master (socket index) that owns each slot, as this thread
    /// knows it.
    owners: Option<Vec<Option<u16>>>,
}

/// One thread's event loop: its connections, epoll set and schedule timer.
struct Loop {
    conns: Vec<Conn>,
    epoll: Epoll,
    timer: Timer,
    /// When the timer is set to fire (u64::MAX: not set).
    armed: u64,
    /// Closed loop: every window was filled once (replies refill them afterwards).
    filled: bool,
    ready: Vec<(u64, u32)>,
}

impl<'a> Worker<'a> {
    fn new(
        spec: &'a LoadSpec,
        templates: &'a [Template],
        thread: usize,
        threads: usize,
        t0: u64,
        shared: &'a Shared,
    ) -> Self {
        let mut acc = 0;
        let cumulative = spec
            .mix
            .iter()
            .map(|m| {
                acc += m.weight;
                acc
            })
            .collect();
        let seed = spec.seed ^ (thread as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let measure_from = t0 + spec.warmup.as_nanos() as u64;
        let key_width = (spec.keyspace.max(2) - 1).to_string().len();
        // Printable, varied bytes: values compress no better than real ones would.
        let mut r = Xoroshiro128Plus::seeded(seed ^ 0xda7a);
        let data = (0..spec.value_size.1)
            .map(|_| b'a' + (r.next_u64() % 26) as u8)
            .collect();
        Self {
            spec,
            templates,
            cumulative,
            keys: KeyPicker::new(
                spec.keyspace,
                spec.key_dist,
                seed,
                (thread as u64, threads as u64),
            ),
            rng: Xoroshiro128Plus::seeded(seed ^ 0x5eed),
            key_buf: Vec::with_capacity(spec.key_prefix.len() + key_width),
            key_width,
            data,
            scratch: vec![0u8; 64 * 1024],
            measure_from,
            end: measure_from + spec.duration.as_nanos() as u64,
            t0,
            shared,
            measured: Measured::new(templates.len(), spec.duration.as_secs() as usize + 2),
            owners: spec.cluster.as_ref().map(|c| c.owners()),
        }
    }

    fn stopping(&self) -> bool {
        self.shared.stop.load(Ordering::Relaxed)
    }

    fn run(&mut self, fds: Vec<Vec<OwnedFd>>, thread: usize) -> Result<(), RedisError> {
        let mut lp = self.open(fds, thread)?;
        while poll::now_ns() < self.t0 {
            std::hint::spin_loop();
        }
        while self.step(&mut lp)? {}
        self.account_unfinished(&lp.conns);
        Ok(())
    }

    /// Registers the thread's sockets and sets each connection's schedule.
    fn open(&self, fds: Vec<Vec<OwnedFd>>, thread: usize) -> Result<Loop, RedisError> {
        let sockets: usize = fds.iter().map(Vec::len).sum();
        let epoll = Epoll::new(sockets + 1).map_err(RedisError::Io)?;
        let timer = Timer::new().map_err(RedisError::Io)?;
        epoll
            .add(timer.fd(), TIMER_TOKEN, poll::READ)
            .map_err(RedisError::Io)?;
        let threads = self.spec.worker_threads();
        let mut conns: Vec<Conn> = Vec::with_capacity(fds.len());
        for (i, conn_fds) in fds.into_iter().enumerate() {
            let mut socks = Vec::with_capacity(conn_fds.len());
            for (s, fd) in conn_fds.into_iter().enumerate() {
                epoll
                    .add(fd.as_raw_fd(), sock_token(i, s), poll::READ)
                    .map_err(RedisError::Io)?;
                socks.push(Sock {
                    fd,
                    reader: ReplyReader::default(),
                    inflight: VecDeque::with_capacity(self.spec.pipeline),
                    out: Vec::with_capacity(4096),
                    out_off: 0,
                    wants_write: false,
                });
            }
            // Global connection number, to spread due times evenly over all of them.
            let (next_due, interval) = self.schedule((i * threads + thread) as u64);
            conns.push(Conn {
                socks,
                in_flight: 0,
                next_due,
                interval: interval.max(1),
            });
        }
        let ready = Vec::with_capacity(conns.len() + 1);
        Ok(Loop {
            conns,
            epoll,
            timer,
            armed: u64::MAX,
            filled: false,
            ready,
        })
    }

    /// Open loop: (first due time, interval) of connection number `global`.
    fn schedule(&self, global: u64) -> (u64, u64) {
        match self.spec.rate {
            Some(rate) => {
                let gap = 1e9 / rate;
                (
                    self.t0 + (global as f64 * gap) as u64,
                    (gap * self.spec.connections as f64) as u64,
                )
            }
            None => (0, 0),
        }
    }

    /// One turn of the loop: send what is due, wait for events, handle them. False
    /// when the run is over (time, drain, or a stop).
    fn step(&mut self, lp: &mut Loop) -> Result<bool, RedisError> {
        let now = poll::now_ns();
        let sending = now < self.end && !self.stopping();
        if !sending {
            let waiting = lp.conns.iter().any(|c| c.in_flight > 0);
            if self.stopping() || !waiting || now >= self.end + DRAIN.as_nanos() as u64 {
                return Ok(false);
            }
        }
        let mut timeout_ms = 50;
        if sending {
            self.send(lp, now)?;
            timeout_ms = ((self.end.saturating_sub(now)) / 1_000_000).clamp(1, 50) as i32;
        }
        self.dispatch(lp, timeout_ms)?;
        Ok(true)
    }

    /// Open loop: what is due, and the timer for the next due time. Closed loop: the
    /// first fill of every window.
    fn send(&mut self, lp: &mut Loop, now: u64) -> Result<(), RedisError> {
        if self.spec.rate.is_some() {
            let mut wake = u64::MAX;
            for (i, c) in lp.conns.iter_mut().enumerate() {
                self.send_due(c, now)?;
                if c.in_flight < self.spec.pipeline && c.next_due < self.end {
                    wake = wake.min(c.next_due);
                }
                self.flush(c, &lp.epoll, i)?;
            }
            if wake != u64::MAX && wake != lp.armed {
                lp.timer.arm_at(wake).map_err(RedisError::Io)?;
                lp.armed = wake;
            }
        } else if !lp.filled {
            for (i, c) in lp.conns.iter_mut().enumerate() {
                self.fill(c, now)?;
                self.flush(c, &lp.epoll, i)?;
            }
            lp.filled = true;
        }
        Ok(())
    }

    /// Waits up to `timeout_ms` and handles what became ready.
    fn dispatch(&mut self, lp: &mut Loop, timeout_ms: i32) -> Result<(), RedisError> {
        let mut ready = std::mem::take(&mut lp.ready);
        ready.clear();
        ready.extend(
            lp.epoll
                .wait(timeout_ms)
                .map_err(RedisError::Io)?
                .iter()
                .map(|e| (e.u64, e.events)),
        );
        let open_loop = self.spec.rate.is_some();
        for &(token, events) in &ready {
            if token == TIMER_TOKEN {
                lp.timer.clear();
                lp.armed = u64::MAX;
                continue;
            }
            let i = (token >> SOCK_BITS) as usize;
            let s = (token & ((1 << SOCK_BITS) - 1)) as usize;
            if events & poll::WRITE != 0 {
                flush_sock(&mut lp.conns[i].socks[s], &lp.epoll, token)
                    .map_err(|e| self.at_node(s, e))?;
            }
            if events & !poll::WRITE != 0 {
                let c = &mut lp.conns[i];
                self.on_readable(c, s)?;
                if !open_loop && !self.stopping() && poll::now_ns() < self.end {
                    self.fill(c, 0)?;
                    self.flush(c, &lp.epoll, i)?;
                }
            }
        }
        lp.ready = ready;
        Ok(())
    }

    /// What was due and never written, or written and never answered: an open loop
    /// counts them with the wait they had so far (a lower bound), so a stall at the
    /// end cannot hide.
    fn account_unfinished(&mut self, conns: &[Conn]) {
        let now = poll::now_ns();
        let open_loop = self.spec.rate.is_some();
        for c in conns {
            self.measured.unanswered += c.in_flight as u64;
            if open_loop && !self.stopping() {
                for &(due, _, _) in c.socks.iter().flat_map(|s| &s.inflight) {
                    if due >= self.measure_from {
                        self.record_corrected_only(now.saturating_sub(due), u64::MAX);
                    }
                }
                let mut due = c.next_due.max(self.measure_from);
                while due < self.end {
                    self.record_corrected_only(now.saturating_sub(due), u64::MAX);
                    self.measured.never_sent += 1;
                    due += c.interval;
                }
            }
        }
    }

    #[inline]
    fn pick_command(&mut self) -> usize {
        if self.cumulative.len() == 1 {
            return 0;
        }
        let total = *self.cumulative.last().expect("a command");
        let r = (self.rng.next_u64() % total as u64) as u32;
        self.cumulative.iter().position(|&c| r < c).unwrap_or(0)
    }

    /// Encodes one request into the output buffer of the socket it goes to.
    #[inline]
    fn push_request(&mut self, c: &mut Conn, due: u64, now: u64) -> Result<(), RedisError> {
        let cmd = self.pick_command();
        let key = self.keys.draw();
        template::key_into(
            &mut self.key_buf,
            self.spec.key_prefix.as_bytes(),
            self.key_width,
            key,
        );
        let (lo, hi) = self.spec.value_size;
        let size = if hi > lo {
            lo + (self.rng.next_u64() % (hi - lo + 1) as u64) as usize
        } else {
            lo
        };
        let sock = match &self.owners {
            None => &mut c.socks[0],
            Some(owners) => {
                let slot = cluster::key_slot(&self.key_buf);
                let Some(master) = owners[usize::from(slot)] else {
                    return Err(RedisError::Other(format!(
                        "no master serves slot {slot} (of key {}): is the cluster complete? \
                         (redis-cli --cluster check)",
                        String::from_utf8_lossy(&self.key_buf)
                    )));
                };
                &mut c.socks[usize::from(master)]
            }
        };
        let before = sock.out.len();
        self.templates[cmd].encode(&mut sock.out, &self.key_buf, &self.data[..size]);
        self.measured.bytes_out += (sock.out.len() - before) as u64;
        sock.inflight.push_back((due, now, cmd as u8));
        c.in_flight += 1;
        Ok(())
    }

    /// Closed loop: keep the window full.
    fn fill(&mut self, c: &mut Conn, now: u64) -> Result<(), RedisError> {
        if c.in_flight >= self.spec.pipeline {
            return Ok(());
        }
        let now = if now == 0 { poll::now_ns() } else { now };
        while c.in_flight < self.spec.pipeline {
            self.push_request(c, now, now)?;
        }
        Ok(())
    }

    /// Open loop: write every request whose time has come, as far as the window allows.
    fn send_due(&mut self, c: &mut Conn, now: u64) -> Result<(), RedisError> {
        while c.next_due <= now && c.next_due < self.end && c.in_flight < self.spec.pipeline {
            let due = c.next_due;
            self.push_request(c, due, now)?;
            c.next_due += c.interval;
        }
        Ok(())
    }

    /// Writes what each socket of connection `i` has queued.
    fn flush(&mut self, c: &mut Conn, epoll: &Epoll, i: usize) -> Result<(), RedisError> {
        for (s, sock) in c.socks.iter_mut().enumerate() {
            flush_sock(sock, epoll, sock_token(i, s)).map_err(|e| self.at_node(s, e))?;
        }
        Ok(())
    }

    /// Names the master in an error from one of its sockets (cluster mode).
    fn at_node(&self, sock: usize, e: RedisError) -> RedisError {
        match &self.spec.cluster {
            Some(c) => RedisError::AtNode {
                node: c.masters[sock].endpoint.clone(),
                source: Box::new(e),
            },
            None => e,
        }
    }

    fn on_readable(&mut self, c: &mut Conn, s: usize) -> Result<(), RedisError> {
        let now = poll::now_ns();
        let mut replies = 0u64;
        let mut scratch = std::mem::take(&mut self.scratch);
        let sock = &mut c.socks[s];
        let in_flight = &mut c.in_flight;
        let inflight = &mut sock.inflight;
        let pumped = sock
            .reader
            .pump(sock.fd.as_raw_fd(), &mut scratch, |frame, error| {
                let Some((due, sent, cmd)) = inflight.pop_front() else {
                    return Err(RedisError::Other(
                        "the server sent a reply nobody asked for: the connection is out of step"
                            .into(),
                    ));
                };
                *in_flight -= 1;
                if error {
                    let message = super::resp::first_line(frame);
                    if self.redirected(&message) {
                        return Ok(());
                    }
                    if message.starts_with("MOVED ") {
                        return Err(RedisError::Other(format!(
                            "Error from server: {message} (the server is a Redis Cluster node: add --cluster)"
                        )));
                    }
                    return Err(RedisError::Reply(message));
                }
                if due >= self.measure_from && due < self.end {
                    self.record(now, due, sent, cmd as usize);
                }
                replies += 1;
                Ok(())
            });
        self.scratch = scratch;
        if replies > 0 {
            self.shared.replies.fetch_add(replies, Ordering::Relaxed);
        }
        let closed = pumped.map_err(|e| self.at_node(s, e))? == Pump::Closed;
        if closed {
            return Err(self.at_node(s, RedisError::Closed));
        }
        Ok(())
    }

    /// Cluster mode: a MOVED or ASK reply is a redirect, counted apart. MOVED also
    /// re-points the slot to the master it names, when that is one of ours.
    fn redirected(&mut self, message: &str) -> bool {
        let Some(owners) = &mut self.owners else {
            return false;
        };
        let mut words = message.split(' ');
        let kind = words.next();
        if kind != Some("MOVED") && kind != Some("ASK") {
            return false;
        }
        self.measured.redirects += 1;
        let slot = words.next().and_then(|w| w.parse::<usize>().ok());
        let target = words.next().and_then(|w| w.rsplit_once(':'));
        if let (Some("MOVED"), Some(slot), Some((host, port)), Some(routes)) =
            (kind, slot, target, &self.spec.cluster)
            && slot < cluster::SLOTS
        {
            let host = host.trim_start_matches('[').trim_end_matches(']');
            let named = routes.masters.iter().position(|m| {
                matches!(&m.endpoint, Endpoint::Tcp { host: h, port: p }
                    if h == host && p.to_string() == port)
            });
            if let Some(master) = named {
                owners[slot] = Some(master as u16);
            }
        }
        true
    }

    #[inline]
    fn record(&mut self, now: u64, due: u64, sent: u64, cmd: usize) {
        let corrected = now.saturating_sub(due);
        let m = &mut self.measured;
        m.per_command[cmd].0 += 1;
        m.per_command[cmd].1.record(corrected as f64);
        if self.spec.rate.is_some() {
            let uncorrected = now.saturating_sub(sent);
            m.uncorrected.record(uncorrected as f64);
            m.uncorrected_max_ns = m.uncorrected_max_ns.max(uncorrected);
        }
        self.record_corrected_only(corrected, now.saturating_sub(self.measure_from));
    }

    fn record_corrected_only(&mut self, ns: u64, at: u64) {
        let m = &mut self.measured;
        m.corrected.record(ns as f64);
        m.min_ns = m.min_ns.min(ns);
        m.max_ns = m.max_ns.max(ns);
        m.sum_ns += ns as u128;
        let second = (at / 1_000_000_000) as usize;
        if let Some(slot) = m.timeline.get_mut(second) {
            slot.0 += 1;
            slot.1 += ns as u128;
        }
    }
}

fn sock_token(conn: usize, sock: usize) -> u64 {
    ((conn as u64) << SOCK_BITS) | sock as u64
}

fn flush_sock(s: &mut Sock, epoll: &Epoll, token: u64) -> Result<(), RedisError> {
    if s.out_off < s.out.len() {
        s.out_off += conn::write(s.fd.as_raw_fd(), &s.out[s.out_off..])?;
        if s.out_off == s.out.len() {
            s.out.clear();
            s.out_off = 0;
        }
    }
    let want = !s.out.is_empty();
    if want != s.wants_write {
        let interest = if want {
            poll::READ | poll::WRITE
        } else {
            poll::READ
        };
        epoll
            .modify(s.fd.as_raw_fd(), token, interest)
            .map_err(RedisError::Io)?;
        s.wants_write = want;
    }
    Ok(())
}

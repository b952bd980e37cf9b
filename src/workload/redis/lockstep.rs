//! redis-benchmark's execution model: every client writes a batch of `pipeline`
//! copies of one command, waits for all replies, records the batch's latency (from
//! the write to the first readable event) once per reply, and starts the next batch
//! while the shared request budget lasts. Numbers stay comparable with
//! redis-benchmark's because the model is the same; the client is cheaper because it
//! writes from the read handler (no epoll registration per batch), reads many replies
//! per system call, rewrites keys in place and records into per-thread histograms.
//!
//! Against a cluster each client stays with one master (client i with master
//! i mod masters) and every `{tag}` of its batch is overwritten, per batch, with the
//! hash tag of a random slot that master owns, so the whole pipeline lands on it.
//! A MOVED or ASK reply (a resharding) makes the loop fetch the slot layout again.

use super::cluster::{self, ClusterRoutes};
use super::conn::{self, Endpoint, Pump, RedisError, ReplyReader, Setup};
use super::keys::GlibcRandom;
use super::poll::{self, Epoll};
use crate::measure::hdr::HdrHistogram;
use crate::measure::rng::Xoroshiro128Plus;
use crate::workload::observe::{Observer, Progress, Snapshot};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const PLACEHOLDER: &[u8] = b"__rand_int__";
/// Where a cluster run puts a slot's hash tag (`key:{tag}:__rand_int__`).
pub const TAG_PLACEHOLDER: &[u8] = b"{tag}";

#[derive(Debug, Clone)]
pub struct LockstepSpec {
    pub endpoint: Endpoint,
    /// The handshake, and `setup.timeout`: how long the run waits without a single
    /// reply before it gives up (None waits forever).
    pub setup: Setup,
    pub clients: usize,
    /// Event-loop threads (>= 1).
    pub threads: usize,
    /// The request budget shared by all clients (`-n`).
    pub requests: u64,
    /// A time bound instead (a soak slice): no batch starts after this long, those in
    /// flight are finished and counted. Give a budget no run can spend with it.
    pub duration: Option<Duration>,
    pub pipeline: usize,
    pub keepalive: bool,
    /// One command as sent (RESP or inline).
    pub command: Vec<u8>,
    /// `-r`: replace each `__rand_int__` with a 12-digit draw below this.
    pub keyspace: Option<u64>,
    pub seed: u32,
    /// HdrHistogram significant figures.
    pub precision: u32,
    /// Cluster mode: the masters the clients are spread over (`endpoint` is then
    /// only where the layout came from).
    pub cluster: Option<Arc<ClusterRoutes>>,
}

/// A budget no time-bound run reaches, with room to overshoot without overflow.
pub const UNBOUNDED: u64 = u64::MAX / 4;

impl LockstepSpec {
    /// Where client `i` connects.
    fn endpoint_of(&self, client_node: usize) -> &Endpoint {
        match &self.cluster {
            Some(c) => &c.masters[client_node].endpoint,
            None => &self.endpoint,
        }
    }

    /// Names the cluster node in an error from one of its connections.
    fn at_node(&self, client_node: usize, e: RedisError) -> RedisError {
        match (&self.cluster, e) {
            (Some(_), e @ RedisError::AtNode { .. }) => e,
            (Some(_), e) => RedisError::AtNode {
                node: self.endpoint_of(client_node).clone(),
                source: Box::new(e),
            },
            (None, e) => e,
        }
    }

    /// The server, or the masters, for messages.
    fn peer(&self) -> String {
        match &self.cluster {
            Some(c) => c
                .masters
                .iter()
                .map(|m| m.endpoint.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            None => self.endpoint.to_string(),
        }
    }

    /// `pipeline` copies of the command, and where their placeholders are.
    fn batch(&self) -> (Vec<u8>, Vec<usize>, Vec<usize>) {
        let batch = self.command.repeat(self.pipeline);
        let find = |pattern: &[u8]| -> Vec<usize> {
            batch
                .windows(pattern.len())
                .enumerate()
                .filter(|(_, w)| *w == pattern)
                .map(|(i, _)| i)
                .collect()
        };
        let rand_offsets = if self.keyspace.is_some() {
            find(PLACEHOLDER)
        } else {
            Vec::new()
        };
        let tag_offsets = if self.cluster.is_some() {
            find(TAG_PLACEHOLDER)
        } else {
            Vec::new()
        };
        (batch, rand_offsets, tag_offsets)
    }

    /// Opens every client (outside the timed part), spread over the threads.
    fn open_clients(&self) -> Result<Vec<Vec<Client>>, RedisError> {
        let (batch, rand_offsets, tag_offsets) = self.batch();
        let nodes = self.cluster.as_ref().map_or(1, |c| c.masters.len().max(1));
        let threads = self.threads.max(1);
        let mut per_thread: Vec<Vec<Client>> = (0..threads).map(|_| Vec::new()).collect();
        for i in 0..self.clients {
            let node = i % nodes;
            let fd = conn::connect(self.endpoint_of(node), &self.setup)?;
            per_thread[i % threads].push(Client {
                fd: Some(fd),
                reader: ReplyReader::default(),
                batch: batch.clone(),
                rand_offsets: rand_offsets.clone(),
                tag_offsets: tag_offsets.clone(),
                node,
                written: 0,
                pending: 0,
                start_ns: 0,
                latency_us: None,
                wants_write: false,
            });
            // The listen backlog is short: give the server a moment to accept each burst.
            if i % 64 == 63 {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        Ok(per_thread)
    }
}

/// What the loop reports every 250 ms.
#[derive(Debug, Clone, Copy)]
pub struct Tick {
    pub elapsed: Duration,
    pub finished: u64,
    /// Replies and latency sum (µs) since the start.
    pub latency_sum_us: u64,
    pub latency_count: u64,
}

#[derive(Debug)]
pub struct LockstepResult {
    pub histogram: HdrHistogram,
    pub finished: u64,
    /// Wall time of the run in whole milliseconds, as redis-benchmark measures it.
    pub elapsed_ms: u64,
    pub elapsed: Duration,
    pub error: Option<RedisError>,
    pub interrupted: bool,
}

/// Counters every thread shares; each is touched once per batch or per read, not
/// per request.
struct Shared {
    issued: AtomicU64,
    finished: AtomicU64,
    stop: AtomicBool,
    /// The time bound passed: start no more batches.
    closing: AtomicBool,
    error: Mutex<Option<RedisError>>,
}

impl Shared {
    /// Keeps the first error and stops everyone.
    fn fail(&self, e: RedisError) {
        let mut slot = self.error.lock().unwrap_or_else(|p| p.into_inner());
        slot.get_or_insert(e);
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Per-thread progress counters, written by their thread only.
#[derive(Default)]
struct ThreadCounters {
    latency_sum_us: AtomicU64,
    latency_count: AtomicU64,
}

struct Client {
    fd: Option<OwnedFd>,
    reader: ReplyReader,
    /// `pipeline` copies of the command.
    batch: Vec<u8>,
    rand_offsets: Vec<usize>,
    /// Offsets of `{tag}` in `batch` (cluster mode).
    tag_offsets: Vec<usize>,
    /// Index of its master in cluster mode, else 0.
    node: usize,
    written: usize,
    pending: usize,
    start_ns: u64,
    latency_us: Option<u64>,
    wants_write: bool,
}

/// Opens every client (outside the timed part), runs the batches on `threads` event
/// loops and merges what they measured. The observer is called from the calling
/// thread: a `Snapshot::Redis` tick every 250 ms (redis-benchmark's live line),
/// progress (replies so far) about ten times a second, and asked whether to stop.
pub fn run(spec: &LockstepSpec, observer: &dyn Observer) -> Result<LockstepResult, RedisError> {
    let clients = spec.open_clients()?;
    Ok(Run::new(spec).execute(clients, observer))
}

/// One run: the shared counters, the clock, and the threads' histograms.
struct Run<'a> {
    spec: &'a LockstepSpec,
    shared: Shared,
    counters: Vec<ThreadCounters>,
    /// Threads that have finished.
    done: AtomicU64,
    start: Instant,
}

const TICK: Duration = Duration::from_millis(250);
const PROGRESS: Duration = Duration::from_millis(100);

impl<'a> Run<'a> {
    fn new(spec: &'a LockstepSpec) -> Self {
        Run {
            spec,
            shared: Shared {
                issued: AtomicU64::new(0),
                finished: AtomicU64::new(0),
                stop: AtomicBool::new(false),
                closing: AtomicBool::new(false),
                error: Mutex::new(None),
            },
            counters: (0..spec.threads.max(1))
                .map(|_| ThreadCounters::default())
                .collect(),
            done: AtomicU64::new(0),
            start: Instant::now(),
        }
    }

    fn execute(mut self, per_thread: Vec<Vec<Client>>, observer: &dyn Observer) -> LockstepResult {
        self.start = Instant::now();
        let mut histogram = HdrHistogram::redis_benchmark(self.spec.precision);
        let mut interrupted = false;
        std::thread::scope(|scope| {
            let this = &self;
            let handles: Vec<_> = per_thread
                .into_iter()
                .enumerate()
                .map(|(t, clients)| scope.spawn(move || this.worker(t, clients)))
                .collect();
            interrupted = this.watch(observer);
            for h in handles {
                if let Ok(h) = h.join() {
                    histogram.merge(&h);
                }
            }
        });
        let elapsed = self.start.elapsed();
        let error = self
            .shared
            .error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        LockstepResult {
            finished: self.finished(),
            histogram,
            elapsed_ms: elapsed.as_millis() as u64,
            elapsed,
            error,
            interrupted,
        }
    }

    fn finished(&self) -> u64 {
        self.shared
            .finished
            .load(Ordering::Relaxed)
            .min(self.spec.requests)
    }

    /// One event-loop thread; returns what it recorded.
    fn worker(&self, t: usize, clients: Vec<Client>) -> HdrHistogram {
        let spec = self.spec;
        let (generation, slots) = spec.cluster.as_ref().map(|c| c.slots()).unwrap_or_default();
        let mut worker = Worker {
            spec,
            shared: &self.shared,
            counters: &self.counters[t],
            hist: HdrHistogram::redis_benchmark(spec.precision),
            rng: GlibcRandom::new(spec.seed.wrapping_add(t as u32)),
            slot_rng: Xoroshiro128Plus::seeded(u64::from(spec.seed) ^ ((t as u64) << 32)),
            generation,
            slots,
            scratch: vec![0u8; 64 * 1024],
        };
        if let Err(e) = worker.run(clients) {
            self.shared.fail(e);
        }
        self.done.fetch_add(1, Ordering::Release);
        worker.hist
    }

    /// The calling thread while the workers run: ticks, progress, the time bound, a
    /// server that stopped answering, stop requests. True when asked to stop.
    fn watch(&self, observer: &dyn Observer) -> bool {
        let threads = self.counters.len() as u64;
        let mut next_tick = Duration::ZERO;
        let mut next_progress = Duration::ZERO;
        let mut stall = Stall::default();
        let mut asked = false;
        while self.done.load(Ordering::Acquire) < threads {
            if !asked && observer.stop_requested() {
                asked = true;
                self.shared.stop.store(true, Ordering::Relaxed);
            }
            let elapsed = self.start.elapsed();
            if self.spec.duration.is_some_and(|d| elapsed >= d) {
                self.shared.closing.store(true, Ordering::Relaxed);
            }
            let finished = self.finished();
            if elapsed >= next_tick {
                observer.snapshot(&Snapshot::Redis(&self.tick(elapsed, finished)));
                next_tick += TICK;
            }
            if elapsed >= next_progress {
                observer.progress(&Progress::at(elapsed, finished));
                next_progress += PROGRESS;
            }
            if let Some(waited) = stall.check(finished, elapsed, self.spec.setup.timeout) {
                self.shared.fail(RedisError::NoReply {
                    endpoint: self.spec.peer(),
                    waited,
                });
            }
            std::thread::sleep(Duration::from_millis(2).min(next_tick.saturating_sub(elapsed)));
        }
        asked
    }

    fn tick(&self, elapsed: Duration, finished: u64) -> Tick {
        let (sum, count) = self.counters.iter().fold((0, 0), |(s, c), t| {
            (
                s + t.latency_sum_us.load(Ordering::Relaxed),
                c + t.latency_count.load(Ordering::Relaxed),
            )
        });
        Tick {
            elapsed,
            finished,
            latency_sum_us: sum,
            latency_count: count,
        }
    }
}

/// Watches for a run that gets no reply at all for the setup's timeout.
#[derive(Default)]
struct Stall {
    last: u64,
    since: Duration,
    reported: bool,
}

impl Stall {
    /// Some(timeout) once, when nothing was answered for that long.
    fn check(
        &mut self,
        finished: u64,
        now: Duration,
        timeout: Option<Duration>,
    ) -> Option<Duration> {
        let timeout = timeout.filter(|t| !t.is_zero())?;
        if finished != self.last {
            (self.last, self.since) = (finished, now);
            return None;
        }
        if self.reported || now.saturating_sub(self.since) < timeout {
            return None;
        }
        self.reported = true;
        Some(timeout)
    }
}

struct Worker<'a> {
    spec: &'a LockstepSpec,
    shared: &'a Shared,
    counters: &'a ThreadCounters,
    hist: HdrHistogram,
    rng: GlibcRandom,
    /// Picks the slot of each cluster batch (kept apart from `rng`, whose draws
    /// reproduce redis-benchmark's keys).
    slot_rng: Xoroshiro128Plus,
    /// This thread's copy of the slots per master, as of cluster `generation`.
    generation: u64,
    slots: Vec<Vec<u16>>,
    scratch: Vec<u8>,
}

impl Worker<'_> {
    fn run(&mut self, mut clients: Vec<Client>) -> Result<(), RedisError> {
        let mut epoll = Epoll::new(clients.len()).map_err(RedisError::Io)?;
        let mut live = 0usize;
        for (i, c) in clients.iter_mut().enumerate() {
            let fd = c.fd.as_ref().expect("connected").as_raw_fd();
            epoll
                .add(fd, i as u64, poll::READ)
                .map_err(RedisError::Io)?;
            let node = c.node;
            if self
                .start_batch(c, &epoll, i)
                .map_err(|e| self.spec.at_node(node, e))?
            {
                live += 1;
            }
        }
        let mut ready: Vec<(u64, u32)> = Vec::with_capacity(clients.len().min(4096));
        while live > 0 && !self.shared.stop.load(Ordering::Relaxed) {
            ready.clear();
            ready.extend(
                epoll
                    .wait(100)
                    .map_err(RedisError::Io)?
                    .iter()
                    .map(|e| (e.u64, e.events)),
            );
            for &(token, events) in &ready {
                let i = token as usize;
                let c = &mut clients[i];
                if c.fd.is_none() {
                    continue;
                }
                let node = c.node;
                if events & poll::WRITE != 0 && c.wants_write {
                    self.flush(c, &epoll, i)
                        .map_err(|e| self.spec.at_node(node, e))?;
                }
                if events & !poll::WRITE != 0
                    && !self
                        .on_readable(c, &epoll, i)
                        .map_err(|e| self.spec.at_node(node, e))?
                {
                    live -= 1;
                }
            }
        }
        Ok(())
    }

    /// Takes `pipeline` requests from the budget and writes the batch. False when the
    /// budget is spent (the client is closed).
    fn start_batch(
        &mut self,
        c: &mut Client,
        epoll: &Epoll,
        token: usize,
    ) -> Result<bool, RedisError> {
        let p = self.spec.pipeline as u64;
        if self.shared.closing.load(Ordering::Relaxed)
            || self.shared.issued.fetch_add(p, Ordering::Relaxed) >= self.spec.requests
        {
            if let Some(fd) = c.fd.take() {
                let _ = epoll.delete(fd.as_raw_fd());
            }
            return Ok(false);
        }
        if let Some(space) = self.spec.keyspace {
            for &off in &c.rand_offsets {
                let draw = self.rng.draw() as u64 % space.max(1);
                super::resp::write_padded(&mut c.batch[off..off + PLACEHOLDER.len()], draw);
            }
        }
        if !c.tag_offsets.is_empty() {
            self.set_hash_tags(c)?;
        }
        c.written = 0;
        c.pending = self.spec.pipeline;
        c.latency_us = None;
        c.start_ns = poll::now_ns();
        self.flush(c, epoll, token)?;
        Ok(true)
    }

    fn flush(&mut self, c: &mut Client, epoll: &Epoll, token: usize) -> Result<(), RedisError> {
        let fd = c.fd.as_ref().expect("live client").as_raw_fd();
        c.written += conn::write(fd, &c.batch[c.written..])?;
        let want = c.written < c.batch.len();
        if want != c.wants_write {
            let interest = if want {
                poll::READ | poll::WRITE
            } else {
                poll::READ
            };
            epoll
                .modify(fd, token as u64, interest)
                .map_err(RedisError::Io)?;
            c.wants_write = want;
        }
        Ok(())
    }

    /// Reads replies; when the batch is complete records it and starts the next one.
    /// False when the client is finished.
    fn on_readable(
        &mut self,
        c: &mut Client,
        epoll: &Epoll,
        token: usize,
    ) -> Result<bool, RedisError> {
        let now = poll::now_ns();
        let latency = *c
            .latency_us
            .get_or_insert((now.saturating_sub(c.start_ns)) / 1000);
        let fd = c.fd.as_ref().expect("live client").as_raw_fd();
        let mut replies = 0u64;
        let mut pending = c.pending;
        let tagged = !c.tag_offsets.is_empty();
        let mut redirected = false;
        let cluster_mode = self.spec.cluster.is_some();
        let pumped = c.reader.pump(fd, &mut self.scratch, |frame, error| {
            if error {
                let message = super::resp::first_line(frame);
                let redirect = message.starts_with("MOVED ") || message.starts_with("ASK ");
                if redirect && tagged {
                    // A resharding moved the slot: counted like any reply (as
                    // redis-benchmark does), and the layout is fetched again below.
                    redirected = true;
                } else if redirect && cluster_mode {
                    return Err(RedisError::Other(format!(
                        "Error from server: {message} (in cluster mode every key of a \
                         custom command must contain {{tag}}, which becomes a hash tag of \
                         a slot the client's master owns, e.g. SET key:{{tag}}:__rand_int__ x)"
                    )));
                } else if redirect {
                    return Err(RedisError::Other(format!(
                        "Error from server: {message} (the server is a Redis Cluster node: add --cluster)"
                    )));
                } else {
                    return Err(RedisError::Reply(message));
                }
            }
            if pending == 0 {
                return Err(RedisError::Other(
                    "the server sent a reply nobody asked for: the connection is out of step"
                        .into(),
                ));
            }
            pending -= 1;
            replies += 1;
            Ok(())
        });
        c.pending = pending;
        if replies > 0 {
            let before = self.shared.finished.fetch_add(replies, Ordering::Relaxed);
            let counted = replies.min(self.spec.requests.saturating_sub(before));
            if counted > 0 {
                self.hist.record_n(latency, counted);
                let t = self.counters;
                t.latency_sum_us.store(
                    t.latency_sum_us.load(Ordering::Relaxed) + latency * counted,
                    Ordering::Relaxed,
                );
                t.latency_count.store(
                    t.latency_count.load(Ordering::Relaxed) + counted,
                    Ordering::Relaxed,
                );
            }
        }
        if pumped? == Pump::Closed && c.pending > 0 {
            return Err(RedisError::Closed);
        }
        if redirected && let Some(cluster) = &self.spec.cluster {
            cluster.refresh(self.generation)?;
        }
        if c.pending > 0 {
            return Ok(true);
        }
        if self.shared.finished.load(Ordering::Relaxed) >= self.spec.requests {
            self.shared.stop.store(true, Ordering::Relaxed);
            return Ok(false);
        }
        if !self.spec.keepalive {
            if let Some(old) = c.fd.take() {
                let _ = epoll.delete(old.as_raw_fd());
            }
            c.reader.clear();
            c.wants_write = false;
            let fd = conn::connect(self.spec.endpoint_of(c.node), &self.spec.setup)?;
            epoll
                .add(fd.as_raw_fd(), token as u64, poll::READ)
                .map_err(RedisError::Io)?;
            c.fd = Some(fd);
        }
        self.start_batch(c, epoll, token)
    }

    /// Overwrites every `{tag}` of the batch with the hash tag of one random slot
    /// of the client's master (re-reading the layout if it changed).
    fn set_hash_tags(&mut self, c: &mut Client) -> Result<(), RedisError> {
        let Some(routes) = &self.spec.cluster else {
            return Ok(());
        };
        if routes.generation() != self.generation {
            (self.generation, self.slots) = routes.slots();
        }
        let owned = self.slots.get(c.node).map(Vec::as_slice).unwrap_or(&[]);
        if owned.is_empty() {
            return Err(RedisError::Other(format!(
                "master {} no longer owns any slot (resharded or failed over): \
                 run the benchmark again to pick up the new layout",
                routes.masters[c.node].endpoint
            )));
        }
        let slot = owned[self.slot_rng.below(owned.len())];
        let tag = cluster::slot_tag(slot);
        for &off in &c.tag_offsets {
            c.batch[off + 1..off + 4].copy_from_slice(&tag);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stall_is_reported_once_after_the_timeout() {
        let ms = Duration::from_millis;
        let mut s = Stall::default();
        let t = Some(ms(100));
        assert_eq!(s.check(0, ms(50), t), None);
        assert_eq!(s.check(5, ms(90), t), None, "replies reset the wait");
        assert_eq!(s.check(5, ms(150), t), None);
        assert_eq!(s.check(5, ms(190), t), Some(ms(100)));
        assert_eq!(s.check(5, ms(400), t), None, "once");
        let mut s = Stall::default();
        assert_eq!(s.check(0, ms(10_000), None), None, "no timeout, no stall");
        assert_eq!(s.check(0, ms(10_000), Some(Duration::ZERO)), None);
    }
}

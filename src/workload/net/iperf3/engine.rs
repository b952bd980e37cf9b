//! The running part of an iperf3 test, the same on both ends: one thread per stream,
//! interval rows every `-i` (handed to the observer as `Snapshot::Iperf3`), the omit
//! period (counters re-based when it ends), and the totals at the end. It knows
//! nothing of the control connection.

use super::streams::{self, SendLimits, Snapshot, Stream};
use crate::workload::observe::{self, Observer, Progress};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// One stream's figures over one interval (or the whole test).
#[derive(Debug, Clone)]
pub struct Row {
    pub fd: i32,
    pub id: i64,
    pub sender: bool,
    pub udp: bool,
    /// Seconds, relative to the start of counting (after the omit period).
    pub start: f64,
    pub end: f64,
    pub delta: Snapshot,
    pub info: Option<TcpSample>,
    pub omitted: bool,
}

impl Row {
    pub fn seconds(&self) -> f64 {
        (self.end - self.start).max(0.0)
    }
    pub fn bits_per_second(&self) -> f64 {
        let s = self.seconds();
        if s > 0.0 {
            self.delta.bytes as f64 * 8.0 / s
        } else {
            0.0
        }
    }
}

/// TCP_INFO fields iperf3 reports per interval.
#[derive(Debug, Clone, Copy, Default)]
pub struct TcpSample {
    pub snd_cwnd: u64,
    pub rtt_us: u64,
    pub rttvar_us: u64,
    pub pmtu: u64,
}

pub struct Engine {
    pub streams: Vec<Arc<Stream>>,
    pub stop: Arc<AtomicBool>,
    pub t0: Instant,
    threads: Vec<JoinHandle<()>>,
    interval: Option<Duration>,
    omit: Duration,
    /// Snapshots at the end of the omit period (zero if none).
    base: Vec<Snapshot>,
    last: Vec<Snapshot>,
    /// Start of counting (t0 + omit once the omit period is over).
    count_start: Option<Instant>,
    last_at: Instant,
    next_at: Option<Instant>,
    /// Per-stream RTT statistics of senders: (min, max, sum, n) in µs, and max cwnd.
    rtt: Vec<(u64, u64, u64, u64, u64)>,
    pub stopped_at: Option<Instant>,
    /// Every counted interval: (start, end, bytes moved by this end's streams).
    pub history: Vec<(f64, f64, u64)>,
    next_progress: Instant,
}

impl Engine {
    pub fn start(
        streams: Vec<Arc<Stream>>,
        limits: Arc<SendLimits>,
        interval: Option<Duration>,
        omit: Duration,
    ) -> Engine {
        let stop = Arc::new(AtomicBool::new(false));
        let t0 = Instant::now();
        let threads = streams
            .iter()
            .map(|s| {
                let (s, limits, stop) = (s.clone(), limits.clone(), stop.clone());
                std::thread::spawn(move || streams::run(&s, &limits, &stop, t0))
            })
            .collect();
        let n = streams.len();
        let first = interval.map(|i| t0 + i.min(if omit.is_zero() { i } else { omit }));
        Engine {
            streams,
            stop,
            t0,
            threads,
            interval,
            omit,
            base: vec![Snapshot::default(); n],
            last: vec![Snapshot::default(); n],
            count_start: omit.is_zero().then_some(t0),
            last_at: t0,
            next_at: first,
            rtt: vec![(u64::MAX, 0, 0, 0, 0); n],
            stopped_at: None,
            history: Vec::new(),
            next_progress: t0,
        }
    }

    /// The time since counting began, or 0 during the omit period.
    pub fn counted(&self) -> Duration {
        self.count_start.map_or(Duration::ZERO, |c| c.elapsed())
    }

    pub fn in_omit(&self) -> bool {
        self.count_start.is_none()
    }

    /// Hands an interval's rows to the observer when a boundary (or the end of the
    /// omit period) passed, and tells it how far the test is.
    pub fn poll(&mut self, observer: &dyn Observer) {
        if let Some(rows) = self.due() {
            self.report(&rows, observer);
        }
        let now = Instant::now();
        if now >= self.next_progress {
            self.next_progress = now + Duration::from_millis(100);
            observer.progress(&Progress::at(self.t0.elapsed(), self.moved()));
        }
    }

    fn report(&mut self, rows: &[Row], observer: &dyn Observer) {
        if let Some(first) = rows.first().filter(|r| !r.omitted) {
            let bytes = rows.iter().map(|r| r.delta.bytes).sum();
            self.history.push((first.start, first.end, bytes));
        }
        observer.snapshot(&observe::Snapshot::Iperf3(rows));
    }

    fn due(&mut self) -> Option<Vec<Row>> {
        let now = Instant::now();
        if self.count_start.is_none() && now >= self.t0 + self.omit {
            // The omit period ends: report its last interval, then count from here.
            let rows = self.interval.map(|_| self.rows(now, true));
            self.count_start = Some(now);
            self.base = self.streams.iter().map(|s| s.snapshot()).collect();
            self.last = self.base.clone();
            self.last_at = now;
            self.next_at = self.interval.map(|i| now + i);
            return rows;
        }
        let next = self.next_at?;
        if now < next {
            return None;
        }
        let rows = self.rows(now, self.count_start.is_none());
        self.next_at = self.interval.map(|i| next + i);
        Some(rows)
    }

    fn rows(&mut self, now: Instant, omitted: bool) -> Vec<Row> {
        let origin = self.count_start.unwrap_or(self.t0);
        let start = self.last_at.saturating_duration_since(origin).as_secs_f64();
        let end = now.saturating_duration_since(origin).as_secs_f64();
        self.last_at = now;
        let mut rows = Vec::new();
        for (i, s) in self.streams.iter().enumerate() {
            let snap = s.snapshot();
            let delta = snap.since(&self.last[i]);
            self.last[i] = snap;
            let info = s.tcp_info().map(|t| TcpSample {
                snd_cwnd: u64::from(t.tcpi_snd_cwnd) * u64::from(t.tcpi_snd_mss),
                rtt_us: u64::from(t.tcpi_rtt),
                rttvar_us: u64::from(t.tcpi_rttvar),
                pmtu: u64::from(t.tcpi_pmtu),
            });
            if let Some(t) = info {
                let r = &mut self.rtt[i];
                r.0 = r.0.min(t.rtt_us);
                r.1 = r.1.max(t.rtt_us);
                r.2 += t.rtt_us;
                r.3 += 1;
                r.4 = r.4.max(t.snd_cwnd);
            }
            rows.push(Row {
                fd: s.fd(),
                id: s.id,
                sender: s.sender,
                udp: s.is_udp(),
                start,
                end,
                delta,
                info,
                omitted,
            });
        }
        rows
    }

    /// Stops sending; receivers keep reading until their peer closes or `drain` passes.
    pub fn stop_senders(&mut self) {
        if self.stopped_at.is_none() {
            self.stopped_at = Some(Instant::now());
        }
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Waits (at most `max`) until the senders have stopped and the peer has
    /// acknowledged every byte, so the receiver's count is complete when the test ends.
    pub fn drain_senders(&self, max: Duration) {
        let until = Instant::now() + max;
        while Instant::now() < until {
            let done = self.streams.iter().zip(&self.threads).all(|(s, t)| {
                !s.sender
                    || (t.is_finished()
                        && match &s.socket {
                            super::streams::Socket::Tcp(t) => {
                                crate::workload::net::sock::unacked_bytes(t).unwrap_or(0) == 0
                            }
                            super::streams::Socket::Udp(_) => true,
                        })
            });
            if done {
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// The final partial interval, when it is long enough to mean something.
    pub fn last_interval(&mut self, observer: &dyn Observer) {
        let Some(i) = self.interval else { return };
        let now = self.stopped_at.unwrap_or_else(Instant::now);
        let span = now.saturating_duration_since(self.last_at);
        if span > i / 10 && self.count_start.is_some() {
            let rows = self.rows(now, false);
            self.report(&rows, observer);
        }
    }

    /// Bytes moved by this end's streams so far.
    pub fn moved(&self) -> u64 {
        self.streams
            .iter()
            .map(|s| s.counters.bytes.load(Ordering::Relaxed))
            .sum()
    }

    /// Joins the stream threads (bounded: sockets time out within 100 ms once stopped).
    pub fn join(&mut self) {
        self.stop_senders();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }

    /// Whole-test totals per stream, after the omit period.
    pub fn totals(&self) -> Vec<Row> {
        let origin = self.count_start.unwrap_or(self.t0);
        let stop = self
            .stopped_at
            .unwrap_or_else(Instant::now)
            .saturating_duration_since(origin)
            .as_secs_f64();
        self.streams
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let delta = s.snapshot().since(&self.base[i]);
                let last = Duration::from_nanos(s.counters.last_ns.load(Ordering::Relaxed));
                let last_rel = (self.t0 + last)
                    .saturating_duration_since(origin)
                    .as_secs_f64();
                Row {
                    fd: s.fd(),
                    id: s.id,
                    sender: s.sender,
                    udp: s.is_udp(),
                    start: 0.0,
                    // Senders end when told to stop; receivers when their last byte came.
                    end: if s.sender { stop } else { last_rel.max(stop) },
                    delta,
                    info: None,
                    omitted: false,
                }
            })
            .collect()
    }

    /// (max cwnd, min, max, mean RTT in µs) of a sender stream over the intervals.
    pub fn rtt_stats(&self, index: usize) -> Option<(u64, u64, u64, u64)> {
        let r = self.rtt.get(index)?;
        (r.3 > 0).then(|| (r.4, r.0, r.1, r.2 / r.3))
    }
}

//! The data loops of the six tests, shared by client and server: stream send and
//! receive, request/response, UDP pacing and sequence accounting. Each loop counts into
//! per-stream atomics (read by the interval reporter, never shared between streams)
//! and stops on its limit, on the test's stop flag, or on Ctrl-C.

use crate::measure::histogram::{Histogram, Layout};
use crate::measure::stop_requested;
use std::io::{self, ErrorKind, Read, Write};
use std::net::{TcpStream, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// UDP datagram header: sequence number (from 1) and send time, both u64 big-endian.
pub const UDP_HEADER: usize = 16;
/// How often a blocked receiver looks at the stop flag.
pub const POLL: Duration = Duration::from_millis(100);

/// When a sender or request loop stops.
#[derive(Clone)]
pub struct Limit {
    pub deadline: Option<Instant>,
    /// Bytes (streams) or transactions (RR) left across all streams of the test.
    pub budget: Option<Arc<AtomicI64>>,
    pub stop: Arc<AtomicBool>,
}

impl Limit {
    pub fn new(deadline: Option<Instant>, budget: u64, stop: Arc<AtomicBool>) -> Self {
        Self {
            deadline,
            budget: (budget > 0).then(|| Arc::new(AtomicI64::new(budget as i64))),
            stop,
        }
    }

    /// False once the time is up, the run is stopped, or `take` units exhaust the budget.
    #[inline]
    pub fn go(&self, take: u64) -> bool {
        if self.stop.load(Ordering::Relaxed) || stop_requested() {
            return false;
        }
        if let Some(d) = self.deadline
            && Instant::now() >= d
        {
            return false;
        }
        match &self.budget {
            Some(b) => b.fetch_sub(take as i64, Ordering::Relaxed) > 0,
            None => true,
        }
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || stop_requested()
    }
}

/// A buffer of non-repeating bytes, so compression on the path cannot flatter a result.
pub fn payload(len: usize) -> Vec<u8> {
    let mut state = 0x853c_49e6_748f_ea9bu64;
    (0..len.max(1))
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 56) as u8
        })
        .collect()
}

/// Totals of one stream's data loop.
#[derive(Debug, Clone, Copy, Default)]
pub struct StreamTotals {
    pub bytes: u64,
    pub calls: u64,
    /// When the last byte moved (receivers: the end of the data as it arrived).
    pub last: Option<Instant>,
}

/// Sends `size`-byte writes until the limit; then half-closes so the receiver sees EOF.
/// `rate_bps` > 0 paces the sender (bits per second).
pub fn send_stream(
    s: &mut TcpStream,
    size: usize,
    limit: &Limit,
    rate_bps: u64,
    counter: &AtomicU64,
) -> io::Result<StreamTotals> {
    let buf = payload(size);
    let mut t = StreamTotals::default();
    let mut pacer = Pacer::new(rate_bps);
    while limit.go(size as u64) {
        pacer.wait(t.bytes, limit);
        match s.write_all(&buf) {
            Ok(()) => {}
            Err(e) if limit.stopped() && is_timeout(&e) => break,
            Err(e) => return Err(e),
        }
        t.bytes += size as u64;
        t.calls += 1;
        counter.store(t.bytes, Ordering::Relaxed);
    }
    t.last = Some(Instant::now());
    let _ = s.shutdown(std::net::Shutdown::Write);
    Ok(t)
}

/// Receives until EOF (or the stop flag, checked every `POLL` if the socket has a read
/// timeout).
pub fn recv_stream(
    s: &mut TcpStream,
    size: usize,
    stop: &AtomicBool,
    counter: &AtomicU64,
) -> io::Result<StreamTotals> {
    let mut buf = vec![0u8; size.max(1)];
    let mut t = StreamTotals::default();
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                t.bytes += n as u64;
                t.calls += 1;
                t.last = Some(Instant::now());
                counter.store(t.bytes, Ordering::Relaxed);
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if is_timeout(&e) => {
                if stop.load(Ordering::Relaxed) || stop_requested() {
                    break;
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(t)
}

pub fn is_timeout(e: &io::Error) -> bool {
    matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)
}

/// Spaces sends so that `rate_bps` is not exceeded, with at most 10 ms of burst.
pub struct Pacer {
    rate_bps: u64,
    start: Instant,
}

impl Pacer {
    pub fn new(rate_bps: u64) -> Self {
        Self {
            rate_bps,
            start: Instant::now(),
        }
    }

    #[inline]
    pub fn wait(&mut self, bytes_sent: u64, limit: &Limit) {
        if self.rate_bps == 0 {
            return;
        }
        let due = Duration::from_secs_f64(bytes_sent as f64 * 8.0 / self.rate_bps as f64);
        let now = self.start.elapsed();
        // A sender that fell behind (descheduled) may catch up by at most 10 ms worth of
        // data at once; the rest of the debt is forgiven rather than sent as a burst
        // that would overflow the receiver's buffer.
        if now > due + MAX_BURST {
            self.start += now - due - MAX_BURST;
        }
        loop {
            let now = self.start.elapsed();
            if now >= due || limit.stopped() {
                return;
            }
            std::thread::sleep((due - now).min(Duration::from_millis(10)));
        }
    }
}

const MAX_BURST: Duration = Duration::from_millis(10);

/// Latencies of request/response transactions in one thread.
#[derive(Debug, Clone)]
pub struct LatencyRecorder {
    pub histogram: Histogram,
    pub count: u64,
    pub sum_ns: u128,
    /// For the standard deviation (netperf's STDDEV_LATENCY).
    pub sum_sq_ns: f64,
    pub min_ns: u64,
    pub max_ns: u64,
}

impl Default for LatencyRecorder {
    fn default() -> Self {
        Self {
            histogram: Histogram::new(Layout::NATIVE),
            count: 0,
            sum_ns: 0,
            sum_sq_ns: 0.0,
            min_ns: u64::MAX,
            max_ns: 0,
        }
    }
}

impl LatencyRecorder {
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.histogram.record(ns as f64);
        self.count += 1;
        self.sum_ns += u128::from(ns);
        self.sum_sq_ns += (ns as f64) * (ns as f64);
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
    }

    pub fn merge(&mut self, other: &LatencyRecorder) {
        self.histogram.merge(&other.histogram);
        self.count += other.count;
        self.sum_ns += other.sum_ns;
        self.sum_sq_ns += other.sum_sq_ns;
        self.min_ns = self.min_ns.min(other.min_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
    }

    /// Population standard deviation.
    pub fn stddev_ns(&self) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let mean = self.mean_ns();
        (self.sum_sq_ns / self.count as f64 - mean * mean)
            .max(0.0)
            .sqrt()
    }

    pub fn mean_ns(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.count as f64
        }
    }
}

/// One request/response stream's client side.
#[derive(Debug, Default, Clone)]
pub struct RrTotals {
    pub transactions: u64,
    /// UDP: requests whose response never came (within the timeout).
    pub lost: u64,
    pub latency: LatencyRecorder,
}

/// TCP_RR client: write a request, read the whole response, time it.
pub fn rr_client_tcp(
    s: &mut TcpStream,
    req: usize,
    rsp: usize,
    limit: &Limit,
    counter: &AtomicU64,
) -> io::Result<RrTotals> {
    let out = payload(req);
    let mut inb = vec![0u8; rsp.max(1)];
    let mut t = RrTotals::default();
    while limit.go(1) {
        let start = Instant::now();
        s.write_all(&out)?;
        read_full(s, &mut inb[..rsp], limit)?;
        t.latency.record(start.elapsed().as_nanos() as u64);
        t.transactions += 1;
        counter.store(t.transactions, Ordering::Relaxed);
    }
    let _ = s.shutdown(std::net::Shutdown::Write);
    Ok(t)
}

/// Reads exactly `buf.len()` bytes; a timeout with the stop flag set is an orderly end.
pub fn read_full(s: &mut TcpStream, buf: &mut [u8], limit: &Limit) -> io::Result<()> {
    let mut got = 0;
    while got < buf.len() {
        match s.read(&mut buf[got..]) {
            Ok(0) => return Err(io::Error::new(ErrorKind::UnexpectedEof, "peer closed")),
            Ok(n) => got += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if is_timeout(&e) && !limit.stopped() => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// TCP_RR server: answer each `req`-byte request with `rsp` bytes until EOF.
pub fn rr_server_tcp(
    s: &mut TcpStream,
    req: usize,
    rsp: usize,
    stop: &AtomicBool,
    counter: &AtomicU64,
) -> io::Result<u64> {
    let out = payload(rsp);
    let mut inb = vec![0u8; req.max(1)];
    let mut n = 0u64;
    loop {
        let mut got = 0;
        while got < req {
            match s.read(&mut inb[got..req]) {
                Ok(0) => return Ok(n),
                Ok(k) => got += k,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if is_timeout(&e) => {
                    if stop.load(Ordering::Relaxed) || stop_requested() {
                        return Ok(n);
                    }
                }
                Err(e) => return Err(e),
            }
        }
        s.write_all(&out)?;
        n += 1;
        counter.store(n, Ordering::Relaxed);
    }
}

/// UDP sender accounting: how many datagrams went out and how many sends failed
/// (netperf's "Errors": ENOBUFS and friends when the sender outruns the NIC).
#[derive(Debug, Clone, Copy, Default)]
pub struct UdpSendTotals {
    pub packets: u64,
    pub bytes: u64,
    pub errors: u64,
}

/// Sends `size`-byte datagrams with a sequence header, paced to `rate_bps` (0 = flat out).
pub fn send_udp(
    s: &UdpSocket,
    size: usize,
    limit: &Limit,
    rate_bps: u64,
    counter: &AtomicU64,
) -> UdpSendTotals {
    let mut buf = payload(size.max(1));
    let mut t = UdpSendTotals::default();
    let mut pacer = Pacer::new(rate_bps);
    let epoch = Instant::now();
    let mut seq = 0u64;
    while limit.go(size as u64) {
        pacer.wait(t.bytes, limit);
        seq += 1;
        write_udp_header(&mut buf, seq, epoch.elapsed().as_nanos() as u64);
        match s.send(&buf) {
            Ok(_) => {
                t.packets += 1;
                t.bytes += size as u64;
                counter.store(t.bytes, Ordering::Relaxed);
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => t.errors += 1,
        }
    }
    t
}

fn write_udp_header(buf: &mut [u8], seq: u64, sent_ns: u64) {
    let mut h = [0u8; UDP_HEADER];
    h[..8].copy_from_slice(&seq.to_be_bytes());
    h[8..].copy_from_slice(&sent_ns.to_be_bytes());
    let n = buf.len().min(UDP_HEADER);
    buf[..n].copy_from_slice(&h[..n]);
}

/// The sequence number of a datagram, when it is long enough to carry one.
pub fn udp_seq(buf: &[u8]) -> Option<u64> {
    buf.get(..8)
        .map(|b| u64::from_be_bytes(b.try_into().expect("8 bytes")))
}

/// Receiver accounting for sequenced datagrams: gaps are losses until a late datagram
/// fills them (then it counts as out of order and the loss is taken back).
#[derive(Debug, Clone, Copy, Default)]
pub struct UdpRecvTotals {
    pub packets: u64,
    pub bytes: u64,
    pub lost: u64,
    pub out_of_order: u64,
    pub max_seq: u64,
    pub last: Option<Instant>,
}

impl UdpRecvTotals {
    pub fn account(&mut self, datagram: &[u8]) {
        self.packets += 1;
        self.bytes += datagram.len() as u64;
        self.last = Some(Instant::now());
        let Some(seq) = udp_seq(datagram) else { return };
        if seq > self.max_seq {
            self.lost += seq - self.max_seq - 1;
            self.max_seq = seq;
        } else {
            self.out_of_order += 1;
            self.lost = self.lost.saturating_sub(1);
        }
    }
}

/// UDP_RR client: a request, then wait up to `timeout` for its response; a response
/// that does not come counts as lost and the next transaction starts.
pub fn rr_client_udp(
    s: &UdpSocket,
    req: usize,
    rsp: usize,
    limit: &Limit,
    timeout: Duration,
    counter: &AtomicU64,
) -> io::Result<RrTotals> {
    let mut out = payload(req.max(1));
    let mut inb = vec![0u8; rsp.max(8).max(65536)];
    let mut t = RrTotals::default();
    s.set_read_timeout(Some(timeout))?;
    let mut seq = 0u64;
    while limit.go(1) {
        seq += 1;
        write_udp_header(&mut out, seq, 0);
        let start = Instant::now();
        s.send(&out)?;
        loop {
            match s.recv(&mut inb) {
                // A late answer to an earlier, already-lost request: keep waiting.
                Ok(n) if req >= 8 && n >= 8 && udp_seq(&inb[..n]) != Some(seq) => {
                    if start.elapsed() >= timeout {
                        t.lost += 1;
                        break;
                    }
                }
                Ok(_) => {
                    t.latency.record(start.elapsed().as_nanos() as u64);
                    t.transactions += 1;
                    counter.store(t.transactions, Ordering::Relaxed);
                    break;
                }
                Err(e) if is_timeout(&e) => {
                    t.lost += 1;
                    break;
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn udp_accounting_takes_back_late_datagrams() {
        let mut t = UdpRecvTotals::default();
        let dg = |seq: u64| {
            let mut b = vec![0u8; 20];
            write_udp_header(&mut b, seq, 0);
            b
        };
        for seq in [1, 2, 5, 3, 6] {
            t.account(&dg(seq));
        }
        assert_eq!(t.packets, 5);
        assert_eq!(t.max_seq, 6);
        assert_eq!(t.lost, 1); // 4 never came
        assert_eq!(t.out_of_order, 1);
        t.account(&[1, 2]); // too short for a sequence: counted, not judged
        assert_eq!(t.packets, 6);
    }

    #[test]
    fn limit_budget_and_deadline() {
        let stop = Arc::new(AtomicBool::new(false));
        let l = Limit::new(None, 3, stop.clone());
        assert!(l.go(1) && l.go(1) && l.go(1));
        assert!(!l.go(1));
        let l = Limit::new(Some(Instant::now()), 0, stop.clone());
        assert!(!l.go(1));
        let l = Limit::new(None, 0, stop.clone());
        stop.store(true, Ordering::Relaxed);
        assert!(!l.go(1));
    }

    #[test]
    fn pacer_holds_the_rate() {
        let stop = Arc::new(AtomicBool::new(false));
        let limit = Limit::new(None, 0, stop);
        let mut p = Pacer::new(8_000_000); // 1 MB/s
        let start = Instant::now();
        p.wait(100_000, &limit); // 100 kB is due at 100 ms
        let e = start.elapsed();
        assert!(e >= Duration::from_millis(95), "{e:?}");
    }

    #[test]
    fn payload_does_not_repeat_bytes_trivially() {
        let p = payload(4096);
        assert_eq!(p.len(), 4096);
        assert!(p.windows(2).filter(|w| w[0] == w[1]).count() < 100);
    }
}

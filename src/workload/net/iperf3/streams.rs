//! iperf3 data streams: TCP blocks after the cookie, UDP datagrams with iperf3's
//! 12-byte (or 16-byte) big-endian header, and the receiver's loss, order and jitter
//! accounting (RFC 1889 jitter, as reference §2.6 describes). One thread per stream;
//! counters are atomics the interval reporter reads. A stream stops on the test's
//! stop flag, which the flow sets when the test ends or its observer asks to stop.

use crate::workload::net::data::{Limit, Pacer, is_timeout, payload};
use crate::workload::net::sock;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant};

pub enum Socket {
    Tcp(TcpStream),
    Udp(UdpSocket),
}

/// Counters of one stream since it started.
#[derive(Default)]
pub struct Counters {
    pub bytes: AtomicU64,
    pub blocks: AtomicU64,
    /// UDP receiver: highest sequence seen (iperf3's packet count).
    pub packets: AtomicI64,
    pub lost: AtomicI64,
    pub out_of_order: AtomicU64,
    /// f64 bits of the running jitter, seconds.
    pub jitter: AtomicU64,
    /// Nanoseconds since the test start of the last byte moved.
    pub last_ns: AtomicU64,
}

/// A snapshot of counters, subtractable.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Snapshot {
    pub bytes: u64,
    pub packets: i64,
    pub lost: i64,
    pub out_of_order: u64,
    pub jitter_s: f64,
    pub retransmits: Option<i64>,
}

impl Snapshot {
    pub fn since(&self, base: &Snapshot) -> Snapshot {
        Snapshot {
            bytes: self.bytes - base.bytes.min(self.bytes),
            packets: self.packets - base.packets,
            lost: self.lost - base.lost,
            out_of_order: self.out_of_order - base.out_of_order.min(self.out_of_order),
            jitter_s: self.jitter_s,
            retransmits: match (self.retransmits, base.retransmits) {
                (Some(a), Some(b)) => Some(a - b),
                (a, _) => a,
            },
        }
    }
}

pub struct Stream {
    /// iperf3's stream id on the wire (1, 3, 4, ...).
    pub id: i64,
    pub sender: bool,
    pub socket: Socket,
    pub local: SocketAddr,
    pub remote: SocketAddr,
    pub counters: Counters,
}

impl Stream {
    pub fn new(id: i64, sender: bool, socket: Socket) -> std::io::Result<Stream> {
        let (local, remote) = match &socket {
            Socket::Tcp(s) => (s.local_addr()?, s.peer_addr()?),
            Socket::Udp(s) => (s.local_addr()?, s.peer_addr()?),
        };
        Ok(Stream {
            id,
            sender,
            socket,
            local,
            remote,
            counters: Counters::default(),
        })
    }

    /// The descriptor number, which iperf3 prints as the stream's "[  5]".
    pub fn fd(&self) -> i32 {
        match &self.socket {
            Socket::Tcp(s) => s.as_raw_fd(),
            Socket::Udp(s) => s.as_raw_fd(),
        }
    }

    pub fn is_udp(&self) -> bool {
        matches!(self.socket, Socket::Udp(_))
    }

    pub fn snapshot(&self) -> Snapshot {
        let c = &self.counters;
        Snapshot {
            bytes: c.bytes.load(Ordering::Relaxed),
            packets: c.packets.load(Ordering::Relaxed),
            lost: c.lost.load(Ordering::Relaxed),
            out_of_order: c.out_of_order.load(Ordering::Relaxed),
            jitter_s: f64::from_bits(c.jitter.load(Ordering::Relaxed)),
            retransmits: self.tcp_info().map(|i| i64::from(i.tcpi_total_retrans)),
        }
    }

    pub fn tcp_info(&self) -> Option<libc::tcp_info> {
        match &self.socket {
            Socket::Tcp(s) if self.sender => sock::tcp_info(s),
            _ => None,
        }
    }

    pub fn shutdown(&self) {
        if let Socket::Tcp(s) = &self.socket {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
    }
}

/// How a sender stops; shared by all senders of a test.
pub struct SendLimits {
    pub len: usize,
    /// bits/s per stream, 0 = unlimited
    pub rate_bps: u64,
    /// Bytes left across senders (-n), blocks left (-k); None = no such limit.
    pub bytes_left: Option<AtomicI64>,
    pub blocks_left: Option<AtomicI64>,
    pub udp64: bool,
}

impl SendLimits {
    fn take(&self) -> bool {
        let ok_bytes = self
            .bytes_left
            .as_ref()
            .is_none_or(|b| b.fetch_sub(self.len as i64, Ordering::Relaxed) > 0);
        let ok_blocks = self
            .blocks_left
            .as_ref()
            .is_none_or(|b| b.fetch_sub(1, Ordering::Relaxed) > 0);
        ok_bytes && ok_blocks
    }
}

/// Runs a stream until `stop`: sends (paced) or receives, updating its counters.
pub fn run(stream: &Stream, limits: &SendLimits, stop: &Arc<AtomicBool>, t0: Instant) {
    match (&stream.socket, stream.sender) {
        (Socket::Tcp(s), true) => send_tcp(stream, s, limits, stop, t0),
        (Socket::Tcp(s), false) => recv_tcp(stream, s, limits.len, stop, t0),
        (Socket::Udp(s), true) => send_udp(stream, s, limits, stop, t0),
        (Socket::Udp(s), false) => recv_udp(stream, s, stop, t0),
    }
}

fn halted(stop: &AtomicBool) -> bool {
    stop.load(Ordering::Relaxed)
}

fn send_tcp(
    st: &Stream,
    mut s: &TcpStream,
    limits: &SendLimits,
    stop: &Arc<AtomicBool>,
    t0: Instant,
) {
    let buf = payload(limits.len);
    let _ = s.set_write_timeout(Some(Duration::from_millis(100)));
    let mut pacer = Pacer::new(limits.rate_bps);
    // Pacing waits end when the test stops.
    let until_stopped = Limit::new(None, 0, stop.clone());
    let mut sent = 0u64;
    while !halted(stop) && limits.take() {
        pacer.wait(sent, &until_stopped);
        if halted(stop) {
            break;
        }
        // Count what the kernel took, so a timed-out partial write is not lost.
        let mut off = 0;
        while off < buf.len() {
            match s.write(&buf[off..]) {
                Ok(n) => {
                    off += n;
                    sent += n as u64;
                    st.counters.bytes.fetch_add(n as u64, Ordering::Relaxed);
                }
                Err(e) if is_timeout(&e) || e.kind() == ErrorKind::Interrupted => {
                    if halted(stop) {
                        break;
                    }
                }
                Err(_) => return,
            }
        }
        st.counters.blocks.fetch_add(1, Ordering::Relaxed);
        st.counters
            .last_ns
            .store(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }
}

fn recv_tcp(st: &Stream, mut s: &TcpStream, len: usize, stop: &AtomicBool, t0: Instant) {
    let mut buf = vec![0u8; len.max(1)];
    let _ = s.set_read_timeout(Some(Duration::from_millis(100)));
    loop {
        match s.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => {
                st.counters.bytes.fetch_add(n as u64, Ordering::Relaxed);
                st.counters
                    .last_ns
                    .store(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
            }
            Err(e) if is_timeout(&e) || e.kind() == ErrorKind::Interrupted => {
                if halted(stop) {
                    return;
                }
            }
            Err(_) => return,
        }
    }
}

fn send_udp(st: &Stream, s: &UdpSocket, limits: &SendLimits, stop: &Arc<AtomicBool>, t0: Instant) {
    let mut buf = payload(limits.len);
    // Pacing waits end when the test stops.
    let until_stopped = Limit::new(None, 0, stop.clone());
    let mut pacer = Pacer::new(limits.rate_bps);
    let mut seq: u64 = 0;
    let mut sent = 0u64;
    while !halted(stop) && limits.take() {
        pacer.wait(sent, &until_stopped);
        if halted(stop) {
            break;
        }
        seq += 1;
        let now = mono_now();
        buf[..4].copy_from_slice(&(now.as_secs() as u32).to_be_bytes());
        buf[4..8].copy_from_slice(&now.subsec_micros().to_be_bytes());
        if limits.udp64 {
            buf[8..16].copy_from_slice(&seq.to_be_bytes());
        } else {
            buf[8..12].copy_from_slice(&(seq as u32).to_be_bytes());
        }
        match s.send(&buf) {
            Ok(n) => {
                sent += n as u64;
                st.counters.bytes.fetch_add(n as u64, Ordering::Relaxed);
                st.counters.packets.fetch_add(1, Ordering::Relaxed);
                st.counters
                    .last_ns
                    .store(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
            }
            // ENOBUFS or an ICMP error from the peer: the datagram is not sent; retry later.
            Err(_) => {
                seq -= 1;
                std::thread::sleep(Duration::from_micros(100));
            }
        }
    }
}

/// CLOCK_MONOTONIC as a duration; only differences between two hosts' stamps matter.
fn mono_now() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Sequence, loss, order and jitter of arriving datagrams.
#[derive(Debug, Default)]
pub struct UdpAccount {
    pub max_seq: i64,
    pub lost: i64,
    pub out_of_order: u64,
    pub jitter: f64,
    prev_transit: Option<f64>,
}

impl UdpAccount {
    pub fn datagram(&mut self, seq: i64, sent_s: f64, arrived_s: f64) {
        if seq > self.max_seq {
            self.lost += seq - self.max_seq - 1;
            self.max_seq = seq;
        } else {
            self.out_of_order += 1;
            if self.lost > 0 {
                self.lost -= 1;
            }
        }
        let transit = arrived_s - sent_s;
        if let Some(prev) = self.prev_transit {
            let d = (transit - prev).abs();
            self.jitter += (d - self.jitter) / 16.0;
        }
        self.prev_transit = Some(transit);
    }
}

fn recv_udp(st: &Stream, s: &UdpSocket, stop: &AtomicBool, t0: Instant) {
    let mut buf = vec![0u8; 65536];
    let _ = s.set_read_timeout(Some(Duration::from_millis(100)));
    let mut acct = UdpAccount::default();
    // The peer's width of sequence numbers is known from the parameters only; a
    // 12-byte header is the default, and 64-bit counters show as a zero high word.
    loop {
        match s.recv(&mut buf) {
            Ok(n) if n >= 12 => {
                let sec = u32::from_be_bytes(buf[0..4].try_into().expect("4"));
                let usec = u32::from_be_bytes(buf[4..8].try_into().expect("4"));
                let seq32 = u32::from_be_bytes(buf[8..12].try_into().expect("4"));
                let seq = if seq32 == 0 && n >= 16 {
                    u64::from_be_bytes(buf[8..16].try_into().expect("8")) as i64
                } else {
                    i64::from(seq32)
                };
                let now = mono_now();
                acct.datagram(seq, sec as f64 + usec as f64 / 1e6, now.as_secs_f64());
                let c = &st.counters;
                c.bytes.fetch_add(n as u64, Ordering::Relaxed);
                c.packets.store(acct.max_seq, Ordering::Relaxed);
                c.lost.store(acct.lost, Ordering::Relaxed);
                c.out_of_order.store(acct.out_of_order, Ordering::Relaxed);
                c.jitter.store(acct.jitter.to_bits(), Ordering::Relaxed);
                c.last_ns
                    .store(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
            }
            Ok(_) => {}
            Err(e) if is_timeout(&e) || e.kind() == ErrorKind::Interrupted => {
                if halted(stop) {
                    return;
                }
            }
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => {
                if halted(stop) {
                    return;
                }
            }
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn udp_accounting_matches_the_reference_rules() {
        let mut a = UdpAccount::default();
        for seq in [1, 2, 3, 6, 4, 7] {
            a.datagram(seq, 0.0, 0.001);
        }
        assert_eq!(a.max_seq, 7);
        assert_eq!(a.lost, 1); // 5
        assert_eq!(a.out_of_order, 1);
        assert_eq!(a.jitter, 0.0);
        let mut j = UdpAccount::default();
        j.datagram(1, 0.0, 0.010);
        j.datagram(2, 0.0, 0.026); // transit differs by 16 ms: J = 16/16 ms
        assert!((j.jitter - 0.001).abs() < 1e-12);
    }
}

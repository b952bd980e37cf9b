//! `hostbench net serve`: many clients at once, within limits.
//!
//! One thread accepts on the port and sorts new connections without blocking on any of
//! them (poll(2) over all connections that have not yet said what they are): it reads
//! a control connection's hello, answers it and, with a secret, checks the proof, all
//! without a thread or a slot of the connection's own; only then does the connection
//! get a session thread. Data connections go to the test whose token they carry. A
//! connection that sends garbage, too much or nothing is dropped by the handshake
//! deadline, so a flood of them delays nobody. A session runs one test at a time and
//! takes one of the `max_tests` slots only once the test's data streams are there: a
//! client that asks for a test and goes away (or never opens its streams) holds no
//! slot. The data loops of a test run on threads of their own, whose CPU time is the
//! test's server-side CPU figure.

use super::data::{self, Limit, POLL};
use super::protocol::{
    self, DATA_HEADER_LEN, DATA_MAGIC, FrameError, IntervalReport, Limits, Message,
    PROTOCOL_VERSION, ServerReport, StreamReport, TOKEN_LEN, TestRequest,
};
use super::sock::{self, SockOpts};
use super::{NetError, TestKind};
use crate::measure::cputime::CpuTime;
use crate::measure::stop_requested;
use std::collections::HashMap;
use std::io::{ErrorKind, Read};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Connections that have not yet identified themselves, at most.
const MAX_PENDING: usize = 2048;
/// Control sessions at once (one that runs no test ends within the idle timeout).
const MAX_SESSIONS: u32 = 256;
/// The largest frame a connection may send before it has a session (hello and auth
/// are a few dozen bytes), so 2,048 pending connections hold little memory.
const MAX_GREETING: u32 = 4096;
/// Descriptors the server may need at worst: every pending connection, and every
/// session gathering or running a test of `max_parallel` (64) streams.
const FD_WANT: u64 = MAX_PENDING as u64 + MAX_SESSIONS as u64 * 66 + 64;
/// How long a test's data streams have to arrive after `ready`, at most.
const GATHER: Duration = Duration::from_secs(10);
/// A UDP join datagram: magic, token, u16 stream index; the server echoes it back.
pub const UDP_JOIN_MAGIC: [u8; 4] = *b"HBJ1";
pub const UDP_JOIN_LEN: usize = 4 + TOKEN_LEN + 2;

#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub listen: SocketAddr,
    pub limits: Limits,
    pub secret: Option<String>,
    /// Time a new connection has to identify itself: a data header, or a control
    /// connection's hello (and, with a secret, its proof), counted from its accept.
    pub handshake_timeout: Duration,
    /// Log one line per test on stderr.
    pub verbose: bool,
}

impl ServerConfig {
    pub fn new(listen: SocketAddr) -> Self {
        Self {
            listen,
            limits: Limits {
                max_tests: 8,
                max_duration_ms: 300_000,
                max_parallel: 64,
                max_rate_bps: 0,
                idle_timeout_ms: 10_000,
            },
            secret: None,
            handshake_timeout: Duration::from_secs(5),
            verbose: false,
        }
    }
}

type DataConn = (TcpStream, u16);

struct Shared {
    config: ServerConfig,
    tests: AtomicU32,
    sessions: AtomicU32,
    /// Data connections waiting to be claimed, by test token.
    routes: Mutex<HashMap<[u8; TOKEN_LEN], Sender<DataConn>>>,
    shutdown: AtomicBool,
}

impl Shared {
    /// The idle timeout, and the time a session has to get its next test running.
    fn idle(&self) -> Duration {
        Duration::from_millis(self.config.limits.idle_timeout_ms.max(100))
    }
}

pub struct Server {
    listener: TcpListener,
    shared: Arc<Shared>,
}

/// A server running on a thread of its own (tests, personalities with -D).
pub struct ServerHandle {
    pub addr: SocketAddr,
    shared: Arc<Shared>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ServerHandle {
    pub fn stop(mut self) {
        self.shared.shutdown.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        self.shared.shutdown.store(true, Ordering::Relaxed);
    }
}

impl Server {
    pub fn bind(config: ServerConfig) -> Result<Server, NetError> {
        // A soft limit of 1024 descriptors would let a few busy clients starve accept;
        // below the worst case the server still works, it just refuses sooner.
        let _ = crate::workload::redis::conn::raise_fd_limit(FD_WANT);
        let listener = sock::listen_tcp(config.listen, SockOpts::default())?;
        listener
            .set_nonblocking(true)
            .map_err(|e| NetError::io("listener", e))?;
        Ok(Server {
            listener,
            shared: Arc::new(Shared {
                config,
                tests: AtomicU32::new(0),
                sessions: AtomicU32::new(0),
                routes: Mutex::new(HashMap::new()),
                shutdown: AtomicBool::new(false),
            }),
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.listener
            .local_addr()
            .unwrap_or(self.shared.config.listen)
    }

    pub fn spawn(self) -> ServerHandle {
        let addr = self.local_addr();
        let shared = self.shared.clone();
        let thread = std::thread::spawn(move || self.serve());
        ServerHandle {
            addr,
            shared,
            thread: Some(thread),
        }
    }

    /// Serves until Ctrl-C or `ServerHandle::stop`.
    pub fn serve(self) {
        let mut pending: Vec<Pending> = Vec::new();
        while !self.shared.shutdown.load(Ordering::Relaxed) && !stop_requested() {
            let mut fds = Vec::with_capacity(pending.len() + 1);
            fds.push(libc::pollfd {
                fd: self.listener.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            });
            fds.extend(pending.iter().map(|p| libc::pollfd {
                fd: p.stream.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            }));
            // SAFETY: fds is a valid array of pollfd for its whole length.
            let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 100) };
            if n < 0 {
                continue;
            }
            let now = Instant::now();
            let mut keep = Vec::with_capacity(pending.len());
            for (p, fd) in pending.into_iter().zip(&fds[1..]) {
                if fd.revents != 0 {
                    match p.advance(&self.shared) {
                        Step::Wait(p) => keep.push(p),
                        Step::Control(stream) => self.start_session(stream),
                        Step::Data(stream, token, index) => self.route(stream, token, index),
                        Step::Drop => {}
                    }
                } else if now < p.deadline {
                    keep.push(p);
                }
            }
            pending = keep;
            if fds[0].revents != 0 {
                self.accept_all(&mut pending);
            }
        }
    }

    fn accept_all(&self, pending: &mut Vec<Pending>) {
        loop {
            match self.listener.accept() {
                Ok((stream, _)) => {
                    if pending.len() >= MAX_PENDING {
                        // The oldest unidentified connection makes room.
                        pending.remove(0);
                    }
                    if stream.set_nonblocking(true).is_ok() {
                        let deadline = Instant::now() + self.shared.config.handshake_timeout;
                        pending.push(Pending::new(stream, deadline));
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                // EMFILE and friends: pending connections time out and free descriptors.
                Err(_) => return,
            }
        }
    }

    fn route(&self, stream: TcpStream, token: [u8; TOKEN_LEN], index: u16) {
        let routes = self.shared.routes.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(tx) = routes.get(&token) {
            let _ = stream.set_nonblocking(false);
            let _ = tx.send((stream, index));
        }
    }

    fn start_session(&self, stream: TcpStream) {
        if self.shared.sessions.fetch_add(1, Ordering::AcqRel) >= MAX_SESSIONS {
            self.shared.sessions.fetch_sub(1, Ordering::AcqRel);
            let mut s = stream;
            let _ = s.set_nonblocking(false);
            let _ = protocol::write_message(
                &mut s,
                &Message::error("busy", "too many control connections; try again later"),
            );
            return;
        }
        let shared = self.shared.clone();
        std::thread::spawn(move || {
            let peer = stream
                .peer_addr()
                .map_or("?".into(), |a: SocketAddr| a.to_string());
            if let Err(e) = session(stream, &shared)
                && shared.config.verbose
            {
                eprintln!("hostbench net serve: {peer}: {e}");
            }
            shared.sessions.fetch_sub(1, Ordering::AcqRel);
        });
    }
}

/// A connection that has not yet said what it is, and what it has sent so far.
struct Pending {
    stream: TcpStream,
    /// The header or frame being read (never more: what follows stays in the socket).
    buf: Vec<u8>,
    deadline: Instant,
    /// The nonce sent in `welcome`, while the secret's proof is awaited.
    nonce: Option<String>,
}

enum Step {
    Wait(Pending),
    /// Greeted (and, with a secret, proven): the connection may have a session.
    Control(TcpStream),
    Data(TcpStream, [u8; TOKEN_LEN], u16),
    Drop,
}

impl Pending {
    fn new(stream: TcpStream, deadline: Instant) -> Pending {
        Pending {
            stream,
            buf: Vec::with_capacity(DATA_HEADER_LEN),
            deadline,
            nonce: None,
        }
    }

    /// Bytes still missing from the data header or control frame being read, or None
    /// when the first four bytes announce neither.
    fn missing(&self) -> Option<usize> {
        let have = self.buf.len();
        if have < 4 {
            return Some(4 - have);
        }
        if self.buf[..4] == DATA_MAGIC && self.nonce.is_none() {
            return Some(DATA_HEADER_LEN - have);
        }
        let len = u32::from_be_bytes(self.buf[..4].try_into().expect("4 bytes"));
        (2..=MAX_GREETING)
            .contains(&len)
            .then(|| 4 + len as usize - have)
    }

    /// Reads what is there, up to the end of the current header or frame, and acts
    /// on it once it is whole.
    fn advance(mut self, shared: &Shared) -> Step {
        let mut chunk = [0u8; 512];
        loop {
            let Some(need) = self.missing() else {
                return Step::Drop;
            };
            if need == 0 {
                return self.complete(shared);
            }
            match self.stream.read(&mut chunk[..need.min(512)]) {
                Ok(0) => return Step::Drop,
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e)
                    if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted =>
                {
                    return Step::Wait(self);
                }
                Err(_) => return Step::Drop,
            }
        }
    }

    /// A whole data header, hello or auth frame. Garbage is dropped without a word.
    fn complete(mut self, shared: &Shared) -> Step {
        if self.buf[..4] == DATA_MAGIC && self.nonce.is_none() {
            return match protocol::parse_data_header(&self.buf) {
                Some((token, index)) => Step::Data(self.stream, token, index),
                None => Step::Drop,
            };
        }
        let Ok(msg) = protocol::decode(&self.buf[4..]) else {
            return Step::Drop;
        };
        self.buf.clear();
        match (self.nonce.take(), msg) {
            (None, Message::Hello { protocol: v, .. }) if v == PROTOCOL_VERSION => {
                self.welcome(shared)
            }
            (None, Message::Hello { protocol: v, .. }) => self.refuse(
                shared,
                "version",
                format!(
                    "client speaks protocol {v}, this server {PROTOCOL_VERSION}; use the same hostbench version on both ends"
                ),
            ),
            (None, other) => self.refuse(
                shared,
                "protocol",
                format!("expected hello, got {}", other.kind()),
            ),
            (Some(nonce), Message::Auth { proof }) if proven(shared, &nonce, &proof) => {
                self.control()
            }
            (Some(_), _) => self.refuse(
                shared,
                "auth",
                "wrong or missing secret; give the server's --secret".into(),
            ),
        }
    }

    /// Answers the hello; with a secret the connection stays here for its proof.
    fn welcome(mut self, shared: &Shared) -> Step {
        let nonce = protocol::hex(&protocol::random_token());
        let welcome = Message::Welcome {
            protocol: PROTOCOL_VERSION,
            server: format!("hostbench {}", env!("CARGO_PKG_VERSION")),
            auth: shared.config.secret.is_some(),
            nonce: nonce.clone(),
            limits: shared.config.limits,
        };
        if !self.send(&welcome) {
            return Step::Drop;
        }
        if shared.config.secret.is_none() {
            return self.control();
        }
        self.nonce = Some(nonce);
        Step::Wait(self)
    }

    fn control(self) -> Step {
        match self.stream.set_nonblocking(false) {
            Ok(()) => Step::Control(self.stream),
            Err(_) => Step::Drop,
        }
    }

    fn refuse(mut self, shared: &Shared, code: &str, message: String) -> Step {
        let _ = self.send(&Message::error(code, message.clone()));
        if shared.config.verbose {
            let peer = self
                .stream
                .peer_addr()
                .map_or("?".into(), |a| a.to_string());
            eprintln!("hostbench net serve: {peer}: {message}");
        }
        Step::Drop
    }

    /// One small frame on a fresh connection: its send buffer takes it whole, or the
    /// connection is not worth waiting for.
    fn send(&mut self, msg: &Message) -> bool {
        let frame = protocol::encode(msg);
        matches!(std::io::Write::write(&mut self.stream, &frame), Ok(n) if n == frame.len())
    }
}

/// Whether `proof` is the HMAC of this connection's nonce under the server's secret.
fn proven(shared: &Shared, nonce: &str, proof: &str) -> bool {
    shared.config.secret.as_ref().is_some_and(|secret| {
        protocol::same(
            proof,
            &protocol::hmac_hex(secret.as_bytes(), nonce.as_bytes()),
        )
    })
}

/// Errors that end a session; logged in verbose mode only.
#[derive(Debug, thiserror::Error)]
enum SessionError {
    #[error("{0}")]
    Frame(#[from] FrameError),
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Refused(String),
}

/// Tells the client why (best effort) and ends the session.
fn refuse(ctl: &mut TcpStream, code: &str, message: String) -> SessionError {
    let _ = protocol::write_message(ctl, &Message::error(code, message.clone()));
    SessionError::Refused(message)
}

/// A greeted client's tests, one after the other. A session that is not running a
/// test must have its next one running (`start` answered and every data stream
/// there) within the idle timeout of its greeting or of its last result; nothing
/// else it sends extends that, so a connection cannot keep its session by talking.
fn session(mut ctl: TcpStream, shared: &Shared) -> Result<(), SessionError> {
    let idle = shared.idle();
    ctl.set_write_timeout(Some(idle))?;
    let _ = ctl.set_nodelay(true);
    let mut ready_by = Instant::now() + idle;
    while let Some(req) = next_start(&mut ctl, ready_by, idle)? {
        if let Err(e) = check_request(&req, &shared.config.limits) {
            return Err(refuse(&mut ctl, "limit", e.to_string()));
        }
        let report = run_test(&mut ctl, &req, shared, ready_by)?;
        if shared.config.verbose {
            let bytes: u64 = report.streams.iter().map(|s| s.bytes_received).sum();
            eprintln!(
                "hostbench net serve: {} {} x{} done: {:.2} s, {} bytes received",
                ctl.peer_addr().map_or("?".into(), |a| a.to_string()),
                req.test,
                req.parallel,
                report.elapsed_s,
                bytes
            );
        }
        protocol::write_message(&mut ctl, &Message::Result(report))?;
        ready_by = Instant::now() + idle;
    }
    Ok(())
}

/// The client's next `start`, or None when it closed the connection between tests.
fn next_start(
    ctl: &mut TcpStream,
    ready_by: Instant,
    idle: Duration,
) -> Result<Option<TestRequest>, SessionError> {
    loop {
        let left = ready_by.saturating_duration_since(Instant::now());
        let too_late = || {
            format!(
                "no test started within the idle timeout ({} s); connect again to run one",
                idle.as_secs_f64()
            )
        };
        if left.is_zero() {
            return Err(refuse(ctl, "idle", too_late()));
        }
        ctl.set_read_timeout(Some(left))?;
        match protocol::read_message(ctl) {
            Ok(Message::Start(req)) => return Ok(Some(req)),
            // A repeated stop of the last test: harmless, and it buys no time.
            Ok(Message::Stop) => {}
            Ok(other) => {
                return Err(refuse(
                    ctl,
                    "protocol",
                    format!("expected start, got {}", other.kind()),
                ));
            }
            // The client went away between tests: an orderly end.
            Err(FrameError::Io(e)) if e.kind() == ErrorKind::UnexpectedEof => return Ok(None),
            Err(FrameError::Io(e)) if data::is_timeout(&e) => {
                return Err(refuse(ctl, "idle", too_late()));
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// A test request over this server's limits, in words for the client's user (the
/// server sends the text to the client with the error code `limit`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    #[error("{asked} parallel streams asked; this server allows 1 to {max}")]
    Parallel { asked: u32, max: u32 },
    #[error(
        "a {} s test asked; this server allows at most {} s",
        .asked_ms / 1000,
        .max_ms / 1000
    )]
    Duration { asked_ms: u64, max_ms: u64 },
    #[error("the test has no end: give a duration, a byte count or a transaction count")]
    NoEnd,
    /// A send, request or response size of zero or over the protocol's maximum.
    #[error("{what} {size} is out of range (1 to {max})")]
    Size {
        what: &'static str,
        size: u32,
        max: u32,
    },
    /// A UDP test without a rate, or over the server's total, when the server has a cap.
    #[error("UDP tests on this server are limited to {max_bps} bit/s in total; give a rate")]
    UdpRate { max_bps: u64 },
}

/// A request the server will not run, in words for the client's user.
pub fn check_request(req: &TestRequest, limits: &Limits) -> Result<(), RequestError> {
    if req.parallel == 0 || req.parallel > limits.max_parallel {
        return Err(RequestError::Parallel {
            asked: req.parallel,
            max: limits.max_parallel,
        });
    }
    if req.duration_ms > limits.max_duration_ms {
        return Err(RequestError::Duration {
            asked_ms: req.duration_ms,
            max_ms: limits.max_duration_ms,
        });
    }
    if req.duration_ms == 0 && req.bytes == 0 && req.transactions == 0 {
        return Err(RequestError::NoEnd);
    }
    let max_size = if req.test.is_udp() { 65507 } else { 16 << 20 };
    for (what, size) in [
        ("send size", req.send_size),
        ("request size", req.request_size),
        ("response size", req.response_size),
    ] {
        if size == 0 || size > max_size {
            return Err(RequestError::Size {
                what,
                size,
                max: max_size,
            });
        }
    }
    if limits.max_rate_bps > 0 && req.test.is_udp() {
        let total = req.rate_bps.saturating_mul(u64::from(req.parallel));
        if req.rate_bps == 0 || total > limits.max_rate_bps {
            return Err(RequestError::UdpRate {
                max_bps: limits.max_rate_bps,
            });
        }
    }
    Ok(())
}

/// Removes the test's route when the test ends, however it ends.
struct Route<'a> {
    shared: &'a Shared,
    token: [u8; TOKEN_LEN],
}

impl Drop for Route<'_> {
    fn drop(&mut self) {
        let mut routes = self.shared.routes.lock().unwrap_or_else(|e| e.into_inner());
        routes.remove(&self.token);
    }
}

/// One of the `max_tests` slots, given back when the test ends, however it ends.
struct Slot<'a>(&'a AtomicU32);

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A slot for a test whose streams are there, or "busy".
fn take_slot<'a>(ctl: &mut TcpStream, shared: &'a Shared) -> Result<Slot<'a>, SessionError> {
    let max = shared.config.limits.max_tests;
    if shared.tests.fetch_add(1, Ordering::AcqRel) >= max {
        shared.tests.fetch_sub(1, Ordering::AcqRel);
        return Err(refuse(
            ctl,
            "busy",
            format!("the server is running its limit of {max} tests; try again later"),
        ));
    }
    Ok(Slot(&shared.tests))
}

/// True once the client has closed (or reset) its control connection, whether or not
/// it sent anything first.
fn control_closed(ctl: &TcpStream) -> bool {
    let mut p = libc::pollfd {
        fd: ctl.as_raw_fd(),
        events: libc::POLLRDHUP,
        revents: 0,
    };
    // SAFETY: one valid pollfd, no waiting.
    let n = unsafe { libc::poll(&mut p, 1, 0) };
    n > 0 && p.revents & (libc::POLLRDHUP | libc::POLLHUP | libc::POLLERR) != 0
}

/// Why a test that was asked for never ran (the session ends; no slot was taken).
fn gather_error(ctl: &TcpStream) -> SessionError {
    SessionError::Refused(if control_closed(ctl) {
        "the client closed its control connection before its data streams arrived".into()
    } else {
        "the client did not open its data streams".into()
    })
}

/// Answers `start` with `ready`, waits for the data streams (the first connection of
/// TCP_CRR), and only then takes a test slot; the test then runs.
fn run_test(
    ctl: &mut TcpStream,
    req: &TestRequest,
    shared: &Shared,
    ready_by: Instant,
) -> Result<ServerReport, SessionError> {
    let token = protocol::random_token();
    let (tx, rx) = mpsc::channel::<DataConn>();
    shared
        .routes
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(token, tx.clone());
    let _route = Route { shared, token };
    let peer = ctl.peer_addr()?;
    let udp = bind_udp_streams(ctl, req)?;
    protocol::write_message(
        ctl,
        &Message::Ready {
            token: protocol::hex(&token),
            udp_ports: udp
                .iter()
                .map(|s| s.local_addr().map_or(0, |a| a.port()))
                .collect(),
        },
    )?;
    let until = ready_by.min(Instant::now() + GATHER);
    let tcp = gather(ctl, req, &udp, &token, &rx, peer.ip(), until)?;
    let (_slot, t0) = if req.test == TestKind::TcpCrr {
        // A CRR client connects per transaction once it has `running`: its first
        // connection is its data stream arriving.
        protocol::write_message(ctl, &Message::Running)?;
        let t0 = Instant::now();
        let first = next_data(ctl, &rx, until)?;
        let slot = take_slot(ctl, shared)?;
        let _ = tx.send(first);
        (slot, t0)
    } else {
        let slot = take_slot(ctl, shared)?;
        protocol::write_message(ctl, &Message::Running)?;
        (slot, Instant::now())
    };
    measure(ctl, req, shared, (tcp, udp, rx), t0)
}

/// A UDP test's sockets, one per stream, on the control connection's local address.
fn bind_udp_streams(ctl: &TcpStream, req: &TestRequest) -> Result<Vec<UdpSocket>, SessionError> {
    let mut udp = Vec::new();
    if !req.test.is_udp() {
        return Ok(udp);
    }
    let opts = SockOpts {
        sndbuf: req.server_sndbuf,
        rcvbuf: req.server_rcvbuf,
        nodelay: req.nodelay,
    };
    let local = ctl.local_addr()?;
    for _ in 0..req.parallel {
        let s = sock::bind_udp(SocketAddr::new(local.ip(), 0), opts)?;
        s.set_read_timeout(Some(POLL))?;
        udp.push(s);
    }
    Ok(udp)
}

/// The test's data streams, by index (UDP: each socket joined; CRR: none yet), while
/// the control connection stays open and before `until`.
fn gather(
    ctl: &TcpStream,
    req: &TestRequest,
    udp: &[UdpSocket],
    token: &[u8; TOKEN_LEN],
    rx: &Receiver<DataConn>,
    peer_ip: IpAddr,
    until: Instant,
) -> Result<Vec<Option<TcpStream>>, SessionError> {
    let mut tcp: Vec<Option<TcpStream>> = (0..req.parallel).map(|_| None).collect();
    if req.test.is_udp() {
        for (i, s) in udp.iter().enumerate() {
            await_join(ctl, s, token, i as u16, peer_ip, until)?;
        }
    } else if req.test != TestKind::TcpCrr {
        let mut got = 0;
        while got < req.parallel {
            let (stream, index) = next_data(ctl, rx, until)?;
            if let Some(slot) = tcp.get_mut(index as usize)
                && slot.is_none()
            {
                *slot = Some(stream);
                got += 1;
            }
        }
    }
    Ok(tcp)
}

/// The test's next data connection; the wait ends as soon as the client closes its
/// control connection.
fn next_data(
    ctl: &TcpStream,
    rx: &Receiver<DataConn>,
    until: Instant,
) -> Result<DataConn, SessionError> {
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() || control_closed(ctl) {
            return Err(gather_error(ctl));
        }
        match rx.recv_timeout(left.min(Duration::from_millis(20))) {
            Ok(conn) => return Ok(conn),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return Err(gather_error(ctl)),
        }
    }
}

/// The running test, from `running` to the server's report.
fn measure(
    ctl: &mut TcpStream,
    req: &TestRequest,
    shared: &Shared,
    (mut tcp, udp, rx): (Vec<Option<TcpStream>>, Vec<UdpSocket>, Receiver<DataConn>),
    t0: Instant,
) -> Result<ServerReport, SessionError> {
    let limits = &shared.config.limits;
    let idle = shared.idle();
    let rx = Mutex::new(rx);
    let stop = Arc::new(AtomicBool::new(false));
    let counters: Vec<AtomicU64> = (0..req.parallel).map(|_| AtomicU64::new(0)).collect();
    let congestion = tcp.iter().flatten().next().and_then(sock::congestion);
    let duration = Duration::from_millis(req.duration_ms);
    // The client ends the test; this is the backstop if it never does.
    // A test bounded by bytes or transactions may run up to the server's longest test.
    let length = if duration.is_zero() {
        Duration::from_millis(limits.max_duration_ms)
    } else {
        duration
    };
    let hard_end = t0 + length + idle + Duration::from_secs(10);

    let mut reader = ctl.try_clone()?;
    reader.set_read_timeout(Some(POLL))?;
    let client_gone = AtomicBool::new(false);
    // The server's bandwidth limit paces what it sends (TCP_MAERTS), per stream.
    let max_rate = limits.max_rate_bps / u64::from(req.parallel.max(1));
    let reports = std::thread::scope(|scope| {
        let stop_watch = stop.clone();
        let client_gone = &client_gone;
        let watcher = scope.spawn(move || watch_control(&mut reader, &stop_watch, client_gone));
        let mut workers = Vec::new();
        for i in 0..req.parallel as usize {
            let stream = tcp[i].take();
            let udp = udp.get(i);
            let (stop, counter, rx) = (stop.clone(), &counters[i], &rx);
            workers.push(scope.spawn(move || {
                let cpu0 = CpuTime::thread_now();
                let mut r = serve_stream(req, max_rate, stream, udp, stop, counter, rx, t0, idle);
                r.index = i as u32;
                (r, CpuTime::thread_now().since(&cpu0))
            }));
        }
        // Interval reports of what the server receives; then wait for the workers.
        let mut next = t0 + Duration::from_millis(req.interval_ms.max(1));
        let mut last_bytes = 0u64;
        let mut last_at = t0;
        while workers.iter().any(|w| !w.is_finished()) {
            std::thread::sleep(Duration::from_millis(10));
            let now = Instant::now();
            if now > hard_end {
                stop.store(true, Ordering::Relaxed);
            }
            if req.interval_ms > 0 && req.test.server_receives() && now >= next {
                let bytes: u64 = counters.iter().map(|c| c.load(Ordering::Relaxed)).sum();
                let report = IntervalReport {
                    start_s: (last_at - t0).as_secs_f64(),
                    end_s: (now - t0).as_secs_f64(),
                    bytes: bytes - last_bytes,
                    packets: 0,
                };
                let _ = protocol::write_message(ctl, &Message::Interval(report));
                last_bytes = bytes;
                last_at = now;
                next += Duration::from_millis(req.interval_ms);
            }
        }
        let reports: Vec<_> = workers
            .into_iter()
            .map(|w| w.join().unwrap_or_default())
            .collect();
        // The watcher must see the client's Stop before the Result goes out, so the
        // next read on the control connection is the next test's Start.
        let deadline = Instant::now() + idle;
        while !watcher.is_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        stop.store(true, Ordering::Relaxed);
        let _ = watcher.join();
        reports
    });
    if client_gone.load(Ordering::Relaxed) {
        return Err(SessionError::Refused(
            "the client went away mid-test".into(),
        ));
    }
    let mut report = ServerReport {
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        congestion,
        ..Default::default()
    };
    for (stream, cpu) in reports {
        report.cpu_user_s += cpu.user_s;
        report.cpu_system_s += cpu.system_s;
        report.elapsed_s = report.elapsed_s.max(stream.elapsed_s);
        report.streams.push(stream);
    }
    Ok(report)
}

/// Reads the control connection during a test: `Stop` ends it; EOF means the client
/// died, which ends it too.
fn watch_control(reader: &mut TcpStream, stop: &AtomicBool, gone: &AtomicBool) {
    loop {
        match protocol::read_message(reader) {
            Ok(Message::Stop) => {
                stop.store(true, Ordering::Relaxed);
                return;
            }
            Ok(_) => {}
            Err(FrameError::Io(e)) if data::is_timeout(&e) => {
                // A timeout may have cut a frame in half; frames are tiny and sent whole,
                // so in practice this only fires between frames.
                if stop.load(Ordering::Relaxed) {
                    return;
                }
            }
            Err(_) => {
                gone.store(true, Ordering::Relaxed);
                stop.store(true, Ordering::Relaxed);
                return;
            }
        }
    }
}

/// Waits for the client's join datagram on `s` from the control peer's address, then
/// connects the socket to its sender and confirms. Nothing is ever sent to an address
/// that did not present the test's token.
fn await_join(
    ctl: &TcpStream,
    s: &UdpSocket,
    token: &[u8; TOKEN_LEN],
    index: u16,
    peer_ip: IpAddr,
    until: Instant,
) -> Result<(), SessionError> {
    let mut buf = [0u8; 64];
    while Instant::now() < until && !control_closed(ctl) {
        match s.recv_from(&mut buf) {
            Ok((n, from))
                if n == UDP_JOIN_LEN
                    && is_join(&buf[..n], token, index)
                    && same_ip(from.ip(), peer_ip) =>
            {
                s.connect(from)?;
                s.send(&buf[..n])?;
                return Ok(());
            }
            Ok(_) => {}
            Err(e) if data::is_timeout(&e) => {}
            Err(e) => return Err(e.into()),
        }
    }
    if control_closed(ctl) {
        return Err(gather_error(ctl));
    }
    Err(SessionError::Refused(
        "the client's UDP join never arrived (a firewall dropping UDP?)".into(),
    ))
}

pub fn join_datagram(token: &[u8; TOKEN_LEN], index: u16) -> [u8; UDP_JOIN_LEN] {
    let mut d = [0u8; UDP_JOIN_LEN];
    d[..4].copy_from_slice(&UDP_JOIN_MAGIC);
    d[4..4 + TOKEN_LEN].copy_from_slice(token);
    d[4 + TOKEN_LEN..].copy_from_slice(&index.to_be_bytes());
    d
}

fn is_join(d: &[u8], token: &[u8; TOKEN_LEN], index: u16) -> bool {
    d == join_datagram(token, index)
}

/// A repeated join (our confirmation was lost) among data datagrams.
fn is_any_join(d: &[u8]) -> bool {
    d.len() == UDP_JOIN_LEN && d[..4] == UDP_JOIN_MAGIC
}

/// IPv4 clients of a dual-stack socket appear as ::ffff:a.b.c.d.
fn same_ip(a: IpAddr, b: IpAddr) -> bool {
    let canon = |ip: IpAddr| match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    };
    canon(a) == canon(b)
}

#[allow(clippy::too_many_arguments)]
fn serve_stream(
    req: &TestRequest,
    max_rate: u64,
    tcp: Option<TcpStream>,
    udp: Option<&UdpSocket>,
    stop: Arc<AtomicBool>,
    counter: &AtomicU64,
    crr: &Mutex<Receiver<DataConn>>,
    t0: Instant,
    idle: Duration,
) -> StreamReport {
    let mut r = StreamReport::default();
    let since_t0 = |at: Option<Instant>| at.map_or(0.0, |a| (a - t0).as_secs_f64());
    if let Some(mut s) = tcp {
        let _ = s.set_read_timeout(Some(POLL));
        let _ = s.set_write_timeout(Some(idle));
        let (snd, rcv) = sock::buffer_sizes(&s);
        r.sndbuf = snd;
        r.rcvbuf = rcv;
        match req.test {
            TestKind::TcpStream => {
                let size = if req.recv_size > 0 {
                    req.recv_size
                } else {
                    req.send_size
                };
                let t = data::recv_stream(&mut s, size as usize, &stop, counter);
                let t = t.unwrap_or_default();
                r.bytes_received = t.bytes;
                r.elapsed_s = since_t0(t.last);
            }
            TestKind::TcpMaerts => {
                let deadline =
                    (req.duration_ms > 0).then(|| t0 + Duration::from_millis(req.duration_ms));
                // The byte budget is per test; each stream sends its share.
                let share = req.bytes.div_ceil(u64::from(req.parallel));
                let limit = Limit::new(deadline, share, stop.clone());
                let t =
                    data::send_stream(&mut s, req.send_size as usize, &limit, max_rate, counter);
                let t = t.unwrap_or_default();
                r.bytes_sent = t.bytes;
                r.retransmits = sock::retransmits(&s);
                r.elapsed_s = since_t0(t.last);
                // Wait for the client's EOF so the last bytes are not cut by a reset.
                let mut sink = [0u8; 512];
                let until = Instant::now() + idle;
                while Instant::now() < until {
                    match s.read(&mut sink) {
                        Ok(0) => break,
                        Ok(_) => {}
                        Err(e) if data::is_timeout(&e) => {}
                        Err(_) => break,
                    }
                }
            }
            TestKind::TcpRr => {
                let n = data::rr_server_tcp(
                    &mut s,
                    req.request_size as usize,
                    req.response_size as usize,
                    &stop,
                    counter,
                );
                r.transactions = n.unwrap_or(counter.load(Ordering::Relaxed));
                r.retransmits = sock::retransmits(&s);
                r.elapsed_s = (Instant::now() - t0).as_secs_f64();
            }
            _ => {}
        }
    } else if let Some(s) = udp {
        let (snd, rcv) = sock::buffer_sizes(s);
        r.sndbuf = snd;
        r.rcvbuf = rcv;
        if req.test == TestKind::UdpStream {
            let t = recv_udp_filtered(s, &stop, counter);
            r.packets = t.packets;
            r.bytes_received = t.bytes;
            r.lost = t.lost;
            r.out_of_order = t.out_of_order;
            r.elapsed_s = since_t0(t.last);
        } else {
            r.transactions = rr_udp_filtered(s, req.response_size as usize, &stop, counter);
            r.elapsed_s = (Instant::now() - t0).as_secs_f64();
        }
    } else if req.test == TestKind::TcpCrr {
        r.transactions = serve_crr(req, &stop, counter, crr, idle);
        r.elapsed_s = (Instant::now() - t0).as_secs_f64();
    }
    r
}

/// TCP_CRR: each accepted connection carries one request; answer, then wait for close.
fn serve_crr(
    req: &TestRequest,
    stop: &AtomicBool,
    counter: &AtomicU64,
    rx: &Mutex<Receiver<DataConn>>,
    idle: Duration,
) -> u64 {
    let out = data::payload(req.response_size as usize);
    let mut inb = vec![0u8; req.request_size as usize];
    let mut n = 0u64;
    let mut quiet_since = Instant::now();
    loop {
        let next = rx
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .recv_timeout(Duration::from_millis(20));
        let Ok((mut s, _)) = next else {
            if stop.load(Ordering::Relaxed) || stop_requested() || quiet_since.elapsed() > idle {
                return n;
            }
            continue;
        };
        quiet_since = Instant::now();
        let _ = s.set_read_timeout(Some(idle));
        let _ = s.set_write_timeout(Some(idle));
        if s.read_exact(&mut inb).is_ok() && std::io::Write::write_all(&mut s, &out).is_ok() {
            n += 1;
            counter.store(n, Ordering::Relaxed);
            // The client closes first (it holds TIME_WAIT, as with netperf).
            let mut sink = [0u8; 64];
            let _ = s.read(&mut sink);
        }
    }
}

fn recv_udp_filtered(s: &UdpSocket, stop: &AtomicBool, counter: &AtomicU64) -> data::UdpRecvTotals {
    let mut buf = vec![0u8; 65536];
    let mut t = data::UdpRecvTotals::default();
    loop {
        match s.recv(&mut buf) {
            Ok(n) if is_any_join(&buf[..n]) => {
                let _ = s.send(&buf[..n]);
            }
            Ok(0) => {}
            Ok(n) => {
                t.account(&buf[..n]);
                counter.store(t.bytes, Ordering::Relaxed);
            }
            // A quiet 100 ms after the client's Stop: whatever was queued has arrived.
            Err(e) if data::is_timeout(&e) => {
                if stop.load(Ordering::Relaxed) || stop_requested() {
                    break;
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => {}
            Err(_) => break,
        }
    }
    t
}

fn rr_udp_filtered(s: &UdpSocket, rsp: usize, stop: &AtomicBool, counter: &AtomicU64) -> u64 {
    let mut out = data::payload(rsp.max(1));
    let mut inb = vec![0u8; 65536];
    let mut n = 0u64;
    loop {
        match s.recv(&mut inb) {
            Ok(k) if is_any_join(&inb[..k]) => {
                let _ = s.send(&inb[..k]);
            }
            Ok(k) => {
                let echo = k.min(8).min(rsp);
                out[..echo].copy_from_slice(&inb[..echo]);
                if s.send(&out[..rsp]).is_ok() {
                    n += 1;
                    counter.store(n, Ordering::Relaxed);
                }
            }
            Err(e) if data::is_timeout(&e) => {
                if stop.load(Ordering::Relaxed) || stop_requested() {
                    break;
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => {}
            Err(_) => break,
        }
    }
    n
}

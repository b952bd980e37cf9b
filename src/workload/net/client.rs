//! `hostbench net <TEST> <host>`: the client side of a test against `hostbench net
//! serve`. It asks for the test on the control connection, opens the data streams,
//! runs its half of the data loops, then collects the server's half. The client alone
//! decides when the test ends (time, bytes or transactions), as in netperf and iperf3.

use super::data::{self, LatencyRecorder, Limit, POLL};
use super::protocol::{
    self, FrameError, IntervalReport, Message, PROTOCOL_VERSION, ServerReport, TestRequest,
};
use super::server::join_datagram;
use super::sock::{self, SockOpts};
use super::{Family, NetError, TestKind};
use crate::measure::cputime::CpuTime;
use crate::units::{format_bits, format_bytes};
use crate::workload::observe::{Observer, Progress, Snapshot};
use std::io::Write;
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct ClientSpec {
    pub host: String,
    pub port: u16,
    pub family: Family,
    pub request: TestRequest,
    /// This end's socket buffers (0 = kernel default).
    pub local: SockOpts,
    pub secret: Option<String>,
    pub connect_timeout: Duration,
    /// UDP_RR: how long to wait for a response before counting it lost.
    pub rr_timeout: Duration,
}

impl ClientSpec {
    pub fn new(host: &str, port: u16, request: TestRequest) -> Self {
        Self {
            host: host.into(),
            port,
            family: Family::Any,
            request,
            local: SockOpts::default(),
            secret: None,
            connect_timeout: Duration::from_secs(5),
            rr_timeout: Duration::from_millis(500),
        }
    }
}

/// What this end measured on one stream.
#[derive(Debug, Clone, Default)]
pub struct LocalStream {
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub send_calls: u64,
    pub packets_sent: u64,
    pub send_errors: u64,
    pub transactions: u64,
    pub lost: u64,
    pub retransmits: Option<u64>,
    /// From the start signal to this stream's last byte or transaction.
    pub elapsed_s: f64,
    pub sndbuf: u64,
    pub rcvbuf: u64,
}

/// Everything a test produced, both ends.
#[derive(Debug, Clone)]
pub struct ClientResult {
    pub request: TestRequest,
    /// This end's socket options, as asked for.
    pub local_opts: SockOpts,
    pub local_addr: SocketAddr,
    pub peer_addr: SocketAddr,
    pub streams: Vec<LocalStream>,
    pub server: ServerReport,
    pub latency: Option<LatencyRecorder>,
    /// Receiver-side interval reports (from the server when it receives).
    pub intervals: Vec<IntervalReport>,
    pub elapsed_s: f64,
    pub cpu: CpuTime,
    pub cpus: u32,
    pub mss: Option<u32>,
    pub congestion: Option<String>,
    pub interrupted: bool,
}

/// How long the server has for each answer until the test runs (and to greet).
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);

fn protocol_error(peer: &SocketAddr, e: impl std::fmt::Display) -> NetError {
    NetError::Protocol {
        peer: peer.to_string(),
        reason: e.to_string(),
    }
}

/// The server's answer to a step before the test runs. Until it has greeted us, a
/// silent or closing peer may be no hostbench server at all, and the message says so.
fn read_reply(ctl: &mut TcpStream, peer: &SocketAddr, greeted: bool) -> Result<Message, NetError> {
    let hint = if greeted {
        ""
    } else {
        " (is it a hostbench server, `hostbench net serve`?)"
    };
    match protocol::read_message(ctl) {
        Ok(Message::Error { code, message }) => {
            Err(NetError::Refused(format!("{message} ({code})")))
        }
        Ok(m) => Ok(m),
        Err(FrameError::Io(e)) if data::is_timeout(&e) => Err(protocol_error(
            peer,
            format!("no answer within {} s{hint}", ANSWER_TIMEOUT.as_secs()),
        )),
        Err(FrameError::Io(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => Err(
            protocol_error(peer, format!("the server closed the connection{hint}")),
        ),
        Err(e) => Err(protocol_error(peer, e)),
    }
}

/// Connects the control channel and runs the greeting (and the secret's proof).
fn open_control(spec: &ClientSpec) -> Result<(TcpStream, SocketAddr), NetError> {
    let mut last = None;
    for addr in super::resolve(&spec.host, spec.port, spec.family)? {
        match sock::connect_tcp(
            addr,
            SockOpts {
                nodelay: true,
                ..Default::default()
            },
            spec.connect_timeout,
        ) {
            Ok(s) => return greet(s, addr, spec).map(|s| (s, addr)),
            Err(e) => last = Some(e),
        }
    }
    Err(last.expect("resolve returns at least one address"))
}

fn greet(mut ctl: TcpStream, peer: SocketAddr, spec: &ClientSpec) -> Result<TcpStream, NetError> {
    let io = |e| NetError::io(format!("control connection to {peer}"), e);
    ctl.set_read_timeout(Some(ANSWER_TIMEOUT)).map_err(io)?;
    ctl.set_write_timeout(Some(ANSWER_TIMEOUT)).map_err(io)?;
    protocol::write_message(
        &mut ctl,
        &Message::Hello {
            protocol: PROTOCOL_VERSION,
            client: format!("hostbench {}", env!("CARGO_PKG_VERSION")),
        },
    )
    .map_err(io)?;
    let Message::Welcome {
        protocol: v,
        auth,
        nonce,
        ..
    } = read_reply(&mut ctl, &peer, false)?
    else {
        return Err(protocol_error(&peer, "expected welcome"));
    };
    if v != PROTOCOL_VERSION {
        return Err(protocol_error(
            &peer,
            format!("server speaks protocol {v}, this client {PROTOCOL_VERSION}"),
        ));
    }
    if auth {
        let Some(secret) = &spec.secret else {
            return Err(NetError::Refused(
                "the server needs a shared secret: give it with --secret".into(),
            ));
        };
        let proof = protocol::hmac_hex(secret.as_bytes(), nonce.as_bytes());
        protocol::write_message(&mut ctl, &Message::Auth { proof }).map_err(io)?;
    }
    Ok(ctl)
}

enum Event {
    Interval(IntervalReport),
    Done(Result<ServerReport, NetError>),
    /// The control connection closed or broke mid-test: what happened, in words.
    Lost(String),
}

/// Runs one test. The observer sees each receiver-side interval as it completes
/// (`Snapshot::Net`), progress about ten times a second, and is asked whether to stop.
pub fn run(spec: &ClientSpec, observer: &dyn Observer) -> Result<ClientResult, NetError> {
    let connected = Connected::open(spec)?;
    Running::start(spec, connected, observer)?.finish()
}

/// A test the server has accepted, its data streams open, not yet started.
struct Connected {
    ctl: TcpStream,
    peer: SocketAddr,
    token: [u8; 16],
    tcp: Vec<Option<TcpStream>>,
    udp: Vec<Option<UdpSocket>>,
    mss: Option<u32>,
    congestion: Option<String>,
}

impl Connected {
    fn open(spec: &ClientSpec) -> Result<Connected, NetError> {
        let (mut ctl, peer) = open_control(spec)?;
        let io = |e| NetError::io(format!("control connection to {peer}"), e);
        protocol::write_message(&mut ctl, &Message::Start(spec.request.clone())).map_err(io)?;
        let Message::Ready { token, udp_ports } = read_reply(&mut ctl, &peer, true)? else {
            return Err(protocol_error(&peer, "expected ready"));
        };
        let token =
            protocol::unhex_token(&token).ok_or_else(|| protocol_error(&peer, "bad token"))?;
        let mut c = Connected {
            ctl,
            peer,
            token,
            tcp: Vec::new(),
            udp: Vec::new(),
            mss: None,
            congestion: None,
        };
        c.open_streams(spec, &udp_ports)?;
        c.await_running()?;
        Ok(c)
    }

    /// Data streams: TCP to the control port with the token; UDP joins its port.
    fn open_streams(&mut self, spec: &ClientSpec, udp_ports: &[u16]) -> Result<(), NetError> {
        let (req, peer) = (&spec.request, self.peer);
        let data_opts = SockOpts {
            nodelay: spec.local.nodelay || req.nodelay,
            ..spec.local
        };
        if req.test.is_udp() {
            if udp_ports.len() != req.parallel as usize {
                return Err(protocol_error(&peer, "wrong number of UDP ports"));
            }
            for (i, port) in udp_ports.iter().enumerate() {
                let s = sock::bind_udp(sock::unspecified_like(&peer), spec.local)
                    .map_err(|e| NetError::io("UDP socket", e))?;
                s.connect(SocketAddr::new(peer.ip(), *port))
                    .map_err(|e| NetError::io("UDP connect", e))?;
                join_udp(&s, &self.token, i as u16, &peer)?;
                self.udp.push(Some(s));
            }
        } else if req.test != TestKind::TcpCrr {
            for i in 0..req.parallel {
                let mut s = sock::connect_tcp(peer, data_opts, spec.connect_timeout)?;
                s.write_all(&protocol::data_header(&self.token, i as u16))
                    .map_err(|e| NetError::io("data stream", e))?;
                self.tcp.push(Some(s));
            }
        }
        self.congestion = self.tcp.iter().flatten().next().and_then(sock::congestion);
        self.mss = self.tcp.iter().flatten().next().and_then(sock::mss);
        Ok(())
    }

    fn await_running(&mut self) -> Result<(), NetError> {
        match read_reply(&mut self.ctl, &self.peer, true)? {
            Message::Running => Ok(()),
            other => Err(protocol_error(
                &self.peer,
                format!("expected running, got {}", other.kind()),
            )),
        }
    }
}

/// A running test: the control connection's reader thread, the streams' counters,
/// and what has been reported so far.
struct Running<'a> {
    spec: &'a ClientSpec,
    observer: &'a dyn Observer,
    c: Connected,
    t0: Instant,
    cpu0: CpuTime,
    stop: Arc<AtomicBool>,
    limit: Limit,
    counters: Vec<AtomicU64>,
    events: mpsc::Receiver<Event>,
    patience: Duration,
    intervals: Vec<IntervalReport>,
    server_result: Option<Result<ServerReport, NetError>>,
    /// The server went away mid-test: how, and when (seconds into the test).
    lost: Option<(String, f64)>,
}

type StreamOutcome = Result<(LocalStream, Option<LatencyRecorder>), NetError>;

impl<'a> Running<'a> {
    fn start(
        spec: &'a ClientSpec,
        c: Connected,
        observer: &'a dyn Observer,
    ) -> Result<Running<'a>, NetError> {
        let req = &spec.request;
        let t0 = Instant::now();
        let stop = Arc::new(AtomicBool::new(false));
        let duration = Duration::from_millis(req.duration_ms);
        let deadline = (req.duration_ms > 0).then(|| t0 + duration);
        let budget = if req.test.is_rr() {
            req.transactions
        } else {
            req.bytes
        };
        let patience = duration + Duration::from_secs(30);
        let events = spawn_reader(&c.ctl, c.peer, patience)?;
        Ok(Running {
            spec,
            observer,
            t0,
            cpu0: CpuTime::now(),
            limit: Limit::new(deadline, budget, stop.clone()),
            stop,
            counters: (0..req.parallel).map(|_| AtomicU64::new(0)).collect(),
            events,
            patience,
            intervals: Vec::new(),
            server_result: None,
            lost: None,
            c,
        })
    }

    fn interval(&mut self, i: IntervalReport) {
        self.observer.snapshot(&Snapshot::Net(&i));
        self.intervals.push(i);
    }

    /// Runs the streams to their end, then collects the server's half.
    fn finish(mut self) -> Result<ClientResult, NetError> {
        let streams = self.run_streams();
        let elapsed = self.t0.elapsed();
        let cpu = CpuTime::now().since(&self.cpu0);
        let _ = protocol::write_message(&mut self.c.ctl, &Message::Stop);
        let server = self.server_report()?;
        let (local, latency) = merge_streams(streams)?;
        let c = &self.c;
        Ok(ClientResult {
            request: self.spec.request.clone(),
            local_opts: self.spec.local,
            local_addr: c
                .ctl
                .local_addr()
                .map_err(|e| NetError::io(format!("control connection to {}", c.peer), e))?,
            peer_addr: c.peer,
            streams: local,
            server,
            latency,
            intervals: self.intervals,
            elapsed_s: elapsed.as_secs_f64(),
            cpu,
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
            mss: c.mss,
            congestion: c.congestion.clone(),
            interrupted: self.observer.stop_requested(),
        })
    }

    /// One thread per stream; this one watches them, the control connection, the
    /// clock for local intervals, and the observer.
    fn run_streams(&mut self) -> Vec<StreamOutcome> {
        let (spec, peer, token, t0) = (self.spec, self.c.peer, self.c.token, self.t0);
        let mut tcp = std::mem::take(&mut self.c.tcp);
        let mut udp = std::mem::take(&mut self.c.udp);
        let limit = self.limit.clone();
        let counters = std::mem::take(&mut self.counters);
        let outcomes = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..spec.request.parallel as usize)
                .map(|i| {
                    let (t, u) = (
                        tcp.get_mut(i).and_then(Option::take),
                        udp.get_mut(i).and_then(Option::take),
                    );
                    let (limit, counter) = (limit.clone(), &counters[i]);
                    scope.spawn(move || run_stream(spec, peer, &token, t, u, &limit, counter, t0))
                })
                .collect();
            let mut watch = Watch::new(spec, t0);
            while workers.iter().any(|w| !w.is_finished()) {
                let done: u64 = counters.iter().map(|c| c.load(Ordering::Relaxed)).sum();
                self.watch_once(&mut watch, done);
            }
            workers
                .into_iter()
                .map(|w| {
                    w.join()
                        .unwrap_or_else(|_| Err(protocol_error(&peer, "a stream thread failed")))
                })
                .collect()
        });
        self.counters = counters;
        outcomes
    }

    /// About 10 ms of watching: progress, one control event, a local interval, a stop.
    fn watch_once(&mut self, watch: &mut Watch, done: u64) {
        if let Some(p) = watch.progress_due(done) {
            self.observer.progress(&p);
        }
        if self.observer.stop_requested() {
            self.stop.store(true, Ordering::Relaxed);
        }
        match self.events.recv_timeout(Duration::from_millis(10)) {
            Ok(Event::Interval(i)) => self.interval(i),
            Ok(Event::Done(r)) => {
                // The server ended early (an error or its own limit): stop.
                self.stop.store(true, Ordering::Relaxed);
                self.server_result = Some(r);
            }
            Ok(Event::Lost(how)) => {
                self.stop.store(true, Ordering::Relaxed);
                self.lost = Some((how, self.t0.elapsed().as_secs_f64()));
            }
            Err(_) => {}
        }
        if let Some(i) = watch.local_interval_due(done) {
            self.interval(i);
        }
    }

    fn server_report(&mut self) -> Result<ServerReport, NetError> {
        if let Some(r) = self.server_result.take() {
            return r;
        }
        loop {
            if let Some((how, at_s)) = self.lost.take() {
                return Err(self.server_lost(how, at_s));
            }
            match self.events.recv_timeout(self.patience) {
                Ok(Event::Interval(i)) => self.interval(i),
                Ok(Event::Done(r)) => return r,
                Ok(Event::Lost(how)) => self.lost = Some((how, self.t0.elapsed().as_secs_f64())),
                Err(_) => {
                    let how = format!(
                        "the server {} sent no result within {} s",
                        self.c.peer,
                        self.patience.as_secs()
                    );
                    self.lost = Some((how, self.t0.elapsed().as_secs_f64()));
                }
            }
        }
    }

    /// The server is gone: what this end counted until then, as a partial result.
    fn server_lost(&self, how: String, at_s: f64) -> NetError {
        let done: u64 = self
            .counters
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .sum();
        let ran = self.t0.elapsed().as_secs_f64().min(at_s).max(1e-9);
        let bytes = |verb: &str| {
            format!(
                "{} {verb} in {ran:.2} s ({})",
                format_bytes(done),
                format_bits(done as f64 / ran)
            )
        };
        let partial = match self.spec.request.test {
            TestKind::TcpStream | TestKind::UdpStream => format!(
                "{}; what arrived was the server's count, lost with it",
                bytes("sent")
            ),
            TestKind::TcpMaerts => bytes("received"),
            _ => format!(
                "{done} transactions in {ran:.2} s ({:.1}/s)",
                done as f64 / ran
            ),
        };
        NetError::ServerLost {
            how: format!("{how} {at_s:.1} s into the test"),
            partial,
        }
    }
}

/// The control connection's reader: interval reports, then the result.
fn spawn_reader(
    ctl: &TcpStream,
    peer: SocketAddr,
    patience: Duration,
) -> Result<mpsc::Receiver<Event>, NetError> {
    let io = |e| NetError::io(format!("control connection to {peer}"), e);
    let mut reader = ctl.try_clone().map_err(io)?;
    reader.set_read_timeout(Some(patience)).map_err(io)?;
    let (tx, rx) = mpsc::channel::<Event>();
    std::thread::spawn(move || {
        loop {
            let event = match protocol::read_message(&mut reader) {
                Ok(Message::Interval(i)) => Event::Interval(i),
                Ok(Message::Result(r)) => Event::Done(Ok(r)),
                Ok(Message::Error { code, message }) => {
                    Event::Done(Err(NetError::Refused(format!("{message} ({code})"))))
                }
                Ok(other) => Event::Done(Err(protocol_error(
                    &peer,
                    format!("unexpected {}", other.kind()),
                ))),
                Err(FrameError::Io(e)) => Event::Lost(lost_how(&peer, &e, patience)),
                Err(e) => Event::Done(Err(protocol_error(&peer, e))),
            };
            let last = !matches!(event, Event::Interval(_));
            if tx.send(event).is_err() || last {
                return;
            }
        }
    });
    Ok(rx)
}

/// How the control connection ended mid-test, in words naming the server.
fn lost_how(peer: &SocketAddr, e: &std::io::Error, patience: Duration) -> String {
    use std::io::ErrorKind;
    match e.kind() {
        ErrorKind::UnexpectedEof => format!("the server {peer} closed the connection"),
        _ if data::is_timeout(e) => format!(
            "the server {peer} sent nothing for {} s",
            patience.as_secs()
        ),
        _ => format!("the connection to the server {peer} failed ({e})"),
    }
}

/// The clocks of the watching loop: progress ten times a second, and this end's own
/// intervals when it is the receiver (the server reports them when it receives).
struct Watch {
    t0: Instant,
    next_tick: Instant,
    local: bool,
    rr: bool,
    step: Duration,
    next: Instant,
    last_count: u64,
    last_at: Instant,
}

impl Watch {
    fn new(spec: &ClientSpec, t0: Instant) -> Watch {
        let req = &spec.request;
        let step = Duration::from_millis(req.interval_ms.max(1));
        Watch {
            t0,
            next_tick: t0,
            local: req.interval_ms > 0 && !req.test.server_receives(),
            rr: req.test.is_rr(),
            step,
            next: t0 + step,
            last_count: 0,
            last_at: t0,
        }
    }

    fn progress_due(&mut self, done: u64) -> Option<Progress> {
        if Instant::now() < self.next_tick {
            return None;
        }
        self.next_tick += Duration::from_millis(100);
        Some(Progress::at(self.t0.elapsed(), done))
    }

    fn local_interval_due(&mut self, count: u64) -> Option<IntervalReport> {
        let now = Instant::now();
        if !self.local || now < self.next {
            return None;
        }
        let moved = count - self.last_count;
        let i = IntervalReport {
            start_s: (self.last_at - self.t0).as_secs_f64(),
            end_s: (now - self.t0).as_secs_f64(),
            bytes: if self.rr { 0 } else { moved },
            packets: if self.rr { moved } else { 0 },
        };
        self.last_count = count;
        self.last_at = now;
        self.next += self.step;
        Some(i)
    }
}

/// The streams' own figures, and their latencies merged into one recorder.
fn merge_streams(
    streams: Vec<StreamOutcome>,
) -> Result<(Vec<LocalStream>, Option<LatencyRecorder>), NetError> {
    let mut local = Vec::new();
    let mut latency: Option<LatencyRecorder> = None;
    for s in streams {
        let (stream, lat) = s?;
        if let Some(l) = lat {
            match &mut latency {
                Some(all) => all.merge(&l),
                None => latency = Some(l),
            }
        }
        local.push(stream);
    }
    Ok((local, latency))
}

/// Sends the join datagram until the server confirms it (lost datagrams are retried).
fn join_udp(
    s: &UdpSocket,
    token: &[u8; 16],
    index: u16,
    peer: &SocketAddr,
) -> Result<(), NetError> {
    let join = join_datagram(token, index);
    let _ = s.set_read_timeout(Some(Duration::from_millis(200)));
    let mut buf = [0u8; 64];
    for _ in 0..25 {
        let _ = s.send(&join);
        if let Ok(n) = s.recv(&mut buf)
            && buf[..n] == join
        {
            return Ok(());
        }
    }
    Err(protocol_error(
        peer,
        "the server never confirmed the UDP stream (is UDP blocked by a firewall?)",
    ))
}

#[allow(clippy::too_many_arguments)]
fn run_stream(
    spec: &ClientSpec,
    peer: SocketAddr,
    token: &[u8; 16],
    tcp: Option<TcpStream>,
    udp: Option<UdpSocket>,
    limit: &Limit,
    counter: &AtomicU64,
    t0: Instant,
) -> Result<(LocalStream, Option<LatencyRecorder>), NetError> {
    let req = &spec.request;
    let mut r = LocalStream::default();
    let since = |at: Option<Instant>| at.map_or(0.0, |a| (a - t0).as_secs_f64());
    let io = |what: &str, e| NetError::io(format!("{} {what} with {peer}", req.test), e);
    let mut latency = None;
    if let Some(mut s) = tcp {
        // A dead peer must not hang us: blocked sends give up after a while.
        let _ = s.set_write_timeout(Some(Duration::from_secs(10)));
        let (snd, rcv) = sock::buffer_sizes(&s);
        r.sndbuf = snd;
        r.rcvbuf = rcv;
        match req.test {
            TestKind::TcpStream => {
                let t = data::send_stream(&mut s, req.send_size as usize, limit, 0, counter)
                    .map_err(|e| io("send", e))?;
                r.bytes_sent = t.bytes;
                r.send_calls = t.calls;
                r.elapsed_s = since(t.last);
                r.retransmits = sock::retransmits(&s);
                // Hold the connection until the server has read everything.
                let _ = s.set_read_timeout(Some(Duration::from_secs(30)));
                let mut sink = [0u8; 64];
                let _ = std::io::Read::read(&mut s, &mut sink);
            }
            TestKind::TcpMaerts => {
                let _ = s.set_read_timeout(Some(POLL));
                let size = if req.recv_size > 0 {
                    req.recv_size
                } else {
                    req.send_size
                };
                let t = data::recv_stream(&mut s, size as usize, &limit.stop, counter)
                    .map_err(|e| io("receive", e))?;
                r.bytes_received = t.bytes;
                r.elapsed_s = since(t.last);
            }
            TestKind::TcpRr => {
                let _ = s.set_read_timeout(Some(POLL));
                let t = data::rr_client_tcp(
                    &mut s,
                    req.request_size as usize,
                    req.response_size as usize,
                    limit,
                    counter,
                )
                .map_err(|e| io("transaction", e))?;
                r.transactions = t.transactions;
                r.retransmits = sock::retransmits(&s);
                r.elapsed_s = t0.elapsed().as_secs_f64();
                latency = Some(t.latency);
            }
            _ => {}
        }
    } else if let Some(s) = udp {
        let (snd, rcv) = sock::buffer_sizes(&s);
        r.sndbuf = snd;
        r.rcvbuf = rcv;
        if req.test == TestKind::UdpStream {
            let t = data::send_udp(&s, req.send_size as usize, limit, req.rate_bps, counter);
            r.bytes_sent = t.bytes;
            r.packets_sent = t.packets;
            r.send_errors = t.errors;
            r.elapsed_s = t0.elapsed().as_secs_f64();
        } else {
            let t = data::rr_client_udp(
                &s,
                req.request_size as usize,
                req.response_size as usize,
                limit,
                spec.rr_timeout,
                counter,
            )
            .map_err(|e| io("transaction", e))?;
            r.transactions = t.transactions;
            r.lost = t.lost;
            r.elapsed_s = t0.elapsed().as_secs_f64();
            latency = Some(t.latency);
        }
    } else if req.test == TestKind::TcpCrr {
        let t = crr_client(spec, peer, token, limit, counter)?;
        r.transactions = t.transactions;
        r.elapsed_s = t0.elapsed().as_secs_f64();
        latency = Some(t.latency);
        let probe = TcpStream::connect_timeout(&peer, spec.connect_timeout).ok();
        if let Some(p) = probe {
            let (snd, rcv) = sock::buffer_sizes(&p);
            r.sndbuf = snd;
            r.rcvbuf = rcv;
        }
    }
    Ok((r, latency))
}

/// TCP_CRR: connect, request, response, close — timed as one transaction.
fn crr_client(
    spec: &ClientSpec,
    peer: SocketAddr,
    token: &[u8; 16],
    limit: &Limit,
    counter: &AtomicU64,
) -> Result<data::RrTotals, NetError> {
    let req = &spec.request;
    // Header and request go out in one write, as one segment.
    let mut first = protocol::data_header(token, 0).to_vec();
    first.extend(data::payload(req.request_size as usize));
    let mut inb = vec![0u8; req.response_size as usize];
    let mut t = data::RrTotals::default();
    let opts = SockOpts {
        nodelay: true,
        ..spec.local
    };
    while limit.go(1) {
        let start = Instant::now();
        let mut s = sock::connect_tcp(peer, opts, spec.connect_timeout)?;
        let _ = s.set_read_timeout(Some(POLL));
        let done = s
            .write_all(&first)
            .and_then(|()| data::read_full(&mut s, &mut inb, limit));
        match done {
            Ok(()) => {}
            Err(_) if limit.stop.load(Ordering::Relaxed) => break,
            Err(e) => return Err(NetError::io(format!("TCP_CRR transaction with {peer}"), e)),
        }
        drop(s);
        t.latency.record(start.elapsed().as_nanos() as u64);
        t.transactions += 1;
        counter.store(t.transactions, Ordering::Relaxed);
    }
    Ok(t)
}

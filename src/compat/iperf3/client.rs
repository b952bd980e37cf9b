//! The iperf3 client's flow: cookie, parameters, streams, the test, results, display —
//! the client alone decides when the test ends (reference §2.2). The streams, the
//! engine and the results are the workload's (`workload::net::iperf3`); this prints
//! them as iperf3 does and keeps the run's outcome.

use super::error::Iperf3Error;
use super::json::{self, Side};
use super::output::{self, Closing, Line};
use super::{Options, Out};
use crate::measure::cputime::CpuTime;
use crate::workload::net::iperf3::connect::{self, buffer_sizes};
use crate::workload::net::iperf3::engine::{Engine, Row};
use crate::workload::net::iperf3::result::{self, ClientRun, CpuStart, Setup};
use crate::workload::net::iperf3::streams::{SendLimits, Stream};
use crate::workload::net::iperf3::wire::{self, Params, Results};
use crate::workload::net::resolve;
use crate::workload::net::sock::{self, SockOpts};
use crate::workload::observe::{Observer, Snapshot};
use serde_json::{Value, json};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::AtomicI64;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Runs the test, prints it (text, or the `-J` document at the end), and returns the
/// raw result when the test completed.
pub fn run(o: &Options, out: &Out) -> Result<ClientRun, Iperf3Error> {
    let intervals = Intervals::new(o, out);
    let mut start = json!({});
    let result = ClientFlow::connect(o, out, &intervals, &mut start).and_then(|f| f.run());
    if o.json {
        let mut v = json!({"start": start, "intervals": intervals.take()});
        match &result {
            Ok((_, end)) => v["end"] = end.clone(),
            Err(e) => {
                v["end"] = json!({});
                v["error"] = json!(e.to_string());
            }
        }
        out.json(&v);
    }
    result.map(|(run, _)| run)
}

/// The interval reports of a test as they come (`Snapshot::Iperf3`): printed, or kept
/// for the JSON document. Client and server report intervals the same way.
pub(super) struct Intervals<'a> {
    o: &'a Options,
    out: &'a Out,
    roles: Mutex<Vec<&'static str>>,
    kept: Mutex<Vec<Value>>,
}

impl<'a> Intervals<'a> {
    pub(super) fn new(o: &'a Options, out: &'a Out) -> Self {
        Intervals {
            o,
            out,
            roles: Mutex::new(Vec::new()),
            kept: Mutex::new(Vec::new()),
        }
    }

    /// The `[TX-C]`-style tag of each stream, once the streams are made.
    pub(super) fn set_roles(&self, roles: Vec<&'static str>) {
        *self.roles.lock().expect("roles") = roles;
    }

    pub(super) fn roles(&self) -> Vec<&'static str> {
        self.roles.lock().expect("roles").clone()
    }

    /// The JSON intervals kept so far (text mode keeps none).
    pub(super) fn take(&self) -> Vec<Value> {
        std::mem::take(&mut *self.kept.lock().expect("intervals"))
    }

    fn report(&self, rows: &[Row]) {
        let mut kept = self.kept.lock().expect("intervals");
        if self.o.json {
            kept.push(json::interval(rows));
            return;
        }
        if rows.len() > 1 && !kept.is_empty() {
            self.out.line(output::SEPARATOR);
        }
        // Interval counting for the separator rule; text mode keeps no document.
        kept.push(Value::Null);
        let roles = self.roles.lock().expect("roles");
        self.out
            .line(&output::interval_block(rows, &roles, self.o.units));
    }
}

impl Observer for Intervals<'_> {
    fn snapshot(&self, s: &Snapshot<'_>) {
        if let Snapshot::Iperf3(rows) = s {
            self.report(rows);
        }
    }
}

/// A client test in progress: the control connection and where the test is.
struct ClientFlow<'a> {
    o: &'a Options,
    out: &'a Out,
    intervals: &'a Intervals<'a>,
    /// The JSON document's `start` section.
    start: &'a mut Value,
    text: bool,
    host: String,
    ctl: TcpStream,
    peer: SocketAddr,
    cookie: [u8; wire::COOKIE_SIZE],
    timeout: Duration,
    mss: u32,
    params: Params,
    buffers: Option<(u64, u64)>,
    /// Streams made on CREATE_STREAMS wait here for TEST_RUNNING.
    pending: Vec<Arc<Stream>>,
    engine: Option<Engine>,
    cpu_at_start: CpuStart,
    run: Option<ClientRun>,
    rcv_timeout: Duration,
    quiet_since: Instant,
    ended: bool,
}

/// What a state byte leads to.
enum Next {
    Continue,
    Done(Value),
}

impl<'a> ClientFlow<'a> {
    /// Connects the control channel, sends the cookie, and fills the `start` section.
    fn connect(
        o: &'a Options,
        out: &'a Out,
        intervals: &'a Intervals<'a>,
        start: &'a mut Value,
    ) -> Result<ClientFlow<'a>, Iperf3Error> {
        let host = o.client.clone().unwrap_or_default();
        let timeout = o.connect_timeout.unwrap_or(Duration::from_secs(10));
        let addrs = resolve(&host, o.port, o.family).map_err(Iperf3Error::ControlConnect)?;
        if !o.json {
            out.line(&format!("Connecting to host {host}, port {}", o.port));
        }
        let mut ctl = connect_control(&addrs, timeout)?;
        let peer = ctl.peer_addr().map_err(Iperf3Error::Control)?;
        let cookie = wire::make_cookie();
        ctl.write_all(&cookie).map_err(Iperf3Error::SendCookie)?;
        let mss = sock::mss(&ctl).unwrap_or(0);
        let params = make_params(o, mss);
        *start = start_doc(o, &host, &cookie, mss, &params);
        Ok(ClientFlow {
            o,
            out,
            intervals,
            start,
            text: !o.json,
            host,
            ctl,
            peer,
            cookie,
            timeout,
            mss,
            params,
            buffers: None,
            pending: Vec::new(),
            engine: None,
            cpu_at_start: (CpuTime::now(), Instant::now()),
            run: None,
            rcv_timeout: o.rcv_timeout.max(Duration::from_secs(1)),
            quiet_since: Instant::now(),
            ended: false,
        })
    }

    /// The state machine, until the server says to display the results.
    fn run(mut self) -> Result<(ClientRun, Value), Iperf3Error> {
        let _ = self.ctl.set_read_timeout(Some(Duration::from_millis(2)));
        loop {
            let state = match read_state_polled(&mut self.ctl) {
                Ok(Some(s)) => {
                    self.quiet_since = Instant::now();
                    s
                }
                Ok(None) => {
                    self.drive()?;
                    continue;
                }
                Err(_) => return Err(Iperf3Error::ControlClosed),
            };
            if let Next::Done(end) = self.on_state(state)? {
                let run = self.run.take().ok_or(Iperf3Error::DisplayBeforeResults)?;
                return Ok((run, end));
            }
            // The server's next answer is due from when this end has done its part.
            self.quiet_since = Instant::now();
            self.stop_if_asked();
        }
    }

    /// No state byte yet: drive the test when it runs, and end it when it is over.
    fn drive(&mut self) -> Result<(), Iperf3Error> {
        let Some(e) = self.engine.as_mut() else {
            // Until the test runs, each answer is due within the connect timeout
            // (iperf3 itself waits for ever on a server that accepts and is silent).
            if self.quiet_since.elapsed() > self.timeout {
                return Err(Iperf3Error::NoResponse {
                    server: server_text(&self.peer),
                    bound: self.timeout,
                });
            }
            return Ok(());
        };
        e.poll(self.intervals);
        if !self.ended && test_over(self.o, e, self.intervals) {
            self.ended = true;
            e.stop_senders();
            e.last_interval(self.intervals);
            e.drain_senders(Duration::from_secs(5));
            wire::write_state(&mut self.ctl, wire::TEST_END)
                .map_err(|_| Iperf3Error::ControlClosed)?;
            e.join();
        }
        if self.ended && self.quiet_since.elapsed() > self.rcv_timeout {
            return Err(Iperf3Error::NoResults {
                server: server_text(&self.peer),
                bound: self.rcv_timeout,
            });
        }
        Ok(())
    }

    /// Ctrl-C (or a soak's stop): end the test now and show what was measured.
    fn stop_if_asked(&mut self) {
        if self.ended || !self.intervals.stop_requested() {
            return;
        }
        if let Some(e) = self.engine.as_mut() {
            self.ended = true;
            e.stop_senders();
            let _ = wire::write_state(&mut self.ctl, wire::TEST_END);
        }
    }

    fn on_state(&mut self, state: i8) -> Result<Next, Iperf3Error> {
        match state {
            wire::PARAM_EXCHANGE => wire::write_json(&mut self.ctl, &self.params.to_json())
                .map_err(Iperf3Error::SendParams)?,
            wire::CREATE_STREAMS => self.create_streams()?,
            wire::TEST_START => {}
            wire::TEST_RUNNING => self.start_test(),
            wire::EXCHANGE_RESULTS => self.exchange_results()?,
            wire::DISPLAY_RESULTS => return self.display_results().map(Next::Done),
            wire::ACCESS_DENIED => return Err(Iperf3Error::Busy),
            wire::SERVER_ERROR => return Err(self.server_error()),
            wire::SERVER_TERMINATE => return Err(Iperf3Error::ServerTerminated),
            other => return Err(Iperf3Error::UnknownState(other)),
        }
        Ok(Next::Continue)
    }

    fn create_streams(&mut self) -> Result<(), Iperf3Error> {
        let streams = connect::create_streams(&self.params, self.peer, &self.cookie, self.timeout)?;
        if self.text && self.o.reverse {
            self.out.line(&format!(
                "Reverse mode, remote host {} is sending",
                self.host
            ));
        }
        for s in &streams {
            if self.text {
                self.out.line(&connected_line(s));
            }
        }
        self.buffers = streams.first().map(|s| buffer_sizes(s));
        if let Some((snd, rcv)) = self.buffers {
            self.start["sndbuf_actual"] = json!(snd);
            self.start["rcvbuf_actual"] = json!(rcv);
        }
        self.start["connected"] = streams.iter().map(|s| connected_json(s)).collect();
        let bidir = self.o.bidir;
        self.intervals.set_roles(
            streams
                .iter()
                .map(|s| match (bidir, s.sender) {
                    (false, _) => "",
                    (true, true) => "[TX-C]",
                    (true, false) => "[RX-C]",
                })
                .collect(),
        );
        self.pending = streams;
        Ok(())
    }

    fn start_test(&mut self) {
        let streams = std::mem::take(&mut self.pending);
        let (o, p) = (self.o, &self.params);
        let limits = Arc::new(SendLimits {
            len: p.len as usize,
            rate_bps: p.bandwidth,
            bytes_left: (o.bytes > 0).then(|| AtomicI64::new(o.bytes as i64)),
            blocks_left: (o.blocks > 0).then(|| AtomicI64::new(o.blocks as i64)),
            udp64: o.udp64,
        });
        if self.text {
            let sender = streams.iter().any(|s| s.sender);
            self.out
                .line(&output::interval_header(o.udp, sender, !o.udp, o.bidir));
        }
        self.cpu_at_start = (CpuTime::now(), Instant::now());
        self.engine = Some(Engine::start(
            streams,
            limits,
            o.interval,
            Duration::from_secs(o.omit),
        ));
    }

    fn exchange_results(&mut self) -> Result<(), Iperf3Error> {
        let Some(e) = self.engine.as_mut() else {
            return Err(Iperf3Error::ResultsBeforeTest);
        };
        e.join();
        let mine = result::local_results(e, &self.cpu_at_start);
        wire::write_json(&mut self.ctl, &mine.to_json()).map_err(Iperf3Error::SendResults)?;
        let _ = self.ctl.set_read_timeout(Some(self.rcv_timeout));
        let theirs = wire::read_json(&mut self.ctl, wire::MAX_RESULTS_JSON)
            .map_err(|e| e.timed_out(self.rcv_timeout, "--rcv-timeout"))
            .and_then(|v| Results::from_json(&v))
            .map_err(Iperf3Error::ReceiveResults)?;
        let _ = self.ctl.set_read_timeout(Some(Duration::from_millis(2)));
        let setup = Setup {
            params: &self.params,
            host: &self.host,
            peer: self.peer,
            buffers: self.buffers,
            mss: self.mss,
        };
        let interrupted = self.intervals.stop_requested();
        self.run = Some(ClientRun::collect(
            setup,
            e,
            &self.cpu_at_start,
            mine,
            theirs,
            interrupted,
        ));
        Ok(())
    }

    fn display_results(&mut self) -> Result<Value, Iperf3Error> {
        let Some(run) = self.run.as_ref() else {
            return Err(Iperf3Error::DisplayBeforeResults);
        };
        let end = closing(self.o, self.out, run, &self.intervals.roles());
        let _ = wire::write_state(&mut self.ctl, wire::IPERF_DONE);
        if self.text {
            self.out.line("\niperf Done.");
        }
        Ok(end)
    }

    fn server_error(&mut self) -> Iperf3Error {
        let mut b = [0u8; 8];
        let _ = self.ctl.set_read_timeout(Some(Duration::from_secs(2)));
        let _ = self.ctl.read_exact(&mut b);
        let ierr = i32::from_be_bytes(b[..4].try_into().expect("4"));
        let errno = i32::from_be_bytes(b[4..].try_into().expect("4"));
        Iperf3Error::ServerError { ierr, errno }
    }
}

/// `127.0.0.1 port 5201`, as iperf3 names a server.
fn server_text(peer: &SocketAddr) -> String {
    format!("{} port {}", ip_text(peer), peer.port())
}

fn connect_control(addrs: &[SocketAddr], timeout: Duration) -> Result<TcpStream, Iperf3Error> {
    let mut last = None;
    for a in addrs {
        let opts = SockOpts {
            nodelay: true,
            ..Default::default()
        };
        match sock::connect_tcp(*a, opts, timeout) {
            Ok(s) => return Ok(s),
            Err(e) => last = Some(e),
        }
    }
    Err(Iperf3Error::ControlConnect(
        last.expect("one address at least"),
    ))
}

/// The `start` section of the JSON document, as far as it is known after connecting.
fn start_doc(
    o: &Options,
    host: &str,
    cookie: &[u8; wire::COOKIE_SIZE],
    mss: u32,
    params: &Params,
) -> Value {
    let mut start = json!({
        "connected": [],
        "version": "iperf 3.12",
        "system_info": json::system_info(),
        "timestamp": json::timestamp(),
        "connecting_to": {"host": host, "port": o.port},
        "cookie": wire::cookie_text(cookie),
        "tcp_mss_default": mss,
        "target_bitrate": params.bandwidth,
        "sock_bufsize": o.window,
        "sndbuf_actual": 0,
        "rcvbuf_actual": 0,
        "test_start": {
            "protocol": if o.udp { "UDP" } else { "TCP" },
            "num_streams": o.parallel, "blksize": params.len, "omit": o.omit,
            "duration": o.time, "bytes": o.bytes, "blocks": o.blocks,
            "reverse": u8::from(o.reverse), "tos": 0, "target_bitrate": params.bandwidth,
        },
    });
    if o.bidir {
        start["test_start"]["bidir"] = json!(1);
    }
    start
}

/// `[  5] local 127.0.0.1 port 40000 connected to 127.0.0.1 port 5201`
pub(super) fn connected_line(s: &Stream) -> String {
    format!(
        "[{:>3}] local {} port {} connected to {} port {}",
        s.fd(),
        ip_text(&s.local),
        s.local.port(),
        ip_text(&s.remote),
        s.remote.port()
    )
}

pub(super) fn connected_json(s: &Stream) -> Value {
    json!({"socket": s.fd(), "local_host": ip_text(&s.local),
        "local_port": s.local.port(), "remote_host": ip_text(&s.remote),
        "remote_port": s.remote.port()})
}

/// A state byte if one arrived within the poll interval.
fn read_state_polled(ctl: &mut TcpStream) -> std::io::Result<Option<i8>> {
    let mut b = [0u8; 1];
    match ctl.read(&mut b) {
        Ok(0) => Err(ErrorKind::UnexpectedEof.into()),
        Ok(_) => Ok(Some(b[0] as i8)),
        Err(e)
            if matches!(
                e.kind(),
                ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

fn test_over(o: &Options, e: &Engine, observer: &dyn Observer) -> bool {
    if observer.stop_requested() {
        return true;
    }
    if e.in_omit() {
        return false;
    }
    if o.bytes > 0 {
        return e.moved() >= o.bytes;
    }
    if o.blocks > 0 {
        let len = o.len.unwrap_or(wire::DEFAULT_TCP_BLKSIZE).max(1);
        return e.moved() >= o.blocks * len;
    }
    e.counted() >= Duration::from_secs(o.time)
}

fn make_params(o: &Options, mss: u32) -> Params {
    let len = o.len.unwrap_or(if o.udp {
        if mss > 0 {
            u64::from(mss).clamp(wire::MIN_UDP_BLOCKSIZE, wire::MAX_UDP_BLOCKSIZE)
        } else {
            wire::DEFAULT_UDP_BLKSIZE
        }
    } else {
        wire::DEFAULT_TCP_BLKSIZE
    });
    Params {
        udp: o.udp,
        omit: o.omit,
        time: if o.bytes > 0 || o.blocks > 0 {
            0
        } else {
            o.time
        },
        num: o.bytes,
        blockcount: o.blocks,
        parallel: o.parallel,
        reverse: o.reverse,
        bidirectional: o.bidir,
        window: o.window,
        len,
        bandwidth: o
            .bitrate
            .unwrap_or(if o.udp { wire::DEFAULT_UDP_RATE } else { 0 }),
        nodelay: o.nodelay,
        mss: o.mss,
        udp_counters_64bit: o.udp64,
        get_server_output: false,
        congestion: o.congestion.clone(),
        client_version: None,
    }
}

pub fn ip_text(a: &SocketAddr) -> String {
    match a {
        SocketAddr::V4(v) => v.ip().to_string(),
        SocketAddr::V6(v) => v
            .ip()
            .to_ipv4_mapped()
            .map_or_else(|| v.ip().to_string(), |x| x.to_string()),
    }
}

/// Prints the closing block and returns the JSON `end` section.
fn closing(o: &Options, out: &Out, run: &ClientRun, roles: &[&'static str]) -> Value {
    let mut blocks = ClosingBlocks::default();
    for (i, r) in run.totals.iter().enumerate() {
        let theirs = run.remote_of(r);
        let local = Side::local(r, run.rtt.get(i).copied().flatten());
        let other = Side::from_remote(r.fd, &theirs);
        let (snd, rcv) = if r.sender {
            (local, other)
        } else {
            (other, local)
        };
        blocks.push(o.udp, r, roles.get(i).copied().unwrap_or(""), snd, rcv);
    }
    if !o.json {
        out.line(&output::closing_block(
            &blocks.closing,
            o.udp,
            !o.udp,
            o.bidir,
            o.units,
        ));
        if o.verbose {
            out.line(&cpu_line(run));
        }
    }
    end_section(o, run, &blocks)
}

/// The closing lines and JSON pieces of every stream.
#[derive(Default)]
struct ClosingBlocks {
    closing: Vec<Closing>,
    end_streams: Vec<Value>,
    /// (this end sends, the side) of each stream's sender and receiver.
    sent: Vec<(bool, Side)>,
    received: Vec<(bool, Side)>,
}

impl ClosingBlocks {
    fn push(&mut self, udp: bool, r: &Row, role: &'static str, snd: Side, rcv: Side) {
        let line = |s: &Side, sender: bool| Line {
            end: s.end,
            bytes: s.bytes,
            retr: (!udp && sender).then(|| s.retransmits.unwrap_or(0)),
            udp: udp.then_some(if sender {
                (0.0, 0, s.packets)
            } else {
                (s.jitter_s, s.lost, s.packets)
            }),
        };
        self.closing.push(Closing {
            fd: r.fd,
            role,
            sender: Some(line(&snd, true)),
            receiver: Some(line(&rcv, false)),
        });
        self.end_streams.push(json::end_stream(udp, &snd, &rcv));
        self.sent.push((r.sender, snd));
        self.received.push((r.sender, rcv));
    }
}

fn cpu_line(run: &ClientRun) -> String {
    let (mine, remote) = (&run.local, &run.remote);
    let local_sends = run.totals.iter().any(|r| r.sender);
    format!(
        "CPU Utilization: local/{} {:.1}% ({:.1}%u/{:.1}%s), remote/{} {:.1}% ({:.1}%u/{:.1}%s)",
        if local_sends { "sender" } else { "receiver" },
        mine.cpu_total,
        mine.cpu_user,
        mine.cpu_system,
        if local_sends { "receiver" } else { "sender" },
        remote.cpu_total,
        remote.cpu_user,
        remote.cpu_system
    )
}

/// `end`: the streams, the sums (--bidir: of the client's sending direction, and
/// `*_bidir_reverse` of the other), CPU and congestion control.
fn end_section(o: &Options, run: &ClientRun, b: &ClosingBlocks) -> Value {
    fn pick(v: &[(bool, Side)], bidir: bool, forward: bool) -> Vec<&Side> {
        v.iter()
            .filter(|(local_sends, _)| !bidir || *local_sends == forward)
            .map(|(_, s)| s)
            .collect()
    }
    let (mine, remote) = (&run.local, &run.remote);
    let sent = pick(&b.sent, o.bidir, true);
    let received = pick(&b.received, o.bidir, true);
    let mut end = json!({
        "streams": b.end_streams,
        "sum_sent": json::sum(&sent, true, o.udp),
        "sum_received": json::sum(&received, false, o.udp),
        "cpu_utilization_percent": {
            "host_total": mine.cpu_total, "host_user": mine.cpu_user, "host_system": mine.cpu_system,
            "remote_total": remote.cpu_total, "remote_user": remote.cpu_user,
            "remote_system": remote.cpu_system,
        },
    });
    if o.bidir {
        end["sum_sent_bidir_reverse"] = json::sum(&pick(&b.sent, true, false), true, o.udp);
        end["sum_received_bidir_reverse"] =
            json::sum(&pick(&b.received, true, false), false, o.udp);
    }
    if o.udp {
        end["sum"] = json::sum(&received, false, true);
    } else {
        let local_cc = mine.congestion_used.clone().unwrap_or_default();
        let remote_cc = remote.congestion_used.clone().unwrap_or_default();
        let local_sends = run.totals.iter().any(|r| r.sender);
        let (s, r) = if local_sends {
            (local_cc, remote_cc)
        } else {
            (remote_cc, local_cc)
        };
        end["sender_tcp_congestion"] = json!(s);
        end["receiver_tcp_congestion"] = json!(r);
    }
    end
}

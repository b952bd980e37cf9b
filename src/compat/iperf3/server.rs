//! The iperf3 server's flow: one test at a time (a second client gets ACCESS_DENIED,
//! as from iperf3), every data stream on the one port, then the next test. The
//! listener stays open from start to exit, so a client that arrives between tests
//! waits in its backlog and is served next (closing it would reset such a client). A
//! client that vanishes ends the test within a few seconds instead of leaving the
//! server "busy". The server prints its own side and keeps nothing: the client's run
//! is the measurement.

use super::client::{Intervals, connected_json, connected_line, ip_text};
use super::error::Iperf3Error;
use super::json::{self, Side};
use super::output::{self, Closing, Line, SERVER_BANNER};
use super::{Options, Out};
use crate::measure::cputime::CpuTime;
use crate::workload::net::Family;
use crate::workload::net::iperf3::connect::{self, Arrivals, STEP, deny, listen};
use crate::workload::net::iperf3::engine::{Engine, Row};
use crate::workload::net::iperf3::result::{self, CpuStart};
use crate::workload::net::iperf3::streams::{SendLimits, Stream};
use crate::workload::net::iperf3::wire::{self, Params, Results, StreamResult};
use crate::workload::observe::Observer;
use serde_json::{Value, json};
use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::AtomicI64;
use std::time::{Duration, Instant};

fn listen_addr(o: &Options) -> Result<SocketAddr, Iperf3Error> {
    let ip = match &o.bind {
        Some(b) => b
            .trim_matches(|c| c == '[' || c == ']')
            .parse::<IpAddr>()
            .map_err(|_| Iperf3Error::BindAddress { bind: b.clone() })?,
        None => match o.family {
            Family::V4 => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            _ => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
        },
    };
    Ok(SocketAddr::new(ip, o.port))
}

pub fn run(o: &Options, out: &Out) -> Result<(), Iperf3Error> {
    let addr = listen_addr(o)?;
    let listener = listen(addr)?;
    let mut arrivals = Arrivals::default();
    let mut test_no = 1;
    loop {
        if !o.json {
            out.line(&format!(
                "{SERVER_BANNER}\nServer listening on {} (test #{test_no})\n{SERVER_BANNER}",
                o.port
            ));
        }
        let Some(ctl) = accept_control(&listener, &mut arrivals, o.idle_timeout)? else {
            if crate::measure::stop_requested() {
                return Ok(());
            }
            continue; // idle timeout: start over, as iperf3's --idle-timeout does
        };
        let result = serve_one(o, out, &listener, addr, ctl);
        if o.one_off || crate::measure::stop_requested() {
            // The caller reports the error, once.
            return result;
        }
        if let Err(e) = &result {
            if o.json {
                out.json(&json!({"start": {}, "intervals": [], "end": {}, "error": e.to_string()}));
            } else {
                out.err(&format!("iperf3: error - {e}"));
            }
        }
        test_no += 1;
    }
}

/// The next client: the first connection to send a whole cookie. Silent ones wait
/// beside it without delaying it, and are closed after `STEP`; the others are told
/// the server is busy, since its test starts now.
fn accept_control(
    l: &TcpListener,
    arrivals: &mut Arrivals,
    idle: Option<Duration>,
) -> Result<Option<(TcpStream, [u8; wire::COOKIE_SIZE])>, Iperf3Error> {
    let start = Instant::now();
    loop {
        if let Some((s, cookie)) = arrivals.next(l).map_err(Iperf3Error::AcceptControl)? {
            arrivals.deny_all();
            let _ = s.set_nodelay(true);
            return Ok(Some((s, cookie)));
        }
        if crate::measure::stop_requested() || idle.is_some_and(|i| start.elapsed() >= i) {
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// One client's test, from its cookie to its results.
fn serve_one(
    o: &Options,
    out: &Out,
    listener: &TcpListener,
    addr: SocketAddr,
    (ctl, cookie): (TcpStream, [u8; wire::COOKIE_SIZE]),
) -> Result<(), Iperf3Error> {
    let intervals = Intervals::new(o, out);
    let mut s = Session::handshake(o, out, &intervals, ctl, cookie)?;
    let streams = s.open_streams(listener, addr)?;
    let mut test = s.start_test(streams)?;
    let ended = s.watch(&mut test, listener);
    test.stop();
    ended?;
    let (mine, theirs) = s.exchange_results(&test)?;
    s.display(&test.engine, &mine, &theirs);
    // IPERF_DONE, or the client simply closing: either ends the test.
    let _ = s.ctl.set_read_timeout(Some(Duration::from_secs(2)));
    let _ = wire::read_state(&mut s.ctl);
    Ok(())
}

/// A client's control connection and its test's settings.
struct Session<'a> {
    o: &'a Options,
    out: &'a Out,
    intervals: &'a Intervals<'a>,
    text: bool,
    ctl: TcpStream,
    peer: SocketAddr,
    cookie: [u8; wire::COOKIE_SIZE],
    params: Params,
    start_doc: Value,
}

/// The running test: the engine, and when it began.
struct Running {
    engine: Engine,
    cpu0: CpuStart,
    ctl_w: TcpStream,
}

impl Running {
    /// Stops and joins the streams and closes their sockets.
    fn stop(&mut self) {
        self.engine.stop_senders();
        self.engine.join();
        for s in &self.engine.streams {
            s.shutdown();
        }
    }
}

impl<'a> Session<'a> {
    /// The parameters, after the cookie; a client whose parameters do not parse gets
    /// SERVER_ERROR.
    fn handshake(
        o: &'a Options,
        out: &'a Out,
        intervals: &'a Intervals<'a>,
        mut ctl: TcpStream,
        cookie: [u8; wire::COOKIE_SIZE],
    ) -> Result<Session<'a>, Iperf3Error> {
        let peer = ctl.peer_addr().map_err(Iperf3Error::Control)?;
        ctl.set_read_timeout(Some(STEP))
            .map_err(Iperf3Error::Control)?;
        wire::write_state(&mut ctl, wire::PARAM_EXCHANGE).map_err(Iperf3Error::Control)?;
        let params = wire::read_json(&mut ctl, wire::MAX_PARAMS_JSON)
            .map_err(|e| e.timed_out(STEP, ""))
            .and_then(|v| Params::from_json(&v))
            .inspect_err(|_| {
                let mut e = vec![wire::SERVER_ERROR as u8];
                e.extend(1i32.to_be_bytes());
                e.extend(0i32.to_be_bytes());
                let _ = ctl.write_all(&e);
            })
            .map_err(Iperf3Error::ReceiveParams)?;
        if !o.json {
            out.line(&format!(
                "Accepted connection from {}, port {}",
                ip_text(&peer),
                peer.port()
            ));
        }
        Ok(Session {
            o,
            out,
            intervals,
            text: !o.json,
            ctl,
            peer,
            cookie,
            params,
            start_doc: json!({}),
        })
    }

    /// CREATE_STREAMS, then the client's streams (a UDP client sends its hello as
    /// soon as it reads CREATE_STREAMS: the socket is bound first).
    fn open_streams(
        &mut self,
        listener: &TcpListener,
        addr: SocketAddr,
    ) -> Result<Vec<Arc<Stream>>, Iperf3Error> {
        let next_udp = if self.params.udp {
            Some(connect::udp_bind(addr, &self.params)?)
        } else {
            None
        };
        wire::write_state(&mut self.ctl, wire::CREATE_STREAMS).map_err(Iperf3Error::Control)?;
        let streams =
            connect::accept_streams(listener, &self.params, &self.cookie, next_udp, addr)?;
        for s in &streams {
            if self.text {
                self.out.line(&connected_line(s));
            }
        }
        let bidir = self.params.bidirectional;
        self.intervals.set_roles(
            streams
                .iter()
                .map(|s| match (bidir, s.sender) {
                    (false, _) => "",
                    (true, true) => "[TX-S]",
                    (true, false) => "[RX-S]",
                })
                .collect(),
        );
        self.start_doc = self.start_section(&streams);
        Ok(streams)
    }

    fn start_section(&self, streams: &[Arc<Stream>]) -> Value {
        let (p, peer) = (&self.params, &self.peer);
        let mut doc = json!({
            "connected": streams.iter().map(|s| connected_json(s)).collect::<Vec<_>>(),
            "version": "iperf 3.12",
            "system_info": json::system_info(),
            "timestamp": json::timestamp(),
            "accepted_connection": {"host": ip_text(peer), "port": peer.port()},
            "cookie": wire::cookie_text(&self.cookie),
            "test_start": {
                "protocol": if p.udp { "UDP" } else { "TCP" }, "num_streams": p.parallel,
                "blksize": p.len, "omit": p.omit, "duration": p.time,
                "bytes": p.num, "blocks": p.blockcount, "reverse": u8::from(p.reverse),
                "tos": 0, "target_bitrate": p.bandwidth,
            },
        });
        if p.udp {
            doc["target_bitrate"] = json!(p.bandwidth);
        }
        doc
    }

    /// TEST_START and TEST_RUNNING, the header, and the streams running.
    fn start_test(&mut self, streams: Vec<Arc<Stream>>) -> Result<Running, Iperf3Error> {
        let p = &self.params;
        let mut ctl_w = self.ctl.try_clone().map_err(Iperf3Error::Control)?;
        ctl_w
            .write_all(&[wire::TEST_START as u8, wire::TEST_RUNNING as u8])
            .map_err(Iperf3Error::Control)?;
        if self.text {
            let sender = streams.iter().any(|s| s.sender);
            self.out.line(&output::interval_header(
                p.udp,
                sender,
                sender && !p.udp || p.bidirectional,
                p.bidirectional,
            ));
        }
        let limits = Arc::new(SendLimits {
            len: p.len as usize,
            rate_bps: p.bandwidth,
            bytes_left: (p.num > 0).then(|| AtomicI64::new(p.num as i64)),
            blocks_left: (p.blockcount > 0).then(|| AtomicI64::new(p.blockcount as i64)),
            udp64: p.udp_counters_64bit,
        });
        let cpu0 = (CpuTime::now(), Instant::now());
        let engine = Engine::start(
            streams,
            limits,
            self.o.interval,
            Duration::from_secs(p.omit),
        );
        Ok(Running {
            engine,
            cpu0,
            ctl_w,
        })
    }

    /// Until the client ends the test (TEST_END): intervals, a second client turned
    /// away, and the limits of a client that never ends it.
    fn watch(&mut self, test: &mut Running, listener: &TcpListener) -> Result<(), Iperf3Error> {
        let p = &self.params;
        // The client ends the test; if it never does, this does.
        let hard_end = (p.time > 0).then(|| {
            Instant::now() + Duration::from_secs(p.time + p.omit) + Duration::from_secs(40)
        });
        let idle = self.o.rcv_timeout.max(Duration::from_secs(1));
        let _ = self.ctl.set_read_timeout(Some(Duration::from_millis(2)));
        let _ = listener.set_nonblocking(true);
        let (mut last_bytes, mut last_move) = (0u64, Instant::now());
        let result = loop {
            if let Some(end) = self.client_state() {
                break end;
            }
            test.engine.poll(self.intervals);
            // A second client while this test runs is turned away, as iperf3 does.
            if let Ok((s, _)) = listener.accept() {
                let _ = s.set_nonblocking(false);
                deny(s);
            }
            let moved = test.engine.moved();
            if moved != last_bytes {
                (last_bytes, last_move) = (moved, Instant::now());
            }
            if self.intervals.stop_requested() {
                let _ = test.ctl_w.write_all(&[wire::SERVER_TERMINATE as u8]);
                break Err(Iperf3Error::ServerTerminated);
            }
            if hard_end.is_some_and(|h| Instant::now() > h) || last_move.elapsed() > idle {
                break Err(Iperf3Error::IdleTimeout);
            }
        };
        test.engine.stop_senders();
        test.engine.last_interval(self.intervals);
        result
    }

    /// A state byte from the client that ends the test, if one came.
    fn client_state(&mut self) -> Option<Result<(), Iperf3Error>> {
        let closed = || Some(Err(Iperf3Error::ClientClosed));
        let mut b = [0u8; 1];
        match self.ctl.read(&mut b) {
            Ok(0) => closed(),
            Ok(_) => match b[0] as i8 {
                wire::TEST_END => Some(Ok(())),
                wire::CLIENT_TERMINATE => Some(Err(Iperf3Error::ClientTerminated)),
                wire::IPERF_DONE => Some(Err(Iperf3Error::ClientEndedEarly)),
                _ => None,
            },
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) =>
            {
                None
            }
            Err(_) => closed(),
        }
    }

    /// EXCHANGE_RESULTS: the client's results first, then ours; DISPLAY_RESULTS.
    fn exchange_results(&mut self, test: &Running) -> Result<(Results, Results), Iperf3Error> {
        let mine = result::local_results(&test.engine, &test.cpu0);
        let _ = self.ctl.set_read_timeout(Some(STEP));
        wire::write_state(&mut self.ctl, wire::EXCHANGE_RESULTS).map_err(Iperf3Error::Control)?;
        let theirs = wire::read_json(&mut self.ctl, wire::MAX_RESULTS_JSON)
            .map_err(|e| e.timed_out(STEP, ""))
            .and_then(|v| Results::from_json(&v))
            .map_err(Iperf3Error::ReceiveResults)?;
        wire::write_json(&mut self.ctl, &mine.to_json()).map_err(Iperf3Error::Control)?;
        wire::write_state(&mut self.ctl, wire::DISPLAY_RESULTS).map_err(Iperf3Error::Control)?;
        Ok((mine, theirs))
    }

    /// The server prints its own side only, as iperf3's does (or its JSON document).
    fn display(&mut self, engine: &Engine, mine: &Results, theirs: &Results) {
        let totals = engine.totals();
        let roles = self.intervals.roles();
        let mut closing = Vec::new();
        let mut end_streams = Vec::new();
        let mut sides = Vec::new();
        for (i, r) in totals.iter().enumerate() {
            let side = Side::local(r, engine.rtt_stats(i));
            closing.push(closing_of(r, roles.get(i).copied().unwrap_or("")));
            let peer_side = theirs
                .streams
                .iter()
                .find(|s| s.id == r.id)
                .map(|s| Side::from_remote(r.fd, s))
                .unwrap_or(Side::from_remote(r.fd, &StreamResult::default()));
            end_streams.push(if r.sender {
                json::end_stream(r.udp, &side, &peer_side)
            } else {
                json::end_stream(r.udp, &peer_side, &side)
            });
            sides.push((r.sender, side));
        }
        let p = &self.params;
        if self.text {
            let any_sender = totals.iter().any(|r| r.sender && !r.udp);
            self.out.line(&output::closing_block(
                &closing,
                p.udp,
                any_sender,
                p.bidirectional,
                self.o.units,
            ));
            return;
        }
        let sent: Vec<&Side> = sides.iter().filter(|s| s.0).map(|s| &s.1).collect();
        let recv: Vec<&Side> = sides.iter().filter(|s| !s.0).map(|s| &s.1).collect();
        let end = json!({
            "streams": end_streams,
            "sum_sent": json::sum(&sent, true, p.udp),
            "sum_received": json::sum(&recv, false, p.udp),
            "cpu_utilization_percent": {
                "host_total": mine.cpu_total, "host_user": mine.cpu_user, "host_system": mine.cpu_system,
                "remote_total": theirs.cpu_total, "remote_user": theirs.cpu_user,
                "remote_system": theirs.cpu_system,
            },
        });
        let start = std::mem::take(&mut self.start_doc);
        self.out
            .json(&json!({"start": start, "intervals": self.intervals.take(), "end": end}));
    }
}

/// A stream's closing line on the server: its one role, sender or receiver.
fn closing_of(r: &Row, role: &'static str) -> Closing {
    let line = Line {
        end: r.end,
        bytes: r.delta.bytes,
        retr: (!r.udp && r.sender).then(|| r.delta.retransmits.unwrap_or(0)),
        udp: r.udp.then_some(if r.sender {
            (0.0, 0, r.delta.packets)
        } else {
            (r.delta.jitter_s, r.delta.lost, r.delta.packets)
        }),
    };
    Closing {
        fd: r.fd,
        role,
        sender: r.sender.then_some(line),
        receiver: (!r.sender).then_some(line),
    }
}

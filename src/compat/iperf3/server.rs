//! The iperf3 server: one test at a time (a second client gets ACCESS_DENIED, as from
//! iperf3), every data stream on the one port, then the next test. A client that
//! vanishes ends the test within a few seconds instead of leaving the server "busy".

use super::client::{apply_tcp_opts, ip_text, report_interval, stream_result};
use super::engine::Engine;
use super::json::{self, Side};
use super::output::{self, Closing, Line, SERVER_BANNER};
use super::streams::{SendLimits, Socket, Stream};
use super::wire::{self, Params, Results};
use super::{Options, Out};
use crate::measure::cputime::CpuTime;
use crate::measure::stop_requested;
use crate::net::Family;
use serde_json::json;
use socket2::{Domain, Protocol, Type};
use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::AtomicI64;
use std::time::{Duration, Instant};

/// How long a client has for each setup step (cookie, parameters, streams, results).
const STEP: Duration = Duration::from_secs(10);

fn listen_addr(o: &Options) -> Result<SocketAddr, String> {
    let ip = match &o.bind {
        Some(b) => b
            .trim_matches(|c| c == '[' || c == ']')
            .parse::<IpAddr>()
            .map_err(|_| format!("unable to bind to '{b}': not an IP address"))?,
        None => match o.family {
            Family::V4 => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            _ => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
        },
    };
    Ok(SocketAddr::new(ip, o.port))
}

/// A listener on the port; `p` (window, MSS, nodelay) is inherited by accepted streams.
fn listen(addr: SocketAddr, p: Option<&Params>) -> Result<TcpListener, String> {
    let fail = |e: std::io::Error| format!("unable to start listener for connections: {e}");
    let s = socket2::Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))
        .map_err(fail)?;
    s.set_reuse_address(true).map_err(fail)?;
    if addr.is_ipv6() {
        let _ = s.set_only_v6(false);
    }
    if let Some(p) = p {
        apply_tcp_opts(&s, p).map_err(fail)?;
    }
    s.bind(&addr.into()).map_err(|e| {
        if e.kind() == ErrorKind::AddrInUse {
            "unable to start listener for connections: Address already in use".to_string()
        } else {
            fail(e)
        }
    })?;
    s.listen(128).map_err(fail)?;
    Ok(s.into())
}

pub fn run(o: &Options, out: &mut Out) -> Result<(), String> {
    let addr = listen_addr(o)?;
    let mut listener = Some(listen(addr, None)?);
    let mut test_no = 1;
    loop {
        if !o.json {
            out.line(&format!(
                "{SERVER_BANNER}\nServer listening on {} (test #{test_no})\n{SERVER_BANNER}",
                o.port
            ));
        }
        let Some(ctl) = accept_control(listener.as_ref().expect("listening"), o.idle_timeout)?
        else {
            if stop_requested() {
                return Ok(());
            }
            continue; // idle timeout: start over, as iperf3's --idle-timeout does
        };
        let result = serve_one(o, out, &mut listener, addr, ctl);
        // Options of the last test (window, MSS) must not stick to the next one.
        relisten(&mut listener, addr, None)?;
        if o.one_off || stop_requested() {
            // The caller reports the error, once.
            return result;
        }
        if let Err(msg) = &result {
            if o.json {
                out.json(&json!({"start": {}, "intervals": [], "end": {}, "error": msg}));
            } else {
                out.err(&format!("iperf3: error - {msg}"));
            }
        }
        test_no += 1;
    }
}

/// Closes the listener, then opens it again with `p`'s options (both cannot coexist).
fn relisten(
    slot: &mut Option<TcpListener>,
    addr: SocketAddr,
    p: Option<&Params>,
) -> Result<(), String> {
    *slot = None;
    *slot = Some(listen(addr, p)?);
    Ok(())
}

fn accept_control(l: &TcpListener, idle: Option<Duration>) -> Result<Option<TcpStream>, String> {
    l.set_nonblocking(true).map_err(|e| e.to_string())?;
    let start = Instant::now();
    loop {
        match l.accept() {
            Ok((s, _)) => {
                let _ = s.set_nonblocking(false);
                let _ = s.set_nodelay(true);
                return Ok(Some(s));
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => {
                if stop_requested() || idle.is_some_and(|i| start.elapsed() >= i) {
                    return Ok(None);
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => return Err(format!("unable to accept connection from client: {e}")),
        }
    }
}

fn read_cookie(s: &mut TcpStream) -> std::io::Result<[u8; wire::COOKIE_SIZE]> {
    s.set_read_timeout(Some(STEP))?;
    let mut c = [0u8; wire::COOKIE_SIZE];
    s.read_exact(&mut c)?;
    Ok(c)
}

/// Refuses a connection that is not part of the running test.
fn deny(mut s: TcpStream) {
    let _ = s.write_all(&[wire::ACCESS_DENIED as u8]);
}

fn serve_one(
    o: &Options,
    out: &mut Out,
    slot: &mut Option<TcpListener>,
    addr: SocketAddr,
    mut ctl: TcpStream,
) -> Result<(), String> {
    let text = !o.json;
    let peer = ctl.peer_addr().map_err(|e| e.to_string())?;
    let cookie = read_cookie(&mut ctl).map_err(|e| format!("unable to receive cookie: {e}"))?;
    wire::write_state(&mut ctl, wire::PARAM_EXCHANGE).map_err(|e| e.to_string())?;
    let params = wire::read_json(&mut ctl, wire::MAX_PARAMS_JSON)
        .and_then(|v| Params::from_json(&v))
        .inspect_err(|_| {
            let mut e = vec![wire::SERVER_ERROR as u8];
            e.extend(1i32.to_be_bytes());
            e.extend(0i32.to_be_bytes());
            let _ = ctl.write_all(&e);
        })
        .map_err(|e| format!("unable to receive parameters from client: {e}"))?;
    if text {
        out.line(&format!(
            "Accepted connection from {}, port {}",
            ip_text(&peer),
            peer.port()
        ));
    }
    if params.window > 0 || params.mss > 0 || params.nodelay || params.congestion.is_some() {
        relisten(slot, addr, Some(&params))?;
    }
    let listener = slot.as_ref().expect("listening");
    // A UDP client sends its hello as soon as it reads CREATE_STREAMS: be there first.
    let mut next_udp = if params.udp {
        Some(udp_bind(addr, &params)?)
    } else {
        None
    };
    wire::write_state(&mut ctl, wire::CREATE_STREAMS).map_err(|e| e.to_string())?;

    // The server's view: the first N streams are its receivers (reverse: senders).
    let n = params.parallel as usize;
    let roles: Vec<bool> = if params.bidirectional {
        (0..n).map(|_| false).chain((0..n).map(|_| true)).collect()
    } else {
        (0..n).map(|_| params.reverse).collect()
    };
    let mut streams = Vec::new();
    for (i, sender) in roles.iter().enumerate() {
        let socket = if params.udp {
            let more = i + 1 < roles.len();
            Socket::Udp(udp_accept(&mut next_udp, addr, &params, more)?)
        } else {
            Socket::Tcp(tcp_accept(listener, &cookie)?)
        };
        let s = Stream::new(wire::stream_id(i), *sender, socket).map_err(|e| e.to_string())?;
        if text {
            out.line(&format!(
                "[{:>3}] local {} port {} connected to {} port {}",
                s.fd(),
                ip_text(&s.local),
                s.local.port(),
                ip_text(&s.remote),
                s.remote.port()
            ));
        }
        streams.push(Arc::new(s));
    }
    let tags: Vec<&'static str> = streams
        .iter()
        .map(|s| match (params.bidirectional, s.sender) {
            (false, _) => "",
            (true, true) => "[TX-S]",
            (true, false) => "[RX-S]",
        })
        .collect();
    let mut start_doc = json!({
        "connected": streams.iter().map(|s| json!({"socket": s.fd(), "local_host": ip_text(&s.local),
            "local_port": s.local.port(), "remote_host": ip_text(&s.remote), "remote_port": s.remote.port()}))
            .collect::<Vec<_>>(),
        "version": "iperf 3.12",
        "system_info": json::system_info(),
        "timestamp": json::timestamp(),
        "accepted_connection": {"host": ip_text(&peer), "port": peer.port()},
        "cookie": wire::cookie_text(&cookie),
        "test_start": {
            "protocol": if params.udp { "UDP" } else { "TCP" }, "num_streams": params.parallel,
            "blksize": params.len, "omit": params.omit, "duration": params.time,
            "bytes": params.num, "blocks": params.blockcount, "reverse": u8::from(params.reverse),
            "tos": 0, "target_bitrate": params.bandwidth,
        },
    });
    if params.udp {
        start_doc["target_bitrate"] = json!(params.bandwidth);
    }
    let mut ctl_w = ctl.try_clone().map_err(|e| e.to_string())?;
    ctl_w
        .write_all(&[wire::TEST_START as u8, wire::TEST_RUNNING as u8])
        .map_err(|e| e.to_string())?;
    if text {
        let sender = streams.iter().any(|s| s.sender);
        out.line(&output::interval_header(
            params.udp,
            sender,
            sender && !params.udp || params.bidirectional,
            params.bidirectional,
        ));
    }
    let limits = Arc::new(SendLimits {
        len: params.len as usize,
        rate_bps: params.bandwidth,
        bytes_left: (params.num > 0).then(|| AtomicI64::new(params.num as i64)),
        blocks_left: (params.blockcount > 0).then(|| AtomicI64::new(params.blockcount as i64)),
        udp64: params.udp_counters_64bit,
    });
    let cpu0 = (CpuTime::now(), Instant::now());
    let mut engine = Engine::start(
        streams,
        limits,
        o.interval,
        Duration::from_secs(params.omit),
    );
    // The client ends the test; if it never does, this does.
    let hard_end = (params.time > 0).then(|| {
        Instant::now() + Duration::from_secs(params.time + params.omit) + Duration::from_secs(40)
    });
    let idle = o.rcv_timeout.max(Duration::from_secs(1));
    let mut intervals = Vec::new();
    let _ = ctl.set_read_timeout(Some(Duration::from_millis(2)));
    let _ = listener.set_nonblocking(true);
    let (mut last_bytes, mut last_move) = (0u64, Instant::now());
    let outcome: Result<(), String> = loop {
        let mut b = [0u8; 1];
        match ctl.read(&mut b) {
            Ok(0) => break Err("the client has unexpectedly closed the connection".into()),
            Ok(_) => match b[0] as i8 {
                wire::TEST_END => break Ok(()),
                wire::CLIENT_TERMINATE => break Err("the client has terminated".into()),
                wire::IPERF_DONE => break Err("the client ended the test early".into()),
                _ => {}
            },
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) => {}
            Err(_) => break Err("the client has unexpectedly closed the connection".into()),
        }
        if let Some(rows) = engine.poll() {
            report_interval(o, out, &mut intervals, &rows, &tags);
        }
        // A second client while this test runs is turned away, as iperf3 does.
        if let Ok((s, _)) = listener.accept() {
            let _ = s.set_nonblocking(false);
            deny(s);
        }
        let moved: u64 = engine
            .streams
            .iter()
            .map(|s| s.counters.bytes.load(std::sync::atomic::Ordering::Relaxed))
            .sum();
        if moved != last_bytes {
            (last_bytes, last_move) = (moved, Instant::now());
        }
        if stop_requested() {
            let _ = ctl_w.write_all(&[wire::SERVER_TERMINATE as u8]);
            break Err("the server has terminated".into());
        }
        if hard_end.is_some_and(|h| Instant::now() > h) || last_move.elapsed() > idle {
            break Err("idle timeout for receiving data".into());
        }
    };
    engine.stop_senders();
    if let Some(rows) = engine.last_interval() {
        report_interval(o, out, &mut intervals, &rows, &tags);
    }
    engine.join();
    for s in &engine.streams {
        s.shutdown();
    }
    outcome?;

    let totals = engine.totals();
    let (cpu_start, wall_start) = cpu0;
    let cpu = CpuTime::now().since(&cpu_start);
    let wall = wall_start.elapsed().as_secs_f64().max(1e-9);
    let mine = Results {
        cpu_total: 100.0 * cpu.total_s() / wall,
        cpu_user: 100.0 * cpu.user_s / wall,
        cpu_system: 100.0 * cpu.system_s / wall,
        sender_has_retransmits: if totals.iter().any(|r| r.sender && !r.udp) {
            1
        } else {
            -1
        },
        congestion_used: engine.streams.iter().find_map(|s| match &s.socket {
            Socket::Tcp(t) => crate::net::sock::congestion(t),
            Socket::Udp(_) => None,
        }),
        streams: totals.iter().map(stream_result).collect(),
    };
    let _ = ctl.set_read_timeout(Some(STEP));
    wire::write_state(&mut ctl, wire::EXCHANGE_RESULTS).map_err(|e| e.to_string())?;
    let theirs = wire::read_json(&mut ctl, wire::MAX_RESULTS_JSON)
        .and_then(|v| Results::from_json(&v))
        .map_err(|e| format!("unable to receive results: {e}"))?;
    wire::write_json(&mut ctl, &mine.to_json()).map_err(|e| e.to_string())?;
    wire::write_state(&mut ctl, wire::DISPLAY_RESULTS).map_err(|e| e.to_string())?;

    // The server prints its own side only, as iperf3's does.
    let mut closing = Vec::new();
    let mut end_streams = Vec::new();
    let mut sides = Vec::new();
    for (i, r) in totals.iter().enumerate() {
        let side = Side::local(r, engine.rtt_stats(i));
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
        closing.push(Closing {
            fd: r.fd,
            role: tags[i],
            sender: r.sender.then_some(line),
            receiver: (!r.sender).then_some(line),
        });
        let peer_side = theirs
            .streams
            .iter()
            .find(|s| s.id == r.id)
            .map(|s| Side::from_remote(r.fd, s))
            .unwrap_or(Side::from_remote(r.fd, &wire::StreamResult::default()));
        end_streams.push(if r.sender {
            json::end_stream(r.udp, &side, &peer_side)
        } else {
            json::end_stream(r.udp, &peer_side, &side)
        });
        sides.push((r.sender, side));
    }
    if text {
        let any_sender = totals.iter().any(|r| r.sender && !r.udp);
        out.line(&output::closing_block(
            &closing,
            params.udp,
            any_sender,
            params.bidirectional,
            o.units,
        ));
    } else {
        let sent: Vec<&Side> = sides.iter().filter(|s| s.0).map(|s| &s.1).collect();
        let recv: Vec<&Side> = sides.iter().filter(|s| !s.0).map(|s| &s.1).collect();
        let end = json!({
            "streams": end_streams,
            "sum_sent": json::sum(&sent, true, params.udp),
            "sum_received": json::sum(&recv, false, params.udp),
            "cpu_utilization_percent": {
                "host_total": mine.cpu_total, "host_user": mine.cpu_user, "host_system": mine.cpu_system,
                "remote_total": theirs.cpu_total, "remote_user": theirs.cpu_user,
                "remote_system": theirs.cpu_system,
            },
        });
        out.json(&json!({"start": start_doc, "intervals": intervals, "end": end}));
    }
    // IPERF_DONE, or the client simply closing: either ends the test.
    let _ = ctl.set_read_timeout(Some(Duration::from_secs(2)));
    let _ = wire::read_state(&mut ctl);
    Ok(())
}

fn tcp_accept(
    listener: &TcpListener,
    cookie: &[u8; wire::COOKIE_SIZE],
) -> Result<TcpStream, String> {
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    let deadline = Instant::now() + STEP;
    while Instant::now() < deadline {
        match listener.accept() {
            Ok((mut s, _)) => {
                let _ = s.set_nonblocking(false);
                match read_cookie(&mut s) {
                    Ok(c) if c == *cookie => {
                        let _ = s.set_read_timeout(None);
                        return Ok(s);
                    }
                    // Another client, or a stranger: the server is busy.
                    _ => deny(s),
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) => return Err(format!("unable to accept stream connection: {e}")),
        }
    }
    Err("the client did not open its data streams in time".into())
}

/// A UDP socket on the test's port, waiting for a stream's hello.
fn udp_bind(addr: SocketAddr, p: &Params) -> Result<UdpSocket, String> {
    let s = socket2::Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))
        .map_err(|e| e.to_string())?;
    s.set_reuse_address(true).map_err(|e| e.to_string())?;
    if addr.is_ipv6() {
        let _ = s.set_only_v6(false);
    }
    if p.window > 0 {
        let _ = s.set_send_buffer_size(p.window as usize);
        let _ = s.set_recv_buffer_size(p.window as usize);
    }
    s.bind(&addr.into())
        .map_err(|e| format!("unable to bind UDP stream socket: {e}"))?;
    Ok(s.into())
}

/// A UDP stream: the bound socket takes the client's hello and is connected to its
/// sender; the next stream's socket is bound on the same port before the reply goes
/// out, since the client sends its next hello as soon as it has the reply.
fn udp_accept(
    slot: &mut Option<UdpSocket>,
    addr: SocketAddr,
    p: &Params,
    more: bool,
) -> Result<UdpSocket, String> {
    let u = slot.take().ok_or("no UDP socket bound")?;
    u.set_read_timeout(Some(STEP)).map_err(|e| e.to_string())?;
    let mut buf = [0u8; 64];
    let (_, from) = u
        .recv_from(&mut buf)
        .map_err(|e| format!("unable to receive the UDP stream hello: {e}"))?;
    u.connect(from).map_err(|e| e.to_string())?;
    if more {
        *slot = Some(udp_bind(addr, p)?);
    }
    u.send(&wire::UDP_CONNECT_REPLY)
        .map_err(|e| e.to_string())?;
    let _ = u.set_read_timeout(None);
    Ok(u)
}

//! The iperf3 client: cookie, parameters, streams, the test, results, display — the
//! client alone decides when the test ends (reference §2.2).

use super::engine::{Engine, Row};
use super::json::{self, Side};
use super::output::{self, Closing, Line};
use super::streams::{SendLimits, Socket, Stream};
use super::wire::{self, Params, Results, StreamResult};
use super::{Options, Out};
use crate::measure::cputime::CpuTime;
use crate::measure::stop_requested;
use crate::net::sock::{self, SockOpts};
use crate::net::{NetError, resolve};
use serde_json::{Value, json};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::AtomicI64;
use std::time::{Duration, Instant};

/// What a finished (or failed) client run leaves for the JSON document.
struct Doc {
    start: Value,
    intervals: Vec<Value>,
}

pub fn run(o: &Options, out: &mut Out) -> Result<(), String> {
    let mut doc = Doc {
        start: json!({}),
        intervals: Vec::new(),
    };
    let result = run_test(o, out, &mut doc);
    if o.json {
        let mut v = json!({"start": doc.start, "intervals": doc.intervals});
        match &result {
            Ok(end) => v["end"] = end.clone(),
            Err(e) => {
                v["end"] = json!({});
                v["error"] = json!(e);
            }
        }
        out.json(&v);
    }
    result.map(|_| ())
}

fn connect_error(e: NetError) -> String {
    match e {
        NetError::Connect { reason, .. } if reason.starts_with("connection refused") => {
            "unable to connect to server: Connection refused".into()
        }
        NetError::Connect { reason, .. } => format!("unable to connect to server: {reason}"),
        NetError::Resolve { reason, .. } => format!("unable to resolve host: {reason}"),
        other => other.to_string(),
    }
}

fn run_test(o: &Options, out: &mut Out, doc: &mut Doc) -> Result<Value, String> {
    let host = o.client.clone().unwrap_or_default();
    let text = !o.json;
    let timeout = o.connect_timeout.unwrap_or(Duration::from_secs(10));
    let addrs = resolve(&host, o.port, o.family).map_err(connect_error)?;
    if text {
        out.line(&format!("Connecting to host {host}, port {}", o.port));
    }
    let mut last = None;
    let mut ctl = None;
    for a in &addrs {
        match sock::connect_tcp(
            *a,
            SockOpts {
                nodelay: true,
                ..Default::default()
            },
            timeout,
        ) {
            Ok(s) => {
                ctl = Some(s);
                break;
            }
            Err(e) => last = Some(e),
        }
    }
    let mut ctl = match ctl {
        Some(c) => c,
        None => return Err(connect_error(last.expect("one address at least"))),
    };
    let peer = ctl.peer_addr().map_err(|e| e.to_string())?;
    let cookie = wire::make_cookie();
    ctl.write_all(&cookie)
        .map_err(|e| format!("unable to send cookie to server: {e}"))?;
    let mss = sock::mss(&ctl).unwrap_or(0);

    let params = make_params(o, mss);
    doc.start = json!({
        "connected": [],
        "version": "iperf 3.12",
        "system_info": json::system_info(),
        "timestamp": json::timestamp(),
        "connecting_to": {"host": host, "port": o.port},
        "cookie": wire::cookie_text(&cookie),
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
        doc.start["test_start"]["bidir"] = json!(1);
    }

    let mut engine: Option<Engine> = None;
    // Streams made on CREATE_STREAMS wait here for TEST_RUNNING.
    let mut pending: Vec<Arc<Stream>> = Vec::new();
    let mut roles: Vec<&'static str> = Vec::new();
    let mut remote: Option<Results> = None;
    let mut cpu_at_start = (CpuTime::now(), Instant::now());
    let rcv_timeout = o.rcv_timeout.max(Duration::from_secs(1));
    let _ = ctl.set_read_timeout(Some(Duration::from_millis(2)));
    let mut quiet_since = Instant::now();
    let mut ended = false;
    loop {
        let state = match read_state_polled(&mut ctl) {
            Ok(Some(s)) => {
                quiet_since = Instant::now();
                s
            }
            Ok(None) => {
                // No state byte yet: drive the test when it runs.
                if let Some(e) = engine.as_mut() {
                    if let Some(rows) = e.poll() {
                        report_interval(o, out, &mut doc.intervals, &rows, &roles);
                    }
                    if !ended && test_over(o, e) {
                        ended = true;
                        e.stop_senders();
                        if let Some(rows) = e.last_interval() {
                            report_interval(o, out, &mut doc.intervals, &rows, &roles);
                        }
                        e.drain_senders(Duration::from_secs(5));
                        wire::write_state(&mut ctl, wire::TEST_END)
                            .map_err(|_| "control socket has closed unexpectedly".to_string())?;
                        e.join();
                    }
                } else if quiet_since.elapsed() > rcv_timeout {
                    return Err("no response from the server".into());
                }
                if ended && quiet_since.elapsed() > rcv_timeout {
                    return Err("no results from the server".into());
                }
                continue;
            }
            Err(_) => return Err("control socket has closed unexpectedly".into()),
        };
        match state {
            wire::PARAM_EXCHANGE => {
                wire::write_json(&mut ctl, &params.to_json())
                    .map_err(|e| format!("unable to send parameters to server: {e}"))?;
            }
            wire::CREATE_STREAMS => {
                let streams = create_streams(o, &params, peer, &cookie, timeout)?;
                if text && o.reverse {
                    out.line(&format!("Reverse mode, remote host {host} is sending"));
                }
                let mut connected = Vec::new();
                for s in &streams {
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
                    connected.push(json!({"socket": s.fd(), "local_host": ip_text(&s.local),
                        "local_port": s.local.port(), "remote_host": ip_text(&s.remote),
                        "remote_port": s.remote.port()}));
                }
                if let Some(first) = streams.first() {
                    let (snd, rcv) = match &first.socket {
                        Socket::Tcp(t) => sock::buffer_sizes(t),
                        Socket::Udp(u) => sock::buffer_sizes(u),
                    };
                    doc.start["sndbuf_actual"] = json!(snd);
                    doc.start["rcvbuf_actual"] = json!(rcv);
                }
                doc.start["connected"] = Value::Array(connected);
                roles = streams
                    .iter()
                    .map(|s| match (o.bidir, s.sender) {
                        (false, _) => "",
                        (true, true) => "[TX-C]",
                        (true, false) => "[RX-C]",
                    })
                    .collect();
                pending = streams;
            }
            wire::TEST_START => {}
            wire::TEST_RUNNING => {
                let streams = std::mem::take(&mut pending);
                let limits = Arc::new(SendLimits {
                    len: params.len as usize,
                    rate_bps: params.bandwidth,
                    bytes_left: (o.bytes > 0).then(|| AtomicI64::new(o.bytes as i64)),
                    blocks_left: (o.blocks > 0).then(|| AtomicI64::new(o.blocks as i64)),
                    udp64: o.udp64,
                });
                if text {
                    let sender = streams.iter().any(|s| s.sender);
                    out.line(&output::interval_header(o.udp, sender, !o.udp, o.bidir));
                }
                cpu_at_start = (CpuTime::now(), Instant::now());
                engine = Some(Engine::start(
                    streams,
                    limits,
                    o.interval,
                    Duration::from_secs(o.omit),
                ));
            }
            wire::EXCHANGE_RESULTS => {
                let Some(e) = engine.as_mut() else {
                    return Err("results requested before the test ran".into());
                };
                e.join();
                let mine = local_results(e, cpu_at_start);
                wire::write_json(&mut ctl, &mine.to_json())
                    .map_err(|e| format!("unable to send results: {e}"))?;
                let _ = ctl.set_read_timeout(Some(rcv_timeout));
                let theirs = wire::read_json(&mut ctl, wire::MAX_RESULTS_JSON)
                    .and_then(|v| Results::from_json(&v))
                    .map_err(|e| format!("unable to receive results: {e}"))?;
                let _ = ctl.set_read_timeout(Some(Duration::from_millis(2)));
                remote = Some(theirs);
            }
            wire::DISPLAY_RESULTS => {
                let (Some(e), Some(r)) = (engine.as_ref(), remote.as_ref()) else {
                    return Err("display requested before results".into());
                };
                let end = closing(o, out, e, r, &roles, cpu_at_start);
                let _ = wire::write_state(&mut ctl, wire::IPERF_DONE);
                if text {
                    out.line("\niperf Done.");
                }
                return Ok(end);
            }
            wire::ACCESS_DENIED => {
                return Err("the server is busy running a test. try again later".into());
            }
            wire::SERVER_ERROR => {
                let mut b = [0u8; 8];
                let _ = ctl.set_read_timeout(Some(Duration::from_secs(2)));
                let _ = ctl.read_exact(&mut b);
                let ierr = i32::from_be_bytes(b[..4].try_into().expect("4"));
                let errno = i32::from_be_bytes(b[4..].try_into().expect("4"));
                return Err(format!(
                    "the server reported an error (iperf3 error {ierr}, errno {errno})"
                ));
            }
            wire::SERVER_TERMINATE => return Err("the server has terminated".into()),
            other => return Err(format!("received an unknown control message ({other})")),
        }
        if stop_requested()
            && let Some(e) = engine.as_mut()
            && !ended
        {
            // Ctrl-C: end the test now and show what was measured.
            ended = true;
            e.stop_senders();
            let _ = wire::write_state(&mut ctl, wire::TEST_END);
        }
    }
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

fn test_over(o: &Options, e: &Engine) -> bool {
    if stop_requested() {
        return true;
    }
    if e.in_omit() {
        return false;
    }
    let moved = || -> u64 {
        e.streams
            .iter()
            .map(|s| s.counters.bytes.load(std::sync::atomic::Ordering::Relaxed))
            .sum()
    };
    if o.bytes > 0 {
        return moved() >= o.bytes;
    }
    if o.blocks > 0 {
        let len = o.len.unwrap_or(wire::DEFAULT_TCP_BLKSIZE).max(1);
        return moved() >= o.blocks * len;
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

/// Socket options every data stream of a test gets.
pub fn apply_tcp_opts(s: &socket2::Socket, p: &Params) -> std::io::Result<()> {
    if p.window > 0 {
        s.set_send_buffer_size(p.window as usize)?;
        s.set_recv_buffer_size(p.window as usize)?;
    }
    if p.nodelay {
        s.set_tcp_nodelay(true)?;
    }
    if p.mss > 0 {
        let v = p.mss as libc::c_int;
        // SAFETY: setsockopt reads one int from `v`.
        unsafe {
            use std::os::fd::AsRawFd;
            libc::setsockopt(
                s.as_raw_fd(),
                libc::IPPROTO_TCP,
                libc::TCP_MAXSEG,
                (&v as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
    }
    if let Some(cc) = &p.congestion {
        // SAFETY: setsockopt reads `cc.len()` bytes of the string.
        let rc = unsafe {
            use std::os::fd::AsRawFd;
            libc::setsockopt(
                s.as_raw_fd(),
                libc::IPPROTO_TCP,
                libc::TCP_CONGESTION,
                cc.as_ptr().cast(),
                cc.len() as libc::socklen_t,
            )
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

fn create_streams(
    o: &Options,
    p: &Params,
    peer: SocketAddr,
    cookie: &[u8; wire::COOKIE_SIZE],
    timeout: Duration,
) -> Result<Vec<Arc<Stream>>, String> {
    // Senders first in bidir mode: the server takes the first N as its receivers.
    let roles: Vec<bool> = if o.bidir {
        (0..p.parallel)
            .map(|_| true)
            .chain((0..p.parallel).map(|_| false))
            .collect()
    } else {
        (0..p.parallel).map(|_| !o.reverse).collect()
    };
    let mut streams = Vec::new();
    for (i, sender) in roles.into_iter().enumerate() {
        let socket = if o.udp {
            Socket::Udp(udp_connect(p, peer, o.reverse || !sender)?)
        } else {
            let s = socket2::Socket::new(
                socket2::Domain::for_address(peer),
                socket2::Type::STREAM,
                Some(socket2::Protocol::TCP),
            )
            .map_err(|e| e.to_string())?;
            apply_tcp_opts(&s, p).map_err(|e| format!("unable to set socket options: {e}"))?;
            s.connect_timeout(&peer.into(), timeout)
                .map_err(|e| format!("unable to connect stream: {e}"))?;
            let mut t: TcpStream = s.into();
            t.write_all(cookie)
                .map_err(|e| format!("unable to send cookie to server: {e}"))?;
            Socket::Tcp(t)
        };
        let stream = Stream::new(wire::stream_id(i), sender, socket).map_err(|e| e.to_string())?;
        streams.push(Arc::new(stream));
    }
    Ok(streams)
}

/// A UDP stream: connect, send the 4-byte hello, wait for any version's reply
/// (data may arrive first when the server is the sender).
fn udp_connect(p: &Params, peer: SocketAddr, may_see_data: bool) -> Result<UdpSocket, String> {
    let opts = SockOpts {
        sndbuf: p.window as u32,
        rcvbuf: p.window as u32,
        nodelay: false,
    };
    let s = sock::bind_udp(sock::unspecified_like(&peer), opts).map_err(|e| e.to_string())?;
    s.connect(peer)
        .map_err(|e| format!("unable to connect UDP stream: {e}"))?;
    let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut buf = vec![0u8; 65536];
    let mut sent_at = None::<Instant>;
    while Instant::now() < deadline {
        if sent_at.is_none_or(|t| t.elapsed() > Duration::from_secs(2)) {
            s.send(&wire::UDP_CONNECT_MSG)
                .map_err(|e| format!("unable to send UDP hello: {e}"))?;
            sent_at = Some(Instant::now());
        }
        match s.recv(&mut buf) {
            Ok(n) if wire::is_udp_reply(&buf[..n]) => return Ok(s),
            Ok(_) if may_see_data => {}
            Ok(_) => {}
            Err(_) => {}
        }
    }
    Err("unable to read from the UDP stream socket: no reply from the server".into())
}

fn local_results(e: &Engine, cpu_at_start: (CpuTime, Instant)) -> Results {
    let (cpu0, t0) = cpu_at_start;
    let cpu = CpuTime::now().since(&cpu0);
    let wall = t0.elapsed().as_secs_f64().max(1e-9);
    let totals = e.totals();
    let tcp_sender = totals.iter().any(|r| r.sender && !r.udp);
    Results {
        cpu_total: 100.0 * cpu.total_s() / wall,
        cpu_user: 100.0 * cpu.user_s / wall,
        cpu_system: 100.0 * cpu.system_s / wall,
        sender_has_retransmits: if tcp_sender { 1 } else { -1 },
        congestion_used: e.streams.iter().find_map(|s| match &s.socket {
            Socket::Tcp(t) => sock::congestion(t),
            Socket::Udp(_) => None,
        }),
        streams: totals.iter().map(stream_result).collect(),
    }
}

pub fn stream_result(r: &Row) -> StreamResult {
    StreamResult {
        id: r.id,
        bytes: r.delta.bytes,
        retransmits: if r.sender && !r.udp {
            r.delta.retransmits.unwrap_or(-1)
        } else {
            -1
        },
        jitter_s: if r.udp && !r.sender {
            r.delta.jitter_s
        } else {
            0.0
        },
        errors: if r.udp && !r.sender { r.delta.lost } else { 0 },
        packets: if r.udp { r.delta.packets } else { 0 },
        start_time: 0.0,
        end_time: r.end,
    }
}

/// One interval: kept for the JSON document, or printed (a separator between
/// multi-stream blocks). Client and server report intervals the same way.
pub(super) fn report_interval(
    o: &Options,
    out: &mut Out,
    intervals: &mut Vec<Value>,
    rows: &[Row],
    roles: &[&'static str],
) {
    if o.json {
        intervals.push(json::interval(rows));
        return;
    }
    if rows.len() > 1 && !intervals.is_empty() {
        out.line(output::SEPARATOR);
    }
    // Interval counting for the separator rule; text mode keeps no document.
    intervals.push(Value::Null);
    out.line(&output::interval_block(rows, roles, o.units));
}

/// Prints the closing block and returns the JSON `end` section.
fn closing(
    o: &Options,
    out: &mut Out,
    e: &Engine,
    remote: &Results,
    roles: &[&'static str],
    cpu_at_start: (CpuTime, Instant),
) -> Value {
    let totals = e.totals();
    let mine = local_results(e, cpu_at_start);
    let mut closing = Vec::new();
    let mut end_streams = Vec::new();
    let (mut sent, mut received) = (Vec::new(), Vec::new());
    for (i, r) in totals.iter().enumerate() {
        let theirs = remote
            .streams
            .iter()
            .find(|s| s.id == r.id)
            .copied()
            .unwrap_or(StreamResult {
                id: r.id,
                ..Default::default()
            });
        let local = Side::local(r, e.rtt_stats(i));
        let other = Side::from_remote(r.fd, &theirs);
        let (snd, rcv) = if r.sender {
            (local, other)
        } else {
            (other, local)
        };
        let line = |s: &Side, sender: bool| Line {
            end: s.end,
            bytes: s.bytes,
            retr: if o.udp {
                None
            } else if sender {
                Some(s.retransmits.unwrap_or(0))
            } else {
                None
            },
            udp: o.udp.then_some(if sender {
                (0.0, 0, s.packets)
            } else {
                (s.jitter_s, s.lost, s.packets)
            }),
        };
        closing.push(Closing {
            fd: r.fd,
            role: roles.get(i).copied().unwrap_or(""),
            sender: Some(line(&snd, true)),
            receiver: Some(line(&rcv, false)),
        });
        end_streams.push(json::end_stream(o.udp, &snd, &rcv));
        sent.push((r.sender, snd));
        received.push((r.sender, rcv));
    }
    if !o.json {
        out.line(&output::closing_block(
            &closing, o.udp, !o.udp, o.bidir, o.units,
        ));
        if o.verbose {
            let local_sends = totals.iter().any(|r| r.sender);
            out.line(&format!(
                "CPU Utilization: local/{} {:.1}% ({:.1}%u/{:.1}%s), remote/{} {:.1}% ({:.1}%u/{:.1}%s)",
                if local_sends { "sender" } else { "receiver" },
                mine.cpu_total,
                mine.cpu_user,
                mine.cpu_system,
                if local_sends { "receiver" } else { "sender" },
                remote.cpu_total,
                remote.cpu_user,
                remote.cpu_system
            ));
        }
    }
    // --bidir: the sums cover the client's sending direction, *_bidir_reverse the other.
    fn pick(v: &[(bool, Side)], bidir: bool, forward: bool) -> Vec<&Side> {
        v.iter()
            .filter(|(local_sends, _)| !bidir || *local_sends == forward)
            .map(|(_, s)| s)
            .collect()
    }
    let (sent_refs, recv_refs) = (pick(&sent, o.bidir, true), pick(&received, o.bidir, true));
    let mut end = json!({
        "streams": end_streams,
        "sum_sent": json::sum(&sent_refs, true, o.udp),
        "sum_received": json::sum(&recv_refs, false, o.udp),
        "cpu_utilization_percent": {
            "host_total": mine.cpu_total, "host_user": mine.cpu_user, "host_system": mine.cpu_system,
            "remote_total": remote.cpu_total, "remote_user": remote.cpu_user,
            "remote_system": remote.cpu_system,
        },
    });
    if o.bidir {
        end["sum_sent_bidir_reverse"] = json::sum(&pick(&sent, true, false), true, o.udp);
        end["sum_received_bidir_reverse"] = json::sum(&pick(&received, true, false), false, o.udp);
    }
    if o.udp {
        end["sum"] = json::sum(&recv_refs, false, true);
    } else {
        let local_cc = mine.congestion_used.clone().unwrap_or_default();
        let remote_cc = remote.congestion_used.clone().unwrap_or_default();
        let local_sends = totals.iter().any(|r| r.sender);
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

//! iperf3's data streams set up: the client connects them (TCP with the cookie, UDP
//! with its hello), the server accepts them on its one port, and both apply the test's
//! socket options. Errors are in iperf3's words, for the personality to print.

use super::streams::{Socket, Stream};
use super::wire::{self, Params};
use crate::workload::net::sock::{self, SockOpts};
use socket2::{Domain, Protocol, Type};
use std::io::{self, ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::Arc;
use std::time::{Duration, Instant};
use thiserror::Error;

/// Why a data stream (or the server's listener) could not be set up, in iperf3's
/// words; the personality prints it after "iperf3: error - ".
#[derive(Debug, Error)]
pub enum ConnectError {
    /// A socket could not be made or configured (the system's own words).
    #[error("{0}")]
    Socket(#[source] io::Error),
    #[error("unable to set socket options: {0}")]
    SocketOptions(#[source] io::Error),
    #[error("unable to connect stream: {0}")]
    Connect(#[source] io::Error),
    #[error("unable to send cookie to server: {0}")]
    SendCookie(#[source] io::Error),
    #[error("unable to connect UDP stream: {0}")]
    UdpConnect(#[source] io::Error),
    #[error("unable to send UDP hello: {0}")]
    UdpHello(#[source] io::Error),
    #[error("unable to read from the UDP stream socket: no reply from the server")]
    NoUdpReply,
    /// The port is taken (iperf3 prints the reason without the errno).
    #[error("unable to start listener for connections: Address already in use")]
    AddrInUse(#[source] io::Error),
    #[error("unable to start listener for connections: {0}")]
    Listen(#[source] io::Error),
    #[error("unable to accept stream connection: {0}")]
    Accept(#[source] io::Error),
    #[error("the client did not open its data streams in time")]
    StreamsTimeout,
    #[error("unable to bind UDP stream socket: {0}")]
    UdpBind(#[source] io::Error),
    /// A UDP stream was expected with no socket bound for it (a bug, not the peer).
    #[error("no UDP socket bound")]
    NoUdpSocket,
    #[error("unable to receive the UDP stream hello: {0}")]
    UdpHelloRecv(#[source] io::Error),
}

/// How long a client has for each setup step (cookie, parameters, streams, results).
pub const STEP: Duration = Duration::from_secs(10);

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
        set_int(s, libc::TCP_MAXSEG, p.mss as libc::c_int);
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

fn set_int(s: &socket2::Socket, name: libc::c_int, v: libc::c_int) {
    // SAFETY: setsockopt reads one int from `v`.
    unsafe {
        use std::os::fd::AsRawFd;
        libc::setsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_TCP,
            name,
            (&v as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

/// The client's streams: senders first in bidir mode (the server takes the first N
/// as its receivers), all receivers with `-R`.
pub fn create_streams(
    p: &Params,
    peer: SocketAddr,
    cookie: &[u8; wire::COOKIE_SIZE],
    timeout: Duration,
) -> Result<Vec<Arc<Stream>>, ConnectError> {
    let roles: Vec<bool> = if p.bidirectional {
        (0..p.parallel)
            .map(|_| true)
            .chain((0..p.parallel).map(|_| false))
            .collect()
    } else {
        (0..p.parallel).map(|_| !p.reverse).collect()
    };
    let mut streams = Vec::new();
    for (i, sender) in roles.into_iter().enumerate() {
        let socket = if p.udp {
            Socket::Udp(udp_connect(p, peer)?)
        } else {
            Socket::Tcp(tcp_connect(p, peer, cookie, timeout)?)
        };
        let stream =
            Stream::new(wire::stream_id(i), sender, socket).map_err(ConnectError::Socket)?;
        streams.push(Arc::new(stream));
    }
    Ok(streams)
}

fn tcp_connect(
    p: &Params,
    peer: SocketAddr,
    cookie: &[u8; wire::COOKIE_SIZE],
    timeout: Duration,
) -> Result<TcpStream, ConnectError> {
    let s = socket2::Socket::new(Domain::for_address(peer), Type::STREAM, Some(Protocol::TCP))
        .map_err(ConnectError::Socket)?;
    apply_tcp_opts(&s, p).map_err(ConnectError::SocketOptions)?;
    s.connect_timeout(&peer.into(), timeout)
        .map_err(ConnectError::Connect)?;
    let mut t: TcpStream = s.into();
    t.write_all(cookie).map_err(ConnectError::SendCookie)?;
    Ok(t)
}

/// A UDP stream: connect, send the 4-byte hello, wait for any version's reply
/// (data may arrive first when the server is the sender: it is skipped).
fn udp_connect(p: &Params, peer: SocketAddr) -> Result<UdpSocket, ConnectError> {
    let opts = SockOpts {
        sndbuf: p.window as u32,
        rcvbuf: p.window as u32,
        nodelay: false,
    };
    let s = sock::bind_udp(sock::unspecified_like(&peer), opts).map_err(ConnectError::Socket)?;
    s.connect(peer).map_err(ConnectError::UdpConnect)?;
    let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut buf = vec![0u8; 65536];
    let mut sent_at = None::<Instant>;
    while Instant::now() < deadline {
        if sent_at.is_none_or(|t| t.elapsed() > Duration::from_secs(2)) {
            s.send(&wire::UDP_CONNECT_MSG)
                .map_err(ConnectError::UdpHello)?;
            sent_at = Some(Instant::now());
        }
        match s.recv(&mut buf) {
            Ok(n) if wire::is_udp_reply(&buf[..n]) => return Ok(s),
            Ok(_) | Err(_) => {}
        }
    }
    Err(ConnectError::NoUdpReply)
}

/// The send and receive buffer sizes of a stream's socket, as the kernel set them.
pub fn buffer_sizes(s: &Stream) -> (u64, u64) {
    match &s.socket {
        Socket::Tcp(t) => sock::buffer_sizes(t),
        Socket::Udp(u) => sock::buffer_sizes(u),
    }
}

/// The server's listener on the port, for every test: each test's socket options
/// (window, MSS, nodelay, congestion control) go on its streams as they are accepted.
pub fn listen(addr: SocketAddr) -> Result<TcpListener, ConnectError> {
    let fail = ConnectError::Listen;
    let s = socket2::Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))
        .map_err(fail)?;
    s.set_reuse_address(true).map_err(fail)?;
    if addr.is_ipv6() {
        let _ = s.set_only_v6(false);
    }
    s.bind(&addr.into()).map_err(|e| {
        if e.kind() == ErrorKind::AddrInUse {
            ConnectError::AddrInUse(e)
        } else {
            fail(e)
        }
    })?;
    s.listen(128).map_err(fail)?;
    Ok(s.into())
}

/// Connections accepted on the iperf3 port whose 37-byte cookie is still coming in.
/// Each is read without blocking, so a silent one delays no other; one that has not
/// sent its cookie within `STEP` of its accept is closed.
#[derive(Default)]
pub struct Arrivals {
    waiting: Vec<Arriving>,
}

struct Arriving {
    stream: TcpStream,
    got: Vec<u8>,
    until: Instant,
}

/// Connections whose cookie is awaited at once, at most (the oldest is turned away).
const MAX_ARRIVING: usize = 1024;

impl Arrivals {
    /// Accepts whatever the listener has queued, reads what has come, and returns the
    /// first connection with a whole cookie (blocking again), if one has.
    pub fn next(
        &mut self,
        listener: &TcpListener,
    ) -> io::Result<Option<(TcpStream, [u8; wire::COOKIE_SIZE])>> {
        listener.set_nonblocking(true)?;
        loop {
            match listener.accept() {
                Ok((stream, _)) => self.admit(stream),
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        let now = Instant::now();
        let mut i = 0;
        while i < self.waiting.len() {
            match self.waiting[i].read() {
                Some(true) => {
                    let a = self.waiting.remove(i);
                    let cookie: [u8; wire::COOKIE_SIZE] = a.got.try_into().expect("a whole cookie");
                    a.stream.set_nonblocking(false)?;
                    return Ok(Some((a.stream, cookie)));
                }
                Some(false) if now < self.waiting[i].until => i += 1,
                // Closed, failed, or silent too long: gone without a word.
                _ => drop(self.waiting.remove(i)),
            }
        }
        Ok(None)
    }

    fn admit(&mut self, stream: TcpStream) {
        if stream.set_nonblocking(true).is_err() {
            return;
        }
        if self.waiting.len() >= MAX_ARRIVING {
            deny(self.waiting.remove(0).stream);
        }
        self.waiting.push(Arriving {
            stream,
            got: Vec::with_capacity(wire::COOKIE_SIZE),
            until: Instant::now() + STEP,
        });
    }

    /// Turns away every connection still waiting: a test is starting (iperf3 answers
    /// any other client ACCESS_DENIED while it runs one).
    pub fn deny_all(&mut self) {
        for a in self.waiting.drain(..) {
            deny(a.stream);
        }
    }
}

impl Arriving {
    /// Some(true) once the cookie is whole, Some(false) while it is still coming,
    /// None when the connection closed or failed.
    fn read(&mut self) -> Option<bool> {
        let mut buf = [0u8; wire::COOKIE_SIZE];
        let need = wire::COOKIE_SIZE - self.got.len();
        match self.stream.read(&mut buf[..need]) {
            Ok(0) => None,
            Ok(n) => {
                self.got.extend_from_slice(&buf[..n]);
                Some(self.got.len() == wire::COOKIE_SIZE)
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => {
                Some(false)
            }
            Err(_) => None,
        }
    }
}

/// Refuses a connection that is not part of the running test.
pub fn deny(mut s: TcpStream) {
    let _ = s.write_all(&[wire::ACCESS_DENIED as u8]);
}

/// The server's streams, as the client opens them: the first N are its receivers
/// (with `-R` its senders; in bidir mode N receivers, then N senders). A UDP test's
/// first socket is bound before CREATE_STREAMS goes out (`udp_bind`).
pub fn accept_streams(
    listener: &TcpListener,
    p: &Params,
    cookie: &[u8; wire::COOKIE_SIZE],
    mut next_udp: Option<UdpSocket>,
    addr: SocketAddr,
) -> Result<Vec<Arc<Stream>>, ConnectError> {
    let n = p.parallel as usize;
    let roles: Vec<bool> = if p.bidirectional {
        (0..n).map(|_| false).chain((0..n).map(|_| true)).collect()
    } else {
        (0..n).map(|_| p.reverse).collect()
    };
    let mut arrivals = Arrivals::default();
    let deadline = Instant::now() + STEP;
    let mut streams = Vec::new();
    for (i, sender) in roles.iter().enumerate() {
        let socket = if p.udp {
            let more = i + 1 < roles.len();
            Socket::Udp(udp_accept(&mut next_udp, addr, p, more)?)
        } else {
            Socket::Tcp(tcp_accept(listener, &mut arrivals, p, cookie, deadline)?)
        };
        let s = Stream::new(wire::stream_id(i), *sender, socket).map_err(ConnectError::Socket)?;
        streams.push(Arc::new(s));
    }
    // Other clients that came meanwhile: the server is busy.
    arrivals.deny_all();
    Ok(streams)
}

/// The test's next TCP stream: the next connection that presents its cookie. Any
/// other cookie is another client's (or a stranger's), and is told the server is busy.
fn tcp_accept(
    listener: &TcpListener,
    arrivals: &mut Arrivals,
    p: &Params,
    cookie: &[u8; wire::COOKIE_SIZE],
    deadline: Instant,
) -> Result<TcpStream, ConnectError> {
    while Instant::now() < deadline {
        match arrivals.next(listener).map_err(ConnectError::Accept)? {
            Some((s, c)) if c == *cookie => {
                // The window still caps what this end advertises and sends; the
                // client's own MSS and window shaped the handshake.
                apply_tcp_opts(&socket2::SockRef::from(&s), p)
                    .map_err(ConnectError::SocketOptions)?;
                return Ok(s);
            }
            Some((s, _)) => deny(s),
            None => std::thread::sleep(Duration::from_millis(2)),
        }
    }
    Err(ConnectError::StreamsTimeout)
}

/// A UDP socket on the test's port, waiting for a stream's hello.
pub fn udp_bind(addr: SocketAddr, p: &Params) -> Result<UdpSocket, ConnectError> {
    let s = socket2::Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))
        .map_err(ConnectError::Socket)?;
    s.set_reuse_address(true).map_err(ConnectError::Socket)?;
    if addr.is_ipv6() {
        let _ = s.set_only_v6(false);
    }
    if p.window > 0 {
        let _ = s.set_send_buffer_size(p.window as usize);
        let _ = s.set_recv_buffer_size(p.window as usize);
    }
    s.bind(&addr.into()).map_err(ConnectError::UdpBind)?;
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
) -> Result<UdpSocket, ConnectError> {
    let u = slot.take().ok_or(ConnectError::NoUdpSocket)?;
    u.set_read_timeout(Some(STEP))
        .map_err(ConnectError::Socket)?;
    let mut buf = [0u8; 64];
    let (_, from) = u
        .recv_from(&mut buf)
        .map_err(|e| ConnectError::UdpHelloRecv(wire::timed_out(e, STEP, "")))?;
    u.connect(from).map_err(ConnectError::Socket)?;
    if more {
        *slot = Some(udp_bind(addr, p)?);
    }
    u.send(&wire::UDP_CONNECT_REPLY)
        .map_err(ConnectError::Socket)?;
    let _ = u.set_read_timeout(None);
    Ok(u)
}

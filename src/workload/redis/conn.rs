//! Connections: where the server is, how to open a socket to it (TCP or Unix), the
//! handshake every connection makes before it is timed (AUTH, CLIENT TRACKING, SELECT,
//! HELLO 3), and the reply reader the event loops share.

use super::resp::{self, Scan};
use serde::Serialize;
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::Duration;
use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Endpoint {
    Tcp { host: String, port: u16 },
    Unix(PathBuf),
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Endpoint::Tcp { host, port } if host.contains(':') => write!(f, "[{host}]:{port}"),
            Endpoint::Tcp { host, port } => write!(f, "{host}:{port}"),
            Endpoint::Unix(p) => write!(f, "unix:{}", p.display()),
        }
    }
}

/// How long the front ends wait for a reply unless told otherwise: a server that
/// answers nothing for this long is not going to.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(10);

/// Commands each connection sends before its first timed request.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Setup {
    pub user: Option<String>,
    #[serde(skip)]
    pub password: Option<String>,
    pub db: Option<u32>,
    pub resp3: bool,
    pub tracking: bool,
    /// How long a reply is waited for: in the blocking handshake and queries (AUTH,
    /// CONFIG GET, CLUSTER NODES) and, in redis-benchmark's loop, by a run that
    /// stopped getting replies. None waits forever.
    #[serde(skip)]
    pub timeout: Option<Duration>,
}

impl Setup {
    fn commands(&self) -> Vec<(&'static str, Vec<String>)> {
        let mut out = Vec::new();
        if let Some(pw) = &self.password {
            let mut args = vec!["AUTH".to_string()];
            args.extend(self.user.clone());
            args.push(pw.clone());
            out.push(("AUTH", args));
        }
        if self.tracking {
            out.push((
                "CLIENT TRACKING",
                vec!["CLIENT".into(), "TRACKING".into(), "on".into()],
            ));
        }
        if let Some(db) = self.db.filter(|&d| d != 0) {
            out.push(("SELECT", vec!["SELECT".into(), db.to_string()]));
        }
        if self.resp3 {
            out.push(("HELLO 3", vec!["HELLO".into(), "3".into()]));
        }
        out
    }
}

#[derive(Debug, Error)]
pub enum RedisError {
    #[error("could not connect to {endpoint}: {source}{hint}")]
    Connect {
        endpoint: Endpoint,
        source: io::Error,
        hint: &'static str,
    },
    #[error("{endpoint} answered {command} with an error: {message}")]
    Setup {
        endpoint: Endpoint,
        command: &'static str,
        message: String,
    },
    #[error("Error from server: {0}")]
    Reply(String),
    #[error(
        "the server closed the connection (was it stopped or restarted, or did it drop the client?)"
    )]
    Closed,
    #[error("connection to the server failed: {0}")]
    Io(io::Error),
    #[error("{0}")]
    Protocol(#[from] resp::ProtocolError),
    #[error("{0}")]
    Other(String),
    /// The server took the connection but sent no reply in time.
    #[error(
        "no reply from {endpoint} within {} s (it accepted the connection but does not answer: \
         is it a Redis server, and is it responsive?)",
        .waited.as_secs_f64()
    )]
    NoReply { endpoint: String, waited: Duration },
    /// Something that went wrong on the connection to one node of a cluster.
    #[error("cluster node {node}: {source}")]
    AtNode {
        node: Endpoint,
        source: Box<RedisError>,
    },
    /// A node's CLUSTER NODES reply that does not parse.
    #[error("{endpoint}: {source}")]
    ClusterNodes {
        endpoint: Endpoint,
        source: super::cluster::NodesError,
    },
}

impl RedisError {
    /// The reason in a few words, for "partial results" markers.
    pub fn is_server_reply(&self) -> bool {
        match self {
            RedisError::AtNode { source, .. } => source.is_server_reply(),
            other => matches!(other, RedisError::Reply(_) | RedisError::Setup { .. }),
        }
    }
}

fn connect_hint(e: &io::Error) -> &'static str {
    match e.kind() {
        io::ErrorKind::ConnectionRefused => " (is redis-server running and listening there?)",
        io::ErrorKind::NotFound => " (no such socket: is redis-server running with `unixsocket`?)",
        io::ErrorKind::TimedOut => " (no answer: check the host, port and firewall)",
        _ if e.raw_os_error() == Some(libc::EMFILE) => {
            " (too many open files: raise `ulimit -n` or use fewer clients)"
        }
        _ => "",
    }
}

/// Opens a blocking stream, runs the setup commands, then makes it non-blocking.
pub fn connect(endpoint: &Endpoint, setup: &Setup) -> Result<OwnedFd, RedisError> {
    let fail = |source: io::Error| RedisError::Connect {
        endpoint: endpoint.clone(),
        hint: connect_hint(&source),
        source,
    };
    let mut stream: Box<dyn Stream> = match endpoint {
        Endpoint::Tcp { host, port } => {
            let addrs: Vec<_> = (host.as_str(), *port)
                .to_socket_addrs()
                .map_err(fail)?
                .collect();
            let mut last = io::Error::new(io::ErrorKind::NotFound, "host has no address");
            let mut opened = None;
            for a in addrs {
                match TcpStream::connect_timeout(&a, Duration::from_secs(10)) {
                    Ok(s) => {
                        opened = Some(s);
                        break;
                    }
                    Err(e) => last = e,
                }
            }
            let s = opened.ok_or_else(|| fail(last))?;
            s.set_nodelay(true).map_err(fail)?;
            Box::new(s)
        }
        Endpoint::Unix(path) => Box::new(UnixStream::connect(path).map_err(fail)?),
    };
    // Kept on the socket (SO_RCVTIMEO): `query` reads through it too.
    stream.set_read_timeout(setup.timeout).map_err(fail)?;
    for (name, args) in setup.commands() {
        let reply =
            roundtrip(stream.as_mut(), &args).map_err(|e| match no_reply(e, endpoint, setup) {
                RedisError::Reply(message) => RedisError::Setup {
                    endpoint: endpoint.clone(),
                    command: name,
                    message,
                },
                other => other,
            })?;
        drop(reply);
    }
    stream.set_nonblocking().map_err(RedisError::Io)?;
    Ok(stream.into_fd())
}

/// A read that timed out (SO_RCVTIMEO) is the server not answering: named so.
fn no_reply(e: RedisError, endpoint: &Endpoint, setup: &Setup) -> RedisError {
    match (e, setup.timeout) {
        (RedisError::Io(io), Some(waited))
            if matches!(
                io.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
            ) =>
        {
            RedisError::NoReply {
                endpoint: endpoint.to_string(),
                waited,
            }
        }
        (e, _) => e,
    }
}

trait Stream: Read + Write {
    fn set_nonblocking(&self) -> io::Result<()>;
    fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()>;
    fn into_fd(self: Box<Self>) -> OwnedFd;
}

impl Stream for TcpStream {
    fn set_nonblocking(&self) -> io::Result<()> {
        TcpStream::set_nonblocking(self, true)
    }
    fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        TcpStream::set_read_timeout(self, timeout.filter(|t| !t.is_zero()))
    }
    fn into_fd(self: Box<Self>) -> OwnedFd {
        OwnedFd::from(*self)
    }
}

impl Stream for UnixStream {
    fn set_nonblocking(&self) -> io::Result<()> {
        UnixStream::set_nonblocking(self, true)
    }
    fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        UnixStream::set_read_timeout(self, timeout.filter(|t| !t.is_zero()))
    }
    fn into_fd(self: Box<Self>) -> OwnedFd {
        OwnedFd::from(*self)
    }
}

/// Sends one command on a blocking stream and returns its whole reply frame; an error
/// reply becomes `RedisError::Reply`.
fn roundtrip<S: Read + Write + ?Sized>(
    stream: &mut S,
    args: &[String],
) -> Result<Vec<u8>, RedisError> {
    let mut out = Vec::new();
    resp::encode(&mut out, args);
    stream.write_all(&out).map_err(RedisError::Io)?;
    let mut buf = Vec::with_capacity(256);
    let mut chunk = [0u8; 4096];
    loop {
        if let Scan::Frame { len, error } = resp::scan(&buf)? {
            buf.truncate(len);
            if error {
                return Err(RedisError::Reply(resp::first_line(&buf)));
            }
            return Ok(buf);
        }
        let n = stream.read(&mut chunk).map_err(RedisError::Io)?;
        if n == 0 {
            return Err(RedisError::Closed);
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// One blocking query outside the timed part (CONFIG GET, DBSIZE): the reply's
/// strings in order (array and map elements flattened).
pub fn query(endpoint: &Endpoint, setup: &Setup, args: &[&str]) -> Result<Vec<String>, RedisError> {
    let fd = connect(endpoint, setup)?;
    let mut stream = std::fs::File::from(fd);
    set_blocking(stream.as_raw_fd());
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let frame = roundtrip(&mut stream, &args).map_err(|e| no_reply(e, endpoint, setup))?;
    Ok(strings(&frame))
}

fn set_blocking(fd: RawFd) {
    // SAFETY: fcntl on a descriptor we own; failure leaves it non-blocking, which the
    // blocking loop above would then report as an I/O error.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK);
        }
    }
}

/// Bulk, simple and number payloads of a frame, in order.
pub(crate) fn strings(frame: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < frame.len() {
        let Some(eol) = frame[pos..].windows(2).position(|w| w == b"\r\n") else {
            break;
        };
        let line = &frame[pos + 1..pos + eol];
        let next = pos + eol + 2;
        match frame[pos] {
            b'$' | b'=' | b'!' => {
                let n: i64 = std::str::from_utf8(line)
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(-1);
                if n >= 0 && next + n as usize <= frame.len() {
                    out.push(String::from_utf8_lossy(&frame[next..next + n as usize]).into_owned());
                    pos = next + n as usize + 2;
                } else {
                    pos = next;
                }
            }
            b'+' | b':' | b',' | b'#' | b'(' => {
                out.push(String::from_utf8_lossy(line).into_owned());
                pos = next;
            }
            _ => pos = next,
        }
    }
    out
}

/// Reads replies off a non-blocking socket. Reads land in the event loop's shared
/// scratch buffer; only a reply cut by the end of a read is copied into `partial`,
/// so a thousand idle connections do not each hold a large buffer.
#[derive(Debug, Default)]
pub struct ReplyReader {
    partial: Vec<u8>,
}

/// What one `pump` saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pump {
    /// The socket has nothing more for now.
    Drained,
    /// The server closed the connection.
    Closed,
}

impl ReplyReader {
    /// Reads what the socket has and calls `frame(bytes, is_error)` per complete reply.
    /// Stops early when `frame` returns an error.
    pub fn pump<F>(
        &mut self,
        fd: RawFd,
        scratch: &mut [u8],
        mut frame: F,
    ) -> Result<Pump, RedisError>
    where
        F: FnMut(&[u8], bool) -> Result<(), RedisError>,
    {
        loop {
            if self.partial.is_empty() {
                let n = match read(fd, scratch)? {
                    Some(0) => return Ok(Pump::Closed),
                    Some(n) => n,
                    None => return Ok(Pump::Drained),
                };
                let used = frames(&scratch[..n], &mut frame)?;
                self.partial.extend_from_slice(&scratch[used..n]);
                if n < scratch.len() {
                    return Ok(Pump::Drained);
                }
            } else {
                let old = self.partial.len();
                let want = scratch.len().max(old);
                self.partial.resize(old + want, 0);
                let got = read(fd, &mut self.partial[old..]);
                let n = match got {
                    Ok(Some(n)) => n,
                    Ok(None) => 0,
                    Err(e) => {
                        self.partial.truncate(old);
                        return Err(e);
                    }
                };
                self.partial.truncate(old + n);
                if matches!(got, Ok(Some(0))) {
                    return Ok(Pump::Closed);
                }
                let used = frames(&self.partial, &mut frame)?;
                self.partial.drain(..used);
                if n < want {
                    return Ok(Pump::Drained);
                }
            }
        }
    }

    pub fn clear(&mut self) {
        self.partial.clear();
    }
}

fn frames<F>(buf: &[u8], frame: &mut F) -> Result<usize, RedisError>
where
    F: FnMut(&[u8], bool) -> Result<(), RedisError>,
{
    let mut pos = 0;
    while pos < buf.len() {
        match resp::scan(&buf[pos..])? {
            Scan::Frame { len, error } => {
                frame(&buf[pos..pos + len], error)?;
                pos += len;
            }
            Scan::Incomplete => break,
        }
    }
    Ok(pos)
}

/// `Ok(None)` when the socket would block.
fn read(fd: RawFd, buf: &mut [u8]) -> Result<Option<usize>, RedisError> {
    loop {
        // SAFETY: reading into a live, exclusively borrowed buffer of the given length.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(Some(n as usize));
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::Interrupted => continue,
            io::ErrorKind::WouldBlock => return Ok(None),
            io::ErrorKind::ConnectionReset => return Err(RedisError::Closed),
            _ => return Err(RedisError::Io(e)),
        }
    }
}

/// Writes as much of `buf` as the socket takes; returns the bytes written.
pub fn write(fd: RawFd, buf: &[u8]) -> Result<usize, RedisError> {
    let mut done = 0;
    while done < buf.len() {
        // SAFETY: writing from a live buffer of the given length.
        let n = unsafe {
            libc::send(
                fd,
                buf[done..].as_ptr().cast(),
                buf.len() - done,
                libc::MSG_NOSIGNAL,
            )
        };
        if n >= 0 {
            done += n as usize;
            continue;
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::Interrupted => continue,
            io::ErrorKind::WouldBlock => break,
            io::ErrorKind::ConnectionReset | io::ErrorKind::BrokenPipe => {
                return Err(RedisError::Closed);
            }
            _ => return Err(RedisError::Io(e)),
        }
    }
    Ok(done)
}

/// The open-file limit cannot cover the descriptors a run needs. The callers add the
/// fix (`ulimit -n`, fewer clients) in their own words.
#[derive(Debug, Error)]
pub enum FdLimitError {
    #[error("{0}")]
    Get(#[source] io::Error),
    #[error("{0}")]
    Set(#[source] io::Error),
    #[error("the open-file limit is {limit} (hard limit {hard}) and {needed} are needed")]
    TooLow { limit: u64, hard: u64, needed: u64 },
}

/// Raises the soft open-file limit to what `needed` descriptors take, up to the hard
/// limit (and the hard limit too when running as root). Returns the limit in force.
pub fn raise_fd_limit(needed: u64) -> Result<u64, FdLimitError> {
    // SAFETY: getrlimit/setrlimit on a struct we own.
    unsafe {
        let mut lim: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return Err(FdLimitError::Get(io::Error::last_os_error()));
        }
        if lim.rlim_cur >= needed {
            return Ok(lim.rlim_cur);
        }
        let mut want = lim;
        want.rlim_cur = needed.min(lim.rlim_max);
        if needed > lim.rlim_max {
            want.rlim_max = needed;
            want.rlim_cur = needed;
            if libc::setrlimit(libc::RLIMIT_NOFILE, &want) == 0 {
                return Ok(needed);
            }
            want = lim;
            want.rlim_cur = lim.rlim_max;
        }
        if libc::setrlimit(libc::RLIMIT_NOFILE, &want) != 0 {
            return Err(FdLimitError::Set(io::Error::last_os_error()));
        }
        if want.rlim_cur < needed {
            return Err(FdLimitError::TooLow {
                limit: want.rlim_cur,
                hard: lim.rlim_max,
                needed,
            });
        }
        Ok(want.rlim_cur)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_flattens_arrays_and_maps() {
        let frame = b"*2\r\n$4\r\nsave\r\n$0\r\n\r\n";
        assert_eq!(strings(frame), vec!["save".to_string(), String::new()]);
        let map = b"%1\r\n$10\r\nappendonly\r\n$2\r\nno\r\n";
        assert_eq!(strings(map), vec!["appendonly".to_string(), "no".into()]);
    }

    #[test]
    fn setup_orders_prefix_commands_like_redis_benchmark() {
        let s = Setup {
            user: Some("u".into()),
            password: Some("p".into()),
            db: Some(3),
            resp3: true,
            tracking: true,
            timeout: None,
        };
        let names: Vec<_> = s.commands().iter().map(|c| c.0).collect();
        assert_eq!(names, ["AUTH", "CLIENT TRACKING", "SELECT", "HELLO 3"]);
        assert_eq!(s.commands()[0].1, ["AUTH", "u", "p"]);
    }

    #[test]
    fn refused_connection_names_the_endpoint_and_fix() {
        // Bind then drop a listener: the port is closed for a moment.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let ep = Endpoint::Tcp {
            host: "127.0.0.1".into(),
            port,
        };
        let e = connect(&ep, &Setup::default()).unwrap_err().to_string();
        assert!(e.contains(&format!("127.0.0.1:{port}")), "{e}");
        assert!(e.contains("is redis-server running"), "{e}");
    }

    #[test]
    fn a_silent_server_is_given_up_on_after_the_timeout() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let ep = Endpoint::Tcp {
            host: "127.0.0.1".into(),
            port,
        };
        let setup = Setup {
            password: Some("pw".into()),
            timeout: Some(Duration::from_millis(200)),
            ..Setup::default()
        };
        // The backlog accepts the connection; nobody ever reads or answers.
        let started = std::time::Instant::now();
        let e = connect(&ep, &setup).unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(matches!(e, RedisError::NoReply { .. }), "{e:?}");
        let text = e.to_string();
        assert!(
            text.contains(&format!("no reply from 127.0.0.1:{port} within 0.2 s")),
            "{text}"
        );
        let e = query(
            &ep,
            &Setup {
                password: None,
                ..setup
            },
            &["PING"],
        )
        .unwrap_err();
        assert!(matches!(e, RedisError::NoReply { .. }), "{e:?}");
        drop(listener);
    }
}

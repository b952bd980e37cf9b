//! Socket helpers both ends and the iperf3 personality share: connecting with buffers
//! set before the handshake (so the window scale is negotiated for them), TCP_INFO,
//! the kernel's view of buffer sizes.

use super::NetError;
use socket2::{Domain, Protocol, SockRef, Socket, Type};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::os::fd::{AsFd, AsRawFd};
use std::time::Duration;

/// Socket options a test asks for; 0 = leave the kernel's default (autotuning).
#[derive(Debug, Clone, Copy, Default)]
pub struct SockOpts {
    pub sndbuf: u32,
    pub rcvbuf: u32,
    pub nodelay: bool,
}

impl SockOpts {
    pub fn apply(&self, s: &Socket) -> std::io::Result<()> {
        if self.sndbuf > 0 {
            s.set_send_buffer_size(self.sndbuf as usize)?;
        }
        if self.rcvbuf > 0 {
            s.set_recv_buffer_size(self.rcvbuf as usize)?;
        }
        Ok(())
    }
}

/// Connects a TCP socket with `opts` applied before the handshake, within `timeout`.
pub fn connect_tcp(
    addr: SocketAddr,
    opts: SockOpts,
    timeout: Duration,
) -> Result<TcpStream, NetError> {
    let fail = |e: std::io::Error| NetError::Connect {
        addr: addr.to_string(),
        reason: explain_connect(&e),
    };
    let s =
        Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP)).map_err(fail)?;
    opts.apply(&s).map_err(fail)?;
    s.connect_timeout(&addr.into(), timeout).map_err(fail)?;
    if opts.nodelay {
        s.set_tcp_nodelay(true).map_err(fail)?;
    }
    Ok(s.into())
}

/// A connect error in words a user can act on.
pub fn explain_connect(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::ConnectionRefused => {
            "connection refused: is the server running on that port?".into()
        }
        std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => {
            "timed out: the host is unreachable or a firewall drops the packets".into()
        }
        _ => e.to_string(),
    }
}

/// A TCP listener on `addr`; IPv6 wildcards accept IPv4 too (dual stack).
pub fn listen_tcp(addr: SocketAddr, opts: SockOpts) -> Result<TcpListener, NetError> {
    let fail = |e: std::io::Error| NetError::Listen {
        addr: addr.to_string(),
        reason: if e.kind() == std::io::ErrorKind::AddrInUse {
            "the port is already in use; stop the other server or choose another port".into()
        } else {
            e.to_string()
        },
    };
    let s =
        Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP)).map_err(fail)?;
    s.set_reuse_address(true).map_err(fail)?;
    if addr.is_ipv6() {
        let _ = s.set_only_v6(false);
    }
    opts.apply(&s).map_err(fail)?;
    s.bind(&addr.into()).map_err(fail)?;
    s.listen(1024).map_err(fail)?;
    Ok(s.into())
}

/// A UDP socket bound to `addr` (port 0: ephemeral), buffers set.
pub fn bind_udp(addr: SocketAddr, opts: SockOpts) -> std::io::Result<UdpSocket> {
    let s = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
    if addr.is_ipv6() {
        let _ = s.set_only_v6(false);
    }
    opts.apply(&s)?;
    s.bind(&addr.into())?;
    Ok(s.into())
}

/// The wildcard address of `like`'s family, port 0.
pub fn unspecified_like(like: &SocketAddr) -> SocketAddr {
    match like {
        SocketAddr::V4(_) => (std::net::Ipv4Addr::UNSPECIFIED, 0).into(),
        SocketAddr::V6(_) => (std::net::Ipv6Addr::UNSPECIFIED, 0).into(),
    }
}

/// (SO_SNDBUF, SO_RCVBUF) as the kernel reports them (Linux doubles what was asked).
pub fn buffer_sizes<S: AsFd>(s: &S) -> (u64, u64) {
    let r = SockRef::from(s);
    (
        r.send_buffer_size().unwrap_or(0) as u64,
        r.recv_buffer_size().unwrap_or(0) as u64,
    )
}

/// The kernel's TCP_INFO for a connected socket.
pub fn tcp_info<S: AsRawFd>(s: &S) -> Option<libc::tcp_info> {
    // SAFETY: getsockopt writes at most `len` bytes into a zeroed struct we own.
    unsafe {
        let mut info: libc::tcp_info = std::mem::zeroed();
        let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
        let rc = libc::getsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut len,
        );
        (rc == 0).then_some(info)
    }
}

/// Segments retransmitted over the connection's life.
pub fn retransmits<S: AsRawFd>(s: &S) -> Option<u64> {
    tcp_info(s).map(|i| u64::from(i.tcpi_total_retrans))
}

/// The connection's MSS (TCP_MAXSEG).
pub fn mss<S: AsRawFd>(s: &S) -> Option<u32> {
    let mut v: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt writes one int into `v`.
    let rc = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_MAXSEG,
            (&mut v as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    (rc == 0 && v > 0).then_some(v as u32)
}

/// The congestion control algorithm in use (TCP_CONGESTION).
pub fn congestion<S: AsRawFd>(s: &S) -> Option<String> {
    let mut buf = [0u8; 32];
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into our buffer.
    let rc = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            buf.as_mut_ptr().cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return None;
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(len as usize);
    Some(String::from_utf8_lossy(&buf[..end]).into_owned())
}

/// Bytes written to a TCP socket that the peer has not yet acknowledged (SIOCOUTQ).
pub fn unacked_bytes<S: AsRawFd>(s: &S) -> Option<u32> {
    let mut v: libc::c_int = 0;
    // SAFETY: the ioctl writes one int into `v`.
    let rc = unsafe { libc::ioctl(s.as_raw_fd(), libc::TIOCOUTQ, &mut v) };
    (rc == 0).then_some(v.max(0) as u32)
}

/// Cuts a TCP connection with RST instead of FIN, leaving no TIME_WAIT behind.
pub fn abort_on_close<S: AsFd>(s: &S) {
    let _ = SockRef::from(s).set_linger(Some(Duration::ZERO));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_connection_has_tcp_info() {
        let l = listen_tcp("127.0.0.1:0".parse().unwrap(), SockOpts::default()).unwrap();
        let addr = l.local_addr().unwrap();
        let c = connect_tcp(
            addr,
            SockOpts {
                sndbuf: 65536,
                rcvbuf: 0,
                nodelay: true,
            },
            Duration::from_secs(2),
        )
        .unwrap();
        let (_s, _) = l.accept().unwrap();
        assert_eq!(retransmits(&c), Some(0));
        assert!(mss(&c).unwrap() > 0);
        // Linux doubles the requested size for bookkeeping.
        assert_eq!(buffer_sizes(&c).0, 131072);
        assert!(congestion(&c).is_some());
    }

    #[test]
    fn refused_port_says_so() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        drop(l);
        let err = connect_tcp(addr, SockOpts::default(), Duration::from_secs(2)).unwrap_err();
        assert!(err.to_string().contains("refused"), "{err}");
    }
}

//! hostbench's control protocol, version 1 (docs/net-protocol.md is the reference).
//!
//! Control messages are JSON objects tagged by `type`, each framed by a big-endian u32
//! length. Data connections to the same TCP port start with `DATA_MAGIC`, the test's
//! token and a stream index instead, which is how the server tells the two apart from
//! the first four bytes. Everything a peer sends is validated here: sizes are capped,
//! unknown fields ignored, a wrong version or type is an error, never a panic.

use super::TestKind;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::{self, Read, Write};

/// Bump when a message changes meaning; added optional fields keep the version.
pub const PROTOCOL_VERSION: u32 = 1;
/// The largest control message either side accepts.
pub const MAX_MESSAGE: u32 = 64 * 1024;
/// First bytes of a TCP data connection (a control frame's length is < 2^24, so its
/// first byte is 0 and never 'H').
pub const DATA_MAGIC: [u8; 4] = *b"HBD1";
/// Bytes of a test token.
pub const TOKEN_LEN: usize = 16;
/// Magic, token, u16 stream index.
pub const DATA_HEADER_LEN: usize = 4 + TOKEN_LEN + 2;

/// Everything a client may ask for. Sizes in bytes, times in milliseconds, 0 = default
/// or none, as documented per field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestRequest {
    pub test: TestKind,
    /// Test length; 0 means the test is bounded by `bytes` or `transactions` instead.
    pub duration_ms: u64,
    /// Stream tests: stop after this many bytes sent in total (0 = no byte limit).
    #[serde(default)]
    pub bytes: u64,
    /// Request/response tests: stop after this many transactions in total (0 = none).
    #[serde(default)]
    pub transactions: u64,
    /// Parallel streams (connections or UDP flows).
    pub parallel: u32,
    /// Bytes per send call of a stream sender, or per datagram.
    pub send_size: u32,
    /// Bytes per receive call of a stream receiver.
    #[serde(default)]
    pub recv_size: u32,
    pub request_size: u32,
    pub response_size: u32,
    /// The server's socket buffers (0 = the kernel's default, autotuned).
    #[serde(default)]
    pub server_sndbuf: u32,
    #[serde(default)]
    pub server_rcvbuf: u32,
    /// Pacing of UDP senders, bits per second per stream (0 = as fast as possible).
    #[serde(default)]
    pub rate_bps: u64,
    /// Interval reports from the receiving server (0 = none).
    #[serde(default)]
    pub interval_ms: u64,
    #[serde(default)]
    pub nodelay: bool,
}

/// The server's limits, announced in `Welcome` and enforced on `Start`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    pub max_tests: u32,
    pub max_duration_ms: u64,
    pub max_parallel: u32,
    /// Rate cap, bits/s (0 = none): UDP tests must ask for no more; the server paces
    /// what it sends (TCP_MAERTS) to it.
    pub max_rate_bps: u64,
    pub idle_timeout_ms: u64,
}

/// What the server measured for one stream.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StreamReport {
    pub index: u32,
    pub bytes_received: u64,
    pub bytes_sent: u64,
    /// Datagrams received, lost (sequence gaps) and out of order.
    #[serde(default)]
    pub packets: u64,
    #[serde(default)]
    pub lost: u64,
    #[serde(default)]
    pub out_of_order: u64,
    #[serde(default)]
    pub transactions: u64,
    /// TCP_INFO total retransmits of the server's sending socket.
    #[serde(default)]
    pub retransmits: Option<u64>,
    /// From the start signal to the last byte this stream received or sent.
    pub elapsed_s: f64,
    /// Initial socket buffer sizes as the kernel reports them.
    #[serde(default)]
    pub sndbuf: u64,
    #[serde(default)]
    pub rcvbuf: u64,
}

/// The server's side of a finished test.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerReport {
    pub streams: Vec<StreamReport>,
    /// From the start signal to the end of the last stream.
    pub elapsed_s: f64,
    /// CPU time of the threads that served this test (not the whole server).
    pub cpu_user_s: f64,
    pub cpu_system_s: f64,
    pub cpus: u32,
    #[serde(default)]
    pub congestion: Option<String>,
}

/// One interval of the server's receive counters (stream tests where it receives).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntervalReport {
    pub start_s: f64,
    pub end_s: f64,
    pub bytes: u64,
    #[serde(default)]
    pub packets: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Message {
    /// Client, first: its protocol version.
    Hello {
        protocol: u32,
        client: String,
    },
    /// Server: its version and limits; `nonce` to prove the secret with when `auth`.
    Welcome {
        protocol: u32,
        server: String,
        auth: bool,
        nonce: String,
        limits: Limits,
    },
    /// Client: hex HMAC-SHA256(secret, nonce).
    Auth {
        proof: String,
    },
    Start(TestRequest),
    /// Server: connect the data streams now (TCP: to the control port with this token;
    /// UDP: to `udp_ports`, one per stream, sending the token first).
    Ready {
        token: String,
        #[serde(default)]
        udp_ports: Vec<u16>,
    },
    /// Server: every stream is connected; the test starts now.
    Running,
    Interval(IntervalReport),
    /// Client: the test is over (time or count reached, or interrupted).
    Stop,
    Result(ServerReport),
    Error {
        code: String,
        message: String,
    },
}

impl Message {
    pub fn error(code: &str, message: impl Into<String>) -> Self {
        Message::Error {
            code: code.into(),
            message: message.into(),
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Message::Hello { .. } => "hello",
            Message::Welcome { .. } => "welcome",
            Message::Auth { .. } => "auth",
            Message::Start(_) => "start",
            Message::Ready { .. } => "ready",
            Message::Running => "running",
            Message::Interval(_) => "interval",
            Message::Stop => "stop",
            Message::Result(_) => "result",
            Message::Error { .. } => "error",
        }
    }
}

/// Why a frame could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("{0}")]
    Io(#[from] io::Error),
    #[error("message of {0} bytes exceeds the limit of {MAX_MESSAGE}")]
    TooLarge(u32),
    #[error("malformed message: {0}")]
    Malformed(String),
}

/// Decodes a frame body. Separate from reading so fuzz tests can drive it directly.
pub fn decode(body: &[u8]) -> Result<Message, FrameError> {
    serde_json::from_slice(body).map_err(|e| FrameError::Malformed(e.to_string()))
}

pub fn encode(msg: &Message) -> Vec<u8> {
    let body = serde_json::to_vec(msg).expect("messages always serialise");
    let mut frame = Vec::with_capacity(4 + body.len());
    frame.extend_from_slice(&(body.len() as u32).to_be_bytes());
    frame.extend_from_slice(&body);
    frame
}

pub fn write_message(w: &mut impl Write, msg: &Message) -> io::Result<()> {
    w.write_all(&encode(msg))?;
    w.flush()
}

/// Reads one frame. `len_prefix` when the caller already read the 4 length bytes.
pub fn read_message_after(r: &mut impl Read, len_prefix: [u8; 4]) -> Result<Message, FrameError> {
    let len = u32::from_be_bytes(len_prefix);
    if len > MAX_MESSAGE {
        return Err(FrameError::TooLarge(len));
    }
    let mut body = vec![0u8; len as usize];
    r.read_exact(&mut body)?;
    decode(&body)
}

pub fn read_message(r: &mut impl Read) -> Result<Message, FrameError> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len)?;
    read_message_after(r, len)
}

/// The first bytes of a TCP data connection.
pub fn data_header(token: &[u8; TOKEN_LEN], stream: u16) -> [u8; DATA_HEADER_LEN] {
    let mut h = [0u8; DATA_HEADER_LEN];
    h[..4].copy_from_slice(&DATA_MAGIC);
    h[4..4 + TOKEN_LEN].copy_from_slice(token);
    h[4 + TOKEN_LEN..].copy_from_slice(&stream.to_be_bytes());
    h
}

/// Token and stream index of a data header, or None when it is not one.
pub fn parse_data_header(h: &[u8]) -> Option<([u8; TOKEN_LEN], u16)> {
    if h.len() != DATA_HEADER_LEN || h[..4] != DATA_MAGIC {
        return None;
    }
    let mut token = [0u8; TOKEN_LEN];
    token.copy_from_slice(&h[4..4 + TOKEN_LEN]);
    Some((
        token,
        u16::from_be_bytes([h[DATA_HEADER_LEN - 2], h[DATA_HEADER_LEN - 1]]),
    ))
}

/// 16 unpredictable bytes (kernel randomness; a clock mix if that fails).
pub fn random_token() -> [u8; TOKEN_LEN] {
    let mut t = [0u8; TOKEN_LEN];
    // SAFETY: getrandom writes at most t.len() bytes into the buffer we own.
    let n = unsafe { libc::getrandom(t.as_mut_ptr().cast(), t.len(), 0) };
    if n != t.len() as isize {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let h = Sha256::digest(format!("{nanos}{}", std::process::id()));
        t.copy_from_slice(&h[..TOKEN_LEN]);
    }
    t
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn unhex_token(s: &str) -> Option<[u8; TOKEN_LEN]> {
    if s.len() != TOKEN_LEN * 2 || !s.is_ascii() {
        return None;
    }
    let mut t = [0u8; TOKEN_LEN];
    for (i, b) in t.iter_mut().enumerate() {
        *b = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(t)
}

/// HMAC-SHA256 (RFC 2104) of `message` under `key`, hex: the proof of a shared secret
/// that never puts the secret itself on the wire.
pub fn hmac_hex(key: &[u8], message: &[u8]) -> String {
    const BLOCK: usize = 64;
    let mut k = [0u8; BLOCK];
    if key.len() > BLOCK {
        k[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        k[..key.len()].copy_from_slice(key);
    }
    let pad = |byte: u8| k.iter().map(|b| b ^ byte).collect::<Vec<u8>>();
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(message)
        .finalize();
    let outer = Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize();
    hex(&outer)
}

/// Equal-time comparison, so a wrong proof reveals nothing through timing.
pub fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> TestRequest {
        TestRequest {
            test: TestKind::TcpRr,
            duration_ms: 1000,
            bytes: 0,
            transactions: 0,
            parallel: 2,
            send_size: 16384,
            recv_size: 0,
            request_size: 1,
            response_size: 1,
            server_sndbuf: 0,
            server_rcvbuf: 0,
            rate_bps: 0,
            interval_ms: 0,
            nodelay: true,
        }
    }

    #[test]
    fn frames_round_trip() {
        let msgs = [
            Message::Hello {
                protocol: 1,
                client: "t".into(),
            },
            Message::Start(request()),
            Message::Running,
            Message::Stop,
            Message::Result(ServerReport::default()),
            Message::error("busy", "too many tests"),
        ];
        for m in msgs {
            let frame = encode(&m);
            let back = read_message(&mut &frame[..]).unwrap();
            assert_eq!(back, m);
        }
    }

    #[test]
    fn wire_form_is_documented_json() {
        let frame = encode(&Message::Stop);
        assert_eq!(&frame[..4], &[0, 0, 0, 15]);
        assert_eq!(&frame[4..], br#"{"type":"stop"}"#);
        let start = String::from_utf8(encode(&Message::Start(request()))[4..].to_vec()).unwrap();
        assert!(
            start.starts_with(r#"{"type":"start","test":"TCP_RR","#),
            "{start}"
        );
    }

    #[test]
    fn oversized_and_truncated_frames_are_errors() {
        let mut big = (MAX_MESSAGE + 1).to_be_bytes().to_vec();
        big.extend_from_slice(b"{}");
        assert!(matches!(
            read_message(&mut &big[..]),
            Err(FrameError::TooLarge(_))
        ));
        let mut frame = encode(&Message::Stop);
        frame.truncate(10);
        assert!(matches!(
            read_message(&mut &frame[..]),
            Err(FrameError::Io(_))
        ));
        assert!(matches!(
            decode(br#"{"type":"launch"}"#),
            Err(FrameError::Malformed(_))
        ));
    }

    #[test]
    fn data_headers() {
        let t = random_token();
        let h = data_header(&t, 7);
        assert_eq!(parse_data_header(&h), Some((t, 7)));
        assert_eq!(parse_data_header(&h[..5]), None);
        assert_eq!(unhex_token(&hex(&t)), Some(t));
        assert_eq!(unhex_token("zz"), None);
        assert_ne!(random_token(), random_token());
    }

    #[test]
    fn hmac_matches_rfc4231_case_2() {
        assert_eq!(
            hmac_hex(b"Jefe", b"what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        assert!(same("abc", "abc"));
        assert!(!same("abc", "abd"));
        assert!(!same("abc", "ab"));
    }

    /// Fuzz: random bytes, random mutations of valid frames and random JSON-ish text
    /// must decode to a message or an error, never panic or allocate past the cap.
    #[test]
    fn decoder_survives_random_input() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let valid = [
            encode(&Message::Start(request())),
            encode(&Message::Result(ServerReport {
                streams: vec![StreamReport::default()],
                ..Default::default()
            })),
            encode(&Message::Hello {
                protocol: 1,
                client: "x".into(),
            }),
        ];
        let pieces: [&[u8]; 12] = [
            b"{",
            b"}",
            b"\"type\"",
            b":",
            b"\"start\"",
            b",",
            b"1e999",
            b"-1",
            b"[",
            b"]",
            b"null",
            b"\"\\u0000\"",
        ];
        for i in 0..30_000 {
            let input: Vec<u8> = match i % 3 {
                0 => (0..next() % 64).map(|_| next() as u8).collect(),
                1 => {
                    let mut f = valid[(next() % 3) as usize].clone();
                    for _ in 0..1 + next() % 4 {
                        let at = (next() as usize) % f.len();
                        f[at] = next() as u8;
                    }
                    f
                }
                _ => {
                    let mut f = Vec::new();
                    for _ in 0..next() % 16 {
                        f.extend_from_slice(pieces[(next() % 12) as usize]);
                    }
                    let mut framed = (f.len() as u32).to_be_bytes().to_vec();
                    framed.extend(f);
                    framed
                }
            };
            let _ = read_message(&mut &input[..]);
            let _ = decode(&input);
        }
    }
}

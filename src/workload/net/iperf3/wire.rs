//! iperf3's control protocol as reference/network.md §2 describes it (written from
//! that description and wire captures, not from iperf3's source): one-byte states, a
//! 37-byte cookie, u32-length-prefixed JSON, and the UDP stream handshake.

use serde_json::{Map, Value, json};
use std::io::{self, Read, Write};
use thiserror::Error;

pub const TEST_START: i8 = 1;
pub const TEST_RUNNING: i8 = 2;
pub const TEST_END: i8 = 4;
pub const PARAM_EXCHANGE: i8 = 9;
pub const CREATE_STREAMS: i8 = 10;
pub const SERVER_TERMINATE: i8 = 11;
pub const CLIENT_TERMINATE: i8 = 12;
pub const EXCHANGE_RESULTS: i8 = 13;
pub const DISPLAY_RESULTS: i8 = 14;
pub const IPERF_DONE: i8 = 16;
pub const ACCESS_DENIED: i8 = -1;
pub const SERVER_ERROR: i8 = -2;

pub const COOKIE_SIZE: usize = 37;
pub const DEFAULT_PORT: u16 = 5201;
pub const MAX_PARAMS_JSON: u32 = 8192;
/// Results carry one entry per stream; 128 streams fit easily in this.
pub const MAX_RESULTS_JSON: u32 = 1 << 20;
pub const MAX_STREAMS: u32 = 128;
pub const MAX_TIME: u64 = 86400;
pub const MAX_BLOCKSIZE: u64 = 1 << 20;
pub const MAX_UDP_BLOCKSIZE: u64 = 65507;
pub const MIN_UDP_BLOCKSIZE: u64 = 16;
pub const DEFAULT_TCP_BLKSIZE: u64 = 128 * 1024;
pub const DEFAULT_UDP_BLKSIZE: u64 = 1460;
pub const DEFAULT_UDP_RATE: u64 = 1024 * 1024;

/// UDP stream handshake: 3.12+ clients send "9876", servers answer "6789" (these are the
/// bytes on the wire from a little-endian host); older ones used 123456789/987654321.
pub const UDP_CONNECT_MSG: [u8; 4] = *b"9876";
pub const UDP_CONNECT_REPLY: [u8; 4] = *b"6789";
const LEGACY_REPLY: u32 = 987_654_321;

/// Any reply a server of any version may send to the UDP connect datagram, in either
/// byte order (3.12-3.16 on big-endian hosts reversed the ASCII forms).
pub fn is_udp_reply(b: &[u8]) -> bool {
    let Ok(arr) = <[u8; 4]>::try_from(b) else {
        return false;
    };
    let mut rev = arr;
    rev.reverse();
    [arr, rev].iter().any(|x| {
        *x == UDP_CONNECT_REPLY || *x == UDP_CONNECT_MSG || u32::from_le_bytes(*x) == LEGACY_REPLY
    })
}

/// 36 characters of [a-z2-7] and a NUL, as iperf3 since 3.2 makes them.
pub fn make_cookie() -> [u8; COOKIE_SIZE] {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz234567";
    let random = crate::workload::net::protocol::random_token();
    let more = crate::workload::net::protocol::random_token();
    let mut c = [0u8; COOKIE_SIZE];
    for i in 0..36 {
        let byte = if i < 16 {
            random[i]
        } else {
            more[i % 16] ^ (i as u8 * 7)
        };
        c[i] = ALPHABET[(byte % 32) as usize];
    }
    c
}

pub fn cookie_text(c: &[u8; COOKIE_SIZE]) -> String {
    String::from_utf8_lossy(&c[..36]).into_owned()
}

pub fn write_state(w: &mut impl Write, state: i8) -> io::Result<()> {
    w.write_all(&[state as u8])
}

/// A read that hit its socket's timeout, said as what happened ("nothing came within
/// 10 s", with the option that sets the bound when there is one) instead of the
/// system's "Resource temporarily unavailable"; other errors pass unchanged.
pub fn timed_out(e: io::Error, bound: std::time::Duration, option: &str) -> io::Error {
    if !matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    ) {
        return e;
    }
    let set_by = if option.is_empty() {
        String::new()
    } else {
        format!(" ({option} sets the bound)")
    };
    io::Error::new(
        io::ErrorKind::TimedOut,
        format!(
            "nothing came within {} s{set_by}",
            crate::units::format_g(bound.as_secs_f64(), 6)
        ),
    )
}

pub fn read_state(r: &mut impl Read) -> io::Result<i8> {
    let mut b = [0u8; 1];
    r.read_exact(&mut b)?;
    Ok(b[0] as i8)
}

pub fn write_json(w: &mut impl Write, v: &Value) -> io::Result<()> {
    let body = serde_json::to_vec(v).expect("JSON values serialise");
    let mut frame = (body.len() as u32).to_be_bytes().to_vec();
    frame.extend(body);
    w.write_all(&frame)
}

/// What was wrong with a control message: its frame, its JSON, or the parameters or
/// results in it. The texts follow iperf3's where it has one; the personality prints
/// them after its own context ("unable to receive results: …").
#[derive(Debug, Error)]
pub enum WireError {
    /// The connection failed or closed while a message was being read.
    #[error("{0}")]
    Read(#[source] io::Error),
    /// A length prefix of zero or over the limit for this message.
    #[error("JSON message of {len} bytes (limit {cap})")]
    Length { len: u32, cap: u32 },
    #[error("{0}")]
    Json(#[source] serde_json::Error),
    #[error("JSON message is not an object")]
    NotObject,
    /// A parameter that must be a non-negative number is something else.
    #[error("parameter '{key}' is not a non-negative number")]
    NotANumber { key: String },
    /// Neither `tcp` nor `udp` is set (an SCTP test, or no protocol at all).
    #[error("only TCP and UDP tests are supported (no SCTP)")]
    Protocol,
    #[error("number of parallel streams {parallel} out of range (1 to {MAX_STREAMS})")]
    Parallel { parallel: u32 },
    /// `time` over iperf3's maximum, or `omit` over 600 s.
    #[error("test duration too long (maximum = {MAX_TIME} seconds)")]
    Duration { time: u64, omit: u64 },
    #[error(
        "block size invalid (minimum = {MIN_UDP_BLOCKSIZE} bytes, maximum = {MAX_UDP_BLOCKSIZE} bytes)"
    )]
    UdpBlockSize { len: u64 },
    /// A TCP block size of zero or over the maximum.
    #[error("block size too large (maximum = {MAX_BLOCKSIZE} bytes)")]
    BlockSize { len: u64 },
    #[error("socket buffer size too large")]
    Window { window: u64 },
    /// The peer's results lack a key they must have (or it has the wrong type).
    #[error("results lack '{key}'")]
    ResultsLack { key: &'static str },
    #[error("results list too many streams")]
    TooManyStreams { streams: usize },
}

/// Reads one length-prefixed JSON object, refusing anything over `cap` bytes.
impl WireError {
    /// A read that timed out, in words (`timed_out`); other errors unchanged.
    pub fn timed_out(self, bound: std::time::Duration, option: &str) -> WireError {
        match self {
            WireError::Read(e) => WireError::Read(timed_out(e, bound, option)),
            other => other,
        }
    }
}

pub fn read_json(r: &mut impl Read, cap: u32) -> Result<Value, WireError> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len).map_err(WireError::Read)?;
    let len = u32::from_be_bytes(len);
    if len == 0 || len > cap {
        return Err(WireError::Length { len, cap });
    }
    let mut body = vec![0u8; len as usize];
    r.read_exact(&mut body).map_err(WireError::Read)?;
    parse_json(&body)
}

pub fn parse_json(body: &[u8]) -> Result<Value, WireError> {
    let v: Value = serde_json::from_slice(body).map_err(WireError::Json)?;
    if v.is_object() {
        Ok(v)
    } else {
        Err(WireError::NotObject)
    }
}

/// A JSON number as i64; iperf3 <= 3.13 printed -1 as 2^64-1, so huge values are -1.
pub fn as_i64(v: &Value) -> Option<i64> {
    if let Some(i) = v.as_i64() {
        return Some(i);
    }
    if let Some(u) = v.as_u64() {
        return Some(if u >= 1 << 63 { -1 } else { u as i64 });
    }
    let f = v.as_f64()?;
    if f >= 9.2e18 {
        Some(-1)
    } else if f.is_finite() && f > -9.2e18 {
        Some(f as i64)
    } else {
        None
    }
}

/// The test parameters a client sends (reference §2.3, with the types 3.18+ check).
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    pub udp: bool,
    pub omit: u64,
    pub time: u64,
    pub num: u64,
    pub blockcount: u64,
    pub parallel: u32,
    pub reverse: bool,
    pub bidirectional: bool,
    pub window: u64,
    pub len: u64,
    /// bits/s per stream (0 = unlimited)
    pub bandwidth: u64,
    pub nodelay: bool,
    pub mss: u64,
    pub udp_counters_64bit: bool,
    pub get_server_output: bool,
    pub congestion: Option<String>,
    pub client_version: Option<String>,
}

impl Default for Params {
    fn default() -> Self {
        Self {
            udp: false,
            omit: 0,
            time: 10,
            num: 0,
            blockcount: 0,
            parallel: 1,
            reverse: false,
            bidirectional: false,
            window: 0,
            len: DEFAULT_TCP_BLKSIZE,
            bandwidth: 0,
            nodelay: false,
            mss: 0,
            udp_counters_64bit: false,
            get_server_output: false,
            congestion: None,
            client_version: None,
        }
    }
}

impl Params {
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert(if self.udp { "udp" } else { "tcp" }.into(), json!(true));
        m.insert("omit".into(), json!(self.omit));
        m.insert("time".into(), json!(self.time));
        m.insert("num".into(), json!(self.num));
        m.insert("blockcount".into(), json!(self.blockcount));
        if self.mss > 0 {
            m.insert("MSS".into(), json!(self.mss));
        }
        if self.nodelay {
            m.insert("nodelay".into(), json!(true));
        }
        m.insert("parallel".into(), json!(self.parallel));
        if self.reverse {
            m.insert("reverse".into(), json!(true));
        }
        if self.bidirectional {
            m.insert("bidirectional".into(), json!(true));
        }
        if self.window > 0 {
            m.insert("window".into(), json!(self.window));
        }
        m.insert("len".into(), json!(self.len));
        if self.bandwidth > 0 {
            m.insert("bandwidth".into(), json!(self.bandwidth));
        }
        m.insert("pacing_timer".into(), json!(1000));
        if let Some(c) = &self.congestion {
            m.insert("congestion".into(), json!(c));
        }
        if self.get_server_output {
            m.insert("get_server_output".into(), json!(1));
        }
        if self.udp_counters_64bit {
            m.insert("udp_counters_64bit".into(), json!(1));
        }
        m.insert("client_version".into(), json!("3.12"));
        Value::Object(m)
    }

    /// Reads a client's parameters; values out of iperf3's ranges are errors.
    pub fn from_json(v: &Value) -> Result<Params, WireError> {
        let num = |k: &str| -> Result<u64, WireError> {
            match v.get(k) {
                None => Ok(0),
                Some(x) => match as_i64(x) {
                    Some(n) if n >= 0 => Ok(n as u64),
                    _ => Err(WireError::NotANumber { key: k.into() }),
                },
            }
        };
        let flag = |k: &str| {
            v.get(k)
                .is_some_and(|x| x.as_bool() == Some(true) || as_i64(x).is_some_and(|n| n != 0))
        };
        let udp = flag("udp");
        if !udp && !flag("tcp") {
            return Err(WireError::Protocol);
        }
        let p = Params {
            udp,
            omit: num("omit")?,
            time: num("time")?,
            num: num("num")?,
            blockcount: num("blockcount")?,
            parallel: num("parallel")? as u32,
            reverse: flag("reverse"),
            bidirectional: flag("bidirectional"),
            window: num("window")?,
            len: num("len")?,
            bandwidth: num("bandwidth")?,
            nodelay: flag("nodelay"),
            mss: num("MSS")?,
            udp_counters_64bit: flag("udp_counters_64bit"),
            get_server_output: flag("get_server_output"),
            congestion: v
                .get("congestion")
                .and_then(|c| c.as_str())
                .map(str::to_owned),
            client_version: v
                .get("client_version")
                .and_then(|c| c.as_str())
                .map(str::to_owned),
        };
        p.validate()?;
        Ok(p)
    }

    pub fn validate(&self) -> Result<(), WireError> {
        if self.parallel == 0 || self.parallel > MAX_STREAMS {
            return Err(WireError::Parallel {
                parallel: self.parallel,
            });
        }
        if self.time > MAX_TIME || self.omit > 600 {
            return Err(WireError::Duration {
                time: self.time,
                omit: self.omit,
            });
        }
        if self.udp {
            if !(MIN_UDP_BLOCKSIZE..=MAX_UDP_BLOCKSIZE).contains(&self.len) {
                return Err(WireError::UdpBlockSize { len: self.len });
            }
        } else if self.len == 0 || self.len > MAX_BLOCKSIZE {
            return Err(WireError::BlockSize { len: self.len });
        }
        if self.window > 512 << 20 {
            return Err(WireError::Window {
                window: self.window,
            });
        }
        Ok(())
    }
}

/// One stream's entry in the results exchange.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StreamResult {
    pub id: i64,
    pub bytes: u64,
    pub retransmits: i64,
    pub jitter_s: f64,
    pub errors: i64,
    pub packets: i64,
    pub start_time: f64,
    pub end_time: f64,
}

/// One side's results (reference §2.4).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Results {
    pub cpu_total: f64,
    pub cpu_user: f64,
    pub cpu_system: f64,
    pub sender_has_retransmits: i64,
    pub congestion_used: Option<String>,
    pub streams: Vec<StreamResult>,
}

impl Results {
    pub fn to_json(&self) -> Value {
        let streams: Vec<Value> = self
            .streams
            .iter()
            .map(|s| {
                json!({"id": s.id, "bytes": s.bytes, "retransmits": s.retransmits,
                       "jitter": s.jitter_s, "errors": s.errors, "packets": s.packets,
                       "start_time": s.start_time, "end_time": s.end_time})
            })
            .collect();
        let mut v = json!({
            "cpu_util_total": self.cpu_total,
            "cpu_util_user": self.cpu_user,
            "cpu_util_system": self.cpu_system,
            "sender_has_retransmits": self.sender_has_retransmits,
            "streams": streams,
        });
        if let Some(c) = &self.congestion_used {
            v["congestion_used"] = json!(c);
        }
        v
    }

    /// The peer's results; required keys must be there, -1 may come as 2^64-1.
    pub fn from_json(v: &Value) -> Result<Results, WireError> {
        let f = |o: &Value, key: &'static str| -> Result<f64, WireError> {
            o.get(key)
                .and_then(Value::as_f64)
                .ok_or(WireError::ResultsLack { key })
        };
        let i = |o: &Value, key: &'static str| -> Result<i64, WireError> {
            o.get(key)
                .and_then(as_i64)
                .ok_or(WireError::ResultsLack { key })
        };
        let streams = v
            .get("streams")
            .and_then(Value::as_array)
            .ok_or(WireError::ResultsLack { key: "streams" })?;
        if streams.len() > 2 * MAX_STREAMS as usize {
            return Err(WireError::TooManyStreams {
                streams: streams.len(),
            });
        }
        let mut out = Vec::new();
        for s in streams {
            out.push(StreamResult {
                id: i(s, "id")?,
                bytes: i(s, "bytes")?.max(0) as u64,
                retransmits: i(s, "retransmits")?,
                jitter_s: f(s, "jitter")?,
                errors: i(s, "errors")?,
                packets: i(s, "packets")?,
                start_time: s.get("start_time").and_then(Value::as_f64).unwrap_or(0.0),
                end_time: s.get("end_time").and_then(Value::as_f64).unwrap_or(0.0),
            });
        }
        Ok(Results {
            cpu_total: f(v, "cpu_util_total")?,
            cpu_user: f(v, "cpu_util_user")?,
            cpu_system: f(v, "cpu_util_system")?,
            sender_has_retransmits: i(v, "sender_has_retransmits")?,
            congestion_used: v
                .get("congestion_used")
                .and_then(|c| c.as_str())
                .map(str::to_owned),
            streams: out,
        })
    }
}

/// iperf3's stream ids: the first is 1, later ones 2 + the number already made.
pub fn stream_id(index: usize) -> i64 {
    if index == 0 { 1 } else { index as i64 + 2 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookies() {
        let c = make_cookie();
        assert_eq!(c[36], 0);
        assert!(
            c[..36]
                .iter()
                .all(|b| b"abcdefghijklmnopqrstuvwxyz234567".contains(b))
        );
        assert_ne!(make_cookie(), c);
    }

    #[test]
    fn params_round_trip_with_observed_312_message() {
        let observed = r#"{"udp":true,"omit":0,"time":2,"num":0,"blockcount":0,"parallel":1,"len":1000,"bandwidth":2000000,"pacing_timer":1000,"client_version":"3.12"}"#;
        let p = Params::from_json(&parse_json(observed.as_bytes()).unwrap()).unwrap();
        assert!(p.udp && p.time == 2 && p.len == 1000 && p.bandwidth == 2_000_000);
        let back = Params::from_json(&p.to_json()).unwrap();
        assert_eq!(
            back,
            Params {
                client_version: Some("3.12".into()),
                ..p
            }
        );
        let bad = parse_json(br#"{"tcp":true,"parallel":0,"len":10}"#).unwrap();
        assert!(matches!(
            Params::from_json(&bad),
            Err(WireError::Parallel { parallel: 0 })
        ));
        let sctp = parse_json(br#"{"sctp":true,"parallel":1,"len":10}"#).unwrap();
        let e = Params::from_json(&sctp).unwrap_err();
        assert!(matches!(e, WireError::Protocol));
        assert_eq!(
            e.to_string(),
            "only TCP and UDP tests are supported (no SCTP)"
        );
    }

    #[test]
    fn results_accept_unsigned_minus_one() {
        let observed = r#"{"cpu_util_total":35.48,"cpu_util_user":2.13,"cpu_util_system":33.35,
            "sender_has_retransmits":18446744073709551615,"congestion_used":"bbr",
            "streams":[{"id":1,"bytes":1512436734,"retransmits":18446744073709551615,"jitter":0,
            "errors":0,"packets":0,"start_time":0,"end_time":2.001242}]}"#;
        let r = Results::from_json(&parse_json(observed.as_bytes()).unwrap()).unwrap();
        assert_eq!(r.sender_has_retransmits, -1);
        assert_eq!(r.streams[0].retransmits, -1);
        assert_eq!(r.streams[0].bytes, 1512436734);
        assert_eq!(Results::from_json(&r.to_json()).unwrap(), r);
        let missing = parse_json(br#"{"cpu_util_total":1,"streams":[]}"#).unwrap();
        let e = Results::from_json(&missing).unwrap_err();
        assert!(matches!(
            e,
            WireError::ResultsLack {
                key: "cpu_util_user"
            }
        ));
        assert_eq!(e.to_string(), "results lack 'cpu_util_user'");
    }

    #[test]
    fn ids_and_udp_replies() {
        assert_eq!((0..4).map(stream_id).collect::<Vec<_>>(), [1, 3, 4, 5]);
        assert!(is_udp_reply(b"6789"));
        assert!(is_udp_reply(b"9876"));
        assert!(is_udp_reply(&987_654_321u32.to_le_bytes()));
        assert!(is_udp_reply(&987_654_321u32.to_be_bytes()));
        assert!(!is_udp_reply(b"1234"));
    }

    /// Fuzz: random and mutated JSON must give Ok or Err from every decoder, never panic.
    #[test]
    fn json_decoders_survive_random_input() {
        let mut state = 0x1234_5678_9abc_def1u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let seeds = [
            Params::default().to_json().to_string(),
            Results {
                streams: vec![StreamResult::default(); 2],
                ..Default::default()
            }
            .to_json()
            .to_string(),
        ];
        let tokens = [
            "{",
            "}",
            "[",
            "]",
            ",",
            ":",
            "\"streams\"",
            "\"id\"",
            "1e308",
            "-1",
            "18446744073709551616",
            "null",
            "true",
            "\"len\"",
            "0.5",
        ];
        for round in 0..20_000 {
            let body: Vec<u8> = if round % 2 == 0 {
                let mut b = seeds[(next() % 2) as usize].clone().into_bytes();
                for _ in 0..1 + next() % 3 {
                    let at = next() as usize % b.len();
                    b[at] = next() as u8;
                }
                b
            } else {
                (0..next() % 12)
                    .flat_map(|_| tokens[(next() % tokens.len() as u64) as usize].bytes())
                    .collect()
            };
            if let Ok(v) = parse_json(&body) {
                let _ = Params::from_json(&v);
                let _ = Results::from_json(&v);
            }
            let mut framed = (body.len() as u32).to_be_bytes().to_vec();
            framed.extend(&body);
            let _ = read_json(&mut &framed[..], MAX_PARAMS_JSON);
        }
    }
}

//! iperf3's `-J` document: `start`, `intervals[]`, `end`, with the keys of 3.12
//! (reference §3.3). Built from the engine's rows and the peer's results.

use crate::workload::net::iperf3::Row;
use crate::workload::net::iperf3::wire::StreamResult;
use serde_json::{Value, json};

pub fn system_info() -> String {
    // SAFETY: uname fills the struct we own.
    let u = unsafe {
        let mut u: libc::utsname = std::mem::zeroed();
        libc::uname(&mut u);
        u
    };
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    format!(
        "{} {} {} {} {}",
        field(&u.sysname),
        field(&u.nodename),
        field(&u.release),
        field(&u.version),
        field(&u.machine)
    )
}

/// `Sun, 29 Nov 2026 21:50:41 GMT` and the Unix seconds.
pub fn timestamp() -> Value {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    json!({"time": http_date(secs), "timesecs": secs})
}

pub fn http_date(secs: u64) -> String {
    let t = jiff::Timestamp::from_second(i64::try_from(secs).unwrap_or(i64::MAX))
        .unwrap_or(jiff::Timestamp::MAX);
    t.strftime("%a, %d %b %Y %H:%M:%S GMT").to_string()
}

pub fn interval(rows: &[Row]) -> Value {
    let streams: Vec<Value> = rows.iter().map(row).collect();
    let mut sum = sum_of(rows);
    sum["omitted"] = json!(rows.first().is_some_and(|r| r.omitted));
    json!({"streams": streams, "sum": sum})
}

fn row(r: &Row) -> Value {
    let mut v = json!({
        "socket": r.fd, "start": r.start, "end": r.end, "seconds": r.seconds(),
        "bytes": r.delta.bytes, "bits_per_second": r.bits_per_second(),
    });
    if r.udp {
        if r.sender {
            v["packets"] = json!(r.delta.packets);
        } else {
            v["jitter_ms"] = json!(r.delta.jitter_s * 1000.0);
            v["lost_packets"] = json!(r.delta.lost);
            v["packets"] = json!(r.delta.packets);
            v["lost_percent"] = json!(pct(r.delta.lost, r.delta.packets));
            v["out_of_order"] = json!(r.delta.out_of_order);
        }
    } else if r.sender {
        v["retransmits"] = json!(r.delta.retransmits.unwrap_or(-1));
        if let Some(i) = r.info {
            v["snd_cwnd"] = json!(i.snd_cwnd);
            v["rtt"] = json!(i.rtt_us);
            v["rttvar"] = json!(i.rttvar_us);
            v["pmtu"] = json!(i.pmtu);
        }
    }
    v["omitted"] = json!(r.omitted);
    v["sender"] = json!(r.sender);
    v
}

fn pct(lost: i64, total: i64) -> f64 {
    if total > 0 {
        100.0 * lost as f64 / total as f64
    } else {
        0.0
    }
}

fn sum_of(rows: &[Row]) -> Value {
    let bytes: u64 = rows.iter().map(|r| r.delta.bytes).sum();
    let start = rows
        .iter()
        .map(|r| r.start)
        .fold(f64::MAX, f64::min)
        .min(1e300);
    let end = rows.iter().map(|r| r.end).fold(0.0, f64::max);
    let seconds = (end - start).max(0.0);
    let mut v = json!({
        "start": if rows.is_empty() { 0.0 } else { start }, "end": end, "seconds": seconds,
        "bytes": bytes,
        "bits_per_second": if seconds > 0.0 { bytes as f64 * 8.0 / seconds } else { 0.0 },
    });
    let udp = rows.first().is_some_and(|r| r.udp);
    let sender = rows.first().is_some_and(|r| r.sender);
    if udp {
        let packets: i64 = rows.iter().map(|r| r.delta.packets).sum();
        let lost: i64 = rows.iter().map(|r| r.delta.lost).sum();
        v["packets"] = json!(packets);
        if !sender {
            let jitter =
                rows.iter().map(|r| r.delta.jitter_s).sum::<f64>() / rows.len().max(1) as f64;
            v["jitter_ms"] = json!(jitter * 1000.0);
            v["lost_packets"] = json!(lost);
            v["lost_percent"] = json!(pct(lost, packets));
        }
    } else if sender {
        v["retransmits"] = json!(rows.iter().filter_map(|r| r.delta.retransmits).sum::<i64>());
    }
    v["sender"] = json!(sender);
    v
}

/// One side's figures for a stream in the `end` section.
pub struct Side {
    pub fd: i32,
    pub end: f64,
    pub bytes: u64,
    pub retransmits: Option<i64>,
    pub jitter_s: f64,
    pub lost: i64,
    pub packets: i64,
    pub out_of_order: u64,
    pub rtt: Option<(u64, u64, u64, u64)>,
}

impl Side {
    /// This end's figures for one stream over the whole test; `rtt` only from a sender.
    pub fn local(r: &Row, rtt: Option<(u64, u64, u64, u64)>) -> Side {
        Side {
            fd: r.fd,
            end: r.end,
            bytes: r.delta.bytes,
            retransmits: r.delta.retransmits.filter(|_| r.sender && !r.udp),
            jitter_s: r.delta.jitter_s,
            lost: r.delta.lost,
            packets: r.delta.packets,
            out_of_order: r.delta.out_of_order,
            rtt: rtt.filter(|_| r.sender),
        }
    }

    pub fn from_remote(fd: i32, r: &StreamResult) -> Side {
        Side {
            fd,
            end: r.end_time,
            bytes: r.bytes,
            retransmits: (r.retransmits >= 0).then_some(r.retransmits),
            jitter_s: r.jitter_s,
            lost: r.errors,
            packets: r.packets,
            out_of_order: 0,
            rtt: None,
        }
    }

    fn value(&self, sender: bool) -> Value {
        let mut v = json!({
            "socket": self.fd, "start": 0, "end": self.end, "seconds": self.end,
            "bytes": self.bytes,
            "bits_per_second": if self.end > 0.0 { self.bytes as f64 * 8.0 / self.end } else { 0.0 },
        });
        if sender && let Some(r) = self.retransmits {
            v["retransmits"] = json!(r);
        }
        if let Some((cwnd, min, max, mean)) = self.rtt {
            v["max_snd_cwnd"] = json!(cwnd);
            v["max_rtt"] = json!(max);
            v["min_rtt"] = json!(min);
            v["mean_rtt"] = json!(mean);
        }
        v["sender"] = json!(sender);
        v
    }
}

/// A stream's `end` entry: TCP `{sender, receiver}`, UDP `{udp}` (the receiver's view).
pub fn end_stream(udp: bool, sender: &Side, receiver: &Side) -> Value {
    if udp {
        let r = receiver;
        json!({"udp": {
            "socket": sender.fd, "start": 0, "end": sender.end, "seconds": sender.end,
            "bytes": sender.bytes,
            "bits_per_second": if sender.end > 0.0 { sender.bytes as f64 * 8.0 / sender.end } else { 0.0 },
            "jitter_ms": r.jitter_s * 1000.0, "lost_packets": r.lost, "packets": r.packets,
            "lost_percent": pct(r.lost, r.packets), "out_of_order": r.out_of_order,
            "sender": true,
        }})
    } else {
        json!({"sender": sender.value(true), "receiver": receiver.value(false)})
    }
}

/// `sum_sent` / `sum_received`.
pub fn sum(sides: &[&Side], sender: bool, udp: bool) -> Value {
    let bytes: u64 = sides.iter().map(|s| s.bytes).sum();
    let end = sides.iter().map(|s| s.end).fold(0.0, f64::max);
    let mut v = json!({
        "start": 0, "end": end, "seconds": end, "bytes": bytes,
        "bits_per_second": if end > 0.0 { bytes as f64 * 8.0 / end } else { 0.0 },
    });
    if udp {
        let packets: i64 = sides.iter().map(|s| s.packets).sum();
        let lost: i64 = sides.iter().map(|s| s.lost).sum();
        let jitter = sides.iter().map(|s| s.jitter_s).sum::<f64>() / sides.len().max(1) as f64;
        v["jitter_ms"] = json!(if sender { 0.0 } else { jitter * 1000.0 });
        v["lost_packets"] = json!(if sender { 0 } else { lost });
        v["packets"] = json!(packets);
        v["lost_percent"] = json!(if sender { 0.0 } else { pct(lost, packets) });
    } else if sender {
        v["retransmits"] = json!(sides.iter().filter_map(|s| s.retransmits).sum::<i64>());
    }
    v["sender"] = json!(sender);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_as_iperf3_prints_them() {
        assert_eq!(http_date(1_795_989_041), "Sun, 29 Nov 2026 21:50:41 GMT");
        assert_eq!(http_date(0), "Thu, 01 Jan 1970 00:00:00 GMT");
    }
}

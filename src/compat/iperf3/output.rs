//! iperf3 3.12's human output: its unit formatting (1024-based Transfer, 1000-based
//! Bitrate, 3–4 significant digits) and its line layouts (reference §3.1–3.2).

use crate::workload::net::iperf3::Row;

pub const SEPARATOR: &str = "- - - - - - - - - - - - - - - - - - - - - - - - -";
pub const SERVER_BANNER: &str = "-----------------------------------------------------------";

/// `-f`: a fixed unit letter (k m g t: bits; K M G T: bytes), or adaptive.
#[derive(Debug, Clone, Copy, Default)]
pub struct Units {
    pub fixed: Option<char>,
}

fn number(v: f64) -> String {
    if v < 9.995 {
        format!("{v:4.2}")
    } else if v < 99.95 {
        format!("{v:4.1}")
    } else {
        format!("{v:4.0}")
    }
}

const BYTE_UNITS: [&str; 5] = ["Byte", "KByte", "MByte", "GByte", "TByte"];
const BIT_UNITS: [&str; 5] = ["bit", "Kbit", "Mbit", "Gbit", "Tbit"];

fn scale_of(letter: char) -> usize {
    match letter.to_ascii_lowercase() {
        'k' => 1,
        'm' => 2,
        'g' => 3,
        't' => 4,
        _ => 0,
    }
}

/// A byte count as iperf3 prints it, without the trailing "s": ` 849 MByte`.
pub fn bytes(v: f64, units: Units) -> String {
    let k = match units.fixed {
        Some(f) => scale_of(f),
        None => {
            let mut k = 0;
            while k < 4 && v >= 1024f64.powi(k as i32 + 1) {
                k += 1;
            }
            k
        }
    };
    format!("{} {}", number(v / 1024f64.powi(k as i32)), BYTE_UNITS[k])
}

/// A rate as iperf3 prints it, without the trailing "s/sec": `7.11 Gbit`; with an
/// upper-case `-f` letter the rate is in bytes per second.
pub fn rate(bits_per_sec: f64, units: Units) -> String {
    match units.fixed {
        Some(f) if f.is_ascii_uppercase() => {
            let k = scale_of(f);
            format!(
                "{} {}",
                number(bits_per_sec / 8.0 / 1024f64.powi(k as i32)),
                BYTE_UNITS[k]
            )
        }
        Some(f) => {
            let k = scale_of(f);
            format!(
                "{} {}",
                number(bits_per_sec / 1000f64.powi(k as i32)),
                BIT_UNITS[k]
            )
        }
        None => {
            let mut k = 0;
            while k < 4 && bits_per_sec >= 1000f64.powi(k as i32 + 1) {
                k += 1;
            }
            format!(
                "{} {}",
                number(bits_per_sec / 1000f64.powi(k as i32)),
                BIT_UNITS[k]
            )
        }
    }
}

/// `%.2g` for the loss percentage: `0`, `47`, `0.5`.
pub fn g2(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let digits = 2 - 1 - v.abs().log10().floor() as i32;
    let s = format!("{:.*}", digits.max(0) as usize, v);
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// The "[  5]" or "[SUM]" label with the bidir role tag.
pub fn label(fd: Option<i32>, role: &str) -> String {
    match fd {
        Some(fd) => format!("[{fd:>3}]{role}"),
        None => format!("[SUM]{role}"),
    }
}

pub fn interval_header(udp: bool, sender: bool, with_retr: bool, bidir: bool) -> String {
    let id = if bidir { "[ ID][Role]" } else { "[ ID]" };
    let tail = if udp {
        if sender {
            "         Total Datagrams"
        } else {
            "         Jitter    Lost/Total Datagrams"
        }
    } else if with_retr {
        "         Retr  Cwnd"
    } else {
        ""
    };
    format!("{id} Interval           Transfer     Bitrate{tail}")
}

pub fn summary_header(udp: bool, with_retr: bool, bidir: bool) -> String {
    let id = if bidir { "[ ID][Role]" } else { "[ ID]" };
    let tail = if udp {
        "         Jitter    Lost/Total Datagrams"
    } else if with_retr {
        "         Retr"
    } else {
        ""
    };
    format!("{id} Interval           Transfer     Bitrate{tail}")
}

fn lead(label: &str, start: f64, end: f64, bytes_moved: u64, secs: f64, u: Units) -> String {
    let bps = if secs > 0.0 {
        bytes_moved as f64 * 8.0 / secs
    } else {
        0.0
    };
    format!(
        "{label} {start:6.2}-{end:<6.2} sec  {}s  {}s/sec",
        bytes(bytes_moved as f64, u),
        rate(bps, u)
    )
}

/// One interval line of a stream or of the [SUM].
pub fn interval_line(label: &str, r: &Row, sum: bool, u: Units) -> String {
    let mut s = lead(label, r.start, r.end, r.delta.bytes, r.seconds(), u);
    let omitted = if r.omitted { "(omitted)" } else { "" };
    if r.udp {
        if r.sender {
            s += &format!("  {}  {omitted}", r.delta.packets);
        } else {
            s += &udp_loss(r.delta.jitter_s, r.delta.lost, r.delta.packets);
            s += &format!("  {omitted}");
        }
    } else if r.sender {
        let retr = r.delta.retransmits.unwrap_or(0);
        if sum {
            s += &format!("  {retr:>3}             {omitted}");
        } else {
            let cwnd = r.info.map_or(0, |i| i.snd_cwnd);
            s += &format!("  {retr:>3}   {}s       {omitted}", bytes(cwnd as f64, u));
        }
    } else {
        s += &format!("                  {omitted}");
    }
    s
}

fn udp_loss(jitter_s: f64, lost: i64, total: i64) -> String {
    let pct = if total > 0 {
        100.0 * lost as f64 / total as f64
    } else {
        0.0
    };
    format!(
        "  {:5.3} ms  {}/{} ({}%)",
        jitter_s * 1000.0,
        lost,
        total,
        g2(pct)
    )
}

/// A closing line: `which` is "sender" or "receiver".
#[allow(clippy::too_many_arguments)]
pub fn summary_line(
    label: &str,
    end: f64,
    bytes_moved: u64,
    udp: Option<(f64, i64, i64)>,
    retr: Option<i64>,
    which: &str,
    u: Units,
) -> String {
    let mut s = lead(label, 0.0, end, bytes_moved, end, u);
    match (udp, retr) {
        (Some((jitter, lost, total)), _) => {
            s += &udp_loss(jitter, lost, total);
            s += &format!("  {which}");
        }
        (None, Some(r)) => s += &format!("  {r:>3}             {which}"),
        (None, None) => s += &format!("                  {which}"),
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::net::iperf3::streams::Snapshot;

    fn row(bytes: u64, sender: bool) -> Row {
        Row {
            fd: 5,
            id: 1,
            sender,
            udp: false,
            start: 0.0,
            end: 1.0,
            delta: Snapshot {
                bytes,
                retransmits: Some(6),
                ..Default::default()
            },
            info: Some(crate::workload::net::iperf3::engine::TcpSample {
                snd_cwnd: 785_408,
                ..Default::default()
            }),
            omitted: false,
        }
    }

    /// Lines measured from iperf3 3.12 on this kind of host (numbers chosen to match).
    #[test]
    fn lines_match_iperf3_layout() {
        let u = Units::default();
        let r = row(849 * 1024 * 1024 + 300_000, true);
        let line = interval_line(&label(Some(5), ""), &r, false, u);
        assert_eq!(
            line,
            "[  5]   0.00-1.00   sec   849 MBytes  7.12 Gbits/sec    6    767 KBytes       "
        );
        let line = interval_line(&label(Some(5), ""), &row(844 << 20, false), false, u);
        assert_eq!(
            line,
            "[  5]   0.00-1.00   sec   844 MBytes  7.08 Gbits/sec                  "
        );
        let s = summary_line("[  5]", 2.0, 1_718_000_000, None, Some(6), "sender", u);
        assert_eq!(
            s,
            "[  5]   0.00-2.00   sec  1.60 GBytes  6.87 Gbits/sec    6             sender"
        );
        let s = summary_line(
            "[  5]",
            1.0,
            1_277_952,
            Some((0.000461, 0, 39)),
            None,
            "receiver",
            u,
        );
        assert_eq!(
            s,
            "[  5]   0.00-1.00   sec  1.22 MBytes  10.2 Mbits/sec  0.461 ms  0/39 (0%)  receiver"
        );
    }

    #[test]
    fn units() {
        let u = Units::default();
        assert_eq!(bytes(1018.0 * 1048576.0, u), "1018 MByte");
        assert_eq!(rate(10.2e6, u), "10.2 Mbit");
        assert_eq!(rate(26.2e9, u), "26.2 Gbit");
        assert_eq!(rate(1e6, Units { fixed: Some('k') }), "1000 Kbit");
        assert_eq!(g2(47.4), "47");
        assert_eq!(g2(0.5), "0.5");
        assert_eq!(g2(100.0), "100");
    }
}

/// One closing line's figures.
#[derive(Debug, Clone, Copy)]
pub struct Line {
    pub end: f64,
    pub bytes: u64,
    pub retr: Option<i64>,
    /// UDP: (jitter s, lost, total)
    pub udp: Option<(f64, i64, i64)>,
}

/// A stream in the closing block: its sender and receiver lines (either may be absent).
pub struct Closing {
    pub fd: i32,
    pub role: &'static str,
    pub sender: Option<Line>,
    pub receiver: Option<Line>,
}

fn sum_lines(lines: &[Line]) -> Line {
    let udp = lines.first().and_then(|l| l.udp).map(|_| {
        let n = lines.len().max(1) as f64;
        let (j, lost, total) = lines
            .iter()
            .filter_map(|l| l.udp)
            .fold((0.0, 0, 0), |a, u| (a.0 + u.0, a.1 + u.1, a.2 + u.2));
        (j / n, lost, total)
    });
    Line {
        end: lines.iter().map(|l| l.end).fold(0.0, f64::max),
        bytes: lines.iter().map(|l| l.bytes).sum(),
        retr: lines
            .first()
            .and_then(|l| l.retr)
            .map(|_| lines.iter().filter_map(|l| l.retr).sum()),
        udp,
    }
}

/// The block after the separator: per stream its lines, then [SUM] lines per role when
/// a role has more than one stream.
pub fn closing_block(
    streams: &[Closing],
    udp: bool,
    with_retr: bool,
    bidir: bool,
    u: Units,
) -> String {
    let mut out = vec![SEPARATOR.to_string(), summary_header(udp, with_retr, bidir)];
    let emit = |out: &mut Vec<String>, label: &str, l: Option<Line>, which: &str| {
        if let Some(l) = l {
            out.push(summary_line(label, l.end, l.bytes, l.udp, l.retr, which, u));
        }
    };
    for s in streams {
        let label = label(Some(s.fd), s.role);
        emit(&mut out, &label, s.sender, "sender");
        emit(&mut out, &label, s.receiver, "receiver");
    }
    let mut roles: Vec<&str> = streams.iter().map(|s| s.role).collect();
    roles.dedup();
    for role in roles {
        let group: Vec<&Closing> = streams.iter().filter(|s| s.role == role).collect();
        if group.len() < 2 {
            continue;
        }
        let label = label(None, role);
        let senders: Vec<Line> = group.iter().filter_map(|s| s.sender).collect();
        let receivers: Vec<Line> = group.iter().filter_map(|s| s.receiver).collect();
        if !senders.is_empty() {
            emit(&mut out, &label, Some(sum_lines(&senders)), "sender");
        }
        if !receivers.is_empty() {
            emit(&mut out, &label, Some(sum_lines(&receivers)), "receiver");
        }
    }
    out.join("\n")
}

/// An interval's lines: one per stream, and [SUM] per role when it has several streams.
pub fn interval_block(rows: &[Row], roles: &[&'static str], u: Units) -> String {
    let mut out = Vec::new();
    for (r, role) in rows.iter().zip(roles) {
        out.push(interval_line(&label(Some(r.fd), role), r, false, u));
    }
    let mut seen: Vec<&str> = roles.to_vec();
    seen.dedup();
    for role in seen {
        let group: Vec<&Row> = rows
            .iter()
            .zip(roles)
            .filter(|(_, r)| **r == role)
            .map(|(row, _)| row)
            .collect();
        if group.len() < 2 {
            continue;
        }
        let first = group[0];
        let mut sum = first.clone();
        sum.delta.bytes = group.iter().map(|r| r.delta.bytes).sum();
        sum.delta.packets = group.iter().map(|r| r.delta.packets).sum();
        sum.delta.lost = group.iter().map(|r| r.delta.lost).sum();
        sum.delta.jitter_s =
            group.iter().map(|r| r.delta.jitter_s).sum::<f64>() / group.len() as f64;
        sum.delta.retransmits = first
            .delta
            .retransmits
            .map(|_| group.iter().filter_map(|r| r.delta.retransmits).sum());
        out.push(interval_line(&label(None, role), &sum, true, u));
    }
    out.join("\n")
}

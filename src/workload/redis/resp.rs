//! RESP2/RESP3: a frame scanner that finds where a reply ends and whether it is an
//! error, without building values (the hot path only needs that), and an encoder for
//! commands. Aggregates are walked with a pending-element counter, not recursion, so a
//! hostile nesting depth cannot overflow the stack.

/// What the scanner found at the front of a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scan {
    /// More bytes are needed.
    Incomplete,
    /// A complete reply of `len` bytes; `error` when it is `-ERR...` or `!` (RESP3).
    Frame { len: usize, error: bool },
}

/// Bytes that cannot be a reply: the connection is out of step or not Redis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolError(pub String);

impl std::fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "protocol error: {}", self.0)
    }
}

impl std::error::Error for ProtocolError {}

/// Largest bulk or aggregate length accepted (Redis's own proto-max-bulk-len cap is 512 MiB).
const MAX_LEN: i64 = 1 << 30;

/// Scans one complete reply at the start of `buf`.
pub fn scan(buf: &[u8]) -> Result<Scan, ProtocolError> {
    let mut pos = 0usize;
    let mut pending: u64 = 1;
    let mut error = false;
    let mut first = true;
    while pending > 0 {
        let Some(&kind) = buf.get(pos) else {
            return Ok(Scan::Incomplete);
        };
        let Some(eol) = find_crlf(buf, pos + 1) else {
            if buf.len() - pos > 64 * 1024 && kind != b'+' && kind != b'-' {
                return Err(ProtocolError("header line longer than 64 KiB".into()));
            }
            return Ok(Scan::Incomplete);
        };
        let line = &buf[pos + 1..eol];
        let next = eol + 2;
        if first && (kind == b'-' || kind == b'!') {
            error = true;
        }
        first = false;
        match kind {
            b'+' | b'-' | b':' | b'_' | b',' | b'#' | b'(' => {
                pos = next;
                pending -= 1;
            }
            b'$' | b'!' | b'=' => {
                let n = number(line, kind)?;
                if n < 0 {
                    pos = next;
                } else {
                    let end = next + n as usize + 2;
                    if buf.len() < end {
                        return Ok(Scan::Incomplete);
                    }
                    if &buf[end - 2..end] != b"\r\n" {
                        return Err(ProtocolError("bulk string not followed by CRLF".into()));
                    }
                    pos = end;
                }
                pending -= 1;
            }
            b'*' | b'~' | b'>' => {
                let n = number(line, kind)?;
                pos = next;
                pending = pending - 1 + n.max(0) as u64;
            }
            b'%' => {
                let n = number(line, kind)?;
                pos = next;
                pending = pending - 1 + 2 * n.max(0) as u64;
            }
            // An attribute map precedes the reply it describes: its pairs are
            // extra elements, and the reply itself is still pending.
            b'|' => {
                let n = number(line, kind)?;
                pos = next;
                pending += 2 * n.max(0) as u64;
                first = true;
            }
            other => {
                return Err(ProtocolError(format!(
                    "unexpected reply type byte 0x{other:02x}"
                )));
            }
        }
    }
    Ok(Scan::Frame { len: pos, error })
}

fn find_crlf(buf: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while i + 1 < buf.len() {
        match buf[i..buf.len() - 1].iter().position(|&b| b == b'\r') {
            Some(off) => {
                let at = i + off;
                if buf[at + 1] == b'\n' {
                    return Some(at);
                }
                i = at + 1;
            }
            None => return None,
        }
    }
    None
}

fn number(line: &[u8], kind: u8) -> Result<i64, ProtocolError> {
    let bad = || {
        ProtocolError(format!(
            "bad length {:?} after '{}'",
            String::from_utf8_lossy(&line[..line.len().min(32)]),
            kind as char
        ))
    };
    if line == b"-1" {
        return Ok(-1);
    }
    if line.is_empty() || line.len() > 12 {
        return Err(bad());
    }
    let mut n: i64 = 0;
    for &b in line {
        if !b.is_ascii_digit() {
            return Err(bad());
        }
        n = n * 10 + (b - b'0') as i64;
    }
    if n > MAX_LEN {
        return Err(bad());
    }
    Ok(n)
}

/// The text of an error or simple reply's first line, for messages.
pub fn first_line(frame: &[u8]) -> String {
    let end = frame
        .iter()
        .position(|&b| b == b'\r')
        .unwrap_or(frame.len());
    let start = usize::from(!frame.is_empty());
    String::from_utf8_lossy(&frame[start.min(end)..end]).into_owned()
}

/// Appends a command in RESP multibulk form.
pub fn encode<A: AsRef<[u8]>>(out: &mut Vec<u8>, args: &[A]) {
    out.push(b'*');
    push_uint(out, args.len() as u64);
    out.extend_from_slice(b"\r\n");
    for a in args {
        let a = a.as_ref();
        out.push(b'$');
        push_uint(out, a.len() as u64);
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
}

/// Decimal digits of `n`, without allocating.
#[inline]
pub fn push_uint(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

/// Writes `n` as exactly `dst.len()` zero-padded decimal digits (the high digits
/// are dropped if `n` is wider), in place: keys keep their length.
#[inline]
pub fn write_padded(dst: &mut [u8], mut n: u64) {
    for d in dst.iter_mut().rev() {
        *d = b'0' + (n % 10) as u8;
        n /= 10;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::rng::Xoroshiro128Plus;

    fn frame(b: &[u8]) -> Scan {
        scan(b).unwrap()
    }

    #[test]
    fn scans_resp2_replies() {
        assert_eq!(
            frame(b"+OK\r\n"),
            Scan::Frame {
                len: 5,
                error: false
            }
        );
        assert_eq!(
            frame(b"-ERR x\r\n+OK"),
            Scan::Frame {
                len: 8,
                error: true
            }
        );
        assert_eq!(
            frame(b":12\r\n"),
            Scan::Frame {
                len: 5,
                error: false
            }
        );
        assert_eq!(
            frame(b"$3\r\nabc\r\n"),
            Scan::Frame {
                len: 9,
                error: false
            }
        );
        assert_eq!(
            frame(b"$-1\r\n"),
            Scan::Frame {
                len: 5,
                error: false
            }
        );
        assert_eq!(
            frame(b"*-1\r\n"),
            Scan::Frame {
                len: 5,
                error: false
            }
        );
        assert_eq!(
            frame(b"*0\r\n"),
            Scan::Frame {
                len: 4,
                error: false
            }
        );
        let arr = b"*2\r\n$1\r\na\r\n*1\r\n:1\r\n";
        assert_eq!(
            frame(arr),
            Scan::Frame {
                len: arr.len(),
                error: false
            }
        );
    }

    #[test]
    fn scans_resp3_replies() {
        assert_eq!(
            frame(b"_\r\n"),
            Scan::Frame {
                len: 3,
                error: false
            }
        );
        assert_eq!(
            frame(b"!3\r\nERR\r\n"),
            Scan::Frame {
                len: 9,
                error: true
            }
        );
        let map = b"%1\r\n+a\r\n:1\r\n";
        assert_eq!(
            frame(map),
            Scan::Frame {
                len: map.len(),
                error: false
            }
        );
        let attr = b"|1\r\n+k\r\n+v\r\n:5\r\n";
        assert_eq!(
            frame(attr),
            Scan::Frame {
                len: attr.len(),
                error: false
            }
        );
        let set = b"~2\r\n,1.5\r\n#t\r\n";
        assert_eq!(
            frame(set),
            Scan::Frame {
                len: set.len(),
                error: false
            }
        );
    }

    #[test]
    fn every_prefix_of_a_frame_is_incomplete() {
        let full = b"*3\r\n$3\r\nfoo\r\n%1\r\n+a\r\n$-1\r\n:7\r\n";
        for cut in 0..full.len() {
            assert_eq!(frame(&full[..cut]), Scan::Incomplete, "cut at {cut}");
        }
        assert_eq!(
            frame(full),
            Scan::Frame {
                len: full.len(),
                error: false
            }
        );
    }

    #[test]
    fn rejects_garbage() {
        assert!(scan(b"?x\r\n").is_err());
        assert!(scan(b"$abc\r\n").is_err());
        assert!(scan(b"$3\r\nabcde\r\n").is_err());
        assert!(scan(b"*99999999999999\r\n").is_err());
    }

    #[test]
    fn encodes_and_pads() {
        let mut out = Vec::new();
        encode(&mut out, &["SET", "k", "v1"]);
        assert_eq!(out, b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\nv1\r\n");
        let mut d = *b"000000000000";
        write_padded(&mut d, 968);
        assert_eq!(&d, b"000000000968");
    }

    /// Bounded random inputs: mutated valid frames and raw noise. The scanner must
    /// never panic, and a frame it reports must fit in the input.
    #[test]
    fn fuzz_scanner_never_panics() {
        let mut rng = Xoroshiro128Plus::seeded(0xfeed);
        let seeds: [&[u8]; 6] = [
            b"*3\r\n$3\r\nfoo\r\n%1\r\n+a\r\n$-1\r\n:7\r\n",
            b"|1\r\n+k\r\n+v\r\n~2\r\n,1.5\r\n#t\r\n",
            b"-ERR wrong\r\n",
            b"$5\r\nhello\r\n",
            b"!4\r\nOOPS\r\n",
            b">2\r\n+message\r\n=6\r\ntxt:hi\r\n",
        ];
        const ALPHABET: &[u8] = b"*$%|~>+-:_,#(!=0123456789\r\n-ab";
        for round in 0..200_000u64 {
            let mut input: Vec<u8> = if round % 3 == 0 {
                let n = rng.below(64);
                (0..n)
                    .map(|_| ALPHABET[rng.below(ALPHABET.len())])
                    .collect()
            } else {
                seeds[rng.below(seeds.len())].to_vec()
            };
            for _ in 0..rng.below(4) {
                if input.is_empty() {
                    break;
                }
                let at = rng.below(input.len());
                match rng.below(3) {
                    0 => input[at] = ALPHABET[rng.below(ALPHABET.len())],
                    1 => {
                        input.remove(at);
                    }
                    _ => input.insert(at, ALPHABET[rng.below(ALPHABET.len())]),
                }
            }
            if let Ok(Scan::Frame { len, .. }) = scan(&input) {
                assert!(len <= input.len() && len > 0);
            }
            let _ = first_line(&input);
        }
    }
}

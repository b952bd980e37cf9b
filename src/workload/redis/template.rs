//! Command templates for native runs: `SET __key__ __data__`, `HINCRBY __key__ f 1`.
//! A template is parsed once into literal pieces and placeholders and encoded per
//! request straight into the connection's output buffer (no allocation): only the
//! lengths that depend on the value size are computed per request.
//!
//! Safety: templates may not name server-wide or destructive commands (FLUSHALL,
//! FLUSHDB, SHUTDOWN, ...) and must address keys through `__key__` (which carries the
//! run's own prefix) unless the command touches no key at all.

use super::resp::push_uint;
use crate::workload::SpecError;

#[derive(Debug, Clone, PartialEq)]
enum Piece {
    Lit(Vec<u8>),
    Key,
    Data,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    pub name: String,
    args: Vec<Vec<Piece>>,
}

/// Commands a benchmark never sends: they touch data or state beyond its own keys.
const REFUSED: &[&str] = &[
    "FLUSHALL",
    "FLUSHDB",
    "SHUTDOWN",
    "SWAPDB",
    "MIGRATE",
    "MOVE",
    "DEBUG",
    "CONFIG",
    "SAVE",
    "BGSAVE",
    "BGREWRITEAOF",
    "REPLICAOF",
    "SLAVEOF",
    "FAILOVER",
    "CLUSTER",
    "SCRIPT",
    "FUNCTION",
    "ACL",
    "MODULE",
    "CLIENT",
    "RENAME",
    "RENAMENX",
    "COPY",
    "KEYS",
    "SCAN",
    "RANDOMKEY",
    "SELECT",
    "MONITOR",
    "SUBSCRIBE",
    "PSUBSCRIBE",
    "SSUBSCRIBE",
    "SYNC",
    "PSYNC",
    "EVAL",
    "EVALSHA",
    "FCALL",
    "MULTI",
    "EXEC",
    "WATCH",
    "BLPOP",
    "BRPOP",
    "BLMOVE",
    "BZPOPMIN",
    "BZPOPMAX",
    "XREAD",
    "XREADGROUP",
    "WAIT",
];

/// Commands that address no key, so they need no `__key__`.
const KEYLESS: &[&str] = &["PING", "ECHO", "TIME", "DBSIZE", "LASTSAVE", "INFO"];

impl Template {
    pub fn parse(text: &str) -> Result<Self, SpecError> {
        let words: Vec<&str> = text.split_whitespace().collect();
        let Some(first) = words.first() else {
            return Err(SpecError::new(
                "--command ''",
                "the command is empty",
                "give a command such as 'SET __key__ __data__'",
            ));
        };
        let name = first.to_uppercase();
        if REFUSED.contains(&name.as_str()) {
            return Err(SpecError::new(
                format!("--command '{text}'"),
                format!(
                    "{name} is not allowed: it reaches beyond the benchmark's own keys or blocks the connection"
                ),
                "benchmark data commands on __key__ (GET, SET, INCR, HSET, LPUSH, ZADD, ...)",
            ));
        }
        let args: Vec<Vec<Piece>> = words.iter().map(|w| pieces(w)).collect();
        let uses_key = args.iter().flatten().any(|p| *p == Piece::Key);
        if !uses_key && !KEYLESS.contains(&name.as_str()) {
            return Err(SpecError::new(
                format!("--command '{text}'"),
                "the command names no __key__, so it would touch a key outside the run's prefix",
                "write the key as __key__ (it becomes <prefix><number>)",
            ));
        }
        Ok(Self { name, args })
    }

    pub fn uses_data(&self) -> bool {
        self.args.iter().flatten().any(|p| *p == Piece::Data)
    }

    /// Appends the RESP encoding with `key` and `data` substituted.
    #[inline]
    pub fn encode(&self, out: &mut Vec<u8>, key: &[u8], data: &[u8]) {
        out.push(b'*');
        push_uint(out, self.args.len() as u64);
        out.extend_from_slice(b"\r\n");
        for arg in &self.args {
            let len: usize = arg
                .iter()
                .map(|p| match p {
                    Piece::Lit(b) => b.len(),
                    Piece::Key => key.len(),
                    Piece::Data => data.len(),
                })
                .sum();
            out.push(b'$');
            push_uint(out, len as u64);
            out.extend_from_slice(b"\r\n");
            for p in arg {
                match p {
                    Piece::Lit(b) => out.extend_from_slice(b),
                    Piece::Key => out.extend_from_slice(key),
                    Piece::Data => out.extend_from_slice(data),
                }
            }
            out.extend_from_slice(b"\r\n");
        }
    }
}

fn pieces(word: &str) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut rest = word;
    while !rest.is_empty() {
        let next = [("__key__", Piece::Key), ("__data__", Piece::Data)]
            .into_iter()
            .filter_map(|(pat, piece)| rest.find(pat).map(|at| (at, pat.len(), piece)))
            .min_by_key(|(at, _, _)| *at);
        match next {
            Some((at, len, piece)) => {
                if at > 0 {
                    out.push(Piece::Lit(rest.as_bytes()[..at].to_vec()));
                }
                out.push(piece);
                rest = &rest[at + len..];
            }
            None => {
                out.push(Piece::Lit(rest.as_bytes().to_vec()));
                break;
            }
        }
    }
    if out.is_empty() {
        out.push(Piece::Lit(Vec::new()));
    }
    out
}

/// Formats key number `n` as `<prefix><zero-padded n>` into `buf` (reused).
#[inline]
pub fn key_into(buf: &mut Vec<u8>, prefix: &[u8], width: usize, n: u64) {
    buf.clear();
    buf.extend_from_slice(prefix);
    let start = buf.len();
    buf.resize(start + width, b'0');
    super::resp::write_padded(&mut buf[start..], n);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_with_placeholders() {
        let t = Template::parse("SET __key__ v:__data__").unwrap();
        let mut out = Vec::new();
        t.encode(&mut out, b"hb:01", b"xyz");
        assert_eq!(out, b"*3\r\n$3\r\nSET\r\n$5\r\nhb:01\r\n$5\r\nv:xyz\r\n");
        assert!(t.uses_data());
    }

    #[test]
    fn refuses_what_reaches_beyond_its_keys() {
        assert!(Template::parse("FLUSHALL").is_err());
        assert!(Template::parse("flushdb async").is_err());
        assert!(
            Template::parse("SET foo bar")
                .unwrap_err()
                .to_string()
                .contains("__key__")
        );
        assert!(Template::parse("PING").is_ok());
        assert!(Template::parse("").is_err());
    }

    #[test]
    fn keys_are_fixed_width() {
        let mut b = Vec::new();
        key_into(&mut b, b"hostbench:", 6, 42);
        assert_eq!(b, b"hostbench:000042");
    }
}

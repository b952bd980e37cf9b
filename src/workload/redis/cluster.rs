//! Redis Cluster routing: the CRC16 that puts a key in one of 16384 slots (honouring
//! `{hash tags}`), a three-character tag for every slot (so a key can be steered into
//! a chosen slot without changing its length), the masters and their slots as
//! `CLUSTER NODES` reports them, and a shared, refreshable copy of that layout for the
//! load loops.

use super::conn::{self, Endpoint, RedisError, Setup};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

pub const SLOTS: usize = 16384;

/// CRC16-CCITT, XMODEM variant (polynomial 0x1021, initial value 0, no reflection,
/// no final xor): the checksum Redis Cluster hashes keys with.
pub fn crc16(data: &[u8]) -> u16 {
    data.iter().fold(0u16, |crc, &b| {
        (crc << 8) ^ CRC16_TABLE[usize::from((crc >> 8) as u8 ^ b)]
    })
}

const CRC16_TABLE: [u16; 256] = crc16_table();

/// One entry per leading byte: the CRC register after shifting that byte through.
const fn crc16_table() -> [u16; 256] {
    let mut table = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = (i as u16) << 8;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
}

/// The slot of a key. When the key holds a `{` followed later by a `}` with at least
/// one byte between them, only those bytes are hashed, so `{user1}.a` and `{user1}.b`
/// share a slot; otherwise the whole key is.
pub fn key_slot(key: &[u8]) -> u16 {
    let hashed = key
        .iter()
        .position(|&b| b == b'{')
        .and_then(|open| {
            let inner = &key[open + 1..];
            match inner.iter().position(|&b| b == b'}') {
                Some(len) if len > 0 => Some(&inner[..len]),
                _ => None,
            }
        })
        .unwrap_or(key);
    crc16(hashed) & (SLOTS as u16 - 1)
}

/// A three-character alphanumeric hash tag whose slot is `slot`: writing it over the
/// `tag` of `{tag}` moves a key into that slot. Every slot has one (a unit test checks).
pub fn slot_tag(slot: u16) -> [u8; 3] {
    static TAGS: OnceLock<Vec<[u8; 3]>> = OnceLock::new();
    TAGS.get_or_init(|| {
        const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        let mut tags = vec![[0u8; 3]; SLOTS];
        let mut missing = SLOTS;
        for &a in ALPHABET {
            for &b in ALPHABET {
                for &c in ALPHABET {
                    let tag = [a, b, c];
                    let s = usize::from(key_slot(&tag));
                    if tags[s][0] == 0 {
                        tags[s] = tag;
                        missing -= 1;
                        if missing == 0 {
                            return tags;
                        }
                    }
                }
            }
        }
        tags
    })[usize::from(slot) % SLOTS]
}

/// A master that serves slots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Master {
    pub id: String,
    pub endpoint: Endpoint,
    /// Slots it owns, in the order CLUSTER NODES lists them.
    pub slots: Vec<u16>,
}

/// The masters of a cluster, in CLUSTER NODES order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Topology {
    pub masters: Vec<Master>,
    /// Masters that own no slot (left out of `masters`).
    pub without_slots: Vec<Endpoint>,
}

impl Topology {
    /// Which master (index into `masters`) owns each slot; `None` for an unserved slot.
    pub fn owners(&self) -> Vec<Option<u16>> {
        owners(self.masters.iter().map(|m| m.slots.as_slice()))
    }
}

fn owners<'a>(per_master: impl Iterator<Item = &'a [u16]>) -> Vec<Option<u16>> {
    let mut owners = vec![None; SLOTS];
    for (i, slots) in per_master.enumerate() {
        for &s in slots {
            owners[usize::from(s)] = Some(i as u16);
        }
    }
    owners
}

/// A `CLUSTER NODES` line that does not parse, with the line as the node sent it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid CLUSTER NODES line ({problem}): {line}")]
pub struct NodesError {
    pub line: String,
    pub problem: NodesProblem,
}

/// What is wrong with a `CLUSTER NODES` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NodesProblem {
    #[error("fewer than 8 fields")]
    TooFewFields,
    #[error("address without a port")]
    NoPort,
    #[error("bad port")]
    BadPort,
    #[error("a master without an address")]
    NoAddress,
    #[error("bad slot range")]
    BadSlots,
}

/// Parses a `CLUSTER NODES` reply: one line per node,
/// `<id> <ip:port@cport[,hostname]> <flags> <master-id> <ping> <pong> <epoch> <link> <slot>...`.
/// Replicas are skipped; `myself` without a known address takes `entry`'s (a node that
/// never met another reports `:port`).
pub fn parse_nodes(text: &str, entry: &Endpoint) -> Result<Topology, NodesError> {
    let mut topology = Topology::default();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let fields: Vec<&str> = line.split(' ').collect();
        let bad = |problem| NodesError {
            line: line.to_string(),
            problem,
        };
        if fields.len() < 8 {
            return Err(bad(NodesProblem::TooFewFields));
        }
        let (id, addr, flags, master_of) = (fields[0], fields[1], fields[2], fields[3]);
        let flags: Vec<&str> = flags.split(',').collect();
        if flags.contains(&"slave") || flags.contains(&"replica") || master_of != "-" {
            continue;
        }
        let hostport = addr.split(['@', ',']).next().unwrap_or("");
        let (ip, port) = hostport
            .rsplit_once(':')
            .ok_or_else(|| bad(NodesProblem::NoPort))?;
        let port: u16 = port.parse().map_err(|_| bad(NodesProblem::BadPort))?;
        let endpoint = if !ip.is_empty() {
            Endpoint::Tcp {
                host: ip.trim_start_matches('[').trim_end_matches(']').into(),
                port,
            }
        } else if flags.contains(&"myself") {
            entry.clone()
        } else {
            return Err(bad(NodesProblem::NoAddress));
        };
        let mut slots = Vec::new();
        for spec in &fields[8..] {
            // `[slot->-id]` / `[slot-<-id]`: a migration in progress, not ownership.
            if spec.is_empty() || spec.starts_with('[') {
                continue;
            }
            let (from, to) = spec.split_once('-').unwrap_or((spec, spec));
            let slot = |s: &str| {
                s.parse::<u16>()
                    .ok()
                    .filter(|&n| usize::from(n) < SLOTS)
                    .ok_or_else(|| bad(NodesProblem::BadSlots))
            };
            let (from, to) = (slot(from)?, slot(to)?);
            slots.extend(from..=to);
        }
        if slots.is_empty() {
            topology.without_slots.push(endpoint);
        } else {
            topology.masters.push(Master {
                id: id.to_string(),
                endpoint,
                slots,
            });
        }
    }
    Ok(topology)
}

/// Asks `entry` for CLUSTER NODES and parses it.
pub fn fetch(entry: &Endpoint, setup: &Setup) -> Result<Topology, RedisError> {
    let reply = conn::query(entry, setup, &["CLUSTER", "NODES"])?;
    let text = reply.first().map(String::as_str).unwrap_or("");
    // RESP3 sends it as a verbatim string: `txt:` then the text.
    let text = text.strip_prefix("txt:").unwrap_or(text);
    parse_nodes(text, entry).map_err(|source| RedisError::ClusterNodes {
        endpoint: entry.clone(),
        source,
    })
}

/// The masters a run talks to and the slots each owns now. Load loops keep their own
/// copy of the slot lists and re-copy it when `generation` moves; a redirect (MOVED,
/// ASK) makes one of them fetch the layout again.
#[derive(Debug)]
pub struct ClusterRoutes {
    /// As first fetched; a client stays with its master for the whole run.
    pub masters: Vec<Master>,
    setup: Setup,
    slots: Mutex<Vec<Vec<u16>>>,
    generation: AtomicU64,
}

impl ClusterRoutes {
    pub fn new(topology: &Topology, setup: Setup) -> Self {
        Self {
            slots: Mutex::new(topology.masters.iter().map(|m| m.slots.clone()).collect()),
            masters: topology.masters.clone(),
            setup,
            generation: AtomicU64::new(0),
        }
    }

    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// The slot lists per master, and the generation they belong to.
    pub fn slots(&self) -> (u64, Vec<Vec<u16>>) {
        let slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        (self.generation(), slots.clone())
    }

    /// Which master owns each slot now (see `Topology::owners`).
    pub fn owners(&self) -> Vec<Option<u16>> {
        let (_, slots) = self.slots();
        owners(slots.iter().map(Vec::as_slice))
    }

    /// Fetches the layout again (from the first master that answers) unless someone
    /// already did since generation `seen`. A master that lost its slots, or left,
    /// gets an empty list.
    pub fn refresh(&self, seen: u64) -> Result<(), RedisError> {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        if self.generation() != seen {
            return Ok(());
        }
        let mut last = None;
        for m in &self.masters {
            match fetch(&m.endpoint, &self.setup) {
                Ok(now) => {
                    for (mine, known) in slots.iter_mut().zip(&self.masters) {
                        *mine = now
                            .masters
                            .iter()
                            .find(|n| n.id == known.id)
                            .map(|n| n.slots.clone())
                            .unwrap_or_default();
                    }
                    self.generation.fetch_add(1, Ordering::Release);
                    return Ok(());
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| RedisError::Other("the cluster has no masters".into())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc16_check_value() {
        // The standard check value of CRC-16/XMODEM.
        assert_eq!(crc16(b"123456789"), 0x31C3);
        assert_eq!(crc16(b""), 0);
    }

    #[test]
    fn key_slots_from_the_cluster_documentation() {
        // CLUSTER KEYSLOT examples of the Redis documentation.
        assert_eq!(key_slot(b"somekey"), 11058);
        assert_eq!(key_slot(b"foo{hash_tag}"), 2515);
        assert_eq!(key_slot(b"bar{hash_tag}"), 2515);
        assert_eq!(key_slot(b"foo"), 12182);
        assert_eq!(key_slot(b"hello"), 866);
    }

    #[test]
    fn hash_tag_rules_of_the_cluster_spec() {
        // The same tag, the same slot.
        assert_eq!(
            key_slot(b"{user1000}.following"),
            key_slot(b"{user1000}.followers")
        );
        assert_eq!(key_slot(b"{user1000}.following"), key_slot(b"user1000"));
        // An empty first tag means the whole key is hashed.
        assert_eq!(key_slot(b"foo{}{bar}"), crc16(b"foo{}{bar}") & 16383);
        // Only the first `{` counts; the tag runs to the first `}` after it.
        assert_eq!(key_slot(b"foo{{bar}}zap"), key_slot(b"{bar"));
        assert_eq!(key_slot(b"foo{bar}{zap}"), key_slot(b"bar"));
        // No closing brace: the whole key.
        assert_eq!(key_slot(b"foo{bar"), crc16(b"foo{bar") & 16383);
    }

    #[test]
    fn every_slot_has_a_tag_that_hashes_to_it() {
        for slot in 0..SLOTS as u16 {
            let tag = slot_tag(slot);
            assert!(tag.iter().all(u8::is_ascii_alphanumeric), "{tag:?}");
            assert_eq!(key_slot(&tag), slot);
            let mut key = b"key:{".to_vec();
            key.extend_from_slice(&tag);
            key.extend_from_slice(b"}:000000000042");
            assert_eq!(key_slot(&key), slot);
        }
    }

    const NODES: &str = "\
07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:30004@31004,host4 slave e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 1426238317239 4 connected
67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 127.0.0.1:30002@31002 master - 0 1426238316232 2 connected 5461-10922
292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 127.0.0.1:30003@31003 master - 0 1426238318243 3 connected 10923-16383 [77->-e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca]
e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca :30001@31001 myself,master - 0 0 1 connected 0-5460
aaaa8b365bb7edb5e285caf0b7e6ddc7265d2f4f 127.0.0.1:30005@31005 master - 0 1426238318243 5 connected
";

    #[test]
    fn parses_masters_and_slots_and_skips_replicas() {
        let entry = Endpoint::Tcp {
            host: "localhost".into(),
            port: 30001,
        };
        let t = parse_nodes(NODES, &entry).unwrap();
        let names: Vec<String> = t.masters.iter().map(|m| m.endpoint.to_string()).collect();
        assert_eq!(
            names,
            ["127.0.0.1:30002", "127.0.0.1:30003", "localhost:30001"]
        );
        assert_eq!(t.masters[0].slots.len(), 10922 - 5461 + 1);
        assert_eq!(t.masters[1].slots.first(), Some(&10923));
        assert_eq!(t.masters[1].slots.last(), Some(&16383));
        assert_eq!(t.masters[2].id, "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca");
        assert_eq!(t.without_slots.len(), 1);
        let owners = t.owners();
        assert!(owners.iter().all(Option::is_some));
        assert_eq!(owners[0], Some(2));
        assert_eq!(owners[usize::from(key_slot(b"foo"))], Some(1));
    }

    #[test]
    fn refuses_garbage() {
        let entry = Endpoint::Tcp {
            host: "h".into(),
            port: 1,
        };
        let problem = |text| parse_nodes(text, &entry).unwrap_err().problem;
        assert_eq!(problem("just some text"), NodesProblem::TooFewFields);
        assert_eq!(
            problem("a 1.2.3.4:x@1 master - 0 0 1 connected 0-5"),
            NodesProblem::BadPort
        );
        let e = parse_nodes("a 1.2.3.4:1@1 master - 0 0 1 connected 0-99999", &entry).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid CLUSTER NODES line (bad slot range): a 1.2.3.4:1@1 master - 0 0 1 connected 0-99999"
        );
        assert_eq!(parse_nodes("", &entry).unwrap(), Topology::default());
    }
}

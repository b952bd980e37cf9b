//! Memory: three honest views of it.
//!
//! - `block`: sysbench 1.0.20's memory test, event for event. Its buffer is one block
//!   (shared, or one per thread), so it measures whichever cache that block fits in;
//!   the result says which.
//! - `bandwidth`: STREAM-like copy/scale/add/triad on arrays at least 4x the
//!   last-level cache, all threads: what DRAM really delivers.
//! - `latency`: dependent loads through a random cyclic chain, one working-set size
//!   per cache level and one for DRAM: nanoseconds per load.

pub mod bandwidth;
pub mod block;
pub mod latency;

use crate::host::HostInfo;
use crate::model::{Tier, WorkingSet};

/// Which level of the hierarchy a working set of `bytes` fits in, from the host's
/// cache sizes. Without cache information everything above 32 MiB counts as DRAM.
pub fn tier_of(bytes: u64, host: &HostInfo) -> Tier {
    let caches = host.data_caches();
    let size = |level: u8| caches.iter().find(|c| c.0 == level).map(|c| c.1);
    let llc = host.llc_bytes().unwrap_or(32 << 20);
    if size(1).is_some_and(|l1| bytes <= l1) {
        Tier::L1
    } else if size(2).is_some_and(|l2| bytes <= l2) {
        Tier::L2
    } else if bytes <= llc {
        Tier::Llc
    } else {
        Tier::Dram
    }
}

pub fn working_set(bytes: u64, host: &HostInfo) -> WorkingSet {
    WorkingSet {
        bytes,
        tier: tier_of(bytes, host),
    }
}

/// The spec as JSON with the mode named, so a stored result says which view it is.
fn spec_json<S: serde::Serialize>(spec: &S, mode: &str) -> serde_json::Value {
    let mut v = serde_json::to_value(spec).unwrap_or_default();
    if let Some(map) = v.as_object_mut() {
        map.insert("mode".into(), mode.into());
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::Cache;

    fn host() -> HostInfo {
        let cache = |level, kind: &str, bytes| Cache {
            level,
            kind: kind.into(),
            bytes,
        };
        HostInfo {
            caches: vec![
                cache(1, "Data", 32 << 10),
                cache(1, "Instruction", 32 << 10),
                cache(2, "Unified", 512 << 10),
                cache(3, "Unified", 32 << 20),
            ],
            ..HostInfo::default()
        }
    }

    #[test]
    fn tiers() {
        let h = host();
        assert_eq!(tier_of(8 << 10, &h), Tier::L1);
        assert_eq!(tier_of(32 << 10, &h), Tier::L1);
        assert_eq!(tier_of(1 << 20 >> 1, &h), Tier::L2);
        assert_eq!(tier_of(1 << 20, &h), Tier::Llc);
        assert_eq!(tier_of(1 << 30, &h), Tier::Dram);
        assert_eq!(tier_of(1 << 20, &HostInfo::default()), Tier::Llc);
    }
}

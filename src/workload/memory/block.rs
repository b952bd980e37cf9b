//! sysbench 1.0.20's memory test, event for event (docs: reference §3).
//!
//! The buffer is one block: shared by all threads (`global`) or one per thread
//! (`local`). One event walks the block's 8-byte words once: a single 8-byte load or
//! store per word (never memset/memcpy), at consecutive offsets (`seq`) or at an
//! offset drawn from xoroshiro128+ for every word (`rnd`, hence RNG-bound).
//! `total_size` is only an event quota: `total / block / threads` events per thread.

use super::working_set;
use crate::host::{self, HostInfo};
use crate::measure::rng::Xoroshiro128Plus;
use crate::model::{Metric, Outcome, STANDARD_PERCENTILES, Tier, Unit};
use crate::units::format_bytes;
use crate::workload::buffer::AlignedBuffer;
use crate::workload::runner::{self, EventWorker, Observer, RunOptions};
use crate::workload::{SpecError, check_threads, record_run};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering, compiler_fence};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Oper {
    Read,
    Write,
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    Seq,
    Rnd,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    Global,
    Local,
}

#[derive(Debug, Clone, Serialize)]
pub struct BlockSpec {
    pub run: RunOptions,
    pub threads: usize,
    pub block_size: u64,
    /// Bytes to transfer in total; 0 means no quota (the time limit ends the run).
    pub total_size: u64,
    pub oper: Oper,
    pub access: Access,
    pub scope: Scope,
    pub hugetlb: bool,
    /// Seed for `rnd` offsets; `None` seeds from the clock.
    pub seed: Option<u64>,
    pub percentiles: Vec<f64>,
}

impl BlockSpec {
    /// What identifies the measurement (`Outcome::params`), in sysbench's words.
    pub fn params(&self) -> crate::model::Params {
        let lower = |v: &dyn std::fmt::Debug| format!("{v:?}").to_lowercase();
        crate::model::Params::from([
            ("mode".into(), "block".into()),
            ("block-size".into(), format_bytes(self.block_size)),
            ("oper".into(), lower(&self.oper)),
            ("access".into(), lower(&self.access)),
            ("scope".into(), lower(&self.scope)),
            (
                "hugetlb".into(),
                if self.hugetlb { "on" } else { "off" }.into(),
            ),
        ])
    }

    pub fn validate(&self) -> Result<(), SpecError> {
        check_threads(self.threads)?;
        if self.block_size < 8 || !self.block_size.is_power_of_two() {
            return Err(SpecError::new(
                format!("block-size={}", format_bytes(self.block_size)),
                "must be a power of two of at least 8 bytes",
                "use e.g. 1K, 8K or 1M",
            ));
        }
        let buffers = match self.scope {
            Scope::Global => 1,
            Scope::Local => self.threads as u64,
        };
        let needed = self.block_size.saturating_mul(buffers);
        if let Some(avail) = host::available_memory_bytes()
            && needed > avail / 10 * 9
        {
            return Err(SpecError::new(
                format!("block-size={}", format_bytes(self.block_size)),
                format!(
                    "needs {} of memory, {} is available",
                    format_bytes(needed),
                    format_bytes(avail)
                ),
                "use a smaller block size or fewer threads with local scope",
            ));
        }
        Ok(())
    }

    /// Events each thread runs before its quota is spent (`None`: unlimited).
    pub fn quota_per_thread(&self) -> Option<u64> {
        (self.total_size > 0).then(|| self.total_size / self.block_size / self.threads as u64)
    }

    pub fn working_set_bytes(&self) -> u64 {
        match self.scope {
            Scope::Global => self.block_size,
            Scope::Local => self.block_size * self.threads as u64,
        }
    }
}

struct BlockWorker {
    buffer: Arc<AlignedBuffer>,
    words: usize,
    quota: Option<u64>,
    rnd: RndState,
    oper: Oper,
    access: Access,
}

impl EventWorker for BlockWorker {
    #[inline]
    fn next_event(&mut self) -> bool {
        match &mut self.quota {
            None => true,
            Some(0) => false,
            Some(left) => {
                *left -= 1;
                true
            }
        }
    }

    #[inline]
    fn execute(&mut self) {
        let base = self.buffer.words();
        match (self.oper, self.access) {
            (Oper::Write, Access::Seq) => seq_write(base, self.words),
            (Oper::Read, Access::Seq) => seq_read(base, self.words),
            (Oper::None, Access::Seq) => seq_none(self.words),
            (Oper::Write, Access::Rnd) => rnd_write(&mut self.rnd),
            (Oper::Read, Access::Rnd) => rnd_read(&mut self.rnd),
            (Oper::None, Access::Rnd) => rnd_none(&mut self.rnd),
        }
    }
}

/// Stores the remaining word count, derived from the pointer as gcc computes it for
/// sysbench (`(end - p) >> 3`), one 8-byte store per word, eight words per loop turn
/// as gcc's `-funroll-loops` emits it. LLVM's own version of this loop runs about 20 %
/// slower per store than gcc's on the same core (measured with bench/sysbench-ratio.sh),
/// so on x86-64 the loop is written out with gcc's instruction mix.
#[inline(never)]
fn seq_write(base: *mut u64, words: usize) {
    // SAFETY: base..base+words lies inside the buffer; u64 is 8-aligned there.
    unsafe {
        let end = base.add(words);
        let mut p = base;
        let whole = words & !7;
        if whole > 0 {
            p = seq_write_unrolled(p, p.add(whole), end);
        }
        while p < end {
            let remaining = (end as usize - p as usize) >> 3;
            // Relaxed atomic: a plain store that may not be merged or removed, and no
            // data race when threads share the global block.
            AtomicU64::from_ptr(p).store(remaining as u64, Ordering::Relaxed);
            p = p.add(1);
        }
    }
}

/// Stores `(end - p) >> 3` at every word from `p` to `stop` (a multiple of 8 words
/// away); returns `stop`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn seq_write_unrolled(mut p: *mut u64, stop: *mut u64, end: *mut u64) -> *mut u64 {
    // SAFETY (caller): p..stop lies inside the buffer and stop - p is a positive
    // multiple of 64 bytes.
    unsafe {
        std::arch::asm!(
            "2:",
            "mov {t}, {end}", "sub {t}, {p}", "sar {t}, 3", "mov qword ptr [{p}], {t}",
            "mov {t}, {end}", "sub {t}, {p}", "sub {t}, 8", "sar {t}, 3", "mov qword ptr [{p} + 8], {t}",
            "mov {t}, {end}", "sub {t}, {p}", "sub {t}, 16", "sar {t}, 3", "mov qword ptr [{p} + 16], {t}",
            "mov {t}, {end}", "sub {t}, {p}", "sub {t}, 24", "sar {t}, 3", "mov qword ptr [{p} + 24], {t}",
            "mov {t}, {end}", "sub {t}, {p}", "sub {t}, 32", "sar {t}, 3", "mov qword ptr [{p} + 32], {t}",
            "mov {t}, {end}", "sub {t}, {p}", "sub {t}, 40", "sar {t}, 3", "mov qword ptr [{p} + 40], {t}",
            "mov {t}, {end}", "sub {t}, {p}", "sub {t}, 48", "sar {t}, 3", "mov qword ptr [{p} + 48], {t}",
            "mov {t}, {end}", "sub {t}, {p}", "sub {t}, 56", "sar {t}, 3", "mov qword ptr [{p} + 56], {t}",
            "add {p}, 64",
            "cmp {p}, {stop}",
            "jb 2b",
            p = inout(reg) p,
            stop = in(reg) stop,
            end = in(reg) end,
            t = out(reg) _,
            options(nostack),
        );
    }
    p
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
unsafe fn seq_write_unrolled(mut p: *mut u64, stop: *mut u64, end: *mut u64) -> *mut u64 {
    // SAFETY (caller): p..stop lies inside the buffer.
    unsafe {
        while p < stop {
            let remaining = (end as usize - p as usize) >> 3;
            AtomicU64::from_ptr(p).store(remaining as u64, Ordering::Relaxed);
            p = p.add(1);
        }
    }
    p
}

#[inline(never)]
fn seq_read(base: *mut u64, words: usize) {
    // SAFETY: as in seq_write; loads only.
    unsafe {
        for k in 0..words {
            std::ptr::read_volatile(base.add(k));
        }
    }
}

#[inline(never)]
fn seq_none(words: usize) {
    for _ in 0..words {
        compiler_fence(Ordering::SeqCst);
    }
}

/// What an rnd event reads on every word. sysbench's loop re-reads the block size
/// (a global), the buffer pointer and the generator state (thread-local storage) for
/// every word, because its stores may alias them; the rnd modes are bound by exactly
/// this per-word work, so it is reproduced: the fields are read and written through
/// volatile accesses, and the offset is truncated with sysbench's unsigned check.
struct RndState {
    rng: Xoroshiro128Plus,
    base: *mut u64,
    block_bytes: usize,
}

// SAFETY: `base` points into the buffer its worker keeps alive through an `Arc`, and
// that buffer is only touched with atomic or volatile word accesses.
unsafe impl Send for RndState {}

impl RndState {
    /// The next word offset, and the buffer it indexes.
    #[inline(always)]
    fn next_offset(&mut self) -> (*mut u64, usize) {
        const TWO_63: f64 = 9_223_372_036_854_775_808.0;
        let this: *mut RndState = self;
        // SAFETY: `this` comes from a live exclusive reference. The scaled double is
        // in [0, words), so both truncations are exact.
        unsafe {
            let mut rng = std::ptr::read_volatile(&raw const (*this).rng);
            let d = rng.next_f64();
            std::ptr::write_volatile(&raw mut (*this).rng, rng);
            let words = (std::ptr::read_volatile(&raw const (*this).block_bytes) / 8) as i64;
            let x = d * words as f64;
            let offset = if x < TWO_63 {
                x.to_int_unchecked::<i64>() as usize
            } else {
                (x - TWO_63).to_int_unchecked::<i64>() as usize ^ (1 << 63)
            };
            (std::ptr::read_volatile(&raw const (*this).base), offset)
        }
    }

    #[inline(always)]
    fn block_bytes(&self) -> usize {
        // SAFETY: a plain field of a live reference.
        unsafe { std::ptr::read_volatile(&self.block_bytes) }
    }
}

#[inline(never)]
fn rnd_write(state: &mut RndState) {
    let mut i = 0;
    while i < state.block_bytes() {
        let (base, off) = state.next_offset();
        // SAFETY: off < words.
        unsafe { AtomicU64::from_ptr(base.add(off)).store(i as u64, Ordering::Relaxed) };
        i += 8;
    }
}

#[inline(never)]
fn rnd_read(state: &mut RndState) {
    let mut i = 0;
    while i < state.block_bytes() {
        let (base, off) = state.next_offset();
        // SAFETY: off < words.
        unsafe { std::ptr::read_volatile(base.add(off)) };
        i += 8;
    }
}

#[inline(never)]
fn rnd_none(state: &mut RndState) {
    let mut i = 0;
    while i < state.block_bytes() {
        std::hint::black_box(state.next_offset().1);
        i += 8;
    }
}

pub fn run(spec: &BlockSpec, observer: &dyn Observer) -> Result<Outcome, SpecError> {
    spec.validate()?;
    let host = HostInfo::detect();
    let alloc = || -> Result<Arc<AlignedBuffer>, SpecError> {
        let size = spec.block_size as usize;
        let buf = if spec.hugetlb {
            AlignedBuffer::huge(size).map_err(|e| {
                SpecError::new(
                    "hugetlb",
                    format!("cannot allocate huge pages: {e}"),
                    "reserve some with `sysctl vm.nr_hugepages=N`, or run without hugetlb",
                )
            })?
        } else {
            AlignedBuffer::new(size).ok_or_else(|| {
                SpecError::new(
                    format!("block-size={}", format_bytes(spec.block_size)),
                    "allocation failed",
                    "use a smaller block size",
                )
            })?
        };
        Ok(Arc::new(buf))
    };
    let shared = match spec.scope {
        Scope::Global => Some(alloc()?),
        Scope::Local => None,
    };
    let quota = spec.quota_per_thread();
    let mut workers = Vec::with_capacity(spec.threads);
    for t in 0..spec.threads {
        let buffer = match &shared {
            Some(b) => Arc::clone(b),
            None => alloc()?,
        };
        workers.push(BlockWorker {
            rnd: RndState {
                rng: match spec.seed {
                    Some(seed) => Xoroshiro128Plus::seeded(seed.wrapping_add(t as u64)),
                    None => Xoroshiro128Plus::from_entropy(t as u64),
                },
                base: buffer.words(),
                block_bytes: spec.block_size as usize,
            },
            buffer,
            words: (spec.block_size / 8) as usize,
            quota,
            oper: spec.oper,
            access: spec.access,
        });
    }

    let result = runner::run(&spec.run, workers, observer);
    let mut outcome = Outcome::new("memory", super::spec_json(spec, "block"), host);
    outcome.params = spec.params();
    let mut percentiles = STANDARD_PERCENTILES.to_vec();
    percentiles.extend(
        spec.percentiles
            .iter()
            .filter(|p| !STANDARD_PERCENTILES.contains(p)),
    );
    let block = spec.block_size as f64;
    record_run(&mut outcome, &result, |i| {
        BTreeMap::from([
            ("ops_per_sec".into(), i.events_per_sec()),
            ("bytes_per_sec".into(), i.events_per_sec() * block),
        ])
    });
    let ws = working_set(spec.working_set_bytes(), &outcome.host);
    let threads = spec.threads;
    outcome.push(
        Metric::new("ops_per_sec", result.events_per_sec(), Unit::OpsPerSec).threads(threads),
    );
    outcome.push(Metric::new("operations", result.events() as f64, Unit::Count).threads(threads));
    if spec.oper != Oper::None {
        outcome.push(
            Metric::new(
                "bytes_per_sec",
                result.events_per_sec() * block,
                Unit::BytesPerSec,
            )
            .threads(threads)
            .working_set(ws)
            .variant(&format!("{:?}-{:?}", spec.access, spec.oper).to_lowercase()),
        );
    }
    outcome.push(
        Metric::new(
            "bytes_transferred",
            result.events() as f64 * block,
            Unit::Bytes,
        )
        .threads(threads),
    );
    outcome.latency = Some(result.latency(&percentiles));
    if ws.tier != Tier::Dram {
        outcome.note(format!(
            "working set {} fits in {}: this is cache speed plus per-event overhead, not memory \
             bandwidth (run `hostbench memory --mode bandwidth` for DRAM)",
            format_bytes(ws.bytes),
            ws.tier.label()
        ));
    }
    if spec.access == Access::Rnd {
        outcome.note("rnd draws one random number per 8-byte word, so it measures the generator as much as memory");
    }
    if spec.scope == Scope::Global && spec.oper == Oper::Write && spec.threads > 1 {
        outcome.note("global scope with several writers: all threads store to the same cache lines, which bounce between cores");
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::histogram::Layout;

    fn spec(oper: Oper, access: Access, scope: Scope, threads: usize) -> BlockSpec {
        BlockSpec {
            run: RunOptions {
                time: Some(std::time::Duration::from_secs(10)),
                events: None,
                report_interval: None,
                layout: Layout::SYSBENCH,
            },
            threads,
            block_size: 4096,
            total_size: 4096 * 100 * threads as u64,
            oper,
            access,
            scope,
            hugetlb: false,
            seed: Some(1),
            percentiles: vec![],
        }
    }

    #[test]
    fn quota_bounds_events() {
        for (oper, access) in [
            (Oper::Write, Access::Seq),
            (Oper::Read, Access::Seq),
            (Oper::None, Access::Seq),
            (Oper::Write, Access::Rnd),
            (Oper::Read, Access::Rnd),
            (Oper::None, Access::Rnd),
        ] {
            for scope in [Scope::Global, Scope::Local] {
                let out = run(&spec(oper, access, scope, 2), &runner::Quiet).unwrap();
                let ops = out.metric("operations", Some(2)).unwrap().value;
                assert_eq!(ops, 200.0, "{oper:?} {access:?} {scope:?}");
            }
        }
    }

    #[test]
    fn seq_write_stores_remaining_words() {
        let buf = AlignedBuffer::new(64).unwrap();
        seq_write(buf.words(), 8);
        let words: Vec<u64> = (0..8).map(|k| unsafe { *buf.words().add(k) }).collect();
        assert_eq!(words, [8, 7, 6, 5, 4, 3, 2, 1]);
    }

    #[test]
    fn rnd_write_stays_in_bounds_and_spreads() {
        let buf = AlignedBuffer::new(8 * 1024).unwrap();
        let mut state = RndState {
            rng: Xoroshiro128Plus::seeded(3),
            base: buf.words(),
            block_bytes: 8 * 1024,
        };
        for _ in 0..50 {
            rnd_write(&mut state);
        }
        let touched = (0..1024)
            .filter(|&k| unsafe { *buf.words().add(k) } != 0)
            .count();
        assert!(touched > 900, "{touched}");
    }

    #[test]
    fn block_must_be_power_of_two() {
        let mut s = spec(Oper::Read, Access::Seq, Scope::Global, 1);
        s.block_size = 12 * 1024;
        assert!(s.validate().is_err());
        s.block_size = 4;
        assert!(s.validate().is_err());
    }

    #[test]
    fn in_cache_results_say_so() {
        let out = run(
            &spec(Oper::Read, Access::Seq, Scope::Global, 1),
            &runner::Quiet,
        )
        .unwrap();
        let m = out.metric("bytes_per_sec", None).unwrap();
        assert_ne!(m.working_set.unwrap().tier, Tier::Dram);
        assert!(out.notes.iter().any(|n| n.contains("not memory bandwidth")));
    }
}

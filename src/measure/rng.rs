//! xoroshiro128+ (2016 constants 55/14/36), the generator sysbench 1.0.20 draws its
//! memory offsets from. Same generator, same per-word cost.

#[derive(Debug, Clone)]
pub struct Xoroshiro128Plus {
    s0: u64,
    s1: u64,
}

impl Xoroshiro128Plus {
    /// Seeds through splitmix64 so that nearby seeds give unrelated streams and the
    /// state is never all zero.
    pub fn seeded(seed: u64) -> Self {
        let mut x = seed;
        let mut next = || {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        Self {
            s0: next(),
            s1: next() | 1,
        }
    }

    /// A seed from the clock and the thread, for runs that need no repeatability.
    pub fn from_entropy(salt: u64) -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        Self::seeded(nanos ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15))
    }

    #[inline(always)]
    pub fn next_u64(&mut self) -> u64 {
        let (s0, mut s1) = (self.s0, self.s1);
        let result = s0.wrapping_add(s1);
        s1 ^= s0;
        self.s0 = s0.rotate_left(55) ^ s1 ^ (s1 << 14);
        self.s1 = s1.rotate_left(36);
        result
    }

    /// A double in [0, 1) from the top 52 bits, as sysbench's `sb_rand_uniform_double`.
    #[inline(always)]
    pub fn next_f64(&mut self) -> f64 {
        f64::from_bits((0x3FFu64 << 52) | (self.next_u64() >> 12)) - 1.0
    }

    /// A uniform index below `n` (n > 0), via the double as sysbench does.
    #[inline(always)]
    pub fn below(&mut self, n: usize) -> usize {
        let i = (self.next_f64() * n as f64) as usize;
        i.min(n - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_stay_in_unit_interval() {
        let mut r = Xoroshiro128Plus::seeded(1);
        for _ in 0..100_000 {
            let d = r.next_f64();
            assert!((0.0..1.0).contains(&d));
        }
    }

    #[test]
    fn known_step() {
        // One step by hand: result = s0 + s1 and the state update of the 2016 variant.
        let mut r = Xoroshiro128Plus { s0: 1, s1: 2 };
        assert_eq!(r.next_u64(), 3);
        let s1 = 2u64 ^ 1;
        assert_eq!(r.s0, 1u64.rotate_left(55) ^ s1 ^ (s1 << 14));
        assert_eq!(r.s1, s1.rotate_left(36));
    }

    #[test]
    fn below_is_roughly_uniform() {
        let mut r = Xoroshiro128Plus::seeded(7);
        let mut hits = [0u32; 8];
        for _ in 0..80_000 {
            hits[r.below(8)] += 1;
        }
        assert!(
            hits.iter().all(|&h| (9_000..11_000).contains(&h)),
            "{hits:?}"
        );
    }
}

//! Which key a request uses. redis-benchmark draws `__rand_int__` from glibc's
//! `random()`; `GlibcRandom` is that generator (the additive-feedback TYPE_3 variant,
//! reimplemented from its published description) so `--seed N` gives the same draws.
//! Native runs pick keys from a distribution: uniform, sequential, gaussian or zipf.

use crate::measure::rng::Xoroshiro128Plus;
use serde::Serialize;

/// glibc `random()` after `srandom(seed)`.
#[derive(Debug, Clone)]
pub struct GlibcRandom {
    /// r[k] lives in slot k % 34.
    r: [u32; 34],
    k: usize,
}

impl GlibcRandom {
    pub fn new(seed: u32) -> Self {
        let mut r = [0u32; 34];
        r[0] = if seed == 0 { 1 } else { seed };
        for i in 1..31 {
            // 16807 * r mod (2^31 - 1) on the signed word, as glibc's initialiser.
            let prev = r[i - 1] as i32 as i64;
            let v = (16807 * prev).rem_euclid(2_147_483_647);
            r[i] = v as u32;
        }
        for i in 31..34 {
            r[i] = r[i - 31];
        }
        let mut g = Self { r, k: 34 };
        for _ in 34..344 {
            g.step();
        }
        g
    }

    #[inline]
    fn step(&mut self) -> u32 {
        // r[k] = r[k-31] + r[k-3]
        let v = self.r[(self.k + 3) % 34].wrapping_add(self.r[(self.k + 31) % 34]);
        self.r[self.k % 34] = v;
        self.k = 34 + (self.k + 1) % 34;
        v
    }

    /// The next value in 0..2^31.
    #[inline]
    pub fn draw(&mut self) -> u32 {
        self.step() >> 1
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum KeyDist {
    Uniform,
    /// Each thread walks its own slice of the key space in order.
    Sequential,
    /// Centred on the middle of the key space.
    Gaussian {
        stddev_fraction: f64,
    },
    Zipf {
        exponent: f64,
    },
}

/// Draws key numbers in `0..count` from a distribution.
#[derive(Debug, Clone)]
pub struct KeyPicker {
    count: u64,
    dist: KeyDist,
    rng: Xoroshiro128Plus,
    next_seq: u64,
    zipf: Option<Zipf>,
    spare_normal: Option<f64>,
}

impl KeyPicker {
    pub fn new(count: u64, dist: KeyDist, seed: u64, slice: (u64, u64)) -> Self {
        let count = count.max(1);
        let zipf = match dist {
            KeyDist::Zipf { exponent } => Some(Zipf::new(count, exponent)),
            _ => None,
        };
        Self {
            count,
            dist,
            rng: Xoroshiro128Plus::seeded(seed),
            next_seq: count * slice.0 / slice.1.max(1),
            zipf,
            spare_normal: None,
        }
    }

    #[inline]
    pub fn draw(&mut self) -> u64 {
        match self.dist {
            KeyDist::Uniform => self.rng.next_u64() % self.count,
            KeyDist::Sequential => {
                let k = self.next_seq;
                self.next_seq = (k + 1) % self.count;
                k
            }
            KeyDist::Gaussian { stddev_fraction } => {
                let mean = (self.count as f64 - 1.0) / 2.0;
                let sd = self.count as f64 * stddev_fraction;
                loop {
                    let v = mean + sd * self.normal();
                    if v >= 0.0 && v < self.count as f64 {
                        return v as u64;
                    }
                }
            }
            KeyDist::Zipf { .. } => {
                let z = self.zipf.as_ref().expect("zipf built with the picker");
                z.sample(&mut self.rng) - 1
            }
        }
    }

    /// A standard normal deviate (Box-Muller, both halves used).
    fn normal(&mut self) -> f64 {
        if let Some(v) = self.spare_normal.take() {
            return v;
        }
        let u1 = self.rng.next_f64().max(f64::MIN_POSITIVE);
        let u2 = self.rng.next_f64();
        let r = (-2.0 * u1.ln()).sqrt();
        let t = std::f64::consts::TAU * u2;
        self.spare_normal = Some(r * t.sin());
        r * t.cos()
    }
}

/// Zipf over ranks 1..=n with P(k) ~ 1/k^s, by rejection-inversion (Hörmann and
/// Derflinger 1996): constant time per draw, no table, any n.
#[derive(Debug, Clone)]
struct Zipf {
    n: f64,
    s: f64,
    h_integral_x1: f64,
    h_integral_n: f64,
    threshold: f64,
}

impl Zipf {
    fn new(n: u64, s: f64) -> Self {
        let mut z = Self {
            n: n as f64,
            s,
            h_integral_x1: 0.0,
            h_integral_n: 0.0,
            threshold: 0.0,
        };
        z.h_integral_x1 = z.h_integral(1.5) - 1.0;
        z.h_integral_n = z.h_integral(z.n + 0.5);
        z.threshold = 2.0 - z.h_integral_inv(z.h_integral(2.5) - z.h(2.0));
        z
    }

    fn h(&self, x: f64) -> f64 {
        (-self.s * x.ln()).exp()
    }

    /// Integral of h from 1 to x, shifted: ((x^(1-s)) - 1) / (1 - s), or ln x at s = 1.
    fn h_integral(&self, x: f64) -> f64 {
        let lx = x.ln();
        expm1_over_x((1.0 - self.s) * lx) * lx
    }

    fn h_integral_inv(&self, x: f64) -> f64 {
        let mut t = x * (1.0 - self.s);
        if t < -1.0 {
            t = -1.0;
        }
        (ln1p_over_x(t) * x).exp()
    }

    fn sample(&self, rng: &mut Xoroshiro128Plus) -> u64 {
        loop {
            let u = self.h_integral_n + rng.next_f64() * (self.h_integral_x1 - self.h_integral_n);
            let x = self.h_integral_inv(u);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.threshold || u >= self.h_integral(k + 0.5) - self.h(k) {
                return k as u64;
            }
        }
    }
}

fn expm1_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x / 2.0 * (1.0 + x / 3.0 * (1.0 + x / 4.0))
    }
}

fn ln1p_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glibc_random_first_values() {
        // glibc: srandom(1) then random() gives 1804289383, 846930886, 1681692777.
        let mut g = GlibcRandom::new(1);
        assert_eq!(
            [g.draw(), g.draw(), g.draw()],
            [1_804_289_383, 846_930_886, 1_681_692_777]
        );
    }

    #[test]
    fn distributions_stay_in_range_and_have_their_shape() {
        let n = 1000;
        for dist in [
            KeyDist::Uniform,
            KeyDist::Sequential,
            KeyDist::Gaussian {
                stddev_fraction: 1.0 / 6.0,
            },
            KeyDist::Zipf { exponent: 1.0 },
            KeyDist::Zipf { exponent: 0.5 },
        ] {
            let mut p = KeyPicker::new(n, dist, 7, (0, 1));
            let mut hist = vec![0u64; n as usize];
            for _ in 0..100_000 {
                let k = p.draw();
                assert!(k < n, "{dist:?} gave {k}");
                hist[k as usize] += 1;
            }
            match dist {
                KeyDist::Zipf { exponent: 1.0 } => {
                    // Rank 1 holds about 1/H(1000) = 13 % of draws, rank 2 half of that.
                    assert!((11_000..15_500).contains(&hist[0]), "{}", hist[0]);
                    assert!(hist[1] * 2 > hist[0] * 8 / 10 && hist[1] * 2 < hist[0] * 12 / 10);
                }
                KeyDist::Gaussian { .. } => {
                    let middle: u64 = hist[400..600].iter().sum();
                    assert!(middle > 40_000, "{middle}");
                }
                KeyDist::Sequential => assert!(hist.iter().all(|&c| c == 100)),
                _ => assert!(hist.iter().all(|&c| c > 0)),
            }
        }
    }
}

//! Bursts and sustained rates: finding the one lasting fall in a timeline.
//!
//! A cloud disk or CPU on burst credits runs fast until the credits are spent, then
//! at its baseline for as long as the load lasts; a write cache fills and the device's
//! own speed shows. Either way the timeline has two levels, and the figure a buyer
//! lives with is the second. The method:
//!
//! 1. **Where**: the split that explains the most of the timeline's variance as two
//!    levels (least squares, one change point: the split maximising
//!    `k (n − k) / n · (mean₁ − mean₂)²`), over splits that leave each phase at least
//!    [`Rule::min_phase`] samples.
//! 2. **Whether**, all of:
//!    - the rate **falls by at least a quarter** (`mean₂ ≤ 0.75 · mean₁`);
//!    - the fall is far beyond the noise: Welch's t of the two phases is at least
//!      [`Rule::min_t`] (8);
//!    - **it stays there**: at most a tenth of the later samples are back above the
//!      midpoint of the two levels, and at most a tenth of the earlier ones were
//!      already below it. A noisy but level timeline has a fifth or more of its samples
//!      on the wrong side of any such midpoint, so it is not split.
//!
//! One change is reported, the lasting fall; a rise (a slow start) is not a burst. The
//! levels reported leave out the two samples at the split ([`levels`]): one of them
//! holds the moment of the switch, and its rate is a mix of both.

/// The thresholds; [`Rule::default`] is the documented rule.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// The later level is at most this share of the earlier one (0.75: a fall of a quarter).
    pub max_ratio: f64,
    /// Each phase has at least this many samples (a sample is one timeline interval).
    pub min_phase: usize,
    /// Welch's t statistic of the two phases at least this.
    pub min_t: f64,
    /// At most this share of either phase on the other side of the levels' midpoint.
    pub max_stray: f64,
}

impl Default for Rule {
    fn default() -> Self {
        Rule {
            max_ratio: 0.75,
            min_phase: 3,
            min_t: 8.0,
            max_stray: 0.10,
        }
    }
}

/// Two levels: samples `..split` at `before`, `split..` at `after`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fall {
    pub split: usize,
    pub before: f64,
    pub after: f64,
}

/// The lasting fall in `values` (equal-length intervals), if there is one.
pub fn find(values: &[f64], rule: &Rule) -> Option<Fall> {
    let n = values.len();
    let min = rule.min_phase.max(2);
    if n < 2 * min || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let mut prefix = Vec::with_capacity(n + 1);
    prefix.push(0.0);
    for v in values {
        prefix.push(prefix.last().copied().unwrap_or(0.0) + v);
    }
    let mean = |a: usize, b: usize| (prefix[b] - prefix[a]) / (b - a) as f64;
    let (mut best, mut best_gain) = (None, 0.0);
    for k in min..=n - min {
        let (m1, m2) = (mean(0, k), mean(k, n));
        let gain = (k * (n - k)) as f64 / n as f64 * (m1 - m2).powi(2);
        if m2 < m1 && gain > best_gain {
            (best, best_gain) = (Some(k), gain);
        }
    }
    let split = best?;
    let (early, late) = values.split_at(split);
    let (before, after) = (mean(0, split), mean(split, n));
    if before <= 0.0 || after > rule.max_ratio * before {
        return None;
    }
    if welch_t(early, late) < rule.min_t {
        return None;
    }
    let mid = (before + after) / 2.0;
    let stray = |s: &[f64], wrong: &dyn Fn(f64) -> bool| {
        s.iter().filter(|v| wrong(**v)).count() as f64 / s.len() as f64
    };
    if stray(late, &|v| v > mid) > rule.max_stray || stray(early, &|v| v < mid) > rule.max_stray {
        return None;
    }
    let (early, late) = levels(values, split);
    Some(Fall {
        split,
        before: early.iter().sum::<f64>() / early.len() as f64,
        after: late.iter().sum::<f64>() / late.len() as f64,
    })
}

/// The samples each level is measured on: those of the two phases, less the sample
/// on either side of the split (one of them straddles the switch).
pub fn levels(values: &[f64], split: usize) -> (&[f64], &[f64]) {
    let early = &values[..split];
    let late = &values[split..];
    (
        &early[..early.len() - usize::from(early.len() > 2)],
        &late[usize::from(late.len() > 2)..],
    )
}

/// Welch's t for the difference of the means of `a` and `b` (∞ when neither varies).
fn welch_t(a: &[f64], b: &[f64]) -> f64 {
    let stats = |s: &[f64]| {
        let m = s.iter().sum::<f64>() / s.len() as f64;
        let var = s.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (s.len() - 1) as f64;
        (m, var / s.len() as f64)
    };
    let ((ma, va), (mb, vb)) = (stats(a), stats(b));
    let se = (va + vb).sqrt();
    if se == 0.0 {
        return if ma == mb { 0.0 } else { f64::INFINITY };
    }
    (ma - mb).abs() / se
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::rng::Xoroshiro128Plus;

    /// `level ± noise` (uniform), `n` samples.
    fn noisy(rng: &mut Xoroshiro128Plus, n: usize, level: f64, noise: f64) -> Vec<f64> {
        (0..n)
            .map(|_| level + noise * (2.0 * rng.next_f64() - 1.0))
            .collect()
    }

    #[test]
    fn a_burst_then_a_baseline_is_split_where_it_fell() {
        let mut rng = Xoroshiro128Plus::seeded(7);
        let mut v = noisy(&mut rng, 250, 16_200.0, 800.0);
        v.extend(noisy(&mut rng, 350, 3_000.0, 300.0));
        let f = find(&v, &Rule::default()).expect("a fall");
        assert_eq!(f.split, 250);
        assert!((f.before - 16_200.0).abs() < 200.0, "{f:?}");
        assert!((f.after - 3_000.0).abs() < 60.0, "{f:?}");
    }

    #[test]
    fn the_window_holding_the_switch_is_in_neither_level() {
        let mut v = vec![8000.0; 4];
        v.push(5000.0);
        v.extend(vec![2000.0; 5]);
        let f = find(&v, &Rule::default()).expect("a fall");
        assert_eq!((f.before, f.after), (8000.0, 2000.0), "{f:?}");
    }

    #[test]
    fn a_level_timeline_is_not_split_however_noisy() {
        for seed in 0..200 {
            let mut rng = Xoroshiro128Plus::seeded(seed);
            let n = 5 + (seed as usize * 7) % 120;
            // ±50 %: far noisier than any disk a buyer would keep.
            let v = noisy(&mut rng, n, 1000.0, 500.0);
            assert_eq!(find(&v, &Rule::default()), None, "seed {seed}: {v:?}");
        }
    }

    #[test]
    fn a_level_timeline_with_spikes_is_not_split() {
        let mut v = vec![1000.0; 60];
        for i in (0..60).step_by(7) {
            v[i] = 3000.0;
        }
        v[0] = 5000.0;
        v[1] = 5000.0;
        assert_eq!(find(&v, &Rule::default()), None);
    }

    #[test]
    fn a_small_fall_is_not_a_burst() {
        let mut v = vec![1000.0; 30];
        v.extend(vec![800.0; 30]);
        assert_eq!(find(&v, &Rule::default()), None);
        let mut v = vec![1000.0; 30];
        v.extend(vec![740.0; 30]);
        assert_eq!(find(&v, &Rule::default()).map(|f| f.split), Some(30));
    }

    #[test]
    fn a_fall_that_recovers_does_not_stay_there() {
        // Fast, slow for a third, fast again: no lasting fall.
        let mut v = vec![1000.0; 20];
        v.extend(vec![300.0; 20]);
        v.extend(vec![1000.0; 20]);
        assert_eq!(find(&v, &Rule::default()), None);
    }

    #[test]
    fn a_rise_is_not_a_burst() {
        let mut v = vec![300.0; 20];
        v.extend(vec![1000.0; 20]);
        assert_eq!(find(&v, &Rule::default()), None);
    }

    #[test]
    fn phases_shorter_than_the_minimum_are_not_reported() {
        let mut v = vec![1000.0; 2];
        v.extend(vec![100.0; 30]);
        assert_eq!(find(&v, &Rule::default()), None);
        assert_eq!(
            find(&[1000.0, 1000.0, 100.0, 100.0], &Rule::default()),
            None
        );
        assert_eq!(find(&[], &Rule::default()), None);
    }

    #[test]
    fn a_sample_that_is_not_a_number_disables_the_check() {
        let mut v = vec![1000.0; 20];
        v.extend(vec![100.0; 20]);
        v[5] = f64::NAN;
        assert_eq!(find(&v, &Rule::default()), None);
    }
}

//! The arithmetic of a soak: min / max / mean / median, the coefficient of variation,
//! the deepest drop from a previous peak, and the slices below a share of the median.
//! Pure functions of the measured slices, so `soak --show` and the report recompute
//! exactly what the live run printed.

use crate::model::Better;
use serde::Serialize;

/// One measured slice: its place in the schedule and its headline figure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub seq: u32,
    pub value: f64,
}

/// The largest fall from an earlier peak (for lower-is-better figures: the largest
/// rise from an earlier low), in % of that peak.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Drop {
    pub percent: f64,
    pub peak_seq: u32,
    pub peak: f64,
    pub trough_seq: u32,
    pub trough: f64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Stats {
    /// Measured slices.
    pub n: usize,
    pub min: f64,
    pub min_seq: u32,
    pub max: f64,
    pub max_seq: u32,
    pub mean: f64,
    pub median: f64,
    /// Sample standard deviation (n - 1), 0 for one slice.
    pub stddev: f64,
    /// stddev / mean, in %.
    pub cv_percent: f64,
    pub deepest_drop: Option<Drop>,
    /// A slice worse than this share of the median is flagged.
    pub threshold_percent: f64,
    /// The figure that share stands for (median × threshold, or median ÷ threshold
    /// when lower is better).
    pub threshold_value: f64,
    /// Flagged slices (seq), in schedule order.
    pub flagged: Vec<u32>,
    pub better: Better,
}

pub fn median(values: &[f64]) -> f64 {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    }
}

/// Statistics over the measured slices (in schedule order); None when there are none.
pub fn compute(points: &[Point], threshold_percent: f64, better: Better) -> Option<Stats> {
    let points: Vec<Point> = points
        .iter()
        .copied()
        .filter(|p| p.value.is_finite())
        .collect();
    let first = points.first()?;
    let n = points.len();
    let values: Vec<f64> = points.iter().map(|p| p.value).collect();
    let mean = values.iter().sum::<f64>() / n as f64;
    let stddev = if n > 1 {
        (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    let (mut min, mut max) = (*first, *first);
    for p in &points {
        if p.value < min.value {
            min = *p;
        }
        if p.value > max.value {
            max = *p;
        }
    }
    let median = median(&values);
    let share = threshold_percent / 100.0;
    let threshold_value = match better {
        Better::Higher => median * share,
        Better::Lower => median / share,
    };
    let flagged = points
        .iter()
        .filter(|p| match better {
            Better::Higher => p.value < threshold_value,
            Better::Lower => p.value > threshold_value,
        })
        .map(|p| p.seq)
        .collect();
    Some(Stats {
        n,
        min: min.value,
        min_seq: min.seq,
        max: max.value,
        max_seq: max.seq,
        mean,
        median,
        stddev,
        cv_percent: if mean != 0.0 {
            stddev / mean.abs() * 100.0
        } else {
            0.0
        },
        deepest_drop: deepest_drop(&points, better),
        threshold_percent,
        threshold_value,
        flagged,
        better,
    })
}

/// Walks the slices once, keeping the best figure so far; the drop is the largest
/// fall below it. None when the figure never got worse than an earlier one.
pub fn deepest_drop(points: &[Point], better: Better) -> Option<Drop> {
    let mut peak: Option<Point> = None;
    let mut deepest: Option<Drop> = None;
    for p in points {
        let Some(best) = peak else {
            peak = Some(*p);
            continue;
        };
        let improves = match better {
            Better::Higher => p.value > best.value,
            Better::Lower => p.value < best.value,
        };
        if improves {
            peak = Some(*p);
            continue;
        }
        if best.value == 0.0 {
            continue;
        }
        let percent = (best.value - p.value).abs() / best.value.abs() * 100.0;
        if percent > 0.0 && deepest.as_ref().is_none_or(|d| percent > d.percent) {
            deepest = Some(Drop {
                percent,
                peak_seq: best.seq,
                peak: best.value,
                trough_seq: p.seq,
                trough: p.value,
            });
        }
    }
    deepest
}

/// Above this coefficient of variation a soak without flagged slices is called
/// variable rather than stable. Seed 002's cloud disk swung about 10 % over a day
/// and its authors still called it stable; above that, the swings are worth a look.
pub const STABLE_CV_PERCENT: f64 = 10.0;

#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Stable,
    Variable,
    Unstable,
    /// Fewer than two measured slices: nothing to judge.
    Undecided,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Verdict {
    pub kind: Kind,
    /// One plain-language line.
    pub text: String,
}

/// The verdict line. `when` names a slice for people (its time); `missed` and
/// `failed` count the slices that did not measure.
pub fn verdict(
    stats: Option<&Stats>,
    missed: usize,
    failed: usize,
    when: impl Fn(u32) -> String,
) -> Verdict {
    let mut gaps = Vec::new();
    if missed > 0 {
        gaps.push(format!(
            "{missed} slice{} missed",
            if missed == 1 { "" } else { "s" }
        ));
    }
    if failed > 0 {
        gaps.push(format!("{failed} failed"));
    }
    let gaps = if gaps.is_empty() {
        String::new()
    } else {
        format!("; {}", gaps.join(", "))
    };
    let Some(s) = stats.filter(|s| s.n >= 2) else {
        let n = stats.map_or(0, |s| s.n);
        return Verdict {
            kind: Kind::Undecided,
            text: format!(
                "undecided: {n} slice{} measured, at least 2 are needed{gaps}",
                if n == 1 { "" } else { "s" }
            ),
        };
    };
    let t = s.threshold_percent;
    let (kind, text) = if !s.flagged.is_empty() {
        // When anything is flagged, the worst slice (the lowest, or for latencies the
        // highest) is.
        let (worst, worst_seq, side) = match s.better {
            Better::Higher => (s.min, s.min_seq, "below"),
            Better::Lower => (s.max, s.max_seq, "above"),
        };
        (
            Kind::Unstable,
            format!(
                "unstable: {} of {} slices {side} {t:.0} % of the median (worst {:.0} % at {}), CV {:.1} %",
                s.flagged.len(),
                s.n,
                worst / s.median * 100.0,
                when(worst_seq),
                s.cv_percent
            ),
        )
    } else if s.cv_percent > STABLE_CV_PERCENT {
        (
            Kind::Variable,
            format!(
                "variable: CV {:.1} % (above {STABLE_CV_PERCENT:.0} %), though no slice fell below {t:.0} % of the median",
                s.cv_percent
            ),
        )
    } else {
        (
            Kind::Stable,
            format!(
                "stable: CV {:.1} %, no slice below {t:.0} % of the median",
                s.cv_percent
            ),
        )
    };
    Verdict {
        kind,
        text: text + &gaps,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn points(values: &[f64]) -> Vec<Point> {
        values
            .iter()
            .enumerate()
            .map(|(i, &value)| Point {
                seq: i as u32,
                value,
            })
            .collect()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn known_numbers() {
        // mean 2500, deviations -100 0 +100 -200 +200: sum of squares 100000,
        // sample variance 25000, σ = 158.113883..., CV = 6.32455532 %.
        let s = compute(
            &points(&[2400.0, 2500.0, 2600.0, 2300.0, 2700.0]),
            80.0,
            Better::Higher,
        )
        .unwrap();
        assert_eq!(s.n, 5);
        assert_eq!((s.min, s.min_seq, s.max, s.max_seq), (2300.0, 3, 2700.0, 4));
        assert!(close(s.mean, 2500.0));
        assert!(close(s.median, 2500.0));
        assert!(close(s.stddev, 25_000f64.sqrt()), "{}", s.stddev);
        assert!(
            close(s.cv_percent, 6.324_555_320_336_759),
            "{}",
            s.cv_percent
        );
        // Peak 2600 (slice 2), then 2300 (slice 3): 300 / 2600 = 11.538 %.
        let d = s.deepest_drop.unwrap();
        assert_eq!((d.peak_seq, d.trough_seq), (2, 3));
        assert!(close(d.percent, 300.0 / 2600.0 * 100.0), "{}", d.percent);
        assert!(close(s.threshold_value, 2000.0));
        assert!(s.flagged.is_empty());
    }

    #[test]
    fn the_deepest_drop_is_from_the_running_peak_not_the_global_max() {
        // 100 -> 50 is a 50 % fall; the later peak 200 -> 150 is only 25 %.
        let d = deepest_drop(&points(&[100.0, 50.0, 200.0, 150.0]), Better::Higher).unwrap();
        assert_eq!((d.peak_seq, d.trough_seq), (0, 1));
        assert!(close(d.percent, 50.0));
        // Never falling: no drop.
        assert!(deepest_drop(&points(&[1.0, 2.0, 3.0]), Better::Higher).is_none());
        // Lower is better (latency): a rise from the best low.
        let d = deepest_drop(&points(&[10.0, 8.0, 12.0]), Better::Lower).unwrap();
        assert_eq!((d.peak_seq, d.trough_seq), (1, 2));
        assert!(close(d.percent, 50.0));
    }

    #[test]
    fn slices_below_the_threshold_are_flagged() {
        // Median 2545 (even count: mean of 2500 and 2590); 80 % of it is 2036.
        let s = compute(
            &points(&[2600.0, 2590.0, 2000.0, 2500.0, 2450.0, 2610.0]),
            80.0,
            Better::Higher,
        )
        .unwrap();
        assert!(close(s.median, 2545.0), "{}", s.median);
        assert_eq!(s.flagged, vec![2]);
        let v = verdict(Some(&s), 1, 0, |seq| format!("slice {}", seq + 1));
        assert_eq!(v.kind, Kind::Unstable);
        assert!(
            v.text.starts_with(
                "unstable: 1 of 6 slices below 80 % of the median (worst 79 % at slice 3)"
            ),
            "{}",
            v.text
        );
        assert!(v.text.ends_with("; 1 slice missed"), "{}", v.text);
    }

    #[test]
    fn verdicts() {
        let stable = compute(&points(&[100.0, 101.0, 99.0]), 80.0, Better::Higher).unwrap();
        let v = verdict(Some(&stable), 0, 0, |_| String::new());
        assert_eq!(v.kind, Kind::Stable);
        assert_eq!(
            v.text,
            "stable: CV 1.0 %, no slice below 80 % of the median"
        );
        let variable =
            compute(&points(&[100.0, 120.0, 85.0, 100.0]), 80.0, Better::Higher).unwrap();
        assert_eq!(
            verdict(Some(&variable), 0, 0, |_| String::new()).kind,
            Kind::Variable
        );
        let one = compute(&points(&[100.0]), 80.0, Better::Higher).unwrap();
        let v = verdict(Some(&one), 3, 0, |_| String::new());
        assert_eq!(v.kind, Kind::Undecided);
        assert_eq!(
            v.text,
            "undecided: 1 slice measured, at least 2 are needed; 3 slices missed"
        );
        assert_eq!(verdict(None, 0, 1, |_| String::new()).kind, Kind::Undecided);
        // Latency: a slice far above the median is the bad one.
        let lat = compute(&points(&[10.0, 10.0, 10.0, 20.0]), 80.0, Better::Lower).unwrap();
        assert_eq!(lat.flagged, vec![3]);
    }
}

//! The double-precision Whetstone of Longbottom and Aburto (1997) that UnixBench runs,
//! written from its description (reference §5.4): eight sections whose inner loops
//! run `constant × 100` times inside an outer loop of `xtra` passes, timed in user CPU
//! time (UnixBench 5.1.3 builds it with `-DUNIX`: `getrusage`; 6.0.0 switched to the
//! wall clock); a calibration finds the `xtra` that lasts the target duration.
//! MWIPS = xtra × 100 / (10 × time used), where section 1 runs ten times longer than
//! it is credited for. As in gcc's build of the single C file, the small procedures
//! of sections 6 and 7 are inlined, section 2's is a call, and `sin(x)*cos(x)` is one
//! `sincos` call.

use std::hint::black_box;
use std::time::Duration;

unsafe extern "C" {
    /// The C library's combined sine and cosine (libm), which gcc -ffast-math calls
    /// for `sin(x)*cos(x)`.
    fn sincos(x: f64, sin: *mut f64, cos: *mut f64);
}

#[inline(always)]
fn sin_cos(x: f64) -> (f64, f64) {
    let (mut s, mut c) = (0.0, 0.0);
    // SAFETY: two valid out-pointers.
    unsafe { sincos(x, &mut s, &mut c) };
    (s, c)
}

/// User CPU time of this process, seconds (the `-DUNIX` timer of whets.c).
struct Clock(f64);

impl Clock {
    fn now() -> Clock {
        Clock(user_seconds())
    }
    fn elapsed(&self) -> f64 {
        user_seconds() - self.0
    }
}

fn user_seconds() -> f64 {
    // SAFETY: getrusage fills the zeroed struct.
    unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage.ru_utime.tv_sec as f64 + usage.ru_utime.tv_usec as f64 * 1e-6
    }
}

const X100: u64 = 100;
const T0: f64 = 0.499_999_75;
const T1: f64 = 0.500_000_25;
const T2: f64 = 2.0;

/// The result of the measured run.
#[derive(Debug, Clone, Copy)]
pub struct Whetstone {
    pub mwips: f64,
    /// Sum of the section times (section 1's divided by 10), CPU seconds.
    pub time_used: f64,
    /// The check values of the eight sections, for tests.
    pub checks: [f64; 8],
    /// Seconds per section (section 1 already divided by 10).
    pub section_s: [f64; 8],
}

/// Calibrates until one run takes more than `calibrate_above` (UnixBench: 0.5 s;
/// x5 passes per try, at most 10 tries), then runs for about `duration`.
pub fn run(duration: Duration, calibrate_above: Duration) -> Whetstone {
    let mut xtra: u64 = 1;
    let mut used = 0.0;
    for _ in 0..10 {
        used = sections(xtra).time_used;
        if used > calibrate_above.as_secs_f64() {
            break;
        }
        xtra *= 5;
    }
    if used > 0.0 {
        xtra = ((duration.as_secs_f64() * xtra as f64) / used) as u64;
    }
    let xtra = xtra.max(1);
    let mut result = sections(xtra);
    result.mwips = if result.time_used > 0.0 {
        (xtra as f64 * X100 as f64) / (10.0 * result.time_used)
    } else {
        0.0
    };
    result
}

/// One run of the eight sections with `xtra` outer passes each.
fn sections(xtra: u64) -> Whetstone {
    let xtra = black_box(xtra);
    let (n1, n2, n3, n4) = (12 * X100, 14 * X100, 345 * X100, 210 * X100);
    let (n5, n6, n7, n8) = (32 * X100, 899 * X100, 616 * X100, 93 * X100);
    let n1_mult = 10;
    let mut time_used = 0.0;
    let mut checks = [0.0; 8];
    let mut section_s = [0.0; 8];
    // Literal constants in the C source, so gcc knows them too; with -ffast-math it
    // divides by t1 as a multiplication by its reciprocal (t2 = 2 is exact either way).
    let (t0, t1, t2) = (T0, T1, T2);
    let t1_reciprocal = 1.0 / t1;
    let mut t = t0;

    // Section 1: array elements. Runs n1_mult times longer than it is credited for.
    let mut e1 = black_box([1.0, -1.0, -1.0, -1.0]);
    let clock = Clock::now();
    for _ in 0..xtra {
        for _ in 0..n1 * n1_mult {
            e1[0] = (e1[0] + e1[1] + e1[2] - e1[3]) * t;
            e1[1] = (e1[0] + e1[1] - e1[2] + e1[3]) * t;
            e1[2] = (e1[0] - e1[1] + e1[2] + e1[3]) * t;
            e1[3] = (-e1[0] + e1[1] + e1[2] + e1[3]) * t;
        }
        t = 1.0 - t;
    }
    t = t0;
    section_s[0] = clock.elapsed() / n1_mult as f64;
    time_used += section_s[0];
    checks[0] = black_box(e1[3]);

    // Section 2: an array passed to a procedure.
    let clock = Clock::now();
    for _ in 0..xtra {
        for _ in 0..n2 {
            pa(&mut e1, t, t2);
        }
        t = 1.0 - t;
    }
    t = t0;
    section_s[1] = clock.elapsed();
    time_used += section_s[1];
    checks[1] = black_box(e1[3]);

    // Section 3: conditional jumps.
    let mut j: i64 = black_box(1);
    let clock = Clock::now();
    for _ in 0..xtra {
        for _ in 0..n3 {
            j = if j == 1 { 2 } else { 3 };
            j = if j > 2 { 0 } else { 1 };
            j = if j < 1 { 1 } else { 0 };
        }
        j = black_box(j);
    }
    section_s[2] = clock.elapsed();
    time_used += section_s[2];
    checks[2] = j as f64;

    // Section 4: integer arithmetic, indexing the array with the results.
    // Constants gcc sees (it folds this section away entirely); so may LLVM.
    let (mut j, mut k, mut l): (i64, i64, i64) = (1, 2, 3);
    let clock = Clock::now();
    for _ in 0..xtra {
        for _ in 0..n4 {
            j = j * (k - j) * (l - k);
            k = l * k - (l - j) * k;
            l = (l - k) * (k + j);
            e1[(l - 2) as usize] = (j + k + l) as f64;
            e1[(k - 2) as usize] = (j * k * l) as f64;
        }
        e1 = black_box(e1);
    }
    section_s[3] = clock.elapsed();
    time_used += section_s[3];
    checks[3] = e1[0] + e1[1];

    // Section 5: trigonometric functions.
    let (mut x, mut y) = (black_box(0.5f64), black_box(0.5f64));
    let clock = Clock::now();
    for _ in 0..xtra {
        for _ in 1..n5 {
            let (sx, cx) = sin_cos(x);
            x = t * (t2 * sx * cx / ((x + y).cos() + (x - y).cos() - 1.0)).atan();
            let (sy, cy) = sin_cos(y);
            y = t * (t2 * sy * cy / ((x + y).cos() + (x - y).cos() - 1.0)).atan();
        }
        t = 1.0 - t;
    }
    t = t0;
    section_s[4] = clock.elapsed();
    time_used += section_s[4];
    checks[4] = black_box(y);

    // Section 6: procedure calls.
    let (mut x, mut y, mut z) = (black_box(1.0f64), black_box(1.0f64), black_box(1.0f64));
    let clock = Clock::now();
    for _ in 0..xtra {
        for _ in 0..n6 {
            p3(&mut x, &mut y, &mut z, t, t1, t2);
        }
    }
    section_s[5] = clock.elapsed();
    time_used += section_s[5];
    checks[5] = black_box(z);

    // Section 7: array references.
    let (j, k, l) = (0usize, 1usize, 2usize);
    e1[0] = 1.0;
    e1[1] = 2.0;
    e1[2] = 3.0;
    let clock = Clock::now();
    for _ in 0..xtra {
        for _ in 0..n7 {
            po(&mut e1, j, k, l);
        }
        e1 = black_box(e1);
    }
    section_s[6] = clock.elapsed();
    time_used += section_s[6];
    checks[6] = e1[2];

    // Section 8: standard functions.
    let mut x = black_box(0.75f64);
    let clock = Clock::now();
    for _ in 0..xtra {
        for _ in 0..n8 {
            x = (x.ln() * t1_reciprocal).exp().sqrt();
        }
    }
    section_s[7] = clock.elapsed();
    time_used += section_s[7];
    checks[7] = black_box(x);

    Whetstone {
        mwips: 0.0,
        time_used,
        checks,
        section_s,
    }
}

#[inline(never)]
fn pa(e: &mut [f64; 4], t: f64, t2: f64) {
    for _ in 0..6 {
        e[0] = (e[0] + e[1] + e[2] - e[3]) * t;
        e[1] = (e[0] + e[1] - e[2] + e[3]) * t;
        e[2] = (e[0] - e[1] + e[2] + e[3]) * t;
        e[3] = (-e[0] + e[1] + e[2] + e[3]) / t2;
    }
}

#[inline]
fn p3(x: &mut f64, y: &mut f64, z: &mut f64, t: f64, t1: f64, t2: f64) {
    *x = *y;
    *y = *z;
    *x = t * (*x + *y);
    *y = t1 * (*x + *y);
    *z = (*x + *y) / t2;
}

#[inline]
fn po(e1: &mut [f64; 4], j: usize, k: usize, l: usize) {
    e1[j] = e1[k];
    e1[k] = e1[l];
    e1[l] = e1[j];
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Longbottom's published check values for one outer pass (double precision).
    #[test]
    fn check_values_of_one_pass() {
        let w = sections(1);
        assert_eq!(w.checks[2], 1.0);
        assert_eq!(w.checks[3], 12.0);
        assert_eq!(w.checks[6], 3.0);
        assert!((w.checks[4] - 0.499_04).abs() < 1e-3, "{}", w.checks[4]);
        assert!((w.checks[7] - 0.751_1).abs() < 1e-3, "{}", w.checks[7]);
    }

    #[test]
    fn calibrated_run_gives_a_rate() {
        let w = run(Duration::from_millis(50), Duration::from_millis(5));
        assert!(w.mwips > 0.0 && w.time_used > 0.0);
    }
}

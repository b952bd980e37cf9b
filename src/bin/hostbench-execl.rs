//! The execl test's program, kept apart from `hostbench` on purpose: UnixBench's execl
//! measures how fast a small C program can `execve` itself, and a large Rust binary
//! pays for its size on every exec (three shared libraries instead of one, the Rust
//! runtime's start-up, relocations), which would make the test measure hostbench
//! instead of the host. This binary has no Rust runtime start-up (`no_main`), uses
//! only the C library, and never panics.
//!
//! `hostbench-execl <seconds> <clock>` starts a run (clock: `wall` counts whole
//! seconds of `time()` as UnixBench does, `mono` the monotonic clock for fractional
//! durations); it then execs itself as `hostbench-execl - <seconds-or-ns> <count>
//! <start> <clock>` until the time is up and prints `COUNT|n|1|lps` on stderr.
// The test harness brings its own `main`; the real one exists outside tests.
#![cfg_attr(not(test), no_main)]
// Under test only the parsing helpers are exercised.
#![cfg_attr(test, allow(dead_code))]

use std::ffi::{c_char, c_int};

const USAGE: &[u8] = b"usage: hostbench-execl <seconds> wall|mono\n";

fn write_err(bytes: &[u8]) {
    // SAFETY: writing a valid buffer to stderr.
    unsafe { libc::write(2, bytes.as_ptr().cast(), bytes.len()) };
}

/// Decimal digits of `n` into `buf` with a NUL; returns the digits' length.
fn format_u64(mut n: u64, buf: &mut [u8; 24]) -> usize {
    let mut tmp = [0u8; 24];
    let mut len = 0;
    loop {
        tmp[len] = b'0' + (n % 10) as u8;
        len += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for i in 0..len {
        buf[i] = tmp[len - 1 - i];
    }
    buf[len] = 0;
    len
}

/// A decimal number from a C string; `None` if it is not one.
fn parse_u64(s: *const c_char) -> Option<u64> {
    if s.is_null() {
        return None;
    }
    let mut n: u64 = 0;
    let mut p = s;
    let mut any = false;
    // SAFETY: `s` is a NUL-terminated argv string.
    unsafe {
        while *p != 0 {
            let d = (*p as u8).wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            n = n.checked_mul(10)?.checked_add(d as u64)?;
            any = true;
            p = p.add(1);
        }
    }
    any.then_some(n)
}

fn is(s: *const c_char, text: &[u8]) -> bool {
    // SAFETY: comparing a NUL-terminated argv string byte by byte.
    unsafe {
        for (i, &b) in text.iter().enumerate() {
            if *s.add(i) as u8 != b {
                return false;
            }
        }
        *s.add(text.len()) == 0
    }
}

fn now(mono: bool) -> u64 {
    if mono {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid timespec.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    } else {
        // SAFETY: time(NULL) only reads the clock.
        unsafe { libc::time(std::ptr::null_mut()) as u64 }
    }
}

/// `limit` is whole seconds (wall) or nanoseconds (mono).
fn step(path: *const c_char, limit: u64, done: u64, start: u64, clock: *const c_char) -> c_int {
    let mono = is(clock, b"mono");
    let iterations = done + 1;
    if now(mono).saturating_sub(start) >= limit {
        let mut digits = [0u8; 24];
        let len = format_u64(iterations, &mut digits);
        write_err(b"COUNT|");
        write_err(&digits[..len]);
        write_err(b"|1|lps\n");
        return 0;
    }
    let (mut l, mut c, mut s) = ([0u8; 24], [0u8; 24], [0u8; 24]);
    format_u64(limit, &mut l);
    format_u64(iterations, &mut c);
    format_u64(start, &mut s);
    let argv: [*const c_char; 7] = [
        path,
        c"-".as_ptr(),
        l.as_ptr().cast(),
        c.as_ptr().cast(),
        s.as_ptr().cast(),
        clock,
        std::ptr::null(),
    ];
    // SAFETY: NUL-terminated strings in a NULL-terminated array, alive for the call.
    unsafe { libc::execv(path, argv.as_ptr()) };
    write_err(b"hostbench-execl: exec failed\n");
    1
}

/// # Safety
/// Called by the C runtime with a valid `argv` of `argc` entries.
#[cfg(not(test))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn main(argc: c_int, argv: *const *const c_char) -> c_int {
    // SAFETY: argv holds argc valid pointers followed by NULL.
    let arg = |i: c_int| -> *const c_char {
        if i < argc {
            unsafe { *argv.add(i as usize) }
        } else {
            std::ptr::null()
        }
    };
    let path = arg(0);
    if argc == 6 && is(arg(1), b"-") {
        return match (parse_u64(arg(2)), parse_u64(arg(3)), parse_u64(arg(4))) {
            (Some(limit), Some(done), Some(start)) => step(path, limit, done, start, arg(5)),
            _ => {
                write_err(USAGE);
                2
            }
        };
    }
    if argc == 3 && (is(arg(2), b"wall") || is(arg(2), b"mono")) {
        // First call: seconds as a decimal (milliseconds precision for mono).
        let mono = is(arg(2), b"mono");
        let Some(limit) = parse_millis(arg(1)) else {
            write_err(USAGE);
            return 2;
        };
        let limit = if mono {
            limit * 1_000_000
        } else {
            limit / 1000
        };
        return step(path, limit, 0, now(mono), arg(2));
    }
    write_err(USAGE);
    2
}

/// `30` or `0.25` -> milliseconds.
fn parse_millis(s: *const c_char) -> Option<u64> {
    if s.is_null() {
        return None;
    }
    let (mut whole, mut frac, mut scale, mut seen_dot, mut any) =
        (0u64, 0u64, 1000u64, false, false);
    let mut p = s;
    // SAFETY: a NUL-terminated argv string.
    unsafe {
        while *p != 0 {
            let ch = *p as u8;
            if ch == b'.' && !seen_dot {
                seen_dot = true;
            } else if ch.is_ascii_digit() {
                any = true;
                if seen_dot {
                    if scale > 1 {
                        scale /= 10;
                        frac += (ch - b'0') as u64 * scale;
                    }
                } else {
                    whole = whole.checked_mul(10)?.checked_add((ch - b'0') as u64)?;
                }
            } else {
                return None;
            }
            p = p.add(1);
        }
    }
    any.then(|| whole.saturating_mul(1000).saturating_add(frac))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_round_trip() {
        let mut buf = [0u8; 24];
        let len = format_u64(1234567890123, &mut buf);
        assert_eq!(&buf[..len], b"1234567890123");
        assert_eq!(buf[len], 0);
        assert_eq!(parse_u64(buf.as_ptr().cast()), Some(1234567890123));
        assert_eq!(parse_u64(c"12x".as_ptr()), None);
        assert_eq!(parse_u64(c"".as_ptr()), None);
    }

    #[test]
    fn durations_in_milliseconds() {
        assert_eq!(parse_millis(c"30".as_ptr()), Some(30_000));
        assert_eq!(parse_millis(c"0.25".as_ptr()), Some(250));
        assert_eq!(parse_millis(c"1.2345".as_ptr()), Some(1234));
        assert_eq!(parse_millis(c"-1".as_ptr()), None);
        assert!(is(c"mono".as_ptr(), b"mono") && !is(c"monox".as_ptr(), b"mono"));
    }
}

//! Sizes and durations, parsed and printed in one place.
//!
//! Native commands accept IEC sizes (`8K`, `8KiB`, `1M`, `10G`: powers of 1024) and
//! SI sizes when spelled with a `B` after a lower- or upper-case letter (`8kB`, `10GB`:
//! powers of 1000), and durations such as `10`, `10s`, `500ms`, `2m`, `1h`.
//! A personality parses its peer's own grammar (sysbench: `src/compat/sysbench`), but
//! prints sizes through the helpers here.

use std::time::Duration;
use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum UnitError {
    #[error("'{0}' is empty; give a number such as 8K or 10s")]
    Empty(String),
    #[error("'{input}' is not a number followed by a unit ({expected})")]
    Malformed {
        input: String,
        expected: &'static str,
    },
    #[error("'{input}' has an unknown unit '{suffix}' (use {expected})")]
    UnknownSuffix {
        input: String,
        suffix: String,
        expected: &'static str,
    },
    #[error("'{0}' is too large")]
    Overflow(String),
}

const SIZE_UNITS: &str = "K, M, G, T (x1024) or kB, MB, GB, TB (x1000)";
const TIME_UNITS: &str = "ns, us, ms, s, m, h or d";

/// Splits `"12.5ms"` into `("12.5", "ms")`, trimming surrounding blanks.
fn split_number(input: &str) -> (&str, &str) {
    let s = input.trim();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    (&s[..end], s[end..].trim())
}

/// Parses a byte size. Fractions are allowed (`1.5G`) and rounded down to a byte.
pub fn parse_size(input: &str) -> Result<u64, UnitError> {
    let (num, suffix) = split_number(input);
    if input.trim().is_empty() {
        return Err(UnitError::Empty(input.to_string()));
    }
    if num.is_empty() || num.matches('.').count() > 1 {
        return Err(UnitError::Malformed {
            input: input.to_string(),
            expected: SIZE_UNITS,
        });
    }
    let multiplier: u64 = match suffix {
        "" | "B" | "b" => 1,
        "K" | "k" | "Ki" | "KiB" | "kiB" => 1 << 10,
        "M" | "m" | "Mi" | "MiB" => 1 << 20,
        "G" | "g" | "Gi" | "GiB" => 1 << 30,
        "T" | "t" | "Ti" | "TiB" => 1 << 40,
        "kB" | "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        other => {
            return Err(UnitError::UnknownSuffix {
                input: input.to_string(),
                suffix: other.to_string(),
                expected: SIZE_UNITS,
            });
        }
    };
    scale(input, num, multiplier as f64)
}

/// Parses a duration; a bare number means seconds.
pub fn parse_duration(input: &str) -> Result<Duration, UnitError> {
    let (num, suffix) = split_number(input);
    if input.trim().is_empty() {
        return Err(UnitError::Empty(input.to_string()));
    }
    if num.is_empty() || num.matches('.').count() > 1 {
        return Err(UnitError::Malformed {
            input: input.to_string(),
            expected: TIME_UNITS,
        });
    }
    let ns_per_unit: f64 = match suffix {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "" | "s" | "sec" => 1e9,
        "m" | "min" => 60e9,
        "h" => 3600e9,
        "d" => 86400e9,
        other => {
            return Err(UnitError::UnknownSuffix {
                input: input.to_string(),
                suffix: other.to_string(),
                expected: TIME_UNITS,
            });
        }
    };
    let ns = scale(input, num, ns_per_unit)?;
    Ok(Duration::from_nanos(ns))
}

fn scale(input: &str, num: &str, multiplier: f64) -> Result<u64, UnitError> {
    let value: f64 = num.parse().map_err(|_| UnitError::Malformed {
        input: input.to_string(),
        expected: SIZE_UNITS,
    })?;
    let scaled = value * multiplier;
    // 2^63 leaves room for arithmetic on the result without overflow checks everywhere.
    if !scaled.is_finite() || scaled >= 9.2e18 {
        return Err(UnitError::Overflow(input.to_string()));
    }
    Ok(scaled as u64)
}

/// `8192` -> `8 KiB`, `1536` -> `1.5 KiB`: IEC, at most one decimal.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 || value.fract() == 0.0 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// Bytes per second as MiB/s or GiB/s, whichever reads better.
pub fn format_rate(bytes_per_sec: f64) -> String {
    let mib = bytes_per_sec / (1u64 << 20) as f64;
    if mib >= 10_240.0 {
        format!("{:.2} GiB/s", mib / 1024.0)
    } else {
        format!("{mib:.2} MiB/s")
    }
}

/// Bits per second, 1000-based, two decimals: `9.41 Gbit/s` (network
/// rates are written in bits, as every network tool writes them).
pub fn format_bits(bytes_per_sec: f64) -> String {
    let bits = bytes_per_sec * 8.0;
    let (v, unit) = if bits >= 1e9 {
        (bits / 1e9, "Gbit/s")
    } else if bits >= 1e6 {
        (bits / 1e6, "Mbit/s")
    } else if bits >= 1e3 {
        (bits / 1e3, "kbit/s")
    } else {
        (bits, "bit/s")
    };
    format!("{v:.2} {unit}")
}

/// A latency in nanoseconds, in the unit that keeps 3-4 significant digits.
pub fn format_ns(ns: f64) -> String {
    if ns < 1e3 {
        format!("{ns:.1} ns")
    } else if ns < 1e6 {
        format!("{:.2} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.3} s", ns / 1e9)
    }
}

/// `90s` -> `1m30s`; sub-second durations keep milliseconds.
pub fn format_duration(d: Duration) -> String {
    let secs = d.as_secs();
    if secs == 0 {
        return format!("{}ms", d.as_millis());
    }
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    match (h, m) {
        (0, 0) => format!("{:.1}s", d.as_secs_f64()),
        (0, _) => format!("{m}m{s:02}s"),
        _ => format!("{h}h{m:02}m{s:02}s"),
    }
}

/// C's `%.{significant}g`: that many significant digits, trailing zeros dropped,
/// exponent form outside 1e-4 .. 10^significant (dd's seconds, sysbench's sizes).
pub fn format_g(v: f64, significant: usize) -> String {
    if v == 0.0 || !v.is_finite() {
        return if v.is_finite() {
            "0".into()
        } else {
            v.to_string()
        };
    }
    let p = significant.max(1) as i32;
    let exp = v.abs().log10().floor() as i32;
    if !(-4..p).contains(&exp) {
        let s = format!("{:.*e}", (p - 1) as usize, v);
        let (mantissa, e) = s.split_once('e').unwrap_or((&s, "0"));
        let mantissa = if mantissa.contains('.') {
            mantissa.trim_end_matches('0').trim_end_matches('.')
        } else {
            mantissa
        };
        let e: i32 = e.parse().unwrap_or(0);
        return format!("{mantissa}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs());
    }
    let decimals = (p - 1 - exp).max(0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Bytes in the largest IEC unit that keeps the number at or above 1, with five
/// significant digits: `333.33KiB`, `1.5MiB`, `1000KiB`, `100B` (sysbench's sizes).
pub fn format_size_g(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{}{}", format_g(v, 5), UNITS[unit])
}

/// `1234567.8` -> `1,234,567.80`.
pub fn thousands(value: f64, decimals: usize) -> String {
    let s = format!("{:.*}", decimals, value.abs());
    let (int, frac) = s
        .split_once('.')
        .map_or((s.as_str(), None), |(i, f)| (i, Some(f)));
    let mut grouped = String::new();
    for (i, ch) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(ch);
    }
    let sign = if value < 0.0 { "-" } else { "" };
    match frac {
        Some(f) => format!("{sign}{grouped}.{f}"),
        None => format!("{sign}{grouped}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits() {
        assert_eq!(format_bits(1.25e9), "10.00 Gbit/s");
        assert_eq!(format_bits(625_000.0), "5.00 Mbit/s");
        assert_eq!(format_bits(10.0), "80.00 bit/s");
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("8K"), Ok(8192));
        assert_eq!(parse_size("8k"), Ok(8192));
        assert_eq!(parse_size("8KiB"), Ok(8192));
        assert_eq!(parse_size("8kB"), Ok(8000));
        assert_eq!(parse_size("10G"), Ok(10 << 30));
        assert_eq!(parse_size("1.5M"), Ok(3 << 19));
        assert_eq!(parse_size(" 4096 "), Ok(4096));
        assert_eq!(parse_size("0"), Ok(0));
    }

    #[test]
    fn bad_sizes_name_the_input() {
        for bad in ["8Q", "", "-1", "K", "1.2.3M", "abc", "99999999T"] {
            let err = parse_size(bad).unwrap_err();
            assert!(err.to_string().contains(&format!("'{bad}'")), "{err}");
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert!(parse_duration("5x").is_err());
        assert!(parse_duration("-5").is_err());
    }

    #[test]
    fn formatting() {
        assert_eq!(format_bytes(8192), "8 KiB");
        assert_eq!(format_bytes(1536), "1.5 KiB");
        assert_eq!(format_bytes(100), "100 B");
        assert_eq!(format_duration(Duration::from_secs(90)), "1m30s");
        assert_eq!(format_ns(1500.0), "1.50 µs");
    }

    /// A cheap fuzz: arbitrary byte strings must give Ok or Err, never a panic.
    #[test]
    fn parsers_never_panic() {
        let alphabet: Vec<char> = "0123456789.kKmMgGtTbBiIsShd -+eEµ\u{0}x".chars().collect();
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            let len = (state % 9) as usize;
            let s: String = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    alphabet[(state % alphabet.len() as u64) as usize]
                })
                .collect();
            let _ = parse_size(&s);
            let _ = parse_duration(&s);
        }
    }

    #[test]
    fn sizes_read_like_sysbenchs() {
        // Printed by sysbench 1.0.20's fileio header for these totals.
        assert_eq!(format_size_g(341333), "333.33KiB");
        assert_eq!(format_size_g(1536 << 10), "1.5MiB");
        assert_eq!(format_size_g(1000 << 10), "1000KiB");
        assert_eq!(format_size_g(100), "100B");
        assert_eq!(format_size_g(1023), "1023B");
        assert_eq!(format_size_g(3 << 30), "3GiB");
        assert_eq!(format_size_g(1025 << 10), "1.001MiB");
        assert_eq!(format_size_g(2049), "2.001KiB");
    }
}

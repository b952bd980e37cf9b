//! redis-benchmark 7.x's three output forms, byte for byte: the full report (header,
//! "Latency by percentile distribution", "Cumulative distribution of latencies",
//! "Summary"), `-q` and `--csv`, plus its `\r` progress line. Throughput and the
//! summary latencies are computed in f32, as redis-benchmark does, so the printed
//! digits agree.

use crate::measure::hdr::HdrHistogram;
use std::fmt::Write;

/// Server settings shown in the header (`CONFIG GET save/appendonly`).
#[derive(Debug, Clone, Default)]
pub struct HostConfig {
    pub save: String,
    pub appendonly: String,
}

/// One finished test, as the report needs it.
pub struct TestResult<'a> {
    pub title: &'a str,
    pub finished: u64,
    pub elapsed_ms: u64,
    pub clients: usize,
    pub datasize: usize,
    pub keepalive: bool,
    pub threads: usize,
    pub host_config: Option<&'a HostConfig>,
    /// Cluster mode: each master's settings (None where CONFIG GET failed); replaces
    /// the host configuration lines.
    pub cluster: Option<&'a [Option<HostConfig>]>,
    pub histogram: &'a HdrHistogram,
    /// Why the test stopped early, if it did.
    pub partial: Option<String>,
}

struct Summary {
    rps: f32,
    avg: f32,
    min: f32,
    p50: f32,
    p95: f32,
    p99: f32,
    max: f32,
}

fn ms(us: u64) -> f32 {
    us as f32 / 1000.0f32
}

fn summary(r: &TestResult) -> Summary {
    let h = r.histogram;
    Summary {
        rps: r.finished as f32 / (r.elapsed_ms as f32 / 1000.0f32),
        avg: (h.mean() / 1000.0) as f32,
        min: ms(h.min()),
        p50: ms(h.value_at_percentile(50.0)),
        p95: ms(h.value_at_percentile(95.0)),
        p99: ms(h.value_at_percentile(99.0)),
        max: ms(h.max()),
    }
}

/// C's `%f` of a float promoted to double; NaN prints as glibc does for 0.0/0.0.
fn c_f(v: f64, decimals: usize) -> String {
    if v.is_nan() {
        "-nan".into()
    } else if v.is_infinite() {
        if v > 0.0 { "inf".into() } else { "-inf".into() }
    } else {
        format!("{v:.decimals$}")
    }
}

pub fn full(r: &TestResult) -> String {
    let mut out = String::new();
    let s = summary(r);
    let _ = writeln!(out, "====== {} ======", r.title);
    let _ = writeln!(
        out,
        "  {} requests completed in {} seconds",
        r.finished,
        c_f((r.elapsed_ms as f32 / 1000.0f32) as f64, 2)
    );
    if let Some(why) = &r.partial {
        let _ = writeln!(out, "  PARTIAL RESULTS: {why}");
    }
    let _ = writeln!(out, "  {} parallel clients", r.clients);
    let _ = writeln!(out, "  {} bytes payload", r.datasize);
    let _ = writeln!(out, "  keep alive: {}", u8::from(r.keepalive));
    if let Some(nodes) = r.cluster {
        let _ = writeln!(out, "  cluster mode: yes ({} masters)", nodes.len());
        for (i, c) in nodes.iter().enumerate() {
            let Some(c) = c else { continue };
            let save = if c.save.is_empty() {
                "NONE"
            } else {
                c.save.as_str()
            };
            let _ = writeln!(out, "  node [{i}] configuration:");
            let _ = writeln!(out, "    save: {save}");
            let _ = writeln!(out, "    appendonly: {}", c.appendonly);
        }
    } else if let Some(c) = r.host_config {
        let _ = writeln!(out, "  host configuration \"save\": {}", c.save);
        let _ = writeln!(out, "  host configuration \"appendonly\": {}", c.appendonly);
    }
    let _ = writeln!(
        out,
        "  multi-thread: {}",
        if r.threads > 0 { "yes" } else { "no" }
    );
    if r.threads > 0 {
        let _ = writeln!(out, "  threads: {}", r.threads);
    }
    out.push('\n');

    out.push_str("Latency by percentile distribution:\n");
    distribution(
        &mut out,
        r.histogram,
        &r.histogram.percentile_steps(1),
        true,
    );
    out.push_str("\nCumulative distribution of latencies:\n");
    distribution(
        &mut out,
        r.histogram,
        &r.histogram.linear_steps(100, 1000, 2000),
        false,
    );
    out.push_str("\nSummary:\n");
    let _ = writeln!(
        out,
        "  throughput summary: {} requests per second",
        c_f(s.rps as f64, 2)
    );
    out.push_str("  latency summary (msec):\n");
    let _ = writeln!(
        out,
        "    {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "avg", "min", "p50", "p95", "p99", "max"
    );
    let cells: Vec<String> = [s.avg, s.min, s.p50, s.p95, s.p99, s.max]
        .iter()
        .map(|v| format!("{:>9}", c_f(*v as f64, 3)))
        .collect();
    let _ = writeln!(out, "    {}", cells.join(" "));
    out
}

/// A block of `P% <= V milliseconds (cumulative count N)` lines; a line is printed
/// when its count differs from the previous line's, or equals the total.
fn distribution(
    out: &mut String,
    h: &HdrHistogram,
    steps: &[crate::measure::hdr::Step],
    level_percentiles: bool,
) {
    let total = h.len();
    let mut previous: i64 = -1;
    for s in steps {
        if s.cumulative as i64 != previous || s.cumulative == total {
            let percentile = if level_percentiles {
                s.percentile
            } else {
                s.cumulative as f64 / total as f64 * 100.0
            };
            let _ = writeln!(
                out,
                "{}% <= {} milliseconds (cumulative count {})",
                c_f(percentile, 3),
                c_f(ms(s.highest_equivalent) as f64, 3),
                s.cumulative
            );
        }
        previous = s.cumulative as i64;
    }
}

pub fn quiet(r: &TestResult) -> String {
    let s = summary(r);
    let mut line = format!(
        "{}: {} requests per second, p50={} msec",
        r.title,
        c_f(s.rps as f64, 2),
        c_f(s.p50 as f64, 3)
    );
    if let Some(why) = &r.partial {
        let _ = write!(line, " (PARTIAL RESULTS: {why})");
    }
    line.push('\n');
    line
}

pub const CSV_HEADER: &str = "\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\",\"p50_latency_ms\",\"p95_latency_ms\",\"p99_latency_ms\",\"max_latency_ms\"\n";

pub fn csv(r: &TestResult) -> String {
    let s = summary(r);
    let f3 = |v: f32| c_f(v as f64, 3);
    format!(
        "\"{}\",\"{}\",\"{}\",\"{}\",\"{}\",\"{}\",\"{}\",\"{}\"\n",
        r.title,
        c_f(s.rps as f64, 2),
        f3(s.avg),
        f3(s.min),
        f3(s.p50),
        f3(s.p95),
        f3(s.p99),
        f3(s.max)
    )
}

/// The `\r` progress line: instantaneous and overall requests per second and mean
/// latency in ms.
pub fn progress(title: &str, inst_rps: f32, rps: f32, inst_avg_ms: f64, avg_ms: f64) -> String {
    format!(
        "{title}: rps={} (overall: {}) avg_msec={} (overall: {})\r",
        c_f(inst_rps as f64, 1),
        c_f(rps as f64, 1),
        c_f(inst_avg_ms, 3),
        c_f(avg_ms, 3)
    )
}

/// Blanks a progress line of `len` bytes (`printf("%*s\r", len, " ")`).
pub fn blank(len: usize) -> String {
    format!("{:>width$}\r", " ", width = len.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result<'a>(h: &'a HdrHistogram, cfg: &'a HostConfig) -> TestResult<'a> {
        TestResult {
            title: "GET",
            finished: h.len(),
            elapsed_ms: 174,
            clients: 50,
            datasize: 3,
            keepalive: true,
            threads: 0,
            host_config: Some(cfg),
            cluster: None,
            histogram: h,
            partial: None,
        }
    }

    #[test]
    fn throughput_is_computed_in_f32() {
        // reference: 200000 requests in 174 ms printed 1149425.38 (f64 gives .29).
        let mut h = HdrHistogram::redis_benchmark(3);
        h.record_n(300, 200_000);
        let cfg = HostConfig::default();
        let q = quiet(&result(&h, &cfg));
        assert_eq!(q, "GET: 1149425.38 requests per second, p50=0.303 msec\n");
    }

    #[test]
    fn full_report_layout() {
        let mut h = HdrHistogram::redis_benchmark(3);
        for v in [150u64, 260, 270, 280, 900, 2500] {
            h.record(v);
        }
        let cfg = HostConfig {
            save: String::new(),
            appendonly: "no".into(),
        };
        let text = full(&result(&h, &cfg));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "====== GET ======");
        assert_eq!(lines[1], "  6 requests completed in 0.17 seconds");
        assert_eq!(lines[5], "  host configuration \"save\": ");
        assert_eq!(lines[7], "  multi-thread: no");
        assert_eq!(lines[9], "Latency by percentile distribution:");
        assert_eq!(
            lines[10],
            "0.000% <= 0.151 milliseconds (cumulative count 1)"
        );
        assert!(text.contains("\nCumulative distribution of latencies:\n0.000% <= 0.103 milliseconds (cumulative count 0)\n"));
        assert!(text.ends_with(
            "          avg       min       p50       p95       p99       max\n        0.727     0.144     0.271     2.503     2.503     2.503\n"
        ), "{text}");
    }

    #[test]
    fn cluster_header_lists_each_master() {
        let mut h = HdrHistogram::redis_benchmark(3);
        h.record(300);
        let cfg = HostConfig::default();
        let nodes = [
            Some(HostConfig {
                save: String::new(),
                appendonly: "no".into(),
            }),
            None,
            Some(HostConfig {
                save: "3600 1".into(),
                appendonly: "yes".into(),
            }),
        ];
        let mut r = result(&h, &cfg);
        r.cluster = Some(&nodes);
        r.threads = 3;
        let text = full(&r);
        assert!(
            text.contains(
                "  keep alive: 1\n  cluster mode: yes (3 masters)\n  node [0] configuration:\n    save: NONE\n    appendonly: no\n  node [2] configuration:\n    save: 3600 1\n    appendonly: yes\n  multi-thread: yes\n  threads: 3\n\n"
            ),
            "{text}"
        );
        assert!(!text.contains("host configuration"));
    }

    #[test]
    fn csv_quotes_every_field() {
        let mut h = HdrHistogram::redis_benchmark(3);
        h.record(300);
        let cfg = HostConfig::default();
        let row = csv(&result(&h, &cfg));
        assert_eq!(
            row,
            "\"GET\",\"5.75\",\"0.300\",\"0.296\",\"0.303\",\"0.303\",\"0.303\",\"0.303\"\n"
        );
    }

    #[test]
    fn progress_line_before_any_reply() {
        assert_eq!(
            progress("SET", 0.0, 0.0, f64::NAN, f64::NAN),
            "SET: rps=0.0 (overall: 0.0) avg_msec=-nan (overall: -nan)\r"
        );
        assert_eq!(blank(0), " \r");
    }
}

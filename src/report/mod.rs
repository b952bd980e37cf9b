//! Renderers of the result model. One output format, one file; a workload never
//! touches a renderer.

pub mod compare;
pub mod compare_page;
pub mod csv;
pub mod html;
pub mod json;
pub mod openmetrics;
pub mod soak;
pub mod table;
pub mod text;

use crate::model::{Metric, Unit};
use crate::units::{format_bytes, format_ns, format_rate};

pub use crate::units::thousands;

/// A metric's value with its unit, for people.
pub fn format_value(m: &Metric) -> String {
    match m.unit {
        Unit::EventsPerSec => format!("{} events/s", thousands(m.value, 2)),
        Unit::OpsPerSec => format!("{} ops/s", thousands(m.value, 2)),
        Unit::BytesPerSec => format!("{} ({:.0} MB/s)", format_rate(m.value), m.value / 1e6),
        Unit::Bytes => format_bytes(m.value as u64),
        Unit::Nanoseconds => format_ns(m.value),
        Unit::Seconds => format!("{:.3} s", m.value),
        Unit::Count => thousands(m.value, 0),
        Unit::Ratio => format!("{:.3}", m.value),
    }
}

/// `events_per_sec` -> `events per sec`; a few names read better spelled out.
pub fn metric_label(name: &str) -> String {
    match name {
        "events_per_sec" => "events per second".into(),
        "ops_per_sec" => "operations per second".into(),
        "bytes_per_sec" => "throughput".into(),
        "load_latency" => "load-to-use latency".into(),
        other => {
            if let Some(p) = other.strip_prefix("latency_p") {
                format!("latency {}th pct", p)
            } else {
                other.replace('_', " ")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouping() {
        assert_eq!(thousands(1234567.891, 2), "1,234,567.89");
        assert_eq!(thousands(999.0, 0), "999");
        assert_eq!(thousands(-1000.0, 1), "-1,000.0");
        assert_eq!(thousands(0.5, 2), "0.50");
    }
}

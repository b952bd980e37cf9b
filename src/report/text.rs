//! Human text: a header naming the workload and host, a table of metrics, the latency
//! summary, CPU use and notes.

use super::table::Table;
use super::{format_value, metric_label};
use crate::model::{Outcome, fairness};
use crate::units::{format_bytes, format_ns};

pub fn outcome(o: &Outcome) -> String {
    let mut out = format!("{} · {}\n", title(o), o.host.summary());
    if o.interrupted {
        out += "INTERRUPTED: partial results\n";
    }
    out.push('\n');

    let mut table = Table::new(
        &["metric", "kind", "threads", "working set", "value"],
        &[false, false, true, false, true],
    );
    for m in &o.metrics {
        table.row(vec![
            metric_label(&m.name),
            m.variant.clone().unwrap_or_default(),
            m.threads.map(|t| t.to_string()).unwrap_or_default(),
            m.working_set
                .map(|ws| format!("{} ({})", format_bytes(ws.bytes), ws.tier.label()))
                .unwrap_or_default(),
            format_value(m),
        ]);
    }
    out += &table.render("  ");

    if let Some(lat) = &o.latency {
        out += "\n  latency per event:";
        out += &format!(
            " min {}  avg {}",
            format_ns(lat.min_ns),
            format_ns(lat.mean_ns)
        );
        for p in &lat.percentiles {
            out += &format!("  p{} {}", trim_float(p.p), format_ns(p.ns));
        }
        out += &format!("  max {}\n", format_ns(lat.max_ns));
    }
    if o.threads.len() > 1 {
        let ((ev_avg, ev_sd), (t_avg, t_sd)) = fairness(&o.threads);
        out += &format!(
            "  threads fairness: events {ev_avg:.1} ± {ev_sd:.1}, busy time {t_avg:.3} s ± {t_sd:.3} s\n"
        );
    }
    out += &format!(
        "  elapsed {:.2} s, CPU user {:.2} s + system {:.2} s ({:.2} CPUs busy)\n",
        o.elapsed_s, o.cpu_time.user_s, o.cpu_time.system_s, o.cpu_time.utilisation
    );
    for n in &o.notes {
        out += &format!("  note: {n}\n");
    }
    out
}

fn title(o: &Outcome) -> String {
    let detail = o.spec.get("mode").or_else(|| o.spec.get("name"));
    match detail.and_then(|m| m.as_str()) {
        Some(mode) => format!("{} ({mode})", o.workload),
        None => o.workload.clone(),
    }
}

/// `99.9` -> `99.9`, `95.0` -> `95`.
fn trim_float(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

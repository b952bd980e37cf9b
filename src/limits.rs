//! What cloud providers promise for their disks (`data/providers.toml`, made from the
//! team's reference research with each figure's source and caveats), and how a
//! measurement compares with it: "97 % of the promised 2,600 IOPS".
//!
//! The formula for a disk of `GiB` (fields absent: no floor, nothing per GiB):
//! `iops = max(floor, min(base + per_gib × GiB, max))`, the same for throughput,
//! which is in the provider's own unit (MB/s or MiB/s: a 4.9 % difference that
//! matters for a 97 % verdict).

use crate::model::{Metric, Outcome};
use serde::{Deserialize, Serialize};
use thiserror::Error;

const DATA: &str = include_str!("../data/providers.toml");

/// One disk type (or one size tier of it) as the provider publishes it.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct DiskOffer {
    pub provider: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub model: String,
    pub verified: bool,
    pub iops_base: Option<f64>,
    pub iops_per_gib: Option<f64>,
    pub iops_max: Option<f64>,
    pub iops_floor: Option<f64>,
    pub mbps_base: Option<f64>,
    pub mbps_per_gib: Option<f64>,
    pub mbps_max: Option<f64>,
    pub mbps_floor: Option<f64>,
    pub mbps_unit: Option<String>,
    pub min_gib: Option<f64>,
    pub max_gib: Option<f64>,
    pub io_size_kib: Option<f64>,
    pub source: String,
    pub page_date: Option<String>,
    pub notes: String,
}

impl DiskOffer {
    /// The IOPS formula as `hostbench limits` shows it, or why there is none.
    pub fn iops_text(&self) -> String {
        formula_text(
            self.iops_base,
            self.iops_per_gib,
            self.iops_max,
            self.iops_floor,
        )
        .unwrap_or_else(|| self.missing_figure())
    }

    /// The throughput formula in the provider's unit, or why there is none.
    pub fn throughput_text(&self) -> String {
        let unit = self.mbps_unit.as_deref().unwrap_or("MB/s");
        formula_text(
            self.mbps_base,
            self.mbps_per_gib,
            self.mbps_max,
            self.mbps_floor,
        )
        .map_or_else(|| self.missing_figure(), |f| format!("{f} {unit}"))
    }

    /// A type without a figure either publishes none (`model = "none"`) or its
    /// figure was not found when the data was made: say which, never a bare dash.
    fn missing_figure(&self) -> String {
        if self.model == "none" {
            "none published".into()
        } else {
            "not on record".into()
        }
    }

    /// What this offer promises a disk of `bytes`; `None` when it promises nothing
    /// at that size (no figures, beyond its sizes, or another tier holds the size).
    pub fn at_size(&self, bytes: u64) -> Option<Promise> {
        let gib = bytes as f64 / (1u64 << 30) as f64;
        if self.model == "fixed-tier" {
            // Tiers are chosen by size: only the tier that holds the disk applies.
            let base = self.kind.split_whitespace().next().unwrap_or(&self.kind);
            let p = promise(&format!("{}:{base}:{bytes}", self.provider)).ok()?;
            return (p.kind == self.kind).then_some(p);
        }
        evaluate(self, gib, None, None).ok()
    }
}

/// `max(100, min(3/GiB, 16000))`: how a figure grows with the disk's size, floor
/// and cap included; `None` when the offer has no figure at all.
fn formula_text(
    base: Option<f64>,
    per_gib: Option<f64>,
    max: Option<f64>,
    floor: Option<f64>,
) -> Option<String> {
    let per = per_gib.filter(|p| *p > 0.0);
    let grows = match (base, per) {
        (Some(b), Some(p)) => Some(format!("{b} + {p}/GiB")),
        (None, Some(p)) => Some(format!("{p}/GiB")),
        _ => None,
    };
    let text = match (grows, base, max) {
        (Some(g), _, Some(m)) => format!("min({g}, {m})"),
        (Some(g), _, None) => g,
        (None, Some(b), Some(m)) if b == m => format!("{b}"),
        (None, Some(b), Some(m)) => format!("{b} (up to {m})"),
        (None, Some(b), None) => format!("{b}"),
        (None, None, Some(m)) => format!("up to {m}"),
        (None, None, None) => return None,
    };
    Some(match floor {
        Some(f) => format!("max({f}, {text})"),
        None => text,
    })
}

#[derive(Deserialize)]
struct File {
    disk: Vec<DiskOffer>,
}

/// Every offer, in the file's order.
pub fn offers() -> Vec<DiskOffer> {
    // The file ships inside the binary and a unit test parses it, so this holds.
    toml::from_str::<File>(DATA)
        .map(|f| f.disk)
        .expect("data/providers.toml parses")
}

/// What a disk of a given size is promised.
#[derive(Debug, Clone, Serialize)]
pub struct Promise {
    pub provider: String,
    pub kind: String,
    pub gib: f64,
    pub iops: Option<f64>,
    /// Bytes per second.
    pub bytes_per_sec: Option<f64>,
    /// The formula with the numbers filled in, for the report.
    pub iops_formula: Option<String>,
    pub throughput_formula: Option<String>,
    /// What could make the comparison unfair: burst, units, caps, unverified figures.
    pub caveats: Vec<String>,
    pub source: String,
}

#[derive(Debug, Error, PartialEq)]
pub enum LimitError {
    #[error(
        "--expect '{0}': write PROVIDER:TYPE:SIZE, e.g. tencent:premium:100GiB (see `hostbench limits`)"
    )]
    Syntax(String),
    #[error("--expect: no provider '{0}'; known: {1}")]
    Provider(String, String),
    #[error("--expect: {0} has no disk type matching '{1}'; its types: {2}")]
    Kind(String, String, String),
    #[error("--expect: '{1}' matches several {0} types ({2}); write one of them")]
    Ambiguous(String, String, String),
    #[error(
        "--expect: {0} {1} publishes no performance formula, so there is nothing to compare with"
    )]
    NoFormula(String, String),
    #[error("--expect: {0} {1} goes up to {2} GiB; {3} GiB is beyond its sizes")]
    TooLarge(String, String, f64, f64),
}

/// Words of a type name, lower case: `CLOUD_PREMIUM` -> [cloud, premium].
fn words(s: &str) -> Vec<String> {
    s.to_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(String::from)
        .collect()
}

/// The type a user means: the exact name, else the one whose words contain all of
/// the given words (`premium` -> `CLOUD_PREMIUM`). Azure's tiers share a base
/// name (`Premium_LRS P10`); those resolve by size later.
fn matching<'a>(offers: &'a [DiskOffer], provider: &str, kind: &str) -> Vec<&'a DiskOffer> {
    let of_provider: Vec<&DiskOffer> = offers
        .iter()
        .filter(|o| o.provider.eq_ignore_ascii_case(provider))
        .collect();
    let exact: Vec<&DiskOffer> = of_provider
        .iter()
        .copied()
        .filter(|o| {
            o.kind.eq_ignore_ascii_case(kind)
                || o.kind
                    .split_whitespace()
                    .next()
                    .is_some_and(|base| base.eq_ignore_ascii_case(kind))
        })
        .collect();
    if !exact.is_empty() {
        return exact;
    }
    let wanted = words(kind);
    of_provider
        .into_iter()
        .filter(|o| {
            let have = words(&o.kind);
            wanted.iter().all(|w| have.contains(w))
        })
        .collect()
}

/// Parses `PROVIDER:TYPE:SIZE[:iops=N][:mbps=N]` and evaluates the promise. For
/// provisioned disks `iops=`/`mbps=` give what was provisioned (the formula
/// only knows the free baseline).
pub fn promise(spec: &str) -> Result<Promise, LimitError> {
    let parts: Vec<&str> = spec.split(':').collect();
    if parts.len() < 3 || parts[..3].iter().any(|p| p.trim().is_empty()) {
        return Err(LimitError::Syntax(spec.into()));
    }
    let (provider, kind) = (parts[0].trim(), parts[1].trim());
    let bytes =
        crate::units::parse_size(parts[2].trim()).map_err(|_| LimitError::Syntax(spec.into()))?;
    let gib = bytes as f64 / (1u64 << 30) as f64;
    if gib <= 0.0 {
        return Err(LimitError::Syntax(spec.into()));
    }
    let (mut iops_override, mut mbps_override) = (None, None);
    for extra in &parts[3..] {
        let (k, v) = extra
            .split_once('=')
            .ok_or_else(|| LimitError::Syntax(spec.into()))?;
        let v: f64 = v
            .trim()
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v > 0.0)
            .ok_or_else(|| LimitError::Syntax(spec.into()))?;
        match k.trim() {
            "iops" => iops_override = Some(v),
            "mbps" => mbps_override = Some(v),
            _ => return Err(LimitError::Syntax(spec.into())),
        }
    }
    let all = offers();
    if !all
        .iter()
        .any(|o| o.provider.eq_ignore_ascii_case(provider))
    {
        let mut names: Vec<&str> = all.iter().map(|o| o.provider.as_str()).collect();
        names.dedup();
        return Err(LimitError::Provider(provider.into(), names.join(", ")));
    }
    let found = matching(&all, provider, kind);
    let types = |list: &[&DiskOffer]| {
        let mut v: Vec<&str> = list
            .iter()
            .map(|o| o.kind.split_whitespace().next().unwrap_or(&o.kind))
            .collect();
        v.dedup();
        v.join(", ")
    };
    let offer = match found.as_slice() {
        [] => {
            let of: Vec<&DiskOffer> = all
                .iter()
                .filter(|o| o.provider.eq_ignore_ascii_case(provider))
                .collect();
            return Err(LimitError::Kind(provider.into(), kind.into(), types(&of)));
        }
        [one] => *one,
        tiers if tiers.iter().all(|o| o.model == "fixed-tier") => {
            // The smallest tier that holds the disk, as Azure maps sizes.
            tiers
                .iter()
                .filter(|o| o.max_gib.is_some_and(|m| m >= gib))
                .min_by(|a, b| a.max_gib.partial_cmp(&b.max_gib).expect("finite sizes"))
                .copied()
                .ok_or_else(|| {
                    let top = tiers.iter().filter_map(|o| o.max_gib).fold(0.0, f64::max);
                    LimitError::TooLarge(provider.into(), kind.into(), top, gib)
                })?
        }
        many => {
            return Err(LimitError::Ambiguous(
                provider.into(),
                kind.into(),
                types(many),
            ));
        }
    };
    evaluate(offer, gib, iops_override, mbps_override)
}

fn linear(
    base: Option<f64>,
    per_gib: Option<f64>,
    max: Option<f64>,
    floor: Option<f64>,
    gib: f64,
) -> Option<(f64, String)> {
    let per = per_gib.unwrap_or(0.0);
    // A figure that only grows with the size (AWS gp2's 3 IOPS per GiB) has no base;
    // one with neither is only a cap ("up to"), which promises nothing.
    let base = base.or((per > 0.0).then_some(0.0))?;
    let mut v = base + per * gib;
    let mut text = match (base > 0.0, per > 0.0) {
        (true, true) => format!("{base} + {per} × {gib} GiB"),
        (false, true) => format!("{per} × {gib} GiB"),
        _ => format!("{base}"),
    };
    if let Some(m) = max {
        v = v.min(m);
        text = format!("min({text}, {m})");
    }
    if let Some(f) = floor {
        v = v.max(f);
        text = format!("max({f}, {text})");
    }
    Some((v, text))
}

fn evaluate(
    o: &DiskOffer,
    gib: f64,
    iops_override: Option<f64>,
    mbps_override: Option<f64>,
) -> Result<Promise, LimitError> {
    if o.model == "none" {
        return Err(LimitError::NoFormula(o.provider.clone(), o.kind.clone()));
    }
    if let Some(max) = o.max_gib
        && gib > max
        && o.model != "fixed-tier"
    {
        return Err(LimitError::TooLarge(
            o.provider.clone(),
            o.kind.clone(),
            max,
            gib,
        ));
    }
    let unit = o.mbps_unit.as_deref().unwrap_or("MB/s");
    let unit_bytes = if unit == "MiB/s" { 1048576.0 } else { 1e6 };
    let mut iops = linear(o.iops_base, o.iops_per_gib, o.iops_max, o.iops_floor, gib);
    let mut mbps = linear(o.mbps_base, o.mbps_per_gib, o.mbps_max, o.mbps_floor, gib);
    let mut caveats = Vec::new();
    if let Some(v) = iops_override {
        iops = Some((v, format!("{v} provisioned")));
    }
    if let Some(v) = mbps_override {
        mbps = Some((v, format!("{v} provisioned")));
    }
    match o.model.as_str() {
        "provisioned" if iops_override.is_none() || mbps_override.is_none() => caveats.push(
            "a provisioned disk is promised what was bought: give it as :iops=N:mbps=N, \
             otherwise the free baseline is used"
                .to_string(),
        ),
        "burst" => caveats.push(
            "the promise is the sustained baseline; a short run may still be spending burst credits"
                .to_string(),
        ),
        "fixed-tier" => caveats.push(format!("size tier {} (the smallest that holds {gib} GiB)", o.kind)),
        _ => {}
    }
    caveats.push(format!(
        "throughput is promised in {unit} ({}), shown here converted",
        if unit == "MiB/s" {
            "2^20 bytes/s"
        } else {
            "10^6 bytes/s"
        }
    ));
    if let Some(kib) = o.io_size_kib {
        caveats.push(format!("the IOPS figure is for {kib} KiB requests"));
    }
    caveats.push(
        "the VM's own disk limit may be lower than the disk's: then the VM's limit binds".into(),
    );
    if !o.verified {
        caveats.push("these figures were not confirmed from the provider's own pages".into());
    }
    Ok(Promise {
        provider: o.provider.clone(),
        kind: o.kind.clone(),
        gib,
        iops: iops.as_ref().map(|v| v.0),
        bytes_per_sec: mbps.as_ref().map(|v| v.0 * unit_bytes),
        iops_formula: iops.map(|v| v.1),
        throughput_formula: mbps.map(|v| format!("{} {unit}", v.1)),
        caveats,
        source: o.source.clone(),
    })
}

/// One measured figure against its promise.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// The test it comes from (randread, seqwrite, …).
    pub test: String,
    pub metric: String,
    pub measured: f64,
    pub promised: f64,
    /// measured / promised, percent.
    pub percent: f64,
    pub pass: bool,
    /// The rate before a lasting fall (`…_burst`, see workload/bursts.rs): `measured`
    /// is then the sustained rate, and the promise is judged on that.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub burst: Option<f64>,
}

/// The tests whose figure a provider's promise is about: IOPS from the 4 KiB
/// random tests at depth, throughput from the sequential ones.
const CHECKED: [(&str, &str, bool); 4] = [
    ("randread", "read_iops", true),
    ("randwrite", "write_iops", true),
    ("seqread", "read_bytes_per_sec", false),
    ("seqwrite", "write_bytes_per_sec", false),
];

/// The disk metric `name` of `test`: the test is the outcome's name (older outcomes
/// named it in the metric's variant).
fn test_metric<'a>(outcomes: &'a [Outcome], test: &str, name: &str) -> Option<&'a Metric> {
    outcomes
        .iter()
        .filter(|o| o.workload == "disk")
        .flat_map(|o| {
            let named = o.spec.get("name").and_then(|n| n.as_str()) == Some(test);
            o.metrics
                .iter()
                .filter(move |m| named || m.variant.as_deref() == Some(test))
        })
        .find(|m| m.name == name)
}

/// Compares disk outcomes with the promise; `threshold` in percent.
pub fn check(p: &Promise, outcomes: &[Outcome], threshold: f64) -> Vec<Check> {
    let mut checks = Vec::new();
    for (test, metric, is_iops) in CHECKED {
        let promised = if is_iops { p.iops } else { p.bytes_per_sec };
        let Some(promised) = promised else { continue };
        let Some(m) = test_metric(outcomes, test, metric) else {
            continue;
        };
        let burst = test_metric(outcomes, test, &format!("{metric}_burst")).map(|m| m.value);
        let percent = 100.0 * m.value / promised;
        checks.push(Check {
            test: test.into(),
            metric: metric.into(),
            measured: m.value,
            promised,
            burst,
            percent,
            pass: percent >= threshold,
        });
    }
    checks
}

/// `randread  2,522 IOPS = 97 % of the promised 2,600 IOPS  ok`
pub fn render(p: &Promise, checks: &[Check], threshold: f64) -> String {
    use crate::units::thousands;
    let mut out = format!(
        "Promise: {} {} {} GiB: {} IOPS, {}\n",
        p.provider,
        p.kind,
        p.gib,
        p.iops_formula.as_deref().unwrap_or("no IOPS figure"),
        p.throughput_formula
            .as_deref()
            .unwrap_or("no throughput figure")
    );
    if checks.is_empty() {
        out += "  nothing to compare: run the randread, randwrite, seqread or seqwrite tests\n";
    }
    for c in checks {
        let (measured, promised) = if c.metric.ends_with("iops") {
            (
                format!("{} IOPS", thousands(c.measured, 0)),
                format!("{} IOPS", thousands(c.promised, 0)),
            )
        } else {
            (
                format!("{:.1} MB/s", c.measured / 1e6),
                format!("{:.1} MB/s", c.promised / 1e6),
            )
        };
        out += &format!(
            "  {:<10} {:>14} = {:>3.0} % of the promised {}  {}\n",
            c.test,
            measured,
            c.percent,
            promised,
            if c.pass {
                "ok".to_string()
            } else {
                format!("BELOW {threshold:.0} %")
            }
        );
        if let Some(burst) = c.burst {
            let burst = if c.metric.ends_with("iops") {
                format!("{} IOPS", thousands(burst, 0))
            } else {
                format!("{:.1} MB/s", burst / 1e6)
            };
            out += &format!(
                "  {:<10} judged on its sustained rate; it ran at {burst} during its burst\n",
                ""
            );
        }
    }
    for c in &p.caveats {
        out += &format!("  note: {c}\n");
    }
    out += &format!("  source: {}\n", p.source);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_file_parses_and_every_offer_evaluates() {
        let all = offers();
        assert!(all.len() > 50);
        for o in &all {
            if o.model != "none" {
                let gib = o.min_gib.unwrap_or(1.0).max(1.0);
                evaluate(o, gib, None, None).unwrap();
            }
        }
    }

    #[test]
    fn every_offer_says_what_it_promises_or_why_not() {
        for o in offers() {
            for (what, text) in [("IOPS", o.iops_text()), ("throughput", o.throughput_text())] {
                let said = text.chars().any(|c| c.is_ascii_digit())
                    || ["none published", "not on record"].contains(&text.as_str());
                assert!(said, "{} {} {what}: '{text}'", o.provider, o.kind);
            }
            // A floor the data has is part of the formula shown.
            if let Some(f) = o.iops_floor {
                assert!(
                    o.iops_text().starts_with(&format!("max({f}, ")),
                    "{}",
                    o.kind
                );
            }
        }
        let retired = offers().into_iter().find(|o| o.kind == "cloud").unwrap();
        assert_eq!(retired.throughput_text(), "none published");
        let gp2 = offers().into_iter().find(|o| o.kind == "gp2").unwrap();
        assert_eq!(gp2.iops_text(), "max(100, min(3/GiB, 16000))");
    }

    #[test]
    fn figures_that_only_grow_with_the_size_are_promised() {
        // AWS gp2: 3 IOPS per GiB, at least 100; throughput at least 128 MiB/s,
        // 0.75 MiB/s per GiB, at most 250.
        let p = promise("aws:gp2:500GiB").unwrap();
        assert_eq!(p.iops, Some(1500.0));
        assert_eq!(p.bytes_per_sec, Some(250.0 * 1048576.0));
        assert_eq!(promise("aws:gp2:10GiB").unwrap().iops, Some(100.0));
        // GCP pd-ssd: 30 per GiB with a floor of 6000.
        assert_eq!(promise("gcp:pd-ssd:100GiB").unwrap().iops, Some(6000.0));
        assert_eq!(promise("gcp:pd-ssd:1TiB").unwrap().iops, Some(30720.0));
        // Only a cap ("up to 190 MB/s") promises nothing.
        assert_eq!(
            promise("tencent:CLOUD_BSSD:100GiB").unwrap().bytes_per_sec,
            None
        );
    }

    #[test]
    fn a_tier_applies_only_at_the_sizes_it_holds() {
        let tiers: Vec<DiskOffer> = offers()
            .into_iter()
            .filter(|o| o.kind.starts_with("Premium_LRS "))
            .collect();
        let holding: Vec<&str> = tiers
            .iter()
            .filter(|o| o.at_size(100 << 30).is_some())
            .map(|o| o.kind.as_str())
            .collect();
        assert_eq!(holding.len(), 1, "{holding:?}");
        assert_eq!(
            promise("azure:Premium_LRS:100GiB").unwrap().kind,
            holding[0]
        );
    }

    #[test]
    fn seed_002s_disk_is_promised_2600_iops() {
        // Tencent premium cloud disk, 100 GiB: min(1800 + 8 × 100, 6000).
        let p = promise("tencent:premium:100GiB").unwrap();
        assert_eq!(p.kind, "CLOUD_PREMIUM");
        assert_eq!(p.iops, Some(2600.0));
        // min(100 + 0.15 × 100, 150) MB/s, decimal megabytes.
        assert!((p.bytes_per_sec.unwrap() - 115e6).abs() < 1.0);
        let big = promise("tencent:CLOUD_PREMIUM:2TiB").unwrap();
        assert_eq!(big.iops, Some(6000.0));
    }

    #[test]
    fn tiers_map_to_the_smallest_that_holds_the_disk() {
        let p = promise("azure:Premium_LRS:100GiB").unwrap();
        assert!(p.kind.starts_with("Premium_LRS"), "{}", p.kind);
        let p4 = promise("azure:Premium_LRS:4GiB").unwrap();
        assert_eq!(p4.iops, Some(120.0));
        assert!(p.iops.unwrap() > p4.iops.unwrap());
    }

    #[test]
    fn units_differ_by_provider() {
        // AWS states MiB/s: gp3's free baseline of 125 MiB/s.
        let p = promise("aws:gp3:500GiB").unwrap();
        assert_eq!(p.bytes_per_sec, Some(125.0 * 1048576.0));
        assert!(p.caveats.iter().any(|c| c.contains("provisioned")));
        let p = promise("aws:gp3:500GiB:iops=6000:mbps=250").unwrap();
        assert_eq!(p.iops, Some(6000.0));
    }

    #[test]
    fn bad_specs_name_the_fix() {
        assert!(matches!(promise("tencent"), Err(LimitError::Syntax(_))));
        assert!(matches!(
            promise("nocloud:x:1G"),
            Err(LimitError::Provider(..))
        ));
        assert!(matches!(
            promise("tencent:floppy:1G"),
            Err(LimitError::Kind(..))
        ));
        assert!(matches!(
            promise("tencent:premium:1Q"),
            Err(LimitError::Syntax(_))
        ));
        assert!(matches!(
            promise("tencent:premium:100G:speed=3"),
            Err(LimitError::Syntax(_))
        ));
    }

    #[test]
    fn checks_compare_the_right_tests() {
        use crate::model::Unit;
        let p = promise("tencent:premium:100GiB").unwrap();
        let mut o = Outcome::new(
            "disk",
            serde_json::json!({}),
            crate::host::HostInfo::detect(),
        );
        o.push(Metric::new("read_iops", 2522.0, Unit::OpsPerSec).variant("randread"));
        o.push(Metric::new("read_iops", 9000.0, Unit::OpsPerSec).variant("randread-qd1"));
        o.push(Metric::new("read_bytes_per_sec", 80e6, Unit::BytesPerSec).variant("seqread"));
        let checks = check(&p, &[o], 90.0);
        assert_eq!(checks.len(), 2);
        assert!((checks[0].percent - 97.0).abs() < 0.01);
        assert!(checks[0].pass);
        assert!(!checks[1].pass, "80 of 115 MB/s is below 90 %");
        let text = render(&p, &checks, 90.0);
        assert!(text.contains("97 % of the promised 2,600 IOPS"), "{text}");
    }

    #[test]
    fn a_burst_is_judged_on_its_sustained_rate_and_says_so() {
        use crate::model::Unit;
        let p = promise("tencent:premium:100GiB").unwrap();
        let mut o = Outcome::new("disk", serde_json::json!({}), Default::default());
        o.push(Metric::new("read_iops", 2522.0, Unit::OpsPerSec).variant("randread"));
        o.push(Metric::new("read_iops_burst", 16200.0, Unit::OpsPerSec).variant("randread"));
        let checks = check(&p, &[o], 90.0);
        assert_eq!(checks[0].measured, 2522.0);
        assert_eq!(checks[0].burst, Some(16200.0));
        let text = render(&p, &checks, 90.0);
        assert!(
            text.contains("judged on its sustained rate; it ran at 16,200 IOPS during its burst"),
            "{text}"
        );
    }
}

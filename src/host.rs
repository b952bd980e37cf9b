//! What machine a result came from: CPU, memory, kernel, caches, virtualisation and
//! cloud vendor (from DMI, where readable), and the state that moves numbers (load,
//! steal time, clock source).

use serde::{Deserialize, Serialize};
use std::fs;
use std::path::Path;

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct HostInfo {
    pub hostname: String,
    pub cpu_model: String,
    pub logical_cpus: usize,
    pub memory_bytes: u64,
    pub kernel: String,
    pub os: String,
    pub arch: String,
    /// `kvm`, `xen`, `vmware`, `hyperv`, ... or `none` on bare metal; `None` if unknown.
    pub virtualization: Option<String>,
    /// `aws`, `gcp`, `azure`, `alibaba`, `tencent`, `huawei`, ... from DMI.
    pub cloud: Option<String>,
    pub clocksource: Option<String>,
    pub caches: Vec<Cache>,
    pub load_average: [f64; 3],
    /// Cumulative steal time of all CPUs, in seconds, when the run started.
    pub steal_s: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Cache {
    pub level: u8,
    /// `Data`, `Instruction` or `Unified`.
    pub kind: String,
    /// Size of one instance, as seen by CPU 0.
    pub bytes: u64,
}

impl HostInfo {
    pub fn detect() -> Self {
        let cpuinfo = read("/proc/cpuinfo");
        let cpu_model = field(&cpuinfo, "model name")
            .or_else(|| field(&cpuinfo, "Model"))
            .or_else(|| field(&cpuinfo, "cpu model"))
            .unwrap_or_else(|| "unknown".into());
        let uname = uname();
        Self {
            hostname: uname.0.clone(),
            cpu_model,
            logical_cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            memory_bytes: meminfo_kib("MemTotal").unwrap_or(0) * 1024,
            kernel: uname.1,
            os: os_release(),
            arch: std::env::consts::ARCH.into(),
            virtualization: virtualization(&cpuinfo),
            cloud: cloud_vendor(),
            clocksource: non_empty(read(
                "/sys/devices/system/clocksource/clocksource0/current_clocksource",
            )),
            caches: caches(Path::new("/sys/devices/system/cpu/cpu0/cache")),
            load_average: load_average(),
            steal_s: steal_seconds(),
        }
    }

    /// The size of the largest data cache level (the last-level cache), if known.
    pub fn llc_bytes(&self) -> Option<u64> {
        self.data_caches().last().map(|c| c.1)
    }

    /// (level, bytes) of data and unified caches, smallest level first.
    pub fn data_caches(&self) -> Vec<(u8, u64)> {
        let mut v: Vec<(u8, u64)> = self
            .caches
            .iter()
            .filter(|c| c.kind != "Instruction")
            .map(|c| (c.level, c.bytes))
            .collect();
        v.sort();
        v
    }

    /// One line: `AMD EPYC, 2 CPUs, 23.4 GiB, kvm`.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "{}, {} CPUs, {}",
            self.cpu_model,
            self.logical_cpus,
            crate::units::format_bytes(self.memory_bytes)
        );
        if let Some(v) = self.virtualization.as_deref().filter(|v| *v != "none") {
            s += &format!(", {v}");
        }
        if let Some(c) = &self.cloud {
            s += &format!(" on {c}");
        }
        s
    }
}

fn read(path: &str) -> String {
    fs::read_to_string(path).unwrap_or_default()
}

fn non_empty(s: String) -> Option<String> {
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_string())
}

fn field(text: &str, key: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let (k, v) = line.split_once(':')?;
        (k.trim() == key).then(|| v.trim().to_string())
    })
}

fn meminfo_kib(key: &str) -> Option<u64> {
    field(&read("/proc/meminfo"), key)?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Available memory in bytes (MemAvailable), to size buffers safely.
pub fn available_memory_bytes() -> Option<u64> {
    meminfo_kib("MemAvailable").map(|k| k * 1024)
}

fn uname() -> (String, String) {
    // SAFETY: uname fills a struct we own with NUL-terminated strings.
    unsafe {
        let mut u: libc::utsname = std::mem::zeroed();
        if libc::uname(&mut u) != 0 {
            return ("unknown".into(), "unknown".into());
        }
        let s = |f: &[libc::c_char]| {
            std::ffi::CStr::from_ptr(f.as_ptr())
                .to_string_lossy()
                .into_owned()
        };
        (
            s(&u.nodename),
            format!("{} {}", s(&u.sysname), s(&u.release)),
        )
    }
}

fn os_release() -> String {
    let text = read("/etc/os-release");
    field_eq(&text, "PRETTY_NAME").unwrap_or_else(|| "unknown".into())
}

fn field_eq(text: &str, key: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once('=')?;
        (k == key).then(|| v.trim_matches('"').to_string())
    })
}

fn dmi(name: &str) -> String {
    read(&format!("/sys/class/dmi/id/{name}"))
        .trim()
        .to_string()
}

/// Like systemd-detect-virt, from DMI first (names the hypervisor product), then the
/// CPU's hypervisor flag.
fn virtualization(cpuinfo: &str) -> Option<String> {
    let probe = [dmi("sys_vendor"), dmi("product_name"), dmi("bios_vendor")].join(" ");
    let known = [
        ("KVM", "kvm"),
        ("QEMU", "qemu"),
        ("VMware", "vmware"),
        ("VirtualBox", "oracle"),
        ("Xen", "xen"),
        ("Microsoft Corporation", "microsoft"),
        ("Amazon EC2", "amazon"),
        ("Google", "kvm"),
        ("Alibaba Cloud", "kvm"),
        ("Tencent Cloud", "kvm"),
        ("OpenStack", "kvm"),
        ("Parallels", "parallels"),
        ("BHYVE", "bhyve"),
    ];
    if let Some((_, v)) = known.iter().find(|(needle, _)| probe.contains(needle)) {
        return Some((*v).into());
    }
    let flags = field(cpuinfo, "flags").unwrap_or_default();
    if flags.split_whitespace().any(|f| f == "hypervisor") {
        return Some(cpuid_hypervisor().unwrap_or_else(|| "unknown-hypervisor".into()));
    }
    if cpuinfo.is_empty() {
        None
    } else {
        Some("none".into())
    }
}

/// The hypervisor's signature from CPUID leaf 0x40000000 (readable in any guest,
/// also where DMI is not exposed, as in Firecracker).
#[cfg(target_arch = "x86_64")]
fn cpuid_hypervisor() -> Option<String> {
    // The leaf is reserved for hypervisors; on bare metal it reads as zeros or
    // garbage, which maps to None.
    let r = std::arch::x86_64::__cpuid(0x4000_0000);
    let bytes: Vec<u8> = [r.ebx, r.ecx, r.edx]
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    let signature = String::from_utf8_lossy(&bytes)
        .trim_end_matches('\0')
        .to_string();
    let known = [
        ("KVMKVMKVM", "kvm"),
        ("Microsoft Hv", "microsoft"),
        ("VMwareVMware", "vmware"),
        ("XenVMMXenVMM", "xen"),
        ("TCGTCGTCGTCG", "qemu"),
        ("bhyve bhyve", "bhyve"),
        ("ACRNACRNACRN", "acrn"),
        (" lrpepyh  vr", "parallels"),
        ("VBoxVBoxVBox", "oracle"),
    ];
    known
        .iter()
        .find(|(sig, _)| signature.starts_with(sig))
        .map(|(_, name)| (*name).to_string())
}

#[cfg(not(target_arch = "x86_64"))]
fn cpuid_hypervisor() -> Option<String> {
    None
}

/// The cloud vendor from DMI strings the providers document for their guests.
fn cloud_vendor() -> Option<String> {
    let probe = [
        dmi("sys_vendor"),
        dmi("product_name"),
        dmi("bios_vendor"),
        dmi("chassis_asset_tag"),
        dmi("board_vendor"),
    ]
    .join(" | ");
    cloud_from_dmi(&probe)
}

fn cloud_from_dmi(probe: &str) -> Option<String> {
    let rules: [(&str, &str); 12] = [
        ("Amazon EC2", "aws"),
        ("Google Compute Engine", "gcp"),
        ("7783-7084-3265-9085-8269-3286-77", "azure"),
        ("Alibaba Cloud", "alibaba"),
        ("Tencent Cloud", "tencent"),
        ("HUAWEICLOUD", "huawei"),
        ("Huawei Cloud", "huawei"),
        ("DigitalOcean", "digitalocean"),
        ("Hetzner", "hetzner"),
        ("Linode", "linode"),
        ("Vultr", "vultr"),
        ("OracleCloud", "oracle"),
    ];
    rules
        .iter()
        .find(|(needle, _)| probe.contains(needle))
        .map(|(_, v)| (*v).into())
}

fn caches(dir: &Path) -> Vec<Cache> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<Cache> = entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("index"))
        .filter_map(|e| {
            let p = e.path();
            let get = |f: &str| fs::read_to_string(p.join(f)).ok();
            Some(Cache {
                level: get("level")?.trim().parse().ok()?,
                kind: get("type")?.trim().to_string(),
                bytes: crate::units::parse_size(get("size")?.trim()).ok()?,
            })
        })
        .collect();
    out.sort_by_key(|c| (c.level, c.kind.clone()));
    out
}

fn load_average() -> [f64; 3] {
    let text = read("/proc/loadavg");
    let mut it = text.split_whitespace().map(|v| v.parse().unwrap_or(0.0));
    [
        it.next().unwrap_or(0.0),
        it.next().unwrap_or(0.0),
        it.next().unwrap_or(0.0),
    ]
}

/// The 8th field of the `cpu` line of /proc/stat, in clock ticks (USER_HZ = 100).
pub fn steal_seconds() -> Option<f64> {
    let text = read("/proc/stat");
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let ticks: f64 = line.split_whitespace().nth(8)?.parse().ok()?;
    Some(ticks / 100.0)
}

/// The current time as RFC 3339 UTC, without a date crate.
pub fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    rfc3339(secs)
}

/// (year, month 1-12, day 1-31) of a day count since 1970-01-01 (Howard Hinnant's
/// days-to-civil algorithm), for timestamps without a date library.
pub fn civil_date(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn rfc3339(unix_secs: u64) -> String {
    let days = (unix_secs / 86_400) as i64;
    let rem = unix_secs % 86_400;
    let (year, month, day) = civil_date(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_796_000_000), "2026-11-30T00:53:20Z");
    }

    #[test]
    fn clouds_from_dmi() {
        assert_eq!(
            cloud_from_dmi("Amazon EC2 | m5.large").as_deref(),
            Some("aws")
        );
        assert_eq!(
            cloud_from_dmi(
                "Microsoft Corporation | Virtual Machine | 7783-7084-3265-9085-8269-3286-77"
            )
            .as_deref(),
            Some("azure")
        );
        assert_eq!(cloud_from_dmi("QEMU | Standard PC"), None);
    }

    #[test]
    fn detect_reads_this_machine() {
        let h = HostInfo::detect();
        assert!(h.logical_cpus >= 1);
        assert!(h.memory_bytes > 0);
        assert!(h.kernel.starts_with("Linux"));
    }
}

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

/// The current time as RFC 3339 UTC to the second (`2026-11-30T00:45:07Z`), the form
/// every stored time takes.
pub fn now_rfc3339() -> String {
    rfc3339(jiff::Timestamp::now())
}

fn rfc3339(t: jiff::Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// Unix seconds as this host's local time, in strftime's `format` with the C
/// locale's names (`Sun`, `Nov`), as the peers print it through localtime(3). jiff
/// reads the zone (`TZ`, else /etc/localtime) itself: localtime_r reads `TZ` with
/// getenv, which races with any thread that changes the environment.
pub fn local_time(secs: i64, format: &str) -> String {
    in_zone(secs, jiff::tz::TimeZone::system(), format)
}

fn in_zone(secs: i64, zone: jiff::tz::TimeZone, format: &str) -> String {
    use jiff::Timestamp;
    let t = Timestamp::from_second(secs).unwrap_or(if secs < 0 {
        Timestamp::MIN
    } else {
        Timestamp::MAX
    });
    t.to_zoned_datetime(zone).strftime(format).to_string()
}

/// What coreutils' `date` (localtime(3) and strftime(3), C locale) prints for `secs`
/// in `zone` (`TZ`'s syntax; `None`: the zone this process has): the reference the
/// date formats are tested against.
#[cfg(test)]
pub(crate) fn date_command(secs: i64, zone: Option<&str>, format: &str) -> String {
    let mut date = std::process::Command::new("date");
    date.env("LC_ALL", "C")
        .arg("-d")
        .arg(format!("@{secs}"))
        .arg(format!("+{format}"));
    if let Some(z) = zone {
        date.env("TZ", z);
    }
    let out = date.output().expect("coreutils' date runs");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .trim_end_matches('\n')
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        let at = |s| rfc3339(jiff::Timestamp::from_second(s).unwrap());
        assert_eq!(at(0), "1970-01-01T00:00:00Z");
        assert_eq!(at(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(at(1_796_000_000), "2026-11-30T00:53:20Z");
        // To the second, cut (not rounded) as stored times always were.
        let late = jiff::Timestamp::from_millisecond(1_796_000_000_999).unwrap();
        assert_eq!(rfc3339(late), "2026-11-30T00:53:20Z");
        let now = now_rfc3339();
        assert_eq!(now.len(), 20, "{now}");
        assert!(now.ends_with('Z') && now.as_bytes()[10] == b'T', "{now}");
    }

    /// Local times equal localtime(3)'s in zones with and without daylight saving,
    /// half-hour offsets, a POSIX rule and a zone file, around a DST change, for the
    /// layouts the personalities print (fio's ctime, UnixBench's header).
    #[test]
    fn local_times_match_the_c_library() {
        use jiff::tz::TimeZone;
        let mut zones = vec![
            ("UTC0", TimeZone::posix("UTC0").unwrap()),
            (
                "EST5EDT,M3.2.0,M11.1.0",
                TimeZone::posix("EST5EDT,M3.2.0,M11.1.0").unwrap(),
            ),
        ];
        // A half-hour offset, and one with a half-hour daylight saving shift.
        for name in ["Asia/Kolkata", "Australia/Lord_Howe"] {
            match TimeZone::get(name) {
                Ok(zone) => zones.push((name, zone)),
                Err(e) => crate::strict::missing(
                    &format!("the zone file of {name} ({e})"),
                    "scripts/test.sh installs it (Debian: tzdata)",
                ),
            }
        }
        // The README's fio example, the epoch, a day of 2000, the night US clocks
        // went back in 2026 (before and after 06:00 UTC), one second before 1970.
        let times = [
            1_795_988_497,
            0,
            951_825_600,
            1_793_512_799,
            1_793_512_800,
            -1,
        ];
        let formats = ["%a %b %e %H:%M:%S %Y", "%a %b %d %Y", "%H:%M:%S"];
        for (name, zone) in &zones {
            for &t in &times {
                for f in formats {
                    assert_eq!(
                        in_zone(t, zone.clone(), f),
                        date_command(t, Some(name), f),
                        "{t} in {name} as {f}"
                    );
                }
            }
        }
        assert_eq!(
            in_zone(1_795_988_497, TimeZone::UTC, "%a %b %e %H:%M:%S %Y"),
            "Sun Nov 29 21:41:37 2026"
        );
        // This process's own zone, as local_time reads it.
        for f in formats {
            assert_eq!(
                local_time(1_795_988_497, f),
                date_command(1_795_988_497, None, f)
            );
        }
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

//! fio's "Disk stats": the block devices under the job files, from
//! `/sys/block/<dev>/stat` before and after the run.

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Counter deltas of one device over the run (sysfs `stat` fields).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DiskUtil {
    pub name: String,
    pub read_ios: u64,
    pub write_ios: u64,
    pub read_merges: u64,
    pub write_merges: u64,
    pub read_ticks: u64,
    pub write_ticks: u64,
    pub in_queue: u64,
    /// Busy time over wall time, percent.
    pub util: f64,
}

/// A device being watched: where its counters live and their values at the start.
pub struct Watch {
    name: String,
    stat: PathBuf,
    before: [u64; 11],
    started: std::time::Instant,
}

/// The whole disk holding `path` (a partition's parent), if sysfs knows it.
fn disk_of(path: &Path) -> Option<(String, PathBuf)> {
    let meta = std::fs::metadata(path)
        .ok()
        .or_else(|| std::fs::metadata(path.parent()?).ok())?;
    let dev = if meta.file_type().is_block_device() {
        meta.rdev()
    } else {
        meta.dev()
    };
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let mut sys = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()?;
    if sys.join("partition").exists() {
        sys = sys.parent()?.to_path_buf();
    }
    let stat = sys.join("stat");
    let name = sys.file_name()?.to_string_lossy().into_owned();
    stat.exists().then_some((name, stat))
}

fn read_stat(path: &Path) -> Option<[u64; 11]> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut out = [0u64; 11];
    let mut fields = text.split_whitespace();
    for slot in out.iter_mut() {
        *slot = fields.next()?.parse().ok()?;
    }
    Some(out)
}

/// Starts watching the disks under `paths` (each disk once).
pub fn watch(paths: &[PathBuf]) -> Vec<Watch> {
    let mut watches: Vec<Watch> = Vec::new();
    for p in paths {
        if let Some((name, stat)) = disk_of(p)
            && !watches.iter().any(|w| w.name == name)
            && let Some(before) = read_stat(&stat)
        {
            watches.push(Watch {
                name,
                stat,
                before,
                started: std::time::Instant::now(),
            });
        }
    }
    watches
}

impl Watch {
    pub fn finish(&self) -> Option<DiskUtil> {
        let after = read_stat(&self.stat)?;
        let d = |i: usize| after[i].saturating_sub(self.before[i]);
        let wall_ms = self.started.elapsed().as_millis().max(1) as f64;
        Some(DiskUtil {
            name: self.name.clone(),
            read_ios: d(0),
            read_merges: d(1),
            read_ticks: d(3),
            write_ios: d(4),
            write_merges: d(5),
            write_ticks: d(7),
            in_queue: d(10),
            util: (100.0 * d(9) as f64 / wall_ms).min(100.0),
        })
    }
}

//! The files a disk test reads and writes: made by hostbench, in a directory it
//! created, filled with random bytes (zeros would flatter compressing or
//! deduplicating storage), and removed on success, error and Ctrl-C. A file that was
//! there before is never opened for writing.

use crate::measure::rng::Xoroshiro128Plus;
use crate::workload::observe::Observer;
use std::ffi::CString;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum FileError {
    #[error("{dir}: {source}; pass --dir with a directory you can write to")]
    Unusable { dir: PathBuf, source: io::Error },
    #[error(
        "{dir}: not enough free space: the test needs {needed} and {available} is free; use a smaller --size or another --dir"
    )]
    NoSpace {
        dir: PathBuf,
        needed: String,
        available: String,
    },
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error(
        "{dir}: the file system refuses direct I/O (O_DIRECT); use --buffered, or a --dir on another file system"
    )]
    NoDirect { dir: PathBuf },
    #[error("interrupted while preparing the test files")]
    Interrupted,
}

/// A directory of our own under `parent`; removed with everything in it when dropped.
pub struct TestDir {
    path: PathBuf,
}

impl TestDir {
    /// Creates `parent/.hostbench-disk-<pid>-<n>`; `parent` must exist.
    pub fn create(parent: &Path) -> Result<Self, FileError> {
        let meta = fs::metadata(parent).map_err(|source| FileError::Unusable {
            dir: parent.to_path_buf(),
            source,
        })?;
        if !meta.is_dir() {
            return Err(FileError::Unusable {
                dir: parent.to_path_buf(),
                source: io::Error::new(io::ErrorKind::NotADirectory, "not a directory"),
            });
        }
        for n in 0..1000 {
            let path = parent.join(format!(".hostbench-disk-{}-{n}", std::process::id()));
            match fs::create_dir(&path) {
                Ok(()) => return Ok(Self { path }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(source) => {
                    return Err(FileError::Unusable {
                        dir: parent.to_path_buf(),
                        source,
                    });
                }
            }
        }
        Err(FileError::Unusable {
            dir: parent.to_path_buf(),
            source: io::Error::other("could not find a free name for the test directory"),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}

/// Free bytes for an unprivileged writer under `dir`, and the file system's magic.
pub fn statfs(dir: &Path) -> io::Result<(u64, i64)> {
    let c = CString::new(dir.as_os_str().as_bytes()).map_err(io::Error::other)?;
    // SAFETY: statfs fills a struct we own; the path is NUL-terminated.
    unsafe {
        let mut s: libc::statfs = std::mem::zeroed();
        if libc::statfs(c.as_ptr(), &mut s) != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok((s.f_bavail as u64 * s.f_bsize as u64, s.f_type as i64))
    }
}

/// A name for the file system magic numbers a benchmark needs to tell apart.
pub fn fs_name(magic: i64) -> &'static str {
    match magic {
        0x0102_1994 => "tmpfs",
        0x858458f6 => "ramfs",
        0xEF53 => "ext4",
        0x5846_5342 => "xfs",
        0x9123_683E => "btrfs",
        0x794c_7630 => "overlayfs",
        0x6969 => "nfs",
        0xFF53_4D42 => "cifs",
        0x0102_1997 => "9p",
        0x6573_5546 => "fuse",
        0x2FC1_2FC1 => "zfs",
        0xF2F5_2010 => "f2fs",
        _ => "other",
    }
}

/// Whether the file system keeps its data in RAM, which makes every figure a memory figure.
pub fn ram_backed(magic: i64) -> bool {
    matches!(fs_name(magic), "tmpfs" | "ramfs")
}

/// What keeps `target`'s data in RAM, if something does, in words for a note: the
/// file system under a file (`tmpfs`), a RAM disk (`/dev/ram0, a RAM disk`), or the
/// file system under a loop device's backing file. A block device is judged by what
/// it is, never by the `/dev` it sits in (devtmpfs holds the node, not the data).
pub fn memory_behind(target: &Path) -> Option<String> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let meta = fs::metadata(target).ok();
    let Some(meta) = meta.filter(|m| m.file_type().is_block_device()) else {
        let dir = target.parent().filter(|d| !d.as_os_str().is_empty());
        let (_, magic) = statfs(dir.unwrap_or(Path::new("."))).ok()?;
        return ram_backed(magic).then(|| fs_name(magic).to_string());
    };
    let rdev = meta.rdev();
    let sys = PathBuf::from(format!(
        "/sys/dev/block/{}:{}",
        libc::major(rdev),
        libc::minor(rdev)
    ));
    let name = fs::canonicalize(&sys)
        .ok()?
        .file_name()?
        .to_string_lossy()
        .into_owned();
    if name.starts_with("ram") || name.starts_with("zram") {
        return Some(format!("{}, a RAM disk", target.display()));
    }
    let backing = fs::read_to_string(sys.join("loop/backing_file")).ok()?;
    let backing = Path::new(backing.trim_end());
    let (_, magic) = statfs(backing.parent()?).ok()?;
    ram_backed(magic).then(|| {
        format!(
            "{}, a loop device over {} on {}",
            target.display(),
            backing.display(),
            fs_name(magic)
        )
    })
}

/// The block device (`/dev/...`) mounted at the longest mount point containing `dir`.
pub fn device_of(dir: &Path) -> Option<String> {
    let dir = fs::canonicalize(dir).ok()?;
    let mounts = fs::read_to_string("/proc/self/mounts").ok()?;
    mounts
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            Some((f.next()?.to_string(), f.next()?.replace("\\040", " ")))
        })
        .filter(|(_, mp)| dir.starts_with(mp))
        .max_by_key(|(_, mp)| mp.len())
        .map(|(dev, _)| dev)
}

/// The offset and length alignment direct I/O needs on `path` (statx
/// STATX_DIOALIGN, Linux 6.1+); `None` where the kernel does not say.
pub fn direct_io_alignment(path: &Path) -> Option<usize> {
    let c = CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: statx fills a struct we own; the path is NUL-terminated.
    let stx = unsafe {
        let mut stx: libc::statx = std::mem::zeroed();
        if libc::statx(
            libc::AT_FDCWD,
            c.as_ptr(),
            0,
            libc::STATX_DIOALIGN,
            &mut stx,
        ) != 0
        {
            return None;
        }
        stx
    };
    (stx.stx_mask & libc::STATX_DIOALIGN != 0 && stx.stx_dio_offset_align > 0)
        .then_some(stx.stx_dio_offset_align as usize)
}

/// Opens a test file for I/O, direct or buffered.
pub fn open(path: &Path, direct: bool, write: bool) -> Result<fs::File, FileError> {
    let mut opts = fs::OpenOptions::new();
    opts.read(true).write(write);
    if direct {
        opts.custom_flags(libc::O_DIRECT);
    }
    opts.open(path).map_err(|source| {
        if direct && source.raw_os_error() == Some(libc::EINVAL) {
            FileError::NoDirect {
                dir: path.parent().unwrap_or(path).to_path_buf(),
            }
        } else {
            FileError::Io {
                path: path.to_path_buf(),
                source,
            }
        }
    })
}

/// Creates `path` (which must not exist) and fills it with `size` random bytes,
/// written sequentially in 1 MiB pieces and synced, so reads hit allocated blocks
/// and every write test overwrites real data.
pub fn lay_out(
    path: &Path,
    size: u64,
    seed: u64,
    observer: &dyn Observer,
) -> Result<(), FileError> {
    use std::io::Write;
    let err = |source| FileError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(err)?;
    let mut rng = Xoroshiro128Plus::seeded(seed);
    let mut chunk = vec![0u8; 1 << 20];
    let mut left = size;
    while left > 0 {
        if observer.stop_requested() {
            return Err(FileError::Interrupted);
        }
        fill_random(&mut chunk, &mut rng);
        let n = left.min(chunk.len() as u64) as usize;
        file.write_all(&chunk[..n]).map_err(err)?;
        left -= n as u64;
    }
    file.sync_all().map_err(err)?;
    Ok(())
}

/// Grows `path` to `size` bytes for a peer's job (fio lays out its files this
/// way): random data from the current end when the job reads it, otherwise only
/// allocated. Returns whether the file was created. On failure or Ctrl-C a file it
/// created is removed and one it extended is cut back to its old length.
pub fn extend(
    path: &Path,
    size: u64,
    with_data: bool,
    seed: u64,
    observer: &dyn Observer,
) -> Result<bool, FileError> {
    use std::io::{Seek, SeekFrom, Write};
    use std::os::fd::AsRawFd;
    let err = |source| FileError::Io {
        path: path.to_path_buf(),
        source,
    };
    let existed = path.exists();
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(err)?;
    let old_len = file.metadata().map_err(err)?.len();
    let undo = |file: &fs::File| {
        if existed {
            let _ = file.set_len(old_len);
        } else {
            let _ = fs::remove_file(path);
        }
    };
    let result = (|| {
        if with_data {
            file.seek(SeekFrom::Start(old_len)).map_err(err)?;
            let mut rng = Xoroshiro128Plus::seeded(seed);
            let mut chunk = vec![0u8; 1 << 20];
            let mut left = size.saturating_sub(old_len);
            while left > 0 {
                if observer.stop_requested() {
                    return Err(FileError::Interrupted);
                }
                fill_random(&mut chunk, &mut rng);
                let n = left.min(chunk.len() as u64) as usize;
                file.write_all(&chunk[..n]).map_err(err)?;
                left -= n as u64;
            }
        } else {
            // SAFETY: fallocate on a file descriptor we own.
            let ret = unsafe { libc::fallocate(file.as_raw_fd(), 0, 0, size as libc::off_t) };
            if ret != 0 {
                let e = io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::ENOSPC) {
                    return Err(err(e));
                }
                // File systems without fallocate: a sparse file of the right length.
                file.set_len(size).map_err(err)?;
            }
            // fio syncs a layout only after writing data (create_fsync): an fsync of
            // fresh unwritten extents here made the first seconds of an fdatasync job
            // measurably slower than fio's.
            return Ok(());
        }
        file.sync_all().map_err(err)
    })();
    match result {
        Ok(()) => Ok(!existed),
        Err(e) => {
            undo(&file);
            Err(e)
        }
    }
}

/// Drops a file's cached pages so buffered reads start cold (fio's `invalidate`).
pub fn drop_cache(path: &Path) {
    use std::os::fd::AsRawFd;
    if let Ok(f) = fs::File::open(path) {
        // SAFETY: advice on a descriptor we own; failure only leaves the cache warm.
        unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    }
}

pub fn fill_random(buf: &mut [u8], rng: &mut Xoroshiro128Plus) {
    for word in buf.chunks_mut(8) {
        let v = rng.next_u64().to_le_bytes();
        word.copy_from_slice(&v[..word.len()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_dir_is_removed_with_its_files() {
        let parent = tempfile::tempdir().unwrap();
        let path;
        {
            let dir = TestDir::create(parent.path()).unwrap();
            path = dir.path().to_path_buf();
            lay_out(
                &path.join("f"),
                3 << 20 | 17,
                1,
                &crate::workload::observe::Quiet,
            )
            .unwrap();
            assert_eq!(fs::metadata(path.join("f")).unwrap().len(), 3 << 20 | 17);
        }
        assert!(!path.exists());
    }

    #[test]
    fn never_overwrites_an_existing_file() {
        let parent = tempfile::tempdir().unwrap();
        let precious = parent.path().join("precious");
        fs::write(&precious, b"keep").unwrap();
        assert!(lay_out(&precious, 4096, 1, &crate::workload::observe::Quiet).is_err());
        assert_eq!(fs::read(&precious).unwrap(), b"keep");
    }

    #[test]
    fn missing_directory_is_named() {
        let err = TestDir::create(Path::new("/nonexistent/dir"))
            .err()
            .unwrap();
        assert!(err.to_string().contains("/nonexistent/dir"), "{err}");
    }

    #[test]
    fn random_fill_is_not_zero() {
        let mut buf = vec![0u8; 4099];
        fill_random(&mut buf, &mut Xoroshiro128Plus::seeded(5));
        assert!(buf.iter().filter(|b| **b == 0).count() < 100);
    }
}

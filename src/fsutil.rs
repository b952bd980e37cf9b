//! Writing result files: the one way every command replaces a file it was told to
//! write (`report -o`, `export --output`, fio's `--output`).

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// Numbers the temporary files of this process.
static NEXT: AtomicU64 = AtomicU64::new(0);

/// Replaces `path` with `bytes` whole, so that a reader (a Prometheus textfile
/// collector, a script polling a report) sees the old file or the new one, never half
/// of one, and a crash leaves one of the two on disk.
///
/// The bytes go to a temporary file beside `path` (the same file system, so the
/// rename is atomic), which is synced before it is renamed over `path`; then the
/// directory is synced, since the rename is only durable once the directory entry is.
/// On any error before the rename the temporary file is removed and `path` is left
/// as it was.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::other("the path names no file"))?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    // A name no other writer uses (the pid for other processes, a counter for other
    // threads), created exclusively so that nothing already there, a symlink
    // included, is ever followed or overwritten.
    let (tmp, mut file) = loop {
        let tmp = dir.join(format!(
            ".{}.hostbench-{}-{}.tmp",
            name.to_string_lossy(),
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(f) => break (tmp, f),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    };
    let replaced = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .and_then(|()| std::fs::rename(&tmp, path));
    drop(file);
    if let Err(e) = replaced {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    File::open(dir).and_then(|d| d.sync_all()).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("written, but syncing its directory failed, so the new file may not survive a crash: {e}"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Files in `dir` besides `keep`: a temporary file left behind shows here.
    fn others(dir: &Path, keep: &str) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != keep)
            .collect()
    }

    #[test]
    fn creates_then_replaces_leaving_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("report.html");
        write_atomically(&target, b"first").unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"first");
        write_atomically(&target, b"second, longer").unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"second, longer");
        assert!(others(dir.path(), "report.html").is_empty());
    }

    /// A write that fails after the temporary file exists (the rename: the target is
    /// a directory) removes it and leaves the target as it was.
    #[test]
    fn a_failure_touches_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("inside"), b"keep").unwrap();
        assert!(write_atomically(&target, b"new").is_err());
        assert_eq!(std::fs::read(target.join("inside")).unwrap(), b"keep");
        assert!(others(dir.path(), "out").is_empty());

        let missing = dir.path().join("no-such-dir").join("out");
        assert!(write_atomically(&missing, b"new").is_err());
        assert!(!missing.exists());
        assert!(write_atomically(Path::new("/"), b"new").is_err());
    }

    /// A file already at a temporary name (another writer's, or planted) is neither
    /// followed nor overwritten.
    #[test]
    fn never_reuses_a_temporary_name() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("t.prom");
        let next = NEXT.load(Ordering::Relaxed);
        for n in next..next + 4 {
            let taken = dir
                .path()
                .join(format!(".t.prom.hostbench-{}-{n}.tmp", std::process::id()));
            std::fs::write(&taken, b"someone else's").unwrap();
        }
        write_atomically(&target, b"# EOF\n").unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"# EOF\n");
        let left: Vec<String> = others(dir.path(), "t.prom");
        assert_eq!(left.len(), 4, "{left:?}");
        for name in left {
            assert_eq!(
                std::fs::read(dir.path().join(name)).unwrap(),
                b"someone else's"
            );
        }
    }
}

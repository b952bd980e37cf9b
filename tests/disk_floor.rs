//! Direct-I/O reads cannot complete faster than the disk answers. The test measures
//! that floor itself, with O_DIRECT preads of its own on a file on the test disk
//! (cargo's scratch space under target/, not a RAM file system), and checks that
//! neither the fio personality nor `hostbench disk` times a direct 4 KiB read below
//! a quarter of it, for every engine at depths 1 and 16. A page-cache read or a
//! completion timed from the wrong moment takes about a microsecond; the disk's
//! floor is tens of microseconds even on a host-cached virtual disk.
//!
//! fio's own clat (from the return of the submission call) can read below a
//! microsecond with io_uring and libaio when the device answered during that call
//! (fio 3.33 prints the same): there the personality must say so.

mod common;

use common::*;
use serde_json::Value;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const FILE_SIZE: u64 = 64 << 20;
const BLOCK: usize = 4096;

/// A directory on the disk the tests run on (target/tmp), removed when dropped.
fn disk_dir() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

/// A file of `FILE_SIZE` random bytes, written and synced, so every read hits
/// allocated blocks (a hole or an unwritten extent reads without the device).
fn lay_out(dir: &Path) -> PathBuf {
    let path = dir.join("floor");
    let mut f = File::create(&path).unwrap();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut chunk = vec![0u8; 1 << 20];
    for _ in 0..FILE_SIZE >> 20 {
        for word in chunk.chunks_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            word.copy_from_slice(&x.to_le_bytes());
        }
        f.write_all(&chunk).unwrap();
    }
    f.sync_all().unwrap();
    path
}

/// The fastest of 2,000 direct 4 KiB reads at random offsets, by this test's own
/// preads.
fn fastest_direct_read(path: &Path) -> Duration {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .expect("the test disk takes O_DIRECT");
    let layout = std::alloc::Layout::from_size_align(BLOCK, BLOCK).unwrap();
    // SAFETY: a non-zero size; freed below.
    let ptr = unsafe { std::alloc::alloc(layout) };
    assert!(!ptr.is_null());
    // SAFETY: `ptr` holds BLOCK bytes we own until dealloc.
    let buf = unsafe { std::slice::from_raw_parts_mut(ptr, BLOCK) };
    let blocks = FILE_SIZE / BLOCK as u64;
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut fastest = Duration::MAX;
    for _ in 0..2000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let at = (x % blocks) * BLOCK as u64;
        let t = Instant::now();
        assert_eq!(f.read_at(buf, at).unwrap(), BLOCK);
        fastest = fastest.min(t.elapsed());
    }
    // SAFETY: allocated above with this layout.
    unsafe { std::alloc::dealloc(ptr, layout) };
    fastest
}

/// A quarter of the fastest direct read (the smaller of two measurements, before
/// and after the runs checked): well below anything the disk does on a busy
/// shared VM, well above a cached read.
fn floor_ns(before: Duration, path: &Path) -> u64 {
    before.min(fastest_direct_read(path)).as_nanos() as u64 / 4
}

/// Whether `engine` can be set up here (io_uring is refused by some sandboxes).
fn engine_runs(out: &std::process::Output, engine: &str) -> bool {
    let err = stderr(out);
    if !out.status.success() && err.contains("cannot set up") {
        missing(
            &format!("the {engine} engine ({})", err.trim()),
            "run the tests where the kernel allows it",
        );
        return false;
    }
    assert!(out.status.success(), "{engine}: {err}");
    true
}

const ENGINES: [&str; 4] = ["psync", "sync", "libaio", "io_uring"];

#[test]
fn fio_personality_direct_reads_never_beat_the_disk() {
    let dir = disk_dir();
    let path = lay_out(dir.path());
    let before = fastest_direct_read(&path);
    let mut seen = Vec::new();
    for engine in ENGINES {
        for depth in ["1", "16"] {
            let out = hostbench()
                .args([
                    "fio",
                    "--output-format=json",
                    "--name=floor",
                    &format!("--filename={}", path.display()),
                    "--size=64M",
                    "--direct=1",
                    "--rw=randread",
                    "--bs=4k",
                    &format!("--ioengine={engine}"),
                    &format!("--iodepth={depth}"),
                    "--runtime=2",
                    "--time_based",
                ])
                .output()
                .unwrap();
            if !engine_runs(&out, engine) {
                continue;
            }
            let v: Value = serde_json::from_slice(&out.stdout).expect("fio JSON");
            let read = &v["jobs"][0]["read"];
            let min = |key: &str| read[key]["min"].as_u64().unwrap();
            seen.push((engine, depth, min("lat_ns"), min("clat_ns"), stderr(&out)));
        }
    }
    let floor = floor_ns(before, &path);
    for (engine, depth, lat, clat, _) in &seen {
        eprintln!(
            "{engine} iodepth={depth}: lat min {lat} ns, clat min {clat} ns; floor {floor} ns"
        );
    }
    for (engine, depth, lat, clat, err) in &seen {
        let what = format!("{engine} iodepth={depth}: floor {floor} ns");
        assert!(*lat >= floor, "{what}: lat min {lat} ns");
        if matches!(*engine, "psync" | "sync") {
            assert!(
                *clat >= floor,
                "{what}: clat min {clat} ns (no slat: clat is lat)"
            );
        } else if *clat < floor {
            assert!(
                err.contains("were complete before the")
                    && err.contains("call submitting them returned"),
                "{what}: clat min {clat} ns with no word why: {err}"
            );
        }
    }
}

#[test]
fn native_direct_reads_never_beat_the_disk() {
    let dir = disk_dir();
    let path = lay_out(dir.path());
    let before = fastest_direct_read(&path);
    let mut seen = Vec::new();
    for engine in ENGINES {
        for depth in ["1", "16"] {
            let out = hostbench()
                .args([
                    "disk",
                    "--dir",
                    dir.path().to_str().unwrap(),
                    "--pattern",
                    "randread",
                    "--bs",
                    "4K",
                    "--size",
                    "64M",
                    "--runtime",
                    "1s",
                    "--ramp",
                    "200ms",
                    "--engine",
                    engine,
                    "--iodepth",
                    depth,
                    "--json",
                    "--no-save",
                ])
                .output()
                .unwrap();
            if !engine_runs(&out, engine) {
                continue;
            }
            let v: Value = serde_json::from_slice(&out.stdout).expect("disk JSON");
            let min = v["outcomes"][0]["latency"]["min_ns"].as_f64().unwrap();
            seen.push((engine, depth, min));
        }
    }
    let floor = floor_ns(before, &path) as f64;
    for (engine, depth, min) in seen {
        eprintln!("{engine} iodepth={depth}: read latency min {min} ns; floor {floor} ns");
        assert!(
            min >= floor,
            "{engine} iodepth={depth}: read latency min {min} ns below the disk's floor {floor} ns"
        );
    }
}

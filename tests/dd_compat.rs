//! The dd personality against GNU dd: the same files come out, the same record lines
//! are printed, and the transfer line has dd's shape. Writing to a block device is
//! refused without --allow-device.

mod common;
use common::*;
use std::path::Path;
use std::process::Command;

fn ours(args: &[String]) -> std::process::Output {
    let mut full = vec!["dd".to_string()];
    full.extend_from_slice(args);
    hostbench().args(&full).output().unwrap()
}

fn gnu(args: &[String]) -> std::process::Output {
    Command::new("dd").args(args).output().unwrap()
}

/// Replaces the numbers that depend on speed (time and rate) in dd's last line.
fn shape(line: &str) -> String {
    match line.split_once(" copied, ") {
        Some((amount, _)) => format!("{amount} copied, T s, R"),
        None => line.to_string(),
    }
}

fn args(dir: &Path, template: &str) -> Vec<String> {
    template
        .split_whitespace()
        .map(|a| a.replace("DIR", dir.to_str().unwrap()))
        .collect()
}

#[test]
fn same_files_and_record_lines_as_gnu_dd() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    let data: Vec<u8> = (0..1_000_003u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&src, &data).unwrap();
    let cases = [
        "if=/dev/zero of=DIR/OUT bs=4096 count=300 conv=fdatasync",
        "if=DIR/src of=DIR/OUT bs=4k",
        "if=DIR/src of=DIR/OUT bs=1M",
        "if=DIR/src of=DIR/OUT ibs=1000 obs=4096",
        "if=DIR/src of=DIR/OUT bs=512 skip=3 seek=5 count=100",
        "if=DIR/src of=DIR/OUT bs=300 count=7 conv=sync",
        "if=DIR/src of=DIR/OUT bs=64k oflag=dsync count=3",
        "if=DIR/src of=DIR/OUT bs=1k count=1 status=noxfer",
        "if=DIR/src of=DIR/OUT bs=1k count=1 status=none",
        "if=DIR/src of=DIR/OUT bs=4096 oflag=direct",
        "if=DIR/src of=DIR/OUT bs=4096 count=2x3",
        "if=DIR/src of=DIR/OUT bs=4k obs=512",
        "if=DIR/src of=DIR/OUT ibs=1000 bs=8k",
        "if=DIR/src of=DIR/OUT iflag=direct ibs=4096 obs=1000",
        "if=DIR/src of=DIR/OUT ibs=1000 obs=3000 conv=sync count=7",
    ];
    for case in cases {
        // notrunc keeps what a previous case wrote: start each case from the same file.
        for out in ["ours", "gnu"] {
            std::fs::write(
                dir.path().join(out),
                b"previous content that must be replaced",
            )
            .unwrap();
        }
        let a = args(dir.path(), &case.replace("OUT", "ours"));
        let g = args(dir.path(), &case.replace("OUT", "gnu"));
        let (o, r) = (ours(&a), gnu(&g));
        assert_eq!(o.status.code(), r.status.code(), "{case}: {}", stderr(&o));
        assert_eq!(
            std::fs::read(dir.path().join("ours")).unwrap(),
            std::fs::read(dir.path().join("gnu")).unwrap(),
            "{case}: files differ"
        );
        let theirs = String::from_utf8_lossy(&r.stderr).into_owned();
        let ours_lines: Vec<String> = stderr(&o).lines().map(shape).collect();
        let gnu_lines: Vec<String> = theirs.lines().map(shape).collect();
        assert_eq!(ours_lines, gnu_lines, "{case}");
    }
}

#[test]
fn compat_lines_run() {
    let dir = tempfile::tempdir().unwrap();
    // COMPAT.md's lines, sizes shrunk: count=2M becomes count=2k.
    let img = dir.path().join("1.img");
    let out = ours(&args(
        dir.path(),
        "if=/dev/zero of=DIR/1.img bs=4096 count=2k conv=fdatasync",
    ));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::metadata(&img).unwrap().len(), 4096 * 2048);
    let text = stderr(&out);
    assert!(
        text.starts_with(
            "2048+0 records in\n2048+0 records out\n8388608 bytes (8.4 MB, 8.0 MiB) copied, "
        ),
        "{text}"
    );
    assert!(text.trim_end().ends_with("B/s"), "{text}");
    let out = ours(&args(dir.path(), "of=/dev/null if=DIR/1.img bs=4096"));
    assert!(out.status.success());
    assert!(stderr(&out).starts_with("2048+0 records in\n"));
}

#[test]
fn errors_like_gnu_dd() {
    for (args, needle) in [
        (vec!["bs=8Q"], "dd: invalid number: ‘8Q’"),
        (
            vec!["foo=bar"],
            "dd: unrecognized operand ‘foo=bar’\nTry 'dd --help' for more information.",
        ),
        (
            vec!["if=/nonexistent", "of=/dev/null"],
            "dd: failed to open '/nonexistent': No such file or directory",
        ),
        (
            vec!["if=/dev/zero", "of=/dev/null", "conv=bogus"],
            "dd: invalid conversion: ‘bogus’",
        ),
    ] {
        let a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let o = ours(&a);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn refuses_to_write_a_block_device() {
    // A loop device of the test's own, so a regression costs a scratch file, not the
    // host's disk.
    let Some(dev) = LoopDevice::new() else {
        return;
    };
    let o = ours(&[
        "if=/dev/zero".to_string(),
        format!("of={}", dev.path),
        "count=1".into(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("--allow-device"), "{}", stderr(&o));
    assert!(dev.untouched(), "{} was written", dev.path);
}

/// dd reading standard input takes exactly what it copies: the rest is left for the
/// next reader, as with GNU dd.
#[test]
fn stdin_is_read_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::write(&input, b"abcdefghijklmnopqrstuvwxyz").unwrap();
    let script = |dd: &str| {
        format!(
            "({dd} bs=3 count=2 skip=1 2>/dev/null; cat) < {}",
            input.display()
        )
    };
    let ours = Command::new("sh")
        .args([
            "-c",
            &script(&format!("{} dd", env!("CARGO_BIN_EXE_hostbench"))),
        ])
        .output()
        .unwrap();
    let theirs = Command::new("sh")
        .args(["-c", &script("dd")])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&ours.stdout),
        String::from_utf8_lossy(&theirs.stdout)
    );
}

#[test]
fn seek_beyond_any_file_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::write(&out, b"keep me").unwrap();
    let o = ours(&[
        "if=/dev/zero".into(),
        format!("of={}", out.display()),
        "bs=1024".into(),
        "seek=18014398509481984".into(),
        "count=1".into(),
        "conv=notrunc".into(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("cannot seek"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&out).unwrap(), b"keep me");
}

/// `dd … | head` ends dd with SIGPIPE (the shell reports 141), as GNU dd does.
#[test]
fn closed_pipe_ends_dd_with_sigpipe() {
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    let mut child = hostbench()
        .args(["dd", "if=/dev/zero", "bs=1M", "count=100"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut first = [0u8; 10];
    out.read_exact(&mut first).unwrap();
    drop(out);
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGPIPE), "{status:?}");
}

//! The `dd` personality: GNU dd's operands (`if of bs ibs obs count skip seek conv
//! iflag oflag status`), its number suffixes, and its three closing lines on stderr:
//!
//! ```text
//! 300+0 records in
//! 300+0 records out
//! 314572800 bytes (315 MB, 300 MiB) copied, 1.33984 s, 235 MB/s
//! ```
//!
//! Reading a block device is allowed (guides do `dd if=/dev/sda of=/dev/null`);
//! writing to one is refused unless `--allow-device` is given.

use crate::measure::stop_requested;
use crate::workload::buffer::AlignedBuffer;
use crate::workload::disk::copy::{self, Copied, CopySpec, End};
use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::process::ExitCode;
use std::time::{Duration, Instant};
use thiserror::Error;

#[derive(Debug, Default, Clone, PartialEq)]
pub(super) struct Args {
    input: Option<String>,
    output: Option<String>,
    ibs: usize,
    obs: usize,
    /// `bs=` given: every input block is written as it was read.
    same_blocks: bool,
    count: Option<u64>,
    skip: u64,
    seek: u64,
    conv: Conv,
    iflag: Flags,
    oflag: Flags,
    status: Status,
    allow_device: bool,
}

#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Conv {
    fdatasync: bool,
    fsync: bool,
    notrunc: bool,
    sync: bool,
}

#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Flags {
    direct: bool,
    dsync: bool,
    sync: bool,
}

#[derive(Debug, Default, Clone, Copy, PartialEq)]
enum Status {
    #[default]
    Default,
    None,
    NoXfer,
    Progress,
}

/// A usage error, printed as GNU dd prints it; exit code 1.
#[derive(Debug, PartialEq)]
pub(super) struct Usage {
    message: String,
    hint: bool,
}

fn usage(message: String, hint: bool) -> Usage {
    Usage { message, hint }
}

/// GNU dd's numbers: decimal digits with an optional suffix (c=1, w=2, b=512,
/// K/k/KiB=1024, kB/KB=1000, M/MiB, MB, G, T, P, E), and products `AxB`.
fn parse_number(s: &str) -> Option<u64> {
    s.split('x')
        .try_fold(1u64, |acc, part| acc.checked_mul(parse_factor(part)?))
}

fn parse_factor(s: &str) -> Option<u64> {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    if end == 0 {
        return None;
    }
    let n: u64 = s[..end].parse().ok()?;
    let power = |base: u64, exp: u32| base.checked_pow(exp);
    let letters = "KMGTPE";
    let mult = match &s[end..] {
        // A bare "B" is a byte, as GNU's optional-suffix rule reads it.
        "" | "c" | "B" => Some(1),
        "w" => Some(2),
        "b" => Some(512),
        "k" => Some(1024),
        suffix => {
            let mut chars = suffix.chars();
            let letter = chars.next()?;
            // Units are upper case, except that k may be written small (kB, kiB).
            let exp = letters.find(letter.to_ascii_uppercase())? as u32 + 1;
            if letter.is_ascii_lowercase() && letter != 'k' {
                return None;
            }
            match chars.as_str() {
                "" | "iB" => power(1024, exp),
                "B" => power(1000, exp),
                _ => None,
            }
        }
    }?;
    n.checked_mul(mult)
}

fn parse_flags(value: &str, what: &str) -> Result<Flags, Usage> {
    let mut f = Flags::default();
    for flag in value.split(',') {
        match flag {
            "direct" => f.direct = true,
            "dsync" => f.dsync = true,
            "sync" => f.sync = true,
            other => return Err(usage(format!("invalid {what} flag: ‘{other}’"), true)),
        }
    }
    Ok(f)
}

pub(super) fn parse(args: &[String]) -> Result<Args, Usage> {
    let mut a = Args {
        ibs: 512,
        obs: 512,
        ..Args::default()
    };
    let number =
        |v: &str| parse_number(v).ok_or_else(|| usage(format!("invalid number: ‘{v}’"), false));
    let block = |v: &str| match number(v)? {
        0 => Err(usage(format!("invalid number: ‘{v}’"), false)),
        // GNU dd 9 takes blocks up to what a size_t index and ssize_t reads allow.
        n if n > (isize::MAX as u64) / 2 => Err(usage(
            format!("invalid number: ‘{v}’: Value too large for defined data type"),
            false,
        )),
        n => Ok(n as usize),
    };
    // bs= wins over ibs= and obs= wherever it stands.
    let mut bs = None;
    for arg in args {
        if arg == "--allow-device" {
            a.allow_device = true;
            continue;
        }
        let Some((key, value)) = arg.split_once('=') else {
            return Err(usage(format!("unrecognized operand ‘{arg}’"), true));
        };
        match key {
            "if" => a.input = Some(value.to_string()),
            "of" => a.output = Some(value.to_string()),
            "bs" => bs = Some(block(value)?),
            "ibs" => a.ibs = block(value)?,
            "obs" => a.obs = block(value)?,
            "count" => a.count = Some(number(value)?),
            "skip" => a.skip = number(value)?,
            "seek" => a.seek = number(value)?,
            "iflag" => a.iflag = parse_flags(value, "input")?,
            "oflag" => a.oflag = parse_flags(value, "output")?,
            "conv" => {
                for c in value.split(',') {
                    match c {
                        "fdatasync" => a.conv.fdatasync = true,
                        "fsync" => a.conv.fsync = true,
                        "notrunc" => a.conv.notrunc = true,
                        "sync" => a.conv.sync = true,
                        other => return Err(usage(format!("invalid conversion: ‘{other}’"), true)),
                    }
                }
            }
            "status" => {
                a.status = match value {
                    "none" => Status::None,
                    "noxfer" => Status::NoXfer,
                    "progress" => Status::Progress,
                    other => return Err(usage(format!("invalid status level: ‘{other}’"), true)),
                }
            }
            _ => return Err(usage(format!("unrecognized operand ‘{arg}’"), true)),
        }
    }
    if let Some(n) = bs {
        (a.ibs, a.obs, a.same_blocks) = (n, n, true);
    }
    Ok(a)
}

fn open_flags(f: Flags) -> i32 {
    let mut flags = 0;
    if f.direct {
        flags |= libc::O_DIRECT;
    }
    if f.dsync {
        flags |= libc::O_DSYNC;
    }
    if f.sync {
        flags |= libc::O_SYNC;
    }
    flags
}

/// Counts of full and partial blocks and bytes, for the closing lines.
#[derive(Debug, Default, Clone, Copy)]
struct Totals {
    in_full: u64,
    in_partial: u64,
    out_full: u64,
    out_partial: u64,
    bytes: u64,
}

impl Flags {
    fn words(self) -> Vec<&'static str> {
        [
            (self.direct, "direct"),
            (self.dsync, "dsync"),
            (self.sync, "sync"),
        ]
        .into_iter()
        .filter_map(|(on, w)| on.then_some(w))
        .collect()
    }
}

/// The copy as a measurement, in dd's words, between the kinds of file it joined.
fn copy_spec(a: &Args, input: End, output: End) -> CopySpec {
    let c = a.conv;
    CopySpec {
        input,
        output,
        ibs: a.ibs,
        obs: a.obs,
        bs: a.same_blocks,
        count: a.count,
        iflag: a.iflag.words(),
        oflag: a.oflag.words(),
        conv: [
            (c.fdatasync, "fdatasync"),
            (c.fsync, "fsync"),
            (c.notrunc, "notrunc"),
            (c.sync, "sync"),
        ]
        .into_iter()
        .filter_map(|(on, w)| on.then_some(w))
        .collect(),
    }
}

/// Keeps one outcome per copy. dd has no time option, so a soak slice
/// (`record.slice`) changes nothing: the copy does what its operands say.
pub fn main(args: &[String], record: &mut super::Record) -> ExitCode {
    // dd dies of SIGPIPE when its reader goes away (`dd … | head` exits 141), as
    // GNU dd does; Rust ignores the signal by default.
    // SAFETY: restoring the default disposition of one signal.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    if args.iter().any(|a| a == "--help") {
        println!(
            "Usage: dd [OPERAND]...\nCopy a file, converting and formatting according to the operands.\n\n  \
             bs=BYTES ibs=BYTES obs=BYTES count=N skip=N seek=N if=FILE of=FILE\n  \
             conv=fdatasync,fsync,notrunc,sync iflag=FLAGS oflag=FLAGS (direct,dsync,sync)\n  \
             status=none|noxfer|progress\n  --allow-device  allow writing to a block device\n\n\
             hostbench's dd personality (GNU dd's operands and output)."
        );
        return ExitCode::SUCCESS;
    }
    if args.iter().any(|a| a == "--version") {
        println!(
            "dd (hostbench {}) — GNU coreutils dd compatible",
            env!("CARGO_PKG_VERSION")
        );
        return ExitCode::SUCCESS;
    }
    let a = match parse(args) {
        Ok(a) => a,
        Err(u) => {
            eprintln!("dd: {}", u.message);
            if u.hint {
                eprintln!("Try 'dd --help' for more information.");
            }
            return ExitCode::from(1);
        }
    };
    match copy(&a) {
        Ok((totals, elapsed, (input, output))) => {
            report(&a, &totals, elapsed);
            let copied = Copied {
                bytes: totals.bytes,
                elapsed,
                interrupted: stop_requested(),
            };
            record.keep(copy::outcome(&copy_spec(&a, input, output), &copied));
            if stop_requested() {
                ExitCode::from(130)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err((e, partial)) => {
            eprintln!("dd: {e}");
            if let Some((totals, elapsed)) = partial {
                report(&a, &totals, elapsed);
            }
            ExitCode::from(1)
        }
    }
}

/// Why a copy failed, in GNU dd's words (after `dd: `); `name` is the operand's file,
/// or "standard input"/"standard output". Exit 1.
#[derive(Debug, Error)]
enum DdError {
    #[error("failed to open '{path}': {}", os_message(.source))]
    Open { path: String, source: io::Error },
    /// `skip=` blocks of `ibs=` bytes are more than a file offset holds.
    #[error("'{name}': cannot skip: {TOO_LARGE}")]
    SkipTooLarge { name: String },
    #[error("'{name}': cannot skip: {}", os_message(.source))]
    Skip { name: String, source: io::Error },
    /// `seek=` blocks of `obs=` bytes are more than a file offset holds.
    #[error("'{name}': cannot seek: {TOO_LARGE}")]
    SeekTooLarge { name: String },
    #[error("'{name}': cannot seek: {}", os_message(.source))]
    Seek { name: String, source: io::Error },
    #[error(
        "refusing to write to block device '{path}': it would destroy its contents; add --allow-device if you mean it"
    )]
    BlockDevice { path: String },
    #[error(
        "failed to truncate to {size} bytes in output file '{path}': {}",
        os_message(.source)
    )]
    Truncate {
        path: String,
        size: u64,
        source: io::Error,
    },
    /// The input or output buffer could not be allocated.
    #[error("memory exhausted")]
    Memory,
    #[error("error reading '{name}': {}", os_message(.source))]
    Read { name: String, source: io::Error },
    #[error("error writing '{name}': {}", os_message(.source))]
    Write { name: String, source: io::Error },
    /// conv=fsync or conv=fdatasync failed (GNU dd says fdatasync for both).
    #[error("fdatasync failed for '{name}': {}", os_message(.source))]
    Sync { name: String, source: io::Error },
}

/// A failed copy, with what it had copied when it failed, if it had begun.
type Failure = (DdError, Option<(Totals, Duration)>);

/// Reads a file descriptor directly: no read-ahead buffer, so a dd reading standard
/// input takes exactly the bytes it copies and leaves the rest to the next reader.
struct FdReader {
    fd: std::os::fd::RawFd,
    /// Keeps an opened file alive; `None` for standard input.
    _file: Option<File>,
}

impl Read for FdReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        // SAFETY: reading into a buffer we own, of its length.
        let n = unsafe { libc::read(self.fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }
}

const TOO_LARGE: &str = "Value too large for defined data type";

fn open_input(a: &Args) -> Result<FdReader, DdError> {
    let (mut reader, name) = match &a.input {
        None => (
            FdReader { fd: 0, _file: None },
            "standard input".to_string(),
        ),
        Some(path) => {
            let f = OpenOptions::new()
                .read(true)
                .custom_flags(open_flags(a.iflag))
                .open(path)
                .map_err(|source| DdError::Open {
                    path: path.clone(),
                    source,
                })?;
            (
                FdReader {
                    fd: f.as_raw_fd(),
                    _file: Some(f),
                },
                path.clone(),
            )
        }
    };
    if a.skip > 0 {
        let bytes = a
            .skip
            .checked_mul(a.ibs as u64)
            .filter(|b| *b <= i64::MAX as u64)
            .ok_or_else(|| DdError::SkipTooLarge { name: name.clone() })?;
        skip(&mut reader, &name, bytes)?;
    }
    Ok(reader)
}

fn skip(reader: &mut FdReader, name: &str, bytes: u64) -> Result<(), DdError> {
    // SAFETY: lseek on an open descriptor.
    if unsafe { libc::lseek(reader.fd, bytes as i64, libc::SEEK_CUR) } >= 0 {
        return Ok(());
    }
    let skip_error = |source| DdError::Skip {
        name: name.into(),
        source,
    };
    let e = io::Error::last_os_error();
    if e.raw_os_error() != Some(libc::ESPIPE) {
        return Err(skip_error(e));
    }
    // A pipe: read and discard.
    io::copy(&mut reader.take(bytes), &mut io::sink()).map_err(skip_error)?;
    Ok(())
}

/// The output: a file, or standard output (fd 1). Positioned at `seek` blocks.
fn open_output(a: &Args) -> Result<(std::os::fd::RawFd, Option<File>), DdError> {
    let start = a
        .seek
        .checked_mul(a.obs as u64)
        .filter(|b| *b <= i64::MAX as u64);
    let name = a.output.clone().unwrap_or_else(|| "standard output".into());
    let Some(path) = &a.output else {
        if a.seek > 0 {
            let start = start.ok_or(DdError::SeekTooLarge { name: name.clone() })?;
            // SAFETY: lseek on standard output.
            if unsafe { libc::lseek(1, start as i64, libc::SEEK_CUR) } < 0 {
                return Err(DdError::Seek {
                    name,
                    source: io::Error::last_os_error(),
                });
            }
        }
        return Ok((1, None));
    };
    if let Ok(meta) = std::fs::metadata(path)
        && meta.file_type().is_block_device()
        && !a.allow_device
    {
        return Err(DdError::BlockDevice { path: path.clone() });
    }
    let start = start.ok_or_else(|| DdError::SeekTooLarge { name: name.clone() })?;
    let f = OpenOptions::new()
        .write(true)
        .create(true)
        .custom_flags(open_flags(a.oflag))
        .open(path)
        .map_err(|source| DdError::Open {
            path: path.clone(),
            source,
        })?;
    let regular = f
        .metadata()
        .map(|m| m.file_type().is_file())
        .unwrap_or(false);
    if regular && !a.conv.notrunc {
        f.set_len(start).map_err(|source| DdError::Truncate {
            path: path.clone(),
            size: start,
            source,
        })?;
    }
    // SAFETY: lseek on an open descriptor.
    if start > 0 && unsafe { libc::lseek(f.as_raw_fd(), start as i64, libc::SEEK_SET) } < 0 {
        return Err(DdError::Seek {
            name,
            source: io::Error::last_os_error(),
        });
    }
    Ok((f.as_raw_fd(), Some(f)))
}

/// Writes all of `data` to `fd`.
fn write_fd(fd: std::os::fd::RawFd, mut data: &[u8]) -> io::Result<()> {
    while !data.is_empty() {
        // SAFETY: writing from a slice we own, of its length.
        let n = unsafe { libc::write(fd, data.as_ptr().cast(), data.len()) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        data = &data[n as usize..];
    }
    Ok(())
}

/// The message part of an OS error, as GNU tools print it.
fn os_message(e: &io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// Copies; returns the totals, the time taken and what the input and output were.
fn copy(a: &Args) -> Result<(Totals, Duration, (End, End)), Failure> {
    let mut input = open_input(a).map_err(|m| (m, None))?;
    let (out_fd, output) = open_output(a).map_err(|m| (m, None))?;
    let ends = (End::of_fd(input.fd), End::of_fd(out_fd));
    // Separate, aligned input and output buffers, so direct I/O works on both sides
    // whatever ibs and obs are. Pages are mapped only when touched.
    let (in_buffer, out_buffer) = match (
        AlignedBuffer::lazy(a.ibs),
        AlignedBuffer::lazy(a.ibs + a.obs),
    ) {
        (Some(i), Some(o)) => (i, o),
        _ => return Err((DdError::Memory, None)),
    };
    // SAFETY: our own buffers of these lengths.
    let inbuf = unsafe { std::slice::from_raw_parts_mut(in_buffer.as_ptr(), a.ibs) };
    let buf = unsafe { std::slice::from_raw_parts_mut(out_buffer.as_ptr(), a.ibs + a.obs) };
    let mut t = Totals::default();
    let mut pending = 0usize; // bytes waiting in `buf` for a full output block
    let start = Instant::now();
    let mut last_progress = start;
    let out_name = a.output.clone().unwrap_or_else(|| "standard output".into());
    let in_name = a.input.clone().unwrap_or_else(|| "standard input".into());

    let write_out = |data: &[u8], t: &mut Totals, last: bool| -> io::Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        if last && a.oflag.direct && !data.len().is_multiple_of(512) {
            // Direct I/O cannot write a short final block: drop O_DIRECT for it, as GNU dd does.
            // SAFETY: fcntl on an open descriptor.
            unsafe {
                let fl = libc::fcntl(out_fd, libc::F_GETFL);
                libc::fcntl(out_fd, libc::F_SETFL, fl & !libc::O_DIRECT);
            }
        }
        write_fd(out_fd, data)?;
        if data.len() == a.obs {
            t.out_full += 1;
        } else {
            t.out_partial += 1;
        }
        t.bytes += data.len() as u64;
        Ok(())
    };

    loop {
        if a.count.is_some_and(|c| t.in_full + t.in_partial >= c) || stop_requested() {
            break;
        }
        let n = match input.read(inbuf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                return Err((
                    DdError::Read {
                        name: in_name,
                        source: e,
                    },
                    Some((t, start.elapsed())),
                ));
            }
        };
        let mut n = n;
        if n == a.ibs {
            t.in_full += 1;
        } else {
            t.in_partial += 1;
            if a.conv.sync {
                inbuf[n..].fill(0);
                n = a.ibs;
            }
        }
        buf[pending..pending + n].copy_from_slice(&inbuf[..n]);
        let fail = |source: io::Error, t: Totals| {
            (
                DdError::Write {
                    name: out_name.clone(),
                    source,
                },
                Some((t, start.elapsed())),
            )
        };
        if a.same_blocks {
            write_out(&buf[..n], &mut t, n < a.obs).map_err(|e| fail(e, t))?;
        } else {
            pending += n;
            let mut offset = 0;
            while pending - offset >= a.obs {
                write_out(&buf[offset..offset + a.obs], &mut t, false).map_err(|e| fail(e, t))?;
                offset += a.obs;
            }
            buf.copy_within(offset..pending, 0);
            pending -= offset;
        }
        if a.status == Status::Progress && last_progress.elapsed() >= Duration::from_secs(1) {
            eprint!("\r{}", transfer_line(t.bytes, start.elapsed(), true));
            last_progress = Instant::now();
        }
    }
    if pending > 0 {
        let data = buf[..pending].to_vec();
        write_out(&data, &mut t, true).map_err(|source| {
            (
                DdError::Write {
                    name: out_name.clone(),
                    source,
                },
                Some((t, start.elapsed())),
            )
        })?;
    }
    if let Some(f) = &output {
        let synced = if a.conv.fsync {
            f.sync_all()
        } else if a.conv.fdatasync {
            f.sync_data()
        } else {
            Ok(())
        };
        synced.map_err(|source| {
            (
                DdError::Sync {
                    name: out_name.clone(),
                    source,
                },
                Some((t, start.elapsed())),
            )
        })?;
    }
    let elapsed = start.elapsed();
    if a.status == Status::Progress && elapsed >= Duration::from_secs(1) {
        eprintln!();
    }
    Ok((t, elapsed, ends))
}

fn report(a: &Args, t: &Totals, elapsed: Duration) {
    if a.status == Status::None {
        return;
    }
    eprintln!("{}+{} records in", t.in_full, t.in_partial);
    eprintln!("{}+{} records out", t.out_full, t.out_partial);
    if a.status != Status::NoXfer {
        eprintln!("{}", transfer_line(t.bytes, elapsed, false));
    }
}

/// `314572800 bytes (315 MB, 300 MiB) copied, 1.33984 s, 235 MB/s`.
fn transfer_line(bytes: u64, elapsed: Duration, progress: bool) -> String {
    let amount = match bytes {
        1 => "1 byte".to_string(),
        b if b < 1000 => format!("{b} bytes"),
        b if b < 1024 => format!(
            "{b} bytes ({})",
            human_exact(b, 1000, &["kB", "MB", "GB", "TB", "PB", "EB"])
        ),
        b => format!(
            "{b} bytes ({}, {})",
            human_exact(b, 1000, &["kB", "MB", "GB", "TB", "PB", "EB"]),
            human_exact(b, 1024, &["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"])
        ),
    };
    let secs = elapsed.as_secs_f64();
    let time = if progress {
        format!("{secs:.0} s")
    } else {
        format!("{} s", crate::units::format_g(secs, 6))
    };
    let rate = if secs > 0.0 {
        human_rate(bytes as f64 / secs)
    } else {
        "Infinity B/s".into()
    };
    format!("{amount} copied, {time}, {rate}")
}

/// GNU's human-readable form of an exact byte count: one decimal below 10, rounded to
/// nearest.
fn human_exact(bytes: u64, base: u64, units: &[&str]) -> String {
    let mut value = bytes as f64;
    let mut unit = 0;
    value /= base as f64;
    while value >= base as f64 && unit < units.len() - 1 {
        value /= base as f64;
        unit += 1;
    }
    if value < 10.0 && format!("{value:.1}") != "10.0" {
        format!("{value:.1} {}", units[unit])
    } else {
        format!("{:.0} {}", value, units[unit])
    }
}

/// GNU's human-readable rate (an inexact quotient): one decimal unless that takes more
/// than four characters.
fn human_rate(bytes_per_sec: f64) -> String {
    const UNITS: [&str; 7] = ["kB/s", "MB/s", "GB/s", "TB/s", "PB/s", "EB/s", "ZB/s"];
    if (1.0..1000.0).contains(&bytes_per_sec) {
        return format!("{bytes_per_sec:.0} B/s");
    }
    let mut value = bytes_per_sec / 1000.0;
    let mut unit = 0;
    while value >= 1000.0 && unit < UNITS.len() - 1 {
        value /= 1000.0;
        unit += 1;
    }
    let one_decimal = format!("{value:.1}");
    if one_decimal.len() > 4 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{one_decimal} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn numbers_as_gnu_dd_reads_them() {
        assert_eq!(parse_number("4096"), Some(4096));
        assert_eq!(parse_number("2M"), Some(2 << 20));
        assert_eq!(parse_number("4k"), Some(4096));
        assert_eq!(parse_number("4K"), Some(4096));
        assert_eq!(parse_number("1KiB"), Some(1024));
        assert_eq!(parse_number("1kB"), Some(1000));
        assert_eq!(parse_number("1KB"), Some(1000));
        assert_eq!(parse_number("1MB"), Some(1_000_000));
        assert_eq!(parse_number("2b"), Some(1024));
        assert_eq!(parse_number("2w"), Some(4));
        assert_eq!(parse_number("2c"), Some(2));
        assert_eq!(parse_number("2x3"), Some(6));
        assert_eq!(parse_number("1kx2"), Some(2048));
        // Checked against GNU dd 9.1: a bare B is one byte, k may be small with iB.
        assert_eq!(parse_number("3B"), Some(3));
        assert_eq!(parse_number("1kiB"), Some(1024));
        for bad in [
            "8Q",
            "1Ki",
            "",
            "x",
            "-1",
            "1.5M",
            "99999999999999999999",
            "16E",
            "1mB",
            "1Mi",
        ] {
            assert_eq!(parse_number(bad), None, "{bad}");
        }
    }

    #[test]
    fn operands() {
        let a = parse(&strings(&[
            "if=/dev/zero",
            "of=1.img",
            "bs=4096",
            "count=2M",
            "conv=fdatasync",
        ]))
        .unwrap();
        assert_eq!((a.ibs, a.obs, a.count), (4096, 4096, Some(2 << 20)));
        assert!(a.conv.fdatasync && a.same_blocks);
        assert_eq!(
            parse(&strings(&["foo=bar"])).unwrap_err().message,
            "unrecognized operand ‘foo=bar’"
        );
        assert_eq!(
            parse(&strings(&["bs=8Q"])).unwrap_err().message,
            "invalid number: ‘8Q’"
        );
        assert_eq!(
            parse(&strings(&["bs=0"])).unwrap_err().message,
            "invalid number: ‘0’"
        );
        assert_eq!(
            parse(&strings(&["oflag=bogus"])).unwrap_err().message,
            "invalid output flag: ‘bogus’"
        );
        assert_eq!(
            parse(&strings(&["conv=bogus"])).unwrap_err().message,
            "invalid conversion: ‘bogus’"
        );
    }

    #[test]
    fn errors_in_gnu_dds_words() {
        let e = DdError::Open {
            path: "nope".into(),
            source: io::Error::from_raw_os_error(libc::ENOENT),
        };
        assert_eq!(
            e.to_string(),
            "failed to open 'nope': No such file or directory"
        );
        let e = DdError::SeekTooLarge {
            name: "standard output".into(),
        };
        assert_eq!(
            e.to_string(),
            "'standard output': cannot seek: Value too large for defined data type"
        );
    }

    #[test]
    fn closing_line_formats() {
        let d = Duration::from_secs_f64(1.33984);
        assert_eq!(
            transfer_line(314_572_800, d, false),
            "314572800 bytes (315 MB, 300 MiB) copied, 1.33984 s, 235 MB/s"
        );
        assert_eq!(
            transfer_line(12288, Duration::from_nanos(84_858), false),
            "12288 bytes (12 kB, 12 KiB) copied, 8.4858e-05 s, 145 MB/s"
        );
        assert_eq!(
            transfer_line(1, Duration::from_nanos(67_837), false),
            "1 byte copied, 6.7837e-05 s, 14.7 kB/s"
        );
        assert_eq!(
            transfer_line(1000, Duration::from_nanos(135_954), false),
            "1000 bytes (1.0 kB) copied, 0.000135954 s, 7.4 MB/s"
        );
        assert_eq!(
            human_exact(4_294_967_296 - 1, 1000, &["kB", "MB", "GB"]),
            "4.3 GB"
        );
        assert_eq!(
            human_exact(4_096_000_000, 1024, &["KiB", "MiB", "GiB"]),
            "3.8 GiB"
        );
    }

    #[test]
    fn g_format() {
        assert_eq!(crate::units::format_g(10.0372, 6), "10.0372");
        assert_eq!(crate::units::format_g(1.0, 6), "1");
        assert_eq!(crate::units::format_g(0.000135954, 6), "0.000135954");
        assert_eq!(crate::units::format_g(123456.789, 6), "123457");
        assert_eq!(crate::units::format_g(1234567.0, 6), "1.23457e+06");
    }

    #[test]
    fn parser_never_panics() {
        let alphabet: Vec<char> = "=0123456789kKMGTPEiBbcwx,ifoscnuntdrech-".chars().collect();
        let mut state = 0x1234_5678_9abc_def1u64;
        for _ in 0..5000 {
            let args: Vec<String> = (0..state % 4)
                .map(|_| {
                    (0..8)
                        .map(|_| {
                            state ^= state << 13;
                            state ^= state >> 7;
                            state ^= state << 17;
                            alphabet[(state % alphabet.len() as u64) as usize]
                        })
                        .collect()
                })
                .collect();
            let _ = parse(&args);
        }
    }
}

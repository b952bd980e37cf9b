//! A throwaway `redis-server` for the Redis step when no `--redis URL` is given:
//! Debian's binary on an ephemeral loopback port, no persistence (`--save ""
//! --appendonly no`), its files in a temporary directory, stopped when the guard is
//! dropped — after the step, on an error, or after Ctrl-C.
//!
//! It runs in a process group of its own, so a Ctrl-C at the terminal reaches
//! hostbench (which stops the load and drops the guard) and not the server in the
//! middle of a measurement; and it is told to die with hostbench (PR_SET_PDEATHSIG), so
//! a second Ctrl-C (which exits at once) or a kill leaves no server behind. The signal
//! comes when the *thread* that started the server ends, so start it on the thread
//! that runs the step, not on a helper thread.

use crate::workload::redis::conn::{self, Endpoint, RedisError, Setup};
use std::io;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Why the throwaway redis-server could not be started.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("cannot make {dir} for redis-server: {source}")]
    Dir {
        dir: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("no free loopback port: {0}")]
    NoPort(#[source] io::Error),
    #[error("cannot start {binary}: {source}")]
    Spawn {
        binary: PathBuf,
        #[source]
        source: io::Error,
    },
    /// The last of the attempts (each on another port) failed so.
    #[error("redis-server did not start: {0}")]
    NotReady(#[source] NotReady),
}

/// Why a server that was started does not serve.
#[derive(Debug, thiserror::Error)]
pub enum NotReady {
    #[error("it exited at once ({0})")]
    Exited(ExitStatus),
    #[error("it answered PING with {0:?}")]
    Answered(Vec<String>),
    /// No answer before the patience ran out: the last connection's error.
    #[error(transparent)]
    NoAnswer(RedisError),
    #[error("interrupted")]
    Interrupted,
}

/// Ports tried before giving up (another program may take the one chosen).
const ATTEMPTS: usize = 5;

/// The note when there is nothing to measure against, with the command that installs
/// a server on this distribution when /etc/os-release names a known one.
pub fn not_installed() -> String {
    let text = ["/etc/os-release", "/usr/lib/os-release"]
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok())
        .unwrap_or_default();
    not_installed_on(&text)
}

/// `not_installed` for the os-release text given.
pub fn not_installed_on(os_release: &str) -> String {
    match install_hint(os_release) {
        Some(cmd) => format!("redis-server not installed: install it ({cmd}), or give --redis URL"),
        None => "redis-server not installed: install it, or give --redis URL".into(),
    }
}

/// The command that installs a Redis server, from an os-release text (`ID`, then each
/// word of `ID_LIKE`): Debian and Ubuntu, Fedora and the RHEL family, SUSE, Alpine,
/// Arch. None for a distribution it does not know.
pub fn install_hint(os_release: &str) -> Option<&'static str> {
    let field = |key: &str| {
        os_release.lines().find_map(|line| {
            let (k, v) = line.trim().split_once('=')?;
            (k.trim() == key).then(|| v.trim().trim_matches(|c| c == '"' || c == '\'').to_string())
        })
    };
    let id = field("ID").unwrap_or_default();
    let like = field("ID_LIKE").unwrap_or_default();
    std::iter::once(id.as_str())
        .chain(like.split_whitespace())
        .find_map(|word| match word.to_ascii_lowercase().as_str() {
            "debian" | "ubuntu" | "linuxmint" | "pop" | "raspbian" => {
                Some("apt install redis-server")
            }
            "fedora" | "rhel" | "centos" | "rocky" | "almalinux" => Some("dnf install redis"),
            "opensuse" | "opensuse-leap" | "opensuse-tumbleweed" | "suse" | "sles" => {
                Some("zypper install redis")
            }
            "alpine" => Some("apk add redis"),
            "arch" | "manjaro" | "endeavouros" => Some("pacman -S redis"),
            _ => None,
        })
}

pub struct LocalRedis {
    child: Child,
    dir: PathBuf,
    pub port: u16,
}

/// `redis-server` on PATH, if any.
pub fn find() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("redis-server"))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

impl LocalRedis {
    /// Starts the server and waits until it answers PING. `Ok(None)` when redis-server
    /// is not installed.
    pub fn start() -> Result<Option<LocalRedis>, StartError> {
        let Some(binary) = find() else {
            return Ok(None);
        };
        remove_stale_dirs();
        static STARTED: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = STARTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("hostbench-redis-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|source| StartError::Dir {
            dir: dir.clone(),
            source,
        })?;
        // The port is free when we look and taken by the server a moment later; if
        // something else takes it in between, the server exits and we try another.
        let mut attempt = 1;
        loop {
            let port = free_port().map_err(StartError::NoPort)?;
            let child = spawn(&binary, port, &dir).map_err(|source| StartError::Spawn {
                binary: binary.clone(),
                source,
            })?;
            let mut server = LocalRedis {
                child,
                dir: dir.clone(),
                port,
            };
            let why = match server.wait_ready(Duration::from_secs(10)) {
                Ok(()) => return Ok(Some(server)),
                Err(why) => why,
            };
            server.stop();
            drop(server);
            if attempt == ATTEMPTS {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(StartError::NotReady(why));
            }
            attempt += 1;
        }
    }

    pub fn endpoint(&self) -> Endpoint {
        Endpoint::Tcp {
            host: "127.0.0.1".into(),
            port: self.port,
        }
    }

    fn wait_ready(&mut self, patience: Duration) -> Result<(), NotReady> {
        let deadline = Instant::now() + patience;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(NotReady::Exited(status));
            }
            match conn::query(&self.endpoint(), &Setup::default(), &["PING"]) {
                Ok(reply) if reply.first().map(String::as_str) == Some("PONG") => return Ok(()),
                Ok(reply) => return Err(NotReady::Answered(reply)),
                Err(e) if Instant::now() >= deadline => return Err(NotReady::NoAnswer(e)),
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
            if crate::measure::stop_requested() {
                return Err(NotReady::Interrupted);
            }
        }
    }

    /// SIGTERM, then SIGKILL if it has not gone after two seconds.
    fn stop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            // SAFETY: kill(2) on our own child's pid, not yet reaped.
            unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
            let deadline = Instant::now() + Duration::from_secs(2);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = self.child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

impl Drop for LocalRedis {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Directories of earlier runs that could not clean up (a second Ctrl-C exits at once;
/// their servers died with them): those whose hostbench process is gone.
fn remove_stale_dirs() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix("hostbench-redis-")
            .and_then(|rest| rest.split('-').next())
            .filter(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        if !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

fn spawn(binary: &Path, port: u16, dir: &Path) -> std::io::Result<Child> {
    let mut cmd = Command::new(binary);
    cmd.args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
        .arg("--dir")
        .arg(dir)
        .args(["--logfile", "", "--maxclients", "1000"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    // SAFETY: prctl is async-signal-safe and touches only the child being set up.
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.spawn()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_install_command_follows_the_distribution() {
        let cases = [
            (
                "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\nVERSION_ID=\"12\"\n",
                Some("apt install redis-server"),
            ),
            (
                "NAME=\"Ubuntu\"\nID=ubuntu\nID_LIKE=debian\n",
                Some("apt install redis-server"),
            ),
            (
                "NAME=\"Linux Mint\"\nID=linuxmint\nID_LIKE=\"ubuntu debian\"\n",
                Some("apt install redis-server"),
            ),
            (
                "NAME=\"Fedora Linux\"\nID=fedora\n",
                Some("dnf install redis"),
            ),
            (
                "NAME=\"Rocky Linux\"\nID=\"rocky\"\nID_LIKE=\"rhel centos fedora\"\n",
                Some("dnf install redis"),
            ),
            (
                "NAME=\"AlmaLinux\"\nID=\"almalinux\"\nID_LIKE=\"rhel centos fedora\"\n",
                Some("dnf install redis"),
            ),
            (
                "NAME=\"Red Hat Enterprise Linux\"\nID=\"rhel\"\nID_LIKE=\"fedora\"\n",
                Some("dnf install redis"),
            ),
            (
                "NAME=\"openSUSE Tumbleweed\"\nID=\"opensuse-tumbleweed\"\nID_LIKE=\"opensuse suse\"\n",
                Some("zypper install redis"),
            ),
            ("NAME=\"Alpine Linux\"\nID=alpine\n", Some("apk add redis")),
            ("NAME=\"Arch Linux\"\nID=arch\n", Some("pacman -S redis")),
            (
                "NAME=\"Manjaro\"\nID=manjaro\nID_LIKE=arch\n",
                Some("pacman -S redis"),
            ),
            // An unknown ID that names a known family in ID_LIKE.
            (
                "ID=mydistro\nID_LIKE='debian'\n",
                Some("apt install redis-server"),
            ),
            // Unknown, empty, or a key that only ends in ID.
            ("NAME=\"NixOS\"\nID=nixos\n", None),
            ("", None),
            ("VERSION_ID=debian\nVARIANT_ID=fedora\n", None),
        ];
        for (text, want) in cases {
            assert_eq!(install_hint(text), want, "{text}");
        }
        assert_eq!(
            not_installed_on("ID=fedora\n"),
            "redis-server not installed: install it (dnf install redis), or give --redis URL"
        );
        assert_eq!(
            not_installed_on("ID=nixos\n"),
            "redis-server not installed: install it, or give --redis URL"
        );
    }

    #[test]
    fn a_server_that_does_not_serve_says_why() {
        let e = StartError::NotReady(NotReady::Answered(vec!["LOADING".into()]));
        assert_eq!(
            e.to_string(),
            "redis-server did not start: it answered PING with [\"LOADING\"]"
        );
        let source = std::error::Error::source(&e).expect("the reason is the source");
        assert_eq!(source.to_string(), "it answered PING with [\"LOADING\"]");
        let e = StartError::Spawn {
            binary: "/usr/bin/redis-server".into(),
            source: io::Error::from(io::ErrorKind::PermissionDenied),
        };
        assert_eq!(
            e.to_string(),
            "cannot start /usr/bin/redis-server: permission denied"
        );
    }

    #[test]
    fn starts_without_persistence_and_is_gone_when_dropped() {
        let Some(server) = LocalRedis::start().unwrap() else {
            crate::strict::missing(
                "redis-server",
                "scripts/test.sh installs it (Debian: redis-server)",
            );
            return;
        };
        let (pid, dir) = (server.child.id(), server.dir.clone());
        let get = |key: &str| {
            conn::query(
                &server.endpoint(),
                &Setup::default(),
                &["CONFIG", "GET", key],
            )
            .unwrap()
        };
        assert_eq!(get("save"), ["save", ""]);
        assert_eq!(get("appendonly"), ["appendonly", "no"]);
        assert_eq!(get("bind")[1], "127.0.0.1");
        drop(server);
        assert!(
            !Path::new(&format!("/proc/{pid}")).exists(),
            "still running"
        );
        assert!(!dir.exists(), "{} left behind", dir.display());
    }
}

//! The `netserver` personality: hostbench's network server on netserver's port 12865,
//! started the way the guides start netserver (`netserver`, which returns to the shell
//! and keeps serving in the background; `-D` keeps it in the foreground). It serves the
//! netperf personality and `hostbench net`, several clients at once.

use super::getopt::ShortOpts;
use super::netperf::NETSERVER_PORT;
use crate::workload::net::NetError;
use crate::workload::net::server::{Server, ServerConfig};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::process::ExitCode;
use thiserror::Error;

const USAGE: &str = "\nUsage: netserver [options] \n\nOptions:\n    -h                Display this text\n    -D                Do not daemonize\n    -L name,family    Use name to pick listen address and family for family\n    -p portnum        Listen for connect requests on portnum.\n    -4                Do IPv4\n    -6                Do IPv6\n    -v verbosity      Specify the verbosity level\n\nThis is hostbench's netserver personality: it serves hostbench's netperf.\n";

pub(super) struct Options {
    port: u16,
    foreground: bool,
    bind: Option<IpAddr>,
    family: Option<u8>,
    verbose: bool,
}

/// A command line netserver would refuse; Display is the whole message.
#[derive(Debug, Error)]
pub enum ArgError {
    #[error("netserver: option {option} requires an argument\n{USAGE}")]
    MissingValue { option: String },
    #[error("netserver: invalid port '{value}'\n{USAGE}")]
    Port { value: String },
    /// `-L`'s name does not resolve.
    #[error("netserver: -L {value}: {source}\n")]
    Listen {
        value: String,
        #[source]
        source: NetError,
    },
    #[error("netserver: invalid option -- '{option}'\n{USAGE}")]
    UnknownOption { option: String },
}

pub(super) fn parse(args: &[String]) -> Result<Option<Options>, ArgError> {
    let mut o = Options {
        port: NETSERVER_PORT,
        foreground: false,
        bind: None,
        family: None,
        verbose: false,
    };
    let mut opts = ShortOpts::new(args);
    while let Some(opt) = opts.next_opt() {
        let flag = opt.flag;
        let mut value = || {
            opts.value(&opt)
                .map(str::to_string)
                .ok_or_else(|| ArgError::MissingValue {
                    option: flag.into(),
                })
        };
        match flag {
            "-h" => return Ok(None),
            "-D" => o.foreground = true,
            "-p" => {
                let v = value()?;
                o.port = v.parse().map_err(|_| ArgError::Port { value: v.clone() })?;
            }
            "-L" => {
                let v = value()?;
                let (name, fam) = v.split_once(',').unwrap_or((&v, ""));
                let ip = crate::workload::net::resolve(name, 0, crate::workload::net::Family::Any)
                    .map_err(|source| ArgError::Listen {
                        value: v.clone(),
                        source,
                    })?;
                o.bind = Some(ip[0].ip());
                if fam == "4" || fam == "inet" {
                    o.family = Some(4);
                } else if fam == "6" || fam == "inet6" {
                    o.family = Some(6);
                }
            }
            "-4" => o.family = Some(4),
            "-6" => o.family = Some(6),
            "-v" => {
                let _ = value()?;
                o.verbose = true;
            }
            "-d" | "-f" | "-N" => {}
            "-Z" => {
                let _ = value()?;
            }
            other => {
                return Err(ArgError::UnknownOption {
                    option: other.into(),
                });
            }
        }
    }
    Ok(Some(o))
}

pub fn main(args: &[String]) -> ExitCode {
    let o = match parse(args) {
        Ok(Some(o)) => o,
        Ok(None) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprint!("{e}");
            return ExitCode::from(1);
        }
    };
    let ip = o.bind.unwrap_or(match o.family {
        Some(4) => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        _ => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
    });
    let host = match o.bind {
        Some(b) => b.to_string(),
        None if o.family == Some(4) => "INADDR_ANY".into(),
        None => "IN(6)ADDR_ANY".into(),
    };
    let family = match o.family {
        Some(4) => "AF_INET",
        Some(6) => "AF_INET6",
        _ => "AF_UNSPEC",
    };
    let mut config = ServerConfig::new(SocketAddr::new(ip, o.port));
    config.verbose = o.verbose;
    // Bind before announcing, so a port in use is reported here, not lost in a daemon.
    let server = match Server::bind(config) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("netserver: {e}");
            return ExitCode::from(1);
        }
    };
    println!(
        "Starting netserver with host '{host}' port '{}' and family {family}",
        o.port
    );
    if o.foreground {
        server.serve();
        return ExitCode::SUCCESS;
    }
    // Daemonize: a copy of ourselves, in the foreground of its own session, keeps serving.
    drop(server);
    match spawn_daemon(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("netserver: cannot start in the background: {e}; try -D");
            ExitCode::from(1)
        }
    }
}

fn spawn_daemon(args: &[String]) -> std::io::Result<()> {
    use std::os::unix::process::CommandExt;
    let exe = std::env::current_exe()?;
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("netserver").arg("-D").args(args);
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // SAFETY: setsid is async-signal-safe and touches no memory of the parent.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    cmd.spawn().map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options() {
        let a: Vec<String> = ["-D", "-p", "13000", "-4"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let o = parse(&a).unwrap().unwrap();
        assert!(o.foreground);
        assert_eq!((o.port, o.family), (13000, Some(4)));
        let bad: Vec<String> = vec!["-p".into(), "x".into()];
        let e = parse(&bad).err().expect("a bad port");
        assert!(matches!(&e, ArgError::Port { value } if value == "x"));
        assert_eq!(
            e.to_string(),
            format!("netserver: invalid port 'x'\n{USAGE}")
        );
        assert!(parse(&["-h".to_string()]).unwrap().is_none());
    }
}

//! `--redis URL`: `redis://[user:password@]host[:port][/db]` or `unix:///path/to/socket`,
//! as redis-cli's `-u` and the client libraries write them. Errors name the URL with
//! its password masked, and the form that would work.

use crate::workload::redis::conn::{Endpoint, Setup};

/// Where the Redis step goes and how each connection logs in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisUrl {
    pub endpoint: Endpoint,
    pub user: Option<String>,
    pub password: Option<String>,
    pub db: u32,
}

impl RedisUrl {
    pub fn setup(&self) -> Setup {
        Setup {
            user: self.user.clone(),
            password: self.password.clone(),
            db: Some(self.db),
            resp3: false,
            tracking: false,
            timeout: Some(crate::workload::redis::conn::REPLY_TIMEOUT),
        }
    }
}

const FORMS: &str = "use redis://[user:password@]host[:port][/db] (e.g. redis://127.0.0.1:6379/0) \
                     or unix:///path/to/redis.sock";

/// A `--redis` that is not a URL hostbench can reach; `url` is as given, with its
/// password masked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--redis {url}: {problem}; {FORMS}")]
pub struct RedisUrlError {
    pub url: String,
    #[source]
    pub problem: UrlProblem,
}

/// What is wrong with a `--redis` URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlProblem {
    #[error("not a Redis URL")]
    NotAUrl,
    #[error("unknown scheme '{scheme}'")]
    Scheme { scheme: String },
    #[error(
        "TLS (rediss://) is not supported; reach the server without TLS or through a local TLS tunnel"
    )]
    Tls,
    #[error("a unix socket needs an absolute path (three slashes)")]
    RelativeSocket,
    #[error("options after the socket path are not supported")]
    SocketOptions,
    #[error("query options are not supported")]
    Query,
    #[error("give user:password@ or :password@ before the host")]
    UserInfo,
    #[error("bad %-escape in the user name")]
    UserEscape,
    #[error("bad %-escape in the password")]
    PasswordEscape,
    #[error("an IPv6 address needs its closing ']'")]
    UnclosedIpv6,
    #[error("expected ':port' after ']'")]
    AfterIpv6,
    #[error("no host")]
    NoHost,
    #[error("'{host}' is not a host name or address")]
    Host { host: String },
    #[error("port '{port}' is not a number from 1 to 65535")]
    Port { port: String },
    #[error("'/{db}' is not a database number")]
    Database { db: String },
}

pub fn parse(url: &str) -> Result<RedisUrl, RedisUrlError> {
    let bad = |problem: UrlProblem| RedisUrlError {
        url: mask_password(url),
        problem,
    };
    let url = url.trim();
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| bad(UrlProblem::NotAUrl))?;
    match scheme.to_ascii_lowercase().as_str() {
        "redis" => {}
        "unix" => {
            let path = rest;
            if !path.starts_with('/') {
                return Err(bad(UrlProblem::RelativeSocket));
            }
            if path.contains('?') || path.contains('#') {
                return Err(bad(UrlProblem::SocketOptions));
            }
            return Ok(RedisUrl {
                endpoint: Endpoint::Unix(path.into()),
                user: None,
                password: None,
                db: 0,
            });
        }
        "rediss" => {
            return Err(bad(UrlProblem::Tls));
        }
        _ => {
            return Err(bad(UrlProblem::Scheme {
                scheme: scheme.into(),
            }));
        }
    }
    if rest.contains('?') || rest.contains('#') {
        return Err(bad(UrlProblem::Query));
    }
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, ""),
    };
    let (userinfo, hostport) = match authority.rfind('@') {
        Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
        None => (None, authority),
    };
    let (user, password) = match userinfo {
        None => (None, None),
        Some(info) => {
            let (u, p) = info
                .split_once(':')
                .ok_or_else(|| bad(UrlProblem::UserInfo))?;
            let user = decode(u).ok_or_else(|| bad(UrlProblem::UserEscape))?;
            let password = decode(p).ok_or_else(|| bad(UrlProblem::PasswordEscape))?;
            ((!user.is_empty()).then_some(user), Some(password))
        }
    };
    let (host, port) = split_host_port(hostport).map_err(bad)?;
    let db = match path {
        "" => 0,
        n => n
            .parse::<u32>()
            .ok()
            .filter(|&d| d < 100_000)
            .ok_or_else(|| bad(UrlProblem::Database { db: n.into() }))?,
    };
    Ok(RedisUrl {
        endpoint: Endpoint::Tcp { host, port },
        user,
        password,
        db,
    })
}

/// `host`, `host:port`, `[v6]` or `[v6]:port`; the port defaults to 6379.
fn split_host_port(s: &str) -> Result<(String, u16), UrlProblem> {
    let (host, port) = if let Some(rest) = s.strip_prefix('[') {
        let (h, after) = rest.split_once(']').ok_or(UrlProblem::UnclosedIpv6)?;
        match after {
            "" => (h, None),
            p => (h, Some(p.strip_prefix(':').ok_or(UrlProblem::AfterIpv6)?)),
        }
    } else {
        match s.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (s, None),
        }
    };
    if host.is_empty() {
        return Err(UrlProblem::NoHost);
    }
    if !host
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || ".-_:".contains(c))
    {
        return Err(UrlProblem::Host { host: host.into() });
    }
    let port = match port {
        None => 6379,
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|&p| p != 0)
            .ok_or_else(|| UrlProblem::Port { port: p.into() })?,
    };
    Ok((host.to_string(), port))
}

/// `%40` -> `@`; None for a broken escape or bytes that are not UTF-8.
fn decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The URL as it may be printed: the password replaced by `***`.
pub fn mask_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => match rest[..at].split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:***{}", &rest[at..]),
            None => url.to_string(),
        },
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tcp(host: &str, port: u16) -> Endpoint {
        Endpoint::Tcp {
            host: host.into(),
            port,
        }
    }

    #[test]
    fn forms_that_parse() {
        let u = parse("redis://127.0.0.1:6380/2").unwrap();
        assert_eq!(
            (u.endpoint, u.db, u.password),
            (tcp("127.0.0.1", 6380), 2, None)
        );
        let u = parse("redis://localhost").unwrap();
        assert_eq!((u.endpoint, u.db), (tcp("localhost", 6379), 0));
        let u = parse("redis://bench:s%40cret@cache.internal:7000/").unwrap();
        assert_eq!(u.user.as_deref(), Some("bench"));
        assert_eq!(u.password.as_deref(), Some("s@cret"));
        assert_eq!(u.endpoint, tcp("cache.internal", 7000));
        let u = parse("redis://:pw@[::1]:6379/1").unwrap();
        assert_eq!((u.user, u.password.as_deref()), (None, Some("pw")));
        assert_eq!((u.endpoint, u.db), (tcp("::1", 6379), 1));
        let u = parse("unix:///run/redis/redis.sock").unwrap();
        assert_eq!(u.endpoint, Endpoint::Unix("/run/redis/redis.sock".into()));
        assert_eq!(u.setup().db, Some(0));
    }

    #[test]
    fn bad_urls_name_the_input_and_the_forms() {
        for bad in [
            "localhost:6379",
            "http://localhost",
            "rediss://localhost",
            "redis://",
            "redis://host:0",
            "redis://host:99999",
            "redis://host:port",
            "redis://host/db",
            "redis://host?timeout=1",
            "redis://user@host",
            "redis://[::1",
            "redis://ho st",
            "unix://relative.sock",
            "redis://:p%zz@host",
        ] {
            let e = parse(bad).unwrap_err().to_string();
            assert!(e.starts_with("--redis "), "{bad}: {e}");
            assert!(e.contains("redis://[user:password@]host"), "{bad}: {e}");
        }
    }

    #[test]
    fn bad_urls_say_what_is_wrong() {
        let problem = |url: &str| parse(url).unwrap_err().problem;
        assert_eq!(problem("localhost:6379"), UrlProblem::NotAUrl);
        assert_eq!(problem("rediss://h"), UrlProblem::Tls);
        assert_eq!(
            problem("redis://h:0"),
            UrlProblem::Port { port: "0".into() }
        );
        assert_eq!(problem("redis://[::1"), UrlProblem::UnclosedIpv6);
        assert_eq!(
            problem("redis://h/x"),
            UrlProblem::Database { db: "x".into() }
        );
        assert_eq!(
            parse("redis://h:0").unwrap_err().to_string(),
            format!("--redis redis://h:0: port '0' is not a number from 1 to 65535; {FORMS}")
        );
    }

    #[test]
    fn errors_never_show_the_password() {
        let e = parse("redis://u:topsecret@host:bad").unwrap_err();
        assert_eq!(e.url, "redis://u:***@host:bad");
        let e = e.to_string();
        assert!(!e.contains("topsecret"), "{e}");
        assert!(e.contains("redis://u:***@host:bad"), "{e}");
    }
}

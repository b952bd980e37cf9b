//! The Redis step of `hostbench run`: redis-benchmark's default picture (50
//! connections, SET:GET 1:10, 32-byte values) with the native load generator, against
//! `--redis URL`, else a `redis-server` started for the step, else skipped with a note.
//! Every key it touches is under `KEY_PREFIX`; on a server that is not ours, those keys
//! are removed afterwards.

use super::redis_server::{LocalRedis, not_installed};
use super::redis_url::{RedisUrl, mask_password};
use crate::host::HostInfo;
use crate::measure::cputime::CpuTime;
use crate::model::Outcome;
use crate::workload::redis::conn::{self, Endpoint, RedisError, Setup};
use crate::workload::redis::keys::KeyDist;
use crate::workload::redis::load::{self, LoadSpec, Mix};
use crate::workload::redis::outcome;
use crate::workload::runner::Observer;
use std::time::Duration;

/// The keys of `hostbench run`, and only those, are touched (and cleaned up).
pub const KEY_PREFIX: &str = "hostbench:run:";
const CONNECTIONS: usize = 50;

#[derive(Debug, Clone)]
pub struct RedisPlan {
    /// None: start a local redis-server if one is installed.
    pub url: Option<(String, RedisUrl)>,
    pub duration: Duration,
    pub warmup: Duration,
    pub cpus: usize,
}

pub enum RedisStepError {
    /// Nothing is wrong, there is just no server to measure.
    Unavailable(String),
    Failed(String),
}

impl RedisPlan {
    pub fn estimate(&self) -> Duration {
        self.warmup + self.duration + Duration::from_millis(300)
    }

    fn spec(&self, endpoint: Endpoint, setup: Setup) -> LoadSpec {
        LoadSpec {
            endpoint,
            setup,
            connections: CONNECTIONS,
            threads: self.cpus.clamp(1, CONNECTIONS),
            pipeline: 1,
            mix: vec![
                Mix {
                    command: "SET __key__ __data__".into(),
                    weight: 1,
                },
                Mix {
                    command: "GET __key__".into(),
                    weight: 10,
                },
            ],
            keyspace: 100_000,
            key_prefix: KEY_PREFIX.into(),
            key_dist: KeyDist::Uniform,
            value_size: (32, 32),
            duration: self.duration,
            warmup: self.warmup,
            rate: None,
            // The run's own server, or a --redis URL of one node: not a cluster.
            cluster: None,
            seed: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64),
        }
    }
}

pub fn run(plan: &RedisPlan, observer: &dyn Observer) -> Result<Outcome, RedisStepError> {
    match &plan.url {
        Some((text, url)) => {
            let spec = plan.spec(url.endpoint.clone(), url.setup());
            let result = measure(&spec, observer);
            // Someone else's server: leave nothing of ours behind, even after an error
            // (unless no request was ever sent).
            let touched = result.as_ref().map_or_else(|e| e.touched, |_| true);
            if touched && let Err(e) = remove_keys(&spec.endpoint, &spec.setup) {
                eprintln!(
                    "hostbench: warning: could not remove the {KEY_PREFIX}* keys from {}: {e}",
                    mask_password(text)
                );
            }
            result.map_err(|e| {
                RedisStepError::Failed(format!("redis at {}: {}", mask_password(text), e.message))
            })
        }
        None => {
            // Started here, on the step's own thread (see redis_server), and stopped
            // when `server` goes out of scope, whatever happens in between.
            let server = LocalRedis::start()
                .map_err(|e| RedisStepError::Failed(e.to_string()))?
                .ok_or_else(|| RedisStepError::Unavailable(not_installed()))?;
            let spec = plan.spec(server.endpoint(), Setup::default());
            let mut o = measure(&spec, observer).map_err(|e| {
                RedisStepError::Failed(format!("local redis-server: {}", e.message))
            })?;
            o.note(format!(
                "a redis-server started for this run on 127.0.0.1:{}, no persistence; client and server share this host's CPUs",
                server.port
            ));
            Ok(o)
        }
    }
}

struct MeasureError {
    message: String,
    /// Requests were sent (keys may have been written).
    touched: bool,
}

/// One load run with progress; an error (or a run cut short by one) is a failure.
fn measure(spec: &LoadSpec, observer: &dyn Observer) -> Result<Outcome, MeasureError> {
    let untouched = |message: String| MeasureError {
        message,
        touched: false,
    };
    conn::raise_fd_limit((spec.connections + spec.threads * 2 + 16) as u64).map_err(|why| {
        untouched(format!(
            "cannot open {} connections: {why}",
            spec.connections
        ))
    })?;
    let cpu_start = CpuTime::now();
    let result = load::run(spec, observer)
        // Connections are all made before the first request: an error here sent nothing.
        .map_err(|e| untouched(e.to_string()))?;
    if let Some(e) = &result.error {
        return Err(MeasureError {
            message: format!("{e} (the partial results are not kept)"),
            touched: true,
        });
    }
    let cpu = CpuTime::now().since(&cpu_start);
    Ok(outcome::build(spec, &result, cpu, HostInfo::detect()))
}

/// Why the run's keys could not all be removed from a server that is not ours.
#[derive(Debug, thiserror::Error)]
enum CleanupError {
    #[error(transparent)]
    Scan(RedisError),
    #[error(transparent)]
    Unlink(RedisError),
    #[error("SCAN gave an empty reply")]
    EmptyScan,
    /// The cursor had not come back to 0 after the bound on SCAN calls.
    #[error("SCAN did not finish")]
    Unfinished,
}

/// SCAN for the run's keys and UNLINK them, in batches, bounded.
fn remove_keys(endpoint: &Endpoint, setup: &Setup) -> Result<u64, CleanupError> {
    let pattern = format!("{KEY_PREFIX}*");
    let mut cursor = "0".to_string();
    let mut removed = 0u64;
    for _ in 0..100_000 {
        let reply = conn::query(
            endpoint,
            setup,
            &["SCAN", &cursor, "MATCH", &pattern, "COUNT", "1000"],
        )
        .map_err(CleanupError::Scan)?;
        let Some((next, keys)) = reply.split_first() else {
            return Err(CleanupError::EmptyScan);
        };
        let ours: Vec<&str> = keys
            .iter()
            .map(String::as_str)
            .filter(|k| k.starts_with(KEY_PREFIX))
            .collect();
        if !ours.is_empty() {
            let mut args = vec!["UNLINK"];
            args.extend(&ours);
            conn::query(endpoint, setup, &args).map_err(CleanupError::Unlink)?;
            removed += ours.len() as u64;
        }
        if next == "0" {
            return Ok(removed);
        }
        cursor = next.clone();
    }
    Err(CleanupError::Unfinished)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cleanup_of_an_unreachable_server_keeps_the_connection_error() {
        // A port that was just free: nothing listens there.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .unwrap()
            .port();
        let endpoint = Endpoint::Tcp {
            host: "127.0.0.1".into(),
            port,
        };
        let e = remove_keys(&endpoint, &Setup::default()).unwrap_err();
        let CleanupError::Scan(inner) = &e else {
            panic!("{e:?}")
        };
        assert!(matches!(inner, RedisError::Connect { .. }), "{inner:?}");
        assert_eq!(e.to_string(), inner.to_string());
        assert!(
            e.to_string()
                .starts_with(&format!("could not connect to 127.0.0.1:{port}: ")),
            "{e}"
        );
    }
}

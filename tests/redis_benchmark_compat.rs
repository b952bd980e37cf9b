//! The redis-benchmark personality against a redis-server of the test's own: output
//! layout line for line against the real redis-benchmark on the same server, the keys
//! and values it writes, and its behaviour on refused connections, bad passwords,
//! error replies and a server that dies mid-run.

mod common;
mod redis_server;

use common::{run_interrupted, text};
use redis_server::{RedisServer, available, peer, personality, shape, visible};
use std::process::Output;
use std::time::Duration;

#[test]
fn full_report_has_redis_benchmarks_layout() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    if !available("redis-benchmark") {
        return;
    }
    let port = server.port_arg();
    let args = [
        "-p",
        &port,
        "-c",
        "10",
        "-n",
        "3000",
        "-t",
        "set,get,incr,lpush,mset",
    ];
    let ours = personality(&args);
    let theirs = peer(&args);
    assert!(ours.status.success(), "{}", text(&ours.stderr));
    assert!(theirs.status.success());
    assert_eq!(shape(&text(&ours.stdout)), shape(&text(&theirs.stdout)));
    // Headers agree word for word, save for the timing.
    let header = |o: &Output| -> Vec<String> {
        visible(&text(&o.stdout))
            .into_iter()
            .filter(|l| {
                l.starts_with("  ")
                    && !l.contains("requests completed")
                    && !l.contains("summary")
                    && !l.starts_with("    ")
            })
            .collect()
    };
    assert_eq!(header(&ours), header(&theirs));
}

#[test]
fn quiet_and_csv_have_redis_benchmarks_layout() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    if !available("redis-benchmark") {
        return;
    }
    let port = server.port_arg();
    for form in ["-q", "--csv"] {
        let args = [
            "-p",
            &port,
            "-n",
            "2000",
            "-t",
            "ping,set,get,lrange_100",
            form,
        ];
        let ours = personality(&args);
        let theirs = peer(&args);
        assert!(ours.status.success(), "{}", text(&ours.stderr));
        assert_eq!(
            shape(&text(&ours.stdout)),
            shape(&text(&theirs.stdout)),
            "{form}"
        );
        if form == "--csv" {
            // Nothing but CSV on stdout: scripts parse it strictly.
            let out = text(&ours.stdout);
            assert!(
                out.lines().all(|l| l.starts_with('"') && l.ends_with('"')),
                "{out}"
            );
            assert_eq!(out.lines().count(), 7);
        }
    }
}

#[test]
fn writes_redis_benchmarks_keys_and_payload() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let port = server.port_arg();
    let out = personality(&["-p", &port, "-n", "200", "-c", "4", "-t", "set", "-q"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Without -r the key is literal.
    assert!(server.command("GET key:__rand_int__").contains("VXK"));
    let out = personality(&[
        "-p", &port, "-n", "500", "-r", "1000", "-d", "5", "-t", "set", "-q", "--seed", "42",
    ]);
    assert!(out.status.success());
    let keys = server.command("KEYS key:0*");
    let names: Vec<&str> = keys.lines().filter(|l| l.starts_with("key:")).collect();
    assert!(names.len() > 100, "{keys}");
    assert!(names.iter().all(|k| k.len() == 16), "{names:?}");
    assert!(
        server
            .command(&format!("GET {}", names[0]))
            .contains("VXKeH")
    );
    // Pipelining counts every request once.
    let out = personality(&[
        "-p", &port, "-n", "1000", "-P", "16", "-r", "1", "-t", "incr", "--csv",
    ]);
    assert!(out.status.success());
    let v = server.command("GET counter:000000000000");
    let n: u64 = v.lines().nth(1).unwrap_or("0").parse().unwrap_or(0);
    assert!((1000..1016).contains(&n), "{v}");
}

#[test]
fn custom_command_title_and_payload_size() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let port = server.port_arg();
    let out = personality(&[
        "-p",
        &port,
        "-n",
        "100",
        "-c",
        "2",
        "set",
        "hb:custom",
        "abc",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("====== set hb:custom abc ======"), "{s}");
    // The whole encoded command: *3 $3 set $9 hb:custom $3 abc (37 bytes, as redis-benchmark prints).
    assert!(s.contains("  37 bytes payload"), "{s}");
}

#[test]
fn refused_connection_is_a_clear_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
        .to_string();
    let out = personality(&["-p", &port, "-n", "10", "-q"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("127.0.0.1:{port}")) && err.contains("refused"),
        "{err}"
    );
}

#[test]
fn wrong_password_is_a_clear_error() {
    let Some(server) = RedisServer::start(&["--requirepass", "s3cret"]) else {
        return;
    };
    let port = server.port_arg();
    let out = personality(&["-p", &port, "-n", "10", "-a", "wrong", "-t", "get", "-q"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("AUTH") && err.contains("WRONGPASS"), "{err}");
    let out = personality(&["-p", &port, "-n", "10", "-t", "get", "-q"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("NOAUTH"),
        "{}",
        text(&out.stderr)
    );
    let out = personality(&["-p", &port, "-n", "10", "-a", "s3cret", "-t", "get", "-q"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn error_reply_stops_with_partial_results() {
    let Some(server) = RedisServer::start(&[]) else {
        return;
    };
    let port = server.port_arg();
    server.command("SET mylist notalist");
    let out = personality(&["-p", &port, "-n", "1000", "-t", "lpush"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("Error from server: WRONGTYPE"),
        "{}",
        text(&out.stderr)
    );
    assert!(
        text(&out.stdout).contains("PARTIAL RESULTS"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn server_killed_mid_run_reports_partial_results() {
    let Some(mut server) = RedisServer::start(&[]) else {
        return;
    };
    let port = server.port_arg();
    let mut c = common::hostbench();
    c.args([
        "redis-benchmark",
        "-p",
        &port,
        "-n",
        "50000000",
        "-t",
        "get",
        "-q",
    ]);
    let out = run_interrupted(c, Duration::from_millis(800), || server.kill());
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("closed the connection"),
        "{}",
        text(&out.stderr)
    );
    assert!(
        text(&out.stdout).contains("PARTIAL RESULTS"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn bad_options_exit_1_with_usage() {
    let out = personality(&["--bogus"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("Invalid option \"--bogus\""));
    let out = personality(&["-p", "99999"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("Invalid server port."));
    let out = personality(&["--help"]);
    assert!(out.status.success());
    assert!(text(&out.stdout).contains("Usage: redis-benchmark"));
}

//! The fuzzers' corpus and every crash they found, replayed on stable through the same
//! functions the fuzz targets call (`hostbench::fuzzing`): a parser that panics on any
//! of those files fails `cargo test`. See docs/fuzzing.md.
//!
//! `cargo test --test fuzz_corpus -- --ignored write_seeds` writes the seed corpus
//! (`fuzz/corpus/<target>/seed-*`) from the code's own writers and the guides' command
//! lines and job files.

use hostbench::fuzzing::TARGETS;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

/// The files of `fuzz/<kind>/<target>/`, sorted; none when the folder is missing.
fn files(kind: &str, target: &str) -> Vec<PathBuf> {
    let Ok(dir) = std::fs::read_dir(fuzz_dir().join(kind).join(target)) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = dir
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    out.sort();
    out
}

/// Every file through its target; the files whose call panicked.
fn replay(kind: &str) -> (usize, Vec<String>) {
    let mut count = 0;
    let mut panicked = Vec::new();
    for (name, target) in TARGETS {
        for path in files(kind, name) {
            let data = std::fs::read(&path).unwrap();
            count += 1;
            if catch_unwind(AssertUnwindSafe(|| target(&data))).is_err() {
                panicked.push(path.display().to_string());
            }
        }
    }
    (count, panicked)
}

#[test]
fn every_corpus_file_replays_without_a_panic() {
    let (count, panicked) = replay("corpus");
    assert!(count > 0, "no corpus under {}", fuzz_dir().display());
    assert!(panicked.is_empty(), "panicked on: {panicked:#?}");
}

/// The crashes the fuzzers found, kept after their fix (`fuzz/regressions/`), and any
/// a local run left in `fuzz/artifacts/` and nobody moved yet.
#[test]
fn every_crash_file_replays_without_a_panic() {
    for kind in ["regressions", "artifacts"] {
        let (_, panicked) = replay(kind);
        assert!(panicked.is_empty(), "panicked on: {panicked:#?}");
    }
}

/// Each target has seeds, and each corpus folder belongs to a target (a renamed target
/// would otherwise leave its corpus unreplayed).
#[test]
fn every_target_has_a_corpus_and_every_corpus_a_target() {
    for (name, _) in TARGETS {
        assert!(
            !files("corpus", name).is_empty(),
            "fuzz/corpus/{name}/ is empty"
        );
        let source = fuzz_dir().join("fuzz_targets").join(format!("{name}.rs"));
        assert!(source.is_file(), "{} is missing", source.display());
    }
    for kind in ["corpus", "regressions"] {
        let Ok(dir) = std::fs::read_dir(fuzz_dir().join(kind)) else {
            continue;
        };
        for entry in dir.filter_map(Result::ok) {
            let name = entry.file_name().to_string_lossy().into_owned();
            assert!(
                TARGETS.iter().any(|(t, _)| *t == name),
                "fuzz/{kind}/{name}/ is no target of hostbench::fuzzing::TARGETS"
            );
        }
    }
}

#[test]
#[ignore = "writes fuzz/corpus/*/seed-*; run by hand when the writers change"]
fn write_seeds() {
    for (target, name, data) in seeds::all() {
        assert!(
            TARGETS.iter().any(|(t, _)| *t == target),
            "{target} is no target"
        );
        let dir = fuzz_dir().join("corpus").join(target);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("seed-{name}")), data).unwrap();
    }
}

/// The seeds themselves pass (so `write_seeds` never writes a crash).
#[test]
fn every_seed_replays_without_a_panic() {
    for (target, name, data) in seeds::all() {
        let (_, f) = TARGETS.iter().find(|(t, _)| *t == target).unwrap();
        assert!(
            catch_unwind(AssertUnwindSafe(|| f(&data))).is_ok(),
            "{target}/{name}"
        );
    }
}

mod seeds {
    use hostbench::workload::net::TestKind;
    use hostbench::workload::net::iperf3::wire::{self, Params, Results, StreamResult};
    use hostbench::workload::net::protocol::{
        self, IntervalReport, Limits, Message, ServerReport, StreamReport, TestRequest,
    };

    type Seed = (&'static str, String, Vec<u8>);

    pub fn all() -> Vec<Seed> {
        let mut out = Vec::new();
        out.extend(job_files());
        out.extend(fio_options());
        out.extend(command_lines());
        out.extend(units());
        out.extend(resp());
        out.extend(iperf3());
        out.extend(net_protocol());
        out.extend(report_input());
        out
    }

    fn seed(target: &'static str, name: &str, data: impl Into<Vec<u8>>) -> Seed {
        (target, name.to_string(), data.into())
    }

    /// Seed 001's job file (COMPAT.md), with `stonewall` on the section line as one
    /// vendor copy has it.
    const SEED_001: &str = "\
[global]
ioengine=libaio
direct=1
thread=1
norandommap=1
randrepeat=0
runtime=60
ramp_time=6
size=512m
directory=/root/datadisk
[read4k-rand] stonewall
group_reporting
bs=4k
rw=randread
numjobs=8
iodepth=32
[read64k-seq]
stonewall
group_reporting
bs=64k
rw=read
numjobs=4
iodepth=8
[write4k-rand]
stonewall
group_reporting
bs=4k
rw=randwrite
numjobs=2
iodepth=4
[write64k-seq]
stonewall
group_reporting
bs=64k
rw=write
numjobs=2
iodepth=4
";

    /// What docs/compat-fio.md says a job file may hold, one of each.
    const GRAMMAR: &str = "\
; a comment
# another
[global]
kb_base=1000
size=${HOME}
iodepth=$ncpus
bs=$pagesize
io_size=$mb_memory
include extra.fio
[mixed] ; after the name
rw=randrw
rwmixread=70
bssplit=4k/10:64k/50:32k/
bsrange=4k-64k,8k-16k
bs=8k,32k
percentile_list=50:99:99.9
filename=a\\:b:c
size=50%
runtime=1m
ramp_time=500ms
startdelay=2us
randseed=0x10
new_group
[global]
ioengine=io_uring
[second]
wait_for_previous
loops=3
time_based
";

    fn job_files() -> Vec<Seed> {
        let fixture = std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/seed002.fio"),
        )
        .unwrap();
        vec![
            seed("fio_jobfile", "seed001.fio", SEED_001),
            seed("fio_jobfile", "seed002.fio", fixture),
            seed("fio_jobfile", "grammar.fio", GRAMMAR),
            seed(
                "fio_jobfile",
                "guides-demo.fio",
                "[global]\nioengine=libaio\ndirect=1\nsize=64m\nruntime=2\ntime_based\n\
                 filename=/tmp/fio.test\n[randread-4k-qd32]\nrw=randread\nbs=4k\niodepth=32\n",
            ),
        ]
    }

    fn fio_options() -> Vec<Seed> {
        let every = "name=j\ndescription=a job\nrw=randread\nreadwrite=rw\nrwmixread=70\n\
                     rwmixwrite=30\nbs=4k\nblocksize=8k,32k\nbsrange=4k-64k\n\
                     blocksize_range=1k-4k,8k-16k\nbssplit=4k/10:64k/50:32k/40\nsize=5G\n\
                     size=50%\nio_size=1g\nio_limit=10m\nfilesize=64m\nfilename=/data/testfile\n\
                     directory=/tmp:/var/tmp\nnrfiles=2\nnr_files=3\nnumjobs=4\niodepth=64\n\
                     iodepth_batch_submit=8\niodepth_batch=4\nioengine=libaio\nioengine=io_uring\n\
                     ioengine=psync\nioengine=sync\nioengine=pvsync2\ndirect=1\nbuffered=0\n\
                     runtime=120\ntimeout=2m\ntime_based\nramp_time=6\nstartdelay=500ms\nloops=3\n\
                     norandommap\nrandrepeat=0\nrandseed=42\nfsync=32\nfdatasync=1\nend_fsync=1\n\
                     invalidate=0\nthread=1\nstonewall\nwait_for_previous\nnew_group\n\
                     group_reporting\nkb_base=1000\npercentile_list=1:50:99.99\n\
                     clat_percentiles=0\nlat_percentiles=1\n";
        vec![
            seed("fio_option", "every-option", every),
            seed(
                "fio_option",
                "numbers",
                "size=0x1000\nsize=1.5k\nsize=1MiB\nsize=1MB\nkb_base=1000\nsize=1MiB\nsize=1KB\n\
                 runtime=1d\nruntime=1h\nruntime=3us\nruntime=2.5\n",
            ),
        ]
    }

    /// The guides' command lines (COMPAT.md), one word per line after the name.
    const LINES: &[&str] = &[
        "sysbench --threads=4 --time=60 --report-interval=5 cpu run",
        "sysbench cpu --cpu-max-prime=20000 run",
        "sysbench memory --memory-block-size=8K --memory-total-size=10G --memory-oper=read --memory-access-mode=rnd run",
        "sysbench memory --memory-block-size=1M --memory-total-size=2G --memory-oper=write run",
        "sysbench --threads=4 --time=60 --report-interval=5 fileio --file-num=2 --file-total-size=20G --file-test-mode=seqwr prepare",
        "sysbench --threads=32 --time=30 --test=fileio --file-num=1 --file-block-size=8192 --file-total-size=20G --file-test-mode=rndrw --verbosity=5 run",
        "sysbench fileio --file-test-mode=rndrw --file-total-size=2G --max-time=300 --max-requests=0 run",
        "sysbench threads --thread-yields=100 --thread-locks=4 run",
        "sysbench mutex --mutex-num=1024 --mutex-locks=100 --mutex-loops=10 run",
        "unixbench -c 1 -c 4",
        "unixbench -i 3 dhry2reg whetstone-double execl fstime",
        "dd if=/dev/zero of=1.img bs=4096 count=2M conv=fdatasync",
        "dd of=/dev/null if=1.img bs=4096",
        "dd if=/dev/zero of=/tmp/testw.dbf bs=4k count=1000000",
        "dd if=/dev/sda of=/dev/null bs=4k iflag=direct status=progress",
        "fio --filename=/data/testfile --size=5G --direct=1 --rw=randread --bs=4k --ioengine=libaio --iodepth=64 --runtime=120 --numjobs=4 --name=rand_read_4k",
        "fio --filename=/data/testfile --size=5G --direct=1 --rw=read --bs=256k --ioengine=libaio --iodepth=32 --runtime=120 --numjobs=2 --name=seq_read_256k --output-format=json,terse",
        "netserver -D -p 12865 -4",
        "netperf -H 127.0.0.1 -l 20 -t TCP_STREAM",
        "netperf -H 127.0.0.1 -l 20 -t TCP_RR",
        "netperf -t UDP_STREAM -H 127.0.0.1 -- -m 1024 -R 1",
        "netperf -H 127.0.0.1 -l 20 -t UDP_RR -l 20 -- -R 1",
        "iperf3 -s -p 5201 -1",
        "iperf3 -c 127.0.0.1 -t 10 -P 4 -R -J",
        "iperf3 -c 127.0.0.1 -u -b 100M -l 1400 --bidir --get-server-output",
        "ping -c 4 127.0.0.1",
        "ping -c 3 -i 0.2 -W 1 -s 56 --tcp ::1",
        "redis-benchmark -c 1000 -n 300000 -t get,set",
        "redis-benchmark --threads 4 -c 1000 -n 300000 -t get,set",
        "redis-benchmark -h 127.0.0.1 -p 6379 -q --csv -P 16 -d 100 -r 1000000 -l -x set key",
        "hostbench cpu --threads 2 --time 5s",
        "hostbench disk --size 1G --bs 4k --time 10s",
        "hostbench net serve --port 12866",
        "hostbench redis --requests 100000 --clients 50",
    ];

    fn command_lines() -> Vec<Seed> {
        let mut out = Vec::new();
        for (i, line) in LINES.iter().enumerate() {
            let words: Vec<&str> = line.split(' ').collect();
            out.push(seed("argv", &format!("{}-{i}", words[0]), words.join("\n")));
            if words[0] == "fio" {
                out.push(seed("fio_argv", &format!("{i}"), words[1..].join("\n")));
            }
        }
        out
    }

    fn units() -> Vec<Seed> {
        vec![
            seed(
                "units",
                "sizes",
                "8K\n8KiB\n1M\n10G\n1.5G\n8kB\n10GB\n1T\n512\n0\n8k\n",
            ),
            seed(
                "units",
                "durations",
                "10\n10s\n500ms\n2m\n1h\n1d\n250us\n100ns\n1.5s\n",
            ),
            seed(
                "units",
                "sysbench",
                "64K\n1K\n100G\n2G\n16384\n+2\n-1\non\noff\ntrue\n",
            ),
        ]
    }

    fn resp() -> Vec<Seed> {
        let replies: &[(&str, &[u8])] = &[
            ("ok", b"+OK\r\n"),
            ("pong", b"+PONG\r\n"),
            (
                "error",
                b"-ERR unknown command 'FOO', with args beginning with: \r\n",
            ),
            ("noauth", b"-NOAUTH Authentication required.\r\n"),
            ("moved", b"-MOVED 3999 127.0.0.1:6381\r\n"),
            ("integer", b":1000\r\n"),
            ("bulk", b"$3\r\nbar\r\n"),
            ("null", b"$-1\r\n"),
            (
                "config-get",
                b"*2\r\n$4\r\nsave\r\n$23\r\n3600 1 300 100 60 10000\r\n",
            ),
            (
                "hello3",
                b"%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$5\r\n7.2.4\r\n\
                  $5\r\nproto\r\n:3\r\n$2\r\nid\r\n:5\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n\
                  $4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n",
            ),
            (
                "resp3-scalars",
                b"_\r\n,3.14\r\n#t\r\n(3492890328409238509324850943850943825024385\r\n\
                  =15\r\ntxt:Some string\r\n!21\r\nSYNTAX invalid syntax\r\n",
            ),
            (
                "set-push",
                b"~2\r\n+a\r\n+b\r\n>3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n",
            ),
            (
                "attribute",
                b"|1\r\n+key-popularity\r\n%2\r\n$1\r\na\r\n,0.1923\r\n$1\r\nb\r\n,0.0012\r\n\
                  *2\r\n:2039123\r\n:9543892\r\n",
            ),
            (
                "pipelined",
                b"+OK\r\n+OK\r\n$3\r\nxxx\r\n$3\r\nxxx\r\n-ERR wrong\r\n*-1\r\n:0\r\n",
            ),
            ("cut", b"$10\r\nhello"),
            (
                "lrange",
                b"*3\r\n$3\r\nxxx\r\n$3\r\nxxx\r\n*1\r\n$0\r\n\r\n",
            ),
        ];
        let mut out: Vec<Seed> = replies
            .iter()
            .map(|(name, bytes)| seed("resp", name, *bytes))
            .collect();
        out.push(seed(
            "redis_cluster_nodes",
            "nodes",
            "07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:30004@31004,host4 slave e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 1426238317239 4 connected\n\
             67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 127.0.0.1:30002@31002 master - 0 1426238316232 2 connected 5461-10922\n\
             292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 127.0.0.1:30003@31003 master - 0 1426238318243 3 connected 10923-16383 [77->-e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca]\n\
             e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca :30001@31001 myself,master - 0 0 1 connected 0-5460\n\
             aaaa8b365bb7edb5e285caf0b7e6ddc7265d2f4f 127.0.0.1:30005@31005 master - 0 1426238318243 5 connected\n",
        ));
        out.push(seed(
            "redis_cluster_nodes",
            "ipv6-one-node",
            "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca [::1]:7000@17000 myself,master - 0 0 1 connected 0 2-100 16383\n",
        ));
        out
    }

    fn params() -> Vec<(&'static str, Params)> {
        let tcp = Params::default();
        vec![
            ("tcp", tcp.clone()),
            (
                "tcp-reverse-parallel",
                Params {
                    parallel: 4,
                    reverse: true,
                    window: 1 << 20,
                    mss: 1400,
                    nodelay: true,
                    congestion: Some("cubic".into()),
                    get_server_output: true,
                    ..tcp.clone()
                },
            ),
            (
                "udp-bidir",
                Params {
                    udp: true,
                    len: wire::DEFAULT_UDP_BLKSIZE,
                    bandwidth: wire::DEFAULT_UDP_RATE,
                    bidirectional: true,
                    udp_counters_64bit: true,
                    omit: 2,
                    ..tcp.clone()
                },
            ),
            (
                "bytes",
                Params {
                    time: 0,
                    num: 1 << 30,
                    ..tcp
                },
            ),
        ]
    }

    fn results() -> Results {
        Results {
            cpu_total: 12.5,
            cpu_user: 2.25,
            cpu_system: 10.25,
            sender_has_retransmits: 1,
            congestion_used: Some("cubic".into()),
            streams: vec![
                StreamResult {
                    id: wire::stream_id(0),
                    bytes: 1 << 33,
                    retransmits: 12,
                    jitter_s: 0.0,
                    errors: 0,
                    packets: 0,
                    start_time: 0.0,
                    end_time: 10.000_123,
                },
                StreamResult {
                    id: wire::stream_id(1),
                    bytes: 4_000_000,
                    retransmits: -1,
                    jitter_s: 0.000_25,
                    errors: 3,
                    packets: 2857,
                    start_time: 0.0,
                    end_time: 10.0,
                },
            ],
        }
    }

    fn iperf3() -> Vec<Seed> {
        let mut out = Vec::new();
        // A cookie as `make_cookie` makes them, fixed so the seeds are the same each time.
        let cookie = *b"abcdefghijklmnopqrstuvwxyz234567abcd\0";
        assert_eq!(cookie.len(), wire::COOKIE_SIZE);
        for (name, p) in params() {
            out.push(seed(
                "iperf3_json",
                &format!("params-{name}"),
                serde_json::to_vec(&p.to_json()).unwrap(),
            ));
            // The server's reading of a whole test: cookie, parameters, the states
            // the client sends, its results.
            let mut conversation = cookie.to_vec();
            wire::write_json(&mut conversation, &p.to_json()).unwrap();
            for state in [wire::TEST_START, wire::TEST_RUNNING, wire::TEST_END] {
                wire::write_state(&mut conversation, state).unwrap();
            }
            wire::write_state(&mut conversation, wire::EXCHANGE_RESULTS).unwrap();
            wire::write_json(&mut conversation, &results().to_json()).unwrap();
            wire::write_state(&mut conversation, wire::IPERF_DONE).unwrap();
            out.push(seed("iperf3_wire", &format!("test-{name}"), conversation));
        }
        out.push(seed(
            "iperf3_json",
            "results",
            serde_json::to_vec(&results().to_json()).unwrap(),
        ));
        // iperf3 <= 3.13 printed -1 as 2^64-1.
        out.push(seed(
            "iperf3_json",
            "results-old-minus-one",
            r#"{"cpu_util_total":1.5,"cpu_util_user":0.5,"cpu_util_system":1,"sender_has_retransmits":18446744073709551615,"streams":[{"id":1,"bytes":1000,"retransmits":18446744073709551615,"jitter":0,"errors":0,"packets":0,"start_time":0,"end_time":10}]}"#,
        ));
        let mut udp = wire::UDP_CONNECT_REPLY.to_vec();
        udp.extend_from_slice(&cookie);
        out.push(seed("iperf3_wire", "udp-reply", udp));
        out
    }

    fn request(test: TestKind) -> TestRequest {
        TestRequest {
            test,
            duration_ms: 10_000,
            bytes: 0,
            transactions: 0,
            parallel: 2,
            send_size: if test.is_udp() { 1024 } else { 131_072 },
            recv_size: 131_072,
            request_size: 1,
            response_size: 1,
            server_sndbuf: 0,
            server_rcvbuf: 0,
            rate_bps: if test.is_udp() { 10_000_000 } else { 0 },
            interval_ms: 1000,
            nodelay: test.is_rr(),
        }
    }

    fn net_protocol() -> Vec<Seed> {
        // Fixed, so the seeds are the same each time (`random_token` makes real ones).
        let token = *b"0123456789abcdef";
        let limits = Limits {
            max_tests: 8,
            max_duration_ms: 300_000,
            max_parallel: 64,
            max_rate_bps: 0,
            idle_timeout_ms: 10_000,
        };
        let report = ServerReport {
            streams: vec![StreamReport {
                index: 0,
                bytes_received: 1 << 30,
                bytes_sent: 0,
                packets: 10,
                lost: 1,
                out_of_order: 2,
                transactions: 0,
                retransmits: Some(3),
                elapsed_s: 10.001,
                sndbuf: 16384,
                rcvbuf: 131072,
            }],
            elapsed_s: 10.002,
            cpu_user_s: 0.5,
            cpu_system_s: 1.25,
            cpus: 2,
            congestion: Some("cubic".into()),
        };
        let client = |test| {
            [
                Message::Hello {
                    protocol: protocol::PROTOCOL_VERSION,
                    client: "hostbench 0.1.0".into(),
                },
                Message::Auth {
                    proof: protocol::hmac_hex(b"secret", b"nonce"),
                },
                Message::Start(request(test)),
                Message::Stop,
            ]
        };
        let server = [
            Message::Welcome {
                protocol: protocol::PROTOCOL_VERSION,
                server: "hostbench 0.1.0".into(),
                auth: true,
                nonce: protocol::hex(&token),
                limits,
            },
            Message::Ready {
                token: protocol::hex(&token),
                udp_ports: vec![40000, 40001],
            },
            Message::Running,
            Message::Interval(IntervalReport {
                start_s: 0.0,
                end_s: 1.0,
                bytes: 1234,
                packets: 0,
            }),
            Message::Result(report),
            Message::error("busy", "limit of 8 tests; try again later"),
        ];
        let frames =
            |msgs: &[Message]| -> Vec<u8> { msgs.iter().flat_map(protocol::encode).collect() };
        let mut out: Vec<Seed> = TestKind::ALL
            .iter()
            .map(|&t| {
                seed(
                    "net_protocol",
                    &format!("client-{}", t.name()),
                    frames(&client(t)),
                )
            })
            .collect();
        out.push(seed("net_protocol", "server", frames(&server)));
        out.push(seed(
            "net_protocol",
            "data-header",
            protocol::data_header(&token, 3).to_vec(),
        ));
        out
    }

    /// Outcomes as `--json` writes them (the render goldens' stored runs): the smallest
    /// of each workload alone, and two in one document.
    fn report_input() -> Vec<Seed> {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/render/runs.json");
        let runs: serde_json::Value =
            serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        let mut smallest: std::collections::BTreeMap<String, String> = Default::default();
        for o in runs["runs"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|r| r["outcomes"].as_array().unwrap())
        {
            let text = o.to_string();
            let workload = o["workload"].as_str().unwrap().to_string();
            let entry = smallest.entry(workload).or_insert_with(|| text.clone());
            if text.len() < entry.len() {
                *entry = text;
            }
        }
        let mut out: Vec<Seed> = smallest
            .iter()
            .map(|(w, text)| seed("report_input", &format!("outcome-{w}"), text.as_bytes()))
            .collect();
        out.push(seed(
            "report_input",
            "outcomes-cpu-ping",
            format!(
                r#"{{"outcomes":[{},{}]}}"#,
                smallest["cpu"], smallest["ping"]
            ),
        ));
        out
    }
}

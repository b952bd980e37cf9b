//! redis-benchmark's default tests, in its order, with its titles, commands, keys and
//! payload bytes. In cluster mode every key carries `:{tag}` (`key:{tag}:__rand_int__`,
//! `mylist:{tag}`), which each batch overwrites with a hash tag of its master's slot.

use super::options::Options;
use crate::workload::redis::resp;

pub struct Test {
    pub title: String,
    /// The command as sent: RESP, or inline for PING_INLINE.
    pub command: Vec<u8>,
}

/// redis-benchmark's payload: a 32-bit LCG from 1234, one byte per step,
/// `'0' + ((state >> 16) & 63)`. `-d 3` gives "VXK".
pub fn payload(size: usize) -> Vec<u8> {
    let mut state: u32 = 1234;
    (0..size)
        .map(|_| {
            state = state.wrapping_mul(1_103_515_245).wrapping_add(12345);
            b'0' + ((state >> 16) & 63) as u8
        })
        .collect()
}

pub fn default_tests(o: &Options) -> Vec<Test> {
    let data = payload(o.datasize);
    let tag = if o.cluster { ":{tag}" } else { "" };
    let key = format!("key{tag}:__rand_int__");
    let counter = format!("counter{tag}:__rand_int__");
    let names =
        ["mylist", "myset", "myzset", "myhash", "mystream"].map(|base| format!("{base}{tag}"));
    let (key, counter) = (key.as_bytes(), counter.as_bytes());
    let [list, set, zset, hash, stream] = [0, 1, 2, 3, 4].map(|i| names[i].as_bytes());
    let mut tests = Vec::new();
    let mut add = |title: &str, args: Vec<&[u8]>| {
        let mut command = Vec::new();
        resp::encode(&mut command, &args);
        tests.push(Test {
            title: title.into(),
            command,
        });
    };
    let d: &[u8] = &data;
    if o.selected("ping_inline") || o.selected("ping") {
        // Pushed directly: inline, not RESP.
        add("PING_INLINE", vec![]);
    }
    if o.selected("ping_mbulk") || o.selected("ping") {
        add("PING_MBULK", vec![b"PING"]);
    }
    if o.selected("set") {
        add("SET", vec![b"SET", key, d]);
    }
    if o.selected("get") {
        add("GET", vec![b"GET", key]);
    }
    if o.selected("incr") {
        add("INCR", vec![b"INCR", counter]);
    }
    if o.selected("lpush") {
        add("LPUSH", vec![b"LPUSH", list, d]);
    }
    if o.selected("rpush") {
        add("RPUSH", vec![b"RPUSH", list, d]);
    }
    if o.selected("lpop") {
        add("LPOP", vec![b"LPOP", list]);
    }
    if o.selected("rpop") {
        add("RPOP", vec![b"RPOP", list]);
    }
    if o.selected("sadd") {
        add("SADD", vec![b"SADD", set, b"element:__rand_int__"]);
    }
    if o.selected("hset") {
        add("HSET", vec![b"HSET", hash, b"element:__rand_int__", d]);
    }
    if o.selected("spop") {
        add("SPOP", vec![b"SPOP", set]);
    }
    if o.selected("zadd") {
        let score: &[u8] = if o.keyspace.is_some() {
            b"__rand_int__"
        } else {
            b"0"
        };
        add("ZADD", vec![b"ZADD", zset, score, b"element:__rand_int__"]);
    }
    if o.selected("zpopmin") {
        add("ZPOPMIN", vec![b"ZPOPMIN", zset]);
    }
    let lranges = [
        ("lrange_100", "LRANGE_100 (first 100 elements)", "99"),
        ("lrange_300", "LRANGE_300 (first 300 elements)", "299"),
        ("lrange_500", "LRANGE_500 (first 500 elements)", "499"),
        ("lrange_600", "LRANGE_600 (first 600 elements)", "599"),
    ];
    let any_lrange = o.selected("lrange") || lranges.iter().any(|(n, _, _)| o.selected(n));
    if any_lrange {
        add(
            "LPUSH (needed to benchmark LRANGE)",
            vec![b"LPUSH", list, d],
        );
    }
    for (name, title, last) in lranges {
        if o.selected("lrange") || o.selected(name) {
            add(title, vec![b"LRANGE", list, b"0", last.as_bytes()]);
        }
    }
    if o.selected("mset") {
        let mut args: Vec<&[u8]> = vec![b"MSET"];
        for _ in 0..10 {
            args.push(key);
            args.push(d);
        }
        add("MSET (10 keys)", args);
    }
    if o.selected("xadd") {
        add("XADD", vec![b"XADD", stream, b"*", b"myfield", d]);
    }
    if let Some(t) = tests.iter_mut().find(|t| t.title == "PING_INLINE") {
        t.command = b"PING\r\n".to_vec();
    }
    tests
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compat::redis_benchmark::options::{Parsed, parse};

    #[test]
    fn payload_matches_redis_benchmark() {
        assert_eq!(payload(3), b"VXK");
        assert_eq!(payload(5), b"VXKeH");
    }

    #[test]
    fn default_order_and_selection() {
        let o = Options::default();
        let titles: Vec<String> = default_tests(&o).into_iter().map(|t| t.title).collect();
        assert_eq!(titles.len(), 21);
        assert_eq!(titles[0], "PING_INLINE");
        assert_eq!(titles[2], "SET");
        assert_eq!(titles[14], "LPUSH (needed to benchmark LRANGE)");
        assert_eq!(titles[20], "XADD");
        let args: Vec<String> = ["-t", "get,set,lrange_300"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let Parsed::Run(o) = parse(&args).unwrap().0 else {
            panic!()
        };
        let titles: Vec<String> = default_tests(&o).into_iter().map(|t| t.title).collect();
        assert_eq!(
            titles,
            [
                "SET",
                "GET",
                "LPUSH (needed to benchmark LRANGE)",
                "LRANGE_300 (first 300 elements)"
            ]
        );
    }

    #[test]
    fn cluster_keys_carry_a_tag_placeholder() {
        let o = Options {
            cluster: true,
            ..Options::default()
        };
        let tests = default_tests(&o);
        let command = |title: &str| {
            let t = tests.iter().find(|t| t.title == title).unwrap();
            String::from_utf8(t.command.clone()).unwrap()
        };
        assert!(command("SET").contains("$22\r\nkey:{tag}:__rand_int__\r\n"));
        assert!(command("LPUSH").contains("$12\r\nmylist:{tag}\r\n"));
        assert_eq!(command("MSET (10 keys)").matches(":{tag}:").count(), 10);
        assert_eq!(command("PING_INLINE"), "PING\r\n");
    }

    #[test]
    fn set_command_bytes() {
        let o = Options::default();
        let set = default_tests(&o)
            .into_iter()
            .find(|t| t.title == "SET")
            .unwrap();
        assert_eq!(
            set.command,
            b"*3\r\n$3\r\nSET\r\n$16\r\nkey:__rand_int__\r\n$3\r\nVXK\r\n"
        );
    }
}

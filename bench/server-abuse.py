#!/usr/bin/env python3
"""Strangers against hostbench's three servers, during a real test.

For each server (`hostbench net serve`, the netserver personality, the iperf3
personality's `-s`) on a private loopback port:

1. its open descriptors and RSS are read from /proc;
2. a real client runs a test (TIME seconds) while ABUSE connections hit the port:
   connect-and-close, silent connections held open, random bytes, mutated copies
   of the protocol's own first messages, and the "slot" sequence (a stranger that
   asks for a test and leaves: hello + start + close, or an iperf3 cookie + close);
3. right after each burst of eight slot sequences, a real client asks for a short
   test: a refusal ("busy", "limit", ACCESS_DENIED) counts as a slot a stranger held;
4. descriptors and RSS are read again once the strangers are gone.

Prints one row per server: connections made, real tests that passed, slots held
by strangers, descriptors and RSS before/after, and whether the server survived.
Loopback only; every loop is bounded. Usage:

    ABUSE=1400 TIME=5 python3 bench/server-abuse.py [path/to/hostbench]
"""

import json
import os
import random
import socket
import struct
import subprocess
import sys
import threading
import time

HB = sys.argv[1] if len(sys.argv) > 1 else "target/release/hostbench"
ABUSE = int(os.environ.get("ABUSE", "1400"))
TIME = int(os.environ.get("TIME", "5"))
rng = random.Random(0x5EED)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def frame(obj):
    body = json.dumps(obj).encode()
    return struct.pack(">I", len(body)) + body


HELLO = frame({"type": "hello", "protocol": 1, "client": "stranger"})
START = frame(
    {
        "type": "start",
        "test": "TCP_STREAM",
        "duration_ms": 10000,
        "bytes": 0,
        "transactions": 0,
        "parallel": 1,
        "send_size": 131072,
        "recv_size": 131072,
        "request_size": 1,
        "response_size": 1,
        "server_sndbuf": 0,
        "server_rcvbuf": 0,
        "rate_bps": 0,
        "interval_ms": 1000,
        "nodelay": False,
    }
)
# An iperf3 client's first bytes: a 37-byte cookie (36 characters and a NUL).
COOKIE = b"abcdefghijklmnopqrstuvwxyz0123456789\0"


def mutate(data):
    b = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        op = rng.randint(0, 2)
        i = rng.randrange(len(b)) if b else 0
        if op == 0 and b:
            b[i] = rng.randrange(256)
        elif op == 1:
            b.insert(i, rng.randrange(256))
        elif b:
            del b[i]
    return bytes(b)


def stranger(port, kind, seed):
    r = random.Random(seed)
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=3)
    except OSError:
        return
    try:
        s.settimeout(3)
        if kind == "close":
            pass
        elif kind == "silent":
            time.sleep(r.uniform(0.5, 3.0))
        elif kind == "garbage":
            s.sendall(bytes(r.randrange(256) for _ in range(r.randint(1, 600))))
        elif kind == "mutated":
            s.sendall(mutate(HELLO + START) if r.random() < 0.7 else mutate(COOKIE + b"\0\0\0\x10{}"))
        elif kind == "slot":
            s.sendall(HELLO)
            try:
                s.recv(4096)
            except OSError:
                pass
            s.sendall(START)
        elif kind == "cookie":
            s.sendall(COOKIE)
            time.sleep(r.uniform(0.0, 1.0))
    except OSError:
        pass
    finally:
        s.close()


KINDS = ["close", "silent", "garbage", "mutated", "slot", "cookie"]


class Server:
    def __init__(self, name, args, client, short):
        self.name, self.args, self.client, self.short = name, args, client, short


def servers(port):
    p = str(port)
    return [
        Server(
            "net serve",
            [HB, "net", "serve", "--port", p, "--bind", "127.0.0.1"],
            [HB, "net", "TCP_STREAM", "127.0.0.1", "-p", p, "-t", f"{TIME}s", "--no-save"],
            [HB, "net", "TCP_RR", "127.0.0.1", "-p", p, "-t", "1s", "--no-save"],
        ),
        Server(
            "netserver",
            [HB, "netserver", "-D", "-p", p],
            [HB, "netperf", "-H", "127.0.0.1", "-p", p, "-l", str(TIME)],
            [HB, "netperf", "-H", "127.0.0.1", "-p", p, "-l", "1", "-t", "TCP_RR"],
        ),
        Server(
            "iperf3 -s",
            [HB, "iperf3", "-s", "-p", p],
            [HB, "iperf3", "-c", "127.0.0.1", "-p", p, "-t", str(TIME)],
            [HB, "iperf3", "-c", "127.0.0.1", "-p", p, "-t", "1"],
        ),
    ]


def run_client(argv):
    env = dict(os.environ, HOSTBENCH_NO_SAVE="1")
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=TIME + 40, env=env)
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return None, "timed out"


def wait_listening(port, proc):
    t = time.time()
    while time.time() - t < 10:
        if proc.poll() is not None:
            return False
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def abuse(server, port):
    env = dict(os.environ, HOSTBENCH_NO_SAVE="1")
    proc = subprocess.Popen(server.args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        if not wait_listening(port, proc):
            return {"server": server.name, "error": "never listened"}
        time.sleep(0.5)
        fd0, rss0 = fds(proc.pid), rss_kib(proc.pid)
        result = {}

        def real():
            result["main"] = run_client(server.client)

        t = threading.Thread(target=real)
        t.start()
        time.sleep(0.5)
        # The strangers, at most 100 at a time, while the real test runs.
        gate = threading.BoundedSemaphore(100)

        def one(kind, seed):
            try:
                stranger(port, kind, seed)
            finally:
                gate.release()

        made = 0
        deadline = time.time() + 60
        threads = []
        while made < ABUSE and time.time() < deadline:
            if not gate.acquire(timeout=1):
                continue
            th = threading.Thread(target=one, args=(KINDS[made % len(KINDS)], made))
            th.start()
            threads.append(th)
            made += 1
        for th in threads:
            th.join(5)
        t.join(TIME + 45)
        # The slot attack, each time followed at once by a real client's short test.
        held = short_ok = 0
        for round_ in range(5):
            slots = [threading.Thread(target=stranger, args=(port, "slot", 10**6 + 8 * round_ + i)) for i in range(8)]
            for th in slots:
                th.start()
            for th in slots:
                th.join(5)
            made += 8
            code, out = run_client(server.short)
            if code == 0:
                short_ok += 1
            elif any(w in out for w in ("busy", "limit of", "ACCESS_DENIED")):
                held += 1
        short_runs = 5  # rounds of the slot attack above
        main_code, main_out = result.get("main", (None, "no result"))
        # The strangers are gone: give the server its bounds to close what lingers.
        time.sleep(6)
        alive = proc.poll() is None
        fd1 = fds(proc.pid) if alive else None
        rss1 = rss_kib(proc.pid) if alive else None
        return {
            "server": server.name,
            "connections": made,
            "real test": "ok" if main_code == 0 else f"FAILED ({main_code}): {main_out.strip()[-200:]}",
            "short tests ok": f"{short_ok}/{short_runs}",
            "slots held by strangers": held,
            "fds before/after": f"{fd0}/{fd1}",
            "RSS KiB before/after": f"{rss0}/{rss1}",
            "survived": alive,
        }
    finally:
        proc.kill()
        proc.wait()


def main():
    rows = []
    for i in range(3):
        port = free_port()
        s = servers(port)[i]
        rows.append(abuse(s, port))
    for r in rows:
        print(json.dumps(r))
    bad = [r for r in rows if r.get("real test") != "ok" or r.get("slots held by strangers") or not r.get("survived")]
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

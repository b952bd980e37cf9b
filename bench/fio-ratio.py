#!/usr/bin/env python3
"""hostbench against fio on the same file system, side by side.

TOOL=disk (default) compares the native `hostbench disk`; TOOL=fio compares the fio
personality (`hostbench fio`) given fio's own command line. Each case runs the two
alternately RUNS times (each tool on a freshly laid-out file of
the same size, so neither profits from a file the host still caches) and prints the
medians of IOPS, MiB/s and CPU per I/O, and the ratios hostbench / fio.
Targets (issue 3): IOPS and MiB/s >= 0.98x fio, CPU per I/O <= fio's.

    bench/fio-ratio.py                       # /var/tmp, 5 runs of 5 s + 1 s ramp
    DIR=/mnt/disk RUNS=7 TIME=10 bench/fio-ratio.py
    CASES=randread bench/fio-ratio.py        # only cases whose name matches
"""
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Benchmark runs are not results to keep (docs/store.md).
os.environ["HOSTBENCH_NO_SAVE"] = "1"
HOSTBENCH = os.environ.get("HOSTBENCH", os.path.join(ROOT, "target/release/hostbench"))
DIR = os.environ.get("DIR", "/var/tmp")
RUNS = int(os.environ.get("RUNS", "5"))
TIME = int(os.environ.get("TIME", "5"))
SIZE = os.environ.get("SIZE", "1G")
CASES = os.environ.get("CASES", ".")

# name, rw, bs, iodepth, engine
cases = [
    (f"4k randread QD1 {e}", "randread", "4k", 1, e) for e in ("io_uring", "libaio")
] + [
    (f"4k randread QD32 {e}", "randread", "4k", 32, e) for e in ("io_uring", "libaio")
] + [
    (f"1M read QD8 {e}", "read", "1M", 8, e) for e in ("io_uring", "libaio")
] + [
    (f"1M write QD8 {e}", "write", "1M", 8, e) for e in ("io_uring", "libaio")
]


def fio(rw, bs, depth, engine, binary=("fio",)):
    work = tempfile.mkdtemp(dir=DIR, prefix="fio-ratio-")
    try:
        out = subprocess.run(
            [*binary, "--name=ratio", f"--filename={work}/file", f"--size={SIZE}", "--direct=1",
             f"--rw={rw}", f"--bs={bs}", f"--ioengine={engine}", f"--iodepth={depth}",
             f"--runtime={TIME}", "--ramp_time=1", "--time_based", "--output-format=json"],
            check=True, capture_output=True, text=True).stdout
    finally:
        shutil.rmtree(work, ignore_errors=True)
    job = json.loads(out[out.index("{"):])["jobs"][0]
    d = job["read" if "read" in rw else "write"]
    cpu_s = (job["usr_cpu"] + job["sys_cpu"]) / 100 * job["job_runtime"] / 1000
    return d["iops"], d["bw_bytes"] / 2**20, cpu_s * 1e9 / max(d["total_ios"], 1)


def hostbench(rw, bs, depth, engine):
    if os.environ.get("TOOL", "disk") == "fio":
        return fio(rw, bs, depth, engine, binary=(HOSTBENCH, "fio"))
    out = subprocess.run(
        [HOSTBENCH, "disk", "--dir", DIR, "--size", SIZE, "--pattern", rw, "--bs", bs.upper(),
         "--iodepth", str(depth), "--engine", engine, "--time", f"{TIME}s", "--warmup", "1s", "--json"],
        check=True, capture_output=True, text=True).stdout
    o = json.loads(out)["outcomes"][0]
    m = {x["name"]: x["value"] for x in o["metrics"]}
    d = "read" if "read" in rw else "write"
    return m[f"{d}_iops"], m[f"{d}_bytes_per_sec"] / 2**20, m["cpu_per_io"]


def main():
    if not shutil.which("fio"):
        sys.exit("fio is not installed (apt-get install fio)")
    if not os.path.exists(HOSTBENCH):
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    print(f"{'case':26} {'IOPS hb':>10} {'IOPS fio':>10} {'ratio':>6} {'MiB/s':>8} {'CPU/IO hb':>10} {'CPU/IO fio':>10} {'ratio':>6}")
    for name, rw, bs, depth, engine in cases:
        if not re.search(CASES, name):
            continue
        hb, fi = [], []
        for _ in range(RUNS):
            hb.append(hostbench(rw, bs, depth, engine))
            fi.append(fio(rw, bs, depth, engine))
        med = lambda rows, k: statistics.median(r[k] for r in rows)
        print(f"{name:26} {med(hb, 0):10.0f} {med(fi, 0):10.0f} {med(hb, 0) / med(fi, 0):6.3f} "
              f"{med(hb, 1):8.1f} {med(hb, 2) / 1000:9.2f}µs {med(fi, 2) / 1000:9.2f}µs {med(hb, 2) / med(fi, 2):6.3f}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()

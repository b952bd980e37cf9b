#!/usr/bin/env bash
# The guides' own command lines, run through symlinks to hostbench as two labelled
# "hosts" (vm=a, vm=b), three times each, kept in a results database of this script's
# own; then `history` and `compare` over them. Needs redis-server (for
# redis-benchmark); everything else runs on loopback or in a scratch directory.
#
#   scripts/guides-demo.sh            # prints history and one compare per peer
#   KEEP=1 scripts/guides-demo.sh     # leaves the scratch directory (its path is printed)
set -euo pipefail
cd "$(dirname "$0")/.."
HOSTBENCH=${HOSTBENCH:-$PWD/target/release/hostbench}
[ -x "$HOSTBENCH" ] || cargo build --release --quiet
work=$(mktemp -d /tmp/hostbench-guides.XXXXXX)
cleanup() {
  [ -n "${redis_pid:-}" ] && kill "$redis_pid" 2>/dev/null || true
  [ -n "${iperf_pid:-}" ] && kill "$iperf_pid" 2>/dev/null || true
  [ -n "${netserver_pid:-}" ] && kill "$netserver_pid" 2>/dev/null || true
  if [ -n "${KEEP:-}" ]; then echo "kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
mkdir -p "$work/bin" "$work/data"
for peer in sysbench fio redis-benchmark unixbench iperf3 netperf netserver ping dd; do
  ln -s "$HOSTBENCH" "$work/bin/$peer"
done
export PATH="$work/bin:$PATH" XDG_DATA_HOME="$work/data"
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

redis_port=$(port)
redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --daemonize no >/dev/null &
redis_pid=$!
iperf_port=$(port)
iperf3 -s -p "$iperf_port" >/dev/null 2>&1 &
iperf_pid=$!
netserver_port=$(port)
netserver -D -p "$netserver_port" >/dev/null 2>&1 &
netserver_pid=$!
sleep 1

cat > "$work/seed.fio" <<JOB
[global]
ioengine=libaio
direct=1
size=64m
runtime=2
time_based
filename=$work/fio.test
[randread-4k-qd32]
rw=randread
bs=4k
iodepth=32
JOB

for vm in a a a b b b; do
  export HOSTBENCH_LABEL="vm=$vm"
  sysbench cpu --cpu-max-prime=20000 --time=2 run >/dev/null
  fio "$work/seed.fio" >/dev/null
  redis-benchmark -q -p "$redis_port" -n 20000 -t set,get >/dev/null
  unixbench -c 1 -i 1 pipe >/dev/null
  iperf3 -c 127.0.0.1 -p "$iperf_port" -t 2 >/dev/null
  netperf -H 127.0.0.1 -p "$netserver_port" -l 2 -t TCP_RR >/dev/null
  ping -c 5 -i 0.2 127.0.0.1 >/dev/null
  dd if=/dev/zero of="$work/dd.test" bs=64k count=4k conv=fdatasync 2>/dev/null
done
unset HOSTBENCH_LABEL

hostbench() { "$HOSTBENCH" "$@"; }
echo '$ hostbench history'
hostbench history
for w in cpu disk dd redis index net ping; do
  echo
  echo "\$ hostbench compare label:vm=a label:vm=b --workload $w"
  hostbench compare label:vm=a label:vm=b --workload "$w"
done
hostbench report --compare label:vm=a label:vm=b -o "$work/a-vs-b.html"
echo
echo "report: $work/a-vs-b.html ($(wc -c <"$work/a-vs-b.html") bytes)"

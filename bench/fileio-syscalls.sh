#!/usr/bin/env bash
# A noise-free check that hostbench's sysbench fileio does the same work as sysbench
# 1.0.20: the same fixed number of events, counted system calls side by side
# (strace -c). On a shared disk the rates swing by ±30 % between runs; the calls per
# event do not. Differences in futex/mmap/read are the runtimes, not the I/O path.
#
#   bench/fileio-syscalls.sh                       # rndrw async direct, in /var/tmp
#   ARGS="--file-test-mode=rndrw --file-io-mode=mmap" bench/fileio-syscalls.sh
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${DIR:-/var/tmp}
EVENTS=${EVENTS:-20000}
ARGS=${ARGS:---file-test-mode=rndrw --file-io-mode=async --file-extra-flags=direct}
HOSTBENCH=${HOSTBENCH:-$PWD/target/release/hostbench}
for tool in sysbench strace; do
  command -v $tool >/dev/null || { echo "$tool is not installed (apt-get install $tool)" >&2; exit 2; }
done
[ -x "$HOSTBENCH" ] || cargo build --release --quiet

work=$(mktemp -d "$DIR/fileio-syscalls.XXXXXX")
trap 'cd /; rm -rf "$work"' EXIT
cd "$work"
common="--file-num=16 --file-total-size=${SIZE:-512M}"
sysbench fileio $common prepare >/dev/null

count() { # tool... -> "syscall calls" lines
  strace -f -c -o "$work/strace.txt" "$@" fileio $common $ARGS --events="$EVENTS" --time=0 run >/dev/null
  awk '$NF ~ /^[a-z_0-9]+$/ && $4 ~ /^[0-9]+$/ && $NF != "total" {print $NF, $4}' "$work/strace.txt"
}
# shellcheck disable=SC2086
export LC_ALL=C
printf '%-16s %10s %10s %10s\n' syscall hostbench sysbench "diff/event"
join -a1 -a2 -e0 -o 0,1.2,2.2 <(count "$HOSTBENCH" sysbench | sort) <(count sysbench | sort) |
  awk -v n="$EVENTS" '{printf "%-16s %10d %10d %10.3f\n", $1, $2, $3, ($2 - $3) / n}' | sort -k2 -n -r

#!/usr/bin/env bash
# hostbench's sysbench fileio against Debian's sysbench 1.0.20 on the same prepared
# files: each case runs the two alternately RUNS times; prints the medians of the
# case's figure and the ratio (hostbench / sysbench). Target (issue 3): 0.95-1.05.
#
#   bench/sysbench-fileio-ratio.sh                 # /var/tmp, 5 runs of 5 s
#   DIR=/mnt/disk RUNS=7 TIME=10 bench/sysbench-fileio-ratio.sh
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
TIME=${TIME:-5}
DIR=${DIR:-/var/tmp}
SIZE=${SIZE:-1G}
HOSTBENCH=${HOSTBENCH:-$PWD/target/release/hostbench}
CASES=${CASES:-.}
command -v sysbench >/dev/null || { echo "sysbench is not installed (apt-get install sysbench)" >&2; exit 2; }
[ -x "$HOSTBENCH" ] || cargo build --release --quiet

work=$(mktemp -d "$DIR/fileio-ratio.XXXXXX")
trap 'cd /; rm -rf "$work"' EXIT
cd "$work"
common="--file-num=16 --file-total-size=$SIZE"
sysbench fileio $common prepare >/dev/null

# case name | fileio arguments | figure (field of the report)
cases=(
  "rndrd 16K direct|--file-test-mode=rndrd --file-extra-flags=direct|reads/s:"
  "rndwr 16K direct|--file-test-mode=rndwr --file-extra-flags=direct|writes/s:"
  "rndrw 16K direct|--file-test-mode=rndrw --file-extra-flags=direct|reads/s:"
  "seqrd 1M direct|--file-test-mode=seqrd --file-block-size=1048576 --file-extra-flags=direct|read, MiB/s:"
  "seqwr 1M direct|--file-test-mode=seqrewr --file-block-size=1048576 --file-extra-flags=direct|written, MiB/s:"
  "rndwr 16K buffered (fsync cycle)|--file-test-mode=rndwr|fsyncs/s:"
  "rndrw 16K async direct|--file-test-mode=rndrw --file-io-mode=async --file-extra-flags=direct|reads/s:"
  "rndrw 16K mmap|--file-test-mode=rndrw --file-io-mode=mmap|reads/s:"
)

# shellcheck source=bench/lib.sh
. "$OLDPWD/bench/lib.sh"

printf '%-36s %12s %12s %8s\n' "case" "hostbench" "sysbench" "ratio"
for c in "${cases[@]}"; do
  IFS='|' read -r name args field <<<"$c"
  [[ $name =~ $CASES ]] || continue
  # shellcheck disable=SC2086
  compare_case "$name" "grep -F '$field' | head -1 | awk '{print \$NF}'" \
    "$HOSTBENCH" sysbench --time="$TIME" fileio $common $args run -- sysbench --time="$TIME" fileio $common $args run
done

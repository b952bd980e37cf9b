#!/usr/bin/env bash
# hostbench's sysbench personality against Debian's sysbench 1.0.20, side by side:
# each case runs the two alternately RUNS times; prints the medians and their ratio
# (hostbench / sysbench). Target: every ratio within 0.97-1.03.
#
#   bench/sysbench-ratio.sh            # 9 alternating runs of 3 s per tool and case
#   RUNS=5 TIME=10 bench/sysbench-ratio.sh
#   CASES='memory' bench/sysbench-ratio.sh   # only the cases whose name matches
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-9}
TIME=${TIME:-3}
HOSTBENCH=${HOSTBENCH:-target/release/hostbench}
CASES=${CASES:-.}
command -v sysbench >/dev/null || { echo "sysbench is not installed (apt-get install sysbench)" >&2; exit 2; }
[ -x "$HOSTBENCH" ] || cargo build --release --quiet

# case name | sysbench arguments | what to read from the report
cases=(
  "cpu prime 10000, 1 thread|--threads=1 --time=$TIME cpu --cpu-max-prime=10000 run|eps"
  "cpu prime 10000, 2 threads|--threads=2 --time=$TIME cpu --cpu-max-prime=10000 run|eps"
  "cpu prime 20000, 1 thread|--threads=1 --time=$TIME cpu --cpu-max-prime=20000 run|eps"
  "cpu prime 20000, 2 threads|--threads=2 --time=$TIME cpu --cpu-max-prime=20000 run|eps"
  "memory 8K rnd read|--time=$TIME memory --memory-block-size=8K --memory-total-size=0 --memory-oper=read --memory-access-mode=rnd run|mib"
  "memory 8K seq write|--time=$TIME memory --memory-block-size=8K --memory-total-size=0 --memory-oper=write run|mib"
  "memory 1M seq write|--time=$TIME memory --memory-block-size=1M --memory-total-size=0 --memory-oper=write run|mib"
)

# shellcheck source=bench/lib.sh
. bench/lib.sh

extract_eps="awk '/events per second:/ {print \$4}'"
extract_mib="sed -n 's/.*MiB transferred (\\([0-9.]*\\) MiB\\/sec).*/\\1/p'"

printf '%-36s %12s %12s %8s\n' "case" "hostbench" "sysbench" "ratio"
for c in "${cases[@]}"; do
  IFS='|' read -r name args what <<<"$c"
  [[ $name =~ $CASES ]] || continue
  extract=$extract_eps
  [ "$what" = mib ] && extract=$extract_mib
  # shellcheck disable=SC2086
  compare_case "$name" "$extract" "$HOSTBENCH" sysbench $args -- sysbench $args
done

#!/usr/bin/env bash
# hostbench's UnixBench-style tests against UnixBench 5.1.3's own programs, side by
# side on this machine: for each index test, the two alternate RUNS times (one copy,
# SECONDS per run, shell tests SHELL_SECONDS, Whetstone its fixed 10 s), rates are
# computed as UnixBench's Run computes them (lps = COUNT / elapsed of the program,
# lpm per 60 s of elapsed, KBps and MWIPS as printed), and the medians' ratio
# (hostbench / UnixBench) is printed. The index ratio is the geometric mean of the
# per-test ratios (the index is a geometric mean of result/baseline).
# Targets: each test within 0.85-1.15, the index within 0.90-1.10.
#
# UnixBench is GPL: build it OUTSIDE this repository, e.g.
#   git clone https://github.com/kdlucas/byte-unixbench /work/byte-unixbench
#   (cd /work/byte-unixbench && git checkout v5.1.3)
#   cd /work/byte-unixbench/UnixBench && sed -i 's/^GRAPHIC_TESTS = defined/#&/' Makefile && make
#
#   UB=/work/byte-unixbench/UnixBench bench/unixbench-ratio.sh
#   RUNS=5 SECONDS_PER_RUN=10 TESTS='dhry2reg pipe' bench/unixbench-ratio.sh
set -euo pipefail
cd "$(dirname "$0")/.."
UB=${UB:-/work/byte-unixbench/UnixBench}
RUNS=${RUNS:-3}
S=${SECONDS_PER_RUN:-5}
SHELL_S=${SHELL_SECONDS:-10}
TESTS=${TESTS:-dhry2reg whetstone-double execl fstime fsbuffer fsdisk pipe context1 spawn syscall shell1 shell8}
HOSTBENCH=${HOSTBENCH:-target/release/hostbench}
export HOSTBENCH_NO_SAVE=1   # benchmark runs are not results to keep
[ -x "$UB/pgms/dhry2reg" ] || { echo "UnixBench's programs are not built under $UB (see the comment at the top)" >&2; exit 2; }
[ -x "$HOSTBENCH" ] && [ -x "$(dirname "$HOSTBENCH")/hostbench-execl" ] || cargo build --release --quiet

median() { sort -g | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
now() { date +%s.%N; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One run of UnixBench's program for test $1; prints its rate as Run computes it.
unixbench_rate() {
  local t=$1 secs=$S cmd
  case $t in
    dhry2reg|pipe|context1|spawn|syscall|execl) cmd=("$UB/pgms/$t" "$secs") ;;
    whetstone-double) cmd=("$UB/pgms/whetstone-double") ;;
    fstime) cmd=("$UB/pgms/fstime" -c -t "$secs" -d "$work" -b 1024 -m 2000) ;;
    fsbuffer) cmd=("$UB/pgms/fstime" -c -t "$secs" -d "$work" -b 256 -m 500) ;;
    fsdisk) cmd=("$UB/pgms/fstime" -c -t "$secs" -d "$work" -b 4096 -m 8000) ;;
    shell1|shell8) cmd=("$UB/pgms/looper" "$SHELL_S" "$UB/pgms/multi.sh" "${t#shell}") ;;
  esac
  local start end out
  start=$(now)
  out=$(cd "$UB/testdir" && LANG=en_US.utf8 UB_BINDIR="$UB/pgms" "${cmd[@]}" 2>&1 >/dev/null </dev/null)
  end=$(now)
  awk -v out="$out" -v el="$(echo "$end - $start" | bc -l)" 'BEGIN {
    n = split(out, lines, "\n"); count = ""; 
    for (i = 1; i <= n; i++) if (lines[i] ~ /^COUNT\|/) { split(lines[i], f, "|"); count = f[2]; base = f[3] }
    if (count == "") { print "NaN"; exit }
    if (base > 0) printf "%.3f\n", count / (el / base); else printf "%.3f\n", count }'
}

# One run of hostbench's test $1 (quick mode only shortens its duration and the
# file test's warm-up; the rate is computed the same way as Run's).
hostbench_rate() {
  local t=$1 secs=$S
  case $t in
    whetstone-double) secs=10 ;;
    shell1|shell8) secs=$SHELL_S ;;
    fstime|fsbuffer|fsdisk)
      # The program itself, with UnixBench's settling pauses and 2-s warm-up phases
      # (quick mode shortens those); KBps is the program's own rate, as in Run.
      "$HOSTBENCH" __unixbench-program "$t" "seconds=$secs" quick=0 "dir=$work" 2>&1 >/dev/null |
        awk -F'|' '/^COUNT/ {c = $2} END {print c}'
      return ;;
  esac
  "$HOSTBENCH" index --quick --time "$secs" --iterations 1 --copies 1 --tests "$t" --dir "$work" --json |
    sed -n 's/^ *"result": \([0-9.e+]*\),$/\1/p' | head -1
}

printf '%-18s %14s %14s %8s\n' test hostbench unixbench ratio
ratios=()
for t in $TESTS; do
  a=() b=()
  for _ in $(seq "$RUNS"); do
    a+=("$(hostbench_rate "$t")")
    b+=("$(unixbench_rate "$t")")
  done
  ma=$(printf '%s\n' "${a[@]}" | median)
  mb=$(printf '%s\n' "${b[@]}" | median)
  r=$(awk -v x="$ma" -v y="$mb" 'BEGIN {printf "%.3f", x / y}')
  ratios+=("$r")
  printf '%-18s %14.1f %14.1f %8s   (hostbench: %s; unixbench: %s)\n' "$t" "$ma" "$mb" "$r" "${a[*]}" "${b[*]}"
done
printf '%-18s %14s %14s %8s\n' "index (geo mean)" "" "" \
  "$(printf '%s\n' "${ratios[@]}" | awk '{s += log($1)} END {printf "%.3f", exp(s / NR)}')"

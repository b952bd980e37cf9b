#!/usr/bin/env bash
# hostbench's redis-benchmark personality against Debian's redis-benchmark, side by
# side on one redis-server of the script's own (loopback, ephemeral port, stopped at
# the end). Each case runs the two alternately RUNS times; prints medians of
# requests/s (SET and GET, from --csv) and of client CPU time per request (user +
# system of the client process, from the OS's accounting via /usr/bin/time), and the
# ratios hostbench / redis-benchmark.
# Targets: rps ratio >= 1.0, CPU-per-request ratio <= 0.8.
# The cluster case runs both with --cluster against a three-master Redis Cluster the
# script starts (loopback ports, files in a temporary directory, all stopped at the end).
#
#   bench/redis-ratio.sh                 # 7 alternating runs per case
#   RUNS=3 CASES='P16' bench/redis-ratio.sh
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-7}
HOSTBENCH=${HOSTBENCH:-target/release/hostbench}
CASES=${CASES:-.}
for t in redis-server redis-benchmark /usr/bin/time; do
  command -v "$t" >/dev/null || { echo "$t is missing (apt-get install redis-server redis-tools time)" >&2; exit 2; }
done
[ -x "$HOSTBENCH" ] || cargo build --release --quiet
ulimit -n 4096 2>/dev/null || true

# shellcheck source=bench/lib.sh
. bench/lib.sh

freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port=$(freeport)
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --maxclients 4000 \
  --daemonize no >/dev/null 2>&1 &
server=$!
cluster_pids=() cluster_ports=() cluster_dir=
cleanup() {
  kill "$server" "${cluster_pids[@]}" 2>/dev/null || true
  wait 2>/dev/null || true
  [ -z "$cluster_dir" ] || rm -rf "$cluster_dir"
}
trap cleanup EXIT
for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done

# start_cluster: three masters (port + cluster-bus port each), slots spread by redis-cli.
start_cluster() {
  cluster_dir=$(mktemp -d)
  for _ in 1 2 3; do
    local p b
    p=$(freeport) b=$(freeport)
    redis-server --port "$p" --cluster-port "$b" --cluster-enabled yes \
      --cluster-config-file "nodes-$p.conf" --dir "$cluster_dir" --bind 127.0.0.1 \
      --save '' --appendonly no --maxclients 4000 --daemonize no >/dev/null 2>&1 &
    cluster_pids+=($!) cluster_ports+=("$p")
  done
  for p in "${cluster_ports[@]}"; do
    for _ in $(seq 100); do redis-cli -p "$p" ping >/dev/null 2>&1 && break; sleep 0.05; done
  done
  redis-cli --cluster create "${cluster_ports[@]/#/127.0.0.1:}" --cluster-replicas 0 \
    --cluster-yes >/dev/null </dev/null
  for p in "${cluster_ports[@]}"; do
    for _ in $(seq 200); do
      redis-cli -p "$p" cluster info | grep -q cluster_state:ok && break
      sleep 0.1
    done
  done
}

cases=(
  "c50 n200k|-c 50 -n 200000 -t get,set"
  "c50 n200k P16|-c 50 -n 200000 -t get,set -P 16"
  "c50 n200k threads2|-c 50 -n 200000 -t get,set --threads 2"
  "c1000 n300k (seed 004)|-c 1000 -n 300000 -t get,set"
  "cluster3 c50 n200k|--cluster -c 50 -n 200000 -t get,set"
)

# run TOOL ARGS...: prints "set_rps get_rps cpu_us_per_request"
run() {
  local out cpu requests
  out=$( { /usr/bin/time -f 'CPU %U %S' "$@" -p "$target" --csv; } 2>&1 )
  requests=$(printf '%s\n' "$@" | awk 'prev=="-n" {print $1} {prev=$1}')
  cpu=$(awk '/^CPU/ {print ($2+$3)}' <<<"$out")
  awk -F'"' -v cpu="$cpu" -v n="$requests" '
    $2=="SET" {s=$4} $2=="GET" {g=$4}
    END {printf "%s %s %.3f\n", s, g, cpu*1e6/(2*n)}' <<<"$out"
}

printf '%-26s %-8s %12s %12s %8s\n' "case" "metric" "hostbench" "peer" "ratio"
for c in "${cases[@]}"; do
  IFS='|' read -r name args <<<"$c"
  [[ $name =~ $CASES ]] || continue
  read -ra a <<<"$args"
  target=$port
  if [[ $args == *--cluster* ]]; then
    [ ${#cluster_ports[@]} -gt 0 ] || start_cluster
    target=${cluster_ports[0]}
  fi
  ours=() theirs=()
  for _ in $(seq "$RUNS"); do
    ours+=("$(run "$HOSTBENCH" redis-benchmark "${a[@]}")")
    theirs+=("$(run redis-benchmark "${a[@]}")")
  done
  for col in 1 2 3; do
    label=$(sed -n "${col}p" <<<$'SET rps\nGET rps\nCPU us/req')
    mo=$(printf '%s\n' "${ours[@]}" | awk -v c=$col '{print $c}' | median)
    mp=$(printf '%s\n' "${theirs[@]}" | awk -v c=$col '{print $c}' | median)
    printf '%-26s %-8s %12.2f %12.2f %8.3f\n' "$name" "$label" "$mo" "$mp" \
      "$(awk -v x="$mo" -v y="$mp" 'BEGIN {print x/y}')"
  done
done

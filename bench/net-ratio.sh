#!/usr/bin/env bash
# Network on loopback, hostbench side by side with Debian's peers: each case runs the
# two alternately RUNS times and prints the medians and their ratio (hostbench / peer).
#
#   throughput (receiver, Gbit/s): hostbench's client and server pair against
#     iperf3's pair, -P 1 and -P 4, both the native `hostbench net TCP_STREAM` and the
#     iperf3 personality. Target: ratio >= 1.0.
#   request/response (transactions/s, 64-byte messages, one in flight): hostbench
#     `net TCP_RR`/`UDP_RR` against qperf tcp_lat/udp_lat and sockperf ping-pong
#     (both report one-way latency = RTT/2, so their rate is 1 / (2 * latency)).
#     Target: ratio >= 1.0.
#
#   bench/net-ratio.sh                 # 5 alternating runs of 3 s
#   RUNS=9 TIME=5 bench/net-ratio.sh
#   CASES='RR' bench/net-ratio.sh      # only the cases whose name matches
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
TIME=${TIME:-3}
HOSTBENCH=${HOSTBENCH:-target/release/hostbench}
CASES=${CASES:-.}
for tool in iperf3 qperf sockperf; do
  command -v $tool >/dev/null || { echo "$tool is not installed (apt-get install iperf3 qperf sockperf)" >&2; exit 2; }
done
[ -x "$HOSTBENCH" ] || cargo build --release --quiet

# Servers on ports of our own; all stopped on exit.
base=$((20000 + $$ % 10000))
NET=$base IP3_OURS=$((base + 1)) IP3_PEER=$((base + 2)) QPERF=$((base + 3)) SP_TCP=$((base + 4)) SP_UDP=$((base + 5))
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
"$HOSTBENCH" net serve -p $NET --bind 127.0.0.1 2>/dev/null & pids+=($!)
"$HOSTBENCH" iperf3 -s -p $IP3_OURS >/dev/null 2>&1 & pids+=($!)
iperf3 -s -p $IP3_PEER >/dev/null 2>&1 & pids+=($!)
qperf -lp $QPERF >/dev/null 2>&1 & pids+=($!)
sockperf sr --tcp -i 127.0.0.1 -p $SP_TCP >/dev/null 2>&1 & pids+=($!)
sockperf sr -i 127.0.0.1 -p $SP_UDP >/dev/null 2>&1 & pids+=($!)
sleep 1

# shellcheck source=bench/lib.sh
. bench/lib.sh

# Readers: each prints one number from a report on stdin.
net_gbps="python3 -c 'import json,sys; j=json.load(sys.stdin); print([m[\"value\"] for m in j[\"metrics\"] if m[\"name\"]==\"throughput\"][0]*8/1e9)'"
net_tps="python3 -c 'import json,sys; j=json.load(sys.stdin); print([m[\"value\"] for m in j[\"metrics\"] if m[\"name\"]==\"transactions_per_sec\"][0])'"
iperf_gbps="python3 -c 'import json,sys; print(json.load(sys.stdin)[\"end\"][\"sum_received\"][\"bits_per_second\"]/1e9)'"
qperf_tps="awk '/latency/ {v=\$3; if (\$4==\"ms\") v*=1000; if (\$4==\"ns\") v/=1000; print 1e6/(2*v)}'"
sockperf_tps="sed -n 's/.*Summary: Latency is *\\([0-9.]*\\) usec.*/\\1/p' | awk '{print 1e6/(2*\$1)}'"

run_case() {
  local name=$1
  shift
  [[ $name =~ $CASES ]] || return 0
  compare_readers "$name" "$@"
}

printf '%-36s %12s %12s %8s\n' "case" "hostbench" "peer" "ratio"
for p in 1 4; do
  run_case "TCP_STREAM -P $p vs iperf3 (Gbit/s)" "$net_gbps" "$iperf_gbps" \
    "$HOSTBENCH" net TCP_STREAM 127.0.0.1 -p $NET -t $TIME -P $p --json -- \
    iperf3 -c 127.0.0.1 -p $IP3_PEER -t $TIME -P $p -J
  run_case "iperf3 personality -P $p (Gbit/s)" "$iperf_gbps" "$iperf_gbps" \
    "$HOSTBENCH" iperf3 -c 127.0.0.1 -p $IP3_OURS -t $TIME -P $p -J -- \
    iperf3 -c 127.0.0.1 -p $IP3_PEER -t $TIME -P $p -J
done
run_case "TCP_RR 64B vs qperf tcp_lat (tr/s)" "$net_tps" "$qperf_tps" \
  "$HOSTBENCH" net TCP_RR 127.0.0.1 -p $NET -t $TIME --request-size 64 --response-size 64 --json -- \
  qperf -lp $QPERF 127.0.0.1 -t $TIME -m 64 tcp_lat
run_case "TCP_RR 64B vs sockperf tcp (tr/s)" "$net_tps" "$sockperf_tps" \
  "$HOSTBENCH" net TCP_RR 127.0.0.1 -p $NET -t $TIME --request-size 64 --response-size 64 --json -- \
  sockperf ping-pong --tcp -i 127.0.0.1 -p $SP_TCP -t $TIME -m 64
run_case "UDP_RR 64B vs qperf udp_lat (tr/s)" "$net_tps" "$qperf_tps" \
  "$HOSTBENCH" net UDP_RR 127.0.0.1 -p $NET -t $TIME --request-size 64 --response-size 64 --json -- \
  qperf -lp $QPERF 127.0.0.1 -t $TIME -m 64 udp_lat
run_case "UDP_RR 64B vs sockperf udp (tr/s)" "$net_tps" "$sockperf_tps" \
  "$HOSTBENCH" net UDP_RR 127.0.0.1 -p $NET -t $TIME --request-size 64 --response-size 64 --json -- \
  sockperf ping-pong -i 127.0.0.1 -p $SP_UDP -t $TIME -m 64

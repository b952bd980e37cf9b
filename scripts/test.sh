#!/usr/bin/env bash
# Runs hostbench's tests, first installing the peer tools they compare against
# (Debian's sysbench, fio, redis-server, redis-tools, iperf3, iproute2, qperf, sockperf,
# chromium) when they are missing. Needs root or sudo for the install.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v sysbench >/dev/null || need+=(sysbench)
command -v fio >/dev/null || need+=(fio)
command -v redis-server >/dev/null || need+=(redis-server)
command -v redis-benchmark >/dev/null || need+=(redis-tools)
# Network: iperf3 for the wire-compatibility tests (both directions); iproute2 for the
# namespace truth tests (ip, tc); qperf and sockperf for bench/net-ratio.sh.
command -v iperf3 >/dev/null || need+=(iperf3)
command -v tc >/dev/null || need+=(iproute2)
command -v qperf >/dev/null || need+=(qperf)
command -v sockperf >/dev/null || need+=(sockperf)
# Reports: headless Chromium draws an HTML report for tests/report.rs.
command -v chromium >/dev/null || need+=(chromium)
# OpenMetrics: tests/openmetrics.rs also runs promtool (Debian: prometheus) when it is
# installed; not installed here, since the package brings daemons a test run must not start.
if [ ${#need[@]} -gt 0 ]; then
  echo "installing peers for the tests: ${need[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi

cargo test --release "$@"

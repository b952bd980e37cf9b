#!/usr/bin/env bash
# Runs hostbench's tests, first installing the peer tools they compare against
# (Debian's sysbench, fio, redis-server, redis-tools, iperf3, iproute2, qperf, sockperf,
# chromium, prometheus for promtool) when they are missing. Needs root or sudo for the
# install. With HOSTBENCH_STRICT=1 (CI) a test whose requirement is missing fails
# instead of skipping.
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
# OpenMetrics: tests/openmetrics.rs checks the text with promtool (Debian: prometheus,
# installed without its recommends, which would bring node-exporter, another daemon).
bare=()
command -v promtool >/dev/null || bare+=(prometheus)
# Block devices to refuse (tests/dd_compat.rs, fio_compat.rs) are loop devices of the
# tests' own (losetup: mount); local times are checked in zones from tzdata.
command -v losetup >/dev/null || need+=(mount)
[ -e /usr/share/zoneinfo/Asia/Kolkata ] || need+=(tzdata)
if [ $((${#need[@]} + ${#bare[@]})) -gt 0 ]; then
  echo "installing peers for the tests: ${need[*]} ${bare[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  # redis-server and prometheus are daemons whose packages start them on install; a
  # test run must start none. invoke-rc.d and deb-systemd-invoke ask policy-rc.d
  # first (this project's machines have one that forbids every start): where there
  # is none, one that forbids is in place for the install only.
  policy=/usr/sbin/policy-rc.d
  ours=""
  if [ ! -e "$policy" ]; then
    ours=1
    trap '$sudo rm -f "$policy"' EXIT
    printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
    $sudo chmod 755 "$policy"
  fi
  $sudo apt-get update -qq
  install="$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq"
  [ ${#need[@]} -eq 0 ] || $install "${need[@]}" >/dev/null
  [ ${#bare[@]} -eq 0 ] || $install --no-install-recommends "${bare[@]}" >/dev/null
  if [ -n "$ours" ]; then
    $sudo rm -f "$policy"
    trap - EXIT
  fi
fi

cargo test --release "$@"

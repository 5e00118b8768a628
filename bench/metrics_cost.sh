#!/bin/bash
# The cost of a worker's Prometheus metrics on its hot path: builds
# bench/metrics_cost.cc and runs it; prints markdown.
#
#   bash bench/metrics_cost.sh
#
# Env: BUILD_DIR (default build), CALLS, PEERS, KINDS.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
BUILD_DIR=${BUILD_DIR:-$root/build}
cmake --build "$BUILD_DIR" --target shoal_metrics_cost > /dev/null
echo "Machine: $(nproc) cores; $(date -u +%Y-%m-%d); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
"$BUILD_DIR/shoal_metrics_cost" --calls "${CALLS:-5000000}" \
  --peers "${PEERS:-32}" --kinds "${KINDS:-8}"

#!/bin/bash
# The cost of a worker's Prometheus metrics on its hot path: builds
# bench/metrics_cost.cc and runs it; prints markdown (bash bench/run_all.sh
# metrics-cost writes it into docs/BENCHMARKS.md).
#
#   bash bench/metrics_cost.sh
#
# Env: BUILD_DIR (default build), CALLS, PEERS, KINDS.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
BUILD_DIR=${BUILD_DIR:-$root/build}
cmake --build "$BUILD_DIR" --target shoal_metrics_cost > /dev/null
cat <<'TXT'
`bench/metrics_cost.cc`: a `WorkerMetrics` with its peers and task kinds;
millions of calls of each handle the task loop and the senders touch, first
alone, then while a second thread scrapes the registry without pause (the
worst case: Prometheus scrapes every few seconds); then the time of one
scrape.

TXT
out=$("$BUILD_DIR/shoal_metrics_cost" --calls "${CALLS:-5000000}" \
  --peers "${PEERS:-32}" --kinds "${KINDS:-8}")
printf '%s\n\n' "$out"
python3 - "$out" <<'PY'
import re, sys
t = sys.argv[1]
obs = re.search(r"Observe` \(a task run\) \| ([\d.]+) \| ([\d.]+)", t)
add = re.search(r"Increment` \(a message sent or received\) \| ([\d.]+) \| ([\d.]+)", t)
per_task = float(obs.group(1)) + float(add.group(1))
print(f"Reading: a task run costs one observation and one counter add, {per_task:.0f} ns"
      f" ({float(obs.group(2)) + float(add.group(2)):.0f} ns under a scraper that never"
      " pauses); a message one add. The smallest task of the zoo's models takes tens"
      " of microseconds (LeNet-5's whole forward pass is about 0.04 ms on one thread),"
      " so the metrics add well under 1 % to it, and nothing to the worker's lock:"
      " the handles are resolved at deploy time and the gauges read once per scrape.")
PY

#!/bin/bash
# Planner + simulator at scale (issue 7: a 100-layer model on 1000 simulated
# devices plans and simulates in under 10 s): builds bench/sim_scale.cc and
# runs it; prints markdown.
#
#   bash bench/sim_scale.sh
#   LAYERS=100 DEVICES=1000 STRATEGIES=lip,fuse,data,auto bash bench/sim_scale.sh
#
# Env: BUILD_DIR (default build), LAYERS, DEVICES, REQUESTS, STRATEGIES.
# lop/channel/spatial plans send every device's slice to every other
# device: N^2 transfers per layer (10^8 at N = 1000), so they are run at
# 100 devices (SMALL_DEVICES) instead.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
BUILD_DIR=${BUILD_DIR:-$root/build}
LAYERS=${LAYERS:-100}
DEVICES=${DEVICES:-1000}
REQUESTS=${REQUESTS:-20}
STRATEGIES=${STRATEGIES:-lip,filter,fuse,data,auto}
SMALL_DEVICES=${SMALL_DEVICES:-100}
SMALL_STRATEGIES=${SMALL_STRATEGIES:-pipeline,lop}
cmake --build "$BUILD_DIR" --target shoal_sim_scale > /dev/null
echo "Machine: $(nproc) cores; $(date -u +%Y-%m-%d); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
"$BUILD_DIR/shoal_sim_scale" --layers "$LAYERS" --devices "$DEVICES" \
  --requests "$REQUESTS" --strategies "$STRATEGIES" || true
echo
"$BUILD_DIR/shoal_sim_scale" --layers "$LAYERS" --devices "$SMALL_DEVICES" \
  --requests "$REQUESTS" --strategies "$SMALL_STRATEGIES" || true

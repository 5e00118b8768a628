#!/bin/bash
# Planner + simulator at scale (a 100-layer model on 1000 simulated devices
# plans and simulates in under 10 s): builds bench/sim_scale.cc and runs
# it; prints markdown (bash bench/run_all.sh sim-scale writes it into
# docs/BENCHMARKS.md).
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
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat <<TXT
How long planning and simulating take at scale: \`bench/sim_scale.cc\` builds a
chain of $LAYERS fully connected layers of 2048 features with the zoo
builder and devices in code (speeds 1, 2 and 4, Wi-Fi or wired links, 1 GiB
each), plans each strategy with \`MakePlan\` and simulates $REQUESTS requests,
4 in flight. \`lop\` and \`channel\` send every device's slice to every other
device, N² transfers per layer (10⁸ for the model at 1 000 devices, more
than a plan in memory holds), so they and \`pipeline\` (which needs as many
layers as devices) run at $SMALL_DEVICES devices.

TXT
"$BUILD_DIR/shoal_sim_scale" --layers "$LAYERS" --devices "$DEVICES" \
  --requests "$REQUESTS" --strategies "$STRATEGIES" 2> "$work/err" | tee "$work/big"
grep -m1 "^auto" "$work/err" | sed 's/^/\n/' || true
echo
"$BUILD_DIR/shoal_sim_scale" --layers "$LAYERS" --devices "$SMALL_DEVICES" \
  --requests "$REQUESTS" --strategies "$SMALL_STRATEGIES" 2> /dev/null
echo
python3 - "$work/big" "$DEVICES" <<'PY'
import sys
rows = [[c.strip() for c in l.split("|")[1:-1]] for l in open(sys.argv[1]) if l.startswith("| ") and not l.startswith("| strategy")]
fast = [r[0] for r in rows if float(r[5]) < 10]
slow = [f"{r[0]} ({float(r[5]):.1f} s)" for r in rows if float(r[5]) >= 10]
print(f"Reading: at {sys.argv[2]} devices, plan + simulate takes under 10 s for "
      f"{', '.join(fast) or 'none'}" + (f"; over: {', '.join(slow)}" if slow else "") + "."
      " The simulator's work is linear in requests x (tasks + transfers): a heap"
      " of events, per-device ready heaps and FIFOs. auto's MILP has one"
      " whole-placement variable per class of devices the latency model cannot"
      " tell apart (docs/planner.md), which keeps it small when many devices are"
      " equal.")
PY

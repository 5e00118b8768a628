#!/bin/bash
# The engine's backends side by side in `shoal infer`, batch 1: XNNPACK
# (the boards' engine, here on amd64's SSE/AVX kernels) against oneDNN (the
# x86 product) and the reference kernels (the oracle), each model timed in
# R rounds that interleave the backends, at 1 thread (a Pi-class core) and
# at all cores. A side's figure is its best median over the rounds, so a
# burst of load from another process hits every side alike. Prints
# markdown. amd64 is not the target: what the boards get from XNNPACK is
# measured on boards (docs/engine.md says why XNNPACK).
#
#   bench/xnnpack_engine.sh [--repeat N] [--rounds R] [--threads "1 2"]
#                           [--models "lenet5 resnet18 ..."]
#
# Environment: SHOAL (default build/shoal), PYTHON (default /usr/bin/python3).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
SHOAL=${SHOAL:-$root/build/shoal}
PYTHON=${PYTHON:-/usr/bin/python3}
repeat=10
rounds=3
threads="1 $(nproc)"
models="lenet5 cifarnet resnet18 mobilenet-v2"
while [ $# -gt 0 ]; do
  case "$1" in
    --repeat) repeat=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    *) echo "usage: $0 [--repeat N] [--rounds R] [--threads LIST] [--models LIST]" >&2; exit 2 ;;
  esac
done
[ -x "$SHOAL" ] || { echo "no shoal binary at $SHOAL (make build)" >&2; exit 1; }

json() { "$PYTHON" -c "import json,sys; j=json.load(sys.stdin); print($1)"; }
# The reference kernels are plain loops: fewer runs of them.
runs() { [ "$1" = reference ] && echo $(( (repeat + 4) / 5 )) || echo "$repeat"; }
median() {  # MODEL BACKEND THREADS
  "$SHOAL" infer "$1" --backend "$2" --threads "$3" --input-seed 1 \
    --repeat "$(runs "$2")" --json | json 'j["latency_ms"]["median"]'
}
# Share of the time the XNNPACK backend spends in XNNPACK's kernels (the
# rest: reference fallbacks and layout reorders), from --profile.
xnn_share() {  # MODEL
  "$SHOAL" infer "$1" --backend xnnpack --threads 1 --input-seed 1 \
    --repeat 3 --profile --json |
    json 'round(100 * sum(o["ms"] for o in j["profile"]["ops"] if o["kernel"].startswith("xnnpack")) / j["profile"]["total_ms"], 1)'
}

echo "Batch 1, \`shoal infer --repeat $repeat\` (reference: $(runs reference)"
echo "runs), best median of $rounds interleaved rounds, ms; ratios are the"
echo "other backend's time over XNNPACK's (above 1: XNNPACK is faster)."
echo "\"in XNNPACK\" is the share of the XNNPACK backend's time (1 thread,"
echo "--profile) spent in XNNPACK's kernels rather than in reference"
echo "fallbacks or layout reorders."
echo
echo "| model | threads | xnnpack ms | onednn ms | reference ms | onednn / xnnpack | reference / xnnpack | in XNNPACK |"
echo "|---|---|---|---|---|---|---|---|"
for m in $models; do
  share=$(xnn_share "$m")
  for t in $threads; do
    declare -A best=()
    for ((r = 0; r < rounds; r++)); do
      for b in xnnpack onednn reference; do
        v=$(median "$m" "$b" "$t")
        if [ -z "${best[$b]:-}" ] || "$PYTHON" -c "import sys; sys.exit(0 if $v < ${best[$b]} else 1)"; then
          best[$b]=$v
        fi
      done
    done
    "$PYTHON" - "$m" "$t" "${best[xnnpack]}" "${best[onednn]}" "${best[reference]}" "$share" <<'PY'
import sys
m, t, x, d, r, share = sys.argv[1], sys.argv[2], *map(float, sys.argv[3:6]), sys.argv[6]
print(f"| {m} | {t} | {x:.2f} | {d:.2f} | {r:.1f} | {d / x:.2f} | {r / x:.1f} | {share} % |")
PY
    unset best
  done
done
echo
echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')."

#!/bin/bash
# How many 1 GiB devices (Raspberry-Pi-3-like, examples/pi3-8.yaml's specs)
# each zoo model needs at least: the smallest N for which `shoal plan
# --strategy auto` finds a plan that fits the workers' memory rule
# (docs/cluster-format.md), and whether VGG16's `pipeline` and `spatial`
# plans fit examples/pi3-4.yaml. Planning only: no worker runs. Prints
# markdown (bash bench/run_all.sh min-devices writes it into
# docs/BENCHMARKS.md).
#
#   bash bench/min_devices.sh                    # ~5 min
#   MODELS="vgg16 alexnet" bash bench/min_devices.sh
#
# Env: BUILD_DIR (default build), MODELS, MAX_DEVICES (default 8).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
BUILD_DIR=${BUILD_DIR:-$root/build}
shoal=$BUILD_DIR/shoal
MODELS=${MODELS:-$("$shoal" zoo | awk 'NR > 1 { print $1 }')}
MAX_DEVICES=${MAX_DEVICES:-8}
work=$(mktemp -d /tmp/shoal-bench-mindev-XXXXXX)
trap 'rm -rf "$work"' EXIT

cluster() {  # N: N Pi-3-like devices of 1 GiB
  local i
  echo "devices:"
  for ((i = 0; i < $1; i++)); do
    echo "  - {name: pi$i, address: 127.0.0.1:$((7000 + i)), memory: 1GiB, cores: 4, speed: 1, link: {bandwidth: 62Mbit, latency: 9ms}}"
  done
}

echo "For each zoo model, the fewest Raspberry-Pi-3-like devices of 1 GiB for which \`shoal plan --strategy auto --time-limit 5\` finds a plan that fits the workers' memory rule (docs/cluster-format.md: each weight once, plus the largest weight while it is reordered, plus the peak activations). Planning only."
echo
multi=()
echo "| model | weights MiB | devices |"
echo "|---|---|---|"
for m in $MODELS; do
  w=$("$shoal" analyze "$m" --json | python3 -c 'import json,sys; print("%.1f" % (json.load(sys.stdin)["total"]["weight_bytes"] / 1048576))')
  found="more than $MAX_DEVICES"
  for ((n = 1; n <= MAX_DEVICES; n++)); do
    cluster "$n" > "$work/c.yaml"
    if "$shoal" plan "$m" --cluster "$work/c.yaml" --strategy auto --time-limit 5 > /dev/null 2>&1; then
      found=$n
      break
    fi
  done
  echo "| $m | $w | $found |"
  [ "$found" != 1 ] && multi+=("$m ($found)")
done
echo
echo "VGG16 on \`examples/pi3-4.yaml\`:"
echo
echo "| strategy | plan |"
echo "|---|---|"
for s in pipeline spatial; do
  if out=$("$shoal" plan vgg16 --cluster "$root/examples/pi3-4.yaml" --strategy "$s" 2>&1); then
    echo "| $s | fits |"
  else
    echo "| $s | refused: $(tail -1 <<< "$out" | sed 's/^shoal: error: //; s/|/\\|/g') |"
  fi
done
echo
if [ ${#multi[@]} -eq 0 ]; then
  echo "Reading: every zoo model fits one 1 GiB device whole; more devices are for speed, not for memory."
else
  echo "Reading: every zoo model fits one 1 GiB device whole except ${multi[*]}."
fi

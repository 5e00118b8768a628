#!/bin/bash
# Energy per inference of all devices, the LCP paper's Fig. 13 form: one
# emulated Raspberry Pi 3 against exact model-parallel plans and LCP splits
# on 4 and 8 of them (examples/pi3-N.yaml). Each device counts its idle
# power over the run, its extra power while computing and its bytes at the
# cluster file's per-byte costs (docs/energy.md); devices without a power
# block count as a Pi 3 (1.22 W idle, 3.95 W busy).
#
# Predicted by `shoal simulate` from the cluster's specs; with MEASURE=1
# also measured, `shoal bench` on emulated clusters brought up on ports from
# PORT_BASE (energy from the busy time and bytes the workers measured; the
# watts are the model's: nothing here reads a power meter).
#
#   bash bench/energy.sh
#   MODELS=alexnet MEASURE=1 REQUESTS=5 bash bench/energy.sh
#
# Env: BUILD_DIR (default build), MODELS (default "alexnet vgg16"),
# PLANS (default "1:pipeline 4:lop 4:auto 4:lcp 8:lop 8:auto 8:lcp"),
# REQUESTS (default 5), MEASURE (0), PORT_BASE (7700). Prints markdown.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
BUILD_DIR=${BUILD_DIR:-$root/build}
shoal=$BUILD_DIR/shoal
MODELS=${MODELS:-"alexnet vgg16"}
PLANS=${PLANS:-"1:pipeline 4:lop 4:auto 4:lcp 8:lop 8:auto 8:lcp"}
REQUESTS=${REQUESTS:-5}
MEASURE=${MEASURE:-0}
PORT_BASE=${PORT_BASE:-7700}
[ -x "$shoal" ] || { echo "no $shoal: build first (make build)" >&2; exit 1; }

. "$here/lib.sh"
bench_init energy "$PORT_BASE"

# cluster_for N: sets CLUSTER, a copy of examples/pi3-N.yaml (its first
# device for N = 1, with 2 GiB: VGG16 whole does not fit a 1 GiB worker).
cluster_for() {
  local src="$root/examples/pi3-$1.yaml" mem=""
  [ "$1" = 1 ] && { src="$root/examples/pi3-4.yaml"; mem=2GiB; }
  CLUSTER="$work/pi3-$1-$RANDOM.yaml"
  copy_cluster "$src" "$1" "$CLUSTER" "$mem"
}

# report JSON -> "latency_ms joules"
fields() {
  python3 -c 'import json, sys; j = json.load(sys.stdin); print("%.0f %.3f" % (j["latency_ms"]["median"], j["energy_j_per_inference"]))'
}

cat <<TXT
The LCP paper's Fig. 13 form: the energy of all devices per inference.
Each device counts as a Raspberry Pi 3 (1.22 W idle, 3.95 W with every
core busy, links free: [energy.md](energy.md) cites the measurement), so
these are the power model applied to two kinds of time: **predicted** by
\`shoal simulate\` from the cluster's specs$([ "$MEASURE" = 1 ] && echo ", and **measured** by \`shoal bench\`
on emulated Pi 3s (\`examples/pi3-N.yaml\`, calibrated; the busy time and
bytes the workers measured, over the wall time of $REQUESTS requests)"). No power
meter is involved. One device is the first Pi 3 with 2 GiB; every plan
takes the input as 8-bit pixels. "vs one device": the plan's energy over
one device's for the same model (below 1: less energy); LCP splits run a
narrower model ([lcp.md](lcp.md)).

TXT
head="| model | devices | plan | predicted ms | predicted J/inference | vs one device |"
sep="|---|---:|---|---:|---:|---:|"
if [ "$MEASURE" = 1 ]; then
  head="$head measured ms | measured J/inference | vs one device |"
  sep="$sep---:|---:|---:|"
fi
echo "$head"
echo "$sep"
declare -A one_sim one_meas
# ratio BASE X -> "X/BASE" as "0.42x", or "-" without a base
ratio() { python3 -c "print('%.2fx' % ($2 / $1))" 2> /dev/null || echo "-"; }
for m in $MODELS; do
  for entry in $PLANS; do
    n=${entry%%:*}; s=${entry#*:}
    cluster_for "$n"
    extra=(--image-input)
    label=$s
    if [ "$s" = lcp ]; then extra+=(--branches "$n"); label="LCP split$n"; fi
    p="$work/plan.json"
    if ! "$shoal" plan "$m" --cluster "$CLUSTER" --strategy "$s" "${extra[@]}" -o "$p" > /dev/null 2> "$work/err"; then
      echo "| $m | $n | $label | refused: $(tail -c 160 "$work/err" | tr '\n|' '  ') | | |"
      continue
    fi
    read -r sim_ms sim_j <<< "$("$shoal" simulate --plan "$p" --cluster "$CLUSTER" --requests "$REQUESTS" --json | fields)"
    [ "$n" = 1 ] && one_sim[$m]=$sim_j
    row="| $m | $n | $label | $sim_ms | $sim_j | $(ratio "${one_sim[$m]:-0}" "$sim_j") |"
    if [ "$MEASURE" = 1 ]; then
      cluster_up "$CLUSTER"
      if out=$("$shoal" bench --plan "$p" --cluster "$CLUSTER" --requests "$REQUESTS" --json --timeout-ms 300000 2> "$work/err"); then
        read -r ms j <<< "$(fields <<< "$out")"
        [ "$n" = 1 ] && one_meas[$m]=$j
        row="$row $ms | $j | $(ratio "${one_meas[$m]:-0}" "$j") |"
      else
        row="$row failed: $(tail -c 120 "$work/err" | tr '\n|' '  ') | | |"
      fi
      "$shoal" cluster down "$CLUSTER" > /dev/null
    fi
    echo "$row" | tee -a "$work/rows"
  done
done
echo
python3 - "$work/rows" "$MEASURE" <<'PY'
import sys
col = 9 if sys.argv[2] == "1" else 6  # the last "vs one device"
less, more = [], []
for line in open(sys.argv[1]):
    c = [x.strip() for x in line.split("|")[1:-1]]
    if len(c) < col or c[1] == "1" or not c[col - 1].endswith("x"):
        continue
    (less if float(c[col - 1][:-1]) < 1 else more).append(f"{c[0]} {c[2]} on {c[1]} ({c[col - 1]})")
which = "measured" if sys.argv[2] == "1" else "predicted"
print(f"Reading ({which}): less energy than one device: {', '.join(less) or 'none'}; "
      f"more: {', '.join(more) or 'none'}. An exact plan keeps every board powered"
      " for the whole request while it computes a share of the same work, so the"
      " idle power of N boards over the latency outweighs one board's busy power"
      " over a longer one; LCP's branches do a fraction of the original's work.")
PY

#!/bin/bash
# The collaborative-execution paper's Fig. 17 as shoal predicts it: AlexNet
# on 4 and 6 devices, VGG16 on 8 and 11, each planned by Procedure 1
# (`--strategy procedure1 --objective throughput`: step 1 splits the layers
# that alone would swap, step 2 balances the rest in stages), by a random
# assignment (`--strategy random`, the paper's baseline: step 1's splits
# kept, every other layer on a random device; the mean of SEEDS) and whole
# on one device (which pays the paging its memory cannot hold). Throughput
# with one request in flight per device and latency with one, both from
# `shoal simulate` on emulated pi3-collab boards (MEASURE=1: also measured
# on them). Prints markdown (bash bench/run_all.sh collab-fig17 writes
# it into docs/BENCHMARKS.md).
#
#   bash bench/collaborative_fig17.sh                 # under a minute
#   MEASURE=1 bash bench/collaborative_fig17.sh       # about 15 minutes
#   CASES="vgg16:11" SEEDS="1 2" bash bench/collaborative_fig17.sh
#
# Env: SHOAL (default $BUILD_DIR/shoal, BUILD_DIR default build), CASES
# (model:devices, default the paper's "alexnet:4 alexnet:6 vgg16:8
# vgg16:11"), SEEDS (random's --assignment-seed values, default "1 2 3 4 5"),
# MEASURE (1: also bring each cluster up, `shoal cluster up`, and measure
# Procedure 1, random with the first seed and, for models whose one device
# takes under MEASURE_ONE_S seconds per request (default 120), the one
# device with `shoal bench`: about 15 minutes; default 0).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
SHOAL=${SHOAL:-${BUILD_DIR:-$root/build}/shoal}
CASES=${CASES:-"alexnet:4 alexnet:6 vgg16:8 vgg16:11"}
SEEDS=${SEEDS:-"1 2 3 4 5"}
MEASURE=${MEASURE:-0}
MEASURE_ONE_S=${MEASURE_ONE_S:-120}
[ -x "$SHOAL" ] || { echo "no shoal binary at $SHOAL (make build)" >&2; exit 1; }
work=$(mktemp -d /tmp/shoal-bench-collab17-XXXXXX)
up=()  # clusters brought up, taken down on exit
cleanup() {
  local f
  for f in "${up[@]}"; do "$SHOAL" cluster down "$f" > /dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT
. "$here/collaborative_lib.sh"

nseeds=$(wc -w <<< "$SEEDS")
collab_cluster 1 "$work/c1.yaml"
# The same board with room for everything: the one device's time without
# paging, so that its swap can be told apart.
collab_cluster 1 "$work/roomy.yaml" 64GiB

# The paper's words for each model (its Fig. 17 gives no numbers in the
# text).
paper_says() {
  case $1 in
    alexnet) echo "around 2x over random (4 and 6 devices)" ;;
    vgg16) echo "up to 6x (8 and 11 devices; over what, not said)" ;;
    *) echo "-" ;;
  esac
}

# A over B, two decimals below 10, whole above.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf (a / b < 10 ? "%.2f" : "%.0f"), a / b }'; }

# What Procedure 1's plan balanced against what its busiest device carries
# (the plan and simulation of the call just made): step 2's slowest stage
# as it predicted it, and the simulated device with the most compute per
# request, with the part of it that step 1's split layers take.
p1_balance() {  # CASE
  python3 - "$1" "$work/plan.json" "$work/sim.json" <<'PY'
import json, re, sys
case, plan, sim = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
stages = [float(m.group(1)) for d in plan["decisions"]
          if "step 2" in d["reason"]
          for m in [re.search(r"predicted ([0-9.]+) ms per request", d["reason"])] if m]
split = {d["layer"] for d in plan["decisions"] if "step 1" in d["reason"]}
n = sim["requests"]
dev = max(sim["devices"], key=lambda d: d["busy_ms"])
busy = dev["busy_ms"] / n
mine = sum(t["compute_ms_median"] * t["runs"] for t in dev["tasks"]
           if t["name"].split("/")[0] in split) / n
print(case, max(stages) if stages else 0, dev["name"], busy, mine)
PY
}

echo "The collaborative-execution paper's Fig. 17 (inferences per second and"
echo "latency of AlexNet and VGG16 on its Raspberry Pi 3 cluster) as"
echo "\`shoal simulate\` predicts it on emulated \`pi3-collab\` boards: the tables"
echo "below are PREDICTIONS for boards modelled on the paper's (the plans"
echo "measured on emulated clusters follow, when run with MEASURE=1). The board's rate"
echo "(1.65 GMAC/s: TensorFlow on a Pi 3 as the LCP paper measured it) and its"
echo "swap model are estimates: a framework of ${COLLAB_RESIDENT_MIB} MiB, each weight once and the"
echo "largest layer $((COLLAB_LAYER_COPIES - 1)) times more, ${COLLAB_USABLE_MIB} MiB usable of 1 GiB, paging at ${COLLAB_SWAP_MIB_S} MiB/s"
echo "(src/cluster/swap.cc, chosen to agree with the paper's statements of"
echo "which layers swap). The LAN is the paper's: 94.1 Mbit/s, 0.4 ms."
echo
echo "Procedure 1: \`--strategy procedure1 --objective throughput\`. Random:"
echo "\`--strategy random\`, the mean of $nseeds assignment seeds ($SEEDS; range in"
echo "brackets), the layers step 1 splits kept split as the paper's"
echo "distributions all did. One device: the whole model on one board, paging."
echo "Throughput with one request in flight per device (20 per device"
echo "simulated), latency with one in flight. Ratios: throughput over"
echo "throughput, and the other's latency over Procedure 1's (above 1:"
echo "Procedure 1 is better)."
echo
# Procedure 1's choices in the plan just made: the layers step 1 split
# (how, over how many devices), how many stages step 2 made, and the
# layers it placed as split versions.
p1_choices() {  # CASE
  python3 - "$1" "$work/plan.json" <<'PY'
import json, re, sys
case, plan = sys.argv[1], json.load(open(sys.argv[2]))
step1, versions, stages = [], [], 0
for d in plan["decisions"]:
    r = d["reason"]
    m = re.search(r"step 1: its weights \(([0-9.]+) MiB\).*split \((\w+)\) over (\d+) devices", r)
    if m:
        step1.append("%s (%s MiB): %s over %s" % (d["layer"], m.group(1), m.group(2), m.group(3)))
    m = re.search(r"step 2: stage \d+ of (\d+) on \{([^}]*)\}( \(its split version, (\w+)\))?", r)
    if m:
        stages = int(m.group(1))
        if m.group(3):
            versions.append("%s: %s over %d" % (d["layer"], m.group(4), len(m.group(2).split(","))))
print("| %s | %s | %d | %s |" % (case, "; ".join(step1) or "none", stages,
                                 "; ".join(versions) or "none"))
PY
}

echo "| model | devices | Procedure 1 req/s | latency s | random req/s | latency s | one device req/s | latency s (swap s) | P1 / random: throughput | latency | P1 / one device: throughput | latency | the paper (text) |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
beaten=0 draws=0
summary=() balance=() choices=()
declare -A one_lat one_swap
models=()
for c in $CASES; do
  m=${c%%:*} n=${c##*:}
  collab_cluster "$n" "$work/c$n.yaml"
  if [ -z "${one_lat[$m]:-}" ]; then
    models+=("$m")
    read -r l _ <<< "$(predict "$m" "$work/c1.yaml" random 1)"
    read -r r _ <<< "$(predict "$m" "$work/roomy.yaml" random 1)"
    one_lat[$m]=$l
    one_swap[$m]=$(awk -v a="$l" -v b="$r" 'BEGIN { if (a == "-" || b == "-") print "-"; else printf "%.1f", (a - b) / 1000 }')
  fi
  read -r p1_lat _ <<< "$(predict "$m" "$work/c$n.yaml" procedure1 1 --objective throughput)"
  read -r _ p1_rps <<< "$(predict "$m" "$work/c$n.yaml" procedure1 "$n" --objective throughput)"
  [ "$p1_rps" != - ] && balance+=("$(p1_balance "$m/$n")")
  [ "$p1_rps" != - ] && choices+=("$(p1_choices "$m / $n")")
  rows=()
  for s in $SEEDS; do
    read -r l _ <<< "$(predict "$m" "$work/c$n.yaml" random 1 --assignment-seed "$s")"
    read -r _ t <<< "$(predict "$m" "$work/c$n.yaml" random "$n" --assignment-seed "$s")"
    rows+=("$l $t")
    draws=$((draws + 1))
    awk -v t="$t" -v p="$p1_rps" 'BEGIN { exit !(t != "-" && p != "-" && t > p) }' && beaten=$((beaten + 1))
  done
  read -r r_lat r_rps r_min r_max <<< "$(printf '%s\n' "${rows[@]}" | awk '
    $1 != "-" { l += $1; t += $2; k++; if (k == 1 || $2 < lo) lo = $2; if ($2 > hi) hi = $2 }
    END { if (k) print l / k, t / k, lo, hi; else print "- - - -" }')"
  o_lat=${one_lat[$m]}
  o_rps=$(awk -v l="$o_lat" 'BEGIN { if (l == "-") print "-"; else print 1000 / l }')
  thr_r=$(ratio "$p1_rps" "$r_rps") lat_r=$(ratio "$r_lat" "$p1_lat")
  thr_o=$(ratio "$p1_rps" "$o_rps") lat_o=$(ratio "$o_lat" "$p1_lat")
  awk -v m="$m" -v n="$n" -v pl="$p1_lat" -v pt="$p1_rps" -v rl="$r_lat" -v rt="$r_rps" \
      -v lo="$r_min" -v hi="$r_max" -v ol="$o_lat" -v ot="$o_rps" -v sw="${one_swap[$m]}" \
      -v a="$thr_r" -v b="$lat_r" -v c="$thr_o" -v d="$lat_o" -v p="$(paper_says "$m")" 'BEGIN {
    printf "| %s | %d | %.3f | %.2f | %.3f (%.3f-%.3f) | %.2f | %.4f | %.1f (%s) | %sx | %sx | %sx | %sx | %s |\n",
      m, n, pt, pl / 1000, rt, lo, hi, rl / 1000, ot, ol / 1000, sw, a, b, c, d, p }'
  summary+=("$m on $n: ${thr_r}x over random, ${thr_o}x over one device")
done
echo
echo "Procedure 1's choices (throughput): the layers step 1 split because"
echo "alone they would page (the paper: \"all of our distributions perform"
echo "output splitting for this layer\"), the stages step 2 made, and the"
echo "layers it placed as split versions."
echo
echo "| model / devices | step 1 splits | stages | split versions in step 2 |"
echo "|---|---|---:|---|"
printf '%s\n' "${choices[@]}"
echo
# One paragraph: the ratios, the random draws that beat Procedure 1, one
# device's paging, and where Procedure 1's busiest device carries more
# than the stages it balanced.
{
  printf 'Reading: Procedure 1'"'"'s predicted throughput: %s. ' "$(IFS=';'; echo "${summary[*]}" | sed 's/;/; /g')"
  printf 'Of the %d random assignments, %d are predicted faster than Procedure 1 on their cluster. ' "$draws" "$beaten"
  for m in "${models[@]}"; do
    awk -v m="$m" -v l="${one_lat[$m]}" -v s="${one_swap[$m]}" 'BEGIN {
      if (l != "-" && s != "-") printf "One device pays %.0f of its %.0f s for %s in paging. ", s, l / 1000, m }'
  done
  for b in "${balance[@]}"; do
    read -r cs stage dev busy mine <<< "$b"
    awk -v c="$cs" -v s="$stage" -v d="$dev" -v b="$busy" -v m="$mine" 'BEGIN {
      if (s > 0 && b > 1.05 * s)
        printf "On %s, Procedure 1 balanced its stages to %.0f ms at most, but its busiest device, %s, computes %.0f ms per request, %.0f ms of it its part of the layers step 1 split. ", c, s, d, b, m }'
  done
  echo
} | sed 's/ $//'

[ "$MEASURE" = 1 ] || exit 0

# Measured: the same plans on emulated clusters (`shoal cluster up`: each
# board a worker paced to the board's rate, its link shaped, paging held
# by the worker, `--swap-as`), beside simulate's prediction of each.
# measure CLUSTER N LABEL MODEL STRATEGY [PLAN FLAGS...]: one table row.
measure() {
  local cluster=$1 n=$2 label=$3 model=$4 strategy=$5
  shift 5
  local pl pt ml mt
  read -r pl _ <<< "$(predict "$model" "$cluster" "$strategy" 1 "$@")"
  read -r _ pt <<< "$(predict "$model" "$cluster" "$strategy" "$n" "$@")"
  [ "$pl" = - ] && return 0
  ml=$("$SHOAL" bench --plan "$work/plan.json" --cluster "$cluster" --requests 3 \
         --timeout-ms 600000 --json 2> /dev/null | python3 -c '
import json, sys
print(json.load(sys.stdin)["latency_ms"]["median"])' || echo -)
  if [ "$n" -gt 1 ]; then
    mt=$("$SHOAL" bench --plan "$work/plan.json" --cluster "$cluster" \
           --requests $((3 * n)) --concurrency "$n" --timeout-ms 600000 --json \
           2> /dev/null | python3 -c '
import json, sys
print(json.load(sys.stdin)["throughput_rps"])' || echo -)
  else
    mt=$(awk -v l="$ml" 'BEGIN { if (l == "-") print "-"; else print 1000 / l }')
  fi
  awk -v m="$model" -v n="$n" -v s="$label" -v pl="$pl" -v pt="$pt" -v ml="$ml" -v mt="$mt" 'BEGIN {
    if (ml == "-") { printf "| %s | %d | %s | %.2f | failed | %.3f | failed |\n", m, n, s, pl / 1000, pt; exit }
    printf "| %s | %d | %s | %.2f | %.2f (%+.0f %%) | %.3f | %.3f (%+.0f %%) |\n",
      m, n, s, pl / 1000, ml / 1000, 100 * (ml / pl - 1), pt, mt, 100 * (mt / pt - 1) }'
}

first_seed=${SEEDS%% *}
echo
echo "### Measured on emulated clusters"
echo
echo "The plans above run on clusters of emulated \`pi3-collab\` boards"
echo "(\`shoal cluster up\`: each board a worker paced to the board's rate, its"
echo "link shaped to the paper's LAN, the paging its deployment needs held by"
echo "the worker), measured with \`shoal bench\` beside \`shoal simulate\`'s"
echo "prediction of the same plan: latency, the median of 3 requests one at a"
echo "time; throughput with one request in flight per device. Random with"
echo "seed $first_seed; one device only where simulate predicts it under"
echo "${MEASURE_ONE_S} s a request."
echo
echo "| model | devices | plan | predicted latency s | measured s | predicted req/s | measured req/s |"
echo "|---|---:|---|---:|---:|---:|---:|"
errs=()
for m in "${models[@]}"; do
  l=${one_lat[$m]}
  awk -v l="$l" -v t="$MEASURE_ONE_S" 'BEGIN { exit !(l != "-" && l < 1000 * t) }' || continue
  "$SHOAL" cluster up "$work/c1.yaml" > /dev/null
  up+=("$work/c1.yaml")
  row=$(measure "$work/c1.yaml" 1 "one device" "$m" random)
  echo "$row"
  errs+=("$row")
  "$SHOAL" cluster down "$work/c1.yaml" > /dev/null
done
for c in $CASES; do
  m=${c%%:*} n=${c##*:}
  "$SHOAL" cluster up "$work/c$n.yaml" > /dev/null
  up+=("$work/c$n.yaml")
  for row in "$(measure "$work/c$n.yaml" "$n" "Procedure 1" "$m" procedure1 --objective throughput)" \
             "$(measure "$work/c$n.yaml" "$n" "random (seed $first_seed)" "$m" random --assignment-seed "$first_seed")"; do
    echo "$row"
    errs+=("$row")
  done
  "$SHOAL" cluster down "$work/c$n.yaml" > /dev/null
done
echo
printf '%s\n' "${errs[@]}" | python3 -c '
import re, statistics, sys
lines = sys.stdin.read().splitlines()
errs = [abs(int(e)) for line in lines for e in re.findall(r"\(([-+0-9]+) %\)", line)]
if not errs:
    print("Reading: nothing was measured.")
    sys.exit()
# Measured throughput of Procedure 1 over random, per cluster.
rps = {}
for line in lines:
    c = [x.strip() for x in line.strip("|").split("|")]
    if len(c) == 7 and c[6] != "failed":
        rps[(c[0], c[1], c[2].split(" (")[0])] = float(c[6].split()[0])
over = ["%s on %s %.2fx" % (m, n, rps[(m, n, "Procedure 1")] / rps[(m, n, "random")])
        for (m, n, s) in rps if s == "Procedure 1" and (m, n, "random") in rps]
print("Reading: measured against predicted, %d figures: median error %d %%, largest %d %%."
      % (len(errs), statistics.median_low(errs), max(errs))
      + (" Measured throughput of Procedure 1 over random: %s." % ", ".join(over) if over else ""))'

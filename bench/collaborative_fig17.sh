#!/bin/bash
# The collaborative-execution paper's Fig. 17 as shoal predicts it: AlexNet
# on 4 and 6 devices, VGG16 on 8 and 11, each planned by Procedure 1
# (`--strategy procedure1 --objective throughput`: step 1 splits the layers
# that alone would swap, step 2 balances the rest in stages), by a random
# assignment (`--strategy random`, the paper's baseline: step 1's splits
# kept, every other layer on a random device; the mean of SEEDS) and whole
# on one device (which pays the paging its memory cannot hold). Throughput
# with one request in flight per device and latency with one, both from
# `shoal simulate` on emulated pi3-collab boards. Predictions, not
# measurements. Prints markdown (bash bench/run_all.sh collab-fig17 writes
# it into docs/BENCHMARKS.md).
#
#   bash bench/collaborative_fig17.sh                 # under a minute
#   CASES="vgg16:11" SEEDS="1 2" bash bench/collaborative_fig17.sh
#
# Env: SHOAL (default $BUILD_DIR/shoal, BUILD_DIR default build), CASES
# (model:devices, default the paper's "alexnet:4 alexnet:6 vgg16:8
# vgg16:11"), SEEDS (random's --assignment-seed values, default "1 2 3 4 5").
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
SHOAL=${SHOAL:-${BUILD_DIR:-$root/build}/shoal}
CASES=${CASES:-"alexnet:4 alexnet:6 vgg16:8 vgg16:11"}
SEEDS=${SEEDS:-"1 2 3 4 5"}
[ -x "$SHOAL" ] || { echo "no shoal binary at $SHOAL (make build)" >&2; exit 1; }
work=$(mktemp -d /tmp/shoal-bench-collab17-XXXXXX)
trap 'rm -rf "$work"' EXIT
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
echo "\`shoal simulate\` predicts it on emulated \`pi3-collab\` boards: PREDICTIONS"
echo "for boards modelled on the paper's, not measurements. The board's rate"
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

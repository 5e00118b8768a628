#!/bin/bash
# The speed targets of the boards' comparison against one board running
# ncnn, as `shoal simulate` sees them: for each target, the plan `auto`
# makes on the cluster file's boards, its predicted median latency, and the
# bound no plan of the model on those boards can beat (sim/latency_bound.h:
# the larger of the model's compute spread over every board at its rate
# after the input device's link latency, and its heaviest chain of layers,
# each paying its step, its arithmetic spread over every board). A target below the bound is out of reach for any
# plan; one above it and below the prediction is missed by the planner.
# Nothing is run on workers: the measured figures are in the runtime
# sections (bench/runtime_clusters.sh); simulate's error against them is in
# the "Predicted against measured" sections.
#
# Then the mixed homes: for every model, `auto` against the fastest device
# alone, both predicted.
#
#   bash bench/targets.sh            (BUILD_DIR, default build)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
shoal=${BUILD_DIR:-$root/build}/shoal
MIXED_MODELS=${MIXED_MODELS:-"lenet5 cifarnet alexnet resnet18 resnet50 mobilenet-v1 mobilenet-v2 vgg16 xception yolov2"}
work=$(mktemp -d /tmp/shoal-targets-XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$root"
# one_device_cluster
. "$here/cluster_files.sh"

# cluster | model | ncnn on one board, ms (published) | speedup wanted
targets=(
  "pi3-8|vgg16|1902|3"
  "pi3-8|resnet18|272|1.5"
  "pi3-8|alexnet|159|1.3"
  "pi3-8-shared|vgg16|1902|2"
  "pi4-4|vgg16|547|3"
  "pi4-4|resnet50|263|2.5"
  "pi4-4|resnet18|123|2"
)

# The shared channel: pi3-8's boards on one 62 Mbit/s radio.
sed "1i network: {medium: shared, bandwidth: 62Mbit}" examples/pi3-8.yaml \
  > "$work/pi3-8-shared.yaml"
cluster_file() {
  if [[ -f "$work/$1.yaml" ]]; then echo "$work/$1.yaml"; else echo "examples/$1.yaml"; fi
}

# Plans `auto` for MODEL on CLUSTER and prints simulate's JSON (or nothing).
simulate_auto() {  # CLUSTER_FILE MODEL TAG
  local plan=$work/$3.json
  "$shoal" plan "$2" --cluster "$1" --strategy auto -o "$plan" \
    > "$work/$3.plan.log" 2>&1 || return 1
  "$shoal" simulate --plan "$plan" --cluster "$1" --requests 5 --json \
    2> "$work/$3.sim.log"
}

echo "Every target of a cluster against one board running ncnn (its published"
echo "time over the speedup wanted), the plan \`shoal plan --strategy auto\`"
echo "makes on the cluster file's boards (images as 8-bit pixels, the"
echo "default), the median \`shoal simulate\` predicts for it, and the bound no"
echo "plan beats on those boards. Predicted, not measured: the measured"
echo "latencies are in the runtime sections above, simulate's error against"
echo "them in \"Predicted against measured\"."
echo
echo "| cluster | model | target ms | auto, predicted ms | bound ms | what stands in the way |"
echo "|---|---|---:|---:|---:|---|"
reach=0 missed=0 out=0
for t in "${targets[@]}"; do
  IFS='|' read -r c m ncnn speedup <<< "$t"
  target=$(awk -v n="$ncnn" -v s="$speedup" 'BEGIN { printf "%.0f", n / s }')
  json=$(simulate_auto "$(cluster_file "$c")" "$m" "$c-$m") || json=""
  if [[ -z $json ]]; then
    why=$(tail -1 "$work/$c-$m.plan.log" "$work/$c-$m.sim.log" 2> /dev/null | tr '|' '/' | tail -1)
    echo "| $c | $m | $target | - | - | no plan: $why |"
    continue
  fi
  read -r pred bound <<< "$(python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d["latency_ms"]["median"], d["bound"]["bound_ms"])' <<< "$json")"
  verdict=$(awk -v p="$pred" -v b="$bound" -v t="$target" 'BEGIN {
    if (p <= t) print "met (predicted)";
    else if (b > t) printf "out of reach: the bound is %.0f ms over the target\n", b - t;
    else printf "the planner: auto misses by %.0f ms, the bound leaves %.0f ms\n", p - t, t - b }')
  case $verdict in
    met*) reach=$((reach + 1)) ;;
    out*) out=$((out + 1)) ;;
    *) missed=$((missed + 1)) ;;
  esac
  printf "| %s | %s | %s | %.0f | %.0f | %s |\n" "$c" "$m" "$target" "$pred" "$bound" "$verdict"
done
echo
echo "Reading: of ${#targets[@]} targets, $reach met in prediction, $missed within the bound but missed by \`auto\`, $out below the bound (no plan can meet them on these boards and links)."
echo
echo "### Mixed homes: \`auto\` against the fastest device alone"
echo
echo "Both predicted the same way: the plan \`auto\` makes on the whole"
echo "cluster, and the model whole on the fastest device (its cluster file"
echo "alone), input and output on it."
echo
echo "| cluster | model | auto, predicted ms | fastest device alone, predicted ms | auto / alone |"
echo "|---|---|---:|---:|---:|"
slower=0 rows=0
for c in home mixed-6; do
  for m in $MIXED_MODELS; do
    json=$(simulate_auto "examples/$c.yaml" "$m" "$c-$m") || json=""
    [[ -z $json ]] && { echo "| $c | $m | - | - | no plan: $(tail -1 "$work/$c-$m.plan.log" | tr '|' '/') |"; continue; }
    read -r pred fastest <<< "$(python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d["latency_ms"]["median"], d["bound"]["fastest_device"])' <<< "$json")"
    one_device_cluster "examples/$c.yaml" "$fastest" "$work/$c-$fastest.yaml"
    json=$(simulate_auto "$work/$c-$fastest.yaml" "$m" "$c-$m-alone") || json=""
    [[ -z $json ]] && { echo "| $c | $m | $pred | - | no plan alone: $(tail -1 "$work/$c-$m-alone.plan.log" | tr '|' '/') |"; continue; }
    alone=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["latency_ms"]["median"])' <<< "$json")
    rows=$((rows + 1))
    awk -v p="$pred" -v a="$alone" 'BEGIN { exit !(p > a * 1.0001) }' && slower=$((slower + 1))
    printf "| %s | %s | %.1f | %.1f | %.2f |\n" "$c" "$m" "$pred" "$alone" \
      "$(awk -v p="$pred" -v a="$alone" 'BEGIN { print p / a }')"
  done
done
echo
echo "Reading: \`auto\` predicted slower than the fastest device alone in $slower of $rows (model, cluster) pairs."

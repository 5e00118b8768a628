#!/bin/bash
# A mixed home measured: on an emulated examples/home.yaml (a laptop-class
# board on Gigabit Ethernet beside Pi 4Bs and a Pi 3B+ on Wi-Fi), for every
# model the plan `auto` makes on the whole cluster against the model whole
# on the cluster's fastest device alone (the device `shoal simulate` names
# fastest; its cluster file's block alone), both benched in board time on
# fresh workers, interleaved round by round so that a slow minute of the
# host falls on both alike. What bench/targets.sh predicts for the same
# pairs, measured.
#
#   bash bench/mixed_home.sh            (BUILD_DIR, default build)
#
# Env: BUILD_DIR, MODELS (default: the zoo models of targets.sh's mixed
# homes), CLUSTERS (default "home"), REQUESTS (default 3), ROUNDS
# (default 2), PORT_BASE, MODE and DILATION (bench/lib.sh).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
BUILD_DIR=${BUILD_DIR:-$root/build}
shoal=$BUILD_DIR/shoal
MODELS=${MODELS:-"lenet5 cifarnet alexnet resnet18 resnet50 mobilenet-v1 mobilenet-v2 vgg16 xception yolov2"}
CLUSTERS=${CLUSTERS:-home}
REQUESTS=${REQUESTS:-3}
ROUNDS=${ROUNDS:-2}
. "$here/lib.sh"
. "$here/cluster_files.sh"
bench_init mixed-home "${PORT_BASE:-7950}"
cd "$root"

# bench_fresh CLUSTER PLAN -> median board-time latency in ms, or "-"
bench_fresh() {
  local out
  cluster_fresh "$1"
  if ! out=$("$shoal" bench --plan "$2" --cluster "$1" --requests "$REQUESTS" \
               --json --timeout-ms 300000 2> "$work/err"); then
    echo "-"; return
  fi
  python3 -c 'import json, sys; print("%.2f" % json.load(sys.stdin)["latency_ms"]["median"])' <<< "$out"
}

median() { python3 -c 'import statistics, sys; v = [float(x) for x in sys.argv[1:] if x != "-"]; print("%.1f" % statistics.median(v) if v else "-")' "$@"; }

echo "On emulated clusters in board time (\`shoal cluster up\`, its dilation"
echo "chosen from the host), each model's \`auto\` plan on the whole cluster"
echo "and the model whole on the fastest device alone, input and output on"
echo "it. $ROUNDS rounds, auto then alone in each, $REQUESTS requests a bench"
echo "on freshly restarted workers; the medians of the rounds' medians."
echo "Images travel as 8-bit pixels (the default)."
echo
echo "| cluster | model | fastest device | auto ms | alone ms | auto / alone | auto's choice |"
echo "|---|---|---|---:|---:|---:|---|"
slower=0 rows=0
for c in $CLUSTERS; do
  file="$work/$c.yaml"
  copy_cluster "examples/$c.yaml" 0 "$file"
  cluster_up "$file"
  for m in $MODELS; do
    auto="$work/$c-$m-auto.json"
    if ! "$shoal" plan "$m" --cluster "$file" --strategy auto -o "$auto" > "$work/plan.log" 2>&1; then
      echo "| $c | $m | - | - | - | - | no plan: $(tail -1 "$work/plan.log" | tr '|' '/') |"; continue
    fi
    fastest=$("$shoal" simulate --plan "$auto" --cluster "$file" --requests 1 --json 2> /dev/null |
              python3 -c 'import json, sys; print(json.load(sys.stdin)["bound"]["fastest_device"])')
    one_device_cluster "$file" "$fastest" "$work/$c-$fastest.yaml"
    alone="$work/$c-$m-alone.json"
    if ! "$shoal" plan "$m" --cluster "$work/$c-$fastest.yaml" --strategy auto -o "$alone" > "$work/plan.log" 2>&1; then
      echo "| $c | $m | $fastest | - | - | - | no plan alone: $(tail -1 "$work/plan.log" | tr '|' '/') |"; continue
    fi
    # auto's chosen candidate, from its decision on "*" ("auto chose X: ...").
    choice=$(python3 -c '
import json, re, sys
for d in json.load(open(sys.argv[1]))["decisions"]:
    m = re.match(r"auto chose (\S+):", d["reason"]) if d["layer"] == "*" else None
    if m: print(m.group(1)); break
else: print("-")' "$auto")
    a=() s=()
    for ((r = 0; r < ROUNDS; r++)); do
      a+=("$(bench_fresh "$file" "$auto")")
      s+=("$(bench_fresh "$file" "$alone")")
    done
    am=$(median "${a[@]}") sm=$(median "${s[@]}")
    if [[ $am == - || $sm == - ]]; then
      echo "| $c | $m | $fastest | $am | $sm | - | $choice (a bench failed: $(tail -c 200 "$work/err" | tr '\n|' ' /')) |"; continue
    fi
    rows=$((rows + 1))
    # Slower beyond the host's noise between two benches of one plan (5 %).
    awk -v p="$am" -v q="$sm" 'BEGIN { exit !(p > q * 1.05) }' && slower=$((slower + 1))
    printf "| %s | %s | %s | %s | %s | %.2f | %s |\n" "$c" "$m" "$fastest" "$am" "$sm" \
      "$(awk -v p="$am" -v q="$sm" 'BEGIN { print p / q }')" "$choice"
  done
done
echo
echo "Reading: \`auto\` measured more than 5 % slower than the fastest device alone in $slower of $rows (model, cluster) pairs."

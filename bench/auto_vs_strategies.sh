#!/bin/bash
# --strategy auto against every single strategy, Procedure 1 alone, random
# assignment (the collaborative-execution paper's baseline) and one device,
# on the mixed emulated cluster examples/mixed-6.yaml (two fast, four slow
# devices, unequal links), copied onto free ports from PORT_BASE: latency
# (one request in flight) and throughput (CONCURRENCY in flight), predicted
# (the latency model from the cluster file, as auto sees it) and measured
# (shoal bench). Prints markdown.
#
#   bash bench/auto_vs_strategies.sh                  # alexnet and vgg16
#   MODELS=alexnet bash bench/auto_vs_strategies.sh
#
# Env: BUILD_DIR (default build), MODELS, STRATEGIES, REQUESTS (timed
# requests for latency, default 3), CONCURRENCY (default 3), SEEDS (random
# assignments measured, default "1 2 3"), PORT_BASE (default 7700).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
BUILD_DIR=${BUILD_DIR:-$root/build}
shoal=$BUILD_DIR/shoal
MODELS=${MODELS:-"alexnet vgg16"}
STRATEGIES=${STRATEGIES:-"pipeline data lop lip channel filter spatial fuse fuse-ilp"}
REQUESTS=${REQUESTS:-3}
CONCURRENCY=${CONCURRENCY:-3}
SEEDS=${SEEDS:-"1 2 3"}
PORT_BASE=${PORT_BASE:-7700}
[ -x "$shoal" ] || { echo "no $shoal: build first (make build)" >&2; exit 1; }
command -v jq >/dev/null || { echo "needs jq" >&2; exit 1; }

. "$here/lib.sh"
bench_init auto "$PORT_BASE"

mixed=$work/mixed-6.yaml
one=$work/one.yaml
copy_cluster "$root/examples/mixed-6.yaml" 6 "$mixed"
copy_cluster "$root/examples/mixed-6.yaml" 1 "$one"
for c in "$mixed" "$one"; do cluster_up "$c"; done

# fresh CLUSTER: restart its workers, so that no plan runs on workers that
# still cache an earlier plan's weights (several VGG16 deployments exceed a
# 1 GiB device's memory cgroup).
fresh() {
  "$shoal" cluster down "$1" > /dev/null 2>&1 || true
  "$shoal" cluster up "$1" > "$work/up.out" 2>&1 || { cat "$work/up.out" >&2; exit 1; }
}

# measure CLUSTER PLAN -> "latency_ms throughput_rps wire_KiB" (or dashes)
measure() {
  local lat thr
  fresh "$1"
  if ! lat=$("$shoal" bench --plan "$2" --cluster "$1" --requests "$REQUESTS" --json --timeout-ms 600000 2> "$work/err"); then
    echo "- - -"; sed 's/^/  /' "$work/err" | head -3 >&2; return
  fi
  if ! thr=$("$shoal" bench --plan "$2" --cluster "$1" --requests $((2 * CONCURRENCY)) --concurrency "$CONCURRENCY" --json --timeout-ms 600000 2> "$work/err"); then
    thr='{"throughput_rps": null}'
  fi
  printf '%s %s %s\n' \
    "$(jq -r '.latency_ms.median | . * 10 | round / 10' <<< "$lat")" \
    "$(jq -r '.throughput_rps // "-" | if type == "number" then (. * 100 | round / 100) else . end' <<< "$thr")" \
    "$(jq -r '.bytes_per_request / 1024 | round' <<< "$lat")"
}

fmt_ms() { jq -rn --argjson v "$1" '$v * 1000 | . * 10 | round / 10'; }
fmt_rps() { jq -rn --argjson v "$1" '$v * 100 | round / 100'; }

echo "## auto vs every strategy on examples/mixed-6.yaml"
echo
echo "Date: $(date -u +%Y-%m-%dT%H:%MZ); machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "Command: bash bench/auto_vs_strategies.sh (MODELS='$MODELS' REQUESTS=$REQUESTS CONCURRENCY=$CONCURRENCY SEEDS='$SEEDS')"
echo "Each plan runs on freshly started workers."
echo "Latency: median of $REQUESTS requests, one in flight; throughput: $((2 * CONCURRENCY)) requests, $CONCURRENCY in flight (shoal bench, after its warm-up)."
echo "Predicted: auto's critical-path prediction on the cluster file's device specs (LatencyModel::FromCluster)."
echo
for m in $MODELS; do
  echo "### $m"
  echo
  echo "| plan | predicted latency ms | measured latency ms | predicted req/s | measured req/s | wire KiB/req | load avg |"
  echo "|---|---|---|---|---|---|---|"
  # Predictions of every alternative, from the latency-objective auto plan.
  "$shoal" plan "$m" --cluster "$mixed" -o "$work/auto-latency.json" > "$work/auto-latency.out"
  "$shoal" plan "$m" --cluster "$mixed" --objective throughput -o "$work/auto-throughput.json" > "$work/auto-throughput.out"
  "$shoal" plan "$m" --cluster "$one" -o "$work/one.json" > /dev/null
  pred() {  # pred NAME -> "latency_s throughput_rps" from the alternatives
    jq -r --arg n "$1" '.prediction.alternatives[] | select(.name == $n) | "\(.latency_s) \(.throughput_rps)"' "$work/auto-latency.json"
  }
  row() {  # row LABEL CLUSTER PLAN PRED_LAT_S PRED_RPS
    local r; r=$(measure "$2" "$3")
    read -r ml mt wire <<< "$r"
    local pl=- pt=-
    [ "$4" != "-" ] && [ "$4" != "0" ] && pl=$(fmt_ms "$4") && pt=$(fmt_rps "$5")
    echo "| $1 | $pl | $ml | $pt | $mt | $wire | $(cut -d' ' -f1 /proc/loadavg) |"
  }
  read -r l t <<< "$(jq -r '.prediction | "\(.latency_s) \(.throughput_rps)"' "$work/one.json")"
  row "one device (fast0)" "$one" "$work/one.json" "$l" "$t"
  for o in latency throughput; do
    read -r l t <<< "$(jq -r '.prediction | "\(.latency_s) \(.throughput_rps)"' "$work/auto-$o.json")"
    meth=$(jq -r '.prediction.method' "$work/auto-$o.json")
    row "**auto** ($o; chose $meth)" "$mixed" "$work/auto-$o.json" "$l" "$t"
  done
  "$shoal" plan "$m" --cluster "$mixed" --strategy procedure1 -o "$work/p1.json" > /dev/null
  read -r l t <<< "$(pred procedure1)"
  row "procedure1 (heuristic alone)" "$mixed" "$work/p1.json" "$l" "$t"
  for s in $STRATEGIES; do
    if ! "$shoal" plan "$m" --cluster "$mixed" --strategy "$s" -o "$work/s.json" > /dev/null 2> "$work/err"; then
      echo "| $s | - | - | - | - | - | $(head -c 120 "$work/err" | tr '\n|' '  ') |"
      continue
    fi
    read -r l t <<< "$(pred "$s")"
    row "$s" "$mixed" "$work/s.json" "${l:--}" "${t:--}"
  done
  read -r l t <<< "$(pred random)"
  for seed in $SEEDS; do
    "$shoal" plan "$m" --cluster "$mixed" --strategy random --random-seed "$seed" -o "$work/r.json" > /dev/null
    row "random seed $seed (predicted: mean of 5 seeds)" "$mixed" "$work/r.json" "$l" "$t"
  done
  echo
done

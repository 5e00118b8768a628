#!/bin/bash
# Predicted against measured: on emulated clusters (examples/pi3-4.yaml and
# examples/mixed.yaml, copied onto ports PORT_BASE..+99 so that other runs
# are not disturbed), `shoal profile` each model, then for every strategy
# `shoal bench` (measured) beside `shoal simulate --profile` (predicted):
# both medians, their ratio, throughputs, and whether the bytes agree.
# Prints markdown.
#
#   bash bench/simulate_vs_bench.sh
#   MODELS=alexnet CLUSTERS=pi3-4 STRATEGIES="pipeline lop" bash bench/simulate_vs_bench.sh
#
# Env: BUILD_DIR (default build), MODELS (default "alexnet resnet18"),
# CLUSTERS (default "pi3-4 mixed"), STRATEGIES, REQUESTS (default 10),
# CONCURRENCY (default 1), PORT_BASE (default 7500).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
BUILD_DIR=${BUILD_DIR:-$root/build}
shoal=$BUILD_DIR/shoal
MODELS=${MODELS:-"alexnet resnet18"}
CLUSTERS=${CLUSTERS:-"pi3-4 mixed"}
STRATEGIES=${STRATEGIES:-"auto pipeline data lop lip channel filter spatial fuse fuse-ilp"}
REQUESTS=${REQUESTS:-10}
CONCURRENCY=${CONCURRENCY:-1}
PORT_BASE=${PORT_BASE:-7500}
[ -x "$shoal" ] || { echo "no $shoal: build first (make build)" >&2; exit 1; }
py=/usr/bin/python3

. "$here/lib.sh"
bench_init simbench "$PORT_BASE"

field() {  # FILE EXPR: a value of a JSON file
  "$py" -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"
}

echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'); $(date -u +%Y-%m-%d); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| cluster | model | strategy | bench median ms | simulate median ms | simulate / bench | bench req/s | simulate req/s | bytes equal |"
echo "|---|---|---|---:|---:|---:|---:|---:|---|"
for c in $CLUSTERS; do
  cf="$work/$c.yaml"
  copy_cluster "$root/examples/$c.yaml" 0 "$cf"
  cluster_up "$cf"
  prof="$work/$c-profile.json"
  for m in $MODELS; do
    "$shoal" profile "$m" --cluster "$cf" -o "$prof" > "$work/$c-$m-profile.log" 2> "$work/$c-$m-profile.err" ||
      { cat "$work/$c-$m-profile.err" >&2; exit 1; }
  done
  for m in $MODELS; do
    for s in $STRATEGIES; do
      plan="$work/$c-$m-$s.json"
      extra=()
      [ "$s" = auto ] && extra=(--profile "$prof")
      if ! "$shoal" plan "$m" --cluster "$cf" --strategy "$s" "${extra[@]}" -o "$plan" > "$work/plan.log" 2>&1; then
        echo "| $c | $m | $s | plan failed: $(tail -1 "$work/plan.log" | cut -c1-80) | | | | | |"
        continue
      fi
      b="$work/bench.json"; p="$work/sim.json"
      if ! "$shoal" bench --plan "$plan" --cluster "$cf" --requests "$REQUESTS" --concurrency "$CONCURRENCY" --json > "$b" 2> "$work/bench.err"; then
        echo "| $c | $m | $s | bench failed: $(tail -1 "$work/bench.err" | cut -c1-80) | | | | | |"
        continue
      fi
      "$shoal" simulate --plan "$plan" --cluster "$cf" --profile "$prof" --requests "$REQUESTS" --concurrency "$CONCURRENCY" --json > "$p"
      bm=$(field "$b" "j['latency_ms']['median']")
      sm=$(field "$p" "j['latency_ms']['median']")
      br=$(field "$b" "j['throughput_rps']")
      sr=$(field "$p" "j['throughput_rps']")
      bt=$(field "$b" "j['bytes_total']")
      st=$(field "$p" "j['bytes_total']")
      "$py" -c "import sys; b,s,br,sr=map(float,sys.argv[1:5]); print('| $c | $m | $s | %.1f | %.1f | %.2f | %.2f | %.2f | %s |' % (b, s, s/b, br, sr, sys.argv[5]))" \
        "$bm" "$sm" "$br" "$sr" "$([ "$bt" = "$st" ] && echo yes || echo "no ($bt vs $st)")"
    done
  done
  "$shoal" cluster down "$cf" > /dev/null 2>&1 || true
done
echo
echo "Load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

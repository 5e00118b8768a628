#!/bin/bash
# Worker memory: one `shoal worker` per device on 127.0.0.1, a plan
# deployed and run once through `shoal run --cluster`, then the worker's
# VmRSS (at rest) and VmHWM (its peak, deploy included) from
# /proc/PID/status against the rule of docs/cluster-format.md: at rest
# weights + peak activations + 60 MiB; at the peak that + the largest
# single weight. Models deployed whole (a one-device pipeline), the
# 8-device VGG16 pipeline, whose largest part is reported, and VGG16 and
# ResNet-18 in strips on 4 devices (spatial: each device runs a layer's
# interior and its edges as three tasks on the same weights). Prints markdown
# (bash bench/run_all.sh worker-memory writes it into docs/BENCHMARKS.md).
#
#   bash bench/worker_memory.sh                  # ~3 min
#   MODELS="alexnet" bash bench/worker_memory.sh
#
# Env: BUILD_DIR (default build), MODELS, PORT_BASE (default 7700).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
BUILD_DIR=${BUILD_DIR:-$root/build}
shoal=$BUILD_DIR/shoal
MODELS=${MODELS:-"vgg16 alexnet resnet18"}
PORT_BASE=${PORT_BASE:-7700}
[ -x "$shoal" ] || { echo "no $shoal: build first (make build)" >&2; exit 1; }

. "$here/lib.sh"
bench_init mem "$PORT_BASE"
pids=()
bench_cleanup_extra() { for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done; }

mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
status_kib() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }

# measure MODEL DEVICES [STRATEGY]: starts DEVICES workers, plans MODEL
# by STRATEGY (default pipeline) over them, runs it once; prints a table
# row for the worker that holds the most weights.
measure() {
  local model=$1 n=$2 strategy=${3:-pipeline} i
  local cluster="$work/$1-$2.yaml" plan="$work/$1-$2-$strategy.json"
  local wpids=() addrs=()
  echo "devices:" > "$cluster"
  for ((i = 0; i < n; i++)); do
    alloc_port
    echo "  - {name: d$i, address: 127.0.0.1:$PORT, memory: 8GiB}" >> "$cluster"
    "$shoal" worker --listen "127.0.0.1:$PORT" --name "d$i" --memory 8GiB --cache-dir "$work/weights-$i" \
      --threads 1 > "$work/w$i.log" 2>&1 &
    wpids+=($!)
    pids+=($!)
  done
  "$shoal" plan "$model" --cluster "$cluster" --strategy "$strategy" -o "$plan" > /dev/null
  "$shoal" run --plan "$plan" --cluster "$cluster" --json > "$work/run.json"
  local analyze act
  analyze=$("$shoal" analyze "$model" --json)
  act=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["total"]["peak_activation_bytes"])' <<< "$analyze")
  # The device with the most weights, and its largest weight.
  read -r dev wbytes largest < <(python3 - "$work/run.json" "$plan" << 'EOF'
import json, sys
run = json.load(open(sys.argv[1]))
plan = json.load(open(sys.argv[2]))
best = max(range(len(run["devices"])), key=lambda d: run["devices"][d]["weight_bytes"])
largest = 0
for t in plan["tasks"]:
    if best in t["devices"]:
        for w in t.get("weights", []):
            n = 4
            r = w["region"]
            for b, e in zip(r["begin"], r["end"]):
                n *= e - b
            largest = max(largest, n)
print(best, run["devices"][best]["weight_bytes"], largest)
EOF
)
  local pid=${wpids[$dev]}
  local rss hwm
  rss=$(status_kib "$pid" VmRSS)
  hwm=$(status_kib "$pid" VmHWM)
  local rest_bound=$((wbytes + act + (60 << 20)))
  local peak_bound=$((rest_bound + largest))
  [ "$rss" -le $((rest_bound >> 10)) ] && [ "$hwm" -le $((peak_bound >> 10)) ] || over+=("$model on $n")
  printf '| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$model" "$n" "$strategy" \
    "$(mib "$wbytes")" "$(mib "$act")" "$(mib "$largest")" \
    "$(mib $((rss * 1024)))" "$(mib "$rest_bound")" \
    "$(mib $((hwm * 1024)))" "$(mib "$peak_bound")"
  for p in "${wpids[@]}"; do kill "$p" 2> /dev/null || true; wait "$p" 2> /dev/null || true; done
}

cat <<'TXT'
What a `shoal worker` holds after deploying and running a plan once
(`shoal run --cluster`), read from `/proc/PID/status` of the worker that
holds the most weights: VmRSS at rest, VmHWM for the peak (the deploy
included), against the rule of docs/cluster-format.md: at rest weights +
peak activations (`shoal analyze`) + 60 MiB; at the peak that + the
largest single weight, which the engine holds twice while it reorders it.
Models deployed whole (a one-device pipeline), VGG16's 8-device
pipeline, and VGG16 and ResNet-18 in strips on 4 devices (`spatial`:
a device runs each layer's interior and its edges as three tasks that
read the same weights). MiB.

TXT
over=()
echo "| model | devices | strategy | weights | peak activations | largest weight | RSS at rest | bound at rest | peak (VmHWM) | bound at peak |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for m in $MODELS; do measure "$m" 1; done
case " $MODELS " in *" vgg16 "*) measure vgg16 8 ;; esac
for m in vgg16 resnet18; do
  case " $MODELS " in *" $m "*) measure "$m" 4 spatial ;; esac
done
echo
if [ ${#over[@]} -eq 0 ]; then
  echo "Reading: every worker stays within the rule, at rest and at its peak. A worker keeps its weight cache on disk and reads weights back a task at a time, so each weight is in memory once (the engine's copy, which the tasks that read the same weight share); what lies above the weights is the activations, about 30 MiB of code and libraries, gRPC's buffers, and at the peak the largest weight while the engine reorders it. The planner refuses plans by the same rule (\`bash bench/run_all.sh min-devices\`)."
else
  echo "Reading: OVER the rule: ${over[*]}."
fi

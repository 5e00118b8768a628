#!/bin/bash
# --strategy auto against every single strategy, Procedure 1 alone, random
# assignment (the collaborative-execution paper's baseline) and one device,
# on the mixed emulated cluster examples/mixed-6.yaml (two fast, four slow
# devices, unequal links), copied onto free ports from PORT_BASE: latency
# (one request in flight) and throughput (CONCURRENCY in flight), predicted
# (shoal simulate on the cluster file's device specs, as auto sees them,
# with the requests and concurrency shoal bench runs) and measured (shoal
# bench). auto's throughput plan is made for CONCURRENCY in flight. Prints
# markdown (bash bench/run_all.sh auto-alexnet, auto-vgg16 write it into
# docs/BENCHMARKS.md).
#
#   bash bench/auto_vs_strategies.sh                  # alexnet and vgg16
#   MODELS=alexnet bash bench/auto_vs_strategies.sh
#
# Env: BUILD_DIR (default build), MODELS, STRATEGIES, REQUESTS (timed
# requests for latency, default 3), CONCURRENCY (default 3), SEEDS (random
# assignments measured, default "1 2 3"), PORT_BASE (default 7700),
# PROFILE=1 (shoal profile each model on the cluster first; auto plans and
# the simulator predicts with it instead of the cluster file's specs).
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
PROFILE=${PROFILE:-0}
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

# measure CLUSTER PLAN -> "latency_ms throughput_rps wire_KiB" (or dashes)
measure() {
  local lat thr
  cluster_fresh "$1"
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

fmt_ms() { jq -rn --argjson v "$1" '$v * 10 | round / 10'; }
fmt_rps() { jq -rn --argjson v "$1" '$v * 100 | round / 100'; }

# predict CLUSTER PLAN -> "latency_ms throughput_rps" from the simulator,
# for the requests and concurrency measure() runs.
predict() {
  local lat thr
  lat=$("$shoal" simulate --plan "$2" --cluster "$1" "${prof[@]}" --requests "$REQUESTS" --json | jq -r '.latency_ms.median')
  thr=$("$shoal" simulate --plan "$2" --cluster "$1" "${prof[@]}" --requests $((2 * CONCURRENCY)) --concurrency "$CONCURRENCY" --json | jq -r '.throughput_rps')
  echo "$(fmt_ms "$lat") $(fmt_rps "$thr")"
}

cat <<'TXT'
`examples/mixed-6.yaml`: two fast devices (speed 6, `cpu: 0.258`, 2 GiB,
94 Mbit/s + 0.4 ms) and four slow ones (speed 2, `cpu: 0.086`, 1 GiB,
62 Mbit/s + 9 ms), emulated by `shoal cluster up` on free ports, each plan
on freshly started workers. "one device" is `fast0` alone; random: every
layer whole on a random device (the collaborative-execution paper's
baseline); auto's throughput plan is made for the measured concurrency
(`--objective throughput --concurrency K`).
TXT
echo
echo "Latency: median of $REQUESTS requests, one in flight; throughput: $((2 * CONCURRENCY)) requests, $CONCURRENCY in flight (\`shoal bench\`, after its warm-up)."
if [ "$PROFILE" = 1 ]; then
  echo "Predicted: \`shoal simulate\` with a profile of the model on the cluster (\`shoal profile\`), the same requests and concurrency as measured; auto planned with the same profile."
else
  echo "Predicted: \`shoal simulate\` on the cluster file's device specs, the same requests and concurrency as measured; auto planned with the same specs."
fi
echo
for m in $MODELS; do
  echo "### $m"
  echo
  echo "| plan | predicted latency ms | measured latency ms | predicted req/s | measured req/s | wire KiB/req |"
  echo "|---|---|---|---|---|---|"
  prof=()
  if [ "$PROFILE" = 1 ]; then
    # One profile serves both clusters: one.yaml is mixed-6's fast0.
    "$shoal" profile "$m" --cluster "$mixed" -o "$work/profile-$m.json" > "$work/profile.log" 2>&1 ||
      { cat "$work/profile.log" >&2; exit 1; }
    prof=(--profile "$work/profile-$m.json")
  fi
  "$shoal" plan "$m" --cluster "$mixed" "${prof[@]}" -o "$work/auto-latency.json" > "$work/auto-latency.out"
  "$shoal" plan "$m" --cluster "$mixed" "${prof[@]}" --objective throughput --concurrency "$CONCURRENCY" -o "$work/auto-throughput.json" > "$work/auto-throughput.out"
  "$shoal" plan "$m" --cluster "$one" "${prof[@]}" -o "$work/one.json" > /dev/null
  row() {  # row LABEL CLUSTER PLAN
    local p r; p=$(predict "$2" "$3"); r=$(measure "$2" "$3")
    read -r pl pt <<< "$p"
    read -r ml mt wire <<< "$r"
    echo "| $1 | $pl | $ml | $pt | $mt | $wire |" | tee -a "$work/rows-$m"
  }
  row "one device (fast0)" "$one" "$work/one.json"
  for o in latency throughput; do
    meth=$(jq -r '.prediction.method' "$work/auto-$o.json")
    row "**auto** ($o; chose $meth)" "$mixed" "$work/auto-$o.json"
  done
  "$shoal" plan "$m" --cluster "$mixed" "${prof[@]}" --strategy procedure1 -o "$work/p1.json" > /dev/null
  row "procedure1 (heuristic alone)" "$mixed" "$work/p1.json"
  for s in $STRATEGIES; do
    if ! "$shoal" plan "$m" --cluster "$mixed" --strategy "$s" -o "$work/s-$s.json" > /dev/null 2> "$work/err"; then
      echo "| $s | refused: $(head -c 160 "$work/err" | tr '\n|' '  ' | sed 's/^shoal: error: //') | | | | |"
      continue
    fi
    row "$s" "$mixed" "$work/s-$s.json"
  done
  for seed in $SEEDS; do
    "$shoal" plan "$m" --cluster "$mixed" --strategy random --assignment-seed "$seed" -o "$work/r.json" > /dev/null
    row "random seed $seed" "$mixed" "$work/r.json"
  done
  echo
  python3 - "$work/rows-$m" "$m" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    c = [x.strip() for x in line.split("|")[1:-1]]
    try:
        rows[c[0]] = [float(x) for x in c[1:5]]
    except ValueError:
        pass
one = rows.get("one device (fast0)")
auto_l = next((v for k, v in rows.items() if k.startswith("**auto** (latency")), None)
auto_t = next((v for k, v in rows.items() if k.startswith("**auto** (throughput")), None)
single = {k: v for k, v in rows.items() if not k.startswith(("**auto", "one device", "procedure1", "random"))}
rand = [v for k, v in rows.items() if k.startswith("random")]
out = []
if auto_l and one:
    best = min(single.items(), key=lambda kv: kv[1][1]) if single else None
    s = f"auto (latency) measured {auto_l[1]:.0f} ms against one device's {one[1]:.0f} ms ({one[1] / auto_l[1]:.2f}x)"
    if best:
        s += f" and the best single strategy's, {best[0]}, {best[1][1]:.0f} ms ({best[1][1] / auto_l[1]:.2f}x)"
    if rand:
        mean = statistics.mean(v[1] for v in rand)
        s += f"; {mean / auto_l[1]:.1f}x random assignment (mean {mean:.0f} ms)"
    out.append(s)
if auto_t and one:
    best = max(single.values(), key=lambda v: v[3]) if single else None
    s = f"auto (throughput) measured {auto_t[3]:.2f} req/s, {auto_t[3] / one[3]:.2f}x one device"
    if best:
        s += f", best single strategy {best[3]:.2f}"
    out.append(s)
ratios = [v[1] / v[0] for v in rows.values() if v[0] > 0]
if ratios:
    within = sum(1 for r in ratios if 0.85 <= r <= 1.15)
    out.append(f"measured latency within 15 % of the prediction for {within} of {len(ratios)} plans")
print(f"Reading ({sys.argv[2]}): " + "; ".join(out) + ".")
PY
  echo
done

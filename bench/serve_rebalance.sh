#!/bin/bash
# shoal serve rebalancing on an emulated cluster: three workers (`shoal
# cluster up`, cgroup v1 cpu quota CPU each), `shoal serve` with the
# pipeline strategy, and a steady open-loop stream from `shoal infer-remote`
# (RATE requests per second). After BASE seconds one worker's cgroup quota
# is cut to SLOW_CPU. Run twice on fresh clusters: with --no-rebalance (the
# latency while slowed, steady) and as served (the re-plan, the latency
# after it). Prints markdown (bash bench/run_all.sh serve-rebalance writes
# it into docs/BENCHMARKS.md).
# Needs root and /sys/fs/cgroup/cpu (cgroup v1). About 2.5 minutes.
#
#   bash bench/serve_rebalance.sh
#   MODEL=vgg-s SHAPE=1,3,96,96 RATE=2 bash bench/serve_rebalance.sh
#
# Env: BUILD_DIR (default build), MODEL (resnet18), SHAPE (1,3,224,224),
# STRATEGY (pipeline), CPU (0.25), SLOW_CPU (0.05), RATE (1.5), BASE (15),
# TOTAL (50 seconds of stream), PORT_BASE (7650).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
BUILD_DIR=${BUILD_DIR:-$root/build}
shoal=$BUILD_DIR/shoal
MODEL=${MODEL:-resnet18}
SHAPE=${SHAPE:-1,3,224,224}
STRATEGY=${STRATEGY:-pipeline}
CPU=${CPU:-0.25}
SLOW_CPU=${SLOW_CPU:-0.05}
RATE=${RATE:-1.5}
BASE=${BASE:-15}
TOTAL=${TOTAL:-50}
PORT_BASE=${PORT_BASE:-7650}
[ -x "$shoal" ] || { echo "no $shoal: build first (make build)" >&2; exit 1; }
[ -e /sys/fs/cgroup/cpu/cgroup.procs ] || { echo "needs cgroup v1 cpu" >&2; exit 1; }

. "$here/lib.sh"
bench_init serve "$PORT_BASE"
serve_pid=
# stop_scenario: the server and this scenario's workers (also at exit).
stop_scenario() {
  if [ -n "$serve_pid" ]; then
    kill "$serve_pid" 2>/dev/null || true
    wait "$serve_pid" 2>/dev/null || true
  fi
  serve_pid=
  "$shoal" cluster down "$work/cluster.yaml" >/dev/null 2>&1 || true
}
bench_cleanup_extra() { stop_scenario; }

summary() {  # CSV STATUS_JSON T0_MS SLOW_AT_MS OUT_JSON
  python3 - "$@" <<'PY'
import csv, json, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
key = {}
status = json.load(open(sys.argv[2]))
t0, slow_at = int(sys.argv[3]), int(sys.argv[4])
replans = [r for r in status["replans"] if r["unix_ms"] - t0 > slow_at]
replan_at = replans[0]["unix_ms"] - t0 if replans else None
gen_new = replans[0]["generation"] if replans else None
def phase(name, sel):
    lat = sorted(float(r["latency_ms"]) for r in rows if r["ok"] == "1" and sel(r))
    if not lat:
        print(f"| {name} | 0 | - | - |"); return
    p95 = lat[min(len(lat) - 1, int(0.95 * len(lat)))]
    key[name.split(",")[0].split(" (")[0]] = statistics.median(lat)
    print(f"| {name} | {len(lat)} | {statistics.median(lat):.0f} | {p95:.0f} |")
start = lambda r: float(r["start_ms"])
print("| phase | requests | median ms | p95 ms |")
print("|---|---|---|---|")
phase("before the slowdown", lambda r: start(r) < slow_at)
phase("slowed, on the plan made before (from 1 s after)",
      lambda r: start(r) > slow_at + 1000 and
      (gen_new is None or int(r["generation"]) < gen_new))
if replan_at is not None:
    phase("after the first re-plan (from 1 s after)",
          lambda r: start(r) > replan_at + 1000)
failed = sum(r["ok"] != "1" for r in rows)
print(f"\n{len(rows)} requests, {failed} failed; slowdown at {slow_at/1e3:.1f} s", end="")
if replans:
    r = replans[0]
    print(f"; re-plan at {replan_at/1e3:.1f} s (generation {r['generation']}, switch "
          f"{r['switch_ms']:.0f} ms): {r['reason']}")
    print("shares: " + ", ".join(f"{d} {a:.2f} -> {b:.2f}" for d, a, b in
          zip(r["devices"], r["old_shares"], r["new_shares"])))
    print(f"{len(replans)} re-plan(s) after the slowdown, "
          f"{len(status['replans']) - len(replans)} before (generation 1 included)")
else:
    print("; no re-plan after it")
print(f"server: {status['accepted']} accepted, {status['answered']} answered, "
      f"{status['failed']} failed, {status['retried']} retried")
key["failed"] = failed
key["requests"] = len(rows)
key["replan_after_s"] = (replan_at - slow_at) / 1e3 if replans else None
json.dump(key, open(sys.argv[5], "w"))
PY
}

# scenario NAME [serve flags...]: one run on a fresh cluster.
scenario() {
  local name=$1
  shift
  {
    echo "devices:"
    for i in 0 1 2; do
      alloc_port
      echo "  - {name: dev$i, address: 127.0.0.1:$PORT, memory: 512MiB, cores: 1, speed: 1, cpu: $CPU}"
    done
  } > "$work/cluster.yaml"
  alloc_port
  local server=127.0.0.1:$PORT
  cluster_up "$work/cluster.yaml"
  grep -q "cgroup cpu quota" "$work/up.log" || { cat "$work/up.log"; echo "cpu not limited" >&2; exit 1; }
  "$shoal" serve --cluster "$work/cluster.yaml" --model "$MODEL" --input-shape "$SHAPE" \
    --strategy "$STRATEGY" --listen "$server" --monitor-interval 0.5 --cooldown 3 \
    --log-every 5 "$@" 2> "$work/serve-$name.log" &
  serve_pid=$!
  for _ in $(seq 300); do
    "$shoal" infer-remote --server "$server" --status > /dev/null 2>&1 && break
    sleep 0.2
  done
  "$shoal" infer-remote --server "$server" --requests 4 > /dev/null  # warm-up
  local requests interval t0 stream state cg period slow_at quota
  requests=$(python3 -c "print(int($TOTAL * $RATE))")
  interval=$(python3 -c "print(1000.0 / $RATE)")
  t0=$(date +%s%3N)
  "$shoal" infer-remote --server "$server" --requests "$requests" --interval-ms "$interval" \
    --concurrency 32 --timeout-ms 60000 --csv "$work/$name.csv" > "$work/stream.log" 2>&1 &
  stream=$!
  sleep "$BASE"
  state=$(sed -n 's/.*logs and pids in \([^)]*\)).*/\1/p' "$work/up.log")
  cg=$(grep "/cpu" "$state/dev1.cgroups" | head -1)
  [ -n "$cg" ] || { echo "no cpu cgroup found for dev1" >&2; exit 1; }
  period=$(cat "$cg/cpu.cfs_period_us")
  slow_at=$(( $(date +%s%3N) - t0 ))
  quota=$(python3 -c "print(int($SLOW_CPU * $period))")
  echo "$quota" > "$cg/cpu.cfs_quota_us"
  wait "$stream" || true
  "$shoal" infer-remote --server "$server" --status --json > "$work/$name.json"
  echo "### $name"
  echo
  summary "$work/$name.csv" "$work/$name.json" "$t0" "$slow_at" "$work/$name.key.json"
  echo
  stop_scenario
}

cat <<TXT
Three workers of \`shoal cluster up\` (cpu $CPU of a core each: cgroup quota
and the worker's pacing), \`shoal serve --strategy $STRATEGY\` of $MODEL at
$SHAPE, monitor every 0.5 s, cooldown 3 s; the load is a steady open-loop
stream of $RATE requests per second for $TOTAL s (\`shoal infer-remote
--interval-ms --concurrency 32\`). After $BASE s dev1's cgroup quota is cut
from $CPU to $SLOW_CPU of a core. Run twice on fresh clusters: with
\`--no-rebalance\` (how slow the plan made before stays) and as served.

TXT
scenario no-rebalance --no-rebalance
scenario rebalance
echo "Re-plans in the server's log (rebalance):"
echo
echo '```'
grep -A3 "re-plan ->\|not re-planning" "$work/serve-rebalance.log" || true
echo '```'
echo
python3 - "$work/no-rebalance.key.json" "$work/rebalance.key.json" "$CPU" "$SLOW_CPU" <<'PY'
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
cpu, slow = float(sys.argv[3]), float(sys.argv[4])
before = b.get("before the slowdown")
slowed = a.get("slowed")
after = b.get("after the first re-plan")
ideal = before * 3 * cpu / (2 * cpu + slow) if before else None
parts = []
if slowed and after:
    parts.append(f"with dev1 slowed, the plan made before answers in {slowed:.0f} ms (median); "
                 f"served, {after:.0f} ms after the re-plan")
if b.get("replan_after_s") is not None:
    parts.append(f"the re-plan came {b['replan_after_s']:.1f} s after the cut")
if ideal:
    parts.append(f"the cluster keeps {2 * cpu + slow:.2f} of a core of {3 * cpu:.2f}, so about "
                 f"{ideal:.0f} ms is the best a re-plan can give back")
parts.append(f"failed requests: {a['failed']} of {a['requests']} without rebalancing, "
             f"{b['failed']} of {b['requests']} served")
print("Reading: " + "; ".join(parts) + ".")
PY

#!/bin/bash
# Soak: `shoal serve` answering REQUESTS requests on an emulated cluster of
# three workers (`shoal cluster up`, transport mode) while a worker is
# killed (SIGKILL) every KILL_EVERY answered requests and restarted DOWN_S
# seconds later on the same port; dev1 and dev2 take turns, dev0 (the input
# device) lives through the whole run. The next kill comes KILL_EVERY
# answers after the restarted worker is up again. The client is `shoal infer-remote`
# (CONCURRENCY requests in flight, the same input each time); the RSS of the
# server and of every worker is sampled each second from /proc.
#
# Figures: requests answered, lost (no answer: an error reply, or none by
# the deadline), duplicated (a server request number answered twice, or the
# server counting more answers than the client got), wrong (an output that
# differs from the others: the input is always the same), retried, re-plans,
# latency; RSS at the start, middle and end of the run, and its maximum.
#
# Prints markdown (bash bench/run_all.sh soak writes it into
# docs/BENCHMARKS.md).
#
#   bash bench/soak.sh
#   REQUESTS=2000 KILL_EVERY=200 bash bench/soak.sh
#
# Env: BUILD_DIR (default build), MODEL (lenet5), STRATEGY (pipeline),
# REQUESTS (10000), KILL_EVERY (100), DOWN_S (1), CONCURRENCY (4),
# LATENCY (link latency of each device, 5ms), PORT_BASE (7700).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
BUILD_DIR=${BUILD_DIR:-$root/build}
shoal=$BUILD_DIR/shoal
MODEL=${MODEL:-lenet5}
STRATEGY=${STRATEGY:-pipeline}
REQUESTS=${REQUESTS:-10000}
KILL_EVERY=${KILL_EVERY:-100}
DOWN_S=${DOWN_S:-1}
CONCURRENCY=${CONCURRENCY:-4}
LATENCY=${LATENCY:-5ms}
PORT_BASE=${PORT_BASE:-7700}
[ -x "$shoal" ] || { echo "no $shoal: build first (make build)" >&2; exit 1; }

MODE=transport
. "$here/lib.sh"
bench_init soak "$PORT_BASE"
serve_pid=
sampler_pid=
bench_cleanup_extra() {
  [ -n "$sampler_pid" ] && kill "$sampler_pid" 2> /dev/null || true
  if [ -n "$serve_pid" ]; then
    kill "$serve_pid" 2> /dev/null || true
    wait "$serve_pid" 2> /dev/null || true
  fi
}

cluster=$work/cluster.yaml
{
  echo "devices:"
  for i in 0 1 2; do
    alloc_port
    echo "  - {name: dev$i, address: 127.0.0.1:$PORT, memory: 256MiB, cores: 1, link: {latency: $LATENCY}}"
  done
} > "$cluster"
alloc_port
server=127.0.0.1:$PORT
cluster_up "$cluster"
state=$(sed -n 's/.*logs and pids in \([^)]*\)).*/\1/p' "$work/up.log")
[ -d "$state" ] || { cat "$work/up.log" >&2; echo "no state directory" >&2; exit 1; }

"$shoal" serve --cluster "$cluster" --model "$MODEL" --strategy "$STRATEGY" \
  --listen "$server" --monitor-interval 0.5 --log-every 10 2> "$work/serve.log" &
serve_pid=$!
for _ in $(seq 300); do
  "$shoal" infer-remote --server "$server" --status > /dev/null 2>&1 && break
  sleep 0.2
done
"$shoal" infer-remote --server "$server" --status --json > "$work/status0.json"

# RSS of the server and of each device's current worker process, each second.
t0=$(date +%s%3N)
(
  echo "t_s,process,pid,rss_kib"
  while true; do
    now=$(( $(date +%s%3N) - t0 ))
    for p in serve dev0 dev1 dev2; do
      if [ "$p" = serve ]; then pid=$serve_pid; else pid=$(cat "$state/$p.pid" 2> /dev/null || true); fi
      rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2> /dev/null || true)
      [ -n "$rss" ] && echo "$(awk "BEGIN {print $now / 1000}"),$p,$pid,$rss"
    done
    sleep 1
  done
) > "$work/rss.csv" &
sampler_pid=$!

"$shoal" infer-remote --server "$server" --requests "$REQUESTS" --concurrency "$CONCURRENCY" \
  --timeout-ms 60000 --csv "$work/requests.csv" > "$work/client.log" 2>&1 &
client=$!

# The killer: every KILL_EVERY answers, dev1 or dev2 in turn.
answered() {
  "$shoal" infer-remote --server "$server" --status --json 2> /dev/null |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["answered"])' 2> /dev/null || echo 0
}
base=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["answered"])' "$work/status0.json")
next_kill=$KILL_EVERY
kills=0
: > "$work/kills.txt"
while kill -0 "$client" 2> /dev/null; do
  n=$(( $(answered) - base ))
  if [ "$n" -ge "$next_kill" ] && [ "$n" -lt "$REQUESTS" ]; then
    dev=dev$(( 1 + kills % 2 ))
    pid=$(cat "$state/$dev.pid")
    kill -9 "$pid" 2> /dev/null || true
    echo "$(( $(date +%s%3N) - t0 )) $dev $pid after $n answers" >> "$work/kills.txt"
    kills=$((kills + 1))
    sleep "$DOWN_S"
    "$shoal" cluster up --mode "$MODE" "$cluster" >> "$work/restart.log" 2>&1 ||
      { cat "$work/restart.log" >&2; exit 1; }
    # The next kill KILL_EVERY answers after this worker is back.
    next_kill=$(( $(answered) - base + KILL_EVERY ))
  fi
  sleep 0.2
done
wait "$client" || true
wall_ms=$(( $(date +%s%3N) - t0 ))
sleep 2  # one more RSS sample at rest
kill "$sampler_pid" 2> /dev/null || true
wait "$sampler_pid" 2> /dev/null || true
sampler_pid=
"$shoal" infer-remote --server "$server" --status --json > "$work/status1.json"

section=$(python3 - "$work" "$wall_ms" "$kills" <<'PY'
import csv, json, statistics, sys
work, wall_ms, kills = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows = list(csv.DictReader(open(f"{work}/requests.csv")))
s0 = json.load(open(f"{work}/status0.json"))
s1 = json.load(open(f"{work}/status1.json"))
ok = [r for r in rows if r["ok"] == "1"]
errors = [r for r in rows if r["ok"] != "1"]
seen, dup = set(), 0
for r in ok:
    dup += r["server_request"] in seen
    seen.add(r["server_request"])
server_answered = s1["answered"] - s0["answered"]
dup += max(0, server_answered - len(ok))
hashes = {}
for r in ok:
    hashes[r["output_hash"]] = hashes.get(r["output_hash"], 0) + 1
wrong = len(ok) - max(hashes.values()) if hashes else 0
retried = sum(int(r["attempts"]) > 1 for r in ok)
lat = sorted(float(r["latency_ms"]) for r in ok)
p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] if lat else 0
replans = len(s1["replans"]) - len(s0["replans"])
print("| requests | answered | lost | of which error replies | duplicated | wrong | retried | kills | re-plans | wall s | median ms | p99 ms |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
print(f"| {len(rows)} | {len(ok)} | {len(rows) - len(ok)} | {len(errors)} | {dup} | {wrong} | {retried} | {kills} | {replans} | {wall_ms / 1e3:.0f} | {statistics.median(lat) if lat else 0:.1f} | {p(0.99):.1f} |")
if errors:
    print(f"\nFirst error reply: {errors[0]['error']}")
rss = {}
for r in csv.DictReader(open(f"{work}/rss.csv")):
    rss.setdefault(r["process"], []).append((float(r["t_s"]), int(r["pid"]), int(r["rss_kib"]) / 1024))
print("\nRSS, MiB (each second; a restarted worker starts afresh, its pids counted):\n")
print("| process | processes | start | middle | end | max |")
print("|---|---|---|---|---|---|")
for name in ["serve", "dev0", "dev1", "dev2"]:
    v = rss.get(name, [])
    if not v:
        print(f"| {name} | 0 | - | - | - | - |"); continue
    mid = min(v, key=lambda x: abs(x[0] - v[-1][0] / 2))
    pids = len({x[1] for x in v})
    print(f"| {name} | {pids} | {v[0][2]:.1f} | {mid[2]:.1f} | {v[-1][2]:.1f} | {max(x[2] for x in v):.1f} |")
# The reading, from the figures.
def grew(name):
    v = rss.get(name, [])
    if not v:
        return "not sampled"
    mid = min(v, key=lambda x: abs(x[0] - v[-1][0] / 2))
    return (f"{v[0][2]:.1f} -> {v[-1][2]:.1f} MiB, {v[-1][2] - mid[2]:+.1f} over "
            f"the second half (max {max(x[2] for x in v):.1f})")
lost = len(rows) - len(ok)
print()
print(f"Reading: {lost} of {len(rows)} requests lost, {dup} duplicated, {wrong} wrong "
      f"across {kills} kills (one every {len(rows) // max(kills, 1)} requests). {retried} requests were retried: those in flight on "
      f"a killed worker fail within about a second (its connection drops) and "
      f"serve retries them on a plan without it; the restarted worker rejoins "
      f"at a later re-plan ({replans} in all). RSS over the run: serve {grew('serve')}, "
      f"dev0 (never killed, every re-plan deployed to it) {grew('dev0')}.")
PY
)
cat <<EOF
$REQUESTS requests to \`shoal serve\` ($MODEL, $STRATEGY, 3 workers of
\`shoal cluster up\`, each link $LATENCY, $CONCURRENCY requests in flight,
the same input each time) while a worker is killed with SIGKILL and
restarted on its port ${DOWN_S} s later, then again $KILL_EVERY answered requests
after it is back (dev1 and dev2 in turn; dev0, the input device, runs
throughout). Lost: requests without an answer (an error reply, or none by
the 60 s deadline). Duplicated: a server request number answered twice, or
more answers counted by the server than the client received. Wrong:
outputs unlike the others (the input never changes).

$section
EOF

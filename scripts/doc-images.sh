#!/usr/bin/env bash
# Draws the pictures of README.md and docs/ (docs/images/) from the build's
# shoal, so each shows what the code does now:
#   plan-alexnet-auto-pi3-8.svg   `plan --svg`: AlexNet by auto on 8 Pi 3B+
#   timeline-lcp8-measured.svg    `bench --timeline`: LCP split8 AlexNet on
#   timeline-lcp8-predicted.svg   8 emulated Pi 3B+, and `simulate
#                                 --timeline` of the same plan, both on one
#                                 time axis (--timeline-ms)
#   dashboard.png                 `serve --dashboard` of ResNet-18 in a
#                                 pipeline over four
#                                 emulated Pi 3B+ under load, in headless
#                                 Chromium
# It brings up emulated clusters on this machine (examples/pi3-8.yaml, then
# examples/pi3-4.yaml: their ports must be free) for about two minutes.
#
#   bash scripts/doc-images.sh            (BUILD_DIR, default build)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
shoal=${BUILD_DIR:-$root/build}/shoal
out=$root/docs/images
work=$(mktemp -d /tmp/shoal-doc-images-XXXXXX)
cd "$root"
cleanup() {
  [ -n "${serve_pid:-}" ] && kill "$serve_pid" 2> /dev/null || true
  "$shoal" cluster down examples/pi3-8.yaml > /dev/null 2>&1 || true
  "$shoal" cluster down examples/pi3-4.yaml > /dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
[ -x /usr/bin/chromium ] || {
  echo "needs Debian's chromium (scripts/install-deps.sh --with-test-deps)" >&2
  exit 1
}

echo "plan: AlexNet, auto, examples/pi3-8.yaml" >&2
"$shoal" plan alexnet --cluster examples/pi3-8.yaml --strategy auto \
  --svg "$out/plan-alexnet-auto-pi3-8.svg" -o "$work/auto.json" > /dev/null

echo "timelines: LCP split8 AlexNet, measured and predicted" >&2
"$shoal" cluster up examples/pi3-8.yaml > /dev/null
"$shoal" plan alexnet --cluster examples/pi3-8.yaml --strategy lcp \
  --branches 8 --image-input -o "$work/lcp8.json" > /dev/null
# Each drawn first to its own length; then both to the longer, so a
# millisecond sits at the same place in both.
"$shoal" bench --plan "$work/lcp8.json" --cluster examples/pi3-8.yaml \
  --requests 3 --json --timeline "$work/m.svg" > "$work/m.json"
"$shoal" simulate --plan "$work/lcp8.json" --cluster examples/pi3-8.yaml \
  --requests 3 --json > "$work/p.json"
axis=$(python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))["latency_ms"]["max"]
p = json.load(open(sys.argv[2]))["latency_ms"]["max"]
print("%.0f" % (max(m, p) * 1.05 + 1))' "$work/m.json" "$work/p.json")
"$shoal" bench --plan "$work/lcp8.json" --cluster examples/pi3-8.yaml \
  --requests 3 --timeline "$out/timeline-lcp8-measured.svg" \
  --timeline-ms "$axis" > /dev/null
"$shoal" simulate --plan "$work/lcp8.json" --cluster examples/pi3-8.yaml \
  --requests 3 --timeline "$out/timeline-lcp8-predicted.svg" \
  --timeline-ms "$axis" > /dev/null
"$shoal" cluster down examples/pi3-8.yaml > /dev/null

echo "dashboard: ResNet-18 on examples/pi3-4.yaml under load" >&2
"$shoal" cluster up examples/pi3-4.yaml > /dev/null
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$shoal" serve --cluster examples/pi3-4.yaml --model resnet18 \
  --strategy pipeline --listen 127.0.0.1:0 --dashboard "127.0.0.1:$port" \
  --log-every 0 \
  2> "$work/serve.log" &
serve_pid=$!
for _ in $(seq 120); do
  grep -q "listening on" "$work/serve.log" && break
  sleep 0.5
done
grpc=$(sed -n 's/.*listening on [^ ]* (port \([0-9]*\)).*/\1/p' "$work/serve.log" | head -1)
[ -n "$grpc" ] || { cat "$work/serve.log" >&2; exit 1; }
"$shoal" infer-remote --server "127.0.0.1:$grpc" --input-seed 1 \
  --requests 80 --concurrency 3 > /dev/null
/usr/bin/chromium --headless=new --no-sandbox --disable-gpu --no-first-run \
  --user-data-dir="$work/chromium" --virtual-time-budget=4000 \
  --window-size=1280,1700 --hide-scrollbars \
  --screenshot="$out/dashboard.png" "http://127.0.0.1:$port/" 2> /dev/null
kill "$serve_pid"
wait "$serve_pid" 2> /dev/null || true
serve_pid=
echo "wrote $out/{plan-alexnet-auto-pi3-8.svg,timeline-lcp8-measured.svg,timeline-lcp8-predicted.svg,dashboard.png}" >&2

#!/bin/bash
# The arm64 worker (`make worker-arm64`) under qemu-user EMULATION beside
# the native amd64 worker: ms per inference of a model deployed whole on
# one worker (a one-device pipeline, `shoal bench`, median), with oneDNN
# and with shoal's reference kernels. qemu translates every arm64
# instruction on this host's x86 CPU, so the arm64 figures say how the
# arm64 build behaves (which kernels it takes, how they compare), not how
# fast a Raspberry Pi is. The emulated CPU is a Cortex-A72 (a Pi 4): no
# SVE, so oneDNN takes the paths it takes on the board. Prints markdown
# (bash bench/run_all.sh arm64-qemu writes it into docs/BENCHMARKS.md).
#
#   bash bench/arm64_qemu.sh                    # ~5 min
#   MODELS="lenet5" REQUESTS=5 bash bench/arm64_qemu.sh
#
# Env: BUILD_DIR (default build), ARM64_BUILD_DIR (default build-arm64),
# SHOAL_ARM64_SYSROOT (default /opt/shoal/sysroot-arm64), MODELS,
# REQUESTS (default 5), PORT_BASE (default 7800), THREADS (default 1).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
BUILD_DIR=${BUILD_DIR:-$root/build}
ARM64_BUILD_DIR=${ARM64_BUILD_DIR:-$root/build-arm64}
SYSROOT=${SHOAL_ARM64_SYSROOT:-/opt/shoal/sysroot-arm64}
MODELS=${MODELS:-"lenet5 cifarnet mobilenet-v1"}
REQUESTS=${REQUESTS:-5}
PORT_BASE=${PORT_BASE:-7800}
THREADS=${THREADS:-1}
shoal=$BUILD_DIR/shoal
arm=$ARM64_BUILD_DIR/shoal-worker
[ -x "$shoal" ] || { echo "no $shoal: build first (make build)" >&2; exit 1; }
# Skipped (exit 3: bench/run_all.sh keeps the section as it is) where
# nothing was cross-built.
if [ ! -x "$arm" ] || ! command -v qemu-aarch64 > /dev/null; then
  echo "skipped: needs $arm (make worker-arm64) and qemu-aarch64 (qemu-user)" >&2
  exit 3
fi

. "$here/lib.sh"
bench_init arm64 "$PORT_BASE"
pids=()
bench_cleanup_extra() { for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done; }

# start_worker NAME BACKEND CMD...: a worker on a free port; sets ADDR.
start_worker() {
  local name=$1 backend=$2
  shift 2
  alloc_port
  ADDR=127.0.0.1:$PORT
  "$@" --listen "$ADDR" --name "$name" --threads "$THREADS" --backend "$backend" \
    --cache-dir "$work/$name.weights" > "$work/$name.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 600); do
    grep -qs "listening on port" "$work/$name.log" && return 0
    sleep 0.1
  done
  echo "worker $name did not start: $(cat "$work/$name.log")" >&2
  exit 1
}

# ms MODEL NAME BACKEND CMD...: median ms per inference on that worker.
ms() {
  local model=$1 name=$2 backend=$3
  shift 3
  start_worker "$name" "$backend" "$@"
  local c="$work/$name.yaml" p="$work/$name-$model.json"
  echo "devices: [{name: $name, address: $ADDR, cores: $THREADS}]" > "$c"
  "$shoal" plan "$model" --cluster "$c" --strategy pipeline -o "$p" > /dev/null
  "$shoal" bench --plan "$p" --cluster "$c" --requests "$REQUESTS" --json \
    --timeout-ms 600000 > "$work/bench.json"
  kill "${pids[-1]}"
  wait "${pids[-1]}" 2> /dev/null || true
  python3 -c 'import json,sys; print("%.1f" % json.load(open(sys.argv[1]))["latency_ms"]["median"])' \
    "$work/bench.json"
}

qemu=(qemu-aarch64 -L "$SYSROOT" -cpu cortex-a72 "$arm")
cat <<TXT
What the arm64 build of \`shoal-worker\` (\`make worker-arm64\`,
[packaging.md](packaging.md)) does with a model, next to the native amd64
worker: ms per inference, the median of $REQUESTS requests of \`shoal bench\` on a
one-device pipeline (the model whole on that worker, $THREADS kernel thread(s)),
with oneDNN (\`--backend onednn\`) and with shoal's own reference kernels
(\`--backend reference\`). The arm64 worker runs under \`qemu-aarch64 -cpu
cortex-a72\` (a Raspberry Pi 4's core, no SVE) with Debian's arm64
libraries: qemu translates each arm64 instruction into x86 ones, so these
are figures of the emulator on this host, not of a board.

TXT
echo "| model | amd64 native, oneDNN | amd64 native, reference | arm64 under qemu, oneDNN | arm64 under qemu, reference | qemu / native (oneDNN) |"
echo "|---|---:|---:|---:|---:|---:|"
for m in $MODELS; do
  a=$(ms "$m" x86-onednn onednn "$shoal" worker)
  b=$(ms "$m" x86-ref reference "$shoal" worker)
  c=$(ms "$m" arm-onednn onednn "${qemu[@]}")
  d=$(ms "$m" arm-ref reference "${qemu[@]}")
  r=$(awk -v a="$a" -v c="$c" 'BEGIN { printf "%.0fx", c / a }')
  echo "| $m | $a | $b | $c | $d | $r |" | tee -a "$work/rows"
done
echo
python3 - "$work/rows" <<'PY'
import sys
rows = [[x.strip() for x in l.split("|")[1:-1]] for l in open(sys.argv[1])]
arm = [float(r[3]) / float(r[4]) for r in rows]  # oneDNN / reference under qemu
x86 = [float(r[2]) / float(r[1]) for r in rows]  # reference / oneDNN native
emu = [float(r[4]) / float(r[2]) for r in rows]  # reference: qemu / native
print(f"Reading: on arm64, oneDNN is {min(1 / a for a in arm):.1f}x to {max(1 / a for a in arm):.1f}x"
      f" faster than shoal's reference kernels, where on amd64 its JIT kernels are"
      f" {min(x86):.0f}x to {max(x86):.0f}x faster: Debian's oneDNN 2.6 has JIT kernels on"
      " AArch64 only for SVE, which the Cortex-A53/A72/A76 of Raspberry Pis lack, so its"
      " convolutions run its portable C++ GEMM (`ONEDNN_VERBOSE=1` shows `gemm:ref`)."
      f" The emulator costs {min(emu):.0f}x to {max(emu):.0f}x on plain C++ (the reference"
      " columns). A Pi's real speed needs a Pi; the planner's `speed: 1` (Pi 3) and the"
      " calibration of emulated clusters (cluster-format.md) stand in meanwhile.")
PY

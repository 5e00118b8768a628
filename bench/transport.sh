#!/bin/bash
# What the transport adds to a tensor between two `shoal worker` processes
# on unshaped loopback: bytes on the wire per message size, and the time of
# one more hop (bench/transport_bench.cc, built as shoal_transport_bench).
# Prints markdown (bash bench/run_all.sh transport writes it into
# docs/BENCHMARKS.md).
#
#   bash bench/transport.sh [REQUESTS]     # default 2000
#
# Env: BUILD_DIR (default build).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
BUILD_DIR=${BUILD_DIR:-$root/build}
requests=${1:-2000}
[ -x "$BUILD_DIR/shoal" ] || { echo "no $BUILD_DIR/shoal: build first (make build)" >&2; exit 1; }
if [ -f "$BUILD_DIR/CMakeCache.txt" ]; then  # a build tree: bring it up to date
  log=$(mktemp)
  cmake --build "$BUILD_DIR" --target shoal_transport_bench > "$log" 2>&1 || { cat "$log" >&2; rm -f "$log"; exit 1; }
  rm -f "$log"
fi
out=$("$BUILD_DIR/shoal_transport_bench" "$BUILD_DIR/shoal" "$requests")

cat <<'TXT'
Two `shoal worker` processes on unshaped loopback. Bytes: dev0 sends a
tensor to dev1 through a counting TCP relay, and everything on that
connection (HTTP/2 frames, gRPC and protobuf framing, dev1's
acknowledgement) is set against the tensor's payload. Time: two Relu
layers on one worker (coordinator -> dev0 -> coordinator) against the same
layers on two (one more message, dev0 -> dev1), interleaved in 20 rounds,
difference of the medians.

TXT
printf '%s\n\n' "$out"
python3 - "$out" <<'PY'
import re, sys
rows = [l for l in sys.argv[1].splitlines() if re.match(r"\| \d+ B \|", l)]
extra = [float(re.search(r"\(([+-][\d.]+) B\)", l).group(1)) for l in rows]
pct = [(int(l.split()[1]), float(re.search(r"\| ([+-][\d.]+)%", l).group(1))) for l in rows]
small = min((p for p, o in pct if o <= 5), default=None)
print(f"Reading: a message costs {min(extra):.0f}-{max(extra):.0f} B above its payload"
      + (f", within 5 % of the payload from {small} B on" if small else "")
      + ". Not counted: TCP/IP headers, 52 B per segment (none on loopback's"
      " 64 KiB MTU; 3.6 % on a 1500 B Wi-Fi MTU). A hop on this host costs"
      " three thread wake-ups (the sender thread, gRPC's server thread, the"
      " receiving compute thread), each of which can wait for a core, so its"
      " time moves with the host's load.")
PY

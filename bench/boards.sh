#!/bin/bash
# What an owner of real boards runs on a board: shoal's latency per model
# on this board (the engine on its default backend, XNNPACK on arm64, all
# cores, batch 1, the median of --repeat runs after a warm-up), beside
# ncnn's published time for the board's class (`benchncnn`, 4 threads;
# the table of `shoal boards --json`, src/sim/board_fit.cc), and the share
# of each model's MACs in the backend's own kernels. Prints markdown;
# docs/real-devices.md asks for its output.
#
#   bench/boards.sh [--board pi4b] [--repeat N] [--models "resnet18 ..."]
#                   [--emulator "qemu-aarch64 -L SYSROOT -cpu cortex-a72"]
#
# On a board with the worker alone, make the table on the laptop
# (`shoal boards --json > boards.json`), copy it over and give it as
# BOARDS_JSON. --board defaults to the board named in
# /proc/device-tree/model (Raspberry Pi 3 Model B+, 4 Model B, 5, Zero 2 W).
# Elsewhere it runs all the same (a smoke check of the script): the times
# are then this machine's, and said to be. Under --emulator no time is
# printed: an emulator's speed says nothing of a board's.
#
# Environment: SHOAL_KERNELS, the binary whose `kernels` subcommand builds
# and times a model (default: build-worker/shoal-worker, else build/shoal);
# SHOAL (default build/shoal) and BOARDS_JSON (default: `$SHOAL boards
# --json`) for the table; PYTHON (default /usr/bin/python3).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
SHOAL=${SHOAL:-$root/build/shoal}
PYTHON=${PYTHON:-/usr/bin/python3}
board=""
repeat=10
models=""
emulator=""
while [ $# -gt 0 ]; do
  case "$1" in
    --board) board=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --emulator) emulator=$2; shift 2 ;;
    *) echo "usage: $0 [--board NAME] [--repeat N] [--models LIST] [--emulator CMD]" >&2; exit 2 ;;
  esac
done
case "$repeat" in
  '' | *[!0-9]* | 0) echo "boards.sh: --repeat must be a positive integer, not '$repeat'" >&2; exit 2 ;;
esac

if [ -z "${SHOAL_KERNELS:-}" ]; then
  if [ -x "$root/build-worker/shoal-worker" ]; then
    SHOAL_KERNELS=$root/build-worker/shoal-worker
  else
    SHOAL_KERNELS=$SHOAL
  fi
fi
[ -x "$SHOAL_KERNELS" ] || {
  echo "boards.sh: no binary at $SHOAL_KERNELS: build the worker (docs/real-devices.md) or set SHOAL_KERNELS" >&2
  exit 1
}

table=$(mktemp)
trap 'rm -f "$table"' EXIT
if [ -n "${BOARDS_JSON:-}" ]; then
  cp "$BOARDS_JSON" "$table" || { echo "boards.sh: cannot read BOARDS_JSON=$BOARDS_JSON" >&2; exit 1; }
elif [ -x "$SHOAL" ]; then
  "$SHOAL" boards --json > "$table"
else
  echo "boards.sh: no ncnn table: set BOARDS_JSON to the output of \`shoal boards --json\` (made on any machine with shoal) or SHOAL to a shoal binary" >&2
  exit 1
fi

# The board this is, from the device tree's model string.
if [ -z "$board" ] && [ -r /proc/device-tree/model ]; then
  case "$(tr -d '\0' < /proc/device-tree/model)" in
    *"Raspberry Pi 3 Model B Plus"*) board=pi3b+ ;;
    *"Raspberry Pi 4 Model B"*) board=pi4b ;;
    *"Raspberry Pi 5"*) board=pi5 ;;
    *"Raspberry Pi Zero 2 W"*) board=pi-zero-2w ;;
  esac
fi

# Rows of the table for $board: "model published_ms" lines.
published=$("$PYTHON" - "$table" "$board" <<'EOF'
import json, sys
table, board = json.load(open(sys.argv[1])), sys.argv[2]
names = [b["name"] for b in table]
rows = [b for b in table if b["name"] == board]
if board and not rows:
    sys.exit(f"boards.sh: no board class '{board}' (known: {' '.join(names)})")
if not rows:
    # Not a known board: every model ncnn publishes for some board, no figure.
    seen = []
    for b in table:
        for m in b.get("models", []):
            if m["model"] not in seen:
                seen.append(m["model"])
    print("\n".join(f"{m} -" for m in seen))
else:
    print("\n".join(f'{m["model"]} {m["published_ms"]}' for m in rows[0].get("models", [])))
EOF
)
if [ -z "$published" ]; then
  echo "boards.sh: ncnn publishes no model times for board '$board'; give --models to time some anyway" >&2
  [ -n "$models" ] || exit 1
fi
if [ -n "$models" ]; then
  filtered=""
  for m in $models; do
    line=$(echo "$published" | awk -v m="$m" '$1 == m {print; exit}')
    filtered+="${line:-$m -}"$'\n'
  done
  published=$filtered
fi

machine=$(uname -m)
cpu=$( (grep -m1 -E '^(model name|Model)' /proc/cpuinfo 2>/dev/null || echo ": ?") | cut -d: -f2- | sed 's/^ *//')
echo "## shoal on ${board:-this machine} ($machine, $cpu, $(nproc) cores)"
echo
if [ -n "$emulator" ]; then
  echo "Under an emulator ($emulator): kernels only, no times (an emulator's speed is not a board's)."
elif [ -z "$board" ]; then
  echo "Not a known board: the times are this machine's, and the ncnn column is empty."
elif [ "$machine" != aarch64 ]; then
  echo "Not a $board ($machine): the times are this machine's, so no ratio; the ncnn column is the $board's."
fi
on_board=no
[ -n "$board" ] && [ -z "$emulator" ] && [ "$machine" = aarch64 ] && on_board=yes
echo
echo "| model | shoal ms | ncnn ms | shoal / ncnn | backend | MACs in its kernels |"
echo "|---|---|---|---|---|---|"
while read -r model ncnn; do
  [ -n "$model" ] || continue
  args=(kernels "$model" --json)
  [ -n "$emulator" ] || args+=(--repeat "$repeat")
  out=$(mktemp)
  # shellcheck disable=SC2086  # the emulator is a command line
  if ! $emulator "$SHOAL_KERNELS" "${args[@]}" > "$out"; then
    echo "boards.sh: $SHOAL_KERNELS ${args[*]} failed" >&2
    rm -f "$out"
    exit 1
  fi
  "$PYTHON" - "$out" "$model" "$ncnn" "$on_board" <<'EOF'
import json, sys
j, model, ncnn = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
if sys.argv[4] != "yes":
    ncnn_ratio_ok = False
else:
    ncnn_ratio_ok = ncnn != "-"
# oneDNN's MACs are keyed "onednn <implementation>".
own = sum(m for k, m in j["macs_by_kernel"].items() if k.split()[0] == j["backend"])
share = f'{100 * own / j["macs"]:.1f} %' if j["macs"] else "-"
lat = j.get("latency_ms")
ms = f'{lat["median"]:.1f}' if lat else "-"
# A ratio only where this is the board ncnn measured.
ratio = f'{lat["median"] / float(ncnn):.2f}' if lat and ncnn_ratio_ok else "-"
print(f'| {model} | {ms} | {ncnn} | {ratio} | {j["backend"]} | {share} |')
EOF
  rm -f "$out"
done <<< "$published"

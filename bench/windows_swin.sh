#!/bin/bash
# swin_t split by its windows (--strategy windows, and auto) on emulated
# boards, against one board: exports torchvision's swin_t (random weights,
# opset 17) with PyTorch from Debian, then measures it as the runtime
# sections do (bench/runtime_clusters.sh). ncnn publishes no Swin figure.
#
#   BOARD=pi4 SIZES=4 bash bench/windows_swin.sh
#
# Env: BOARD (default pi4), SIZES (default 4), ROUNDS (default 2),
# REQUESTS (default 3), STRATEGIES (default 'auto windows'), BUILD_DIR.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
dir=$(mktemp -d /tmp/shoal-swin-XXXXXX)
trap 'rm -rf "$dir"' EXIT
/usr/bin/python3 "$root/test/py/export_torchvision.py" "$dir" swin_t:17 > "$dir/export.log" 2>&1 ||
  { cat "$dir/export.log" >&2; echo "the swin_t export failed (python3-torch, torchvision, onnx)" >&2; exit 1; }
mv "$dir/swin_t_17.onnx" "$dir/swin_t.onnx"
BOARD=${BOARD:-pi4} PIXELS=1 MODELS="$dir/swin_t.onnx" SIZES=${SIZES:-4} \
  STRATEGIES=${STRATEGIES:-"auto windows"} LCP=' ' REQUESTS=${REQUESTS:-3} \
  ROUNDS=${ROUNDS:-2} bash "$here/runtime_clusters.sh"

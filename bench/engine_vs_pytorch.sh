#!/bin/bash
# Batch-1 latency of `shoal infer` (oneDNN) against PyTorch on the same
# networks, side by side in one run, at 1 and 2 threads; then the peak RSS
# of `shoal infer resnet18` against its bound. Prints markdown (the tables
# of docs/BENCHMARKS.md).
#
#   bench/engine_vs_pytorch.sh [--repeat N] [--rounds R] [--threads "1 2"]
#                              [--models "..."]
#   bench/engine_vs_pytorch.sh --models coverage   # the ONNX coverage set
#                                                  # (docs/models.md)
#
# Each (model, threads) pair is measured in R rounds, shoal and PyTorch one
# after the other in each; a side's figure is its best median over the
# rounds, so a burst of load from another process hits both sides alike
# rather than whichever happened to be running.
#
# Environment: SHOAL (default build/shoal), PYTHON (default /usr/bin/python3,
# Debian's PyTorch 1.13).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
SHOAL=${SHOAL:-$root/build/shoal}
PYTHON=${PYTHON:-/usr/bin/python3}
repeat=30
rounds=3
threads="1 2"
models="lenet5 alexnet vgg16 resnet18 resnet50 mobilenet_v2"
while [ $# -gt 0 ]; do
  case "$1" in
    --repeat) repeat=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    *) echo "usage: $0 [--repeat N] [--threads LIST] [--models LIST]" >&2; exit 2 ;;
  esac
done
if [ "$models" = coverage ]; then
  # The torchvision models docs/models.md covers beyond the zoo's.
  models="squeezenet1_1 mobilenet_v3_small mobilenet_v3_large efficientnet_b0 convnext_tiny vit_b_16 swin_t maxvit_t lraspp_mobilenet_v3_large deeplabv3_mobilenet_v3_large fcn_resnet50 fasterrcnn_mobilenet_v3_large_fpn fasterrcnn_resnet50_fpn retinanet_resnet50_fpn ssdlite320_mobilenet_v3_large ssd300_vgg16"
fi
[ -x "$SHOAL" ] || { echo "no shoal binary at $SHOAL (make build)" >&2; exit 1; }
"$PYTHON" -c "import torch, torchvision" 2>/dev/null ||
  { echo "$PYTHON cannot import torch and torchvision" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
json() { "$PYTHON" -c "import json,sys; j=json.load(sys.stdin); print($1)"; }

# Peak fp32 FLOP/s of one core: FMA units x SIMD lanes x 2 flops x clock.
# AVX2 + FMA (Zen 2/3, Haswell and later): 2 x 8 x 2 = 32 flop/cycle. The
# clock is measured (a dependent add chain), since in a VM lscpu shows only
# the nominal one.
flags=$(grep -m1 '^flags' /proc/cpuinfo)
if [[ $flags == *avx512f* ]]; then lanes=16; elif [[ $flags == *avx2* && $flags == *fma* ]]; then lanes=8; else lanes=4; fi
flop_per_cycle=$((2 * lanes * 2))
cc -O2 "$here/clock_ghz.c" -o "$work/clock_ghz"
ghz=$("$work/clock_ghz")
nominal_mhz=$(grep -m1 'cpu MHz' /proc/cpuinfo | awk '{print $4}')
cpu=$(lscpu | sed -n 's/^Model name: *//p')

"$PYTHON" "$here/torch_side.py" export "$work" $models

echo "Machine: $cpu, $(nproc) cores, nominal ${nominal_mhz} MHz, measured ${ghz} GHz;"
echo "peak = ${flop_per_cycle} flop/cycle/core x ${ghz} GHz = $(awk "BEGIN{printf \"%.1f\", $flop_per_cycle*$ghz}") GFLOP/s per core."
echo "Runs: $repeat timed after warm-up, median, best of $rounds rounds; batch 1;"
echo "$(date -u +%Y-%m-%d), load average before: $(cut -d' ' -f1-3 /proc/loadavg)."
echo
echo "| model | threads | shoal ms | PyTorch ms | ratio (PyTorch/shoal) | shoal GFLOP/s | % of peak |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for m in $models; do
  macs=$("$SHOAL" analyze "$work/$m.onnx" --json | json "j['total']['macs']")
  for t in $threads; do
    s=inf p=inf
    for ((r = 0; r < rounds; ++r)); do
      s_r=$("$SHOAL" infer "$work/$m.onnx" --input-seed 1 --threads "$t" \
              --repeat "$repeat" --json | json "j['latency_ms']['median']")
      p_r=$("$PYTHON" "$here/torch_side.py" time "$m" "$t" "$repeat" 3 |
              json "j['latency_ms']['median']")
      s=$(awk -v a="$s" -v b="$s_r" 'BEGIN{print (a == "inf" || b < a) ? b : a}')
      p=$(awk -v a="$p" -v b="$p_r" 'BEGIN{print (a == "inf" || b < a) ? b : a}')
    done
    awk -v m="$m" -v t="$t" -v s="$s" -v p="$p" -v macs="$macs" \
        -v peak="$(awk "BEGIN{print $flop_per_cycle*$ghz*$t}")" 'BEGIN {
      gf = 2 * macs / (s / 1e3) / 1e9
      r = p / s
      printf "| %s | %d | %.2f | %.2f | %.2f%s | %.1f | %.0f%% |\n",
             m, t, s, p, r, (r < 1 ? " (slower)" : ""), gf, 100 * gf / peak }'
  done
done

echo
echo "Load average after: $(cut -d' ' -f1-3 /proc/loadavg)."

# Where shoal's time goes: `shoal infer --profile` at the first thread
# count, the three ops (with the kernel that ran them) of largest share.
t1=${threads%% *}
echo
if [ "$t1" = 1 ]; then t1_text="1 thread"; else t1_text="$t1 threads"; fi
echo "Where shoal's time goes ($t1_text, \`shoal infer --profile\`, each step timed alone):"
echo
echo "| model | the three largest ops: share of the run (kernel) |"
echo "|---|---|"
for m in $models; do
  "$SHOAL" infer "$work/$m.onnx" --input-seed 1 --threads "$t1" \
      --repeat "$repeat" --profile --json |
    "$PYTHON" -c "
import json, sys
p = json.load(sys.stdin)['profile']
top = ', '.join('%s %.0f %% (%s)' % (o['op'], 100 * o['ms'] / p['total_ms'], o['kernel'])
                for o in p['ops'][:3])
print('| $m | %s |' % top)"
done

# Peak RSS of the zoo's resnet18 against weights + peak activations + 40 MB.
echo
a=$("$SHOAL" analyze resnet18 --json)
w=$(echo "$a" | json "j['total']['weight_bytes']")
act=$(echo "$a" | json "j['total']['peak_activation_bytes']")
rss=$("$SHOAL" infer resnet18 --input-seed 1 --repeat 5 --json |
        json "j['peak_rss_bytes']")
bound=$((w + act + 40 * 1024 * 1024))
verdict=$([ "$rss" -le "$bound" ] && echo "within" || echo "OVER")
awk -v w="$w" -v a="$act" -v r="$rss" -v b="$bound" -v v="$verdict" 'BEGIN {
  mb = 1024 * 1024
  print "| shoal infer resnet18 | MiB |"
  print "|---|---:|"
  printf "| weights | %.1f |\n| peak activations | %.1f |\n", w / mb, a / mb
  printf "| bound (weights + activations + 40 MiB) | %.1f |\n", b / mb
  printf "| peak RSS | %.1f (%s the bound) |\n", r / mb, v }'

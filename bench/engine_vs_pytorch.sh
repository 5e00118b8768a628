#!/bin/bash
# Batch-1 latency of `shoal infer` (oneDNN) against PyTorch on the same
# networks, side by side in one run, at 1 and 2 threads; then the peak RSS
# of `shoal infer resnet18` against its bound. Prints markdown (bash
# bench/run_all.sh engine writes it into docs/BENCHMARKS.md).
#
#   bench/engine_vs_pytorch.sh [--repeat N] [--rounds R] [--threads "1 2"]
#                              [--models "..."] [--rss 0|1]
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
rss=1
while [ $# -gt 0 ]; do
  case "$1" in
    --repeat) repeat=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --rss) rss=$2; shift 2 ;;
    *) echo "usage: $0 [--repeat N] [--rounds R] [--threads LIST] [--models LIST] [--rss 0|1]" >&2; exit 2 ;;
  esac
done
coverage=0
if [ "$models" = coverage ]; then
  coverage=1
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

cat <<TXT
The same network on both sides: PyTorch runs the torchvision model (random
weights, \`eval()\`, \`torch.no_grad()\`, \`torch.set_num_threads(T)\`, 3
warm-up runs, then $repeat timed, median); shoal runs the ONNX file
\`torch.onnx.export\` wrote from that very model (\`shoal infer model.onnx
--threads T --repeat $repeat\`: one warm-up, $repeat timed, median). LeNet-5 is a
small torch module matching the zoo's \`lenet5\` (\`bench/torch_side.py\`).
Each (model, threads) pair is measured in $rounds round(s), shoal then PyTorch in
each, and each side's figure is its best median, so that a burst of load
from another process hits both sides alike. PyTorch is Debian's
$("$PYTHON" -c "import torch; print(torch.__version__)"); batch 1.$([ $coverage = 1 ] && echo " A detection model is its backbone with
FPN or SSD's extra layers, every feature map flattened into one output.")

Peak: ${flop_per_cycle} flop/cycle/core (FMA pipes x SIMD lanes x 2) at the clock a
busy core runs at, measured by \`bench/clock_ghz.c\` (a chain of dependent
adds timed in thread CPU time; nominal ${nominal_mhz} MHz): ${ghz} GHz, so
$(awk "BEGIN{printf \"%.1f\", $flop_per_cycle*$ghz}") GFLOP/s per core. GFLOP/s = 2 x MACs (\`shoal analyze\`) / median latency.

TXT
echo "| model | threads | shoal ms | PyTorch ms | ratio (PyTorch/shoal) | shoal GFLOP/s | % of peak |"
echo "|---|---:|---:|---:|---:|---:|---:|"
: > "$work/rows"
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
             m, t, s, p, r, (r < 1 ? " (slower)" : ""), gf, 100 * gf / peak }' |
      tee -a "$work/rows"
  done
done

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

if [ "$rss" = 1 ]; then
  # Peak RSS of the zoo's resnet18 against weights + peak activations + 40 MB.
  echo
  echo "Peak memory of \`shoal infer resnet18 --input-seed 1 --repeat 5\` (the zoo model, seeded weights): peak RSS is \`ru_maxrss\`; weights and peak activations from \`shoal analyze resnet18\`."
  echo
  a=$("$SHOAL" analyze resnet18 --json)
  w=$(echo "$a" | json "j['total']['weight_bytes']")
  act=$(echo "$a" | json "j['total']['peak_activation_bytes']")
  rss_bytes=$("$SHOAL" infer resnet18 --input-seed 1 --repeat 5 --json |
          json "j['peak_rss_bytes']")
  bound=$((w + act + 40 * 1024 * 1024))
  verdict=$([ "$rss_bytes" -le "$bound" ] && echo "within" || echo "OVER")
  awk -v w="$w" -v a="$act" -v r="$rss_bytes" -v b="$bound" -v v="$verdict" 'BEGIN {
    mb = 1024 * 1024
    print "| shoal infer resnet18 | MiB |"
    print "|---|---:|"
    printf "| weights | %.1f |\n| peak activations | %.1f |\n", w / mb, a / mb
    printf "| bound (weights + activations + 40 MiB) | %.1f |\n", b / mb
    printf "| peak RSS | %.1f (%s the bound) |\n", r / mb, v }'
fi

# The reading: how many rows shoal wins, and the range of the ratios.
echo
python3 - "$work/rows" <<'PY'
import sys
rows = [l.split("|") for l in open(sys.argv[1]) if l.startswith("|")]
r = [(c[1].strip(), c[2].strip(), float(c[5].split()[0]), int(c[7].strip().rstrip("%"))) for c in rows]
won = [x for x in r if x[2] >= 1]
lost = ", ".join(f"{m} at {t} thread{'s' if t != '1' else ''} ({q:.2f})" for m, t, q, _ in r if q < 1)
one = [x[3] for x in r if x[1] == "1"]
print(f"Reading: shoal is faster than PyTorch in {len(won)} of {len(r)} rows "
      f"(PyTorch/shoal {min(x[2] for x in r):.2f} to {max(x[2] for x in r):.2f})"
      + (f"; slower: {lost}" if lost else "")
      + (f"; at 1 thread it runs at {min(one)}-{max(one)} % of a core's peak." if one else ".")
      + " Both sides run oneDNN convolutions; shoal keeps activations in"
      " oneDNN's blocked layout from the first conv to the classifier, folds"
      " BatchNorm into the conv, fuses bias, activations and SiLU/HardSwish"
      " as post-ops, and plans one arena, where PyTorch reorders around each"
      " op and dispatches each separately (docs/engine.md). On a 2-core"
      " machine shared with other work, a 2-thread row loses most when one"
      " thread is descheduled: every barrier waits for it.")
PY
#!/bin/bash
# int8 against f32 in `shoal infer`: each model exported (the zoo's seeded
# weights), quantized by `shoal quantize`, and both files timed batch 1,
# interleaved, at 1 thread (a Pi-class core) and at all cores; then their
# memory: the weights as the file stores them, the file, the weights the
# executor holds, and the process's peak and resting RSS. Prints markdown
# (bash bench/run_all.sh int8 writes it into docs/BENCHMARKS.md).
#
#   bench/int8_engine.sh [--repeat N] [--rounds R] [--threads "1 2"]
#                        [--models "lenet5 alexnet ..."]
#
# Each (model, threads) pair is measured in R rounds, f32 then int8 in
# each; a side's figure is its best median over the rounds, so a burst of
# load from another process hits both sides alike.
#
# Environment: SHOAL (default build/shoal), PYTHON (default /usr/bin/python3,
# with numpy: it writes the calibration inputs).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
SHOAL=${SHOAL:-$root/build/shoal}
PYTHON=${PYTHON:-/usr/bin/python3}
repeat=10
rounds=3
threads="1 $(nproc)"
models="lenet5 alexnet resnet18 vgg16 mobilenet-v2"
while [ $# -gt 0 ]; do
  case "$1" in
    --repeat) repeat=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    *) echo "usage: $0 [--repeat N] [--rounds R] [--threads LIST] [--models LIST]" >&2; exit 2 ;;
  esac
done
[ -x "$SHOAL" ] || { echo "no shoal binary at $SHOAL (make build)" >&2; exit 1; }
"$PYTHON" -c "import numpy" 2>/dev/null ||
  { echo "$PYTHON cannot import numpy" >&2; exit 3; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
json() { "$PYTHON" -c "import json,sys; j=json.load(sys.stdin); print($1)"; }

# Calibration inputs for any input shape: 8 image-like inputs (smooth
# random fields in [0, 1] plus a little noise, normalised with ImageNet's
# mean and std), a stack [8, ...]. The weights are random, so accuracy is
# not the point: the scales only need activations of a plausible range.
calibration() {  # SHAPE (1xCxHxW) FILE
  "$PYTHON" - "$1" "$2" <<'PY'
import sys
import numpy as np
shape = [int(d) for d in sys.argv[1].split("x")][1:]
c, h, w = shape
rng = np.random.default_rng(1)
low = rng.random((8, c, max(1, h // 32), max(1, w // 32)), dtype=np.float32)
img = np.kron(low, np.ones((32, 32), np.float32))[:, :, :h, :w]
img = np.pad(img, ((0, 0), (0, 0), (0, h - img.shape[2]), (0, w - img.shape[3])), mode="edge")
img = np.clip(img + 0.1 * rng.standard_normal(img.shape, dtype=np.float32), 0, 1)
if c == 3:
    mean = np.array([0.485, 0.456, 0.406], np.float32)[:, None, None]
    std = np.array([0.229, 0.224, 0.225], np.float32)[:, None, None]
    img = (img - mean) / std
np.save(sys.argv[2], img.astype(np.float32))
PY
}

# rss FILE REPEAT: "PEAK_KIB REST_KIB" of `shoal infer FILE` at 1 thread:
# VmHWM, and the median VmRSS over the second half of the run (after
# loading, while it infers), sampled from /proc every 50 ms.
rss() {
  "$SHOAL" infer "$1" --input-seed 1 --threads 1 --repeat "$2" > /dev/null &
  local pid=$! hwm=0 l samples=()
  while kill -0 "$pid" 2> /dev/null; do
    l=$(awk '/^VmHWM|^VmRSS/ { printf "%s ", $2 }' "/proc/$pid/status" 2> /dev/null || true)
    if [ -n "$l" ]; then hwm=${l%% *}; l=${l% }; samples+=("${l##* }"); fi
    sleep 0.05
  done
  wait "$pid"
  local n=${#samples[@]}
  printf '%s\n' "${samples[@]:$((n / 2))}" | sort -n |
    awk -v h="$hwm" '{ a[NR] = $1 } END { print h, a[int((NR + 1) / 2)] }'
}

for m in $models; do
  "$SHOAL" export "$m" -o "$work/$m.onnx" > /dev/null
  shape=$("$SHOAL" zoo 2>/dev/null | awk -v m="$m" '$1 == m { print $2 }')
  calib=()
  if [ "$shape" != 1x1x28x28 ] || [ ! -d /usr/share/datasets/fashion-mnist ]; then
    calibration "$shape" "$work/$m.calib.npy"
    calib=(--calibration "$work/$m.calib.npy")
  fi
  "$SHOAL" quantize "$work/$m.onnx" -o "$work/$m.int8.onnx" "${calib[@]}" --json \
    > "$work/$m.quantize.json"
done

cat <<TXT
Each model is the zoo's, with its seeded random weights, exported to ONNX
(\`shoal export\`) and quantized from that file by \`shoal quantize\`
(int8 weights, a scale per output channel; BatchNorm folded first), so
both sides hold the same weights. Calibration: LeNet-5 on 300 Fashion-MNIST
training images; the 224x224 models on 8 image-like random inputs (smooth
random fields with noise, ImageNet-normalised) written by the script: the
weights are random, so accuracy is not the point here, only the
speed and the memory (docs/lcp.md measures accuracy on trained models).
Time: \`shoal infer FILE --input-seed 1 --threads T --repeat $repeat --json\`,
median of $repeat after one warm-up, f32 then int8 in each of $rounds round(s),
each side's best median. Batch 1.

TXT
echo "| model | threads | f32 ms | int8 ms | int8 / f32 |"
echo "|---|---:|---:|---:|---:|"
: > "$work/speed"
for m in $models; do
  for t in $threads; do
    f=inf q=inf qerr=
    for ((r = 0; r < rounds; ++r)); do
      f_r=$("$SHOAL" infer "$work/$m.onnx" --input-seed 1 --threads "$t" \
              --repeat "$repeat" --json | json "j['latency_ms']['median']")
      f=$(awk -v a="$f" -v b="$f_r" 'BEGIN{print (a == "inf" || b < a) ? b : a}')
      if [ -z "$qerr" ]; then
        if q_r=$("$SHOAL" infer "$work/$m.int8.onnx" --input-seed 1 --threads "$t" \
                   --repeat "$repeat" --json 2> "$work/err" |
                   json "j['latency_ms']['median']" 2> /dev/null); then
          q=$(awk -v a="$q" -v b="$q_r" 'BEGIN{print (a == "inf" || b < a) ? b : a}')
        else
          qerr=$(tail -1 "$work/err" | sed 's/^shoal: error: //')
        fi
      fi
    done
    echo "$m $t $f $q $qerr" >> "$work/speed"
    if [ -n "$qerr" ]; then
      printf '| %s | %s | %.3g | fails: `%s` | - |\n' "$m" "$t" "$f" "$qerr"
    else
      awk -v m="$m" -v t="$t" -v f="$f" -v q="$q" 'BEGIN {
        printf "| %s | %s | %.3g | %.3g | %.2f |\n", m, t, f, q, q / f }'
    fi
  done
done

echo
echo "Memory. Stored: the weights as the file holds them (int8 where a"
echo "DequantizeLinear reads them, f32 elsewhere: biases, scales), from"
echo "\`shoal quantize --json\`, and the file. Held: the weights the executor"
echo "holds after building (\`shoal infer --json\` weight_bytes). Peak RSS is"
echo "VmHWM of \`shoal infer FILE --threads 1\` (loading included); at rest, the"
echo "median VmRSS while it infers, after loading. MiB."
echo
echo "| model | weights stored f32 -> int8 | file f32 -> int8 | weights held f32 -> int8 | peak RSS f32 -> int8 | RSS at rest f32 -> int8 |"
echo "|---|---:|---:|---:|---:|---:|"
: > "$work/mem"
for m in $models; do
  # Long enough that most samples fall after loading: about 2 s of runs.
  ms=$(awk -v m="$m" '$1 == m && $2 == 1 { print $3 }' "$work/speed")
  n=$(awk -v ms="$ms" 'BEGIN { n = int(2000 / ms) + 2; print (n > 100000 ? 100000 : n) }')
  fw=$("$SHOAL" infer "$work/$m.onnx" --input-seed 1 --threads 1 --json | json "j['weight_bytes']")
  read -r fp fr < <(rss "$work/$m.onnx" "$n")
  if qw=$("$SHOAL" infer "$work/$m.int8.onnx" --input-seed 1 --threads 1 --json 2> /dev/null |
            json "j['weight_bytes']" 2> /dev/null); then
    read -r qp qr < <(rss "$work/$m.int8.onnx" "$n")
  else
    qw=- qp=- qr=-
  fi
  "$PYTHON" - "$work/$m.quantize.json" "$(stat -c %s "$work/$m.onnx")" \
      "$fw" "$qw" "$fp" "$qp" "$fr" "$qr" "$m" <<'PY' | tee -a "$work/mem"
import json, sys
q = json.load(open(sys.argv[1]))
f_file, fw, qw, fp, qp, fr, qr, m = sys.argv[2:10]
mib = 1 << 20
def pair(a, b, unit):  # "a -> b (b/a x)", or the f32 side alone
    if b == "-":
        return f"{float(a) * unit / mib:.1f} -> int8 fails"
    a, b = float(a) * unit, float(b) * unit
    return f"{a / mib:.1f} -> {b / mib:.1f} ({b / a:.2f}x)"
w = q["weight_bytes"]
print(f"| {m} | {pair(w['f32'], w['int8'], 1)} | {pair(f_file, q['file_bytes'], 1)} "
      f"| {pair(fw, qw, 1)} | {pair(fp, qp, 1024)} | {pair(fr, qr, 1024)} |")
PY
done

# The reading, computed from the two tables.
echo
"$PYTHON" - "$work/speed" "$work/mem" <<'PY'
import re, sys
speed = [l.split(maxsplit=4) for l in open(sys.argv[1])]
ok = [(m, t, float(f), float(q)) for m, t, f, q, *e in speed if not e]
failed = sorted({(m, e[0].strip()) for m, t, f, q, *e in speed if e})
out = []
for t in sorted({t for _, t, _, _ in ok}, key=int):
    r = [(q / f, m) for m, tt, f, q in ok if tt == t]
    lo, hi = min(r), max(r)
    out.append(f"at {t} thread{'s' if t != '1' else ''} int8 takes {lo[0]:.2f}x ({lo[1]}) "
               f"to {hi[0]:.2f}x ({hi[1]}) the f32 time")
mem = [l for l in open(sys.argv[2]) if l.startswith("|")]
def ratios(col):
    vals = []
    for l in mem:
        c = l.split("|")[1:-1]
        x = re.search(r"\(([\d.]+)x\)", c[col])
        if x:
            vals.append((float(x.group(1)), c[0].strip()))
    return vals
stored, held, peak, rest = ratios(1), ratios(3), ratios(4), ratios(5)
def span(v):
    return f"{min(v)[0]:.2f}x to {max(v)[0]:.2f}x"
text = "Reading: " + "; ".join(out) + "."
text += (f" The stored weights take {span(stored)} their f32 bytes and the executor "
         f"holds {span(held)}")
if peak:
    text += (f"; the process's peak RSS is {span(peak)} the f32 one's and its RSS at rest "
             f"{span(rest)}")
    worse = [m for r, m in peak if r > 1.1]
    if worse:
        text += (f", more than f32 for {', '.join(worse)}: the quarter-size weights are "
                 "what the file and the executor's kernels hold, not yet what the process "
                 "holds")
text += "."
# What a 1 GiB device could load: the peak, not the file, is what must fit.
fits = {"f32": [], "int8": []}
for l in mem:
    c = l.split("|")[1:-1]
    x = re.match(r"\s*([\d.]+) -> ([\d.]+)", c[4])
    if x:
        for side, v in zip(("f32", "int8"), x.groups()):
            if float(v) <= 1024:
                fits[side].append(c[0].strip())
if peak:
    text += (f" Peak RSS within 1 GiB: f32 {', '.join(fits['f32']) or 'none'}; "
             f"int8 {', '.join(fits['int8']) or 'none'}.")
if failed:
    text += " int8 fails to run on oneDNN for " + "; ".join(
        f"{m} (`{e}`)" for m, e in failed) + "."
print(text)
PY

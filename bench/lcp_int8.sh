#!/bin/bash
# LCP branches in int8: lenet5 and lenet-fc as original, split2, split4,
# split8 and split8 fattened 40 %, each trained from scratch by `shoal lcp
# train` (the recipe of bench/lcp_accuracy.sh), then quantized by `shoal
# quantize --evaluate` (calibrated on 300 Fashion-MNIST training images)
# and both models run by shoal's engine on the 10 000 test images. Prints
# the markdown table and, unless --no-docs, writes it into
# docs/BENCHMARKS.md between the lcp-int8 markers.
#
#   bench/lcp_int8.sh [--epochs N] [--threads T] [--jobs J] [--lr LR]
#                     [--lr-decay D] [--seed S] [--variants "1:0 2:0 ..."]
#                     [--models "lenet5 lenet-fc"] [--limit N] [--no-docs]
#
# A variant is BRANCHES:FATTEN_PCT; --limit N trains on the first N training
# images only (a quick check of the script, not a table). About 8 minutes on the 2-core
# development machine (2 trainings at a time, one libtorch thread each).
#
# Environment: SHOAL (default build/shoal); OMP_WAIT_POLICY defaults to
# PASSIVE, as in bench/lcp_accuracy.sh (a spinning libtorch thread that
# loses its core makes training 10x slower).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
SHOAL=${SHOAL:-$root/build/shoal}
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
epochs=8
threads=1
jobs=2
lr=1e-2
lr_decay=0.6
seed=1
models="lenet5 lenet-fc"
variants="1:0 2:0 4:0 8:0 8:40"
write_docs=1
limit=()
while [ $# -gt 0 ]; do
  case "$1" in
    --epochs) epochs=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --lr) lr=$2; shift 2 ;;
    --lr-decay) lr_decay=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --variants) variants=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --limit) limit=(--limit "$2"); shift 2 ;;
    --no-docs) write_docs=0; shift ;;
    *) echo "usage: $0 [--epochs N] [--threads T] [--jobs J] [--lr LR] [--lr-decay D] [--seed S] [--variants LIST] [--models LIST] [--limit N] [--no-docs]" >&2
       exit 2 ;;
  esac
done
[ -x "$SHOAL" ] || { echo "no shoal binary at $SHOAL (make build)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
# One job per model variant, $jobs at a time: train, then quantize and
# evaluate while the other job trains.
run_one() {
  local m=$1 k=$2 f=$3 base="$work/$1-$2-$3"
  echo "training $m branches $k fatten $f% ($epochs epochs)" >&2
  "$SHOAL" lcp train "$m" --branches "$k" --fatten "$f" \
    --dataset fashion-mnist --epochs "$epochs" --threads "$threads" \
    --lr "$lr" --lr-decay "$lr_decay" --seed "$seed" "${limit[@]}" \
    -o "$base.onnx" --json >"$base.train.json" 2>"$base.log" ||
    { echo "training $m branches $k fatten $f% failed:" >&2
      tail -5 "$base.log" >&2; return 1; }
  # Where oneDNN cannot run the int8 model, the row is measured on the
  # reference backend (the engine's int8 oracle) and says why.
  if ! "$SHOAL" quantize "$base.onnx" -o "$base.int8.onnx" --evaluate --json \
      >"$base.int8.json" 2>"$base.onednn.err"; then
    echo "$m branches $k fatten $f%: $(tail -1 "$base.onednn.err"); rerunning on the reference backend" >&2
    "$SHOAL" quantize "$base.onnx" -o "$base.int8.onnx" --evaluate --json \
      --backend reference >"$base.int8.json" 2>>"$base.log" ||
      { echo "quantizing $m branches $k fatten $f% failed:" >&2
        tail -5 "$base.int8.json" "$base.log" >&2; return 1; }
  else
    rm -f "$base.onednn.err"
  fi
  stat -c %s "$base.onnx" >"$base.f32.bytes"
}
pids=()
for m in $models; do
  for v in $variants; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
    run_one "$m" "${v%%:*}" "${v##*:}" &
    pids+=($!)
  done
done
failed=0
for p in "${pids[@]}"; do wait "$p" || failed=1; done
[ "$failed" = 0 ] || { echo "some models failed" >&2; exit 1; }
total=$(( $(date +%s) - start ))

table=$(python3 - "$work" "$models" "$variants" <<'PY'
import json, os, sys
work, models, variants = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
def name(m, k, f):
    base = {"lenet5": "LeNet-5", "lenet-fc": "LeNet-FC"}.get(m, m)
    s = base if k == "1" else f"{base}-split{k}"
    return s + (f"-f{f}" if f != "0" else "")
def kib(b):
    return f"{b / 1024:.1f}"
print("| model | f32 accuracy | int8 accuracy | change (points) | images that change class | weights KiB f32 -> int8 | file KiB f32 -> int8 |")
print("|---|---:|---:|---:|---:|---:|---:|")
rows, mismatch, fallback = [], [], []
for m in models:
    for v in variants:
        k, f = v.split(":")
        base = f"{work}/{m}-{k}-{f}"
        t = json.load(open(base + ".train.json"))
        q = json.load(open(base + ".int8.json"))
        e = q["evaluation"]
        f32_file = int(open(base + ".f32.bytes").read())
        w = q["weight_bytes"]
        n = name(m, k, f)
        if os.path.exists(base + ".onednn.err"):
            err = open(base + ".onednn.err").read().strip().splitlines()[-1]
            err = err.removeprefix("shoal: error: ").split(": ")[-1]
            fallback.append((n, err))
            n += " †"
        # The f32 model quantize evaluates is the one lcp train wrote and
        # tested with the same engine: the two must agree.
        if abs(e["f32_accuracy"] - t["engine_test_accuracy"]) > 1e-9:
            mismatch.append(n)
        rows.append((n, e, w, f32_file, q["file_bytes"]))
        print(f"| {n} | {100 * e['f32_accuracy']:.2f} % | {100 * e['int8_accuracy']:.2f} % "
              f"| {e['change_points']:+.2f} | {e['changed_class']} of {e['images']} "
              f"| {kib(w['f32'])} -> {kib(w['int8'])} ({w['int8'] / w['f32']:.2f}x) "
              f"| {kib(f32_file)} -> {kib(q['file_bytes'])} ({q['file_bytes'] / f32_file:.2f}x) |")
print()
if fallback:
    errs = sorted({e for _, e in fallback})
    print(f"† {len(fallback)} of {len(rows)} int8 models fail to build on the oneDNN "
          f"backend (`shoal quantize --evaluate`: {'; '.join('`' + e + '`' for e in errs)}); "
          "both models of those rows ran on the reference backend, the engine's "
          "int8 oracle (the same int8 values; its sums differ from oneDNN's only "
          "by f32 rounding).")
    print()
worst = min(rows, key=lambda r: r[1]["change_points"])
best = max(rows, key=lambda r: r[1]["change_points"])
most = max(rows, key=lambda r: r[1]["changed_class"])
ratios = [r[2]["int8"] / r[2]["f32"] for r in rows]
files = sorted((r[4] / r[3], r[0]) for r in rows)
within = sum(abs(r[1]["change_points"]) <= 0.5 for r in rows)
print(f"Reading: int8 changes the accuracy by {worst[1]['change_points']:+.2f} "
      f"({worst[0]}) to {best[1]['change_points']:+.2f} points ({best[0]}); "
      f"{within} of {len(rows)} models within half a point. At most "
      f"{most[1]['changed_class']} of {most[1]['images']} test images "
      f"({100 * most[1]['changed_class'] / most[1]['images']:.2f} %, {most[0]}) change "
      f"class, in both directions, so the accuracy moves less than the predictions do. "
      f"The weights take {min(ratios):.2f}x to {max(ratios):.2f}x their f32 bytes "
      f"(int8 values, f32 biases and per-channel scales); the files {files[0][0]:.2f}x "
      f"({files[0][1]}) to {files[-1][0]:.2f}x ({files[-1][1]}), since each quantized "
      f"layer adds a QuantizeLinear, two DequantizeLinear and their named scales "
      f"to the graph, which in a small branched model weighs as much as its weights. "
      + ("The f32 accuracy equals the one `lcp train` reported on every row."
         if not mismatch else
         f"The f32 accuracy differs from the one `lcp train` reported on: {', '.join(mismatch)}."))
PY
)

cpu=$(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -1)
load=$(cut -d' ' -f1-3 /proc/loadavg)
header="Measured $(date -u +%Y-%m-%d) on ${cpu:-unknown CPU}, $(nproc) cores, by
\`bench/lcp_int8.sh --epochs $epochs --lr $lr --lr-decay $lr_decay --seed $seed\`
(\`shoal lcp train MODEL --branches K --fatten F --dataset fashion-mnist
--epochs $epochs --lr $lr --lr-decay $lr_decay\`, as in the table above, then
\`shoal quantize MODEL.onnx -o MODEL.int8.onnx --evaluate\`; $jobs models at a
time, libtorch threads each: $([ "$threads" = 0 ] && echo "all cores" || echo "$threads"),
OMP_WAIT_POLICY=$OMP_WAIT_POLICY; load average at the end $load).
Whole table: $((total / 60)) min $((total % 60)) s.
Accuracy is top-1 on the 10 000 Fashion-MNIST test images, both models run by
shoal's engine (the int8 one on oneDNN's int8 kernels); calibration: the first
300 training images. \"Change\" in percentage points; an image that changes
class is one whose predicted class differs between the two models."
echo "$header"
echo
echo "$table"

if [ "$write_docs" = 1 ]; then
  # Measured results live in BENCHMARKS.md (docs/lcp.md points there).
  doc="$root/docs/BENCHMARKS.md"
  printf '## %s\n\n%s\n\n%s\n' "LCP branches in int8: accuracy and size" "$header" "$table" > "$work/block.md"
  python3 "$here/write_block.py" "$doc" lcp-int8 "$work/block.md"
  echo "wrote the table into $doc" >&2
fi

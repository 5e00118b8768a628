#!/bin/bash
# LCP accuracy on Fashion-MNIST, the paper's Table II form: lenet5 and
# lenet-fc as original, split2, split4, split8 and split8 fattened 10-40 %,
# each trained from scratch by `shoal lcp train` (libtorch, the paper's
# recipe) and tested on the 10 000 test images by the trainer and by shoal's
# engine running the written ONNX. Prints the markdown table and, unless
# --no-docs, writes it into docs/BENCHMARKS.md between the lcp-accuracy
# markers.
#
#   bench/lcp_accuracy.sh [--epochs N] [--threads T] [--jobs J] [--lr LR]
#                         [--lr-decay D] [--seed S]
#                         [--models "lenet5 lenet-fc"] [--no-docs]
#
# Defaults: 8 epochs, lr 1e-2 (the paper's) decayed by 0.6 per epoch (the
# paper's 0.94 is for 12+ epochs; in 8 it would end at lr 6e-3, where the
# test accuracy moves by points from one epoch to the next), He initial
# weights (shoal lcp train's default; see docs/lcp.md), 2 trainings at a
# time with one libtorch thread each.
#
# Goals (issue 6): every split-only model within 3 points of its original
# (the paper's Task_error), fattened split8 within 1 point; the whole table
# in under 30 minutes on the 2-core development machine.
#
# Environment: SHOAL (default build/shoal). OMP_WAIT_POLICY defaults to
# PASSIVE here: libtorch's OpenMP threads spin while they wait, and on a
# machine shared with other work a spinning thread that loses its core
# makes a batch 10x slower (measured: 36 ms at 1 thread, 500 ms at 2).
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
write_docs=1
while [ $# -gt 0 ]; do
  case "$1" in
    --epochs) epochs=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --lr) lr=$2; shift 2 ;;
    --lr-decay) lr_decay=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --no-docs) write_docs=0; shift ;;
    *) echo "usage: $0 [--epochs N] [--threads T] [--jobs J] [--lr LR] [--lr-decay D] [--seed S] [--models LIST] [--no-docs]" >&2
       exit 2 ;;
  esac
done
[ -x "$SHOAL" ] || { echo "no shoal binary at $SHOAL (make build)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
variants="1:0 2:0 4:0 8:0 8:10 8:20 8:30 8:40"
start=$(date +%s)
# One job per model variant, $jobs at a time: small models keep one core
# busy better than two libtorch threads share it.
train_one() {
  local m=$1 k=$2 f=$3
  echo "training $m branches $k fatten $f% ($epochs epochs)" >&2
  "$SHOAL" lcp train "$m" --branches "$k" --fatten "$f" \
    --dataset fashion-mnist --epochs "$epochs" --threads "$threads" \
    --lr "$lr" --lr-decay "$lr_decay" --seed "$seed" \
    -o "$work/$m-$k-$f.onnx" --json >"$work/$m-$k-$f.json" 2>"$work/$m-$k-$f.log" ||
    { echo "training $m branches $k fatten $f% failed:" >&2
      tail -5 "$work/$m-$k-$f.log" >&2; return 1; }
}
pids=()
for m in $models; do
  for v in $variants; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
    train_one "$m" "${v%%:*}" "${v##*:}" &
    pids+=($!)
  done
done
failed=0
for p in "${pids[@]}"; do wait "$p" || failed=1; done
[ "$failed" = 0 ] || { echo "some trainings failed" >&2; exit 1; }
total=$(( $(date +%s) - start ))

table=$(python3 - "$work" "$models" "$variants" <<'PY'
import json, sys
work, models, variants = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
def name(m, k, f):
    base = {"lenet5": "LeNet-5", "lenet-fc": "LeNet-FC"}.get(m, m)
    s = base if k == "1" else f"{base}-split{k}"
    return s + (f"-f{f}" if f != "0" else "")
print("| model | test accuracy (trainer) | engine, same images | vs original | goal | params | MACs | train s |")
print("|---|---|---|---|---|---|---|---|")
summary = []
for m in models:
    orig = None
    split_ok, split_n, fat_ok = 0, 0, []
    for v in variants:
        k, f = v.split(":")
        j = json.load(open(f"{work}/{m}-{k}-{f}.json"))
        acc = 100 * j["test_accuracy"]
        if orig is None:
            orig = acc
        d = acc - orig
        if k == "1":
            goal, delta = "-", "-"
        else:
            bound = 1.0 if f != "0" else 3.0
            goal = ("met" if d >= -bound else "missed") + f" (within {bound:g})"
            if f == "0":
                split_n += 1
                split_ok += d >= -bound
            elif d >= -bound:
                fat_ok.append(f"f{f}")
            delta = f"{d:+.2f}"
        print(f"| {name(m, k, f)} | {acc:.2f} % | {100 * j['engine_test_accuracy']:.2f} % "
              f"| {delta} | {goal} | {j['params']:,} | {j['macs']:,} | {j['train_seconds']:.0f} |")
    if split_n:
        summary.append(f"{name(m, '1', '0')}: {split_ok} of {split_n} split-only models within 3 points "
                       f"of the original; fattened split8 within 1 point: "
                       f"{', '.join(fat_ok) if fat_ok else 'none'}.")
print()
for s in summary:
    print(f"* {s}")
PY
)

cpu=$(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -1)
load=$(cut -d' ' -f1-3 /proc/loadavg)
header="Measured $(date -u +%Y-%m-%d) on ${cpu:-unknown CPU}, $(nproc) cores, by
\`bench/lcp_accuracy.sh --epochs $epochs --lr $lr --lr-decay $lr_decay --seed $seed\`
(\`shoal lcp train MODEL --branches K --fatten F --dataset fashion-mnist
--epochs $epochs --lr $lr --lr-decay $lr_decay\`, He initial weights; $jobs
trainings at a time, libtorch threads each: $([ "$threads" = 0 ] && echo "all cores" || echo "$threads"),
OMP_WAIT_POLICY=$OMP_WAIT_POLICY; load average at the end $load).
Whole table: $((total / 60)) min $((total % 60)) s.
Accuracy is top-1 on the 10 000 Fashion-MNIST test images; \"engine\" is shoal's
engine running the written ONNX file on the same images; \"vs original\" in
percentage points."
echo "$header"
echo
echo "$table"

if [ "$write_docs" = 1 ]; then
  # Measured results live in BENCHMARKS.md (docs/lcp.md points there).
  doc="$root/docs/BENCHMARKS.md"
  printf '## %s\n\n%s\n\n%s\n' "LCP accuracy on Fashion-MNIST (the paper's Table II form)" "$header" "$table" > "$work/block.md"
  python3 "$here/write_block.py" "$doc" lcp-accuracy "$work/block.md"
  echo "wrote the table into $doc" >&2
fi

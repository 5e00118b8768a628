#!/bin/bash
# Structured pruning of LCP models on Fashion-MNIST: each model is trained
# by `shoal lcp train`, then pruned at each ratio by `shoal lcp prune` (the
# output channels of least L1 weight norm, each branch alone) and
# fine-tuned from the pruned weights; the table gives params, MACs, weight
# bytes, test accuracy (shoal's engine on the 10 000 test images) and the
# engine's median latency of one image on this host, one thread, before
# pruning, after it and after fine-tuning. Prints the markdown table and,
# unless --no-docs, writes it into docs/BENCHMARKS.md between the
# lcp-prune markers.
#
#   bench/lcp_prune.sh [--epochs N] [--tune-epochs N] [--ratios "0.25 0.5"]
#                      [--models "lenet5:4 lenet-fc:4"] [--seed S] [--no-docs]
#
# Defaults: training 5 epochs (lr 1e-2 decayed 0.6 per epoch, as
# bench/lcp_accuracy.sh), fine-tuning 1 epoch at lr 1e-3, ratios 0.25, 0.5
# and 0.75, LeNet-5 and LeNet-FC split into 4 branches; one libtorch thread.
#
# Environment: SHOAL (default build/shoal).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
SHOAL=${SHOAL:-$root/build/shoal}
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
epochs=5
tune_epochs=1
ratios="0.25 0.5 0.75"
models="lenet5:4 lenet-fc:4"
seed=1
write_docs=1
while [ $# -gt 0 ]; do
  case $1 in
    --epochs) epochs=$2; shift 2 ;;
    --tune-epochs) tune_epochs=$2; shift 2 ;;
    --ratios) ratios=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --no-docs) write_docs=0; shift ;;
    *) echo "usage: $0 [--epochs N] [--tune-epochs N] [--ratios LIST] [--models LIST] [--seed S] [--no-docs]" >&2
       exit 64 ;;
  esac
done

work=$(mktemp -d /tmp/shoal-lcp-prune-XXXXXX)
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
for spec in $models; do
  model=${spec%%:*}
  k=${spec##*:}
  trained="$work/$model-split$k.onnx"
  echo "training $model split$k ($epochs epochs)" >&2
  "$SHOAL" lcp train "$model" --branches "$k" --dataset fashion-mnist \
    --epochs "$epochs" --lr-decay 0.6 --seed "$seed" --threads 1 \
    -o "$trained" > /dev/null
  for r in $ratios; do
    echo "pruning $model split$k at $r" >&2
    "$SHOAL" lcp prune "$trained" --ratio "$r" --dataset fashion-mnist \
      --epochs "$tune_epochs" --seed "$seed" --threads 1 --json \
      -o "$work/pruned.onnx" > "$work/$model-$k-$r.json"
  done
done
elapsed=$(( $(date +%s) - start ))

table=$(python3 - "$work" "$models" "$ratios" <<'PY'
import json, os, sys
work, models, ratios = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
print("| model | ratio | stage | params | MACs | weights | test accuracy | vs trained | latency |")
print("|---|---|---|---:|---:|---:|---:|---:|---:|")
def kib(b): return f"{b / 1024:.1f} KiB"
def row(name, ratio, stage, s, base):
    d = 100 * (s["test_accuracy"] - base["test_accuracy"])
    vs = "-" if s is base else f"{d:+.2f}"
    print(f"| {name} | {ratio} | {stage} | {s['params']:,} | {s['macs']:,} | "
          f"{kib(s['weight_bytes'])} | {100 * s['test_accuracy']:.2f} % | {vs} | "
          f"{s['latency_ms'] * 1000:.1f} us |")
for spec in models:
    model, k = spec.split(":")
    name = f"{model}-split{k}"
    first = True
    for r in ratios:
        j = json.load(open(os.path.join(work, f"{model}-{k}-{r}.json")))
        base = j["original"]
        if first:
            row(name, "-", "trained", base, base)
            first = False
        row(name, r, "pruned", j["pruned"], base)
        row(name, r, f"fine-tuned {j['epochs']} epoch", j["fine_tuned"], base)
PY
)

header="Measured $(date -u +%Y-%m-%d) on $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')),
by \`bench/lcp_prune.sh --epochs $epochs --tune-epochs $tune_epochs --seed $seed\`
(\`shoal lcp train MODEL --branches K --epochs $epochs --lr-decay 0.6\`, then
\`shoal lcp prune --ratio R --epochs $tune_epochs\` for each ratio; one libtorch
thread). Whole table: $((elapsed / 60)) min $((elapsed % 60)) s. Accuracy is
shoal's engine on the 10 000 Fashion-MNIST test images; \"vs trained\" in
percentage points; latency is the engine's median of 50 single images on this
host, one thread (a ratio between rows, not a Pi's time)."
echo "$header"
echo
echo "$table"

if [ "$write_docs" = 1 ]; then
  # Measured results live in BENCHMARKS.md (docs/lcp.md points there).
  doc="$root/docs/BENCHMARKS.md"
  printf '## %s\n\n%s\n\n%s\n' "LCP pruning on Fashion-MNIST: the trade-off" "$header" "$table" > "$work/block.md"
  python3 "$here/write_block.py" "$doc" lcp-prune "$work/block.md"
  echo "wrote the table into $doc" >&2
fi

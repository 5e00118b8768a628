#!/bin/bash
# The LCP paper's systolic array (docs/accelerator.md): each model whole and
# split into K LCP branches (fattened by F %), priced layer by layer on the
# array by `shoal analyze --accelerator` (an analytical model, no device
# needed): time on one array, and a K-th of it: one branch on an array of its own,
# how busy the cells are, DRAM traffic and energy. Writes its table into
# docs/accelerator.md between the accelerator-lcp markers: a model's
# figures, the same on any host, so the table carries no date.
#
#   bash bench/accelerator.sh              # ~1 min
#
# Env: BUILD_DIR (default build), MODELS (default "alexnet vgg16"), SPLITS
# (default "1 2 4 8"), FATTEN (default "0 50"), ACCELERATOR (default paper).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
BUILD_DIR=${BUILD_DIR:-$root/build}
shoal=$BUILD_DIR/shoal
MODELS=${MODELS:-"alexnet vgg16"}
SPLITS=${SPLITS:-"1 2 4 8"}
FATTEN=${FATTEN:-"0 50"}
ACCELERATOR=${ACCELERATOR:-paper}
[ -x "$shoal" ] || { echo "no $shoal: build first (make build)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

out=$work/table.md
{
  echo "Command: \`bash bench/accelerator.sh\` (MODELS='$MODELS' SPLITS='$SPLITS' FATTEN='$FATTEN' ACCELERATOR=$ACCELERATOR). The array: $("$shoal" analyze lenet5 --accelerator "$ACCELERATOR" | grep -m1 '^on the accelerator' | sed 's/^on the accelerator: //')."
  echo
  echo "| model | branches | fatten | MACs | one array, all branches | per branch (all / branches) | cells busy (conv / fc) | DRAM per branch | energy per inference, all branches |"
  echo "|---|---:|---:|---:|---:|---:|---|---:|---:|"
  for m in $MODELS; do
    for k in $SPLITS; do
      for f in $FATTEN; do
        [ "$k" = 1 ] && [ "$f" != 0 ] && continue
        model=$m
        if [ "$k" != 1 ]; then
          model=$work/$m-$k-$f.onnx
          "$shoal" lcp split "$m" --branches "$k" --fatten "$f" -o "$model" > /dev/null
        fi
        "$shoal" analyze "$model" --accelerator "$ACCELERATOR" --json > "$work/a.json"
        python3 - "$work/a.json" "$m" "$k" "$f" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); m, k, f = sys.argv[2], int(sys.argv[3]), sys.argv[4]
acc = j["accelerator"]
def busy(op):
    macs = sum(l["macs"] for l in j["layers"] if l["op"] == op)
    cyc = sum(l["accelerator"]["cycles"] for l in j["layers"] if l["op"] == op)
    return macs / cyc / (acc["rows"] * acc["cols"]) if cyc else 0
dram = sum(l["accelerator"]["dram_bytes"] for l in j["layers"])
print("| %s | %d | %s %% | %.2f G | %.1f ms | %.1f ms | %.0f %% / %.1f %% | %.1f MiB | %.2f mJ |" % (
    m, k, f, j["total"]["macs"] / 1e9, acc["seconds"] * 1e3, acc["seconds"] * 1e3 / k,
    100 * busy("Conv"), 100 * busy("Gemm"), dram / k / 2**20, acc["energy_j"] * 1e3))
PY
      done
    done
  done
} > "$out"
cat "$out"
python3 "$here/write_block.py" "$root/docs/accelerator.md" accelerator-lcp "$out"

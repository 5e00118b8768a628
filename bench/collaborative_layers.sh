#!/bin/bash
# The collaborative-execution paper's layer-wise figures as shoal predicts
# them on one emulated pi3-collab board: VGG16's and C3D's layers, each
# alone (its Figs. 15, 18 and 19a: latency and memory), Xception's layers
# in the model (its Fig. 16), and C3D's second convolution split over
# three boards by channel, spatial and filter splitting (its Fig. 19b).
# VGG16's and C3D's layers are rebuilt alone as ONNX files from `shoal
# analyze`'s shapes (bench/collaborative_onnx.py, PyTorch) and planned on
# one board; Xception's are the tasks of the model planned layer by layer
# (`--strategy lop`) on one board (`shoal simulate --tasks`). Predictions,
# not measurements. Prints markdown (bash bench/run_all.sh collab-layers
# writes it into docs/BENCHMARKS.md).
#
#   bash bench/collaborative_layers.sh        # under a minute
#   MODELS=c3d bash bench/collaborative_layers.sh
#
# Env: SHOAL (default $BUILD_DIR/shoal, BUILD_DIR default build), PYTHON
# (with torch and onnx, default /usr/bin/python3), MODELS (rebuilt layer
# by layer, default "vgg16 c3d"), TOP (Xception's slowest layers listed,
# default 10).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
SHOAL=${SHOAL:-${BUILD_DIR:-$root/build}/shoal}
PYTHON=${PYTHON:-/usr/bin/python3}
MODELS=${MODELS:-"vgg16 c3d"}
TOP=${TOP:-10}
[ -x "$SHOAL" ] || { echo "no shoal binary at $SHOAL (make build)" >&2; exit 1; }
"$PYTHON" -c "import torch, onnx" 2> /dev/null ||
  { echo "$PYTHON cannot import torch and onnx" >&2; exit 3; }
work=$(mktemp -d /tmp/shoal-bench-collab-layers-XXXXXX)
trap 'rm -rf "$work"' EXIT
. "$here/collaborative_lib.sh"

collab_cluster 1 "$work/c1.yaml"
collab_cluster 3 "$work/c3.yaml"
# A board that never pages: a latency's swap is the difference.
collab_cluster 1 "$work/roomy.yaml" 64GiB

# ms MODEL CLUSTER STRATEGY: simulate's median latency, one request.
ms() {
  local l _
  read -r l _ <<< "$(predict "$1" "$2" "$3" 1)"
  echo "$l"
}

echo "The collaborative-execution paper's layer-wise figures as \`shoal"
echo "simulate\` predicts them on emulated \`pi3-collab\` boards: PREDICTIONS for"
echo "boards modelled on the paper's, not measurements. The rate (1.65 GMAC/s,"
echo "1.2 GB/s reading weights: TensorFlow on a Pi 3 as the LCP paper measured"
echo "it) and the swap model are estimates (src/cluster/swap.cc): a framework"
echo "of ${COLLAB_RESIDENT_MIB} MiB, the weights once and the largest layer's $((COLLAB_LAYER_COPIES - 1)) times more, ${COLLAB_USABLE_MIB} MiB"
echo "usable of 1 GiB, paging at ${COLLAB_SWAP_MIB_S} MiB/s; the LAN is the paper's, 94.1 Mbit/s"
echo "and 0.4 ms."
echo
for m in $MODELS; do
  "$SHOAL" analyze "$m" --json > "$work/$m.json"
  # The layers with weights, as single-layer models: a dense layer of the
  # same sizes, or a convolution with the kernel its parameters imply,
  # "same" padding and the stride its shapes imply (every VGG16 and C3D
  # convolution is 3x3 or 3x3x3, stride 1). Lines: onnx-spec | name op
  # macs weight_bytes activation_bytes.
  python3 - "$work/$m.json" "$work/$m" > "$work/$m.specs" <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1]))
prefix = sys.argv[2]
for i, l in enumerate(d["layers"]):
    if l["params"] == 0 or l["op"] not in ("Conv", "Gemm", "MatMul"):
        continue
    x, y = l["input_shapes"][0], l["output_shape"]
    out = f"{prefix}-{i}.onnx"
    if l["op"] != "Conv":
        spec = f"{out} dense {x[-1]} {y[-1]}"
    else:
        c, k, space = x[1], y[1], x[2:]
        per = (l["params"] - k) / (k * c)  # weights per filter per channel
        f = round(per ** (1 / len(space)))
        stride = x[-1] // y[-1]
        if f ** len(space) != per or [s // stride for s in space] != y[2:]:
            continue  # not a plain "same" convolution: not rebuilt
        kind = "conv2d" if len(space) == 2 else "conv3d"
        spec = f"{out} {kind} {c} {k} {f} {' '.join(map(str, space))} {stride}"
    act = 4 * math.prod(x) + l["output_bytes"]
    print(f"{spec}|{l['name']} {l['op']} {l['macs']} {l['params'] * 4} {act}")
PY
  cut -d'|' -f1 "$work/$m.specs" | "$PYTHON" "$here/collaborative_onnx.py" -
  total=$(python3 -c 'import json, sys; print(sum(1 for l in json.load(open(sys.argv[1]))["layers"] if l["params"]))' "$work/$m.json")
  case $m in
    vgg16) figs="Figs. 15 and 18" ;;
    c3d) figs="Figs. 15 and 19a" ;;
    *) figs="" ;;
  esac
  echo "### $m: each layer alone on one board${figs:+ ($figs)}"
  echo
  echo "Each layer with weights ($(wc -l < "$work/$m.specs") of its $total) rebuilt alone and planned on one"
  echo "1 GiB board; its ReLU and pooling are not included. Held: the memory"
  echo "the framework takes for the layer alone by the swap model's rule"
  echo "(${COLLAB_RESIDENT_MIB} MiB resident, its weights $COLLAB_LAYER_COPIES times, its input and output),"
  echo "computed here from those constants, against ${COLLAB_USABLE_MIB} MiB usable. Latency and"
  echo "swap: \`shoal simulate\`'s; swap is the latency less the same layer's on a"
  echo "board with room for everything."
  echo
  echo "| layer | op | GMAC | weights MiB | held MiB | latency s | of it swap s |"
  echo "|---|---|---:|---:|---:|---:|---:|"
  : > "$work/rows"
  while IFS='|' read -r spec info; do
    read -r f _ <<< "$spec"
    read -r name op macs wb act <<< "$info"
    lat=$(ms "$f" "$work/c1.yaml" random)
    roomy=$(ms "$f" "$work/roomy.yaml" random)
    rm -f "$f"
    # The table's row; the figures for the reading go to $work/rows.
    awk -v n="$name" -v o="$op" -v m="$macs" -v w="$wb" -v a="$act" -v l="$lat" -v r="$roomy" \
        -v res="$COLLAB_RESIDENT_MIB" -v cp="$COLLAB_LAYER_COPIES" -v rows="$work/rows" 'BEGIN {
      held = res + (cp * w + a) / 1048576
      if (l == "-" || r == "-") { printf "| %s | %s | %.2f | %.2f | %.0f | refused | - |\n", n, o, m / 1e9, w / 1048576, held; exit }
      sw = (l - r) / 1000
      printf "| %s | %s | %.2f | %.2f | %.0f | %.3f | %.1f |\n", n, o, m / 1e9, w / 1048576, held, l / 1000, sw
      printf "%s,%s,%.0f,%.3f,%.1f\n", n, o, held, l / 1000, sw >> rows }'
  done < "$work/$m.specs"
  echo
  awk -F, -v usable="$COLLAB_USABLE_MIB" -v m="$m" '
    { n++; if ($5 > 0) { swp = swp (swp ? ", " : "") $1 " (" $5 " s)" } else if ($4 > top) { top = $4; at = $1 }
      if ($3 > usable) over = over (over ? ", " : "") $1
      if ($4 > 0.2) slow++ }
    END {
      printf "Reading: on one board, %s pages in %s; of the layers that do not, the slowest is %s (%.2f s). ", m, (swp ? swp : "no layer"), at, top
      printf "By the rule, held memory exceeds %d MiB in %s. %d of %d layers take over 0.2 s. ", usable, (over ? over : "no layer"), slow, n
      print "The paper: the first dense layers of VGG16 and C3D take minutes on one Pi (swap), every other layer runs on one."
    }' "$work/rows"
  echo
done

echo "### xception: each layer in the model on one board (Fig. 16)"
echo
echo "Xception planned layer by layer on one 1 GiB board (\`--strategy lop\`:"
echo "a task per layer with weights, its batch norm, ReLU and pooling fused"
echo "in; a depthwise convolution, which lop does not split, is its own"
echo "task), and each task's predicted compute as \`shoal simulate --tasks\` lists it."
echo
"$SHOAL" plan xception --cluster "$work/c1.yaml" --strategy lop -o "$work/x.json" > /dev/null
"$SHOAL" simulate --plan "$work/x.json" --cluster "$work/c1.yaml" --requests 1 --json > "$work/xs.json"
"$SHOAL" plan xception --cluster "$work/roomy.yaml" --strategy lop -o "$work/xr.json" > /dev/null
"$SHOAL" simulate --plan "$work/xr.json" --cluster "$work/roomy.yaml" --requests 1 --json > "$work/xrs.json"
python3 - "$work/x.json" "$work/xs.json" "$work/xrs.json" "$TOP" <<'PY'
import json, sys
plan, sim, roomy = (json.load(open(p)) for p in sys.argv[1:4])
top = int(sys.argv[4])
# A task's name: its first weighted node (a depthwise convolution's task
# is named by its plan as whole#N), else its first node.
names = {}
for t in plan["tasks"]:
    nodes = t["fragment"]["nodes"]
    w = [n["name"] for n in nodes if len(n["inputs"]) > 1 and any(
        i.endswith(".weight") for i in n["inputs"])]
    names[t["name"]] = (w or [nodes[0]["name"]])[0]
tasks = [(t["compute_ms_median"], names.get(t["name"], t["name"])) for t in sim["devices"][0]["tasks"]]
tasks.sort(reverse=True)
total = sim["latency_ms"]["median"]
print(f"| the {top} slowest | compute ms |")
print("|---|---:|")
for ms, n in tasks[:top]:
    print(f"| {n} | {ms:.1f} |")
print()
over = sum(1 for ms, _ in tasks if ms > 200)
swap = (total - roomy["latency_ms"]["median"]) / 1000
print(f"Reading: {len(tasks)} tasks, {total / 1000:.2f} s in all on one board "
      f"({swap:.1f} s of it paging); the slowest, {tasks[0][1]}, is predicted at "
      f"{tasks[0][0]:.0f} ms, and {over} take over 200 ms. The paper measured "
      "every Xception layer under 0.2 s on its Pi.")
PY
echo

echo "### c3d's second convolution split over three boards (Fig. 19b)"
echo
# C3D's second convolution, its shapes from `shoal analyze`.
"$SHOAL" analyze c3d --json > "$work/c3d-shapes.json"
read -r conv2 c k space <<< "$(python3 -c '
import json, sys
convs = [l for l in json.load(open(sys.argv[1]))["layers"] if l["op"] == "Conv"]
l = convs[1]
print(l["name"], l["input_shapes"][0][1], l["output_shape"][1], " ".join(map(str, l["input_shapes"][0][2:])))' "$work/c3d-shapes.json")"
echo "C3D's $conv2 ($c to $k channels, 3x3x3, on ${space// /x}) rebuilt alone, on"
echo "one board against split over three by \`channel\`, \`spatial\` and \`filter\`;"
echo "the first board holds the input and the output (the paper's initial"
echo "sender and final receiver would add one input and one output transfer"
echo "to every row)."
echo
echo "| plan | latency s | speedup |"
echo "|---|---:|---:|"
echo "$work/conv2a.onnx conv3d $c $k 3 $space" | "$PYTHON" "$here/collaborative_onnx.py" -
one=$(ms "$work/conv2a.onnx" "$work/c1.yaml" random)
awk -v l="$one" 'BEGIN { printf "| one device | %.2f | 1.00x |\n", l / 1000 }'
best=0 best_s=
for s in channel spatial filter; do
  l=$(ms "$work/conv2a.onnx" "$work/c3.yaml" "$s")
  awk -v s="$s" -v l="$l" -v o="$one" 'BEGIN { printf "| %s on 3 | %.2f | %.2fx |\n", s, l / 1000, o / l }'
  [ "$s" = spatial ] && cp "$work/plan.json" "$work/spatial.json" && cp "$work/sim.json" "$work/spatial-sim.json"
  if awk -v l="$l" -v o="$one" -v b="$best" 'BEGIN { exit !(o / l > b) }'; then
    best=$(awk -v l="$l" -v o="$one" 'BEGIN { printf "%.2f", o / l }') best_s=$s
  fi
done
echo
# How spatial cut the layer: the axis its strips' inputs are shorter on,
# and the spread of the boards' compute.
cut=$(python3 - "$work/spatial.json" "$work/spatial-sim.json" <<'PY'
import json, sys
plan, sim = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
full = plan["input"]["shape"]
axes = {2: "frames", 3: "rows", 4: "columns"} if len(full) == 5 else {2: "rows", 3: "columns"}
cut = sorted({axes.get(a, str(a)) for t in plan["tasks"] for i in t["fragment"]["inputs"]
              for a, (n, f) in enumerate(zip(i["shape"], full)) if n != f})
ms = [d["compute_ms_median"] for d in sim["devices"]]
print(f"The spatial plan cuts its strips along the input's {' and '.join(cut) or 'no axis'}, "
      f"and its boards compute {max(ms) / 1000:.2f} s at most, {min(ms) / 1000:.2f} s at least")
PY
)
echo "Reading: the best split, $best_s, is predicted ${best}x faster than one board; the paper measured up to 2.6x with three. $cut."

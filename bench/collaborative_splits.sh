#!/bin/bash
# The collaborative-execution paper's single-layer experiments as shoal
# predicts them on emulated pi3-collab boards: its Fig. 11 (a dense layer,
# inputs 7680 and 8192, outputs 512 to 16384, on one device against output
# splitting, lop, and input splitting, lip, on two) and its Fig. 14 (one
# convolution on a 128x128 input, kernels 3x3, 5x5 and 9x9, 128 and 512
# filters, input depths 32 to 512, on one device against channel, spatial
# and filter splitting on three). Each layer is built alone as an ONNX file
# (bench/collaborative_onnx.py, PyTorch) and planned by `shoal plan
# --strategy S`; every latency is `shoal simulate`'s, one request in
# flight. Predictions, not measurements. Prints markdown (bash
# bench/run_all.sh collab-splits writes it into docs/BENCHMARKS.md).
#
#   bash bench/collaborative_splits.sh        # about 3 minutes, 2.1 GB of
#                                             # ONNX files at most in /tmp
#   DENSE_OUTPUTS="512 16384" DEPTHS="32 512" bash bench/collaborative_splits.sh
#
# Env: SHOAL (default $BUILD_DIR/shoal, BUILD_DIR default build), PYTHON
# (with torch and onnx, default /usr/bin/python3), DENSE_INPUTS (default
# "7680 8192"), DENSE_OUTPUTS (default "512 1024 2048 4096 8192 16384"),
# KERNELS (default "3 5 9"), FILTERS (default "128 512"), DEPTHS (input
# channels, default "32 64 128 256 512").
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
SHOAL=${SHOAL:-${BUILD_DIR:-$root/build}/shoal}
PYTHON=${PYTHON:-/usr/bin/python3}
DENSE_INPUTS=${DENSE_INPUTS:-"7680 8192"}
DENSE_OUTPUTS=${DENSE_OUTPUTS:-"512 1024 2048 4096 8192 16384"}
KERNELS=${KERNELS:-"3 5 9"}
FILTERS=${FILTERS:-"128 512"}
DEPTHS=${DEPTHS:-"32 64 128 256 512"}
[ -x "$SHOAL" ] || { echo "no shoal binary at $SHOAL (make build)" >&2; exit 1; }
"$PYTHON" -c "import torch, onnx" 2> /dev/null ||
  { echo "$PYTHON cannot import torch and onnx" >&2; exit 3; }
work=$(mktemp -d /tmp/shoal-bench-collab-splits-XXXXXX)
trap 'rm -rf "$work"' EXIT
. "$here/collaborative_lib.sh"

for n in 1 2 3; do
  collab_cluster "$n" "$work/c$n.yaml"
  # Boards that never page: the time of the arithmetic and the wire alone,
  # so that a latency's swap can be told apart.
  collab_cluster "$n" "$work/roomy$n.yaml" 64GiB
done

# latency N MODEL STRATEGY: simulate's median in ms on N boards, or "-"
# when `shoal plan` refuses (its reason appended to $work/refused).
latency() {
  local ms _
  read -r ms _ <<< "$(predict "$2" "$work/c$1.yaml" "$3" 1)"
  if [ "$ms" = - ]; then
    printf '%s on %s: %s\n' "$(basename "$2" .onnx)" "$1" \
      "$(tail -1 "$work/plan.err" | sed 's/^shoal: error: //')" >> "$work/refused"
  fi
  echo "$ms"
}
# refusals: the plans refused since the last call, as a list under a table.
refusals() {
  [ -s "$work/refused" ] || return 0
  echo
  echo "Refused by \`shoal plan\` (\"refused\" in the table):"
  echo
  sed 's/^/- /' "$work/refused"
  rm -f "$work/refused"
}
# swap N MODEL STRATEGY LATENCY: its seconds of paging (LATENCY less the
# same plan on boards that never page), or "-".
swap() {
  local ms _
  read -r ms _ <<< "$(predict "$2" "$work/roomy$1.yaml" "$3" 1)"
  awk -v a="$4" -v b="$ms" 'BEGIN { if (a == "-" || b == "-") print "-"; else printf "%.1f", (a - b) / 1000 }'
}
speedup() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-") print "-"; else printf "%.2f", a / b }'; }
x() { if [ "$1" = - ]; then echo -; else echo "$1x"; fi; }
secs() { awk -v a="$1" 'BEGIN { if (a == "-") print "refused"; else if (a < 10000) printf "%.3f", a / 1000; else printf "%.1f", a / 1000 }'; }

echo "The collaborative-execution paper's single-layer experiments (its"
echo "Figs. 11 and 14) as \`shoal simulate\` predicts them on emulated"
echo "\`pi3-collab\` boards: PREDICTIONS for boards modelled on the paper's, not"
echo "measurements. The rate (1.65 GMAC/s, 1.2 GB/s reading weights) and the"
echo "swap model are estimates (src/cluster/swap.cc: a framework of ${COLLAB_RESIDENT_MIB} MiB,"
echo "the weights once and the largest layer's $((COLLAB_LAYER_COPIES - 1)) times more, ${COLLAB_USABLE_MIB} MiB usable"
echo "of 1 GiB, paging at ${COLLAB_SWAP_MIB_S} MiB/s); the LAN is the paper's, 94.1 Mbit/s and 0.4 ms."
echo "Each layer is built alone (PyTorch, exported to ONNX) and planned with"
echo "\`shoal plan LAYER.onnx --cluster ... --strategy S\`; latency: one request."
echo "Swap: the latency less the same plan's on boards with room for"
echo "everything. Speedup: one device's latency over the split's."
echo
echo "### Dense layers: output and input splitting on two devices (Fig. 11)"
echo
echo "The paper ran each split on two workers with an initial sender and a"
echo "final receiver (four devices). Here the two workers are the whole"
echo "cluster and the first holds the input and receives the output: lop"
echo "sends the input once (to the other worker) and takes back half the"
echo "output; lip sends half the input and takes back a full vector of"
echo "partial sums. The paper's sender and receiver would add one input and"
echo "one output transfer (under 6 ms at 94.1 Mbit/s for these sizes) to the"
echo "split and to the one device alike."
echo
echo "| input | outputs | weights MiB | one device s (swap s) | lop on 2 s (swap s) | lip on 2 s (swap s) | lop speedup | lip speedup |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|"
specs=()
for i in $DENSE_INPUTS; do
  for o in $DENSE_OUTPUTS; do specs+=("$work/dense-$i-$o.onnx dense $i $o"); done
done
printf '%s\n' "${specs[@]}" | "$PYTHON" "$here/collaborative_onnx.py" -
dense_rows=()
for i in $DENSE_INPUTS; do
  for o in $DENSE_OUTPUTS; do
    f=$work/dense-$i-$o.onnx
    one=$(latency 1 "$f" lop) one_sw=$(swap 1 "$f" lop "$one")
    lop=$(latency 2 "$f" lop) lop_sw=$(swap 2 "$f" lop "$lop")
    lip=$(latency 2 "$f" lip) lip_sw=$(swap 2 "$f" lip "$lip")
    rm -f "$f"  # up to 512 MiB each
    s_lop=$(speedup "$one" "$lop") s_lip=$(speedup "$one" "$lip")
    printf "| %d | %d | %.0f | %s (%s) | %s (%s) | %s (%s) | %s | %s |\n" "$i" "$o" \
      "$(awk -v i="$i" -v o="$o" 'BEGIN { print (i * o + o) * 4 / 1048576 }')" \
      "$(secs "$one")" "$one_sw" "$(secs "$lop")" "$lop_sw" "$(secs "$lip")" "$lip_sw" "$(x "$s_lop")" "$(x "$s_lip")"
    dense_rows+=("$i $o $s_lop $s_lip $one_sw")
  done
done
refusals
echo
# Rows with a refused plan ("-") count only where both figures are there.
printf '%s\n' "${dense_rows[@]}" | awk '
  !($1 in seen) { seen[$1] = 1; order[++inputs] = $1 }
  $3 != "-" && $4 != "-" {
    best = ($3 + 0 > $4 + 0 ? $3 : $4); if (best + 0 > top) { top = best; at = $1 "x" $2 }
    if ($3 > 2 || $4 > 2) sup[$1] = sup[$1] (sup[$1] ? ", " : "") $2
    if ($3 + 0 >= $4 + 0) lopwins++; n++ }
  $5 != "-" && $5 > 0 { swp[$1] = swp[$1] (swp[$1] ? ", " : "") $2 }
  END {
    printf "Reading: speedups over 2 (super-linear on two devices) at outputs"
    for (j = 1; j <= inputs; j++) printf " %s (input %s);", (order[j] in sup ? sup[order[j]] : "none"), order[j]
    printf " the largest, %.2fx, at %s. One device pages at outputs", top, at
    for (j = 1; j <= inputs; j++) printf " %s (input %s);", (order[j] in swp ? swp[order[j]] : "none"), order[j]
    printf " splitting halves each device'"'"'s weights, and so its paging. lop is at least as fast as lip in %d of %d layers. ", lopwins, n
    print "The paper found super-linear speedups for input 7680 only and explained 8192 by TensorFlow tiling its accesses so as to avoid swap; shoal'"'"'s swap model depends on bytes alone and has no such tiling, so its two input sizes differ only by their 7 % more weights and MACs."
  }'
echo
echo "### A convolution: channel, spatial and filter splitting on three devices (Fig. 14)"
echo
echo "One convolution, 'same' padding, stride 1, on a 128x128 input. The"
echo "paper ran the splits on three workers with an initial sender and a"
echo "final receiver (five devices); here the three workers are the cluster"
echo "and the first holds the input and the output. Channel is shoal's"
echo "\`channel\` (each device a share of the filters, the whole input), spatial"
echo "\`spatial\` (strips of rows with their halos), filter \`filter\` (each"
echo "device a share of the input channels, partial sums added up)."
echo
echo "| kernel | filters | input depth | one device s | channel | spatial | filter | best |"
echo "|---|---:|---:|---:|---:|---:|---:|---|"
specs=()
for f in $KERNELS; do
  for k in $FILTERS; do
    for c in $DEPTHS; do specs+=("$work/conv-$f-$k-$c.onnx conv2d $c $k $f 128 128"); done
  done
done
printf '%s\n' "${specs[@]}" | "$PYTHON" "$here/collaborative_onnx.py" -
conv_rows=()
for f in $KERNELS; do
  for k in $FILTERS; do
    for c in $DEPTHS; do
      m=$work/conv-$f-$k-$c.onnx
      one=$(latency 1 "$m" channel)
      row=()
      for s in channel spatial filter; do row+=("$(speedup "$one" "$(latency 3 "$m" "$s")")"); done
      best=$(printf '%s\n' "channel ${row[0]}" "spatial ${row[1]}" "filter ${row[2]}" | sort -k2 -g | tail -1 | cut -d' ' -f1)
      printf "| %dx%d | %d | %d | %s | %s | %s | %s | %s |\n" "$f" "$f" "$k" "$c" "$(secs "$one")" \
        "$(x "${row[0]}")" "$(x "${row[1]}")" "$(x "${row[2]}")" "$best"
      conv_rows+=("$f $k $c ${row[*]} $best")
    done
  done
done
refusals
echo
printf '%s\n' "${conv_rows[@]}" | awk '
  function max3(a, b, c) { return (a + 0 > b + 0 ? (a + 0 > c + 0 ? a : c) : (b + 0 > c + 0 ? b : c)) }
  { n++; best[$7]++
    for (j = 4; j <= 6; j++) {
      if ($j == "-") continue
      if ($j < 1) slow++
      if ($j > top) { top = $j; at = $1 "x" $1 ", " $2 " filters, depth " $3 }
    } }
  $1 == 3 && $2 == 128 {
    if (!lo_c || $3 < lo_c) { lo_c = $3; lo = max3($4, $5, $6) }
    if ($3 > hi_c) { hi_c = $3; hi = max3($4, $5, $6) } }
  !($1 in k) { order[++kernels] = $1 }
  { k[$1]++; margin[$1] += $5 - ($4 + 0 > $6 + 0 ? $4 : $6) }
  END {
    printf "Reading: spatial is the fastest split in %d of %d layers, channel in %d, filter in %d; %d of %d split latencies are slower than one device. ", best["spatial"], n, best["channel"], best["filter"], slow, 3 * n
    printf "The largest speedup is %.2fx (%s). At 3x3 with 128 filters the best split gives %.2fx at input depth %d and %.2fx at %d. ", top, at, lo, lo_c, hi, hi_c
    printf "Spatial'"'"'s mean lead over the better of channel and filter, by kernel:"
    for (j = 1; j <= kernels; j++) printf " %sx%s %+.2f;", order[j], order[j], margin[order[j]] / k[order[j]]
    print " the paper saw no speedup at small depths for 3x3 and 128 filters, spatial best in most cases, and its lead shrinking at 9x9."
  }'


#!/bin/bash
# Emulated boards report the same board time whatever the host does: the
# same plans on four emulated Raspberry Pi 3B+ (examples/pi3-4.yaml on free
# ports) measured with the cluster in real time on an idle host, in real
# time beside two busy-loop processes (bounded in time), and dilated x4
# (`cluster up --dilation 4`). Each condition in turn, ROUNDS times; a
# latency is the median over the rounds of each round's median request.
# Prints markdown (bench/run_all.sh writes it into docs/BENCHMARKS.md).
#
#   bash bench/board_dilation.sh
#   MODELS=resnet18 ROUNDS=1 bash bench/board_dilation.sh
#
# Env: BUILD_DIR (default build), MODELS (default "alexnet resnet18"),
# STRATEGY (default auto), DILATION (default 4), REQUESTS (default 5),
# ROUNDS (default 3), PORT_BASE (default 7900).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
BUILD_DIR=${BUILD_DIR:-$root/build}
shoal=$BUILD_DIR/shoal
MODELS=${MODELS:-"alexnet resnet18"}
STRATEGY=${STRATEGY:-auto}
DILATION=${DILATION:-4}
REQUESTS=${REQUESTS:-5}
ROUNDS=${ROUNDS:-3}
PORT_BASE=${PORT_BASE:-7900}
[ -x "$shoal" ] || { echo "no $shoal: build first (make build)" >&2; exit 1; }

. "$here/lib.sh"
busy=()
bench_cleanup_extra() { for p in "${busy[@]}"; do kill "$p" 2> /dev/null || true; done; }
bench_init dilation "$PORT_BASE"

copy_cluster "$root/examples/pi3-4.yaml" 0 "$work/pi3-4.yaml"
c=$work/pi3-4.yaml
declare -A plan
for m in $MODELS; do
  plan[$m]=$work/$m.json
  "$shoal" plan "$m" --cluster "$c" --strategy "$STRATEGY" -o "${plan[$m]}" > /dev/null
done

# measure K BUSY MODEL -> median latency ms of REQUESTS requests
measure() {
  "$shoal" bench --plan "${plan[$3]}" --cluster "$c" --requests "$REQUESTS" --json 2> /dev/null |
    python3 -c 'import json,sys; j=json.load(sys.stdin); print("%.1f" % j["latency_ms"]["median"])'
}

declare -A res
conditions="idle busy dilated"
for _ in $(seq "$ROUNDS"); do
  for cond in $conditions; do
    k=1; [ "$cond" = dilated ] && k=$DILATION
    "$shoal" cluster up "$c" --dilation "$k" > "$work/up.log" 2>&1 || { cat "$work/up.log" >&2; exit 1; }
    started+=("$c")
    busy=()
    if [ "$cond" = busy ]; then
      for _ in 1 2; do timeout 600 sh -c 'while :; do :; done' & busy+=($!); done
    fi
    for m in $MODELS; do res[$cond|$m]="${res[$cond|$m]:-} $(measure "$k" "$cond" "$m")"; done
    bench_cleanup_extra
    "$shoal" cluster down "$c" > /dev/null
  done
done

median() { printf '%s\n' "$@" | sort -n | sed -n "$(( ($# + 1) / 2 ))p"; }
echo "Devices: \`examples/pi3-4.yaml\` on free ports (four \`board: pi3b+\`, each task held to its class's time). Plans: \`--strategy $STRATEGY\`. Latency: board time, the median over $ROUNDS rounds of each round's median of $REQUESTS requests (\`shoal bench\`); the conditions in turn within each round. Busy: two \`while :; do :; done\` shells beside the cluster, as many as this host has cores. Dilated: \`cluster up --dilation $DILATION\`, every emulated time $DILATION times longer, reported divided by $DILATION."
echo
echo "| model | idle, real time, ms | busy, real time, ms | busy / idle | idle, dilated x$DILATION, ms | dilated / real time | predicted (\`shoal simulate\`), ms | real time / predicted |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for m in $MODELS; do
  # shellcheck disable=SC2086
  i=$(median ${res[idle|$m]}); b=$(median ${res[busy|$m]}); d=$(median ${res[dilated|$m]})
  p=$("$shoal" simulate --plan "${plan[$m]}" --cluster "$c" --requests "$REQUESTS" --json 2> /dev/null |
    python3 -c 'import json,sys; print("%.1f" % json.load(sys.stdin)["latency_ms"]["median"])')
  echo "| $m | $i | $b | $(python3 -c "print('%.2f' % ($b / $i))") | $d | $(python3 -c "print('%.2f' % ($d / $i))") | $p | $(python3 -c "print('%.2f' % ($i / $p))") |"
done
echo
echo "Reading: a ratio within 0.90-1.10 is the same board time within 10 %. Each board keeps its own clock (docs/cluster-format.md, \"Emulated boards, and time dilation\"): this host's own time for a message (gRPC, copies) or a late wake-up hides inside the boards' times; what real time still adds over dilated time is where the host fell behind a board's time (task overruns)."

# Shared by the collaborative-execution paper's benchmarks
# (bench/collaborative_*.sh; sourced, not run): cluster files of the
# paper's boards and the simulator's predictions for a plan on them.
# Nothing runs on workers: every figure is `shoal simulate` on emulated
# `pi3-collab` boards (shoal boards: a Pi 3 under Keras 2.1 / TensorFlow
# 1.5 at 1.65 GMAC/s, 1 GiB, paging what does not fit; the paper's LAN,
# 94.1 Mbit/s and 0.4 ms).
#
#   SHOAL=...; work=...             # set by the script
#   . "$here/collaborative_lib.sh"
#   collab_cluster 4 "$work/c4.yaml"
#   read -r ms rps <<< "$(predict alexnet "$work/c4.yaml" procedure1 4 --objective throughput)"

# The paper's swap constants as `shoal boards --json` gives them
# (src/cluster/swap.cc: estimates chosen to agree with the paper's
# statements, not measurements): the scripts print them, and use them only
# for the memory a layer takes under the framework, which no command
# prints.
read -r COLLAB_USABLE_MIB COLLAB_RESIDENT_MIB COLLAB_LAYER_COPIES COLLAB_SWAP_MIB_S <<< "$(
  "$SHOAL" boards --json | python3 -c '
import json, sys
b = next(b for b in json.load(sys.stdin) if b["name"] == "pi3-collab")
s, m = b["swap"], 1 << 20
print((b["memory_bytes"] - s["system_bytes"]) // m, s["resident_bytes"] // m,
      int(s["layer_copies"]), "%g" % (s["swap_bytes_per_s"] / m))')"

# collab_cluster N OUT [MEMORY]: N pi3-collab boards (MEMORY in place of
# the board's 1 GiB if given: a board that never pages, for the time of
# the arithmetic alone). Addresses are never dialled: nothing is started.
collab_cluster() {
  local i
  {
    echo "devices:"
    for ((i = 1; i <= $1; i++)); do
      echo "  - {name: pi$i, address: 127.0.0.1:$((7700 + i)), board: pi3-collab${3:+, memory: $3}}"
    done
  } > "$2"
}

# predict MODEL CLUSTER STRATEGY CONCURRENCY [PLAN FLAGS...]: plans MODEL
# (the plan in $work/plan.json) and prints `shoal simulate`'s median
# latency in ms and its throughput in req/s with CONCURRENCY requests in
# flight, or "- -" when no plan is made (plan's last line in
# $work/plan.err). Enough requests that the pipeline's filling and
# draining weigh little in the throughput; one in flight is deterministic,
# three do.
predict() {
  local model=$1 cluster=$2 strategy=$3 conc=$4
  shift 4
  if ! "$SHOAL" plan "$model" --cluster "$cluster" --strategy "$strategy" "$@" \
      -o "$work/plan.json" > "$work/plan.out" 2> "$work/plan.err"; then
    echo "- -"
    return 0
  fi
  local requests=3
  [ "$conc" -gt 1 ] && requests=$((20 * conc))
  "$SHOAL" simulate --plan "$work/plan.json" --cluster "$cluster" \
    --requests "$requests" --concurrency "$conc" --json > "$work/sim.json"
  python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(d["latency_ms"]["median"], d["throughput_rps"])' "$work/sim.json"
}

#!/bin/bash
# Runs benchmarks and writes each one's section of docs/BENCHMARKS.md
# (`make bench` runs them all: hours on a 2-core machine).
#
#   bash bench/run_all.sh --list          # the sections and their commands
#   bash bench/run_all.sh NAME...         # run these, rewrite their sections
#   bash bench/run_all.sh --all           # every one (make bench)
#   WRITE=0 bash bench/run_all.sh NAME    # print the section only
#
# A section is a title, the command, the machine and the date of the run
# (written here), then what its script prints: what it measures, the
# tables, and a reading computed from them. Each lies between
# `<!-- NAME:begin -->` and `<!-- NAME:end -->` in docs/BENCHMARKS.md, so
# a run replaces exactly its own section; nothing is written by hand in
# between. Sections whose script writes its block itself (the LCP tables
# here, the accelerator's model in docs/accelerator.md) are run as they are.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
doc=$root/docs/BENCHMARKS.md

# NAME | title | command (run in the repository root). The order is the
# order of docs/BENCHMARKS.md for sections not in it yet.
sections=(
  "engine|\`shoal infer\` against PyTorch, batch 1|bash bench/engine_vs_pytorch.sh --repeat 20 --rounds 3"
  "engine-coverage|\`shoal infer\` against PyTorch: the ONNX coverage set|bash bench/engine_vs_pytorch.sh --models coverage --repeat 10 --rounds 2 --rss 0"
  "worker-memory|Worker memory: each weight once|bash bench/worker_memory.sh"
  "min-devices|The fewest 1 GiB devices that hold a model|bash bench/min_devices.sh"
  "simulate-vs-bench|Predicted against measured: \`shoal simulate\` vs \`shoal bench\`|MODELS=alexnet RUNS=3 REQUESTS=9 bash bench/simulate_vs_bench.sh"
  "simulate-vs-bench-pi3-8|Predicted against measured on eight Pi 3B+ boards: the speed benchmarks' plans|PIXELS=1 MODELS='alexnet resnet18 vgg16' CLUSTERS=pi3-8 STRATEGIES='auto spatial lop fuse-ilp' REQUESTS=3 bash bench/simulate_vs_bench.sh"
  "simulate-vs-bench-pi4-4|Predicted against measured on four Pi 4B boards: the speed benchmarks' plans|PIXELS=1 MODELS='vgg16 resnet50 resnet18' CLUSTERS=pi4-4 STRATEGIES='auto spatial lop' REQUESTS=3 bash bench/simulate_vs_bench.sh"
  "sim-scale|Simulator scale|bash bench/sim_scale.sh"
  "auto-alexnet|\`--strategy auto\` against every strategy: AlexNet, profiled, 6 in flight|PROFILE=1 MODELS=alexnet REQUESTS=5 CONCURRENCY=6 bash bench/auto_vs_strategies.sh"
  "auto-vgg16|\`--strategy auto\` against every strategy: VGG16, cluster-file specs, 4 in flight|MODELS=vgg16 REQUESTS=2 CONCURRENCY=4 SEEDS=1 bash bench/auto_vs_strategies.sh"
  "board-dilation|Board time on any host: idle, beside busy loops, and dilated|bash bench/board_dilation.sh"
  "runtime-pi3-8|Eight emulated Raspberry Pi 3B+ against one, and against ncnn on one|PIXELS=1 MODELS='alexnet resnet18 vgg16' SIZES=8 STRATEGIES='auto spatial lop fuse-ilp' LCP=lcp8 REQUESTS=3 ROUNDS=2 bash bench/runtime_clusters.sh"
  "runtime-pi3-4|Four emulated Raspberry Pi 3B+ against one, and against ncnn on one|PIXELS=1 MODELS='alexnet resnet18 vgg16' SIZES=4 STRATEGIES='auto spatial lop' LCP=lcp4 REQUESTS=3 ROUNDS=3 bash bench/runtime_clusters.sh"
  "runtime-pi4-4|Four emulated Raspberry Pi 4B on Gigabit Ethernet against one, and against ncnn on one|BOARD=pi4 PIXELS=1 MODELS='vgg16 resnet50 resnet18' SIZES=4 STRATEGIES='auto spatial lop' LCP=' ' REQUESTS=3 ROUNDS=3 bash bench/runtime_clusters.sh"
  "runtime-vit-pi4-4|ViT-B/16 on four emulated Raspberry Pi 4B, split by heads, against one, and against ncnn's ViT-B on one|BOARD=pi4 PIXELS=1 MODELS=vit_b_16 SIZES=4 STRATEGIES='auto heads' LCP=' ' REQUESTS=3 ROUNDS=2 NCNN_MS='vit_b_16=1909' bash bench/runtime_clusters.sh"
  "runtime-vit-pi3-8|ViT-B/16 on eight emulated Raspberry Pi 3B+ over Wi-Fi, split by heads, against one|BOARD=pi3 PIXELS=1 MODELS=vit_b_16 SIZES=8 STRATEGIES='auto heads' LCP=' ' REQUESTS=2 ROUNDS=1 bash bench/runtime_clusters.sh"
  "runtime-swin-pi4-4|Swin-T on four emulated Raspberry Pi 4B, split by its windows, against one|BOARD=pi4 SIZES=4 bash bench/windows_swin.sh"
  "runtime-swin-pi3-8|Swin-T on eight emulated Raspberry Pi 3B+ over Wi-Fi, split by its windows, against one|BOARD=pi3 SIZES=8 bash bench/windows_swin.sh"
  "runtime-vit-pi4-8|ViT-B/16 on eight emulated Raspberry Pi 4B, split by heads, against one, and against ncnn's ViT-B on one|BOARD=pi4 PIXELS=1 MODELS=vit_b_16 SIZES=8 STRATEGIES='auto heads' LCP=' ' REQUESTS=3 ROUNDS=2 NCNN_MS='vit_b_16=1909' bash bench/runtime_clusters.sh"
  "targets|The boards' targets against ncnn on one board: what \`auto\` is predicted to reach, and the bound no plan beats|bash bench/targets.sh"
  "mixed-home|A mixed home measured: \`auto\` against the fastest device alone|bash bench/mixed_home.sh"
  "runtime-vgg16-rounds|VGG16 on four and eight emulated Pi 3B+: five interleaved rounds|PIXELS=1 MODELS=vgg16 SIZES='4 8' STRATEGIES='auto spatial' LCP=' ' REQUESTS=3 ROUNDS=5 bash bench/runtime_clusters.sh"
  "runtime-medium|One shared Wi-Fi channel against per-device links|MEDIA='links shared' PIXELS=1 MODELS='alexnet vgg16' SIZES=8 STRATEGIES='auto spatial' LCP=lcp8 REQUESTS=3 bash bench/runtime_clusters.sh"
  "runtime-reduce|Partial sums reduced among the devices against on the input device|PIXELS=1 MODELS='alexnet vgg16' SIZES=8 STRATEGIES='auto auto+hub lip lip+hub' LCP=' ' REQUESTS=3 bash bench/runtime_clusters.sh"
  "runtime-tiles|2-D tiles against strips of rows|PIXELS=1 MODELS='resnet18 vgg16' SIZES=8 STRATEGIES='spatial spatial+2d auto auto+2d' LCP=' ' REQUESTS=3 bash bench/runtime_clusters.sh"
  "runtime-int8|int8 plans on eight emulated Raspberry Pi 3B+ against f32|PIXELS=1 MODELS='alexnet vgg16' SIZES=8 STRATEGIES='auto auto+int8 spatial spatial+int8 lop lop+int8' LCP=' ' REQUESTS=3 bash bench/runtime_clusters.sh"
  "runtime-netns|Over real network stacks: each device in a network namespace|MODE=netns PIXELS=1 MODELS='alexnet resnet18' SIZES=8 STRATEGIES='auto spatial' LCP=lcp8 REQUESTS=3 bash bench/runtime_clusters.sh"
  "transport|Transport overhead|bash bench/transport.sh"
  "yolov2|YOLOv2: LOP against layer fusion (the fully-distributed paper's Table 1)|bash bench/yolov2_table1.sh"
  "collab-fig17|The collaborative-execution paper's Fig. 17: Procedure 1 against random and one device on emulated Pi 3s, predicted and measured|MEASURE=1 bash bench/collaborative_fig17.sh"
  "collab-splits|The collaborative-execution paper's Figs. 11 and 14, predicted: one layer split over two and three emulated Pi 3s|bash bench/collaborative_splits.sh"
  "collab-layers|The collaborative-execution paper's layer-wise figures (15, 16, 18, 19), predicted on emulated Pi 3s|bash bench/collaborative_layers.sh"
  "energy|Energy per inference: one Pi 3 against plans and LCP on 4 and 8|MEASURE=1 REQUESTS=3 bash bench/energy.sh"
  "serve-rebalance|\`shoal serve\` rebalancing: one device slowed mid-stream|bash bench/serve_rebalance.sh"
  "soak|\`shoal serve\` soak: workers killed and restarted|bash bench/soak.sh"
  "metrics-cost|The cost of a worker's metrics|bash bench/metrics_cost.sh"
  "arm64-qemu|The arm64 worker under qemu-user: EMULATION, not a Raspberry Pi|bash bench/arm64_qemu.sh"
  "fuzz|Fuzzing: executions and crashes per target|FUZZ_RUNS=1000000 FUZZ_SECONDS=900 bash bench/fuzz.sh"
  "int8|int8 against f32 in \`shoal infer\`: speed and memory|bash bench/int8_engine.sh"
  "lcp-accuracy|LCP accuracy (its script writes the section)|-bash bench/lcp_accuracy.sh"
  "lcp-prune|LCP pruning (its script writes the section)|-bash bench/lcp_prune.sh"
  "lcp-int8|LCP in int8 (its script writes the section)|-bash bench/lcp_int8.sh"
  "accelerator|The systolic accelerator (written into docs/accelerator.md)|-bash bench/accelerator.sh"
)

field() { local IFS='|'; read -r name title cmd <<< "$1"; }

if [ $# -eq 0 ] || [ "$1" = --list ]; then
  [ $# -eq 0 ] && echo "usage: bash bench/run_all.sh NAME... | --all | --list" >&2
  for s in "${sections[@]}"; do field "$s"; printf '%-18s %s\n' "$name" "${cmd#-}"; done
  [ $# -gt 0 ]; exit
fi

machine() {
  local cpu mem os
  cpu=$(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -1)
  mem=$(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)
  os=$(. /etc/os-release && echo "$PRETTY_NAME")
  echo "${cpu:-unknown CPU}, $(nproc) cores, $mem, $os"
}

wanted=("$@")
if [ "$1" = --all ]; then
  wanted=()
  for s in "${sections[@]}"; do field "$s"; wanted+=("$name"); done
fi
status=0
for want in "${wanted[@]}"; do
  found=0
  for s in "${sections[@]}"; do
    field "$s"
    [ "$name" = "$want" ] || continue
    found=1
    echo "== $name: ${cmd#-}" >&2
    if [[ $cmd == -* ]]; then  # writes its own document
      (cd "$root" && eval "${cmd#-}") || status=1
      continue
    fi
    out=$(mktemp)
    start=$(date -u '+%Y-%m-%d %H:%M')
    load_before=$(cut -d' ' -f1 /proc/loadavg)
    (cd "$root" && eval "$cmd") > "$out.body"
    rc=$?
    if [ $rc -ne 0 ]; then  # 3: skipped (what it needs is not here)
      echo "$name $([ $rc = 3 ] && echo skipped || echo failed); docs/BENCHMARKS.md keeps its last section" >&2
      [ $rc = 3 ] || status=1
      rm -f "$out" "$out.body"; continue
    fi
    {
      echo "## $title"
      echo
      echo "Command: \`bash bench/run_all.sh $name\`, that is \`$cmd\`."
      echo "Machine: $(machine). Run $start to $(date -u '+%H:%M') UTC; load average $load_before before, $(cut -d' ' -f1 /proc/loadavg) after."
      echo
      cat "$out.body"
    } > "$out"
    if [ "${WRITE:-1}" = 1 ]; then
      python3 "$here/write_block.py" "$doc" "$name" "$out"
      echo "wrote section $name of docs/BENCHMARKS.md" >&2
      # The note beside predictions from specs quotes these sections.
      python3 "$root/scripts/prediction-note.py" --write
    else
      cat "$out"
    fi
    rm -f "$out" "$out.body"
  done
  [ $found = 1 ] || { echo "no benchmark section '$want' (bash bench/run_all.sh --list)" >&2; status=2; }
done
exit $status

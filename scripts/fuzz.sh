#!/bin/bash
# Builds the libFuzzer targets (src/*/*_fuzz.cc, a clang tree with ASan and
# UBSan) and runs each for a bounded time from its seed corpus in
# test/fuzz/<target>; `make fuzz` runs it (docs/testing.md).
#
#   bash scripts/fuzz.sh                      # every target, 60 s each
#   FUZZ_SECONDS=10 bash scripts/fuzz.sh plan npy
#
# Env: FUZZ_SECONDS (60 a target), FUZZ_RUNS (stop a target after this many
# executions too; default: time only), FUZZ_DIR (the build tree, default
# build-fuzz), FUZZ_OUT (default $FUZZ_DIR/fuzz-out), JOBS (build, 2).
#
# Inputs a run finds that reach new code go to $FUZZ_OUT/corpus/<target>
# (kept between runs; the seeds in the repository are not touched). A crash,
# leak, timeout or out-of-memory leaves its input in
# $FUZZ_OUT/crashes/<target>/ and makes the script exit 1 after the other
# targets ran. Prints a markdown table: executions, new inputs, crashes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
FUZZ_RUNS=${FUZZ_RUNS:--1}
# libFuzzer's random seed (0: a new one each run). The CI test fixes it and
# bounds the runs, so that it checks the same inputs on every machine.
FUZZ_SEED=${FUZZ_SEED:-0}
FUZZ_DIR=${FUZZ_DIR:-$root/build-fuzz}
FUZZ_OUT=${FUZZ_OUT:-$FUZZ_DIR/fuzz-out}
JOBS=${JOBS:-2}
CXX_FUZZ=${CXX_FUZZ:-clang++-14}

all_targets=()
for f in "$root"/src/*/*_fuzz.cc; do
  n=$(basename "$f" _fuzz.cc)
  all_targets+=("$n")
done
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")

# The largest input each target is given: a few times its largest seed.
max_len() {
  case $1 in
    cluster | npy) echo 4096 ;;
    enroll | image) echo 16384 ;; # enroll: the server reads 16 KiB of a body
    plan) echo 32768 ;;
    *) echo 65536 ;;
  esac
}

# What libFuzzer leaves there that is a failure (not its slow-unit notes).
count_crashes() {
  find "$1" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l
}

command -v "$CXX_FUZZ" > /dev/null || {
  echo "fuzz.sh: $CXX_FUZZ not found (scripts/install-deps.sh --with-test-deps installs clang-14)" >&2
  exit 1
}
if [ ! -f "$FUZZ_DIR/build.ninja" ]; then
  cmake -S "$root" -B "$FUZZ_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DSHOAL_FUZZ=ON -DCMAKE_CXX_COMPILER="$CXX_FUZZ" > "$FUZZ_DIR.cmake.log" 2>&1 || {
    cat "$FUZZ_DIR.cmake.log" >&2
    exit 1
  }
fi
build_targets=()
for t in "${targets[@]}"; do build_targets+=("fuzz_$t"); done
cmake --build "$FUZZ_DIR" -j "$JOBS" --target "${build_targets[@]}" > "$FUZZ_DIR/fuzz-build.log" 2>&1 || {
  tail -50 "$FUZZ_DIR/fuzz-build.log" >&2
  exit 1
}

mkdir -p "$FUZZ_OUT/logs"
failed=()
echo "| target | seconds | executions | exec/s | corpus inputs | new inputs | crashes |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for t in "${targets[@]}"; do
  corpus=$FUZZ_OUT/corpus/$t crashes=$FUZZ_OUT/crashes/$t log=$FUZZ_OUT/logs/$t.log
  mkdir -p "$corpus" "$crashes"
  before=$(find "$corpus" -type f | wc -l)
  crashes_before=$(count_crashes "$crashes")
  start=$(date +%s)
  rc=0
  # -timeout: one input running this long (60 s: the machine may be
  # loaded) is a hang; -rss_limit_mb and
  # -malloc_limit_mb: what one input may make the process take. ASan's
  # leak check runs at exit and after inputs that leak.
  "$FUZZ_DIR/fuzz_$t" -max_total_time="$FUZZ_SECONDS" -runs="$FUZZ_RUNS" \
    -seed="$FUZZ_SEED" \
    -max_len="$(max_len "$t")" -rss_limit_mb=2048 -malloc_limit_mb=1024 \
    -timeout=60 -print_final_stats=1 -artifact_prefix="$crashes/" \
    "$corpus" "$root/test/fuzz/$t" > "$log" 2>&1 || rc=$?
  secs=$(($(date +%s) - start))
  execs=$(awk '/stat::number_of_executed_units:/ { print $2 }' "$log" | tail -1)
  execs=${execs:-0}
  after=$(find "$corpus" -type f | wc -l)
  ncrash=$(($(count_crashes "$crashes") - crashes_before))
  rate=$(awk -v e="$execs" -v s="$secs" 'BEGIN { printf "%d", (s > 0 ? e / s : e) }')
  echo "| $t | $secs | $execs | $rate | $after | $((after - before)) | $ncrash |"
  if [ "$rc" -ne 0 ]; then failed+=("$t"); fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo
  for t in "${failed[@]}"; do
    echo "fuzz.sh: fuzz_$t failed; its log: $FUZZ_OUT/logs/$t.log; inputs: $FUZZ_OUT/crashes/$t/" >&2
    grep -m 3 -E "ERROR: |SUMMARY: |==[0-9]+==" "$FUZZ_OUT/logs/$t.log" >&2 || true
  done
  exit 1
fi

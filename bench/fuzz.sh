#!/bin/bash
# The fuzzing campaign: every libFuzzer target (scripts/fuzz.sh) until it
# has run FUZZ_RUNS inputs or FUZZ_SECONDS passed, one target at a time, at
# the lowest CPU priority. Prints markdown: the machine, then per target the
# executions, the inputs its corpus grew by and the crashes found (a crash
# stops that target and leaves its input in build-fuzz/fuzz-out/crashes/).
#
#   bash bench/fuzz.sh                          # 1 M executions a target, 2 h at most each
#   FUZZ_RUNS=100000 FUZZ_SECONDS=600 bash bench/fuzz.sh plan npy
#
# Env: FUZZ_RUNS (default 1000000), FUZZ_SECONDS (default 7200), and
# those of scripts/fuzz.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
export FUZZ_RUNS=${FUZZ_RUNS:-1000000}
export FUZZ_SECONDS=${FUZZ_SECONDS:-7200}
echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'),"
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) at the start; $(clang++-14 --version | head -1)."
echo "Each target: at most $FUZZ_RUNS executions or $FUZZ_SECONDS s, nice -n 19, ASan + UBSan."
echo
rc=0
nice -n 19 bash "$root/scripts/fuzz.sh" "$@" || rc=$?
exit $rc

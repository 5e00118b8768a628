#!/bin/bash
# The fuzzing campaign: every libFuzzer target (scripts/fuzz.sh) until it
# has run FUZZ_RUNS inputs or FUZZ_SECONDS passed, one target at a time, at
# the lowest CPU priority. Prints markdown: per target the executions, the
# inputs its corpus grew by and the crashes found (a crash stops that target
# and leaves its input in build-fuzz/fuzz-out/crashes/); bash
# bench/run_all.sh fuzz writes it into docs/BENCHMARKS.md.
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
cat <<TXT
The libFuzzer targets of [testing.md](testing.md), built with ASan + UBSan
by $(clang++-14 --version | head -1), each from its seeds in \`test/fuzz/<target>\` and the
corpus earlier runs left in \`build-fuzz/fuzz-out/corpus/<target>\`, one
target at a time at \`nice -n 19\`, until $FUZZ_RUNS executions or $FUZZ_SECONDS s.

TXT
rc=0
out=$(nice -n 19 bash "$root/scripts/fuzz.sh" "$@") || rc=$?
printf '%s\n\n' "$out"
python3 - "$out" "$FUZZ_RUNS" <<'PY'
import sys
rows = [[x.strip() for x in l.split("|")[1:-1]] for l in sys.argv[1].splitlines()
        if l.startswith("| ") and not l.startswith("| target")]
goal = int(sys.argv[2])
crashes = sum(int(r[6]) for r in rows)
short = [f"{r[0]} ({int(r[2]) / 1e6:.2f} M)" for r in rows if int(r[2]) < goal]
print(f"Reading: {crashes} crash{'es' if crashes != 1 else ''} in {len(rows)} targets; "
      + (f"short of {goal / 1e6:g} M executions in the time allowed: {', '.join(short)}"
         if short else f"every target ran {goal / 1e6:g} M executions")
      + ". Every crash a target has found is fixed with a test beside the code"
      " (docs/testing.md).")
PY
exit $rc

#!/bin/bash
# The fast test label under ThreadSanitizer, failing on shoal's own races
# (docs/testing.md). Every process the tests start (the CLI, workers) writes
# its reports to BUILD/tsan-logs instead of failing on them, and
# scripts/tsan_reports.py then fails the run on any report whose accesses
# are all in shoal's code; reports with an access inside Debian's
# uninstrumented gRPC, abseil or protobuf are counted, not failed on.
#
#   bash scripts/tsan-check.sh [BUILD_DIR] [ctest options...]
#
# BUILD_DIR (default build-tsan) is configured with -DSHOAL_TSAN=ON and
# built (shoal, shoal_tests, shoal_slow_tests).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath "${1:-$root/build-tsan}")
shift || true
[ -x "$build/shoal_tests" ] || { echo "no $build/shoal_tests: build the TSan tree first (docs/testing.md)" >&2; exit 2; }
grep -q "SHOAL_TSAN:BOOL=ON" "$build/CMakeCache.txt" || { echo "$build is not a ThreadSanitizer tree (-DSHOAL_TSAN=ON)" >&2; exit 2; }
logs=$build/tsan-logs
rm -rf "$logs" && mkdir -p "$logs"
# history_size=4: the previous access of a race in a long test is still
# remembered; exitcode=0: a report alone does not fail its test.
# color=never: TSan asks whether its log is a terminal (an ioctl) while it
# reports from inside an intercepted call, and the failed ioctl's errno
# (ENOTTY) then reaches gRPC, which turns a refused or finished connect
# into "Inappropriate ioctl for device".
# ignore_noninstrumented_modules=1: the C library calls gRPC, abseil and
# protobuf make (memcpy, free, ...) are not checked; their own accesses
# are invisible anyway, so these reports could only be counted, and
# writing each one slowed the tests past their deadlines.
export TSAN_OPTIONS="exitcode=0 log_path=$logs/tsan history_size=4 second_deadlock_stack=1 color=never ignore_noninstrumented_modules=1"
(cd "$build" && ctest -LE slow -j2 --output-on-failure "$@")
tests=$?
/usr/bin/python3 "$root/scripts/tsan_reports.py" "$logs"
races=$?
[ $tests -eq 0 ] && [ $races -eq 0 ]

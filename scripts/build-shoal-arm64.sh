#!/usr/bin/env bash
# Cross-compiles the whole of shoal (plan, run, serve, bench, ...: the
# `shoal` binary) for arm64 into BUILD_DIR (`make arm64`, and the slow test
# Arm64ShoalBuild), without its libtorch module (-DSHOAL_TORCH=OFF; see
# docs/packaging.md). Needs what `scripts/install-deps.sh --arm64`
# installs; exits 77 (a skip, for ctest) naming what is missing.
#
# Usage: scripts/build-shoal-arm64.sh BUILD_DIR [JOBS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=$1
jobs=${2:-2}
sysroot=${SHOAL_ARM64_SYSROOT:-/opt/shoal/sysroot-arm64}

missing=""
command -v aarch64-linux-gnu-g++ > /dev/null ||
  missing+=" aarch64-linux-gnu-g++ (crossbuild-essential-arm64);"
command -v grpc_cpp_plugin > /dev/null ||
  missing+=" grpc_cpp_plugin (protobuf-compiler-grpc);"
[[ -f /usr/share/javascript/chart.js/chart.min.js ]] ||
  missing+=" Chart.js, which serve's dashboard embeds (libjs-chart.js);"
[[ -f "$sysroot/.shoal-sysroot-packages" ]] ||
  missing+=" the arm64 sysroot $sysroot;"
# A sysroot made for the worker alone, before the full build's packages
# were added to it.
[[ ! -f "$sysroot/.shoal-sysroot-packages" || -f "$sysroot/usr/include/glpk.h" ]] ||
  missing+=" the full build's packages in the arm64 sysroot $sysroot (GLPK, ONNX);"
if [[ -n "$missing" ]]; then
  echo "SKIP: no arm64 build of shoal: missing$missing scripts/install-deps.sh --arm64 installs them"
  exit 77
fi

# Warnings only, as in build-worker-arm64.sh (SHOAL_WERROR).
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DSHOAL_WORKER_ONLY=OFF -DSHOAL_TORCH=OFF -DSHOAL_WERROR=OFF \
  -DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchain-arm64.cmake" \
  -DSHOAL_ARM64_SYSROOT="$sysroot" > /dev/null
cmake --build "$build" -j "$jobs" --target shoal
file "$build/shoal"

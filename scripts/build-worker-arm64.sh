#!/usr/bin/env bash
# Cross-compiles shoal-worker for arm64 into BUILD_DIR (`make worker-arm64`,
# and the slow test Arm64WorkerBuild). Needs what `scripts/install-deps.sh
# --worker-arm64` installs; exits 77 (a skip, for ctest) naming what is
# missing.
#
# Usage: scripts/build-worker-arm64.sh BUILD_DIR [JOBS]
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
[[ -f "$sysroot/.shoal-sysroot-packages" ]] ||
  missing+=" the arm64 sysroot $sysroot;"
if [[ -n "$missing" ]]; then
  echo "SKIP: no arm64 build: missing$missing scripts/install-deps.sh --worker-arm64 installs them"
  exit 77
fi

# Warnings only (SHOAL_WERROR, docs/testing.md): the cross compiler sees
# the arm64-only code, which no warning-free amd64 build has checked.
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DSHOAL_WORKER_ONLY=ON -DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchain-arm64.cmake" \
  -DSHOAL_ARM64_SYSROOT="$sysroot" -DSHOAL_WERROR=OFF > /dev/null
cmake --build "$build" -j "$jobs"
file "$build/shoal-worker"

#!/usr/bin/env bash
# Installs, with apt-get, only the Debian packages shoal needs that are missing.
# Idempotent: a second run installs nothing and exits 0.
# Usage: scripts/install-deps.sh [--with-test-deps | --worker]
#   --worker: only what `cmake -DSHOAL_WORKER_ONLY=ON` needs to build
#   shoal-worker, the daemon a device runs.
set -euo pipefail

BUILD_PKGS=(
  build-essential cmake pkg-config ninja-build ccache
  libdnnl-dev ocl-icd-opencl-dev opencl-c-headers
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libssl-dev
  libonnx-dev
  libtorch-dev libopenblas0-pthread zlib1g-dev
  libglpk-dev coinor-libcbc-dev
  nlohmann-json3-dev libyaml-cpp-dev libcli11-dev libspdlog-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libstb-dev liblz4-dev
  dataset-fashion-mnist
)
# The independent oracle of the tests: PyTorch and ONNX from Debian.
# The fuzz targets (scripts/fuzz.sh): clang with libFuzzer and the
# sanitizer runtimes; libomp-14-dev for clang's omp.h (the engine's calls
# still reach GCC's libgomp, which oneDNN uses).
TEST_PKGS=(python3-torch python3-torchvision python3-onnx python3-numpy
  clang-14 libclang-rt-14-dev libomp-14-dev)

WORKER_PKGS=(
  build-essential cmake pkg-config ninja-build ccache
  libdnnl-dev ocl-icd-opencl-dev opencl-c-headers
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libssl-dev
  nlohmann-json3-dev libyaml-cpp-dev libcli11-dev liblz4-dev
)

want=("${BUILD_PKGS[@]}")
if [[ "${1:-}" == "--with-test-deps" ]]; then
  want+=("${TEST_PKGS[@]}")
elif [[ "${1:-}" == "--worker" ]]; then
  want=("${WORKER_PKGS[@]}")
fi

missing=()
for p in "${want[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#want[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${#missing[@]} missing package(s): ${missing[*]}"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"

#!/usr/bin/env bash
# Installs, with apt-get, only the Debian packages shoal needs that are missing.
# Idempotent: a second run installs nothing and exits 0.
# Usage: scripts/install-deps.sh [--with-test-deps | --worker | --worker-arm64 | --arm64]
#   --worker: only what `cmake -DSHOAL_WORKER_ONLY=ON` needs to build
#   shoal-worker, the daemon a device runs.
#   --worker-arm64: what cross-compiling shoal-worker for arm64 needs
#   (cmake/toolchain-arm64.cmake): the host's tools and code generators,
#   Debian's cross compiler, qemu-user to run it, and the arm64 libraries
#   unpacked into a sysroot by scripts/arm64-sysroot.sh (no installed
#   package is changed).
#   --arm64: the same for the whole of shoal (scripts/build-shoal-arm64.sh):
#   the one sysroot holds both builds' libraries; serve's dashboard embeds
#   the host's Chart.js.
set -euo pipefail

BUILD_PKGS=(
  build-essential cmake pkg-config ninja-build ccache
  libdnnl-dev ocl-icd-opencl-dev opencl-c-headers
  libxnnpack-dev libpthreadpool-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libssl-dev
  libonnx-dev
  libtorch-dev libopenblas0-pthread zlib1g-dev
  libglpk-dev coinor-libcbc-dev
  nlohmann-json3-dev libyaml-cpp-dev libcli11-dev libspdlog-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libstb-dev liblz4-dev
  libcpp-httplib-dev prometheus-cpp-dev libjs-chart.js
  libavahi-client-dev
  dataset-fashion-mnist
)
# The independent oracle of the tests: PyTorch and ONNX from Debian.
# A real Prometheus scrapes the metrics endpoints and headless Chromium loads
# the dashboard (src/serve/observability_slowtest.cc). The discovery test
# runs its own avahi-daemon and D-Bus in a network namespace (avahi-publish
# stands in for a worker of another version).
TEST_PKGS=(python3-torch python3-torchvision python3-onnx python3-numpy
           prometheus chromium
           avahi-daemon avahi-utils dbus-daemon iproute2)
# The package test (packaging/worker_package_test.sh): systemd's offline
# checks, and strace for the system calls the service's filter allows.
TEST_PKGS+=(systemd strace)
# The HTTP API's tests (src/serve/http_api_test.cc, python_client_test.cc):
# curl as a client, and pip and setuptools to install python/ offline.
TEST_PKGS+=(curl python3-pip python3-setuptools)
# The worker flood test (test/py/grpc_flood.py): an HTTP/2 peer that sends
# half-finished gRPC messages, which no gRPC library lets a client do.
TEST_PKGS+=(python3-h2)
# The fuzz targets (scripts/fuzz.sh): clang with libFuzzer and the
# sanitizer runtimes; libomp-14-dev for clang's omp.h (the engine's calls
# still reach GCC's libgomp, which oneDNN uses).
TEST_PKGS+=(clang-14 libclang-rt-14-dev libomp-14-dev)

WORKER_PKGS=(
  build-essential cmake pkg-config ninja-build ccache
  libdnnl-dev ocl-icd-opencl-dev opencl-c-headers
  libxnnpack-dev libpthreadpool-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libssl-dev
  nlohmann-json3-dev libyaml-cpp-dev libcli11-dev liblz4-dev
  libcpp-httplib-dev prometheus-cpp-dev libavahi-client-dev
)

# The cross build's host side: protoc and grpc_cpp_plugin run here.
ARM64_HOST_PKGS=(
  build-essential cmake pkg-config ninja-build ccache
  protobuf-compiler-grpc protobuf-compiler
  crossbuild-essential-arm64 qemu-user
)

want=("${BUILD_PKGS[@]}")
arm64=false
case "${1:-}" in
  "") ;;
  # The slow tests cross-compile the worker and run it under qemu.
  --with-test-deps) want+=("${TEST_PKGS[@]}" "${ARM64_HOST_PKGS[@]}"); arm64=true ;;
  --worker) want=("${WORKER_PKGS[@]}") ;;
  --worker-arm64) want=("${ARM64_HOST_PKGS[@]}"); arm64=true ;;
  --arm64) want=("${ARM64_HOST_PKGS[@]}" libjs-chart.js); arm64=true ;;
  *)
    echo "install-deps: unknown option '$1' (--with-test-deps, --worker, --worker-arm64, --arm64)" >&2
    exit 2 ;;
esac

missing=()
for p in "${want[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#want[@]} packages present"
else
  echo "install-deps: installing ${#missing[@]} missing package(s): ${missing[*]}"
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if $arm64; then
  bash "$(dirname "$0")/arm64-sysroot.sh"
fi

#!/usr/bin/env bash
# Builds the arm64 sysroot shoal and shoal-worker cross-compile against
# (cmake/toolchain-arm64.cmake): Debian's arm64 packages of what they
# link, unpacked into a directory. Called by `scripts/install-deps.sh
# --worker-arm64` (and --arm64, --with-test-deps).
#
# Why a sysroot and not `dpkg --add-architecture arm64` and `apt-get
# install libfoo-dev:arm64`: libyaml-cpp-dev is not Multi-Arch: same, so
# installing its arm64 twin removes the amd64 one the full build needs; and
# every Multi-Arch: same library must have the same version for both
# architectures, so installing arm64 ones would upgrade amd64 libraries
# (libssl3, krb5) under everything else on the host. Unpacking the arm64
# .debs into a directory of their own changes no installed package.
#
# Usage: scripts/arm64-sysroot.sh [DIR]   (default $SHOAL_ARM64_SYSROOT or
# /opt/shoal/sysroot-arm64). Idempotent: a sysroot of the same package
# versions is kept.
set -euo pipefail

SYSROOT="${1:-${SHOAL_ARM64_SYSROOT:-/opt/shoal/sysroot-arm64}}"
# What shoal-worker links and includes, for arm64 (the worker's list in
# install-deps.sh), plus the C++ runtime to link against.
ARM64_PKGS=(
  libdnnl-dev libxnnpack-dev libpthreadpool-dev libgrpc++-dev libprotobuf-dev libssl-dev libyaml-cpp-dev
  liblz4-dev nlohmann-json3-dev libcli11-dev libstdc++-12-dev
  libavahi-client-dev prometheus-cpp-dev libcpp-httplib-dev
)
# What the whole of shoal adds (scripts/build-shoal-arm64.sh): the ONNX
# importer, GLPK for the planner's ILPs, zlib, stb, and GoogleTest, which
# the full build's CMake looks for (no test is cross-compiled). Not
# libtorch: its arm64 closure is 312 more packages, 183 MB to download and
# 750 MB unpacked, for a module only `shoal lcp train` and `lcp prune` use
# (docs/packaging.md).
ARM64_PKGS+=(
  libonnx-dev libglpk-dev zlib1g-dev libstb-dev libgtest-dev libgmock-dev
)

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi

# apt with a state of its own: arm64's package lists, an empty dpkg
# status (nothing installed: apt resolves the whole closure) and its own
# download cache, so the host's dpkg architectures and apt lists stay as
# they are (no `dpkg --add-architecture`).
state="$SYSROOT.apt"
$SUDO mkdir -p "$state/lists/partial" "$state/cache/archives/partial"
$SUDO touch "$state/status"
apt_arm64=(apt-get -o Dir::State::Lists="$state/lists"
  -o Dir::State::status="$state/status" -o Dir::Cache="$state/cache"
  -o APT::Architecture=arm64 -o APT::Architectures::=arm64)
stamp="$SYSROOT/.shoal-sysroot-packages"
# Lists younger than a day are kept (install-deps runs before every `make
# test`); without the network, an existing sysroot stays as it is.
if [[ -z "$(find "$state" -maxdepth 1 -name updated -mtime -1)" ]]; then
  if $SUDO "${apt_arm64[@]}" update -qq; then
    $SUDO touch "$state/updated"
  else
    if [[ -f "$stamp" ]]; then
      echo "arm64-sysroot: cannot refresh the arm64 package lists; keeping $SYSROOT"
      exit 0
    fi
    echo "arm64-sysroot: cannot fetch the arm64 package lists (apt-get update above)" >&2
    exit 1
  fi
fi

# "Inst libc6 (2.36-9 Debian:12/stable [arm64])" -> libc6:arm64=2.36-9; an
# Architecture: all package (headers) is named without the qualifier.
closure=$("${apt_arm64[@]}" -s install --no-install-recommends \
  "${ARM64_PKGS[@]}" |
  awk '$1 == "Inst" {
    v = $3; sub(/^\(/, "", v); a = ""
    for (i = 4; i <= NF; i++) if ($i ~ /^\[(all|arm64)\]/) a = substr($i, 2, 3)
    print (a == "all" ? $2 : $2 ":arm64") "=" v }' |
  sort)
if [[ -z "$closure" ]]; then
  echo "arm64-sysroot: apt resolved no packages for ${ARM64_PKGS[*]}" >&2
  exit 1
fi

if [[ -f "$stamp" ]] && [[ "$(cat "$stamp")" == "$closure" ]]; then
  echo "arm64-sysroot: $SYSROOT is current ($(wc -l <<< "$closure") packages)"
  exit 0
fi

echo "arm64-sysroot: unpacking $(wc -l <<< "$closure") arm64 packages into $SYSROOT"
# Unpacked beside the old sysroot and renamed into place at the end, so a
# build that uses the old one meanwhile does not see it half gone.
new="$SYSROOT.new"
debs="$SYSROOT.debs"
$SUDO rm -rf "$new" "$debs"
$SUDO mkdir -p "$new" "$debs"
# apt-get download writes into the current directory, as the _apt user
# when it can: a directory that user may write.
$SUDO chmod 777 "$debs"
mapfile -t specs <<< "$closure"
(cd "$debs" && "${apt_arm64[@]}" download -q "${specs[@]}" > /dev/null)
for deb in "$debs"/*.deb; do
  $SUDO dpkg-deb -x "$deb" "$new"
done
# Links that name an absolute path point into the host once unpacked
# elsewhere (libfoo.so -> /lib/aarch64-linux-gnu/libfoo.so.1): make them
# relative to the sysroot.
while IFS= read -r -d '' link; do
  target=$(readlink "$link")
  [[ "$target" == /* ]] || continue
  $SUDO ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" \
    "$new$target")" "$link"
done < <(find "$new" -type l -print0)
# gRPC's CMake package names its code generators, which run on the build
# host: the host's own (protobuf-compiler-grpc), not arm64 programs.
$SUDO mkdir -p "$new/usr/bin"
for plugin in /usr/bin/grpc_*_plugin; do
  $SUDO ln -sfn "$plugin" "$new$plugin"
done
$SUDO rm -rf "$debs"
echo "$closure" | $SUDO tee "$new/.shoal-sysroot-packages" > /dev/null
if [[ -d "$SYSROOT" ]]; then
  $SUDO mv "$SYSROOT" "$SYSROOT.old"
fi
$SUDO mv "$new" "$SYSROOT"
$SUDO rm -rf "$SYSROOT.old"
echo "arm64-sysroot: done ($(du -sh "$SYSROOT" | cut -f1))"

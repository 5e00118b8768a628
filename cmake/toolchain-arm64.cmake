# Cross-compiling shoal-worker for 64-bit ARM (Raspberry Pi 3/4/5 under a
# 64-bit OS) with Debian's cross compiler (crossbuild-essential-arm64) and
# Debian's arm64 libraries unpacked into a sysroot by
# scripts/arm64-sysroot.sh (`scripts/install-deps.sh --worker-arm64`):
#
#   cmake -S . -B build-arm64 -G Ninja -DSHOAL_WORKER_ONLY=ON \
#         -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-arm64.cmake
#
# protoc and grpc_cpp_plugin run on the build host: programs are looked up
# on the host, libraries, headers and CMake packages only in the sysroot.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

if(NOT SHOAL_ARM64_SYSROOT)
  if(DEFINED ENV{SHOAL_ARM64_SYSROOT})
    set(SHOAL_ARM64_SYSROOT "$ENV{SHOAL_ARM64_SYSROOT}")
  else()
    set(SHOAL_ARM64_SYSROOT /opt/shoal/sysroot-arm64)
  endif()
endif()
set(SHOAL_ARM64_SYSROOT "${SHOAL_ARM64_SYSROOT}" CACHE PATH
    "Debian arm64 packages unpacked (scripts/arm64-sysroot.sh)")
if(NOT EXISTS "${SHOAL_ARM64_SYSROOT}/.shoal-sysroot-packages")
  message(FATAL_ERROR
          "no arm64 sysroot at ${SHOAL_ARM64_SYSROOT}: run "
          "scripts/install-deps.sh --worker-arm64 (or set SHOAL_ARM64_SYSROOT)")
endif()
set(CMAKE_SYSROOT "${SHOAL_ARM64_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH "${SHOAL_ARM64_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config (liblz4) reads the sysroot's .pc files, its paths prefixed.
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${SHOAL_ARM64_SYSROOT}")
set(ENV{PKG_CONFIG_LIBDIR}
    "${SHOAL_ARM64_SYSROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${SHOAL_ARM64_SYSROOT}/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

# A program built here runs under qemu-user with the sysroot's libraries
# (try_run, and `cmake --build` of nothing else needs it).
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64;-L;${SHOAL_ARM64_SYSROOT})

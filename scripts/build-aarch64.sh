#!/usr/bin/env bash
# Cross-build the native core for Linux Arm64: libspmimch, spmi-replay and the sample JITs, with Debian's
# g++-aarch64-linux-gnu and native/cmake/aarch64-linux-gnu.cmake, into build/aarch64/install/spmi_dbg/_native/
# (bin/spmi-replay, jit/libsamplejit_base.so, jit/libsamplejit_diff.so). They run here under
# `qemu-aarch64 -L /usr/aarch64-linux-gnu` (spmi-dbg repro --qemu aarch64) or on an Arm64 machine.
# scripts/setup-debian.sh --arm64 (and --test) installs the cross compiler, qemu-user and gdb-multiarch, then
# runs this.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
cmake -S native -B build/aarch64 -DCMAKE_TOOLCHAIN_FILE="$top/native/cmake/aarch64-linux-gnu.cmake" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSPMI_PYTHON_BINDINGS=OFF -DCMAKE_INSTALL_PREFIX="$top/build/aarch64/install" \
  > build-aarch64.log 2>&1 || { cat build-aarch64.log >&2; exit 1; }
cmake --build build/aarch64 -j"$(nproc)" >> build-aarch64.log 2>&1 || { tail -50 build-aarch64.log >&2; exit 1; }
cmake --install build/aarch64 >> build-aarch64.log 2>&1
rm -f build-aarch64.log
echo "built $top/build/aarch64/install/spmi_dbg/_native (Linux Arm64)"

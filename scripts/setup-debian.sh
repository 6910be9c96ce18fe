#!/usr/bin/env bash
# Set up spmi-dbg on Debian 12: system packages, a virtualenv in .venv, the project (native core built by
# pip through CMake). With --test, also the test extras. Works as root or through sudo.
set -euo pipefail
cd "$(dirname "$0")/.."

# --test: also the test extras; --arm64 (implied by --test): the cross compiler, qemu-user and gdb-multiarch,
# and the native core built for Linux Arm64 (scripts/build-aarch64.sh), for spmi-dbg repro --qemu aarch64.
extras=""
arm64=""
for arg in "$@"; do
  case "$arg" in
    --test) extras="[test]"; arm64=1 ;;
    --arm64) arm64=1 ;;
    *) echo "usage: $0 [--test] [--arm64]" >&2; exit 2 ;;
  esac
done

packages=(python3 python3-venv python3-dev cmake g++ make gdb lldb-16 python3-lldb-16 liblldb-16-dev)
# --test: the real superpmi's coredistools (superpmi -a) needs LLVM 13's library; xz unpacks its archive.
[ -n "$extras" ] && packages+=(libllvm13 xz-utils)
# --test: clang and its libFuzzer runtime for the readers' fuzz target (tests/test_sanitizers.py).
[ -n "$extras" ] && packages+=(clang-16 libclang-rt-16-dev)
# --test: openssl makes the certificates of the TLS cluster test (tests/test_triage_cluster.py).
[ -n "$extras" ] && packages+=(openssl)
[ -n "$arm64" ] && packages+=(g++-aarch64-linux-gnu qemu-user gdb-multiarch)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  as_root=()
  [ "$(id -u)" -ne 0 ] && as_root=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${as_root[@]}" apt-get update -qq
  "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".${extras}"
[ -n "$arm64" ] && ./scripts/build-aarch64.sh
# --test: the real superpmi reference as data (collections and transcripts) for tests/real/'s data half, from
# ../shared/real-superpmi/; the live half runs only on a real build named by SPMI_DBG_REAL_SUPERPMI.
if [ -n "$extras" ]; then
  if [ -f ../shared/real-superpmi/real-superpmi-3.1.23.tar.xz ]; then
    ./scripts/unpack-real-superpmi.sh
  elif [ ! -f .real-superpmi/3.1.23/transcripts/INDEX.md ]; then
    echo "setup: ../shared/real-superpmi/ not found: the data half of tests/real/ will fail (scripts/unpack-real-superpmi.sh ARCHIVE)" >&2
  fi
  # Microsoft's Release JIT (PyPI dotnetcore2==3.1.23's libclrjit.so): a real JIT binary for the data half
  ./scripts/fetch-official-jit.sh
fi
exit 0

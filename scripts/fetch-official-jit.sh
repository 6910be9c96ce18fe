#!/usr/bin/env bash
# Microsoft's own Release JIT of .NET Core 3.1.23 (a registry package's file, not a build): libclrjit.so of the
# PyPI wheel dotnetcore2==3.1.23, into .real-superpmi/official-3.1.23/libclrjit.so, for the tests that need a real
# JIT binary without superpmi (tests/real/test_official_jit.py: .symtab only, build-id, debuglink). The wheel is
# downloaded with pip (no install) and only that one file is kept. Exit 0 when the file is there.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=.real-superpmi/official-3.1.23
[ -f "$dest/libclrjit.so" ] && exit 0
python=.venv/bin/python
[ -x "$python" ] || python=python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$python" -m pip download -q --no-deps --only-binary=:all: --platform manylinux1_x86_64 \
  --python-version 3 -d "$tmp" dotnetcore2==3.1.23 2>&1 | grep -v "^WARNING: Location" >&2 || true
wheel=$(ls "$tmp"/dotnetcore2-3.1.23-*.whl 2>/dev/null | head -1)
if [ -z "$wheel" ]; then
  echo "fetch-official-jit: pip could not download dotnetcore2==3.1.23 (tests/real/test_official_jit.py needs it)" >&2
  exit 1
fi
"$python" - "$wheel" "$tmp/libclrjit.so" <<'EOF'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    with z.open("dotnetcore2/bin/shared/Microsoft.NETCore.App/3.1.23/libclrjit.so") as src, open(sys.argv[2], "wb") as out:
        out.write(src.read())
EOF
mkdir -p "$dest"
mv "$tmp/libclrjit.so" "$dest/libclrjit.so"
echo "official JIT of .NET Core 3.1.23 fetched into $dest/libclrjit.so"

#!/bin/sh
# The seed bug (dotnet/runtime#91257) end to end: a 200,000-method sample Arm64 collection with the crash at
# method context 150,000, replayed as superpmi.py's parallel asm diffs, turned into a verified repro.
# Usage: ./run.sh [--methods N] [--at K] [--out DIR] [--workers W]     (expected outcome: expected.txt)
set -e
here=$(cd -- "$(dirname -- "$0")" && pwd)
if [ -n "${SPMI_DBG:-}" ]; then
    spmi_dbg=$SPMI_DBG
elif [ -x "$here/../../.venv/bin/spmi-dbg" ]; then
    spmi_dbg=$here/../../.venv/bin/spmi-dbg
else
    spmi_dbg=spmi-dbg
fi
exec "$spmi_dbg" demo "$@"

"""Build step: turn the cdef of libspmimch into cffi's out-of-line ABI module (`_spmimch_cffi.py`).

At run time the package then loads the library without parsing C declarations (which costs ~70 ms of
pycparser at every start). Usage: gen_cffi.py SPMIMCH_CDEF OUTPUT_PY
"""

import sys
from pathlib import Path

import cffi

cdef_path, out = Path(sys.argv[1]), Path(sys.argv[2])
ffi = cffi.FFI()
ffi.cdef(cdef_path.read_text())
ffi.set_source("_spmimch_cffi", None)
tmp = out.with_suffix(".tmp")
ffi.emit_python_code(str(tmp))
tmp.replace(out)

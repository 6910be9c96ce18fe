"""cffi (ABI mode) binding to libspmimch, installed inside the package by `pip install`.

Nothing is compiled at import time: the library was built by CMake when the package was installed.
`load()` returns None when the library is not there (e.g. a source checkout that was never
installed); callers then use the pure-Python scanner.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from typing import Any

import cffi

from spmi_dbg.paths import native_file

LIBRARY_NAME = "libspmimch.so"


class Native:
    def __init__(self, ffi: Any, lib: Any, path: Path) -> None:
        self.ffi = ffi
        self.lib = lib
        self.path = path


def _make_ffi() -> Any:
    """The ffi object: from the out-of-line module generated at build time when it is installed (no
    C parsing at start-up), else by parsing the cdef shipped with the package (~70 ms)."""
    generated = native_file("_spmimch_cffi.py")
    if generated is not None:
        spec = importlib.util.spec_from_file_location("spmi_dbg._native._spmimch_cffi", generated)
        if spec is not None and spec.loader is not None:
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module.ffi
    ffi = cffi.FFI()
    ffi.cdef((Path(__file__).parent / "spmimch.cdef").read_text())
    return ffi


@functools.cache
def load() -> Native | None:
    path = native_file(LIBRARY_NAME)
    if path is None:
        return None
    try:
        ffi = _make_ffi()
        lib = ffi.dlopen(str(path))
    except (ImportError, OSError):
        return None
    return Native(ffi, lib, path)

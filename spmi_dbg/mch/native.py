"""cffi (ABI mode) binding to libspmimch, installed inside the package by `pip install`.

Nothing is compiled at import time: the library was built by CMake when the package was installed.
`load()` returns None when the library is not there (e.g. a source checkout that was never
installed); callers then use the pure-Python scanner.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

CDEF = """
typedef struct spmimch_error { int32_t code; uint32_t record; uint64_t offset; char message[256]; } spmimch_error;
typedef struct spmimch_record { uint64_t offset; uint64_t size; } spmimch_record;
typedef struct spmimch_stats { uint64_t packet_count[256]; uint64_t packet_bytes[256]; uint64_t records; }
    spmimch_stats;
typedef struct spmimch_file spmimch_file;
typedef struct spmimch_toc spmimch_toc;

spmimch_file* spmimch_open(const char* path, spmimch_error* err);
void spmimch_close(spmimch_file* f);
uint64_t spmimch_file_size(const spmimch_file* f);
const uint8_t* spmimch_data(const spmimch_file* f);
int spmimch_scan(spmimch_file* f, unsigned flags, uint64_t budget_bytes, spmimch_stats* stats,
                 spmimch_error* problems, uint32_t max_problems, uint32_t* n_problems);
void spmimch_scan_reset(spmimch_file* f);
uint64_t spmimch_scan_position(const spmimch_file* f);
uint32_t spmimch_record_count(const spmimch_file* f);
const spmimch_record* spmimch_records(const spmimch_file* f);
int spmimch_check_record(spmimch_file* f, uint64_t offset, uint32_t number, unsigned flags, uint64_t* size,
                         spmimch_error* err);
int spmimch_expected_item_sizes(uint8_t packet_id, int dense, uint32_t sizes[2]);
int spmimch_write_records(const spmimch_file* f, const uint64_t* offsets, const uint64_t* sizes, uint32_t n,
                          const char* out_path, spmimch_error* err);
spmimch_toc* spmimch_toc_open(const char* path, uint64_t mch_size, spmimch_error* err);
void spmimch_toc_close(spmimch_toc* t);
uint32_t spmimch_toc_count(const spmimch_toc* t);
int spmimch_toc_entry(const spmimch_toc* t, uint32_t i, int64_t* offset, int32_t* number, char hash[33]);
int64_t spmimch_toc_find(const spmimch_toc* t, int32_t number);
int spmimch_toc_write(const char* path, uint32_t n, const int64_t* offsets, const int32_t* numbers,
                      const char* hashes, spmimch_error* err);
const char* spmimch_version(void);
"""

LIBRARY_NAME = "libspmimch.so"


def native_dirs() -> list[Path]:
    """Directories that may hold the package's native artifacts (`_native/` beside the Python files).

    For a regular install that is site-packages/spmi_dbg/_native. For an editable install the package's
    __path__ lists the source tree and the directory where the build was installed, so all of them are
    searched; nothing assumes where site-packages is."""
    import spmi_dbg

    return [Path(p) / "_native" for p in spmi_dbg.__path__]


def native_file(relative: str) -> Path | None:
    for d in native_dirs():
        candidate = d / relative
        if candidate.exists():
            return candidate
    return None


class Native:
    def __init__(self, ffi: Any, lib: Any, path: Path) -> None:
        self.ffi = ffi
        self.lib = lib
        self.path = path


@functools.cache
def load() -> Native | None:
    path = native_file(LIBRARY_NAME)
    if path is None:
        return None
    try:
        import cffi
    except ImportError:
        return None
    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    try:
        lib = ffi.dlopen(str(path))
    except OSError:
        return None
    return Native(ffi, lib, path)

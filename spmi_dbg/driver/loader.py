"""How a debugger's embedded Python finds this package (docs/debugger-notes.md "Making gdb and lldb
see our package"): the interpreter's own site-packages is put FIRST on sys.path (appending would let
Debian's _cffi_backend and pygments shadow ours) and processed with site.addsitedir, so that the
.pth hooks of an editable install run too. Paths are derived from the running installation, not
assumed."""

from __future__ import annotations

import sysconfig


def site_packages() -> str:
    return sysconfig.get_paths()["purelib"]


def python_bootstrap(module: str) -> str:
    """One line of Python that makes `module` importable inside the debugger and imports it."""
    site = site_packages()
    return (
        f"import sys, site; sys.path.insert(0, {site!r}); site.addsitedir({site!r}); "
        f"import {module}"
    )


def gdbinit_line() -> str:
    return "python " + python_bootstrap("spmi_dbg.ext.gdb")


def lldbinit_lines() -> list[str]:
    """lldb runs __lldb_init_module only through `command script import`, after the path is set."""
    return ["script " + python_bootstrap("spmi_dbg"), "command script import spmi_dbg.ext.lldb"]

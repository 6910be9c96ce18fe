"""The in-debugger command layer: the `spmi ...` commands that spmi_dbg.ext.gdb and
spmi_dbg.ext.lldb register (argument parsing in `spmi`, `spmi why` text in `why`, `spmi maps`/`spmi
disasm` in `inspect`, the bundle `spmi report` writes in `bundle`). The diagnosis they show is
spmi_dbg.analysis'; nothing here is specific to one debugger."""

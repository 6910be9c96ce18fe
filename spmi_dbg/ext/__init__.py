"""The extensions that run INSIDE a debugger: gdb/ (over gdb.Value and gdb.Frame) and lldb/ (over
SBValue and SBFrame), peers that never import each other."""

"""Runs OUTSIDE the debugger: starts gdb or lldb with the spmi extension loaded."""

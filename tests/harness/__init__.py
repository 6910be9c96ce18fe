"""Harnesses the tests and the benchmarks share (not part of the package): run a replay under gdb or
lldb to the stop that matters, through the product's own drivers (and, for the stop-cost benchmark,
the in-gdb loop)."""

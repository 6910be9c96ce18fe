"""Harnesses the tests and the benchmarks share (not part of the package): run a replay under gdb or lldb to
the stop that matters with the package's own signal policy, in-process."""

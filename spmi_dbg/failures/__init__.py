"""Compile failures superpmi reports itself (docs/superpmi-conventions.md 1.1): JIT asserts,
compiles that failed with an exception superpmi caught, missing data; parsed from its console
output, and the `--failure KIND[:TEXT]` target that picks one of them."""

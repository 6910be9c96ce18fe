"""Sample collections for the demo, tests and benchmarks (real SuperPMI format, generated)."""

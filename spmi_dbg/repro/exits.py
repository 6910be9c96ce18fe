"""Exit statuses of `spmi-dbg repro` (kept apart so the CLI can name them without importing the pipeline)."""

EXIT_VERIFIED, EXIT_NOT_VERIFIED, EXIT_NO_CRASH, EXIT_INPUT, EXIT_TOOL = 0, 1, 2, 3, 4

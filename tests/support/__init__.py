"""Helpers and constants the test modules share (plain functions and classes, never fixtures: those
are in tests/conftest.py). Test modules import from here, never from each other.

- common: no native artifact looked up at import (conftest imports it): collections, the CLI,
artifact lookup.
- natives: the installed spmi-replay and sample JITs, looked up at import (a missing one fails the
importer).
- replay: spmi-replay run natively, its summary line.
- pipeline: `spmi-dbg repro` / `triage` runs and their bundles.
- diagnosis: the real-debugger runs of tests/test_debug_diagnosis.py."""

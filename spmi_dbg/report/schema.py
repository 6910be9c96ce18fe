"""The versions of the data formats report/ renders: report.json (`schema/report-N.json`, written by
spmi_dbg.repro.report_data) and triage.json (`schema/triage-N.json`, written by
spmi_dbg.triage.triage_data). A renderer refuses data of another version rather than guess at its
shape."""

from __future__ import annotations

from pathlib import Path

REPORT_SCHEMA_VERSION = 5
# report.json schemas still read: 4 (before the typed envelope wrote every field of a part, null
# where it has no value) reads as 5 does, its missing fields taking their defaults
REPORT_SCHEMAS_READ = (4, REPORT_SCHEMA_VERSION)
TRIAGE_SCHEMA_VERSION = 3
SCHEMA_DIR = Path(__file__).resolve().parent / "schema"
REPORT_SCHEMA = f"report-{REPORT_SCHEMA_VERSION}.json"
TRIAGE_SCHEMA = f"triage-{TRIAGE_SCHEMA_VERSION}.json"

"""Reports, rendered from plain data alone: report.md and the text summary from report.json (written
by spmi_dbg.repro.report_data), triage.md and the triage summary from triage.json
(spmi_dbg.triage.triage_data); their schemas (schema/, versions in schema.py); --redact; `spmi-dbg
report BUNDLE`. Imports neither repro nor triage nor driver: it renders what they wrote."""

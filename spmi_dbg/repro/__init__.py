"""`spmi-dbg repro`: from "superpmi crashed" to a verified single-method repro
(docs/architecture.md, "Data flow of spmi-dbg repro"). One module per job: command (parse,
partitions), locate (partitions under debuggers, native bisection), isolate (byte-exact records),
verify, minimize (ddmin), regression (each JIT alone), expect (what counts as the same failure),
native (runs without a debugger), bundle and report_data (the output and report.json), pipeline (the
order), arguments and options (the command line repro, triage and demo share), display and cli; demo
(the README's first command)."""

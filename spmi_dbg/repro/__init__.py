"""`spmi-dbg repro`: from "superpmi crashed" to a verified single-method repro (DESIGN.md, "Data flow of
spmi-dbg repro"). One module per job: command (parse, partitions), locate (partitions under debuggers, native
bisection), isolate (byte-exact records), verify, minimize (ddmin), expect (what counts as the same failure),
native (runs without a debugger), bundle and report (the output), pipeline (the order), display and cli."""

"""`spmi-dbg triage`: crashes over a whole collection, bucketed, one verified repro each."""

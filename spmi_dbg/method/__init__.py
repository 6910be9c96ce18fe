"""The method as the JIT saw it: its IL with names, its signature, locals, exception clauses
(and, from the same answers, the callees it weighed and its flags)."""

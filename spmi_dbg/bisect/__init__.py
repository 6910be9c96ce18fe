"""`spmi-dbg bisect`: the first JIT build that fails as a repro does, from a store of builds."""

"""`spmi-dbg recheck`: is it fixed? Each repro replayed on a new build."""

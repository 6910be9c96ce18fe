"""Every exit status of `spmi-dbg`, defined once (the README's "Exit status" table is this
module's).

Two families, because a pipeline's 1 and 2 are results, not errors:
- the tools (`mch`, `sample`, `report`, `why`, `gdbinit`, `lldbinit`): 0 done; 1 a bad input (a
  corrupt or unreadable file, named in one line) or a check that found problems (`mch verify`); 2 a
  usage error. `gdb` and `lldb` exec the debugger: its status, or 2 for a usage error before it
  starts.
- the pipelines (`repro`, `triage`, `demo`): 0 a verified repro (triage: every bucket's); 1 a crash
  found but its repro not verified; 2 no crash; 3 a usage or input error; 4 the debugger itself
  failed (it died or stopped answering, also after one retry with a fresh one); 5 the run could
  not finish (a full disk, an I/O error): what it wrote is kept, and the one line says how to go on.
- bisect and recheck (pipelines too: 3 and 4 as above): 0 the first bad build found / every repro
  fixed; 1 not found / a repro not fixed; `recheck --git-bisect` 0 good, 1 bad, 125 skip (what
  `git bisect run` reads).
Both: 130 interrupted (Ctrl-C), 143 terminated (SIGTERM); either way the run cleans up after itself.
`spmi-dbg` with no COMMAND or an unknown one: 3 (it may have been meant for a pipeline). Each
command's parser (spmi_dbg.usage.Parser) exits with its own family's usage status."""

from __future__ import annotations

# the tools
OK = 0
BAD_INPUT = 1
USAGE = 2

# the pipelines
VERIFIED = 0
NOT_VERIFIED = 1
NO_CRASH = 2
PIPELINE_INPUT = 3  # usage or input error: 2 already means "no crash" there
TOOL_FAILURE = 4
# the run could not finish its work (a full disk, an I/O error): what it wrote is kept, the one line
# says why and how to resume
INCOMPLETE = 5

# bisect and recheck
FOUND = 0  # bisect: the first bad build; recheck: every repro fixed
NOT_FOUND = 1  # bisect: a range, or wrong endpoints; recheck: a repro not fixed
GIT_BISECT_SKIP = 125  # recheck --git-bisect: neither good nor bad (git bisect run's skip)

INTERRUPTED = 130  # SIGINT (Ctrl-C)
TERMINATED = 143  # SIGTERM, handled as SIGINT is

"""lldb from outside: its SB API in a worker process (worker, started by replay), the SB API helpers
the worker launches and resumes with (sbapi), the Driver for `--debugger lldb` (driver)."""

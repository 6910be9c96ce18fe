"""gdb from outside: the MI channel (mi), a replay or a core file under gdb with the extension
loaded (replay), the Driver for `--debugger gdb` (driver)."""

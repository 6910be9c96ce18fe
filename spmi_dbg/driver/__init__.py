"""Runs OUTSIDE the debugger: gdb over MI (gdbmi, mi), lldb's SB API in a worker process (lldb_driver,
lldb_worker, lldb_session), qemu-user guests (qemu), behind one interface (base.Driver) picked in one place
(select); and `spmi-dbg gdb|lldb|gdbinit|lldbinit` (launch, loader)."""

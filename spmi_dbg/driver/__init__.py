"""Runs OUTSIDE the debugger: gdb over MI (the gdb package), lldb's SB API in a worker process (the
lldb package), qemu-user guests (qemu), behind one interface (base.Driver) picked in one place
(select); and `spmi-dbg gdb|lldb|gdbinit|lldbinit` (launch, loader)."""

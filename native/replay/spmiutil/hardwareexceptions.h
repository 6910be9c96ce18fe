// The protected region: this core's analogue of the PAL turning a hardware fault inside PAL_TRY into an
// exception (docs/superpmi-conventions.md 2). One SIGSEGV/SIGBUS/SIGILL/SIGFPE handler is installed for the
// whole process. While a region is active (the JIT call, and the JIT's own runWithErrorTrap regions inside
// it) a fault is turned into a siglongjmp back to the region with the Windows exception code the PAL
// would use (SIGSEGV -> c0000005). Outside every region the handler declines: it restores the default
// action and returns, the instruction faults again and the process dies of the signal (the debugger sees
// a first-chance and then a second-chance stop at the same pc). There is no alternate signal stack, so a
// stack overflow kills the process even inside a region. SIGABRT and SIGTRAP are not handled.
#ifndef _HardwareExceptions
#define _HardwareExceptions

#include <csetjmp>

#include "../standardpch.h"

struct PalTryFrame
{
    sigjmp_buf   jmpBuf;
    PalTryFrame* previous;
    DWORD        exceptionCode;  // set by the handler before it jumps back
};

void PAL_InitializeHardwareExceptions();
// `-bug 56506`: no region catches a fault (the handler stays installed and declines every one), as superpmi
// on Linux, where PAL_TRY enables no hardware-exception catching (docs/superpmi-conventions.md 2).
void PAL_DisableHardwareExceptions();
void PAL_EnterTry(PalTryFrame* frame);  // after PAL_SETJMP(*frame) returned 0
void PAL_LeaveTry(PalTryFrame* frame);  // on every normal or C++-exception exit of the region

#ifdef SPMI_NO_PROTECTED_REGIONS
// Benchmark-only build (CMake SPMI_REPLAY_PROTECTED_REGIONS=OFF): no regions (the handler is installed but
// always declines), every fault is fatal.
#define PAL_SETJMP(frame) 0
#else
// The signal mask is not saved (that would be a system call per region): the handler unblocks the signal
// itself before it jumps back.
#define PAL_SETJMP(frame) sigsetjmp((frame).jmpBuf, 0)
#endif

#endif

#include "hardwareexceptions.h"

#include <csignal>
#include <cstdlib>

#include "errorhandling.h"

static thread_local PalTryFrame* t_currentFrame = nullptr;
static bool s_regionsEnabled = true;

void PAL_DisableHardwareExceptions()
{
    s_regionsEnabled = false;
}

static DWORD ExceptionCodeFromSignal(int sig, const siginfo_t* info)
{
    switch (sig)
    {
        case SIGFPE:
            switch (info->si_code)
            {
                case FPE_INTDIV: return EXCEPTION_INT_DIVIDE_BY_ZERO;
                case FPE_INTOVF: return EXCEPTION_INT_OVERFLOW;
                case FPE_FLTDIV: return EXCEPTION_FLT_DIVIDE_BY_ZERO;
                default: return EXCEPTION_FLT_INVALID_OPERATION;
            }
        case SIGILL:
            return (info->si_code == ILL_PRVOPC) ? EXCEPTION_PRIV_INSTRUCTION : EXCEPTION_ILLEGAL_INSTRUCTION;
        case SIGBUS:
            return (info->si_code == BUS_ADRALN) ? EXCEPTION_DATATYPE_MISALIGNMENT : EXCEPTION_ACCESS_VIOLATION;
        case SIGTRAP:
            return EXCEPTION_BREAKPOINT;
        default:
            return EXCEPTION_ACCESS_VIOLATION;
    }
}

static void HardwareExceptionHandler(int sig, siginfo_t* info, void* /*context*/)
{
    PalTryFrame* frame = t_currentFrame;
    if (frame == nullptr && sig == SIGTRAP)
    {
        // Today's PAL (src/coreclr/pal/src/exception/signal.cpp: sigtrap_handler, invoke_previous_action with
        // signalRestarts false): a trap does not run again, so with the default previous action it aborts.
        abort();
    }
    if (frame == nullptr)
    {
        // Not in a protected region: decline. With the default action back in place the faulting
        // instruction runs again and the process dies of the signal (a signal sent by kill() is re-raised).
        signal(sig, SIG_DFL);
        if (info->si_code <= 0)
            raise(sig);
        return;
    }
    t_currentFrame       = frame->previous;
    frame->exceptionCode = ExceptionCodeFromSignal(sig, info);
    sigset_t unblock;
    sigemptyset(&unblock);
    sigaddset(&unblock, sig);
    sigprocmask(SIG_UNBLOCK, &unblock, nullptr);
    siglongjmp(frame->jmpBuf, 1);
}

void PAL_InitializeHardwareExceptions()
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = HardwareExceptionHandler;
    sa.sa_flags     = SA_SIGINFO;  // no SA_ONSTACK: no alternate stack
    sigemptyset(&sa.sa_mask);
    // SIGTRAP too, as today's PAL: a debug break inside a protected call becomes an exception
    // (EXCEPTION_BREAKPOINT), one outside aborts the process.
    for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP})
        sigaction(sig, &sa, nullptr);
}

void PAL_EnterTry(PalTryFrame* frame)
{
#ifndef SPMI_NO_PROTECTED_REGIONS
    frame->previous      = t_currentFrame;
    frame->exceptionCode = 0;
    if (s_regionsEnabled)
        t_currentFrame = frame;
#else
    (void)frame;
#endif
}

void PAL_LeaveTry(PalTryFrame* frame)
{
#ifndef SPMI_NO_PROTECTED_REGIONS
    if (t_currentFrame == frame)
        t_currentFrame = frame->previous;
#else
    (void)frame;
#endif
}

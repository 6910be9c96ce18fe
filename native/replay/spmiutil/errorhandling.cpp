#include "errorhandling.h"

#include <cstdarg>
#include <string>
#include <sys/syscall.h>
#include <unistd.h>

#include "../logging.h"

static bool s_breakOnDebugBreakorAV = false;
static bool s_breakOnException      = false;

void SetBreakOnDebugBreakorAV(bool value) { s_breakOnDebugBreakorAV = value; }
bool BreakOnDebugBreakorAV() { return s_breakOnDebugBreakorAV; }
void SetBreakOnException(bool value) { s_breakOnException = value; }
bool BreakOnException() { return s_breakOnException; }

void SpmiException::ShowAndDeleteMessage()
{
    if (hasMessage)
    {
        LogError("Exception thrown: %s", exMessage.c_str());
        DeleteMessage();
    }
    else
    {
        LogError("Unexpected exception %x was thrown.", exCode);
    }
}

void ThrowSpmiException(DWORD exceptionCode, const char* message, ...)
{
    char    buffer[8 * 1024];
    va_list args;
    va_start(args, message);
    vsnprintf(buffer, sizeof(buffer), message, args);
    va_end(args);

    // -box: break whenever superpmi raises one of its own exceptions.
    if (BreakOnException())
        DEBUG_BREAK;
    throw SpmiException(exceptionCode, buffer);
}

void ThrowRecordedException(DWORD innerExceptionCode)
{
    LogDebug("Recorded exception 0x%08x re-thrown", innerExceptionCode);
    throw SpmiException(EXCEPTIONCODE_RECORDED_EXCEPTION, nullptr);
}

void ThrowHardwareException(DWORD exceptionCode)
{
    throw SpmiException(exceptionCode, nullptr);
}

bool IsSuperPMIException(DWORD exceptionCode)
{
    switch (exceptionCode)
    {
        case EXCEPTIONCODE_MC:
        case EXCEPTIONCODE_LWM:
        case EXCEPTIONCODE_CALLUTILS:
        case EXCEPTIONCODE_TYPEUTILS:
        case EXCEPTIONCODE_ASSERT:
            return true;
        default:
            return (EXCEPTIONCODE_DebugBreakorAV <= exceptionCode) && (exceptionCode < EXCEPTIONCODE_DebugBreakorAV_MAX);
    }
}

bool IsDebuggerPresent()
{
    FILE* f = fopen("/proc/self/status", "r");
    if (f == nullptr)
        return false;
    char line[256];
    long tracer = 0;
    while (fgets(line, sizeof(line), f) != nullptr)
    {
        if (strncmp(line, "TracerPid:", 10) == 0)
        {
            tracer = strtol(line + 10, nullptr, 10);
            break;
        }
    }
    fclose(f);
    return tracer != 0;
}

void DebugBreakorAV(int val)
{
    if (IsDebuggerPresent())
    {
        if (val == 0)
            DEBUG_BREAK;
        if (BreakOnDebugBreakorAV())
            DEBUG_BREAK;
    }

    DWORD exception_code = EXCEPTIONCODE_DebugBreakorAV + (DWORD)val;
    LogException(exception_code, "DebugBreak or AV Exception %d", val);
}

void DbgBreakCheck(const char* szFile, int iLine, const char* szExpr)
{
    long tid = (long)syscall(SYS_gettid);
    // superpmi's text ends in a newline: an empty line follows (both eras)
    LogError("SuperPMI: Assert Failure (PID %d, Thread %ld/%lx)\n%s\n\n%s, Line: %d\n", (int)getpid(), tid, tid, szExpr,
             szFile, iLine);
}

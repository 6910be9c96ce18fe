// SuperPMI's error signalling (superpmi-shared/errorhandling.h): exception codes, SpmiException, the
// Assert*/LogException macros and the debug-break helpers. On Windows superpmi raises SEH exceptions with
// these codes; here they are C++ exceptions carrying the same code and message.
#ifndef _ErrorHandling
#define _ErrorHandling

#include <string>

#include "../standardpch.h"

#define EXCEPTIONCODE_DebugBreakorAV 0xe0421000
#define EXCEPTIONCODE_DebugBreakorAV_MAX (EXCEPTIONCODE_DebugBreakorAV + 0x1000)
#define EXCEPTIONCODE_MC 0xe0422000
#define EXCEPTIONCODE_LWM 0xe0423000
#define EXCEPTIONCODE_CALLUTILS 0xe0426000
#define EXCEPTIONCODE_TYPEUTILS 0xe0427000
#define EXCEPTIONCODE_RECORDED_EXCEPTION 0xe0428000
#define EXCEPTIONCODE_ASSERT 0xe0440000

// Windows codes the PAL gives hardware faults (SIGSEGV -> access violation, ...).
#define EXCEPTION_ACCESS_VIOLATION 0xc0000005
#define EXCEPTION_DATATYPE_MISALIGNMENT 0x80000002
#define EXCEPTION_BREAKPOINT 0x80000003
#define EXCEPTION_ILLEGAL_INSTRUCTION 0xc000001d
#define EXCEPTION_PRIV_INSTRUCTION 0xc0000096
#define EXCEPTION_INT_DIVIDE_BY_ZERO 0xc0000094
#define EXCEPTION_INT_OVERFLOW 0xc0000095
#define EXCEPTION_FLT_DIVIDE_BY_ZERO 0xc000008e
#define EXCEPTION_FLT_INVALID_OPERATION 0xc0000090

#if defined(__x86_64__) || defined(__i386__)
#define DEBUG_BREAK __asm__ volatile("int3")
#elif defined(__aarch64__)
#define DEBUG_BREAK __asm__ volatile("brk #0")
#else
#define DEBUG_BREAK __builtin_trap()
#endif

// The exception object: a code and an optional message (hardware faults and recorded EE exceptions have none).
class SpmiException
{
public:
    SpmiException(DWORD code, const char* message) : exCode(code), hasMessage(message != nullptr)
    {
        if (message != nullptr)
            exMessage = message;
    }
    DWORD GetCode() const { return exCode; }
    const char* GetExceptionMessage() const { return hasMessage ? exMessage.c_str() : nullptr; }
    // `ERROR: Exception thrown: <message>` or `ERROR: Unexpected exception %x was thrown.`
    void ShowAndDeleteMessage();
    void DeleteMessage() { hasMessage = false; exMessage.clear(); }

private:
    DWORD       exCode;
    bool        hasMessage;
    std::string exMessage;
};

[[noreturn]] void ThrowSpmiException(DWORD exceptionCode, const char* message, ...)
    __attribute__((format(printf, 2, 3)));
// An exception the EE threw while the method was being recorded, re-thrown during replay.
[[noreturn]] void ThrowRecordedException(DWORD innerExceptionCode);
// A hardware fault converted by the protected region (no message: `Unexpected exception %x was thrown.`).
[[noreturn]] void ThrowHardwareException(DWORD exceptionCode);

bool IsSuperPMIException(DWORD exceptionCode);

void SetBreakOnDebugBreakorAV(bool value);
bool BreakOnDebugBreakorAV();
void SetBreakOnException(bool value);
bool BreakOnException();
bool IsDebuggerPresent();  // as the PAL: TracerPid != 0 in /proc/self/status

[[noreturn]] void DebugBreakorAV(int val);
void DbgBreakCheck(const char* szFile, int iLine, const char* szExpr);

#define LogException(exCode, msg, ...)                                                                       \
    do                                                                                                         \
    {                                                                                                          \
        Logger::LogExceptionMessage(__FUNCTION__, __FILE__, __LINE__, exCode, msg, ##__VA_ARGS__);             \
        ThrowSpmiException(exCode, msg, ##__VA_ARGS__);                                                        \
    } while (0)

#define AssertCodeMsg(expr, exCode, msg, ...)                                                                  \
    do                                                                                                         \
    {                                                                                                          \
        if (!(expr))                                                                                           \
            LogException(exCode, "SuperPMI assertion '%s' failed (" msg ")", #expr, ##__VA_ARGS__);            \
    } while (0)

#define AssertCode(expr, exCode)                                                                               \
    do                                                                                                         \
    {                                                                                                          \
        if (!(expr))                                                                                           \
            LogException(exCode, "SuperPMI assertion '%s' failed", #expr);                                     \
    } while (0)

#define AssertMsg(expr, msg, ...) AssertCodeMsg(expr, EXCEPTIONCODE_ASSERT, msg, ##__VA_ARGS__)

#endif

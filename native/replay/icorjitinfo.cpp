#include "icorjitinfo.h"

#include <cstdlib>

#include "jitinstance.h"
#include "logging.h"
#include "spmiutil/hardwareexceptions.h"
#include "spmiutil/spmiutil.h"

uint32_t MyICJI::getExpectedTargetArchitecture()
{
    return jitInstance->mc->repGetExpectedTargetArchitecture();
}

uint32_t MyICJI::getJitFlags(CORJIT_FLAGS* flags, uint32_t sizeInBytes)
{
    return jitInstance->mc->repGetJitFlags(flags, sizeInBytes);
}

void MyICJI::resolveToken(CORINFO_RESOLVED_TOKEN* pResolvedToken)
{
    jitInstance->mc->repResolveToken(pResolvedToken);
}

void MyICJI::getMethodSig(CORINFO_METHOD_HANDLE ftn, CORINFO_SIG_INFO* sig, CORINFO_CLASS_HANDLE memberParent)
{
    jitInstance->mc->repGetMethodSig(ftn, sig, memberParent);
}

size_t MyICJI::printMethodName(CORINFO_METHOD_HANDLE ftn, char* buffer, size_t bufferSize)
{
    return jitInstance->mc->repPrintMethodName(ftn, buffer, bufferSize);
}

void MyICJI::allocMem(AllocMemArgs* pArgs)
{
    CompileResult* cr = jitInstance->mc->cr;
    free(cr->allocMemDets.hotCodeBlock);
    free(cr->allocMemDets.coldCodeBlock);
    free(cr->allocMemDets.roDataBlock);
    pArgs->hotCodeBlock  = pArgs->hotCodeBlockRW  = pArgs->hotCodeSize ? calloc(1, pArgs->hotCodeSize) : nullptr;
    pArgs->coldCodeBlock = pArgs->coldCodeBlockRW = pArgs->coldCodeSize ? calloc(1, pArgs->coldCodeSize) : nullptr;
    pArgs->roDataBlock   = pArgs->roDataBlockRW   = pArgs->roDataSize ? calloc(1, pArgs->roDataSize) : nullptr;
    cr->recAllocMem(pArgs->hotCodeSize, pArgs->coldCodeSize, pArgs->roDataSize, pArgs->xcptnsCount, 0,
                    pArgs->hotCodeBlock, pArgs->coldCodeBlock, pArgs->roDataBlock);
}

// A JIT assert: `ISSUE: <ASSERT> #<mc> <file> (<line>) - <message>`; with -boa the assert failure report
// (and a debug break when a debugger is attached); then DebugBreakorAV(0x7b) raises 0xE042107B.
int MyICJI::doAssert(const char* szFile, int iLine, const char* szExpr)
{
    char buff[16 * 1024];
    snprintf(buff, sizeof(buff), "%s (%d) - %s", szFile, iLine, szExpr);

    // 3.1's line has no method context number (only the failed compile's ERROR line on stderr has it).
    if (SpmiEra31())
        LogIssue(ISSUE_ASSERT, "%s", buff);
    else
        LogIssue(ISSUE_ASSERT, "#%d %s", jitInstance->mc->index, buff);

    if (BreakOnDebugBreakorAV())
        DbgBreakCheck(szFile, iLine, szExpr);

    DebugBreakorAV(0x7b);
}

// The JIT's own error trap (superpmi's RunWithErrorTrap): catches everything except superpmi's own
// exceptions (missing data, asserts), which go on to JitInstance::CompileMethod. A hardware fault inside
// the trap is caught here, as the PAL would.
bool MyICJI::runWithErrorTrap(void (*function)(void*), void* parameter)
{
    PalTryFrame frame;
    if (PAL_SETJMP(frame) != 0)
        return false;
    PAL_EnterTry(&frame);
    try
    {
        function(parameter);
    }
    catch (const SpmiException& e)
    {
        PAL_LeaveTry(&frame);
        if (IsSuperPMIException(e.GetCode()))
            throw;
        return false;
    }
    catch (...)
    {
        PAL_LeaveTry(&frame);
        return false;
    }
    PAL_LeaveTry(&frame);
    return true;
}

#include "jitinstance.h"

#include <cerrno>
#include <climits>
#include <dlfcn.h>

#include "icorjitinfo.h"
#include "jithost.h"
#include "logging.h"
#include "spmiutil/hardwareexceptions.h"

// What a C++ exception escaping the JIT is, seen through SEH (0xE06D7363, "msc").
#define EXCEPTION_MSVC_CPP 0xe06d7363

JitInstance::JitInstance()
    : pJitInstance(nullptr), mc(nullptr), ignoreStoredConfig(false), lastCompileSeconds(0), PathToOriginalJit(nullptr),
      hLib(nullptr), pngetJit(nullptr), pnjitStartup(nullptr), jitHost(nullptr), icji(nullptr),
      forceOptions(nullptr), options(nullptr)
{
}

JitInstance* JitInstance::InitJit(char* nameOfJit, bool breakOnAssert, SimpleTimer* st1, MethodContext* firstContext,
                                  const JitOptionList* forceOptions, const JitOptionList* options,
                                  bool ignoreStoredConfig)
{
    JitInstance* jit        = new JitInstance();
    jit->forceOptions       = forceOptions;
    jit->options            = options;
    jit->ignoreStoredConfig = ignoreStoredConfig;

    if (st1 != nullptr)
        st1->Start();
    HRESULT hr = jit->StartUp(nameOfJit, breakOnAssert, firstContext);
    if (st1 != nullptr)
        st1->Stop();
    if (hr != S_OK)
    {
        LogError("Startup of JIT(%s) failed %d", nameOfJit, hr);
        return nullptr;
    }
    if (st1 != nullptr)
        LogVerbose("Jit startup took %fms", st1->GetMilliseconds());
    return jit;
}

HRESULT JitInstance::StartUp(char* PathToJit, bool breakOnDebugBreakorAV, MethodContext* firstContext)
{
    SetBreakOnDebugBreakorAV(breakOnDebugBreakorAV);

    char fullPath[PATH_MAX];
    PathToOriginalJit = (realpath(PathToJit, fullPath) != nullptr) ? strdup(fullPath) : strdup(PathToJit);

    hLib = dlopen(PathToOriginalJit, RTLD_NOW | RTLD_LOCAL);
    if (hLib == nullptr)
    {
        LogDebug("dlopen: %s", dlerror());
        LogError("Startup - LoadLibrary failed to load '%s' (0x%08x)", PathToOriginalJit, 0x7e);
        return E_FAIL;
    }
    pngetJit = (PgetJit)dlsym(hLib, "getJit");
    if (pngetJit == nullptr)
    {
        LogError("Startup - GetProcAddress failed to load getJit (0x%08x)", 0x7f);
        return E_FAIL;
    }
    pnjitStartup = (PjitStartup)dlsym(hLib, "jitStartup");

    mc      = firstContext;
    jitHost = new JitHost(*this);
    if (pnjitStartup != nullptr)
        pnjitStartup(jitHost);

    pJitInstance = pngetJit();
    if (pJitInstance == nullptr)
    {
        LogError("pJitInstance is null");
        return E_FAIL;
    }
    icji = new MyICJI(this);
    return S_OK;
}

const char* JitInstance::getForceOption(const char* key)
{
    if (forceOptions != nullptr)
        for (const auto& kv : *forceOptions)
            if (kv.first == key)
                return kv.second.c_str();
    return nullptr;
}

const char* JitInstance::getOption(const char* key)
{
    if (options != nullptr)
        for (const auto& kv : *options)
            if (kv.first == key)
                return kv.second.c_str();
    return nullptr;
}

JitInstance::Result JitInstance::HandleException(SpmiException& e, int mcIndex)
{
    if (e.GetCode() == EXCEPTIONCODE_MC)
    {
        LogMissing("Method context %d failed to replay: %s", mcIndex, e.GetExceptionMessage());
        e.DeleteMessage();
        return RESULT_MISSING;
    }
    if (e.GetCode() == EXCEPTIONCODE_RECORDED_EXCEPTION)
    {
        // The EE threw while the method was recorded (e.g. resolveToken): the JIT's behaviour is irrelevant
        // and the replay counts as a success ("Successful Compile (EE API exception)"). There is code
        // memory (hotCodeSize 0) and GC info, but no CompileMethod compile result.
        mc->cr->recAllocMemCapture();
        mc->cr->recAllocGCInfoCapture();
        return RESULT_SUCCESS;
    }
    e.ShowAndDeleteMessage();
    return RESULT_ERROR;
}

// Compiles one method context. The JIT call (with every host callback it makes) runs inside a protected
// region: a hardware fault there becomes `Unexpected exception c0000005 was thrown.` and a failed compile.
JitInstance::Result JitInstance::CompileMethod(MethodContext* MethodToCompile, int mcIndex, bool collectThroughput)
{
    (void)collectThroughput;
    mc = MethodToCompile;
    SimpleTimer stj;
    stj.Start();

    volatile Result result = RESULT_SUCCESS;
    PalTryFrame     frame;
    if (PAL_SETJMP(frame) == 0)
    {
        PAL_EnterTry(&frame);
        try
        {
            CORINFO_METHOD_INFO info;
            unsigned            flags = 0;
            DWORD               os    = 0;
            uint8_t*            NEntryBlock    = nullptr;
            uint32_t            NCodeSizeBlock = 0;

            mc->repCompileMethod(&info, &flags, &os);
            CorJitResult jitResult = pJitInstance->compileMethod(icji, &info, flags, &NEntryBlock, &NCodeSizeBlock);
            PAL_LeaveTry(&frame);

            if (jitResult == CORJIT_OK || jitResult == CORJIT_BADCODE)
            {
                // capture the results of compilation
                BYTE* entry = NEntryBlock;
                ULONG size  = NCodeSizeBlock;
                mc->cr->recCompileMethod(&entry, &size, jitResult);
                mc->cr->recAllocMemCapture();
                mc->cr->recAllocGCInfoCapture();
                LogDebug("%s", jitResult == CORJIT_OK ? "Successful Compile" : "Successful Compile (BADCODE)");
            }
            else
            {
                LogDebug("compileMethod failed with result %d", (int)jitResult);
                result = RESULT_ERROR;
            }
        }
        catch (SpmiException& e)
        {
            PAL_LeaveTry(&frame);
            result = HandleException(e, mcIndex);
        }
        catch (...)
        {
            PAL_LeaveTry(&frame);
            SpmiException e(EXCEPTION_MSVC_CPP, nullptr);
            result = HandleException(e, mcIndex);
        }
    }
    else
    {
        // A hardware fault in the JIT (the handler has already left the region).
        SpmiException e(frame.exceptionCode, nullptr);
        result = HandleException(e, mcIndex);
    }

    stj.Stop();
    lastCompileSeconds = stj.GetSeconds();
    return result;
}

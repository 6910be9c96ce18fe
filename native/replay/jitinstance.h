// JitInstance (superpmi/jitinstance.h): one loaded JIT (dlopen, jitStartup, getJit) and the compile of one
// method context through it.
#ifndef _JitInstance
#define _JitInstance

#include "commandline.h"
#include "corinfo.h"
#include "methodcontext.h"
#include "spmiutil/spmiutil.h"

class MyICJI;
class JitHost;

class JitInstance
{
public:
    enum Result
    {
        RESULT_ERROR,
        RESULT_SUCCESS,
        RESULT_MISSING
    };

    // Loads the JIT; returns null (after an ERROR line) when it cannot be loaded or started.
    static JitInstance* InitJit(char* nameOfJit, bool breakOnAssert, SimpleTimer* st1, MethodContext* firstContext,
                                const JitOptionList* forceOptions, const JitOptionList* options,
                                bool ignoreStoredConfig);

    HRESULT StartUp(char* PathToJit, bool breakOnDebugBreakorAV, MethodContext* firstContext);
    Result CompileMethod(MethodContext* MethodToCompile, int mcIndex, bool collectThroughput);

    const char* getForceOption(const char* key);
    const char* getOption(const char* key);

    ICorJitCompiler* pJitInstance;
    MethodContext*   mc;
    bool             ignoreStoredConfig;
    double           lastCompileSeconds;

private:
    JitInstance();
    Result HandleException(SpmiException& e, int mcIndex);

    char*                PathToOriginalJit;
    void*                hLib;
    PgetJit              pngetJit;
    PjitStartup          pnjitStartup;
    JitHost*             jitHost;
    MyICJI*              icji;
    const JitOptionList* forceOptions;
    const JitOptionList* options;
};

#endif

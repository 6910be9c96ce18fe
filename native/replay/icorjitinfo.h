// MyICJI (superpmi/icorjitinfo.cpp): the EE side of the JIT-EE interface during replay. Every answer
// comes from the method context's recorded maps (MethodContext::rep*); a missing answer raises the
// missing-data exception.
#ifndef _ICorJitInfo
#define _ICorJitInfo

#include "corinfo.h"

class JitInstance;

class MyICJI : public ICorJitInfo
{
public:
    explicit MyICJI(JitInstance* ji) : jitInstance(ji) {}
    virtual ~MyICJI() = default;

    uint32_t getExpectedTargetArchitecture() override;
    uint32_t getJitFlags(CORJIT_FLAGS* flags, uint32_t sizeInBytes) override;
    void resolveToken(CORINFO_RESOLVED_TOKEN* pResolvedToken) override;
    void getMethodSig(CORINFO_METHOD_HANDLE ftn, CORINFO_SIG_INFO* sig, CORINFO_CLASS_HANDLE memberParent) override;
    size_t printMethodName(CORINFO_METHOD_HANDLE ftn, char* buffer, size_t bufferSize) override;
    void allocMem(AllocMemArgs* pArgs) override;
    int doAssert(const char* szFile, int iLine, const char* szExpr) override;
    bool runWithErrorTrap(void (*function)(void*), void* parameter) override;

private:
    JitInstance* jitInstance;
};

#endif

// JitHost (superpmi/jithost.cpp): ICorJitHost for the replayed JIT: configuration and memory.
#ifndef _JitHost
#define _JitHost

#include "corinfo.h"

class JitInstance;

class JitHost : public ICorJitHost
{
public:
    explicit JitHost(JitInstance& ji) : jitInstance(ji) {}
    virtual ~JitHost() = default;

    int getIntConfigValue(const char* name, int defaultValue) override;
    const char* getStringConfigValue(const char* name) override;
    void freeStringConfigValue(const char* value) override;
    void* allocateMemory(size_t size) override;
    void freeMemory(void* block) override;

private:
    JitInstance& jitInstance;
};

#endif

// CompileResult (superpmi-shared/compileresult.h): what one JIT compile produced. Every map is optional:
// a null pointer means "never recorded" (e.g. no CompileMethod map after a recorded EE exception).
#ifndef _CompileResult
#define _CompileResult

#include "agnostic.h"
#include "lightweightmap.h"

// What allocMem handed out, captured into the AllocMem map after the compile (recAllocMemCapture).
struct Capture_AllocMemDetails
{
    ULONG         hotCodeSize;
    ULONG         coldCodeSize;
    ULONG         roDataSize;
    ULONG         xcptnsCount;
    DWORD         flag;
    void*         hotCodeBlock;
    void*         coldCodeBlock;
    void*         roDataBlock;
};

struct allocGCInfoDetails
{
    void*  retval;
    size_t size;
};

class CompileResult
{
public:
    CompileResult();
    ~CompileResult();
    CompileResult(const CompileResult&) = delete;
    CompileResult& operator=(const CompileResult&) = delete;

    void recCompileMethod(BYTE** nativeEntry, ULONG* nativeSizeOfCode, int result);
    void repCompileMethod(BYTE** nativeEntry, ULONG* nativeSizeOfCode, int* result);

    void recAllocMem(ULONG hotCodeSize, ULONG coldCodeSize, ULONG roDataSize, ULONG xcptnsCount, DWORD flag,
                     void* hotCodeBlock, void* coldCodeBlock, void* roDataBlock);
    void recAllocMemCapture();
    void repAllocMem(ULONG* hotCodeSize, ULONG* coldCodeSize, ULONG* roDataSize, ULONG* xcptnsCount, DWORD* flag,
                     const unsigned char** hotCodeBlock, const unsigned char** coldCodeBlock,
                     const unsigned char** roDataBlock, void** orig_hotCodeBlock, void** orig_coldCodeBlock,
                     void** orig_roDataBlock);

    void recAllocGCInfo(size_t size, void* retval);
    void recAllocGCInfoCapture();

#define LWM(map, key, value) LightWeightMap<key, value>* map;
#define DENSELWM(map, value) DenseLightWeightMap<value>* map;
#include "crlwmlist.h"

    Capture_AllocMemDetails allocMemDets;
    allocGCInfoDetails      allocGCInfoDets;
    double                  secondsToCompile;
};

#endif

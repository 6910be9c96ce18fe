#include "compileresult.h"

#include <cstdlib>

CompileResult::CompileResult()
{
#define LWM(map, key, value) map = nullptr;
#define DENSELWM(map, value) map = nullptr;
#include "crlwmlist.h"
    memset(&allocMemDets, 0, sizeof(allocMemDets));
    memset(&allocGCInfoDets, 0, sizeof(allocGCInfoDets));
    secondsToCompile = 0;
}

CompileResult::~CompileResult()
{
#define LWM(map, key, value) delete map;
#define DENSELWM(map, value) delete map;
#include "crlwmlist.h"
    free(allocMemDets.hotCodeBlock);
    free(allocMemDets.coldCodeBlock);
    free(allocMemDets.roDataBlock);
    free(allocGCInfoDets.retval);
}

void CompileResult::recCompileMethod(BYTE** nativeEntry, ULONG* nativeSizeOfCode, int result)
{
    if (CompileMethod == nullptr)
        CompileMethod = new LightWeightMap<DWORD, Agnostic_CompileMethodResults>();

    Agnostic_CompileMethodResults value;
    value.nativeEntry      = (DWORDLONG)(uintptr_t)*nativeEntry;
    value.nativeSizeOfCode = (DWORD)*nativeSizeOfCode;
    value.CorJitResult     = (DWORD)result;
    CompileMethod->Add(0, value);
}

// As in superpmi: no null check. A compile result without a CompileMethod map (a recorded EE exception
// counted as success) faults here, reading numItems through a null `this` in GetIndex.
void CompileResult::repCompileMethod(BYTE** nativeEntry, ULONG* nativeSizeOfCode, int* result)
{
    Agnostic_CompileMethodResults value;
    value             = CompileMethod->Get((DWORD)0);
    *nativeEntry      = (BYTE*)(uintptr_t)value.nativeEntry;
    *nativeSizeOfCode = (ULONG)value.nativeSizeOfCode;
    *result           = (int)value.CorJitResult;
}

void CompileResult::recAllocMem(ULONG hotCodeSize, ULONG coldCodeSize, ULONG roDataSize, ULONG xcptnsCount, DWORD flag,
                                void* hotCodeBlock, void* coldCodeBlock, void* roDataBlock)
{
    allocMemDets.hotCodeSize   = hotCodeSize;
    allocMemDets.coldCodeSize  = coldCodeSize;
    allocMemDets.roDataSize    = roDataSize;
    allocMemDets.xcptnsCount   = xcptnsCount;
    allocMemDets.flag          = flag;
    allocMemDets.hotCodeBlock  = hotCodeBlock;
    allocMemDets.coldCodeBlock = coldCodeBlock;
    allocMemDets.roDataBlock   = roDataBlock;
}

void CompileResult::recAllocMemCapture()
{
    if (AllocMem == nullptr)
        AllocMem = new LightWeightMap<DWORD, Agnostic_AllocMemDetails>();

    Agnostic_AllocMemDetails value;
    value.hotCodeSize  = (DWORD)allocMemDets.hotCodeSize;
    value.coldCodeSize = (DWORD)allocMemDets.coldCodeSize;
    value.roDataSize   = (DWORD)allocMemDets.roDataSize;
    value.xcptnsCount  = (DWORD)allocMemDets.xcptnsCount;
    value.flag         = (DWORD)allocMemDets.flag;
    value.hotCodeBlock_offset =
        AllocMem->AddBuffer((const unsigned char*)allocMemDets.hotCodeBlock, allocMemDets.hotCodeSize);
    value.coldCodeBlock_offset =
        AllocMem->AddBuffer((const unsigned char*)allocMemDets.coldCodeBlock, allocMemDets.coldCodeSize);
    value.roDataBlock_offset =
        AllocMem->AddBuffer((const unsigned char*)allocMemDets.roDataBlock, allocMemDets.roDataSize);
    value.hotCodeBlock  = (DWORDLONG)(uintptr_t)allocMemDets.hotCodeBlock;
    value.coldCodeBlock = (DWORDLONG)(uintptr_t)allocMemDets.coldCodeBlock;
    value.roDataBlock   = (DWORDLONG)(uintptr_t)allocMemDets.roDataBlock;
    AllocMem->Add(0, value);
}

void CompileResult::repAllocMem(ULONG* hotCodeSize, ULONG* coldCodeSize, ULONG* roDataSize, ULONG* xcptnsCount,
                                DWORD* flag, const unsigned char** hotCodeBlock, const unsigned char** coldCodeBlock,
                                const unsigned char** roDataBlock, void** orig_hotCodeBlock,
                                void** orig_coldCodeBlock, void** orig_roDataBlock)
{
    Agnostic_AllocMemDetails value;
    value = AllocMem->Get(0);

    *hotCodeSize  = (ULONG)value.hotCodeSize;
    *coldCodeSize = (ULONG)value.coldCodeSize;
    *roDataSize   = (ULONG)value.roDataSize;
    *xcptnsCount  = (ULONG)value.xcptnsCount;
    *flag         = (DWORD)value.flag;

    *hotCodeBlock       = (*hotCodeSize > 0) ? AllocMem->GetBuffer(value.hotCodeBlock_offset, *hotCodeSize) : nullptr;
    *coldCodeBlock      = (*coldCodeSize > 0) ? AllocMem->GetBuffer(value.coldCodeBlock_offset, *coldCodeSize) : nullptr;
    *roDataBlock        = (*roDataSize > 0) ? AllocMem->GetBuffer(value.roDataBlock_offset, *roDataSize) : nullptr;
    *orig_hotCodeBlock  = (void*)(uintptr_t)value.hotCodeBlock;
    *orig_coldCodeBlock = (void*)(uintptr_t)value.coldCodeBlock;
    *orig_roDataBlock   = (void*)(uintptr_t)value.roDataBlock;
}

void CompileResult::recAllocGCInfo(size_t size, void* retval)
{
    allocGCInfoDets.size   = size;
    allocGCInfoDets.retval = retval;
}

void CompileResult::recAllocGCInfoCapture()
{
    if (AllocGCInfo == nullptr)
        AllocGCInfo = new LightWeightMap<DWORD, Agnostic_AllocGCInfo>();

    Agnostic_AllocGCInfo value;
    value.size          = (DWORDLONG)allocGCInfoDets.size;
    value.retval_offset = AllocGCInfo->AddBuffer((const unsigned char*)allocGCInfoDets.retval,
                                                 (unsigned int)allocGCInfoDets.size);
    AllocGCInfo->Add(0, value);
}

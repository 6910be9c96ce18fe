#include "neardiffer.h"

#include "logging.h"
#include "spmiutil/spmiutil.h"

bool NearDiffer::compareCodeSection(MethodContext* /*mc*/, const unsigned char* block1, ULONG blocksize1,
                                    void* /*originalBlock1*/, const unsigned char* block2, ULONG blocksize2,
                                    void* /*originalBlock2*/)
{
    if (blocksize1 != blocksize2)
    {
        LogVerbose("Code size mismatch %u != %u", blocksize1, blocksize2);
        return false;
    }
    return blocksize1 == 0 || memcmp(block1, block2, blocksize1) == 0;
}

bool NearDiffer::compareReadOnlyDataBlock(MethodContext* /*mc*/, const unsigned char* block1, ULONG blocksize1,
                                          const unsigned char* block2, ULONG blocksize2)
{
    if (blocksize1 != blocksize2)
    {
        LogVerbose("compareReadOnlyDataBlock size mismatch %u != %u", blocksize1, blocksize2);
        return false;
    }
    return blocksize1 == 0 || memcmp(block1, block2, blocksize1) == 0;
}

bool NearDiffer::compare(MethodContext* mc, CompileResult* cr1, CompileResult* cr2)
{
    ULONG                hotCodeSize_1, coldCodeSize_1, roDataSize_1, xcptnsCount_1;
    DWORD                flag_1;
    const unsigned char *hotCodeBlock_1, *coldCodeBlock_1, *roDataBlock_1;
    void *               orig_hotCodeBlock_1, *orig_coldCodeBlock_1, *orig_roDataBlock_1;
    ULONG                hotCodeSize_2, coldCodeSize_2, roDataSize_2, xcptnsCount_2;
    DWORD                flag_2;
    const unsigned char *hotCodeBlock_2, *coldCodeBlock_2, *roDataBlock_2;
    void *               orig_hotCodeBlock_2, *orig_coldCodeBlock_2, *orig_roDataBlock_2;

    cr1->repAllocMem(&hotCodeSize_1, &coldCodeSize_1, &roDataSize_1, &xcptnsCount_1, &flag_1, &hotCodeBlock_1,
                     &coldCodeBlock_1, &roDataBlock_1, &orig_hotCodeBlock_1, &orig_coldCodeBlock_1,
                     &orig_roDataBlock_1);
    cr2->repAllocMem(&hotCodeSize_2, &coldCodeSize_2, &roDataSize_2, &xcptnsCount_2, &flag_2, &hotCodeBlock_2,
                     &coldCodeBlock_2, &roDataBlock_2, &orig_hotCodeBlock_2, &orig_coldCodeBlock_2,
                     &orig_roDataBlock_2);

    if (GetSpmiTargetArchitecture() == SPMI_TARGET_ARCHITECTURE_ARM64)
    {
        // On ARM64 the JIT puts the literal (constant) pool after the code in the hot code allocation:
        // the code is nativeSizeOfCode bytes, the rest is read-only data. A compile that produced no code
        // (BADCODE, or an EE exception counted as success, which has no CompileMethod result at all) has
        // nothing to split: dotnet/runtime#91783. `-bug 91257` restores the unconditional split.
        if (reproduceBug91257 || hotCodeSize_1 > 0)
        {
            BYTE* nativeEntry_1;
            ULONG nativeSizeOfCode_1;
            int   jitResult_1;
            cr1->repCompileMethod(&nativeEntry_1, &nativeSizeOfCode_1, &jitResult_1);
            if (nativeSizeOfCode_1 <= hotCodeSize_1)
            {
                roDataSize_1        = hotCodeSize_1 - nativeSizeOfCode_1;
                roDataBlock_1       = hotCodeBlock_1 + nativeSizeOfCode_1;
                orig_roDataBlock_1  = (BYTE*)orig_hotCodeBlock_1 + nativeSizeOfCode_1;
                hotCodeSize_1       = nativeSizeOfCode_1;
            }
        }
        if (reproduceBug91257 || hotCodeSize_2 > 0)
        {
            BYTE* nativeEntry_2;
            ULONG nativeSizeOfCode_2;
            int   jitResult_2;
            cr2->repCompileMethod(&nativeEntry_2, &nativeSizeOfCode_2, &jitResult_2);
            if (nativeSizeOfCode_2 <= hotCodeSize_2)
            {
                roDataSize_2        = hotCodeSize_2 - nativeSizeOfCode_2;
                roDataBlock_2       = hotCodeBlock_2 + nativeSizeOfCode_2;
                orig_roDataBlock_2  = (BYTE*)orig_hotCodeBlock_2 + nativeSizeOfCode_2;
                hotCodeSize_2       = nativeSizeOfCode_2;
            }
        }
    }

    LogDebug("HCS1 %d CCS1 %d RDS1 %d xcpnt1 %d flag1 %08X, HCB %p CCB %p RDB %p ohcb %p occb %p odb %p",
             hotCodeSize_1, coldCodeSize_1, roDataSize_1, xcptnsCount_1, flag_1, (const void*)hotCodeBlock_1,
             (const void*)coldCodeBlock_1, (const void*)roDataBlock_1, orig_hotCodeBlock_1, orig_coldCodeBlock_1,
             orig_roDataBlock_1);
    LogDebug("HCS2 %d CCS2 %d RDS2 %d xcpnt2 %d flag2 %08X, HCB %p CCB %p RDB %p ohcb %p occb %p odb %p",
             hotCodeSize_2, coldCodeSize_2, roDataSize_2, xcptnsCount_2, flag_2, (const void*)hotCodeBlock_2,
             (const void*)coldCodeBlock_2, (const void*)roDataBlock_2, orig_hotCodeBlock_2, orig_coldCodeBlock_2,
             orig_roDataBlock_2);

    if (!compareCodeSection(mc, hotCodeBlock_1, hotCodeSize_1, orig_hotCodeBlock_1, hotCodeBlock_2, hotCodeSize_2,
                            orig_hotCodeBlock_2))
        return false;
    if (!compareCodeSection(mc, coldCodeBlock_1, coldCodeSize_1, orig_coldCodeBlock_1, coldCodeBlock_2,
                            coldCodeSize_2, orig_coldCodeBlock_2))
        return false;
    if (!compareReadOnlyDataBlock(mc, roDataBlock_1, roDataSize_1, roDataBlock_2, roDataSize_2))
        return false;
    return true;
}

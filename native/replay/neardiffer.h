// NearDiffer (superpmi/neardiffer.h): compares two compile results of one method context. Real superpmi
// disassembles with coredistools and ignores relocation differences; the sample JIT records no
// relocations, so this one compares the code and read-only data bytes.
#ifndef _NearDiffer
#define _NearDiffer

#include "compileresult.h"
#include "methodcontext.h"

class NearDiffer
{
public:
    NearDiffer(const char* targetArch, bool useCorDisTools, bool bug91257)
        : TargetArchitecture(targetArch), UseCoreDisTools(useCorDisTools), reproduceBug91257(bug91257)
    {
    }

    void InitAsmDiff() {}
    // true when the two compile results match.
    bool compare(MethodContext* mc, CompileResult* cr1, CompileResult* cr2);

private:
    bool compareCodeSection(MethodContext* mc, const unsigned char* block1, ULONG blocksize1, void* originalBlock1,
                            const unsigned char* block2, ULONG blocksize2, void* originalBlock2);
    bool compareReadOnlyDataBlock(MethodContext* mc, const unsigned char* block1, ULONG blocksize1,
                                  const unsigned char* block2, ULONG blocksize2);

    const char* TargetArchitecture;
    bool        UseCoreDisTools;
    bool        reproduceBug91257;  // -bug 91257: split the Arm64 literal pool even when there is no code
};

#endif

// Fixed-layout ("agnostic") key and value structs of the recorded maps (superpmi-shared/agnostic.h),
// packed and little-endian as in the files (docs/mch-format.md 5.3-5.4). Only the ones this core reads.
#ifndef _Agnostic
#define _Agnostic

#include "standardpch.h"

#pragma pack(push, 1)

struct DD
{
    DWORD A;
    DWORD B;
};

struct DLD
{
    DWORDLONG A;
    DWORD     B;
};

struct DLDL
{
    DWORDLONG A;
    DWORDLONG B;
};

struct Agnostic_CORINFO_SIG_INFO
{
    DWORD     callConv;
    DWORDLONG retTypeClass;
    DWORDLONG retTypeSigClass;
    DWORD     retType;
    DWORD     flags;
    DWORD     numArgs;
    DWORD     sigInst_classInstCount;
    DWORD     sigInst_classInst_Index;
    DWORD     sigInst_methInstCount;
    DWORD     sigInst_methInst_Index;
    DWORDLONG args;
    DWORD     pSig_Index;
    DWORD     cbSig;
    DWORDLONG methodSignature;
    DWORDLONG scope;
    DWORD     token;
};

struct Agnostic_CORINFO_METHOD_INFO
{
    DWORDLONG                 ftn;
    DWORDLONG                 scope;
    DWORD                     ILCode_offset;
    DWORD                     ILCodeSize;
    DWORD                     maxStack;
    DWORD                     EHcount;
    DWORD                     options;
    DWORD                     regionKind;
    Agnostic_CORINFO_SIG_INFO args;
    Agnostic_CORINFO_SIG_INFO locals;
};

struct Agnostic_CompileMethod
{
    Agnostic_CORINFO_METHOD_INFO info;
    DWORD                        flags;
    DWORD                        os;
};

struct Agnostic_GetMethodInfo
{
    Agnostic_CORINFO_METHOD_INFO info;
    bool                         result;
    DWORD                        exceptionCode;
};

struct Agnostic_CORINFO_RESOLVED_TOKENin
{
    DWORDLONG tokenContext;
    DWORDLONG tokenScope;
    DWORD     token;
    DWORD     tokenType;
};

struct Agnostic_CORINFO_RESOLVED_TOKENout
{
    DWORDLONG hClass;
    DWORDLONG hMethod;
    DWORDLONG hField;
    DWORD     pTypeSpec_Index;
    DWORD     cbTypeSpec;
    DWORD     pMethodSpec_Index;
    DWORD     cbMethodSpec;
};

struct ResolveTokenValue
{
    Agnostic_CORINFO_RESOLVED_TOKENout tokenOut;
    DWORD                              exceptionCode;
};

struct Agnostic_ConfigIntInfo
{
    DWORD nameIndex;
    DWORD defaultValue;
};

struct Agnostic_PrintResult
{
    DWORD requiredBufferSize;
    DWORD stringBuffer;
    DWORD stringBufferSize;
};

// Compile result maps (crlwmlist.h).
struct Agnostic_CompileMethodResults
{
    DWORDLONG nativeEntry;
    DWORD     nativeSizeOfCode;
    DWORD     CorJitResult;
};

struct Agnostic_AllocMemDetails
{
    DWORD     hotCodeSize;
    DWORD     coldCodeSize;
    DWORD     roDataSize;
    DWORD     xcptnsCount;
    DWORD     flag;
    DWORD     hotCodeBlock_offset;
    DWORD     coldCodeBlock_offset;
    DWORD     roDataBlock_offset;
    DWORDLONG hotCodeBlock;
    DWORDLONG coldCodeBlock;
    DWORDLONG roDataBlock;
};

struct Agnostic_AllocGCInfo
{
    DWORDLONG size;
    DWORD     retval_offset;
};

struct Agnostic_RecordRelocation
{
    DWORDLONG location;
    DWORDLONG target;
    DWORD     fRelocType;
    DWORD     addlDelta;
};

#pragma pack(pop)

static_assert(sizeof(Agnostic_CORINFO_SIG_INFO) == 84, "layout");
static_assert(sizeof(Agnostic_CORINFO_METHOD_INFO) == 208, "layout");
static_assert(sizeof(Agnostic_CompileMethod) == 216, "layout");
static_assert(sizeof(Agnostic_GetMethodInfo) == 213, "layout");
static_assert(sizeof(Agnostic_CORINFO_RESOLVED_TOKENin) == 24, "layout");
static_assert(sizeof(Agnostic_CORINFO_RESOLVED_TOKENout) == 40, "layout");
static_assert(sizeof(ResolveTokenValue) == 44, "layout");
static_assert(sizeof(Agnostic_ConfigIntInfo) == 8, "layout");
static_assert(sizeof(Agnostic_PrintResult) == 12, "layout");
static_assert(sizeof(Agnostic_CompileMethodResults) == 16, "layout");
static_assert(sizeof(Agnostic_AllocMemDetails) == 56, "layout");
static_assert(sizeof(Agnostic_AllocGCInfo) == 12, "layout");
static_assert(sizeof(Agnostic_RecordRelocation) == 24, "layout");
static_assert(sizeof(DLDL) == 16 && sizeof(DLD) == 12 && sizeof(DD) == 8, "layout");

#endif

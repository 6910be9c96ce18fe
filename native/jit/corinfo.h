// The JIT-EE interface between the replay core (spmi-replay, the "EE" side: MyICJI answers from the
// method context's recorded maps) and the sample JIT (libsamplejit_base.so / libsamplejit_diff.so).
//
// A reduced, single-header analogue of dotnet/runtime's corinfo.h / corjit.h / icorjitinfo: the names
// (ICorJitInfo, ICorJitHost, ICorJitCompiler, getJit, jitStartup, compileMethod, CORINFO_METHOD_INFO,
// CorJitResult, allocMem, doAssert, getIntConfigValue, resolveToken, getMethodSig, ...) are SuperPMI's and
// the JIT's real ones; the member lists are only what the sample JIT needs. Both sides are C++ built by the
// same compiler, so abstract classes cross the shared-library boundary as in the real product.
//
// Which recorded packet answers which call (docs/mch-format.md 5.3; the replay core implements these):
//   compileMethod's CORINFO_METHOD_INFO  <- 143 CompileMethod (Agnostic_CompileMethod, IL in the buffer)
//   getExpectedTargetArchitecture        <- 183 (IMAGE_FILE_MACHINE_*)
//   getJitFlags                          <- 154 (DD {blob offset, size}; blob = CORJIT_FLAGS below)
//   getIntConfigValue (ICorJitHost)      <- -jitoption force / 151 GetIntConfigValue / SuperPMIMethodContextNumber
//                                           / -jitoption / environment DOTNET_<name>  (superpmi's order)
//   resolveToken                         <- 109 ResolveToken (key RESOLVED_TOKENin, value TOKENout+exceptionCode);
//                                           a non-zero exceptionCode is re-thrown as a recorded EE exception
//   getMethodSig                         <- 76 GetMethodSig (key DLDL {ftn, 0}, value Agnostic_CORINFO_SIG_INFO)
//   printMethodName                      <- 6 PrintMethodName (+ 71 GetMethodClass, 149 PrintClassName)
// A query with no recorded answer raises superpmi's "missing data" exception (0xE0422000) inside the host:
// the compile is reported as `MISSING: ...` and counted as a miss.
#ifndef SPMI_CORINFO_H
#define SPMI_CORINFO_H

#include <cstddef>
#include <cstdint>

typedef void* CORINFO_METHOD_HANDLE;
typedef void* CORINFO_CLASS_HANDLE;
typedef void* CORINFO_MODULE_HANDLE;

enum CorJitResult : int32_t {
    CORJIT_OK = 0,
    CORJIT_BADCODE = (int32_t)0x80000001,  // IL the JIT refuses (unknown opcode, truncated, unbalanced stack)
    CORJIT_OUTOFMEM = (int32_t)0x80000002,
    CORJIT_INTERNALERROR = (int32_t)0x80000003,
    CORJIT_SKIPPED = (int32_t)0x80000004,
    CORJIT_RECOVERABLEERROR = (int32_t)0x80000005,
    CORJIT_IMPLLIMITATION = (int32_t)0x80000006,
};

// IMAGE_FILE_MACHINE_* (the 2023-era value of GetExpectedTargetArchitecture).
enum : uint32_t {
    IMAGE_FILE_MACHINE_AMD64 = 0x8664,
    IMAGE_FILE_MACHINE_ARM64 = 0xAA64,
};

enum CorInfoType : uint32_t {  // subset of CorInfoType
    CORINFO_TYPE_VOID = 1,
    CORINFO_TYPE_INT = 8,
    CORINFO_TYPE_LONG = 10,
};

struct CORINFO_SIG_INFO {
    uint32_t callConv;
    CorInfoType retType;
    uint32_t numArgs;
};

struct CORINFO_METHOD_INFO {
    CORINFO_METHOD_HANDLE ftn;
    CORINFO_MODULE_HANDLE scope;
    const uint8_t* ILCode;
    uint32_t ILCodeSize;
    uint32_t maxStack;
    uint32_t EHcount;
    uint32_t options;
    CORINFO_SIG_INFO args;    // numArgs = number of int64 arguments
    CORINFO_SIG_INFO locals;  // numArgs = number of int64 locals
};

// Raw CORJIT_FLAGS blob recorded in GetJitFlags (16 bytes).
struct CORJIT_FLAGS {
    uint64_t corJitFlags;  // CORJIT_FLAG_MIN_OPT: bit 5 in every era (corjitflags.h); others ignored
    uint64_t instructionSetFlags;
};
enum : uint64_t { CORJIT_FLAG_MIN_OPT = uint64_t(1) << 5 };

enum CorInfoTokenKind : uint32_t { CORINFO_TOKENKIND_Method = 0x2 };

struct CORINFO_RESOLVED_TOKEN {
    CORINFO_MODULE_HANDLE tokenScope;
    uint32_t token;
    CorInfoTokenKind tokenType;
    // out
    CORINFO_CLASS_HANDLE hClass;
    CORINFO_METHOD_HANDLE hMethod;
};

// Memory for the generated code. hotCodeSize includes the Arm64 literal pool after the instructions.
struct AllocMemArgs {
    uint32_t hotCodeSize;
    uint32_t coldCodeSize;
    uint32_t roDataSize;
    uint32_t xcptnsCount;
    void* hotCodeBlock;   // out: where the JIT writes the code (host memory)
    void* hotCodeBlockRW;
    void* coldCodeBlock;
    void* coldCodeBlockRW;
    void* roDataBlock;
    void* roDataBlockRW;
};

class ICorJitInfo {
public:
    virtual uint32_t getExpectedTargetArchitecture() = 0;
    virtual uint32_t getJitFlags(CORJIT_FLAGS* flags, uint32_t sizeInBytes) = 0;
    virtual void resolveToken(CORINFO_RESOLVED_TOKEN* pResolvedToken) = 0;
    virtual void getMethodSig(CORINFO_METHOD_HANDLE ftn, CORINFO_SIG_INFO* sig, CORINFO_CLASS_HANDLE memberParent) = 0;
    // Writes at most bufferSize-1 chars + NUL; returns the full length (as the real printMethodName).
    virtual size_t printMethodName(CORINFO_METHOD_HANDLE ftn, char* buffer, size_t bufferSize) = 0;
    virtual void allocMem(AllocMemArgs* pArgs) = 0;
    // JIT assert: superpmi logs `ISSUE: <ASSERT> ...` and raises; with -boa and a debugger attached it breaks.
    // Returns true when the JIT should break into the debugger itself (real doAssert's contract).
    virtual int doAssert(const char* szFile, int iLine, const char* szExpr) = 0;
    // The JIT's own error trap (superpmi's RunWithErrorTrap): runs function(param); returns false if a
    // non-SPMI exception escaped it.
    virtual bool runWithErrorTrap(void (*function)(void*), void* parameter) = 0;

protected:
    virtual ~ICorJitInfo() = default;
};

class ICorJitHost {
public:
    virtual int getIntConfigValue(const char* name, int defaultValue) = 0;
    // A string setting (JitStressModeNames, JitStdOutFile), or nullptr; give it back with freeStringConfigValue.
    virtual const char* getStringConfigValue(const char* name) = 0;
    virtual void freeStringConfigValue(const char* value) = 0;
    virtual void* allocateMemory(size_t size) = 0;
    virtual void freeMemory(void* block) = 0;

protected:
    virtual ~ICorJitHost() = default;
};

class ICorJitCompiler {
public:
    virtual CorJitResult compileMethod(ICorJitInfo* comp, CORINFO_METHOD_INFO* info, unsigned flags,
                                       uint8_t** nativeEntry, uint32_t* nativeSizeOfCode) = 0;
    virtual void ProcessShutdownWork() = 0;

protected:
    virtual ~ICorJitCompiler() = default;
};

#define JIT_EXPORT extern "C" __attribute__((visibility("default")))
// Exported by the JIT library (dlsym'd by the host, as superpmi's JitInstance does).
typedef void (*PjitStartup)(ICorJitHost* host);
typedef ICorJitCompiler* (*PgetJit)();

#endif  // SPMI_CORINFO_H

// MethodContext (superpmi-shared/methodcontext.h): one recorded compilation. One LightWeightMap member
// per recorded map this core knows (null when the record has no such packet) and the rep* functions
// that answer the JIT's queries from them.
#ifndef _MethodContext
#define _MethodContext

#include <string>

#include "corinfo.h"
#include "agnostic.h"
#include "compileresult.h"
#include "lightweightmap.h"
#include "spmiutil/spmiutil.h"

// Packet ids (enum mcPackets, docs/mch-format.md 5.1) of the maps this core reads.
enum mcPackets
{
    Packet_PrintMethodName               = 6,
    Packet_GetClassName                  = 45,
    Packet_GetMethodAttribs              = 70,
    Packet_GetMethodClass                = 71,
    Packet_GetMethodHash                 = 73,
    Packet_GetMethodInfo                 = 74,
    Packet_GetMethodSig                  = 76,
    Packet_ResolveToken                  = 109,
    PacketCR_AllocGCInfo                 = 114,
    PacketCR_AllocMem                    = 115,
    PacketCR_CompileMethod               = 118,
    PacketCR_RecordRelocation            = 122,
    Packet_CompileMethod                 = 143,
    Packet_PrintClassName                = 149,
    Packet_GetIntConfigValue             = 151,
    Packet_GetStringConfigValue          = 152,
    Packet_GetJitFlags                   = 154,
    Packet_GetExpectedTargetArchitecture = 183,
    Packet_SigInstHandleMap              = 184,
};

class MethodContext
{
public:
    MethodContext();
    ~MethodContext();
    MethodContext(const MethodContext&) = delete;
    MethodContext& operator=(const MethodContext&) = delete;

    // Parses one record's payload (the packets). Returns false, after `ERROR: Method %d is of low
    // integrity.`, when the packets or maps are corrupt.
    static bool Initialize(int mcIndex, const unsigned char* buff, DWORD size, /* OUT */ MethodContext** ppmc);

    void repCompileMethod(CORINFO_METHOD_INFO* info, unsigned* flags, DWORD* os);
    DWORD repGetExpectedTargetArchitecture();
    DWORD repGetJitFlags(CORJIT_FLAGS* jitFlags, DWORD sizeInBytes);
    bool repGetIntConfigValue(const char* name, int defaultValue, int* value);
    const char* repGetStringConfigValue(const char* name);
    void repResolveToken(CORINFO_RESOLVED_TOKEN* pResolvedToken);
    void repGetMethodSig(CORINFO_METHOD_HANDLE ftn, CORINFO_SIG_INFO* sig, CORINFO_CLASS_HANDLE memberParent);
    size_t repPrintMethodName(CORINFO_METHOD_HANDLE ftn, char* buffer, size_t bufferSize);
    CORINFO_CLASS_HANDLE repGetMethodClass(CORINFO_METHOD_HANDLE methodHandle);
    size_t repPrintClassName(CORINFO_CLASS_HANDLE cls, char* buffer, size_t bufferSize);

    // "Namespace.Class:Method" from the recorded name maps, or "" when they are absent (never throws).
    std::string GetMethodFullName();
    bool IsMinOpts();  // recorded JIT flags have MIN_OPT (false when absent)

#define LWM(map, key, value) LightWeightMap<key, value>* map;
#define DENSELWM(map, value) DenseLightWeightMap<value>* map;
#include "lwmlist.h"

    CompileResult* cr;
    CompileResult* originalCR;
    int            index;
    unsigned       methodSize;

private:
    void MethodInitHelper(const unsigned char* buff, unsigned int totalLen);
    static bool IsKnownPacket(unsigned packetId);
    size_t ReplayPrintResult(const Agnostic_PrintResult& res, LightWeightMapBuffer* map, char* buffer,
                             size_t bufferSize);
};

// "Was this key recorded?" helpers (methodcontext.h): a miss raises EXCEPTIONCODE_MC -> `MISSING: ...`.
// 3.1's rep* functions call Map->Get() without checking the map: a map the record never had is a null `this`
// (SIGSEGV in the -O2 build). SpmiEra31() keeps that.
#define AssertMapExists(map, keymsg, ...)                                                                      \
    if (map == nullptr && !SpmiEra31())                                                                        \
        LogException(EXCEPTIONCODE_MC, "SuperPMI assertion failed (missing map " #map ")" keymsg, ##__VA_ARGS__)

#define AssertKeyExists(map, key, keymsg, ...)                                                                 \
    if (map->GetIndex(key) == -1)                                                                              \
        LogException(EXCEPTIONCODE_MC, "SuperPMI assertion failed (missing key \"" #key "\" in map " #map ")" keymsg, \
                     ##__VA_ARGS__)

#define AssertMapAndKeyExist(map, key, keymsg, ...)                                                            \
    AssertMapExists(map, keymsg, ##__VA_ARGS__);                                                               \
    AssertKeyExists(map, key, keymsg, ##__VA_ARGS__)

#define LookupByKeyOrMiss(map, key, keymsg, ...)                                                               \
    [&]() {                                                                                                    \
        AssertMapAndKeyExist(map, key, keymsg, ##__VA_ARGS__);                                                 \
        return map->Get(key);                                                                                  \
    }()

#define LookupByKeyOrMissNoMessage(map, key) LookupByKeyOrMiss(map, key, "")

#endif

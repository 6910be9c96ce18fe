#include "methodcontext.h"

#include <algorithm>

MethodContext::MethodContext()
{
#define LWM(map, key, value) map = nullptr;
#define DENSELWM(map, value) map = nullptr;
#include "lwmlist.h"
    cr         = new CompileResult();
    originalCR = nullptr;
    index      = 0;
    methodSize = 0;
}

MethodContext::~MethodContext()
{
#define LWM(map, key, value) delete map;
#define DENSELWM(map, value) delete map;
#include "lwmlist.h"
    delete cr;
    delete originalCR;
}

bool MethodContext::Initialize(int mcIndex, const unsigned char* buff, DWORD size, MethodContext** ppmc)
{
    MethodContext* mc = new MethodContext();
    mc->index         = mcIndex;
    *ppmc             = mc;
    try
    {
        mc->MethodInitHelper(buff, size);
    }
    catch (const SpmiException& e)
    {
        LogDebug("%s", e.GetExceptionMessage() ? e.GetExceptionMessage() : "");
        LogError("Method %d is of low integrity.", mcIndex);
        return false;
    }
    return true;
}

// Ids of packets superpmi knows (docs/mch-format.md 5.1, up to 244; 93 was never assigned). Packets this core
// has no map for are checked for map structure and skipped.
bool MethodContext::IsKnownPacket(unsigned packetId)
{
    return packetId >= 1 && packetId <= 244 && packetId != 93;
}

// A map this core does not read: check its structure ([tag] numItems [bufferLength items buffer]).
static void CheckUnreadMap(unsigned packetId, const unsigned char* data, unsigned int size)
{
    unsigned int hdr = (size >= 4 && (memcmp(data, "LWM1", 4) == 0 || memcmp(data, "DWM1", 4) == 0)) ? 4 : 0;
    AssertCodeMsg(size >= hdr + 4, EXCEPTIONCODE_LWM, "Ended with unexpected sizes %zx != %x", (size_t)hdr + 4, size);
    unsigned int numItems, bufferLength = 0;
    memcpy(&numItems, data + hdr, 4);
    if (numItems == 0)
    {
        AssertCodeMsg(size == hdr + 4, EXCEPTIONCODE_LWM, "Ended with unexpected sizes %zx != %x", (size_t)hdr + 4, size);
        return;
    }
    AssertCodeMsg(size >= hdr + 8, EXCEPTIONCODE_LWM, "Ended with unexpected sizes %zx != %x", (size_t)hdr + 8, size);
    memcpy(&bufferLength, data + hdr + 4, 4);
    unsigned int items = size - hdr - 8;
    AssertCodeMsg(bufferLength <= items && (items - bufferLength) % numItems == 0 && items - bufferLength > 0,
                  EXCEPTIONCODE_LWM, "Ended with unexpected sizes for packet %u", packetId);
}

void MethodContext::MethodInitHelper(const unsigned char* buff2, unsigned int totalLen)
{
    unsigned int buffIndex = 0;
    unsigned int localsize = 0;
    while (buffIndex < totalLen)
    {
        AssertCodeMsg(totalLen - buffIndex >= 5, EXCEPTIONCODE_MC, "Didn't find map header at %u of %u", buffIndex,
                      totalLen);
        unsigned packetType = buff2[buffIndex++];
        memcpy(&localsize, &buff2[buffIndex], sizeof(unsigned int));
        buffIndex += sizeof(unsigned int);
        AssertCodeMsg(localsize < totalLen - buffIndex, EXCEPTIONCODE_MC, "Map %u of %u bytes runs past the end (%u)",
                      packetType, localsize, totalLen - buffIndex);
        const unsigned char* data = &buff2[buffIndex];

        switch (packetType)
        {
#define LWM(map, key, value)                                                                                   \
    case Packet_##map:                                                                                         \
        delete map;                                                                                            \
        map = new LightWeightMap<key, value>();                                                                \
        map->ReadFromArray(data, localsize);                                                                   \
        break;
#define DENSELWM(map, value)                                                                                   \
    case Packet_##map:                                                                                         \
        delete map;                                                                                            \
        map = new DenseLightWeightMap<value>();                                                                \
        map->ReadFromArray(data, localsize);                                                                   \
        break;
#include "lwmlist.h"

#define LWM(map, key, value)                                                                                   \
    case PacketCR_##map:                                                                                       \
        delete cr->map;                                                                                        \
        cr->map = new LightWeightMap<key, value>();                                                            \
        cr->map->ReadFromArray(data, localsize);                                                               \
        break;
#define DENSELWM(map, value)                                                                                   \
    case PacketCR_##map:                                                                                       \
        delete cr->map;                                                                                        \
        cr->map = new DenseLightWeightMap<value>();                                                            \
        cr->map->ReadFromArray(data, localsize);                                                               \
        break;
#include "crlwmlist.h"

            default:
                if (!IsKnownPacket(packetType))
                    LogException(EXCEPTIONCODE_MC, "Read ran into unknown packet type %u. Are you using a newer recorder?",
                                 packetType);
                CheckUnreadMap(packetType, data, localsize);
                break;
        }
        buffIndex += localsize;
        unsigned char canary = buff2[buffIndex++];
        AssertCodeMsg(canary == 0x42, EXCEPTIONCODE_MC, "Didn't find trailing canary for map");
    }
    AssertCodeMsg((buffIndex == totalLen), EXCEPTIONCODE_MC, "MC size mismatch.  buffIndex=%u totalLen=%u", buffIndex,
                  totalLen);
}

void MethodContext::repCompileMethod(CORINFO_METHOD_INFO* info, unsigned* flags, DWORD* os)
{
    Agnostic_CompileMethod value = LookupByKeyOrMissNoMessage(CompileMethod, 0);

    methodSize        = value.info.ILCodeSize;
    info->ftn         = (CORINFO_METHOD_HANDLE)(uintptr_t)value.info.ftn;
    info->scope       = (CORINFO_MODULE_HANDLE)(uintptr_t)value.info.scope;
    info->ILCodeSize  = value.info.ILCodeSize;
    info->ILCode      = (value.info.ILCodeSize > 0)
                            ? CompileMethod->GetBuffer(value.info.ILCode_offset, value.info.ILCodeSize)
                            : nullptr;
    info->maxStack    = value.info.maxStack;
    info->EHcount     = value.info.EHcount;
    info->options     = value.info.options;
    info->args.callConv    = value.info.args.callConv;
    info->args.retType     = (CorInfoType)value.info.args.retType;
    info->args.numArgs     = value.info.args.numArgs;
    info->locals.callConv  = value.info.locals.callConv;
    info->locals.retType   = (CorInfoType)value.info.locals.retType;
    info->locals.numArgs   = value.info.locals.numArgs;
    *flags = value.flags;
    *os    = value.os;
}

DWORD MethodContext::repGetExpectedTargetArchitecture()
{
    DWORD key   = 0;
    DWORD value = LookupByKeyOrMiss(GetExpectedTargetArchitecture, key, ": key %08X", key);
    return value;
}

DWORD MethodContext::repGetJitFlags(CORJIT_FLAGS* jitFlags, DWORD sizeInBytes)
{
    DD                   value       = LookupByKeyOrMissNoMessage(GetJitFlags, 0);
    const unsigned char* resultFlags = GetJitFlags->GetBuffer(value.A, value.B);
    memset(jitFlags, 0, sizeInBytes);
    if (resultFlags != nullptr)
        memcpy(jitFlags, resultFlags, std::min(value.B, sizeInBytes));
    return value.B;
}

// Offset of a recorded config name (UTF-16LE as in 2021-2024 collections, or UTF-8) in a map's buffer.
static int FindConfigName(LightWeightMapBuffer* map, const char* name)
{
    size_t               len = strlen(name);
    std::basic_string<unsigned char> wide;
    for (size_t i = 0; i <= len; i++)
    {
        wide.push_back((unsigned char)name[i]);
        wide.push_back(0);
    }
    int offset = map->Contains(wide.data(), (unsigned int)wide.size());
    if (offset == -1)
        offset = map->Contains((const unsigned char*)name, (unsigned int)len + 1);
    return offset;
}

bool MethodContext::repGetIntConfigValue(const char* name, int defaultValue, int* value)
{
    if (GetIntConfigValue == nullptr)
        return false;
    AssertCodeMsg(name != nullptr, EXCEPTIONCODE_MC, "Name can not be nullptr");

    int nameIndex = FindConfigName(GetIntConfigValue, name);
    if (nameIndex == -1)  // config name not in map
        return false;

    Agnostic_ConfigIntInfo key;
    key.nameIndex    = (DWORD)nameIndex;
    key.defaultValue = (DWORD)defaultValue;
    int item         = GetIntConfigValue->GetIndex(key);
    if (item == -1)
        return false;
    *value = (int)GetIntConfigValue->GetItem(item);
    return true;
}

const char* MethodContext::repGetStringConfigValue(const char* name)
{
    if (GetStringConfigValue == nullptr)
        return nullptr;
    int nameIndex = FindConfigName(GetStringConfigValue, name);
    if (nameIndex == -1)
        return nullptr;
    int item = GetStringConfigValue->GetIndex((DWORD)nameIndex);
    if (item == -1)
        return nullptr;
    DWORD offset = GetStringConfigValue->GetItem(item);
    if (offset == (DWORD)-1)
        return nullptr;
    return (const char*)GetStringConfigValue->GetBuffer(offset, GetStringConfigValue->BlobLength(offset));
}

void MethodContext::repResolveToken(CORINFO_RESOLVED_TOKEN* pResolvedToken)
{
    Agnostic_CORINFO_RESOLVED_TOKENin key;
    memset(&key, 0, sizeof(key));
    key.tokenContext = 0;
    key.tokenScope   = (DWORDLONG)(uintptr_t)pResolvedToken->tokenScope;
    key.token        = pResolvedToken->token;
    key.tokenType    = (DWORD)pResolvedToken->tokenType;

    ResolveTokenValue value = LookupByKeyOrMiss(ResolveToken, key, ": token %x", pResolvedToken->token);

    if (value.exceptionCode != 0)
        ThrowRecordedException(value.exceptionCode);

    pResolvedToken->hClass  = (CORINFO_CLASS_HANDLE)(uintptr_t)value.tokenOut.hClass;
    pResolvedToken->hMethod = (CORINFO_METHOD_HANDLE)(uintptr_t)value.tokenOut.hMethod;
}

void MethodContext::repGetMethodSig(CORINFO_METHOD_HANDLE ftn, CORINFO_SIG_INFO* sig, CORINFO_CLASS_HANDLE memberParent)
{
    DLDL key;
    key.A = (DWORDLONG)(uintptr_t)ftn;
    key.B = (DWORDLONG)(uintptr_t)memberParent;

    Agnostic_CORINFO_SIG_INFO value =
        LookupByKeyOrMiss(GetMethodSig, key, ": key ftn-%016llX prt-%016llX", key.A, key.B);
    sig->callConv = value.callConv;
    sig->retType  = (CorInfoType)value.retType;
    sig->numArgs  = value.numArgs;
}

size_t MethodContext::ReplayPrintResult(const Agnostic_PrintResult& res, LightWeightMapBuffer* map, char* buffer,
                                        size_t bufferSize)
{
    const char* str    = (const char*)map->GetBuffer(res.stringBuffer, res.stringBufferSize);
    size_t      length = (str != nullptr) ? strnlen(str, res.stringBufferSize) : 0;
    if (buffer != nullptr && bufferSize > 0)
    {
        size_t n = std::min(length, bufferSize - 1);
        if (n > 0)
            memcpy(buffer, str, n);
        buffer[n] = '\0';
    }
    return (res.requiredBufferSize > 0) ? (size_t)res.requiredBufferSize - 1 : length;
}

size_t MethodContext::repPrintMethodName(CORINFO_METHOD_HANDLE ftn, char* buffer, size_t bufferSize)
{
    DWORDLONG            key = (DWORDLONG)(uintptr_t)ftn;
    Agnostic_PrintResult res = LookupByKeyOrMiss(PrintMethodName, key, ": key %016llX", key);
    return ReplayPrintResult(res, PrintMethodName, buffer, bufferSize);
}

CORINFO_CLASS_HANDLE MethodContext::repGetMethodClass(CORINFO_METHOD_HANDLE methodHandle)
{
    DWORDLONG key   = (DWORDLONG)(uintptr_t)methodHandle;
    DWORDLONG value = LookupByKeyOrMiss(GetMethodClass, key, ": key %016llX", key);
    return (CORINFO_CLASS_HANDLE)(uintptr_t)value;
}

size_t MethodContext::repPrintClassName(CORINFO_CLASS_HANDLE cls, char* buffer, size_t bufferSize)
{
    DWORDLONG            key = (DWORDLONG)(uintptr_t)cls;
    Agnostic_PrintResult res = LookupByKeyOrMiss(PrintClassName, key, ": key %016llX", key);
    return ReplayPrintResult(res, PrintClassName, buffer, bufferSize);
}

std::string MethodContext::GetMethodFullName()
{
    int saved = (int)Logger::GetLogLevel();
    Logger::SetLogLevel((unsigned)saved & ~LOGLEVEL_DEBUG);
    std::string name;
    try
    {
        CORINFO_METHOD_INFO info;
        unsigned            flags;
        DWORD               os;
        unsigned            savedSize = methodSize;
        repCompileMethod(&info, &flags, &os);
        methodSize = savedSize;
        char buff[512];
        repPrintClassName(repGetMethodClass(info.ftn), buff, sizeof(buff));
        name = buff;
        name += ":";
        repPrintMethodName(info.ftn, buff, sizeof(buff));
        name += buff;
    }
    catch (const SpmiException&)
    {
        name.clear();
    }
    Logger::SetLogLevel((unsigned)saved);
    return name;
}

bool MethodContext::IsMinOpts()
{
    if (GetJitFlags == nullptr || GetJitFlags->GetIndex(0) == -1)
        return false;
    try
    {
        CORJIT_FLAGS flags;
        repGetJitFlags(&flags, sizeof(flags));
        return (flags.corJitFlags & CORJIT_FLAG_MIN_OPT) != 0;
    }
    catch (const SpmiException&)
    {
        return false;
    }
}

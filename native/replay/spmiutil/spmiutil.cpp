#include "spmiutil.h"

#include <strings.h>

#include <cstdlib>
#include <cstring>

bool SpmiEra31()
{
    static const bool era31 = [] {
        const char* era = getenv("SPMI_REPLAY_ERA");
        return era != nullptr && strcmp(era, "3.1") == 0;
    }();
    return era31;
}

SPMI_TARGET_ARCHITECTURE GetSpmiHostArchitecture()
{
#if defined(__aarch64__)
    return SPMI_TARGET_ARCHITECTURE_ARM64;
#else
    return SPMI_TARGET_ARCHITECTURE_AMD64;
#endif
}

static SPMI_TARGET_ARCHITECTURE s_targetArchitecture = GetSpmiHostArchitecture();

SPMI_TARGET_ARCHITECTURE GetSpmiTargetArchitecture()
{
    return s_targetArchitecture;
}

void SetSpmiTargetArchitecture(SPMI_TARGET_ARCHITECTURE spmiTargetArchitecture)
{
    s_targetArchitecture = spmiTargetArchitecture;
}

bool ParseSpmiTargetArchitecture(const char* name, SPMI_TARGET_ARCHITECTURE* arch)
{
    if (strcasecmp(name, "x64") == 0 || strcasecmp(name, "amd64") == 0)
        *arch = SPMI_TARGET_ARCHITECTURE_AMD64;
    else if (strcasecmp(name, "arm64") == 0)
        *arch = SPMI_TARGET_ARCHITECTURE_ARM64;
    else if (strcasecmp(name, "x86") == 0)
        *arch = SPMI_TARGET_ARCHITECTURE_X86;
    else if (strcasecmp(name, "arm") == 0 || strcasecmp(name, "arm32") == 0)
        *arch = SPMI_TARGET_ARCHITECTURE_ARM;
    else if (strcasecmp(name, "loongarch64") == 0)
        *arch = SPMI_TARGET_ARCHITECTURE_LOONGARCH64;
    else if (strcasecmp(name, "riscv64") == 0)
        *arch = SPMI_TARGET_ARCHITECTURE_RISCV64;
    else
        return false;
    return true;
}

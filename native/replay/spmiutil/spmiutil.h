// Small shared helpers (superpmi-shared/spmiutil.h): the target architecture and a stopwatch.
#ifndef _SPMIUtil
#define _SPMIUtil

#include <ctime>

#include "../standardpch.h"

enum SPMI_TARGET_ARCHITECTURE
{
    SPMI_TARGET_ARCHITECTURE_X86,
    SPMI_TARGET_ARCHITECTURE_AMD64,
    SPMI_TARGET_ARCHITECTURE_ARM64,
    SPMI_TARGET_ARCHITECTURE_ARM,
    SPMI_TARGET_ARCHITECTURE_LOONGARCH64,
    SPMI_TARGET_ARCHITECTURE_RISCV64,
};

SPMI_TARGET_ARCHITECTURE GetSpmiTargetArchitecture();
void SetSpmiTargetArchitecture(SPMI_TARGET_ARCHITECTURE spmiTargetArchitecture);
SPMI_TARGET_ARCHITECTURE GetSpmiHostArchitecture();
bool ParseSpmiTargetArchitecture(const char* name, SPMI_TARGET_ARCHITECTURE* arch);

// The era whose observable behaviour this core reproduces, chosen at run time by the environment variable
// SPMI_REPLAY_ERA: unset (or anything else) is today's superpmi; "3.1" is .NET Core 3.1's (native/replay/README.md,
// "The 3.1 era"). The variable is this core's only: real superpmi has no such switch, and spmi-dbg never sets it.
bool SpmiEra31();

class SimpleTimer
{
public:
    void Start() { clock_gettime(CLOCK_MONOTONIC, &start); }
    void Stop() { clock_gettime(CLOCK_MONOTONIC, &stop); }
    double GetSeconds() const
    {
        return (double)(stop.tv_sec - start.tv_sec) + (double)(stop.tv_nsec - start.tv_nsec) / 1e9;
    }
    double GetMilliseconds() const { return GetSeconds() * 1000.0; }

private:
    timespec start{}, stop{};
};

#endif

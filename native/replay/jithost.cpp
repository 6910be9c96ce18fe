#include "jithost.h"

#include <cerrno>
#include <string>

#include "jitinstance.h"
#include "logging.h"

// Integer config strings are hexadecimal, as in the runtime (JitStressRegs=10 is 0x10).
static bool ParseIntConfig(const char* text, int* result)
{
    if (text == nullptr)
        return false;
    errno               = 0;
    char*         end   = nullptr;
    unsigned long value = strtoul(text, &end, 16);
    if (errno == ERANGE || end == text)
        return false;
    *result = (int)value;
    return true;
}

// superpmi's order: -jitoption force, the value recorded in the method context, the method context number
// (SuperPMIMethodContextNumber), plain -jitoption, then the environment (DOTNET_<name>, COMPlus_<name>).
int JitHost::getIntConfigValue(const char* name, int defaultValue)
{
    int result = defaultValue;

    if (ParseIntConfig(jitInstance.getForceOption(name), &result))
        return result;

    if (!jitInstance.ignoreStoredConfig && jitInstance.mc != nullptr &&
        jitInstance.mc->repGetIntConfigValue(name, defaultValue, &result))
        return result;

    if (strcmp(name, "SuperPMIMethodContextNumber") == 0 && jitInstance.mc != nullptr)
        return jitInstance.mc->index;

    if (ParseIntConfig(jitInstance.getOption(name), &result))
        return result;

    for (const char* prefix : {"DOTNET_", "COMPlus_"})
    {
        std::string var = std::string(prefix) + name;
        if (ParseIntConfig(getenv(var.c_str()), &result))
            return result;
    }
    return defaultValue;
}

// The same order as for integers, without a recorded value: -jitoption force, -jitoption, the environment.
const char* JitHost::getStringConfigValue(const char* name)
{
    const char* value = jitInstance.getForceOption(name);
    if (value == nullptr)
        value = jitInstance.getOption(name);
    for (const char* prefix : {"DOTNET_", "COMPlus_"})
    {
        if (value != nullptr)
            break;
        std::string var = std::string(prefix) + name;
        value           = getenv(var.c_str());
    }
    return value != nullptr ? strdup(value) : nullptr;
}

void JitHost::freeStringConfigValue(const char* value)
{
    free(const_cast<char*>(value));
}

void* JitHost::allocateMemory(size_t size)
{
    return malloc(size);
}

void JitHost::freeMemory(void* block)
{
    free(block);
}

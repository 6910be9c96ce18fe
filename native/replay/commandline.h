// superpmi's command line (superpmi/commandline.h): options, prefix matching in each era's order,
// usage errors (SPMI_REPLAY_ERA=3.1: v3.1.23's grammar; otherwise today's).
#ifndef _CommandLine
#define _CommandLine

#include <string>
#include <utility>
#include <vector>

#include "standardpch.h"

typedef std::vector<std::pair<std::string, std::string>> JitOptionList;

class CommandLine
{
public:
    struct Options
    {
        bool  breakOnError       = false;
        bool  breakOnAssert      = false;
        bool  breakOnException   = false;
        bool  applyDiff          = false;
        bool  parallel           = false;
        bool  skipCleanup        = false;
        bool  ignoreStoredConfig = false;
        int   workerCount        = -1;
        int   failureLimit       = -1;
        int   offset             = -1;
        int   increment          = -1;
        int   indexCount         = -1;
        int*  indexes            = nullptr;
        char* nameOfJit          = nullptr;
        char* nameOfJit2         = nullptr;
        char* nameOfInputMethodContextFile = nullptr;
        char* verbosity          = nullptr;
        char* writeLogFile       = nullptr;
        char* reproName          = nullptr;
        char* mclFilename        = nullptr;
        char* diffsInfo          = nullptr;
        char* baseMetricsSummaryFile = nullptr;
        char* diffMetricsSummaryFile = nullptr;
        char* details            = nullptr;
        char* targetArchitecture = nullptr;
        char* compileList        = nullptr;
        char* diffMCLFilename    = nullptr; // 3.1's -diffMCList (read, not implemented here)
        char* methodStatsTypes   = nullptr; // -emitMethodStats (read, not implemented here)
        char* hash               = nullptr; // -matchHash (read, not implemented here)
        char* streamFile         = nullptr; // today's -streaming (read, not implemented here)
        int   repeatCount        = 1;       // today's -repeatCount (read, not implemented here)
        JitOptionList jitOptions, forceJitOptions, jit2Options, forceJit2Options;
        // The one option real superpmi does not have: `-bug 91257` restores the pre-#91783 near differ;
        // `-bug 56506` makes hardware faults in the JIT kill the process, as superpmi on Linux does.
        int   bug                = 0;
    };

    static bool Parse(int argc, char* argv[], /* OUT */ Options* o);
    static void DumpHelp(const char* program);

private:
    static bool Validated(Options* o, const char* program);
    static bool Implemented(const Options* o, const char* program);
    static bool AddJitOption(int& currArgument, int argc, char* argv[], JitOptionList* jitOptions,
                             JitOptionList* forceJitOptions);
};

#endif

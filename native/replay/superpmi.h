// superpmi/superpmi.h: exit codes and the summary formats the -p parent parses back.
#ifndef _SuperPMI
#define _SuperPMI

#include "commandline.h"

enum class SpmiResult
{
    JitFailedToInit = -2,
    GeneralFailure  = -1,
    Success         = 0,
    Error           = 1,
    Diffs           = 2,
    Misses          = 3
};

#define g_SuperPMIUsageFirstLine "SuperPMI is a JIT compiler testing tool."
#define g_AllFormatStringFixedPrefix "Loaded "
#define g_SummaryFormatString "Loaded %d  Jitted %d  FailedCompile %d Excluded %d Missing %d"
#define g_AsmDiffsSummaryFormatString "Loaded %d  Jitted %d  FailedCompile %d Excluded %d Missing %d Diffs %d"
// 3.1's summary lines: no Missing count (SPMI_REPLAY_ERA=3.1).
#define g_SummaryFormatString31 "Loaded %d  Jitted %d  FailedCompile %d Excluded %d"
#define g_AsmDiffsSummaryFormatString31 "Loaded %d  Jitted %d  FailedCompile %d Excluded %d Diffs %d"

int doParallelSuperPMI(CommandLine::Options& o);

#endif

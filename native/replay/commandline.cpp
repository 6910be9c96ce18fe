#include "commandline.h"

#include <cctype>
#include <strings.h>

#include "logging.h"
#include "mclist.h"
#include "spmiutil/spmiutil.h"

#define MAXIMUM_WAIT_OBJECTS 64

// superpmi's command line, per era (docs/superpmi-conventions.md 1; the same tables as
// spmi_dbg/superpmi_argv/grammar.py): each era tries a switch against its names in a fixed order and
// takes the first that matches, by case-insensitive prefix of the name, by a fixed number of
// characters, or by the whole name. SPMI_REPLAY_ERA=3.1 reads as v3.1.23 does, otherwise as today's
// main. After the era's own switches come this core's additions, which its usage documents.

namespace
{
enum class Match
{
    Prefix,
    Fixed,
    Exact
};

enum class Sw
{
    Help,
    Load,
    Jit,
    ReproName,
    FailingMCList,
    DiffMCList,
    Target,
    Boe,
    Boa,
    Box,
    IgnoreStoredConfig,
    Verbosity,
    WriteLogFile,
    EmitMethodStats,
    Details,
    ApplyDiff,
    Compile,
    CoreDisTools,
    MatchHash,
    Streaming,
    Parallel,
    FailureLimit,
    SkipCleanup,
    RepeatCount,
    Stride,
    JitOption,
    Jit2Option,
    // this core's own additions
    DiffsInfo,
    BaseMetricsSummary,
    MetricsSummary,
    DiffMetricsSummary,
    Bug,
};

struct SwitchDef
{
    const char* name;
    Match       match;
    size_t      fixed;
    Sw          id;
};

// dotnet/coreclr v3.1.23 src/ToolBox/superpmi/superpmi/commandline.cpp
const SwitchDef g_era31[] = {
    {"help", Match::Prefix, 0, Sw::Help},
    {"load", Match::Prefix, 0, Sw::Load},
    {"jit", Match::Prefix, 0, Sw::Jit},
    {"reproName", Match::Prefix, 0, Sw::ReproName},
    {"failingMCList", Match::Prefix, 0, Sw::FailingMCList},
    {"diffMCList", Match::Fixed, 10, Sw::DiffMCList},
    {"target", Match::Fixed, 6, Sw::Target},
    {"boe", Match::Fixed, 3, Sw::Boe},
    {"boa", Match::Fixed, 3, Sw::Boa},
    {"verbosity", Match::Prefix, 0, Sw::Verbosity},
    {"writeLogFile", Match::Prefix, 0, Sw::WriteLogFile},
    {"emitMethodStats", Match::Prefix, 0, Sw::EmitMethodStats},
    {"applyDiff", Match::Prefix, 0, Sw::ApplyDiff},
    {"compile", Match::Prefix, 0, Sw::Compile},
    {"coredistools", Match::Prefix, 0, Sw::CoreDisTools},
    {"matchHash", Match::Prefix, 0, Sw::MatchHash},
    {"parallel", Match::Prefix, 0, Sw::Parallel},
    {"skipCleanup", Match::Exact, 0, Sw::SkipCleanup},
    {"stride", Match::Prefix, 0, Sw::Stride},
    {"jitoption", Match::Prefix, 0, Sw::JitOption},
    {"jit2option", Match::Prefix, 0, Sw::Jit2Option},
    {"bug", Match::Prefix, 0, Sw::Bug},
};

// dotnet/runtime main src/coreclr/tools/superpmi/superpmi/commandline.cpp
const SwitchDef g_eraToday[] = {
    {"help", Match::Prefix, 0, Sw::Help},
    {"load", Match::Prefix, 0, Sw::Load},
    {"jit", Match::Prefix, 0, Sw::Jit},
    {"reproName", Match::Prefix, 0, Sw::ReproName},
    {"failingMCList", Match::Prefix, 0, Sw::FailingMCList},
    {"target", Match::Fixed, 6, Sw::Target},
    {"boe", Match::Fixed, 3, Sw::Boe},
    {"boa", Match::Fixed, 3, Sw::Boa},
    {"box", Match::Fixed, 3, Sw::Box},
    {"ignoreStoredConfig", Match::Fixed, 18, Sw::IgnoreStoredConfig},
    {"verbosity", Match::Prefix, 0, Sw::Verbosity},
    {"writeLogFile", Match::Prefix, 0, Sw::WriteLogFile},
    {"emitMethodStats", Match::Prefix, 0, Sw::EmitMethodStats},
    {"details", Match::Prefix, 0, Sw::Details},
    {"applyDiff", Match::Prefix, 0, Sw::ApplyDiff},
    {"compile", Match::Prefix, 0, Sw::Compile},
    {"coredistools", Match::Prefix, 0, Sw::CoreDisTools},
    {"matchHash", Match::Prefix, 0, Sw::MatchHash},
    {"streaming", Match::Prefix, 0, Sw::Streaming},
    {"parallel", Match::Prefix, 0, Sw::Parallel},
    {"failureLimit", Match::Prefix, 0, Sw::FailureLimit},
    {"skipCleanup", Match::Exact, 0, Sw::SkipCleanup},
    {"repeatCount", Match::Exact, 0, Sw::RepeatCount},
    {"stride", Match::Prefix, 0, Sw::Stride},
    {"jitoption", Match::Prefix, 0, Sw::JitOption},
    {"jit2option", Match::Prefix, 0, Sw::Jit2Option},
    // this core's additions: the 2022-2023 result files (removed from superpmi by
    // dotnet/runtime#92824; the seed bug's superpmi.py passes them) and -bug
    {"diffsInfo", Match::Prefix, 0, Sw::DiffsInfo},
    {"baseMetricsSummary", Match::Prefix, 0, Sw::BaseMetricsSummary},
    {"metricsSummary", Match::Prefix, 0, Sw::MetricsSummary},
    {"diffMetricsSummary", Match::Prefix, 0, Sw::DiffMetricsSummary},
    {"bug", Match::Prefix, 0, Sw::Bug},
};

bool Matches(const SwitchDef& d, const char* typed)
{
    switch (d.match)
    {
        case Match::Exact:
            return strcasecmp(typed, d.name) == 0;
        case Match::Fixed:
            return strncasecmp(typed, d.name, d.fixed) == 0;
        case Match::Prefix:
        default:
            return strncasecmp(typed, d.name, strlen(typed)) == 0;
    }
}

const SwitchDef* Lookup(const char* typed)
{
    if (SpmiEra31())
    {
        for (const SwitchDef& d : g_era31)
            if (Matches(d, typed))
                return &d;
        return nullptr;
    }
    for (const SwitchDef& d : g_eraToday)
        if (Matches(d, typed))
            return &d;
    return nullptr;
}

bool AllDigits(const char* s)
{
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return false;
    return true;
}

void Option(const char* names, const char* what)
{
    printf(" %s\n     %s\n\n", names, what);
}

void HelpHead(const char* program)
{
    printf("SuperPMI is a JIT compiler testing tool.\n");
    printf("\n");
    if (SpmiEra31())
        printf("Usage: %s [options] jitname [jitname2] filename.mc\n", program);
    else
        printf("Usage: %s [options] [jitname] [jitname2] filename.mc\n", program);
    printf(" jitname.so - path of the JIT to replay with%s\n",
           SpmiEra31() ? "" : " (default: libclrjit.so beside this program)");
    printf(" jitname2.so - optional path of a second JIT, for asm diffs\n");
    printf(" filename.mc - the collection to replay (.mc, .mch or .mct)\n");
    printf(" -j[it] Name - name a JIT by switch instead\n");
    printf(" -l[oad] filename - name the collection by switch instead\n");
    printf("\n");
    printf("Options:\n");
    printf("\n");
}

void HelpOptions()
{
    const bool era31 = SpmiEra31();
    Option("-boe", "Break (a debug trap) when a compile fails.");
    Option("-boa", "Break on an assert of the JIT when a debugger is attached.");
    if (!era31)
    {
        Option("-box", "Break when the replay raises one of its own exceptions (missing data).");
        Option("-ignoreStoredConfig", "Ignore the JIT settings recorded in the method contexts.");
    }
    Option("-v[erbosity] messagetypes",
           "Which messages to print, letters (case-sensitive): e errors, w warnings, m missing data,\n"
           "     i issues (asserts, diffs), n summaries, v progress, d debug, a all, q none.\n"
           "     Default set of messages enabled is 'ewminv'.");
    Option("-w[riteLogFile] logfile", "Also write the messages to logfile.");
    Option("-c[ompile] <indices>",
           "Replay only these method contexts: 20 / 20,25,30 / 10-99 / 5,10-99,101 / file.mcl.");
    Option("-m[atchHash] <hash>", "Replay only the method context with this hash (not implemented here).");
    Option("-e[mitMethodStats] <stats-types>", "Method statistics to <input>.stats (not implemented here).");
    if (!era31)
        Option("-details <file name.csv>", "One CSV row per method context replayed.");
    Option("-a[pplyDiff]", "Compare the code of the two JITs (or of the JIT and the collection).");
    Option("-r[eproName] prefix", "Write each failing method context to prefix-<number>.mc.");
    Option("-f[ailingMCList] mclfilename", "Write the numbers of failing method contexts to mclfilename.");
    if (era31)
        Option("-diffMCList diffMCLfilename", "Write the numbers of method contexts with diffs (needs -a).");
    Option("-p[arallel] [workerCount]", "Replay in workerCount processes (default: one per processor).");
    if (!era31)
    {
        Option("-streaming filename", "Take replay requests from filename or stdin (not implemented here).");
        Option("-failureLimit <limit>", "Stop after more than 'limit' failed compiles.");
    }
    Option("-skipCleanup", "Keep the temporary files of -parallel's workers.");
    if (!era31)
        Option("-repeatCount <repetition count>", "Compile each method context this often (not implemented here).");
    Option("-target <target>",
           era31 ? "The target architecture of a cross-compiling JIT: arm64 (on an x64 host)."
                 : "The target architecture: x64, x86, arm, arm64, loongarch64, riscv64 (this JIT: x64, arm64).");
    Option("-coredistools", "Use the CoreDisTools disassembler (ignored: the only one here).");
    Option("-jitoption [force] key=value",
           era31 ? "A setting for JIT 1 (force: also over a recorded value)."
                 : "A setting for JIT 1 (force: also over a recorded value); key#value works too.");
    Option("-jit2option [force] key=value", "The same for JIT 2.");
}

void HelpAdditions()
{
    printf("Not superpmi's: this replay core's own options (native/replay/README.md):\n\n");
    if (!SpmiEra31())
    {
        Option("-diffsInfo <file>", "A CSV of the method contexts with asm diffs (superpmi 2022-2023).");
        Option("-baseMetricsSummary <file name>", "A CSV summary of the base JIT's metrics (superpmi 2021-2023).");
        Option("-metricsSummary <file name>", "The same as -baseMetricsSummary.");
        Option("-diffMetricsSummary <file name>", "The same for the diff JIT.");
    }
    Option("-bug 91257", "Restore the near differ before dotnet/runtime#91783 (reproduces #91257).");
    Option("-bug 56506", "Let a hardware fault in the JIT kill the process, as on Linux (#56506).");
}
} // namespace

void CommandLine::DumpHelp(const char* program)
{
    HelpHead(program);
    HelpOptions();
    HelpAdditions();
    printf("If there is a failure, the exit code is 1 (failures), 2 (asm diffs) or 3 (missing data);\n");
    printf("-1 for a usage or fatal error and -2 when the JIT failed to initialize.\n");
    fflush(stdout);
}

bool CommandLine::AddJitOption(int& currArgument, int argc, char* argv[], JitOptionList* jitOptions,
                               JitOptionList* forceJitOptions)
{
    if (currArgument >= argc)
    {
        DumpHelp(argv[0]);
        return false;
    }
    JitOptionList* target = jitOptions;
    // any prefix of "force", without case (the empty string too), is `force`
    if (strncasecmp(argv[currArgument], "force", strlen(argv[currArgument])) == 0)
    {
        target = forceJitOptions;
        if (++currArgument >= argc)
        {
            DumpHelp(argv[0]);
            return false;
        }
    }
    const char* arg = argv[currArgument];
    // the key ends at the first '=' (today's: or '#'), within 1023 characters; else only the usage
    size_t keyLen = strcspn(arg, SpmiEra31() ? "=" : "=#");
    if (arg[keyLen] == '\0' || keyLen > 1023)
    {
        DumpHelp(argv[0]);
        return false;
    }
    target->emplace_back(std::string(arg, keyLen), std::string(arg + keyLen + 1));
    return true;
}

namespace
{
// A usage error: superpmi's words (USAGE: none), its usage, and `return false`.
#define REFUSE(...)                                                                                            \
    do                                                                                                         \
    {                                                                                                          \
        LogError(__VA_ARGS__);                                                                                 \
        CommandLine::DumpHelp(program);                                                                        \
        return false;                                                                                          \
    } while (0)
#define USAGE()                                                                                                \
    do                                                                                                         \
    {                                                                                                          \
        CommandLine::DumpHelp(program);                                                                        \
        return false;                                                                                          \
    } while (0)

// a JIT named by -jit or by its suffix: JIT1, then JIT2; a third is refused today and replaces JIT2
// in 3.1
bool TakeJit(CommandLine::Options* o, char* name, const char* program)
{
    if (*name == '\0')
        REFUSE("Arg '%s' is invalid, name of jit missing.", name);
    if (o->nameOfJit == nullptr)
        o->nameOfJit = name;
    else if (o->nameOfJit2 == nullptr || SpmiEra31())
        o->nameOfJit2 = name;
    else
        REFUSE("Too many JITs specified.");
    return true;
}

// today's superpmi with no JIT named: libclrjit.so beside itself (when argv[0] has a directory)
void DefaultJit(CommandLine::Options* o, const char* program)
{
    const char* slash = strrchr(program, '/');
    if (slash == nullptr)
        return;
    static std::string path;
    path = std::string(program, (size_t)(slash - program)) + "/libclrjit.so";
    o->nameOfJit = const_cast<char*>(path.c_str());
    LogInfo("Using default JIT: %s", o->nameOfJit);
}

bool TargetOk(const char* target, const char* program)
{
    if (SpmiEra31())
    {
        // v3.1.23 on an x64 host takes arm64 only
        if (strcasecmp(target, "arm64") != 0)
            REFUSE("Illegal target architecture specified with -target (only arm64 is supported on x64 host).");
        return true;
    }
    static const char* const known[] = {"amd64", "x64",         "x86",     "arm64", "arm",
                                        "arm32", "loongarch64", "riscv64", "wasm",  "wasm32"};
    for (const char* k : known)
        if (strcasecmp(target, k) == 0)
            return true;
    REFUSE("Illegal target architecture specified with -target.");
}
} // namespace

bool CommandLine::Parse(int argc, char* argv[], /* OUT */ Options* o)
{
    const char* program = argv[0];
    if (argc == 1)
        USAGE();
    for (int i = 1; i < argc; i++)
    {
        char* a = argv[i];
        if (a[0] != '-')
        {
            const char* lastdot = strrchr(a, '.');
            if (lastdot == nullptr)
                USAGE();
            if (strcasecmp(lastdot, ".so") == 0)
            {
                if (!TakeJit(o, a, program))
                    return false;
            }
            else if (strcasecmp(lastdot, ".mc") == 0 || strcasecmp(lastdot, ".mch") == 0 ||
                     strcasecmp(lastdot, ".mct") == 0)
                o->nameOfInputMethodContextFile = a;
            else
                REFUSE("Unknown file type passed as argument, '%s'.", a);
            continue;
        }
        const char* typed = a + 1;
        if (*typed == '\0' || strcmp(typed, "?") == 0)
            USAGE();
        const SwitchDef* d = Lookup(typed);
        if (d == nullptr)
            REFUSE("Unknown switch '%s' passed as argument.", a);
        // the switch's value: superpmi prints only its usage when it is missing
#define VALUE()                                                                                                \
    if (++i >= argc)                                                                                           \
        USAGE();                                                                                \
    char* v = argv[i];
        switch (d->id)
        {
            case Sw::Help:
                USAGE();
            case Sw::Load:
            {
                VALUE();
                if (*v == '\0')
                    REFUSE("Arg '%s' is invalid, name of file missing.", v);
                o->nameOfInputMethodContextFile = v;
                break;
            }
            case Sw::Jit:
            {
                VALUE();
                if (!TakeJit(o, v, program))
                    return false;
                break;
            }
            case Sw::ReproName:
            {
                VALUE();
                if (*v == '\0')
                    REFUSE("Arg '%s' is invalid, name of prefix missing.", v);
                o->reproName = v;
                break;
            }
            case Sw::FailingMCList:
            {
                VALUE();
                o->mclFilename = v;
                break;
            }
            case Sw::DiffMCList:
            {
                VALUE();
                o->diffMCLFilename = v;
                break;
            }
            case Sw::Target:
            {
                VALUE();
                o->targetArchitecture = v;
                break;
            }
            case Sw::Boe:
                o->breakOnError = true;
                break;
            case Sw::Boa:
                o->breakOnAssert = true;
                break;
            case Sw::Box:
                o->breakOnException = true;
                break;
            case Sw::IgnoreStoredConfig:
                o->ignoreStoredConfig = true;
                break;
            case Sw::Verbosity:
            {
                VALUE();
                o->verbosity = v;
                Logger::SetLogLevel(Logger::ParseLogLevelString(v));
                break;
            }
            case Sw::WriteLogFile:
            {
                VALUE();
                o->writeLogFile = v;
                Logger::OpenLogFile(v);
                break;
            }
            case Sw::EmitMethodStats:
            {
                VALUE();
                o->methodStatsTypes = v;
                break;
            }
            case Sw::Details:
            {
                VALUE();
                o->details = v;
                break;
            }
            case Sw::ApplyDiff:
                o->applyDiff = true;
                break;
            case Sw::Compile:
            {
                VALUE();
                if (!MCList::processArgAsMCL(v, &o->indexCount, &o->indexes))
                    REFUSE("Arg '%s' is invalid, needed method context list.", v);
                if (o->hash != nullptr)
                    REFUSE("Cannot use both method context list and method context hash.");
                if (o->offset > 0 && o->increment > 0)
                    REFUSE("Cannot use method context list in parallel mode.");
                o->compileList = v;
                break;
            }
            case Sw::CoreDisTools:
                break; // the only disassembler here: nothing to choose
            case Sw::MatchHash:
            {
                VALUE();
                if (strlen(v) != 32)
                    REFUSE("Arg '%s' is invalid, needed a valid method context hash.", v);
                if (o->indexCount > 0)
                    REFUSE("Cannot use both method context list and method context hash.");
                if (o->offset > 0 && o->increment > 0)
                    REFUSE("Cannot use method context hash in parallel mode.");
                o->hash = v;
                break;
            }
            case Sw::Streaming:
            {
                if (++i >= argc)
                    REFUSE("'-streaming' must be followed by a file name or 'stdin'.");
                o->streamFile = argv[i];
                break;
            }
            case Sw::Parallel:
            {
                o->parallel = true;
                if (i + 1 < argc && AllDigits(argv[i + 1]))
                {
                    o->workerCount = atoi(argv[++i]);
                    if (o->workerCount < 1)
                        REFUSE("Invalid workers count specified, workers count must be at least 1.");
                    if (o->workerCount > MAXIMUM_WAIT_OBJECTS)
                    {
                        LogError("Invalid workers count specified, workers count cannot be more than %d.",
                                 MAXIMUM_WAIT_OBJECTS);
                        USAGE();
                    }
                }
                break;
            }
            case Sw::FailureLimit:
            {
                VALUE();
                o->failureLimit = atoi(v);
                if (o->failureLimit < 1)
                    REFUSE("Incorrect limit specified for -failureLimit. Limit must be > 0.");
                break;
            }
            case Sw::SkipCleanup:
                o->skipCleanup = true;
                break;
            case Sw::RepeatCount:
            {
                VALUE();
                o->repeatCount = AllDigits(v) ? atoi(v) : 0;
                if (o->repeatCount < 1)
                    REFUSE("Invalid repeat count specified. Repeat count must be between 1 and INT_MAX.");
                break;
            }
            case Sw::Stride:
            {
                VALUE();
                o->offset = atoi(v);
                if (++i >= argc)
                    USAGE();
                o->increment = atoi(argv[i]);
                if (o->offset < 1 || o->increment < 1)
                    REFUSE("Incorrect offset/increment specified for -stride. Offset and increment both must be > 0.");
                if (o->indexCount > 0)
                    REFUSE("Cannot use method context list in parallel mode.");
                if (o->hash != nullptr)
                    REFUSE("Cannot use method context hash in parallel mode.");
                break;
            }
            case Sw::JitOption:
                i++;
                if (!AddJitOption(i, argc, argv, &o->jitOptions, &o->forceJitOptions))
                    return false;
                break;
            case Sw::Jit2Option:
                i++;
                if (!AddJitOption(i, argc, argv, &o->jit2Options, &o->forceJit2Options))
                    return false;
                break;
            case Sw::DiffsInfo:
            {
                VALUE();
                o->diffsInfo = v;
                break;
            }
            case Sw::BaseMetricsSummary:
            case Sw::MetricsSummary:
            {
                VALUE();
                o->baseMetricsSummaryFile = v;
                break;
            }
            case Sw::DiffMetricsSummary:
            {
                VALUE();
                o->diffMetricsSummaryFile = v;
                break;
            }
            case Sw::Bug:
            {
                VALUE();
                if (strcmp(v, "91257") != 0 && strcmp(v, "56506") != 0)
                    REFUSE("-bug: only 91257 or 56506 (dotnet/runtime issues) can be reproduced, not '%s'.", v);
                o->bug = atoi(v);
                break;
            }
        }
#undef VALUE
    }
    return Validated(o, program);
}

bool CommandLine::Validated(Options* o, const char* program)
{
    if (SpmiEra31())
    {
        if (o->nameOfJit == nullptr)
            REFUSE("Missing name of a Jit.");
        if (o->nameOfInputMethodContextFile == nullptr)
            REFUSE("Missing name of an input file.");
        if (o->diffMCLFilename != nullptr && !o->applyDiff)
            REFUSE("-diffMCList specified without -applyDiff.");
        if (o->targetArchitecture != nullptr && !TargetOk(o->targetArchitecture, program))
            return false;
    }
    else
    {
        if (o->targetArchitecture != nullptr && !TargetOk(o->targetArchitecture, program))
            return false;
        if (o->streamFile != nullptr && o->parallel)
        {
            LogError("streaming mode and parallel mode are incompatible.");
            return false;
        }
        if (o->streamFile != nullptr && o->nameOfJit2 != nullptr)
        {
            LogError("streaming mode and diff mode are incompatible.");
            return false;
        }
        if (o->nameOfInputMethodContextFile == nullptr)
            REFUSE("Missing name of an input file.");
        if (o->nameOfJit == nullptr)
            DefaultJit(o, program);
        if (o->nameOfJit == nullptr)
            REFUSE("Missing name of a Jit.");
    }
    if (o->skipCleanup && !o->parallel)
        REFUSE("-skipCleanup requires -parallel.");
    return Implemented(o, program);
}

// What superpmi reads but this core does not do: said, and refused (exit -1), never ignored.
bool CommandLine::Implemented(const Options* o, const char* program)
{
    const char* missing = o->hash != nullptr              ? "-matchHash"
                          : o->methodStatsTypes != nullptr ? "-emitMethodStats"
                          : o->streamFile != nullptr       ? "-streaming"
                          : o->repeatCount > 1             ? "-repeatCount"
                          : o->diffMCLFilename != nullptr  ? "-diffMCList"
                                                           : nullptr;
    if (missing == nullptr)
    {
        if (o->targetArchitecture != nullptr && strcasecmp(o->targetArchitecture, "x64") != 0 &&
            strcasecmp(o->targetArchitecture, "amd64") != 0 && strcasecmp(o->targetArchitecture, "arm64") != 0)
        {
            LogError("-target %s: the sample JIT of this replay core supports only x64 (amd64) and arm64.",
                     o->targetArchitecture);
            return false;
        }
        if (o->parallel && o->indexCount > 0)
        {
            // superpmi's workers refuse the list (they are started with -stride): said here at once
            LogError("Cannot use method context list in parallel mode.");
            DumpHelp(program);
            return false;
        }
        return true;
    }
    LogError("%s is superpmi's, but this replay core does not implement it (native/replay/README.md).", missing);
    return false;
}

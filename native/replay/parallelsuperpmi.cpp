// superpmi/parallelsuperpmi.cpp: -p. The parent re-runs its own executable once per worker with
// `-stride <i+1> <N>`, per-worker temp files named ParallelSuperPMI-...-<R>-<i>, and `-v ewmin`; then it
// merges exit codes, re-logs the workers' output, adds up their summaries and concatenates their lists and
// CSVs (docs/superpmi-conventions.md 1.3).
#include <algorithm>
#include <climits>
#include <csignal>
#include <fcntl.h>
#include <random>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "logging.h"
#include "metricssummary.h"
#include "spmiutil/spmiutil.h"
#include "superpmi.h"

#define MAXIMUM_WAIT_OBJECTS 64
#define MAX_LOG_LINE_SIZE 0x1000

// The arguments every worker gets after its own ones, in superpmi's order.
static std::vector<std::string> ConstructChildProcessArgs(const CommandLine::Options& o)
{
    std::vector<std::string> args;
    auto addBool = [&](bool b, const char* arg) {
        if (b)
            args.emplace_back(arg);
    };
    auto addString = [&](const char* s, const char* arg) {
        if (s != nullptr)
        {
            args.emplace_back(arg);
            args.emplace_back(s);
        }
    };
    auto addJitOptions = [&](const JitOptionList& list, const char* arg, bool force) {
        for (const auto& kv : list)
        {
            args.emplace_back(arg);
            if (force)
                args.emplace_back("force");
            args.emplace_back(kv.first + "=" + kv.second);
        }
    };

    addBool(o.breakOnError, "-boe");
    addBool(o.breakOnAssert, "-boa");
    if (SpmiEra31())
    {
        // v3.1.23's ConstructChildProcessArgs: -reproName twice (once before and once after
        // -writeLogFile), the log file passed on, no -verbosity (the workers keep `-v ewmin`)
        addBool(o.applyDiff, "-applyDiff");
        addString(o.reproName, "-reproName");
        addString(o.writeLogFile, "-writeLogFile");
        addString(o.methodStatsTypes, "-emitMethodStats");
        addString(o.reproName, "-reproName");
    }
    else
    {
        // today's: the user's -verbosity after the workers' own `-v ewmin` (so it wins); the log
        // file is the parent's alone
        addBool(o.breakOnException, "-box");
        addBool(o.ignoreStoredConfig, "-ignoreStoredConfig");
        addBool(o.applyDiff, "-applyDiff");
        addString(o.verbosity, "-verbosity");
        addString(o.reproName, "-reproName");
        addString(o.methodStatsTypes, "-emitMethodStats");
    }
    addString(o.hash, "-matchHash");
    addString(o.targetArchitecture, "-target");
    addString(o.compileList, "-compile");
    if (o.bug != 0)
    {
        args.emplace_back("-bug");
        args.emplace_back(std::to_string(o.bug));
    }
    addJitOptions(o.forceJitOptions, "-jitoption", true);
    addJitOptions(o.forceJit2Options, "-jit2option", true);
    addJitOptions(o.jitOptions, "-jitoption", false);
    addJitOptions(o.jit2Options, "-jit2option", false);
    args.emplace_back(o.nameOfJit);
    if (o.nameOfJit2 != nullptr)
        args.emplace_back(o.nameOfJit2);
    args.emplace_back(o.nameOfInputMethodContextFile);
    return args;
}

static std::string Join(const std::vector<std::string>& args, size_t from)
{
    std::string s;
    for (size_t i = from; i < args.size(); i++)
        s += (i > from ? " " : "") + args[i];
    return s;
}

static void StripNewline(char* buff)
{
    size_t len = strlen(buff);
    while (len > 0 && (buff[len - 1] == '\n' || buff[len - 1] == '\r'))
        buff[--len] = '\0';
}

// Worker stderr: ERROR/WARNING lines re-logged at their level, anything else as a warning.
static void ProcessChildStdErr(const char* stderrFilename)
{
    FILE* fp = fopen(stderrFilename, "r");
    if (fp == nullptr)
    {
        LogError("Unable to open '%s'.", stderrFilename);
        return;
    }
    char buff[MAX_LOG_LINE_SIZE];
    while (fgets(buff, MAX_LOG_LINE_SIZE, fp) != nullptr)
    {
        StripNewline(buff);
        if (strncmp(buff, "ERROR: ", 7) == 0)
            LogError("%s", buff + 7);
        else if (strncmp(buff, "WARNING: ", 9) == 0)
            LogWarning("%s", buff + 9);
        else if (strlen(buff) > 0)
            LogWarning("%s", buff);
    }
    fclose(fp);
}

// Worker stdout: MISSING and ISSUE lines passed through, `Loaded ...` summaries added up, a usage error
// (the help text) printed once.
static void ProcessChildStdOut(const CommandLine::Options& o, const char* stdoutFilename, int* loaded, int* jitted,
                               int* failed, int* excluded, int* missing, int* diffs, bool* usageError)
{
    FILE* fp = fopen(stdoutFilename, "r");
    if (fp == nullptr)
    {
        LogError("Unable to open '%s'.", stdoutFilename);
        return;
    }
    char buff[MAX_LOG_LINE_SIZE];
    while (fgets(buff, MAX_LOG_LINE_SIZE, fp) != nullptr)
    {
        StripNewline(buff);
        if (strncmp(buff, g_SuperPMIUsageFirstLine, strlen(g_SuperPMIUsageFirstLine)) == 0)
        {
            *usageError = true;  // Signals that we had a usage error. Suppresses printing of summary messages.
            printf("%s\n", buff);
            while (fgets(buff, MAX_LOG_LINE_SIZE, fp) != nullptr)
                printf("%s", buff);
            fflush(stdout);
            break;
        }
        else if (strncmp(buff, g_AllFormatStringFixedPrefix, strlen(g_AllFormatStringFixedPrefix)) == 0)
        {
            int childLoaded = 0, childJitted = 0, childFailed = 0, childExcluded = 0, childMissing = 0,
                childDiffs = 0;
            if (o.applyDiff && SpmiEra31())
            {
                int converted = sscanf(buff, g_AsmDiffsSummaryFormatString31, &childLoaded, &childJitted,
                                       &childFailed, &childExcluded, &childDiffs);
                if (converted != 5)
                {
                    LogError("Couldn't parse status message: \"%s\"", buff);
                    continue;
                }
                *diffs += childDiffs;
            }
            else if (SpmiEra31())
            {
                int converted =
                    sscanf(buff, g_SummaryFormatString31, &childLoaded, &childJitted, &childFailed, &childExcluded);
                if (converted != 4)
                {
                    LogError("Couldn't parse status message: \"%s\"", buff);
                    continue;
                }
            }
            else if (o.applyDiff)
            {
                int converted = sscanf(buff, g_AsmDiffsSummaryFormatString, &childLoaded, &childJitted, &childFailed,
                                       &childExcluded, &childMissing, &childDiffs);
                if (converted != 6)
                {
                    LogError("Couldn't parse status message: \"%s\"", buff);
                    continue;
                }
                *diffs += childDiffs;
            }
            else
            {
                int converted = sscanf(buff, g_SummaryFormatString, &childLoaded, &childJitted, &childFailed,
                                       &childExcluded, &childMissing);
                if (converted != 5)
                {
                    LogError("Couldn't parse status message: \"%s\"", buff);
                    continue;
                }
            }
            *loaded += childLoaded;
            *jitted += childJitted;
            *failed += childFailed;
            *excluded += childExcluded;
            *missing += childMissing;
        }
        else if (strncmp(buff, "MISSING: ", 9) == 0)
            LogMissing("%s", buff + 9);
        else if (strncmp(buff, "ISSUE: <ASM_DIFF> ", 18) == 0)
            LogIssue(ISSUE_ASM_DIFF, "%s", buff + 18);
        else if (strncmp(buff, "ISSUE: <ASSERT> ", 16) == 0)
            LogIssue(ISSUE_ASSERT, "%s", buff + 16);
    }
    fclose(fp);
}

// Concatenates and sorts the workers' .mcl files into the user's list.
static void MergeWorkerMCLs(const char* mclFilename, const std::vector<std::string>& paths)
{
    std::vector<int> numbers;
    for (const std::string& p : paths)
    {
        FILE* fp = fopen(p.c_str(), "r");
        if (fp == nullptr)
            continue;  // a worker that died early may not have created its list
        char line[64];
        while (fgets(line, sizeof(line), fp) != nullptr)
            if (line[0] >= '0' && line[0] <= '9')
                numbers.push_back(atoi(line));
        fclose(fp);
    }
    std::sort(numbers.begin(), numbers.end());
    FILE* out = fopen(mclFilename, "wb");
    if (out == nullptr)
    {
        LogError("Unable to open '%s'", mclFilename);
        return;
    }
    for (int n : numbers)
        fprintf(out, "%d\r\n", n);
    fclose(out);
}

// Concatenates the workers' CSVs, header once.
static void MergeWorkerCsvs(const char* csvFilename, const std::vector<std::string>& paths)
{
    FILE* out = fopen(csvFilename, "w");
    if (out == nullptr)
    {
        LogError("Could not open %s for writing", csvFilename);
        return;
    }
    bool headerWritten = false;
    for (const std::string& p : paths)
    {
        FILE* fp = fopen(p.c_str(), "r");
        if (fp == nullptr)
        {
            LogError("Could not open child CSV file %s", p.c_str());
            continue;
        }
        char line[MAX_LOG_LINE_SIZE];
        bool first = true;
        while (fgets(line, sizeof(line), fp) != nullptr)
        {
            if (first && headerWritten)
            {
                first = false;
                continue;
            }
            first = false;
            headerWritten = true;
            fputs(line, out);
        }
        fclose(fp);
    }
    fclose(out);
}

static bool MergeMetricsSummaries(const char* outFile, const std::vector<std::string>& paths, const char* which)
{
    MetricsSummaries total;
    for (const std::string& p : paths)
    {
        MetricsSummaries worker;
        if (!MetricsSummaries::LoadFromFile(p.c_str(), &worker))
        {
            LogError("Couldn't load %s metrics summary created by child process", which);
            return false;
        }
        total.AggregateFrom(worker);
    }
    if (!total.SaveToFile(outFile))
    {
        LogError("Failed to write metrics summary to '%s'", outFile);
        return false;
    }
    return true;
}

// The exit code of a worker, as the 2023 PAL's GetExitCodeProcess saw it: a worker killed by a signal
// looked like exit code 1 (dotnet/runtime#56506, fixed in 2024 by #104902).
static int ChildExitCode(int status)
{
    if (WIFEXITED(status))
        return (int)(signed char)WEXITSTATUS(status);
    return 1;
}

int doParallelSuperPMI(CommandLine::Options& o)
{
    SimpleTimer st;
    st.Start();

    const char* tmpEnv  = getenv("TMPDIR");
    std::string tempPath = (tmpEnv != nullptr && *tmpEnv != '\0') ? tmpEnv : "/tmp/";
    if (tempPath.back() != '/')
        tempPath += '/';

    if (o.workerCount <= 0)
    {
        long cpus     = sysconf(_SC_NPROCESSORS_ONLN);
        o.workerCount = (int)std::min<long>(std::max<long>(cpus, 1), MAXIMUM_WAIT_OBJECTS);
    }

    char spmiFilename[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", spmiFilename, sizeof(spmiFilename) - 1);
    if (n <= 0)
    {
        LogError("Failed to get name of SuperPMI executable.");
        return (int)SpmiResult::GeneralFailure;
    }
    spmiFilename[n] = '\0';

    std::vector<std::string> spmiArgs = ConstructChildProcessArgs(o);
    // superpmi builds the arguments as " %s" per argument: the list starts with a space (both eras).
    LogVerbose("Using child (%s) with args ( %s)", spmiFilename, Join(spmiArgs, 0).c_str());
    if (o.mclFilename != nullptr)
        LogVerbose(" failingMCList=%s", o.mclFilename);
    LogVerbose(" workerCount=%d, skipCleanup=%d.", o.workerCount, o.skipCleanup);

    std::random_device rd;
    unsigned int       randNumber = rd();

    auto tempName = [&](const char* kind, int i, const char* ext) {
        return tempPath + "ParallelSuperPMI-" + kind + std::to_string(randNumber) + "-" + std::to_string(i) + ext;
    };
    std::vector<std::string> failingMCLs, diffsInfos, baseMetrics, diffMetrics, details, stdouts, stderrs;
    for (int i = 0; i < o.workerCount; i++)
    {
        failingMCLs.push_back(tempName("", i, ".mcl"));
        diffsInfos.push_back(tempName("Diff-", i, ".mcl"));
        baseMetrics.push_back(tempName("BaseMetricsSummary-", i, ".csv"));
        diffMetrics.push_back(tempName("DiffMetricsSummary-", i, ".csv"));
        details.push_back(tempName("Details-", i, ".csv"));
        stdouts.push_back(tempName("stdout-", i, ".txt"));
        stderrs.push_back(tempName("stderr-", i, ".txt"));
    }

    fflush(stdout);
    fflush(stderr);
    std::vector<pid_t> pids;
    for (int i = 0; i < o.workerCount; i++)
    {
        std::vector<std::string> args = {spmiFilename, "-stride", std::to_string(i + 1), std::to_string(o.workerCount)};
        auto add = [&](const char* arg, const std::string& value) {
            args.emplace_back(arg);
            args.push_back(value);
        };
        if (o.mclFilename != nullptr)
            add("-failingMCList", failingMCLs[i]);
        if (o.diffsInfo != nullptr)
            add("-diffsInfo", diffsInfos[i]);
        if (o.baseMetricsSummaryFile != nullptr)
            add("-baseMetricsSummary", baseMetrics[i]);
        if (o.diffMetricsSummaryFile != nullptr)
            add("-diffMetricsSummary", diffMetrics[i]);
        if (o.details != nullptr)
            add("-details", details[i]);
        if (o.failureLimit > 0)
            add("-failureLimit", std::to_string(o.failureLimit));
        add("-v", "ewmin");
        args.insert(args.end(), spmiArgs.begin(), spmiArgs.end());
        LogDebug("Child %d: %s", i, Join(args, 0).c_str());

        int outFd = open(stdouts[i].c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        int errFd = open(stderrs[i].c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (outFd == -1 || errFd == -1)
        {
            LogError("Unable to create '%s'.", (outFd == -1 ? stdouts[i] : stderrs[i]).c_str());
            return (int)SpmiResult::GeneralFailure;
        }
        pid_t pid = fork();
        if (pid == 0)
        {
            dup2(outFd, STDOUT_FILENO);
            dup2(errFd, STDERR_FILENO);
            std::vector<char*> argv;
            for (std::string& a : args)
                argv.push_back(&a[0]);
            argv.push_back(nullptr);
            execv(spmiFilename, argv.data());
            _exit(127);
        }
        close(outFd);
        close(errFd);
        if (pid < 0)
        {
            LogError("Failed to start child process %d.", i);
            return (int)SpmiResult::GeneralFailure;
        }
        pids.push_back(pid);
    }

    // Error > Diffs > Misses > JitFailedToInit > anything else -> GeneralFailure.
    auto rank = [](int code) {
        switch (code)
        {
            case (int)SpmiResult::Success: return 0;
            case (int)SpmiResult::Error: return 5;
            case (int)SpmiResult::Diffs: return 4;
            case (int)SpmiResult::Misses: return 3;
            case (int)SpmiResult::JitFailedToInit: return 2;
            default: return 1;
        }
    };
    SpmiResult result = SpmiResult::Success;
    for (pid_t pid : pids)
    {
        int status = 0;
        while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
        {
        }
        int exitCode = ChildExitCode(status);
        LogDebug("Child process %d exited with %d", (int)pid, exitCode);
        SpmiResult childResult = (rank(exitCode) == 1) ? SpmiResult::GeneralFailure : (SpmiResult)exitCode;
        if (rank((int)childResult) > rank((int)result))
            result = childResult;
    }

    bool usageError = false;
    int  loaded = 0, jitted = 0, failed = 0, excluded = 0, missing = 0, diffs = 0;
    for (int i = 0; i < o.workerCount; i++)
    {
        ProcessChildStdErr(stderrs[i].c_str());
        ProcessChildStdOut(o, stdouts[i].c_str(), &loaded, &jitted, &failed, &excluded, &missing, &diffs, &usageError);
        if (usageError)
            break;
    }

    if (o.mclFilename != nullptr && !usageError)
        MergeWorkerMCLs(o.mclFilename, failingMCLs);
    if (o.diffsInfo != nullptr && !usageError)
        MergeWorkerCsvs(o.diffsInfo, diffsInfos);
    if (o.details != nullptr && !usageError)
        MergeWorkerCsvs(o.details, details);
    if (o.baseMetricsSummaryFile != nullptr && !usageError &&
        !MergeMetricsSummaries(o.baseMetricsSummaryFile, baseMetrics, "base"))
        result = SpmiResult::GeneralFailure;
    if (o.diffMetricsSummaryFile != nullptr && !usageError &&
        !MergeMetricsSummaries(o.diffMetricsSummaryFile, diffMetrics, "diff"))
        result = SpmiResult::GeneralFailure;

    if (!usageError)
    {
        if (SpmiEra31() && o.applyDiff)
            LogInfo(g_AsmDiffsSummaryFormatString31, loaded, jitted, failed, excluded, diffs);
        else if (SpmiEra31())
            LogInfo(g_SummaryFormatString31, loaded, jitted, failed, excluded);
        else if (o.applyDiff)
            LogInfo(g_AsmDiffsSummaryFormatString, loaded, jitted, failed, excluded, missing, diffs);
        else
            LogInfo(g_SummaryFormatString, loaded, jitted, failed, excluded, missing);
    }

    st.Stop();
    LogVerbose("Total time: %fms", st.GetMilliseconds());

    if (!o.skipCleanup)
    {
        for (const auto* list : {&failingMCLs, &diffsInfos, &baseMetrics, &diffMetrics, &details, &stdouts, &stderrs})
            for (const std::string& p : *list)
                unlink(p.c_str());
    }
    return (int)result;
}

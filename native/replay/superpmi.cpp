// superpmi/superpmi.cpp: the replay loop.
#include "superpmi.h"

#include <string>

#include "jitinstance.h"
#include "logging.h"
#include "mclist.h"
#include "methodcontext.h"
#include "methodcontextreader.h"
#include "metricssummary.h"
#include "neardiffer.h"
#include "spmiutil/hardwareexceptions.h"
#include "spmiutil/spmiutil.h"

static const char* ResultName(JitInstance::Result r)
{
    return r == JitInstance::RESULT_SUCCESS ? "Success" : r == JitInstance::RESULT_MISSING ? "Miss" : "Error";
}

static void CsvQuoted(FILE* fp, const std::string& s)
{
    fputc('"', fp);
    for (char c : s)
    {
        if (c == '"')
            fputc('"', fp);
        fputc(c, fp);
    }
    fputc('"', fp);
}

static void AccumulateMetrics(MetricsSummaries* metrics, bool isMinOpts, JitInstance::Result res, CompileResult* cr)
{
    for (MetricsSummary* s : {&metrics->Overall, isMinOpts ? &metrics->MinOpts : &metrics->FullOpts})
    {
        if (res == JitInstance::RESULT_SUCCESS)
        {
            s->SuccessfulCompiles++;
            if (cr->CompileMethod != nullptr)
                s->NumCodeBytes += cr->CompileMethod->Get(0).nativeSizeOfCode;
        }
        else if (res == JitInstance::RESULT_MISSING)
            s->MissingCompiles++;
        else
            s->FailingCompiles++;
    }
}

static long long CodeBytes(CompileResult* cr)
{
    return (cr != nullptr && cr->CompileMethod != nullptr) ? cr->CompileMethod->Get(0).nativeSizeOfCode : 0;
}

// The progress line every 500 method contexts: ` %2.1f%% - Loaded %d  Jitted %d  [<counter> %d  ]FailedCompile %d
// at %d per second`; `counter` names `-a`'s count ("Diffs" today, 3.1's "Matching"), or is null.
static void LogProgress(SimpleTimer* st, double percent, const char* counter, int loaded, int jitted, int count,
                        int failed)
{
    st->Stop();
    double seconds = st->GetSeconds() > 1e-9 ? st->GetSeconds() : 1e-9;
    char   diffs[64] = "";
    if (counter != nullptr)
        snprintf(diffs, sizeof(diffs), "%s %d  ", counter, count);
    LogVerbose(" %2.1f%% - Loaded %d  Jitted %d  %sFailedCompile %d at %d per second", percent, loaded, jitted,
               diffs, failed, (int)(500 / seconds));
    st->Start();
}

// Runs the near differ for one method context. superpmi's own exceptions are caught here (the context goes
// to the failing list, but it is not counted as an error); a hardware fault is not: the process dies.
static void InvokeNearDiffer(NearDiffer* nearDiffer, MethodContext** mc, CompileResult** crl, bool* hasDiff,
                             MethodContextReader** reader, MCList* failingMCL, FILE* diffsInfo)
{
    try
    {
        if (!nearDiffer->compare(*mc, *crl, (*mc)->cr))
        {
            *hasDiff = true;
            LogIssue(ISSUE_ASM_DIFF, "main method %d of size %d differs", (*reader)->GetMethodContextIndex(),
                     (*mc)->methodSize);

            // This is a difference in ASM outputs from Jit1 & Jit2 and not a playback failure. It goes to the
            // -diffsInfo CSV when there is one, otherwise to the failing list.
            if (diffsInfo == nullptr)
                failingMCL->AddMethodToMCL((*reader)->GetMethodContextIndex());
        }
    }
    catch (SpmiException& e)
    {
        LogError("main method %d of size %d failed to load and compile correctly.", (*reader)->GetMethodContextIndex(),
                 (*mc)->methodSize);
        e.ShowAndDeleteMessage();
        failingMCL->AddMethodToMCL((*reader)->GetMethodContextIndex());
    }
}

int main(int argc, char* argv[])
{
    Logger::Initialize();
    const bool era31 = SpmiEra31();
    // 3.1 installs no handler for hardware faults: a fault anywhere kills the process.
    if (!era31)
        PAL_InitializeHardwareExceptions();

    CommandLine::Options o;
    if (!CommandLine::Parse(argc, argv, &o))
        return (int)SpmiResult::GeneralFailure;
    if (o.bug == 56506)
        PAL_DisableHardwareExceptions();

    if (o.parallel)
        return doParallelSuperPMI(o);

    SetBreakOnException(o.breakOnException);
    bool targetGiven = false;
    if (o.targetArchitecture != nullptr)
    {
        SPMI_TARGET_ARCHITECTURE arch;
        targetGiven = ParseSpmiTargetArchitecture(o.targetArchitecture, &arch);
        SetSpmiTargetArchitecture(arch);
    }

    SimpleTimer st1, st2;
    st2.Start();

    JitInstance* jit  = nullptr;
    JitInstance* jit2 = nullptr;
    NearDiffer   nearDiffer(o.targetArchitecture, true, o.bug == 91257);
    if (o.applyDiff)
        nearDiffer.InitAsmDiff();

    LogVerbose("Using jit(%s) with input (%s)", o.nameOfJit, o.nameOfInputMethodContextFile);
    std::string indexesStr = " indexCount=";
    if (o.indexCount == -1)
        indexesStr += era31 ? "-1 ()" : "-1 (replay all)";
    else
    {
        indexesStr += std::to_string(o.indexCount) + " (";
        for (int i = 0; i < o.indexCount; i++)
            indexesStr += std::to_string(o.indexes[i]) + ((i < o.indexCount - 1) ? "," : ")");
    }
    LogVerbose("%s", indexesStr.c_str());
    if (o.mclFilename != nullptr)
        LogVerbose(" failingMCList=%s", o.mclFilename);
    if (o.offset > 0 && o.increment > 0)
        LogVerbose(" offset=%d increment=%d", o.offset, o.increment);

    MethodContextReader* reader =
        new MethodContextReader(o.nameOfInputMethodContextFile, o.indexes, o.indexCount, o.offset, o.increment);
    if (!reader->isValid())
        return (int)SpmiResult::GeneralFailure;

    MCList failingToReplayMCL;
    if (o.mclFilename != nullptr)
        failingToReplayMCL.InitializeMCL(o.mclFilename);

    FILE* diffsInfo = nullptr;
    if (o.diffsInfo != nullptr)
    {
        diffsInfo = fopen(o.diffsInfo, "w");
        if (diffsInfo == nullptr)
            LogError("Could not open %s for writing", o.diffsInfo);
        else
            fprintf(diffsInfo, "Context,Base size,Diff size,Base instructions,Diff instructions,Context size\n");
    }
    FILE* details = nullptr;
    if (o.details != nullptr)
    {
        details = fopen(o.details, "w");
        if (details == nullptr)
            LogError("Could not open %s for writing", o.details);
        else if (o.applyDiff)
            fprintf(details, "Context,Context size,Method full name,Tier name,Base result,Diff result,MinOpts,Has "
                             "diff,Base instructions,Diff instructions\n");
        else
            fprintf(details, "Context,Context size,Method full name,Tier name,Result,MinOpts,Instructions\n");
    }

    MetricsSummaries totalBaseMetrics, totalDiffMetrics;
    int  loadedCount = 0, jittedCount = 0, failToReplayCount = 0, errorCount = 0, errorCount2 = 0;
    int  missingCount = 0, excludedCount = 0, diffsCount = 0, matchCount = 0;
    bool collectThroughput = false;

    st1.Start();
    while (true)
    {
        MethodContextBuffer mcb = reader->GetNextMethodContext();
        if (mcb.Error())
        {
            if (!era31)  // 3.1's main returns without a word
                LogError("Method %d is of low integrity.", reader->GetMethodContextIndex());
            return (int)SpmiResult::GeneralFailure;
        }
        if (mcb.allDone)
            break;

        // 3.1 prints the progress line before it loads the next method context (so never after the last).
        if (era31 && (loadedCount % 500 == 0) && (loadedCount > 0))
            LogProgress(&st1, reader->PercentComplete(), o.applyDiff ? "Matching" : nullptr, loadedCount,
                        jittedCount, matchCount, failToReplayCount);

        loadedCount++;

        // 3.1's main initializes the method context with the count loaded so far, not its number: its
        // mc->index is that count (-c 100: 1), while today's is the method context number.
        MethodContext* mc = nullptr;
        if (!MethodContext::Initialize(era31 ? loadedCount : reader->GetMethodContextIndex(), mcb.Payload(),
                                       mcb.PayloadSize(), &mc))
            return (int)SpmiResult::GeneralFailure;

        if (jit == nullptr)
        {
            SimpleTimer stInitJit;
            jit = JitInstance::InitJit(o.nameOfJit, o.breakOnAssert, &stInitJit, mc, &o.forceJitOptions,
                                       &o.jitOptions, o.ignoreStoredConfig);
            if (jit == nullptr)
                return (int)SpmiResult::JitFailedToInit;  // InitJit already printed a failure message
            if (o.nameOfJit2 != nullptr)
            {
                jit2 = JitInstance::InitJit(o.nameOfJit2, o.breakOnAssert, &stInitJit, mc, &o.forceJit2Options,
                                            &o.jit2Options, o.ignoreStoredConfig);
                if (jit2 == nullptr)
                    return (int)SpmiResult::JitFailedToInit;
            }
        }

        if (!targetGiven)
        {
            // No -target: the near differ follows the architecture the context was recorded for.
            SPMI_TARGET_ARCHITECTURE arch = GetSpmiHostArchitecture();
            if (mc->GetExpectedTargetArchitecture != nullptr && mc->GetExpectedTargetArchitecture->GetIndex(0) != -1)
            {
                DWORD machine = mc->GetExpectedTargetArchitecture->Get(0);
                arch = (machine == IMAGE_FILE_MACHINE_ARM64) ? SPMI_TARGET_ARCHITECTURE_ARM64
                                                             : SPMI_TARGET_ARCHITECTURE_AMD64;
            }
            SetSpmiTargetArchitecture(arch);
        }

        // The compile result stored in the record (if any) is the base for -a with one JIT.
        delete mc->originalCR;
        mc->originalCR = mc->cr;
        mc->cr         = new CompileResult();

        const int  mcIndex   = reader->GetMethodContextIndex();
        const bool isMinOpts = (o.baseMetricsSummaryFile || o.diffMetricsSummaryFile || details) && mc->IsMinOpts();

        jittedCount++;
        JitInstance::Result res  = jit->CompileMethod(mc, mcIndex, collectThroughput);
        JitInstance::Result res2 = JitInstance::RESULT_SUCCESS;
        AccumulateMetrics(&totalBaseMetrics, isMinOpts, res, mc->cr);

        CompileResult* crl    = mc->originalCR;
        CompileResult* ownCrl = nullptr;
        if (jit2 != nullptr)
        {
            crl = ownCrl = mc->cr;
            mc->cr       = new CompileResult();
            res2         = jit2->CompileMethod(mc, mcIndex, collectThroughput);
            AccumulateMetrics(&totalDiffMetrics, isMinOpts, res2, mc->cr);
        }

        bool hasDiff = false;
        if (res == JitInstance::RESULT_SUCCESS && res2 == JitInstance::RESULT_SUCCESS && o.applyDiff)
        {
            // We need at least two compile results to diff: both from JIT invocations, or one loaded from
            // the method context file.
            if (crl->AllocMem == nullptr || mc->cr->AllocMem == nullptr)
            {
                LogError("method %d is missing a compileResult, cannot do diffing", mcIndex);
                failingToReplayMCL.AddMethodToMCL(mcIndex);
            }
            else
            {
                InvokeNearDiffer(&nearDiffer, &mc, &crl, &hasDiff, &reader, &failingToReplayMCL, diffsInfo);
                if (!hasDiff)
                    matchCount++;
                if (hasDiff)
                {
                    diffsCount++;
                    for (MetricsSummaries* m : {&totalBaseMetrics, &totalDiffMetrics})
                    {
                        long long bytes = CodeBytes(m == &totalBaseMetrics ? crl : mc->cr);
                        for (MetricsSummary* row : {&m->Overall, isMinOpts ? &m->MinOpts : &m->FullOpts})
                        {
                            row->NumContextsWithDiffs++;
                            row->NumDiffedCodeBytes += bytes;
                        }
                    }
                    if (diffsInfo != nullptr)
                        fprintf(diffsInfo, "%d,%lld,%lld,0,0,%u\n", mcIndex, CodeBytes(crl), CodeBytes(mc->cr),
                                mcb.size);
                }
            }
        }

        if (res == JitInstance::RESULT_ERROR || res2 == JitInstance::RESULT_ERROR)
        {
            if (era31)
            {
                // 3.1's lines: JIT2's first (after its compile), then JIT1's; neither names the JIT.
                if (res2 == JitInstance::RESULT_ERROR)
                {
                    errorCount2++;
                    LogError("JIT2 main method %d of size %d failed to load and compile correctly.", mcIndex,
                             mc->methodSize);
                }
                if (res == JitInstance::RESULT_ERROR)
                {
                    errorCount++;
                    LogError("main method %d of size %d failed to load and compile correctly.", mcIndex,
                             mc->methodSize);
                }
            }
            if (!era31 && res == JitInstance::RESULT_ERROR)
            {
                errorCount++;
                LogError("Method %d of size %d failed to load and compile correctly%s (%s).", mcIndex,
                         mc->methodSize, (o.nameOfJit2 == nullptr) ? "" : " by JIT1", o.nameOfJit);
            }
            if (!era31 && res2 == JitInstance::RESULT_ERROR)
            {
                errorCount2++;
                LogError("Method %d of size %d failed to load and compile correctly by JIT2 (%s).", mcIndex,
                         mc->methodSize, o.nameOfJit2);
            }
            if ((o.reproName != nullptr) && (o.indexCount == -1))
            {
                char buff[4096];
                snprintf(buff, sizeof(buff), "%s-%d.mc", o.reproName, mcIndex);
                FILE* fp = fopen(buff, "wb");
                if (fp == nullptr || fwrite(mcb.buff, 1, mcb.size, fp) != mcb.size)
                    LogError("Failed to write out repro to '%s'", buff);
                else
                    LogInfo("Wrote out repro to '%s'", buff);
                if (fp != nullptr)
                    fclose(fp);
            }
            if (o.breakOnError)
            {
                if (o.indexCount == -1)
                    LogInfo(era31 ? "HINT: to repro add '/c %d' to cmdline" : "HINT: to repro add '-c %d' to cmdline",
                            mcIndex);
                DEBUG_BREAK;
            }
        }
        if (res == JitInstance::RESULT_MISSING || res2 == JitInstance::RESULT_MISSING)
            missingCount++;
        if (res != JitInstance::RESULT_SUCCESS || res2 != JitInstance::RESULT_SUCCESS)
        {
            failToReplayCount++;
            failingToReplayMCL.AddMethodToMCL(mcIndex);
        }

        if (details != nullptr)
        {
            const char* tier = isMinOpts ? "MinOpts" : "FullOpts";
            fprintf(details, "%d,%u,", mcIndex, mcb.size);
            CsvQuoted(details, mc->GetMethodFullName());
            if (o.applyDiff)
                fprintf(details, ",%s,%s,%s,%s,%s,0,0\n", tier, ResultName(res),
                        ResultName(jit2 != nullptr ? res2 : res), isMinOpts ? "True" : "False",
                        hasDiff ? "True" : "False");
            else
                fprintf(details, ",%s,%s,%s,0\n", tier, ResultName(res), isMinOpts ? "True" : "False");
        }

        delete ownCrl;
        delete mc;

        if (!era31 && (loadedCount % 500 == 0) && (loadedCount != 0))
            LogProgress(&st1, reader->PercentComplete(), o.applyDiff ? "Diffs" : nullptr, loadedCount,
                        jittedCount, diffsCount, failToReplayCount);

        if ((o.failureLimit > 0) && (failToReplayCount >= o.failureLimit))
        {
            LogError("More than %d methods failed%s. Skip compiling remaining methods.", o.failureLimit, "");
            break;
        }
    }

    if (era31 && o.applyDiff)
        LogInfo(g_AsmDiffsSummaryFormatString31, loadedCount, jittedCount, failToReplayCount, excludedCount,
                jittedCount - failToReplayCount - matchCount);
    else if (era31)
        LogInfo(g_SummaryFormatString31, loadedCount, jittedCount, failToReplayCount, excludedCount);
    else if (o.applyDiff)
        LogInfo(g_AsmDiffsSummaryFormatString, loadedCount, jittedCount, failToReplayCount, excludedCount,
                missingCount, diffsCount);
    else
        LogInfo(g_SummaryFormatString, loadedCount, jittedCount, failToReplayCount, excludedCount, missingCount);

    st2.Stop();
    LogVerbose("Total time: %fms", st2.GetMilliseconds());

    if (o.baseMetricsSummaryFile != nullptr && !totalBaseMetrics.SaveToFile(o.baseMetricsSummaryFile))
        LogError("Failed to write metrics summary to '%s'", o.baseMetricsSummaryFile);
    if (o.diffMetricsSummaryFile != nullptr && !totalDiffMetrics.SaveToFile(o.diffMetricsSummaryFile))
        LogError("Failed to write metrics summary to '%s'", o.diffMetricsSummaryFile);
    if (diffsInfo != nullptr)
        fclose(diffsInfo);
    if (details != nullptr)
        fclose(details);
    failingToReplayMCL.CloseMCL();
    delete reader;
    Logger::Shutdown();

    SpmiResult result = SpmiResult::Success;
    if (errorCount > 0 || errorCount2 > 0)
        result = SpmiResult::Error;
    else if (o.applyDiff && (era31 ? matchCount != jittedCount : diffsCount > 0))
        result = SpmiResult::Diffs;  // 3.1: every jitted method context that did not match, failed ones too
    else if (missingCount > 0)
        result = SpmiResult::Misses;
    return (int)result;
}

#include "metricssummary.h"

#include "logging.h"

void MetricsSummary::AggregateFrom(const MetricsSummary& other)
{
    SuccessfulCompiles += other.SuccessfulCompiles;
    FailingCompiles += other.FailingCompiles;
    MissingCompiles += other.MissingCompiles;
    NumContextsWithDiffs += other.NumContextsWithDiffs;
    NumCodeBytes += other.NumCodeBytes;
    NumDiffedCodeBytes += other.NumDiffedCodeBytes;
    NumExecutedInstructions += other.NumExecutedInstructions;
    NumDiffExecutedInstructions += other.NumDiffExecutedInstructions;
}

void MetricsSummaries::AggregateFrom(const MetricsSummaries& other)
{
    Overall.AggregateFrom(other.Overall);
    MinOpts.AggregateFrom(other.MinOpts);
    FullOpts.AggregateFrom(other.FullOpts);
}

static const char* g_header = "Successful compiles,Failing compiles,Missing compiles,Contexts with diffs,Code bytes,"
                              "Diffed code bytes,Executed instructions,Diff executed instructions,Name\n";

static void WriteRow(FILE* fp, const char* name, const MetricsSummary& s)
{
    fprintf(fp, "%d,%d,%d,%d,%lld,%lld,%lld,%lld,%s\n", s.SuccessfulCompiles, s.FailingCompiles, s.MissingCompiles,
            s.NumContextsWithDiffs, s.NumCodeBytes, s.NumDiffedCodeBytes, s.NumExecutedInstructions,
            s.NumDiffExecutedInstructions, name);
}

bool MetricsSummaries::SaveToFile(const char* path)
{
    FILE* fp = fopen(path, "w");
    if (fp == nullptr)
        return false;
    fputs(g_header, fp);
    WriteRow(fp, "Overall", Overall);
    WriteRow(fp, "MinOpts", MinOpts);
    WriteRow(fp, "FullOpts", FullOpts);
    return fclose(fp) == 0;
}

bool MetricsSummaries::LoadFromFile(const char* path, MetricsSummaries* metrics)
{
    FILE* fp = fopen(path, "r");
    if (fp == nullptr)
        return false;
    char line[1024];
    bool ok = fgets(line, sizeof(line), fp) != nullptr && strcmp(line, g_header) == 0;
    int  rows = 0;
    while (ok && fgets(line, sizeof(line), fp) != nullptr)
    {
        MetricsSummary s;
        char           name[64];
        if (sscanf(line, "%d,%d,%d,%d,%lld,%lld,%lld,%lld,%63s", &s.SuccessfulCompiles, &s.FailingCompiles,
                   &s.MissingCompiles, &s.NumContextsWithDiffs, &s.NumCodeBytes, &s.NumDiffedCodeBytes,
                   &s.NumExecutedInstructions, &s.NumDiffExecutedInstructions, name) != 9)
        {
            ok = false;
            break;
        }
        if (strcmp(name, "Overall") == 0)
            metrics->Overall = s;
        else if (strcmp(name, "MinOpts") == 0)
            metrics->MinOpts = s;
        else if (strcmp(name, "FullOpts") == 0)
            metrics->FullOpts = s;
        else
            ok = false;
        rows++;
    }
    fclose(fp);
    return ok && rows == 3;
}

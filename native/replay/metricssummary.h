// Metrics summaries (superpmi/metricssummary.h, 2021 - Oct 2023): -baseMetricsSummary/-diffMetricsSummary
// CSVs, written only when the replay ends normally; the -p parent loads and adds up the workers' files.
#ifndef _MetricsSummary
#define _MetricsSummary

#include "standardpch.h"

struct MetricsSummary
{
    int       SuccessfulCompiles          = 0;
    int       FailingCompiles             = 0;
    int       MissingCompiles             = 0;
    int       NumContextsWithDiffs        = 0;
    long long NumCodeBytes                = 0;
    long long NumDiffedCodeBytes          = 0;
    long long NumExecutedInstructions     = 0;
    long long NumDiffExecutedInstructions = 0;

    void AggregateFrom(const MetricsSummary& other);
};

class MetricsSummaries
{
public:
    MetricsSummary Overall;
    MetricsSummary MinOpts;
    MetricsSummary FullOpts;

    void AggregateFrom(const MetricsSummaries& other);
    bool SaveToFile(const char* path);
    static bool LoadFromFile(const char* path, MetricsSummaries* metrics);
};

#endif

// superpmi's logger (superpmi-shared/logging.h): levels selected with -v letters, `LEVEL: ` prefixes below
// INFO, ERROR/WARNING on stderr and the rest on stdout, optional log file (-w). Every line is flushed, so a
// crash never loses what was already printed.
#ifndef _Logging
#define _Logging

#include <cstdarg>

#include "standardpch.h"

enum LogLevel
{
    LOGLEVEL_NONE    = 0x00,
    LOGLEVEL_ERROR   = 0x01,
    LOGLEVEL_WARNING = 0x02,
    LOGLEVEL_MISSING = 0x04,
    LOGLEVEL_ISSUE   = 0x08,
    LOGLEVEL_INFO    = 0x10,
    LOGLEVEL_VERBOSE = 0x20,
    LOGLEVEL_DEBUG   = 0x40,
    LOGLEVEL_ALL     = 0xff,
};

#define LOGMASK_DEFAULT (LOGLEVEL_ERROR | LOGLEVEL_WARNING | LOGLEVEL_MISSING | LOGLEVEL_ISSUE | LOGLEVEL_INFO | LOGLEVEL_VERBOSE)

enum IssueType
{
    ISSUE_ASSERT,
    ISSUE_ASM_DIFF,
};

class Logger
{
public:
    static void Initialize();
    static void Shutdown();
    static void OpenLogFile(const char* logFilePath);
    static void CloseLogFile();
    static void SetLogLevel(unsigned newLogLevel) { s_logLevel = newLogLevel; }
    static unsigned GetLogLevel() { return s_logLevel; }
    static bool IsLogLevelEnabled(unsigned level) { return (level & s_logLevel) != 0; }
    static unsigned ParseLogLevelString(const char* specifierStr);

    static void LogPrintf(const char* function, const char* file, int line, LogLevel level, const char* msg, ...)
        __attribute__((format(printf, 5, 6)));
    static void LogVprintf(const char* function, const char* file, int line, LogLevel level, const char* msg,
                           va_list argList) __attribute__((format(printf, 5, 0)));
    static void LogExceptionMessage(const char* function, const char* file, int line, DWORD exceptionCode,
                                    const char* msg, ...) __attribute__((format(printf, 5, 6)));

private:
    static unsigned s_logLevel;
    static FILE*    s_logFile;
};

class IssueLogger
{
public:
    static void LogIssueHelper(const char* function, const char* file, int line, IssueType issue, const char* msg,
                               ...) __attribute__((format(printf, 5, 6)));
};

#define LogError(msg, ...) Logger::LogPrintf(__FUNCTION__, __FILE__, __LINE__, LOGLEVEL_ERROR, msg, ##__VA_ARGS__)
#define LogWarning(msg, ...) Logger::LogPrintf(__FUNCTION__, __FILE__, __LINE__, LOGLEVEL_WARNING, msg, ##__VA_ARGS__)
#define LogMissing(msg, ...) Logger::LogPrintf(__FUNCTION__, __FILE__, __LINE__, LOGLEVEL_MISSING, msg, ##__VA_ARGS__)
#define LogIssue(issue, msg, ...) IssueLogger::LogIssueHelper(__FUNCTION__, __FILE__, __LINE__, issue, msg, ##__VA_ARGS__)
#define LogInfo(msg, ...) Logger::LogPrintf(__FUNCTION__, __FILE__, __LINE__, LOGLEVEL_INFO, msg, ##__VA_ARGS__)
#define LogVerbose(msg, ...) Logger::LogPrintf(__FUNCTION__, __FILE__, __LINE__, LOGLEVEL_VERBOSE, msg, ##__VA_ARGS__)
#define LogDebug(msg, ...) Logger::LogPrintf(__FUNCTION__, __FILE__, __LINE__, LOGLEVEL_DEBUG, msg, ##__VA_ARGS__)

#endif

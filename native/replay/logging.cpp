#include "logging.h"

#include <string>

#include "spmiutil/errorhandling.h"
#include "spmiutil/spmiutil.h"

unsigned Logger::s_logLevel = LOGMASK_DEFAULT;
FILE*    Logger::s_logFile  = nullptr;

void Logger::Initialize()
{
    s_logLevel = LOGMASK_DEFAULT;
}

void Logger::Shutdown()
{
    CloseLogFile();
}

void Logger::OpenLogFile(const char* logFilePath)
{
    if (s_logFile == nullptr && logFilePath != nullptr)
    {
        s_logFile = fopen(logFilePath, "wb");
        if (s_logFile == nullptr)
            LogError("Failed to open log file '%s'", logFilePath);
    }
}

void Logger::CloseLogFile()
{
    if (s_logFile != nullptr)
    {
        fclose(s_logFile);
        s_logFile = nullptr;
    }
}

unsigned Logger::ParseLogLevelString(const char* specifierStr)
{
    unsigned logLevelMask = LOGLEVEL_NONE;
    for (const char* ch = specifierStr; *ch != '\0'; ch++)
    {
        switch (*ch)
        {
            case 'e': case 'E': logLevelMask |= LOGLEVEL_ERROR; break;
            case 'w': case 'W': logLevelMask |= LOGLEVEL_WARNING; break;
            case 'm': case 'M': logLevelMask |= LOGLEVEL_MISSING; break;
            case 'i': case 'I': logLevelMask |= LOGLEVEL_ISSUE; break;
            case 'n': case 'N': logLevelMask |= LOGLEVEL_INFO; break;
            case 'v': case 'V': logLevelMask |= LOGLEVEL_VERBOSE; break;
            case 'd': case 'D': logLevelMask |= LOGLEVEL_DEBUG; break;
            case 'a': case 'A': logLevelMask |= LOGLEVEL_ALL; break;
            case 'q': case 'Q': logLevelMask = LOGLEVEL_NONE; break;
            default: break;
        }
    }
    return logLevelMask;
}

static const char* GetLogLevelString(LogLevel level)
{
    switch (level)
    {
        case LOGLEVEL_ERROR: return "ERROR";
        case LOGLEVEL_WARNING: return "WARNING";
        case LOGLEVEL_MISSING: return "MISSING";
        case LOGLEVEL_ISSUE: return "ISSUE";
        case LOGLEVEL_INFO: return "INFO";
        case LOGLEVEL_VERBOSE: return "VERBOSE";
        case LOGLEVEL_DEBUG: return "DEBUG";
        default: return "UNKNOWN";
    }
}

void Logger::LogPrintf(const char* function, const char* file, int line, LogLevel level, const char* msg, ...)
{
    va_list argList;
    va_start(argList, msg);
    LogVprintf(function, file, line, level, msg, argList);
    va_end(argList);
}

void Logger::LogVprintf(const char* function, const char* file, int line, LogLevel level, const char* msg,
                        va_list argList)
{
    if (!IsLogLevelEnabled(level))
        return;

    va_list copy;
    va_copy(copy, argList);
    char  small[1024];
    int   n = vsnprintf(small, sizeof(small), msg, copy);
    va_end(copy);
    std::string text;
    if (n >= (int)sizeof(small))
    {
        text.resize((size_t)n + 1);
        vsnprintf(&text[0], text.size(), msg, argList);
        text.resize((size_t)n);
    }
    else
    {
        text.assign(small, n < 0 ? 0 : (size_t)n);
    }

    std::string out;
    if (level < LOGLEVEL_INFO)
    {
        out += GetLogLevelString(level);
        out += ": ";
    }
    out += text;
    out += '\n';
    FILE* dest = (level <= LOGLEVEL_WARNING) ? stderr : stdout;
    fwrite(out.data(), 1, out.size(), dest);
    // Today's superpmi flushes every line; 3.1's printf leaves stdout to the C library: block-buffered when it
    // is a pipe or a file, so a crash loses what was not flushed (stderr is unbuffered in both).
    if (dest != stdout || !SpmiEra31())
        fflush(dest);

    if (s_logFile != nullptr)
    {
        const char* base = strrchr(file, '/');
        fprintf(s_logFile, " - %s [%s:%d] - %s - %s\r\n", function, base ? base + 1 : file, line,
                GetLogLevelString(level), text.c_str());
        fflush(s_logFile);
    }
}

void Logger::LogExceptionMessage(const char* function, const char* file, int line, DWORD /*exceptionCode*/,
                                 const char* msg, ...)
{
    if (!IsLogLevelEnabled(LOGLEVEL_DEBUG))
        return;
    va_list argList;
    va_start(argList, msg);
    char buff[4096];
    vsnprintf(buff, sizeof(buff), msg, argList);
    va_end(argList);
    LogPrintf(function, file, line, LOGLEVEL_DEBUG, "Exception thrown: %s", buff);
}

void IssueLogger::LogIssueHelper(const char* function, const char* file, int line, IssueType issue,
                                 const char* msg, ...)
{
    if (!Logger::IsLogLevelEnabled(LOGLEVEL_ISSUE))
        return;
    va_list argList;
    va_start(argList, msg);
    char buff[16 * 1024];
    vsnprintf(buff, sizeof(buff), msg, argList);
    va_end(argList);
    Logger::LogPrintf(function, file, line, LOGLEVEL_ISSUE, "%s%s", issue == ISSUE_ASSERT ? "<ASSERT> " : "<ASM_DIFF> ",
                      buff);
}

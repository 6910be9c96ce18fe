#include "methodcontextreader.h"
#include "spmiutil/spmiutil.h"

#include <strings.h>
#include <sys/stat.h>

#include "logging.h"

static bool EndsWith(const std::string& s, const char* suffix)
{
    size_t n = strlen(suffix);
    return s.size() >= n && strcasecmp(s.c_str() + s.size() - n, suffix) == 0;
}

static bool FileExists(const std::string& path)
{
    struct stat st;
    return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

static std::string StripExtension(const std::string& s)
{
    size_t dot   = s.rfind('.');
    size_t slash = s.rfind('/');
    return (dot == std::string::npos || (slash != std::string::npos && dot < slash)) ? s : s.substr(0, dot);
}

// superpmi's index warnings for a .mct it cannot use (the replay goes on without it).
static void WarnBadToc(const std::string& tocName, const spmimch_error& err)
{
    const char* why = "it appears to be truncated.";
    if (strstr(err.message, "starting sentinel") != nullptr)
        why = "it seems to be missing the starting sentinel/length";
    else if (strstr(err.message, "ending sentinel") != nullptr)
        why = "it appears to be missing the ending sentinel.";
    else if (strstr(err.message, "not sorted") != nullptr)
        why = "it is not sorted.";
    LogWarning("The index file %s is invalid: %s", tocName.c_str(), why);
}

MethodContextReader::MethodContextReader(const char* inputFileName, const int* indexes, int indexCount, int offset,
                                         int increment)
    : mch(nullptr), toc(nullptr), Indexes(indexes), IndexCount(indexCount), curIndexPos(0), Offset(offset),
      Increment(increment), curMCIndex(0), posMCIndex(1), filePos(0), fileSize(0)
{
    std::string input(inputFileName);
    std::string tocFileName;
    if (EndsWith(input, ".mct"))
    {
        // FILE.mch.mct -> FILE.mch; FILE.mct -> FILE.mch or FILE.mc
        tocFileName      = input;
        std::string stem = StripExtension(input);
        if (EndsWith(stem, ".mch") || EndsWith(stem, ".mc"))
            mchFileName = stem;
        else if (!FileExists(mchFileName = stem + ".mch") && FileExists(stem + ".mc"))
            mchFileName = stem + ".mc";
    }
    else
    {
        mchFileName = input;
        if (FileExists(input + ".mct"))
            tocFileName = input + ".mct";
        else if (FileExists(StripExtension(input) + ".mct"))
            tocFileName = StripExtension(input) + ".mct";
    }

    spmimch_error err;
    mch = spmimch_open(mchFileName.c_str(), &err);
    if (mch == nullptr)
    {
        LogError("Failed to open input file '%s': %s", mchFileName.c_str(), err.message);
        return;
    }
    fileSize = spmimch_file_size(mch);
    if (!tocFileName.empty())
    {
        toc = spmimch_toc_open(tocFileName.c_str(), fileSize, &err);
        if (toc == nullptr)
            WarnBadToc(tocFileName, err);
    }
}

MethodContextReader::~MethodContextReader()
{
    if (toc != nullptr)
        spmimch_toc_close(toc);
    if (mch != nullptr)
        spmimch_close(mch);
}

MethodContextReader::SeekResult MethodContextReader::SeekTo(int number)
{
    if (toc != nullptr)
    {
        int64_t i = spmimch_toc_find(toc, number);
        // 3.1 (GetSpecificMethodContext): a number the index does not have is an error, not the end
        if (i < 0)
            return (SpmiEra31() && IndexCount > 0) ? SEEKRESULT_DAMAGED : SEEKRESULT_END;
        int64_t off;
        int32_t num;
        char    hash[SPMIMCH_HASH_SIZE];
        spmimch_toc_entry(toc, (uint32_t)i, &off, &num, hash);
        filePos    = (uint64_t)off;
        posMCIndex = number;
        return SEEKRESULT_OK;
    }
    if (number < posMCIndex)
        return SEEKRESULT_END;
    // No index: hop over record headers.
    while (posMCIndex < number)
    {
        if (filePos >= fileSize)
            return SEEKRESULT_END;
        uint64_t      size;
        spmimch_error err;
        if (spmimch_check_record(mch, filePos, (uint32_t)posMCIndex, 0, &size, &err) != 0)
        {
            LogDebug("%s", err.message);
            curMCIndex = posMCIndex;
            return SEEKRESULT_DAMAGED;
        }
        filePos += size;
        posMCIndex++;
    }
    return (filePos >= fileSize) ? SEEKRESULT_END : SEEKRESULT_OK;
}

MethodContextBuffer MethodContextReader::GetNextMethodContext()
{
    MethodContextBuffer mcb = {nullptr, 0, false, false};
    int                 target;
    if (IndexCount > 0)
    {
        if (curIndexPos >= IndexCount)
        {
            mcb.allDone = true;
            return mcb;
        }
        target = Indexes[curIndexPos++];
    }
    else if (Offset > 0 && Increment > 0)
    {
        target = (curMCIndex == 0) ? Offset : curMCIndex + Increment;
    }
    else
    {
        target = curMCIndex + 1;
    }

    SeekResult seek = SeekTo(target);
    if (seek != SEEKRESULT_OK)
    {
        mcb.allDone = (seek == SEEKRESULT_END);
        mcb.error   = (seek == SEEKRESULT_DAMAGED);
        return mcb;
    }

    curMCIndex = target;
    uint64_t      size;
    spmimch_error err;
    if (spmimch_check_record(mch, filePos, (uint32_t)target, 0, &size, &err) != 0)
    {
        LogDebug("%s", err.message);
        mcb.error = true;
        return mcb;
    }
    mcb.buff = spmimch_data(mch) + filePos;
    mcb.size = (DWORD)size;
    filePos += size;
    posMCIndex = target + 1;
    return mcb;
}

double MethodContextReader::PercentComplete()
{
    if (IndexCount > 0)
        return curIndexPos * 100.0 / IndexCount;
    if (toc != nullptr && spmimch_toc_count(toc) > 0)
        return curMCIndex * 100.0 / spmimch_toc_count(toc);
    return fileSize ? filePos * 100.0 / fileSize : 100.0;
}

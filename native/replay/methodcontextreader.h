// MethodContextReader (superpmi-shared/methodcontextreader.h): hands out the records to replay, in order,
// honouring -c lists and -stride, using the .mct index (FILE.mch.mct or FILE.mct) to seek when present.
#ifndef _MethodContextReader
#define _MethodContextReader

#include <string>

#include "spmimch.h"
#include "standardpch.h"

struct MethodContextBuffer
{
    const unsigned char* buff;  // the whole record: 'm' 'c' totalLen payload '4' '2' (in the mapped file)
    DWORD                size;  // totalLen + 8
    bool                 allDone;
    bool                 error;

    bool Error() const { return error; }
    const unsigned char* Payload() const { return buff + 6; }
    DWORD PayloadSize() const { return size - 8; }
};

class MethodContextReader
{
public:
    MethodContextReader(const char* inputFileName, const int* indexes = nullptr, int indexCount = -1,
                        int offset = -1, int increment = -1);
    ~MethodContextReader();
    MethodContextReader(const MethodContextReader&) = delete;
    MethodContextReader& operator=(const MethodContextReader&) = delete;

    bool isValid() { return mch != nullptr; }
    bool hasTOC() { return toc != nullptr; }
    MethodContextBuffer GetNextMethodContext();
    int GetMethodContextIndex() { return curMCIndex; }
    double PercentComplete();

private:
    enum SeekResult
    {
        SEEKRESULT_OK,
        SEEKRESULT_END,
        SEEKRESULT_DAMAGED,  // a record before the target has broken framing (curMCIndex = its number)
    };
    SeekResult SeekTo(int number);  // position filePos at record `number` (1-based)

    spmimch_file* mch;
    spmimch_toc*  toc;
    std::string   mchFileName;
    const int*    Indexes;
    int           IndexCount;
    int           curIndexPos;
    int           Offset;
    int           Increment;
    int           curMCIndex;   // number of the record last handed out
    int           posMCIndex;   // number of the record at filePos
    uint64_t      filePos;
    uint64_t      fileSize;
};

#endif

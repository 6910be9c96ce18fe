// Method context lists (superpmi-shared/mclist.h): `-c` arguments and the `-f` failing list (.mcl).
#ifndef _MCList
#define _MCList

#include <vector>

#include "standardpch.h"

class MCList
{
public:
    // `20`, `20,25,30`, `10-99`, `5,10-99,101`, or a file ending in .mcl with one number per line.
    // Numbers start at 1 and strictly increase. Logs superpmi's error texts and returns false otherwise.
    static bool processArgAsMCL(const char* input, int* count, int** list);

    MCList() : fd(-1) {}
    ~MCList() { CloseMCL(); }
    MCList(const MCList&) = delete;
    MCList& operator=(const MCList&) = delete;

    void InitializeMCL(const char* filename);
    // Written at once (`%d\r\n`), so the numbers survive a later crash.
    void AddMethodToMCL(int methodIndex);
    void CloseMCL();

private:
    static bool getLineData(const char* nameOfInput, std::vector<int>* out);
    int fd;
};

#endif

#include "mclist.h"

#include <cctype>
#include <fcntl.h>
#include <string>
#include <strings.h>
#include <unistd.h>

#include "logging.h"

bool MCList::processArgAsMCL(const char* input, int* count, int** list)
{
    std::vector<int> numbers;
    size_t           len         = strlen(input);
    bool             isRangeList = true;
    for (size_t i = 0; i < len && isRangeList; i++)
    {
        if (input[i] != '-' && input[i] != ',' && !isdigit((unsigned char)input[i]))
            isRangeList = false;
    }

    if (isRangeList)
    {
        std::string s(input);
        size_t      start = 0;
        while (start <= s.size())
        {
            size_t      comma = s.find(',', start);
            std::string token = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
            start             = (comma == std::string::npos) ? s.size() + 1 : comma + 1;
            if (token.empty())
                continue;
            size_t      dash = token.find('-');
            std::string lo   = token.substr(0, dash);
            std::string hi   = (dash == std::string::npos) ? "" : token.substr(dash + 1);
            if (lo.empty() || (dash != std::string::npos && (hi.empty() || hi.find('-') != std::string::npos)))
                return false;
            if (lo.size() > 9 || hi.size() > 9)
                return false;
            int a = atoi(lo.c_str());
            if (dash == std::string::npos)
            {
                numbers.push_back(a);
                continue;
            }
            int b = atoi(hi.c_str());
            if (a >= b)
            {
                LogError("Invalid range in '%s'", input);
                return false;
            }
            for (int v = a; v <= b; v++)
                numbers.push_back(v);
        }
    }
    else
    {
        const char* lastdot = strrchr(input, '.');
        if (lastdot == nullptr || strcasecmp(lastdot, ".mcl") != 0)
            return false;
        if (!getLineData(input, &numbers))
            return false;
    }

    if (numbers.empty())
        return false;

    // check that the list starts at 1 and increases
    if (numbers[0] < 1)
    {
        LogError("MCL list needs to start from 1!");
        return false;
    }
    for (size_t i = 1; i < numbers.size(); i++)
    {
        if (numbers[i - 1] >= numbers[i])
        {
            LogError("MCL list must be increasing.. found %d -> %d", numbers[i - 1], numbers[i]);
            return false;
        }
    }

    *count = (int)numbers.size();
    *list  = new int[numbers.size()];
    memcpy(*list, numbers.data(), numbers.size() * sizeof(int));
    return true;
}

bool MCList::getLineData(const char* nameOfInput, std::vector<int>* out)
{
    FILE* fp = fopen(nameOfInput, "rb");
    if (fp == nullptr)
    {
        LogError("Unable to open '%s'", nameOfInput);
        return false;
    }
    char line[4096];
    bool ok = true;
    while (fgets(line, sizeof(line), fp) != nullptr)
    {
        const char* p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\r' || *p == '\n' || *p == '\0')
            continue;
        if (!isdigit((unsigned char)*p))
        {
            ok = false;
            break;
        }
        out->push_back(atoi(p));
    }
    fclose(fp);
    return ok;
}

void MCList::InitializeMCL(const char* filename)
{
    fd = open(filename, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd == -1)
        LogError("Unable to open '%s'", filename);
}

void MCList::AddMethodToMCL(int methodIndex)
{
    if (fd == -1)
        return;
    char buff[16];
    int  n = snprintf(buff, sizeof(buff), "%d\r\n", methodIndex);
    if (write(fd, buff, (size_t)n) != n)
        LogError("Failed to write method index '%d' to MCL file.", methodIndex);
}

void MCList::CloseMCL()
{
    if (fd != -1)
    {
        close(fd);
        fd = -1;
    }
}

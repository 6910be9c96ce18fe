// Common includes and the Windows-style integer types superpmi's sources use (superpmi-shared/standardpch.h).
#ifndef STANDARDPCH_H
#define STANDARDPCH_H

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

typedef unsigned int       DWORD;
typedef unsigned long long DWORDLONG;
typedef unsigned short     WORD;
typedef unsigned char      BYTE;
typedef unsigned int       ULONG;
typedef int                HRESULT;

#define S_OK ((HRESULT)0)
#define E_FAIL ((HRESULT)0x80004005)

#endif

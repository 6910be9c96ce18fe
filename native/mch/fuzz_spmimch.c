/*
 * fuzz_spmimch: a libFuzzer target for libspmimch's readers (built with clang: cmake -DSPMI_FUZZ=ON
 * -DCMAKE_C_COMPILER=clang-16; tests/test_sanitizers.py runs it for a bounded time from a seed corpus
 * of real 3.1.23 records). The input's first byte picks where the rest goes: even, a collection
 * (scanned with packets in small budgets and whole, each record checked again alone); odd, an index
 * (opened against a collection size taken from the next 4 bytes, every entry read and looked up).
 * The bytes go to a memfd, so that the readers open and map a real file as they always do.
 */
#define _GNU_SOURCE /* memfd_create */
#include "spmimch.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int as_file(const uint8_t* data, size_t size, char* path, size_t cap)
{
    int fd = memfd_create("fuzz", 0);
    if (fd < 0)
        return -1;
    size_t done = 0;
    while (done < size) {
        ssize_t n = write(fd, data + done, size - done);
        if (n <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)n;
    }
    snprintf(path, cap, "/proc/self/fd/%d", fd);
    return fd;
}

static void collection(const char* path)
{
    static spmimch_error problems[64];
    spmimch_error err;
    spmimch_file* f = spmimch_open(path, &err);
    if (!f)
        return;
    int rc;
    do {
        uint32_t n = 0;
        rc = spmimch_scan(f, SPMIMCH_SCAN_PACKETS, 64, NULL, problems, 64, &n);
    } while (rc == 1);
    const uint32_t count = spmimch_record_count(f);
    const spmimch_record* r = spmimch_records(f);
    for (uint32_t i = 0; i < count; i++) {
        uint64_t size = 0;
        (void)spmimch_check_record(f, r[i].offset, i + 1, SPMIMCH_SCAN_PACKETS, &size, &err);
    }
    spmimch_scan_reset(f);
    do {
        uint32_t n = 0;
        rc = spmimch_scan(f, SPMIMCH_SCAN_PACKETS, 0, NULL, problems, 64, &n);
    } while (rc == 1);
    spmimch_close(f);
}

static void index_file(const char* path, uint64_t mch_size)
{
    spmimch_error err;
    spmimch_toc* t = spmimch_toc_open(path, mch_size, &err);
    if (!t)
        return;
    const uint32_t n = spmimch_toc_count(t);
    for (uint32_t i = 0; i < n; i++) {
        int64_t offset;
        int32_t number;
        char hash[SPMIMCH_HASH_SIZE];
        if (spmimch_toc_entry(t, i, &offset, &number, hash) == 0)
            (void)spmimch_toc_find(t, number);
    }
    spmimch_toc_close(t);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size < 1)
        return 0;
    const int is_index = data[0] & 1;
    uint64_t mch_size = 0;
    data++, size--;
    if (is_index) {
        if (size < 4)
            return 0;
        uint32_t s;
        memcpy(&s, data, 4);
        mch_size = s;
        data += 4, size -= 4;
    }
    char path[64];
    int fd = as_file(data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    if (is_index)
        index_file(path, mch_size);
    else
        collection(path);
    close(fd);
    return 0;
}

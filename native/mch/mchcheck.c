/*
 * mchcheck FILE... : drive every libspmimch entry point over files (the sanitizer/fuzz harness for tests).
 *
 * For each FILE: scan with SPMIMCH_SCAN_PACKETS in 4096-byte budgets, print one line per problem, and check
 * that a whole scan (the parallel packet walk on 2 CPUs or more) says the same
 * ("FILE: record N at offset O: MESSAGE", or "FILE: MESSAGE" when the record is 0); if FILE.mct exists,
 * open it and check the record at every entry; write the framed records and a .mct into a temp
 * directory and verify them; end with "FILE: records=N problems=P status=S" (S = the scan's final
 * return value, -1 if the file could not be opened).
 * Exit: 0 ran (whatever the files contain), 2 usage error, 3 an internal consistency check failed.
 */
#define _DEFAULT_SOURCE /* mkdtemp */
#include "spmimch.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef unsigned long long ull;

#define BATCH 1024u
#define OUT_MCH "out.mch"
#define OUT_MCT "out.mch.mct"

static int g_failed;

#define FAIL(...)                                                                                                      \
    do {                                                                                                               \
        fprintf(stderr, "mchcheck: internal check failed: " __VA_ARGS__);                                              \
        fputc('\n', stderr);                                                                                           \
        g_failed = 1;                                                                                                  \
    } while (0)

static void print_problem(const char* file, const spmimch_error* e)
{
    if (e->record)
        printf("%s: record %u at offset %llu: %s\n", file, e->record, (ull)e->offset, e->message);
    else
        printf("%s: %s\n", file, e->message);
}

static char* join(const char* a, const char* b)
{
    size_t n = strlen(a) + strlen(b) + 1;
    char* s = malloc(n);
    if (!s) {
        perror("mchcheck");
        exit(3);
    }
    snprintf(s, n, "%s%s", a, b);
    return s;
}

/* The .mct paired with `path`: check every entry's record. Returns the number of problems printed. */
static uint64_t check_toc(spmimch_file* f, const char* path)
{
    char* mct = join(path, ".mct");
    uint64_t problems = 0;
    spmimch_error err;
    if (access(mct, F_OK) == 0) {
        spmimch_toc* t = spmimch_toc_open(mct, spmimch_file_size(f), &err);
        if (!t) {
            print_problem(mct, &err);
            problems++;
        }
        for (uint32_t i = 0; t && i < spmimch_toc_count(t); i++) {
            int64_t off;
            int32_t num;
            char hash[SPMIMCH_HASH_SIZE];
            uint64_t size = 0;
            if (spmimch_toc_entry(t, i, &off, &num, hash) != 0 || strlen(hash) >= SPMIMCH_HASH_SIZE)
                FAIL("%s: toc entry %u", mct, i);
            if (spmimch_toc_find(t, num) != (int64_t)i)
                FAIL("%s: toc_find(%d) != %u", mct, num, i);
            if (spmimch_check_record(f, (uint64_t)off, (uint32_t)num, SPMIMCH_SCAN_PACKETS, &size, &err) != 0) {
                print_problem(path, &err);
                problems++;
            }
        }
        if (t && (spmimch_toc_find(t, 0) != -1 || spmimch_toc_entry(t, spmimch_toc_count(t), NULL, NULL, NULL) != -1))
            FAIL("%s: lookup of a missing entry succeeded", mct);
        spmimch_toc_close(t);
    }
    free(mct);
    return problems;
}

/* Is the file at `p` byte-identical to the ranges of f? */
static int same_bytes(const char* p, const spmimch_file* f, const spmimch_record* r, uint32_t n)
{
    FILE* fp = fopen(p, "rb");
    uint8_t buf[65536];
    int ok = fp != NULL;
    for (uint32_t i = 0; ok && i < n; i++) {
        for (uint64_t done = 0; ok && done < r[i].size;) {
            size_t want = r[i].size - done < sizeof buf ? (size_t)(r[i].size - done) : sizeof buf;
            ok = fread(buf, 1, want, fp) == want && memcmp(buf, spmimch_data(f) + r[i].offset + done, want) == 0;
            done += want;
        }
    }
    ok = ok && fgetc(fp) == EOF;
    if (fp)
        fclose(fp);
    return ok;
}

/* Write the framed records and a .mct to a temp dir, verify them, exercise the error paths, clean up. */
static void check_write(const spmimch_file* f, const char* path)
{
    const uint32_t n = spmimch_record_count(f);
    const spmimch_record* r = spmimch_records(f);
    const char* tmpdir = getenv("TMPDIR");
    char* dir = join(tmpdir && *tmpdir ? tmpdir : "/tmp", "/mchcheck.XXXXXX");
    if (!mkdtemp(dir)) {
        FAIL("mkdtemp %s: %s", dir, strerror(errno));
        free(dir);
        return;
    }
    char* mch = join(dir, "/" OUT_MCH);
    char* mct = join(dir, "/" OUT_MCT);
    char* bad = join(dir, "/missing/x.mch");
    uint64_t* offs = calloc(n + 1, sizeof *offs);
    uint64_t* sizes = calloc(n + 1, sizeof *sizes);
    int64_t* toffs = calloc(n + 1, sizeof *toffs);
    int32_t* nums = calloc(n + 1, sizeof *nums);
    spmimch_error err;
    struct stat st;
    if (!offs || !sizes || !toffs || !nums) {
        perror("mchcheck");
        exit(3);
    }
    uint64_t pos = 0;
    for (uint32_t i = 0; i < n; i++) {
        offs[i] = r[i].offset;
        sizes[i] = r[i].size;
        toffs[i] = (int64_t)pos;
        nums[i] = (int32_t)(i + 1);
        pos += r[i].size;
    }
    if (spmimch_write_records(f, offs, sizes, n, mch, &err) != 0)
        FAIL("%s: write_records: %s", path, err.message);
    else if (!same_bytes(mch, f, r, n))
        FAIL("%s: extracted bytes differ", path);
    else if (stat(mch, &st) != 0 || (st.st_mode & 0777) != 0644)
        FAIL("%s: output mode is not 0644", path);
    if (spmimch_toc_write(mct, n, toffs, nums, NULL, &err) != 0) {
        FAIL("%s: toc_write: %s", path, err.message);
    } else {
        spmimch_toc* t = spmimch_toc_open(mct, pos, &err);
        if (!t || spmimch_toc_count(t) != n)
            FAIL("%s: written .mct does not reopen: %s", path, t ? "count" : err.message);
        for (uint32_t i = 0; t && i < n; i++) {
            int64_t o;
            int32_t num;
            char hash[SPMIMCH_HASH_SIZE];
            if (spmimch_toc_entry(t, i, &o, &num, hash) != 0 || o != toffs[i] || num != nums[i] || hash[0] != '\0' ||
                spmimch_toc_find(t, num) != (int64_t)i)
                FAIL("%s: written .mct entry %u differs", path, i);
        }
        spmimch_toc_close(t);
    }
    /* The extracted collection must scan clean with the same record sizes. */
    spmimch_file* g = spmimch_open(mch, &err);
    if (n == 0 ? (g != NULL || err.code != SPMIMCH_E_EMPTY) : g == NULL) {
        FAIL("%s: reopening the extracted file: %s", path, g ? "opened an empty file" : err.message);
    } else if (g) {
        uint32_t np = 0;
        int rc = spmimch_scan(g, 0, 0, NULL, NULL, 0, &np);
        if (rc != 0 || np != 0 || spmimch_record_count(g) != n)
            FAIL("%s: rescan of the extracted file: status %d, %u problems, %u records", path, rc, np, spmimch_record_count(g));
        for (uint32_t i = 0; rc == 0 && i < n; i++)
            if (spmimch_records(g)[i].size != r[i].size || spmimch_records(g)[i].offset != (uint64_t)toffs[i])
                FAIL("%s: extracted record %u differs", path, i + 1);
    }
    spmimch_close(g);
    /* Error paths: bad range, unsorted numbers, unwritable directory; none may leave a file behind. */
    offs[n] = spmimch_file_size(f);
    sizes[n] = 1;
    if (spmimch_write_records(f, offs + n, sizes + n, 1, bad, &err) != -1 || err.code != SPMIMCH_E_RANGE)
        FAIL("%s: out-of-range write was not refused", path);
    int32_t unsorted[2] = {2, 2};
    int64_t zero[2] = {0, 0};
    if (spmimch_toc_write(bad, 2, zero, unsorted, NULL, &err) != -1 || err.code != SPMIMCH_E_ARG)
        FAIL("%s: unsorted toc_write was not refused", path);
    if (spmimch_write_records(f, offs, sizes, n, bad, &err) != -1 || err.code != SPMIMCH_E_IO)
        FAIL("%s: write into a missing directory did not fail with E_IO", path);
    DIR* d = opendir(dir);
    int entries = 0;
    for (struct dirent* e; d && (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            entries++;
            if (strcmp(e->d_name, OUT_MCH) && strcmp(e->d_name, OUT_MCT))
                FAIL("%s: stray file %s left in %s", path, e->d_name, dir);
        }
    if (d)
        closedir(d);
    if (entries != 2)
        FAIL("%s: expected 2 files in %s, found %d", path, dir, entries);
    unlink(mch);
    unlink(mct);
    if (rmdir(dir) != 0)
        FAIL("rmdir %s: %s", dir, strerror(errno));
    free(offs), free(sizes), free(toffs), free(nums);
    free(dir), free(mch), free(mct), free(bad);
}

static void check_file(const char* path)
{
    spmimch_error err;
    spmimch_file* f = spmimch_open(path, &err);
    if (!f) {
        print_problem(path, &err);
        printf("%s: records=0 problems=1 status=-1\n", path);
        return;
    }
    static spmimch_stats stats;
    static spmimch_error buf[BATCH];
    memset(&stats, 0, sizeof stats);
    uint64_t problems = 0;
    int rc;
    do {
        uint32_t n = 0;
        rc = spmimch_scan(f, SPMIMCH_SCAN_PACKETS | SPMIMCH_SCAN_RELEASE, 4096, &stats, buf, BATCH, &n);
        for (uint32_t i = 0; i < n && i < BATCH; i++)
            print_problem(path, &buf[i]);
        if (n > BATCH)
            printf("%s: %u more problems not shown\n", path, n - BATCH);
        problems += n;
    } while (rc == 1);

    /* The same file scanned whole (budget 0: windows of up to 1 MiB and more, walked by two threads
     * on 2 CPUs or more) finds the same problems, records and status as the scan in small budgets
     * (walked sequentially): the parallel walk under test (ThreadSanitizer builds run it). */
    spmimch_file* whole = spmimch_open(path, &err);
    if (whole) {
        static spmimch_stats wstats;
        memset(&wstats, 0, sizeof wstats);
        uint64_t wproblems = 0;
        int wrc;
        do {
            uint32_t wn = 0;
            wrc = spmimch_scan(whole, SPMIMCH_SCAN_PACKETS, 0, &wstats, buf, BATCH, &wn);
            wproblems += wn;
        } while (wrc == 1);
        if (wrc != rc || wproblems != problems || wstats.records != stats.records)
            FAIL("%s: a whole scan (status %d, %llu problems, %llu records) disagrees with the scan in budgets (status %d, "
                 "%llu problems, %llu records)",
                 path, wrc, (ull)wproblems, (ull)wstats.records, rc, (ull)problems, (ull)stats.records);
        spmimch_close(whole);
    }

    /* Consistency of the scan's results. */
    uint32_t n = 0;
    if (spmimch_scan(f, SPMIMCH_SCAN_PACKETS, 0, NULL, NULL, 0, &n) != rc || n != 0)
        FAIL("%s: scan after the end did not repeat status %d quietly", path, rc);
    const uint32_t nrec = spmimch_record_count(f);
    const spmimch_record* r = spmimch_records(f);
    uint64_t pos = 0, payload = 0, framed = 0;
    for (uint32_t i = 0; i < nrec; i++) {
        uint64_t size = 0;
        if (r[i].offset != pos || r[i].size < 8)
            FAIL("%s: record %u is not contiguous", path, i + 1);
        if (spmimch_check_record(f, r[i].offset, i + 1, 0, &size, &err) != 0 || size != r[i].size)
            FAIL("%s: check_record disagrees with the scan at record %u", path, i + 1);
        pos += r[i].size;
        payload += r[i].size - 8;
    }
    if (pos != spmimch_scan_position(f) || (rc == 0) != (pos == spmimch_file_size(f)))
        FAIL("%s: scan position %llu vs records end %llu (status %d)", path, (ull)spmimch_scan_position(f), (ull)pos, rc);
    for (int id = 0; id < 256; id++)
        framed += stats.packet_bytes[id] + 6 * stats.packet_count[id];
    if (stats.records != nrec || (problems == 0 && framed != payload))
        FAIL("%s: stats (%llu records, %llu packet bytes) vs table (%u records, %llu payload bytes)", path,
             (ull)stats.records, (ull)framed, nrec, (ull)payload);
    if (spmimch_check_record(f, spmimch_file_size(f), 1, 0, NULL, &err) != -1 || err.code != SPMIMCH_E_RANGE)
        FAIL("%s: check_record past the end did not fail with E_RANGE", path);

    problems += check_toc(f, path);
    check_write(f, path);
    printf("%s: records=%u problems=%llu status=%d\n", path, nrec, (ull)problems, rc);
    spmimch_close(f);
}

int main(int argc, char** argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: mchcheck FILE...\n");
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        check_file(argv[i]);
        fflush(stdout);
    }
    return g_failed ? 3 : 0;
}

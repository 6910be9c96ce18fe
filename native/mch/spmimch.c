/*
 * libspmimch: SuperPMI collection (.mch/.mc) and index (.mct) access. API and exact message texts:
 * spmimch.h. Formats: shared/docs/mch-format.md sections 1-4 and 6.
 *
 * Every length read from the file is checked against the bytes that remain before it is used, in
 * 64-bit arithmetic; multi-byte fields are read with memcpy (no unaligned loads).
 */
#define _DEFAULT_SOURCE /* madvise, mkstemp, fchmod */
#include "spmimch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef unsigned long long ull;

#define RELEASE_STEP ((uint64_t)64 << 20) /* SPMIMCH_SCAN_RELEASE: madvise at least every 64 MiB */
#define ALL_FLAGS (SPMIMCH_SCAN_PACKETS | SPMIMCH_SCAN_RELEASE)

struct spmimch_file {
    void* map;            /* read-only MAP_PRIVATE mapping of the whole file */
    const uint8_t* data;  /* == map */
    uint64_t size;
    uint64_t page;        /* page size */
    uint64_t cursor;      /* offset of the next record to scan */
    uint64_t released;    /* [0, released) has been given back with MADV_DONTNEED */
    spmimch_record* recs; /* record table */
    uint32_t nrec, cap;
    int stopped;          /* the scan hit a framing error */
};

struct spmimch_toc {
    void* map;
    uint64_t size;
    const uint8_t* entries; /* count x 48 bytes, at offset 8 */
    uint32_t count;
};

static uint32_t rd32(const uint8_t* p) { uint32_t v; memcpy(&v, p, 4); return v; } /* little-endian host */

/* ---------------------------------------------------------------- errors -------------------- */

__attribute__((format(printf, 5, 0)))
static void vfill(spmimch_error* e, int code, uint32_t rec, uint64_t off, const char* fmt, va_list ap)
{
    e->code = code;
    e->record = rec;
    e->offset = off;
    vsnprintf(e->message, sizeof e->message, fmt, ap);
}

__attribute__((format(printf, 5, 6)))
static void set_error(spmimch_error* e, int code, uint32_t rec, uint64_t off, const char* fmt, ...)
{
    if (!e)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfill(e, code, rec, off, fmt, ap);
    va_end(ap);
}

static void null_arg(spmimch_error* e) { set_error(e, SPMIMCH_E_ARG, 0, 0, "null argument: expected a pointer, found NULL"); }

/* Where problems go: a list (spmimch_scan) or only the first one (spmimch_check_record). */
typedef struct sink {
    spmimch_error* list;
    uint32_t max;
    uint32_t* n;          /* problems seen; counts past max */
    spmimch_error* first; /* non-NULL: store only the first problem here */
} sink;

__attribute__((format(printf, 5, 6)))
static void report(sink* s, int code, uint32_t rec, uint64_t off, const char* fmt, ...)
{
    spmimch_error* e = s->first;
    if (!e) {
        if (*s->n < s->max)
            e = &s->list[*s->n];
        if (*s->n < UINT32_MAX)
            ++*s->n;
    }
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        vfill(e, code, rec, off, fmt, ap);
        va_end(ap);
    }
}

/* ---------------------------------------------------------------- record / packet / map checks */

/* Report a problem and return -1 from the check (uses the check's `s` and `num`). */
#define FAIL(code, at, ...)                                                                                            \
    do {                                                                                                               \
        report(s, code, num, at, __VA_ARGS__);                                                                         \
        return -1;                                                                                                     \
    } while (0)

/* Record framing (doc 1): 'm' 'c' u32 totalLen, payload, '4' '2'. Stores the record size (totalLen + 8). */
static int check_frame(const uint8_t* d, uint64_t fsize, uint64_t off, uint32_t num, uint64_t* size, sink* s)
{
    const uint64_t left = fsize - off;
    const uint8_t* p = d + off;
    if (left < 6)
        FAIL(SPMIMCH_E_FRAMING, off, "truncated record header: expected 6 bytes, found %llu", (ull)left);
    if (p[0] != 'm' || p[1] != 'c')
        FAIL(SPMIMCH_E_FRAMING, off, "bad magic: expected 'mc' (6d 63), found %02x %02x", (unsigned)p[0], (unsigned)p[1]);
    const uint32_t len = rd32(p + 2);
    if ((uint64_t)len + 2 > left - 6)
        FAIL(SPMIMCH_E_FRAMING, off, "record length %u runs past end of file: expected %llu more bytes, found %llu", len,
             (ull)len + 2, (ull)(left - 6));
    const uint8_t* c = p + 6 + len;
    if (c[0] != '4' || c[1] != '2')
        FAIL(SPMIMCH_E_FRAMING, off + 6 + len, "bad end canary: expected '42' (34 32), found %02x %02x", (unsigned)c[0],
             (unsigned)c[1]);
    *size = (uint64_t)len + 8;
    return 0;
}

int spmimch_expected_item_sizes(uint8_t packet_id, int dense, uint32_t sizes[2])
{
    /* doc 5.2-5.4: key + value (keyed) or value (dense) */
    static const struct { uint8_t id, dense; uint32_t a, b; } table[] = {
        {143, 0, 4 + 216, 4 + 212}, {118, 0, 4 + 16, 0}, {115, 0, 4 + 56, 4 + 52}, {114, 0, 4 + 12, 0},
        {183, 0, 4 + 4, 0},         {154, 0, 4 + 8, 0},  {71, 0, 8 + 8, 0},        {45, 0, 8 + 4, 0},
        {6, 0, 8 + 12, 0},          {122, 1, 24, 0},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (table[i].id != packet_id || table[i].dense != (dense != 0))
            continue;
        if (sizes) {
            sizes[0] = table[i].a;
            sizes[1] = table[i].b;
        }
        return table[i].b ? 2 : 1;
    }
    return 0;
}

/* Map structure (doc 3-4): [tag] u32 numItems, then if numItems > 0: u32 bufferLength, items, side
 * buffer of [u32 len][len bytes] chunks. Reports the first problem only; off = the packet's id byte. */
static int check_map(const uint8_t* m, uint32_t n, unsigned id, uint32_t num, uint64_t off, sink* s)
{
    uint32_t hdr = 0;
    int dense = 0;
    if (n >= 4 && memcmp(m, "LWM1", 4) == 0)
        hdr = 4;
    else if (n >= 4 && memcmp(m, "DWM1", 4) == 0)
        hdr = 4, dense = 1;
    if (n < hdr + 4)
        FAIL(SPMIMCH_E_MAP, off, "packet %u: map too short: expected at least %u bytes, found %u", id, hdr + 4, n);
    const uint32_t items = rd32(m + hdr);
    if (items == 0) {
        if (n != hdr + 4)
            FAIL(SPMIMCH_E_MAP, off, "packet %u: empty map: expected %u bytes, found %u", id, hdr + 4, n);
        return 0;
    }
    if (n < hdr + 8)
        FAIL(SPMIMCH_E_MAP, off, "packet %u: map too short: expected at least %u bytes, found %u", id, hdr + 8, n);
    const uint32_t buflen = rd32(m + hdr + 4), body = n - hdr - 8;
    if (buflen > body)
        FAIL(SPMIMCH_E_MAP, off, "packet %u: side buffer too long: expected at most %u bytes, found %u", id, body, buflen);
    const uint32_t ibytes = body - buflen; /* the items region */
    if (ibytes % items)
        FAIL(SPMIMCH_E_MAP, off, "packet %u: items do not fill the map: expected a multiple of %u bytes, found %u", id,
             items, ibytes);
    uint32_t sizes[2], isz = ibytes / items;
    int k = spmimch_expected_item_sizes((uint8_t)id, dense, sizes);
    if (k && isz != sizes[0] && (k < 2 || isz != sizes[1])) {
        char exp[32];
        if (k == 1)
            snprintf(exp, sizeof exp, "%u", sizes[0]);
        else
            snprintf(exp, sizeof exp, "%u or %u", sizes[0], sizes[1]);
        FAIL(SPMIMCH_E_MAP, off, "packet %u: item size does not match the map: expected %s bytes, found %u", id, exp, isz);
    }
    const uint8_t* b = m + hdr + 8 + ibytes;
    for (uint32_t pos = 0; pos < buflen;) {
        uint32_t left = buflen - pos;
        uint64_t need = left < 4 ? 4 : 4 + (uint64_t)rd32(b + pos);
        if (need > left)
            FAIL(SPMIMCH_E_MAP, off, "packet %u: side buffer chunk at +%u runs past the buffer: expected %llu bytes, found %u",
                 id, pos, (ull)need, left);
        pos += (uint32_t)need;
    }
    return 0;
}

/* Packets (doc 2): u8 id, u32 size, map, 0x42. A framing problem ends the walk of this record. */
static int walk_packets(const uint8_t* d, uint64_t rec_off, uint32_t len, uint32_t num, spmimch_stats* st, sink* s)
{
    const uint64_t base = rec_off + 6;
    const uint8_t* p = d + base;
    for (uint32_t pos = 0; pos < len;) {
        const uint32_t left = len - pos;
        const unsigned id = p[pos];
        if (left < 5)
            FAIL(SPMIMCH_E_PACKET, base + pos, "truncated packet header: expected 5 bytes, found %u", left);
        const uint32_t size = rd32(p + pos + 1);
        if ((uint64_t)size + 1 > left - 5)
            FAIL(SPMIMCH_E_PACKET, base + pos, "packet %u runs past end of record: expected %llu bytes, found %u", id,
                 (ull)size + 1, left - 5);
        const unsigned canary = p[pos + 5 + size];
        if (canary != 0x42)
            FAIL(SPMIMCH_E_PACKET, base + pos + 5 + size, "bad canary after packet %u: expected 42, found %02x", id, canary);
        if (st) {
            st->packet_count[id]++;
            st->packet_bytes[id] += size;
        }
        if (check_map(p + pos + 5, size, id, num, base + pos, s) != 0 && s->first)
            return -1; /* first-problem mode: stop at the first map problem */
        pos += size + 6; /* size + 6 <= left, checked above */
    }
    return 0;
}
#undef FAIL

/* ---------------------------------------------------------------- open / close ---------------- */

/* open + fstat + regular-file check. Returns the fd, or -1 with err filled. */
static int open_regular(const char* path, const char* what, uint64_t* size, spmimch_error* err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* O_NONBLOCK: do not hang on a FIFO */
    if (fd < 0) {
        set_error(err, SPMIMCH_E_IO, 0, 0, "cannot open: %s", strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        set_error(err, SPMIMCH_E_IO, 0, 0, "cannot stat: %s", strerror(errno));
    } else if (!S_ISREG(st.st_mode)) {
        set_error(err, SPMIMCH_E_NOTFILE, 0, 0, "not a regular file: expected %s, found %s", what,
                  S_ISDIR(st.st_mode) ? "a directory" : "a special file");
    } else if ((uint64_t)st.st_size > SIZE_MAX) {
        set_error(err, SPMIMCH_E_IO, 0, 0, "cannot map: %s", strerror(EFBIG));
    } else {
        *size = (uint64_t)st.st_size;
        return fd;
    }
    close(fd);
    return -1;
}

/* mmap size (> 0) bytes read-only and close fd. NULL with err filled on failure. */
static void* map_fd(int fd, uint64_t size, spmimch_error* err)
{
    void* m = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd);
    if (m == MAP_FAILED) {
        set_error(err, SPMIMCH_E_IO, 0, 0, "cannot map: %s", strerror(e));
        return NULL;
    }
    return m;
}

spmimch_file* spmimch_open(const char* path, spmimch_error* err)
{
    uint64_t size = 0;
    if (!path) {
        null_arg(err);
        return NULL;
    }
    int fd = open_regular(path, "a .mch/.mc collection", &size, err);
    if (fd < 0)
        return NULL;
    if (size == 0) {
        close(fd);
        set_error(err, SPMIMCH_E_EMPTY, 0, 0, "empty file: expected at least one method context record");
        return NULL;
    }
    void* m = map_fd(fd, size, err);
    if (!m)
        return NULL;
    spmimch_file* f = calloc(1, sizeof *f);
    if (!f) {
        munmap(m, (size_t)size);
        set_error(err, SPMIMCH_E_NOMEM, 0, 0, "out of memory: expected %llu bytes, found none", (ull)sizeof *f);
        return NULL;
    }
    long page = sysconf(_SC_PAGESIZE);
    f->map = m;
    f->data = m;
    f->size = size;
    f->page = page > 0 ? (uint64_t)page : 4096;
    return f;
}

void spmimch_close(spmimch_file* f)
{
    if (!f)
        return;
    munmap(f->map, (size_t)f->size);
    free(f->recs);
    free(f);
}

uint64_t spmimch_file_size(const spmimch_file* f) { return f ? f->size : 0; }
const uint8_t* spmimch_data(const spmimch_file* f) { return f ? f->data : NULL; }
uint64_t spmimch_scan_position(const spmimch_file* f) { return f ? f->cursor : 0; }
uint32_t spmimch_record_count(const spmimch_file* f) { return f ? f->nrec : 0; }
const spmimch_record* spmimch_records(const spmimch_file* f) { return f ? f->recs : NULL; }

void spmimch_scan_reset(spmimch_file* f)
{
    if (!f)
        return;
    f->cursor = 0;
    f->released = 0;
    f->nrec = 0;
    f->stopped = 0;
}

/* ---------------------------------------------------------------- scanning ------------------- */

/* Give back the whole pages behind the cursor (they are re-read from the file if touched again). */
static void release(spmimch_file* f)
{
    uint64_t upto = f->cursor - f->cursor % f->page;
    if (upto > f->released) {
        madvise((uint8_t*)f->map + f->released, (size_t)(upto - f->released), MADV_DONTNEED);
        f->released = upto;
    }
}

static int grow(spmimch_file* f, sink* s)
{
    uint64_t cap = f->cap ? (uint64_t)f->cap * 2 : 1024;
    if (cap > UINT32_MAX)
        cap = UINT32_MAX;
    void* p = NULL;
    if (f->nrec < UINT32_MAX && cap <= SIZE_MAX / sizeof *f->recs)
        p = realloc(f->recs, (size_t)cap * sizeof *f->recs);
    if (!p) {
        report(s, SPMIMCH_E_NOMEM, 0, f->cursor, "out of memory: expected %llu bytes, found none",
               (ull)(cap * sizeof *f->recs));
        return -1;
    }
    f->recs = p;
    f->cap = (uint32_t)cap;
    return 0;
}

int spmimch_scan(spmimch_file* f, unsigned flags, uint64_t budget_bytes, spmimch_stats* stats,
                 spmimch_error* problems, uint32_t max_problems, uint32_t* n_problems)
{
    if (!f || !n_problems || (!problems && max_problems))
        return -1;
    sink s = {problems, max_problems, n_problems, NULL};
    if (flags & ~ALL_FLAGS) {
        report(&s, SPMIMCH_E_ARG, 0, 0, "bad flags: expected a combination of 1 and 2, found %u", flags);
        return -1;
    }
    if (f->stopped)
        return -1;
    const uint64_t start = f->cursor;
    uint64_t next_release = start + RELEASE_STEP;
    while (f->cursor < f->size) {
        if (f->nrec == f->cap && grow(f, &s) != 0)
            return -1;
        const uint64_t off = f->cursor;
        const uint32_t num = f->nrec + 1;
        uint64_t rsize = 0;
        if (check_frame(f->data, f->size, off, num, &rsize, &s) != 0) {
            f->stopped = 1;
            break;
        }
        if (flags & SPMIMCH_SCAN_PACKETS) {
            walk_packets(f->data, off, (uint32_t)(rsize - 8), num, stats, &s);
            if (stats)
                stats->records++;
        }
        f->recs[f->nrec].offset = off;
        f->recs[f->nrec].size = rsize;
        f->nrec++;
        f->cursor = off + rsize;
        if ((flags & SPMIMCH_SCAN_RELEASE) && f->cursor >= next_release) {
            release(f);
            next_release = f->cursor + RELEASE_STEP;
        }
        if (budget_bytes && f->cursor - start >= budget_bytes)
            break;
    }
    if (flags & SPMIMCH_SCAN_RELEASE)
        release(f);
    return f->stopped ? -1 : f->cursor < f->size ? 1 : 0;
}

int spmimch_check_record(spmimch_file* f, uint64_t offset, uint32_t number, unsigned flags, uint64_t* size,
                         spmimch_error* err)
{
    spmimch_error scratch;
    sink s = {NULL, 0, NULL, err ? err : &scratch};
    if (!f) {
        null_arg(err);
        return -1;
    }
    if (flags & ~ALL_FLAGS) {
        set_error(err, SPMIMCH_E_ARG, number, offset, "bad flags: expected a combination of 1 and 2, found %u", flags);
        return -1;
    }
    if (offset >= f->size) {
        set_error(err, SPMIMCH_E_RANGE, number, offset, "record offset %llu is past the end of file: expected less than %llu",
                  (ull)offset, (ull)f->size);
        return -1;
    }
    uint64_t rsize = 0;
    if (check_frame(f->data, f->size, offset, number, &rsize, &s) != 0)
        return -1;
    if ((flags & SPMIMCH_SCAN_PACKETS) && walk_packets(f->data, offset, (uint32_t)(rsize - 8), number, NULL, &s) != 0)
        return -1;
    if (size)
        *size = rsize;
    return 0;
}

/* ---------------------------------------------------------------- atomic output -------------- */

typedef struct out {
    const char* path;
    char* tmp;
    int fd;
} out;

static void out_fail(out* o, int e, spmimch_error* err)
{
    if (o->fd >= 0)
        close(o->fd);
    if (o->tmp)
        unlink(o->tmp);
    free(o->tmp);
    o->tmp = NULL;
    o->fd = -1;
    set_error(err, SPMIMCH_E_IO, 0, 0, "cannot write %s: %s", o->path, strerror(e));
}

/* Create "<dir>/.<basename>.XXXXXX" next to path. */
static int out_begin(out* o, const char* path, spmimch_error* err)
{
    const char* slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0, len = strlen(path);
    o->path = path;
    o->fd = -1;
    o->tmp = malloc(len + 9);
    if (!o->tmp) {
        out_fail(o, ENOMEM, err);
        return -1;
    }
    snprintf(o->tmp, len + 9, "%.*s.%s.XXXXXX", (int)dirlen, path, path + dirlen);
    o->fd = mkstemp(o->tmp);
    if (o->fd < 0) {
        int e = errno;
        free(o->tmp);
        o->tmp = NULL; /* nothing was created */
        out_fail(o, e, err);
        return -1;
    }
    return 0;
}

static int out_write(out* o, const uint8_t* p, uint64_t n, spmimch_error* err)
{
    while (n > 0) {
        size_t chunk = n > ((size_t)1 << 30) ? (size_t)1 << 30 : (size_t)n;
        ssize_t w = write(o->fd, p, chunk);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            out_fail(o, w < 0 ? errno : EIO, err);
            return -1;
        }
        p += w;
        n -= (uint64_t)w;
    }
    return 0;
}

static int out_commit(out* o, spmimch_error* err)
{
    if (fchmod(o->fd, 0644) != 0 || fsync(o->fd) != 0) {
        out_fail(o, errno, err);
        return -1;
    }
    int rc = close(o->fd);
    o->fd = -1;
    if (rc != 0 || rename(o->tmp, o->path) != 0) {
        out_fail(o, errno, err);
        return -1;
    }
    free(o->tmp);
    return 0;
}

int spmimch_write_records(const spmimch_file* f, const uint64_t* offsets, const uint64_t* sizes, uint32_t n,
                          const char* out_path, spmimch_error* err)
{
    if (!f || !out_path || (n && (!offsets || !sizes))) {
        null_arg(err);
        return -1;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (offsets[i] > f->size || sizes[i] > f->size - offsets[i]) {
            set_error(err, SPMIMCH_E_RANGE, 0, offsets[i], "record range %llu+%llu is past the end of file: expected at most %llu",
                      (ull)offsets[i], (ull)sizes[i], (ull)f->size);
            return -1;
        }
    }
    out o;
    if (out_begin(&o, out_path, err) != 0)
        return -1;
    for (uint32_t i = 0; i < n;) {
        uint64_t start = offsets[i], end = start + sizes[i];
        for (i++; i < n && offsets[i] == end; i++) /* coalesce adjacent ranges into one write */
            end += sizes[i];
        if (out_write(&o, f->data + start, end - start, err) != 0)
            return -1;
    }
    return out_commit(&o, err);
}

/* ---------------------------------------------------------------- .mct index (doc 6) --------- */

static void toc_read(const uint8_t* e, int64_t* off, int32_t* num)
{
    if (off)
        memcpy(off, e, 8);
    if (num)
        memcpy(num, e + 8, 4);
}

/* Numbers >= 1 and strictly increasing; shared by toc_open (E_TOC) and toc_write (E_ARG). */
static int check_number(int code, uint32_t i, int32_t num, int32_t prev, spmimch_error* err)
{
    uint64_t at = 8 + (uint64_t)i * SPMIMCH_TOC_ENTRY_SIZE;
    if (num < 1) {
        set_error(err, code, 0, at, "entry %u: expected a method context number >= 1, found %d", i, num);
        return -1;
    }
    if (i > 0 && num <= prev) {
        set_error(err, code, (uint32_t)num, at, "not sorted: expected numbers to increase, found %d after %d", num, prev);
        return -1;
    }
    return 0;
}

spmimch_toc* spmimch_toc_open(const char* path, uint64_t mch_size, spmimch_error* err)
{
    uint64_t size = 0;
    if (!path) {
        null_arg(err);
        return NULL;
    }
    int fd = open_regular(path, "a .mct index", &size, err);
    if (fd < 0)
        return NULL;
    if (size < 8) {
        close(fd);
        set_error(err, SPMIMCH_E_TOC, 0, 0, "missing the starting sentinel/length: expected at least 8 bytes, found %llu", (ull)size);
        return NULL;
    }
    void* m = map_fd(fd, size, err);
    if (!m)
        return NULL;
    const uint8_t* d = m;
    uint32_t count = rd32(d + 4);
    uint64_t need = 8 + (uint64_t)count * SPMIMCH_TOC_ENTRY_SIZE + 4, end = need - 4;
    int32_t prev = 0;
    if (memcmp(d, "INDX", 4) != 0) {
        set_error(err, SPMIMCH_E_TOC, 0, 0, "missing the starting sentinel/length: expected 'INDX', found %02x %02x %02x %02x",
                  (unsigned)d[0], (unsigned)d[1], (unsigned)d[2], (unsigned)d[3]);
        goto fail;
    }
    if (size < need) {
        set_error(err, SPMIMCH_E_TOC, 0, size, "truncated: expected %llu bytes for %u entries, found %llu", (ull)need, count, (ull)size);
        goto fail;
    }
    if (size > need) {
        set_error(err, SPMIMCH_E_TOC, 0, need, "unexpected size: expected %llu bytes for %u entries, found %llu", (ull)need, count,
                  (ull)size);
        goto fail;
    }
    if (memcmp(d + end, "INDX", 4) != 0) {
        set_error(err, SPMIMCH_E_TOC, 0, end, "missing the ending sentinel: expected 'INDX', found %02x %02x %02x %02x",
                  (unsigned)d[end], (unsigned)d[end + 1], (unsigned)d[end + 2], (unsigned)d[end + 3]);
        goto fail;
    }
    for (uint32_t i = 0; i < count; i++) {
        int64_t off;
        int32_t num;
        toc_read(d + 8 + (uint64_t)i * SPMIMCH_TOC_ENTRY_SIZE, &off, &num);
        if (check_number(SPMIMCH_E_TOC, i, num, prev, err) != 0)
            goto fail;
        uint64_t limit = mch_size >= 8 ? mch_size - 8 : 0;
        if (off < 0 || mch_size < 8 || (uint64_t)off > limit) {
            set_error(err, SPMIMCH_E_TOC, (uint32_t)num, 8 + (uint64_t)i * SPMIMCH_TOC_ENTRY_SIZE,
                      "entry %u: offset past the end of the collection: expected at most %llu, found %lld", i, (ull)limit,
                      (long long)off);
            goto fail;
        }
        prev = num;
    }
    spmimch_toc* t = calloc(1, sizeof *t);
    if (!t) {
        set_error(err, SPMIMCH_E_NOMEM, 0, 0, "out of memory: expected %llu bytes, found none", (ull)sizeof *t);
        goto fail;
    }
    t->map = m;
    t->size = size;
    t->entries = d + 8;
    t->count = count;
    return t;
fail:
    munmap(m, (size_t)size);
    return NULL;
}

void spmimch_toc_close(spmimch_toc* t)
{
    if (!t)
        return;
    munmap(t->map, (size_t)t->size);
    free(t);
}

uint32_t spmimch_toc_count(const spmimch_toc* t) { return t ? t->count : 0; }

int spmimch_toc_entry(const spmimch_toc* t, uint32_t i, int64_t* offset, int32_t* number, char hash[SPMIMCH_HASH_SIZE])
{
    if (!t || i >= t->count)
        return -1;
    const uint8_t* e = t->entries + (uint64_t)i * SPMIMCH_TOC_ENTRY_SIZE;
    toc_read(e, offset, number);
    if (hash) {
        memcpy(hash, e + 12, SPMIMCH_HASH_SIZE);
        hash[SPMIMCH_HASH_SIZE - 1] = '\0';
    }
    return 0;
}

int64_t spmimch_toc_find(const spmimch_toc* t, int32_t number)
{
    uint32_t lo = 0, hi = t ? t->count : 0;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int32_t v;
        toc_read(t->entries + (uint64_t)mid * SPMIMCH_TOC_ENTRY_SIZE, NULL, &v);
        if (v == number)
            return mid;
        if (v < number)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

int spmimch_toc_write(const char* path, uint32_t n, const int64_t* offsets, const int32_t* numbers, const char* hashes,
                      spmimch_error* err)
{
    if (!path || (n && (!offsets || !numbers))) {
        null_arg(err);
        return -1;
    }
    for (uint32_t i = 0; i < n; i++)
        if (check_number(SPMIMCH_E_ARG, i, numbers[i], i ? numbers[i - 1] : 0, err) != 0)
            return -1;
    out o;
    if (out_begin(&o, path, err) != 0)
        return -1;
    uint8_t buf[256 * SPMIMCH_TOC_ENTRY_SIZE];
    memcpy(buf, "INDX", 4);
    memcpy(buf + 4, &n, 4);
    if (out_write(&o, buf, 8, err) != 0)
        return -1;
    for (uint32_t i = 0; i < n;) {
        memset(buf, 0, sizeof buf);
        size_t k = 0;
        for (; i < n && k < 256; i++, k++) {
            uint8_t* e = buf + k * SPMIMCH_TOC_ENTRY_SIZE;
            memcpy(e, &offsets[i], 8);
            memcpy(e + 8, &numbers[i], 4);
            if (hashes)
                memcpy(e + 12, hashes + (size_t)i * SPMIMCH_HASH_SIZE, SPMIMCH_HASH_SIZE);
        }
        if (out_write(&o, buf, k * SPMIMCH_TOC_ENTRY_SIZE, err) != 0)
            return -1;
    }
    if (out_write(&o, (const uint8_t*)"INDX", 4, err) != 0)
        return -1;
    return out_commit(&o, err);
}

const char* spmimch_version(void) { return "1.0"; }

/*
 * libspmimch: SuperPMI collection (.mch/.mc) and index (.mct) access. API and exact message texts:
 * spmimch.h. Formats: docs/mch-format.md sections 1-4 and 6.
 *
 * Every length read from the file is checked against the bytes that remain before it is used, in
 * 64-bit arithmetic; multi-byte fields are read with memcpy (no unaligned loads).
 *
 * A packet scan (SPMIMCH_SCAN_PACKETS) runs in windows of at most 64 MiB. In each window one thread
 * hops from record header to record header (framing, record table) and hands out runs of records
 * ("units") that a second thread, and the first once its hops are done, walk packet by packet. Each
 * walker keeps its own problems and stats; they are merged in record order at the end of the window,
 * so the results are exactly those of a single-threaded scan. With SPMIMCH_SCAN_RELEASE the walkers
 * give back the pages they are done with as they go. Small windows, or one CPU, run the same checks
 * in one fused loop. Either way the walk prefetches ahead of itself (see walk_record).
 */
#define _GNU_SOURCE /* madvise, mkstemp, fchmod, sched_getaffinity */
#include "spmimch.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef unsigned long long ull;

#define WINDOW_BYTES ((uint64_t)64 << 20) /* a scan window; SPMIMCH_SCAN_RELEASE madvises after each one */
#ifndef UNIT_BYTES
#define UNIT_BYTES ((uint64_t)256 << 10) /* a unit of the parallel packet walk: records of about this many bytes */
#endif
#ifndef PARALLEL_MIN_BYTES
#define PARALLEL_MIN_BYTES ((uint64_t)1 << 20) /* smaller windows are walked by the calling thread alone */
#endif
#define MAX_THREADS 2
#define RELEASE_CHUNK ((uint64_t)2 << 20)  /* walkers give back walked pages in steps of at least this */
#define PREFETCH_AHEAD 4096               /* the walk prefetches this far past the record it walks... */
#define PREFETCH_MAX ((uint64_t)64 << 10) /* ...but not more than this past the record's start */
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

/* Where problems go: a list (spmimch_scan) or only the first one (spmimch_check_record, or a problem
 * held back until the packet problems before it are known). */
typedef struct sink {
    spmimch_error* list;
    uint32_t max;         /* store the first max problems */
    uint32_t* n;          /* problems seen; counts past max */
    spmimch_error* first; /* non-NULL: store only the first problem here */
    uint32_t cap;         /* entries allocated in list (the caller's list: max) */
    int growable;         /* list is ours and grows up to max entries (a walker's); */
    int lost;             /* ...and could not grow, so a problem was not stored */
} sink;

/* Count one more problem and return where to store it, or NULL if it is not to be stored. */
static spmimch_error* slot(sink* s)
{
    if (s->first)
        return s->first;
    const uint32_t i = *s->n;
    if (i < UINT32_MAX)
        ++*s->n;
    if (i >= s->max)
        return NULL;
    if (i >= s->cap) {
        uint32_t cap = s->cap == 0 ? 16 : s->cap > s->max / 2 ? s->max : s->cap * 2;
        if (cap > s->max)
            cap = s->max;
        const uint64_t bytes = (uint64_t)cap * sizeof *s->list;
        void* p = s->growable && bytes <= SIZE_MAX ? realloc(s->list, (size_t)bytes) : NULL;
        if (!p) {
            s->lost = 1;
            return NULL;
        }
        s->list = p;
        s->cap = cap;
    }
    return &s->list[i];
}

__attribute__((format(printf, 5, 6)))
static void report(sink* s, int code, uint32_t rec, uint64_t off, const char* fmt, ...)
{
    spmimch_error* e = slot(s);
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        vfill(e, code, rec, off, fmt, ap);
        va_end(ap);
    }
}

/* Report `count` problems found elsewhere, of which the first `stored` are in `list`; the others were
 * not stored because they come after the first max problems (so they are only counted here either). */
static void append(sink* s, const spmimch_error* list, uint32_t stored, uint32_t count)
{
    for (uint32_t i = 0; i < stored; i++) {
        spmimch_error* e = slot(s);
        if (e)
            *e = list[i];
    }
    const uint32_t rest = count - stored;
    *s->n = *s->n > UINT32_MAX - rest ? UINT32_MAX : *s->n + rest;
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

/* Map structure (doc 3-4): [tag] u32 numItems, then if numItems > 0: u32 bufferLength, items, side
 * buffer of [u32 len][len bytes] chunks. Reports the first problem only; off = the packet's id byte.
 * Only what holds in every JIT-EE era is checked: no item size of one era's agnostic structs (doc 10). */
static int check_map(const uint8_t* m, uint32_t n, unsigned id, uint32_t num, uint64_t off, sink* s)
{
    const uint32_t hdr = n >= 4 && (memcmp(m, "LWM1", 4) == 0 || memcmp(m, "DWM1", 4) == 0) ? 4 : 0;
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
    if (ibytes == 0) /* every key and value type of every era has at least one byte */
        FAIL(SPMIMCH_E_MAP, off, "packet %u: items do not fill the map: expected at least %u bytes, found 0", id, items);
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

/* Frame the record at the cursor and append it to the record table. On a framing error (the scan
 * stops for good) or when the table cannot grow, reports the problem and returns -1. */
static int next_record(spmimch_file* f, sink* s)
{
    if (f->nrec == f->cap && grow(f, s) != 0)
        return -1;
    const uint64_t off = f->cursor;
    uint64_t rsize = 0;
    if (check_frame(f->data, f->size, off, f->nrec + 1, &rsize, s) != 0) {
        f->stopped = 1;
        return -1;
    }
    f->recs[f->nrec].offset = off;
    f->recs[f->nrec].size = rsize;
    f->nrec++;
    f->cursor = off + rsize;
    return 0;
}

/* Walk the packets of the record at `off` whose framing is good (len = its totalLen). Before that, ask
 * for the cache lines up to PREFETCH_AHEAD bytes past it (but not past `limit`), from *pf on: the walk
 * is a chain of dependent loads, so otherwise every new cache line costs a full memory latency. */
static void walk_record(const uint8_t* d, uint64_t off, uint32_t len, uint32_t num, uint64_t limit, uint64_t* pf,
                        spmimch_stats* st, sink* s)
{
    uint64_t want = off + len + 8 + PREFETCH_AHEAD;
    if (want > off + PREFETCH_MAX)
        want = off + PREFETCH_MAX;
    if (want > limit)
        want = limit;
    if (*pf < off)
        *pf = off;
    for (; *pf < want; *pf += 64)
        __builtin_prefetch(d + *pf);
    walk_packets(d, off, len, num, st, s);
    if (st)
        st->records++;
}

/* One window in the calling thread: frame each record and (SPMIMCH_SCAN_PACKETS) walk its packets,
 * until the cursor reaches stop_at. */
static int scan_sequential(spmimch_file* f, unsigned flags, uint64_t stop_at, spmimch_stats* stats, sink* s)
{
    uint64_t pf = f->cursor;
    while (f->cursor < stop_at) {
        const uint64_t off = f->cursor;
        const uint32_t num = f->nrec + 1;
        if (next_record(f, s) != 0)
            return -1;
        if (flags & SPMIMCH_SCAN_PACKETS)
            walk_record(f->data, off, (uint32_t)(f->cursor - off - 8), num, f->size, &pf, stats, s);
    }
    return 0;
}

/* ---- parallel packet walk of one window */

/* Consecutive records with good framing, walked by one thread. */
typedef struct unit {
    uint64_t start, end;  /* offset of the first record, end of the last */
    uint32_t first_num;   /* method context number of the first record */
    /* set by the walker: */
    uint32_t walker;      /* index of the walker that walked it */
    uint32_t count;       /* problems found in it; the first `stored` of them are */
    uint32_t first;       /*   in the walker's list at [first ...] */
    uint32_t stored;
    int walked;           /* guarded by pwalk.mu */
} unit;

struct pwalk;

typedef struct walker {
    struct pwalk* pw;
    uint32_t index;
    uint32_t n;           /* problems this walker found */
    sink s;               /* its problems; keeps the first max (those the caller can still store) */
    spmimch_stats stats;  /* its stats (when the caller wants stats) */
} walker;

typedef struct pwalk {
    const uint8_t* data;
    uint8_t* map;         /* for madvise */
    uint64_t page;
    int release;          /* SPMIMCH_SCAN_RELEASE: give back walked pages as the walk goes */
    int want_stats;
    unit* units;
    uint32_t cap;         /* units allocated */
    pthread_mutex_t mu;   /* guards the fields below and unit.walked */
    pthread_cond_t cv;    /* signalled when a unit is published or the hops are done */
    uint32_t published;   /* units[0, published) are ready */
    uint32_t claimed;     /* units[0, claimed) have been taken by a walker */
    uint32_t finished;    /* units[0, finished) have been walked */
    int done;             /* no more units will be published */
    uint64_t released;    /* pages before this offset have been given back */
    walker walkers[MAX_THREADS];
} pwalk;

/* Walk the packets of every record of u (their framing was checked by the hops). */
static void walk_unit(const uint8_t* d, const unit* u, spmimch_stats* st, sink* s)
{
    uint64_t pf = u->start;
    uint32_t num = u->first_num;
    for (uint64_t off = u->start; off < u->end; num++) {
        const uint32_t len = rd32(d + off + 2);
        walk_record(d, off, len, num, u->end, &pf, st, s);
        off += (uint64_t)len + 8;
    }
}

/* Record that u has been walked; with SPMIMCH_SCAN_RELEASE, give back the pages of the units walked so far
 * once there are RELEASE_CHUNK bytes of them. */
static void finish_unit(pwalk* pw, unit* u)
{
    uint64_t from = 0, upto = 0;
    pthread_mutex_lock(&pw->mu);
    u->walked = 1;
    while (pw->finished < pw->published && pw->units[pw->finished].walked)
        pw->finished++;
    if (pw->release && pw->finished) {
        const uint64_t end = pw->units[pw->finished - 1].end;
        if (end - end % pw->page >= pw->released + RELEASE_CHUNK) {
            from = pw->released;
            upto = pw->released = end - end % pw->page;
        }
    }
    pthread_mutex_unlock(&pw->mu);
    if (upto)
        madvise(pw->map + from, (size_t)(upto - from), MADV_DONTNEED);
}

/* The next unit to walk, waiting for the hops if needed; NULL when there are no more. */
static unit* claim_unit(pwalk* pw)
{
    pthread_mutex_lock(&pw->mu);
    while (pw->claimed == pw->published && !pw->done)
        pthread_cond_wait(&pw->cv, &pw->mu);
    unit* u = pw->claimed < pw->published ? &pw->units[pw->claimed++] : NULL;
    pthread_mutex_unlock(&pw->mu);
    return u;
}

/* Walker thread body (also run by the hopping thread once its hops are done). */
static void* walker_main(void* arg)
{
    walker* w = arg;
    pwalk* pw = w->pw;
    const uint32_t keep = w->s.max;
    for (unit* u; (u = claim_unit(pw)) != NULL;) {
        const uint32_t before = w->n;
        walk_unit(pw->data, u, pw->want_stats ? &w->stats : NULL, &w->s);
        u->walker = w->index;
        u->count = w->n - before;
        u->first = before < keep ? before : keep;
        u->stored = (w->n < keep ? w->n : keep) - u->first;
        finish_unit(pw, u);
    }
    return NULL;
}

/* Make the records [start, end) the next unit (if not empty); `done`: it is the last one. */
static void publish(pwalk* pw, uint64_t start, uint64_t end, uint32_t first_num, int done)
{
    pthread_mutex_lock(&pw->mu);
    if (end > start) {
        unit* u = &pw->units[pw->published++];
        memset(u, 0, sizeof *u);
        u->start = start;
        u->end = end;
        u->first_num = first_num;
    }
    pw->done = done;
    pthread_cond_broadcast(&pw->cv);
    pthread_mutex_unlock(&pw->mu);
}

/* Start the walker threads 1..threads-1 (with all signals blocked, so that signals go to the caller's
 * thread). Returns how many threads run, counting the caller's. */
static int start_walkers(pwalk* pw, pthread_t* tids, int threads)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int started = 1;
    while (started < threads && pthread_create(&tids[started], NULL, walker_main, &pw->walkers[started]) == 0)
        started++;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return started;
}

/* Frame records from the cursor up to stop_at, publishing them in units of about UNIT_BYTES (one
 * unit slot is kept for the last). On a framing error or when the table cannot grow, the problem is
 * held in *stop and -1 returned. */
static int hop(spmimch_file* f, pwalk* pw, uint64_t stop_at, spmimch_error* stop)
{
    sink hold = {.first = stop};
    uint64_t ustart = f->cursor;
    uint32_t unum = f->nrec + 1;
    int rc = 0;
    while (f->cursor < stop_at) {
        if (next_record(f, &hold) != 0) {
            rc = -1;
            break;
        }
        if (f->cursor - ustart >= UNIT_BYTES && pw->published + 1 < pw->cap) {
            publish(pw, ustart, f->cursor, unum, 0);
            ustart = f->cursor;
            unum = f->nrec + 1;
        }
    }
    publish(pw, ustart, f->cursor, unum, 1);
    return rc;
}

/* Add what the walkers found to the caller's problems and stats, in record order. */
static void merge(pwalk* pw, int walkers, spmimch_stats* stats, sink* out)
{
    for (uint32_t k = 0; k < pw->published; k++) {
        const unit* u = &pw->units[k];
        if (u->count)
            append(out, pw->walkers[u->walker].s.list + u->first, u->stored, u->count);
    }
    for (int i = 0; stats && i < walkers; i++) {
        const spmimch_stats* ws = &pw->walkers[i].stats;
        for (int id = 0; id < 256; id++) {
            stats->packet_count[id] += ws->packet_count[id];
            stats->packet_bytes[id] += ws->packet_bytes[id];
        }
        stats->records += ws->records;
    }
}

/* One window of a packet scan with `threads` threads: the calling thread frames the records up to
 * stop_at and hands them out in units; walker threads, and the calling thread once its hops are done,
 * walk them. Then the walkers' problems and stats are merged into the caller's in record order,
 * followed by the problem that stopped the hops, if any. Returns 0 or -1 as scan_sequential does, or
 * 1 when the walk could not be set up (nothing was done). */
static int scan_parallel(spmimch_file* f, unsigned flags, uint64_t stop_at, spmimch_stats* stats, sink* out, int threads)
{
    pwalk pw;
    memset(&pw, 0, sizeof pw);
    pw.data = f->data;
    pw.map = f->map;
    pw.page = f->page;
    pw.release = (flags & SPMIMCH_SCAN_RELEASE) != 0;
    pw.released = f->released;
    pw.want_stats = stats != NULL;
    pw.cap = (uint32_t)((stop_at - f->cursor) / UNIT_BYTES + 2);
    pw.units = malloc(pw.cap * sizeof *pw.units);
    if (!pw.units)
        return 1;
    if (pthread_mutex_init(&pw.mu, NULL) != 0) {
        free(pw.units);
        return 1;
    }
    if (pthread_cond_init(&pw.cv, NULL) != 0) {
        pthread_mutex_destroy(&pw.mu);
        free(pw.units);
        return 1;
    }
    const uint32_t keep = *out->n < out->max ? out->max - *out->n : 0;
    for (int i = 0; i < threads; i++) {
        walker* w = &pw.walkers[i];
        w->pw = &pw;
        w->index = (uint32_t)i;
        w->s.max = keep;
        w->s.n = &w->n;
        w->s.growable = 1;
    }
    pthread_t tids[MAX_THREADS];
    const int started = start_walkers(&pw, tids, threads);
    int rc = 1;
    if (started > 1) {
        spmimch_error stop;
        rc = hop(f, &pw, stop_at, &stop);
        walker_main(&pw.walkers[0]);
        for (int i = 1; i < started; i++)
            pthread_join(tids[i], NULL);
        f->released = pw.released;
        int lost = 0;
        for (int i = 0; i < started; i++)
            lost |= pw.walkers[i].s.lost;
        if (!lost)
            merge(&pw, started, stats, out);
        else /* a walker could not keep its problems: walk again in this thread */
            for (uint32_t k = 0; k < pw.published; k++)
                walk_unit(f->data, &pw.units[k], stats, out);
        if (rc != 0)
            append(out, &stop, 1, 1);
    }
    for (int i = 0; i < threads; i++)
        free(pw.walkers[i].s.list);
    pthread_cond_destroy(&pw.cv);
    pthread_mutex_destroy(&pw.mu);
    free(pw.units);
    return rc;
}

/* Threads for a packet walk: 2 when the process may run on 2 CPUs or more, else 1. */
static int walk_threads(void)
{
    cpu_set_t set;
    long n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : sysconf(_SC_NPROCESSORS_ONLN);
    return n >= MAX_THREADS ? MAX_THREADS : 1;
}

int spmimch_scan(spmimch_file* f, unsigned flags, uint64_t budget_bytes, spmimch_stats* stats,
                 spmimch_error* problems, uint32_t max_problems, uint32_t* n_problems)
{
    if (!f || !n_problems || (!problems && max_problems))
        return -1;
    sink s = {.list = problems, .max = max_problems, .n = n_problems, .cap = max_problems};
    if (flags & ~ALL_FLAGS) {
        report(&s, SPMIMCH_E_ARG, 0, 0, "bad flags: expected a combination of 1 and 2, found %u", flags);
        return -1;
    }
    if (f->stopped)
        return -1;
    const uint64_t start = f->cursor;
    const int threads = (flags & SPMIMCH_SCAN_PACKETS) ? walk_threads() : 1;
    int rc = 0;
    while (rc == 0 && f->cursor < f->size && !(budget_bytes && f->cursor - start >= budget_bytes)) {
        uint64_t limit = WINDOW_BYTES;
        if (budget_bytes && budget_bytes - (f->cursor - start) < limit)
            limit = budget_bytes - (f->cursor - start);
        const uint64_t stop_at = f->size - f->cursor > limit ? f->cursor + limit : f->size;
        rc = 1;
        if (threads > 1 && stop_at - f->cursor >= PARALLEL_MIN_BYTES)
            rc = scan_parallel(f, flags, stop_at, stats, &s, threads);
        if (rc == 1)
            rc = scan_sequential(f, flags, stop_at, stats, &s);
        if (flags & SPMIMCH_SCAN_RELEASE)
            release(f);
    }
    if (flags & SPMIMCH_SCAN_RELEASE)
        release(f); /* also when there was nothing left to scan */
    return rc != 0 ? -1 : f->cursor < f->size ? 1 : 0;
}

int spmimch_check_record(spmimch_file* f, uint64_t offset, uint32_t number, unsigned flags, uint64_t* size,
                         spmimch_error* err)
{
    spmimch_error scratch;
    sink s = {.first = err ? err : &scratch};
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

/* This host's name as spmi_dbg/tempfiles.py writes it in temporary names: every character but [A-Za-z0-9.]
 * becomes '_' (dashes separate the name's fields). */
static void host_tag(char* buf, size_t size)
{
    if (gethostname(buf, size) != 0 || buf[0] == '\0')
        snprintf(buf, size, "host");
    buf[size - 1] = '\0';
    for (char* c = buf; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '.')
            *c = '_';
}

/* Create "<dir>/.<basename>.spmi-tmp-<host>-<pid>-XXXXXX" next to path: named after this run, so that a later
 * run can tell a dead run's leftover (a SIGKILL mid-write) and remove it (spmi_dbg/tempfiles.py). */
static int out_begin(out* o, const char* path, spmimch_error* err)
{
    const char* slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0, len = strlen(path);
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) { /* never rename over a device, a FIFO, a directory */
        o->path = path;
        o->fd = -1;
        o->tmp = NULL;
        set_error(err, SPMIMCH_E_IO, 0, 0, "cannot write %s: not a regular file", path);
        return -1;
    }
    char host[256];
    host_tag(host, sizeof host);
    size_t cap = len + strlen(host) + 64;
    o->path = path;
    o->fd = -1;
    o->tmp = malloc(cap);
    if (!o->tmp) {
        out_fail(o, ENOMEM, err);
        return -1;
    }
    snprintf(o->tmp, cap, "%.*s.%s.spmi-tmp-%s-%ld-XXXXXX", (int)dirlen, path, path + dirlen, host, (long)getpid());
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
    int64_t prev_off = 0;
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
        if (off < 0) {
            set_error(err, SPMIMCH_E_TOC, (uint32_t)num, 8 + (uint64_t)i * SPMIMCH_TOC_ENTRY_SIZE,
                      "entry %u: negative offset: expected 0 to %llu, found %lld", i, (ull)limit, (long long)off);
            goto fail;
        }
        if (i > 0 && off <= prev_off) {
            set_error(err, SPMIMCH_E_TOC, (uint32_t)num, 8 + (uint64_t)i * SPMIMCH_TOC_ENTRY_SIZE,
                      "entry %u: offsets out of order: expected more than %lld (entry %u's), found %lld", i,
                      (long long)prev_off, i - 1, (long long)off);
            goto fail;
        }
        if (mch_size < 8 || (uint64_t)off > limit) {
            set_error(err, SPMIMCH_E_TOC, (uint32_t)num, 8 + (uint64_t)i * SPMIMCH_TOC_ENTRY_SIZE,
                      "entry %u: offset past the end of the collection: expected at most %llu, found %lld", i, (ull)limit,
                      (long long)off);
            goto fail;
        }
        prev = num;
        prev_off = off;
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

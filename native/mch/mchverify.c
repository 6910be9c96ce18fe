/*
 * spmi-mch-verify: the fast path of `spmi-dbg mch verify` (spmi_dbg/launcher.py execs it, so that a verify does
 * not pay for starting the Python package; timed against `mcs -integ`, docs/mch-format.md 6 and 9).
 *
 *   spmi-mch-verify --max-problems N -- FILE
 *
 * It does what spmi_dbg/mch/commands.py's cmd_verify does, with libspmimch, and prints the same bytes to stdout
 * and stderr with the same exit status (tests/test_mch_verify_fast.py runs both on clean, corrupted and special
 * files and compares them):
 *  - FILE is read as pathlib.PurePosixPath reads it (repeated and trailing slashes and "." components dropped,
 *    a leading "//" kept); a FILE ending in .mct (any case) is the index of the collection collection_for_toc()
 *    names, else the index is the one find_toc() finds (FILE.mct, then FILE with its suffix replaced by .mct);
 *  - the packet scan runs in steps of 16 MiB keeping at most min(N - kept, 1024) problems per step (as
 *    Collection.scan and its native backend do), then the index is opened and, when the framing is whole,
 *    compared with the record table (commands._toc_problems);
 *  - paths in problem lines and errors are escaped as spmi_dbg/errors.py printable() escapes ASCII text
 *    (printable characters kept, backslash doubled, \t \n \r, other control characters \xNN, cut at 4096
 *    characters with "..."); the launcher gives this binary only ASCII paths (non-ASCII goes to Python, whose
 *    printable() follows the Unicode database);
 *  - the last line names FILE as given; the index's own lines name it unescaped, as the Python path does.
 * Exit: 0 clean, 1 corrupt or unreadable, 2 a usage error of this binary itself (the launcher never makes one),
 * 130 / 143 interrupted / terminated.
 */
#define _GNU_SOURCE /* strerror through string.h; sigaction */
#include "spmimch.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

typedef unsigned long long ull;

#define PROG "spmi-dbg mch verify"           /* cli.py prints errors under the leaf parser's prog */
#define SCAN_BUDGET ((uint64_t)16 << 20)      /* collection.py SCAN_BUDGET */
#define STEP_PROBLEMS 1024u                   /* collection.py _NativeBackend.scan: problems kept per step */
#define PATH_LIMIT 4096u                      /* errors.py format_location: printable(path, limit=1 << 12) */
#define TOC_LINES 20                          /* commands._toc_problems: lines about a stale index */

/* ---------------------------------------------------------------- strings ------------------- */

typedef struct str {
    char* p;
    size_t n, cap;
} str;

static void die_nomem(void)
{
    static const char msg[] = PROG ": error: out of memory\n";
    if (write(2, msg, sizeof msg - 1) < 0) {
        /* nothing left to report it with */
    }
    _exit(1);
}

static void put(str* s, const char* p, size_t n)
{
    if (s->n + n + 1 > s->cap) {
        size_t cap = s->cap ? s->cap : 64;
        while (cap < s->n + n + 1)
            cap *= 2;
        char* q = realloc(s->p, cap);
        if (!q)
            die_nomem();
        s->p = q;
        s->cap = cap;
    }
    memcpy(s->p + s->n, p, n);
    s->n += n;
    s->p[s->n] = '\0';
}

static void puts_(str* s, const char* p) { put(s, p, strlen(p)); }

__attribute__((format(printf, 2, 3))) static void putf(str* s, const char* fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    put(s, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

static char* concat(const char* a, const char* b)
{
    str s = {0};
    puts_(&s, a);
    puts_(&s, b);
    return s.p;
}

/* errors.py printable(text, limit=4096) for ASCII text. */
static void put_printable(str* out, const char* text)
{
    str e = {0};
    put(&e, "", 0);
    for (const unsigned char* c = (const unsigned char*)text; *c; c++) {
        if (*c == '\\')
            puts_(&e, "\\\\");
        else if (*c == '\t')
            puts_(&e, "\\t");
        else if (*c == '\n')
            puts_(&e, "\\n");
        else if (*c == '\r')
            puts_(&e, "\\r");
        else if (*c < 0x20 || *c >= 0x7f)
            putf(&e, "\\x%02x", *c);
        else
            put(&e, (const char*)c, 1);
    }
    if (e.n <= PATH_LIMIT) {
        put(out, e.p, e.n);
    } else {
        put(out, e.p, PATH_LIMIT);
        puts_(out, "...");
    }
    free(e.p);
}

/* errors.py format_location(path, record, offset): "path: record R at offset O: " (offset < 0: none). */
static void put_location(str* out, const char* path, uint32_t record, long long offset)
{
    put_printable(out, path);
    puts_(out, ": ");
    if (record)
        putf(out, "record %u", record);
    if (record && offset >= 0)
        puts_(out, " at ");
    if (offset >= 0)
        putf(out, "offset %lld", offset);
    if (record || offset >= 0)
        puts_(out, ": ");
}

/* ---------------------------------------------------------------- paths (pathlib's rules) ------ */

/* str(PurePosixPath(text)). */
static char* normalize(const char* text)
{
    str s = {0};
    put(&s, "", 0);
    const char* p = text;
    if (*p == '/') {
        size_t k = strspn(p, "/");
        puts_(&s, k == 2 ? "//" : "/");
        p += k;
    }
    size_t root = s.n;
    while (*p) {
        size_t len = strcspn(p, "/");
        if (len && !(len == 1 && p[0] == '.')) {
            if (s.n > root)
                puts_(&s, "/");
            put(&s, p, len);
        }
        p += len;
        p += strspn(p, "/");
    }
    if (s.n == 0)
        puts_(&s, ".");
    return s.p;
}

/* PurePath.name of a normalized path: its last component, "" for ".", "/" and "//". */
static const char* name_of(const char* path)
{
    if (strcmp(path, ".") == 0)
        return path + 1;
    const char* slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* PurePath.suffix: from the last dot of the name, if that dot is neither its first nor its last character. */
static const char* suffix_of(const char* path)
{
    const char* name = name_of(path);
    const char* dot = strrchr(name, '.');
    size_t len = strlen(name);
    if (dot && dot > name && (size_t)(dot - name) < len - 1)
        return dot;
    return name + len;
}

static int suffix_is(const char* path, const char* want)
{
    return strcasecmp(suffix_of(path), want) == 0;
}

/* path.with_suffix(suffix). */
static char* with_suffix(const char* path, const char* suffix)
{
    size_t keep = (size_t)(suffix_of(path) - path);
    str s = {0};
    put(&s, path, keep);
    puts_(&s, suffix);
    return s.p;
}

/* Path.stat for Path.is_file / Path.exists: 1 = it is there (*st filled), 0 = not there (the errors pathlib
 * ignores: ENOENT, ENOTDIR, EBADF, ELOOP). Any other error, where pathlib raises, ends the run with one line. */
static int stat_path(const char* path, struct stat* st)
{
    if (stat(path, st) == 0)
        return 1;
    if (errno == ENOENT || errno == ENOTDIR || errno == EBADF || errno == ELOOP)
        return 0;
    str line = {0};
    puts_(&line, PROG ": error: ");
    put_location(&line, path, 0, -1);
    putf(&line, "cannot stat: %s\n", strerror(errno));
    fputs(line.p, stderr);
    exit(1);
}

static int exists(const char* path)
{
    struct stat st;
    return stat_path(path, &st);
}

/* A candidate index that is a regular file; any error (too long, not searchable) is no index, as mct.py's
 * find_toc has it: the collection's own open then says what is wrong. */
static int is_index_file(const char* path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* mct.py find_toc: FILE.mct, then FILE with its suffix replaced by .mct; NULL when neither is a file. */
static char* find_toc(const char* mch)
{
    char* candidates[2] = {concat(mch, ".mct"), with_suffix(mch, ".mct")};
    char* found = NULL;
    for (int i = 0; i < 2 && !found; i++)
        if (strcmp(candidates[i], mch) != 0 && is_index_file(candidates[i]))
            found = candidates[i];
    for (int i = 0; i < 2; i++)
        if (candidates[i] != found)
            free(candidates[i]);
    return found;
}

/* mct.py collection_for_toc: file.mch.mct -> file.mch; file.mct -> file.mch or file.mc, whichever exists. */
static char* collection_for_toc(const char* toc)
{
    char* stripped = with_suffix(toc, "");
    if (suffix_is(stripped, ".mch") || suffix_is(stripped, ".mc"))
        return stripped;
    free(stripped);
    static const char* const suffixes[] = {".mch", ".mc"};
    for (int i = 0; i < 2; i++) {
        char* candidate = with_suffix(toc, suffixes[i]);
        if (exists(candidate))
            return candidate;
        free(candidate);
    }
    return with_suffix(toc, ".mch");
}

/* ---------------------------------------------------------------- problem lines ---------------- */

typedef struct lines {
    char** v;
    size_t n, cap;
} lines;

/* What main allocates and keeps to the end (its paths, its problem lines), freed at exit, so that a
 * leak checker (LeakSanitizer runs at exit, after the handlers registered later than its own) sees
 * none of it as lost. */
static char* g_paths[3];
static lines* g_lines;

static void release(void)
{
    for (size_t i = 0; i < sizeof g_paths / sizeof *g_paths; i++) {
        for (size_t j = i + 1; j < sizeof g_paths / sizeof *g_paths; j++)
            if (g_paths[j] == g_paths[i])
                g_paths[j] = NULL;
        free(g_paths[i]);
        g_paths[i] = NULL;
    }
    if (g_lines) {
        for (size_t i = 0; i < g_lines->n; i++)
            free(g_lines->v[i]);
        free(g_lines->v);
        g_lines->v = NULL;
        g_lines->n = g_lines->cap = 0;
    }
}

static void add_line(lines* l, char* line)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        char** v = realloc(l->v, cap * sizeof *v);
        if (!v)
            die_nomem();
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = line;
}

/* pyscan.Problem.line: no offset for the codes that are not about a place in the file. */
static char* problem_line(const char* path, const spmimch_error* e)
{
    int placeless = e->code == SPMIMCH_E_IO || e->code == SPMIMCH_E_NOTFILE || e->code == SPMIMCH_E_EMPTY ||
                    e->code == SPMIMCH_E_NOMEM || e->code == SPMIMCH_E_ARG;
    str s = {0};
    put_location(&s, path, e->record, placeless ? -1 : (long long)e->offset);
    puts_(&s, e->message);
    return s.p;
}

/* commands._toc_problems: index entries that do not point where the records are (a stale .mct). */
static void toc_problems(const spmimch_file* f, const spmimch_toc* t, const char* toc_path, lines* out)
{
    const uint32_t n = spmimch_record_count(f), count = spmimch_toc_count(t);
    const spmimch_record* recs = spmimch_records(f);
    int64_t off;
    int32_t num = 0;
    if (count && spmimch_toc_entry(t, count - 1, NULL, &num, NULL) != 0)
        num = 0;
    int same = count == n && (uint32_t)num == n;
    for (uint32_t i = 0; same && i < count; i++)
        same = spmimch_toc_entry(t, i, &off, NULL, NULL) == 0 && (uint64_t)off == recs[i].offset;
    if (same)
        return;
    size_t before = out->n;
    for (uint32_t i = 0; i < count; i++) {
        if (spmimch_toc_entry(t, i, &off, &num, NULL) != 0)
            break;
        str s = {0};
        if ((uint32_t)num > n) {
            putf(&s, "%s: entry for method context %d: the collection has only %u", toc_path, num, n);
        } else if ((uint64_t)off != recs[num - 1].offset) {
            putf(&s, "%s: entry for method context %d: expected offset %llu, found %lld (stale index: rebuild it "
                     "with `spmi-dbg mch index`)", toc_path, num, (ull)recs[num - 1].offset, (long long)off);
        }
        if (s.p)
            add_line(out, s.p);
        if (out->n - before >= TOC_LINES)
            break;
    }
    if (out->n == before && count != n) {
        str s = {0};
        putf(&s, "%s: expected %u entries, found %u (stale index)", toc_path, n, count);
        add_line(out, s.p);
    }
}

/* ---------------------------------------------------------------- output and signals ----------- */

/* stdout as Python 3.11 writes it, so that the bytes reach the fd at the same points (what `2>&1` interleaves with
 * stderr's lines) and a reader that went away has the same effect. Python stacks a TextIOWrapper (pending text
 * passed on at 8192 bytes) on a BufferedWriter (st_blksize bytes); on a terminal the text is flushed at every
 * newline; with PYTHONUNBUFFERED every write goes to the fd at once. stderr is line-buffered: its lines are
 * written at once (fputs to an unbuffered stream below). A failed write is Python's BrokenPipeError out of
 * print(): cli.main takes it as the reader having gone away (stderr closed, status 0) and nothing more is printed;
 * what is still buffered then fails again at exit, where Python's status becomes 120. */
#define TEXT_CHUNK 8192u

typedef struct pyout {
    int unbuffered, line_buffered;
    size_t bufsize;
    str pending; /* TextIOWrapper's pending bytes */
    str buffer;  /* BufferedWriter's buffer */
    int broken;  /* a write failed: print() raised */
} pyout;

static pyout g_out;

static void pyout_init(pyout* o)
{
    const char* unbuffered = getenv("PYTHONUNBUFFERED");
    struct stat st;
    o->unbuffered = unbuffered && *unbuffered;
    o->line_buffered = isatty(1);
    o->bufsize = fstat(1, &st) == 0 && st.st_blksize > 1 ? (size_t)st.st_blksize : 8192;
    put(&o->pending, "", 0);
    put(&o->buffer, "", 0);
}

/* FileIO.write of all of p (a blocking fd). 0, or -1 with errno set. */
static int raw_write(const char* p, size_t n)
{
    while (n) {
        ssize_t w = write(1, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static void write_failed(void)
{
    if (errno != EPIPE) { /* Python: an OSError out of print(), which cli.main does not take (a traceback) */
        fprintf(stderr, PROG ": error: cannot write to stdout: %s\n", strerror(errno));
        exit(1);
    }
}

/* BufferedWriter.flush. */
static int buffer_flush(pyout* o)
{
    if (o->buffer.n && raw_write(o->buffer.p, o->buffer.n) != 0)
        return -1; /* the buffer keeps its bytes */
    o->buffer.n = 0;
    return 0;
}

/* BufferedWriter.write. */
static int buffer_write(pyout* o, const char* p, size_t n)
{
    if (n <= o->bufsize - o->buffer.n) {
        put(&o->buffer, p, n);
        return 0;
    }
    if (buffer_flush(o) != 0)
        return -1;
    if (n > o->bufsize) {
        if (raw_write(p, n) != 0)
            return -1;
        return 0;
    }
    put(&o->buffer, p, n);
    return 0;
}

/* TextIOWrapper's pending bytes passed on (they are dropped from pending first, whatever happens). */
static int pending_flush(pyout* o)
{
    if (!o->pending.n)
        return 0;
    str data = o->pending;
    o->pending = (str){0};
    put(&o->pending, "", 0);
    int rc = buffer_write(o, data.p, data.n);
    free(data.p);
    return rc;
}

/* TextIOWrapper.write. */
static int text_write(pyout* o, const char* p, size_t n)
{
    if (o->unbuffered)
        return raw_write(p, n);
    if (o->pending.n + n > TEXT_CHUNK && pending_flush(o) != 0)
        return -1;
    put(&o->pending, p, n);
    int needflush = o->line_buffered && memchr(p, '\n', n) != NULL;
    if (o->pending.n >= TEXT_CHUNK || needflush) {
        if (pending_flush(o) != 0)
            return -1;
    }
    if (needflush && buffer_flush(o) != 0)
        return -1;
    return 0;
}

/* print(line): the text, then the newline. */
static void out_line(const char* line)
{
    if (g_out.broken)
        return;
    if (text_write(&g_out, line, strlen(line)) != 0 || text_write(&g_out, "\n", 1) != 0) {
        write_failed();
        g_out.broken = 1;
    }
}

/* Python's exit: its status, after stdout is flushed; 0 once print() has raised (cli.main's BrokenPipeError), but
 * 120 when bytes are still buffered then and cannot be written either. */
static int out_exit(int status)
{
    pyout* o = &g_out;
    int failed = pending_flush(o) != 0 || buffer_flush(o) != 0;
    if (failed)
        write_failed();
    if (o->broken)
        return failed ? 120 : 0;
    if (failed) {
        fputs("Exception ignored in: <_io.TextIOWrapper name='<stdout>' mode='w' encoding='utf-8'>\n"
              "BrokenPipeError: [Errno 32] Broken pipe\n", stderr);
        return 120;
    }
    return status;
}

static void on_signal(int sig)
{
    static const char interrupted[] = PROG ": interrupted\n";
    static const char terminated[] = PROG ": terminated\n";
    ssize_t w = sig == SIGINT ? write(2, interrupted, sizeof interrupted - 1)
                              : write(2, terminated, sizeof terminated - 1);
    (void)w;
    _exit(sig == SIGINT ? 130 : 143); /* spmi_dbg/exits.py INTERRUPTED, TERMINATED */
}

static int usage(void)
{
    fputs("usage: spmi-mch-verify --max-problems N -- FILE (run by spmi-dbg mch verify)\n", stderr);
    return 2;
}

/* ---------------------------------------------------------------- main ------------------------- */

int main(int argc, char** argv)
{
    if (argc != 5 || strcmp(argv[1], "--max-problems") != 0 || strcmp(argv[3], "--") != 0)
        return usage();
    char* end = NULL;
    errno = 0;
    const ull max_problems = strtoull(argv[2], &end, 10);
    if (errno || end == argv[2] || *end || argv[2][0] == '-' || max_problems > (ull)INT64_MAX)
        return usage();
    const char* given = argv[4];

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    atexit(release);
    char* path = normalize(given);
    g_paths[0] = path;
    if (*name_of(path) == '\0') /* pathlib cannot name its index: the launcher leaves this to Python */
        return usage();
    char *mch, *toc_path;
    if (suffix_is(path, ".mct")) {
        mch = collection_for_toc(path);
        toc_path = path;
    } else {
        mch = path;
        toc_path = find_toc(mch);
    }
    g_paths[1] = mch;
    g_paths[2] = toc_path;

    spmimch_error err;
    spmimch_file* f = spmimch_open(mch, &err);
    if (!f) { /* InputError(path, message): no record, no offset */
        str s = {0};
        puts_(&s, PROG ": error: ");
        put_location(&s, mch, 0, -1);
        puts_(&s, err.message);
        puts_(&s, "\n");
        fputs(s.p, stderr);
        free(s.p);
        return 1;
    }

    static lines out; /* static: release() frees its lines after main has returned */
    g_lines = &out;
    spmimch_error* step = malloc(STEP_PROBLEMS * sizeof *step);
    if (!step)
        die_nomem();
    int rc;
    do {
        const ull kept = out.n;
        const uint32_t cap = kept >= max_problems ? 0
                             : max_problems - kept > STEP_PROBLEMS ? STEP_PROBLEMS
                                                                   : (uint32_t)(max_problems - kept);
        uint32_t found = 0;
        rc = spmimch_scan(f, SPMIMCH_SCAN_PACKETS | SPMIMCH_SCAN_RELEASE, SCAN_BUDGET, NULL, step, cap, &found);
        for (uint32_t i = 0; i < found && i < cap; i++)
            add_line(&out, problem_line(mch, &step[i]));
    } while (rc == 1);
    free(step);

    const uint32_t count = spmimch_record_count(f);
    const uint64_t size = spmimch_file_size(f);
    if (toc_path) {
        spmimch_toc* t = spmimch_toc_open(toc_path, size, &err);
        if (!t) { /* mct._error: no offset for E_IO and E_NOTFILE */
            int placeless = err.code == SPMIMCH_E_IO || err.code == SPMIMCH_E_NOTFILE;
            str s = {0};
            put_location(&s, toc_path, err.record, placeless ? -1 : (long long)err.offset);
            puts_(&s, err.message);
            add_line(&out, s.p);
        } else {
            if (rc == 0)
                toc_problems(f, t, toc_path, &out);
            spmimch_toc_close(t);
        }
    }
    spmimch_close(f);

    pyout_init(&g_out);
    for (size_t i = 0; i < out.n && i < max_problems; i++)
        out_line(out.v[i]);
    if (out.n > max_problems)
        out_line("... and more problems (raise --max-problems to see them)");
    if (out.n) {
        if (!g_out.broken)
            fprintf(stderr, "%s: CORRUPT: %zu problem(s)\n", given, out.n);
        return out_exit(1);
    }
    str s = {0};
    puts_(&s, given);
    puts_(&s, ": OK: ");
    if (rc == 0)
        putf(&s, "%u", count);
    else
        puts_(&s, "None"); /* cmd_verify's count when the scan stopped and no problem was kept */
    putf(&s, " method contexts, %llu bytes", (ull)size);
    if (toc_path) {
        puts_(&s, ", index ");
        puts_(&s, name_of(toc_path));
        puts_(&s, " consistent");
    }
    out_line(s.p);
    free(s.p);
    return out_exit(0);
}

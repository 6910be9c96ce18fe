/* A failing disk, for the fault suite (issue 37): preloaded into a run (LD_PRELOAD), it makes
 * write() and pwrite() on files under one directory fail with a chosen errno -- EIO, EDQUOT --
 * from the Nth such write on, for a number of writes or for good.
 *
 *   SPMI_TEST_FAULT_DIR      the directory (its real path) whose files' writes are counted
 *   SPMI_TEST_FAULT_COUNTER  a file outside it: one byte appended per counted write, so that the
 *                            count is shared by every process of the run (flock'd)
 *   SPMI_TEST_FAULT_FROM     writes allowed before the first failure
 *   SPMI_TEST_FAULT_FOR      failing writes (0: every write from then on)
 *   SPMI_TEST_FAULT_ERRNO    the errno (a number)
 *
 * Without SPMI_TEST_FAULT_DIR it only passes writes on. Only the calls made through the dynamic
 * symbol are seen (Python's file writes are; stdio's internal ones are not). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

typedef ssize_t (*write_fn)(int, const void *, size_t);
typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);

static int under_dir(int fd) {
    const char *dir = getenv("SPMI_TEST_FAULT_DIR");
    char link[64];
    char target[PATH_MAX];
    size_t n;
    ssize_t got;
    if (dir == NULL || *dir == '\0') {
        return 0;
    }
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    got = readlink(link, target, sizeof target - 1);
    if (got <= 0) {
        return 0;
    }
    target[got] = '\0';
    n = strlen(dir);
    return strncmp(target, dir, n) == 0 && (target[n] == '/' || target[n] == '\0');
}

/* The count of writes under the directory before this one (-1: not counted). */
static long count_write(write_fn real) {
    const char *counter = getenv("SPMI_TEST_FAULT_COUNTER");
    struct stat st;
    long before = -1;
    int fd;
    if (counter == NULL) {
        return -1;
    }
    fd = open(counter, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        return -1;
    }
    if (flock(fd, LOCK_EX) == 0 && fstat(fd, &st) == 0) {
        before = (long)st.st_size;
        if (real(fd, "w", 1) != 1) {
            before = -1;
        }
    }
    close(fd);
    return before;
}

static int fails(int fd, write_fn real) {
    long before;
    long from;
    long span;
    int saved = errno;
    if (!under_dir(fd)) {
        errno = saved;
        return 0;
    }
    before = count_write(real);
    from = atol(getenv("SPMI_TEST_FAULT_FROM") ? getenv("SPMI_TEST_FAULT_FROM") : "-1");
    span = atol(getenv("SPMI_TEST_FAULT_FOR") ? getenv("SPMI_TEST_FAULT_FOR") : "0");
    errno = saved;
    return before >= 0 && from >= 0 && before >= from && (span == 0 || before < from + span);
}

static int chosen_errno(void) {
    const char *e = getenv("SPMI_TEST_FAULT_ERRNO");
    return e ? atoi(e) : EIO;
}

ssize_t write(int fd, const void *buf, size_t count) {
    write_fn real = (write_fn)dlsym(RTLD_NEXT, "write");
    if (fails(fd, real)) {
        errno = chosen_errno();
        return -1;
    }
    return real(fd, buf, count);
}

ssize_t pwrite(int fd, const void *buf, size_t count, off_t offset) {
    write_fn real_write = (write_fn)dlsym(RTLD_NEXT, "write");
    pwrite_fn real = (pwrite_fn)dlsym(RTLD_NEXT, "pwrite");
    if (fails(fd, real_write)) {
        errno = chosen_errno();
        return -1;
    }
    return real(fd, buf, count, offset);
}

/*
 * A fault injector for klf's tests, loaded with LD_PRELOAD into the real
 * binary: it makes the C library calls klf (Rust's std and memmap2 on
 * glibc) reads and writes through fail the way a failing machine does,
 * on the files the test names, and nothing else.
 *
 * Driven by the environment (one fault a run):
 *
 *   KLF_FAULT        what fails:
 *     open           open64/open of a matching path fails with the errno
 *     opendir        opendir of a matching path fails with the errno
 *     readdir        readdir64 of a matching directory fails with the
 *                    errno after its first entry
 *     read           read/pread64 of a matching file returns bytes up to
 *                    byte KLF_FAULT_AFTER, then fails with the errno (every
 *                    later read too, as a bad sector does)
 *     shrink         the first read/pread64 of a matching file that reaches
 *                    past byte KLF_FAULT_AFTER truncates the file to that
 *                    many bytes first (the read then sees the new end)
 *     grow           the same, but 4096 bytes are appended instead
 *     shrink-mapped  the first madvise klf makes on a mapping of a matching
 *                    file (after it checked the file is stable) truncates
 *                    the file to KLF_FAULT_AFTER bytes
 *     write          write/writev to a matching file (or to stdout, when
 *                    KLF_FAULT_PATH is "<stdout>") writes up to byte
 *                    KLF_FAULT_AFTER of that file (a short write), then
 *                    fails with the errno
 *     fsync          fsync of a matching file fails with the errno
 *   KLF_FAULT_PATH   a substring of the path as klf passes it
 *   KLF_FAULT_ERRNO  EIO (default), EMFILE, ENFILE, EACCES, ENOSPC, EFBIG,
 *                    ENOMEM, ELOOP
 *   KLF_FAULT_AFTER  a byte count (default 0)
 *   KLF_FAULT_LOG    a file to which a line is appended each time a fault is
 *                    injected, so that a test knows its fault happened
 *
 * Only for tests: built by tests/it/faults.rs with `cc -shared -fPIC`.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAX_FD 65536
#define MAX_MAPS 256
#define MAX_DIRS 256

enum kind { NONE, OPEN, OPENDIR, READDIR, READ, SHRINK, GROW, SHRINK_MAPPED, WRITE, FSYNC };

static enum kind fault = NONE;
static const char *match;
static int fault_errno = EIO;
static long long after;
static const char *log_path;
static int initialised;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Per descriptor: the matching path it was opened with (NULL when it does
 * not match) and the bytes read or written through read/write. */
static char *fd_path[MAX_FD];
static long long fd_pos[MAX_FD];
static int fired_once;

static struct {
    char *start;
    size_t len;
    char *path;
} maps[MAX_MAPS];

static struct {
    DIR *dir;
    char *path;
    int entries;
} dirs[MAX_DIRS];

static int errno_named(const char *s) {
    if (!s || !*s || !strcmp(s, "EIO")) return EIO;
    if (!strcmp(s, "EMFILE")) return EMFILE;
    if (!strcmp(s, "ENFILE")) return ENFILE;
    if (!strcmp(s, "EACCES")) return EACCES;
    if (!strcmp(s, "ENOSPC")) return ENOSPC;
    if (!strcmp(s, "EFBIG")) return EFBIG;
    if (!strcmp(s, "ENOMEM")) return ENOMEM;
    if (!strcmp(s, "ELOOP")) return ELOOP;
    return EIO;
}

static void init(void) {
    if (__atomic_load_n(&initialised, __ATOMIC_ACQUIRE)) return;
    pthread_mutex_lock(&lock);
    if (!initialised) {
        const char *k = getenv("KLF_FAULT");
        match = getenv("KLF_FAULT_PATH");
        fault_errno = errno_named(getenv("KLF_FAULT_ERRNO"));
        const char *a = getenv("KLF_FAULT_AFTER");
        after = a ? atoll(a) : 0;
        log_path = getenv("KLF_FAULT_LOG");
        if (!k || !match) fault = NONE;
        else if (!strcmp(k, "open")) fault = OPEN;
        else if (!strcmp(k, "opendir")) fault = OPENDIR;
        else if (!strcmp(k, "readdir")) fault = READDIR;
        else if (!strcmp(k, "read")) fault = READ;
        else if (!strcmp(k, "shrink")) fault = SHRINK;
        else if (!strcmp(k, "grow")) fault = GROW;
        else if (!strcmp(k, "shrink-mapped")) fault = SHRINK_MAPPED;
        else if (!strcmp(k, "write")) fault = WRITE;
        else if (!strcmp(k, "fsync")) fault = FSYNC;
        __atomic_store_n(&initialised, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&lock);
}

static void *real(const char *name) {
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) abort();
    return f;
}

/* A line in the log, written with raw system calls (nothing here may call
 * back into the functions this file replaces). */
static void fired(const char *what, const char *path) {
    if (!log_path) return;
    int fd = (int)syscall(SYS_openat, AT_FDCWD, log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return;
    char line[4608];
    int n = snprintf(line, sizeof line, "%s %s\n", what, path ? path : "?");
    if (n > (int)sizeof line) n = (int)sizeof line;
    if (n > 0) syscall(SYS_write, fd, line, (size_t)n);
    syscall(SYS_close, fd);
}

static int matches(const char *path) {
    return fault != NONE && path && match && strstr(path, match) != NULL;
}

static int stdout_fault(int fd) {
    return fault == WRITE && fd == 1 && match && !strcmp(match, "<stdout>");
}

static void track(int fd, const char *path) {
    if (fd < 0 || fd >= MAX_FD) return;
    pthread_mutex_lock(&lock);
    free(fd_path[fd]);
    fd_path[fd] = matches(path) ? strdup(path) : NULL;
    fd_pos[fd] = 0;
    pthread_mutex_unlock(&lock);
}

static const char *path_of(int fd) {
    if (fd < 0 || fd >= MAX_FD) return NULL;
    return fd_path[fd];
}

static int open_common(const char *name, const char *path, int flags, mode_t mode) {
    init();
    if (fault == OPEN && matches(path)) {
        fired("open", path);
        errno = fault_errno;
        return -1;
    }
    int (*f)(const char *, int, ...) = real(name);
    int fd = f(path, flags, mode);
    if (fd >= 0) track(fd, path);
    return fd;
}

int open64(const char *path, int flags, ...) {
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list ap;
        va_start(ap, flags);
        mode = va_arg(ap, mode_t);
        va_end(ap);
    }
    return open_common("open64", path, flags, mode);
}

int open(const char *path, int flags, ...) {
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list ap;
        va_start(ap, flags);
        mode = va_arg(ap, mode_t);
        va_end(ap);
    }
    return open_common("open", path, flags, mode);
}

int close(int fd) {
    init();
    if (fd >= 0 && fd < MAX_FD && fd_path[fd]) {
        pthread_mutex_lock(&lock);
        free(fd_path[fd]);
        fd_path[fd] = NULL;
        pthread_mutex_unlock(&lock);
    }
    int (*f)(int) = real("close");
    return f(fd);
}

DIR *opendir(const char *path) {
    init();
    if (fault == OPENDIR && matches(path)) {
        fired("opendir", path);
        errno = fault_errno;
        return NULL;
    }
    DIR *(*f)(const char *) = real("opendir");
    DIR *d = f(path);
    if (d && fault == READDIR && matches(path)) {
        pthread_mutex_lock(&lock);
        for (int i = 0; i < MAX_DIRS; i++) {
            if (!dirs[i].dir) {
                dirs[i].dir = d;
                dirs[i].path = strdup(path);
                dirs[i].entries = 0;
                break;
            }
        }
        pthread_mutex_unlock(&lock);
    }
    return d;
}

struct dirent64 *readdir64(DIR *d) {
    init();
    if (fault == READDIR) {
        pthread_mutex_lock(&lock);
        for (int i = 0; i < MAX_DIRS; i++) {
            if (dirs[i].dir == d) {
                if (dirs[i].entries++ >= 1) {
                    char *p = dirs[i].path;
                    pthread_mutex_unlock(&lock);
                    fired("readdir", p);
                    errno = fault_errno;
                    return NULL;
                }
                break;
            }
        }
        pthread_mutex_unlock(&lock);
    }
    struct dirent64 *(*f)(DIR *) = real("readdir64");
    return f(d);
}

int closedir(DIR *d) {
    init();
    if (fault == READDIR) {
        pthread_mutex_lock(&lock);
        for (int i = 0; i < MAX_DIRS; i++) {
            if (dirs[i].dir == d) {
                free(dirs[i].path);
                dirs[i].dir = NULL;
                dirs[i].path = NULL;
            }
        }
        pthread_mutex_unlock(&lock);
    }
    int (*f)(DIR *) = real("closedir");
    return f(d);
}

/* Before a read of [pos, pos + count) of a matching file: the fault, if
 * this read reaches it. Returns how many bytes may be read (or -1 with
 * errno set). */
static ssize_t before_read(int fd, long long pos, size_t count) {
    const char *path = path_of(fd);
    if (!path) return (ssize_t)count;
    if (fault == READ) {
        if (pos >= after) {
            fired("read", path);
            errno = fault_errno;
            return -1;
        }
        if (pos + (long long)count > after) return (ssize_t)(after - pos);
        return (ssize_t)count;
    }
    if ((fault == SHRINK || fault == GROW) && pos + (long long)count > after) {
        pthread_mutex_lock(&lock);
        int first = !fired_once;
        fired_once = 1;
        pthread_mutex_unlock(&lock);
        if (first) {
            if (fault == SHRINK) {
                syscall(SYS_truncate, path, (off_t)after);
                fired("shrink", path);
            } else {
                int w = (int)syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_APPEND | O_CLOEXEC);
                if (w >= 0) {
                    static const char zeros[4096];
                    syscall(SYS_write, w, zeros, sizeof zeros);
                    syscall(SYS_close, w);
                }
                fired("grow", path);
            }
        }
    }
    return (ssize_t)count;
}

ssize_t read(int fd, void *buf, size_t count) {
    init();
    ssize_t (*f)(int, void *, size_t) = real("read");
    if (fault == NONE || !path_of(fd)) return f(fd, buf, count);
    ssize_t allowed = before_read(fd, fd_pos[fd], count);
    if (allowed < 0) return -1;
    ssize_t n = f(fd, buf, (size_t)allowed);
    if (n > 0) fd_pos[fd] += n;
    return n;
}

ssize_t pread64(int fd, void *buf, size_t count, off_t pos) {
    init();
    ssize_t (*f)(int, void *, size_t, off_t) = real("pread64");
    if (fault == NONE || !path_of(fd)) return f(fd, buf, count, pos);
    ssize_t allowed = before_read(fd, (long long)pos, count);
    if (allowed < 0) return -1;
    return f(fd, buf, (size_t)allowed, pos);
}

ssize_t pread(int fd, void *buf, size_t count, off_t pos) {
    return pread64(fd, buf, count, pos);
}

/* Before a write of `count` bytes: how many may go (a short write at the
 * limit), or -1 with errno set once the limit is reached. */
static ssize_t before_write(int fd, size_t count) {
    const char *path = stdout_fault(fd) ? "<stdout>" : path_of(fd);
    if (fault != WRITE || !path) return (ssize_t)count;
    if (fd_pos[fd] >= after) {
        fired("write", path);
        errno = fault_errno;
        return -1;
    }
    if (fd_pos[fd] + (long long)count > after) return (ssize_t)(after - fd_pos[fd]);
    return (ssize_t)count;
}

ssize_t write(int fd, const void *buf, size_t count) {
    init();
    ssize_t (*f)(int, const void *, size_t) = real("write");
    if (fault != WRITE || fd < 0 || fd >= MAX_FD) return f(fd, buf, count);
    ssize_t allowed = before_write(fd, count);
    if (allowed < 0) return -1;
    ssize_t n = f(fd, buf, (size_t)allowed);
    if (n > 0) fd_pos[fd] += n;
    return n;
}

ssize_t writev(int fd, const struct iovec *iov, int cnt) {
    init();
    ssize_t (*f)(int, const struct iovec *, int) = real("writev");
    if (fault != WRITE || fd < 0 || fd >= MAX_FD || !(stdout_fault(fd) || path_of(fd)))
        return f(fd, iov, cnt);
    size_t total = 0;
    for (int i = 0; i < cnt; i++) total += iov[i].iov_len;
    ssize_t allowed = before_write(fd, total);
    if (allowed < 0) return -1;
    if ((size_t)allowed < total) {
        /* The part that fits, from the first buffers. */
        for (int i = 0; i < cnt; i++) {
            if (iov[i].iov_len == 0) continue;
            size_t n = iov[i].iov_len < (size_t)allowed ? iov[i].iov_len : (size_t)allowed;
            return write(fd, iov[i].iov_base, n);
        }
        return 0;
    }
    ssize_t n = f(fd, iov, cnt);
    if (n > 0) fd_pos[fd] += n;
    return n;
}

int fsync(int fd) {
    init();
    if (fault == FSYNC && path_of(fd)) {
        fired("fsync", path_of(fd));
        errno = fault_errno;
        return -1;
    }
    int (*f)(int) = real("fsync");
    return f(fd);
}

static void *map_common(const char *name, void *addr, size_t len, int prot, int flags, int fd, off_t off) {
    init();
    void *(*f)(void *, size_t, int, int, int, off_t) = real(name);
    void *p = f(addr, len, prot, flags, fd, off);
    if (p != MAP_FAILED && fault == SHRINK_MAPPED && path_of(fd)) {
        pthread_mutex_lock(&lock);
        for (int i = 0; i < MAX_MAPS; i++) {
            if (!maps[i].start) {
                maps[i].start = p;
                maps[i].len = len;
                maps[i].path = strdup(path_of(fd));
                break;
            }
        }
        pthread_mutex_unlock(&lock);
    }
    return p;
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
    return map_common("mmap64", addr, len, prot, flags, fd, off);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
    return map_common("mmap", addr, len, prot, flags, fd, off);
}

int madvise(void *addr, size_t len, int advice) {
    init();
    if (fault == SHRINK_MAPPED) {
        char *path = NULL;
        pthread_mutex_lock(&lock);
        for (int i = 0; i < MAX_MAPS; i++) {
            if (maps[i].start && (char *)addr >= maps[i].start &&
                (char *)addr < maps[i].start + maps[i].len && !fired_once) {
                fired_once = 1;
                path = maps[i].path;
                break;
            }
        }
        pthread_mutex_unlock(&lock);
        if (path) {
            syscall(SYS_truncate, path, (off_t)after);
            fired("shrink-mapped", path);
        }
    }
    int (*f)(void *, size_t, int) = real("madvise");
    return f(addr, len, advice);
}

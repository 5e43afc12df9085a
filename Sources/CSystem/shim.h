// The C library, for every module of suggest: the one place that knows which platform's headers to read, so that
// Swift files import `CSystem` instead of choosing between Glibc, Musl and Darwin themselves.
#ifndef SUGGEST_CSYSTEM_SHIM_H
#define SUGGEST_CSYSTEM_SHIM_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/// `errno` is a macro in C (a thread-local behind a function call), so Swift cannot read it as a variable.
static inline int system_errno(void) { return errno; }

/// A descriptor's flags (`fcntl(2)`'s `F_GETFD`), -1 when it is not open: Swift cannot call the variadic C function.
static inline int system_descriptor_flags(int fd) { return fcntl(fd, F_GETFD); }

/// `open(2)` with flags only: Swift cannot call the variadic C function.
static inline int system_open(const char *path, int flags) { return open(path, flags); }

/// `open(2)` with a mode for the file it creates.
static inline int system_open_creating(const char *path, int flags, mode_t mode) { return open(path, flags, mode); }

/// `chmod(2)` of `path` itself, never of what a symbolic link there names (`fchmodat(2)` with
/// `AT_SYMLINK_NOFOLLOW`, which glibc does through a descriptor that holds no lock: closing any other descriptor of a
/// file drops every POSIX lock the process holds on it, SQLite's included). -1 with `ENOTSUP` where it cannot.
static inline int system_change_mode_not_following(const char *path, mode_t mode) {
    return fchmodat(AT_FDCWD, path, mode, AT_SYMLINK_NOFOLLOW);
}

/// A duplicate of `fd` numbered `minimum` or the lowest free number above it, closed on exec (`fcntl(2)`'s
/// `F_DUPFD_CLOEXEC`: Swift cannot call the variadic C function).
static inline int system_duplicate_at_least(int fd, int minimum) { return fcntl(fd, F_DUPFD_CLOEXEC, minimum); }

/// Whether a `stat` mode is a directory (`S_ISDIR`, a macro in C).
static inline int system_is_directory(mode_t mode) { return S_ISDIR(mode); }

/// Whether an `lstat` mode is a symbolic link (`S_ISLNK`, a macro in C).
static inline int system_is_symbolic_link(mode_t mode) { return S_ISLNK(mode); }

/// Whether a `stat` mode is a regular file (`S_ISREG`, a macro in C).
static inline int system_is_regular_file(mode_t mode) { return S_ISREG(mode); }

/// Whether a signal is ignored (`SIG_IGN`, as a shell starts a background job's SIGINT): then it stays so.
static inline int system_signal_is_ignored(int signal_number) {
    struct sigaction action;
    return sigaction(signal_number, NULL, &action) == 0 && action.sa_handler == SIG_IGN;
}

/// Raises the soft limit on open descriptors towards the hard one, to at most `wanted`: each connection of a server
/// needs one, and the usual soft limit of 1,024 is below a server's connection limit and its store's files. The
/// hard limit, which only the administrator raises, is left as it is. Returns the soft limit now.
static inline long system_raise_descriptor_limit(long wanted) {
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return -1;
    rlim_t target = limit.rlim_max < (rlim_t)wanted ? limit.rlim_max : (rlim_t)wanted;
    if (limit.rlim_cur < target) {
        limit.rlim_cur = target;
        if (setrlimit(RLIMIT_NOFILE, &limit) != 0) return -1;
    }
    return (long)limit.rlim_cur;
}

/// The process's soft limit on a resource counted in bytes (`RLIMIT_AS`, `ulimit -v`; `RLIMIT_FSIZE`, `ulimit -f`),
/// or -1 without one. (Swift cannot compare with `RLIM_INFINITY`, a macro of a cast.)
static inline long long system_byte_limit(int resource) {
    struct rlimit limit;
    if (getrlimit(resource, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return -1;
    return (long long)limit.rlim_cur;
}

/// The soft limit on open descriptors now, or -1.
static inline long system_descriptor_limit(void) {
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return -1;
    return (long)limit.rlim_cur;
}

/// Ignores a signal (`SIG_IGN` is a cast in C, which Swift does not import).
static inline void system_ignore_signal(int signal_number) { signal(signal_number, SIG_IGN); }

/// Caps how many heaps (arenas) glibc's malloc keeps, where the C library is glibc; elsewhere does nothing. glibc
/// gives threads that contend for the heap arenas of their own, up to eight per core, and keeps what was freed in
/// them: a server's threads that each parse a large body leave that much memory behind in each arena.
#if defined(__GLIBC__)
#include <malloc.h>
static inline void system_limit_heap_arenas(int count) { mallopt(M_ARENA_MAX, count); }
/// Fixes the size from which glibc's malloc maps a block of its own (given back whole when freed) and the free
/// space at a heap's top that it gives back. Left to itself, glibc raises both each time a mapped block is freed, up
/// to 32 MB: after one large body, every later large allocation lands inside the heaps, among long-lived ones, and
/// its pages stay resident after it is freed.
static inline void system_fix_heap_thresholds(int mapped, int trimmed) {
    mallopt(M_MMAP_THRESHOLD, mapped);
    mallopt(M_TRIM_THRESHOLD, trimmed);
}
/// Gives the memory freed in every heap back to the system (`malloc_trim(3)`): glibc keeps what a large piece of work
/// freed, in small blocks among long-lived ones, for the next allocations of its heap.
static inline void system_trim_heap(void) { malloc_trim(0); }
#else
static inline void system_trim_heap(void) {}
static inline void system_limit_heap_arenas(int count) { (void)count; }
static inline void system_fix_heap_thresholds(int mapped, int trimmed) { (void)mapped; (void)trimmed; }
#endif

#endif

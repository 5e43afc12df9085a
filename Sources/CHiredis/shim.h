// hiredis 0.14 (Debian's libhiredis-dev), for the RedisCluster module: a blocking connection, the binary-safe argv
// commands and the reply reader. No pkg-config: the headers are in /usr/include/hiredis on Debian.
#ifndef SUGGEST_CHIREDIS_SHIM_H
#define SUGGEST_CHIREDIS_SHIM_H

#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <poll.h>
#include <signal.h>

/// Whether a connection's socket has something to read while no reply is awaited: the server closed it (or reset
/// it) while the connection sat idle in a pool. A pooled connection that says so is dropped before it is used, so
/// a command is not written into a socket that is known to be dead.
static inline int chiredis_socket_is_readable(int fd) {
    struct pollfd entry = {.fd = fd, .events = POLLIN, .revents = 0};
    return poll(&entry, 1, 0) > 0;
}

/// Marks a connection's socket close-on-exec. hiredis 0.14 makes its sockets without `SOCK_CLOEXEC`, so a program
/// that starts another (an app running a helper, a test running `suggest`) would hand every open Redis connection
/// to it: the child holds the socket open after the parent closed it, and counts it against its own limit on files.
static inline void chiredis_close_on_exec(int fd) {
    int flags = fcntl(fd, F_GETFD);
    if (flags >= 0) (void)fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
}

/// Ignores SIGPIPE when it still has its default action (which ends the process). hiredis writes with write(2), so
/// a server that dies between two commands would otherwise kill the whole client process; a handler the program
/// installed itself is left alone.
static inline void chiredis_ignore_sigpipe_if_default(void) {
    struct sigaction current;
    if (sigaction(SIGPIPE, NULL, &current) == 0 && current.sa_handler == SIG_DFL) {
        struct sigaction ignore;
        sigemptyset(&ignore.sa_mask);
        ignore.sa_flags = 0;
        ignore.sa_handler = SIG_IGN;
        sigaction(SIGPIPE, &ignore, NULL);
    }
}

#endif

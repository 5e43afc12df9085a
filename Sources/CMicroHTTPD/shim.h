// GNU libmicrohttpd for the HTTPServer module: the defines its build expects and small wrappers for the variadic
// functions, which Swift cannot call.
#ifndef SUGGEST_CMICROHTTPD_SHIM_H
#define SUGGEST_CMICROHTTPD_SHIM_H

// pkg-config's flags for libmicrohttpd carry -D_FILE_OFFSET_BITS=64, which SwiftPM does not pass on (no pkgConfig in
// the manifest). On a 64-bit system off_t is 64 bits either way and every structure has the same layout, but the
// define renames the types behind them, and clang then refuses a Swift module that imports this module beside
// CSystem (struct flock "has different definitions in different modules"). So it is defined only where it changes
// the layout, 32-bit systems, where CSystem would need it too; the assertion below checks the layout in both cases.
#if !defined(__LP64__) && !defined(_FILE_OFFSET_BITS)
#define _FILE_OFFSET_BITS 64
#endif

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <microhttpd.h>

_Static_assert(sizeof(off_t) == 8, "libmicrohttpd is built with a 64-bit off_t");
_Static_assert(MHD_VERSION >= 0x00097500, "HTTPServer needs libmicrohttpd 0.9.75 or later");
// Responses are always copied by MHD; the value 1 (MHD_RESPMEM_MUST_FREE) would have MHD free Swift's memory.
_Static_assert(MHD_RESPMEM_MUST_COPY == 2, "MHD_RESPMEM_MUST_COPY is 2");

/// The callback MHD calls with each request's raw target, before it splits off the query or decodes anything; what it
/// returns becomes the request's context pointer.
typedef void *(*suggest_mhd_uri_callback)(void *cls, const char *uri, struct MHD_Connection *connection);

/// What `suggest_mhd_start` hands to `MHD_start_daemon` as options.
struct suggest_mhd_options {
    /// Worker threads, each with its own epoll set; 1 runs one internal thread without a pool.
    unsigned int thread_pool_size;
    /// Connections one worker thread may hold.
    unsigned int connection_limit;
    /// 0: no limit per client address.
    unsigned int per_ip_connection_limit;
    /// Seconds of inactivity after which a connection is closed; 0: never.
    unsigned int connection_timeout;
    /// Bytes of the per-connection pool that holds the request line, headers and read buffer.
    size_t connection_memory_limit;
};

/// `MHD_start_daemon` with the options in one array (Swift cannot call the variadic function), for a daemon that is
/// handed its connections (`MHD_add_connection`) rather than accepting them. The callbacks share one closure
/// pointer, `cls`.
static inline struct MHD_Daemon *suggest_mhd_start(
    unsigned int flags, const struct suggest_mhd_options *options, MHD_AccessHandlerCallback handler,
    MHD_RequestCompletedCallback completed, suggest_mhd_uri_callback uri, MHD_NotifyConnectionCallback connections,
    MHD_LogCallback logger, void *cls) {
    struct MHD_OptionItem items[] = {
        {MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)connections, cls},
        {MHD_OPTION_CONNECTION_LIMIT, (intptr_t)options->connection_limit, NULL},
        {MHD_OPTION_PER_IP_CONNECTION_LIMIT, (intptr_t)options->per_ip_connection_limit, NULL},
        {MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)options->connection_timeout, NULL},
        {MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)options->connection_memory_limit, NULL},
        {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, cls},
        {MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)uri, cls},
        // A pool of one is no pool (MHD logs a warning for it): one internal thread then does everything.
        {options->thread_pool_size > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END,
         (intptr_t)options->thread_pool_size, NULL},
        {MHD_OPTION_END, 0, NULL},
    };
    // The logger before the array: MHD sends what it says about the options that follow it to the logger in force.
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, cls, MHD_OPTION_EXTERNAL_LOGGER, logger, cls,
                            MHD_OPTION_ARRAY, items, MHD_OPTION_END);
}

/// The client's address of a connection (`MHD_get_connection_info` is variadic), or NULL.
static inline const struct sockaddr *suggest_mhd_client_address(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info == NULL ? NULL : info->client_addr;
}

/// The connection's socket context (what the connection notification set for it), or NULL.
static inline void *suggest_mhd_socket_context(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info == NULL ? NULL : info->socket_context;
}

// glibc declares accept4 only under _GNU_SOURCE, which would change other declarations this module shares with
// CSystem; the function itself is always there (Linux 2.6.28, glibc 2.10).
extern int accept4(int socket, struct sockaddr *address, socklen_t *length, int flags);

/// `accept(2)` of one waiting connection, its socket non-blocking and closed on exec; -1 with `errno` set.
static inline int suggest_accept(int listener, struct sockaddr *address, socklen_t *length) {
    return accept4(listener, address, length, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

/// Sets one connection's idle timeout (`MHD_set_connection_option` is variadic, which Swift cannot call).
static inline int suggest_mhd_set_connection_timeout(struct MHD_Connection *connection, unsigned int seconds) {
    return MHD_set_connection_option(connection, MHD_CONNECTION_OPTION_TIMEOUT, seconds);
}

/// The socket of a connection, or -1.
static inline int suggest_mhd_connection_socket(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

#endif

#ifndef SHEETD_CMICROHTTPD_SHIM_H
#define SHEETD_CMICROHTTPD_SHIM_H
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <microhttpd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <malloc.h>
#include <unistd.h>
#include <sys/ioctl.h>

/// MHD_start_daemon is variadic and unavailable in Swift; options travel as one MHD_OPTION_ARRAY.
/// The accept-policy callback is an argument (not an option): it refuses new connections while draining,
/// which replaces MHD_quiesce_daemon (that one can abort with a thread pool and epoll).
static inline struct MHD_Daemon *
cmhd_start_daemon(unsigned int flags, uint16_t port,
                  MHD_AcceptPolicyCallback apc, void *apc_cls,
                  MHD_AccessHandlerCallback dh, void *dh_cls,
                  const struct MHD_OptionItem *options)
{
    return MHD_start_daemon(flags, port, apc, apc_cls, dh, dh_cls, MHD_OPTION_ARRAY, options, MHD_OPTION_END);
}

/// MHD_get_daemon_info is variadic: the bound port (0 when unknown).
static inline uint16_t cmhd_bound_port(struct MHD_Daemon *d)
{
    const union MHD_DaemonInfo *i = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    return i ? i->port : 0;
}

/// MHD_get_daemon_info is variadic: connections currently open (all workers).
static inline unsigned int cmhd_current_connections(struct MHD_Daemon *d)
{
    const union MHD_DaemonInfo *i = MHD_get_daemon_info(d, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    return i ? i->num_connections : 0;
}

/// The value MHD_ContentReaderCallback returns to end a chunked stream.
static inline ssize_t cmhd_end_of_stream(void) { return MHD_CONTENT_READER_END_OF_STREAM; }

/// The value MHD_ContentReaderCallback returns to abort a chunked stream (the connection is closed).
static inline ssize_t cmhd_end_with_error(void) { return MHD_CONTENT_READER_END_WITH_ERROR; }

/// MHD_get_connection_info is variadic: the connection's socket (-1 when unknown).
static inline int cmhd_connection_fd(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    return i ? i->connect_fd : -1;
}

/// A chunked response whose body `reader` produces (MHD_SIZE_UNKNOWN is a macro Swift cannot import).
/// `block_size` is allocated per response and unused for chunked bodies: keep it small.
static inline struct MHD_Response *
cmhd_create_stream_response(MHD_ContentReaderCallback reader, void *cls, MHD_ContentReaderFreeCallback release)
{
    return MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 256, reader, cls, release);
}

/// MHD_OPTION_UNESCAPE_CALLBACK: leave the path and query arguments exactly as received. The Swift
/// router decodes each path segment itself, so an encoded "/" (%2F) stays distinguishable from a
/// separator, and query names and values are decoded (with "+" as space) on access.
static inline size_t cmhd_identity_unescape(void *cls, struct MHD_Connection *c, char *s)
{
    (void)cls; (void)c;
    size_t n = 0;
    while (s[n] != 0) n++;
    return n;
}

// Typed MHD_OptionItem builders: MHD_OptionItem.value is an intptr_t, so a callback travels as an
// integer. The casts happen here, once, instead of unsafeBitCast in Swift.

/// An option whose argument is an integer (limits, sizes, timeouts, counts).
static inline struct MHD_OptionItem cmhd_option_int(enum MHD_OPTION option, intptr_t value)
{
    struct MHD_OptionItem item = { option, value, NULL };
    return item;
}

/// MHD_OPTION_SOCK_ADDR with an IPv4 address (it must outlive MHD_start_daemon's call).
static inline struct MHD_OptionItem cmhd_option_sock_addr(const struct sockaddr_in *address)
{
    struct MHD_OptionItem item = { MHD_OPTION_SOCK_ADDR, 0, (void *)address };
    return item;
}

/// MHD_OPTION_EXTERNAL_LOGGER.
static inline struct MHD_OptionItem cmhd_option_logger(MHD_LogCallback callback, void *cls)
{
    struct MHD_OptionItem item = { MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)callback, cls };
    return item;
}

/// MHD_OPTION_NOTIFY_COMPLETED.
static inline struct MHD_OptionItem cmhd_option_notify_completed(MHD_RequestCompletedCallback callback, void *cls)
{
    struct MHD_OptionItem item = { MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)callback, cls };
    return item;
}

/// The callback type of MHD_OPTION_URI_LOG_CALLBACK (the header declares it only in prose).
typedef void *(*cmhd_uri_log_callback)(void *cls, const char *uri, struct MHD_Connection *connection);

/// MHD_OPTION_URI_LOG_CALLBACK: its return value becomes the request's first `*req_cls`.
static inline struct MHD_OptionItem cmhd_option_uri_log(cmhd_uri_log_callback callback, void *cls)
{
    struct MHD_OptionItem item = { MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)callback, cls };
    return item;
}

/// MHD_OPTION_UNESCAPE_CALLBACK with cmhd_identity_unescape.
static inline struct MHD_OptionItem cmhd_option_identity_unescape(void)
{
    struct MHD_OptionItem item = { MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)&cmhd_identity_unescape, NULL };
    return item;
}

/// MHD_OPTION_END.
static inline struct MHD_OptionItem cmhd_option_end(void)
{
    struct MHD_OptionItem item = { MHD_OPTION_END, 0, NULL };
    return item;
}

/// The query of `uri` (the bytes after the first '?'), or NULL without one. For the URI log callback,
/// which sees the request line before libmicrohttpd parses its query arguments.
static inline const char *cmhd_query_of(const char *uri)
{
    const char *q = strchr(uri, '?');
    return q == NULL ? NULL : q + 1;
}

/// Hides the query from libmicrohttpd (0.9.75): after the URI log callback it parses the arguments of
/// the request line into records of the connection's memory pool, and when the pool is full (a head
/// at its edge, or empty lines before the request line) that allocation fails; it then queues a 431
/// but overwrites the connection's state ("URL received") and the connection waits, unanswered, for
/// the idle timeout (connection.c: parse_initial_message_line ignores MHD_parse_arguments_'s
/// result). With an empty argument string it allocates nothing: sheetd parses its copy of the query.
static inline void cmhd_hide_query(const char *query)
{
    *(char *)query = 0;
}

/// A complete answer written to the connection's socket by sheetd itself (non-blocking, no SIGPIPE),
/// for the one case libmicrohttpd cannot answer (see ServerCore); the bytes written, or -1.
static inline ssize_t cmhd_send_raw(int fd, const void *bytes, size_t count)
{
    return send(fd, bytes, count, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/// MHD_get_connection_info is variadic: the size of the request line and header section, blank line
/// included (0 when unknown).
static inline size_t cmhd_request_header_size(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    return i ? i->header_size : 0;
}

/// A response that owns a copy of `bytes`: one malloc and memcpy, freed by MHD with the response
/// (so nothing of the caller's buffer is used after this call returns). NULL when out of memory.
static inline struct MHD_Response *cmhd_response_copying(const void *bytes, size_t count)
{
    if (count == 0) return MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
    void *copy = malloc(count);
    if (copy == NULL) return NULL;
    memcpy(copy, bytes, count);
    struct MHD_Response *r = MHD_create_response_from_buffer_with_free_callback(count, copy, &free);
    if (r == NULL) free(copy);
    return r;
}

/// A response over `bytes` as they are: MHD sends from them and calls `release(owner)` when it is
/// done with the response (also when this returns NULL: out of memory), so the owner keeps them alive
/// and unchanged until then.
static inline struct MHD_Response *cmhd_response_borrowing(const void *bytes, size_t count, MHD_ContentReaderFreeCallback release, void *owner)
{
    struct MHD_Response *r = MHD_create_response_from_buffer_with_free_callback_cls(count, (void *)bytes, release, owner);
    if (r == NULL) release(owner);
    return r;
}

/// The stream peer monitor: an epoll set that reports only a peer's close (EPOLLRDHUP; HUP and ERR
/// are always reported), with the watched stream's context as the event's data. (Glibc's Swift module
/// does not export epoll.)
static inline int cmhd_monitor_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

static inline int cmhd_monitor_add(int epfd, int fd, void *context)
{
    struct epoll_event ev = { .events = EPOLLRDHUP | EPOLLONESHOT, .data.ptr = context };
    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

static inline int cmhd_monitor_remove(int epfd, int fd)
{
    struct epoll_event ev = { 0 };
    return epoll_ctl(epfd, EPOLL_CTL_DEL, fd, &ev);
}

/// Waits for closes; writes up to `max` contexts into `contexts`; returns their number (or -1).
static inline int cmhd_monitor_wait(int epfd, void **contexts, int max, int timeout_ms)
{
    struct epoll_event evs[64];
    if (max > 64) max = 64;
    int n = epoll_wait(epfd, evs, max, timeout_ms);
    for (int i = 0; i < n; i++) contexts[i] = evs[i].data.ptr;
    return n;
}

/// An eventfd whose readability stops the monitor thread (its context is NULL).
static inline int cmhd_monitor_add_wakeup(int epfd, int efd)
{
    struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
    return epoll_ctl(epfd, EPOLL_CTL_ADD, efd, &ev);
}

static inline int cmhd_eventfd(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

/// Gives the free memory of every malloc arena back to the system (glibc's malloc_trim): closed
/// connections leave their pools' pages resident otherwise. 1 when memory was released.
static inline int cmhd_release_free_memory(void) { return malloc_trim(0); }

// A daemon in external mode runs on the caller's thread (`EventLoop`): MHD_run_wait waits on the
// daemon's epoll set, to which the loop adds its own wakeup eventfd.

/// The daemon a connection belongs to.
static inline struct MHD_Daemon *cmhd_connection_daemon(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_DAEMON);
    return i ? i->daemon : NULL;
}

/// The daemon's listening socket, -1 when it has none.
static inline int cmhd_daemon_listen_fd(struct MHD_Daemon *d)
{
    const union MHD_DaemonInfo *i = MHD_get_daemon_info(d, MHD_DAEMON_INFO_LISTEN_FD);
    return i ? i->listen_fd : -1;
}

/// Adds `wakeup` (an eventfd) to the daemon's epoll set (MHD_USE_EPOLL), so that a write to it ends
/// the daemon's wait in MHD_run_wait. Its event carries a NULL pointer, which MHD skips; it is
/// edge-triggered, so every write is one wake-up and the counter never needs reading. 0 on success.
static inline int cmhd_daemon_add_wakeup(struct MHD_Daemon *d, int wakeup)
{
    const union MHD_DaemonInfo *i = MHD_get_daemon_info(d, MHD_DAEMON_INFO_EPOLL_FD);
    if (i == NULL || i->epoll_fd < 0) return -1;
    struct epoll_event ev = { .events = EPOLLIN | EPOLLET, .data.ptr = NULL };
    return epoll_ctl(i->epoll_fd, EPOLL_CTL_ADD, wakeup, &ev);
}

/// Wakes a loop waiting in MHD_run_wait (see `cmhd_daemon_add_wakeup`).
static inline void cmhd_loop_wake(int wakeup)
{
    uint64_t one = 1;
    (void)write(wakeup, &one, sizeof one);
}

/// Bytes received on a socket that nobody has read yet (FIONREAD), -1 on error.
static inline int cmhd_unread_bytes(int fd)
{
    int n = 0;
    return ioctl(fd, FIONREAD, &n) == 0 ? n : -1;
}

#endif

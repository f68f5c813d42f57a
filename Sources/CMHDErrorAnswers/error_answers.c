// libmicrohttpd answers some malformed requests itself, before or beside the access handler (505 for
// `HTTP/2.0`, 400 for a bad chunk size or Content-Length, 413, 431, 414), with a fixed HTML body: in
// 0.9.75 they all go through `transmit_error_response_len` (connection.c), which calls
// MHD_create_response_from_buffer(len, <static message>, MHD_RESPMEM_PERSISTENT) and then
// MHD_queue_response, both through the library's PLT. Defined here, in the executable, these two
// names come first (symbol interposition, as jemalloc's malloc does): a response made over a buffer
// inside libmicrohttpd's own image is noted on this thread, and when MHD queues that response, the
// builder's answer (problem+json) is queued in its place. Every other call passes straight through to
// libmicrohttpd (RTLD_NEXT). If a later libmicrohttpd builds its answers another way, nothing breaks:
// its own answers just stay HTML (`cmhd_error_answers_replaced` stays 0, and a test says so).
#define _GNU_SOURCE
#include "cmhd_error_answers.h"

#include <dlfcn.h>
#include <microhttpd.h>
#include <string.h>

typedef struct MHD_Response *(*create_from_buffer_fn)(size_t, void *, enum MHD_ResponseMemoryMode);
typedef enum MHD_Result (*queue_response_fn)(struct MHD_Connection *, unsigned int, struct MHD_Response *);

static cmhd_error_answer_builder builder;
static unsigned long replaced;

/// The response MHD made for its own error answer on this thread, and its message, until queued.
static __thread struct MHD_Response *pending;
static __thread const char *pending_message;
static __thread size_t pending_length;

void cmhd_set_error_answer_builder(cmhd_error_answer_builder b) { __atomic_store_n(&builder, b, __ATOMIC_RELEASE); }

unsigned long cmhd_error_answers_replaced(void) { return __atomic_load_n(&replaced, __ATOMIC_RELAXED); }

static void *next_symbol(void **cache, const char *name)
{
    void *f = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (f == NULL) {
        f = dlsym(RTLD_NEXT, name);
        __atomic_store_n(cache, f, __ATOMIC_RELEASE);
    }
    return f;
}

/// Whether `p` lies in libmicrohttpd's image (its read-only data: the error messages).
static int inside_libmicrohttpd(const void *p)
{
    Dl_info here, mhd;
    if (dladdr(p, &here) == 0 || dladdr((void *)&MHD_get_version, &mhd) == 0) return 0;
    return here.dli_fbase != NULL && here.dli_fbase == mhd.dli_fbase;
}

struct MHD_Response *MHD_create_response_from_buffer(size_t size, void *buffer, enum MHD_ResponseMemoryMode mode)
{
    static void *real;
    struct MHD_Response *r = ((create_from_buffer_fn)next_symbol(&real, "MHD_create_response_from_buffer"))(size, buffer, mode);
    if (r != NULL && mode == MHD_RESPMEM_PERSISTENT && buffer != NULL && size > 0
        && __atomic_load_n(&builder, __ATOMIC_ACQUIRE) != NULL && inside_libmicrohttpd(buffer)) {
        pending = r;
        pending_message = buffer;
        pending_length = size;
    }
    return r;
}

/// The text of MHD's HTML message: what is between <body> and </body> (the whole message without them).
static void message_text(const char *message, size_t length, const char **text, size_t *text_length)
{
    const char *start = memmem(message, length, "<body>", 6);
    const char *end = memmem(message, length, "</body>", 7);
    if (start != NULL && end != NULL && start + 6 <= end) {
        *text = start + 6;
        *text_length = (size_t)(end - start - 6);
    } else {
        *text = message;
        *text_length = length;
    }
}

enum MHD_Result MHD_queue_response(struct MHD_Connection *connection, unsigned int status_code, struct MHD_Response *response)
{
    static void *real;
    queue_response_fn queue = (queue_response_fn)next_symbol(&real, "MHD_queue_response");
    if (response == NULL || response != pending) return queue(connection, status_code, response);
    pending = NULL;
    cmhd_error_answer_builder b = __atomic_load_n(&builder, __ATOMIC_ACQUIRE);
    const char *text;
    size_t text_length;
    message_text(pending_message, pending_length, &text, &text_length);
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    int socket = info != NULL ? info->connect_fd : -1;
    struct MHD_Response *answer = b != NULL ? b(status_code, text, text_length, socket) : NULL;
    if (answer == NULL) return queue(connection, status_code, response);
    // MHD's caller destroys its own response after this returns; the connection holds ours.
    enum MHD_Result result = queue(connection, status_code, answer);
    MHD_destroy_response(answer);
    if (result == MHD_YES) __atomic_fetch_add(&replaced, 1, __ATOMIC_RELAXED);
    return result;
}

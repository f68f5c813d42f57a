/* Shared by the yardsticks: start libmicrohttpd in sheetd's threading mode (internal polling
 * thread + epoll + ITC + suspend/resume allowed, as sheetd parks event requests; a worker pool of N threads, the same limits), print a "listening" line, wait
 * for SIGTERM/SIGINT, stop. */
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

static inline struct MHD_Daemon *ys_start(unsigned port, unsigned threads, MHD_AccessHandlerCallback ah,
                                   MHD_RequestCompletedCallback done)
{
    static struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t)port);
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG,
        (uint16_t)port,
        NULL, NULL, ah, NULL,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)threads,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned int)4096,
        MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned int)1024,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)30,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)10240,  /* sheetd's HTTPServerConfiguration.headerMemoryLimit */
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
        MHD_OPTION_NOTIFY_COMPLETED, done, NULL,
        MHD_OPTION_END);
    if (!d) { fprintf(stderr, "cannot start libmicrohttpd on port %u\n", port); exit(1); }
    return d;
}

static inline void ys_serve(struct MHD_Daemon *d, const char *name, unsigned port)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    printf("{\"msg\":\"listening\",\"server\":\"%s\",\"port\":%u}\n", name, port);
    fflush(stdout);
    int sig;
    sigwait(&set, &sig);
    MHD_stop_daemon(d);
}

/* A fixed JSON object of exactly n bytes (n >= 32), shaped like a decision. */
static inline char *ys_fixed_json(size_t n)
{
    char *b = malloc(n + 1);
    const char *head = "{\"present\":true,\"reason\":\"presented\",\"pad\":\"";
    size_t h = strlen(head);
    if (n < h + 3) n = h + 3;
    memcpy(b, head, h);
    memset(b + h, 'x', n - h - 2);
    memcpy(b + n - 2, "\"}", 2);
    b[n] = 0;
    return b;
}

/* The headers sheetd sends with a decision, so both answer about the same number of bytes. */
static inline void ys_decision_headers(struct MHD_Response *r)
{
    MHD_add_response_header(r, "Content-Type", "application/json");
    MHD_add_response_header(r, "ETag", "\"0123456789abcdef0123456789abcdef\"");
    MHD_add_response_header(r, "Cache-Control", "no-cache");
    MHD_add_response_header(r, "X-Request-Id", "0123456789abcdef");
}

/* The index-th '/'-separated segment of the path. */
static inline void ys_copy_segment(const char *url, int index, char *out, size_t cap)
{
    const char *p = url;
    for (int i = 0; i <= index && p; i++) p = strchr(p + (i ? 1 : 0), '/');
    out[0] = 0;
    if (!p) return;
    p++;
    size_t k = 0;
    while (p[k] && p[k] != '/' && p[k] != '?' && k + 1 < cap) { out[k] = p[k]; k++; }
    out[k] = 0;
}

/* What an event request writes: /v1/users/{u}/containers/{c}/count or /v1/users/{u}/dismissals
 * (the row "dismissals"), the body's "count" or 1. user and container hold 129 bytes. */
static inline void ys_event_target(const char *url, const char *body, char *user, char *container, long *count)
{
    ys_copy_segment(url, 2, user, 129);
    ys_copy_segment(url, 4, container, 129);
    if (!container[0]) strcpy(container, "dismissals");
    *count = 1;
    const char *k = strstr(body, "\"count\"");
    if (k && (k = strchr(k, ':'))) *count = strtol(k + 1, NULL, 10);
}

/* Appends an upload chunk to a request's body buffer (cap bytes, kept NUL-terminated; the rest is
 * dropped) and marks it consumed. */
static inline void ys_take_upload(char *body, size_t *n, size_t cap, const char *upload, size_t *upload_size)
{
    size_t take = *upload_size;
    if (*n + take > cap - 1) take = cap - 1 - *n;
    memcpy(body + *n, upload, take);
    *n += take;
    body[*n] = 0;
    *upload_size = 0;
}

/* The small JSON answer of an event (a count PUT's shape). */
static inline struct MHD_Response *ys_event_reply(void)
{
    static char reply[] = "{\"containerId\":\"offers-home\",\"filter\":\"\",\"count\":3,\"changed\":true,\"applied\":true}";
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(reply), reply, MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(r, "Content-Type", "application/json");
    MHD_add_response_header(r, "X-Request-Id", "0123456789abcdef");
    return r;
}

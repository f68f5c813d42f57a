/* Shared by the two yardsticks: start libmicrohttpd in sheetd's threading mode (internal polling
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

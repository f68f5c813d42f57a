/* Yardstick (d), the design not built: sheetd's worker running its own libmicrohttpd event loop
 * (external mode, MHD_run_wait) and committing, on that same thread, everything one loop turn read.
 * sqlite_upsert's routes, SQL and answers; every POST/PUT is parked (MHD_suspend_connection) and
 * listed; when MHD_run_wait returns, the listed upserts run in one BEGIN IMMEDIATE transaction,
 * commit once, and the connections are resumed, to be answered in the next turn. No second thread,
 * no wake-up between threads, and a commit carries whatever arrived together. One loop thread only
 * (THREADS must be 1). Used by bench/handoff.sh.
 * usage: sqlite_loopbatch PORT THREADS BODY_BYTES DB_FILE */
#include <pthread.h>
#include <signal.h>
#include "common.h"
#include "sqlite_common.h"

static struct MHD_Response *fixed, *small;
static sqlite3 *db;
static sqlite3_stmt *upsert, *begin_stmt, *commit_stmt;
static sqlite3_int64 next_seq = 1;
static volatile sig_atomic_t stopping;

static struct ys_parked *parked_head, *parked_tail;  /* only the loop thread touches them */

static void commit_parked(void)
{
    struct ys_parked *batch = parked_head;
    if (!batch) return;
    parked_head = parked_tail = NULL;
    ys_commit_and_resume(db, begin_stmt, upsert, commit_stmt, &next_seq, batch);
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                               const char *version, const char *upload, size_t *upload_size, void **req_cls)
{
    (void)cls; (void)version;
    if (*req_cls == NULL) { *req_cls = calloc(1, sizeof(struct ys_parked)); return MHD_YES; }
    struct ys_parked *r = *req_cls;
    if (*upload_size) {
        ys_take_upload(r->body, &r->n, sizeof r->body, upload, upload_size);
        return MHD_YES;
    }
    if (strcmp(method, "GET") == 0) return MHD_queue_response(c, MHD_HTTP_OK, fixed);
    if (r->parked) {  /* resumed after the commit */
        if (r->failed) return MHD_NO;
        return MHD_queue_response(c, MHD_HTTP_OK, small);
    }
    ys_park(r, c, url);
    if (parked_tail) parked_tail->next = r; else parked_head = r;
    parked_tail = r;
    return MHD_YES;
}

static void completed(void *cls, struct MHD_Connection *c, void **req_cls, enum MHD_RequestTerminationCode t)
{ (void)cls; (void)c; (void)t; free(*req_cls); *req_cls = NULL; }

static void on_signal(int sig) { (void)sig; stopping = 1; }

int main(int argc, char **argv)
{
    if (argc < 5) { fprintf(stderr, "usage: %s PORT THREADS BODY_BYTES DB_FILE\n", argv[0]); return 2; }
    unsigned port = (unsigned)atoi(argv[1]);
    if (atoi(argv[2]) != 1) { fprintf(stderr, "sqlite_loopbatch runs one loop thread (THREADS 1)\n"); return 2; }
    char *body = ys_fixed_json((size_t)atol(argv[3]));
    fixed = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_PERSISTENT);
    ys_decision_headers(fixed);
    small = ys_event_reply();

    ys_sqlite_open(argv[4], &db, &upsert);
    begin_stmt = ys_sqlite_prepare(db, "BEGIN IMMEDIATE");
    commit_stmt = ys_sqlite_prepare(db, "COMMIT");
    static struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t)port);
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    struct MHD_Daemon *d = MHD_start_daemon(  /* no internal thread: this thread runs the loop */
        MHD_USE_EPOLL | MHD_USE_ITC | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG,
        (uint16_t)port, NULL, NULL, handler, NULL,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned int)4096,
        MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned int)1024,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)30,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)10240,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
        MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
        MHD_OPTION_END);
    if (!d) { fprintf(stderr, "cannot start libmicrohttpd on port %u\n", port); return 1; }
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    printf("{\"msg\":\"listening\",\"server\":\"sqlite_loopbatch\",\"port\":%u}\n", port);
    fflush(stdout);
    while (!stopping) {
        MHD_run_wait(d, parked_head ? 0 : 500);  /* waits for readiness (at most 0.5 s, for the stop flag) */
        commit_parked();
    }
    commit_parked();
    MHD_run(d);
    MHD_stop_daemon(d);
    return 0;
}

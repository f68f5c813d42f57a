/* Yardstick (c), the hand-off design in C: sqlite_upsert's routes, answers and SQL, but built as sheetd
 * builds its event path. The libmicrohttpd worker parks every POST/PUT (MHD_suspend_connection) and
 * queues it for ONE writer thread, which takes everything queued, runs the upserts in one BEGIN
 * IMMEDIATE transaction, commits once and resumes the parked connections; the worker then answers.
 * No parsing beyond sqlite_upsert's, no user state, no policy: what it costs above sqlite_upsert is
 * the price of group commit's hand-off itself (suspend, two thread wake-ups, resume), the floor under
 * any design that answers after a group commit on another thread. Used by bench/handoff.sh.
 * usage: sqlite_handoff PORT THREADS BODY_BYTES DB_FILE */
#include <pthread.h>
#include "common.h"
#include "sqlite_common.h"

static struct MHD_Response *fixed, *small;
static sqlite3 *db;
static sqlite3_stmt *upsert, *begin_stmt, *commit_stmt;
static sqlite3_int64 next_seq = 1;  /* the writer's own */

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_ready = PTHREAD_COND_INITIALIZER;
static struct ys_parked *queue_head, *queue_tail;
static int writer_waiting;

static void *writer(void *unused)
{
    (void)unused;
    for (;;) {
        pthread_mutex_lock(&queue_lock);
        while (!queue_head) { writer_waiting = 1; pthread_cond_wait(&queue_ready, &queue_lock); }
        writer_waiting = 0;
        struct ys_parked *batch = queue_head;
        queue_head = queue_tail = NULL;
        pthread_mutex_unlock(&queue_lock);
        ys_commit_and_resume(db, begin_stmt, upsert, commit_stmt, &next_seq, batch);
    }
    return NULL;
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
    pthread_mutex_lock(&queue_lock);
    if (queue_tail) queue_tail->next = r; else queue_head = r;
    queue_tail = r;
    if (writer_waiting) pthread_cond_signal(&queue_ready);
    pthread_mutex_unlock(&queue_lock);
    return MHD_YES;
}

static void completed(void *cls, struct MHD_Connection *c, void **req_cls, enum MHD_RequestTerminationCode t)
{ (void)cls; (void)c; (void)t; free(*req_cls); *req_cls = NULL; }

int main(int argc, char **argv)
{
    if (argc < 5) { fprintf(stderr, "usage: %s PORT THREADS BODY_BYTES DB_FILE\n", argv[0]); return 2; }
    unsigned port = (unsigned)atoi(argv[1]), threads = (unsigned)atoi(argv[2]);
    char *body = ys_fixed_json((size_t)atol(argv[3]));
    fixed = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_PERSISTENT);
    ys_decision_headers(fixed);
    small = ys_event_reply();

    ys_sqlite_open(argv[4], &db, &upsert);
    begin_stmt = ys_sqlite_prepare(db, "BEGIN IMMEDIATE");
    commit_stmt = ys_sqlite_prepare(db, "COMMIT");
    pthread_t w;
    pthread_create(&w, NULL, writer, NULL);
    pthread_detach(w);
    ys_serve(ys_start(port, threads, handler, completed), "sqlite_handoff", port);
    return 0;  /* the writer thread still owns the connection: the process exits with it */
}

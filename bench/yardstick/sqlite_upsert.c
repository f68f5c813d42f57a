/* Yardstick (b), the storage ceiling of this design: libmicrohttpd in sheetd's threading mode; every
 * POST/PUT runs one SQLite UPSERT (its own autocommit transaction) through a single writer connection
 * behind a mutex, WAL + synchronous=NORMAL, and answers a small JSON body after the commit. GETs get
 * the fixed decision-sized JSON (so it also serves as the yardstick of the 80/15/5 mix).
 * Every upsert stores the next write sequence number (seq): SQLite skips rewriting a row whose bytes
 * do not change, and a commit with no changed page appends nothing to the WAL, so without it a POST
 * (always count 1) or a repeated PUT count would cost no write at all. YARDSTICK_SEQ=0 restores that
 * behaviour (seq stays NULL), for comparisons with figures recorded before.
 * usage: sqlite_upsert PORT THREADS BODY_BYTES DB_FILE */
#include <pthread.h>
#include "common.h"
#include "sqlite_common.h"

static struct MHD_Response *fixed, *small;
static sqlite3 *db;
static sqlite3_stmt *upsert;
static pthread_mutex_t writer = PTHREAD_MUTEX_INITIALIZER;
static sqlite3_int64 next_seq = 1;  /* under `writer` */
static int use_seq = 1;

struct req { size_t n; char body[512]; };

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                               const char *version, const char *upload, size_t *upload_size, void **req_cls)
{
    (void)cls; (void)version;
    if (*req_cls == NULL) { *req_cls = calloc(1, sizeof(struct req)); return MHD_YES; }
    struct req *r = *req_cls;
    if (*upload_size) {
        ys_take_upload(r->body, &r->n, sizeof r->body, upload, upload_size);
        return MHD_YES;
    }
    if (strcmp(method, "GET") == 0) return MHD_queue_response(c, MHD_HTTP_OK, fixed);
    /* /v1/users/{u}/containers/{c}/count or /v1/users/{u}/dismissals */
    char user[129], container[129];
    long count;
    ys_event_target(url, r->body, user, container, &count);
    pthread_mutex_lock(&writer);
    sqlite3_bind_text(upsert, 1, user, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(upsert, 2, container, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(upsert, 3, count);
    if (use_seq) sqlite3_bind_int64(upsert, 4, next_seq++); else sqlite3_bind_null(upsert, 4);
    int rc = sqlite3_step(upsert);
    sqlite3_reset(upsert);
    pthread_mutex_unlock(&writer);
    if (rc != SQLITE_DONE) { fprintf(stderr, "upsert: %s\n", sqlite3_errmsg(db)); return MHD_NO; }
    return MHD_queue_response(c, MHD_HTTP_OK, small);
}

static void completed(void *cls, struct MHD_Connection *c, void **req_cls, enum MHD_RequestTerminationCode t)
{ (void)cls; (void)c; (void)t; free(*req_cls); *req_cls = NULL; }

int main(int argc, char **argv)
{
    if (argc < 5) { fprintf(stderr, "usage: %s PORT THREADS BODY_BYTES DB_FILE\n", argv[0]); return 2; }
    unsigned port = (unsigned)atoi(argv[1]), threads = (unsigned)atoi(argv[2]);
    const char *seq_env = getenv("YARDSTICK_SEQ");
    use_seq = !(seq_env && strcmp(seq_env, "0") == 0);
    char *body = ys_fixed_json((size_t)atol(argv[3]));
    fixed = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_PERSISTENT);
    ys_decision_headers(fixed);
    small = ys_event_reply();

    ys_sqlite_open(argv[4], &db, &upsert);
    ys_serve(ys_start(port, threads, handler, completed), "sqlite_upsert", port);
    sqlite3_finalize(upsert);
    sqlite3_close(db);
    return 0;
}

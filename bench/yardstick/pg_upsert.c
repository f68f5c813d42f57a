/* Yardstick (c), PostgreSQL's ceiling for one commit per request: libmicrohttpd in sheetd's threading
 * mode; every POST/PUT runs one UPSERT (autocommit, so its own transaction and commit, with
 * synchronous_commit on) through ONE libpq connection behind a mutex, a prepared statement, and
 * answers a small JSON body after the commit. GETs get the fixed decision-sized JSON.
 * usage: pg_upsert PORT THREADS BODY_BYTES CONNINFO */
#include <pthread.h>
#include <libpq-fe.h>
#include "common.h"

static struct MHD_Response *fixed, *small;
static PGconn *db;
static pthread_mutex_t writer = PTHREAD_MUTEX_INITIALIZER;

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
    char user[129], container[129], count[24];
    long n;
    ys_event_target(url, r->body, user, container, &n);
    snprintf(count, sizeof count, "%ld", n);
    const char *values[3] = {user, container, count};
    pthread_mutex_lock(&writer);
    PGresult *res = PQexecPrepared(db, "upsert", 3, values, NULL, NULL, 0);
    int ok = PQresultStatus(res) == PGRES_COMMAND_OK;
    if (!ok) fprintf(stderr, "upsert: %s", PQerrorMessage(db));
    PQclear(res);
    pthread_mutex_unlock(&writer);
    if (!ok) return MHD_NO;
    return MHD_queue_response(c, MHD_HTTP_OK, small);
}

static void completed(void *cls, struct MHD_Connection *c, void **req_cls, enum MHD_RequestTerminationCode t)
{ (void)cls; (void)c; (void)t; free(*req_cls); *req_cls = NULL; }

int main(int argc, char **argv)
{
    if (argc < 5) { fprintf(stderr, "usage: %s PORT THREADS BODY_BYTES CONNINFO\n", argv[0]); return 2; }
    unsigned port = (unsigned)atoi(argv[1]), threads = (unsigned)atoi(argv[2]);
    char *body = ys_fixed_json((size_t)atol(argv[3]));
    fixed = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_PERSISTENT);
    ys_decision_headers(fixed);
    small = ys_event_reply();

    db = PQconnectdb(argv[4]);
    if (PQstatus(db) != CONNECTION_OK) { fprintf(stderr, "connect: %s", PQerrorMessage(db)); return 1; }
    PGresult *res = PQexec(db,
        "SET synchronous_commit = on;"
        "CREATE TABLE IF NOT EXISTS yardstick_counts (user_id text NOT NULL, container_id text NOT NULL,"
        " filter text NOT NULL DEFAULT '', count bigint NOT NULL, seq bigint,"
        " PRIMARY KEY (user_id, container_id, filter))");
    if (PQresultStatus(res) != PGRES_COMMAND_OK) { fprintf(stderr, "schema: %s", PQerrorMessage(db)); return 1; }
    PQclear(res);
    res = PQprepare(db, "upsert",
        "INSERT INTO yardstick_counts (user_id, container_id, filter, count, seq) VALUES ($1, $2, '', $3, NULL)"
        " ON CONFLICT (user_id, container_id, filter) DO UPDATE SET count = excluded.count, seq = excluded.seq",
        3, NULL);
    if (PQresultStatus(res) != PGRES_COMMAND_OK) { fprintf(stderr, "prepare: %s", PQerrorMessage(db)); return 1; }
    PQclear(res);
    ys_serve(ys_start(port, threads, handler, completed), "pg_upsert", port);
    PQfinish(db);
    return 0;
}

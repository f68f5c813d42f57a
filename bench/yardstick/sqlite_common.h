/* Shared by the SQLite yardsticks: the database, its one table and the UPSERT every event runs. */
#include <sqlite3.h>

/* Opens path (WAL, synchronous=NORMAL), creates container_counts if needed and prepares the UPSERT:
 * ?1 user, ?2 container, ?3 count, ?4 seq. Exits on failure. */
static inline void ys_sqlite_open(const char *path, sqlite3 **db, sqlite3_stmt **upsert)
{
    if (sqlite3_open_v2(path, db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        fprintf(stderr, "open %s: %s\n", path, sqlite3_errmsg(*db)); exit(1);
    }
    char *err = NULL;
    if (sqlite3_exec(*db,
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=5000;"
            "CREATE TABLE IF NOT EXISTS container_counts (user_id TEXT NOT NULL, container_id TEXT NOT NULL,"
            " filter TEXT NOT NULL DEFAULT '', count INTEGER NOT NULL, seq INTEGER,"
            " PRIMARY KEY (user_id, container_id, filter)) STRICT, WITHOUT ROWID;", NULL, NULL, &err) != SQLITE_OK) {
        fprintf(stderr, "schema: %s\n", err); exit(1);
    }
    if (sqlite3_prepare_v2(*db,
            "INSERT INTO container_counts (user_id, container_id, filter, count, seq) VALUES (?1, ?2, '', ?3, ?4)"
            " ON CONFLICT (user_id, container_id, filter) DO UPDATE SET count = excluded.count, seq = excluded.seq",
            -1, upsert, NULL) != SQLITE_OK) {
        fprintf(stderr, "prepare: %s\n", sqlite3_errmsg(*db)); exit(1);
    }
}

/* Prepares a statement of the yardstick's own (BEGIN IMMEDIATE, COMMIT). Exits on failure. */
static inline sqlite3_stmt *ys_sqlite_prepare(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) { fprintf(stderr, "prepare: %s\n", sqlite3_errmsg(db)); exit(1); }
    return s;
}

/* An event request that waits for a batch's commit (sqlite_handoff, sqlite_loopbatch). */
struct ys_parked {
    size_t n;
    char body[512];
    char user[129], container[129];
    long count;
    int parked, failed;
    struct MHD_Connection *connection;
    struct ys_parked *next;
};

/* Parks the request's connection (suspended before any other thread can see r, so a resume never
 * precedes its suspend); the caller then lists r for a batch. */
static inline void ys_park(struct ys_parked *r, struct MHD_Connection *c, const char *url)
{
    ys_event_target(url, r->body, r->user, r->container, &r->count);
    r->parked = 1;
    r->connection = c;
    r->next = NULL;
    MHD_suspend_connection(c);
}

/* Runs a batch's upserts in one BEGIN IMMEDIATE transaction (each with the next of *seq), commits
 * once, then resumes every connection (which then answers, or fails a request whose upsert did). */
static inline void ys_commit_and_resume(sqlite3 *db, sqlite3_stmt *begin, sqlite3_stmt *upsert, sqlite3_stmt *commit,
                                        sqlite3_int64 *seq, struct ys_parked *batch)
{
    int rc = sqlite3_step(begin);
    sqlite3_reset(begin);
    for (struct ys_parked *r = batch; r; r = r->next) {
        sqlite3_bind_text(upsert, 1, r->user, -1, SQLITE_STATIC);
        sqlite3_bind_text(upsert, 2, r->container, -1, SQLITE_STATIC);
        sqlite3_bind_int64(upsert, 3, r->count);
        sqlite3_bind_int64(upsert, 4, (*seq)++);
        r->failed = sqlite3_step(upsert) != SQLITE_DONE || rc != SQLITE_DONE;
        sqlite3_reset(upsert);
    }
    if (sqlite3_step(commit) != SQLITE_DONE) { fprintf(stderr, "commit: %s\n", sqlite3_errmsg(db)); exit(1); }
    sqlite3_reset(commit);
    for (struct ys_parked *r = batch, *next; r; r = next) {
        next = r->next;  /* r belongs to its connection again once resumed */
        MHD_resume_connection(r->connection);
    }
}

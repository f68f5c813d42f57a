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

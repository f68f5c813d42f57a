#ifndef CLIBPQ_SHIM_H
#define CLIBPQ_SHIM_H

#include <libpq-fe.h>

/// PG_DIAG_SQLSTATE is a character-literal macro, which Swift does not import.
static inline int cpq_diag_sqlstate(void) { return PG_DIAG_SQLSTATE; }

/// A notice processor that drops notices: libpq's default writes them to stderr, which is the
/// service's log stream (JSON lines only).
static void cpq_ignore_notice(void *arg, const char *message) { (void)arg; (void)message; }
static inline void cpq_silence_notices(PGconn *conn) { PQsetNoticeProcessor(conn, cpq_ignore_notice, 0); }

#endif

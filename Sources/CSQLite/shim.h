#ifndef SHEETD_CSQLITE_SHIM_H
#define SHEETD_CSQLITE_SHIM_H
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a macro casting -1 to a function pointer; Swift cannot import it.
/// Always used when binding Swift strings: their C pointer only lives for the call.
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }

#endif

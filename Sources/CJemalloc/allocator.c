// sheetd's allocator: Debian's jemalloc, linked into the executable so that it serves every malloc
// of the process (Swift runtime, libmicrohttpd, SQLite): less CPU per request than glibc's malloc in
// the request mix, for a little more peak RSS (the figures: BENCHMARKS.md, docs/benchmarks-history.md).
#include "cjemalloc.h"
#include <jemalloc/jemalloc.h>
#include <stdio.h>

// Read by jemalloc when it initializes, before main: one arena, and dirty pages returned to the
// kernel at once (no decay timer): the gain is from these options, jemalloc with its defaults saved
// nothing (measured with one worker: docs/benchmarks-history.md, "jemalloc").
const char *malloc_conf = "narenas:1,dirty_decay_ms:0,muzzy_decay_ms:0";

int cjemalloc_describe(char *buffer, size_t size) {
    const char *version = NULL;
    unsigned narenas = 0;
    size_t length = sizeof version;
    if (mallctl("version", &version, &length, NULL, 0) != 0 || version == NULL) return -1;
    length = sizeof narenas;
    if (mallctl("opt.narenas", &narenas, &length, NULL, 0) != 0) return -1;
    return snprintf(buffer, size, "jemalloc %s (narenas %u)", version, narenas) > 0 ? 0 : -1;
}

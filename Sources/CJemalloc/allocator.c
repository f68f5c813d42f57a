// sheetd's allocator: Debian's jemalloc, linked into the executable so that it serves every malloc
// of the process (Swift runtime, libmicrohttpd, SQLite). In the 80/15/5 mix it costs about 1.4 us
// less CPU per request than glibc's malloc, for about 3 MiB more peak RSS (BENCHMARKS.md).
#include "cjemalloc.h"
#include <jemalloc/jemalloc.h>
#include <stdio.h>

// Read by jemalloc when it initializes, before main: one arena, and dirty pages returned to the
// kernel at once (no decay timer). Measured in the mix with one worker: these options saved
// 1.2-1.4 us per request, jemalloc's defaults nothing (docs/benchmarks-history.md).
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

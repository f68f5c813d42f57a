#ifndef CJEMALLOC_H
#define CJEMALLOC_H

#include <stddef.h>

/// Writes "jemalloc <version> (narenas <n>)", as jemalloc's `mallctl` reports them, into `buffer`
/// (narenas 1 shows that the options `malloc_conf` sets were read); returns 0 then, -1 otherwise.
int cjemalloc_describe(char *buffer, size_t size);

#endif

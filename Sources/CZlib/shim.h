#ifndef CZLIB_SHIM_H
#define CZLIB_SHIM_H

#include <zlib.h>
#include <string.h>

/// One-shot gzip (RFC 1952) of `count` bytes into `out` (`capacity` bytes, at least
/// `czlib_gzip_bound(count)`): the written length, or 0 on failure. `deflateInit2` is a macro Swift
/// cannot call; window bits 15 + 16 select the gzip wrapper.
static inline size_t czlib_gzip(const void *bytes, size_t count, void *out, size_t capacity, int level)
{
    z_stream stream;
    memset(&stream, 0, sizeof stream);
    if (deflateInit2(&stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return 0;
    stream.next_in = (Bytef *)bytes;
    stream.avail_in = (uInt)count;
    stream.next_out = (Bytef *)out;
    stream.avail_out = (uInt)capacity;
    int rc = deflate(&stream, Z_FINISH);
    size_t written = stream.total_out;
    deflateEnd(&stream);
    return rc == Z_STREAM_END ? written : 0;
}

/// An upper bound of `czlib_gzip`'s output for `count` bytes (deflateBound plus the gzip wrapper).
static inline size_t czlib_gzip_bound(size_t count)
{
    return compressBound((uLong)count) + 18;
}

#endif

/* Yardstick (a), the HTTP ceiling: libmicrohttpd in sheetd's threading mode answering every GET and
 * POST/PUT (body consumed) with one fixed JSON body of the decision's typical size.
 * usage: http_fixed PORT THREADS BODY_BYTES */
#include <pthread.h>
#include "common.h"

static struct MHD_Response *fixed;

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                               const char *version, const char *upload, size_t *upload_size, void **req_cls)
{
    (void)cls; (void)url; (void)method; (void)version; (void)upload;
    if (*req_cls == NULL) { *req_cls = (void *)1; return MHD_YES; }   /* answer on the 2nd call: keep-alive */
    if (*upload_size) { *upload_size = 0; return MHD_YES; }
    return MHD_queue_response(c, MHD_HTTP_OK, fixed);
}

static void completed(void *cls, struct MHD_Connection *c, void **req_cls, enum MHD_RequestTerminationCode t)
{ (void)cls; (void)c; (void)t; *req_cls = NULL; }

int main(int argc, char **argv)
{
    if (argc < 4) { fprintf(stderr, "usage: %s PORT THREADS BODY_BYTES\n", argv[0]); return 2; }
    unsigned port = (unsigned)atoi(argv[1]), threads = (unsigned)atoi(argv[2]);
    size_t n = (size_t)atol(argv[3]);
    char *body = ys_fixed_json(n);
    fixed = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_PERSISTENT);
    ys_decision_headers(fixed);
    ys_serve(ys_start(port, threads, handler, completed), "http_fixed", port);
    return 0;
}

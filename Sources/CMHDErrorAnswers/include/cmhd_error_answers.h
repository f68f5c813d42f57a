#ifndef CMHD_ERROR_ANSWERS_H
#define CMHD_ERROR_ANSWERS_H

#include <stddef.h>

struct MHD_Response;

/// Builds the answer that replaces one libmicrohttpd builds itself: `status` as MHD queues it,
/// `detail`/`detail_length` the text of MHD's own HTML body (its <body>, without markup), `socket` the
/// connection's. Returns a response the caller owns (it is queued, then destroyed once), or NULL to
/// keep MHD's.
typedef struct MHD_Response *(*cmhd_error_answer_builder)(unsigned int status, const char *detail, size_t detail_length, int socket);

/// Installs `builder` for the whole process (NULL: MHD's own answers again). Until then nothing changes.
void cmhd_set_error_answer_builder(cmhd_error_answer_builder builder);

/// Answers replaced so far (for tests and metrics).
unsigned long cmhd_error_answers_replaced(void);

#endif

#ifndef SHEETD_CCRYPTO_SHIM_H
#define SHEETD_CCRYPTO_SHIM_H
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>

/// SHA-256 of `count` bytes into `out` (32 bytes) through the low-level interface, on a context on
/// the stack. OpenSSL 3's one-shot SHA256() goes through EVP_Q_digest, which fetches the algorithm
/// by name (a locked table lookup) and allocates and frees a context on every call; the low-level
/// functions run the same block code (SHA extensions included) with none of that. They are
/// deprecated in OpenSSL 3 in favour of EVP, hence the pragma.
static inline void ccrypto_sha256(const void *bytes, size_t count, unsigned char *out)
{
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    SHA256_CTX context;
    SHA256_Init(&context);
    SHA256_Update(&context, bytes, count);
    SHA256_Final(out, &context);
    OPENSSL_cleanse(&context, sizeof context);
#pragma GCC diagnostic pop
}
#endif

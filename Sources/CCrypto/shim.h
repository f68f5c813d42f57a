#ifndef SHEETD_CCRYPTO_SHIM_H
#define SHEETD_CCRYPTO_SHIM_H
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>

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

/// A fresh key pair: EVP_PKEY_Q_keygen is variadic, so one typed wrapper per kind of key.
static inline EVP_PKEY *ccrypto_generate_rsa(unsigned bits) { return EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)bits); }
static inline EVP_PKEY *ccrypto_generate_p256(void) { return EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256"); }
static inline EVP_PKEY *ccrypto_generate_ed25519(void) { return EVP_PKEY_Q_keygen(NULL, NULL, "ED25519"); }

/// A public key from parameters built by `build` (OpenSSL 3's provider-native construction, which
/// also checks them: an EC point must lie on its curve); NULL when OpenSSL refuses them.
static inline EVP_PKEY *ccrypto_public_key_from_params(const char *type, OSSL_PARAM_BLD *build)
{
    EVP_PKEY *key = NULL;
    OSSL_PARAM *params = OSSL_PARAM_BLD_to_param(build);
    EVP_PKEY_CTX *context = EVP_PKEY_CTX_new_from_name(NULL, type, NULL);
    if (params != NULL && context != NULL && EVP_PKEY_fromdata_init(context) == 1) {
        if (EVP_PKEY_fromdata(context, &key, EVP_PKEY_PUBLIC_KEY, params) != 1) key = NULL;
    }
    EVP_PKEY_CTX_free(context);
    OSSL_PARAM_free(params);
    return key;
}

/// An RSA public key from its big-endian modulus and exponent (a JWK's `n` and `e`).
static inline EVP_PKEY *ccrypto_rsa_public_key(const unsigned char *n, size_t n_count, const unsigned char *e, size_t e_count)
{
    EVP_PKEY *key = NULL;
    BIGNUM *modulus = BN_bin2bn(n, (int)n_count, NULL), *exponent = BN_bin2bn(e, (int)e_count, NULL);
    OSSL_PARAM_BLD *build = OSSL_PARAM_BLD_new();
    if (modulus != NULL && exponent != NULL && build != NULL && OSSL_PARAM_BLD_push_BN(build, OSSL_PKEY_PARAM_RSA_N, modulus) == 1
        && OSSL_PARAM_BLD_push_BN(build, OSSL_PKEY_PARAM_RSA_E, exponent) == 1)
        key = ccrypto_public_key_from_params("RSA", build);
    OSSL_PARAM_BLD_free(build);
    BN_free(modulus);
    BN_free(exponent);
    return key;
}

/// A P-256 public key from its uncompressed point (0x04 || x || y, 65 bytes).
static inline EVP_PKEY *ccrypto_p256_public_key(const unsigned char *point, size_t count)
{
    EVP_PKEY *key = NULL;
    OSSL_PARAM_BLD *build = OSSL_PARAM_BLD_new();
    if (build != NULL && OSSL_PARAM_BLD_push_utf8_string(build, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0) == 1
        && OSSL_PARAM_BLD_push_octet_string(build, OSSL_PKEY_PARAM_PUB_KEY, point, count) == 1)
        key = ccrypto_public_key_from_params("EC", build);
    OSSL_PARAM_BLD_free(build);
    return key;
}

/// A big-number parameter of a key (`n`, `e`, `qx`, `qy`) as `count` big-endian bytes, left-padded
/// with zeros when `count` is larger than needed (0 bytes written: absent or too long).
static inline int ccrypto_key_bn_param(const EVP_PKEY *key, const char *name, unsigned char *out, int count)
{
    BIGNUM *value = NULL;
    if (EVP_PKEY_get_bn_param(key, name, &value) != 1) return 0;
    int written = BN_num_bytes(value) <= count ? BN_bn2binpad(value, out, count) : 0;
    BN_free(value);
    return written < 0 ? 0 : written;
}

/// The bytes of a big-number parameter of a key (0 when absent).
static inline int ccrypto_key_bn_param_size(const EVP_PKEY *key, const char *name)
{
    BIGNUM *value = NULL;
    if (EVP_PKEY_get_bn_param(key, name, &value) != 1) return 0;
    int count = BN_num_bytes(value);
    BN_free(value);
    return count;
}

/// A JWS ES256 signature (r || s, 32 bytes each) as the DER ECDSA-Sig-Value OpenSSL verifies;
/// returns the DER's length (0 on failure), written to `out` (at least 72 bytes).
static inline int ccrypto_es256_raw_to_der(const unsigned char *raw, unsigned char *out)
{
    ECDSA_SIG *signature = ECDSA_SIG_new();
    BIGNUM *r = BN_bin2bn(raw, 32, NULL), *s = BN_bin2bn(raw + 32, 32, NULL);
    if (signature == NULL || r == NULL || s == NULL || ECDSA_SIG_set0(signature, r, s) != 1) {
        BN_free(r);
        BN_free(s);
        ECDSA_SIG_free(signature);
        return 0;
    }
    int count = i2d_ECDSA_SIG(signature, NULL);
    if (count > 0 && count <= 72) count = i2d_ECDSA_SIG(signature, &out);
    else count = 0;
    ECDSA_SIG_free(signature);
    return count;
}

/// The DER ECDSA-Sig-Value OpenSSL signs as a JWS ES256 signature (r || s, 32 bytes each).
static inline int ccrypto_es256_der_to_raw(const unsigned char *der, long count, unsigned char *raw)
{
    ECDSA_SIG *signature = d2i_ECDSA_SIG(NULL, &der, count);
    if (signature == NULL) return 0;
    int ok = BN_bn2binpad(ECDSA_SIG_get0_r(signature), raw, 32) == 32 && BN_bn2binpad(ECDSA_SIG_get0_s(signature), raw + 32, 32) == 32;
    ECDSA_SIG_free(signature);
    return ok;
}

/// The bytes a memory BIO holds (BIO_get_mem_data is a macro).
static inline long ccrypto_bio_contents(BIO *bio, char **bytes) { return BIO_get_mem_data(bio, bytes); }
#endif

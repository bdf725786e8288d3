#ifndef PROVISIONER_COPENSSL_SHIM_H
#define PROVISIONER_COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/ec.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/pem.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <openssl/rand.h>
#include <openssl/err.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/param_build.h>
#include <openssl/kdf.h>

/* Swift cannot call function-like macros; these wrappers expose the few the Contract module uses. */

/* OPENSSL_free(addr) expands to CRYPTO_free(addr, __FILE__, __LINE__). */
static inline void shim_OPENSSL_free(void *address) {
    OPENSSL_free(address);
}

/* BIO_get_mem_data(b, pp) expands to BIO_ctrl(b, BIO_CTRL_INFO, 0, (char *)(pp)). */
static inline long shim_BIO_get_mem_data(BIO *bio, char **data) {
    return BIO_get_mem_data(bio, data);
}

/* EVP_EC_gen(curve) expands to a variadic EVP_PKEY_Q_keygen call, which Swift cannot make. */
static inline EVP_PKEY *shim_EVP_EC_gen(const char *curve) {
    return EVP_EC_gen(curve);
}
/* EVP_PKEY_PUBLIC_KEY and EVP_PKEY_KEYPAIR are composed macros the importer does not evaluate. */
static inline int shim_EVP_PKEY_PUBLIC_KEY(void) {
    return EVP_PKEY_PUBLIC_KEY;
}

static inline int shim_EVP_PKEY_KEYPAIR(void) {
    return EVP_PKEY_KEYPAIR;
}
/* OSSL_PARAM builders keep the key pointer, so keys must have static storage; a Swift string
   bridged to `const char *` lives only for one call. These return the header's string literals. */
static inline const char *shim_OSSL_PKEY_PARAM_GROUP_NAME(void) {
    return OSSL_PKEY_PARAM_GROUP_NAME;
}

static inline const char *shim_OSSL_PKEY_PARAM_PUB_KEY(void) {
    return OSSL_PKEY_PARAM_PUB_KEY;
}

static inline const char *shim_OSSL_PKEY_PARAM_PRIV_KEY(void) {
    return OSSL_PKEY_PARAM_PRIV_KEY;
}

static inline const char *shim_OSSL_MAC_PARAM_DIGEST(void) {
    return OSSL_MAC_PARAM_DIGEST;
}
#endif

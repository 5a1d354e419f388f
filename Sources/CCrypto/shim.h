#ifndef NOTESFS_CCRYPTO_SHIM_H
#define NOTESFS_CCRYPTO_SHIM_H

// libcrypto (OpenSSL 3) for SHA-256 (RecordStore) and for the ciphers of end-to-end encrypted
// sync (Sync: AES-256-GCM, HMAC-SHA256, scrypt, the random generator). The SHA256_* calls are deprecated in favour of EVP, but
// their context is a plain struct (value semantics, no allocation) and they run the same
// accelerated code (SHA-NI, AVX2); this keeps the deprecation attributes off them.
//
// libcrypto's declarations only: the library is not linked but loaded (dlopen) the first time a
// digest is taken, so that the commands which never hash (most) do not pay at every start for
// loading it and resolving its thousands of symbols. RecordStore's SHA256 calls it only through
// a ccrypto_library, the sync engine's encryption only through a ccrypto_cipher_library: two
// tables, so that each loads only what it calls and a command that only hashes resolves no cipher.
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <dlfcn.h>
#include <stddef.h>
#include <openssl/opensslv.h>
#include <openssl/sha.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>

// The soname of the libcrypto these headers belong to (a plain string, so that Swift imports it).
#define CCRYPTO_SONAME "libcrypto.so.3"
_Static_assert(OPENSSL_SHLIB_VERSION == 3, "CCRYPTO_SONAME names OpenSSL 3's libcrypto");

// Every libcrypto function RecordStore calls. Their types come from openssl/sha.h.
#define CCRYPTO_FUNCTIONS(X) X(SHA256_Init) X(SHA256_Update) X(SHA256_Final)

// Every libcrypto function the sync engine's encryption calls. Their types come from
// openssl/evp.h (AES-256-GCM, SHA-256 for HMAC), hmac.h (the one-shot HMAC), kdf.h
// (EVP_PBE_scrypt), rand.h and err.h: a failed call leaves its reasons
// in the thread's error queue, which ERR_get_error and ERR_error_string_n read for the message
// and ERR_clear_error empties (else it grows, and a later call's failure reads a stale reason).
#define CCRYPTO_CIPHER_FUNCTIONS(X) \
    X(EVP_CIPHER_CTX_new) X(EVP_CIPHER_CTX_free) X(EVP_CIPHER_CTX_ctrl) X(EVP_aes_256_gcm) \
    X(EVP_EncryptInit_ex) X(EVP_EncryptUpdate) X(EVP_EncryptFinal_ex) \
    X(EVP_DecryptInit_ex) X(EVP_DecryptUpdate) X(EVP_DecryptFinal_ex) \
    X(EVP_sha256) X(HMAC) X(EVP_PBE_scrypt) X(RAND_bytes) \
    X(ERR_get_error) X(ERR_error_string_n) X(ERR_clear_error)

// libcrypto's functions, resolved from the loaded library: one field per function, named and
// typed as the header declares it.
#define CCRYPTO_FIELD(name) __typeof__(&name) name;
struct ccrypto_library {
    CCRYPTO_FUNCTIONS(CCRYPTO_FIELD)
};

// The cipher functions, as ccrypto_library holds the digest's.
struct ccrypto_cipher_library {
    CCRYPTO_CIPHER_FUNCTIONS(CCRYPTO_FIELD)
};
#undef CCRYPTO_FIELD

// Resolves the function `name` from `handle` (dlsym) into the field of the same name of
// `library`; returns dlerror()'s message from the loader when it is missing.
#define CCRYPTO_RESOLVE(name) \
    if ((library->name = (__typeof__(&name))dlsym(handle, #name)) == NULL) return dlerror();

// Loads libcrypto (dlopen, RTLD_LOCAL) and fills `library` (dlsym). Returns NULL when every
// function was found, else dlerror()'s message. A loaded library stays loaded.
static inline const char *ccrypto_load(struct ccrypto_library *library) {
    void *handle = dlopen(CCRYPTO_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) return dlerror();
    CCRYPTO_FUNCTIONS(CCRYPTO_RESOLVE)
    return NULL;
}

// Loads libcrypto as ccrypto_load does (the same handle when it is loaded already: dlopen counts
// references) and fills `library` with the cipher functions. NULL when all were found, else
// dlerror()'s message.
static inline const char *ccrypto_load_ciphers(struct ccrypto_cipher_library *library) {
    void *handle = dlopen(CCRYPTO_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) return dlerror();
    CCRYPTO_CIPHER_FUNCTIONS(CCRYPTO_RESOLVE)
    return NULL;
}
#undef CCRYPTO_RESOLVE

#endif

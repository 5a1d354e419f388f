#ifndef NOTESFS_CCRYPTO_SHIM_H
#define NOTESFS_CCRYPTO_SHIM_H

// libcrypto (OpenSSL 3) for SHA-256. The SHA256_* calls are deprecated in favour of EVP, but
// their context is a plain struct (value semantics, no allocation) and they run the same
// accelerated code (SHA-NI, AVX2); this keeps the deprecation attributes off them.
//
// libcrypto's declarations only: the library is not linked but loaded (dlopen) the first time a
// digest is taken, so that the commands which never hash (most) do not pay at every start for
// loading it and resolving its thousands of symbols. RecordStore's SHA256 calls it only through
// a ccrypto_library.
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <dlfcn.h>
#include <stddef.h>
#include <openssl/opensslv.h>
#include <openssl/sha.h>

// The soname of the libcrypto these headers belong to (a plain string, so that Swift imports it).
#define CCRYPTO_SONAME "libcrypto.so.3"
_Static_assert(OPENSSL_SHLIB_VERSION == 3, "CCRYPTO_SONAME names OpenSSL 3's libcrypto");

// Every libcrypto function RecordStore calls. Their types come from openssl/sha.h.
#define CCRYPTO_FUNCTIONS(X) X(SHA256_Init) X(SHA256_Update) X(SHA256_Final)

// libcrypto's functions, resolved from the loaded library: one field per function, named and
// typed as the header declares it.
struct ccrypto_library {
#define CCRYPTO_FIELD(name) __typeof__(&name) name;
    CCRYPTO_FUNCTIONS(CCRYPTO_FIELD)
#undef CCRYPTO_FIELD
};

// Loads libcrypto (dlopen, RTLD_LOCAL) and fills `library` (dlsym). Returns NULL when every
// function was found, else dlerror()'s message. A loaded library stays loaded.
static inline const char *ccrypto_load(struct ccrypto_library *library) {
    void *handle = dlopen(CCRYPTO_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) return dlerror();
#define CCRYPTO_RESOLVE(name) \
    if ((library->name = (__typeof__(&name))dlsym(handle, #name)) == NULL) return dlerror();
    CCRYPTO_FUNCTIONS(CCRYPTO_RESOLVE)
#undef CCRYPTO_RESOLVE
    return NULL;
}

#endif

#ifndef NOTESFS_CCRYPTO_SHIM_H
#define NOTESFS_CCRYPTO_SHIM_H

// libcrypto (OpenSSL 3) for SHA-256. The SHA256_* calls are deprecated in favour of EVP, but
// their context is a plain struct (value semantics, no allocation) and they run the same
// accelerated code (SHA-NI, AVX2); this keeps the deprecation attributes off them.
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/sha.h>

#endif

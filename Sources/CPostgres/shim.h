#ifndef NOTESFS_CPOSTGRES_SHIM_H
#define NOTESFS_CPOSTGRES_SHIM_H

// libpq's declarations only: the library itself is not linked but loaded (dlopen) the first time
// a connection or a conninfo parse needs it, so that commands which never talk to a server do
// not pay for loading libpq and the 21 libraries it pulls in (libssl, libkrb5, libldap,
// libgnutls, ...) at every start. The Postgres module calls libpq only through a cpq_library.
// Debian's libpq-dev puts the header under /usr/include/postgresql.
#include <dlfcn.h>
#include <stddef.h>
#include <postgresql/libpq-fe.h>

// The soname libpq has had since PostgreSQL 8.2 (Debian's libpq5).
#define CPQ_SONAME "libpq.so.5"

// Every libpq function the Postgres module calls. Their types come from libpq-fe.h.
#define CPQ_FUNCTIONS(X) \
    X(PQbackendPID) X(PQclear) X(PQcmdTuples) X(PQconnectdb) X(PQconnectionNeedsPassword) \
    X(PQconninfoFree) X(PQconninfoParse) X(PQconsumeInput) X(PQerrorMessage) X(PQescapeIdentifier) \
    X(PQexecParams) X(PQfinish) X(PQfname) X(PQfreemem) X(PQgetisnull) X(PQgetlength) X(PQgetvalue) \
    X(PQnfields) X(PQnotifies) X(PQntuples) X(PQresultErrorField) X(PQresultErrorMessage) \
    X(PQresultStatus) X(PQserverVersion) X(PQsetNoticeProcessor) X(PQsocket) X(PQstatus)

// libpq's functions, resolved from the loaded library: one field per function, named and typed
// as libpq-fe.h declares it (so a call through a field is checked against the real prototype).
struct cpq_library {
#define CPQ_FIELD(name) __typeof__(&name) name;
    CPQ_FUNCTIONS(CPQ_FIELD)
#undef CPQ_FIELD
};

// Loads libpq (dlopen, RTLD_LOCAL: its symbols do not interpose on anyone's) and fills `library`
// (dlsym). Returns NULL when every function was found, else dlerror()'s message (the library is
// missing, or lacks a function). A loaded library stays loaded for the life of the process.
static inline const char *cpq_load(struct cpq_library *library) {
    void *handle = dlopen(CPQ_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) return dlerror();
#define CPQ_RESOLVE(name) \
    if ((library->name = (__typeof__(&name))dlsym(handle, #name)) == NULL) return dlerror();
    CPQ_FUNCTIONS(CPQ_RESOLVE)
#undef CPQ_RESOLVE
    return NULL;
}

// PG_DIAG_* are character macros Swift does not import: the field codes used, as constants for
// PQresultErrorField.
enum {
    CPQ_DIAG_SQLSTATE = PG_DIAG_SQLSTATE,
    CPQ_DIAG_MESSAGE_PRIMARY = PG_DIAG_MESSAGE_PRIMARY,
    CPQ_DIAG_MESSAGE_DETAIL = PG_DIAG_MESSAGE_DETAIL,
};

#endif

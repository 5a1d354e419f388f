#ifndef NOTESFS_CSQLITE_SHIM_H
#define NOTESFS_CSQLITE_SHIM_H

#include <sqlite3.h>

// SQLITE_TRANSIENT is a cast macro Swift does not import: bound text is copied by SQLite.
static inline int csqlite_bind_text(sqlite3_stmt *statement, int index, const char *text, int length) {
    return sqlite3_bind_text(statement, index, text, length, SQLITE_TRANSIENT);
}

// An empty string, not NULL (a NULL pointer would bind SQL NULL).
static inline int csqlite_bind_empty_text(sqlite3_stmt *statement, int index) {
    return sqlite3_bind_text(statement, index, "", 0, SQLITE_STATIC);
}

// Bound bytes are copied by SQLite too; an empty blob is a zero-length blob, not NULL.
static inline int csqlite_bind_blob(sqlite3_stmt *statement, int index, const void *bytes, int length) {
    return sqlite3_bind_blob(statement, index, bytes, length, SQLITE_TRANSIENT);
}

static inline int csqlite_bind_empty_blob(sqlite3_stmt *statement, int index) {
    return sqlite3_bind_zeroblob(statement, index, 0);
}

#endif

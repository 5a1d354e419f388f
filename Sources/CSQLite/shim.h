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

// The connection closes without checkpointing the write-ahead log, and the log file stays: a
// process that only read (every command) closes without an fsync or a file to delete.
static inline int csqlite_keep_log_on_close(sqlite3 *db) {
    int one = 1;
    int rc = sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)0);
    if (rc != SQLITE_OK) return rc;
    return sqlite3_file_control(db, "main", SQLITE_FCNTL_PERSIST_WAL, &one);
}

// SQLite counts every allocation under one process-wide mutex unless told not to; the daemon's
// threads (requests, the text indexer) each use a connection of their own and met on it. Only
// takes effect before the first connection opens (SQLITE_MISUSE after).
static inline int csqlite_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

#endif

#ifndef NOTESFS_CPOSTGRES_SHIM_H
#define NOTESFS_CPOSTGRES_SHIM_H

#include <libpq-fe.h>

// PG_DIAG_* are character macros Swift does not import as field codes: one shim per field used.
static inline const char *cpq_result_sqlstate(const PGresult *result) {
    return PQresultErrorField(result, PG_DIAG_SQLSTATE);
}
static inline const char *cpq_result_primary_message(const PGresult *result) {
    return PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY);
}
static inline const char *cpq_result_detail(const PGresult *result) {
    return PQresultErrorField(result, PG_DIAG_MESSAGE_DETAIL);
}

#endif

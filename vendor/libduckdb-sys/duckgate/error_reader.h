/*
 * duckgate's reader of DuckDB's typed errors: the C side.
 *
 * DuckDB keeps every error as an ErrorData: an ExceptionType and a map of extra information
 * (`error_subtype` such as COLUMN_NOT_FOUND or MISSING_ENTRY, the `name` that was not found, the
 * `errno` of a failed file operation, ...). Its C API hands a failed prepare or result out as text
 * only. The reader installed by `duckgate_error_reader_install` registers, on every connection of
 * the database, a ClientContextState whose QueryEnd hook receives the ErrorData DuckDB ends a
 * failed query with: the bind, plan or refusal of a prepare, and an error while running or
 * streaming a result. It keeps that error for the thread DuckDB ended the query on, which is the
 * thread that called into DuckDB and receives the failure, until that thread begins or ends
 * another query on the database.
 *
 * A failure DuckDB reports without ending a query (a statement that does not parse, an expansion
 * that fails before the query begins) leaves no error here.
 */
#ifndef DUCKGATE_ERROR_READER_H
#define DUCKGATE_ERROR_READER_H

#include <stddef.h>
#include <stdint.h>

#include "duckdb.h"
#include "plan_reader.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One entry of an error's extra information. */
typedef struct duckgate_error_field {
	duckgate_text key;
	duckgate_text value;
} duckgate_error_field;

/* The error DuckDB ended a query with. Texts are UTF-8, not NUL-terminated, and live only for the
 * visitor's call. */
typedef struct duckgate_error {
	/* The token the database's reader was installed with. */
	uint64_t database_token;
	/* DuckDB's id of the connection (`current_connection_id()`). */
	uint64_t connection_id;
	/* DuckDB's ExceptionType. */
	uint32_t exception_type;
	/* DuckDB's final message: exactly the text its C API reports for the failure. */
	duckgate_text message;
	const duckgate_error_field *fields;
	size_t field_count;
} duckgate_error;

typedef void (*duckgate_error_visitor)(void *context, const duckgate_error *error);

/*
 * Install the reader on `database`: every connection opened after this call records its failed
 * queries' errors. Call once per database, before opening connections. Returns 0, or -1 with a
 * message in `*error` (free it with duckdb_free).
 */
int32_t duckgate_error_reader_install(duckdb_database database, uint64_t database_token, char **error);

/*
 * When the last query this thread ended on a database with the reader failed, hand its error to
 * `visitor` (with `context`), forget it, and return 1; otherwise return 0.
 */
int32_t duckgate_error_reader_take(duckgate_error_visitor visitor, void *context);

#ifdef __cplusplus
}
#endif

#endif

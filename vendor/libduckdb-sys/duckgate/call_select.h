/*
 * duckgate's reading of a CALL statement as the query DuckDB binds it as: the C side.
 *
 * DuckDB binds `CALL f(args)` as `SELECT * FROM f(args)` (`Binder::Bind(CallStatement &)`), but
 * `json_serialize_sql`, the only way out of DuckDB's parser for duckgate's checks, refuses any
 * statement that is not a SELECT. This function hands over that SELECT as DuckDB's parser read
 * the CALL, written out by DuckDB (`SQLStatement::ToString`), so the checks read the called
 * function as DuckDB parsed it, never as a rewrite of the agent's text.
 */
#ifndef DUCKGATE_CALL_SELECT_H
#define DUCKGATE_CALL_SELECT_H

#include <stddef.h>
#include <stdint.h>

#include "duckdb.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Parse `sql` (`sql_size` bytes of UTF-8) with DuckDB's parser, configured as a new connection to
 * `database` is. When it is exactly one CALL statement, write `SELECT * FROM <the called function>`
 * as DuckDB writes it to `*select` (free it with duckdb_free), its size to `*select_size`, and
 * return 1. Any other SQL, including SQL DuckDB cannot parse, returns 0 and sets nothing.
 */
int32_t duckgate_call_select(duckdb_database database, const char *sql, size_t sql_size, char **select,
                             size_t *select_size);

#ifdef __cplusplus
}
#endif

#endif

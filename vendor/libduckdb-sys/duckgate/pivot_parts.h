/*
 * duckgate's reading of a PIVOT whose values DuckDB takes from the data: the C side.
 *
 * DuckDB's parser turns `PIVOT t ON col USING sum(x)` (an ON column without an IN list, or with
 * `IN (subquery)`) into several statements: one `CREATE TEMPORARY TYPE __pivot_enum_<uuid> AS
 * ENUM (<query>)` per such column, whose query finds the values (`SELECT DISTINCT CAST(col AS
 * VARCHAR) FROM <source> WHERE col IS NOT NULL ORDER BY 1`, or the subquery), then the SELECT that
 * pivots with `IN <that type>`. duckgate never runs the CREATE: it runs each query as a query of
 * its own, checked like any other, and the pivot with the values found written into its IN list.
 * This function hands it the parts as DuckDB's parser made them, written out by DuckDB.
 */
#ifndef DUCKGATE_PIVOT_PARTS_H
#define DUCKGATE_PIVOT_PARTS_H

#include <stddef.h>
#include <stdint.h>

#include "duckdb.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Parse `sql` (`sql_size` bytes of UTF-8) with DuckDB's parser, configured as a new connection to
 * `database` is. When it is exactly one statement that DuckDB made into the shape above (one or
 * more such CREATE TEMPORARY TYPE statements, then one SELECT), write the parts to `*parts` (free
 * it with duckdb_free) and their size to `*parts_size`, and return 1. The parts are, each as a
 * little-endian u64 byte count then that many bytes of UTF-8: the SELECT as DuckDB writes it
 * (`SQLStatement::ToString`), then for each type in order its name and its query as DuckDB writes
 * it. Any other SQL, including SQL DuckDB cannot parse, returns 0 and sets nothing: it is not
 * this shape, and the caller's ordinary checks answer it.
 */
int32_t duckgate_pivot_parts(duckdb_database database, const char *sql, size_t sql_size, char **parts,
                             size_t *parts_size);

#ifdef __cplusplus
}
#endif

#endif

//! A `CALL` statement as the query DuckDB binds it as.
//!
//! DuckDB binds `CALL f(args)` as `SELECT * FROM f(args)`. duckgate's checks read DuckDB's syntax
//! tree through `json_serialize_sql`, which refuses anything but a `SELECT`; [`call_select`]
//! hands over that `SELECT` built around the function call DuckDB's parser read, as DuckDB writes
//! it (`vendor/libduckdb-sys/duckgate/call_select.cpp`), so no text of the agent's is cut or
//! rewritten to get there.

use crate::ffi;
use crate::registry::{DatabaseToken, database_of};

/// `SELECT * FROM <the called function>` when DuckDB's parser, configured as a connection to the
/// database `token` names is, reads `sql` as exactly one `CALL`; `None` for anything else
/// (including SQL DuckDB cannot parse, which the caller's ordinary checks answer).
pub fn call_select(token: DatabaseToken, sql: &str) -> Option<String> {
    let database = database_of(token)?;
    // SAFETY: the databases `database_of` knows were opened by `open_in_memory` and are never
    // closed.
    let select = unsafe { ffi::call_select(database, sql) }?;
    String::from_utf8(select).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FolderMounts, open_in_memory};

    #[test]
    fn a_call_is_read_as_the_select_duckdb_binds_it_as() {
        let (_connection, token) = open_in_memory(&[], &FolderMounts::NONE).expect("open");
        assert_eq!(
            call_select(token, "CALL range(3)").as_deref(),
            // DuckDB's own writing: `range` is one of its keywords, so it quotes it.
            Some(r#"SELECT * FROM "range"(3)"#)
        );
        // However it is written: case, comments, a trailing semicolon, line breaks.
        let select =
            call_select(token, "/* x */ call\n  pragma_table_info('t') ;").expect("a CALL");
        assert_eq!(select, "SELECT * FROM pragma_table_info('t')");
    }

    #[test]
    fn anything_but_one_call_is_not_read() {
        let (_connection, token) = open_in_memory(&[], &FolderMounts::NONE).expect("open");
        for sql in [
            "SELECT 1",
            "SELECT * FROM range(3) AS call",
            "CALL range(3); CALL range(4)",
            "CALL range(3); SELECT 1",
            "CALL",
            "CALLrange(3)",
            "EXPLAIN CALL range(3)",
            "",
        ] {
            assert_eq!(call_select(token, sql), None, "{sql}");
        }
    }
}

//! DuckDB's typed errors: the ExceptionType and extra information DuckDB keeps with every error,
//! which its C API reports as text only.

use std::collections::BTreeMap;

use duckgate_plan_facts::Code;
use duckgate_plan_facts::ExceptionType;

/// One error DuckDB ended a query with, as DuckDB's `ErrorData` holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuckdbError {
    /// The token of the database (see [`crate::DatabaseToken`]).
    pub database: u64,
    /// DuckDB's id of the connection (`current_connection_id()`).
    pub connection_id: u64,
    /// DuckDB's `ExceptionType`.
    pub exception_type: Code<ExceptionType>,
    /// DuckDB's final message: the text its C API reported for the failure. For the agent to
    /// read, never to decide from.
    pub message: String,
    /// DuckDB's extra information (`error_subtype`, `name`, `type`, `candidates`, `errno`,
    /// `position`, ...).
    pub extra_info: BTreeMap<String, String>,
}

/// What `error_subtype` says, as DuckDB's exceptions set it (`binder_exception.cpp`,
/// `catalog_exception.cpp`, `parser_exception.cpp`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorSubtype {
    /// `COLUMN_NOT_FOUND`: a column reference the binder could not resolve; `name` is it.
    ColumnNotFound,
    /// `MISSING_ENTRY`: a catalog entry that does not exist; `name` is it and `type` its kind.
    MissingEntry,
    /// `ENTRY_ALREADY_EXISTS`.
    EntryAlreadyExists,
    /// `NO_MATCHING_FUNCTION`: a function exists by that name but not for those arguments.
    NoMatchingFunction,
    /// `UNSUPPORTED`: an expression the binder does not support there.
    Unsupported,
    /// `SYNTAX_ERROR`.
    SyntaxError,
    /// A subtype this crate does not know.
    Unrecognised(String),
}

impl ErrorSubtype {
    fn from_duckdb(value: &str) -> ErrorSubtype {
        match value {
            "COLUMN_NOT_FOUND" => ErrorSubtype::ColumnNotFound,
            "MISSING_ENTRY" => ErrorSubtype::MissingEntry,
            "ENTRY_ALREADY_EXISTS" => ErrorSubtype::EntryAlreadyExists,
            "NO_MATCHING_FUNCTION" => ErrorSubtype::NoMatchingFunction,
            "UNSUPPORTED" => ErrorSubtype::Unsupported,
            "SYNTAX_ERROR" => ErrorSubtype::SyntaxError,
            other => ErrorSubtype::Unrecognised(other.to_owned()),
        }
    }
}

impl DuckdbError {
    /// DuckDB's `error_subtype`, when the exception set one.
    pub fn subtype(&self) -> Option<ErrorSubtype> {
        self.field("error_subtype").map(ErrorSubtype::from_duckdb)
    }

    /// One entry of the extra information.
    pub fn field(&self, key: &str) -> Option<&str> {
        self.extra_info.get(key).map(String::as_str)
    }

    /// The `errno` a failed file operation recorded (DuckDB's `IOException`s of the local file
    /// system carry it).
    pub fn errno(&self) -> Option<i32> {
        self.field("errno")?.parse().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{open_in_memory, take_typed_error};

    /// The crate's message for `sql`'s failure, run to its end.
    fn fail(conn: &duckdb::Connection, sql: &str) -> String {
        let run = || -> duckdb::Result<()> {
            let mut stmt = conn.prepare(sql)?;
            let mut rows = stmt.query([])?;
            while rows.next()?.is_some() {}
            Ok(())
        };
        match run().expect_err(sql) {
            duckdb::Error::DuckDBFailure(_, Some(message)) => message,
            other => panic!("{sql}: {other}"),
        }
    }

    #[test]
    fn a_bind_error_comes_with_its_type_subtype_and_name() {
        let (conn, _) = open_in_memory(&[], &crate::FolderMounts::NONE).unwrap();
        let message = fail(&conn, "SELECT glucos FROM (SELECT 1 AS glucose)");
        let error = take_typed_error(&message).expect("a typed error");
        assert_eq!(error.exception_type, Code::Known(ExceptionType::Binder));
        assert_eq!(error.subtype(), Some(ErrorSubtype::ColumnNotFound));
        assert_eq!(error.field("name"), Some("glucos"));
        assert_eq!(error.message, message);
        assert_ne!(error.database, 0);
        let id: u64 = conn
            .query_row("SELECT current_connection_id()", [], |row| row.get(0))
            .unwrap();
        assert_eq!(error.connection_id, id);
        // Taken once.
        assert_eq!(take_typed_error(&message), None);
    }

    #[test]
    fn a_catalog_error_names_the_missing_entry_and_its_kind() {
        let (conn, _) = open_in_memory(&[], &crate::FolderMounts::NONE).unwrap();
        let message = fail(&conn, "SELECT * FROM readngs");
        let error = take_typed_error(&message).expect("a typed error");
        assert_eq!(error.exception_type, Code::Known(ExceptionType::Catalog));
        assert_eq!(error.subtype(), Some(ErrorSubtype::MissingEntry));
        assert_eq!(error.field("name"), Some("readngs"));
        assert_eq!(error.field("type"), Some("Table"));
    }

    #[test]
    fn an_error_while_rows_stream_is_typed() {
        let (conn, _) = open_in_memory(&[], &crate::FolderMounts::NONE).unwrap();
        let message = fail(
            &conn,
            "SELECT CAST(CASE WHEN i < 100000 THEN '1' ELSE 'x' END AS INTEGER) FROM range(200000) t(i)",
        );
        let error = take_typed_error(&message).expect("a typed error");
        assert_eq!(error.exception_type, Code::Known(ExceptionType::Conversion));
    }

    #[test]
    fn no_record_for_a_failure_before_a_query_began_or_after_a_success() {
        let (conn, _) = open_in_memory(&[], &crate::FolderMounts::NONE).unwrap();
        // The parser refuses it before DuckDB begins a query.
        let parse = fail(&conn, "SELEC 1");
        assert_eq!(take_typed_error(&parse), None);
        // A failure, then a query that succeeds: the record is gone.
        let missing = fail(&conn, "SELECT * FROM nowhere");
        conn.query_row("SELECT 1", [], |row| row.get::<_, i32>(0))
            .unwrap();
        assert_eq!(take_typed_error(&missing), None);
        // Another failure's message does not take this one's record.
        let _ = fail(&conn, "SELECT * FROM nowhere");
        assert_eq!(take_typed_error("Catalog Error: something else"), None);
    }

    #[test]
    fn a_refused_file_read_is_a_permission_error() {
        let (conn, _) = open_in_memory(
            &[("enable_external_access", "false")],
            &crate::FolderMounts::NONE,
        )
        .unwrap();
        let message = fail(&conn, "SELECT * FROM read_csv('/etc/hostname')");
        let error = take_typed_error(&message).expect("a typed error");
        assert_eq!(error.exception_type, Code::Known(ExceptionType::Permission));
    }
}

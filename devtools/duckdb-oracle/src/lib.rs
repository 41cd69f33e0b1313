//! DuckDB's own view of a SQL text — how many statements its parser splits it into, and the
//! type of each once prepared — through DuckDB's C API.
//!
//! Test-only: duckgate's differential test (`tests/it/validator_differential.rs`) compares the
//! validator's verdicts with this. The `duckdb` crate's safe API cannot serve as the oracle: its
//! `prepare` runs every statement but the last of a multi-statement string and does not expose
//! the statement type. So this crate calls `duckdb_extract_statements`,
//! `duckdb_prepare_extracted_statement` and `duckdb_prepared_statement_type` directly and keeps
//! every `unsafe` block (each with its SAFETY argument) behind the safe [`Oracle`] type.

use std::ffi::{CStr, CString, c_char};
use std::fmt;
use std::ptr;

use duckdb::ffi;

/// A statement type as DuckDB's C API reports it (`duckdb_statement_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatementType(pub ffi::duckdb_statement_type);

impl StatementType {
    /// `DUCKDB_STATEMENT_TYPE_SELECT`.
    pub const SELECT: StatementType =
        StatementType(ffi::duckdb_statement_type_DUCKDB_STATEMENT_TYPE_SELECT);
    /// `DUCKDB_STATEMENT_TYPE_EXPLAIN`.
    pub const EXPLAIN: StatementType =
        StatementType(ffi::duckdb_statement_type_DUCKDB_STATEMENT_TYPE_EXPLAIN);
}

impl fmt::Display for StatementType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// What DuckDB makes of one SQL text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Split {
    /// `duckdb_extract_statements` failed (a parse error), with DuckDB's message.
    ParseError(String),
    /// The statements it found, in order: each one's type when it could be prepared, else the
    /// prepare error (e.g. a binder error).
    Statements(Vec<Result<StatementType, String>>),
}

/// An in-memory DuckDB database and one connection to it, reached through the C API.
pub struct Oracle {
    db: ffi::duckdb_database,
    con: ffi::duckdb_connection,
}

/// Copy a string DuckDB owns; empty for a null pointer.
///
/// # Safety
/// `text` is null or points to a NUL-terminated string that stays valid during this call.
unsafe fn copy_c_string(text: *const c_char) -> String {
    if text.is_null() {
        return String::new();
    }
    // SAFETY: non-null, and NUL-terminated and alive per this function's contract.
    unsafe { CStr::from_ptr(text) }
        .to_string_lossy()
        .into_owned()
}

impl Oracle {
    /// Open a fresh in-memory database.
    pub fn open_in_memory() -> Result<Oracle, String> {
        let mut db: ffi::duckdb_database = ptr::null_mut();
        // SAFETY: a null path opens an in-memory database; `db` is an out-pointer to a local.
        if unsafe { ffi::duckdb_open(ptr::null(), &mut db) } != ffi::duckdb_state_DuckDBSuccess {
            return Err("duckdb_open of an in-memory database failed".into());
        }
        let mut con: ffi::duckdb_connection = ptr::null_mut();
        // SAFETY: `db` was opened above; `con` is an out-pointer to a local.
        if unsafe { ffi::duckdb_connect(db, &mut con) } != ffi::duckdb_state_DuckDBSuccess {
            // SAFETY: `db` was opened above and is closed once, here.
            unsafe { ffi::duckdb_close(&mut db) };
            return Err("duckdb_connect failed".into());
        }
        Ok(Oracle { db, con })
    }

    /// Run `sql` (one or more statements) for its effect, e.g. to create a schema.
    pub fn execute(&self, sql: &str) -> Result<(), String> {
        let text = CString::new(sql).map_err(|e| e.to_string())?;
        // SAFETY: the all-zero `duckdb_result` is the initial state the C API expects.
        let mut result: ffi::duckdb_result = unsafe { std::mem::zeroed() };
        // SAFETY: `self.con` is open, `text` is NUL-terminated and outlives the call, and
        // `result` is destroyed exactly once below, after its error text is copied out.
        unsafe {
            let state = ffi::duckdb_query(self.con, text.as_ptr(), &mut result);
            let error = copy_c_string(ffi::duckdb_result_error(&mut result));
            ffi::duckdb_destroy_result(&mut result);
            if state == ffi::duckdb_state_DuckDBSuccess {
                Ok(())
            } else {
                Err(error)
            }
        }
    }

    /// DuckDB's split of `sql` into statements, and each statement's type.
    ///
    /// Preparing binds a statement without running it, so a multi-statement text changes
    /// nothing in the database.
    pub fn split(&self, sql: &str) -> Split {
        let text = match CString::new(sql) {
            Ok(text) => text,
            Err(e) => return Split::ParseError(format!("the SQL holds a NUL byte: {e}")),
        };
        let mut extracted: ffi::duckdb_extracted_statements = ptr::null_mut();
        // SAFETY: `self.con` is open, `text` is NUL-terminated and outlives the call;
        // `extracted` is an out-pointer, destroyed exactly once on every path below.
        let count =
            unsafe { ffi::duckdb_extract_statements(self.con, text.as_ptr(), &mut extracted) };
        if count == 0 {
            // SAFETY: `extracted` is alive while its error text is copied, then destroyed.
            return unsafe {
                let error = copy_c_string(ffi::duckdb_extract_statements_error(extracted));
                ffi::duckdb_destroy_extracted(&mut extracted);
                Split::ParseError(error)
            };
        }
        let mut statements = Vec::new();
        for index in 0..count {
            let mut prepared: ffi::duckdb_prepared_statement = ptr::null_mut();
            // SAFETY: `index < count` statements of the live `extracted` set; `prepared` is an
            // out-pointer whose error text is copied out before it is destroyed, exactly once
            // (the C API allows destroying a failed preparation too).
            let outcome = unsafe {
                let state = ffi::duckdb_prepare_extracted_statement(
                    self.con,
                    extracted,
                    index,
                    &mut prepared,
                );
                let outcome = if state == ffi::duckdb_state_DuckDBSuccess {
                    Ok(StatementType(ffi::duckdb_prepared_statement_type(prepared)))
                } else {
                    Err(copy_c_string(ffi::duckdb_prepare_error(prepared)))
                };
                ffi::duckdb_destroy_prepare(&mut prepared);
                outcome
            };
            statements.push(outcome);
        }
        // SAFETY: destroyed once, after its last use above.
        unsafe { ffi::duckdb_destroy_extracted(&mut extracted) };
        Split::Statements(statements)
    }
}

impl Drop for Oracle {
    fn drop(&mut self) {
        // SAFETY: both handles were opened in `open_in_memory` and are closed once, here,
        // connection first.
        unsafe {
            ffi::duckdb_disconnect(&mut self.con);
            ffi::duckdb_close(&mut self.db);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_and_types_statements() {
        let oracle = Oracle::open_in_memory().unwrap();
        oracle.execute("CREATE TABLE t (x INTEGER)").unwrap();
        assert_eq!(
            oracle.split("SELECT 1; DROP TABLE t"),
            Split::Statements(vec![
                Ok(StatementType::SELECT),
                Ok(StatementType(
                    ffi::duckdb_statement_type_DUCKDB_STATEMENT_TYPE_DROP
                )),
            ])
        );
        assert!(matches!(oracle.split("SELEC 1"), Split::ParseError(e) if !e.is_empty()));
        assert!(oracle.execute("SELECT * FROM missing").is_err());
        // Preparing ran nothing: the table is still there.
        oracle.execute("SELECT * FROM t").unwrap();
    }
}

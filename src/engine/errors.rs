//! DuckDB's errors mapped onto the registry kinds.
//!
//! The `duckdb` crate reports every engine failure as `DuckDBFailure` with a generic code, so
//! the class comes from DuckDB's message prefix (`Parser Error: …`, `Binder Error: …`), which
//! DuckDB formats as `<ExceptionType> Error: <message>`.

use std::path::Path;

use crate::error::ErrorKind;
use crate::protocol::WorkerError;

/// Build a [`WorkerError`].
pub(crate) fn worker_error(kind: ErrorKind, message: impl Into<String>) -> WorkerError {
    WorkerError::new(kind, message)
}

/// The text DuckDB gave, or the crate's description of a non-engine failure.
pub(crate) fn duckdb_message(err: &duckdb::Error) -> String {
    match err {
        duckdb::Error::DuckDBFailure(_, Some(message)) => message.clone(),
        other => other.to_string(),
    }
}

/// Map an error from preparing or running a query.
pub(crate) fn query_error(err: &duckdb::Error) -> WorkerError {
    let message = duckdb_message(err);
    let kind = match err {
        duckdb::Error::DuckDBFailure(..) => classify(&message),
        duckdb::Error::InvalidParameterCount(..) => ErrorKind::InvalidArgument,
        _ => ErrorKind::DatabaseError,
    };
    worker_error(kind, message)
}

/// The registry kind for one DuckDB engine message.
pub(crate) fn classify(message: &str) -> ErrorKind {
    let class = message
        .split_once(" Error:")
        .map_or("", |(class, _)| class.trim());
    match class {
        "Parser" => ErrorKind::SyntaxError,
        "Catalog" => ErrorKind::UnknownName,
        "Binder" if names_something_missing(message) => ErrorKind::UnknownName,
        // Refusals by the read-only attach or the locked configuration.
        "Invalid Input" if refused_by_configuration(message) => ErrorKind::PolicyBlocked,
        "Out of Memory" => ErrorKind::ResourceLimit,
        // DuckDB's own hardening (external access off, locked configuration) denied it.
        "Permission" => ErrorKind::PolicyBlocked,
        "INTERNAL" | "Fatal" => ErrorKind::InternalError,
        "Interrupt" => ErrorKind::Cancelled,
        _ => ErrorKind::DatabaseError,
    }
}

fn refused_by_configuration(message: &str) -> bool {
    let lower = message.to_ascii_lowercase();
    lower.contains("attached in read-only mode")
        || lower.contains("the configuration has been locked")
        || lower.contains("disabled by configuration")
        || lower.contains("disabled through configuration")
}

fn names_something_missing(message: &str) -> bool {
    let lower = message.to_ascii_lowercase();
    lower.contains("not found")
        || lower.contains("does not exist")
        // `WITH x AS (SELECT * FROM x)` without a relation `x`: DuckDB's words for a missing x.
        || lower.contains("circular reference to cte")
        || lower.contains("does not have a column named")
}

/// Map an error from `ATTACH` of the database file.
pub(crate) fn attach_error(err: &duckdb::Error, db_path: &Path) -> WorkerError {
    let message = duckdb_message(err);
    let lower = message.to_ascii_lowercase();
    let shown = db_path.display();
    if lower.contains("could not set lock") || lower.contains("conflicting lock") {
        worker_error(
            ErrorKind::DatabaseLocked,
            // DuckDB's text names the writer's program and pid: the operator's business, not
            // the agent's.
            format!(
                "The database {shown} is locked by another process (a writer has it open); \
                 try again when it has finished."
            ),
        )
    } else if lower.contains("not a valid duckdb database") || lower.contains("not a duckdb") {
        worker_error(
            ErrorKind::DatabaseError,
            format!("The file {shown} is not a DuckDB database. DuckDB said: {message}"),
        )
    } else if lower.contains("does not exist") || lower.contains("no such file") {
        not_found(db_path)
    } else {
        let kind = match classify(&message) {
            ErrorKind::ResourceLimit => ErrorKind::ResourceLimit,
            ErrorKind::PolicyBlocked
            | ErrorKind::MultipleStatements
            | ErrorKind::SyntaxError
            | ErrorKind::UnknownName
            | ErrorKind::InvalidArgument
            | ErrorKind::Timeout
            | ErrorKind::Cancelled
            | ErrorKind::Busy
            | ErrorKind::DatabaseNotFound
            | ErrorKind::DatabaseLocked
            | ErrorKind::DatabaseError
            | ErrorKind::InternalError
            | ErrorKind::SandboxUnavailable => ErrorKind::DatabaseError,
        };
        worker_error(
            kind,
            format!("Could not open the database {shown}: {message}"),
        )
    }
}

/// The database file is missing; the parent appends the operator's hint.
pub(crate) fn not_found(db_path: &Path) -> WorkerError {
    worker_error(
        ErrorKind::DatabaseNotFound,
        format!("Database file not found: looked for {}.", db_path.display()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_duckdb_message_prefixes() {
        assert_eq!(
            classify("Parser Error: syntax error at or near \"SELEC\""),
            ErrorKind::SyntaxError
        );
        assert_eq!(
            classify("Catalog Error: Table with name x does not exist!"),
            ErrorKind::UnknownName
        );
        assert_eq!(
            classify("Binder Error: Referenced column \"y\" not found in FROM clause!"),
            ErrorKind::UnknownName
        );
        assert_eq!(
            classify("Binder Error: Table \"d\" does not have a column named \"devic_id\""),
            ErrorKind::UnknownName
        );
        assert_eq!(
            classify("Binder Error: No function matches the given name and argument types"),
            ErrorKind::DatabaseError
        );
        assert_eq!(
            classify("Out of Memory Error: failed to allocate"),
            ErrorKind::ResourceLimit
        );
        assert_eq!(
            classify("Permission Error: Cannot access file"),
            ErrorKind::PolicyBlocked
        );
        assert_eq!(
            classify("Conversion Error: Could not convert"),
            ErrorKind::DatabaseError
        );
        assert_eq!(
            classify(
                "Invalid Input Error: Cannot change configuration option \"\"threads\"\" - the configuration has been locked"
            ),
            ErrorKind::PolicyBlocked
        );
        assert_eq!(
            classify(
                "Invalid Input Error: Cannot execute statement of type \"EXECUTE\" on database \"x\" which is attached in read-only mode!"
            ),
            ErrorKind::PolicyBlocked
        );
        assert_eq!(
            classify("Invalid Input Error: bad date"),
            ErrorKind::DatabaseError
        );
    }
}

//! DuckDB's errors mapped onto the registry kinds.
//!
//! The `duckdb` crate reports every engine failure as `DuckDBFailure` with a generic code, so
//! the class comes from DuckDB's message prefix (`Parser Error: …`, `Binder Error: …`), which
//! DuckDB formats as `<ExceptionType> Error: <message>`.

use std::path::Path;

use crate::error::ErrorKind;
use crate::protocol::{Failure, MissingKind, MissingName};

/// Build a [`Failure`].
pub(crate) fn worker_error(kind: ErrorKind, message: impl Into<String>) -> Failure {
    Failure::new(kind, message)
}

/// The text DuckDB gave, or the crate's description of a non-engine failure.
pub(crate) fn duckdb_message(err: &duckdb::Error) -> String {
    match err {
        duckdb::Error::DuckDBFailure(_, Some(message)) => message.clone(),
        other => other.to_string(),
    }
}

/// Map an error from preparing or running a query. An `unknown_name` carries what DuckDB could
/// not find ([`missing_name`]), so no other layer reads DuckDB's words.
pub(crate) fn query_error(err: &duckdb::Error) -> Failure {
    let message = duckdb_message(err);
    let kind = match err {
        duckdb::Error::DuckDBFailure(..) => classify(&message),
        duckdb::Error::InvalidParameterCount(..) => ErrorKind::InvalidArgument,
        _ => ErrorKind::DatabaseError,
    };
    let missing = match kind {
        ErrorKind::UnknownName => missing_name(&message),
        _ => None,
    };
    Failure {
        missing,
        ..worker_error(kind, message)
    }
}

/// What a DuckDB "not found" message names: `Referenced column "x" not found…` and
/// `Table "t" does not have a column named "x"` name a column (the first quoted name after the
/// word "column"); otherwise the first quoted name (`Table with name "x" does not exist`,
/// `Scalar Function with name foo does not exist` has none).
pub(crate) fn missing_name(message: &str) -> Option<MissingName> {
    let first_quoted = |text: &str| -> Option<String> {
        ['"', '\''].into_iter().find_map(|quote| {
            let mut parts = text.split(quote);
            match (parts.next(), parts.next(), parts.next()) {
                (Some(_), Some(inside), Some(_)) if !inside.is_empty() => Some(inside.to_string()),
                _ => None,
            }
        })
    };
    if let Some(at) = message.find("column")
        && let Some(name) = first_quoted(&message[at..])
    {
        return Some(MissingName {
            name,
            kind: MissingKind::Column,
        });
    }
    first_quoted(message).map(|name| MissingName {
        name,
        kind: MissingKind::Other,
    })
}

/// The limits a query can run into, for its error message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MemoryFacts {
    /// DuckDB's `memory_limit`.
    pub(crate) limit_bytes: u64,
    /// The worker's hard cap (RLIMIT_DATA), if one was set.
    pub(crate) cap_bytes: Option<u64>,
    /// DuckDB's `max_temp_directory_size`; `None`: no spilling.
    pub(crate) max_temp_bytes: Option<u64>,
}

/// Which limit an `Out of Memory Error` met, from DuckDB's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MemoryWall {
    /// An allocation failed: the kernel refused memory past the worker's cap (`bad allocation`).
    Cap,
    /// The temporary directory is full (`max_temp_directory_size`) or the disk is.
    TempSpace,
    /// DuckDB's `memory_limit`, with nothing left to spill.
    DuckdbLimit,
}

/// A write to a spill file failed for want of room: the disk is full, or the file met the
/// worker's RLIMIT_FSIZE backstop (`EFBIG`, "File too large").
fn disk_full(message: &str) -> bool {
    let lower = message.to_ascii_lowercase();
    lower.contains("no space left on device") || lower.contains("file too large")
}

fn memory_wall(message: &str) -> MemoryWall {
    let lower = message.to_ascii_lowercase();
    if lower.contains("bad allocation") || lower.contains("bad_alloc") {
        MemoryWall::Cap
    } else if lower.contains("max_temp_directory_size") || disk_full(message) {
        MemoryWall::TempSpace
    } else {
        MemoryWall::DuckdbLimit
    }
}

impl MemoryFacts {
    /// `error` as the agent should read it: when it is DuckDB's `Out of Memory Error`, which
    /// limit the query met, how big it is, and what to do next. Other errors pass unchanged.
    pub(crate) fn explain(&self, error: Failure) -> Failure {
        use crate::size::format_size;
        let out_of_memory = error.kind == ErrorKind::ResourceLimit
            && classify(&error.message) == ErrorKind::ResourceLimit;
        if !out_of_memory && !disk_full(&error.message) {
            return error;
        }
        let operator = "the operator can raise --memory-budget (or lower --max-concurrent)";
        let what = match (
            memory_wall(&error.message),
            self.cap_bytes,
            self.max_temp_bytes,
        ) {
            (MemoryWall::Cap, Some(cap), _) => format!(
                "The query reached its worker's memory cap of {} (its share of the server's \
                 memory budget) building values DuckDB cannot spill, such as very long strings \
                 or lists. Build smaller values, or aggregate before building them; {operator}.",
                format_size(cap)
            ),
            (MemoryWall::Cap, None, _) => {
                "The query ran out of memory building values DuckDB cannot spill, such as very \
                 long strings or lists. Build smaller values, or aggregate before building them."
                    .to_string()
            }
            (MemoryWall::TempSpace, _, Some(max)) => format!(
                "The query needed more than its {} of temporary disk space (DuckDB's \
                 memory_limit is {}; past it, data spills to disk). Filter or aggregate \
                 earlier, or select fewer columns; the operator can raise --max-temp-size.",
                format_size(max),
                format_size(self.limit_bytes)
            ),
            (MemoryWall::DuckdbLimit | MemoryWall::TempSpace, _, None) => format!(
                "The query needed more than DuckDB's memory_limit of {}, and spilling to disk is \
                 off on this server (--max-temp-size 0). Filter or aggregate earlier, or select \
                 fewer columns; the operator can allow spilling with --max-temp-size.",
                format_size(self.limit_bytes)
            ),
            (MemoryWall::DuckdbLimit, _, Some(_)) => format!(
                "The query needed more memory than DuckDB's memory_limit of {} even with \
                 spilling to disk. Filter or aggregate earlier, or select fewer columns; \
                 {operator}.",
                format_size(self.limit_bytes)
            ),
        };
        Failure::new(
            ErrorKind::ResourceLimit,
            format!("{what} DuckDB said: {}", error.message),
        )
    }
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
pub(crate) fn attach_error(err: &duckdb::Error, db_path: &Path) -> Failure {
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
pub(crate) fn not_found(db_path: &Path) -> Failure {
    worker_error(
        ErrorKind::DatabaseNotFound,
        format!("Database file not found: looked for {}.", db_path.display()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_not_found_error_carries_the_name_duckdb_could_not_find() {
        let column = |name: &str| {
            Some(MissingName {
                name: name.into(),
                kind: MissingKind::Column,
            })
        };
        assert_eq!(
            missing_name(
                "Binder Error: Referenced column \"glucos\" not found in FROM clause!\nCandidate bindings: \"glucose\""
            ),
            column("glucos")
        );
        assert_eq!(
            missing_name("Binder Error: Table \"d\" does not have a column named \"devic_id\""),
            column("devic_id")
        );
        assert_eq!(
            missing_name("Catalog Error: Table with name \"readngs\" does not exist!"),
            Some(MissingName {
                name: "readngs".into(),
                kind: MissingKind::Other
            })
        );
        assert_eq!(
            missing_name("Catalog Error: Scalar Function with name foo does not exist!"),
            None
        );
    }

    #[test]
    fn an_out_of_memory_error_names_the_limit_it_met_and_the_next_step() {
        let facts = MemoryFacts {
            limit_bytes: 1 << 30,
            cap_bytes: Some(3 << 29),
            max_temp_bytes: Some(10 << 30),
        };
        let oom = |text: &str| facts.explain(worker_error(ErrorKind::ResourceLimit, text));
        let cap =
            oom("Out of Memory Error: Failed to allocate block of 16777216 bytes (bad allocation)");
        assert!(
            cap.message.contains("memory cap of 1.5 GiB"),
            "{}",
            cap.message
        );
        assert!(cap.message.contains("--memory-budget"), "{}", cap.message);
        let temp = oom(
            "Out of Memory Error: failed to offload data block of size 256.0 KiB (9.9 GiB/10.0 GiB used). This limit was set by the 'max_temp_directory_size' setting.",
        );
        assert!(
            temp.message.contains("10.0 GiB of temporary disk space"),
            "{}",
            temp.message
        );
        assert!(temp.message.contains("--max-temp-size"), "{}", temp.message);
        let limit = oom(
            "Out of Memory Error: could not allocate block of size 256.0 KiB (1.0 GiB/1.0 GiB used)",
        );
        assert!(
            limit
                .message
                .contains("memory_limit of 1.0 GiB even with spilling"),
            "{}",
            limit.message
        );
        let efbig = facts.explain(worker_error(
            ErrorKind::DatabaseError,
            "IO Error: Could not write file \"/tmp/w-0/duckdb_temp_storage_S192K-0.tmp\": File too large",
        ));
        assert_eq!(efbig.kind, ErrorKind::ResourceLimit, "{}", efbig.message);
        assert!(
            efbig.message.contains("temporary disk space"),
            "{}",
            efbig.message
        );
        let no_spill = MemoryFacts {
            max_temp_bytes: None,
            ..facts
        }
        .explain(worker_error(
            ErrorKind::ResourceLimit,
            "Out of Memory Error: could not allocate",
        ));
        assert!(
            no_spill.message.contains("--max-temp-size 0"),
            "{}",
            no_spill.message
        );
        // Anything else is left as it was.
        let other = facts.explain(worker_error(ErrorKind::SyntaxError, "Parser Error: x"));
        assert_eq!(other.message, "Parser Error: x");
    }

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

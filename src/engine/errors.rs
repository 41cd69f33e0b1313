//! DuckDB's errors mapped onto the registry kinds.
//!
//! The `duckdb` crate reports every engine failure as text. The kind is decided from DuckDB's own
//! `ErrorData` instead: its `ExceptionType` and extra information (`error_subtype`, `name`,
//! `errno`), which the plan reader's C++ side records as DuckDB ends each failed query
//! ([`duckgate_plan_reader::take_typed_error`]). The message stays what the agent reads; no
//! decision is made from it except where DuckDB gives no structure, each marked below as
//! message-only. An error without a type is a `database_error`: never a policy pass.

use std::path::Path;

use duckgate_plan_reader::{Code, DuckdbError, ErrorSubtype, ExceptionType, take_typed_error};
use nix::errno::Errno;

use crate::protocol::{Failure, MessageOrigin, MissingKind, MissingName};
use duckgate_validate::error::ErrorKind;

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

/// DuckDB's typed error for the failure the crate just reported on this thread, if DuckDB ended a
/// query with it.
fn typed_error(err: &duckdb::Error) -> Option<DuckdbError> {
    match err {
        duckdb::Error::DuckDBFailure(_, Some(message)) => take_typed_error(message),
        _ => None,
    }
}

/// Map an error from preparing or running a query. An `unknown_name` carries what DuckDB could
/// not find, from DuckDB's `name` field, so no other layer reads DuckDB's words.
pub(crate) fn query_error(err: &duckdb::Error) -> Failure {
    let message = duckdb_message(err);
    let (kind, missing, origin) = match typed_error(err) {
        Some(typed) => {
            let (kind, missing) = classify(&typed);
            (kind, missing, message_origin(&typed.exception_type))
        }
        None => {
            let kind = untyped_kind(err);
            // DuckDB's parser quotes the query's own text; every other failure without a type
            // says nothing of whose words it holds.
            let origin = match kind {
                ErrorKind::SyntaxError => MessageOrigin::DuckdbAboutTheQuery,
                _ => MessageOrigin::DuckdbAboutItself,
            };
            (kind, None, origin)
        }
    };
    Failure {
        missing,
        origin,
        ..worker_error(kind, message)
    }
}

/// Whose words DuckDB's message for an error of this type holds: the query's (what it wrote,
/// the names the binder found, the values it read) or DuckDB's about itself (files, its
/// catalog's state, settings, internals). Under privacy rules only the first are shown
/// (`Engine::private_error`); a type DuckDB adds is about itself until classified here.
pub(crate) fn message_origin(exception: &Code<ExceptionType>) -> MessageOrigin {
    let Code::Known(exception) = exception else {
        return MessageOrigin::DuckdbAboutItself;
    };
    match exception {
        ExceptionType::Parser
        | ExceptionType::Syntax
        | ExceptionType::Binder
        | ExceptionType::OutOfRange
        | ExceptionType::Conversion
        | ExceptionType::UnknownType
        | ExceptionType::Decimal
        | ExceptionType::MismatchType
        | ExceptionType::DivideByZero
        | ExceptionType::InvalidType
        | ExceptionType::Expression
        | ExceptionType::NotImplemented
        | ExceptionType::InvalidInput
        | ExceptionType::ParameterNotResolved
        | ExceptionType::ParameterNotAllowed
        | ExceptionType::Interrupt
        | ExceptionType::OutOfMemory => MessageOrigin::DuckdbAboutTheQuery,
        ExceptionType::Invalid
        | ExceptionType::ObjectSize
        | ExceptionType::Serialization
        | ExceptionType::Transaction
        | ExceptionType::Catalog
        | ExceptionType::Planner
        | ExceptionType::Scheduler
        | ExceptionType::Executor
        | ExceptionType::Constraint
        | ExceptionType::Index
        | ExceptionType::Stat
        | ExceptionType::Connection
        | ExceptionType::Settings
        | ExceptionType::Network
        | ExceptionType::Optimizer
        | ExceptionType::NullPointer
        | ExceptionType::Io
        | ExceptionType::Fatal
        | ExceptionType::Internal
        | ExceptionType::Permission
        | ExceptionType::Dependency
        | ExceptionType::Http
        | ExceptionType::MissingExtension
        | ExceptionType::Autoload
        | ExceptionType::Sequence
        | ExceptionType::InvalidConfiguration
        | ExceptionType::DataCorruption
        | ExceptionType::ResourceInUse => MessageOrigin::DuckdbAboutItself,
    }
}

/// The kind of a failure DuckDB recorded no typed error for: it failed before a query began, or
/// it is the crate's own. For a prepare that means DuckDB's parser refused the text
/// (`ClientContext::Prepare` parses before the query begins, and no hook sees that error); the
/// worker's own parse check (`statement::parse_single_select`) reads the parser's typed error
/// first, so this is reached only by a statement that check did not see. Message-only: the
/// `Parser` prefix DuckDB writes from the same `ExceptionType` (`ErrorData::ConstructFinalMessage`).
/// Anything else is a `database_error`.
fn untyped_kind(err: &duckdb::Error) -> ErrorKind {
    match err {
        duckdb::Error::DuckDBFailure(_, Some(message))
            if message.split_once(" Error: ").map(|(class, _)| class) == Some("Parser") =>
        {
            ErrorKind::SyntaxError
        }
        duckdb::Error::InvalidParameterCount(..) => ErrorKind::InvalidArgument,
        _ => ErrorKind::DatabaseError,
    }
}

/// The registry kind of one typed DuckDB error, and for an `unknown_name` what DuckDB could not
/// find.
pub(crate) fn classify(error: &DuckdbError) -> (ErrorKind, Option<MissingName>) {
    let named = |kind| {
        error.field("name").map(|name| MissingName {
            name: name.to_owned(),
            kind,
        })
    };
    let Code::Known(exception) = &error.exception_type else {
        return (ErrorKind::DatabaseError, None);
    };
    let kind = match exception {
        ExceptionType::Parser | ExceptionType::Syntax => ErrorKind::SyntaxError,
        ExceptionType::Catalog => match error.subtype() {
            Some(ErrorSubtype::MissingEntry) => {
                return (ErrorKind::UnknownName, named(MissingKind::Other));
            }
            // DuckDB's catalog errors without a subtype are look-ups of a catalog, schema or
            // entry by a name that is not there; they name nothing in a field.
            None => ErrorKind::UnknownName,
            Some(
                ErrorSubtype::EntryAlreadyExists
                | ErrorSubtype::ColumnNotFound
                | ErrorSubtype::NoMatchingFunction
                | ErrorSubtype::Unsupported
                | ErrorSubtype::SyntaxError
                | ErrorSubtype::Unrecognised(_),
            ) => ErrorKind::DatabaseError,
        },
        ExceptionType::Binder => match error.subtype() {
            Some(ErrorSubtype::ColumnNotFound) => {
                return (ErrorKind::UnknownName, named(MissingKind::Column));
            }
            Some(ErrorSubtype::MissingEntry) => {
                return (ErrorKind::UnknownName, named(MissingKind::Other));
            }
            Some(
                ErrorSubtype::EntryAlreadyExists
                | ErrorSubtype::NoMatchingFunction
                | ErrorSubtype::Unsupported
                | ErrorSubtype::SyntaxError
                | ErrorSubtype::Unrecognised(_),
            ) => ErrorKind::DatabaseError,
            None => return binder_without_subtype(&error.message),
        },
        ExceptionType::InvalidInput => invalid_input_kind(&error.message),
        ExceptionType::OutOfMemory => ErrorKind::ResourceLimit,
        // A spill file that met a full disk or the worker's RLIMIT_FSIZE backstop (`EFBIG`).
        ExceptionType::Io => match error.errno().map(Errno::from_raw) {
            Some(Errno::ENOSPC | Errno::EFBIG) => ErrorKind::ResourceLimit,
            _ => ErrorKind::DatabaseError,
        },
        // DuckDB's own hardening (external access off, a disabled file system) denied it.
        ExceptionType::Permission => ErrorKind::PolicyBlocked,
        ExceptionType::Internal | ExceptionType::Fatal => ErrorKind::InternalError,
        ExceptionType::Interrupt => ErrorKind::Cancelled,
        ExceptionType::Invalid
        | ExceptionType::OutOfRange
        | ExceptionType::Conversion
        | ExceptionType::UnknownType
        | ExceptionType::Decimal
        | ExceptionType::MismatchType
        | ExceptionType::DivideByZero
        | ExceptionType::ObjectSize
        | ExceptionType::InvalidType
        | ExceptionType::Serialization
        | ExceptionType::Transaction
        | ExceptionType::NotImplemented
        | ExceptionType::Expression
        | ExceptionType::Planner
        | ExceptionType::Scheduler
        | ExceptionType::Executor
        | ExceptionType::Constraint
        | ExceptionType::Index
        | ExceptionType::Stat
        | ExceptionType::Connection
        | ExceptionType::Settings
        | ExceptionType::Network
        | ExceptionType::Optimizer
        | ExceptionType::NullPointer
        | ExceptionType::ParameterNotResolved
        | ExceptionType::ParameterNotAllowed
        | ExceptionType::Dependency
        | ExceptionType::Http
        | ExceptionType::MissingExtension
        | ExceptionType::Autoload
        | ExceptionType::Sequence
        | ExceptionType::InvalidConfiguration
        | ExceptionType::DataCorruption
        | ExceptionType::ResourceInUse => ErrorKind::DatabaseError,
    };
    (kind, None)
}

/// A binder error without an `error_subtype`. Message-only: DuckDB raises several "no such
/// name" binder errors with no subtype and no `name` field (`Table "d" does not have a column
/// named "x"` from `TableBinding::ColumnNotFoundError`, `Circular reference to CTE x`, a column of
/// an `EXCLUDE` list or a join's `USING` that is not there), so only its words tell a missing
/// name from another binder error, and only its quotes name it. Either answer is a registry kind
/// of DuckDB's own failure, never a pass.
fn binder_without_subtype(message: &str) -> (ErrorKind, Option<MissingName>) {
    if names_something_missing(message) {
        (ErrorKind::UnknownName, missing_name(message))
    } else {
        (ErrorKind::DatabaseError, None)
    }
}

/// An `INVALID_INPUT` error. Message-only: DuckDB refuses a write to a database attached read-only
/// (`ClientContext::CheckIfPreparedStatementIsExecutable`) and a change to its locked
/// configuration (`DBConfig`) with plain `InvalidInputException`s, no subtype or field, so only
/// their words tell those refusals from bad input.
fn invalid_input_kind(message: &str) -> ErrorKind {
    let lower = message.to_ascii_lowercase();
    let refused_by_configuration = lower.contains("attached in read-only mode")
        || lower.contains("the configuration has been locked");
    if refused_by_configuration {
        ErrorKind::PolicyBlocked
    } else {
        ErrorKind::DatabaseError
    }
}

/// Message-only (see [`binder_without_subtype`]): the words of DuckDB's binder errors without a
/// subtype that say a name is not there.
fn names_something_missing(message: &str) -> bool {
    let lower = message.to_ascii_lowercase();
    lower.contains("not found")
        || lower.contains("does not exist")
        // `WITH x AS (SELECT * FROM x)` without a relation `x`: DuckDB's words for a missing x.
        || lower.contains("circular reference to cte")
        || lower.contains("does not have a column named")
}

/// Message-only (see [`binder_without_subtype`]): what a binder error without a `name` field
/// names. `Table "t" does not have a column named "x"` names a column (the first quoted name
/// after the word "column"); otherwise the first quoted name, if any.
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

/// Which limit an `Out of Memory Error` met. Message-only: DuckDB's `OUT_OF_MEMORY` errors carry
/// no field saying which limit they met (`StandardBufferManager`, `TemporaryFileManager`,
/// `Allocator`), and a full spill disk is an `IO` error whose `errno` ([`classify`]) says only
/// that the disk is full; the words tell the walls apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MemoryWall {
    /// An allocation failed: the kernel refused memory past the worker's cap (`bad allocation`).
    Cap,
    /// The temporary directory is full (`max_temp_directory_size`) or the disk is.
    TempSpace,
    /// DuckDB's `memory_limit`, with nothing left to spill.
    DuckdbLimit,
}

/// Message-only (see [`MemoryWall`]).
fn memory_wall(message: &str) -> MemoryWall {
    let lower = message.to_ascii_lowercase();
    let disk_full = lower.contains("no space left on device") || lower.contains("file too large");
    if lower.contains("bad allocation") || lower.contains("bad_alloc") {
        MemoryWall::Cap
    } else if lower.contains("max_temp_directory_size") || disk_full {
        MemoryWall::TempSpace
    } else {
        MemoryWall::DuckdbLimit
    }
}

impl MemoryFacts {
    /// `error` as the agent should read it: when it is DuckDB's `Out of Memory Error` or a spill
    /// file's full disk (a `resource_limit`, which [`query_error`] gives only those, from their
    /// types), which limit the query met, how big it is, and what to do next. Other errors pass
    /// unchanged.
    pub(crate) fn explain(&self, error: Failure) -> Failure {
        use crate::size::format_size;
        if error.kind != ErrorKind::ResourceLimit {
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

/// Map an error from `ATTACH` of the database `name`'s file. The message names the database by
/// its declared name, never by its path: it reaches the agent, and a host path shows the
/// user's home and name. DuckDB's own words are passed on only with the path taken out. The
/// failure's `construct` is the database's name, which the server's start-up check reads to
/// tell which database could not be attached.
pub(crate) fn attach_error(err: &duckdb::Error, name: &str, db_path: &Path) -> Failure {
    Failure {
        construct: Some(name.to_owned()),
        ..attach_failure(err, name, db_path)
    }
}

fn attach_failure(err: &duckdb::Error, name: &str, db_path: &Path) -> Failure {
    let message = without_path(&duckdb_message(err), db_path, name);
    let shown = format!("\"{name}\"");
    let typed = typed_error(err);
    let io_errno = typed.as_ref().and_then(|typed| match typed.exception_type {
        Code::Known(ExceptionType::Io) => typed.errno().map(Errno::from_raw),
        _ => None,
    });
    match io_errno {
        // `LocalFileSystem`'s lock (`fcntl(F_SETLK)`) failed: another process holds it.
        Some(Errno::EAGAIN) => {
            return worker_error(
                ErrorKind::DatabaseLocked,
                // DuckDB's text names the writer's program and pid: the operator's business, not
                // the agent's.
                format!(
                    "The database {shown} is locked by another process (a writer has it open); \
                     try again when it has finished."
                ),
            );
        }
        Some(Errno::ENOENT) => return not_found(name),
        _ => {}
    }
    // Message-only: DuckDB reports a file that is not a database as a plain `IO` error with no
    // `errno` or subtype (`SingleFileBlockManager`), so only its words say so; the kind is a
    // `database_error` either way, and this only words it.
    let lower = message.to_ascii_lowercase();
    if lower.contains("not a valid duckdb database") || lower.contains("not a duckdb") {
        return worker_error(
            ErrorKind::DatabaseError,
            format!(
                "The file of the database {shown} is not a DuckDB database. DuckDB said: \
                 {message}"
            ),
        );
    }
    let kind = match typed.as_ref().map(classify) {
        Some((ErrorKind::ResourceLimit, _)) => ErrorKind::ResourceLimit,
        Some((
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
            | ErrorKind::SandboxUnavailable,
            _,
        ))
        | None => ErrorKind::DatabaseError,
    };
    worker_error(
        kind,
        format!("Could not open the database {shown}: {message}"),
    )
}

/// The database `name`'s file is missing; the parent words it with the operator's hint.
pub(crate) fn not_found(name: &str) -> Failure {
    Failure {
        construct: Some(name.to_owned()),
        ..worker_error(
            ErrorKind::DatabaseNotFound,
            format!("The file of the database \"{name}\" is not there."),
        )
    }
}

/// `message` with every mention of `path` (and of its folder) replaced by the database's name.
fn without_path(message: &str, path: &Path, name: &str) -> String {
    let mut text = message.replace(&*path.to_string_lossy(), &format!("<database {name}>"));
    if let Some(folder) = path.parent().map(|p| p.to_string_lossy().into_owned())
        && folder.len() > 1
    {
        text = text.replace(&folder, "<folder>");
    }
    text
}

#[cfg(test)]
mod tests;

//! The one registry of error kinds a user or an agent can meet.
//!
//! Every error that crosses the MCP surface or the CLI carries one of these kinds, a message and a
//! next step. The wire names are the snake_case forms the MCP envelope publishes.

use serde::{Deserialize, Serialize};

/// What went wrong, as one of the kinds the MCP envelope publishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The SQL or request is not allowed by policy (writes, settings, file readers, hidden objects).
    PolicyBlocked,
    /// More than one SQL statement was sent.
    MultipleStatements,
    /// The SQL does not parse.
    SyntaxError,
    /// A table, column or function name does not exist (or is hidden).
    UnknownName,
    /// A tool argument is out of range or malformed.
    InvalidArgument,
    /// The query ran past its deadline and its worker was killed.
    Timeout,
    /// The client cancelled the call and its worker was killed.
    Cancelled,
    /// Every worker slot stayed taken for the queue bound (`--queue-timeout`): the query did not
    /// run; retrying in a few seconds is the way on.
    Busy,
    /// The query hit the memory, output or CPU limit.
    ResourceLimit,
    /// The database file does not exist.
    DatabaseNotFound,
    /// Another process holds the database's write lock.
    DatabaseLocked,
    /// DuckDB reported an error (binder, conversion, not a DuckDB file, …), or the database file
    /// exists but this process may not read it (the message names the folder or file that stops
    /// it).
    DatabaseError,
    /// A bug or a crashed worker: nothing the caller did.
    InternalError,
    /// The kernel cannot confine query workers, so the server answers every call with this and
    /// runs nothing (the operator's fix is in the message).
    SandboxUnavailable,
}

impl ErrorKind {
    /// Every kind, in registry order (used by tests and the output schema).
    pub const ALL: [ErrorKind; 14] = [
        ErrorKind::PolicyBlocked,
        ErrorKind::MultipleStatements,
        ErrorKind::SyntaxError,
        ErrorKind::UnknownName,
        ErrorKind::InvalidArgument,
        ErrorKind::Timeout,
        ErrorKind::Cancelled,
        ErrorKind::Busy,
        ErrorKind::ResourceLimit,
        ErrorKind::DatabaseNotFound,
        ErrorKind::DatabaseLocked,
        ErrorKind::DatabaseError,
        ErrorKind::InternalError,
        ErrorKind::SandboxUnavailable,
    ];

    /// The wire name, e.g. `policy_blocked`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::PolicyBlocked => "policy_blocked",
            ErrorKind::MultipleStatements => "multiple_statements",
            ErrorKind::SyntaxError => "syntax_error",
            ErrorKind::UnknownName => "unknown_name",
            ErrorKind::InvalidArgument => "invalid_argument",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::Busy => "busy",
            ErrorKind::ResourceLimit => "resource_limit",
            ErrorKind::DatabaseNotFound => "database_not_found",
            ErrorKind::DatabaseLocked => "database_locked",
            ErrorKind::DatabaseError => "database_error",
            ErrorKind::InternalError => "internal_error",
            ErrorKind::SandboxUnavailable => "sandbox_unavailable",
        }
    }
}

/// A failure with a registry kind: the one error type of the worker, the gateway and the tools.
/// The worker sends it in its reply frame; the parent adds to it and passes it on; the MCP
/// envelope's `error` object (`mcp::envelope::ErrorBody`) is built from it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// Registry kind.
    pub kind: ErrorKind,
    /// Message for the agent (DuckDB's own words for syntax and binder errors).
    pub message: String,
    /// For a refusal by the worker's checks: the offending construct.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub construct: Option<String>,
    /// For a refusal by the worker's checks: what to do instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<String>,
    /// For `unknown_name`: what DuckDB could not find, read from its message once, in
    /// `engine/errors.rs` (the one place that knows DuckDB's words).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<MissingName>,
    /// For a refusal the other layers act on: which one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<WorkerRefusal>,
    /// Whose words `message` holds, which decides what of it an agent may read under privacy
    /// rules. Decided by the worker, never sent: a failure that crossed a process boundary is
    /// already in the words the agent may read.
    #[serde(skip)]
    pub origin: MessageOrigin,
}

/// Whose words a [`Failure`]'s message holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum MessageOrigin {
    /// duckgate's own sentences, which name only what the query wrote or the operator declared.
    #[default]
    Duckgate,
    /// DuckDB's words about the query as written and the values it read (DuckDB's error type
    /// says so: a parser, binder, conversion, range or argument error). Under privacy rules the
    /// binder sees a catalog where hidden objects do not exist, and the plan check refuses any
    /// read of hidden data, so such a message names only what the query wrote, what the agent
    /// can see, and values of visible data.
    DuckdbAboutTheQuery,
    /// DuckDB's words about something else: a file, the catalog's own state, a setting, DuckDB's
    /// internals, or an error DuckDB gave no type. Under privacy rules the agent gets a sentence
    /// composed from the error's kind instead.
    DuckdbAboutItself,
}

impl Failure {
    /// A failure without a construct or next step of its own.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Failure {
        Failure {
            kind,
            message: message.into(),
            construct: None,
            suggestion: None,
            missing: None,
            refusal: None,
            origin: MessageOrigin::Duckgate,
        }
    }
}

/// A name DuckDB could not find.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MissingName {
    /// The name as the query wrote it.
    pub name: String,
    /// What DuckDB looked for.
    pub kind: MissingKind,
}

/// What kind of name DuckDB could not find.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MissingKind {
    /// A column.
    Column,
    /// A table, view, function, schema or anything else DuckDB names.
    Other,
}

/// The worker refusals other layers recognise by type, never by their words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkerRefusal {
    /// The plan reads something hidden by the privacy rules, or lists the catalog under them
    /// (`crate::privacy::PLAN_REFUSAL`).
    PrivacyPlan,
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Messages whose wording clients and tests rely on, word for word.
pub mod messages {
    /// Any write, DDL or other non-query statement.
    pub const WRITE_REFUSED: &str = "Only read-only SELECT queries are allowed. Write operations (INSERT, UPDATE, DELETE, DROP, etc.) are not permitted.";
    /// More than one statement.
    pub const MULTIPLE_STATEMENTS: &str =
        "Only single SQL statements are allowed. Remove semicolons to execute one query at a time.";

    /// The timeout message, with the configured deadline in seconds.
    pub fn timeout(seconds: u64) -> String {
        format!(
            "Query timed out after {seconds} seconds. Try a simpler query or add filters to reduce the data scanned."
        )
    }
}

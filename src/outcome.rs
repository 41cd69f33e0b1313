//! The outcome of one tool call, as the MCP envelope states it and the audit log records it.
//!
//! A module of its own at the bottom of the crate, beside `error`: the audit log (below the MCP
//! layer) and the envelope (the MCP layer) both use it, and neither reaches into the other.

use serde::{Deserialize, Serialize};

use duckgate_validate::error::ErrorKind;

/// The outcome of one tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The call did what was asked and there is data.
    Success,
    /// The call worked but matched nothing (zero rows, no tables, no matches).
    Empty,
    /// The call worked but the data was cut at the row limit or the byte cap.
    Partial,
    /// The call failed.
    Error,
    /// The request was refused by policy before anything ran.
    Refused,
}

impl Status {
    /// Every status, for the schema.
    pub const ALL: [Status; 5] = [
        Status::Success,
        Status::Empty,
        Status::Partial,
        Status::Error,
        Status::Refused,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Success => "success",
            Status::Empty => "empty",
            Status::Partial => "partial",
            Status::Error => "error",
            Status::Refused => "refused",
        }
    }

    /// Whether the result must carry `isError: true`.
    pub fn is_error(self) -> bool {
        match self {
            Status::Error | Status::Refused => true,
            Status::Success | Status::Empty | Status::Partial => false,
        }
    }

    /// `refused` for what policy stops before anything runs, `error` for everything else.
    pub fn for_error(kind: ErrorKind) -> Status {
        match kind {
            ErrorKind::PolicyBlocked | ErrorKind::MultipleStatements => Status::Refused,
            ErrorKind::SyntaxError
            | ErrorKind::UnknownName
            | ErrorKind::InvalidArgument
            | ErrorKind::Timeout
            | ErrorKind::Cancelled
            | ErrorKind::Busy
            | ErrorKind::ResourceLimit
            | ErrorKind::DatabaseNotFound
            | ErrorKind::DatabaseLocked
            | ErrorKind::DatabaseError
            | ErrorKind::InternalError
            | ErrorKind::SandboxUnavailable => Status::Error,
        }
    }
}

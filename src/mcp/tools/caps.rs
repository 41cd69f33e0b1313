//! Size caps of the client's strings, checked before any work (no catalog fetch, no fuzzy
//! matching): an over-long argument is `invalid_argument` naming it and its cap. This is the one
//! place they are defined; the SQL cap is the validator's own. Which argument may be longer than
//! a name its declaration says (`Argument::long_text`).

use crate::mcp::envelope::ErrorBody;
use duckgate_validate::error::ErrorKind;

/// Longest table, schema, column, tool, method or argument name accepted, in bytes (DuckDB
/// identifiers can be long, but the validator caps them at 255 bytes).
pub const MAX_NAME_BYTES: usize = 256;
/// Longest `search_schema` text, in bytes.
pub const MAX_SEARCH_BYTES: usize = 1024;
/// Longest resource URI, in bytes: `schema://table/` and a percent-encoded name.
pub const MAX_URI_BYTES: usize = 1024;
/// Most items of an array argument (`sample_rows`'s `columns`).
pub const MAX_ARRAY_ITEMS: usize = 1024;

/// Longest SQL accepted, in bytes: the validator's cap, checked here first.
pub fn max_sql_bytes() -> usize {
    duckgate_validate::validate::Limits::default().max_sql_bytes
}

/// `invalid_argument`: `what` is `got` bytes, past `cap`.
pub fn too_long(what: &str, cap: usize, got: usize) -> ErrorBody {
    ErrorBody::new(
        ErrorKind::InvalidArgument,
        format!("{what} must be at most {cap} bytes; got {got}."),
    )
    .construct(what)
    .hint(format!("Send a {what} of at most {cap} bytes."))
}

//! What an audit record is about (its `event` field). The names live beside the session's state
//! machine because it decides most of them; the audit log re-exports them as `audit::event`.

/// A call of one of the tools.
pub const TOOL_CALL: &str = "tool_call";
/// A `tools/call` naming no tool of this server.
pub const UNKNOWN_TOOL: &str = "unknown_tool";
/// A line that is not JSON (answered with a JSON-RPC parse error, -32700).
pub const UNPARSABLE_LINE: &str = "unparsable_line";
/// A line longer than the transport accepts (answered with -32600).
pub const OVERSIZED_LINE: &str = "oversized_line";
/// JSON that is not a valid JSON-RPC request (answered with -32600).
pub const INVALID_REQUEST: &str = "invalid_request";
/// JSON that is not a valid notification (notifications are never answered).
pub const INVALID_NOTIFICATION: &str = "invalid_notification";
/// A request of a method this server does not have (answered with -32601).
pub const UNKNOWN_METHOD: &str = "unknown_method";
/// A request whose id belongs to a request still in flight (answered with -32600 at once; the
/// first one is answered as usual).
pub const DUPLICATE_ID: &str = "duplicate_id";
/// A notification the session has no use for: one before the first request that opens the
/// session, or a cancellation of a request that is not in flight. Never answered.
pub const IGNORED_NOTIFICATION: &str = "ignored_notification";
/// A response or error from the client before the session is open: the server asked nothing.
pub const IGNORED_REPLY: &str = "ignored_reply";
/// Any other request (`initialize`, `tools/list`, `resources/read`, `ping`, …), recorded as
/// it arrives; tool calls have their own record (`tool_call`) with the outcome.
pub const REQUEST: &str = "request";

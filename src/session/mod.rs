//! The stdio session's state machine: what each client line is, and what rmcp may see of it.
//!
//! Pure (no I/O, no clock), so the line transport (`mcp::transport`) wraps it and the fuzz target
//! drives it without DuckDB. docs/ARCHITECTURE.md ("The transport") has the design; in short:
//!
//! - **Lines.** [`classify`] decides what one line is: a message for rmcp, a blank line, or a
//!   line answered here (not JSON: -32700; not a JSON-RPC message, too long, a method name too
//!   long to echo: -32600; a malformed notification: dropped, never answered).
//! - **Opening.** rmcp's server ends the session when the first message it reads is not a
//!   request (its initialisation loop takes only requests). So until a request has opened the
//!   session the way rmcp opens it ([`opens_session`]: `initialize`, or a request with complete
//!   2026-07-28 `_meta` naming a supported revision that is not `server/discover`), every
//!   notification and every response or error from the client is ignored and counted here.
//! - **Ids.** rmcp keys its in-flight requests by the client's id, so two requests with one id
//!   make it drop both answers. Every request therefore reaches rmcp under an id of the
//!   session's own (unique for the session's life), and its answer goes back under the client's.
//!   A request whose id is still in flight is answered at once with -32600; the first is
//!   answered as usual. A cancellation names the client's id: it is passed on under the session's
//!   id when that request is in flight, and ignored (counted) otherwise.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::model::{
    ClientNotification, ClientRequest, GetMeta, JsonRpcMessage, NumberOrString, ProtocolVersion,
    RequestId,
};
use rmcp::service::{RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use serde::Serialize;
use serde_json::{Value, json};

pub mod event;
pub mod fuzz;

/// Longest line (one message) accepted, in bytes: rmcp's own stdio cap (16 MiB).
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;
/// Longest method name echoed back in an error; the tools' own name cap (a test in
/// `mcp::transport` keeps the two equal).
pub const MAX_METHOD_BYTES: usize = 256;
/// JSON-RPC: the line is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC: the JSON is not a valid request.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC: no such method.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Longest error message that quotes the client's input (serde's messages can quote a value).
const MAX_MESSAGE_CHARS: usize = 300;
/// UTF-8 byte order mark, which RFC 8259 lets a parser ignore.
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// The newest protocol revision this server speaks: 2026-07-28, where a client starts with
/// `server/discover` (or straight away) and every request carries its own version and
/// capabilities in `_meta`. Every older revision is still served (see
/// [`supported_protocol_versions`]).
pub const MAX_PROTOCOL_VERSION: ProtocolVersion = ProtocolVersion::V_2026_07_28;

/// Every protocol revision this server negotiates, oldest first: 2024-11-05, 2025-03-26,
/// 2025-06-18 and 2025-11-25 over `initialize`, and 2026-07-28 over `server/discover` and
/// per-request `_meta`. `server/discover` advertises exactly this list.
pub fn supported_protocol_versions() -> &'static [ProtocolVersion] {
    ProtocolVersion::known_up_to(&MAX_PROTOCOL_VERSION)
}

/// A line that is not a message this server takes as it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    /// The audit log's `event` (one of [`event`]).
    pub event: &'static str,
    /// The audit log's `error_kind`: the JSON-RPC error's name, or why the line was ignored.
    pub error_kind: &'static str,
    /// The JSON-RPC error code it is answered with, if it is answered.
    pub code: Option<i64>,
    /// The whole JSON-RPC error message the transport writes, if it answers it itself.
    pub reply: Option<Value>,
}

/// What one line is.
#[derive(Debug)]
pub enum Incoming {
    /// A message for rmcp; with a problem to record when rmcp will answer it with an error.
    Message(Box<RxJsonRpcMessage<RoleServer>>, Option<Problem>),
    /// An empty line: nothing to do.
    Blank,
    /// Not for rmcp: answered here, or (a notification, a reply) dropped and recorded.
    Rejected(Problem),
}

/// Decide what one line (with or without its `\n`) is, on its own (no session state).
pub fn classify(line: &[u8]) -> Incoming {
    let line = content(line);
    let line = line.strip_prefix(UTF8_BOM).unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Incoming::Blank;
    }
    let error = match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(line) {
        Ok(message) => return accepted(message),
        Err(error) => error,
    };
    match error.classify() {
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
            Incoming::Rejected(parse_error(&error))
        }
        serde_json::error::Category::Data | serde_json::error::Category::Io => {
            let value: Value = serde_json::from_slice(line).unwrap_or(Value::Null);
            let is_notification = value.get("id").is_none() && value.get("method").is_some();
            if is_notification {
                return Incoming::Rejected(Problem {
                    event: event::INVALID_NOTIFICATION,
                    error_kind: "invalid_notification",
                    code: None,
                    reply: None,
                });
            }
            let id = match value.get("id") {
                Some(id @ (Value::Number(_) | Value::String(_))) => id.clone(),
                _ => Value::Null,
            };
            Incoming::Rejected(invalid_request(
                id,
                &format!("Invalid Request: {}", clip(&error.to_string())),
            ))
        }
    }
}

/// `line` without its `\n` and a `\r` before it.
pub fn content(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// A message that parsed: an unknown method is passed on to rmcp (which answers -32601) and
/// recorded, unless its name is too long to echo.
fn accepted(message: RxJsonRpcMessage<RoleServer>) -> Incoming {
    let JsonRpcMessage::Request(request) = &message else {
        return Incoming::Message(Box::new(message), None);
    };
    let ClientRequest::CustomRequest(custom) = &request.request else {
        return Incoming::Message(Box::new(message), None);
    };
    if custom.method.len() > MAX_METHOD_BYTES {
        let id = serde_json::to_value(&request.id).unwrap_or(Value::Null);
        return Incoming::Rejected(invalid_request(
            id,
            &format!(
                "Invalid Request: method must be at most {MAX_METHOD_BYTES} bytes; got {}.",
                custom.method.len()
            ),
        ));
    }
    Incoming::Message(
        Box::new(message),
        Some(Problem {
            event: event::UNKNOWN_METHOD,
            error_kind: "method_not_found",
            code: Some(METHOD_NOT_FOUND),
            reply: None,
        }),
    )
}

fn parse_error(error: &serde_json::Error) -> Problem {
    Problem {
        event: event::UNPARSABLE_LINE,
        error_kind: "parse_error",
        code: Some(PARSE_ERROR),
        reply: Some(json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": {
                "code": PARSE_ERROR,
                "message": format!(
                    "Parse error: the line is not JSON ({}). Send one JSON-RPC message per line.",
                    clip(&error.to_string())
                ),
            },
        })),
    }
}

fn invalid_request(id: Value, message: &str) -> Problem {
    Problem {
        event: event::INVALID_REQUEST,
        error_kind: "invalid_request",
        code: Some(INVALID_REQUEST),
        reply: Some(json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": { "code": INVALID_REQUEST, "message": message },
        })),
    }
}

/// A line past [`MAX_LINE_BYTES`]: answered with -32600 and `id: null` (its id is unread).
pub fn oversized() -> Problem {
    Problem {
        event: event::OVERSIZED_LINE,
        ..invalid_request(
            Value::Null,
            &format!("Invalid Request: a message must be at most {MAX_LINE_BYTES} bytes."),
        )
    }
}

fn duplicate_id(id: &RequestId) -> Problem {
    let shown = clip(&serde_json::to_string(id).unwrap_or_default());
    Problem {
        event: event::DUPLICATE_ID,
        error_kind: "duplicate_id",
        ..invalid_request(
            serde_json::to_value(id).unwrap_or(Value::Null),
            &format!(
                "Invalid Request: id {shown} belongs to a request still in flight; this one was \
                 not run. Send each request with an id of its own (the first one is answered as \
                 usual)."
            ),
        )
    }
}

fn ignored(event: &'static str, error_kind: &'static str) -> Problem {
    Problem {
        event,
        error_kind,
        code: None,
        reply: None,
    }
}

/// `text` cut to [`MAX_MESSAGE_CHARS`] characters.
fn clip(text: &str) -> String {
    match text.char_indices().nth(MAX_MESSAGE_CHARS) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

/// Whether rmcp leaves its initialisation loop on `request`, mirroring that loop exactly:
/// `initialize` always; `ping` and `server/discover` never (they are answered in the loop); any
/// other request when its `_meta` carries the 2026-07-28 keys and names a revision of
/// `supported` (otherwise rmcp answers it with an error and keeps waiting).
///
/// The safe side of a mistake here is "not yet": a notification ignored while rmcp already serves
/// is lost (a cancellation comes too late), while one passed on before rmcp serves ends the
/// process. The fuzz target checks this against rmcp itself.
pub fn opens_session(request: &ClientRequest, supported: &[ProtocolVersion]) -> bool {
    match request {
        ClientRequest::InitializeRequest(_) => true,
        ClientRequest::PingRequest(_) | ClientRequest::DiscoverRequest(_) => false,
        // `ClientRequest` is non-exhaustive: every other request, present and future, follows
        // rmcp's one rule for them.
        other => {
            let meta = other.get_meta();
            meta.missing_required_keys(&ProtocolVersion::V_2026_07_28)
                .is_empty()
                && meta
                    .protocol_version()
                    .is_some_and(|version| supported.contains(&version))
        }
    }
}

/// Where the session is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// No request has opened the session yet: rmcp takes only requests.
    Opening,
    /// rmcp serves: every message may reach it.
    Serving,
}

/// What the session has refused or ignored so far; shared with `server_info` and written to
/// stderr.
#[derive(Debug, Default)]
pub struct SessionCounters {
    notifications_ignored: AtomicU64,
    replies_ignored: AtomicU64,
    duplicate_ids_refused: AtomicU64,
}

/// The counters at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CountersSnapshot {
    /// Notifications not passed on: before the session opened, or cancelling no request in
    /// flight.
    pub notifications_ignored: u64,
    /// Responses and errors from the client before the session opened.
    pub replies_ignored: u64,
    /// Requests answered at once because their id was still in flight.
    pub duplicate_ids_refused: u64,
}

impl SessionCounters {
    /// The counts now.
    pub fn snapshot(&self) -> CountersSnapshot {
        CountersSnapshot {
            notifications_ignored: self.notifications_ignored.load(Ordering::Relaxed),
            replies_ignored: self.replies_ignored.load(Ordering::Relaxed),
            duplicate_ids_refused: self.duplicate_ids_refused.load(Ordering::Relaxed),
        }
    }
}

/// One stdio session: its phase and the requests in flight, each under the id rmcp sees.
#[derive(Debug)]
pub struct Session {
    phase: Phase,
    supported: &'static [ProtocolVersion],
    /// The client's id of each request in flight → the id rmcp sees.
    by_client: HashMap<RequestId, RequestId>,
    /// The id rmcp sees → the client's id.
    by_session: HashMap<RequestId, RequestId>,
    /// The next id of the session's own.
    next_id: i64,
    counters: std::sync::Arc<SessionCounters>,
}

impl Session {
    /// A fresh session, opened the way rmcp opens one for `supported`, counting into `counters`.
    pub fn new(
        supported: &'static [ProtocolVersion],
        counters: std::sync::Arc<SessionCounters>,
    ) -> Session {
        Session {
            phase: Phase::Opening,
            supported,
            by_client: HashMap::new(),
            by_session: HashMap::new(),
            next_id: 1,
            counters,
        }
    }

    /// What the session has ignored or refused so far.
    pub fn counters(&self) -> &SessionCounters {
        &self.counters
    }

    /// Where the session is.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Requests handed to rmcp and not yet answered or cancelled.
    pub fn in_flight(&self) -> usize {
        self.by_client.len()
    }

    /// Whether the client's `id` belongs to a request in flight.
    pub fn is_in_flight(&self, id: &RequestId) -> bool {
        self.by_client.contains_key(id)
    }

    /// Decide what one line is, given the session so far; a message for rmcp comes back under
    /// the session's ids.
    pub fn on_line(&mut self, line: &[u8]) -> Incoming {
        match classify(line) {
            Incoming::Message(message, problem) => self.on_message(*message, problem),
            other @ (Incoming::Blank | Incoming::Rejected(_)) => other,
        }
    }

    fn on_message(
        &mut self,
        message: RxJsonRpcMessage<RoleServer>,
        problem: Option<Problem>,
    ) -> Incoming {
        match message {
            JsonRpcMessage::Request(mut request) => {
                if self.by_client.contains_key(&request.id) {
                    self.counters
                        .duplicate_ids_refused
                        .fetch_add(1, Ordering::Relaxed);
                    return Incoming::Rejected(duplicate_id(&request.id));
                }
                if self.phase == Phase::Opening && opens_session(&request.request, self.supported) {
                    self.phase = Phase::Serving;
                }
                let own = NumberOrString::Number(self.next_id);
                self.next_id += 1;
                self.by_client.insert(request.id.clone(), own.clone());
                self.by_session.insert(own.clone(), request.id);
                request.id = own;
                Incoming::Message(Box::new(JsonRpcMessage::Request(request)), problem)
            }
            JsonRpcMessage::Notification(mut notification) => {
                if self.phase == Phase::Opening {
                    return self.ignore_notification("before_first_request");
                }
                if let ClientNotification::CancelledNotification(cancelled) =
                    &mut notification.notification
                    && let Some(id) = cancelled.params.request_id.as_mut()
                {
                    let Some(own) = self.by_client.remove(id) else {
                        return self.ignore_notification("cancels_no_request_in_flight");
                    };
                    // rmcp drops the answer of a request it cancelled: the id is free again.
                    self.by_session.remove(&own);
                    *id = own;
                }
                Incoming::Message(Box::new(JsonRpcMessage::Notification(notification)), None)
            }
            reply @ (JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_)) => match self.phase {
                Phase::Opening => {
                    self.counters
                        .replies_ignored
                        .fetch_add(1, Ordering::Relaxed);
                    Incoming::Rejected(ignored(event::IGNORED_REPLY, "before_first_request"))
                }
                // The server sends no requests: rmcp drops a reply to none.
                Phase::Serving => Incoming::Message(Box::new(reply), None),
            },
        }
    }

    fn ignore_notification(&mut self, why: &'static str) -> Incoming {
        self.counters
            .notifications_ignored
            .fetch_add(1, Ordering::Relaxed);
        Incoming::Rejected(ignored(event::IGNORED_NOTIFICATION, why))
    }

    /// Put the client's id back on an answer rmcp sends, and free it. Messages with no id of the
    /// session's own (notifications, an error with `id: null`) pass as they are.
    pub fn on_send(&mut self, message: &mut TxJsonRpcMessage<RoleServer>) {
        let id = match message {
            JsonRpcMessage::Response(response) => Some(&mut response.id),
            JsonRpcMessage::Error(error) => error.id.as_mut(),
            JsonRpcMessage::Request(_) | JsonRpcMessage::Notification(_) => None,
        };
        let Some(id) = id else { return };
        match self.by_session.remove(id) {
            Some(client) => {
                self.by_client.remove(&client);
                *id = client;
            }
            // rmcp answers only requests it got from here, each once, and drops the answer of a
            // cancelled one; nothing else carries an id of ours.
            None => tracing::warn!(%id, "an answer for no request in flight"),
        }
    }
}

#[cfg(test)]
mod tests;

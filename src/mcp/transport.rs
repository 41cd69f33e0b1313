//! The stdio transport: one JSON-RPC message per line, and every line a request answered.
//!
//! rmcp's own stdio transport drops a line that is not JSON without a word (and the client
//! waits), answers JSON that is not a JSON-RPC message with an error whose `id` is left out, and
//! echoes an unknown method's name whatever its length. This one reads the same way (bounded
//! lines, a UTF-8 byte order mark and a trailing `\r` ignored, rmcp's own message types) but:
//!
//! - a line that is not JSON is answered with a JSON-RPC parse error (-32700, `id: null`);
//! - JSON that is not a JSON-RPC message is answered with Invalid Request (-32600), with the
//!   request's `id` when it has a usable one, else `id: null`; a malformed notification is not
//!   answered (JSON-RPC never answers notifications);
//! - a line longer than [`MAX_LINE_BYTES`] is answered with Invalid Request;
//! - a method name longer than [`tools::MAX_NAME_BYTES`] is answered with Invalid Request;
//! - each of these, and every request of an unknown method, is recorded in the audit log.
//!
//! Replies and the transport's own errors go through one writer behind one lock, a whole line
//! per write, so they never interleave on stdout.

use std::io;
use std::sync::Arc;

use rmcp::model::{ClientRequest, JsonRpcMessage};
use rmcp::service::{RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;
use tokio::task::JoinHandle;

use crate::audit::{AuditEntry, AuditLog, MAX_RECORDED_TEXT_BYTES, event};
use crate::mcp::tools;

/// Longest line (one message) accepted, in bytes: rmcp's own stdio cap (16 MiB).
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;
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

/// A line that is not a message this server takes as it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    /// The audit log's `event` (one of [`event`]).
    pub event: &'static str,
    /// The audit log's `error_kind`: the JSON-RPC error's name.
    pub error_kind: &'static str,
    /// The JSON-RPC error code it is answered with, if it is answered.
    pub code: Option<i64>,
    /// The whole JSON-RPC error message this transport writes, if it answers it itself.
    pub reply: Option<Value>,
}

/// What one line is.
#[derive(Debug)]
pub enum Incoming {
    /// A message for rmcp; with a problem to record when rmcp will answer it with an error.
    Message(Box<RxJsonRpcMessage<RoleServer>>, Option<Problem>),
    /// An empty line: nothing to do.
    Blank,
    /// Not a message: answered (or, for a notification, dropped) here.
    Rejected(Problem),
}

/// Decide what one line (with or without its `\n`) is. Pure, so the unit tests can drive it.
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
fn content(line: &[u8]) -> &[u8] {
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
    if custom.method.len() > tools::MAX_NAME_BYTES {
        let id = serde_json::to_value(&request.id).unwrap_or(Value::Null);
        return Incoming::Rejected(invalid_request(
            id,
            &format!(
                "Invalid Request: method must be at most {} bytes; got {}.",
                tools::MAX_NAME_BYTES,
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

fn oversized() -> Problem {
    Problem {
        event: event::OVERSIZED_LINE,
        ..invalid_request(
            Value::Null,
            &format!("Invalid Request: a message must be at most {MAX_LINE_BYTES} bytes."),
        )
    }
}

/// `text` cut to [`MAX_MESSAGE_CHARS`] characters.
fn clip(text: &str) -> String {
    match text.char_indices().nth(MAX_MESSAGE_CHARS) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

/// How one bounded line read ended.
enum LineRead {
    /// A whole line is in the buffer.
    Line,
    /// The line passed [`MAX_LINE_BYTES`]: its first bytes, for the audit log; the rest is
    /// skipped.
    Oversized(Vec<u8>),
    /// The client closed stdin.
    Eof,
    /// Reading failed.
    Io(io::Error),
}

/// The server's side of MCP over a byte stream, one message per line.
pub struct LineTransport<R, W> {
    read: BufReader<R>,
    /// The line being read; a read cancelled halfway leaves its bytes here for the next one.
    line: Vec<u8>,
    /// Skipping the rest of an oversized line.
    discarding: bool,
    /// Where every message goes; the lock keeps each one a whole line.
    write: Arc<Mutex<Option<W>>>,
    audit: Option<Arc<AuditLog>>,
    /// The reply to the last rejected line, written before the next line is read.
    reply: Option<JoinHandle<()>>,
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// A transport reading `read` and writing `write`, recording problems in `audit`.
    pub fn new(read: R, write: W, audit: Option<Arc<AuditLog>>) -> LineTransport<R, W> {
        LineTransport {
            read: BufReader::new(read),
            line: Vec::new(),
            discarding: false,
            write: Arc::new(Mutex::new(Some(write))),
            audit,
            reply: None,
        }
    }

    /// Read one `\n`-terminated line into `self.line`, never letting it grow past the cap.
    /// Cancel-safe: nothing is consumed from the reader that is not also kept in `self.line`.
    async fn read_line(&mut self) -> LineRead {
        loop {
            let (consumed, outcome) = {
                let available = match self.read.fill_buf().await {
                    Ok(available) => available,
                    Err(error) => return LineRead::Io(error),
                };
                if available.is_empty() {
                    return LineRead::Eof;
                }
                let newline = available.iter().position(|b| *b == b'\n');
                let take = newline.map_or(available.len(), |index| index + 1);
                if self.discarding {
                    if newline.is_some() {
                        self.discarding = false;
                    }
                    (take, None)
                } else if self.line.len().saturating_add(take) > MAX_LINE_BYTES {
                    let mut head = std::mem::take(&mut self.line);
                    head.extend_from_slice(&available[..take.min(MAX_RECORDED_TEXT_BYTES)]);
                    head.truncate(MAX_RECORDED_TEXT_BYTES);
                    self.discarding = newline.is_none();
                    (take, Some(LineRead::Oversized(head)))
                } else {
                    self.line.extend_from_slice(&available[..take]);
                    (take, newline.map(|_| LineRead::Line))
                }
            };
            self.read.consume(consumed);
            if let Some(outcome) = outcome {
                return outcome;
            }
        }
    }

    /// Record a request that is not a tool call (those are recorded with their outcome by the
    /// server), so that every request is in the audit log.
    fn note_request(&self, message: &RxJsonRpcMessage<RoleServer>, line: &[u8]) {
        let (Some(log), JsonRpcMessage::Request(request)) = (&self.audit, message) else {
            return;
        };
        if matches!(request.request, ClientRequest::CallToolRequest(_)) {
            return;
        }
        if let Err(error) = log.record(&AuditEntry::request(line)) {
            tracing::warn!("{error}");
        }
    }

    /// Record `problem` about `line` and write its reply, if it has one.
    fn handle(&mut self, problem: &Problem, line: &[u8]) {
        let reply = problem.reply.as_ref().map(|reply| {
            let mut bytes = serde_json::to_vec(reply).unwrap_or_default();
            bytes.push(b'\n');
            bytes
        });
        if let Some(log) = &self.audit {
            let entry = AuditEntry::protocol(
                problem.event,
                line,
                problem.code,
                problem.error_kind,
                reply.as_ref().map_or(0, Vec::len),
            );
            if let Err(error) = log.record(&entry) {
                tracing::warn!("{error}");
            }
        }
        tracing::debug!(event = problem.event, "rejected an incoming line");
        if let Some(bytes) = reply {
            let write = Arc::clone(&self.write);
            // Its own task, so a `receive` cancelled by rmcp's select cannot cut a reply short;
            // the next `receive` waits for it, so replies keep the order of the lines.
            self.reply = Some(tokio::spawn(async move {
                if let Err(error) = write_line(&write, &bytes).await {
                    tracing::warn!("cannot answer a rejected line: {error}");
                }
            }));
        }
    }
}

/// Write one whole line under the writer's lock.
async fn write_line<W: AsyncWrite + Unpin>(
    write: &Mutex<Option<W>>,
    bytes: &[u8],
) -> io::Result<()> {
    let mut guard = write.lock().await;
    let writer = guard
        .as_mut()
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotConnected, "transport is closed"))?;
    writer.write_all(bytes).await?;
    writer.flush().await
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), io::Error>> + Send + 'static {
        let bytes = serde_json::to_vec(&item).map(|mut bytes| {
            bytes.push(b'\n');
            bytes
        });
        let write = Arc::clone(&self.write);
        async move {
            let bytes = bytes.map_err(io::Error::other)?;
            write_line(&write, &bytes).await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if let Some(reply) = self.reply.as_mut() {
                let _ = reply.await;
                self.reply = None;
            }
            match self.read_line().await {
                LineRead::Line => {}
                LineRead::Oversized(head) => {
                    tracing::warn!("an incoming message passed {MAX_LINE_BYTES} bytes");
                    self.handle(&oversized(), &head);
                    continue;
                }
                LineRead::Eof => return None,
                LineRead::Io(error) => {
                    tracing::error!("cannot read stdin: {error}");
                    return None;
                }
            }
            let line = std::mem::take(&mut self.line);
            let incoming = classify(&line);
            match incoming {
                Incoming::Message(message, problem) => {
                    match problem {
                        Some(problem) => self.handle(&problem, content(&line)),
                        None => self.note_request(&message, content(&line)),
                    }
                    self.line = recycle(line);
                    return Some(*message);
                }
                Incoming::Blank => {}
                Incoming::Rejected(problem) => self.handle(&problem, content(&line)),
            }
            self.line = recycle(line);
        }
    }

    async fn close(&mut self) -> Result<(), io::Error> {
        drop(self.write.lock().await.take());
        Ok(())
    }
}

/// The buffer emptied for the next line, keeping its capacity unless it grew huge.
fn recycle(mut line: Vec<u8>) -> Vec<u8> {
    line.clear();
    if line.capacity() > 1024 * 1024 {
        line.shrink_to(64 * 1024);
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rejected(line: &str) -> Problem {
        match classify(line.as_bytes()) {
            Incoming::Rejected(problem) => problem,
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn a_line_that_is_not_json_is_a_parse_error_with_a_null_id() {
        for line in [
            "this is not json {",
            "{\"jsonrpc\":\"2.0\",\"id\":",
            "\u{feff}{]",
            "{\"a\": \"\u{1}\"\n",
        ] {
            let problem = rejected(line);
            assert_eq!(problem.event, event::UNPARSABLE_LINE, "{line}");
            let reply = problem.reply.unwrap();
            assert_eq!(reply["error"]["code"], PARSE_ERROR, "{line}");
            assert_eq!(reply["jsonrpc"], "2.0");
            assert!(reply.get("id").is_some_and(Value::is_null), "{reply}");
        }
        let invalid_utf8 = match classify(b"{\"a\": \"\xff\"}") {
            Incoming::Rejected(problem) => problem,
            other => panic!("{other:?}"),
        };
        assert_eq!(invalid_utf8.code, Some(PARSE_ERROR));
    }

    #[test]
    fn json_that_is_not_a_request_is_invalid_request_with_its_id_if_it_has_one() {
        let problem = rejected(r#"{"jsonrpc":"2.0","id":5,"method":42}"#);
        assert_eq!(problem.event, event::INVALID_REQUEST);
        let reply = problem.reply.unwrap();
        assert_eq!(reply["error"]["code"], INVALID_REQUEST);
        assert_eq!(reply["id"], 5);
        let reply = rejected(r#"[1, 2]"#).reply.unwrap();
        assert!(reply["id"].is_null(), "{reply}");
        let reply = rejected(r#"{"jsonrpc":"2.0","id":{"x":1},"method":7}"#)
            .reply
            .unwrap();
        assert!(reply["id"].is_null(), "{reply}");
        // A malformed notification is recorded but never answered.
        let problem =
            rejected(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":5}"#);
        assert_eq!(problem.event, event::INVALID_NOTIFICATION);
        assert_eq!(problem.reply, None);
    }

    #[test]
    fn an_error_message_never_echoes_a_huge_value() {
        let huge = "v".repeat(1 << 20);
        let line = json!({ "jsonrpc": huge, "id": 1, "method": "ping" }).to_string();
        let reply = rejected(&line).reply.unwrap();
        assert!(
            reply.to_string().len() < 2048,
            "{} bytes",
            reply.to_string().len()
        );
        let line = json!({ "jsonrpc": "2.0", "id": 2, "method": "x".repeat(1 << 20) }).to_string();
        let problem = rejected(&line);
        let reply = problem.reply.unwrap();
        assert_eq!(reply["id"], 2);
        assert!(
            reply["error"]["message"]
                .as_str()
                .unwrap()
                .contains(&format!("at most {} bytes", tools::MAX_NAME_BYTES)),
            "{reply}"
        );
        assert!(reply.to_string().len() < 2048);
    }

    #[test]
    fn requests_pass_unknown_methods_are_noted_and_blank_lines_are_skipped() {
        let ping = classify(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}\r\n");
        assert!(matches!(ping, Incoming::Message(_, None)), "{ping:?}");
        let unknown = classify(br#"{"jsonrpc":"2.0","id":6,"method":"tables/drop","params":{}}"#);
        match unknown {
            Incoming::Message(_, Some(problem)) => {
                assert_eq!(problem.event, event::UNKNOWN_METHOD);
                assert_eq!(problem.reply, None);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(classify(b"\n"), Incoming::Blank));
        assert!(matches!(classify(b"  \r\n"), Incoming::Blank));
    }

    type DuplexTransport = LineTransport<tokio::io::DuplexStream, tokio::io::DuplexStream>;

    /// Receive the next message from `transport`: it must be the request numbered `id`.
    async fn assert_receives_request(transport: &mut DuplexTransport, id: i64) {
        let message = Transport::<RoleServer>::receive(transport).await.unwrap();
        assert!(
            matches!(&message, JsonRpcMessage::Request(request) if request.id == rmcp::model::NumberOrString::Number(id)),
            "{message:?}"
        );
    }

    /// The first line the client reads, as JSON. It waits up to 5 s: the task answering a bad
    /// line may still be running (the next receive would wait for it).
    async fn first_reply(client_read: tokio::io::DuplexStream) -> Value {
        let mut lines = BufReader::new(client_read).lines();
        let first = tokio::time::timeout(std::time::Duration::from_secs(5), lines.next_line())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        serde_json::from_str(&first).unwrap()
    }

    #[tokio::test]
    async fn a_bad_line_is_answered_on_the_same_writer_and_the_next_request_still_arrives() {
        let (mut client_write, server_read) = tokio::io::duplex(1 << 16);
        let (server_write, client_read) = tokio::io::duplex(1 << 16);
        let mut transport = LineTransport::new(server_read, server_write, None);
        client_write
            .write_all(b"not json\n{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}\n")
            .await
            .unwrap();
        assert_receives_request(&mut transport, 9).await;
        let reply = first_reply(client_read).await;
        assert_eq!(reply["error"]["code"], PARSE_ERROR);
        assert!(reply["id"].is_null());
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_line_past_the_cap_is_skipped_and_answered_and_the_next_request_still_arrives() {
        let (mut client_write, server_read) = tokio::io::duplex(1 << 16);
        let (server_write, client_read) = tokio::io::duplex(1 << 16);
        let mut transport = LineTransport::new(server_read, server_write, None);
        let writer = tokio::spawn(async move {
            let chunk = vec![b'a'; 1 << 20];
            for _ in 0..=MAX_LINE_BYTES >> 20 {
                client_write.write_all(&chunk).await.unwrap();
            }
            client_write
                .write_all(b"\n{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}\n")
                .await
                .unwrap();
            client_write
        });
        assert_receives_request(&mut transport, 4).await;
        let _client_write = writer.await.unwrap();
        let reply = first_reply(client_read).await;
        assert_eq!(reply["error"]["code"], INVALID_REQUEST, "{reply}");
        assert!(reply["id"].is_null());
        assert!(transport.line.capacity() <= MAX_LINE_BYTES);
    }
}

//! The stdio transport: one JSON-RPC message per line, and every line a request answered.
//!
//! rmcp's own stdio transport drops a line that is not JSON without a word (and the client
//! waits), answers JSON that is not a JSON-RPC message with an error whose `id` is left out, and
//! echoes an unknown method's name whatever its length; and rmcp's server ends the session when
//! its first message is not a request, and loses both answers when two requests share an id.
//! This one reads the same way (bounded lines, a UTF-8 byte order mark and a trailing `\r`
//! ignored, rmcp's own message types) but decides each line with the session's state machine
//! ([`crate::session`]):
//!
//! - a line that is not JSON is answered with a JSON-RPC parse error (-32700, `id: null`);
//! - JSON that is not a JSON-RPC message is answered with Invalid Request (-32600), with the
//!   request's `id` when it has a usable one, else `id: null`; a malformed notification is not
//!   answered (JSON-RPC never answers notifications);
//! - a line longer than [`MAX_LINE_BYTES`] is answered with Invalid Request;
//! - a method name longer than [`session::MAX_METHOD_BYTES`] is answered with Invalid Request;
//! - a notification or a reply before a request has opened the session is ignored (rmcp would
//!   end the session), and so is a cancellation of no request in flight;
//! - a request whose id is still in flight is answered at once with Invalid Request;
//! - each of these, and every request of an unknown method, is recorded in the audit log, and
//!   the log's charge for what the session made it record is waited out before the next line is
//!   read (`AuditLog::record`), so a flood of refused lines is slow.
//!
//! Replies and the transport's own errors go through one writer behind one lock, a whole line
//! per write, so they never interleave on stdout.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{ClientRequest, JsonRpcMessage};
use rmcp::service::{RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;
use tokio::task::JoinHandle;

use crate::audit::{AuditEntry, AuditLog, MAX_RECORDED_TEXT_BYTES, event};
use crate::session::{
    self, Incoming, Problem, Session, SessionCounters, content, supported_protocol_versions,
};

pub use crate::session::{
    INVALID_REQUEST, MAX_LINE_BYTES, METHOD_NOT_FOUND, PARSE_ERROR, classify,
};

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
    /// The reply to the last rejected line (after the audit log's charge for it), written
    /// before the next line is read.
    reply: Option<JoinHandle<()>>,
    /// What the session is: which lines reach rmcp, under which ids.
    session: Session,
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// A transport reading `read` and writing `write`, recording problems in `audit` and
    /// counting what it ignores or refuses in `counters`.
    pub fn new(
        read: R,
        write: W,
        audit: Option<Arc<AuditLog>>,
        counters: Arc<SessionCounters>,
    ) -> LineTransport<R, W> {
        LineTransport {
            read: BufReader::new(read),
            line: Vec::new(),
            discarding: false,
            write: Arc::new(Mutex::new(Some(write))),
            audit,
            reply: None,
            session: Session::new(supported_protocol_versions(), counters),
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
                // Up to and with the newline: `take` is at most `available.len()`.
                let line_part = available.get(..take).unwrap_or(available);
                if self.discarding {
                    if newline.is_some() {
                        self.discarding = false;
                    }
                    (take, None)
                } else if self.line.len().saturating_add(take) > MAX_LINE_BYTES {
                    let mut head = std::mem::take(&mut self.line);
                    head.extend_from_slice(
                        line_part
                            .get(..MAX_RECORDED_TEXT_BYTES)
                            .unwrap_or(line_part),
                    );
                    head.truncate(MAX_RECORDED_TEXT_BYTES);
                    self.discarding = newline.is_none();
                    (take, Some(LineRead::Oversized(head)))
                } else {
                    self.line.extend_from_slice(line_part);
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

    /// A tool call is recorded when it ends, maybe long after its line was read and others with
    /// it: so it is charged the most its record can take now, before the next line is read, and
    /// its record settles the difference (`AuditLog::charge_tool_call`). However many calls are
    /// in flight, none is admitted unpaid.
    fn charge_tool_call(&self, message: &RxJsonRpcMessage<RoleServer>) {
        if let (Some(log), JsonRpcMessage::Request(request)) = (&self.audit, message)
            && matches!(request.request, ClientRequest::CallToolRequest(_))
        {
            log.charge_tool_call();
        }
    }

    /// Record `problem` about `line`, say on stderr what was ignored or refused, and write the
    /// reply, if it has one, once the audit log's charge for the record is waited out.
    fn handle(&mut self, problem: &Problem, line: &[u8]) {
        let reply = problem.reply.as_ref().map(|reply| {
            let mut bytes = serde_json::to_vec(reply).unwrap_or_default();
            bytes.push(b'\n');
            bytes
        });
        let mut wait = Duration::ZERO;
        if let Some(log) = &self.audit {
            let entry = AuditEntry::protocol(
                problem.event,
                line,
                problem.code,
                problem.error_kind,
                reply.as_ref().map_or(0, Vec::len),
            );
            match log.record(&entry) {
                Ok(charge) => wait = charge,
                Err(error) => tracing::warn!("{error}"),
            }
        }
        self.report(problem);
        if reply.is_none() && wait.is_zero() {
            return;
        }
        let write = Arc::clone(&self.write);
        // Its own task, so a `receive` cancelled by rmcp's select cannot cut a reply (or the
        // wait before it) short; the next `receive` waits for it, so replies keep the order of
        // the lines and no line is read before the charge is waited out.
        self.reply = Some(tokio::spawn(async move {
            tokio::time::sleep(wait).await;
            if let Some(bytes) = reply
                && let Err(error) = write_line(&write, &bytes).await
            {
                tracing::warn!("cannot answer a rejected line: {error}");
            }
        }));
    }

    /// One line on stderr for what the session ignored or refused, with the running count.
    fn report(&self, problem: &Problem) {
        let counts = self.session.counters().snapshot();
        match problem.event {
            event::IGNORED_NOTIFICATION => tracing::info!(
                why = problem.error_kind,
                notifications_ignored = counts.notifications_ignored,
                "ignored a notification"
            ),
            event::IGNORED_REPLY => tracing::info!(
                replies_ignored = counts.replies_ignored,
                "ignored a response from the client before the session opened"
            ),
            event::DUPLICATE_ID => tracing::warn!(
                duplicate_ids_refused = counts.duplicate_ids_refused,
                "refused a request whose id is still in flight"
            ),
            _ => tracing::debug!(event = problem.event, "rejected an incoming line"),
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
        let mut item = item;
        self.session.on_send(&mut item);
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
            // What the session's records cost the log is paid in time before the next line:
            // recomputed on every call, so a `receive` cancelled while waiting loses nothing.
            if let Some(log) = &self.audit {
                let wait = log.pending_charge();
                if !wait.is_zero() {
                    tokio::time::sleep(wait).await;
                }
            }
            match self.read_line().await {
                LineRead::Line => {}
                LineRead::Oversized(head) => {
                    tracing::warn!("an incoming message passed {MAX_LINE_BYTES} bytes");
                    self.handle(&session::oversized(), &head);
                    continue;
                }
                LineRead::Eof => return None,
                LineRead::Io(error) => {
                    tracing::error!("cannot read stdin: {error}");
                    return None;
                }
            }
            let line = std::mem::take(&mut self.line);
            let incoming = self.session.on_line(&line);
            match incoming {
                Incoming::Message(message, problem) => {
                    match problem {
                        Some(problem) => self.handle(&problem, content(&line)),
                        None => self.note_request(&message, content(&line)),
                    }
                    self.charge_tool_call(&message);
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
    use serde_json::Value;

    use super::*;

    #[test]
    fn the_method_name_cap_is_the_tools_name_cap() {
        assert_eq!(session::MAX_METHOD_BYTES, crate::mcp::tools::MAX_NAME_BYTES);
    }

    type DuplexTransport = LineTransport<tokio::io::DuplexStream, tokio::io::DuplexStream>;

    /// Receive the next message from `transport`: it must be a request, and the client's id
    /// for it `id` (rmcp sees the session's own).
    async fn assert_receives_request(transport: &mut DuplexTransport, id: i64) {
        let message = Transport::<RoleServer>::receive(transport).await.unwrap();
        assert!(
            matches!(&message, JsonRpcMessage::Request(_)),
            "{message:?}"
        );
        assert!(
            transport
                .session
                .is_in_flight(&rmcp::model::NumberOrString::Number(id))
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
        let mut transport = LineTransport::new(server_read, server_write, None, Arc::default());
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
        let mut transport = LineTransport::new(server_read, server_write, None, Arc::default());
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

//! The transport fuzz target's invariants (fuzz/fuzz_targets/transport.rs is one line).
//!
//! The input is a client's stdin: lines split at `\n`. Two properties are checked:
//!
//! - **Stateless**, every line on its own through [`classify`]: no panic, and whatever the
//!   transport answers itself is one JSON-RPC error (-32700 or -32600) whose `id` is the line's
//!   own or null, short whatever the line quoted; a line that reads as a notification is never
//!   answered.
//! - **Stateful**, the whole sequence through rmcp's real server loop behind a [`Session`] (a
//!   stand-in handler whose tool `hold` stays in flight until the input is over or it is
//!   cancelled, so duplicates and cancellations meet requests in flight). Then a `ping` with an
//!   id no line used must be answered: no sequence of lines ends the session. Afterwards no id is
//!   answered more often than the client sent it, and no answer carries an id the client never
//!   sent (the session's own ids never leak).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    reason = "a fuzz harness reports a broken invariant by panicking"
)]

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, InitializeResult, ProtocolVersion,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{ErrorData as McpError, ServerHandler};
use serde_json::Value;
use tokio::sync::{Notify, watch};

use super::{
    INVALID_REQUEST, Incoming, PARSE_ERROR, Session, SessionCounters, classify,
    supported_protocol_versions,
};

/// Most lines of one input that go through the session (the rest are checked statelessly only):
/// enough for every interleaving of opening, requests in flight, duplicates and cancels.
const MAX_SESSION_LINES: usize = 64;
/// The probe's id: a string no seed uses. A line may still use it; then the probe may be
/// answered as a duplicate, which is an answer too.
const PROBE_ID: &str = "duckgate-fuzz-probe";
/// How long the probe may take: rmcp answers a ping in microseconds.
const PROBE_DEADLINE: Duration = Duration::from_secs(5);

/// Check one input (see the module's documentation); panics on a broken invariant.
pub fn session_lines(data: &[u8]) {
    let lines: Vec<&[u8]> = data.split(|b| *b == b'\n').collect();
    for line in &lines {
        check_stateless(line);
    }
    let lines: Vec<Vec<u8>> = lines
        .into_iter()
        .take(MAX_SESSION_LINES)
        .map(<[u8]>::to_vec)
        .collect();
    RUNTIME.with(|runtime| runtime.block_on(check_session(lines)));
}

thread_local! {
    /// One runtime per fuzzing thread: building one per input would cost more than the input.
    static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime");
}

fn check_stateless(line: &[u8]) {
    let Incoming::Rejected(problem) = classify(line) else {
        return;
    };
    let Some(reply) = problem.reply else {
        assert_eq!(problem.code, None, "{problem:?}");
        return;
    };
    let text = reply.to_string();
    assert!(text.len() < 4096, "a reply of {} bytes", text.len());
    assert_eq!(reply["jsonrpc"], "2.0", "{reply}");
    let code = reply["error"]["code"].as_i64();
    assert!(
        code == Some(PARSE_ERROR) || code == Some(INVALID_REQUEST),
        "{reply}"
    );
    assert_eq!(problem.code, code, "{reply}");
    let id = &reply["id"];
    assert!(id.is_null() || id.is_string() || id.is_i64() || id.is_u64() || id.is_f64());
    if let Ok(value) = serde_json::from_slice::<Value>(super::content(line)) {
        if value.get("id").is_none() && value.get("method").is_some() {
            panic!("a notification was answered: {reply}");
        }
        if !id.is_null() {
            assert_eq!(value.get("id").map(id_key), Some(id_key(id)), "{reply}");
        }
    }
}

/// What the stand-in server and the transport wrote, as JSON, in order.
type Written = Arc<Mutex<Vec<Value>>>;

async fn check_session(mut lines: Vec<Vec<u8>>) {
    lines.push(
        format!(r#"{{"jsonrpc":"2.0","id":"{PROBE_ID}","method":"ping"}}"#)
            .as_bytes()
            .to_vec(),
    );
    let sent_ids = client_ids(&lines);
    let written: Written = Arc::default();
    let wrote = Arc::new(Notify::new());
    let (release, released) = watch::channel(false);
    let transport = ScriptTransport {
        session: Session::new(
            supported_protocol_versions(),
            Arc::new(SessionCounters::default()),
        ),
        lines: lines.into(),
        written: Arc::clone(&written),
        wrote: Arc::clone(&wrote),
        end: released.clone(),
    };
    let handler = StandIn { release: released };
    let mut server = tokio::spawn(async move {
        match rmcp::service::serve_server(handler, transport).await {
            Ok(running) => format!("{:?}", running.waiting().await),
            Err(error) => format!("initialisation failed: {error}"),
        }
    });
    let probe = Value::String(PROBE_ID.to_string());
    let answered = tokio::time::timeout(PROBE_DEADLINE, async {
        loop {
            let notified = wrote.notified();
            if written.lock().unwrap().iter().any(|m| m["id"] == probe) {
                return;
            }
            tokio::select! {
                () = notified => {}
                ended = &mut server => {
                    panic!("the session ended before the probe was answered: {ended:?}")
                }
            }
        }
    })
    .await;
    assert!(answered.is_ok(), "the probe was not answered within 5 s");
    release.send_replace(true);
    let ended = tokio::time::timeout(Duration::from_secs(10), server).await;
    assert!(ended.is_ok(), "the session did not end after stdin closed");

    let mut answers: HashMap<String, usize> = HashMap::new();
    for message in written.lock().unwrap().iter() {
        let is_answer = message.get("result").is_some() || message.get("error").is_some();
        let id = &message["id"];
        if !is_answer || id.is_null() {
            continue;
        }
        let key = id_key(id);
        let sent = sent_ids.get(&key).copied().unwrap_or(0);
        assert!(
            sent > 0,
            "an answer under an id the client never sent: {message}"
        );
        let count = answers.entry(key).or_insert(0);
        *count += 1;
        assert!(
            *count <= sent,
            "id {id} answered {count} times, sent {sent}"
        );
    }
}

/// An id as JSON-RPC compares it: a number by its value (rmcp reads `5.0` as `5`), a string
/// by its text.
fn id_key(id: &Value) -> String {
    match id {
        Value::Number(number) => match (number.as_i64(), number.as_f64()) {
            (Some(integer), _) => format!("n{integer}"),
            (None, Some(float)) if float.fract() == 0.0 && float.abs() < 9.0e15 => {
                format!("n{}", float as i64)
            }
            (None, _) => format!("n{number}"),
        },
        Value::String(text) => format!("s{text}"),
        other => format!("j{other}"),
    }
}

/// How many lines carry each `id` (by [`id_key`]): the most answers that id may get.
fn client_ids(lines: &[Vec<u8>]) -> HashMap<String, usize> {
    let mut ids = HashMap::new();
    for line in lines {
        let line = super::content(line);
        let line = line.strip_prefix(super::UTF8_BOM).unwrap_or(line);
        if let Ok(value) = serde_json::from_slice::<Value>(line)
            && let Some(id) = value.get("id")
        {
            *ids.entry(id_key(id)).or_insert(0) += 1;
        }
    }
    ids
}

/// The line transport's logic over a script of lines: what it hands rmcp, what it answers.
struct ScriptTransport {
    session: Session,
    lines: VecDeque<Vec<u8>>,
    written: Written,
    wrote: Arc<Notify>,
    /// Stdin stays open (no end of input) until this turns true.
    end: watch::Receiver<bool>,
}

impl ScriptTransport {
    fn write(&self, message: Value) {
        self.written.lock().unwrap().push(message);
        self.wrote.notify_waiters();
    }
}

impl Transport<RoleServer> for ScriptTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        mut item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), std::io::Error>> + Send + 'static {
        self.session.on_send(&mut item);
        self.write(serde_json::to_value(&item).unwrap_or(Value::Null));
        std::future::ready(Ok(()))
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            let Some(line) = self.lines.pop_front() else {
                let _ = self.end.wait_for(|end| *end).await;
                return None;
            };
            match self.session.on_line(&line) {
                Incoming::Message(message, _) => return Some(*message),
                Incoming::Blank => {}
                Incoming::Rejected(problem) => {
                    if let Some(reply) = problem.reply {
                        self.write(reply);
                    }
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), std::io::Error> {
        Ok(())
    }
}

/// A server with duckgate's protocol revisions and one tool, `hold`, that answers only once the
/// input is over or it is cancelled (every other tool answers at once).
struct StandIn {
    release: watch::Receiver<bool>,
}

impl ServerHandler for StandIn {
    fn get_info(&self) -> ServerConfig {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(supported_protocol_versions())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        if request.name == "hold" {
            let mut release = self.release.clone();
            tokio::select! {
                () = context.ct.cancelled() => {}
                _ = release.wait_for(|end| *end) => {}
            }
        }
        Ok(CallToolResult::success(Vec::new()).into())
    }
}

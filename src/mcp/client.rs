//! A small MCP client that spawns `duckgate serve` (or any stdio server) and talks to it.
//!
//! Used by the integration tests, the benchmark and `duckgate demo`, so all three speak MCP through
//! the same code an agent's client would: rmcp's client over the child's stdin/stdout.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig,
    ClientRequest, Implementation, ProgressNotificationParam, ProgressToken, ProtocolVersion,
    ReadResourceRequestParams, ReadResourceResult, Resource, ResourceTemplate, ServerPeerInfo,
    ServerResult, Tool,
};
use rmcp::service::{
    NotificationContext, PeerRequestOptions, RequestHandle, RoleClient, RunningService,
};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ServiceExt};
use serde_json::Value;

/// The client side's handler: it records progress notifications and otherwise does nothing.
#[derive(Debug, Clone, Default)]
pub struct RecordingHandler {
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
}

impl ClientHandler for RecordingHandler {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("duckgate-client", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Ok(mut progress) = self.progress.lock() {
            progress.push(params);
        }
    }
}

/// A running MCP session with a spawned server.
pub struct McpClient {
    service: RunningService<RoleClient, RecordingHandler>,
    server_pid: Option<u32>,
}

/// A `tools/call` in flight that can be cancelled.
pub struct PendingCall {
    handle: RequestHandle<RoleClient>,
}

impl PendingCall {
    /// The progress token the request carries.
    pub fn progress_token(&self) -> ProgressToken {
        self.handle.progress_token.clone()
    }

    /// Send `notifications/cancelled` for this request.
    pub async fn cancel(self, reason: &str) -> Result<(), String> {
        self.handle
            .cancel(Some(reason.to_string()))
            .await
            .map_err(|e| e.to_string())
    }

    /// Wait for the result.
    pub async fn result(self) -> Result<CallToolResult, String> {
        match self
            .handle
            .await_response()
            .await
            .map_err(|e| e.to_string())?
        {
            ServerResult::CallToolResult(result) => Ok(result),
            other => Err(format!("unexpected reply to tools/call: {other:?}")),
        }
    }
}

impl McpClient {
    /// Spawn `exe args…` with piped stdin/stdout (stderr inherited) and initialise.
    pub async fn spawn<S: AsRef<OsStr>>(exe: &Path, args: &[S]) -> Result<McpClient, String> {
        let mut command = tokio::process::Command::new(exe);
        command.args(args);
        McpClient::spawn_command(command, Stdio::inherit()).await
    }

    /// Spawn a prepared command and initialise; `stderr` says where the server's logs go.
    pub async fn spawn_command(
        command: tokio::process::Command,
        stderr: Stdio,
    ) -> Result<McpClient, String> {
        let program = command
            .as_std()
            .get_program()
            .to_string_lossy()
            .into_owned();
        let (transport, _stderr) = TokioChildProcess::builder(command)
            .stderr(stderr)
            .spawn()
            .map_err(|e| format!("cannot start {program}: {e}"))?;
        let server_pid = transport.id();
        let service = RecordingHandler::default()
            .serve(transport)
            .await
            .map_err(|e| format!("MCP initialize with {program} failed: {e}"))?;
        Ok(McpClient {
            service,
            server_pid,
        })
    }

    /// The server process id.
    pub fn server_pid(&self) -> Option<u32> {
        self.server_pid
    }

    /// What the server said at `initialize`.
    pub fn server_info(&self) -> Option<Arc<ServerPeerInfo>> {
        self.service.peer_info()
    }

    /// `tools/list`, all pages.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, String> {
        self.service
            .list_all_tools()
            .await
            .map_err(|e| e.to_string())
    }

    /// `tools/call` with a JSON object of arguments (`Value::Null` for none).
    pub async fn call(&self, tool: &str, args: Value) -> Result<CallToolResult, String> {
        self.service
            .call_tool(call_params(tool, args)?)
            .await
            .map_err(|e| e.to_string())
    }

    /// Start a `tools/call` that can be cancelled while it runs.
    pub async fn start_call(&self, tool: &str, args: Value) -> Result<PendingCall, String> {
        let request =
            ClientRequest::CallToolRequest(CallToolRequest::new(call_params(tool, args)?));
        let handle = self
            .service
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
            .map_err(|e| e.to_string())?;
        Ok(PendingCall { handle })
    }

    /// Progress notifications received so far for `token`.
    pub fn progress_for(&self, token: &ProgressToken) -> Vec<ProgressNotificationParam> {
        self.service
            .service()
            .progress
            .lock()
            .map(|all| {
                all.iter()
                    .filter(|p| &p.progress_token == token)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }

    /// `resources/list`.
    pub async fn list_resources(&self) -> Result<Vec<Resource>, String> {
        self.service
            .list_all_resources()
            .await
            .map_err(|e| e.to_string())
    }

    /// `resources/templates/list`.
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, String> {
        self.service
            .list_all_resource_templates()
            .await
            .map_err(|e| e.to_string())
    }

    /// `resources/read`.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, String> {
        self.service
            .read_resource(ReadResourceRequestParams::new(uri))
            .await
            .map_err(|e| e.to_string())
    }

    /// Close stdin and wait for the server to exit (it is killed if it does not).
    pub async fn close(mut self) -> Result<(), String> {
        self.service
            .close()
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}

fn call_params(tool: &str, args: Value) -> Result<CallToolRequestParams, String> {
    let params = CallToolRequestParams::new(tool.to_string());
    match args {
        Value::Null => Ok(params),
        Value::Object(map) => Ok(params.with_arguments(map)),
        other @ (Value::Bool(_) | Value::Number(_) | Value::String(_) | Value::Array(_)) => {
            Err(format!("tool arguments must be a JSON object, not {other}"))
        }
    }
}

/// `content[0].text` of a result, or "" if there is none.
pub fn text_of(result: &CallToolResult) -> &str {
    result
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.as_str())
        .unwrap_or("")
}

/// The envelope (`structuredContent`), or `null`.
pub fn envelope_of(result: &CallToolResult) -> &Value {
    static NULL: Value = Value::Null;
    result.structured_content.as_ref().unwrap_or(&NULL)
}

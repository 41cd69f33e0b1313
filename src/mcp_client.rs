//! A small MCP client that spawns `duckgate serve` (or any stdio server) and talks to it.
//!
//! Used by the integration tests, the benchmark and `duckgate demo`, so all three speak MCP through
//! the same code an agent's client would: rmcp's client over the child's stdin/stdout.
//!
//! It speaks MCP 2025-11-25 (an `initialize` handshake) unless told to pin another revision
//! ([`McpClient::spawn_command_pinned`]): one with a handshake (2024-11-05 to 2025-11-25) is asked
//! for in `initialize`; 2026-07-28 and later start with `server/discover` and send the version,
//! client info and capabilities in every request's `_meta`.
//!
//! Its errors are `String`s on purpose: each is a sentence for the person reading a failed test,
//! a bench or the demo's output, and no caller decides anything from which one it is.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use rmcp::ClientHandler;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig,
    ClientRequest, Implementation, ProgressNotificationParam, ProgressToken, ProtocolVersion,
    ReadResourceRequestParams, ReadResourceResult, Resource, ResourceTemplate, ServerPeerInfo,
    ServerResult, Tool,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, NotificationContext, PeerRequestOptions, RequestHandle,
    RoleClient, RunningService,
};
use rmcp::transport::TokioChildProcess;
use serde_json::Value;

/// The revision the client asks for when none is pinned.
pub const DEFAULT_PROTOCOL_VERSION: ProtocolVersion = ProtocolVersion::V_2025_11_25;

/// The client side's handler: it records progress notifications and otherwise does nothing.
#[derive(Debug, Clone)]
pub struct RecordingHandler {
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
    protocol_version: ProtocolVersion,
}

impl Default for RecordingHandler {
    fn default() -> RecordingHandler {
        RecordingHandler::pinned(DEFAULT_PROTOCOL_VERSION)
    }
}

impl RecordingHandler {
    /// A handler whose client asks for `protocol_version`.
    pub fn pinned(protocol_version: ProtocolVersion) -> RecordingHandler {
        RecordingHandler {
            progress: Arc::default(),
            protocol_version,
        }
    }
}

impl ClientHandler for RecordingHandler {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("duckgate-client", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(self.protocol_version.clone())
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
        McpClient::spawn_command_pinned(command, stderr, DEFAULT_PROTOCOL_VERSION).await
    }

    /// Spawn a prepared command and start a session pinned to `protocol_version`: through
    /// `initialize` for a revision that has it, through `server/discover` (offering only that
    /// revision) for 2026-07-28 and later. The session fails if the server will not speak it.
    pub async fn spawn_command_pinned(
        command: tokio::process::Command,
        stderr: Stdio,
        protocol_version: ProtocolVersion,
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
        let lifecycle = if protocol_version.has_initialize() {
            ClientLifecycleMode::Initialize
        } else {
            ClientLifecycleMode::Discover {
                preferred_versions: vec![protocol_version.clone()],
            }
        };
        let service = RecordingHandler::pinned(protocol_version.clone())
            .serve_with_lifecycle(transport, lifecycle)
            .await
            .map_err(|e| format!("MCP {protocol_version} start with {program} failed: {e}"))?;
        Ok(McpClient {
            service,
            server_pid,
        })
    }

    /// The server process id.
    pub fn server_pid(&self) -> Option<u32> {
        self.server_pid
    }

    /// What the server said at `initialize` (or `server/discover`), with the revision in use.
    pub fn server_info(&self) -> Option<Arc<ServerPeerInfo>> {
        self.service.peer_info()
    }

    /// The protocol revision this session speaks.
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.service
            .peer_info()
            .map(|info| info.protocol_version.clone())
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

    /// `prompts/list`, all pages.
    pub async fn list_prompts(&self) -> Result<Vec<rmcp::model::Prompt>, String> {
        self.service
            .list_all_prompts()
            .await
            .map_err(|e| e.to_string())
    }

    /// `prompts/get` with a JSON object of arguments (`Value::Null` for none).
    pub async fn get_prompt(
        &self,
        name: &str,
        args: Value,
    ) -> Result<rmcp::model::GetPromptResult, String> {
        let mut params = rmcp::model::GetPromptRequestParams::new(name);
        match args {
            Value::Null => {}
            Value::Object(map) => params = params.with_arguments(map),
            other => return Err(format!("prompt arguments must be an object, not {other}")),
        }
        self.service
            .get_prompt(params)
            .await
            .map_err(|e| e.to_string())
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

/// The first text content of a result (a `plot` result has its image first), or "" if none.
pub fn text_of(result: &CallToolResult) -> &str {
    result
        .content
        .iter()
        .find_map(|c| c.as_text())
        .map(|t| t.text.as_str())
        .unwrap_or("")
}

/// The envelope (`structuredContent`), or `null`.
pub fn envelope_of(result: &CallToolResult) -> &Value {
    static NULL: Value = Value::Null;
    result.structured_content.as_ref().unwrap_or(&NULL)
}

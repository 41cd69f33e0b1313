//! The MCP server on rmcp: protocol versions, the `tools/call` path (the kernel refusal, the
//! argument caps, the dispatch to each tool's module, error recovery, the audit record),
//! resources, and progress notifications. What each tool does is in `tools/`.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Instant;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, GetPromptRequestParams, GetPromptResponse,
    Implementation, InitializeResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, ServerHandler};
use serde_json::{Value, json};

use crate::audit::AuditError;
use crate::gateway::Gateway;
use crate::mcp::descriptions::ServeOptions;
use crate::mcp::envelope::{ErrorBody, Reply};
use crate::mcp::prompts;
use crate::mcp::tools::catalog_lookup::{find_table, percent_decode, table_detail};
use crate::mcp::tools::context::ToolContext;
use crate::mcp::tools::{self, ToolName};
use crate::session::SessionCounters;
use duckgate_validate::error::ErrorKind;

pub use crate::session::{MAX_PROTOCOL_VERSION, supported_protocol_versions};

/// The revision `initialize` answers with when the client asks for one it cannot have there:
/// 2025-11-25, the last with an `initialize` handshake (2026-07-28 has none, so a client that
/// names it in `initialize` is offered this one instead).
pub const MAX_INITIALIZE_PROTOCOL_VERSION: ProtocolVersion = ProtocolVersion::V_2025_11_25;

/// What the server tells an agent at `initialize`.
pub const INSTRUCTIONS: &str = "duckgate gives read-only SQL access to one DuckDB database. \
Start with list_tables to see the tables, then describe_table for exact column names and types, \
then query with one SELECT (DuckDB dialect). search_schema finds tables and columns by keyword, \
list_relationships shows join keys, sample_rows shows example values, explain_query shows a plan \
without running it, server_info shows the limits and the sandbox, list_files shows the data \
files of the folders the operator declared, which SQL reads by that path (FROM 'exports/a.parquet'). \
Writes, settings, other files and network are refused. Every result's structuredContent is {status, data, error, follow_up_hints}: \
status is success, empty (no rows), partial (truncated at the limit), error or refused; on error, \
follow error.recovery (suggested_tool, suggested_args, fuzzy_matches).";

/// URI of the whole-schema resource.
pub const SNAPSHOT_URI: &str = "schema://snapshot";
/// URI template of one table's schema.
pub const TABLE_URI_TEMPLATE: &str = "schema://table/{name}";
const TABLE_URI_PREFIX: &str = "schema://table/";
/// URI of the declared folders' files (when folders are declared).
pub const FILES_URI: &str = "schema://files";
/// URI template of one file's columns (when folders are declared).
pub const FILE_URI_TEMPLATE: &str = "schema://file/{path}";
const FILE_URI_PREFIX: &str = "schema://file/";

/// The duckgate MCP server.
#[derive(Debug, Clone)]
pub struct DuckgateServer {
    gateway: Gateway,
    options: Arc<ServeOptions>,
    tools: Arc<Vec<Tool>>,
    /// What the transport ignored or refused in this session (for `server_info`).
    counters: Arc<SessionCounters>,
}

impl DuckgateServer {
    /// A server answering from `gateway`, its transport counting into `counters`.
    pub fn new(
        gateway: Gateway,
        options: ServeOptions,
        counters: Arc<SessionCounters>,
    ) -> DuckgateServer {
        let time_zone = gateway.config().time_zone.clone();
        let tools = ToolName::ALL
            .into_iter()
            .map(|tool| tool.to_tool(&time_zone))
            .collect();
        DuckgateServer {
            gateway,
            options: Arc::new(options),
            tools: Arc::new(tools),
            counters,
        }
    }

    /// What a tool may use of this server (`tools::context`).
    pub(crate) fn tool_context(&self) -> ToolContext<'_> {
        ToolContext::new(&self.gateway, &self.options, &self.counters)
    }

    /// Answer one call of `tool`: refused whole when the kernel cannot confine workers, then
    /// the argument caps, then the tool's own module; an error gets its "did you mean".
    async fn call(
        &self,
        tool: ToolName,
        params: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Reply {
        // A server whose kernel cannot confine workers answers every call with why, and runs
        // nothing (the gateway refuses on its own too).
        if let Err(refusal) = self.gateway.refusal() {
            return Reply::failed(self.tool_context().gateway_error(refusal, None));
        }
        let arguments = params.arguments;
        // Size caps first: an over-long argument costs no catalog fetch and no fuzzy matching.
        if let Err(error) = tools::check_argument_sizes(tool, arguments.as_ref()) {
            return Reply::failed(error);
        }
        let tools = self.tool_context();
        let outcome = tool.call(&tools, arguments, context).await;
        match outcome {
            Ok(reply) => reply,
            Err(error) => Reply::failed(tools.with_fuzzy_matches(error).await),
        }
    }

    /// Record `reply` in the audit log, if there is one, and hold it for what the session owes
    /// for its records (see `AuditLog::record`). A failed write is
    /// logged on stderr and, with `--audit-required`, replaces the reply with an error (fail
    /// closed: the agent gets nothing the log did not record).
    async fn audited(
        &self,
        tool: ToolName,
        arguments: Option<&serde_json::Map<String, Value>>,
        reply: Reply,
        started: Instant,
    ) -> Reply {
        let Some(log) = self.gateway.config().audit.as_ref() else {
            return reply;
        };
        let envelope = &reply.envelope;
        let bytes = serde_json::to_string(envelope).map_or(0, |s| s.len()) + reply.text.len();
        let entry = crate::audit::AuditEntry {
            event: crate::audit::event::TOOL_CALL,
            tool: Some(tool.as_str()),
            arguments,
            line: None,
            jsonrpc_code: None,
            status: crate::audit::AuditStatus::Tool(envelope.status),
            error_kind: envelope
                .error
                .as_ref()
                .map(|e| crate::audit::AuditErrorKind::Registry(e.kind)),
            rows: envelope.data.get("row_count").and_then(Value::as_u64),
            bytes,
            duration_ms: started.elapsed().as_secs_f64() * 1000.0,
        };
        match log.record(&entry) {
            Ok(wait) => {
                if !wait.is_zero() {
                    tokio::time::sleep(wait).await;
                }
                reply
            }
            Err(error) => {
                tracing::warn!("{error}");
                if !log.required() {
                    return reply;
                }
                let message = match error {
                    AuditError::Open { .. }
                    | AuditError::Inspect { .. }
                    | AuditError::Rotate { .. }
                    | AuditError::Hold { .. }
                    | AuditError::Write { .. } => {
                        "The audit log is unwritable, and the operator requires every call to be recorded (--audit-required), so this call was not answered."
                    }
                };
                Reply::failed(ErrorBody::new(ErrorKind::InternalError, message))
            }
        }
    }

    async fn read_schema_resource(&self, uri: &str) -> Result<String, McpError> {
        let catalog = self.tool_context().catalog().await.map_err(|error| {
            McpError::internal_error(
                error.message.clone(),
                Some(json!({ "kind": error.kind, "hint": error.recovery.hint })),
            )
        })?;
        if uri == SNAPSHOT_URI {
            return Ok(serde_json::to_string(&*catalog).unwrap_or_default());
        }
        let folders_declared = !self.gateway.folder_rules().folders.is_empty();
        if folders_declared && uri == FILES_URI {
            return tools::list_files::files_resource(&self.tool_context())
                .await
                .map(|files| files.to_string())
                .map_err(|error| McpError::internal_error(error.message, None));
        }
        if let Some(encoded) = uri
            .strip_prefix(FILE_URI_PREFIX)
            .filter(|_| folders_declared)
        {
            let path = percent_decode(encoded);
            let context = self.tool_context();
            let Some(path) = context.as_file(&path) else {
                return Err(McpError::resource_not_found(
                    format!(
                        "No file {path}: a file's path begins with a declared folder's name (see {FILES_URI})."
                    ),
                    None,
                ));
            };
            return tools::describe_table::file_detail(&context, path, Default::default())
                .await
                .map(|(data, _)| data.to_string())
                .map_err(|error| McpError::resource_not_found(error.message, None));
        }
        let Some(encoded) = uri.strip_prefix(TABLE_URI_PREFIX) else {
            return Err(McpError::resource_not_found(
                format!("No resource {uri}. Resources: {SNAPSHOT_URI} and {TABLE_URI_TEMPLATE}."),
                None,
            ));
        };
        let name = percent_decode(encoded);
        match find_table(&catalog, &name, None, None).await {
            Ok(table) => Ok(table_detail(&catalog, table).to_string()),
            Err(error) => Err(McpError::resource_not_found(
                error.message,
                Some(json!({ "fuzzy_matches": error.recovery.fuzzy_matches })),
            )),
        }
    }
}

impl ServerHandler for DuckgateServer {
    fn get_info(&self) -> ServerConfig {
        InitializeResult::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_prompts()
                .build(),
        )
        .with_server_info(
            Implementation::new("duckgate", env!("CARGO_PKG_VERSION"))
                .with_title("duckgate — sandboxed read-only DuckDB gateway"),
        )
        .with_instructions(INSTRUCTIONS)
        .with_protocol_version(MAX_INITIALIZE_PROTOCOL_VERSION)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(supported_protocol_versions())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let Some(tool) = ToolName::parse(&request.name) else {
            let available: Vec<&str> = ToolName::ALL.iter().map(|t| t.as_str()).collect();
            let error = McpError::invalid_params(
                tools::unknown_tool_message(&request.name),
                Some(json!({ "available_tools": available })),
            );
            // Recorded too: a call of a tool that does not exist is still a call.
            if let Some(log) = self.gateway.config().audit.as_ref() {
                let entry = crate::audit::AuditEntry {
                    event: crate::audit::event::UNKNOWN_TOOL,
                    tool: Some(&*request.name),
                    arguments: request.arguments.as_ref(),
                    line: None,
                    jsonrpc_code: Some(i64::from(error.code.0)),
                    status: crate::audit::AuditStatus::ProtocolError,
                    error_kind: Some(crate::audit::AuditErrorKind::JsonRpc("invalid_params")),
                    rows: None,
                    bytes: serde_json::to_string(&error).map_or(0, |s| s.len()),
                    duration_ms: 0.0,
                };
                match log.record(&entry) {
                    Ok(wait) if !wait.is_zero() => tokio::time::sleep(wait).await,
                    Ok(_) => {}
                    Err(failure) => tracing::warn!("{failure}"),
                }
            }
            return Err(error);
        };
        // Every tool call passes here: the audit hook sees each one.
        let started = Instant::now();
        let arguments = request.arguments.clone();
        // Every reply within the one byte budget, whichever path made it.
        let reply = self
            .call(tool, request, &context)
            .await
            .within_budget(self.gateway.config().max_reply_bytes);
        Ok(self
            .audited(tool, arguments.as_ref(), reply, started)
            .await
            .into_result()
            .into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Ok(ListPromptsResult::with_all_items(prompts::list()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let time_zone = &self.gateway.config().time_zone;
        prompts::get(&request.name, request.arguments.as_ref(), time_zone)
            .map(GetPromptResponse::from)
            .map_err(|error| McpError::invalid_params(error.0, None))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let mut resources = vec![
            Resource::new(SNAPSHOT_URI, "schema_snapshot")
                .with_title("Database schema")
                .with_description(
                    "Every table and view with columns, types, comments, indexes, and all foreign keys, as JSON.",
                )
                .with_mime_type("application/json"),
        ];
        if !self.gateway.folder_rules().folders.is_empty() {
            resources.push(
                Resource::new(FILES_URI, "data_files")
                    .with_title("Data files")
                    .with_description(
                        "The data files of the declared folders, by the path SQL reads them by, with format, size and when modified, as JSON (as list_files).",
                    )
                    .with_mime_type("application/json"),
            );
        }
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let mut templates = vec![
            ResourceTemplate::new(TABLE_URI_TEMPLATE, "table_schema")
                .with_title("One table's schema")
                .with_description("Columns, indexes and foreign keys of one table or view, as JSON (same as describe_table).")
                .with_mime_type("application/json"),
        ];
        if !self.gateway.folder_rules().folders.is_empty() {
            templates.push(
                ResourceTemplate::new(FILE_URI_TEMPLATE, "file_schema")
                    .with_title("One data file's columns")
                    .with_description("Columns and types of one data file of a declared folder, its path percent-encoded, as JSON (same as describe_table).")
                    .with_mime_type("application/json"),
            );
        }
        Ok(ListResourceTemplatesResult::with_all_items(templates))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        tools::check_resource_uri(&request.uri, || {
            request
                .uri
                .strip_prefix(TABLE_URI_PREFIX)
                .or_else(|| request.uri.strip_prefix(FILE_URI_PREFIX))
                .map(percent_decode)
        })
        .map_err(|error| {
            McpError::invalid_params(
                error.message.clone(),
                Some(json!({ "kind": error.kind, "construct": error.construct })),
            )
        })?;
        let text = self.read_schema_resource(&request.uri).await?;
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(text, request.uri).with_mime_type("application/json"),
        ])
        .into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_versions_run_from_2024_11_05_to_2026_07_28() {
        let versions: Vec<&str> = supported_protocol_versions()
            .iter()
            .map(ProtocolVersion::as_str)
            .collect();
        assert_eq!(
            versions,
            [
                "2024-11-05",
                "2025-03-26",
                "2025-06-18",
                "2025-11-25",
                "2026-07-28"
            ]
        );
        assert!(MAX_INITIALIZE_PROTOCOL_VERSION.has_initialize());
        assert!(!MAX_PROTOCOL_VERSION.has_initialize());
    }
}

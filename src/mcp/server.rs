//! The MCP server: tool dispatch, resources, progress and cancellation, on rmcp.

use std::borrow::Cow;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, ServerHandler};
use serde_json::{Value, json};

use crate::error::ErrorKind;
use crate::gateway::{Gateway, GatewayError};
use crate::mcp::ServeOptions;
use crate::mcp::envelope::{Envelope, ErrorBody, Status};
use crate::mcp::fuzzy;
use crate::mcp::render;
use crate::mcp::tools::{
    self, DescribeTableArgs, ExplainArgs, ListTablesArgs, NoArgs, PlotArgs, QueryArgs,
    SampleRowsArgs, SearchArgs, ToolName,
};
use crate::protocol::{
    CatalogSnapshot, ChartRequest, ForeignKey, MissingKind, QueryResult, TableInfo,
};
use crate::sandbox::budget::format_size;
use crate::sql_text::quote_identifier;

/// The newest protocol revision this server speaks: 2026-07-28, where a client starts with
/// `server/discover` (or straight away) and every request carries its own version and
/// capabilities in `_meta`. Every older revision is still served (see
/// [`supported_protocol_versions`]).
pub const MAX_PROTOCOL_VERSION: ProtocolVersion = ProtocolVersion::V_2026_07_28;

/// The revision `initialize` answers with when the client asks for one it cannot have there:
/// 2025-11-25, the last with an `initialize` handshake (2026-07-28 has none, so a client that
/// names it in `initialize` is offered this one instead).
pub const MAX_INITIALIZE_PROTOCOL_VERSION: ProtocolVersion = ProtocolVersion::V_2025_11_25;

/// Every protocol revision this server negotiates, oldest first: 2024-11-05, 2025-03-26,
/// 2025-06-18 and 2025-11-25 over `initialize`, and 2026-07-28 over `server/discover` and
/// per-request `_meta`. `server/discover` advertises exactly this list.
pub fn supported_protocol_versions() -> &'static [ProtocolVersion] {
    ProtocolVersion::known_up_to(&MAX_PROTOCOL_VERSION)
}

/// What the server tells an agent at `initialize`.
pub const INSTRUCTIONS: &str = "duckgate gives read-only SQL access to one DuckDB database. \
Start with list_tables to see the tables, then describe_table for exact column names and types, \
then query with one SELECT (DuckDB dialect). search_schema finds tables and columns by keyword, \
list_relationships shows join keys, sample_rows shows example values, explain_query shows a plan \
without running it, server_info shows the limits and the sandbox. Writes, settings, files and \
network are refused. Every result's structuredContent is {status, data, error, follow_up_hints}: \
status is success, empty (no rows), partial (truncated at the limit), error or refused; on error, \
follow error.recovery (suggested_tool, suggested_args, fuzzy_matches).";

/// URI of the whole-schema resource.
pub const SNAPSHOT_URI: &str = "schema://snapshot";
/// URI template of one table's schema.
pub const TABLE_URI_TEMPLATE: &str = "schema://table/{name}";
const TABLE_URI_PREFIX: &str = "schema://table/";

/// Fuzzy matches offered for an unknown name.
const MAX_FUZZY_MATCHES: usize = 5;

/// One tool's answer before it becomes a `CallToolResult`.
struct Reply {
    envelope: Envelope,
    text: String,
    /// A PNG (base64) shown before the text: the `plot` tool's picture.
    image: Option<String>,
}

impl Reply {
    fn failed(error: ErrorBody) -> Reply {
        let text = error_text(&error);
        Reply {
            envelope: Envelope::failed(error),
            text,
            image: None,
        }
    }

    fn into_result(self) -> CallToolResult {
        let is_error = self.envelope.status.is_error();
        let structured = serde_json::to_value(&self.envelope).unwrap_or_else(|error| {
            json!({
                "status": "error", "data": null, "follow_up_hints": null,
                "error": { "kind": "internal_error", "message": format!("envelope did not serialise: {error}"),
                           "construct": null,
                           "recovery": { "suggested_tool": null, "suggested_args": null, "fuzzy_matches": [], "hint": null } }
            })
        });
        let mut result = CallToolResult::structured(structured);
        result.content = match self.image {
            Some(png) => vec![
                ContentBlock::image(png, "image/png"),
                ContentBlock::text(self.text),
            ],
            None => vec![ContentBlock::text(self.text)],
        };
        result.is_error = Some(is_error);
        result
    }
}

/// The message first (seed messages stay word for word at the start), then what to do.
fn error_text(error: &ErrorBody) -> String {
    let mut text = error.message.clone();
    let label = match Status::for_error(error.kind) {
        Status::Refused => "refused",
        Status::Success | Status::Empty | Status::Partial | Status::Error => "error",
    };
    text.push_str(&format!("\n({label}: {}", error.kind));
    if let Some(construct) = &error.construct {
        text.push_str(&format!("; construct: {construct}"));
    }
    text.push(')');
    if let Some(hint) = &error.recovery.hint {
        text.push_str(&format!("\nHint: {hint}"));
    }
    if !error.recovery.fuzzy_matches.is_empty() {
        text.push_str(&format!(
            "\nDid you mean: {}?",
            error.recovery.fuzzy_matches.join(", ")
        ));
    }
    if let Some(tool) = &error.recovery.suggested_tool {
        match &error.recovery.suggested_args {
            Some(args) => text.push_str(&format!("\nNext: call {tool} with {args}")),
            None => text.push_str(&format!("\nNext: call {tool}")),
        }
    }
    text
}

/// The duckgate MCP server.
#[derive(Debug, Clone)]
pub struct DuckgateServer {
    gateway: Gateway,
    options: Arc<ServeOptions>,
    tools: Arc<Vec<Tool>>,
}

impl DuckgateServer {
    /// A server answering from `gateway`.
    pub fn new(gateway: Gateway, options: ServeOptions) -> DuckgateServer {
        let time_zone = gateway.config().time_zone.clone();
        let tools = ToolName::ALL
            .into_iter()
            .map(|tool| tool.to_tool(&time_zone))
            .collect();
        DuckgateServer {
            gateway,
            options: Arc::new(options),
            tools: Arc::new(tools),
        }
    }

    /// The catalog with the operator's descriptions laid over DuckDB's comments.
    async fn catalog(&self) -> Result<Arc<CatalogSnapshot>, ErrorBody> {
        let catalog = self
            .gateway
            .catalog()
            .await
            .map_err(|e| self.gateway_error(e, None))?;
        if self.options.descriptions.is_empty() {
            return Ok(catalog);
        }
        let mut overlaid = (*catalog).clone();
        for table in &mut overlaid.tables {
            let qualified = format!("{}.{}", table.schema, table.name);
            if let Some(description) = self
                .options
                .descriptions
                .get(&qualified)
                .or_else(|| self.options.descriptions.get(&table.name))
            {
                table.description = Some(description.clone());
            }
        }
        Ok(Arc::new(overlaid))
    }

    /// A gateway failure with the recovery this kind calls for.
    fn gateway_error(&self, error: GatewayError, retry: Option<(ToolName, Value)>) -> ErrorBody {
        let mut body = ErrorBody::from_gateway(error);
        let sql_args = retry
            .as_ref()
            .and_then(|(_, args)| args.get("sql").cloned());
        match body.kind {
            ErrorKind::PolicyBlocked | ErrorKind::MultipleStatements => {
                body = body.suggest(ToolName::Query.as_str(), None);
                if body.recovery.hint.is_none() {
                    body.recovery.hint = Some(
                        "Send exactly one SELECT (or WITH … SELECT) over the database's tables."
                            .into(),
                    );
                }
            }
            ErrorKind::Timeout | ErrorKind::ResourceLimit => {
                if let Some(sql) = sql_args {
                    body =
                        body.suggest(ToolName::ExplainQuery.as_str(), Some(json!({ "sql": sql })));
                }
                if body.recovery.hint.is_none() {
                    body.recovery.hint = Some(
                        "Add WHERE filters, aggregate before returning rows, or lower the limit."
                            .into(),
                    );
                }
            }
            ErrorKind::DatabaseLocked => {
                if let Some((tool, args)) = retry {
                    body = body.suggest(tool.as_str(), Some(args));
                }
                if body.recovery.hint.is_none() {
                    body.recovery.hint =
                        Some("Another program is writing the database; retry in a moment.".into());
                }
            }
            // Nothing ran: the same call, a little later, is the way on.
            ErrorKind::Busy => {
                if let Some((tool, args)) = retry {
                    body = body.suggest(tool.as_str(), Some(args));
                }
                if body.recovery.hint.is_none() {
                    body.recovery.hint = Some(
                        "Every query worker is taken by other calls; retry this call in a few seconds."
                            .into(),
                    );
                }
            }
            ErrorKind::DatabaseNotFound => {
                if body.recovery.hint.is_none() {
                    body.recovery.hint = Some(self.gateway.config().missing_db_hint.clone());
                }
            }
            // Left without a suggestion on purpose: `with_fuzzy_matches` fills it in.
            ErrorKind::UnknownName
            | ErrorKind::SyntaxError
            | ErrorKind::InvalidArgument
            | ErrorKind::Cancelled
            | ErrorKind::DatabaseError
            | ErrorKind::InternalError => {}
            // The hint is the operator's fix, from the gateway: no tool call can help.
            ErrorKind::SandboxUnavailable => {}
        }
        body
    }

    /// Fill `fuzzy_matches` for an unknown name the gateway reported and point at list_tables or
    /// search_schema. Errors this layer raised itself already carry both and are left alone.
    async fn with_fuzzy_matches(&self, mut body: ErrorBody) -> ErrorBody {
        if body.kind != ErrorKind::UnknownName || body.recovery.suggested_tool.is_some() {
            return body;
        }
        let Some(name) = body
            .construct
            .clone()
            .or_else(|| body.missing.as_ref().map(|m| m.name.clone()))
        else {
            return body.suggest(ToolName::ListTables.as_str(), None);
        };
        let Ok(catalog) = self.catalog().await else {
            return body.suggest(ToolName::ListTables.as_str(), None);
        };
        // What the engine read from DuckDB's message (`engine/errors.rs`); a refusal of the
        // parent's own validator names a column in its words, and carries no `missing`.
        let looking = if body.missing.as_ref().map(|m| m.kind) == Some(MissingKind::Column)
            || (body.missing.is_none() && body.message.to_lowercase().contains("column"))
        {
            fuzzy::Looking::ForColumn
        } else {
            fuzzy::Looking::ForTable
        };
        body.recovery.fuzzy_matches =
            fuzzy::catalog_matches_off_thread(&name, catalog, looking, MAX_FUZZY_MATCHES).await;
        let best_is_a_table = body
            .recovery
            .fuzzy_matches
            .first()
            .is_some_and(|m| !m.contains('.'));
        if best_is_a_table || body.recovery.fuzzy_matches.is_empty() {
            body = body.suggest(ToolName::ListTables.as_str(), None);
        } else {
            let bare = name
                .rsplit('.')
                .next()
                .unwrap_or(&name)
                .trim_matches('"')
                .to_string();
            body = body.suggest(
                ToolName::SearchSchema.as_str(),
                Some(json!({ "query": bare })),
            );
        }
        body
    }

    async fn call(
        &self,
        tool: ToolName,
        params: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Reply {
        // A server whose kernel cannot confine workers answers every call with why, and runs
        // nothing (the gateway refuses on its own too).
        if let Err(refusal) = self.gateway.refusal() {
            return Reply::failed(self.gateway_error(refusal, None));
        }
        let arguments = params.arguments;
        // Size caps first: an over-long argument costs no catalog fetch and no fuzzy matching.
        if let Err(error) = tools::check_argument_sizes(tool, arguments.as_ref()) {
            return Reply::failed(error);
        }
        let outcome = match tool {
            ToolName::ListTables => match tools::parse_args::<ListTablesArgs>(tool, arguments) {
                Ok(args) => self.list_tables(args).await,
                Err(error) => Err(error),
            },
            ToolName::DescribeTable => {
                match tools::parse_args::<DescribeTableArgs>(tool, arguments) {
                    Ok(args) => self.describe_table(args).await,
                    Err(error) => Err(error),
                }
            }
            ToolName::Query => match tools::parse_args::<QueryArgs>(tool, arguments) {
                Ok(args) => self.query(args, context).await,
                Err(error) => Err(error),
            },
            ToolName::SampleRows => match tools::parse_args::<SampleRowsArgs>(tool, arguments) {
                Ok(args) => self.sample_rows(args, context).await,
                Err(error) => Err(error),
            },
            ToolName::Plot => match tools::parse_args::<PlotArgs>(tool, arguments) {
                Ok(args) => self.plot(args, context).await,
                Err(error) => Err(error),
            },
            ToolName::ExplainQuery => match tools::parse_args::<ExplainArgs>(tool, arguments) {
                Ok(args) => self.explain_query(args, context).await,
                Err(error) => Err(error),
            },
            ToolName::SearchSchema => match tools::parse_args::<SearchArgs>(tool, arguments) {
                Ok(args) => self.search_schema(args).await,
                Err(error) => Err(error),
            },
            ToolName::ListRelationships => match tools::parse_args::<NoArgs>(tool, arguments) {
                Ok(NoArgs {}) => self.list_relationships().await,
                Err(error) => Err(error),
            },
            ToolName::ServerInfo => match tools::parse_args::<NoArgs>(tool, arguments) {
                Ok(NoArgs {}) => Ok(self.server_info().await),
                Err(error) => Err(error),
            },
        };
        match outcome {
            Ok(reply) => reply,
            Err(error) => Reply::failed(self.with_fuzzy_matches(error).await),
        }
    }

    /// Record `reply` in the audit log, if there is one. A failed write is logged on stderr and,
    /// with `--audit-required`, replaces the reply with an error (fail closed: the agent gets
    /// nothing the log did not record).
    fn audited(
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
            Ok(()) => reply,
            Err(error) => {
                tracing::warn!("{error}");
                if !log.required() {
                    return reply;
                }
                Reply::failed(ErrorBody::new(
                    ErrorKind::InternalError,
                    "The audit log is unwritable, and the operator requires every call to be recorded (--audit-required), so this call was not answered.",
                ))
            }
        }
    }

    async fn list_tables(&self, args: ListTablesArgs) -> Result<Reply, ErrorBody> {
        let catalog = self.catalog().await?;
        if let Some(schema) = &args.schema {
            let schemas = schema_names(&catalog);
            if !schemas.iter().any(|s| s.eq_ignore_ascii_case(schema)) {
                let mut error = ErrorBody::new(
                    ErrorKind::UnknownName,
                    format!(
                        "Schema '{schema}' does not exist. Schemas: {}.",
                        schemas.join(", ")
                    ),
                )
                .construct(schema.clone())
                .suggest(ToolName::ListTables.as_str(), Some(json!({})));
                error.recovery.fuzzy_matches = fuzzy::closest_off_thread(
                    schema,
                    schemas.iter().map(String::as_str),
                    MAX_FUZZY_MATCHES,
                )
                .await;
                return Err(error);
            }
        }
        let tables: Vec<TableInfo> = catalog
            .tables
            .iter()
            .filter(|t| {
                args.schema
                    .as_ref()
                    .is_none_or(|s| t.schema.eq_ignore_ascii_case(s))
            })
            .cloned()
            .collect();
        let summaries: Vec<Value> = tables
            .iter()
            .map(|t| {
                json!({
                    "schema": t.schema, "name": t.name, "kind": t.kind, "description": t.description,
                    "estimated_rows": t.estimated_rows, "column_count": t.columns.len()
                })
            })
            .collect();
        let status = if tables.is_empty() {
            Status::Empty
        } else {
            Status::Success
        };
        let hints: &[&str] = if tables.is_empty() {
            &[]
        } else {
            &["describe_table", "search_schema"]
        };
        Ok(Reply {
            envelope: Envelope::ok(status, json!({ "tables": summaries }), hints),
            text: render::tables_text(&tables),
            image: None,
        })
    }

    async fn describe_table(&self, args: DescribeTableArgs) -> Result<Reply, ErrorBody> {
        tools::check_not_blank(ToolName::DescribeTable, "table_name", &args.table_name)?;
        let catalog = self.catalog().await?;
        let table = find_table(&catalog, &args.table_name, args.schema.as_deref()).await?;
        Ok(Reply {
            envelope: Envelope::ok(
                Status::Success,
                table_detail(&catalog, table),
                &["sample_rows", "query"],
            ),
            text: render::table_text(table, &outgoing_keys(&catalog, table)),
            image: None,
        })
    }

    async fn query(
        &self,
        args: QueryArgs,
        context: &RequestContext<RoleServer>,
    ) -> Result<Reply, ErrorBody> {
        tools::check_not_blank(ToolName::Query, "sql", &args.sql)?;
        let sql = args.sql.clone();
        let limit = tools::check_limit(
            ToolName::Query,
            args.limit,
            tools::QUERY_DEFAULT_LIMIT,
            tools::QUERY_MAX_LIMIT,
            |limit| json!({ "sql": sql, "limit": limit }),
        )?;
        let run = self.gateway.query(&args.sql, limit, context.ct.clone());
        let result = with_progress(run, context).await.map_err(|e| {
            let retry_limit = args.limit.unwrap_or(tools::QUERY_DEFAULT_LIMIT);
            self.gateway_error(
                e,
                Some((
                    ToolName::Query,
                    json!({ "sql": args.sql, "limit": retry_limit }),
                )),
            )
        })?;
        Ok(rows_reply(result, None))
    }

    async fn sample_rows(
        &self,
        args: SampleRowsArgs,
        context: &RequestContext<RoleServer>,
    ) -> Result<Reply, ErrorBody> {
        tools::check_not_blank(ToolName::SampleRows, "table_name", &args.table_name)?;
        let table_name = args.table_name.clone();
        let limit = tools::check_limit(
            ToolName::SampleRows,
            args.limit,
            tools::SAMPLE_DEFAULT_LIMIT,
            tools::SAMPLE_MAX_LIMIT,
            |limit| json!({ "table_name": table_name, "limit": limit }),
        )?;
        let catalog = self.catalog().await?;
        let table = find_table(&catalog, &args.table_name, args.schema.as_deref()).await?;
        let columns: Vec<&str> = match &args.columns {
            None => table.columns.iter().map(|c| c.name.as_str()).collect(),
            Some(wanted) if wanted.is_empty() => {
                return Err(ErrorBody::new(
                    ErrorKind::InvalidArgument,
                    format!(
                        "columns must name at least one column of {}; leave it out for all columns.",
                        table.name
                    ),
                )
                .construct("columns"));
            }
            Some(wanted) => {
                let mut resolved = Vec::with_capacity(wanted.len());
                for name in wanted {
                    match table
                        .columns
                        .iter()
                        .find(|c| c.name.eq_ignore_ascii_case(name))
                    {
                        Some(column) => resolved.push(column.name.as_str()),
                        None => {
                            let allowed: Vec<&str> =
                                table.columns.iter().map(|c| c.name.as_str()).collect();
                            let mut error = ErrorBody::new(
                                ErrorKind::InvalidArgument,
                                format!(
                                    "Column '{name}' is not in {}.{}. Allowed columns: {}.",
                                    table.schema,
                                    table.name,
                                    allowed.join(", ")
                                ),
                            )
                            .construct(name.clone())
                            .suggest(
                                ToolName::DescribeTable.as_str(),
                                Some(json!({ "table_name": table.name, "schema": table.schema })),
                            );
                            error.recovery.fuzzy_matches = fuzzy::closest_off_thread(
                                name,
                                allowed.iter().copied(),
                                MAX_FUZZY_MATCHES,
                            )
                            .await;
                            return Err(error);
                        }
                    }
                }
                resolved
            }
        };
        // Identifiers come from the catalog, never from the agent's text, and are quoted.
        let select_list: Vec<String> = columns.iter().map(|c| quote_identifier(c)).collect();
        let sql = format!(
            "SELECT {} FROM {}.{} LIMIT {limit}",
            select_list.join(", "),
            quote_identifier(&table.schema),
            quote_identifier(&table.name)
        );
        let run = self.gateway.query(&sql, limit, context.ct.clone());
        let result = with_progress(run, context).await.map_err(|e| {
            self.gateway_error(
                e,
                Some((
                    ToolName::SampleRows,
                    json!({ "table_name": table.name, "schema": table.schema, "limit": limit }),
                )),
            )
        })?;
        Ok(rows_reply(result, Some(sql)))
    }

    async fn plot(
        &self,
        args: PlotArgs,
        context: &RequestContext<RoleServer>,
    ) -> Result<Reply, ErrorBody> {
        tools::check_not_blank(ToolName::Plot, "sql", &args.sql)?;
        let target_range = match (args.target_low, args.target_high) {
            (Some(low), Some(high)) => Some((low, high)),
            (None, None) => None,
            (Some(_), None) | (None, Some(_)) => {
                return Err(ErrorBody::new(
                    ErrorKind::InvalidArgument,
                    "target_low and target_high come together: give both (e.g. 70 and 180) or neither.",
                )
                .construct("target_low"));
            }
        };
        let chart = ChartRequest {
            kind: args.kind,
            x: args.x.clone(),
            y: args.y.clone(),
            title: args.title.clone(),
            width: args.width.unwrap_or(crate::plot::DEFAULT_WIDTH),
            height: args.height.unwrap_or(crate::plot::DEFAULT_HEIGHT),
            bins: args.bins,
            target_range,
        };
        let run = self.gateway.plot(&args.sql, chart, context.ct.clone());
        let reply = with_progress(run, context).await.map_err(|e| {
            self.gateway_error(
                e,
                Some((
                    ToolName::Plot,
                    json!({ "sql": args.sql, "kind": args.kind }),
                )),
            )
        })?;
        let text = format!(
            "{} chart of {} against {} ({} rows), {}×{} px. {}",
            args.kind,
            reply.y,
            reply.x,
            reply.rows_read,
            reply.width,
            reply.height,
            reply.summary_text
        );
        Ok(Reply {
            envelope: Envelope::ok(
                Status::Success,
                json!({
                    "kind": args.kind,
                    "x": reply.x,
                    "y": reply.y,
                    "width": reply.width,
                    "height": reply.height,
                    "rows_read": reply.rows_read,
                    "summary": {
                        "columns": reply.summary_columns,
                        "rows": reply.summary_rows,
                        "text": reply.summary_text,
                    }
                }),
                &["query"],
            ),
            text,
            image: Some(reply.png_base64),
        })
    }

    async fn explain_query(
        &self,
        args: ExplainArgs,
        context: &RequestContext<RoleServer>,
    ) -> Result<Reply, ErrorBody> {
        tools::check_not_blank(ToolName::ExplainQuery, "sql", &args.sql)?;
        let run = self.gateway.explain(&args.sql, context.ct.clone());
        let result = with_progress(run, context).await.map_err(|e| {
            self.gateway_error(
                e,
                Some((ToolName::ExplainQuery, json!({ "sql": args.sql }))),
            )
        })?;
        let summary = plan_summary(&result.plan);
        Ok(Reply {
            envelope: Envelope::ok(
                Status::Success,
                json!({ "plan": result.plan, "summary": summary }),
                &["query"],
            ),
            text: format!("Query plan (not executed):\n{summary}"),
            image: None,
        })
    }

    async fn search_schema(&self, args: SearchArgs) -> Result<Reply, ErrorBody> {
        tools::check_not_blank(ToolName::SearchSchema, "query", &args.query)?;
        let needle = args.query.trim().to_string();
        let query_for_retry = needle.clone();
        let limit = tools::check_limit(
            ToolName::SearchSchema,
            args.limit,
            tools::SEARCH_DEFAULT_LIMIT,
            tools::SEARCH_MAX_LIMIT,
            |limit| json!({ "query": query_for_retry, "limit": limit }),
        )?;
        let catalog = self.catalog().await?;
        let mut matches = search(&catalog, &needle);
        let truncated = matches.len() > limit;
        matches.truncate(limit);
        let did_you_mean = if matches.is_empty() {
            fuzzy::catalog_matches_off_thread(
                &needle,
                Arc::clone(&catalog),
                fuzzy::Looking::ForTable,
                MAX_FUZZY_MATCHES,
            )
            .await
        } else {
            Vec::new()
        };
        let mut text = if matches.is_empty() {
            format!("No table or column mentions '{needle}'.")
        } else {
            format!("{} matches for '{needle}':", matches.len())
        };
        for found in &matches {
            text.push_str(&format!("\n- {}", found.line()));
        }
        if truncated {
            text.push_str(&format!(
                "\n(more matches exist; raise limit up to {})",
                tools::SEARCH_MAX_LIMIT
            ));
        }
        if !did_you_mean.is_empty() {
            text.push_str(&format!("\nDid you mean: {}?", did_you_mean.join(", ")));
        }
        let status = match (matches.is_empty(), truncated) {
            (true, _) => Status::Empty,
            (false, true) => Status::Partial,
            (false, false) => Status::Success,
        };
        let hints: &[&str] = if matches.is_empty() {
            &["list_tables"]
        } else {
            &["describe_table"]
        };
        let data = json!({
            "query": needle,
            "matches": matches.iter().map(SchemaMatch::to_json).collect::<Vec<_>>(),
            "truncated": truncated,
            "did_you_mean": did_you_mean,
        });
        Ok(Reply {
            envelope: Envelope::ok(status, data, hints),
            text,
            image: None,
        })
    }

    async fn list_relationships(&self) -> Result<Reply, ErrorBody> {
        let catalog = self.catalog().await?;
        let keys = &catalog.foreign_keys;
        let text = if keys.is_empty() {
            "No foreign keys are declared in this database.".to_string()
        } else {
            let lines: Vec<String> = keys
                .iter()
                .map(|k| format!("- {}", render::foreign_key_text(k)))
                .collect();
            format!("{} foreign keys:\n{}", keys.len(), lines.join("\n"))
        };
        let status = if keys.is_empty() {
            Status::Empty
        } else {
            Status::Success
        };
        let hints: &[&str] = if keys.is_empty() {
            &["describe_table"]
        } else {
            &["query"]
        };
        Ok(Reply {
            envelope: Envelope::ok(status, json!({ "foreign_keys": keys }), hints),
            text,
            image: None,
        })
    }

    async fn server_info(&self) -> Reply {
        let config = self.gateway.config();
        let posture = self.gateway.posture().await;
        let memory = self.gateway.memory();
        let spill = self.gateway.spill();
        let workers = self.gateway.worker_origin().await;
        let limits = json!({
            "query_default_rows": tools::QUERY_DEFAULT_LIMIT,
            "query_max_rows": tools::QUERY_MAX_LIMIT,
            "sample_max_rows": tools::SAMPLE_MAX_LIMIT,
            "search_max_matches": tools::SEARCH_MAX_LIMIT,
            "timeout_seconds": config.timeout.as_secs_f64(),
            "max_result_bytes": config.max_result_bytes,
            "memory_limit": format_size(memory.duckdb_limit_bytes),
            "memory": memory,
            "spill": spill,
            "threads": config.threads,
            "max_concurrent_queries": config.max_concurrent,
            "warm_workers": config.warm_workers,
        });
        let mut text = format!(
            "duckgate {} serving {} (read-only)\nLimits: query rows 1–{} (default {}), timeout {} s, \
             result ≤ {} bytes, {} threads, {} concurrent queries\nMemory: {}\nSpilling: {}\n\
             Local time: {} (now(), current_date and TIMESTAMPTZ dates use it)",
            env!("CARGO_PKG_VERSION"),
            config.db_path.display(),
            tools::QUERY_MAX_LIMIT,
            tools::QUERY_DEFAULT_LIMIT,
            config.timeout.as_secs_f64(),
            config.max_result_bytes,
            config.threads,
            config.max_concurrent,
            render::memory_text(&memory),
            render::spill_text(spill.as_ref()),
            config.time_zone,
        );
        text.push_str(&format!("\nWorkers: {}", render::workers_text(&workers)));
        let (status, posture_value, posture_error) = match posture {
            Ok(posture) => {
                text.push('\n');
                text.push_str(&render::posture_text(&posture));
                if !posture.rlimits.is_empty() {
                    let rlimits: Vec<String> = posture
                        .rlimits
                        .iter()
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect();
                    text.push_str(&format!("\nrlimits: {}", rlimits.join(", ")));
                }
                if !posture.duckdb_settings.is_empty() {
                    let settings: Vec<String> = posture
                        .duckdb_settings
                        .iter()
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect();
                    text.push_str(&format!("\nDuckDB: {}", settings.join(", ")));
                }
                if !posture.bypassed_layers.is_empty() {
                    text.push_str(&format!(
                        "\nWARNING: test bypasses in force: {}",
                        posture.bypassed_layers.join(", ")
                    ));
                }
                for gap in &posture.unenforced {
                    text.push_str(&format!(
                        "\nWARNING: NOT ENFORCED (--allow-unconfined): {gap}"
                    ));
                }
                (
                    Status::Success,
                    serde_json::to_value(posture).unwrap_or(Value::Null),
                    None,
                )
            }
            Err(error) => {
                text.push_str(&format!(
                    "\nSandbox posture unavailable: {} ({})",
                    error.message, error.kind
                ));
                (Status::Partial, Value::Null, Some(error.message))
            }
        };
        let data = json!({
            "name": "duckgate",
            "version": env!("CARGO_PKG_VERSION"),
            "database_path": config.db_path.display().to_string(),
            "time_zone": config.time_zone,
            "workers": workers,
            "limits": limits,
            "posture": posture_value,
            "posture_error": posture_error,
        });
        Reply {
            envelope: Envelope::ok(status, data, &["list_tables"]),
            text,
            image: None,
        }
    }

    async fn read_schema_resource(&self, uri: &str) -> Result<String, McpError> {
        let catalog = self.catalog().await.map_err(|error| {
            McpError::internal_error(
                error.message.clone(),
                Some(json!({ "kind": error.kind, "hint": error.recovery.hint })),
            )
        })?;
        if uri == SNAPSHOT_URI {
            return Ok(serde_json::to_string(&*catalog).unwrap_or_default());
        }
        let Some(encoded) = uri.strip_prefix(TABLE_URI_PREFIX) else {
            return Err(McpError::resource_not_found(
                format!("No resource {uri}. Resources: {SNAPSHOT_URI} and {TABLE_URI_TEMPLATE}."),
                None,
            ));
        };
        let name = percent_decode(encoded);
        match find_table(&catalog, &name, None).await {
            Ok(table) => Ok(table_detail(&catalog, table).to_string()),
            Err(error) => Err(McpError::resource_not_found(
                error.message,
                Some(json!({ "fuzzy_matches": error.recovery.fuzzy_matches })),
            )),
        }
    }
}

/// Run `work`, sending a progress notification every second while it runs, if the request asked.
async fn with_progress<F: Future>(work: F, context: &RequestContext<RoleServer>) -> F::Output {
    let Some(token) = context.meta.get_progress_token() else {
        return work.await;
    };
    let peer = context.peer.clone();
    let start = Instant::now();
    let mut ticker = tokio::time::interval_at(
        (start + Duration::from_secs(1)).into(),
        Duration::from_secs(1),
    );
    tokio::pin!(work);
    let mut ticks: u32 = 0;
    loop {
        tokio::select! {
            biased;
            output = &mut work => return output,
            _ = ticker.tick() => {
                ticks += 1;
                let note = ProgressNotificationParam::new(token.clone(), f64::from(ticks))
                    .with_message(format!("query running for {ticks} s"));
                // A client that went away cannot be told; the query result path handles that.
                let _ = peer.notify_progress(note).await;
            }
        }
    }
}

fn rows_reply(result: QueryResult, sql: Option<String>) -> Reply {
    let status = if result.row_count == 0 && !result.truncated {
        Status::Empty
    } else if result.truncated {
        Status::Partial
    } else {
        Status::Success
    };
    let hints: &[&str] = match status {
        Status::Empty => &["sample_rows", "describe_table"],
        Status::Partial => &["query"],
        Status::Success | Status::Error | Status::Refused => &[],
    };
    let text = render::query_text(&result);
    let mut data = serde_json::to_value(&result).unwrap_or(Value::Null);
    if let (Some(sql), Value::Object(map)) = (sql, &mut data) {
        map.insert("sql".into(), Value::String(sql));
    }
    Reply {
        envelope: Envelope::ok(status, data, hints),
        text,
        image: None,
    }
}

fn schema_names(catalog: &CatalogSnapshot) -> Vec<String> {
    let mut schemas: Vec<String> = catalog.tables.iter().map(|t| t.schema.clone()).collect();
    schemas.sort();
    schemas.dedup();
    schemas
}

/// The table an agent named: exact name first, then case-insensitive; `schema.table` is accepted.
async fn find_table<'a>(
    catalog: &'a CatalogSnapshot,
    name: &str,
    schema: Option<&str>,
) -> Result<&'a TableInfo, ErrorBody> {
    let name = name.trim();
    let in_schema = |t: &TableInfo, wanted: Option<&str>| {
        wanted.is_none_or(|s| t.schema.eq_ignore_ascii_case(s))
    };
    let lookup = |name: &str, schema: Option<&str>| -> Vec<&'a TableInfo> {
        let exact: Vec<&TableInfo> = catalog
            .tables
            .iter()
            .filter(|t| t.name == name && in_schema(t, schema))
            .collect();
        if !exact.is_empty() {
            return exact;
        }
        catalog
            .tables
            .iter()
            .filter(|t| t.name.eq_ignore_ascii_case(name) && in_schema(t, schema))
            .collect()
    };
    let mut found = lookup(name, schema);
    if found.is_empty()
        && schema.is_none()
        && let Some((schema_part, table_part)) = name.split_once('.')
    {
        found = lookup(table_part, Some(schema_part));
    }
    match found.as_slice() {
        [table] => Ok(table),
        [] => {
            let where_ = schema
                .map(|s| format!(" in schema '{s}'"))
                .unwrap_or_default();
            let mut error = ErrorBody::new(
                ErrorKind::UnknownName,
                format!("Table or view '{name}'{where_} does not exist."),
            )
            .construct(name.to_string())
            .suggest(ToolName::ListTables.as_str(), None);
            error.recovery.fuzzy_matches = fuzzy::closest_off_thread(
                name,
                catalog.tables.iter().map(|t| t.name.as_str()),
                MAX_FUZZY_MATCHES,
            )
            .await;
            Err(error)
        }
        several => {
            if let Some(main) = several.iter().find(|t| t.schema == "main") {
                return Ok(main);
            }
            let schemas: Vec<&str> = several.iter().map(|t| t.schema.as_str()).collect();
            Err(ErrorBody::new(
                ErrorKind::InvalidArgument,
                format!(
                    "'{name}' exists in several schemas ({}); pass schema.",
                    schemas.join(", ")
                ),
            )
            .construct("schema"))
        }
    }
}

fn outgoing_keys<'a>(catalog: &'a CatalogSnapshot, table: &TableInfo) -> Vec<&'a ForeignKey> {
    catalog
        .foreign_keys
        .iter()
        .filter(|k| k.table == table.name)
        .collect()
}

fn table_detail(catalog: &CatalogSnapshot, table: &TableInfo) -> Value {
    let referenced_by: Vec<&ForeignKey> = catalog
        .foreign_keys
        .iter()
        .filter(|k| k.referenced_table == table.name)
        .collect();
    json!({
        "schema": table.schema,
        "name": table.name,
        "kind": table.kind,
        "description": table.description,
        "estimated_rows": table.estimated_rows,
        "columns": table.columns,
        "indexes": table.indexes,
        "foreign_keys": outgoing_keys(catalog, table),
        "referenced_by": referenced_by,
    })
}

/// `%XX` decoding for the table name in a resource URI.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let (Some(high), Some(low)) =
                (hex_value(bytes.get(i + 1)), hex_value(bytes.get(i + 2)))
        {
            out.push(high * 16 + low);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex_value(byte: Option<&u8>) -> Option<u8> {
    char::from(*byte?)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}

/// One `search_schema` hit.
struct SchemaMatch<'a> {
    table: &'a TableInfo,
    column: Option<&'a crate::protocol::ColumnInfo>,
    matched_in: &'static str,
    text: Option<&'a str>,
}

impl SchemaMatch<'_> {
    fn to_json(&self) -> Value {
        json!({
            "kind": if self.column.is_some() { "column" } else { "table" },
            "schema": self.table.schema,
            "table": self.table.name,
            "column": self.column.map(|c| c.name.as_str()),
            "type": self.column.map(|c| c.data_type.as_str()),
            "matched_in": self.matched_in,
            "text": self.text,
        })
    }

    fn line(&self) -> String {
        let mut line = match self.column {
            Some(column) => format!(
                "column {}.{} {}",
                self.table.name, column.name, column.data_type
            ),
            None => format!(
                "table {}.{} ({})",
                self.table.schema,
                self.table.name,
                self.table.kind.as_str()
            ),
        };
        if let Some(text) = self.text {
            line.push_str(&format!(" — {}", render::clip(text)));
        }
        line
    }
}

/// Name matches first (tables, then columns), then description and comment matches.
fn search<'a>(catalog: &'a CatalogSnapshot, needle: &str) -> Vec<SchemaMatch<'a>> {
    let needle = needle.to_lowercase();
    let contains = |text: &str| text.to_lowercase().contains(&needle);
    let mut by_name = Vec::new();
    let mut by_text = Vec::new();
    for table in &catalog.tables {
        let description = table.description.as_deref();
        if contains(&table.name) {
            by_name.push(SchemaMatch {
                table,
                column: None,
                matched_in: "name",
                text: description,
            });
        } else if description.is_some_and(contains) {
            by_text.push(SchemaMatch {
                table,
                column: None,
                matched_in: "description",
                text: description,
            });
        }
    }
    let table_hits = by_name.len();
    for table in &catalog.tables {
        for column in &table.columns {
            let comment = column.comment.as_deref();
            if contains(&column.name) {
                by_name.push(SchemaMatch {
                    table,
                    column: Some(column),
                    matched_in: "name",
                    text: comment,
                });
            } else if comment.is_some_and(contains) {
                by_text.push(SchemaMatch {
                    table,
                    column: Some(column),
                    matched_in: "comment",
                    text: comment,
                });
            }
        }
    }
    debug_assert!(table_hits <= by_name.len());
    by_name.extend(by_text);
    by_name
}

/// An indented tree of operator names with the tables they scan, from DuckDB's JSON plan.
pub fn plan_summary(plan: &Value) -> String {
    fn walk(node: &Value, depth: usize, lines: &mut Vec<String>, tables: &mut Vec<String>) {
        match node {
            Value::Array(nodes) => {
                for child in nodes {
                    walk(child, depth, lines, tables);
                }
            }
            Value::Object(map) => {
                let name = map
                    .get("name")
                    .or_else(|| map.get("operator_name"))
                    .and_then(Value::as_str);
                let mut next_depth = depth;
                if let Some(name) = name {
                    let mut line = format!("{}{}", "  ".repeat(depth), name.trim());
                    if let Some(Value::Object(extra)) = map.get("extra_info") {
                        if let Some(table) = extra.get("Table").and_then(Value::as_str) {
                            line.push_str(&format!(" {table}"));
                            if !tables.iter().any(|t| t == table) {
                                tables.push(table.to_string());
                            }
                        }
                        if let Some(rows) =
                            extra.get("Estimated Cardinality").and_then(Value::as_str)
                        {
                            line.push_str(&format!(" (~{} rows)", rows.trim()));
                        }
                    }
                    lines.push(line);
                    next_depth = depth + 1;
                }
                if let Some(children) = map.get("children") {
                    walk(children, next_depth, lines, tables);
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
        }
    }
    let mut lines = Vec::new();
    let mut tables = Vec::new();
    walk(plan, 0, &mut lines, &mut tables);
    if lines.is_empty() {
        return "DuckDB returned a plan with no recognisable operators; see data.plan.".to_string();
    }
    let scans = if tables.is_empty() {
        "no tables".to_string()
    } else {
        tables.join(", ")
    };
    format!("{}\nScans: {scans}.", lines.join("\n"))
}

impl ServerHandler for DuckgateServer {
    fn get_info(&self) -> ServerConfig {
        InitializeResult::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
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
                if let Err(failure) = log.record(&entry) {
                    tracing::warn!("{failure}");
                }
            }
            return Err(error);
        };
        // Every tool call passes here: the audit hook sees each one.
        let started = Instant::now();
        let arguments = request.arguments.clone();
        let reply = self.call(tool, request, &context).await;
        Ok(self
            .audited(tool, arguments.as_ref(), reply, started)
            .into_result()
            .into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(ListResourcesResult::with_all_items(vec![
            Resource::new(SNAPSHOT_URI, "schema_snapshot")
                .with_title("Database schema")
                .with_description(
                    "Every table and view with columns, types, comments, indexes, and all foreign keys, as JSON.",
                )
                .with_mime_type("application/json"),
        ]))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new(TABLE_URI_TEMPLATE, "table_schema")
                .with_title("One table's schema")
                .with_description("Columns, indexes and foreign keys of one table or view, as JSON (same as describe_table).")
                .with_mime_type("application/json"),
        ]))
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

    #[test]
    fn identifiers_are_quoted_with_inner_quotes_doubled() {
        assert_eq!(quote_identifier("cgm_readings"), "\"cgm_readings\"");
        assert_eq!(quote_identifier("we\"ird; DROP"), "\"we\"\"ird; DROP\"");
    }

    #[test]
    fn percent_decoding_handles_escapes_and_leaves_the_rest() {
        assert_eq!(percent_decode("cgm_readings"), "cgm_readings");
        assert_eq!(percent_decode("my%20table"), "my table");
        assert_eq!(percent_decode("50%"), "50%");
        assert_eq!(percent_decode("%zz"), "%zz");
    }

    #[test]
    fn plan_summary_shows_the_operator_tree_and_the_scanned_tables() {
        let plan = json!([{
            "name": "PROJECTION", "children": [{
                "name": "HASH_GROUP_BY", "children": [{
                    "name": "SEQ_SCAN ", "children": [],
                    "extra_info": { "Table": "cgm_readings", "Estimated Cardinality": "105120" }
                }]
            }]
        }]);
        assert_eq!(
            plan_summary(&plan),
            "PROJECTION\n  HASH_GROUP_BY\n    SEQ_SCAN cgm_readings (~105120 rows)\nScans: cgm_readings."
        );
        assert!(plan_summary(&json!({})).contains("no recognisable operators"));
    }

    #[test]
    fn error_text_starts_with_the_message_word_for_word() {
        let body = ErrorBody::new(
            ErrorKind::PolicyBlocked,
            crate::error::messages::WRITE_REFUSED,
        )
        .construct("DELETE")
        .suggest("query", None);
        let text = error_text(&body);
        assert!(text.starts_with(crate::error::messages::WRITE_REFUSED));
        assert!(text.contains("(refused: policy_blocked; construct: DELETE)"));
    }
}

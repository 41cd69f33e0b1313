//! What a tool may use of the server, and nothing more: the gateway, the catalog with the
//! operator's descriptions laid over DuckDB's comments, the relation a tool's `table_name` names
//! (a declared folder's file or a table), the error path (recovery and "did you mean"), the
//! session's transport counters, and progress notifications while a query runs.
//!
//! The server (`mcp::server`) builds one per call and hands it to the tool's module; the tools
//! never see the server itself, so they depend on this module and not the other way round.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::ProgressNotificationParam;
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};

use super::catalog_lookup::{MAX_FUZZY_MATCHES, find_table};
use super::name::ToolName;
use crate::gateway::Gateway;
use crate::mcp::descriptions::ServeOptions;
use crate::mcp::envelope::ErrorBody;
use crate::mcp::fuzzy;
use crate::protocol::{CatalogSnapshot, MissingKind, TableInfo};
use crate::session::{CountersSnapshot, SessionCounters};
use duckgate_validate::error::{ErrorKind, Failure};

/// What the tools that read one relation (`describe_table`, `sample_rows`) were named: a file
/// of a declared folder or a table of the catalog ([`ToolContext::relation`]).
pub(crate) enum Relation<'n> {
    /// A file's path as `list_files` shows it (`NAME/…`), which these tools read as a file
    /// relation (`FROM 'exports/a.parquet'`): the query they build passes every check any
    /// query does.
    File(&'n str),
    /// A table or view, with the catalog it was found in (the table's entry copied out of it,
    /// so the two travel together).
    Table(Arc<CatalogSnapshot>, TableInfo),
}

/// A tool's narrow view of the server for one call.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ToolContext<'a> {
    gateway: &'a Gateway,
    options: &'a ServeOptions,
    counters: &'a SessionCounters,
}

impl<'a> ToolContext<'a> {
    /// The view of a server answering from `gateway` with `options`, counting into `counters`.
    pub(crate) fn new(
        gateway: &'a Gateway,
        options: &'a ServeOptions,
        counters: &'a SessionCounters,
    ) -> ToolContext<'a> {
        ToolContext {
            gateway,
            options,
            counters,
        }
    }

    /// What the transport ignored or refused so far in this session.
    pub(crate) fn session_counts(&self) -> CountersSnapshot {
        self.counters.snapshot()
    }

    /// The gateway every tool answers from.
    pub(crate) fn gateway(&self) -> &Gateway {
        self.gateway
    }

    /// `name` when it names a file of a declared folder: it begins with a declared folder's
    /// name and a `/`, as `list_files` shows a file's path.
    pub(crate) fn as_file<'n>(&self, name: &'n str) -> Option<&'n str> {
        self.gateway
            .folder_rules()
            .names()
            .iter()
            .any(|folder| {
                name.len() > folder.len() + 1
                    && name.starts_with(folder.as_str())
                    && name.as_bytes().get(folder.len()) == Some(&b'/')
            })
            .then_some(name)
    }

    /// The relation a tool's `table_name` argument names: a declared folder's file when it is
    /// one ([`Self::as_file`]), else the table [`find_table`] finds with `schema` and `database`.
    pub(crate) async fn relation<'n>(
        &self,
        table_name: &'n str,
        schema: Option<&str>,
        database: Option<&str>,
    ) -> Result<Relation<'n>, ErrorBody> {
        if let Some(path) = self.as_file(table_name) {
            return Ok(Relation::File(path));
        }
        let catalog = self.catalog().await?;
        let table = find_table(&catalog, table_name, schema, database)
            .await?
            .clone();
        Ok(Relation::Table(catalog, table))
    }

    /// The catalog with the operator's descriptions laid over DuckDB's comments.
    pub(crate) async fn catalog(&self) -> Result<Arc<CatalogSnapshot>, ErrorBody> {
        let catalog = self
            .gateway
            .catalog()
            .await
            .map_err(|e| self.gateway_error(e, None))?;
        if self.options.descriptions.is_empty() {
            return Ok(catalog);
        }
        let mut overlaid = (*catalog).clone();
        let default = overlaid.default_database().to_owned();
        for table in &mut overlaid.tables {
            // `database.schema.name` first, then `schema.name` and `name`, which name the
            // default database's tables only: another database's table of the same name keeps
            // its own comment.
            let in_default = default.is_empty() || table.database.eq_ignore_ascii_case(&default);
            let full = format!("{}.{}.{}", table.database, table.schema, table.name);
            let qualified = format!("{}.{}", table.schema, table.name);
            let description = self.options.descriptions.get(&full).or_else(|| {
                in_default
                    .then(|| {
                        self.options
                            .descriptions
                            .get(&qualified)
                            .or_else(|| self.options.descriptions.get(&table.name))
                    })
                    .flatten()
            });
            if let Some(description) = description {
                table.description = Some(description.clone());
            }
        }
        Ok(Arc::new(overlaid))
    }

    /// A gateway failure with the recovery this kind calls for; `retry` is the call to repeat
    /// (its tool and arguments) where repeating it is the way on.
    pub(crate) fn gateway_error(
        &self,
        error: Failure,
        retry: Option<(ToolName, Value)>,
    ) -> ErrorBody {
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
            // DuckDB's own failure (a value it could not cast, a file it could not read): its
            // message names the cause, and the way on is a changed query.
            ErrorKind::DatabaseError => {
                if body.recovery.hint.is_none() {
                    body.recovery.hint = Some(
                        "DuckDB's message says what failed: change the query where it points \
                         (for a file: a narrower read, or the reader option it suggests) and \
                         run it again."
                            .into(),
                    );
                }
            }
            // Left without a suggestion on purpose: `with_fuzzy_matches` fills it in.
            ErrorKind::UnknownName
            | ErrorKind::SyntaxError
            | ErrorKind::InvalidArgument
            | ErrorKind::Cancelled
            | ErrorKind::InternalError => {}
            // The hint is the operator's fix, from the gateway: no tool call can help.
            ErrorKind::SandboxUnavailable => {}
        }
        body
    }

    /// Fill `fuzzy_matches` for an unknown name the gateway reported and point at list_tables or
    /// search_schema. Errors this layer raised itself already carry both and are left alone.
    pub(crate) async fn with_fuzzy_matches(&self, mut body: ErrorBody) -> ErrorBody {
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
        // What the engine read from DuckDB's message (`engine/errors.rs`), or what the parent's
        // validator found missing: typed, never read from the message.
        let looking = if body.missing.as_ref().map(|m| m.kind) == Some(MissingKind::Column) {
            fuzzy::Looking::ForColumn
        } else {
            fuzzy::Looking::ForTable
        };
        let matches =
            fuzzy::catalog_matches_off_thread(&name, catalog, looking, MAX_FUZZY_MATCHES).await;
        body.recovery.fuzzy_matches = matches.iter().map(fuzzy::CatalogMatch::written).collect();
        match matches.first() {
            None | Some(fuzzy::CatalogMatch::Table(_)) => {
                body = body.suggest(ToolName::ListTables.as_str(), None);
            }
            // A name with a line break or another control character in it (DuckDB's typed error
            // carries the whole name the query wrote) is text from the data the agent copied:
            // it never goes into the server's own `Next:` line.
            Some(fuzzy::CatalogMatch::Column { .. })
                if fuzzy::last_part(&name).chars().any(char::is_control) =>
            {
                body = body.suggest(ToolName::SearchSchema.as_str(), None);
            }
            Some(fuzzy::CatalogMatch::Column { .. }) => {
                let bare = fuzzy::last_part(&name);
                body = body.suggest(
                    ToolName::SearchSchema.as_str(),
                    Some(json!({ "query": bare })),
                );
            }
        }
        body
    }
}

/// Run `work`, sending a progress notification every second while it runs, if the request asked.
pub(crate) async fn with_progress<F: Future>(
    work: F,
    context: &RequestContext<RoleServer>,
) -> F::Output {
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

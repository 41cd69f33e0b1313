//! The MCP server, the only code that answers an agent: tools, envelope, descriptions,
//! resources. (The client the tests, the benches and `duckgate demo` drive a server with is
//! `mcp_client`, outside the server.)
//!
//! Everything here answers from [`Gateway`]; nothing opens the database or validates SQL beyond
//! checking tool arguments.
//!
//! Each tool is one module of [`tools`]: a unit type implementing `tools::tool::Tool` (its description,
//! data schema and handler) and its arguments declared once with `tools::arguments`, which
//! derives the input schema `tools/list` publishes, the signature argument errors quote and the
//! string caps. The registry in `tools/mod.rs` gives each `tools::name::ToolName` its module. A tool sees a narrow
//! `tools::context::ToolContext` (the gateway, the catalog, error mapping), never the server.

use std::sync::Arc;

use rmcp::ServiceExt;

use crate::gateway::Gateway;
use crate::session::SessionCounters;

mod descriptions;
pub mod envelope;
pub mod fuzzy;
pub mod next_steps;
pub mod prompts;
pub mod render;
pub mod server;
pub mod tools;
pub mod transport;

pub use descriptions::{ServeOptions, load_descriptions};
pub use server::DuckgateServer;

/// Serve MCP over this process's stdin/stdout until the client closes stdin.
///
/// The transport is duckgate's own line transport over rmcp's stdio pipes: every line gets an
/// answer (a JSON-RPC error for one that is not a request) and the audit log records those too.
/// An error is the sentence `duckgate serve` prints before it exits (a `String`: only a person
/// reads it).
///
/// No client line ends it: the session's state machine (`crate::session`) keeps from rmcp
/// every message that would end rmcp's initialisation, and answers or ignores it instead. It
/// ends when stdin closes, or when stdout cannot be written.
pub async fn serve_stdio(gateway: Gateway, options: ServeOptions) -> Result<(), String> {
    let audit = gateway.config().audit.clone();
    let counters = Arc::new(SessionCounters::default());
    let server = DuckgateServer::new(gateway, options, Arc::clone(&counters));
    let (stdin, stdout) = rmcp::transport::stdio_pipes();
    let transport =
        transport::LineTransport::new(stdin, stdout, audit.clone(), Arc::clone(&counters));
    let outcome = match server.serve(transport).await {
        Ok(running) => running
            .waiting()
            .await
            .map(|reason| tracing::info!(?reason, "MCP session ended"))
            .map_err(|error| format!("MCP server task failed: {error}")),
        // Stdin closed before any request opened the session: the client has gone.
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => {
            tracing::info!("MCP session ended before a request opened it");
            Ok(())
        }
        // Only a reply that cannot be written (stdout closed) is left: no client line can get
        // here, since the session keeps every message but requests from rmcp until it opens.
        Err(error) => Err(format!("MCP initialisation failed: {error}")),
    };
    let counts = counters.snapshot();
    let generations = audit.as_ref().map(|log| log.stats().generations_kept);
    tracing::info!(
        notifications_ignored = counts.notifications_ignored,
        replies_ignored = counts.replies_ignored,
        duplicate_ids_refused = counts.duplicate_ids_refused,
        audit_generations_kept = generations,
        "session totals"
    );
    outcome
}

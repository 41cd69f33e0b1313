//! The MCP server, the only code that answers an agent: tools, envelope, descriptions,
//! resources. (The client the tests, the benches and `duckgate demo` drive a server with is
//! `mcp_client`, outside the server.)
//!
//! Everything here answers from [`Gateway`]; nothing opens the database or validates SQL beyond
//! checking tool arguments.
//!
//! Each tool is one module of [`tools`]: a unit type implementing `tools::Tool` (its description,
//! data schema and handler) and its arguments declared once with `tools::arguments`, which
//! derives the input schema `tools/list` publishes, the signature argument errors quote and the
//! string caps. One list in `tools/mod.rs` registers it. A tool sees a narrow
//! `tools::context::ToolContext` (the gateway, the catalog, error mapping), never the server.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use rmcp::ServiceExt;

use crate::gateway::Gateway;
use crate::session::SessionCounters;

mod catalog_lookup;
pub mod envelope;
pub mod fuzzy;
pub mod next_steps;
pub mod prompts;
pub mod render;
pub mod server;
pub mod tools;
pub mod transport;

pub use server::DuckgateServer;

/// What only the MCP layer needs from the operator.
#[derive(Debug, Clone, Default)]
pub struct ServeOptions {
    /// Table descriptions from `--descriptions FILE.toml`, keyed by `table` or `schema.table`;
    /// they override DuckDB's `COMMENT ON` text.
    pub descriptions: HashMap<String, String>,
}

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

/// Read a descriptions file: `table = "text"` lines, or the same under a `[tables]` section.
///
/// Keys may be `table` or `schema.table` (quote a dotted key: `"main.cgm_readings" = "…"`).
/// An error is the sentence the CLI prints when it refuses to start (a `String`: only a person
/// reads it).
pub fn load_descriptions(path: &Path) -> Result<HashMap<String, String>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|error| format!("cannot read descriptions file {}: {error}", path.display()))?;
    parse_descriptions(&text)
        .map_err(|error| format!("descriptions file {}: {error}", path.display()))
}

fn parse_descriptions(text: &str) -> Result<HashMap<String, String>, String> {
    let document: toml::Table = toml::from_str(text).map_err(|error| error.to_string())?;
    let mut descriptions = HashMap::new();
    for (key, value) in document {
        match value {
            toml::Value::String(description) => {
                descriptions.insert(key, description);
            }
            toml::Value::Table(section) if key == "tables" => {
                for (table, value) in section {
                    match value {
                        toml::Value::String(description) => {
                            descriptions.insert(table, description);
                        }
                        other => {
                            return Err(format!(
                                "tables.{table} must be a string description, not a {}",
                                other.type_str()
                            ));
                        }
                    }
                }
            }
            other => {
                return Err(format!(
                    "'{key}' must be a string description (or a [tables] section), not a {}",
                    other.type_str()
                ));
            }
        }
    }
    Ok(descriptions)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_accept_flat_keys_a_tables_section_and_dotted_keys() {
        let parsed = parse_descriptions(
            "cgm_readings = \"Glucose every 5 minutes\"\n\"main.events\" = \"Pump events\"\n\
             [tables]\nbasal_deliveries = \"Basal insulin\"\n",
        )
        .unwrap();
        assert_eq!(parsed["cgm_readings"], "Glucose every 5 minutes");
        assert_eq!(parsed["main.events"], "Pump events");
        assert_eq!(parsed["basal_deliveries"], "Basal insulin");
        assert_eq!(parsed.len(), 3);
    }

    #[test]
    fn descriptions_reject_non_text_values_naming_the_key() {
        let error = parse_descriptions("cgm_readings = 5\n").unwrap_err();
        assert!(error.contains("'cgm_readings' must be a string"), "{error}");
        let error = parse_descriptions("[tables]\nevents = [1]\n").unwrap_err();
        assert!(error.contains("tables.events must be a string"), "{error}");
        assert!(parse_descriptions("this is not toml").is_err());
    }

    #[test]
    fn load_descriptions_names_a_missing_file() {
        let error = load_descriptions(Path::new("/nonexistent/descriptions.toml")).unwrap_err();
        assert!(error.contains("/nonexistent/descriptions.toml"), "{error}");
    }
}

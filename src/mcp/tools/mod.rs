//! The registry of the ten tools: each [`ToolName`] with its module, and what the server asks
//! of a tool by its name (what it publishes, its arguments parsed, its call, the size caps of a
//! call's strings). Every tool answers with a [`Reply`] (`envelope.rs`).
//!
//! Below the registry, and never importing it: [`name`] (the tools' names), [`tool`] (what one
//! tool is made of), [`arguments`] (declaring them), [`caps`] (the size caps), [`context`] (what
//! a tool sees of the server) and [`catalog_lookup`] (finding what an agent named); each tool's
//! own module imports those.
//!
//! Everything about one tool lives in its own module: its arguments (declared once with
//! [`arguments::tool_arguments!`], which derives the input schema, the signature argument errors
//! quote and the string caps), its description, data schema, handler and text. Descriptions and
//! bounds take their numbers from the constants the tools enforce; data schemas are written out
//! so that `outputSchema` describes every field the wire carries.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool as PublishedTool, ToolAnnotations};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;

use crate::mcp::envelope::{ErrorBody, Reply, output_schema};
use arguments::{Field, ToolArguments};
use caps::too_long;
use context::ToolContext;
use duckgate_validate::error::ErrorKind;
use tool::{Tool, ToolSpec};

pub mod arguments;
pub mod caps;
pub(crate) mod catalog_lookup;
pub(crate) mod context;
pub mod describe_table;
pub mod explain_query;
pub mod list_files;
pub mod list_relationships;
pub mod list_tables;
pub mod name;
pub mod plot;
pub mod query;
pub mod sample_rows;
pub mod search_schema;
pub mod server_info;
#[cfg(test)]
mod tests;
pub mod tool;

pub use caps::{MAX_ARRAY_ITEMS, MAX_NAME_BYTES, MAX_SEARCH_BYTES, MAX_URI_BYTES, max_sql_bytes};
pub use name::ToolName;

/// The registry: each tool's name with its module. Makes the dispatch from a [`ToolName`] to the
/// tool's module; the matches are exhaustive, so a name without its module does not compile.
macro_rules! registry {
    ($( $variant:ident => $tool:path ),* $(,)?) => {
        impl ToolName {
            /// What this tool publishes, from its own module.
            fn spec(self) -> &'static ToolSpec {
                match self {
                    $( ToolName::$variant => &<$tool as Tool>::SPEC, )*
                }
            }

            /// This tool's arguments, as its module declares them.
            pub fn arguments(self) -> &'static [Field] {
                match self {
                    $(
                        ToolName::$variant =>
                            <<$tool as Tool>::Arguments as ToolArguments>::ARGUMENTS,
                    )*
                }
            }

            /// Parse `arguments` as this tool's, and nothing more.
            #[cfg(test)]
            fn parse_only(self, arguments: Option<JsonObject>) -> Result<(), ErrorBody> {
                match self {
                    $(
                        ToolName::$variant => {
                            parse_args::<<$tool as Tool>::Arguments>(self, arguments).map(drop)
                        }
                    )*
                }
            }

            /// Parse `arguments` as this tool's and run it. A wrong type, a missing or an
            /// unknown field is `invalid_argument` before the handler sees anything.
            pub(crate) async fn call(
                self,
                server: &ToolContext<'_>,
                arguments: Option<JsonObject>,
                context: &RequestContext<RoleServer>,
            ) -> Result<Reply, ErrorBody> {
                match self {
                    $(
                        ToolName::$variant => {
                            <$tool as Tool>::run(server, parse_args(self, arguments)?, context)
                                .await
                        }
                    )*
                }
            }
        }
    };
}

registry! {
    ListTables => list_tables::ListTables,
    ListFiles => list_files::ListFiles,
    DescribeTable => describe_table::DescribeTable,
    Query => query::Query,
    Plot => plot::Plot,
    SampleRows => sample_rows::SampleRows,
    ExplainQuery => explain_query::ExplainQuery,
    SearchSchema => search_schema::SearchSchema,
    ListRelationships => list_relationships::ListRelationships,
    ServerInfo => server_info::ServerInfo,
}

impl ToolName {
    /// A short title.
    pub fn title(self) -> &'static str {
        self.spec().title
    }

    /// See [`ToolSpec::description`]; `time_zone` is the workers' DuckDB `TimeZone`.
    pub fn description(self, time_zone: &str) -> String {
        (self.spec().description)(time_zone)
    }

    /// The JSON Schema of the tool's arguments.
    pub fn input_schema(self) -> Value {
        arguments::input_schema(self.arguments())
    }

    /// The JSON Schema of the envelope's `data` for this tool.
    pub fn data_schema(self) -> Value {
        (self.spec().data_schema)()
    }

    /// The tool as `tools/list` publishes it; `time_zone` as in [`ToolName::description`].
    pub fn to_tool(self, time_zone: &str) -> PublishedTool {
        PublishedTool::new(
            self.as_str(),
            self.description(time_zone),
            as_object(self.input_schema()),
        )
        .with_title(self.title())
        .with_raw_output_schema(as_object(output_schema(self.data_schema())))
        .with_annotations(
            ToolAnnotations::with_title(self.title())
                .read_only(true)
                .destructive(false)
                .idempotent(true)
                .open_world(false),
        )
    }

    /// One line naming the arguments, for argument errors.
    pub fn signature(self) -> String {
        arguments::signature(self.as_str(), self.arguments())
    }
}

fn as_object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) | Value::Array(_) => {
            unreachable!("tool schemas are objects")
        }
    }
}

/// Parse a tool's arguments; a wrong type, a missing or an unknown field is `invalid_argument`.
pub fn parse_args<T: ToolArguments>(
    tool: ToolName,
    arguments: Option<JsonObject>,
) -> Result<T, ErrorBody> {
    serde_json::from_value(Value::Object(arguments.unwrap_or_default())).map_err(|error| {
        ErrorBody::new(
            ErrorKind::InvalidArgument,
            format!(
                "Invalid arguments for {}: {error}. Expected {}.",
                tool.as_str(),
                tool.signature()
            ),
        )
        .hint(format!(
            "Call {} again with arguments of the documented types.",
            tool.signature()
        ))
    })
}

/// The size cap of string argument `name` of `tool`, in bytes: see [`arguments::string_cap`].
pub fn argument_cap(tool: ToolName, name: &str) -> usize {
    arguments::string_cap(tool.arguments(), name)
}

/// Check every string of a tool call's arguments against its cap, and every array against
/// [`MAX_ARRAY_ITEMS`], before anything else looks at them. Linear in the arguments' size.
pub fn check_argument_sizes(
    tool: ToolName,
    arguments: Option<&JsonObject>,
) -> Result<(), ErrorBody> {
    fn check_cap(label: &str, value: &Value, cap: usize) -> Result<(), ErrorBody> {
        match value {
            Value::String(text) if text.len() > cap => Err(too_long(label, cap, text.len())),
            Value::Array(items) if items.len() > MAX_ARRAY_ITEMS => Err(ErrorBody::new(
                ErrorKind::InvalidArgument,
                format!(
                    "{label} must have at most {MAX_ARRAY_ITEMS} items; got {}.",
                    items.len()
                ),
            )
            .construct(label)),
            Value::Array(items) => items
                .iter()
                .enumerate()
                .try_for_each(|(index, item)| check_cap(&format!("{label}[{index}]"), item, cap)),
            Value::Object(map) => map.iter().try_for_each(|(key, item)| {
                if key.len() > MAX_NAME_BYTES {
                    Err(too_long("argument name", MAX_NAME_BYTES, key.len()))
                } else {
                    check_cap(label, item, cap)
                }
            }),
            Value::String(_) | Value::Null | Value::Bool(_) | Value::Number(_) => Ok(()),
        }
    }
    let Some(arguments) = arguments else {
        return Ok(());
    };
    for (name, value) in arguments {
        if name.len() > MAX_NAME_BYTES {
            return Err(too_long("argument name", MAX_NAME_BYTES, name.len()));
        }
        check_cap(name, value, argument_cap(tool, name))?;
    }
    Ok(())
}

/// Check a resource URI, and the table name it carries once decoded, against their caps.
pub fn check_resource_uri(
    uri: &str,
    decoded_name: impl FnOnce() -> Option<String>,
) -> Result<(), ErrorBody> {
    if uri.len() > MAX_URI_BYTES {
        return Err(too_long("uri", MAX_URI_BYTES, uri.len()));
    }
    match decoded_name() {
        Some(name) if name.len() > MAX_NAME_BYTES => {
            Err(too_long("table name", MAX_NAME_BYTES, name.len()))
        }
        Some(_) | None => Ok(()),
    }
}

/// The message for a `tools/call` of no tool of this server; a name past the cap is not quoted.
pub fn unknown_tool_message(name: &str) -> String {
    let available: Vec<&str> = ToolName::ALL.iter().map(|t| t.as_str()).collect();
    if name.len() > MAX_NAME_BYTES {
        format!(
            "Unknown tool: tool names are at most {MAX_NAME_BYTES} bytes; got {}. Available tools: {}.",
            name.len(),
            available.join(", ")
        )
    } else {
        format!(
            "Unknown tool '{name}'. Available tools: {}.",
            available.join(", ")
        )
    }
}

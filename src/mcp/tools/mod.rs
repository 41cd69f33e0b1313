//! What the nine tools share: the registry ([`ToolName`], made by one list of the tools), the
//! [`Tool`] each module implements, the read-only annotations, argument parsing, and the size caps
//! of every string a client sends. Every tool answers with a [`Reply`] (`envelope.rs`).
//!
//! Everything about one tool lives in its own module: its arguments (declared once with
//! [`arguments::tool_arguments!`], which derives the input schema, the signature argument errors
//! quote and the string caps), its description, data schema, handler and text. Descriptions and
//! bounds take their numbers from the constants the tools enforce; data schemas are written out
//! so that `outputSchema` describes every field the wire carries.

use std::future::Future;
use std::sync::Arc;

use rmcp::model::{JsonObject, Tool as PublishedTool, ToolAnnotations};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};

use crate::mcp::envelope::{ErrorBody, Reply, nullable, output_schema};
use arguments::{Argument, Field, ToolArguments, tool_arguments};
use context::ToolContext;
use duckgate_validate::error::ErrorKind;

pub mod arguments;
pub(crate) mod context;
pub mod describe_table;
pub mod explain_query;
pub mod list_relationships;
pub mod list_tables;
pub mod plot;
pub mod query;
pub mod sample_rows;
pub mod search_schema;
pub mod server_info;

// Size caps of the client's strings, checked before any work (no catalog fetch, no fuzzy
// matching): an over-long argument is `invalid_argument` naming it and its cap. This is the one
// place they are defined; the SQL cap is the validator's own. Which argument may be longer than
// a name its declaration says ([`Argument::long_text`]).

/// Longest table, schema, column, tool, method or argument name accepted, in bytes (DuckDB
/// identifiers can be long, but the validator caps them at 255 bytes).
pub const MAX_NAME_BYTES: usize = 256;
/// Longest `search_schema` text, in bytes.
pub const MAX_SEARCH_BYTES: usize = 1024;
/// Longest resource URI, in bytes: `schema://table/` and a percent-encoded name.
pub const MAX_URI_BYTES: usize = 1024;
/// Most items of an array argument (`sample_rows`'s `columns`).
pub const MAX_ARRAY_ITEMS: usize = 1024;

/// Longest SQL accepted, in bytes: the validator's cap, checked here first.
pub fn max_sql_bytes() -> usize {
    duckgate_validate::validate::Limits::default().max_sql_bytes
}

/// The `table_name` argument of the tools that read one table.
pub(crate) const TABLE_NAME: Argument =
    Argument::described("Table or view name as list_tables shows it.");

/// The `schema` argument beside a `table_name`.
pub(crate) const SCHEMA: Argument =
    Argument::described("Schema name (default: the only schema that has the table, else main).");

/// The `sql` argument of the tools that run or plan a query: up to [`max_sql_bytes`].
pub(crate) const SQL: Argument =
    Argument::described("One read-only SQL statement in DuckDB's dialect.")
        .long_text(max_sql_bytes);

tool_arguments! {
    /// Arguments of the tools that take none.
    pub struct NoArgs {}
}

/// What a tool publishes in `tools/list` beside its input schema (which its
/// [`Tool::Arguments`] make).
#[derive(Debug)]
pub struct ToolSpec {
    /// The wire name.
    pub name: &'static str,
    /// A short title (also the annotations' title).
    pub title: &'static str,
    /// "Use this when …" first (that first sentence steers an agent's choice of tool), then
    /// "Use X instead when …" and "Common compositions", under 500 characters. The argument is
    /// the workers' DuckDB `TimeZone`, which the query tool states.
    pub description: fn(time_zone: &str) -> String,
    /// The JSON Schema of the envelope's `data` for this tool.
    pub data_schema: fn() -> Value,
}

impl ToolSpec {
    /// A tool named `name`, titled `title`.
    pub const fn new(
        name: &'static str,
        title: &'static str,
        description: fn(time_zone: &str) -> String,
        data_schema: fn() -> Value,
    ) -> ToolSpec {
        ToolSpec {
            name,
            title,
            description,
            data_schema,
        }
    }
}

/// The call a tool answers: its progress token and cancellation.
pub(crate) type Request = RequestContext<RoleServer>;

/// What a tool answers: a reply, or an error the envelope carries.
pub(crate) type Answer = Result<Reply, ErrorBody>;

/// One tool, implemented by a unit type in the tool's own module.
pub(crate) trait Tool {
    /// Its arguments, declared with [`tool_arguments!`].
    type Arguments: ToolArguments;
    /// What it publishes.
    const SPEC: ToolSpec;
    /// Answer one call whose arguments parsed.
    fn run(
        server: &ToolContext<'_>,
        arguments: Self::Arguments,
        request: &Request,
    ) -> impl Future<Output = Answer> + Send;
}

/// Declare a tool: a unit type implementing [`Tool`] with these arguments, wire name and title,
/// and the module's `description`, `data_schema` and `run`.
macro_rules! tool {
    ($(#[$doc:meta])* $tool:ident($arguments:ty) = $name:literal, $title:literal) => {
        $(#[$doc])*
        pub(crate) struct $tool;

        impl $crate::mcp::tools::Tool for $tool {
            type Arguments = $arguments;
            const SPEC: $crate::mcp::tools::ToolSpec =
                $crate::mcp::tools::ToolSpec::new($name, $title, description, data_schema);
            fn run(
                server: &$crate::mcp::tools::context::ToolContext<'_>,
                arguments: $arguments,
                request: &$crate::mcp::tools::Request,
            ) -> impl std::future::Future<Output = $crate::mcp::tools::Answer> + Send {
                run(server, arguments, request)
            }
        }
    };
}
pub(crate) use tool;

/// The registry: each tool once, in the order `tools/list` gives them. Makes [`ToolName`] and
/// its dispatch to the tool's module.
macro_rules! registry {
    ($( $(#[$doc:meta])* $variant:ident => $tool:path ),* $(,)?) => {
        /// One of the tools.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum ToolName {
            $( $(#[$doc])* $variant, )*
        }

        impl ToolName {
            /// All tools, in the order `tools/list` gives them.
            pub const ALL: [ToolName; [$(stringify!($variant)),*].len()] =
                [$(ToolName::$variant),*];

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
    /// Tables and views.
    ListTables => list_tables::ListTables,
    /// One table's columns and indexes.
    DescribeTable => describe_table::DescribeTable,
    /// Run SQL.
    Query => query::Query,
    /// A chart of a query's result.
    Plot => plot::Plot,
    /// First rows of a table.
    SampleRows => sample_rows::SampleRows,
    /// A plan.
    ExplainQuery => explain_query::ExplainQuery,
    /// Find tables and columns by text.
    SearchSchema => search_schema::SearchSchema,
    /// Foreign keys.
    ListRelationships => list_relationships::ListRelationships,
    /// Server, limits, sandbox posture.
    ServerInfo => server_info::ServerInfo,
}

impl ToolName {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        self.spec().name
    }

    /// The tool of that wire name.
    pub fn parse(name: &str) -> Option<ToolName> {
        ToolName::ALL.into_iter().find(|t| t.as_str() == name)
    }

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

/// The fields that name a table or view in `list_tables` and `describe_table` results, in wire
/// order: one list, so the two schemas cannot disagree on them.
pub(crate) fn relation_properties() -> serde_json::Map<String, Value> {
    let fields = json!({
        "schema": { "type": "string" },
        "name": { "type": "string" },
        "kind": { "type": "string", "enum": ["table", "view"] },
        "description": nullable("string"),
        "estimated_rows": nullable("integer")
    });
    match fields {
        Value::Object(map) => map,
        _ => unreachable!("a JSON object literal"),
    }
}

/// The names of [`relation_properties`], in the order `required` lists them.
const RELATION_FIELDS: [&str; 5] = ["schema", "name", "kind", "description", "estimated_rows"];

/// An object schema: [`relation_properties`] and `more` (an object of further fields, named in
/// `more_required` in the order `required` lists them), all of them required.
pub(crate) fn relation_schema(more: Value, more_required: &[&str]) -> Value {
    let mut properties = relation_properties();
    if let Value::Object(more) = more {
        properties.extend(more);
    }
    let required: Vec<&str> = RELATION_FIELDS
        .iter()
        .chain(more_required)
        .copied()
        .collect();
    json!({ "type": "object", "properties": properties, "required": required })
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

/// `limit` defaulted and checked against `1..=max`; out of range is `invalid_argument` naming it.
pub fn check_limit(
    tool: ToolName,
    limit: Option<i64>,
    default: i64,
    max: i64,
    retry_args: impl FnOnce(i64) -> Value,
) -> Result<usize, ErrorBody> {
    let limit = limit.unwrap_or(default);
    if (1..=max).contains(&limit) {
        // In range, so it fits in usize.
        Ok(usize::try_from(limit).unwrap_or(1))
    } else {
        let clamped = limit.clamp(1, max);
        Err(ErrorBody::new(
            ErrorKind::InvalidArgument,
            format!("limit must be between 1 and {max} (got {limit})."),
        )
        .construct("limit")
        .suggest(tool.as_str(), Some(retry_args(clamped)))
        .hint(format!(
            "Use a limit from 1 to {max}; for more data, aggregate or filter in SQL."
        )))
    }
}

/// The size cap of string argument `name` of `tool`, in bytes: see [`arguments::string_cap`].
pub fn argument_cap(tool: ToolName, name: &str) -> usize {
    arguments::string_cap(tool.arguments(), name)
}

/// `invalid_argument`: `what` is `got` bytes, past `cap`.
pub fn too_long(what: &str, cap: usize, got: usize) -> ErrorBody {
    ErrorBody::new(
        ErrorKind::InvalidArgument,
        format!("{what} must be at most {cap} bytes; got {got}."),
    )
    .construct(what)
    .hint(format!("Send a {what} of at most {cap} bytes."))
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

/// Reject empty or whitespace-only text arguments.
pub fn check_not_blank(tool: ToolName, field: &str, value: &str) -> Result<(), ErrorBody> {
    if value.trim().is_empty() {
        Err(ErrorBody::new(
            ErrorKind::InvalidArgument,
            format!("{field} must not be empty. Expected {}.", tool.signature()),
        )
        .construct(field))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::query::QueryArgs;
    use super::*;

    #[test]
    fn every_tool_description_has_the_three_parts_and_stays_under_500_characters() {
        for tool in ToolName::ALL {
            let description = tool.description("America/Argentina/ComodRivadavia");
            let length = description.chars().count();
            assert!(
                length < 500,
                "{} description is {length} characters",
                tool.as_str()
            );
            assert!(
                description.contains("Use this when "),
                "{}: no 'Use this when'",
                tool.as_str()
            );
            let instead = description
                .split("Use ")
                .skip(1)
                .find(|part| part.contains(" instead when "))
                .unwrap_or_else(|| panic!("{}: no 'Use X instead when'", tool.as_str()));
            let alternative = instead.split(' ').next().unwrap_or_default();
            assert!(
                ToolName::parse(alternative).is_some(),
                "{}: 'Use {alternative} instead' names no tool",
                tool.as_str()
            );
            let compositions = description
                .split("Common compositions: ")
                .nth(1)
                .unwrap_or_else(|| panic!("{}: no 'Common compositions'", tool.as_str()));
            assert!(
                compositions.contains('→'),
                "{}: compositions show no chain",
                tool.as_str()
            );
            assert!(
                !description.contains("  "),
                "{}: double space",
                tool.as_str()
            );
        }
    }

    #[test]
    fn tool_names_round_trip_and_are_unique() {
        for tool in ToolName::ALL {
            assert_eq!(ToolName::parse(tool.as_str()), Some(tool));
        }
        assert_eq!(ToolName::parse("drop_table"), None);
    }

    #[test]
    fn every_tool_is_annotated_read_only_and_closed_world_with_an_envelope_output_schema() {
        for tool in ToolName::ALL {
            let published = tool.to_tool("UTC");
            let annotations = published.annotations.expect("annotations");
            assert_eq!(annotations.read_only_hint, Some(true));
            assert_eq!(annotations.destructive_hint, Some(false));
            assert_eq!(annotations.idempotent_hint, Some(true));
            assert_eq!(annotations.open_world_hint, Some(false));
            let output = published.output_schema.expect("output schema");
            assert_eq!(
                output["required"],
                json!(["status", "data", "error", "follow_up_hints"])
            );
            assert_eq!(published.input_schema["type"], "object");
            assert_eq!(published.input_schema["additionalProperties"], false);
        }
    }

    #[test]
    fn limits_outside_the_range_name_the_range_and_suggest_a_clamped_retry() {
        let error = check_limit(
            ToolName::Query,
            Some(0),
            1000,
            10_000,
            |l| json!({ "limit": l }),
        )
        .unwrap_err();
        assert_eq!(error.kind, ErrorKind::InvalidArgument);
        assert_eq!(error.message, "limit must be between 1 and 10000 (got 0).");
        assert_eq!(error.recovery.suggested_args, Some(json!({ "limit": 1 })));
        let error = check_limit(
            ToolName::Query,
            Some(10_001),
            1000,
            10_000,
            |l| json!({ "limit": l }),
        )
        .unwrap_err();
        assert_eq!(
            error.recovery.suggested_args,
            Some(json!({ "limit": 10_000 }))
        );
        assert_eq!(
            check_limit(ToolName::Query, None, 1000, 10_000, |_| json!({})).unwrap(),
            1000
        );
        assert_eq!(
            check_limit(ToolName::Query, Some(10_000), 1000, 10_000, |_| json!({})).unwrap(),
            10_000
        );
    }

    #[test]
    fn wrong_types_missing_and_unknown_fields_are_invalid_arguments() {
        let object = |v: Value| match v {
            Value::Object(map) => Some(map),
            _ => None,
        };
        let wrong_type =
            parse_args::<QueryArgs>(ToolName::Query, object(json!({ "sql": 5 }))).unwrap_err();
        assert_eq!(wrong_type.kind, ErrorKind::InvalidArgument);
        assert!(
            wrong_type.message.contains("invalid type"),
            "{}",
            wrong_type.message
        );
        let missing = parse_args::<QueryArgs>(ToolName::Query, None).unwrap_err();
        assert!(
            missing.message.contains("missing field `sql`"),
            "{}",
            missing.message
        );
        let unknown = parse_args::<QueryArgs>(
            ToolName::Query,
            object(json!({ "sql": "SELECT 1", "rows": 5 })),
        )
        .unwrap_err();
        assert!(
            unknown.message.contains("unknown field `rows`"),
            "{}",
            unknown.message
        );
        let fine = parse_args::<QueryArgs>(
            ToolName::Query,
            object(json!({ "sql": "SELECT 1", "limit": null })),
        )
        .unwrap();
        assert_eq!(fine.limit, None);
    }

    fn arguments(value: Value) -> JsonObject {
        match value {
            Value::Object(map) => map,
            other => panic!("not an object: {other}"),
        }
    }

    #[test]
    fn every_string_argument_past_its_cap_is_invalid_argument_naming_it_and_the_cap() {
        let huge = "x".repeat(15 << 20);
        let cases = [
            (
                ToolName::DescribeTable,
                json!({ "table_name": huge }),
                "table_name must be at most 256 bytes; got 15728640.",
            ),
            (
                ToolName::DescribeTable,
                json!({ "table_name": "t", "schema": huge }),
                "schema must be at most 256 bytes; got 15728640.",
            ),
            (
                ToolName::SearchSchema,
                json!({ "query": huge }),
                "query must be at most 1024 bytes; got 15728640.",
            ),
            (
                ToolName::Query,
                json!({ "sql": huge }),
                "sql must be at most 102400 bytes; got 15728640.",
            ),
            (
                ToolName::ExplainQuery,
                json!({ "sql": huge }),
                "sql must be at most 102400 bytes; got 15728640.",
            ),
            (
                ToolName::SampleRows,
                json!({ "table_name": "t", "columns": ["a", huge] }),
                "columns[1] must be at most 256 bytes; got 15728640.",
            ),
            (
                ToolName::Query,
                json!({ "sql": "SELECT 1", "limit": huge }),
                "limit must be at most 256 bytes; got 15728640.",
            ),
            (
                ToolName::ServerInfo,
                json!({ "extra": { "deep": [huge] } }),
                "extra[0] must be at most 256 bytes; got 15728640.",
            ),
        ];
        for (tool, args, message) in cases {
            let error = check_argument_sizes(tool, Some(&arguments(args))).unwrap_err();
            assert_eq!(error.kind, ErrorKind::InvalidArgument);
            assert_eq!(error.message, message);
        }
        let long_key = arguments(json!({ "k".repeat(300): 1 }));
        let error = check_argument_sizes(ToolName::Query, Some(&long_key)).unwrap_err();
        assert_eq!(
            error.message,
            "argument name must be at most 256 bytes; got 300."
        );
        let many: Vec<Value> = (0..=MAX_ARRAY_ITEMS)
            .map(|i| json!(format!("c{i}")))
            .collect();
        let error = check_argument_sizes(
            ToolName::SampleRows,
            Some(&arguments(json!({ "table_name": "t", "columns": many }))),
        )
        .unwrap_err();
        assert_eq!(
            error.message,
            "columns must have at most 1024 items; got 1025."
        );
    }

    #[test]
    fn arguments_at_their_caps_pass() {
        let at = |n: usize| "x".repeat(n);
        for (tool, args) in [
            (
                ToolName::DescribeTable,
                json!({ "table_name": at(MAX_NAME_BYTES), "schema": at(MAX_NAME_BYTES) }),
            ),
            (
                ToolName::SearchSchema,
                json!({ "query": at(MAX_SEARCH_BYTES) }),
            ),
            (
                ToolName::Query,
                json!({ "sql": at(max_sql_bytes()), "limit": 5 }),
            ),
        ] {
            check_argument_sizes(tool, Some(&arguments(args))).unwrap();
        }
        check_argument_sizes(ToolName::ListTables, None).unwrap();
    }

    #[test]
    fn only_sql_and_the_search_text_are_capped_above_a_name() {
        for tool in ToolName::ALL {
            let sql = match tool {
                ToolName::Query | ToolName::ExplainQuery | ToolName::Plot => max_sql_bytes(),
                ToolName::ListTables
                | ToolName::DescribeTable
                | ToolName::SampleRows
                | ToolName::SearchSchema
                | ToolName::ListRelationships
                | ToolName::ServerInfo => MAX_NAME_BYTES,
            };
            assert_eq!(argument_cap(tool, "sql"), sql, "{}", tool.as_str());
            let query = match tool {
                ToolName::SearchSchema => MAX_SEARCH_BYTES,
                ToolName::ListTables
                | ToolName::DescribeTable
                | ToolName::Query
                | ToolName::SampleRows
                | ToolName::ExplainQuery
                | ToolName::ListRelationships
                | ToolName::ServerInfo
                | ToolName::Plot => MAX_NAME_BYTES,
            };
            assert_eq!(argument_cap(tool, "query"), query, "{}", tool.as_str());
            for name in ["table_name", "schema", "columns", "kind", "limit"] {
                assert_eq!(argument_cap(tool, name), MAX_NAME_BYTES);
            }
        }
    }

    /// The cap the tools state and the validator enforces is the 100 KiB the docs promise.
    #[test]
    fn the_sql_cap_is_100_kib() {
        assert_eq!(max_sql_bytes(), 100 * 1024);
    }

    #[test]
    fn resource_uris_and_their_table_names_are_capped() {
        let error = check_resource_uri(&"s".repeat(MAX_URI_BYTES + 1), || None).unwrap_err();
        assert_eq!(error.message, "uri must be at most 1024 bytes; got 1025.");
        let error = check_resource_uri("schema://table/x", || Some("n".repeat(300))).unwrap_err();
        assert_eq!(
            error.message,
            "table name must be at most 256 bytes; got 300."
        );
        check_resource_uri("schema://table/cgm_readings", || {
            Some("cgm_readings".into())
        })
        .unwrap();
    }

    #[test]
    fn an_unknown_tool_is_quoted_only_when_short() {
        assert!(unknown_tool_message("drop_database").starts_with("Unknown tool 'drop_database'."));
        let message = unknown_tool_message(&"d".repeat(1 << 20));
        assert!(message.len() < 400, "{message}");
        assert!(
            message.contains("at most 256 bytes; got 1048576"),
            "{message}"
        );
        assert!(message.contains("list_tables"));
    }

    /// A value of each JSON type a schema property can declare, and one of another type.
    fn example_of(property: &Value) -> (Value, Value) {
        if let Some(choices) = property["enum"].as_array() {
            return (choices[0].clone(), json!(7));
        }
        match property["type"].as_str() {
            Some("string") => (json!("x"), json!(7)),
            Some("integer") => (property["default"].clone(), json!("seven")),
            Some("number") => (json!(70.5), json!("seventy")),
            Some("array") => (json!(["x"]), json!("x")),
            other => panic!("a property of type {other:?}"),
        }
    }

    /// The input schema every tool publishes and the struct its call is parsed into come from
    /// one declaration: whatever the schema allows parses, a property of the wrong type, a
    /// missing required one and an unknown one do not.
    #[test]
    fn every_published_input_schema_admits_exactly_what_the_tool_parses() {
        for tool in ToolName::ALL {
            let schema = tool.input_schema();
            let properties = schema["properties"].as_object().expect("properties");
            let required: Vec<&str> = schema["required"]
                .as_array()
                .expect("required")
                .iter()
                .map(|name| name.as_str().expect("a name"))
                .collect();
            let good: JsonObject = properties
                .iter()
                .map(|(name, property)| (name.clone(), example_of(property).0))
                .collect();
            tool.parse_only(Some(good.clone())).unwrap_or_else(|e| {
                panic!("{}: every argument given: {}", tool.as_str(), e.message)
            });
            let minimal: JsonObject = good
                .iter()
                .filter(|(name, _)| required.contains(&name.as_str()))
                .map(|(name, value)| (name.clone(), value.clone()))
                .collect();
            tool.parse_only(Some(minimal.clone()))
                .unwrap_or_else(|e| panic!("{}: required only: {}", tool.as_str(), e.message));
            for (name, property) in properties {
                let mut wrong = good.clone();
                wrong.insert(name.clone(), example_of(property).1);
                let error = tool.parse_only(Some(wrong)).expect_err(name);
                assert_eq!(error.kind, ErrorKind::InvalidArgument, "{}", tool.as_str());
                if required.contains(&name.as_str()) {
                    let mut missing = minimal.clone();
                    missing.remove(name);
                    let error = tool.parse_only(Some(missing)).expect_err(name);
                    assert!(
                        error.message.contains(&format!("missing field `{name}`")),
                        "{}: {}",
                        tool.as_str(),
                        error.message
                    );
                } else {
                    let mut null = minimal.clone();
                    null.insert(name.clone(), Value::Null);
                    tool.parse_only(Some(null)).unwrap_or_else(|e| {
                        panic!("{}: {name} null: {}", tool.as_str(), e.message)
                    });
                }
            }
            let mut unknown = minimal;
            unknown.insert("unknown_argument".into(), json!(1));
            let error = tool.parse_only(Some(unknown)).expect_err("unknown");
            assert!(
                error.message.contains("unknown field `unknown_argument`"),
                "{}: {}",
                tool.as_str(),
                error.message
            );
        }
    }

    /// Argument errors quote these lines; they list each argument in order, `?` marking the
    /// optional ones, with a count's range and default.
    #[test]
    fn signatures_name_every_argument_in_order_with_counts_ranges() {
        for (tool, signature) in [
            (
                ToolName::Query,
                "query(sql: string, limit?: integer 1–10000, default 1000)",
            ),
            (
                ToolName::SampleRows,
                "sample_rows(table_name: string, schema?: string, limit?: integer 1–100, default 10, columns?: [string])",
            ),
            (
                ToolName::Plot,
                "plot(sql: string, kind: line|scatter|bar|histogram|agp|tir, x?: string, y?: string, title?: string, width?: integer, height?: integer, bins?: integer, target_low?: number, target_high?: number)",
            ),
            (ToolName::ServerInfo, "server_info() — no arguments"),
        ] {
            assert_eq!(tool.signature(), signature);
        }
    }
}

//! What one tool is made of: the [`Tool`] its module implements (declared with [`tool!`]), what
//! it publishes ([`ToolSpec`]), the arguments several tools share, the relation fields their
//! schemas share, and the checks of an argument's value every tool makes the same way.

use std::future::Future;

use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};

use super::arguments::{self, Argument, ToolArguments, tool_arguments};
use super::caps::max_sql_bytes;
use super::context::ToolContext;
use super::name::ToolName;
use crate::mcp::envelope::{ErrorBody, Reply, nullable};
use duckgate_validate::error::ErrorKind;

/// The `table_name` argument of the tools that read one table.
pub(crate) const TABLE_NAME: Argument = Argument::described(
    "Table or view name as list_tables shows it, or a data file's path as list_files shows it.",
);

/// The `schema` argument beside a `table_name`.
pub(crate) const SCHEMA: Argument =
    Argument::described("Schema name (default: the only schema that has the table, else main).");

/// The `database` argument beside a `table_name`.
pub(crate) const DATABASE: Argument = Argument::described(
    "Database name, as list_tables shows it (default: the default database, else the only one that has the table).",
);

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

/// Declare a tool: a unit type implementing [`Tool`] with these arguments and title, its wire
/// name that of the [`ToolName`] of the same name, and the module's `description`,
/// `data_schema` and `run`.
macro_rules! tool {
    ($(#[$doc:meta])* $tool:ident($arguments:ty), $title:literal) => {
        $(#[$doc])*
        pub(crate) struct $tool;

        impl $crate::mcp::tools::tool::Tool for $tool {
            type Arguments = $arguments;
            const SPEC: $crate::mcp::tools::tool::ToolSpec = $crate::mcp::tools::tool::ToolSpec::new(
                $crate::mcp::tools::name::ToolName::$tool.as_str(),
                $title,
                description,
                data_schema,
            );
            fn run(
                server: &$crate::mcp::tools::context::ToolContext<'_>,
                arguments: $arguments,
                request: &$crate::mcp::tools::tool::Request,
            ) -> impl std::future::Future<Output = $crate::mcp::tools::tool::Answer> + Send {
                run(server, arguments, request)
            }
        }
    };
}
pub(crate) use tool;

/// The fields that name a table or view in `list_tables` and `describe_table` results, in wire
/// order: one list, so the two schemas cannot disagree on them.
pub(crate) fn relation_properties() -> serde_json::Map<String, Value> {
    let fields = json!({
        "database": {
            "anyOf": [{ "type": "string" }, { "type": "null" }],
            "description": "The database it belongs to; null for a file of a declared folder (kind file), which SQL names by its path. SQL names the default database's relations as schema.name (or name), another's as database.schema.name."
        },
        "schema": { "type": "string" },
        "name": { "type": "string" },
        "kind": { "type": "string", "enum": ["table", "view", "file"] },
        "description": nullable("string"),
        "estimated_rows": nullable("integer")
    });
    match fields {
        Value::Object(map) => map,
        _ => unreachable!("a JSON object literal"),
    }
}

/// The names of [`relation_properties`], in the order `required` lists them.
const RELATION_FIELDS: [&str; 6] = [
    "database",
    "schema",
    "name",
    "kind",
    "description",
    "estimated_rows",
];

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

/// Reject empty or whitespace-only text arguments of tool `T`.
pub(crate) fn check_not_blank<T: Tool>(field: &str, value: &str) -> Result<(), ErrorBody> {
    if value.trim().is_empty() {
        let signature =
            arguments::signature(T::SPEC.name, <T::Arguments as ToolArguments>::ARGUMENTS);
        Err(ErrorBody::new(
            ErrorKind::InvalidArgument,
            format!("{field} must not be empty. Expected {signature}."),
        )
        .construct(field))
    } else {
        Ok(())
    }
}

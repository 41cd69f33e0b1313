//! The nine tools: names, descriptions, argument schemas and parsing, and each one's data schema.
//!
//! Schemas are written out by hand so that the limits an agent sees (`minimum`, `maximum`) are the
//! ones the server enforces, and so that `outputSchema` describes every field the wire carries.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::error::ErrorKind;
use crate::mcp::envelope::{ErrorBody, nullable, output_schema};
use crate::plot;

/// Rows `query` returns when no limit is given.
pub const QUERY_DEFAULT_LIMIT: i64 = 1000;
/// Most rows `query` returns.
pub const QUERY_MAX_LIMIT: i64 = 10_000;
/// Rows `sample_rows` returns when no limit is given.
pub const SAMPLE_DEFAULT_LIMIT: i64 = 10;
/// Most rows `sample_rows` returns.
pub const SAMPLE_MAX_LIMIT: i64 = 100;
/// Matches `search_schema` returns when no limit is given.
pub const SEARCH_DEFAULT_LIMIT: i64 = 20;
/// Most matches `search_schema` returns.
pub const SEARCH_MAX_LIMIT: i64 = 50;

// Size caps of the client's strings, checked before any work (no catalog fetch, no fuzzy
// matching): an over-long argument is `invalid_argument` naming it and its cap. This is the one
// place they are defined; the SQL cap is the validator's own.

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
    crate::validate::Limits::default().max_sql_bytes
}

/// One of the nine tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolName {
    /// Tables and views.
    ListTables,
    /// One table's columns and indexes.
    DescribeTable,
    /// Run SQL.
    Query,
    /// First rows of a table.
    SampleRows,
    /// A plan.
    ExplainQuery,
    /// Find tables and columns by text.
    SearchSchema,
    /// Foreign keys.
    ListRelationships,
    /// Server, limits, sandbox posture.
    ServerInfo,
    /// A chart of a query's result.
    Plot,
}

impl ToolName {
    /// All tools, in the order `tools/list` gives them.
    pub const ALL: [ToolName; 9] = [
        ToolName::ListTables,
        ToolName::DescribeTable,
        ToolName::Query,
        ToolName::Plot,
        ToolName::SampleRows,
        ToolName::ExplainQuery,
        ToolName::SearchSchema,
        ToolName::ListRelationships,
        ToolName::ServerInfo,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolName::ListTables => "list_tables",
            ToolName::DescribeTable => "describe_table",
            ToolName::Query => "query",
            ToolName::SampleRows => "sample_rows",
            ToolName::ExplainQuery => "explain_query",
            ToolName::SearchSchema => "search_schema",
            ToolName::ListRelationships => "list_relationships",
            ToolName::ServerInfo => "server_info",
            ToolName::Plot => "plot",
        }
    }

    /// The tool of that wire name.
    pub fn parse(name: &str) -> Option<ToolName> {
        ToolName::ALL.into_iter().find(|t| t.as_str() == name)
    }

    /// A short title.
    pub fn title(self) -> &'static str {
        match self {
            ToolName::ListTables => "List tables",
            ToolName::DescribeTable => "Describe a table",
            ToolName::Query => "Run a read-only SQL query",
            ToolName::SampleRows => "Sample rows of a table",
            ToolName::ExplainQuery => "Explain a query plan",
            ToolName::SearchSchema => "Search the schema",
            ToolName::ListRelationships => "List foreign keys",
            ToolName::ServerInfo => "Server info and sandbox posture",
            ToolName::Plot => "Draw a chart of a query's result",
        }
    }

    /// "Use this when …" first (that first sentence steers an agent's choice of tool), then
    /// "Use X instead when …" and "Common compositions", under 500 characters.
    /// `time_zone` is the workers' DuckDB `TimeZone`, which the query tool states.
    pub fn description(self, time_zone: &str) -> String {
        let text = match self {
            ToolName::ListTables => {
                "Use this when you start exploring or need exact table names: lists the tables \
                 and views with their descriptions and estimated row counts. \
                 Use search_schema instead when you look for a column or topic by keyword. \
                 Common compositions: list_tables → describe_table → query; \
                 list_tables → list_relationships to plan joins."
            }
            ToolName::DescribeTable => {
                "Use this when you are about to write SQL and need exact column names and types: \
                 shows one table's columns (name, type, nullable, default, keys, foreign-key \
                 references, comments) and indexes. \
                 Use sample_rows instead when you want to see actual values. \
                 Common compositions: list_tables → describe_table → query; \
                 describe_table → sample_rows."
            }
            ToolName::Query => {
                return format!(
                    "Use this when you know the tables and columns you need: run one read-only \
                     DuckDB SQL statement (SELECT, WITH, VALUES, PIVOT, DESCRIBE, SUMMARIZE) and \
                     get columns and rows; limit caps rows (1–10000, default 1000). Local time \
                     is {time_zone}: now(), current_date and TIMESTAMPTZ dates use it. \
                     Use sample_rows instead when you only want a peek at a table. \
                     Common compositions: describe_table → query; query (aggregate) → query \
                     (drill down); query timed out → explain_query."
                );
            }
            ToolName::SampleRows => {
                "Use this when you want to see what values look like before writing a query: \
                 returns the first rows of a table (limit 1–100, default 10), optionally only \
                 the named columns. \
                 Use query instead when you need filters, ordering or aggregates. \
                 Common compositions: describe_table → sample_rows → query."
            }
            ToolName::ExplainQuery => {
                "Use this when a query timed out or you want to check a join first: shows \
                 DuckDB's plan for a read-only query without running it, with a short summary \
                 of operators and scanned tables; the SQL is checked like query's. \
                 Use query instead when you want the results. \
                 Common compositions: query (timeout) → explain_query → query with filters."
            }
            ToolName::SearchSchema => {
                "Use this when you know the topic (e.g. glucose, bolus) but not the table or \
                 column name: finds tables and columns whose name, description or comment \
                 contains a text (case-insensitive; limit 1–50, default 20). \
                 Use list_tables instead when you want every table. \
                 Common compositions: search_schema → describe_table → query."
            }
            ToolName::ListRelationships => {
                "Use this when you join tables and need the right join columns: lists the \
                 foreign keys across the database as table(columns) → referenced \
                 table(columns). \
                 Use describe_table instead when you care about one table only. \
                 Common compositions: list_tables → list_relationships → query with JOIN."
            }
            ToolName::Plot => {
                "Use this when the user wants to see data as a picture: a glucose trace over \
                 time, bars per day, a distribution, or an AGP (median and 5–95% bands by time \
                 of day). Runs one read-only SQL statement as query does and draws two result \
                 columns (x, y) as a PNG, with the numbers drawn. \
                 Use query instead when the user wants exact values. \
                 Common compositions: describe_table → plot; query (aggregate) → plot."
            }
            ToolName::ServerInfo => {
                "Use this when a limit surprised you or the user asks how data is protected: \
                 reports the server name, version, database path, limits (rows, timeout, \
                 result size) and the sandbox actually in force (each promise and the \
                 mechanism that keeps it, landlock, seccomp, rlimits, DuckDB settings). \
                 Use list_tables instead when you want the data. \
                 Common compositions: server_info → query within the limits."
            }
        };
        text.to_owned()
    }

    /// The JSON Schema of the tool's arguments.
    pub fn input_schema(self) -> Value {
        let table_name = json!({
            "type": "string", "minLength": 1,
            "description": "Table or view name as list_tables shows it."
        });
        let schema = json!({
            "type": "string", "minLength": 1,
            "description": "Schema name (default: the only schema that has the table, else main)."
        });
        let sql = json!({
            "type": "string", "minLength": 1,
            "description": "One read-only SQL statement in DuckDB's dialect."
        });
        let (properties, required) = match self {
            ToolName::ListTables => (
                json!({ "schema": { "type": "string", "minLength": 1, "description": "Only tables of this schema." } }),
                json!([]),
            ),
            ToolName::DescribeTable => (
                json!({ "table_name": table_name, "schema": schema }),
                json!(["table_name"]),
            ),
            ToolName::Query => (
                json!({
                    "sql": sql,
                    "limit": {
                        "type": "integer", "minimum": 1, "maximum": QUERY_MAX_LIMIT,
                        "default": QUERY_DEFAULT_LIMIT,
                        "description": "Most rows to return; more rows mark the result partial."
                    }
                }),
                json!(["sql"]),
            ),
            ToolName::SampleRows => (
                json!({
                    "table_name": table_name,
                    "schema": schema,
                    "limit": {
                        "type": "integer", "minimum": 1, "maximum": SAMPLE_MAX_LIMIT,
                        "default": SAMPLE_DEFAULT_LIMIT, "description": "Rows to return."
                    },
                    "columns": {
                        "type": "array", "items": { "type": "string", "minLength": 1 }, "minItems": 1,
                        "description": "Only these columns (default: all)."
                    }
                }),
                json!(["table_name"]),
            ),
            ToolName::ExplainQuery => (json!({ "sql": sql }), json!(["sql"])),
            ToolName::Plot => (
                json!({
                    "sql": sql,
                    "kind": {
                        "type": "string", "enum": ["line", "scatter", "bar", "histogram", "agp"],
                        "description": "line: y over time or a number; scatter: points; bar: one bar per row (x names it); histogram: how y is distributed; agp: glucose (y) by time of day (x, a timestamp) as median and 5/25/75/95% bands."
                    },
                    "x": {
                        "type": "string", "minLength": 1,
                        "description": "The result column for x (default: the first)."
                    },
                    "y": {
                        "type": "string", "minLength": 1,
                        "description": "The result column for y (default: the second; a histogram's: the first)."
                    },
                    "title": { "type": "string", "minLength": 1, "description": "A title above the chart." },
                    "width": {
                        "type": "integer", "minimum": plot::MIN_SIDE, "maximum": plot::MAX_WIDTH,
                        "default": plot::DEFAULT_WIDTH, "description": "Pixels."
                    },
                    "height": {
                        "type": "integer", "minimum": plot::MIN_SIDE, "maximum": plot::MAX_HEIGHT,
                        "default": plot::DEFAULT_HEIGHT, "description": "Pixels."
                    },
                    "bins": {
                        "type": "integer", "minimum": 1, "maximum": plot::MAX_BINS,
                        "default": plot::DEFAULT_BINS, "description": "Histogram bins."
                    },
                    "target_low": { "type": "number", "description": "Lower end of a y range to shade (e.g. 70 mg/dL); with target_high." },
                    "target_high": { "type": "number", "description": "Upper end of that range (e.g. 180 mg/dL)." }
                }),
                json!(["sql", "kind"]),
            ),
            ToolName::SearchSchema => (
                json!({
                    "query": {
                        "type": "string", "minLength": 1,
                        "description": "Text to look for in table/column names, descriptions and comments."
                    },
                    "limit": {
                        "type": "integer", "minimum": 1, "maximum": SEARCH_MAX_LIMIT,
                        "default": SEARCH_DEFAULT_LIMIT, "description": "Most matches to return."
                    }
                }),
                json!(["query"]),
            ),
            ToolName::ListRelationships | ToolName::ServerInfo => (json!({}), json!([])),
        };
        json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false
        })
    }

    /// The JSON Schema of the envelope's `data` for this tool.
    pub fn data_schema(self) -> Value {
        match self {
            ToolName::ListTables => json!({
                "type": "object",
                "properties": { "tables": { "type": "array", "items": table_summary_schema() } },
                "required": ["tables"]
            }),
            ToolName::DescribeTable => table_detail_schema(),
            ToolName::Query => rows_schema(false),
            ToolName::SampleRows => rows_schema(true),
            ToolName::ExplainQuery => json!({
                "type": "object",
                "properties": {
                    "plan": {
                        "description": "DuckDB's plan as JSON: the list of physical operators \
                                        (name, children, extra_info), or an object of plans by \
                                        kind for EXPLAIN ANALYZE",
                        "anyOf": [{ "type": "array" }, { "type": "object" }]
                    },
                    "summary": { "type": "string" }
                },
                "required": ["plan", "summary"]
            }),
            ToolName::SearchSchema => json!({
                "type": "object",
                "properties": {
                    "query": { "type": "string" },
                    "matches": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "kind": { "type": "string", "enum": ["table", "column"] },
                                "schema": { "type": "string" },
                                "table": { "type": "string" },
                                "column": nullable("string"),
                                "type": nullable("string"),
                                "matched_in": { "type": "string", "enum": ["name", "description", "comment"] },
                                "text": nullable("string")
                            },
                            "required": ["kind", "schema", "table", "column", "type", "matched_in", "text"]
                        }
                    },
                    "truncated": { "type": "boolean" },
                    "did_you_mean": { "type": "array", "items": { "type": "string" } }
                },
                "required": ["query", "matches", "truncated", "did_you_mean"]
            }),
            ToolName::ListRelationships => json!({
                "type": "object",
                "properties": { "foreign_keys": { "type": "array", "items": foreign_key_schema() } },
                "required": ["foreign_keys"]
            }),
            ToolName::ServerInfo => server_info_schema(),
            ToolName::Plot => json!({
                "type": "object",
                "properties": {
                    "kind": { "type": "string", "enum": ["line", "scatter", "bar", "histogram", "agp"] },
                    "x": { "type": "string", "description": "The result column drawn as x." },
                    "y": { "type": "string", "description": "The result column drawn as y." },
                    "width": { "type": "integer" },
                    "height": { "type": "integer" },
                    "rows_read": { "type": "integer", "description": "Rows the query returned." },
                    "summary": {
                        "type": "object",
                        "description": "What the picture shows, as data: a small table and a sentence.",
                        "properties": {
                            "columns": { "type": "array", "items": { "type": "string" } },
                            "rows": { "type": "array", "items": { "type": "array" } },
                            "text": { "type": "string" }
                        },
                        "required": ["columns", "rows", "text"]
                    }
                },
                "required": ["kind", "x", "y", "width", "height", "rows_read", "summary"]
            }),
        }
    }

    /// The tool as `tools/list` publishes it; `time_zone` as in [`ToolName::description`].
    pub fn to_tool(self, time_zone: &str) -> Tool {
        Tool::new(
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
    pub fn signature(self) -> &'static str {
        match self {
            ToolName::ListTables => "list_tables(schema?: string)",
            ToolName::DescribeTable => "describe_table(table_name: string, schema?: string)",
            ToolName::Query => "query(sql: string, limit?: integer 1–10000, default 1000)",
            ToolName::SampleRows => {
                "sample_rows(table_name: string, schema?: string, limit?: integer 1–100, default 10, columns?: [string])"
            }
            ToolName::ExplainQuery => "explain_query(sql: string)",
            ToolName::SearchSchema => {
                "search_schema(query: string, limit?: integer 1–50, default 20)"
            }
            ToolName::ListRelationships => "list_relationships() — no arguments",
            ToolName::ServerInfo => "server_info() — no arguments",
            ToolName::Plot => {
                "plot(sql: string, kind: line|scatter|bar|histogram|agp, x?: string, y?: string, title?: string, width?: integer, height?: integer, bins?: integer, target_low?: number, target_high?: number)"
            }
        }
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

fn table_summary_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "schema": { "type": "string" },
            "name": { "type": "string" },
            "kind": { "type": "string", "enum": ["table", "view"] },
            "description": nullable("string"),
            "estimated_rows": nullable("integer"),
            "column_count": { "type": "integer", "minimum": 0 }
        },
        "required": ["schema", "name", "kind", "description", "estimated_rows", "column_count"]
    })
}

fn foreign_key_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "table": { "type": "string" },
            "columns": { "type": "array", "items": { "type": "string" } },
            "referenced_table": { "type": "string" },
            "referenced_columns": { "type": "array", "items": { "type": "string" } }
        },
        "required": ["table", "columns", "referenced_table", "referenced_columns"]
    })
}

fn table_detail_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "schema": { "type": "string" },
            "name": { "type": "string" },
            "kind": { "type": "string", "enum": ["table", "view"] },
            "description": nullable("string"),
            "estimated_rows": nullable("integer"),
            "columns": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": { "type": "string" },
                        "type": { "type": "string" },
                        "nullable": { "type": "boolean" },
                        "default": nullable("string"),
                        "primary_key": { "type": "boolean" },
                        "unique": { "type": "boolean" },
                        "references": nullable("string"),
                        "comment": nullable("string")
                    },
                    "required": ["name", "type", "nullable", "default", "primary_key", "unique", "references", "comment"]
                }
            },
            "indexes": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": { "type": "string" },
                        "unique": { "type": "boolean" },
                        "sql": nullable("string")
                    },
                    "required": ["name", "unique", "sql"]
                }
            },
            "foreign_keys": { "type": "array", "items": foreign_key_schema() },
            "referenced_by": { "type": "array", "items": foreign_key_schema() }
        },
        "required": ["schema", "name", "kind", "description", "estimated_rows", "columns", "indexes", "foreign_keys", "referenced_by"]
    })
}

fn rows_schema(with_sql: bool) -> Value {
    let mut schema = json!({
        "type": "object",
        "properties": {
            "columns": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": { "name": { "type": "string" }, "type": { "type": "string" } },
                    "required": ["name", "type"]
                }
            },
            "rows": { "type": "array", "items": { "type": "array" } },
            "row_count": { "type": "integer", "minimum": 0 },
            "truncated": { "type": "boolean" },
            "duration_ms": { "type": "number", "minimum": 0 }
        },
        "required": ["columns", "rows", "row_count", "truncated", "duration_ms"]
    });
    if with_sql {
        schema["properties"]["sql"] = json!({ "type": "string" });
        schema["required"] = json!([
            "columns",
            "rows",
            "row_count",
            "truncated",
            "duration_ms",
            "sql"
        ]);
    }
    schema
}

fn server_info_schema() -> Value {
    let pairs = json!({
        "type": "array",
        "items": { "type": "array", "items": { "type": "string" }, "minItems": 2, "maxItems": 2 }
    });
    json!({
        "type": "object",
        "properties": {
            "name": { "type": "string" },
            "version": { "type": "string" },
            "database_path": { "type": "string" },
            "time_zone": {
                "type": "string",
                "description": "DuckDB's TimeZone in the workers: now(), current_date and TIMESTAMPTZ dates use it."
            },
            "workers": {
                "type": "object",
                "description": "Where each query's fresh, confined worker process comes from: forked from a warm template (fast), or spawned (the fallback, with the reason).",
                "properties": {
                    "origin": { "type": "string", "enum": ["template", "spawned"] },
                    "template_pid": { "type": "integer" },
                    "template_starts": { "type": "integer" },
                    "reason": { "type": "string" }
                },
                "required": ["origin"]
            },
            "limits": {
                "type": "object",
                "properties": {
                    "query_default_rows": { "type": "integer" },
                    "query_max_rows": { "type": "integer" },
                    "sample_max_rows": { "type": "integer" },
                    "search_max_matches": { "type": "integer" },
                    "timeout_seconds": { "type": "number" },
                    "max_result_bytes": { "type": "integer" },
                    "memory_limit": {
                        "type": "string",
                        "description": "DuckDB's memory_limit in each worker: past it, DuckDB spills to disk."
                    },
                    "memory": {
                        "type": "object",
                        "description": "The memory budget all workers together stay under, and each worker's hard cap (RLIMIT_DATA).",
                        "properties": {
                            "budget_bytes": { "type": "integer" },
                            "budget_source": { "type": "string", "enum": ["flag", "half_of_memory"] },
                            "slots": { "type": "integer", "description": "Workers that may run queries at once, each with a full share." },
                            "idle_processes": { "type": "integer", "description": "Warm spares and the template: they run no query and are charged a small fixed amount each." },
                            "cap_bytes": { "type": "integer" },
                            "duckdb_limit_bytes": { "type": "integer" },
                            "overhead_bytes": { "type": "integer" }
                        },
                        "required": ["budget_bytes", "budget_source", "slots", "cap_bytes", "duckdb_limit_bytes", "overhead_bytes"]
                    },
                    "spill": {
                        "anyOf": [
                            {
                                "type": "object",
                                "description": "Where workers spill: a private directory per worker under root, removed when it ends.",
                                "properties": {
                                    "root": { "type": "string" },
                                    "backing": { "type": "string", "enum": ["disk", "memory"] },
                                    "max_bytes_per_worker": { "type": "integer" }
                                },
                                "required": ["root", "backing", "max_bytes_per_worker"]
                            },
                            { "type": "null" }
                        ]
                    },
                    "threads": { "type": "integer" },
                    "max_concurrent_queries": { "type": "integer" },
                    "warm_workers": { "type": "integer" }
                },
                "required": [
                    "query_default_rows", "query_max_rows", "sample_max_rows", "search_max_matches",
                    "timeout_seconds", "max_result_bytes", "memory_limit", "memory", "spill", "threads",
                    "max_concurrent_queries", "warm_workers"
                ]
            },
            "posture": {
                "anyOf": [
                    {
                        "type": "object",
                        "properties": {
                            "landlock": { "type": "string", "enum": ["fully_enforced", "not_enforced"] },
                            "landlock_abi": nullable("integer"),
                            "seccomp": { "type": "boolean" },
                            "no_new_privs": { "type": "boolean" },
                            "rlimits": pairs.clone(),
                            "duckdb_settings": pairs,
                            "bypassed_layers": { "type": "array", "items": { "type": "string" } },
                            "unenforced": { "type": "array", "items": { "type": "string" } },
                            "properties": {
                                "type": "array",
                                "items": {
                                    "type": "object",
                                    "properties": {
                                        "property": { "type": "string" },
                                        "promise": { "type": "string" },
                                        "mechanism": { "type": "string" },
                                        "enforced": { "type": "boolean" }
                                    },
                                    "required": ["property", "promise", "mechanism", "enforced"]
                                }
                            }
                        },
                        "required": ["landlock", "landlock_abi", "seccomp", "no_new_privs", "rlimits", "duckdb_settings", "bypassed_layers", "unenforced", "properties"]
                    },
                    { "type": "null" }
                ]
            },
            "posture_error": nullable("string")
        },
        "required": ["name", "version", "database_path", "time_zone", "limits", "posture", "posture_error"]
    })
}

/// `list_tables` arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListTablesArgs {
    /// Only this schema.
    pub schema: Option<String>,
}

/// `describe_table` arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DescribeTableArgs {
    /// The table.
    pub table_name: String,
    /// Its schema.
    pub schema: Option<String>,
}

/// `query` arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueryArgs {
    /// The SQL.
    pub sql: String,
    /// Row limit (checked against 1–10000 after parsing, so the error can name the range).
    pub limit: Option<i64>,
}

/// `sample_rows` arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SampleRowsArgs {
    /// The table.
    pub table_name: String,
    /// Its schema.
    pub schema: Option<String>,
    /// Rows (1–100).
    pub limit: Option<i64>,
    /// Only these columns.
    pub columns: Option<Vec<String>>,
}

/// `plot` arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlotArgs {
    /// The SQL.
    pub sql: String,
    /// Which chart.
    pub kind: plot::ChartKind,
    /// The x column.
    pub x: Option<String>,
    /// The y column.
    pub y: Option<String>,
    /// A title.
    pub title: Option<String>,
    /// Pixels (checked by the renderer, which names the range).
    pub width: Option<u32>,
    /// Pixels.
    pub height: Option<u32>,
    /// Histogram bins.
    pub bins: Option<u32>,
    /// Lower end of the shaded y range.
    pub target_low: Option<f64>,
    /// Upper end.
    pub target_high: Option<f64>,
}

/// `explain_query` arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExplainArgs {
    /// The SQL.
    pub sql: String,
}

/// `search_schema` arguments.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// The text.
    pub query: String,
    /// Matches (1–50).
    pub limit: Option<i64>,
}

/// Arguments of the tools that take none.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// Parse a tool's arguments; a wrong type, a missing or an unknown field is `invalid_argument`.
pub fn parse_args<T: DeserializeOwned>(
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

/// The size cap of string argument `name` of `tool`, in bytes. Strings anywhere else (an
/// argument of the wrong type, one the parser will refuse as unknown) get the name cap, so no
/// error message can quote a huge value.
pub fn argument_cap(tool: ToolName, name: &str) -> usize {
    match (tool, name) {
        (ToolName::Query | ToolName::ExplainQuery | ToolName::Plot, "sql") => max_sql_bytes(),
        (ToolName::SearchSchema, "query") => MAX_SEARCH_BYTES,
        _ => MAX_NAME_BYTES,
    }
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
    fn check(label: &str, value: &Value, cap: usize) -> Result<(), ErrorBody> {
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
                .try_for_each(|(index, item)| check(&format!("{label}[{index}]"), item, cap)),
            Value::Object(map) => map.iter().try_for_each(|(key, item)| {
                if key.len() > MAX_NAME_BYTES {
                    Err(too_long("argument name", MAX_NAME_BYTES, key.len()))
                } else {
                    check(label, item, cap)
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
        check(name, value, argument_cap(tool, name))?;
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
    fn the_sql_cap_is_the_validators() {
        assert_eq!(max_sql_bytes(), 100 * 1024);
        assert_eq!(
            max_sql_bytes(),
            crate::validate::Limits::default().max_sql_bytes
        );
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
}

//! The registry's promises, tool by tool: what `tools/list` publishes, what a call's arguments
//! may be, and the caps of every string.

use serde_json::json;

use super::query::QueryArgs;
use super::tool::check_limit;
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
            | ToolName::ListFiles
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
            | ToolName::ListFiles
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
        tool.parse_only(Some(good.clone()))
            .unwrap_or_else(|e| panic!("{}: every argument given: {}", tool.as_str(), e.message));
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
                tool.parse_only(Some(null))
                    .unwrap_or_else(|e| panic!("{}: {name} null: {}", tool.as_str(), e.message));
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
            "sample_rows(table_name: string, schema?: string, database?: string, limit?: integer 1–100, default 10, columns?: [string])",
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

//! Every tool and resource over real MCP stdio against the real binary and a real DuckDB file.
//! Each result's structuredContent is validated against the tool's published outputSchema.

use crate::support::steps::count_cgm_readings;
use crate::support::{OutputSchemas, cgm_db, serve, status};
use duckgate::mcp_client::{envelope_of, text_of};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread")]
async fn initialize_negotiates_2025_11_25_names_the_server_and_tells_how_to_start() {
    let (_dir, db) = cgm_db("init");
    let client = serve(&db, &[]).await;
    let info = client.server_info().expect("initialize result");
    assert_eq!(info.protocol_version.as_str(), "2025-11-25");
    let implementation = info.server_info.as_ref().expect("serverInfo");
    assert_eq!(implementation.name, "duckgate");
    assert_eq!(implementation.version, env!("CARGO_PKG_VERSION"));
    let instructions = info.instructions.as_deref().expect("instructions");
    let order: Vec<usize> = ["list_tables", "describe_table", "query"]
        .iter()
        .map(|tool| {
            instructions
                .find(tool)
                .unwrap_or_else(|| panic!("instructions do not mention {tool}"))
        })
        .collect();
    assert!(
        order[0] < order[1] && order[1] < order[2],
        "instructions: {instructions}"
    );
    assert!(info.capabilities.tools.is_some() && info.capabilities.resources.is_some());
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn tools_list_has_the_ten_read_only_tools_with_envelope_output_schemas() {
    let (_dir, db) = cgm_db("list");
    let client = serve(&db, &[]).await;
    let tools = client.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "list_tables",
            "list_files",
            "describe_table",
            "query",
            "plot",
            "sample_rows",
            "explain_query",
            "search_schema",
            "list_relationships",
            "server_info"
        ]
    );
    for tool in &tools {
        let annotations = tool.annotations.as_ref().expect("annotations");
        assert_eq!(annotations.read_only_hint, Some(true), "{}", tool.name);
        assert_eq!(annotations.destructive_hint, Some(false), "{}", tool.name);
        assert_eq!(annotations.idempotent_hint, Some(true), "{}", tool.name);
        assert_eq!(annotations.open_world_hint, Some(false), "{}", tool.name);
        let description = tool.description.as_deref().unwrap_or_default();
        assert!(description.chars().count() < 500, "{}", tool.name);
        // The first sentence steers an agent's choice of tool: it says when to use this one.
        assert!(
            description.starts_with("Use this when "),
            "{}: {description}",
            tool.name
        );
        assert_eq!(
            description.matches("Use this when").count(),
            1,
            "{}",
            tool.name
        );
        assert!(description.contains(" instead when"), "{}", tool.name);
        assert!(description.contains("Common compositions"), "{}", tool.name);
        let output = tool.output_schema.as_ref().expect("outputSchema");
        let statuses = &output["properties"]["status"]["enum"];
        assert_eq!(
            statuses,
            &json!(["success", "empty", "partial", "error", "refused"])
        );
    }
    for tool in &tools {
        let input = serde_json::to_value(tool.input_schema.as_ref()).unwrap();
        let output = serde_json::to_value(tool.output_schema.as_ref().unwrap().as_ref()).unwrap();
        for (which, schema) in [("input", &input), ("output", &output)] {
            assert_strict(&format!("{} {which}", tool.name), schema);
        }
    }
    let query = tools.iter().find(|t| t.name == "query").unwrap();
    assert_eq!(query.input_schema["properties"]["limit"]["minimum"], 1);
    assert_eq!(query.input_schema["properties"]["limit"]["maximum"], 10000);
    assert_eq!(query.input_schema["properties"]["limit"]["default"], 1000);
    assert_eq!(query.input_schema["required"], json!(["sql"]));
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn every_tool_answers_and_validates_against_its_output_schema() {
    let (_dir, db) = cgm_db("every");
    let client = serve(&db, &[]).await;
    let schemas = OutputSchemas::fetch(&client).await;

    let result = client.call("list_tables", json!({})).await.unwrap();
    schemas.check("list_tables", &result);
    assert_eq!(status(&result), "success");
    let tables = &envelope_of(&result)["data"]["tables"];
    let readings = tables
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "cgm_readings")
        .expect("cgm_readings");
    assert_eq!(
        readings["description"],
        "Continuous glucose monitor readings every 5 minutes"
    );
    assert_eq!(readings["column_count"], 5);
    assert!(
        tables
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "daily_glucose" && t["kind"] == "view")
    );
    assert!(text_of(&result).contains("cgm_readings"));

    let result = client
        .call("describe_table", json!({ "table_name": "events" }))
        .await
        .unwrap();
    schemas.check("describe_table", &result);
    let data = &envelope_of(&result)["data"];
    let columns: Vec<&str> = data["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(columns, ["id", "reading_id", "kind", "units"]);
    assert_eq!(data["columns"][0]["primary_key"], true);
    assert_eq!(
        data["columns"][3]["comment"],
        "Insulin units delivered by a bolus"
    );
    assert_eq!(data["foreign_keys"][0]["referenced_table"], "cgm_readings");
    assert_eq!(
        data["columns"][1]["references"],
        json!({ "table": "cgm_readings", "column": "id" })
    );
    assert_eq!(data["columns"][0]["references"], Value::Null);
    assert!(
        text_of(&result).contains("units DOUBLE"),
        "{}",
        text_of(&result)
    );

    count_cgm_readings(&client, &schemas).await;

    let result = client
        .call(
            "sample_rows",
            json!({ "table_name": "cgm_readings", "limit": 3, "columns": ["glucose_mg_dl", "ID"] }),
        )
        .await
        .unwrap();
    schemas.check("sample_rows", &result);
    let data = &envelope_of(&result)["data"];
    assert_eq!(data["row_count"], 3);
    let names: Vec<&str> = data["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["glucose_mg_dl", "id"]);

    let result = client
        .call(
            "explain_query",
            json!({ "sql": "SELECT avg(glucose_mg_dl) FROM cgm_readings WHERE trend = 'flat'" }),
        )
        .await
        .unwrap();
    schemas.check("explain_query", &result);
    assert_eq!(status(&result), "success", "{}", envelope_of(&result));
    let summary = envelope_of(&result)["data"]["summary"].as_str().unwrap();
    assert!(summary.contains("cgm_readings"), "{summary}");
    assert!(text_of(&result).contains("not executed"));

    let result = client
        .call("search_schema", json!({ "query": "insulin" }))
        .await
        .unwrap();
    schemas.check("search_schema", &result);
    let matches = &envelope_of(&result)["data"]["matches"];
    assert_eq!(matches[0]["table"], "events");
    assert_eq!(matches[0]["column"], "units");
    assert_eq!(matches[0]["matched_in"], "comment");

    let result = client.call("list_relationships", json!({})).await.unwrap();
    schemas.check("list_relationships", &result);
    assert_eq!(
        envelope_of(&result)["data"]["foreign_keys"],
        json!([{ "database": "cgm", "table": "events", "columns": ["reading_id"], "referenced_table": "cgm_readings", "referenced_columns": ["id"] }])
    );
    assert!(text_of(&result).contains("events(reading_id) → cgm_readings(id)"));

    let result = client.call("server_info", json!({})).await.unwrap();
    schemas.check("server_info", &result);
    assert_eq!(status(&result), "success", "{}", envelope_of(&result));
    let data = &envelope_of(&result)["data"];
    assert_eq!(data["name"], "duckgate");
    // The database by its name, never by its host path (it shows the user's home and name).
    assert_eq!(
        data["databases"],
        json!([{ "name": "cgm", "default": true, "granted": ["file"] }])
    );
    let whole = serde_json::to_string(&result).unwrap();
    let folder = db.parent().unwrap().display().to_string();
    assert!(
        !whole.contains(&folder),
        "server_info shows a host path: {whole}"
    );
    assert_eq!(data["limits"]["query_max_rows"], 10000);
    assert_eq!(data["limits"]["timeout_seconds"], 30.0);
    assert_eq!(data["posture"]["landlock"], "fully_enforced", "{data}");
    assert_eq!(data["posture"]["seccomp"], true);
    assert!(text_of(&result).contains("landlock"));
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn query_text_is_aligned_under_a_header_and_long_cells_are_clipped_only_in_text() {
    let (_dir, db) = cgm_db("text");
    let client = serve(&db, &[]).await;
    let result = client
        .call("query", json!({ "sql": "SELECT id, trend, note FROM cgm_readings WHERE id IN (6, 7) ORDER BY id" }))
        .await
        .unwrap();
    assert_eq!(status(&result), "success");
    let text = text_of(&result);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5, "{text}");
    assert!(lines[0].starts_with("id | trend  | note"), "{text}");
    assert!(lines[1].starts_with("---+--------+-"), "{text}");
    assert!(lines[2].starts_with(" 6 | flat   | NULL"), "{text}");
    assert!(
        lines[3].starts_with(" 7 | rising | very long note"),
        "{text}"
    );
    assert!(lines[3].ends_with('…'), "long cell not clipped: {text}");
    assert!(lines[3].chars().count() < 120, "{text}");
    assert_eq!(lines[4], "2 rows returned.");
    let full_note = envelope_of(&result)["data"]["rows"][1][2].as_str().unwrap();
    assert_eq!(
        full_note,
        "very long note ".repeat(40),
        "structured rows must not be clipped"
    );
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn zero_rows_are_empty_and_rows_past_the_limit_are_partial() {
    let (_dir, db) = cgm_db("status");
    let client = serve(&db, &[]).await;
    let schemas = OutputSchemas::fetch(&client).await;
    let empty = client
        .call(
            "query",
            json!({ "sql": "SELECT * FROM cgm_readings WHERE id < 0" }),
        )
        .await
        .unwrap();
    schemas.check("query", &empty);
    assert_eq!(status(&empty), "empty");
    assert_eq!(empty.is_error, Some(false));
    assert!(
        text_of(&empty).ends_with("0 rows returned."),
        "{}",
        text_of(&empty)
    );

    let partial = client
        .call(
            "query",
            json!({ "sql": "SELECT id FROM cgm_readings ORDER BY id", "limit": 5 }),
        )
        .await
        .unwrap();
    schemas.check("query", &partial);
    assert_eq!(status(&partial), "partial");
    assert_eq!(partial.is_error, Some(false));
    let data = &envelope_of(&partial)["data"];
    assert_eq!(data["row_count"], 5);
    assert_eq!(data["truncated"], true);
    assert_eq!(data["rows"], json!([[0], [1], [2], [3], [4]]));
    assert!(text_of(&partial).ends_with(
        "5 rows returned (results truncated — set a higher limit or add a WHERE clause to narrow results)."
    ));

    let default_limit = client
        .call("query", json!({ "sql": "SELECT id FROM cgm_readings" }))
        .await
        .unwrap();
    assert_eq!(status(&default_limit), "partial");
    assert_eq!(envelope_of(&default_limit)["data"]["row_count"], 1000);

    let max_limit = client
        .call(
            "query",
            json!({ "sql": "SELECT id FROM cgm_readings", "limit": 10000 }),
        )
        .await
        .unwrap();
    assert_eq!(status(&max_limit), "success");
    assert_eq!(envelope_of(&max_limit)["data"]["row_count"], 4032);

    let empty_table = client
        .call("sample_rows", json!({ "table_name": "empty_table" }))
        .await
        .unwrap();
    schemas.check("sample_rows", &empty_table);
    assert_eq!(status(&empty_table), "empty");
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn sample_rows_quotes_catalog_identifiers_so_odd_names_work_and_nothing_is_injected() {
    let (_dir, db) = cgm_db("odd");
    let client = serve(&db, &[]).await;
    let result = client
        .call(
            "sample_rows",
            json!({ "table_name": "odd \"name", "columns": ["quo\"te", "sp ace"] }),
        )
        .await
        .unwrap();
    assert_eq!(status(&result), "success", "{}", envelope_of(&result));
    let data = &envelope_of(&result)["data"];
    assert_eq!(data["rows"], json!([["a", 1], ["b", 2]]));
    assert_eq!(
        data["sql"],
        "SELECT \"quo\"\"te\", \"sp ace\" FROM \"main\".\"odd \"\"name\" LIMIT 10"
    );
    // A table name that is SQL, not a name, matches nothing in the catalog and never reaches DuckDB.
    let injected = client
        .call(
            "sample_rows",
            json!({ "table_name": "cgm_readings; DROP TABLE events" }),
        )
        .await
        .unwrap();
    assert_eq!(crate::support::error_kind(&injected), "unknown_name");
    let events = client
        .call("query", json!({ "sql": "SELECT count(*) FROM events" }))
        .await
        .unwrap();
    assert_eq!(envelope_of(&events)["data"]["rows"], json!([[3]]));
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_descriptions_file_supplies_and_overrides_table_descriptions() {
    let (dir, db) = cgm_db("descriptions");
    let file = dir.path().join("descriptions.toml");
    std::fs::write(
        &file,
        "cgm_readings = \"Dexcom G7 sensor glucose\"\n[tables]\nbasal_deliveries = \"Basal insulin rate changes\"\n",
    )
    .unwrap();
    let client = serve(&db, &["--descriptions", file.to_str().unwrap()]).await;
    let result = client.call("list_tables", json!({})).await.unwrap();
    let tables = envelope_of(&result)["data"]["tables"]
        .as_array()
        .unwrap()
        .clone();
    let description =
        |name: &str| tables.iter().find(|t| t["name"] == name).unwrap()["description"].clone();
    assert_eq!(
        description("cgm_readings"),
        "Dexcom G7 sensor glucose",
        "overrides the COMMENT"
    );
    assert_eq!(
        description("basal_deliveries"),
        "Basal insulin rate changes",
        "supplies a missing one"
    );
    assert_eq!(description("events"), Value::Null);
    let described = client
        .call("describe_table", json!({ "table_name": "cgm_readings" }))
        .await
        .unwrap();
    assert_eq!(
        envelope_of(&described)["data"]["description"],
        "Dexcom G7 sensor glucose"
    );
    let found = client
        .call("search_schema", json!({ "query": "dexcom" }))
        .await
        .unwrap();
    assert_eq!(
        envelope_of(&found)["data"]["matches"][0]["table"],
        "cgm_readings"
    );
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn resources_list_the_snapshot_and_the_table_template_and_read_both() {
    let (_dir, db) = cgm_db("resources");
    let client = serve(&db, &[]).await;
    let resources = client.list_resources().await.unwrap();
    assert_eq!(
        resources.iter().map(|r| r.uri.as_str()).collect::<Vec<_>>(),
        ["schema://snapshot"]
    );
    let templates = client.list_resource_templates().await.unwrap();
    assert_eq!(
        templates
            .iter()
            .map(|t| t.uri_template.as_str())
            .collect::<Vec<_>>(),
        ["schema://table/{name}"]
    );

    let text_of_resource = |result: &rmcp::model::ReadResourceResult| -> Value {
        match &result.contents[0] {
            rmcp::model::ResourceContents::TextResourceContents {
                text, mime_type, ..
            } => {
                assert_eq!(mime_type.as_deref(), Some("application/json"));
                serde_json::from_str(text).unwrap()
            }
            other => panic!("expected text contents, got {other:?}"),
        }
    };
    let snapshot = text_of_resource(&client.read_resource("schema://snapshot").await.unwrap());
    let names: Vec<&str> = snapshot["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for expected in [
        "cgm_readings",
        "events",
        "basal_deliveries",
        "empty_table",
        "daily_glucose",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    assert_eq!(snapshot["foreign_keys"][0]["table"], "events");

    let table = text_of_resource(&client.read_resource("schema://table/events").await.unwrap());
    assert_eq!(table["name"], "events");
    assert_eq!(table["columns"].as_array().unwrap().len(), 4);
    let odd = text_of_resource(
        &client
            .read_resource("schema://table/odd%20%22name")
            .await
            .unwrap(),
    );
    assert_eq!(odd["name"], "odd \"name");

    let missing = client
        .read_resource("schema://table/event")
        .await
        .unwrap_err();
    assert!(
        missing.contains("-32002") && missing.contains("events"),
        "{missing}"
    );
    let unknown = client.read_resource("schema://nothing").await.unwrap_err();
    assert!(unknown.contains("-32002"), "{unknown}");
    client.close().await.unwrap();
}

/// What strict validators (MCP Inspector's `--strict`) ask of a schema: no type arrays (nullable
/// values are `anyOf` with `null`), and every property has at least one rule.
fn assert_strict(path: &str, schema: &Value) {
    let Value::Object(map) = schema else {
        return;
    };
    assert!(
        !map.get("type").is_some_and(Value::is_array),
        "{path}: a type array: {schema}"
    );
    if let Some(Value::Object(properties)) = map.get("properties") {
        for (name, property) in properties {
            let rules = property.as_object().map_or(0, |p| {
                p.keys()
                    .filter(|k| !matches!(k.as_str(), "description" | "title"))
                    .count()
            });
            assert!(rules > 0, "{path}.{name} has no rules: {property}");
            assert_strict(&format!("{path}.{name}"), property);
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(inner) = map.get(key) {
            assert_strict(&format!("{path}[{key}]"), inner);
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(options)) = map.get(key) {
            for option in options {
                assert_strict(&format!("{path}({key})"), option);
            }
        }
    }
}

/// The bytes of a `tools/call` result as the client received it.
fn reply_bytes(result: &rmcp::model::CallToolResult) -> usize {
    serde_json::to_vec(result).unwrap().len()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_10000_row_select_star_stays_within_the_reply_budget_and_says_what_was_cut() {
    let dir = crate::support::TempDir::new("reply-budget");
    let db = dir.path().join("wide.duckdb");
    crate::support::make_db(
        &db,
        "CREATE TABLE readings AS SELECT i AS id, TIMESTAMP '2026-11-01' + to_minutes(i * 5) AS read_at, \
         (100 + i % 90)::INTEGER AS glucose, 'sensor ' || (i % 7) AS device, i % 3 = 0 AS calibrated \
         FROM range(20000) t(i);",
    );
    for (flags, budget) in [
        (&[][..], 64 * 1024),
        (&["--max-reply-bytes", "16384"][..], 16384),
    ] {
        let client = serve(&db, flags).await;
        let schemas = OutputSchemas::fetch(&client).await;
        let result = client
            .call(
                "query",
                json!({ "sql": "SELECT * FROM readings", "limit": 10000 }),
            )
            .await
            .unwrap();
        schemas.check("query", &result);
        let bytes = reply_bytes(&result);
        assert!(bytes <= budget, "{bytes} bytes over a budget of {budget}");
        assert!(
            bytes > budget / 2,
            "{bytes} bytes: far more was cut than the budget needs"
        );
        let data = &envelope_of(&result)["data"];
        assert_eq!(status(&result), "partial");
        assert_eq!(data["truncated_by"], "reply_budget", "{data}");
        let shown = data["row_count"].as_u64().unwrap();
        let left_out = data["rows_left_out"].as_u64().unwrap();
        assert!(
            shown > 50 && left_out > 0,
            "{shown} shown, {left_out} left out"
        );
        let text = text_of(&result);
        assert!(
            text.contains(&format!(
                "{shown} rows returned (results truncated); {left_out} more"
            )),
            "{}",
            &text[text.len().saturating_sub(400)..]
        );
        for step in ["aggregate", "LIMIT", "plot"] {
            assert!(data["next_step"].as_str().unwrap().contains(step), "{data}");
        }
        client.close().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_starter_prompts_are_listed_and_name_the_tools_they_use() {
    let (_dir, db) = cgm_db("prompts");
    let client = serve(&db, &["--time-zone", "Europe/Berlin"]).await;
    let prompts = client.list_prompts().await.unwrap();
    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["glucose_review", "last_night"]);
    for prompt in &prompts {
        let description = prompt.description.as_deref().unwrap();
        for tool in ["list_tables", "describe_table", "query", "plot"] {
            assert!(description.contains(tool), "{}: {description}", prompt.name);
        }
    }
    let review = client
        .get_prompt("glucose_review", json!({ "days": "14" }))
        .await
        .unwrap();
    let text = serde_json::to_value(&review.messages[0].content).unwrap()["text"].clone();
    let text = text.as_str().unwrap();
    assert!(
        text.contains("last 14 days") && text.contains("kind tir") && text.contains("kind agp"),
        "{text}"
    );
    let night = client.get_prompt("last_night", Value::Null).await.unwrap();
    let text = serde_json::to_value(&night.messages[0].content).unwrap()["text"].clone();
    let text = text.as_str().unwrap();
    assert!(
        text.contains("Europe/Berlin") && text.contains("22:00"),
        "{text}"
    );
    let unknown = client
        .get_prompt("drop_everything", Value::Null)
        .await
        .unwrap_err();
    assert!(unknown.contains("glucose_review"), "{unknown}");
    client.close().await.unwrap();
}

//! `duckgate demo`'s MCP session: drive a real `duckgate serve` the way an agent would and print
//! each call and reply.

use std::io::Write;
use std::path::Path;

use serde_json::{Value, json};

use crate::mcp_client::{McpClient, envelope_of, text_of};
use crate::sql_text::quote_identifier;

/// Spawn `exe serve --db db_path`, make the demo calls, and print them to `out`.
///
/// Fails if a call does not end the way the demo promises (for example if the DELETE is not
/// refused), so a test can run it as a whole. The failure is a sentence for the person running
/// the demo or the test (a `String`): nothing decides anything from it.
pub async fn run_demo_session(
    exe: &Path,
    db_path: &Path,
    out: &mut dyn Write,
) -> Result<(), String> {
    let db = db_path.to_string_lossy().into_owned();
    let client = McpClient::spawn(exe, &["serve", "--db", db.as_str()]).await?;
    if let Some(info) = client.server_info() {
        let name = info
            .server_info
            .as_ref()
            .map_or("?".to_string(), |i| format!("{} {}", i.name, i.version));
        say(
            out,
            &format!(
                "Connected to {name} over MCP stdio (protocol {}).\n",
                info.protocol_version
            ),
        )?;
    }

    let mut step = 0;
    let tables = demo_call(
        &client,
        out,
        &mut step,
        "list_tables",
        json!({}),
        &["success"],
    )
    .await?;
    let has_readings = tables
        .get("tables")
        .and_then(Value::as_array)
        .is_some_and(|t| t.iter().any(|t| t["name"] == "cgm_readings"));
    if !has_readings {
        return Err("the demo database has no cgm_readings table".into());
    }

    let described = demo_call(
        &client,
        out,
        &mut step,
        "describe_table",
        json!({ "table_name": "cgm_readings" }),
        &["success"],
    )
    .await?;
    let (time_column, value_column) = pick_columns(&described)?;
    let time = quote_identifier(&time_column);
    let value = quote_identifier(&value_column);
    // "Last week" as a person means it: the seven days before now, in the server's local time
    // zone (the demo's data ends today).
    let weekly_average = format!(
        "SELECT round(avg({value}), 1) AS avg_{value_column}, count(*) AS readings, \
         min({time}) AS first_reading, max({time}) AS last_reading \
         FROM cgm_readings WHERE {time} >= now()::TIMESTAMP - INTERVAL 7 DAY"
    );
    demo_call(
        &client,
        out,
        &mut step,
        "query",
        json!({ "sql": weekly_average }),
        &["success"],
    )
    .await?;
    // One chart of each kind, drawn inside the confined worker (the client gets a PNG, the
    // numbers it shows and a sentence; the sentence is printed here).
    let last = |days: u32| {
        // The last days of the data (the demo's ends now; an older database's ends earlier).
        format!(
            "FROM cgm_readings WHERE {time} >= \
             (SELECT max({time}) FROM cgm_readings) - INTERVAL {days} DAY"
        )
    };
    let charts = [
        json!({ "kind": "line", "sql": format!("SELECT {time}, {value} {} ORDER BY {time}", last(1)),
                "title": "Glucose, last 24 hours", "target_low": 70, "target_high": 180 }),
        json!({ "kind": "agp", "sql": format!("SELECT {time}, {value} {}", last(14)),
                "title": "Ambulatory glucose profile, 14 days", "target_low": 70, "target_high": 180 }),
        json!({ "kind": "tir", "sql": format!("SELECT {value} {}", last(14)),
                "title": "Time in ranges, 14 days" }),
        json!({ "kind": "histogram", "sql": format!("SELECT {value} {}", last(14)), "bins": 40 }),
        json!({ "kind": "bar", "sql": format!(
                "SELECT strftime({time}::DATE, '%a %d') AS day, round(avg({value}), 1) AS mean {} \
                 GROUP BY {time}::DATE ORDER BY {time}::DATE", last(7)) }),
        json!({ "kind": "scatter", "sql": format!(
                "SELECT hour({time}) + minute({time}) / 60 AS hour_of_day, {value} {}", last(7)) }),
    ];
    for chart in charts {
        demo_call(&client, out, &mut step, "plot", chart, &["success"]).await?;
    }
    // A write and a file read the gateway refuses, then the posture it reports.
    let closing: [(&str, Value, &[&str]); 3] = [
        (
            "query",
            json!({ "sql": "DELETE FROM cgm_readings WHERE 1 = 1" }),
            &["refused"],
        ),
        (
            "query",
            json!({ "sql": "SELECT * FROM read_text('/etc/passwd')" }),
            &["refused"],
        ),
        ("server_info", json!({}), &["success", "partial"]),
    ];
    for (tool, args, expected) in closing {
        demo_call(&client, out, &mut step, tool, args, expected).await?;
    }
    client.close().await?;
    say(
        out,
        "\nDemo finished: every call above went through the sandboxed gateway over MCP.\n",
    )
}

fn say(out: &mut dyn Write, text: &str) -> Result<(), String> {
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| format!("cannot write demo output: {e}"))
}

/// Make one call, print it and its reply, and check its status; returns the envelope's data.
async fn demo_call(
    client: &McpClient,
    out: &mut dyn Write,
    step: &mut usize,
    tool: &str,
    args: Value,
    expected: &[&str],
) -> Result<Value, String> {
    *step += 1;
    say(out, &format!("\n── {step}. {tool} {args}\n"))?;
    let result = client.call(tool, args).await?;
    let envelope = envelope_of(&result);
    let status = envelope["status"].as_str().unwrap_or("?").to_string();
    let mut reply = String::new();
    for line in text_of(&result).lines() {
        reply.push_str("   ");
        reply.push_str(line);
        reply.push('\n');
    }
    say(out, &reply)?;
    let mut summary = format!("   ⇒ status: {status}");
    if let Some(kind) = envelope
        .get("error")
        .and_then(|error| error.get("kind"))
        .and_then(Value::as_str)
    {
        summary.push_str(&format!(", error.kind: {kind}"));
    }
    if result.is_error == Some(true) {
        summary.push_str(", isError: true");
    }
    say(out, &format!("{summary}\n"))?;
    if expected.contains(&status.as_str()) {
        Ok(envelope["data"].clone())
    } else {
        Err(format!(
            "{tool} ended with status {status}, expected {}",
            expected.join(" or ")
        ))
    }
}

/// A timestamp column and a glucose-like numeric column of cgm_readings.
fn pick_columns(described: &Value) -> Result<(String, String), String> {
    let columns = described["columns"]
        .as_array()
        .ok_or("describe_table returned no columns")?;
    let name_type = |c: &Value| {
        (
            c["name"].as_str().unwrap_or_default().to_string(),
            c["type"].as_str().unwrap_or_default().to_uppercase(),
        )
    };
    let all: Vec<(String, String)> = columns.iter().map(name_type).collect();
    let time = all
        .iter()
        .find(|(_, t)| t.starts_with("TIMESTAMP") || t == "DATE")
        .map(|(n, _)| n.clone())
        .ok_or("cgm_readings has no timestamp column")?;
    let numeric = |t: &str| {
        [
            "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "FLOAT", "REAL", "DOUBLE",
            "DECIMAL",
        ]
        .iter()
        .any(|n| t.starts_with(n))
    };
    let value = all
        .iter()
        .find(|(n, t)| numeric(t) && n.to_lowercase().contains("glucose"))
        .or_else(|| {
            all.iter()
                .find(|(n, t)| numeric(t) && n.to_lowercase().contains("value"))
        })
        .or_else(|| {
            all.iter()
                .find(|(n, t)| numeric(t) && !n.to_lowercase().ends_with("id"))
        })
        .map(|(n, _)| n.clone())
        .ok_or("cgm_readings has no numeric reading column")?;
    Ok((time, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demo_picks_the_timestamp_and_the_glucose_column() {
        let described = json!({ "columns": [
            { "name": "reading_id", "type": "BIGINT" },
            { "name": "ts", "type": "TIMESTAMP" },
            { "name": "glucose_mg_dl", "type": "SMALLINT" },
            { "name": "trend", "type": "VARCHAR" }
        ]});
        assert_eq!(
            pick_columns(&described).unwrap(),
            ("ts".to_string(), "glucose_mg_dl".to_string())
        );
        let no_time = json!({ "columns": [{ "name": "glucose", "type": "INTEGER" }] });
        assert!(pick_columns(&no_time).is_err());
    }
}

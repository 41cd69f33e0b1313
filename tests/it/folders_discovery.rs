//! Discovering the declared folders' files, through the real binary: `list_files` lists them by
//! the path SQL reads them by, with format, size and modification time, a page at a time within
//! the reply budget; `describe_table` and `sample_rows` take a file's path; `schema://files` and
//! `schema://file/{path}` serve the same. Nothing shows a host path, a file outside the folder
//! (a link out, a FIFO, the database under another name), or what privacy rules hide.

use crate::support::folder_scene::FolderScene;
use crate::support::oracle::{JsonEncoding, Oracle};
use crate::support::{OutputSchemas, field_pairs, serve};
use duckgate::mcp_client::{McpClient, envelope_of, text_of};
use rmcp::model::CallToolResult;
use serde_json::{Value as Json, json};

/// A database and a declared folder `exports` of files in several formats and subfolders, with
/// what must never be listed: a link out, a FIFO, the database under another name.
fn scene(tag: &str) -> FolderScene {
    let scene = FolderScene::new(
        tag,
        "cgm.duckdb",
        "CREATE TABLE t (x INTEGER);",
        &["2025", "2026", "private", "many"],
    );
    let (root, exports) = (&scene.root, &scene.exports);
    scene.write_files(
        "COPY (SELECT TIMESTAMP '2026-01-01' + INTERVAL (i * 5) MINUTE AS ts, 100 + i % 50 AS glucose,
                      'G7' AS device, 'Jane Planted' AS patient_name
               FROM range(300) t(i)) TO '{exports}/2026/readings.parquet' (FORMAT parquet);
         COPY (SELECT 1 AS a, 'x' AS b) TO '{exports}/2025/notes.csv' (FORMAT csv, HEADER);
         COPY (SELECT 1 AS a) TO '{exports}/2025/events.json' (FORMAT json);
         COPY (SELECT 'hidden' AS secret) TO '{exports}/private/secret.parquet' (FORMAT parquet);",
    );
    std::fs::write(exports.join("README.txt"), "about these exports\n").unwrap();
    for i in 0..300 {
        std::fs::write(exports.join(format!("many/day-{i:03}.csv")), "x\n1\n").unwrap();
    }
    // What must never be listed: a link out, a FIFO, the database under another name.
    std::fs::write(root.join("outside.csv"), "x\n1\n").unwrap();
    std::os::unix::fs::symlink(root.join("outside.csv"), exports.join("link_out.csv")).unwrap();
    std::os::unix::fs::symlink(exports.join("2025/notes.csv"), exports.join("link_in.csv"))
        .unwrap();
    nix::unistd::mkfifo(
        &exports.join("pipe.csv"),
        nix::sys::stat::Mode::from_bits_truncate(0o600),
    )
    .unwrap();
    std::fs::hard_link(&scene.db, exports.join("db_copy.csv")).unwrap();
    scene
}

async fn server(scene: &FolderScene, extra: &[&str]) -> McpClient {
    let mut args = vec!["--time-zone", "UTC"];
    args.extend(extra);
    scene.serve("", &args).await
}

fn paths(envelope: &Json) -> Vec<String> {
    envelope["data"]["files"]
        .as_array()
        .unwrap_or_else(|| panic!("no files: {envelope}"))
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_owned())
        .collect()
}

fn no_host_path(scene: &FolderScene, result: &CallToolResult) {
    let whole = serde_json::to_string(result).unwrap();
    let root = scene.root.display().to_string();
    assert!(!whole.contains(&root), "a host path: {whole}");
}

#[tokio::test(flavor = "multi_thread")]
async fn list_files_shows_the_folders_files_by_their_sql_paths_a_page_at_a_time() {
    let scene = scene("discovery-list");
    let client = server(&scene, &[]).await;
    let schemas = OutputSchemas::fetch(&client).await;

    let first = client
        .call("list_files", json!({ "limit": 5 }))
        .await
        .unwrap();
    schemas.check("list_files", &first);
    no_host_path(&scene, &first);
    let envelope = envelope_of(&first);
    assert_eq!(envelope["status"], "success", "{envelope}");
    assert_eq!(envelope["data"]["folders"], json!(["exports"]));
    // 300 days, readings, notes, events, README, the link inside: 305 (the link out, the FIFO,
    // the database's hard link are none of them; nothing is hidden without rules).
    assert_eq!(envelope["data"]["total"], json!(306), "{envelope}");
    assert_eq!(envelope["data"]["next_offset"], json!(5));
    assert_eq!(envelope["data"]["complete"], json!(true));
    assert!(text_of(&first).contains("offset 5"), "{}", text_of(&first));

    // Every page, in order, covers each file once.
    let mut all = Vec::new();
    let mut offset = Some(0);
    while let Some(at) = offset {
        let page = client
            .call("list_files", json!({ "offset": at, "limit": 120 }))
            .await
            .unwrap();
        schemas.check("list_files", &page);
        let envelope = envelope_of(&page);
        all.extend(paths(envelope));
        offset = envelope["data"]["next_offset"].as_u64();
    }
    assert_eq!(all.len(), 306);
    let mut sorted = all.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted, all, "pages are in order, each file once");
    for present in [
        "exports/2026/readings.parquet",
        "exports/2025/notes.csv",
        "exports/2025/events.json",
        "exports/README.txt",
        "exports/link_in.csv",
        "exports/private/secret.parquet",
    ] {
        assert!(all.iter().any(|p| p == present), "{present} missing");
    }
    for absent in [
        "exports/link_out.csv",
        "exports/pipe.csv",
        "exports/db_copy.csv",
    ] {
        assert!(!all.iter().any(|p| p == absent), "{absent} listed");
    }

    // A pattern, and what one file says about itself.
    let parquet = client
        .call("list_files", json!({ "pattern": "exports/2026/*.parquet" }))
        .await
        .unwrap();
    let envelope = envelope_of(&parquet);
    let file = &envelope["data"]["files"][0];
    assert_eq!(file["path"], "exports/2026/readings.parquet");
    assert_eq!(file["format"], "parquet");
    let size = std::fs::metadata(scene.exports.join("2026/readings.parquet"))
        .unwrap()
        .len();
    assert_eq!(file["size_bytes"], json!(size));
    let modified = file["modified"].as_str().unwrap();
    assert!(
        modified.len() == 20 && modified.ends_with('Z') && modified.starts_with("20"),
        "{modified}"
    );
    let formats = client
        .call("list_files", json!({ "pattern": "exports/2025/*" }))
        .await
        .unwrap();
    assert_eq!(
        field_pairs(&envelope_of(&formats)["data"]["files"], "path", "format"),
        [
            ("exports/2025/events.json", "json"),
            ("exports/2025/notes.csv", "csv")
        ]
    );

    // An unknown folder: the declared ones, with the nearest.
    let unknown = client
        .call("list_files", json!({ "folder": "exprots" }))
        .await
        .unwrap();
    let envelope = envelope_of(&unknown);
    assert_eq!(envelope["error"]["kind"], "unknown_name", "{envelope}");
    assert_eq!(
        envelope["error"]["recovery"]["fuzzy_matches"],
        json!(["exports"])
    );
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_page_of_files_fits_the_reply_budget_and_says_where_the_next_starts() {
    let scene = scene("discovery-budget");
    let client = server(&scene, &["--max-reply-bytes", "4096"]).await;
    let result = client
        .call("list_files", json!({ "limit": 1000 }))
        .await
        .unwrap();
    let bytes = serde_json::to_string(envelope_of(&result)).unwrap().len()
        + serde_json::to_string(text_of(&result)).unwrap().len();
    assert!(bytes <= 4096, "{bytes} bytes");
    let envelope = envelope_of(&result);
    let shown = paths(envelope).len();
    assert!(shown > 0 && shown < 306, "{shown}");
    assert_eq!(envelope["data"]["next_offset"], json!(shown));
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn describe_table_and_sample_rows_read_a_file_by_its_path() {
    let scene = scene("discovery-describe");
    let client = server(&scene, &[]).await;
    let schemas = OutputSchemas::fetch(&client).await;
    let oracle = Oracle::in_folder_root(&scene.root, "UTC", JsonEncoding::Text);

    let described = client
        .call(
            "describe_table",
            json!({ "table_name": "exports/2026/readings.parquet" }),
        )
        .await
        .unwrap();
    schemas.check("describe_table", &described);
    no_host_path(&scene, &described);
    let envelope = envelope_of(&described);
    assert_eq!(envelope["data"]["kind"], "file", "{envelope}");
    let expected = oracle
        .answer("SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM 'exports/2026/readings.parquet')")
        .unwrap();
    let got: Vec<Vec<Json>> = envelope["data"]["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| vec![c["name"].clone(), c["type"].clone()])
        .collect();
    assert_eq!(got, expected.rows);

    let sampled = client
        .call(
            "sample_rows",
            json!({ "table_name": "exports/2026/readings.parquet", "limit": 3, "columns": ["ts", "glucose"] }),
        )
        .await
        .unwrap();
    schemas.check("sample_rows", &sampled);
    let envelope = envelope_of(&sampled);
    let expected = oracle
        .answer("SELECT ts, glucose FROM 'exports/2026/readings.parquet' LIMIT 3")
        .unwrap();
    assert_eq!(envelope["data"]["rows"], json!(expected.rows), "{envelope}");

    // A file outside the folder, through the same tools: refused like the query would be.
    let outside = client
        .call(
            "sample_rows",
            json!({ "table_name": "exports/link_out.csv" }),
        )
        .await
        .unwrap();
    let envelope = envelope_of(&outside);
    assert!(
        matches!(envelope["status"].as_str(), Some("error" | "refused")),
        "{envelope}"
    );
    no_host_path(&scene, &outside);
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn under_privacy_rules_hidden_files_and_columns_are_not_discovered() {
    let scene = scene("discovery-privacy");
    let client = server(
        &scene,
        &[
            "--hide-table",
            "exports/private/*",
            "--hide-column",
            "exports/**/*.parquet.patient_name",
        ],
    )
    .await;
    let listed = client
        .call("list_files", json!({ "limit": 1000 }))
        .await
        .unwrap();
    let all = paths(envelope_of(&listed));
    assert_eq!(all.len(), 305);
    assert!(!all.iter().any(|p| p.contains("private")), "{all:?}");
    let described = client
        .call(
            "describe_table",
            json!({ "table_name": "exports/2026/readings.parquet" }),
        )
        .await
        .unwrap();
    let columns: Vec<&str> = envelope_of(&described)["data"]["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(columns, ["ts", "glucose", "device"]);
    let sampled = client
        .call(
            "sample_rows",
            json!({ "table_name": "exports/2026/readings.parquet" }),
        )
        .await
        .unwrap();
    let whole = serde_json::to_string(&sampled).unwrap();
    assert!(!whole.contains("Planted"), "{whole}");
    let resource = client.read_resource("schema://files").await.unwrap();
    let whole = serde_json::to_string(&resource).unwrap();
    assert!(!whole.contains("private"), "{whole}");
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_files_are_resources_when_folders_are_declared() {
    let scene = scene("discovery-resources");
    let client = server(&scene, &[]).await;
    let resources: Vec<String> = client
        .list_resources()
        .await
        .unwrap()
        .iter()
        .map(|r| r.uri.clone())
        .collect();
    assert_eq!(resources, ["schema://snapshot", "schema://files"]);
    let templates: Vec<String> = client
        .list_resource_templates()
        .await
        .unwrap()
        .iter()
        .map(|t| t.uri_template.clone())
        .collect();
    assert_eq!(templates, ["schema://table/{name}", "schema://file/{path}"]);
    let text = |result: &rmcp::model::ReadResourceResult| -> Json {
        match &result.contents[0] {
            rmcp::model::ResourceContents::TextResourceContents { text, .. } => {
                serde_json::from_str(text).unwrap()
            }
            other => panic!("not text: {other:?}"),
        }
    };
    let files = text(&client.read_resource("schema://files").await.unwrap());
    assert_eq!(files["total"], json!(306), "{files}");
    let file = text(
        &client
            .read_resource("schema://file/exports%2F2026%2Freadings.parquet")
            .await
            .unwrap(),
    );
    assert_eq!(file["kind"], "file");
    assert_eq!(file["columns"][1]["name"], "glucose", "{file}");
    assert!(
        client
            .read_resource("schema://file/elsewhere%2Fx.csv")
            .await
            .is_err()
    );
    // server_info names the folders, never where they are.
    let info = client.call("server_info", json!({})).await.unwrap();
    let folders = &envelope_of(&info)["data"]["folders"];
    assert_eq!(folders["names"], json!(["exports"]), "{folders}");
    assert_eq!(folders["max_files_per_query"], json!(10000));
    let whole = serde_json::to_string(&info).unwrap();
    assert!(
        !whole.contains(&scene.exports.display().to_string()),
        "{whole}"
    );
    client.close().await.unwrap();

    // Without folders, neither is offered.
    let plain = serve(&scene.db, &[]).await;
    let resources = plain.list_resources().await.unwrap();
    assert_eq!(resources.len(), 1);
    let listed = plain.call("list_files", json!({})).await.unwrap();
    assert_eq!(envelope_of(&listed)["status"], "empty");
    assert!(text_of(&listed).contains("--files"), "{}", text_of(&listed));
    plain.close().await.unwrap();
}

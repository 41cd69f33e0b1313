//! Declared folders (`--files NAME=DIR`), through the real binary: files inside a folder are
//! answered exactly as in-process DuckDB answers them, named `NAME/…` in every reply; files
//! outside it (an absolute path, `..`, a symbolic link out, `/proc/self/…`, the database file)
//! are refused by each check and, with every SQL check and DuckDB's own hardening switched off,
//! denied by the kernel; a FIFO and a device node give a clear error, not a hang; a pattern past
//! the caps is refused. The fixtures are written by in-process DuckDB here: a CGM export as
//! Parquet, CSV and JSON, partitioned by year, and two files whose columns differ.

use std::path::PathBuf;

use crate::support::folder_scene::FolderScene;
use crate::support::oracle::{JsonEncoding, Oracle, Reply, first_difference, mcp_answer};
use crate::support::{duckgate_cli, outcome, status};
use duckgate::mcp_client::{McpClient, envelope_of};
use serde_json::{Value as Json, json};

const TIME_ZONE: &str = "UTC";
/// What the files outside the folder hold, which no reply may ever carry.
const PLANTED: &str = "PLANTED-OUTSIDE-7f3a";
/// What a hidden column of the database holds.
const HIDDEN: &str = "PLANTED-HIDDEN-91c2";

/// A database, a declared folder `exports` and, beside them, `secret.csv` ([`secret`]), which
/// the agent must not reach.
fn scene(tag: &str) -> FolderScene {
    let scene = FolderScene::new(
        tag,
        "cgm.duckdb",
        &format!(
            "CREATE TABLE patients (id INTEGER, patient_name VARCHAR);
             INSERT INTO patients VALUES (1, '{HIDDEN}');"
        ),
        &["by_year", "mixed", "many"],
    );
    let exports = &scene.exports;
    std::fs::write(secret(&scene), format!("note\n{PLANTED}\n")).unwrap();
    scene.write_files(
        "CREATE TABLE readings AS
           SELECT TIMESTAMP '2025-12-30 00:00:00' + INTERVAL (i * 5) MINUTE AS ts,
                  (80 + (i * 37) % 160)::INTEGER AS glucose,
                  CASE WHEN i % 3 = 0 THEN 'G7' ELSE 'Libre 3' END AS device,
                  CASE WHEN i % 50 = 0 THEN NULL ELSE round((i % 17) * 0.5, 1) END AS insulin
           FROM range(1200) t(i);
         COPY readings TO '{exports}/readings.parquet' (FORMAT parquet);
         COPY readings TO '{exports}/readings.csv' (FORMAT csv, HEADER);
         COPY readings TO '{exports}/events.json' (FORMAT json);
         COPY (SELECT *, year(ts) AS year FROM readings) TO '{exports}/by_year'
           (FORMAT parquet, PARTITION_BY (year));
         COPY (SELECT 1 AS a, 'x' AS b) TO '{exports}/mixed/a.parquet' (FORMAT parquet);
         COPY (SELECT 2 AS a, 3.5 AS c) TO '{exports}/mixed/b.parquet' (FORMAT parquet);",
    );
    for i in 0..8 {
        std::fs::write(exports.join(format!("many/{i}.csv")), "x\n1\n").unwrap();
    }
    // Inside the folder, pointing out of it.
    std::os::unix::fs::symlink(secret(&scene), exports.join("link_out.csv")).unwrap();
    std::os::unix::fs::symlink(&scene.db, exports.join("db_link.csv")).unwrap();
    // A FIFO nobody writes to: opening it for reading would wait for a writer.
    nix::unistd::mkfifo(
        &exports.join("pipe.csv"),
        nix::sys::stat::Mode::from_bits_truncate(0o600),
    )
    .unwrap();
    scene
}

/// The file beside the folder that no reply may carry anything of: it holds [`PLANTED`].
fn secret(scene: &FolderScene) -> PathBuf {
    scene.root.join("secret.csv")
}

async fn server(scene: &FolderScene, bypass: &str, extra: &[&str]) -> McpClient {
    let mut args = vec!["--time-zone", TIME_ZONE, "--max-reply-bytes", "67108864"];
    args.extend(extra);
    scene.serve(bypass, &args).await
}

async fn query(client: &McpClient, sql: &str) -> Json {
    let result = client
        .call("query", json!({ "sql": sql, "limit": 10000 }))
        .await
        .unwrap();
    envelope_of(&result).clone()
}

/// What a reply about the folder's files must never carry: the folder's host path (the
/// database's own path is the operator's, which `server_info` shows).
fn no_host_path(scene: &FolderScene, what: &str, reply: &Json) {
    let text = reply.to_string();
    let folder = scene.exports.display().to_string();
    assert!(
        !text.contains(&folder),
        "{what}: the reply names the host path {folder}: {text}"
    );
    assert!(
        !text.contains(PLANTED),
        "{what}: the reply carries the planted secret: {text}"
    );
    assert!(
        !text.contains(HIDDEN),
        "{what}: the reply carries the hidden value: {text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn files_in_a_declared_folder_are_answered_as_in_process_duckdb_answers_them() {
    let scene = scene("folders-oracle");
    let client = server(&scene, "", &[]).await;
    let oracle = Oracle::in_folder_root(&scene.root, TIME_ZONE, JsonEncoding::Text);
    let queries = [
        "SELECT * FROM read_parquet('exports/readings.parquet') ORDER BY ts",
        "SELECT device, count(*), avg(glucose), sum(insulin) FROM 'exports/readings.parquet' GROUP BY ALL ORDER BY device",
        "SELECT * FROM read_csv('exports/readings.csv') ORDER BY ts LIMIT 300",
        "SELECT * FROM read_csv_auto('exports/readings.csv', header = true) WHERE glucose > 180 ORDER BY ts",
        "SELECT count(*), min(ts), max(ts) FROM 'exports/readings.csv'",
        "SELECT * FROM read_json('exports/events.json') ORDER BY ts LIMIT 100",
        "SELECT * FROM read_json_auto('exports/events.json') WHERE device = 'G7' ORDER BY ts LIMIT 50",
        "SELECT year, count(*), avg(glucose) FROM read_parquet('exports/by_year/*/*.parquet', hive_partitioning = true) GROUP BY year ORDER BY year",
        "SELECT year, count(*) FROM 'exports/by_year/**/*.parquet' GROUP BY year ORDER BY year",
        "SELECT * FROM read_parquet('exports/mixed/*.parquet', union_by_name = true) ORDER BY a",
        "SELECT r.device, count(*) FROM read_parquet('exports/readings.parquet') r JOIN read_csv('exports/readings.csv') c USING (ts) GROUP BY ALL ORDER BY 1",
        "SELECT path_in_schema, type, num_values FROM parquet_metadata('exports/readings.parquet') ORDER BY column_id",
        "SELECT name, type FROM parquet_schema('exports/readings.parquet') ORDER BY name",
        "DESCRIBE SELECT * FROM 'exports/readings.parquet'",
        "SUMMARIZE SELECT glucose, insulin FROM 'exports/readings.parquet'",
        "SELECT count(*) FROM glob('exports/**/*.parquet')",
    ];
    let mut differences = Vec::new();
    for sql in queries {
        let expected = oracle
            .answer(sql)
            .unwrap_or_else(|e| panic!("{sql}: DuckDB: {e}"));
        match mcp_answer(&client, sql).await {
            Reply::Answered(got) => {
                if let Some(diff) = first_difference(&expected, &got, true, true) {
                    differences.push(format!("{sql}: {diff}"));
                }
            }
            Reply::Failed { status, envelope } => {
                differences.push(format!("{sql}: {status}: {envelope}"))
            }
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn replies_name_files_by_their_folder_never_by_host_path() {
    let scene = scene("folders-names");
    let client = server(&scene, "", &[]).await;
    let names = query(
        &client,
        "SELECT DISTINCT filename FROM read_parquet('exports/by_year/*/*.parquet', filename = true) ORDER BY 1",
    )
    .await;
    assert_eq!(status_of(&names), "success", "{names}");
    assert_eq!(
        names["data"]["rows"],
        json!([
            ["exports/by_year/year=2025/data_0.parquet"],
            ["exports/by_year/year=2026/data_0.parquet"]
        ]),
        "{names}"
    );
    let globbed = query(
        &client,
        "SELECT file FROM glob('exports/mixed/*') ORDER BY 1",
    )
    .await;
    assert_eq!(
        globbed["data"]["rows"],
        json!([["exports/mixed/a.parquet"], ["exports/mixed/b.parquet"]]),
        "{globbed}"
    );
    no_host_path(&scene, "filename", &names);
    let missing = query(&client, "SELECT * FROM 'exports/missing.parquet'").await;
    assert_ne!(status_of(&missing), "success", "{missing}");
    assert!(
        missing.to_string().contains("exports/missing.parquet"),
        "{missing}"
    );
    no_host_path(&scene, "a missing file", &missing);
    let plan = client
        .call(
            "explain_query",
            json!({ "sql": "SELECT avg(glucose) FROM read_parquet('exports/readings.parquet')" }),
        )
        .await
        .unwrap();
    no_host_path(&scene, "explain", &envelope_of(&plan).clone());
    let info = client.call("server_info", json!({})).await.unwrap();
    no_host_path(&scene, "server_info", &envelope_of(&info).clone());
    client.close().await.unwrap();
}

fn status_of(envelope: &Json) -> &str {
    envelope["status"].as_str().unwrap_or("<no status>")
}

/// The reads that leave the folder.
fn attacks(scene: &FolderScene) -> Vec<String> {
    vec![
        format!("SELECT * FROM read_csv('{}')", secret(scene).display()),
        format!("SELECT * FROM '{}'", secret(scene).display()),
        "SELECT * FROM read_csv('exports/../secret.csv')".into(),
        "SELECT * FROM 'exports/../secret.csv'".into(),
        "SELECT * FROM read_csv('exports/link_out.csv')".into(),
        "SELECT * FROM read_csv('exports/link_*.csv')".into(),
        "SELECT * FROM read_csv('/proc/self/status', sep = '\t', header = false)".into(),
        "SELECT * FROM read_csv('exports/../../../../../proc/self/status', sep = '\t', header = false)".into(),
    ]
}

/// The reads of the database file itself: refused by the checks, and with them off by DuckDB's
/// hardening (its local file system stays switched off, and the folders' file system refuses
/// `..` and the link out). The kernel alone cannot refuse them: a worker must read the file to
/// attach it.
fn database_reads(scene: &FolderScene) -> Vec<String> {
    vec![
        format!("SELECT * FROM read_csv('{}')", scene.db.display()),
        format!("SELECT * FROM read_text('{}')", scene.db.display()),
        "SELECT * FROM read_csv('exports/../cgm.duckdb', all_varchar = true, header = false, sep = '|')".into(),
        "SELECT * FROM read_csv('exports/db_link.csv', all_varchar = true, header = false, sep = '|')".into(),
    ]
}

async fn assert_refused_or_denied(
    client: &McpClient,
    scene: &FolderScene,
    layers: &str,
    sql: &str,
) {
    let reply = query(client, sql).await;
    assert!(
        matches!(status_of(&reply), "refused" | "error"),
        "{sql} (off: {layers:?}) was answered: {reply}"
    );
    no_host_path_or_secret(scene, layers, sql, &reply);
}

fn no_host_path_or_secret(scene: &FolderScene, layers: &str, sql: &str, reply: &Json) {
    let text = reply.to_string();
    assert!(!text.contains(PLANTED), "{sql} (off: {layers:?}): {text}");
    assert!(!text.contains(HIDDEN), "{sql} (off: {layers:?}): {text}");
    let folder = scene.exports.display().to_string();
    assert!(!text.contains(&folder), "{sql} (off: {layers:?}): {text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn files_outside_the_folder_are_refused_by_each_check_and_denied_by_the_kernel() {
    let scene = scene("folders-outside");
    let hide = ["--hide-column", "patients.patient_name"];
    for layers in [
        "",
        "validator",
        "worker_walk",
        "plan_check",
        "validator,worker_walk,plan_check",
        // Every SQL check and DuckDB's own hardening: the kernel alone.
        "validator,worker_walk,plan_check,duckdb_hardening",
    ] {
        let client = server(&scene, layers, &hide).await;
        for sql in attacks(&scene) {
            assert_refused_or_denied(&client, &scene, layers, &sql).await;
        }
        // With DuckDB's hardening off too, the kernel denies them: landlock grants no path of
        // the database (the worker opened it before it confined itself).
        for sql in database_reads(&scene) {
            assert_refused_or_denied(&client, &scene, layers, &sql).await;
        }
        // The folder's own files still answer through the same layers.
        let inside = query(&client, "SELECT count(*) FROM 'exports/readings.csv'").await;
        assert_eq!(status_of(&inside), "success", "off: {layers:?}: {inside}");
        assert_eq!(inside["data"]["rows"], json!([[1200]]), "{inside}");
        client.close().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn with_every_check_off_the_kernel_denies_what_lies_outside_the_folder() {
    // The positive control: the test process itself can read each of these, so a denial comes
    // from the worker's confinement, not from a missing file.
    let scene = scene("folders-kernel");
    assert!(
        std::fs::read_to_string(secret(&scene))
            .unwrap()
            .contains(PLANTED)
    );
    assert!(std::fs::read_to_string(scene.exports.join("link_out.csv")).is_ok());
    assert!(std::fs::read_to_string("/proc/self/status").is_ok());
    let layers = "validator,worker_walk,plan_check,duckdb_hardening";
    let client = server(&scene, layers, &[]).await;
    for sql in attacks(&scene) {
        let reply = query(&client, &sql).await;
        assert_eq!(status_of(&reply), "error", "{sql}: {reply}");
        let message = reply["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("Permission denied") || message.contains("No files found"),
            "{sql}: not the kernel's denial: {message}"
        );
        assert!(!reply.to_string().contains(PLANTED), "{sql}: {reply}");
    }
    client.close().await.unwrap();
}

/// The reads of the database's own file and WAL that a worker could make if the kernel let it:
/// by the absolute path, by `..` out of the folder, through a symbolic link placed in the
/// folder; and by the names only duckgate's own ATTACH may open (`duckgate-database://N`).
fn database_file_reads(scene: &FolderScene, wal: &std::path::Path) -> (Vec<String>, Vec<String>) {
    let wal_name = wal.file_name().unwrap().to_str().unwrap();
    let by_the_kernel = vec![
        format!(
            "SELECT octet_length(content) FROM read_blob('{}')",
            scene.db.display()
        ),
        format!(
            "SELECT octet_length(content) FROM read_blob('{}')",
            wal.display()
        ),
        "SELECT octet_length(content) FROM read_blob('exports/../cgm.duckdb')".into(),
        format!("SELECT octet_length(content) FROM read_blob('exports/../{wal_name}')"),
        "SELECT * FROM read_csv('exports/../cgm.duckdb', all_varchar = true, header = false, sep = '|')".into(),
        "SELECT octet_length(content) FROM read_blob('exports/db_link.csv')".into(),
        "SELECT octet_length(content) FROM read_blob('exports/wal_link.csv')".into(),
    ];
    let by_the_held_names = vec![
        "SELECT octet_length(content) FROM read_blob('duckgate-database://0')".into(),
        "SELECT octet_length(content) FROM read_blob('duckgate-database://0.wal')".into(),
        "ATTACH 'duckgate-database://0' AS copy (READ_ONLY)".into(),
    ];
    (by_the_kernel, by_the_held_names)
}

#[tokio::test(flavor = "multi_thread")]
async fn with_every_check_and_duckdbs_hardening_off_the_kernel_denies_the_database_file_and_its_wal()
 {
    let scene = scene("folders-db-kernel");
    // A row that lives in the WAL alone: the databases' answers below read the WAL too.
    let wal = crate::support::leave_a_wal(
        &scene.db,
        "INSERT INTO patients VALUES (2, 'PLANTED-HIDDEN-91c2 in the WAL')",
    );
    std::os::unix::fs::symlink(&wal, scene.exports.join("wal_link.csv")).unwrap();
    // The positive control: this process reads both, by each route.
    for readable in [
        scene.db.clone(),
        wal.clone(),
        scene.exports.join("db_link.csv"),
        scene.exports.join("wal_link.csv"),
        scene.exports.join("../cgm.duckdb"),
    ] {
        assert!(std::fs::read(&readable).is_ok(), "{readable:?}");
    }
    let (by_the_kernel, by_the_held_names) = database_file_reads(&scene, &wal);
    let layers = "validator,worker_walk,plan_check,duckdb_hardening";
    for rules in [&[][..], &["--hide-column", "patients.patient_name"][..]] {
        let client = server(&scene, layers, rules).await;
        for sql in &by_the_kernel {
            let reply = query(&client, sql).await;
            assert_eq!(status_of(&reply), "error", "{rules:?}: {sql}: {reply}");
            assert!(
                !reply.to_string().contains(HIDDEN),
                "{rules:?}: {sql}: {reply}"
            );
            if rules.is_empty() {
                // Under privacy rules DuckDB's words about files are reworded whole; without
                // them the kernel's own denial is shown.
                let message = reply["error"]["message"].as_str().unwrap_or_default();
                assert!(
                    message.contains("Permission denied"),
                    "{sql}: not the kernel's denial: {message}"
                );
            }
        }
        // The names only duckgate's own ATTACH may open: refused by the held descriptors' file
        // system, whatever the checks.
        for sql in &by_the_held_names {
            let reply = query(&client, sql).await;
            assert!(
                matches!(status_of(&reply), "refused" | "error"),
                "{rules:?}: {sql}: {reply}"
            );
            assert!(
                !reply.to_string().contains(HIDDEN),
                "{rules:?}: {sql}: {reply}"
            );
        }
        // The database still answers, its WAL's row included.
        let answered = query(&client, "SELECT count(*) FROM patients").await;
        assert_eq!(status_of(&answered), "success", "{rules:?}: {answered}");
        assert_eq!(answered["data"]["rows"], json!([[2]]), "{answered}");
        client.close().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fifo_or_a_device_node_in_the_folder_is_a_clear_error_not_a_hang() {
    let scene = scene("folders-fifo");
    // A character device inside the folder, where this process may make one (root).
    let device = scene.exports.join("null.csv");
    let made_device = nix::sys::stat::mknod(
        &device,
        nix::sys::stat::SFlag::S_IFCHR,
        nix::sys::stat::Mode::from_bits_truncate(0o600),
        nix::sys::stat::makedev(1, 3),
    )
    .is_ok();
    if !made_device {
        eprintln!("not tested: a device node (this user may not make one)");
    }
    for layers in ["", "validator,worker_walk,plan_check,duckdb_hardening"] {
        let client = server(&scene, layers, &["--timeout", "20"]).await;
        let mut cases = vec!["SELECT * FROM read_csv('exports/pipe.csv')"];
        if made_device {
            cases.push("SELECT * FROM read_csv('exports/null.csv')");
        }
        for sql in cases {
            let reply = query(&client, sql).await;
            assert_eq!(
                status_of(&reply),
                "error",
                "{sql} (off: {layers:?}): {reply}"
            );
            assert_ne!(reply["error"]["kind"], "timeout", "{sql}: {reply}");
            let message = reply["error"]["message"].as_str().unwrap_or_default();
            assert!(
                message.contains("only regular files") || message.contains("not a regular file"),
                "{sql} (off: {layers:?}): {message}"
            );
        }
        client.close().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pattern_past_the_caps_is_refused_with_the_flag_to_change() {
    let scene = scene("folders-caps");
    for layers in ["", "plan_check"] {
        let client = server(&scene, layers, &["--files-max-count", "5"]).await;
        let reply = query(
            &client,
            "SELECT count(*) FROM read_csv('exports/many/*.csv')",
        )
        .await;
        assert!(matches!(status_of(&reply), "refused" | "error"), "{reply}");
        assert!(reply.to_string().contains("--files-max-count"), "{reply}");
        let few = query(
            &client,
            "SELECT count(*) FROM read_csv('exports/many/[0-3].csv')",
        )
        .await;
        assert_eq!(few["data"]["rows"], json!([[4]]), "{few}");
        client.close().await.unwrap();
    }
    // Past --files-max-bytes: one pattern is stopped as the folders' file system expands it,
    // before a reader opens the file; two patterns that pass it one by one are refused by the
    // plan check, which counts the whole query.
    let client = server(&scene, "", &["--files-max-bytes", "1000"]).await;
    let reply = query(&client, "SELECT count(*) FROM 'exports/readings.csv'").await;
    assert!(matches!(status_of(&reply), "refused" | "error"), "{reply}");
    assert!(reply.to_string().contains("--files-max-bytes"), "{reply}");
    client.close().await.unwrap();
    let size = std::fs::metadata(scene.exports.join("readings.csv"))
        .unwrap()
        .len();
    let cap = (size + size / 2).to_string();
    let client = server(&scene, "", &["--files-max-bytes", &cap]).await;
    let once = query(&client, "SELECT count(*) FROM 'exports/readings.csv'").await;
    assert_eq!(once["data"]["rows"], json!([[1200]]), "{once}");
    let twice = query(
        &client,
        "SELECT count(*) FROM (SELECT * FROM 'exports/readings.csv' UNION ALL SELECT * FROM read_csv('exports/readings.csv'))",
    )
    .await;
    assert_eq!(status_of(&twice), "refused", "{twice}");
    assert!(twice.to_string().contains("--files-max-bytes"), "{twice}");
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_declared_folder_every_file_reader_is_refused() {
    let scene = scene("folders-none");
    let client = crate::support::serve(&scene.db, &[]).await;
    for sql in [
        "SELECT * FROM read_parquet('exports/readings.parquet')",
        "SELECT * FROM 'exports/readings.parquet'",
        "SELECT * FROM glob('exports/*')",
    ] {
        let result = client.call("query", json!({ "sql": sql })).await.unwrap();
        assert_eq!(
            status(&result),
            "refused",
            "{sql}: {}",
            envelope_of(&result)
        );
    }
    client.close().await.unwrap();
}

#[test]
fn a_folder_holding_the_database_or_not_a_directory_is_refused_at_start_up() {
    let scene = scene("folders-start");
    let check = |declaration: String| {
        let mut command = duckgate_cli(["query", "--db"]);
        command
            .arg(&scene.db)
            .arg("--files")
            .arg(declaration)
            .arg("SELECT 1");
        outcome(&crate::support::run_cli(command, None))
    };
    let (code, _, stderr) = check(format!("all={}", scene.root.display()));
    assert_ne!(code, 0);
    assert!(stderr.contains("holds the database file"), "{stderr}");
    let (code, _, stderr) = check(format!("x={}", secret(&scene).display()));
    assert_ne!(code, 0);
    assert!(stderr.contains("not a directory"), "{stderr}");
    let (code, _, stderr) = check(format!("1x={}", scene.exports.display()));
    assert_ne!(code, 0);
    assert!(stderr.contains("letters, digits"), "{stderr}");
    let (code, stdout, stderr) = check(format!("exports={}", scene.exports.display()));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains('1'), "{stdout}");
}

//! Hostile declared folders, through the real binary: what a folder may hold that a reader does
//! not expect. Each case ends in an answer equal to in-process DuckDB's, or a clear error (its
//! kind, a message naming the file only by its folder's name, a next step), within the deadline,
//! the memory cap and the reply budget; the server answers the next call; and nothing outside
//! the folder is read.
//!
//! - a hard link in the folder: to a file outside it (the same file under a name in the folder:
//!   read, by every layer alike, as the kernel allows), and to the database file or its WAL
//!   (refused by the plan check and by DuckDB's folder file system, each alone, by its inode;
//!   the kernel alone cannot refuse it);
//! - a file that grows while it is read;
//! - a 10 GB file (sparse, so the disk is not filled): a Parquet file answered, a CSV file a
//!   clear error, and both refused before any read past `--files-max-bytes`;
//! - tens of thousands of small files: the listing stops at its bound and the match cap refuses,
//!   each naming `--files-max-count`;
//! - Parquet files whose footer is corrupt, and one whose single row group holds millions of rows;
//! - a CSV file of 100,000 columns.
//!
//! Every fixture is written here, by in-process DuckDB or byte by byte.

use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::support::folder_scene::FolderScene;
use crate::support::oracle::{JsonEncoding, Oracle, Reply, first_difference, mcp_answer};
use base64::Engine as _;
use duckgate::mcp_client::{McpClient, envelope_of, text_of};
use serde_json::{Value as Json, json};

const TIME_ZONE: &str = "UTC";
/// What a file outside the folder holds; a hard link brings it in.
const LINKED_IN: &str = "LINKED-IN-9b1e";
/// What a hidden column of the database holds, in its checkpointed file.
const HIDDEN: &str = "PLANTED-HIDDEN-5e0a";
/// What a hidden column holds in the database's WAL only (not checkpointed).
const HIDDEN_IN_WAL: &str = "PLANTED-WAL-77c3";
/// The privacy rule the servers that must keep the database's hidden data run under.
const HIDE: [&str; 2] = ["--hide-column", "patients.patient_name"];

/// A database with a hidden column and an empty declared folder `exports` beside it.
fn scene(tag: &str) -> FolderScene {
    FolderScene::new(
        tag,
        "cgm.duckdb",
        &format!(
            "CREATE TABLE patients (id INTEGER, patient_name VARCHAR);
             INSERT INTO patients VALUES (1, '{HIDDEN}');"
        ),
        &[],
    )
}

async fn server(scene: &FolderScene, bypass: &str, extra: &[&str]) -> McpClient {
    let mut args = vec!["--time-zone", TIME_ZONE, "--timeout", "30"];
    args.extend(extra);
    scene.serve(bypass, &args).await
}

async fn query(client: &McpClient, sql: &str) -> Json {
    let result = client
        .call("query", json!({ "sql": sql, "limit": 10000 }))
        .await
        .unwrap_or_else(|e| panic!("{sql}: the call failed: {e}"));
    envelope_of(&result).clone()
}

fn status_of(envelope: &Json) -> &str {
    envelope["status"].as_str().unwrap_or("<no status>")
}

/// What no reply may carry: the host path of the folder or of the scene, or hidden values.
fn assert_nothing_leaks(scene: &FolderScene, what: &str, reply: &Json) {
    let text = reply.to_string();
    for path in [&scene.exports, &scene.root] {
        let path = path.display().to_string();
        assert!(
            !text.contains(&path),
            "{what}: names the host path {path}: {text}"
        );
    }
    for secret in [HIDDEN, HIDDEN_IN_WAL] {
        assert!(!text.contains(secret), "{what}: carries {secret}: {text}");
    }
}

/// A clear error: refused or failed, a kind that says what happened (never an internal error
/// or a hang), a message, and a next step; nothing leaks.
fn assert_clear_error(scene: &FolderScene, what: &str, reply: &Json) {
    assert!(
        matches!(status_of(reply), "error" | "refused"),
        "{what}: not an error: {reply}"
    );
    let error = &reply["error"];
    let kind = error["kind"].as_str().unwrap_or_default();
    assert!(
        matches!(
            kind,
            "database_error" | "resource_limit" | "policy_blocked" | "timeout" | "invalid_argument"
        ),
        "{what}: kind {kind:?}: {reply}"
    );
    assert!(
        !error["message"].as_str().unwrap_or_default().is_empty(),
        "{what}: no message: {reply}"
    );
    let recovery = &error["recovery"];
    assert!(
        recovery["hint"].as_str().is_some_and(|h| !h.is_empty())
            || recovery["suggested_tool"].is_string(),
        "{what}: no next step: {reply}"
    );
    assert_nothing_leaks(scene, what, reply);
}

/// The server still answers, from the folder: the case left it whole.
async fn assert_alive(client: &McpClient, what: &str) {
    let reply = query(client, "SELECT 40 + 2 AS answer").await;
    assert_eq!(
        reply["data"]["rows"],
        json!([[42]]),
        "after {what}: the server no longer answers: {reply}"
    );
}

/// duckgate's answer equals in-process DuckDB's over the same files.
async fn assert_same_as_duckdb(client: &McpClient, oracle: &Oracle, sql: &str) {
    let expected = oracle
        .answer(sql)
        .unwrap_or_else(|e| panic!("{sql}: in-process DuckDB: {e}"));
    match mcp_answer(client, sql).await {
        Reply::Answered(got) => {
            if let Some(diff) = first_difference(&expected, &got, true, true) {
                panic!("{sql}: {diff}");
            }
        }
        Reply::Failed { status, envelope } => panic!("{sql}: {status}: {envelope}"),
    }
}

/// The bytes of the one blob a reply's first row holds (base64 on the wire).
pub(crate) fn decoded_blob(reply: &Json) -> Vec<u8> {
    let text = reply["data"]["rows"][0][0]
        .as_str()
        .unwrap_or_else(|| panic!("no blob: {reply}"));
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .unwrap_or_else(|e| panic!("not base64 ({e}): {text:.200}"))
}

pub(crate) fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

// ------------------------------------------------------------------------------------------
// Hard links
// ------------------------------------------------------------------------------------------

/// The database's WAL, kept: a row inserted after the last checkpoint, with checkpoints off, so
/// it lives in the WAL only.
fn keep_a_wal(db: &Path) -> PathBuf {
    let wal = crate::support::leave_a_wal(
        db,
        &format!("INSERT INTO patients VALUES (2, '{HIDDEN_IN_WAL}');"),
    );
    let bytes = std::fs::read(&wal).expect("the WAL is kept");
    assert!(
        contains(&bytes, HIDDEN_IN_WAL.as_bytes()),
        "the WAL holds the row in plain bytes"
    );
    wal
}

/// A hard link is a second name of one file (one inode). Landlock grants by path: through a
/// name inside the folder, the kernel lets a worker read whatever file the name is. So a file
/// the operator links into the folder is a file of the folder, read alike by every layer (making
/// the link takes write access to the folder on the host, which the agent never has; whoever
/// has it could as well copy the file in). The database and its WAL are the exception, under any
/// name: the plan check and DuckDB's folder file system each refuse them alone, by their inode;
/// the kernel alone cannot (it denies the database's own path, but a hard link is a name beneath
/// the folder, which landlock grants), which the last case shows.
#[tokio::test(flavor = "multi_thread")]
async fn a_hard_link_reads_its_file_as_the_kernel_allows_but_never_the_database() {
    let scene = scene("hostile-hardlink");
    let outside = scene.root.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("notes.csv"), format!("note\n{LINKED_IN}\n")).unwrap();
    std::fs::hard_link(outside.join("notes.csv"), scene.exports.join("linked.csv")).unwrap();
    let wal = keep_a_wal(&scene.db);
    std::fs::hard_link(&scene.db, scene.exports.join("db.csv")).unwrap();
    std::fs::hard_link(&wal, scene.exports.join("wal.csv")).unwrap();

    let database_reads = [
        "SELECT content FROM read_blob('exports/db.csv')",
        "SELECT content FROM read_blob('exports/wal.csv')",
        "SELECT content FROM read_blob('exports/*.csv')",
        "SELECT * FROM read_csv('exports/db.csv', all_varchar = true, header = false, sep = '|')",
        "SELECT * FROM read_csv('exports/wal.csv', all_varchar = true, header = false, sep = '|')",
        "SELECT * FROM read_text('exports/wal.csv')",
        "SELECT * FROM 'exports/wal.csv'",
    ];
    // All the checks, then DuckDB's folder file system alone, then the plan check alone. The
    // walks of the SQL see only the name, which is a file of the folder: they cannot tell.
    for layers in [
        "",
        "validator,worker_walk,plan_check",
        "validator,worker_walk,duckdb_hardening",
    ] {
        let client = server(
            &scene,
            layers,
            &[HIDE[0], HIDE[1], "--max-reply-bytes", "67108864"],
        )
        .await;
        for sql in database_reads {
            let reply = query(&client, sql).await;
            assert_clear_error(&scene, &format!("{sql} (off: {layers:?})"), &reply);
        }
        // The linked file answers, through the same layers.
        let linked = query(&client, "SELECT note FROM read_csv('exports/linked.csv')").await;
        assert_eq!(
            linked["data"]["rows"],
            json!([[LINKED_IN]]),
            "off: {layers:?}: {linked}"
        );
        assert_alive(&client, layers).await;
        client.close().await.unwrap();
    }

    // The kernel alone: it lets the worker read the linked file, and the database and its WAL
    // through a hard link in the folder (a name beneath a granted folder; their own paths are
    // denied). This is the trade-off SECURITY.md states; the checks above are what hold.
    let layers = "validator,worker_walk,plan_check,duckdb_hardening";
    let client = server(
        &scene,
        layers,
        &[HIDE[0], HIDE[1], "--max-reply-bytes", "67108864"],
    )
    .await;
    let linked = query(&client, "SELECT note FROM read_csv('exports/linked.csv')").await;
    assert_eq!(linked["data"]["rows"], json!([[LINKED_IN]]), "{linked}");
    let db = query(&client, "SELECT content FROM read_blob('exports/db.csv')").await;
    assert!(
        contains(&decoded_blob(&db), b"DUCK"),
        "not the database: {db}"
    );
    let wal = query(&client, "SELECT content FROM read_blob('exports/wal.csv')").await;
    assert!(
        contains(&decoded_blob(&wal), HIDDEN_IN_WAL.as_bytes()),
        "the WAL's raw bytes: {wal}"
    );
    client.close().await.unwrap();
}

// ------------------------------------------------------------------------------------------
// A file that grows while it is read
// ------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread")]
async fn a_file_that_grows_while_it_is_read_gives_a_prefix_or_a_clear_error() {
    let scene = scene("hostile-growing");
    let path = scene.exports.join("growing.csv");
    const FIRST: u64 = 200_000;
    let mut text = String::from("n,payload\n");
    for n in 0..FIRST {
        text.push_str(&format!("{n},reading-{:08}\n", n * 7));
    }
    std::fs::write(&path, text).unwrap();
    let written = Arc::new(AtomicU64::new(FIRST));
    let stop = Arc::new(AtomicBool::new(false));
    let client = server(&scene, "", &[]).await;
    // Whole lines, a thousand per write, appended until the queries are done.
    let writer = {
        let (written, stop, path) = (written.clone(), stop.clone(), path.clone());
        std::thread::spawn(move || {
            let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
            while !stop.load(Ordering::SeqCst) {
                let from = written.load(Ordering::SeqCst);
                let mut chunk = String::new();
                for n in from..from + 1000 {
                    chunk.push_str(&format!("{n},reading-{:08}\n", n * 7));
                }
                file.write_all(chunk.as_bytes()).unwrap();
                written.store(from + 1000, Ordering::SeqCst);
            }
        })
    };
    let sql = "SELECT count(*), max(n) FROM read_csv('exports/growing.csv')";
    let mut answered = 0;
    for _ in 0..6 {
        let before = written.load(Ordering::SeqCst);
        let reply = query(&client, sql).await;
        let after = written.load(Ordering::SeqCst) + 1000;
        if status_of(&reply) == "success" {
            answered += 1;
            let count = reply["data"]["rows"][0][0].as_u64().unwrap();
            let max = reply["data"]["rows"][0][1].as_u64().unwrap();
            // The rows of the file as it was at some moment of the read: at least what was
            // there before the call, at most what was there after it.
            assert!(
                (before..=after).contains(&count) && max < after && max + 1 >= FIRST,
                "{before}..{after} lines: {reply}"
            );
        } else {
            // A line cut by the writer at the end of what was read: DuckDB's error, by name.
            assert_clear_error(&scene, "growing", &reply);
            assert!(
                reply.to_string().contains("exports/growing.csv"),
                "the error names the file: {reply}"
            );
        }
    }
    stop.store(true, Ordering::SeqCst);
    writer.join().unwrap();
    eprintln!("{answered} of 6 reads of the growing file answered");
    // Once it stops growing, every line is read.
    let total = written.load(Ordering::SeqCst);
    let reply = query(&client, sql).await;
    assert_eq!(
        reply["data"]["rows"],
        json!([[total, total - 1]]),
        "{reply}"
    );
    client.close().await.unwrap();
}

// ------------------------------------------------------------------------------------------
// A 10 GB file
// ------------------------------------------------------------------------------------------

/// A file of `size` bytes, sparse: `head`, then a hole, then `tail` at its end.
fn sparse_file(path: &Path, head: &[u8], tail: &[u8], size: u64) {
    let mut file = std::fs::File::create(path).unwrap();
    file.write_all(head).unwrap();
    file.set_len(size - tail.len() as u64).unwrap();
    file.seek(SeekFrom::End(0)).unwrap();
    file.write_all(tail).unwrap();
    let meta = file.metadata().unwrap();
    assert_eq!(meta.len(), size);
    use std::os::unix::fs::MetadataExt;
    assert!(
        meta.blocks() * 512 < 64 << 20,
        "the file is sparse ({} blocks)",
        meta.blocks()
    );
}

const TEN_GB: u64 = 10_000_000_000;

/// A real Parquet file stretched to 10 GB: its data pages at the start, a hole, then its footer
/// at the end, where readers look for it; the footer's offsets still point at the pages.
fn stretched_parquet(small: &Path, out: &Path) {
    let bytes = std::fs::read(small).unwrap();
    let n = bytes.len();
    assert_eq!(&bytes[n - 4..], b"PAR1");
    let footer_len = u32::from_le_bytes(bytes[n - 8..n - 4].try_into().unwrap()) as usize;
    let footer_start = n - 8 - footer_len;
    sparse_file(out, &bytes[..footer_start], &bytes[footer_start..], TEN_GB);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_ten_gigabyte_file_is_answered_or_a_clear_error_and_refused_past_the_byte_cap() {
    let scene = scene("hostile-huge");
    scene.write_files(
        "COPY (SELECT i AS n, (i * 7919) % 400 AS glucose FROM range(100000) t(i))
           TO '{exports}/small.parquet' (FORMAT parquet);",
    );
    stretched_parquet(
        &scene.exports.join("small.parquet"),
        &scene.exports.join("huge.parquet"),
    );
    std::fs::remove_file(scene.exports.join("small.parquet")).unwrap();
    sparse_file(
        &scene.exports.join("huge.csv"),
        b"n,label\n1,first\n",
        b"2,last\n",
        TEN_GB,
    );
    let oracle = Oracle::in_folder_root(&scene.root, TIME_ZONE, JsonEncoding::Text);

    let client = server(&scene, "", &[]).await;
    // Parquet reads the pages its footer names: 10 GB on disk, answered as DuckDB answers.
    for sql in [
        "SELECT count(*), sum(glucose), max(n) FROM 'exports/huge.parquet'",
        "SELECT * FROM read_parquet('exports/huge.parquet') WHERE n % 9973 = 0 ORDER BY n",
        "SELECT count(*) FROM read_parquet('exports/huge.parquet') WHERE glucose > 200",
    ] {
        assert_same_as_duckdb(&client, &oracle, sql).await;
    }
    // A CSV reader must read every byte: 10 GB of nothing is a clear error (DuckDB's line-size
    // limit) or the deadline, not a worker that eats the memory.
    for sql in [
        "SELECT count(*) FROM 'exports/huge.csv'",
        "SELECT * FROM read_csv('exports/huge.csv') LIMIT 5",
    ] {
        let reply = query(&client, sql).await;
        if status_of(&reply) == "success" {
            assert_same_as_duckdb(&client, &oracle, sql).await;
        } else {
            assert_clear_error(&scene, sql, &reply);
        }
    }
    assert_alive(&client, "the 10 GB files").await;
    client.close().await.unwrap();

    // Past --files-max-bytes, refused before a byte of the file is read: by the folders' file
    // system as the pattern is expanded (a CSV reader reads a sample of its file while it binds,
    // before the plan check sees the list), and by the plan check for the whole query.
    let client = server(&scene, "", &["--files-max-bytes", "1GB"]).await;
    for sql in [
        "SELECT count(*) FROM 'exports/huge.parquet'",
        "SELECT count(*) FROM 'exports/huge.csv'",
        "SELECT count(*) FROM read_parquet(['exports/huge.parquet'])",
        "SELECT * FROM read_csv('exports/huge.csv', sample_size = 1) LIMIT 1",
    ] {
        let reply = query(&client, sql).await;
        assert_clear_error(&scene, sql, &reply);
        assert!(
            reply.to_string().contains("--files-max-bytes"),
            "{sql}: names the flag: {reply}"
        );
    }
    client.close().await.unwrap();
}

// ------------------------------------------------------------------------------------------
// Many small files
// ------------------------------------------------------------------------------------------

/// How many small files the test makes: more than ten times the lower cap below, and more than
/// the default cap on matches. A million would take the test a minute to make and remove; what
/// it shows (where the listing stops) needs only more than the bound.
const SWARM: usize = 25_000;

#[tokio::test(flavor = "multi_thread")]
async fn tens_of_thousands_of_files_stop_the_listing_at_its_bound_with_the_flag_to_change() {
    let scene = scene("hostile-swarm");
    let swarm = scene.exports.join("swarm");
    std::fs::create_dir_all(&swarm).unwrap();
    let started = std::time::Instant::now();
    for i in 0..SWARM {
        std::fs::write(swarm.join(format!("f{i:05}.csv")), "x\n1\n").unwrap();
    }
    eprintln!("{SWARM} files made in {:?}", started.elapsed());

    // --files-max-count 1000: a pattern lists at most 10,000 entries, so a pattern over this
    // folder stops while it lists it, before any match is counted. Under privacy rules, whose
    // rewording of DuckDB's words about itself leaves this error about the query's pattern whole.
    let client = server(&scene, "", &["--files-max-count", "1000", HIDE[0], HIDE[1]]).await;
    for sql in [
        "SELECT count(*) FROM read_csv('exports/swarm/*.csv')",
        "SELECT count(*) FROM read_csv('exports/swarm/f0000[0-4].csv')",
        "SELECT count(*) FROM glob('exports/swarm/*')",
        "SELECT count(*) FROM read_csv('exports/**/*.csv')",
    ] {
        let reply = query(&client, sql).await;
        assert_clear_error(&scene, sql, &reply);
        let message = reply["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("looks through more than 10000 files and folders")
                && message.contains("--files-max-count"),
            "{sql}: not the listing's bound: {reply}"
        );
    }
    // A file named outright is not listed.
    let one = query(&client, "SELECT count(*) FROM 'exports/swarm/f00042.csv'").await;
    assert_eq!(one["data"]["rows"], json!([[1]]), "{one}");
    assert_alive(&client, "the listing's bound").await;
    client.close().await.unwrap();

    // The default cap (10,000): the listing's bound is 100,000 entries, so a narrow pattern
    // answers; one matching every file stops at the cap on matches.
    let client = server(&scene, "", &[]).await;
    let few = query(
        &client,
        "SELECT count(*) FROM read_csv('exports/swarm/f0000[0-4].csv')",
    )
    .await;
    assert_eq!(few["data"]["rows"], json!([[5]]), "{few}");
    for sql in [
        "SELECT count(*) FROM read_csv('exports/swarm/*.csv')",
        "SELECT count(*) FROM glob('exports/swarm/*')",
    ] {
        let reply = query(&client, sql).await;
        assert_clear_error(&scene, sql, &reply);
        assert!(
            reply.to_string().contains("--files-max-count"),
            "{sql}: names the flag: {reply}"
        );
    }
    assert_alive(&client, "the cap on matches").await;
    client.close().await.unwrap();
}

// ------------------------------------------------------------------------------------------
// Corrupt and unusual Parquet files
// ------------------------------------------------------------------------------------------

/// A Parquet footer in Thrift's compact protocol that declares a schema list of 2^32 − 1
/// elements in a few bytes: a reader that believes it allocates without bound.
fn footer_declaring_a_huge_list() -> Vec<u8> {
    // FileMetaData: field 1 (i32 version) = 1, then field 2 (list<SchemaElement>) with the
    // long-form list header (size 0xF, element type struct 0xC) and a varint size.
    let metadata: Vec<u8> = vec![0x15, 0x02, 0x19, 0xFC, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0x00];
    let mut file = b"PAR1".to_vec();
    file.extend(&metadata);
    file.extend((metadata.len() as u32).to_le_bytes());
    file.extend(b"PAR1");
    file
}

#[tokio::test(flavor = "multi_thread")]
async fn a_parquet_file_with_a_corrupt_footer_is_a_clear_error() {
    let scene = scene("hostile-footer");
    std::fs::create_dir_all(scene.exports.join("corrupt")).unwrap();
    scene.write_files(
        "COPY (SELECT i AS n, 'reading ' || i AS label FROM range(5000) t(i))
           TO '{exports}/good.parquet' (FORMAT parquet);",
    );
    let good = std::fs::read(scene.exports.join("good.parquet")).unwrap();
    let n = good.len();
    let footer_len = u32::from_le_bytes(good[n - 8..n - 4].try_into().unwrap()) as usize;
    let footer_start = n - 8 - footer_len;
    let variant = |name: &str, bytes: Vec<u8>| {
        std::fs::write(scene.exports.join("corrupt").join(name), bytes).unwrap();
    };
    let mut bad_magic = good.clone();
    bad_magic[n - 4..].copy_from_slice(b"PARX");
    variant("bad_magic.parquet", bad_magic);
    let mut too_long = good.clone();
    too_long[n - 8..n - 4].copy_from_slice(&0x7FFF_FFF0_u32.to_le_bytes());
    variant("length_past_the_file.parquet", too_long);
    let mut garbage = good.clone();
    for byte in &mut garbage[footer_start..n - 8] {
        *byte = 0xFF;
    }
    variant("garbage_footer.parquet", garbage);
    let mut scrambled = good.clone();
    for (i, byte) in scrambled[footer_start..n - 8].iter_mut().enumerate() {
        *byte ^= (i * 37 % 251) as u8;
    }
    variant("scrambled_footer.parquet", scrambled);
    variant("truncated.parquet", good[..n / 2].to_vec());
    variant("empty.parquet", Vec::new());
    variant("huge_list_footer.parquet", footer_declaring_a_huge_list());

    let client = server(&scene, "", &[]).await;
    // Whether DuckDB's error names the file: it does for what it finds wrong before decoding the
    // footer (its magic, its length, the file's size); a footer that fails to decode is told in
    // the decoder's words alone.
    for (name, named) in [
        ("bad_magic", true),
        ("length_past_the_file", true),
        ("truncated", true),
        ("empty", true),
        ("garbage_footer", false),
        ("scrambled_footer", false),
        ("huge_list_footer", false),
    ] {
        for sql in [
            format!("SELECT count(*) FROM 'exports/corrupt/{name}.parquet'"),
            format!("SELECT * FROM read_parquet('exports/corrupt/{name}.parquet') LIMIT 3"),
            format!("SELECT * FROM parquet_metadata('exports/corrupt/{name}.parquet')"),
            format!("SELECT * FROM parquet_schema('exports/corrupt/{name}.parquet')"),
        ] {
            let reply = query(&client, &sql).await;
            assert_clear_error(&scene, &sql, &reply);
            if named {
                assert!(
                    reply
                        .to_string()
                        .contains(&format!("exports/corrupt/{name}.parquet")),
                    "{sql}: the error names the file: {reply}"
                );
            }
        }
        assert_alive(&client, name).await;
    }
    let all = query(&client, "SELECT count(*) FROM 'exports/corrupt/*.parquet'").await;
    assert_clear_error(&scene, "the whole folder", &all);
    // The good file beside them still answers.
    let good = query(&client, "SELECT count(*) FROM 'exports/good.parquet'").await;
    assert_eq!(good["data"]["rows"], json!([[5000]]), "{good}");
    assert_alive(&client, "corrupt footers").await;
    client.close().await.unwrap();
}

/// Rows in the one row group: a writer that puts a whole export in one row group (DuckDB splits
/// at 122,880 rows by default).
const ONE_ROW_GROUP_ROWS: u64 = 4_000_000;

#[tokio::test(flavor = "multi_thread")]
async fn a_parquet_file_of_one_huge_row_group_is_answered_within_a_small_memory_cap() {
    let scene = scene("hostile-rowgroup");
    scene.write_files(
        &format!(
            "COPY (SELECT i AS n, (i * 7919) % 400 AS glucose,
                          'sensor-' || (i % 97) AS device,
                          TIMESTAMP '2020-01-01' + to_minutes(i * 5) AS ts
                   FROM range({ONE_ROW_GROUP_ROWS}) t(i))
               TO '{{exports}}/one_group.parquet' (FORMAT parquet, ROW_GROUP_SIZE {ONE_ROW_GROUP_ROWS});"
        ),
    );
    let groups: i64 = duckdb::Connection::open_in_memory()
        .unwrap()
        .query_row(
            &format!(
                "SELECT count(DISTINCT row_group_id) FROM parquet_metadata('{}')",
                scene.exports.join("one_group.parquet").display()
            ),
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(groups, 1, "the fixture has one row group");
    let oracle = Oracle::in_folder_root(&scene.root, TIME_ZONE, JsonEncoding::Text);

    // One query worker whose hard cap is about 600 MB.
    let client = server(
        &scene,
        "",
        &[
            "--memory-budget",
            "1GB",
            "--max-concurrent",
            "1",
            "--warm-workers",
            "1",
        ],
    )
    .await;
    for sql in [
        "SELECT count(*), sum(glucose), min(ts), max(ts) FROM 'exports/one_group.parquet'",
        "SELECT device, count(*), avg(glucose) FROM 'exports/one_group.parquet' GROUP BY device ORDER BY device",
        "SELECT * FROM 'exports/one_group.parquet' WHERE n >= 3999995 ORDER BY n",
        "SELECT count(DISTINCT glucose), count(DISTINCT device) FROM 'exports/one_group.parquet'",
    ] {
        assert_same_as_duckdb(&client, &oracle, sql).await;
    }
    // A sort of every row, wider than the cap allows without spilling: answered (it spills) or
    // a clear error; never a worker past its cap.
    let sql = "SELECT n, device FROM 'exports/one_group.parquet' ORDER BY device DESC, glucose, n LIMIT 3";
    let reply = query(&client, sql).await;
    if status_of(&reply) == "success" {
        assert_same_as_duckdb(&client, &oracle, sql).await;
    } else {
        assert_clear_error(&scene, sql, &reply);
    }
    assert_alive(&client, "one huge row group").await;
    client.close().await.unwrap();
}

// ------------------------------------------------------------------------------------------
// 100,000 columns
// ------------------------------------------------------------------------------------------

const WIDE_COLUMNS: usize = 100_000;

#[tokio::test(flavor = "multi_thread")]
async fn a_csv_file_of_a_hundred_thousand_columns_stays_within_the_reply_budget() {
    let scene = scene("hostile-wide");
    let mut text = (0..WIDE_COLUMNS)
        .map(|i| format!("c{i}"))
        .collect::<Vec<_>>()
        .join(",");
    text.push('\n');
    for row in 0..3 {
        let values: Vec<String> = (0..WIDE_COLUMNS).map(|i| (i + row).to_string()).collect();
        text.push_str(&values.join(","));
        text.push('\n');
    }
    std::fs::write(scene.exports.join("wide.csv"), text).unwrap();
    let oracle = Oracle::in_folder_root(&scene.root, TIME_ZONE, JsonEncoding::Text);
    const BUDGET: usize = 65_536;
    let client = server(&scene, "", &["--max-reply-bytes", &BUDGET.to_string()]).await;
    // DuckDB's CSV reader keeps a vector per column: 100,000 of them take more memory than a
    // worker's share, so these are answered as DuckDB answers them or refused by the memory cap
    // with a clear error, never a dead worker.
    for sql in [
        "SELECT count(*) FROM 'exports/wide.csv'",
        "SELECT c0, c50000, c99999 FROM read_csv('exports/wide.csv') ORDER BY c0",
    ] {
        let reply = query(&client, sql).await;
        if status_of(&reply) == "success" {
            assert_same_as_duckdb(&client, &oracle, sql).await;
        } else {
            assert_clear_error(&scene, sql, &reply);
            assert_eq!(reply["error"]["kind"], "resource_limit", "{sql}: {reply}");
        }
    }
    // Every column, and every column described: past the budget, cut or refused, and said so.
    for (tool, args) in [
        (
            "query",
            json!({ "sql": "SELECT * FROM 'exports/wide.csv'" }),
        ),
        (
            "query",
            json!({ "sql": "DESCRIBE SELECT * FROM 'exports/wide.csv'" }),
        ),
        (
            "query",
            json!({ "sql": "SUMMARIZE SELECT * FROM 'exports/wide.csv'" }),
        ),
        (
            "explain_query",
            json!({ "sql": "SELECT * FROM 'exports/wide.csv'" }),
        ),
    ] {
        let result = client.call(tool, args.clone()).await.unwrap();
        let envelope = envelope_of(&result);
        let bytes = serde_json::to_string(envelope).unwrap().len()
            + serde_json::to_string(text_of(&result)).unwrap().len();
        assert!(bytes <= BUDGET, "{tool} {args}: {bytes} bytes");
        match status_of(envelope) {
            "success" | "partial" => {}
            _ => assert_clear_error(&scene, &args.to_string(), envelope),
        }
    }
    assert_alive(&client, "100,000 columns").await;
    client.close().await.unwrap();
}

//! Shared by duckgate's integration tests (`tests/it/`): temp dirs, a real DuckDB file, the real
//! `duckgate` binary as a command line and as `duckgate serve`, the declared-folder tests' scene
//! ([`folder_scene`]), the test programs, the MCP client, outputSchema validation, reading a
//! reply's lists, and a look at the server's worker processes.
//!
//! Cargo tells only the integration tests it compiles where it put the package's binary and
//! their scratch folder (`CARGO_BIN_EXE_duckgate`, `CARGO_TARGET_TMPDIR`), not a library such as
//! this one; so both are found from the running test binary, which cargo puts in `deps/` beside
//! them ([`exe`]). `tests/it/main.rs` checks that this is the very binary cargo names.

pub mod corpus_file;
pub mod folder_scene;
pub mod oracle;
pub mod steps;

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use duckgate::mcp_client::{McpClient, envelope_of, text_of};
use rmcp::model::{CallToolResult, ProtocolVersion};
use serde_json::Value;

/// A directory removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    /// A fresh directory under cargo's scratch folder for tests (`target/tmp`, what cargo hands
    /// integration tests as `CARGO_TARGET_TMPDIR`).
    pub fn new(tag: &str) -> TempDir {
        let target = build_dir()
            .parent()
            .expect("the build folder is in a target folder");
        TempDir::create(target.join("tmp"), tag)
    }

    /// A fresh directory under the system temp dir: the sandbox tests plant their secrets
    /// "elsewhere in /tmp", where an unconfined process could read them.
    pub fn in_system_temp(tag: &str) -> TempDir {
        TempDir::create(std::env::temp_dir(), tag)
    }

    fn create(base: PathBuf, tag: &str) -> TempDir {
        use std::sync::atomic::{AtomicU32, Ordering};
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = base.join(format!("duckgate-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Readings every 5 minutes for two weeks (4032 rows), with comments, keys and odd names.
pub const CGM_SCHEMA: &str = r#"
CREATE TABLE cgm_readings (
    id BIGINT PRIMARY KEY,
    ts TIMESTAMP NOT NULL,
    glucose_mg_dl SMALLINT,
    trend VARCHAR,
    note VARCHAR
);
INSERT INTO cgm_readings
SELECT i, TIMESTAMP '2026-01-01' + i * INTERVAL 5 MINUTE, 80 + (i * 37) % 150,
       CASE WHEN i % 3 = 0 THEN 'flat' ELSE 'rising' END,
       CASE WHEN i = 7 THEN repeat('very long note ', 40) ELSE NULL END
FROM range(4032) t(i);
COMMENT ON TABLE cgm_readings IS 'Continuous glucose monitor readings every 5 minutes';
COMMENT ON COLUMN cgm_readings.glucose_mg_dl IS 'Sensor glucose in mg/dL';
CREATE TABLE events (
    id BIGINT PRIMARY KEY,
    reading_id BIGINT REFERENCES cgm_readings(id),
    kind VARCHAR,
    units DOUBLE
);
INSERT INTO events VALUES (1, 10, 'bolus', 2.5), (2, 20, 'carbs', NULL), (3, 30, 'bolus', 1.0);
COMMENT ON COLUMN events.units IS 'Insulin units delivered by a bolus';
CREATE TABLE basal_deliveries (ts TIMESTAMP, rate_u_per_h DOUBLE);
INSERT INTO basal_deliveries VALUES (TIMESTAMP '2026-01-01', 0.8);
CREATE TABLE empty_table (x INTEGER);
CREATE TABLE "odd ""name" ("sp ace" INTEGER, "quo""te" VARCHAR);
INSERT INTO "odd ""name" VALUES (1, 'a'), (2, 'b');
CREATE VIEW daily_glucose AS SELECT ts::DATE AS day, avg(glucose_mg_dl) AS avg_glucose FROM cgm_readings GROUP BY 1;
"#;

/// Write a DuckDB file with `sql` and close it (so no lock is held).
pub fn make_db(path: &Path, sql: &str) {
    let conn = duckdb::Connection::open(path).unwrap();
    conn.execute_batch(sql).unwrap();
    conn.close().map_err(|(_, e)| e).unwrap();
}

/// Run `sql` on `db` the way a writer that stops without a checkpoint does, so that what it
/// wrote stays in the database's WAL alone; the WAL's path.
pub fn leave_a_wal(db: &Path, sql: &str) -> PathBuf {
    let conn = duckdb::Connection::open(db).expect("open the database to write");
    conn.execute_batch(&format!(
        "PRAGMA disable_checkpoint_on_shutdown; SET checkpoint_threshold = '10GB'; {sql}"
    ))
    .unwrap_or_else(|e| panic!("{sql}: {e}"));
    drop(conn);
    let mut wal = db.as_os_str().to_owned();
    wal.push(".wal");
    let wal = PathBuf::from(wal);
    assert!(wal.exists(), "the writer left no WAL");
    wal
}

/// A temp dir holding `cgm.duckdb` with [`CGM_SCHEMA`].
pub fn cgm_db(tag: &str) -> (TempDir, PathBuf) {
    let dir = TempDir::new(tag);
    let db = dir.path().join("cgm.duckdb");
    make_db(&db, CGM_SCHEMA);
    (dir, db)
}

/// The folder of the build the running test belongs to (`target/release`): cargo runs a test
/// binary from its `deps/` folder, and puts the package's binary and examples beside that folder.
fn build_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let test_binary = std::env::current_exe().expect("the running test binary's path");
        let deps = test_binary.parent().expect("the test binary's folder");
        assert!(
            deps.ends_with("deps"),
            "{} is not a test binary cargo built (they are in target/<profile>/deps/)",
            test_binary.display()
        );
        deps.parent()
            .expect("deps/ is in the build folder")
            .to_path_buf()
    })
}

/// The `duckgate` binary cargo built for the running tests, with the test switches (duckgate's
/// dev-dependency on itself turns on `test-bypass`).
pub fn exe() -> PathBuf {
    build_dir().join("duckgate")
}

/// The test program `name` (`tests/programs/`, built as a Cargo example next to the binary in
/// `target/release/examples/`). Cargo builds the examples for `cargo test`; a run of one test
/// file alone builds it first, once per test binary (a second caller waits for that build).
pub fn example(name: &str) -> &'static Path {
    static BUILT: Mutex<Vec<(String, &'static Path)>> = Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, path)) = built.iter().find(|(built_name, _)| built_name == name) {
        return path;
    }
    let path = build_dir().join("examples").join(name);
    if !path.exists() {
        // The examples are the duckgate package's, at the root of the workspace this crate is in.
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let status = std::process::Command::new(env!("CARGO"))
            .args([
                "build",
                "--release",
                "--package",
                "duckgate",
                "--example",
                name,
            ])
            .current_dir(workspace)
            .status()
            .expect("run cargo to build the example");
        assert!(
            status.success(),
            "cargo build --example {name} failed: {status}"
        );
    }
    assert!(path.exists(), "{} is missing", path.display());
    let path: &'static Path = Box::leak(path.into_boxed_path());
    built.push((name.to_string(), path));
    path
}

/// `duckgate ARGS…` as a command line for [`run_cli`]; the caller may add arguments and
/// environment.
pub fn duckgate_cli<I, S>(args: I) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut command = Command::new(exe());
    command.args(args);
    command
}

/// The one way these tests run a program as a command line: to completion, with `stdin`'s text
/// on its stdin (closed when `None`), stdout and stderr captured.
pub fn run_cli(mut command: Command, stdin: Option<&str>) -> Output {
    command
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("start the program");
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        use std::io::Write;
        pipe.write_all(text.as_bytes()).expect("write its stdin");
    }
    child.wait_with_output().expect("wait for the program")
}

/// A run's stdout as text.
pub fn stdout_of(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A run's stderr as text.
pub fn stderr_of(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A run as (exit code, stdout, stderr); the code is -1 when a signal ended the program.
pub fn outcome(output: &Output) -> (i32, String, String) {
    (
        output.status.code().unwrap_or(-1),
        stdout_of(output),
        stderr_of(output),
    )
}

/// `duckgate serve --db DB extra…`, initialised. Server logs go to the test's stderr only when
/// `DUCKGATE_TEST_LOGS` is set.
pub async fn serve(db: &Path, extra: &[&str]) -> McpClient {
    serve_pinned(db, extra, duckgate::mcp_client::DEFAULT_PROTOCOL_VERSION).await
}

/// [`serve`] with every reply whole (a 64 MiB budget): for tests that compare or read every row
/// of an answer, not the reply budget (`tests/it/mcp_tools.rs` tests that).
pub async fn serve_whole(db: &Path, extra: &[&str]) -> McpClient {
    let mut args = extra.to_vec();
    args.extend(["--max-reply-bytes", "67108864"]);
    serve(db, &args).await
}

/// [`serve`] with a session pinned to `version`: `initialize` for a revision that has it,
/// `server/discover` and per-request `_meta` for 2026-07-28.
pub async fn serve_pinned(db: &Path, extra: &[&str], version: ProtocolVersion) -> McpClient {
    let mut command = tokio::process::Command::new(exe());
    command.arg("serve").arg("--db").arg(db).args(extra);
    let stderr = if std::env::var_os("DUCKGATE_TEST_LOGS").is_some() {
        Stdio::inherit()
    } else {
        Stdio::null()
    };
    McpClient::spawn_command_pinned(command, stderr, version.clone())
        .await
        .unwrap_or_else(|e| panic!("duckgate serve starts a {version} session: {e}"))
}

/// Every tool's outputSchema, compiled.
pub struct OutputSchemas(HashMap<String, jsonschema::Validator>);

impl OutputSchemas {
    /// The schemas of every tool `client`'s server lists (panics on one that does not compile).
    pub async fn fetch(client: &McpClient) -> OutputSchemas {
        let mut validators = HashMap::new();
        for tool in client.list_tools().await.unwrap() {
            let schema = Value::Object(
                tool.output_schema
                    .expect("every tool has an outputSchema")
                    .as_ref()
                    .clone(),
            );
            let validator = jsonschema::validator_for(&schema).unwrap_or_else(|e| {
                panic!(
                    "{}: outputSchema is not a valid JSON Schema: {e}",
                    tool.name
                )
            });
            validators.insert(tool.name.to_string(), validator);
        }
        OutputSchemas(validators)
    }

    /// Panic unless `result.structuredContent` validates against `tool`'s outputSchema.
    pub fn check(&self, tool: &str, result: &CallToolResult) {
        let validator = self.0.get(tool).unwrap_or_else(|| panic!("no tool {tool}"));
        let envelope = envelope_of(result);
        let errors: Vec<String> = validator
            .iter_errors(envelope)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "{tool}: structuredContent does not match outputSchema: {errors:?}\n{envelope}"
        );
    }
}

/// The envelope's status.
pub fn status(result: &CallToolResult) -> &str {
    envelope_of(result)["status"]
        .as_str()
        .unwrap_or("<no status>")
}

/// Each object of the list `items` (a tool's `data.tables`, `data.files`, …) as its string
/// fields `(first, second)`, in the list's order: `list_tables`' `(database, name)`,
/// `list_files`' `(path, format)`. Panics, naming the list, when it is not one or an object
/// lacks either field.
pub fn field_pairs<'a>(items: &'a Value, first: &str, second: &str) -> Vec<(&'a str, &'a str)> {
    let field = |item: &'a Value, name: &str| -> &'a str {
        item[name]
            .as_str()
            .unwrap_or_else(|| panic!("no string {name} in {item}"))
    };
    items
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {items}"))
        .iter()
        .map(|item| (field(item, first), field(item, second)))
        .collect()
}

/// The envelope's error kind.
pub fn error_kind(result: &CallToolResult) -> &str {
    envelope_of(result)["error"]["kind"]
        .as_str()
        .unwrap_or("<no error>")
}

/// Assert a failed call's status, kind, `isError` and that the text starts with the message.
pub fn assert_failed(result: &CallToolResult, expected_status: &str, expected_kind: &str) -> Value {
    let envelope = envelope_of(result).clone();
    assert_eq!(status(result), expected_status, "{envelope}");
    assert_eq!(error_kind(result), expected_kind, "{envelope}");
    assert_eq!(result.is_error, Some(true), "{envelope}");
    assert_eq!(envelope["data"], Value::Null, "{envelope}");
    let message = envelope["error"]["message"].as_str().unwrap();
    // The text starts with the message, its further lines quoted (`  | `) so that none can
    // pose as a line of the server's own guidance.
    let quoted = message.replace('\n', "\n  | ");
    assert!(
        text_of(result).starts_with(&quoted),
        "text {:?} does not start with {quoted:?}",
        text_of(result)
    );
    envelope
}

/// Processes on this machine: (pid, parent pid).
fn process_table() -> Vec<(u32, u32)> {
    let mut table = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return table;
    };
    for entry in entries.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Some(ppid) = stat_field(pid, 1).and_then(|f| f.parse().ok()) {
            table.push((pid, ppid));
        }
    }
    table
}

/// Field `index` of /proc/PID/stat counted after the `(comm)` field (0 = state, 1 = ppid, …).
fn stat_field(pid: u32, index: usize) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_comm = stat.rsplit_once(')')?.1;
    after_comm.split_whitespace().nth(index).map(str::to_string)
}

/// All descendants of `root`.
pub fn descendants(root: u32) -> Vec<u32> {
    let table = process_table();
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        for (pid, ppid) in &table {
            if *ppid == parent && !found.contains(pid) {
                found.push(*pid);
            }
        }
        i += 1;
    }
    found.remove(0);
    found
}

/// A process's command line, its arguments separated by spaces (empty once it is gone).
pub fn cmdline(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
        .unwrap_or_default()
}

/// Worker processes under the server: spawned ones (`duckgate __worker …`, children of the
/// server) and forked ones (children of the template, whose command line they share), never the
/// template itself.
pub fn workers_of(server: u32) -> Vec<u32> {
    let template = template_of(server);
    descendants(server)
        .into_iter()
        .filter(|pid| cmdline(*pid).contains("__worker") && Some(*pid) != template)
        .collect()
}

/// The zygote's template process under the server (`__worker … --start template`, a direct
/// child of the server), if one runs.
pub fn template_of(server: u32) -> Option<u32> {
    process_table().into_iter().find_map(|(pid, ppid)| {
        (ppid == server && cmdline(pid).contains("--start template")).then_some(pid)
    })
}

/// A process's parent pid, while it exists.
///
/// `None` too for a process being released: `/proc/<pid>/stat` shows 0 as its parent once the
/// exiting task has let go of its signal handlers (the kernel reads the parent only while it can
/// lock them), which is no parent at all.
pub fn parent_of(pid: u32) -> Option<u32> {
    stat_field(pid, 1)
        .and_then(|f| f.parse().ok())
        .filter(|parent| *parent != 0)
}

/// The direct children of `parent`.
pub fn children_of(parent: u32) -> Vec<u32> {
    process_table()
        .into_iter()
        .filter_map(|(pid, ppid)| (ppid == parent).then_some(pid))
        .collect()
}

/// The value of a `Name:\tvalue` line of `/proc/<pid>/status`, while the process exists.
pub fn status_field(pid: u32, name: &str) -> Option<String> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        (key == name).then(|| value.trim().to_string())
    })
}

/// Open descriptors of a process (`/proc/<pid>/fd`), while it exists.
pub fn fd_count(pid: u32) -> Option<usize> {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .ok()
        .map(|d| d.count())
}

/// User + system CPU clock ticks a process has used.
pub fn cpu_ticks(pid: u32) -> u64 {
    let utime = stat_field(pid, 11)
        .and_then(|f| f.parse::<u64>().ok())
        .unwrap_or(0);
    let stime = stat_field(pid, 12)
        .and_then(|f| f.parse::<u64>().ok())
        .unwrap_or(0);
    utime + stime
}

/// Whether the process no longer runs (gone, or a zombie waiting to be reaped).
pub fn is_dead(pid: u32) -> bool {
    match stat_field(pid, 0) {
        None => true,
        Some(state) => state == "Z" || state == "X",
    }
}

/// Poll `condition` every 20 ms until it holds or `timeout` passes; returns the time it took.
pub async fn wait_until(
    timeout: Duration,
    mut condition: impl FnMut() -> bool,
) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < timeout {
        if condition() {
            return Some(start.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    None
}

/// A device table with a hidden serial number, readings with a hidden free-text note, and a
/// hidden raw-payload table. Every hidden value carries the token `PLANTED`.
pub const PRIVATE_SCHEMA: &str = r#"
CREATE TABLE devices (device_id INTEGER PRIMARY KEY, model VARCHAR, serial_number VARCHAR);
INSERT INTO devices VALUES (1, 'G7', 'SN-PLANTED-0001'), (2, 'Libre', 'SN-PLANTED-0002');
CREATE INDEX idx_devices_serial ON devices (serial_number);
CREATE TABLE readings (
    id INTEGER PRIMARY KEY,
    device_id INTEGER REFERENCES devices (device_id),
    glucose INTEGER,
    secret_note VARCHAR
);
INSERT INTO readings VALUES (1, 1, 110, 'PLANTED note one'), (2, 2, 140, 'PLANTED note two');
COMMENT ON COLUMN readings.secret_note IS 'free text the user typed';
CREATE TABLE raw_payloads (id INTEGER, reading_id INTEGER REFERENCES readings (id), body VARCHAR);
INSERT INTO raw_payloads VALUES (1, 1, '{"token": "PLANTED payload"}');
COMMENT ON TABLE raw_payloads IS 'raw API payloads from the vendor';
"#;

/// Strings no reply over [`PRIVATE_SCHEMA`] may contain (lower case): the hidden names and
/// the planted token.
pub const FORBIDDEN: &[&str] = &[
    "planted",
    "serial_number",
    "secret_note",
    "raw_payloads",
    "idx_devices_serial",
];

/// `duckgate query --db DB SQL` with the test-only bypass switching `layers` off: (exit code,
/// stdout).
pub fn query_with_bypass(db: &Path, layers: &str, sql: &str) -> (i32, String) {
    let mut command = duckgate_cli(["query", "--db"]);
    command
        .arg(db)
        .arg(sql)
        .env(duckgate::sandbox::bypass::ENV_VAR, layers);
    let (code, stdout, _) = outcome(&run_cli(command, None));
    (code, stdout)
}

/// `value` without its `duration_ms` fields, at any depth: what differs between two runs of the
/// same call.
pub fn strip_durations(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.remove("duration_ms");
            map.values_mut().for_each(strip_durations);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_durations),
        _ => {}
    }
}

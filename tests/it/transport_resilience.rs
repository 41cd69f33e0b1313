//! No client line ends the server, and no agent erases its own record: the real binary over
//! stdio, driven with raw JSON-RPC lines.
//!
//! - Every kind of notification (and a stray response or error) as the very first line, for
//!   both ways a session opens (2025-11-25's `initialize`, 2026-07-28's self-contained requests):
//!   ignored, counted in `server_info` and on stderr, and the next request is answered.
//! - A 2026-07-28 request refused for its `_meta`, then a cancellation of it.
//! - A request whose id is still in flight: refused at once; the first is answered as usual, or
//!   cancelled by a cancellation of that id.
//! - A flood of refused calls after a marked call: slowed in proportion to the bytes it logs; the
//!   marked call of another session still running stays on disk whatever the caps, and an ended
//!   session's records go once the log is past its cap.
//! - A flood of answered calls: charged like any other, the log within its cap on disk and its
//!   rate in time, every call answered under `--audit-required`, and the next session served.
//!
//! The line sequences are the transport fuzz target's seeds (`write_transport_fuzz_seeds`).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::raw_support::{RawSession, request_meta};
use crate::support::steps::{ENDLESS, busy_worker};
use crate::support::{cgm_db, exe, is_dead, wait_until};
use duckgate::audit::{
    CHARGE_BURST_BYTES, CHARGE_BYTES_PER_SECOND, MAX_RECORD_BYTES, generation_path,
};
use serde_json::{Value, json};

/// Every notification a client may send first: each kind rmcp knows, and one it does not.
fn first_notifications() -> Vec<Value> {
    vec![
        json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": 1 } }),
        json!({ "jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": { "requestId": "never-sent", "reason": "reconnect" } }),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        json!({ "jsonrpc": "2.0", "method": "notifications/roots/list_changed" }),
        json!({ "jsonrpc": "2.0", "method": "notifications/progress",
                "params": { "progressToken": "t", "progress": 1 } }),
        json!({ "jsonrpc": "2.0", "method": "notifications/no_such_thing", "params": { "x": 1 } }),
    ]
}

/// A response and an error from the client, before it asked anything.
fn first_replies() -> Vec<Value> {
    vec![
        json!({ "jsonrpc": "2.0", "id": 99, "result": {} }),
        json!({ "jsonrpc": "2.0", "id": 98, "error": { "code": -32000, "message": "stale" } }),
    ]
}

fn initialize(id: i64) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "initialize",
        "params": { "protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": { "name": "raw", "version": "0" } }
    })
}

fn call(id: Value, sql: &str, meta: Option<&Value>) -> Value {
    let mut params = json!({ "name": "query", "arguments": { "sql": sql } });
    if let Some(meta) = meta {
        params["_meta"] = meta.clone();
    }
    json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params })
}

fn cancel(id: Value) -> Value {
    json!({ "jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": { "requestId": id, "reason": "test" } })
}

async fn send(session: &mut RawSession, line: &Value) {
    session.send(&line.to_string()).await;
}

/// The next message must be the answer to `id`: nothing (no error for an ignored line) comes
/// before it.
async fn next_is_answer(session: &mut RawSession, id: Value) -> Value {
    let message = session.next_message().await;
    assert_eq!(
        message["id"], id,
        "expected the answer to {id} first: {message}"
    );
    message
}

/// `SELECT 1` answered with one row, under `meta` on 2026-07-28.
async fn answers_a_query(session: &mut RawSession, id: i64, meta: Option<&Value>) {
    send(session, &call(json!(id), "SELECT 1 AS one", meta)).await;
    let reply = next_is_answer(session, json!(id)).await;
    assert_eq!(
        reply["result"]["structuredContent"]["status"], "success",
        "{reply}"
    );
    assert_eq!(
        reply["result"]["structuredContent"]["data"]["rows"],
        json!([[1]])
    );
}

/// `server_info`'s `session` counts.
async fn session_counts(session: &mut RawSession, id: i64, meta: Option<&Value>) -> Value {
    let mut params = json!({ "name": "server_info", "arguments": {} });
    if let Some(meta) = meta {
        params["_meta"] = meta.clone();
    }
    send(
        session,
        &json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params }),
    )
    .await;
    let reply = session.reply(json!(id)).await;
    reply["result"]["structuredContent"]["data"]["session"].clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn on_2025_11_25_any_notification_or_reply_first_is_ignored_and_initialize_is_answered() {
    let (_dir, db) = cgm_db("first-line-2025");
    for first in first_notifications().iter().chain(&first_replies()) {
        let mut session = RawSession::start(&exe(), &db, &[]);
        send(&mut session, first).await;
        send(&mut session, &initialize(1)).await;
        let init = next_is_answer(&mut session, json!(1)).await;
        assert_eq!(
            init["result"]["protocolVersion"], "2025-11-25",
            "after {first}: {init}"
        );
        send(
            &mut session,
            &json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        )
        .await;
        answers_a_query(&mut session, 2, None).await;
        session.finish().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn on_2026_07_28_any_notification_or_reply_first_is_ignored_and_the_request_is_answered() {
    let (_dir, db) = cgm_db("first-line-2026");
    let meta = request_meta("2026-07-28");
    for first in first_notifications().iter().chain(&first_replies()) {
        // Straight to a call, as a 2026-07-28 client may.
        let mut session = RawSession::start(&exe(), &db, &[]);
        send(&mut session, first).await;
        answers_a_query(&mut session, 1, Some(&meta)).await;
        session.finish().await;
        // Or through server/discover first.
        let mut session = RawSession::start(&exe(), &db, &[]);
        send(&mut session, first).await;
        send(
            &mut session,
            &json!({ "jsonrpc": "2.0", "id": 1, "method": "server/discover",
                     "params": { "_meta": meta } }),
        )
        .await;
        let discover = next_is_answer(&mut session, json!(1)).await;
        assert!(
            discover["result"]["supportedVersions"].is_array(),
            "after {first}: {discover}"
        );
        send(&mut session, first).await;
        answers_a_query(&mut session, 2, Some(&meta)).await;
        session.finish().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn what_the_session_ignored_is_counted_in_server_info_and_on_stderr() {
    let (dir, db) = cgm_db("first-line-counts");
    let stderr = dir.path().join("stderr.log");
    let mut session = RawSession::start_logging(&exe(), &db, &[], &stderr);
    for first in first_notifications().iter().chain(&first_replies()) {
        send(&mut session, first).await;
    }
    session.initialize().await;
    // Serving now: a cancellation of no request in flight is ignored too.
    send(&mut session, &cancel(json!(12345))).await;
    let counts = session_counts(&mut session, 2, None).await;
    let notifications = first_notifications().len() as u64 + 1;
    assert_eq!(counts["notifications_ignored"], notifications, "{counts}");
    assert_eq!(counts["replies_ignored"], 2, "{counts}");
    assert_eq!(counts["duplicate_ids_refused"], 0, "{counts}");
    assert!(counts["audit"].is_null(), "{counts}");
    session.finish().await;
    let log = std::fs::read_to_string(&stderr).unwrap();
    assert!(
        log.contains(&format!("notifications_ignored={notifications}")),
        "{log}"
    );
    assert!(log.contains("replies_ignored=2"), "{log}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_request_refused_for_its_meta_then_cancelled_leaves_the_server_answering() {
    let (_dir, db) = cgm_db("bad-meta-cancel");
    let meta = request_meta("2026-07-28");
    let partial = json!({ "io.modelcontextprotocol/protocolVersion": "2026-07-28" });
    let mut session = RawSession::start(&exe(), &db, &[]);
    // No _meta, a partial one, and a revision the server lacks: each refused, each cancelled.
    for (id, bad) in [
        (1, None),
        (2, Some(partial)),
        (3, Some(request_meta("2099-01-01"))),
    ] {
        send(&mut session, &call(json!(id), "SELECT 1", bad.as_ref())).await;
        let refused = next_is_answer(&mut session, json!(id)).await;
        assert!(refused["error"]["code"].is_i64(), "{refused}");
        send(&mut session, &cancel(json!(id))).await;
    }
    answers_a_query(&mut session, 4, Some(&meta)).await;
    // Open now: a refusal and its cancel change nothing either.
    send(&mut session, &call(json!(5), "SELECT 1", None)).await;
    let refused = next_is_answer(&mut session, json!(5)).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    send(&mut session, &cancel(json!(5))).await;
    answers_a_query(&mut session, 6, Some(&meta)).await;
    session.finish().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_duplicate_id_in_flight_is_refused_at_once_and_the_first_is_answered_as_usual() {
    let (_dir, db) = cgm_db("duplicate-id");
    let mut session = RawSession::start(&exe(), &db, &["--timeout", "3"]);
    session.initialize().await;
    let started = Instant::now();
    send(&mut session, &call(json!(777), ENDLESS, None)).await;
    send(&mut session, &call(json!(777), "SELECT 1", None)).await;
    let refused = session.next_message().await;
    assert_eq!(refused["id"], 777, "{refused}");
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("still in flight"),
        "{refused}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "the duplicate was answered only after {:?}",
        started.elapsed()
    );
    // The first runs to its deadline and is answered as any call is.
    let first = next_is_answer(&mut session, json!(777)).await;
    let envelope = &first["result"]["structuredContent"];
    assert_eq!(envelope["error"]["kind"], "timeout", "{first}");
    // The id is free again once answered.
    answers_a_query(&mut session, 777, None).await;
    let counts = session_counts(&mut session, 3, None).await;
    assert_eq!(counts["duplicate_ids_refused"], 1, "{counts}");
    session.finish().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cancel_after_a_duplicate_id_cancels_the_first_and_the_server_answers_the_next() {
    let (_dir, db) = cgm_db("duplicate-cancel");
    let mut session = RawSession::start(&exe(), &db, &["--timeout", "120"]);
    let server = session.child.id().unwrap();
    session.initialize().await;
    send(&mut session, &call(json!(777), ENDLESS, None)).await;
    let worker = busy_worker(server).await;
    send(&mut session, &call(json!(777), ENDLESS, None)).await;
    let refused = session.next_message().await;
    assert_eq!(refused["id"], 777, "{refused}");
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    send(&mut session, &cancel(json!(777))).await;
    assert!(
        wait_until(Duration::from_secs(5), || is_dead(worker))
            .await
            .is_some(),
        "the first call's worker {worker} still runs 5 s after its cancel"
    );
    answers_a_query(&mut session, 778, None).await;
    session.finish().await;
}

/// The records of every generation of `log` on disk, oldest first.
fn all_records(log: &Path) -> Vec<Value> {
    let mut files: Vec<PathBuf> = (1..)
        .map(|index| generation_path(log, index))
        .take_while(|path| path.exists())
        .collect();
    files.reverse();
    files.push(log.to_path_buf());
    files
        .iter()
        .flat_map(|file| {
            std::fs::read_to_string(file)
                .unwrap()
                .lines()
                .map(|line| serde_json::from_str::<Value>(line).unwrap())
                .collect::<Vec<_>>()
        })
        .collect()
}

fn generations_on_disk(log: &Path) -> usize {
    1 + (1..)
        .take_while(|index| generation_path(log, *index).exists())
        .count()
}

fn log_bytes(log: &Path) -> u64 {
    (1..)
        .map(|index| generation_path(log, index))
        .take_while(|path| path.exists())
        .chain([log.to_path_buf()])
        .map(|path| std::fs::metadata(path).map_or(0, |m| m.len()))
        .sum()
}

/// A refused query whose record takes about 4.3 KB (its SQL is kept whole, up to 4 KB).
fn refused_sql(i: usize) -> String {
    format!("DELETE FROM cgm_readings -- {i:05} {}", "x".repeat(3960))
}

/// `count` refused calls, one at a time as an agent makes them; the time they took.
async fn flood(session: &mut RawSession, first_id: i64, count: usize) -> Duration {
    let started = Instant::now();
    for i in 0..count {
        let id = first_id + i as i64;
        send(session, &call(json!(id), &refused_sql(i), None)).await;
        let reply = next_is_answer(session, json!(id)).await;
        let status = &reply["result"]["structuredContent"]["status"];
        assert!(status == "refused" || status == "error", "{reply}");
    }
    started.elapsed()
}

fn is_marked(record: &Value, mark: &str) -> bool {
    record["arguments"]["sql"]
        .as_str()
        .is_some_and(|sql| sql.contains(mark))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_flood_of_refused_calls_is_slowed_and_cannot_push_another_running_sessions_record_off_the_disk()
 {
    let (dir, db) = cgm_db("audit-flood");
    let log = dir.path().join("audit.jsonl");
    let log_arg = log.to_str().unwrap();
    let mark = "MARKED-7f3a";

    // The setting: 200 KB generations and the default count of them.
    let mut session = RawSession::start(
        &exe(),
        &db,
        &["--audit-log", log_arg, "--audit-max-bytes", "200000"],
    );
    session.initialize().await;
    answers_marked(&mut session, 2, mark).await;
    let before = log_bytes(&log);
    let took = flood(&mut session, 100, 150).await;
    let logged = log_bytes(&log) - before;
    answers_a_query(&mut session, 1000, None).await;
    session.finish().await;
    assert!(
        all_records(&log).iter().any(|r| is_marked(r, mark)),
        "the marked call is gone after a flood of fewer generations than it keeps"
    );
    // Past the burst, the flood paid for its bytes in time.
    let owed = logged.saturating_sub(CHARGE_BURST_BYTES) as f64 / CHARGE_BYTES_PER_SECOND as f64;
    eprintln!(
        "flood: 150 refused calls logged {logged} bytes in {took:?} ({} generations on disk); \
         owed {owed:.2} s",
        generations_on_disk(&log)
    );
    assert!(owed > 1.0, "the flood logged only {logged} bytes");
    assert!(
        took.as_secs_f64() >= owed * 0.9,
        "150 refused calls took {took:?}, not the {owed:.2} s their {logged} bytes cost"
    );

    // Two generations only. A session with a marked call stays open while another floods: the
    // flood needs the oldest gone, and the first session holds it.
    let log = dir.path().join("tight.jsonl");
    let log_arg = log.to_str().unwrap();
    let args = [
        "--audit-log",
        log_arg,
        "--audit-max-bytes",
        "200000",
        "--audit-generations",
        "2",
    ];
    let mut holder = RawSession::start(&exe(), &db, &args);
    holder.initialize().await;
    answers_marked(&mut holder, 2, mark).await;
    let mut session = RawSession::start(&exe(), &db, &args);
    session.initialize().await;
    flood(&mut session, 100, 150).await;
    let counts = session_counts(&mut session, 1000, None).await;
    assert_eq!(counts["audit"]["over_cap"], true, "{counts}");
    assert_eq!(counts["audit"]["generations_kept"], 3, "{counts}");
    assert!(
        all_records(&log).iter().any(|r| is_marked(r, mark)),
        "a flood pushed out the record of a session still running"
    );
    answers_a_query(&mut holder, 3, None).await;
    holder.finish().await;

    // Once that session has ended, the flood may push its generation out: the cap is real.
    flood(&mut session, 2000, 150).await;
    let counts = session_counts(&mut session, 4000, None).await;
    assert_eq!(counts["audit"]["over_cap"], false, "{counts}");
    session.finish().await;
    assert_eq!(generations_on_disk(&log), 2);
    assert!(
        !all_records(&log).iter().any(|r| is_marked(r, mark)),
        "an ended session's generation was never removed"
    );
}

/// A query whose SQL carries `mark`, answered.
async fn answers_marked(session: &mut RawSession, id: i64, mark: &str) {
    send(
        session,
        &call(json!(id), &format!("SELECT '{mark}' AS mark"), None),
    )
    .await;
    let reply = next_is_answer(session, json!(id)).await;
    assert_eq!(
        reply["result"]["structuredContent"]["status"], "success",
        "{reply}"
    );
}

/// An answered query whose record takes about 4.3 KB (its SQL is kept whole, up to 4 KB).
fn answered_sql(i: usize) -> String {
    format!("SELECT {i} AS n -- {}", "x".repeat(3960))
}

#[tokio::test(flavor = "multi_thread")]
async fn an_answered_call_flood_stays_within_the_disk_bound_and_under_audit_required_the_next_session_is_served()
 {
    let (dir, db) = cgm_db("audit-answered");
    let log = dir.path().join("audit.jsonl");
    let mark = "MARKED-required";
    let (max_bytes, generations) = (40_000u64, 3u64);
    let args = [
        "--audit-log",
        log.to_str().unwrap(),
        "--audit-required",
        "--audit-max-bytes",
        "40000",
        "--audit-generations",
        "3",
    ];
    let disk_bound = max_bytes * generations + MAX_RECORD_BYTES as u64;
    // A session that stays open, idle, with a marked call.
    let mut other = RawSession::start(&exe(), &db, &args);
    other.initialize().await;
    answers_marked(&mut other, 2, mark).await;

    let mut session = RawSession::start(&exe(), &db, &args);
    session.initialize().await;
    let calls = 120;
    let started = Instant::now();
    for i in 0..calls {
        let id = 100 + i as i64;
        send(&mut session, &call(json!(id), &answered_sql(i), None)).await;
        let reply = next_is_answer(&mut session, json!(id)).await;
        assert_eq!(
            reply["result"]["structuredContent"]["status"], "success",
            "call {i} of the flood was not answered: {reply}"
        );
        let on_disk = log_bytes(&log);
        assert!(
            on_disk <= disk_bound,
            "the log holds {on_disk} bytes, past its bound of {disk_bound}"
        );
    }
    let took = started.elapsed();
    // What the flood wrote, and the time that cost it.
    let record = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .last()
        .map_or(0, |line| line.len() as u64 + 1);
    let written = record * calls as u64;
    let owed = written.saturating_sub(CHARGE_BURST_BYTES + MAX_RECORD_BYTES as u64) as f64
        / CHARGE_BYTES_PER_SECOND as f64;
    eprintln!(
        "answered flood: {calls} calls wrote about {written} bytes in {took:?} (owed {owed:.2} s); \
         {} bytes on disk in {} generations",
        log_bytes(&log),
        generations_on_disk(&log)
    );
    assert!(owed > 1.0, "the flood wrote only {written} bytes");
    assert!(
        took.as_secs_f64() >= owed * 0.9,
        "{calls} answered calls took {took:?}, less than the {owed:.2} s their bytes cost"
    );
    assert!(
        all_records(&log).iter().any(|r| is_marked(r, mark)),
        "the flood pushed out the record of a session still running"
    );
    // The other session is still served, and so is the next one.
    answers_a_query(&mut other, 3, None).await;
    other.finish().await;
    session.finish().await;
    let mut next = RawSession::start(&exe(), &db, &args);
    next.initialize().await;
    answers_marked(&mut next, 2, "MARKED-next").await;
    next.finish().await;
    assert!(
        all_records(&log)
            .iter()
            .any(|r| is_marked(r, "MARKED-next"))
    );
    assert!(generations_on_disk(&log) as u64 <= generations);
    assert!(log_bytes(&log) <= disk_bound);
}

/// The line sequences of the tests above, as the transport fuzz target's seed corpus: one file
/// per sequence, one message per line. Run by hand after changing the tests:
/// `cargo test --release --test it transport_resilience::write_transport_fuzz_seeds -- --ignored`.
#[test]
#[ignore = "writes fuzz/corpus/transport; run by hand"]
fn write_transport_fuzz_seeds() {
    let meta = request_meta("2026-07-28");
    let mut scripts: Vec<(String, Vec<Value>)> = Vec::new();
    for (n, first) in first_notifications()
        .into_iter()
        .chain(first_replies())
        .enumerate()
    {
        scripts.push((
            format!("first-{n}-2025"),
            vec![
                first.clone(),
                initialize(1),
                call(json!(2), "SELECT 1", None),
            ],
        ));
        scripts.push((
            format!("first-{n}-2026"),
            vec![first.clone(), call(json!(1), "SELECT 1", Some(&meta))],
        ));
    }
    scripts.push((
        "bad-meta-cancel".into(),
        vec![
            call(json!(1), "SELECT 1", None),
            cancel(json!(1)),
            call(json!(3), "SELECT 1", Some(&request_meta("2099-01-01"))),
            cancel(json!(3)),
            call(json!(4), "SELECT 1", Some(&meta)),
            call(json!(5), "SELECT 1", None),
            cancel(json!(5)),
        ],
    ));
    let hold = |id: Value| {
        json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": { "name": "hold", "arguments": {} } })
    };
    scripts.push((
        "duplicate-id".into(),
        vec![
            initialize(1),
            hold(json!(777)),
            hold(json!(777)),
            call(json!(3), "SELECT 1", None),
        ],
    ));
    scripts.push((
        "duplicate-cancel".into(),
        vec![
            initialize(1),
            hold(json!(777)),
            hold(json!(777)),
            cancel(json!(777)),
            cancel(json!(777)),
            hold(json!(777)),
            hold(json!("777")),
        ],
    ));
    scripts.push((
        "flood".into(),
        std::iter::once(initialize(1))
            .chain((0..8).map(|i| call(json!(100 + i), "DELETE FROM cgm_readings", None)))
            .collect(),
    ));
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/transport");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, lines) in scripts {
        let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
        std::fs::write(dir.join(name), text).unwrap();
    }
}

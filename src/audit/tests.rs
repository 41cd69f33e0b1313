//! The audit log's tests: record bounds, escaping, rotation and the file's mode.

use super::*;
use std::time::{Duration, UNIX_EPOCH};

use serde_json::json;

#[test]
fn times_format_as_rfc3339_utc() {
    assert_eq!(rfc3339_utc(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
    // 2000-02-29 (a leap day in a century leap year) 12:34:56.789.
    let t = UNIX_EPOCH + Duration::from_millis(951_827_696_789);
    assert_eq!(rfc3339_utc(t), "2000-02-29T12:34:56.789Z");
    let t = UNIX_EPOCH + Duration::from_secs(1_795_329_702);
    assert_eq!(rfc3339_utc(t), "2026-11-22T06:41:42.000Z");
}

#[test]
fn sha256_is_the_standard_digest() {
    assert_eq!(
        sha256_hex("abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}

fn entry_with<'a>(arguments: &'a Map<String, Value>) -> AuditEntry<'a> {
    AuditEntry {
        event: event::TOOL_CALL,
        tool: Some("query"),
        arguments: Some(arguments),
        line: None,
        jsonrpc_code: None,
        status: AuditStatus::Tool(Status::Success),
        error_kind: None,
        rows: Some(1),
        bytes: 10,
        duration_ms: 1.5,
    }
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

/// A fresh directory under the system temp dir, removed by the caller.
fn scratch(tag: &str) -> PathBuf {
    use std::sync::atomic::{AtomicU32, Ordering};
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "duckgate-audit-{tag}-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn short_strings_are_recorded_whole_and_long_ones_as_prefix_length_and_digest() {
    assert_eq!(bounded_text("SELECT 1"), json!("SELECT 1"));
    let exact = "x".repeat(MAX_RECORDED_TEXT_BYTES);
    assert_eq!(bounded_text(&exact), json!(exact));
    // Two-byte characters, so a cut at 4096 bytes would split one if done by bytes.
    let long = format!("a{}", "é".repeat(3_000_000));
    let recorded = bounded_text(&long);
    assert_eq!(recorded["truncated"], true);
    assert_eq!(recorded["bytes"], long.len());
    assert_eq!(recorded["sha256"], sha256_hex(&long));
    let prefix = recorded["prefix"].as_str().unwrap();
    assert!(long.starts_with(prefix));
    assert!(prefix.len() <= MAX_RECORDED_TEXT_BYTES && prefix.len() >= MAX_RECORDED_TEXT_BYTES - 1);
}

#[test]
fn the_prefix_is_bounded_as_written_even_when_every_character_needs_an_escape() {
    let controls = "\u{1}".repeat(1_000_000);
    let recorded = bounded_text(&controls);
    let written = recorded["prefix"].to_string();
    assert!(
        written.len() <= MAX_RECORDED_TEXT_BYTES + 2,
        "{}",
        written.len()
    );
    assert!(
        written.len() > MAX_RECORDED_TEXT_BYTES - 8,
        "{}",
        written.len()
    );
    let terminators = "\u{2028}".repeat(10_000);
    let written = json_line(&bounded_text(&terminators)["prefix"]);
    assert!(
        written.len() <= MAX_RECORDED_TEXT_BYTES + 2,
        "{}",
        written.len()
    );
    assert_eq!(escaped_prefix("ab\"c", 4), "ab\"");
    assert_eq!(escaped_prefix("ab\"c", 3), "ab");
}

#[test]
fn line_terminators_serde_json_leaves_raw_are_escaped_and_read_back_the_same() {
    let text = "a\u{2028}b\u{2029}c\u{85}d\ne";
    let line = json_line(&json!({ "sql": text }));
    for raw in ['\n', '\r', '\u{85}', '\u{2028}', '\u{2029}'] {
        assert!(!line.contains(raw), "raw {raw:?} in {line}");
    }
    assert!(line.contains("\\u2028") && line.contains("\\u2029") && line.contains("\\u0085"));
    let back: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(back["sql"], text);
    // Positive control: serde_json alone leaves them raw.
    assert!(json!({ "sql": text }).to_string().contains('\u{2028}'));
    assert_eq!(escape_line_terminators("plain".into()), "plain");
}

#[test]
fn a_record_stays_one_bounded_line_whatever_the_arguments() {
    let log = AuditLog::open(Path::new("/dev/null"), false, false).unwrap();
    let many: Vec<Value> = (0..100_000).map(|i| json!(format!("c{i}"))).collect();
    let cases = [
        json!({ "sql": "x".repeat(15 << 20) }),
        json!({ "sql": "\u{1}".repeat(5 << 20) }),
        json!({ "sql": "\"".repeat(5 << 20), "table_name": "\u{2028}".repeat(1 << 20) }),
        json!({ "columns": many }),
        json!({ "k".repeat(1 << 20): 1, "\u{85}": "\u{2029}" }),
        json!({ "a": "y".repeat(4000), "b": "y".repeat(4000), "c": "y".repeat(4000) }),
    ];
    for case in cases {
        let arguments = object(case);
        let line = log.line(&entry_with(&arguments));
        assert!(line.len() < MAX_RECORD_BYTES, "{} bytes", line.len());
        for raw in ['\n', '\r', '\u{85}', '\u{2028}', '\u{2029}'] {
            assert!(!line.contains(raw), "raw {raw:?}");
        }
        let record: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(record["event"], "tool_call");
        assert_eq!(record["tool"], "query");
    }
    // The longest a record gets: a tool name past its cap, arguments past theirs, a raw line
    // that is not UTF-8 (each byte a replacement character before the cut), the longest error.
    let arguments =
        object(json!({ "k".repeat(300): "\u{1}".repeat(1 << 16), "sql": "x".repeat(9000) }));
    let name = "\u{2028}".repeat(1000);
    let raw = vec![0xffu8; 1 << 16];
    let longest = AuditEntry {
        event: event::TOOL_CALL,
        tool: Some(name.as_str()),
        arguments: Some(&arguments),
        line: Some(raw.as_slice()),
        jsonrpc_code: Some(i64::MIN),
        status: AuditStatus::Tool(Status::Error),
        error_kind: Some(AuditErrorKind::Registry(ErrorKind::SandboxUnavailable)),
        rows: Some(u64::MAX),
        bytes: usize::MAX,
        duration_ms: f64::MAX,
    };
    let line = log.line(&longest);
    assert!(line.len() < MAX_RECORD_BYTES, "{} bytes", line.len());
    // Small arguments are recorded as sent.
    let arguments = object(json!({ "sql": "SELECT 1", "limit": 5 }));
    let record: Value = serde_json::from_str(&log.line(&entry_with(&arguments))).unwrap();
    assert_eq!(
        record["arguments"],
        json!({ "sql": "SELECT 1", "limit": 5 })
    );
}

#[test]
fn redaction_hashes_the_whole_sql_before_bounding() {
    let sql = "z".repeat(1 << 20);
    let arguments = object(json!({ "sql": sql }));
    let recorded = bounded_arguments(&arguments, true);
    assert_eq!(recorded, json!({ "sql_sha256": sha256_hex(&sql) }));
}

#[test]
fn a_raw_line_is_recorded_bounded_even_when_it_is_not_utf8() {
    let line = [b'{', 0xff, 0xfe, b'x'];
    let recorded = bounded_bytes(&line);
    assert_eq!(recorded["utf8"], false);
    assert_eq!(recorded["bytes"], 4);
    assert_eq!(recorded["sha256"], sha256_hex_bytes(&line));
    let huge = vec![0xffu8; 1 << 20];
    assert!(bounded_bytes(&huge).to_string().len() < 2 * MAX_RECORDED_TEXT_BYTES);
    assert_eq!(bounded_bytes(b"not json"), json!("not json"));
}

#[test]
fn the_log_rotates_to_path_1_before_passing_the_cap_and_the_new_file_is_0600() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("rotate");
    let path = dir.join("audit.jsonl");
    let log = AuditLog::open(&path, false, true)
        .unwrap()
        .with_max_bytes(1000);
    let arguments = object(json!({ "sql": "y".repeat(300) }));
    for _ in 0..7 {
        log.record(&entry_with(&arguments)).unwrap();
    }
    let rotated = rotated_path(&path);
    assert!(rotated.exists(), "no {}", rotated.display());
    for file in [&path, &rotated] {
        let text = std::fs::read_to_string(file).unwrap();
        assert!(
            text.len() <= 1000,
            "{} has {} bytes",
            file.display(),
            text.len()
        );
        for line in text.lines() {
            serde_json::from_str::<Value>(line).unwrap();
        }
        let mode = std::fs::metadata(file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    // A record larger than the cap is written whole, alone in a fresh file.
    let big = object(json!({ "sql": "w".repeat(2000) }));
    log.record(&entry_with(&big)).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 1);
    assert!(text.contains(&"w".repeat(2000)));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_failed_rotation_fails_the_record_only_when_required() {
    let dir = scratch("rotate-fail");
    let path = dir.join("audit.jsonl");
    // A directory where the rotated file would go: the rename fails (also as root).
    std::fs::create_dir(rotated_path(&path)).unwrap();
    let arguments = object(json!({ "sql": "y".repeat(300) }));
    let required = AuditLog::open(&path, false, true)
        .unwrap()
        .with_max_bytes(600);
    required.record(&entry_with(&arguments)).unwrap();
    let error = required.record(&entry_with(&arguments)).unwrap_err();
    assert!(matches!(error, AuditError::Rotate { .. }), "{error}");
    assert!(error.to_string().contains("cannot rotate"), "{error}");
    assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 1);
    let lenient = AuditLog::open(&path, false, false)
        .unwrap()
        .with_max_bytes(600);
    lenient.record(&entry_with(&arguments)).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 2);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A refused call's record.
fn refused_with<'a>(arguments: &'a Map<String, Value>) -> AuditEntry<'a> {
    AuditEntry {
        status: AuditStatus::Tool(Status::Refused),
        error_kind: Some(AuditErrorKind::Registry(ErrorKind::PolicyBlocked)),
        ..entry_with(arguments)
    }
}

/// Every record of every generation of `path` on disk, joined.
fn every_generation(path: &Path) -> String {
    let mut text = std::fs::read_to_string(path).unwrap_or_default();
    let mut index = 1;
    while let Ok(more) = std::fs::read_to_string(generation_path(path, index)) {
        text.push_str(&more);
        index += 1;
    }
    text
}

/// Files of the log on disk, `PATH` included, and the largest one's size.
fn files_on_disk(path: &Path) -> (u32, u64) {
    let mut count = 0;
    let mut largest = 0;
    for index in 0.. {
        let file = if index == 0 {
            path.to_path_buf()
        } else {
            generation_path(path, index)
        };
        match std::fs::metadata(&file) {
            Ok(meta) => {
                count += 1;
                largest = largest.max(meta.len());
            }
            Err(_) => break,
        }
    }
    (count, largest)
}

#[test]
fn another_running_servers_records_are_never_removed_and_a_server_alone_keeps_the_cap() {
    let dir = scratch("generations");
    let path = dir.join("audit.jsonl");
    let marked = object(json!({ "sql": "SELECT 'MARKED'" }));
    let filler = object(json!({ "sql": "y".repeat(300) }));
    let open = |generations| {
        AuditLog::open(&path, false, false)
            .unwrap()
            .with_max_bytes(1000)
            .with_generations(generations)
    };
    let first = open(2);
    first.record(&entry_with(&marked)).unwrap();
    // A second server floods the same log: the first, idle, holds the generation its record is
    // in, so the flood goes past the cap by that one generation and no further.
    let second = open(2);
    for _ in 0..80 {
        second.record(&entry_with(&filler)).unwrap();
        let (files, largest) = files_on_disk(&path);
        assert!(
            files <= 3 && largest <= 1000,
            "{files} files, {largest} bytes"
        );
    }
    assert!(every_generation(&path).contains("MARKED"));
    assert!(second.stats().over_cap, "{:?}", second.stats());
    // Once the first has ended, its generation goes, and the log is back at its cap.
    drop(first);
    for _ in 0..10 {
        second.record(&entry_with(&filler)).unwrap();
    }
    assert!(!every_generation(&path).contains("MARKED"));
    let stats = second.stats();
    assert_eq!(
        (stats.generations_kept, stats.over_cap),
        (2, false),
        "{stats:?}"
    );
    assert_eq!(files_on_disk(&path).0, 2);
    // A server alone never passes the cap, however much it writes.
    drop(second);
    let third = open(3);
    for _ in 0..120 {
        third.record(&refused_with(&filler)).unwrap();
        assert!(files_on_disk(&path).0 <= 3);
    }
    assert!(!third.stats().over_cap);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_servers_own_records_go_only_after_it_has_filled_as_many_newer_generations_as_it_keeps() {
    let dir = scratch("own");
    let path = dir.join("audit.jsonl");
    let marked = object(json!({ "sql": "SELECT 'MARKED'" }));
    let filler = object(json!({ "sql": "y".repeat(300) }));
    let generations = 4;
    let max_bytes = 1000;
    let log = AuditLog::open(&path, false, true)
        .unwrap()
        .with_max_bytes(max_bytes)
        .with_generations(generations);
    log.record(&entry_with(&marked)).unwrap();
    let record = log.line(&entry_with(&filler)).len() as u64 + 1;
    let mut written_after = 0;
    while every_generation(&path).contains("MARKED") {
        log.record(&entry_with(&filler)).unwrap();
        written_after += record;
        assert!(files_on_disk(&path).0 <= generations);
        assert!(written_after < 10 * max_bytes, "never removed");
    }
    // Its generation was held until the server had written into `generations - 1` newer ones:
    // at least `generations - 2` whole generations of its own records.
    let floor = u64::from(generations - 2) * max_bytes;
    assert!(
        written_after >= floor,
        "gone after {written_after} bytes, before {floor}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn under_audit_required_a_flood_is_recorded_within_the_cap_and_never_refused() {
    let dir = scratch("required");
    let path = dir.join("audit.jsonl");
    let filler = object(json!({ "sql": "y".repeat(300) }));
    let log = AuditLog::open(&path, false, true)
        .unwrap()
        .with_max_bytes(1000)
        .with_generations(2);
    for _ in 0..200 {
        log.record(&refused_with(&filler)).unwrap();
        let (files, largest) = files_on_disk(&path);
        assert!(
            files <= 2 && largest <= 1000,
            "{files} files, {largest} bytes"
        );
    }
    for line in every_generation(&path).lines() {
        serde_json::from_str::<Value>(line).unwrap();
    }
    let stats = log.stats();
    assert_eq!(
        (stats.generations_kept, stats.over_cap),
        (2, false),
        "{stats:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn every_record_is_charged_answered_calls_too() {
    let log = AuditLog::open(Path::new("/dev/null"), false, false).unwrap();
    let arguments = object(json!({ "sql": "z".repeat(3000) }));
    for entry in [entry_with(&arguments), refused_with(&arguments)] {
        let log = AuditLog::open(Path::new("/dev/null"), false, false).unwrap();
        let bytes = log.line(&entry).len() as u64 + 1;
        let within = CHARGE_BURST_BYTES / bytes;
        for _ in 0..within {
            assert_eq!(log.record(&entry).unwrap(), Duration::ZERO);
        }
        // Past the burst, each record owes its bytes at the charged rate (less what time paid).
        let mut owed = Duration::ZERO;
        for _ in 0..10 {
            owed = log.record(&entry).unwrap();
        }
        let expected = (within + 10) * bytes - CHARGE_BURST_BYTES;
        let expected = Duration::from_secs_f64(expected as f64 / CHARGE_BYTES_PER_SECOND as f64);
        assert!(
            owed <= expected,
            "{:?}: {owed:?} > {expected:?}",
            entry.status
        );
        assert!(
            owed + Duration::from_millis(200) >= expected,
            "{:?}: {owed:?} < {expected:?}",
            entry.status
        );
        assert!(log.pending_charge() <= owed);
    }
    // A tool call is charged its largest record as its line is read, and settled by its record.
    let calls = CHARGE_BURST_BYTES / MAX_RECORD_BYTES as u64 + 4;
    for _ in 0..calls {
        log.charge_tool_call();
    }
    assert!(log.pending_charge() > Duration::ZERO);
    for _ in 0..calls {
        log.record(&entry_with(&object(json!({ "sql": "SELECT 1" }))))
            .unwrap();
    }
    assert_eq!(log.pending_charge(), Duration::ZERO);
}

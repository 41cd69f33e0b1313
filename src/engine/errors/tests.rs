//! The mapping of DuckDB's errors, tried on real DuckDB errors.

use super::*;

#[test]
fn a_not_found_error_carries_the_name_duckdb_could_not_find() {
    let column = |name: &str| {
        Some(MissingName {
            name: name.into(),
            kind: MissingKind::Column,
        })
    };
    assert_eq!(
        missing_name(
            "Binder Error: Referenced column \"glucos\" not found in FROM clause!\nCandidate bindings: \"glucose\""
        ),
        column("glucos")
    );
    assert_eq!(
        missing_name("Binder Error: Table \"d\" does not have a column named \"devic_id\""),
        column("devic_id")
    );
    assert_eq!(
        missing_name("Catalog Error: Table with name \"readngs\" does not exist!"),
        Some(MissingName {
            name: "readngs".into(),
            kind: MissingKind::Other
        })
    );
    assert_eq!(
        missing_name("Catalog Error: Scalar Function with name foo does not exist!"),
        None
    );
}

#[test]
fn an_out_of_memory_error_names_the_limit_it_met_and_the_next_step() {
    let facts = MemoryFacts {
        limit_bytes: 1 << 30,
        cap_bytes: Some(3 << 29),
        max_temp_bytes: Some(10 << 30),
    };
    let oom = |text: &str| facts.explain(worker_error(ErrorKind::ResourceLimit, text));
    let cap =
        oom("Out of Memory Error: Failed to allocate block of 16777216 bytes (bad allocation)");
    assert!(
        cap.message.contains("memory cap of 1.5 GiB"),
        "{}",
        cap.message
    );
    assert!(cap.message.contains("--memory-budget"), "{}", cap.message);
    let temp = oom(
        "Out of Memory Error: failed to offload data block of size 256.0 KiB (9.9 GiB/10.0 GiB used). This limit was set by the 'max_temp_directory_size' setting.",
    );
    assert!(
        temp.message.contains("10.0 GiB of temporary disk space"),
        "{}",
        temp.message
    );
    assert!(temp.message.contains("--max-temp-size"), "{}", temp.message);
    let limit = oom(
        "Out of Memory Error: could not allocate block of size 256.0 KiB (1.0 GiB/1.0 GiB used)",
    );
    assert!(
        limit
            .message
            .contains("memory_limit of 1.0 GiB even with spilling"),
        "{}",
        limit.message
    );
    let efbig = facts.explain(worker_error(
        ErrorKind::ResourceLimit,
        "IO Error: Could not write file \"/tmp/w-0/duckdb_temp_storage_S192K-0.tmp\": File too large",
    ));
    assert_eq!(efbig.kind, ErrorKind::ResourceLimit, "{}", efbig.message);
    assert!(
        efbig.message.contains("temporary disk space"),
        "{}",
        efbig.message
    );
    let no_spill = MemoryFacts {
        max_temp_bytes: None,
        ..facts
    }
    .explain(worker_error(
        ErrorKind::ResourceLimit,
        "Out of Memory Error: could not allocate",
    ));
    assert!(
        no_spill.message.contains("--max-temp-size 0"),
        "{}",
        no_spill.message
    );
    // Anything else is left as it was.
    let other = facts.explain(worker_error(ErrorKind::SyntaxError, "Parser Error: x"));
    assert_eq!(other.message, "Parser Error: x");
}

/// A connection to a fresh in-memory DuckDB with the plan reader's error reader, as the
/// worker opens one, and a database file with one table for the read-only case.
fn duckdb(settings: &[(&str, &str)]) -> duckdb::Connection {
    duckgate_plan_reader::open_in_memory(settings, &duckgate_plan_reader::FolderMounts::NONE)
        .unwrap()
        .0
}

/// Run `sql` to its end (streaming, as the worker does) and map its failure.
fn failure_of(conn: &duckdb::Connection, sql: &str) -> Failure {
    let run = || -> duckdb::Result<()> {
        let mut stmt = conn.prepare(sql)?;
        let mut rows = stmt.query([])?;
        while rows.next()?.is_some() {}
        Ok(())
    };
    query_error(&run().expect_err(sql))
}

#[test]
fn whose_words_a_message_holds_comes_from_duckdbs_error_type() {
    let conn = duckdb(&[]);
    let dir = std::env::temp_dir().join(format!("dg-origin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let about_the_query = [
        // Binder: a GROUP BY the query got wrong, in the names it wrote.
        "SELECT i, count(*) FROM range(3) t(i)",
        // Conversion, found while rows stream.
        "SELECT CAST(CASE WHEN i < 100000 THEN '1' ELSE 'x' END AS INTEGER) FROM range(200000) t(i)",
        // Out of range; invalid input to a function.
        "SELECT 2147483647::INTEGER + 1",
        "SELECT list_extract([1, 2], 'a')",
        // DuckDB's parser, which records no type: the query's own text.
        "SELEC 1",
    ];
    for sql in about_the_query {
        let failure = failure_of(&conn, sql);
        assert_eq!(
            failure.origin,
            MessageOrigin::DuckdbAboutTheQuery,
            "{sql}: {}",
            failure.message
        );
    }
    // A file DuckDB could not open (its path), and one DuckDB's configuration refuses to
    // open: DuckDB's words about its files and settings.
    let missing_file = dir.join("absent.csv");
    let closed = duckdb(&[("enable_external_access", "false")]);
    let read = format!("SELECT * FROM read_csv('{}')", missing_file.display());
    for (conn, sql) in [(&conn, &read), (&closed, &read)] {
        let failure = failure_of(conn, sql);
        assert_ne!(failure.kind, ErrorKind::UnknownName, "{sql}: {failure:?}");
        assert_eq!(
            failure.origin,
            MessageOrigin::DuckdbAboutItself,
            "{sql}: {}",
            failure.message
        );
    }
    // The crate's own failures say nothing of whose words they hold.
    let crate_error = query_error(&duckdb::Error::InvalidColumnIndex(3));
    assert_eq!(crate_error.origin, MessageOrigin::DuckdbAboutItself);
    // duckgate's own sentences.
    assert_eq!(
        worker_error(ErrorKind::PolicyBlocked, "refused").origin,
        MessageOrigin::Duckgate
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn kinds_come_from_duckdbs_typed_errors() {
    let conn = duckdb(&[]);
    let binder = failure_of(&conn, "SELECT glucos FROM (SELECT 1 AS glucose)");
    assert_eq!(binder.kind, ErrorKind::UnknownName, "{}", binder.message);
    assert_eq!(
        binder.missing,
        Some(MissingName {
            name: "glucos".into(),
            kind: MissingKind::Column
        })
    );
    assert!(
        binder.message.starts_with("Binder Error:"),
        "{}",
        binder.message
    );
    let catalog = failure_of(&conn, "SELECT * FROM readngs");
    assert_eq!(catalog.kind, ErrorKind::UnknownName, "{}", catalog.message);
    assert_eq!(
        catalog.missing,
        Some(MissingName {
            name: "readngs".into(),
            kind: MissingKind::Other
        })
    );
    let no_function = failure_of(&conn, "SELECT 'a' + 1");
    assert_eq!(
        no_function.kind,
        ErrorKind::DatabaseError,
        "{}",
        no_function.message
    );
    // Found only while rows stream: the first 100,000 rows convert.
    let conversion = failure_of(
        &conn,
        "SELECT CAST(CASE WHEN i < 100000 THEN '1' ELSE 'x' END AS INTEGER) FROM range(200000) t(i)",
    );
    assert_eq!(
        conversion.kind,
        ErrorKind::DatabaseError,
        "{}",
        conversion.message
    );
    assert!(
        conversion.message.starts_with("Conversion Error:"),
        "{}",
        conversion.message
    );
    let locked = duckdb(&[("lock_configuration", "true")]);
    let setting = failure_of(&locked, "SET threads = 1");
    assert_eq!(
        setting.kind,
        ErrorKind::PolicyBlocked,
        "{}",
        setting.message
    );
    let closed = duckdb(&[("enable_external_access", "false")]);
    let file = failure_of(&closed, "SELECT * FROM read_csv('/etc/hostname')");
    assert_eq!(file.kind, ErrorKind::PolicyBlocked, "{}", file.message);
    assert!(
        file.message.starts_with("Permission Error:"),
        "{}",
        file.message
    );
}

#[test]
fn running_out_of_memory_is_a_resource_limit_from_its_type() {
    let conn = duckdb(&[("memory_limit", "16MB"), ("temp_directory", "")]);
    let oom = failure_of(
        &conn,
        "SELECT count(DISTINCT i), list(i)[1] FROM range(50000000) r(i)",
    );
    assert_eq!(oom.kind, ErrorKind::ResourceLimit, "{}", oom.message);
    assert!(
        oom.message.starts_with("Out of Memory Error:"),
        "{}",
        oom.message
    );
}

#[test]
fn a_write_to_the_read_only_database_is_refused_by_policy() {
    let dir = crate::engine::tests::TempDir::new("errors-read-only");
    let file = dir.path().join("ro.duckdb");
    let path = file.to_str().unwrap().replace('\'', "''");
    let conn = duckdb(&[]);
    conn.execute_batch(&format!(
        "ATTACH '{path}' AS w; CREATE TABLE w.t (i INTEGER); DETACH w; \
         ATTACH '{path}' AS ro (READ_ONLY);"
    ))
    .unwrap();
    let write = failure_of(&conn, "INSERT INTO ro.t VALUES (1)");
    assert_eq!(write.kind, ErrorKind::PolicyBlocked, "{}", write.message);
}

#[test]
fn a_failure_before_any_query_began_is_not_given_an_earlier_queries_type() {
    let conn = duckdb(&[]);
    // A typed permission error recorded, never taken...
    let closed = duckdb(&[("enable_external_access", "false")]);
    let _ = closed.prepare("SELECT * FROM read_csv('/etc/hostname')");
    // ...then a statement that fails in the parser, before any query begins: no type, so
    // not the permission error's `policy_blocked`.
    let parse = failure_of(&conn, "SELEC 1");
    assert_eq!(parse.kind, ErrorKind::SyntaxError, "{}", parse.message);
    let crate_error = query_error(&duckdb::Error::InvalidColumnIndex(3));
    assert_eq!(crate_error.kind, ErrorKind::DatabaseError);
}

#[test]
fn a_full_spill_disk_is_a_resource_limit_from_its_errno() {
    let io = |errno: &str| DuckdbError {
        database: 1,
        connection_id: 1,
        exception_type: Code::Known(ExceptionType::Io),
        message: "IO Error: Could not write file \"/tmp/w-0/t.tmp\"".into(),
        extra_info: [("errno".to_owned(), errno.to_owned())].into(),
    };
    let code = |errno: Errno| (errno as i32).to_string();
    assert_eq!(
        classify(&io(&code(Errno::EFBIG))).0,
        ErrorKind::ResourceLimit
    );
    assert_eq!(
        classify(&io(&code(Errno::ENOSPC))).0,
        ErrorKind::ResourceLimit
    );
    assert_eq!(
        classify(&io(&code(Errno::EACCES))).0,
        ErrorKind::DatabaseError
    );
    // A code this build does not know is a database error, whatever its message says.
    let unknown = DuckdbError {
        exception_type: Code::Unrecognised {
            code: 200,
            label: String::new(),
        },
        message: "Permission Error: x".into(),
        ..io("28")
    };
    assert_eq!(classify(&unknown), (ErrorKind::DatabaseError, None));
}

//! Table-driven tests over the test kit's case tables (`duckgate_test_kit::corpus`), plus
//! targeted checks of messages and caps.

use duckgate_test_kit::corpus::{
    self, ACCEPTED, DUCKDB_GRAMMAR, Expect, LEFT_TO_THE_WORKER, REFUSED, UNPARSED,
};
use duckgate_validate::error::{ErrorKind, messages};
use duckgate_validate::validate::{
    Accepted, Catalog, CatalogRelation, Limits, Refusal, StatementKind, validate_sql,
};

fn run(sql: &str) -> Result<Accepted, Refusal> {
    validate_sql(sql, &corpus::catalog(), &Limits::default())
}

/// Fail on every case of `cases` that is refused.
fn assert_all_accepted(cases: &[&str]) {
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|sql| {
            run(sql).err().map(|r| {
                format!(
                    "{sql}\n    -> {:?}: {} [{}]",
                    r.kind, r.message, r.construct
                )
            })
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} false refusals:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_everyday_query_is_accepted() {
    assert_all_accepted(ACCEPTED);
}

/// DuckDB's grammar that sqlparser misreads is never refused: walked when sqlparser reads it as
/// DuckDB does, left to the worker otherwise.
#[test]
fn duckdb_grammar_sqlparser_misreads_is_never_refused() {
    assert_all_accepted(DUCKDB_GRAMMAR);
    // What sqlparser reads is walked, with what DuckDB reads in it.
    let walked = |sql: &str| run(sql).expect(sql);
    assert_eq!(walked("CALL range(10)").kind, StatementKind::Call);
    assert_eq!(walked("CALL range(10)").functions, ["range"]);
    assert_eq!(walked("DESCRIBE TABLES").kind, StatementKind::Show);
    assert_eq!(
        walked("SELECT count(*) FROM analytics.archive.daily").relations,
        ["archive.daily"]
    );
}

/// A catalog that is DuckDB's own, or a nested schema the database does not have, is still
/// refused; so is `DESCRIBE TABLES` under privacy rules, like `SHOW TABLES`.
#[test]
fn names_duckdb_2_reads_as_nested_schemas_resolve_only_to_the_databases_schemas() {
    for sql in [
        "SELECT * FROM memory.archive.daily",
        "SELECT * FROM system.archive.daily",
        "SELECT * FROM analytics.archive.missing",
        "SELECT * FROM health.analytics.nowhere.daily",
    ] {
        assert_eq!(refusal(sql).kind, ErrorKind::UnknownName, "{sql}");
    }
    let restricted = Catalog {
        restricted: true,
        ..corpus::catalog()
    };
    let listing = validate_sql("DESCRIBE TABLES", &restricted, &Limits::default()).unwrap_err();
    assert_eq!(listing.kind, ErrorKind::PolicyBlocked);
}

fn refusal_matches(expect: Expect, refusal: &Refusal) -> bool {
    refusal.kind == expect.kind()
        && match expect {
            Expect::Write => refusal.message == messages::WRITE_REFUSED,
            Expect::Multiple => refusal.message == messages::MULTIPLE_STATEMENTS,
            Expect::Blocked => {
                refusal.message != messages::WRITE_REFUSED
                    && !refusal.construct.is_empty()
                    && !refusal.suggestion.is_empty()
            }
            Expect::Unknown | Expect::Syntax | Expect::Invalid => !refusal.message.is_empty(),
        }
}

#[test]
fn every_forbidden_statement_is_refused_with_the_right_kind_and_message() {
    let failures: Vec<String> = REFUSED
        .iter()
        .filter_map(|(sql, expect)| match run(sql) {
            Ok(accepted) => Some(format!(
                "{sql:?}\n    -> ACCEPTED {accepted:?}, expected {expect:?}"
            )),
            Err(r) if !refusal_matches(*expect, &r) => Some(format!(
                "{sql:?}\n    -> {:?} {:?} [{}], expected {expect:?}",
                r.kind, r.message, r.construct
            )),
            Err(_) => None,
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} wrong verdicts:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// What the parent cannot read as DuckDB does is never accepted as a query it walked: it goes on
/// to the worker unread.
#[test]
fn text_the_parent_cannot_lex_as_duckdb_does_is_left_to_the_worker_unread() {
    for sql in LEFT_TO_THE_WORKER {
        match run(sql) {
            Ok(accepted) => {
                assert_eq!(accepted.kind, StatementKind::Unparsed, "{sql:?}");
                assert!(accepted.relations.is_empty() && accepted.functions.is_empty());
            }
            Err(r) => panic!("{sql:?} refused without evidence: {r:?}"),
        }
    }
}

fn refusal(sql: &str) -> Refusal {
    match run(sql) {
        Ok(accepted) => panic!("accepted {sql:?}: {accepted:?}"),
        Err(r) => r,
    }
}

#[test]
fn the_tables_are_as_large_as_the_issue_demands() {
    assert!(REFUSED.len() >= 80, "only {} refused cases", REFUSED.len());
    assert!(
        ACCEPTED.len() >= 40,
        "only {} accepted cases",
        ACCEPTED.len()
    );
}

#[test]
fn seed_messages_are_word_for_word() {
    let write = refusal("DELETE FROM readings");
    assert_eq!(write.kind, ErrorKind::PolicyBlocked);
    assert_eq!(
        write.message,
        "Only read-only SELECT queries are allowed. Write operations (INSERT, UPDATE, DELETE, DROP, etc.) are not permitted."
    );
    assert_eq!(write.construct, "DELETE");
    let several = refusal("SELECT 1; SELECT 2");
    assert_eq!(several.kind, ErrorKind::MultipleStatements);
    assert_eq!(
        several.message,
        "Only single SQL statements are allowed. Remove semicolons to execute one query at a time."
    );
}

#[test]
fn file_reader_refusal_names_the_function_and_the_next_step() {
    let r = refusal("SELECT * FROM read_csv('/etc/passwd')");
    assert_eq!(r.kind, ErrorKind::PolicyBlocked);
    assert_eq!(
        r.message,
        "read_csv reads files, and the operator declared no folder of files (--files NAME=DIR): duckgate reads only the database's own tables."
    );
    assert_eq!(r.construct, "read_csv");
}

#[test]
fn with_a_declared_folder_its_files_are_relations_and_the_readers_are_allowed() {
    let catalog = Catalog {
        folders: vec!["exports".into()],
        ..corpus::catalog()
    };
    for sql in [
        "SELECT * FROM read_csv('exports/readings.csv')",
        "SELECT * FROM read_parquet('exports/2026/*.parquet', hive_partitioning = true)",
        "SELECT * FROM 'exports/readings.parquet'",
        "SELECT * FROM \"exports/readings.parquet\"",
        "SELECT * FROM parquet_schema('exports/readings.parquet')",
        "SELECT * FROM readings r JOIN 'exports/x.csv' x USING (ts)",
    ] {
        assert!(
            validate_sql(sql, &catalog, &Limits::default()).is_ok(),
            "{sql}"
        );
    }
    for sql in [
        "SELECT * FROM 'other/readings.csv'",
        "SELECT * FROM 'exports.csv'",
        "SELECT * FROM 'exports/../secret.csv'",
        "SELECT * FROM read_text('exports/readings.csv')",
        "SELECT * FROM read_blob('exports/readings.csv')",
    ] {
        let refused = validate_sql(sql, &catalog, &Limits::default()).unwrap_err();
        assert_eq!(refused.kind, ErrorKind::PolicyBlocked, "{sql}");
    }
}

#[test]
fn replacement_scans_are_named_as_files() {
    for sql in [
        "SELECT * FROM 'glucose.csv'",
        "SELECT * FROM \"glucose.csv\"",
        "FROM 'glucose.csv'",
    ] {
        let r = refusal(sql);
        assert_eq!(r.kind, ErrorKind::PolicyBlocked, "{sql}");
        assert!(
            r.message.contains("glucose.csv") && r.message.contains("file"),
            "{sql}: {}",
            r.message
        );
    }
}

#[test]
fn unknown_relation_names_it() {
    let r = refusal("SELECT * FROM readngs");
    assert_eq!(r.kind, ErrorKind::UnknownName);
    assert_eq!(r.construct, "readngs");
    assert!(r.message.contains("readngs"));
}

#[test]
fn unknown_relation_in_another_schema_suggests_qualifying_it() {
    let r = refusal("SELECT * FROM hourly");
    assert_eq!(r.kind, ErrorKind::UnknownName);
    assert!(
        r.suggestion.contains("analytics.hourly"),
        "{}",
        r.suggestion
    );
}

#[test]
fn a_trailing_semicolon_alone_is_fine() {
    for sql in [
        "SELECT 1;",
        "SELECT 1 ;;",
        "SELECT 1; -- bye",
        "SELECT 1;\n/* end */\n",
    ] {
        assert!(run(sql).is_ok(), "{sql:?}: {:?}", run(sql));
    }
}

#[test]
fn accepted_reports_what_the_query_touches() {
    let accepted = run(
        "WITH d AS (SELECT * FROM devices) SELECT upper(r.trend), count(*) FROM READINGS r \
         JOIN d USING (device_id), analytics.hourly h GROUP BY ALL",
    )
    .unwrap();
    assert_eq!(accepted.kind, StatementKind::Query);
    assert_eq!(
        accepted.relations,
        ["main.devices", "main.readings", "analytics.hourly"]
    );
    assert_eq!(accepted.functions, ["upper", "count"]);
}

#[test]
fn statement_kinds_are_reported() {
    let kind = |sql: &str| run(sql).unwrap().kind;
    assert_eq!(kind("DESCRIBE readings"), StatementKind::Describe);
    assert_eq!(kind("SHOW TABLES"), StatementKind::Show);
    assert_eq!(kind("SUMMARIZE main.readings"), StatementKind::Summarize);
    assert_eq!(kind("SUMMARIZE SELECT 1"), StatementKind::Summarize);
    assert_eq!(
        kind("EXPLAIN ANALYZE SELECT * FROM readings"),
        StatementKind::Explain
    );
    assert_eq!(kind("VALUES (1)"), StatementKind::Query);
}

#[test]
fn cte_names_shadow_and_scope_like_duckdb() {
    // A CTE may be named like a catalog table, and is visible in later CTEs and the body.
    assert!(run("WITH readings AS (SELECT 1 AS x) SELECT * FROM readings").is_ok());
    assert!(run("WITH a AS (SELECT 1), b AS (SELECT * FROM a) SELECT * FROM b").is_ok());
    // It is not visible outside its query.
    assert_eq!(
        refusal("SELECT * FROM (WITH a AS (SELECT 1) SELECT * FROM a), a").kind,
        ErrorKind::UnknownName
    );
    // A non-recursive CTE does not see itself; a recursive one does in the recursive term of a
    // UNION (more in unparsed_tests.rs).
    assert_eq!(
        refusal("WITH x AS (SELECT * FROM x) SELECT 1").kind,
        ErrorKind::UnknownName
    );
    assert!(run("WITH RECURSIVE x AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM x WHERE n < 3) SELECT * FROM x").is_ok());
    // A CTE named like a file does not make other file names readable.
    assert_eq!(
        refusal("WITH \"x.csv\" AS (SELECT 1) SELECT * FROM (SELECT * FROM \"y.csv\")").kind,
        ErrorKind::PolicyBlocked
    );
}

#[test]
fn names_resolve_case_insensitively_and_schema_qualified() {
    for sql in [
        "SELECT * FROM Readings",
        "SELECT * FROM MAIN.READINGS",
        "SELECT * FROM \"readings\"",
        "SELECT * FROM Analytics.Hourly",
    ] {
        assert!(run(sql).is_ok(), "{sql}: {:?}", run(sql));
    }
    // A relation without a schema in the snapshot is taken as `main`.
    let catalog = Catalog {
        relations: vec![CatalogRelation {
            database: String::new(),
            schema: String::new(),
            name: "t".into(),
            columns: vec![],
        }],
        restricted: false,
        database: String::new(),
        other_databases: Vec::new(),
        table_macros: None,
        folders: Vec::new(),
    };
    assert_eq!(
        validate_sql("SELECT * FROM t", &catalog, &Limits::default())
            .unwrap()
            .relations,
        ["main.t"]
    );
}

#[test]
fn sql_length_is_capped_before_parsing() {
    let limits = Limits {
        max_sql_bytes: 100,
        ..Limits::default()
    };
    let long = format!("SELECT 1 AS x{}", " ".repeat(100));
    let r = validate_sql(&long, &corpus::catalog(), &limits).unwrap_err();
    assert_eq!(r.kind, ErrorKind::InvalidArgument);
    assert!(r.message.contains("100"), "{}", r.message);
    // Garbage over the cap is refused for its length, not parsed.
    let garbage = "(".repeat(101);
    assert_eq!(
        validate_sql(&garbage, &corpus::catalog(), &limits)
            .unwrap_err()
            .kind,
        ErrorKind::InvalidArgument
    );
    // The default cap is 100 KB.
    let big = format!("SELECT 1 -- {}", "x".repeat(100 * 1024));
    assert_eq!(refusal(&big).kind, ErrorKind::InvalidArgument);
}

#[test]
fn nesting_is_capped_by_the_parser_recursion_limit() {
    let deep = format!("SELECT {}1{}", "(".repeat(200), ")".repeat(200));
    assert_eq!(refusal(&deep).kind, ErrorKind::InvalidArgument);
    let subqueries = format!("SELECT {}1{}", "(SELECT ".repeat(60), ")".repeat(60));
    assert_eq!(refusal(&subqueries).kind, ErrorKind::InvalidArgument);
    // Modest nesting is fine.
    assert!(run(&format!("SELECT {}1{}", "(".repeat(10), ")".repeat(10))).is_ok());
}

#[test]
fn long_operator_chains_are_capped_and_do_not_overflow_a_small_stack() {
    // `1+1+…` nests without parser recursion; the walk has its own cap, and must not blow a
    // 1 MiB stack (tokio worker threads have 2 MiB) before reaching it.
    let handle = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(|| {
            // Short enough to be validated on the caller's stack; deep enough to need it.
            let inline = format!("SELECT 1{}", "+1".repeat(700));
            assert!(run(&inline).is_ok(), "{:?}", run(&inline));
            let near_cap = format!("SELECT 1{}", "+1".repeat(990));
            let over_cap = format!("SELECT 1{}", "+1".repeat(20_000));
            let ors = format!(
                "SELECT * FROM readings WHERE glucose = 0{}",
                " OR glucose = 1".repeat(5_000)
            );
            (
                run(&near_cap).map(|_| ()),
                refusal(&over_cap).kind,
                refusal(&ors).kind,
            )
        })
        .unwrap();
    let (near, over, ors) = handle.join().expect("the validator overflowed its stack");
    assert!(near.is_ok(), "{near:?}");
    assert_eq!(over, ErrorKind::InvalidArgument);
    assert_eq!(ors, ErrorKind::InvalidArgument);
}

#[test]
fn identifiers_are_capped() {
    let long_name = "a".repeat(300);
    assert_eq!(
        refusal(&format!("SELECT 1 AS {long_name}")).kind,
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        refusal(&format!("SELECT 1 AS \"{long_name}\"")).kind,
        ErrorKind::InvalidArgument
    );
    assert!(run(&format!("SELECT 1 AS {}", "a".repeat(255))).is_ok());
}

#[test]
fn quoted_strings_and_identifiers_may_hold_anything_harmless() {
    for sql in [
        "SELECT 'DROP TABLE readings; --' AS \"; DELETE FROM readings\"",
        "SELECT '/* not a comment */', '-- nor this', '''quoted''' AS q",
        "SELECT 'read_csv(''/etc/passwd'')' AS s",
        "SELECT \"read_csv\" FROM (SELECT 1 AS \"read_csv\")",
        "SELECT 'ünïcödé ✓', 'tab\there'",
        "SELECT 1 -- comment with 'quote and \"dq\n",
    ] {
        assert!(run(sql).is_ok(), "{sql}: {:?}", run(sql));
    }
}

/// Regenerates the fuzz seed corpus from the case tables: `cargo test --release -p
/// duckgate-validate --test validator tests::write_fuzz_seed_corpus -- --ignored`.
#[test]
#[ignore = "writes fuzz/corpus; run by hand when the case tables change"]
fn write_fuzz_seed_corpus() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus");
    let bytes_dir = root.join("validate_bytes");
    let structured_dir = root.join("validate_structured");
    std::fs::create_dir_all(&bytes_dir).unwrap();
    std::fs::create_dir_all(&structured_dir).unwrap();
    let texts = ACCEPTED
        .iter()
        .copied()
        .chain(UNPARSED.iter().copied())
        .chain(REFUSED.iter().map(|(sql, _)| *sql));
    for (i, sql) in texts.enumerate() {
        std::fs::write(bytes_dir.join(format!("case-{i:03}.sql")), sql).unwrap();
    }
    // Structured inputs are raw bytes for `arbitrary`; a spread of fixed patterns.
    for seed in 0u32..24 {
        let bytes: Vec<u8> = (0..256u32)
            .map(|i| {
                (i.wrapping_mul(2_654_435_761)
                    .wrapping_add(seed.wrapping_mul(40_503))
                    >> 13) as u8
            })
            .collect();
        std::fs::write(structured_dir.join(format!("seed-{seed:02}.bin")), bytes).unwrap();
    }
}

#[test]
fn lexical_positions_hold_across_lines_and_multibyte_text() {
    let sql = "SELECT 'é' AS \"ø\" -- ü\n,\t'ß' /* ñ\n ; */ AS x,\r\n  $$€;$$ AS y -- end ;";
    assert!(run(sql).is_ok(), "{:?}", run(sql));
    // The same shapes with a real second statement after them are still caught.
    let two = "SELECT 'é' -- ü\n; SELECT 'ß' /* ñ */";
    assert_eq!(refusal(two).kind, ErrorKind::MultipleStatements);
}

/// With the catalog's list of stored table macros, a table function that is neither built in
/// nor one of them does not exist, and the validator refuses it on its own; without the list it
/// is left to DuckDB's binder.
#[test]
fn a_table_function_neither_built_in_nor_stored_is_refused_once_the_catalog_lists_macros() {
    let listed = Catalog {
        table_macros: Some(vec!["recent_boluses".into()]),
        folders: Vec::new(),
        ..corpus::catalog()
    };
    let limits = Limits::default();
    for sql in [
        "SELECT * FROM write_csv('/tmp/x.csv')",
        "SELECT * FROM a_function_nobody_made()",
        "CALL write_csv('/tmp/x')",
    ] {
        let refusal = validate_sql(sql, &listed, &limits).unwrap_err();
        assert_eq!(refusal.kind, ErrorKind::PolicyBlocked, "{sql}: {refusal:?}");
    }
    for sql in [
        "SELECT * FROM recent_boluses()",
        "SELECT * FROM Recent_Boluses()",
        "SELECT * FROM range(3)",
    ] {
        assert!(validate_sql(sql, &listed, &limits).is_ok(), "{sql}");
    }
    assert!(run("SELECT * FROM a_function_nobody_made()").is_ok());
}

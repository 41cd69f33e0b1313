//! What the parent decides when sqlparser cannot parse the SQL (`src/validate/unparsed.rs`): the
//! tokens' evidence, `PIVOT … IN`, and privacy rules on SQL it cannot parse.

use duckgate_test_kit::corpus::{self, UNPARSED};
use duckgate_validate::error::{ErrorKind, messages};
use duckgate_validate::validate::{Catalog, Limits, StatementKind, validate_sql};

use crate::test_support::*;

// ----- unparsed SQL goes on to the worker -----------------------------------------------------

#[test]
fn every_unparsed_corpus_shape_goes_on_to_the_worker() {
    for sql in UNPARSED {
        let accepted = run(sql).unwrap_or_else(|r| panic!("refused {sql:?}: {r:?}"));
        assert_eq!(accepted.kind, StatementKind::Unparsed, "{sql}");
        // The parent resolved nothing, and says so.
        assert!(accepted.relations.is_empty() && accepted.functions.is_empty());
    }
}

#[test]
fn duckdb_shapes_sqlparser_lacks_are_accepted_parsed_or_not() {
    let catalog = catalog_of(&["t", "a", "b"], "db");
    let unparsed = StatementKind::Unparsed;
    for (sql, kind) in [
        ("SELECT count(*) FILTER (x < 70) FROM t", unparsed),
        ("FROM a ASOF JOIN b ON a.t >= b.t", unparsed),
        (
            "FROM a ASOF LEFT JOIN b ON a.id = b.id AND a.t >= b.t",
            unparsed,
        ),
        ("SELECT * FROM t USING SAMPLE 5 ROWS", unparsed),
        ("SELECT * FROM t TABLESAMPLE 10%", unparsed),
        ("FROM (SUMMARIZE t)", unparsed),
        (
            "SELECT * FROM (PIVOT t ON k IN ('a','b') USING sum(v))",
            unparsed,
        ),
        ("SELECT x: 42", unparsed),
        ("SHOW t", StatementKind::Show),
        ("SELECT * RENAME (a AS b) FROM t", unparsed),
        ("SELECT #2 FROM t", unparsed),
        ("SELECT list_transform(l, x -> x * 2)", StatementKind::Query),
        (
            "SELECT list_transform(l, lambda x: x * 2)",
            StatementKind::Query,
        ),
        ("DESCRIBE SELECT 1", StatementKind::Describe),
        ("SUMMARIZE SELECT 1", StatementKind::Summarize),
    ] {
        assert_eq!(kind_of(sql, &catalog), kind, "{sql}");
    }
}

#[test]
fn sql_duckdb_cannot_parse_either_goes_on_to_the_worker_whose_parser_refuses_it() {
    // No evidence against these in their tokens; DuckDB's own parser answers the syntax error.
    assert_unparsed(
        &corpus::catalog(),
        &["SELECT * FROM", "SELECT 1 END DROP TABLE readings"],
    );
}

#[test]
fn lexical_checks_and_caps_still_refuse_before_any_parse() {
    let long = format!("SELECT 1 USING SAMPLE 1 -- {}", "x".repeat(100 * 1024));
    assert_refused(
        &corpus::catalog(),
        &[
            (&long, ErrorKind::InvalidArgument, "SQL length"),
            (
                "SELECT 1 USING SAMPLE 1\u{1}",
                ErrorKind::InvalidArgument,
                "control character",
            ),
            (
                "SELECT 1 USING SAMPLE 1; SELECT 2",
                ErrorKind::MultipleStatements,
                ";",
            ),
        ],
    );
    // Text the parent cannot lex as DuckDB does, and a tokenizer error, leave no tokens to
    // judge: DuckDB's own parser decides in the worker.
    assert_unparsed(
        &corpus::catalog(),
        &[
            "SELECT 1 --x\r; DROP TABLE readings USING SAMPLE 1",
            "SELECT $1 USING SAMPLE 1",
            "SELECT 'unterminated",
        ],
    );
}

#[test]
fn nesting_over_the_cap_is_refused_even_when_sqlparser_fails_first() {
    let cap = Limits::default().max_depth;
    for (open, close) in [("(", ")"), ("[", "]"), ("{'a': ", "}")] {
        // `#1` stops sqlparser before it reaches the nesting.
        let deep = format!(
            "SELECT #1, {}1{}",
            open.repeat(cap + 1),
            close.repeat(cap + 1)
        );
        assert_refused(
            &corpus::catalog(),
            &[(&deep, ErrorKind::InvalidArgument, "nesting")],
        );
    }
    let shallow = format!("SELECT #1, {}1{}", "(".repeat(10), ")".repeat(10));
    assert_unparsed(&corpus::catalog(), &[&shallow]);
    // The parser's own recursion error is still a refusal, not a gap in its grammar.
    let parsed_deep = format!("SELECT {}1{}", "(".repeat(200), ")".repeat(200));
    assert_refused(
        &corpus::catalog(),
        &[(&parsed_deep, ErrorKind::InvalidArgument, "nesting")],
    );
}

// ----- what the tokens show -------------------------------------------------------------------

#[test]
fn a_statement_that_does_not_start_like_a_query_is_refused() {
    assert_refused(
        &corpus::catalog(),
        &[
            ("SELEC 1", ErrorKind::SyntaxError, "SELEC"),
            ("\"SELECT\" 1", ErrorKind::SyntaxError, "\"SELECT\""),
            ("42", ErrorKind::SyntaxError, "42"),
            ("CHECKPOINT", ErrorKind::PolicyBlocked, "CHECKPOINT"),
            (
                "EXPORT DATABASE '/tmp/x'",
                ErrorKind::PolicyBlocked,
                "EXPORT",
            ),
            ("SET VARIABLE x = 1", ErrorKind::PolicyBlocked, "SET"),
            ("update extensions", ErrorKind::PolicyBlocked, "UPDATE"),
        ],
    );
    let write = refusal_of("CHECKPOINT", &corpus::catalog());
    assert_eq!(write.message, messages::WRITE_REFUSED);
}

#[test]
fn a_write_under_explain_describe_summarize_or_after_a_with_list_is_refused() {
    assert_refused(
        &corpus::catalog(),
        &[
            (
                "WITH x AS (SELECT 1 USING SAMPLE 1) DELETE FROM readings",
                ErrorKind::PolicyBlocked,
                "DELETE",
            ),
            (
                "WITH RECURSIVE x(n) USING KEY (n) AS (SELECT 1), y AS MATERIALIZED (SELECT 2) INSERT INTO readings SELECT * FROM x",
                ErrorKind::PolicyBlocked,
                "INSERT",
            ),
            (
                "EXPLAIN ANALYZE (FORMAT json) UPDATE readings SET glucose = 0 USING SAMPLE 1",
                ErrorKind::PolicyBlocked,
                "UPDATE",
            ),
            (
                "SUMMARIZE INSERT INTO readings DEFAULT VALUES USING x",
                ErrorKind::PolicyBlocked,
                "INSERT",
            ),
        ],
    );
}

#[test]
fn denied_functions_are_refused_wherever_unparsed_sql_calls_them() {
    assert_refused(
        &corpus::catalog(),
        &[
            (
                "SELECT count(*) FILTER (getenv('X') IS NULL) FROM readings",
                ErrorKind::PolicyBlocked,
                "getenv",
            ),
            (
                "SELECT x: \"READ_CSV\"('/etc/passwd')",
                ErrorKind::PolicyBlocked,
                "read_csv",
            ),
            (
                "SELECT main.current_setting('threads') FROM readings USING SAMPLE 1",
                ErrorKind::PolicyBlocked,
                "current_setting",
            ),
            (
                "FROM readings SELECT list_transform([1], lambda x: query ('SELECT 1')) LIMIT 10%",
                ErrorKind::PolicyBlocked,
                "query",
            ),
            (
                "SELECT glob('/*') FROM readings USING SAMPLE 1",
                ErrorKind::PolicyBlocked,
                "glob",
            ),
            (
                "SELECT #1 FROM readings WHERE trend IN (SELECT nextval('s'))",
                ErrorKind::PolicyBlocked,
                "nextval",
            ),
        ],
    );
}

#[test]
fn names_followed_by_brackets_that_are_not_calls_are_not_refused_as_functions() {
    assert_unparsed(
        &corpus::catalog(),
        &[
            // The GLOB operator, not the glob() function.
            "FROM readings WHERE trend GLOB ('a*') USING SAMPLE 1",
            "FROM readings WHERE trend NOT GLOB ('a*') USING SAMPLE 1",
            // A CTE and an alias with column names.
            "WITH read_x(a) AS (SELECT 1) SELECT * FROM read_x USING SAMPLE 1",
            "SELECT 1 FROM readings AS read_y(a, b, c, d, e) USING SAMPLE 1",
        ],
    );
}

#[test]
fn table_functions_in_unparsed_from_clauses_follow_the_allowlist() {
    assert_refused(
        &corpus::catalog(),
        &[
            (
                "FROM readings r ASOF JOIN sqlite_scan('x.db', 't') s ON true",
                ErrorKind::PolicyBlocked,
                "sqlite_scan",
            ),
            (
                "FROM readings r ASOF JOIN read_csv('x.csv') s ON true",
                ErrorKind::PolicyBlocked,
                "read_csv",
            ),
        ],
    );
    assert_unparsed(
        &corpus::catalog(),
        &[
            "FROM range(10) USING SAMPLE 3",
            "FROM readings r ASOF JOIN unnest([1, 2]) u(x) ON true",
            "FROM test_all_types() USING SAMPLE 1",
            // The database's own table macro, or nothing: the worker's plan check decides.
            "FROM readings, LATERAL my_macro(glucose) USING SAMPLE 1",
        ],
    );
}

#[test]
fn files_and_urls_named_as_relations_are_refused_in_unparsed_sql() {
    assert_refused(
        &corpus::catalog(),
        &[
            (
                "FROM 'x.csv' USING SAMPLE 5",
                ErrorKind::PolicyBlocked,
                "x.csv",
            ),
            (
                "FROM readings, 'y.parquet' USING SAMPLE 5",
                ErrorKind::PolicyBlocked,
                "y.parquet",
            ),
            (
                "FROM readings JOIN \"s3://b/k.parquet\" USING (ts) USING SAMPLE 1",
                ErrorKind::PolicyBlocked,
                "s3://b/k.parquet",
            ),
            (
                "FROM readings ASOF JOIN main.\"x.csv\" x ON true",
                ErrorKind::PolicyBlocked,
                "main.x.csv",
            ),
            (
                "FROM $$x.csv$$ USING SAMPLE 1",
                ErrorKind::PolicyBlocked,
                "x.csv",
            ),
            (
                "FROM (SUMMARIZE 'x.csv')",
                ErrorKind::PolicyBlocked,
                "x.csv",
            ),
            (
                "PIVOT 'x.csv' ON a IN (1) USING sum(b)",
                ErrorKind::PolicyBlocked,
                "x.csv",
            ),
            (
                "EXPLAIN ANALYZE PIVOT 'x.csv' ON a IN (1) USING sum(b)",
                ErrorKind::PolicyBlocked,
                "x.csv",
            ),
            (
                "WITH p AS (SELECT 1) PIVOT 'x.csv' ON a IN (1) USING sum(b)",
                ErrorKind::PolicyBlocked,
                "x.csv",
            ),
            (
                "SELECT * FROM readings WHERE trend IN (FROM 'x.csv' USING SAMPLE 1)",
                ErrorKind::PolicyBlocked,
                "x.csv",
            ),
            ("SHOW 'x.csv'", ErrorKind::PolicyBlocked, "x.csv"),
            // Only a WITH list defines a CTE that could shadow the name.
            (
                "SELECT 1 FROM \"x.csv\" WINDOW \"x.csv\" AS (ORDER BY 1) LIMIT 10%",
                ErrorKind::PolicyBlocked,
                "x.csv",
            ),
            (
                "SELECT * FROM readings USING SAMPLE 5 ROWS WHERE trend IN (FROM pg_settings)",
                ErrorKind::PolicyBlocked,
                "pg_settings",
            ),
            (
                "FROM duckdb_databases USING SAMPLE 1",
                ErrorKind::PolicyBlocked,
                "duckdb_databases",
            ),
        ],
    );
}

#[test]
fn a_table_of_the_database_may_be_named_like_a_path() {
    assert_unparsed(
        &catalog_of(&["my.table"], "db"),
        &["FROM \"my.table\" USING SAMPLE 1"],
    );
}

#[test]
fn strings_after_from_inside_functions_are_values_not_relations() {
    assert_unparsed(
        &corpus::catalog(),
        &[
            "SELECT extract(year FROM '2024-01-01'::DATE), trim(both 'x' FROM 'a.csv'), \
             substring('x.csv' FROM 2), glucose IS DISTINCT FROM 'a.b' FROM readings USING SAMPLE 1",
            "FROM readings SELECT ts, 'x.csv' USING SAMPLE 1",
            "SELECT glucose FROM readings ORDER BY (glucose) DESC, ts LIMIT 10%",
            // A quoted name that is also a CTE of the statement: the worker decides which.
            "WITH \"x.csv\" AS (SELECT 1) SELECT * FROM \"x.csv\" USING SAMPLE 1",
        ],
    );
}

// ----- PIVOT ----------------------------------------------------------------------------------

#[test]
fn pivot_whose_values_come_from_the_data_is_left_to_the_worker() {
    // DuckDB makes each several statements, which the worker answers as DuckDB does, checking
    // each part as a query (`src/engine/pivot.rs`): the parent checks what the tokens show.
    assert_unparsed(&corpus::catalog(), corpus::PIVOT_FROM_DATA);
    // What such a pivot holds is still checked: a denied function, a file as its source.
    for sql in [
        "PIVOT readings ON device_id USING avg(glucose) GROUP BY getenv('HOME')",
        "PIVOT (SELECT * FROM read_csv('/etc/passwd')) ON column0 USING count(*)",
        "PIVOT 'x.csv' ON a USING sum(b)",
    ] {
        let refusal = refusal_of(sql, &corpus::catalog());
        assert_eq!(refusal.kind, ErrorKind::PolicyBlocked, "{sql}: {refusal:?}");
    }
    // The SQL-standard form has no such grammar in DuckDB (a syntax error there): sqlparser
    // reads it, its subquery is walked, and DuckDB's parser answers.
    assert_eq!(
        kind_of(
            "SELECT * FROM readings PIVOT (count(*) FOR trend IN (SELECT 'a'))",
            &corpus::catalog()
        ),
        StatementKind::Query
    );
    assert_eq!(
        refusal_of(
            "SELECT * FROM readings PIVOT (count(*) FOR trend IN (SELECT getenv('HOME')))",
            &corpus::catalog()
        )
        .kind,
        ErrorKind::PolicyBlocked
    );
}

#[test]
fn pivot_with_its_values_listed_passes_as_a_statement_or_a_subquery() {
    assert_unparsed(
        &corpus::catalog(),
        &[
            "PIVOT readings ON device_id IN ('a', 'b') USING avg(glucose)",
            "SELECT * FROM (PIVOT readings ON device_id IN ('a', 'b') USING avg(glucose))",
            "PIVOT readings r JOIN devices d ON r.device_id = d.device_id ON d.model IN ('G7') USING count(*)",
            "PIVOT readings NATURAL JOIN devices ON model IN ('G7') USING count(*)",
            "PIVOT readings ON (device_id) IN ('a') USING count(*)",
            "PIVOT readings ON lower(trend) IN ('up') USING count(*) GROUP BY device_id",
            "PIVOT readings ON trend IN mood_type USING count(*)",
            "PIVOT readings USING count(*) GROUP BY trend",
            "UNPIVOT readings ON device_id, trend INTO NAME k VALUE v",
        ],
    );
    // The SQL-standard form, which sqlparser parses, demands its list.
    assert_eq!(
        kind_of(
            "FROM readings PIVOT (avg(glucose) FOR device_id IN ('a'))",
            &corpus::catalog()
        ),
        StatementKind::Query
    );
}

// ----- privacy rules, unparsed ------------------------------------------------------------------

#[test]
fn privacy_rules_refuse_catalog_listings_in_unparsed_sql() {
    assert_refused(
        &private_catalog(),
        &[
            (
                "FROM information_schema.columns USING SAMPLE 1",
                ErrorKind::PolicyBlocked,
                "information_schema.columns",
            ),
            (
                "FROM duckdb_columns() USING SAMPLE 1",
                ErrorKind::PolicyBlocked,
                "duckdb_columns()",
            ),
            (
                "FROM duckdb_tables USING SAMPLE 1",
                ErrorKind::PolicyBlocked,
                "duckdb_tables",
            ),
            // Catalog-qualified, it is not one of the system views the relation check knows:
            // the scan for the word refuses it.
            (
                "FROM system.information_schema.tables USING SAMPLE 1",
                ErrorKind::PolicyBlocked,
                "information_schema",
            ),
        ],
    );
    // Positive control: without privacy rules the same listings go on to the worker.
    let open = Catalog {
        restricted: false,
        ..private_catalog()
    };
    assert_unparsed(
        &open,
        &[
            "FROM information_schema.columns USING SAMPLE 1",
            "FROM duckdb_columns() USING SAMPLE 1",
            "FROM system.information_schema.tables USING SAMPLE 1",
        ],
    );
}

#[test]
fn hidden_column_names_and_expansions_in_unparsed_sql_go_on_to_the_worker() {
    // The parent knows no hidden name: a reference to `serial_number` (absent from its
    // catalog) and every expansion go on to the worker, whose shadow catalog has only the
    // visible columns.
    assert_unparsed(
        &private_catalog(),
        &[
            "SELECT serial_number FROM devices USING SAMPLE 1",
            "SELECT count(*) FILTER (d.\"SERIAL_NUMBER\" > 'a') FROM devices d",
            "SELECT serial_number FROM (SELECT 1 AS serial_number) t USING SAMPLE 1",
            "SELECT #2 FROM devices",
            "SELECT * FROM devices USING SAMPLE 1",
            "FROM health.main.devices d SELECT d.* USING SAMPLE 1",
            "SELECT COLUMNS('s.*') FROM devices USING SAMPLE 1",
            "FROM events NATURAL JOIN devices USING SAMPLE 1",
            "SELECT model FROM devices USING SAMPLE 1",
            "SELECT count(*), 2 * 3 FROM devices USING SAMPLE 1",
        ],
    );
    for sql in [
        "PIVOT devices ON model IN ('a') USING count(*)",
        "UNPIVOT devices ON model INTO NAME k VALUE v",
    ] {
        assert!(
            validate_sql(sql, &private_catalog(), &Limits::default()).is_ok(),
            "{sql}"
        );
    }
}

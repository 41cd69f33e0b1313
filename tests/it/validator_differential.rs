//! Differential test: whatever the validator accepts, DuckDB's own parser must see as exactly
//! one statement of a read-only type.
//!
//! Inputs: every accepted case of `duckgate_test_kit::corpus`, a few thousand queries from the
//! grammar (`duckgate_test_kit::generate`, fixed seeds) and lexical edge cases. For each accepted
//! text, DuckDB's statement splitter (`duckdb_extract_statements`) must find one statement, and
//! preparing it (against an in-memory copy of the test schema) must give SELECT or EXPLAIN; when
//! DuckDB cannot bind it (e.g. types do not fit), `json_serialize_sql` must still parse it as one
//! SELECT.
//!
//! DuckDB's side comes from its C API, through the test-only `duckdb-oracle` crate
//! (`devtools/duckdb-oracle`): the `duckdb` crate's `prepare` runs every statement but the last
//! of a multi-statement string and does not expose the statement type. The oracle keeps the
//! C API's `unsafe` out of this package, which forbids it.
use duckdb_oracle::{Oracle, Split, StatementType};
use duckgate_test_kit::{corpus, generate};
use duckgate_validate::validate::{Limits, StatementKind, validate_sql};

/// An in-memory DuckDB with the test schema.
struct Duck {
    oracle: Oracle,
}

impl Duck {
    fn open() -> Duck {
        let oracle = Oracle::open_in_memory().expect("in-memory DuckDB");
        for statement in corpus::SCHEMA_SQL
            .split(';')
            .filter(|s| !s.trim().is_empty())
        {
            oracle
                .execute(statement)
                .unwrap_or_else(|e| panic!("{statement}: {e}"));
        }
        Duck { oracle }
    }

    /// DuckDB's own split of `sql` into statements, and each statement's type.
    fn view(&self, sql: &str) -> Split {
        self.oracle.split(sql)
    }

    /// `json_serialize_sql`: parses without binding; succeeds only for SELECT statements.
    fn serialized_select_count(&self, sql: &str) -> Result<usize, String> {
        let conn = duckdb::Connection::open_in_memory().map_err(|e| e.to_string())?;
        let json: String = conn
            .query_row("SELECT json_serialize_sql(?)", [sql], |row| row.get(0))
            .map_err(|e| e.to_string())?;
        let value: serde_json::Value = serde_json::from_str(&json).map_err(|e| e.to_string())?;
        if value["error"].as_bool() == Some(true) {
            return Err(value["error_message"].to_string());
        }
        Ok(value["statements"].as_array().map_or(0, Vec::len))
    }
}

const READ_ONLY_TYPES: [StatementType; 2] = [StatementType::SELECT, StatementType::EXPLAIN];
/// `CALL`, read-only when it calls an allowed table function (the validator's `Call` kind).
const CALL: StatementType =
    StatementType(duckdb::ffi::duckdb_statement_type_DUCKDB_STATEMENT_TYPE_CALL);

/// Why DuckDB disagrees with an acceptance of kind `kind`, if it does.
fn disagreement(duck: &Duck, sql: &str, kind: StatementKind) -> Option<String> {
    match duck.view(sql) {
        Split::ParseError(e) => Some(format!("DuckDB cannot parse it: {e}")),
        Split::Statements(statements) if statements.len() != 1 => {
            Some(format!("DuckDB sees {} statements", statements.len()))
        }
        Split::Statements(statements) => match &statements[0] {
            Ok(found) if READ_ONLY_TYPES.contains(found) => None,
            // DuckDB binds `CALL f(…)` as `SELECT * FROM f(…)`.
            Ok(found) if *found == CALL && kind == StatementKind::Call => None,
            Ok(found) => Some(format!("DuckDB prepares it as statement type {found}")),
            // Not bindable here (types, unknown columns): fall back to the parse-only check,
            // which serializes SELECT statements only (so an EXPLAIN is checked without it).
            Err(prepare_error) => match duck.serialized_select_count(without_explain(sql, kind)) {
                Ok(1) => None,
                Ok(n) => Some(format!("json_serialize_sql sees {n} statements")),
                Err(e) => Some(format!(
                    "not preparable ({prepare_error}) and not a SELECT ({e})"
                )),
            },
        },
    }
}

/// The query of an `EXPLAIN <query>` (the grammar writes the keyword first), else the text.
fn without_explain(sql: &str, kind: StatementKind) -> &str {
    match kind {
        StatementKind::Explain => {
            let trimmed = sql.trim_start();
            assert!(trimmed[..7].eq_ignore_ascii_case("explain"), "{sql}");
            &trimmed[7..]
        }
        StatementKind::Query
        | StatementKind::Describe
        | StatementKind::Show
        | StatementKind::Summarize
        | StatementKind::Call
        | StatementKind::Unparsed => sql,
    }
}

/// Accepted texts with unusual lexical shapes: comments, quotes and semicolons in odd places.
const LEXICAL_EDGES: &[&str] = &[
    "SELECT 1 -- comment\r\n",
    "SELECT 1 --\r\n; -- trailing",
    "SELECT 'it''s' AS \"quo\"\"ted\" -- ;",
    "SELECT 1 /* ; */ + /**/ 2",
    "SELECT 1 <--x\n2",
    "SELECT 2 +--x\n3",
    "SELECT $$a;b$$ AS s",
    "SELECT $tag$ ; DROP TABLE readings; $tag$ AS s",
    "SELECT 'a\\' AS backslash_is_plain",
    "SELECT 'x' AS \"e\"",
    "SELECT 1 AS a$b",
    "SELECT\t1\n;\n",
    "SELECT '\u{e9}t\u{e9}' AS accents",
];

/// Every accepted input DuckDB sees as one read-only statement.
#[test]
fn duckdb_agrees_with_every_acceptance() {
    let duck = Duck::open();
    let catalog = corpus::catalog();
    let limits = Limits::default();
    let mut inputs: Vec<String> = corpus::ACCEPTED.iter().map(|s| s.to_string()).collect();
    // Passed on unparsed, these still must be one read-only statement for DuckDB.
    inputs.extend(corpus::UNPARSED.iter().map(|s| s.to_string()));
    inputs.extend(corpus::DUCKDB_GRAMMAR.iter().map(|s| s.to_string()));
    inputs.extend(LEXICAL_EDGES.iter().map(|s| s.to_string()));
    inputs.extend((0..3000).map(|seed| generate::from_seed(seed).render()));
    let mut accepted = 0;
    let mut disagreements = Vec::new();
    for sql in &inputs {
        let kind = match validate_sql(sql, &catalog, &limits) {
            Ok(accepted) => accepted.kind,
            Err(_) => continue,
        };
        accepted += 1;
        if let Some(why) = disagreement(&duck, sql, kind) {
            disagreements.push(format!("{sql}\n    -> {why}"));
        }
    }
    eprintln!(
        "differential: {accepted} accepted inputs, {} disagreements",
        disagreements.len()
    );
    assert!(
        accepted >= 3000,
        "too few accepted inputs ({accepted}) for the test to mean much"
    );
    assert!(
        disagreements.is_empty(),
        "{} disagreements:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
}

/// The lexical tricks the validator refuses are real: on each, sqlparser's own splitter sees one
/// statement where DuckDB sees two — the second one a DROP.
#[test]
fn lexical_tricks_really_hide_a_second_statement_from_sqlparser_and_are_left_to_the_worker() {
    let duck = Duck::open();
    let tricks = [
        // `--` comments end at a bare `\r` for DuckDB, not for sqlparser's DuckDB dialect.
        "SELECT 1 --x\r; DROP TABLE readings",
        // DuckDB nests block comments; sqlparser's DuckDB dialect does not.
        "SELECT /* /* */ 2 */* ; DROP TABLE readings; -- */ 3",
        // E'...' strings take backslash escapes in DuckDB; sqlparser reads `e` as a name.
        "SELECT e'\\' , ' ; DROP TABLE readings; --'",
    ];
    for sql in tricks {
        // The parent cannot read these as DuckDB does, so it never accepts them as a query it
        // walked: it leaves them to the worker, whose DuckDB parser sees the second statement
        // (`tests/it/worker_checks.rs::lexical_tricks_the_parent_cannot_read_are_refused_by_the_worker`).
        if let Ok(accepted) = validate_sql(sql, &corpus::catalog(), &Limits::default()) {
            assert_eq!(accepted.kind, StatementKind::Unparsed, "{sql}");
        }
        let sqlparser_count =
            sqlparser::parser::Parser::parse_sql(&sqlparser::dialect::DuckDbDialect {}, sql)
                .map(|s| s.len())
                .unwrap_or(0);
        let duck_count = match duck.view(sql) {
            Split::ParseError(_) => 0,
            Split::Statements(s) => s.len(),
        };
        eprintln!("{sql:?}: sqlparser sees {sqlparser_count}, DuckDB sees {duck_count}");
        assert_eq!((sqlparser_count, duck_count), (1, 2), "{sql}");
    }
}

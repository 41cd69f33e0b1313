//! Differential test of the two walks: the parent's sqlparser walk (`validate::validate_sql`) and the
//! worker's checks of DuckDB's own view (its walk of `json_serialize_sql`'s tree, then its plan
//! check), on every input both can parse. They must agree on allowing or refusing it, and on the
//! kind of the refusal.
//!
//! The worker side runs in-process through the library's `Engine`, hardened as in a worker (the
//! confinement is not what is compared here). An input is left out when either side cannot parse
//! it: sqlparser's gaps go to the worker by design (`StatementKind::Unparsed`), and DuckDB's
//! parse errors are DuckDB's answer. A plan DuckDB cannot bind (a type error) is the query's own
//! error, not a policy decision, so it counts as allowed.
//!
//! Inputs: the validator's case tables (`duckgate_test_kit::corpus`), the everyday-analytics
//! corpus (`tests/it/everyday/corpus.sql`), and queries from the validator's grammar
//! (`duckgate_test_kit::generate`) with fixed seeds, plain and with each forbidden construct
//! planted in them.

use duckgate::protocol::databases::Databases;
use std::path::Path;

use crate::support::TempDir;
use duckgate::engine::{Engine, EngineConfig};
use duckgate::gateway::validator_catalog;
use duckgate_test_kit::{corpus, generate};
use duckgate_validate::error::ErrorKind;
use duckgate_validate::validate::{self, Catalog, Limits, StatementKind};

/// What a side decided, as far as policy goes.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Decision {
    /// No objection: the query runs (or fails with an error of its own, such as a type error).
    Allowed,
    /// A name the query uses does not exist (the parent's catalog, DuckDB's binder).
    NotFound,
    /// A refusal by the policy, of this kind.
    Refused(ErrorKind),
    /// This side cannot parse the input, or refuses it by a rule the other side does not have
    /// by design: not compared.
    Excluded,
}

/// The parent's lexical hygiene, stricter than DuckDB on purpose (its tokens must cut the text
/// where DuckDB's would, so it refuses what it cannot be sure of), and its caps: refused before
/// any parse, so not a walk's decision.
const PARENT_ONLY_CONSTRUCTS: &[&str] = &[
    "control character",
    "identifier",
    "/* nested comment */",
    "E'...'",
    "whitespace",
    "quoting or comment",
    "SQL length",
    "nesting",
];

fn parent(sql: &str, catalog: &Catalog) -> (Decision, String) {
    match validate::validate_sql(sql, catalog, &Limits::default()) {
        Ok(accepted) if accepted.kind == StatementKind::Unparsed => {
            (Decision::Excluded, "unparsed".into())
        }
        Ok(_) => (Decision::Allowed, String::new()),
        Err(refusal)
            if refusal.kind == ErrorKind::SyntaxError
                || PARENT_ONLY_CONSTRUCTS.contains(&refusal.construct.as_str())
                || refusal
                    .message
                    .ends_with("could read the query differently from the validator.")
                || refusal
                    .message
                    .contains("literals are not supported by duckgate") =>
        {
            (Decision::Excluded, refusal.message)
        }
        Err(refusal) => {
            let why = format!("{} ({})", refusal.message, refusal.construct);
            match refusal.kind {
                ErrorKind::UnknownName => (Decision::NotFound, why),
                kind => (Decision::Refused(kind), why),
            }
        }
    }
}

/// The worker's walk, then its plan check, as a worker runs them. `Err` is a failure of the
/// test itself: a tree or plan the worker does not know (internal_error).
///
/// A refusal by the worker's checks names its construct; an error without one is DuckDB's own
/// (its binder, or its hardening — which means the checks let it through to DuckDB).
fn worker(engine: &mut Engine, sql: &str) -> Result<(Decision, String), String> {
    let outcome = engine
        .check_statement(sql)
        .and_then(|query| engine.check_plan(&query));
    let error = match outcome {
        Ok(()) => return Ok((Decision::Allowed, String::new())),
        Err(error) => error,
    };
    let why = format!("{} ({:?})", error.message, error.construct);
    Ok(match (error.kind, error.construct.is_some()) {
        (ErrorKind::InternalError, _) => return Err(error.message),
        (ErrorKind::SyntaxError, _) => (Decision::Excluded, why),
        (ErrorKind::UnknownName, true) => (Decision::NotFound, why),
        // DuckDB's binder: a relation that does not exist is what the parent's catalog also
        // says; a column or function that does not fit is the query's own error (the parent
        // does not resolve columns).
        (ErrorKind::UnknownName, false)
            if error.message.starts_with("Catalog Error")
                || error.message.contains("Circular reference to CTE") =>
        {
            (Decision::NotFound, why)
        }
        (ErrorKind::UnknownName, false) => (Decision::Allowed, why),
        (kind, true) => (Decision::Refused(kind), why),
        // DuckDB's own error: the query's (types, ambiguity), or the hardening's.
        (_, false) => (Decision::Allowed, why),
    })
}

/// Inputs on which the parent is stricter than DuckDB by design, each reviewed: the parent
/// judges every name in the text, DuckDB's parser drops what the query never uses, so nothing
/// in it runs. (False refusals of the parent, not leaks of the worker.)
const KNOWN_DIFFERENCES: &[(&str, &str)] = &[
    (
        "SELECT * FROM readings WINDOW w AS (ORDER BY getenv('x'))",
        "a named window no expression uses: absent from DuckDB's tree (a used one is refused)",
    ),
    (
        "WITH RECURSIVE duckdb_settings AS (SELECT * FROM duckdb_settings) SELECT 1",
        "a CTE the query never reads: DuckDB does not bind it",
    ),
    (
        "WITH RECURSIVE x(n) AS (SELECT 1 UNION ALL SELECT n FROM x UNION ALL SELECT * FROM x) SELECT 1",
        "a CTE the query never reads: DuckDB does not bind it",
    ),
];

/// Whether two decisions agree. One pair of different kinds is the same refusal: DuckDB's
/// serializer stops at the first statement that is not a SELECT, so `SELECT 1; DROP TABLE t`
/// is a write to the worker and several statements to the parent.
fn agree(parent: &Decision, worker: &Decision) -> bool {
    parent == worker
        || (*parent == Decision::Refused(ErrorKind::MultipleStatements)
            && *worker == Decision::Refused(ErrorKind::PolicyBlocked))
}

/// A hardened engine with `schema` attached from a file named `health.duckdb`, and the parent's
/// catalog of the same file (read through the engine, as a worker reads it for the parent).
fn open(dir: &Path, schema: &str) -> (Engine, Catalog) {
    let db = dir.join("health.duckdb");
    let conn = duckdb::Connection::open(&db).expect("create db");
    conn.execute_batch(schema).expect("build db");
    drop(conn);
    let config = EngineConfig {
        memory_limit_bytes: 1 << 30,
        memory_cap_bytes: None,
        spill: None,
        threads: 2,
        time_zone: "America/New_York".into(),
        harden: true,
        full_warm_up: false,
        folders: Default::default(),
    };
    let databases = Databases::single(&db);
    let mut engine = Engine::open(&config, &databases).expect("open engine");
    engine.attach().expect("attach");
    let snapshot = engine.catalog().expect("catalog");
    let catalog = validator_catalog(&snapshot, &databases);
    assert_eq!(catalog.database, "health");
    (engine, catalog)
}

/// Compare the two sides on every input; returns (compared, disagreements).
fn compare(engine: &mut Engine, catalog: &Catalog, inputs: &[String]) -> (usize, Vec<String>) {
    let mut compared = 0;
    let mut disagreements = Vec::new();
    for sql in inputs {
        let (parent_decision, parent_why) = parent(sql, catalog);
        let (worker_decision, worker_why) = match worker(engine, sql) {
            Ok(decision) => decision,
            Err(message) => {
                disagreements.push(format!("{sql}\n  worker internal error: {message}"));
                continue;
            }
        };
        if parent_decision == Decision::Excluded || worker_decision == Decision::Excluded {
            continue;
        }
        if KNOWN_DIFFERENCES.iter().any(|(known, _)| known == sql) {
            assert_ne!(
                parent_decision, worker_decision,
                "{sql} is listed as a known difference but the walks now agree: remove it"
            );
            continue;
        }
        compared += 1;
        if !agree(&parent_decision, &worker_decision) {
            disagreements.push(format!(
                "{sql}\n  parent: {parent_decision:?} {parent_why}\n  worker: {worker_decision:?} {worker_why}"
            ));
        }
    }
    (compared, disagreements)
}

/// [`compare`], then fail on any disagreement or when fewer than `at_least` inputs were
/// parsed by both sides (the test would then mean little).
fn compare_and_report(
    label: &str,
    engine: &mut Engine,
    catalog: &Catalog,
    inputs: &[String],
    at_least: usize,
) {
    let (compared, disagreements) = compare(engine, catalog, inputs);
    eprintln!(
        "walk differential ({label}): {} inputs, {compared} parsed by both",
        inputs.len()
    );
    assert!(
        disagreements.is_empty(),
        "{} disagreements:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
    assert!(
        compared >= at_least,
        "only {compared} inputs were parsed by both sides"
    );
}

#[test]
fn the_parent_and_the_worker_walks_agree_on_the_validator_corpus_and_the_grammar() {
    let dir = TempDir::new("walk-differential");
    let (mut engine, catalog) = open(dir.path(), corpus::SCHEMA_SQL);
    let mut inputs: Vec<String> = corpus::ACCEPTED.iter().map(|s| s.to_string()).collect();
    inputs.extend(corpus::REFUSED.iter().map(|(sql, _)| sql.to_string()));
    inputs.extend(corpus::DUCKDB_GRAMMAR.iter().map(|s| s.to_string()));
    for seed in 0..1500u64 {
        let spec = generate::from_seed(seed);
        inputs.push(spec.render());
        let plant = generate::Plant::ALL[seed as usize % generate::Plant::ALL.len()];
        inputs.push(spec.render_planted(Some((seed as usize, plant))).0);
    }
    compare_and_report(
        "validator corpus + grammar",
        &mut engine,
        &catalog,
        &inputs,
        2000,
    );
}

#[test]
fn the_parent_and_the_worker_walks_agree_on_the_everyday_corpus() {
    let dir = TempDir::new("walk-differential-everyday");
    let (mut engine, catalog) = open(dir.path(), crate::everyday::SCHEMA);
    let inputs: Vec<String> = crate::everyday::entries()
        .into_iter()
        .map(|e| e.sql)
        .collect();
    compare_and_report("everyday corpus", &mut engine, &catalog, &inputs, 100);
}

/// DuckDB's syntax tree (`json_serialize_sql`) of every accepted validator case.
fn real_trees() -> Vec<(String, serde_json::Value)> {
    let conn = duckdb::Connection::open_in_memory().expect("in-memory DuckDB");
    conn.execute_batch("SET lambda_syntax = 'ENABLE_SINGLE_ARROW';")
        .expect("lambda syntax");
    corpus::ACCEPTED
        .iter()
        .filter_map(|sql| {
            let text: String = conn
                .query_row(
                    "SELECT json_serialize_sql(?::VARCHAR)::VARCHAR",
                    [sql],
                    |row| row.get(0),
                )
                .expect("json_serialize_sql");
            let tree: serde_json::Value = serde_json::from_str(&text).expect("JSON");
            (tree["error"] == false).then(|| (sql.to_string(), tree))
        })
        .collect()
}

#[test]
fn the_tree_walk_invariants_hold_on_duckdbs_real_trees() {
    let trees = real_trees();
    assert!(trees.len() >= 50, "only {} trees", trees.len());
    for (_, tree) in &trees {
        // Accepted without privacy rules, and a denied call planted anywhere is refused.
        duckgate_test_kit::fuzz_tree::check_invariants(tree);
    }
}

/// Writes `fuzz/corpus/tree_json/`: `cargo test --release --test it
/// walk_differential::write_tree_fuzz_seeds -- --ignored`.
#[test]
#[ignore = "writes the fuzz seed corpus; run by hand"]
fn write_tree_fuzz_seeds() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/tree_json");
    std::fs::create_dir_all(&dir).expect("mkdir");
    for (i, (_, tree)) in real_trees().iter().enumerate() {
        let path = dir.join(format!("case-{i:03}.json"));
        std::fs::write(&path, serde_json::to_vec(tree).expect("JSON")).expect("write seed");
    }
}

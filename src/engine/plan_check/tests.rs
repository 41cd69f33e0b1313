//! The plan check on real DuckDB plans: alone, under privacy rules, and on plans it does not
//! recognise.

use duckgate_plan_reader::{Code, Fact, FunctionFact, FunctionKind};

use super::*;
use crate::engine::CheckedQuery;
use crate::engine::Engine;
use crate::engine::tests::{TempDir, config, make_db};
use crate::privacy::{PLAN_REFUSAL, PrivacyPolicy};
use crate::protocol::MessageOrigin;
use crate::protocol::databases::Databases;
use duckgate_validate::error::ErrorKind;

/// The plan check on its own, as a worker whose walk is switched off runs it: its own
/// reading of DuckDB's syntax tree, then DuckDB's plans.
fn plan_checked(engine: &mut Engine, sql: &str) -> Result<(), Failure> {
    let query = engine.parse_for_plan_check(sql)?;
    engine.check_plan(&query)
}

/// The fixture of `tests/it/privacy.rs`, plus a view over the hidden column and a table in a
/// second schema.
const SCHEMA: &str = r#"
        CREATE TABLE devices (device_id INTEGER PRIMARY KEY, model VARCHAR, serial_number VARCHAR);
        INSERT INTO devices SELECT i, 'M' || i, 'SN-PLANTED-' || i FROM range(1, 50) t(i);
        CREATE TABLE readings (id INTEGER, device_id INTEGER, glucose INTEGER, secret_note VARCHAR,
                               payload STRUCT(a INTEGER, secret VARCHAR));
        INSERT INTO readings VALUES (1, 1, 110, 'PLANTED note', {'a': 1, 'secret': 'x'});
        CREATE TABLE raw_payloads (id INTEGER, body VARCHAR);
        INSERT INTO raw_payloads VALUES (1, 'PLANTED payload');
        CREATE VIEW device_labels AS SELECT device_id, serial_number AS label FROM devices;
        CREATE VIEW payload_view AS SELECT * FROM raw_payloads;
        CREATE SCHEMA other;
        CREATE TABLE other.raw_payloads (id INTEGER);
        CREATE TABLE device_meta (device_id INTEGER, tier ENUM('PLANTED_GOLD', 'PLANTED_PLATINUM'));
        INSERT INTO device_meta VALUES (1, 'PLANTED_GOLD');
        CREATE VIEW device_tiers AS SELECT device_id, tier FROM device_meta;
        CREATE VIEW folded_tiers AS
            SELECT device_id, CASE WHEN false THEN tier END AS folded FROM device_meta;
        CREATE VIEW all_devices AS SELECT * FROM devices;
    "#;

fn policy() -> PrivacyPolicy {
    PrivacyPolicy {
        hide_tables: vec!["raw_payloads".into()],
        hide_columns: vec![
            "*.serial_number".into(),
            "readings.secret_note".into(),
            "readings.payload".into(),
            "device_meta.tier".into(),
        ],
    }
}

fn engine(tag: &str) -> (TempDir, Engine) {
    let dir = TempDir::new(tag);
    let db = make_db(&dir, "private.duckdb", SCHEMA);
    let mut engine = Engine::open(&config("1GiB"), &Databases::single(&db)).unwrap();
    engine.enforce_privacy(&policy());
    engine.attach().unwrap();
    (dir, engine)
}

#[test]
fn under_privacy_rules_an_error_is_composed_from_whose_words_it_holds() {
    let (_dir, engine) = engine("origins");
    let attached = engine
        .shadow
        .as_ref()
        .and_then(|shadow| shadow.catalogs.first())
        .expect("a shadow")
        .clone();
    let (private, public) = (attached.catalog, attached.name);
    let failure = |kind, origin| Failure {
        origin,
        ..Failure::new(kind, format!("about \"{private}.main.devices\" here"))
    };
    // DuckDB's words about the query: shown, the private name replaced by the public one.
    for origin in [MessageOrigin::DuckdbAboutTheQuery, MessageOrigin::Duckgate] {
        let shown = engine.private_error(failure(ErrorKind::DatabaseError, origin));
        assert_eq!(
            shown.message,
            format!("about \"{public}.main.devices\" here")
        );
    }
    // DuckDB's words about itself: a sentence of duckgate's, the kind kept.
    let composed = engine.private_error(failure(
        ErrorKind::ResourceLimit,
        MessageOrigin::DuckdbAboutItself,
    ));
    assert_eq!(composed.kind, ErrorKind::ResourceLimit);
    assert_eq!(composed.message, crate::privacy::UNNAMED_ERROR);
    assert!(!format!("{composed:?}").contains(&private), "{composed:?}");
    // Without rules, every failure as it is.
    let (_open_dir, open) = {
        let dir = TempDir::new("origins-open");
        let db = make_db(&dir, "open.duckdb", SCHEMA);
        let mut open = Engine::open(&config("1GiB"), &Databases::single(&db)).unwrap();
        open.attach().unwrap();
        (dir, open)
    };
    let itself = failure(ErrorKind::DatabaseError, MessageOrigin::DuckdbAboutItself);
    assert_eq!(open.private_error(itself.clone()), itself);
}

#[test]
fn under_privacy_rules_hidden_names_do_not_exist_and_hidden_reads_are_refused() {
    let (_dir, mut engine) = engine("plan");
    // The binder sees the shadow catalog: a hidden name does not exist.
    let unknown = [
        "SELECT serial_number FROM devices",
        "SELECT serial_number AS s FROM devices",
        "SELECT upper(serial_number) FROM devices",
        "SELECT count(*) FROM devices WHERE serial_number LIKE 'A%'",
        "SELECT model FROM devices ORDER BY serial_number",
        "SELECT payload.a FROM readings",
        "SELECT secret_note FROM readings",
        "SELECT id FROM raw_payloads",
        "SELECT count(*) FROM raw_payloads",
        "SELECT id FROM other.raw_payloads",
        "SELECT typeof(serial_number) FROM devices LIMIT 1",
        "WITH RECURSIVE raw_payloads AS (SELECT * FROM raw_payloads) SELECT * FROM raw_payloads LIMIT 0",
        "EXPLAIN SELECT serial_number FROM devices",
        // A view's column computed from a hidden one is hidden with it, and a view whose
        // every column is hidden does not exist.
        "SELECT label FROM device_labels",
        "SELECT count(*) FROM device_labels WHERE label LIKE 'SN%'",
        "SELECT * FROM payload_view",
        "SELECT * FROM payload_view LIMIT 0",
        "SELECT count(*) FROM payload_view",
        "SELECT tier FROM device_tiers",
        "DESCRIBE SELECT tier FROM device_tiers",
        "SELECT folded FROM folded_tiers",
        "SELECT serial_number FROM all_devices",
    ];
    for sql in unknown {
        let error = plan_checked(&mut engine, sql).expect_err(sql);
        assert_eq!(error.kind, ErrorKind::UnknownName, "{sql}: {error:?}");
    }
    // What reads hidden data through a view stored in the database, and catalog listings,
    // are refused by the plan, with one sentence that names nothing.
    let refused = [
        "SHOW TABLES",
        "SELECT * FROM duckdb_columns()",
        "SELECT column_name FROM information_schema.columns",
        "SELECT * FROM duckdb_tables()",
        "SELECT * FROM pragma_table_info('devices')",
    ];
    for sql in refused {
        let error = plan_checked(&mut engine, sql).expect_err(sql);
        assert_eq!(error.kind, ErrorKind::PolicyBlocked, "{sql}: {error:?}");
        assert_eq!(error.message, PLAN_REFUSAL, "{sql}");
    }
    // Expansions see the visible columns only, so they pass.
    let allowed = [
        "SELECT * FROM devices",
        "SELECT d FROM devices d",
        "SELECT to_json(d) FROM devices d",
        "SELECT COLUMNS(*) FROM devices",
        "SUMMARIZE devices",
        "DESCRIBE devices",
        "DESCRIBE SELECT model FROM devices",
        "SELECT model FROM devices",
        "SELECT count(*) FROM devices",
        "SELECT glucose FROM readings WHERE glucose > 100",
        "SELECT d.model, r.glucose FROM devices d JOIN readings r USING (device_id)",
        "SELECT * FROM range(3)",
        "VALUES (1), (2)",
        "SELECT 1",
        "EXPLAIN SELECT model FROM devices",
        "WITH x AS (SELECT model FROM devices) SELECT count(*) FROM x",
        "SELECT * FROM unnest((SELECT list(id) FROM readings))",
        // A view's visible columns: the optimized plan reads no hidden column.
        "SELECT device_id FROM device_labels",
        "SELECT count(*) FROM device_labels",
        "SELECT device_id FROM device_tiers",
        "SELECT device_id FROM folded_tiers",
        "SELECT * FROM all_devices",
        "DESCRIBE device_tiers",
        "SUMMARIZE device_tiers",
    ];
    for sql in allowed {
        assert_eq!(plan_checked(&mut engine, sql), Ok(()), "{sql}");
    }
    // What describes a view shows its visible columns only: no hidden name, no ENUM label.
    for sql in [
        "DESCRIBE device_tiers",
        "DESCRIBE folded_tiers",
        "DESCRIBE all_devices",
        "SUMMARIZE device_tiers",
        "SELECT * FROM all_devices",
        "SELECT t FROM device_tiers t",
    ] {
        let rows = engine
            .run_query(&CheckedQuery::with_checks_off(sql), 100, 1 << 20)
            .unwrap();
        let text = serde_json::to_string(&rows).unwrap().to_lowercase();
        for hidden in ["planted", "tier\"", "folded", "serial_number", "label"] {
            assert!(!text.contains(hidden), "{sql} shows {hidden}: {text}");
        }
    }
    // The checked plan is the plan that runs, and a whole row is the visible columns.
    let rows = engine
        .run_query(
            &CheckedQuery::with_checks_off("SELECT d AS r FROM devices d LIMIT 1"),
            10,
            1 << 20,
        )
        .unwrap();
    assert_eq!(
        rows.columns[0].data_type,
        "STRUCT(device_id INTEGER, model VARCHAR)"
    );
}

#[test]
fn errors_are_duckdbs_and_a_hidden_name_fails_like_a_made_up_one() {
    let (_dir, mut engine) = engine("errors");
    let syntax = plan_checked(&mut engine, "SELECT FROM WHERE").unwrap_err();
    assert_eq!(syntax.kind, ErrorKind::SyntaxError);
    let several = plan_checked(&mut engine, "SELECT 1; SELECT 2").unwrap_err();
    assert_eq!(several.kind, ErrorKind::MultipleStatements);
    let write = plan_checked(&mut engine, "DELETE FROM devices").unwrap_err();
    assert_eq!(write.kind, ErrorKind::PolicyBlocked);
    // DuckDB's own words, even where they name a column a hidden table also has (`id`).
    let grouped = plan_checked(&mut engine, "SELECT id, count(*) FROM readings").unwrap_err();
    assert_eq!(grouped.kind, ErrorKind::DatabaseError, "{grouped:?}");
    assert!(grouped.message.contains("GROUP BY"), "{grouped:?}");
    // As the agent gets them: hidden and made-up alike, and no private name anywhere.
    for (hidden, made_up) in [
        ("SELECT * FROM raw_payloads", "SELECT * FROM raw_payloadz"),
        (
            "SELECT serial_number FROM devices",
            "SELECT serial_numbez FROM devices",
        ),
    ] {
        let a = plan_checked(&mut engine, hidden).unwrap_err();
        let a = engine.private_error(a);
        let b = plan_checked(&mut engine, made_up).unwrap_err();
        let b = engine.private_error(b);
        assert_eq!(a.kind, b.kind);
        assert_eq!(
            a.message
                .replace("raw_payloads", "N")
                .replace("serial_number", "N"),
            b.message
                .replace("raw_payloadz", "N")
                .replace("serial_numbez", "N"),
            "{hidden}"
        );
        assert!(!a.message.contains("duckgate_private"), "{a:?}");
    }
    let query = engine
        .parse_for_plan_check("SELECT model FROM devices")
        .unwrap();
    let plan = engine.explain(&query).unwrap();
    let text = plan.plan.to_string();
    assert!(!text.contains("duckgate_private"), "{text}");
    assert!(!text.contains("logical_plan"), "{text}");
}

/// The same fixture without privacy rules.
fn open_engine(tag: &str) -> (TempDir, Engine) {
    let dir = TempDir::new(tag);
    let db = make_db(&dir, "open.duckdb", SCHEMA);
    let mut engine = Engine::open(&config("1GiB"), &Databases::single(&db)).unwrap();
    engine.attach().unwrap();
    (dir, engine)
}

/// A table of a catalog no `--db` declared is refused by the plan check alone, from the
/// catalog DuckDB bound, however the query reached it; the declared databases' are read.
#[test]
fn a_scan_of_a_catalog_nobody_declared_is_refused_and_each_declared_one_is_read() {
    let dir = TempDir::new("catalogs");
    let cgm = make_db(&dir, "cgm.duckdb", SCHEMA);
    let pump = make_db(
        &dir,
        "pump.duckdb",
        "CREATE TABLE boluses AS SELECT 4.5 AS units;",
    );
    let declared = [
        format!("cgm={}", cgm.display()),
        format!("pump={}", pump.display()),
    ];
    let databases = Databases::new(
        &declared
            .iter()
            .map(|d| crate::protocol::databases::Declaration::parse(d).unwrap())
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let mut engine = Engine::open(&config("1GiB"), &databases).unwrap();
    engine.attach().unwrap();
    // A catalog the worker itself could be made to hold, with a table in it.
    engine
        .conn
        .execute_batch("ATTACH ':memory:' AS intruder; CREATE TABLE intruder.t AS SELECT 42 AS x;")
        .unwrap();
    for sql in [
        "SELECT x FROM intruder.t",
        "SELECT x FROM intruder.main.t",
        "SELECT d.model, i.x FROM devices d, intruder.t i",
    ] {
        let error = plan_checked(&mut engine, sql).expect_err(sql);
        assert_eq!(error.kind, ErrorKind::UnknownName, "{sql}: {error:?}");
        assert!(error.message.contains("intruder"), "{sql}: {error:?}");
    }
    for sql in [
        "SELECT count(*) FROM devices",
        "SELECT count(*) FROM cgm.main.devices",
        "SELECT units FROM pump.boluses",
        "SELECT d.model, b.units FROM devices d, pump.main.boluses b",
    ] {
        assert_eq!(plan_checked(&mut engine, sql), Ok(()), "{sql}");
    }
}

#[test]
fn functions_are_checked_where_duckdb_bound_them_even_inside_a_string_or_a_view() {
    let (_dir, mut engine) = open_engine("bound");
    for (sql, construct) in [
        (
            "SELECT json_serialize_plan('SELECT current_setting(''allowed_paths'')', optimize := true)",
            "json_serialize_plan",
        ),
        (
            "SELECT json_serialize_sql('SELECT 1')",
            "json_serialize_sql",
        ),
        ("SELECT current_setting('threads')", "current_setting"),
        (
            "SELECT lower(current_setting('threads')::VARCHAR)",
            "current_setting",
        ),
        (
            "SELECT x FROM (SELECT json_serialize_sql('SELECT 1') AS x)",
            "json_serialize_sql",
        ),
    ] {
        let error = plan_checked(&mut engine, sql).expect_err(sql);
        assert_eq!(error.kind, ErrorKind::PolicyBlocked, "{sql}: {error:?}");
        assert_eq!(
            error.construct.as_deref(),
            Some(construct),
            "{sql}: {error:?}"
        );
    }
    for sql in [
        "SELECT upper(model), length(model)::VARCHAR FROM devices",
        "SELECT uuid(), random(), now()",
        "SELECT list_transform([1, 2], lambda x: x + 1)",
        "SELECT * FROM repeat(0, 3)",
        "SELECT * FROM test_all_types()",
        "SELECT count(*) FROM pragma_table_info('devices')",
        "SELECT row_number() OVER (ORDER BY device_id), lag(model) OVER () FROM devices",
        "SELECT * FROM devices WHERE device_id IN (SELECT device_id FROM readings)",
        "SUMMARIZE devices",
        "DESCRIBE devices",
        "SHOW TABLES",
    ] {
        assert_eq!(plan_checked(&mut engine, sql), Ok(()), "{sql}");
    }
    // A type built from text is refused, by its function or by the `TYPE` value it makes.
    let typed = plan_checked(&mut engine, "SELECT make_type('VARCHAR')").unwrap_err();
    assert_eq!(typed.kind, ErrorKind::PolicyBlocked, "{typed:?}");
    // A setting read by `SHOW <name>` is answered by the binder; the plan shows only that.
    let setting = plan_checked(&mut engine, "SHOW threads").unwrap_err();
    assert_eq!(setting.kind, ErrorKind::PolicyBlocked, "{setting:?}");
}

#[test]
fn under_privacy_rules_columns_read_come_from_bindings_not_from_literal_words() {
    let (_dir, mut engine) = engine("words");
    for word in ["serial_number", "serial_numbez", "secret_note", "payload"] {
        for sql in [
            format!("SELECT count(*) FROM devices WHERE model = '{word}'"),
            format!("SELECT count(*) FROM devices WHERE model IN ('a', '{word}', 'b')"),
            format!("SELECT glucose FROM readings WHERE glucose::VARCHAR = '{word}'"),
        ] {
            assert_eq!(plan_checked(&mut engine, &sql), Ok(()), "{sql}");
        }
        // A view's visible column is answered whatever the words; its hidden one does not
        // exist.
        let sql =
            format!("SELECT device_id FROM device_labels WHERE device_id::VARCHAR = '{word}'");
        assert_eq!(plan_checked(&mut engine, &sql), Ok(()), "{sql}");
        let sql = format!("SELECT device_id FROM device_labels WHERE label = '{word}'");
        let error = plan_checked(&mut engine, &sql).unwrap_err();
        assert_eq!(error.kind, ErrorKind::UnknownName, "{sql}: {error:?}");
    }
}

/// Shapes no real plan of today's DuckDB has, as a later DuckDB could bind them: each is
/// refused.
#[test]
fn anything_the_check_does_not_recognise_is_refused() {
    use duckgate_plan_reader::{ExpressionClass, LogicalOperatorType, LogicalTypeId};
    let catalog = |name: &str| crate::plan_policy::Attached {
        name: name.into(),
        catalog: name.into(),
        file: Default::default(),
    };
    let rules = PlanRules {
        catalogs: vec![catalog("db"), catalog("pump")],
        privacy: None,
        folders: Default::default(),
    };
    let judge = |facts: Vec<Fact>, scans: Vec<ScanFacts>| {
        let plan = PlanFacts {
            facts,
            scans,
            result_types: Vec::new(),
        };
        check_bound(&rules, &plan, &mut 0).is_ok()
    };
    let scalar = |path: &[&str]| {
        Fact::Function(FunctionFact {
            kind: FunctionKind::Scalar,
            path: path.iter().map(|p| (*p).to_owned()).collect(),
            name: path.last().copied().unwrap_or_default().to_owned(),
        })
    };
    let projection = Fact::Operator(Code::Known(LogicalOperatorType::Projection));
    assert!(judge(
        vec![projection.clone(), scalar(&["system", "main", "abs"])],
        vec![]
    ));
    for refused in [
        scalar(&["system", "main", "a_function_added_later"]),
        scalar(&["other", "main", "abs"]),
        scalar(&["system", "main", "json_serialize_plan"]),
        scalar(&["a", "b", "c", "abs"]),
        Fact::Operator(Code::Known(LogicalOperatorType::CopyToFile)),
        Fact::Operator(Code::Unrecognised {
            code: 200,
            label: "LOGICAL_ADDED_LATER".into(),
        }),
        Fact::Type {
            id: Code::Known(LogicalTypeId::Type),
            aggregate_state: false,
        },
        Fact::Type {
            id: Code::Unrecognised {
                code: 99,
                label: "NEW_TYPE".into(),
            },
            aggregate_state: false,
        },
        Fact::Expression(Code::Known(ExpressionClass::BoundSubquery)),
        Fact::Unknown("the contents of LOGICAL_PRAGMA".into()),
    ] {
        assert!(
            !judge(vec![projection.clone(), refused.clone()], vec![]),
            "{refused:?}"
        );
    }
    let scan = |catalog: &str, files: Vec<String>| ScanFacts {
        function: vec!["system".into(), "main".into(), "seq_scan".into()],
        table: Some(vec![catalog.into(), "main".into(), "t".into()]),
        columns: vec![],
        files: (!files.is_empty()).then_some(files),
        named_parameters: vec![],
    };
    assert!(judge(vec![], vec![scan("db", vec![])]));
    // Every declared database's catalog, and only those: a catalog nobody declared is
    // refused, DuckDB's own included.
    assert!(judge(vec![], vec![scan("PUMP", vec![])]));
    for undeclared in ["elsewhere", "memory", "temp", "system"] {
        assert!(
            !judge(vec![], vec![scan(undeclared, vec![])]),
            "{undeclared}"
        );
    }
    assert!(!judge(vec![], vec![scan("db", vec!["/etc/passwd".into()])]));
    let no_table = ScanFacts {
        table: None,
        ..scan("db", vec![])
    };
    assert!(!judge(vec![], vec![no_table]));
}

/// The positional parameters `duckdb_functions()` lists for the Parquet readers before their
/// named ones: the file (`path`, also as a VARIANT) or list of files (`paths`). A reader that
/// grows another fails the test below until someone reads what it does.
const PARQUET_READERS_POSITIONAL_PARAMETERS: [&str; 2] = ["path", "paths"];

/// Every named parameter the linked DuckDB's Parquet readers accept is classified for files a
/// column rule names, kept or refused, and every classified one is still accepted: a DuckDB
/// upgrade that adds, renames or drops one fails here, naming it.
#[test]
fn every_named_parameter_of_the_parquet_readers_is_classified_for_files_under_column_rules() {
    use crate::plan_policy::{PARAMETERS_BINDING_COLUMNS, PARAMETERS_KEEPING_COLUMN_NAMES};
    let conn = duckdb::Connection::open_in_memory().unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT function_name, parameters FROM duckdb_functions()
             WHERE function_type = 'table'
               AND function_name IN ('read_parquet', 'parquet_scan')",
        )
        .unwrap();
    let overloads: Vec<(String, Vec<String>)> = stmt
        .query_map([], |row| {
            let name: String = row.get(0)?;
            let parameters = match row.get::<_, duckdb::types::Value>(1)? {
                duckdb::types::Value::List(items) => items
                    .into_iter()
                    .map(|item| match item {
                        duckdb::types::Value::Text(text) => text,
                        other => panic!("{name}: a parameter's name {other:?}"),
                    })
                    .collect(),
                other => panic!("{name}: parameters {other:?}"),
            };
            Ok((name, parameters))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for reader in ["read_parquet", "parquet_scan"] {
        assert!(
            overloads.iter().any(|(name, _)| name == reader),
            "DuckDB lists no table function {reader}: {overloads:?}"
        );
    }
    let classified = |parameter: &str| {
        PARAMETERS_KEEPING_COLUMN_NAMES
            .iter()
            .chain(&PARAMETERS_BINDING_COLUMNS)
            .any(|(name, _)| name.eq_ignore_ascii_case(parameter))
    };
    let mut unclassified = std::collections::BTreeSet::new();
    for (reader, parameters) in &overloads {
        for parameter in parameters {
            if !classified(parameter)
                && !PARQUET_READERS_POSITIONAL_PARAMETERS.contains(&parameter.as_str())
            {
                unclassified.insert(format!("{reader}({parameter})"));
            }
        }
    }
    assert!(
        unclassified.is_empty(),
        "named parameters of DuckDB's Parquet readers in neither PARAMETERS_KEEPING_COLUMN_NAMES \
         nor PARAMETERS_BINDING_COLUMNS (src/plan_policy/facts.rs): {unclassified:?}"
    );
    // Each classified parameter is accepted by every overload of both readers: one gone (or
    // renamed) is a list entry judging nothing.
    let mut gone = std::collections::BTreeSet::new();
    for (listed, _) in PARAMETERS_KEEPING_COLUMN_NAMES
        .iter()
        .chain(&PARAMETERS_BINDING_COLUMNS)
    {
        for (reader, parameters) in &overloads {
            if !parameters
                .iter()
                .any(|name| name.eq_ignore_ascii_case(listed))
            {
                gone.insert(format!("{reader}({listed})"));
            }
        }
    }
    assert!(
        gone.is_empty(),
        "classified parameters DuckDB's Parquet readers no longer accept: {gone:?}"
    );
    // Both lists hold distinct names, and none is in both.
    let mut names: Vec<String> = PARAMETERS_KEEPING_COLUMN_NAMES
        .iter()
        .chain(&PARAMETERS_BINDING_COLUMNS)
        .map(|(name, _)| name.to_ascii_lowercase())
        .collect();
    let count = names.len();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), count, "a parameter listed twice: {names:?}");
}

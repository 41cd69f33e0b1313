//! The worker's walk of DuckDB's syntax tree, on trees DuckDB would write.

use super::*;
use serde_json::json;

const RULES: TreeRules<'static> = TreeRules {
    databases: &["health"],
    restricted: false,
    folders: &[],
};
const PRIVATE: TreeRules<'static> = TreeRules {
    databases: &["health"],
    restricted: true,
    folders: &[],
};

fn statement(node: Json) -> Json {
    json!({"error": false, "statements": [{"node": node, "named_param_map": []}]})
}

fn table(catalog: &str, schema: &str, name: &str) -> Json {
    json!({"type": "BASE_TABLE", "alias": "", "catalog_name": catalog,
           "schema_name": schema, "table_name": name})
}

fn select_from(from: Json) -> Json {
    json!({"type": "SELECT_NODE", "cte_map": {"map": []}, "select_list": [], "from_table": from})
}

fn with_cte(name: &str, body: Json, from: Json) -> Json {
    json!({"type": "SELECT_NODE",
           "cte_map": {"map": [{"key": name, "value": {"query_node": body}}]},
           "select_list": [], "from_table": from})
}

fn call(name: &str) -> Json {
    json!({"class": "FUNCTION", "type": "FUNCTION", "function_name": name,
           "catalog": "", "schema": "", "children": []})
}

fn check(node: Json, rules: &TreeRules<'_>) -> Result<TreeFacts, Refusal> {
    walk_tree(&statement(node), rules)
}

#[test]
fn a_cte_without_union_does_not_see_itself_so_its_inner_name_is_checked() {
    // WITH RECURSIVE pg_settings AS (SELECT * FROM pg_settings) SELECT * FROM pg_settings
    let node = with_cte(
        "pg_settings",
        select_from(table("", "", "pg_settings")),
        table("", "", "pg_settings"),
    );
    let refusal = check(node, &RULES).unwrap_err();
    assert_eq!(refusal.kind, ErrorKind::PolicyBlocked);
    assert_eq!(refusal.construct, "pg_settings");
    // A data file as the inner name is no reference to the CTE: the catalog must hold it
    // (noted for the worker to ask), and under privacy rules it is refused here.
    let node = || {
        with_cte(
            "a.csv",
            select_from(table("", "", "a.csv")),
            table("", "", "x"),
        )
    };
    let deferred = (String::new(), String::new(), "a.csv".to_owned());
    assert_eq!(check(node(), &RULES).unwrap().file_like, [deferred]);
    assert_eq!(check(node(), &PRIVATE).unwrap_err().construct, "a.csv");
    // The outer reference is the CTE, so the same name there passes.
    let node = with_cte(
        "pg_settings",
        select_from(json!({"type": "EMPTY"})),
        table("", "", "pg_settings"),
    );
    assert_eq!(check(node, &RULES), Ok(TreeFacts::default()));
}

#[test]
fn only_the_recursive_term_of_a_recursive_cte_sees_its_name() {
    let recursive = |anchor: Json, term: Json| {
        json!({"type": "RECURSIVE_CTE_NODE", "cte_name": "pg_settings", "union_all": true,
               "cte_map": {"map": []}, "left": anchor, "right": term})
    };
    let ok = with_cte(
        "pg_settings",
        recursive(
            select_from(json!({"type": "EMPTY"})),
            select_from(table("", "", "pg_settings")),
        ),
        table("", "", "pg_settings"),
    );
    assert_eq!(check(ok, &RULES), Ok(TreeFacts::default()));
    let anchor_reads_real = with_cte(
        "pg_settings",
        recursive(
            select_from(table("", "", "pg_settings")),
            select_from(json!({"type": "EMPTY"})),
        ),
        table("", "", "pg_settings"),
    );
    assert!(check(anchor_reads_real, &RULES).is_err());
}

#[test]
fn later_ctes_see_earlier_ones_but_not_the_reverse() {
    let two = |first_body: Json, second_body: Json| {
        json!({"type": "SELECT_NODE", "cte_map": {"map": [
            {"key": "a", "value": {"query_node": first_body}},
            {"key": "pg_tables", "value": {"query_node": second_body}}]},
            "select_list": [], "from_table": table("", "", "a")})
    };
    // pg_tables is a catalog listing: fine without privacy rules, refused with them, so
    // whether the walk saw a CTE or the system view shows in the verdict.
    let forward = two(
        select_from(table("", "", "pg_tables")),
        select_from(json!({"type": "EMPTY"})),
    );
    assert!(check(forward, &PRIVATE).is_err());
    let backward = two(
        select_from(json!({"type": "EMPTY"})),
        select_from(table("", "", "a")),
    );
    assert_eq!(check(backward, &PRIVATE), Ok(TreeFacts::default()));
}

#[test]
fn names_fold_ascii_only_like_duckdb() {
    // A CTE named KELVIN SIGN does not shadow `k`, so `k` here is a real relation, and
    // one named `\u{212A}` read as `pg_settings`-like would not hide it either.
    let node = with_cte(
        "pg_settin\u{212A}s",
        select_from(json!({"type": "EMPTY"})),
        table("", "", "pg_settings"),
    );
    assert!(check(node, &RULES).is_err());
    let node = with_cte(
        "PG_SETTINGS",
        select_from(json!({"type": "EMPTY"})),
        table("", "", "pg_settings"),
    );
    assert_eq!(check(node, &RULES), Ok(TreeFacts::default()));
}

#[test]
fn catalogs_other_than_the_attached_database_are_unknown() {
    assert_eq!(
        check(select_from(table("health", "main", "cgm")), &RULES),
        Ok(TreeFacts::default())
    );
    assert_eq!(
        check(select_from(table("HEALTH", "main", "cgm")), &RULES),
        Ok(TreeFacts::default())
    );
    for catalog in ["system", "temp", "memory", "other"] {
        let refusal = check(select_from(table(catalog, "main", "cgm")), &RULES).unwrap_err();
        assert_eq!(refusal.kind, ErrorKind::UnknownName, "{catalog}");
    }
}

#[test]
fn nested_schema_names_pass_and_names_like_files_wait_for_the_catalog() {
    // `clinic.archive.visits`: the table of DuckDB 2.0's nested schema `clinic.archive`.
    let nested = || select_from(table("clinic", "archive", "visits"));
    assert_eq!(check(nested(), &RULES), Ok(TreeFacts::default()));
    assert_eq!(
        check(nested(), &PRIVATE).unwrap_err().kind,
        ErrorKind::UnknownName
    );
    for catalog in ["system", "temp", "memory"] {
        let refusal = check(select_from(table(catalog, "archive", "visits")), &RULES);
        assert_eq!(
            refusal.unwrap_err().kind,
            ErrorKind::UnknownName,
            "{catalog}"
        );
    }
    // A table may be named with dots; only the attached catalog says whether it is one.
    let (schema, name) = ("", "a.b.c");
    let walked = check(select_from(table("", schema, name)), &RULES).unwrap();
    let written = (String::new(), schema.to_owned(), name.to_owned());
    assert_eq!(walked.file_like, std::slice::from_ref(&written));
    // Also when the walk did not run (the plan check still asks the catalog).
    assert_eq!(
        facts(&statement(select_from(table("", schema, name)))).file_like,
        [written]
    );
    let refusal = check(select_from(table("", schema, name)), &PRIVATE).unwrap_err();
    assert_eq!(refusal.kind, ErrorKind::PolicyBlocked);
    // Every name a replacement scan could read as a file is noted for the catalog lookup
    // that completes this walk (`Engine::refuse_files_named`), and refused outright under
    // privacy rules.
    for (schema, name) in [("exports", "csv"), ("", "exports.csv"), ("", "/tmp/x.csv")] {
        let walked = check(select_from(table("", schema, name)), &RULES).unwrap();
        let noted = (String::new(), schema.to_owned(), name.to_owned());
        assert_eq!(walked.file_like, [noted], "{schema}.{name}");
        let refusal = check(select_from(table("", schema, name)), &PRIVATE).unwrap_err();
        assert_eq!(refusal.kind, ErrorKind::PolicyBlocked, "{schema}.{name}");
    }
    // A data file's name after the database's name or a nested schema's parent
    // (`tandem.secret.csv`, which DuckDB's replacement scan reads as that file when no table
    // has the name, and `s1.s2.tbl`, a nested schema's table named like an extension) is
    // noted for the catalog too, with its first part: the catalog, not the extension,
    // decides. Under privacy rules, and after one of DuckDB's own catalogs, it is refused here.
    let with_catalog = check(select_from(table("health", "main", "x.csv")), &RULES);
    assert_eq!(with_catalog.unwrap_err().kind, ErrorKind::PolicyBlocked);
    for (catalog, schema, name) in [
        ("tandem", "secret", "csv"),
        ("a", "b", "parquet"),
        ("s1", "s2", "tbl"),
    ] {
        let walked = check(select_from(table(catalog, schema, name)), &RULES).unwrap();
        let noted = (catalog.to_owned(), schema.to_owned(), name.to_owned());
        assert_eq!(walked.file_like, [noted], "{catalog}.{schema}.{name}");
        let refusal = check(select_from(table(catalog, schema, name)), &PRIVATE).unwrap_err();
        assert_eq!(
            refusal.kind,
            ErrorKind::PolicyBlocked,
            "{catalog}.{schema}.{name}"
        );
        assert!(refusal.message.contains("names a file"), "{refusal:?}");
    }
    for catalog in ["system", "temp", "memory"] {
        let refusal = check(select_from(table(catalog, "x", "csv")), &RULES).unwrap_err();
        assert!(refusal.message.contains("names a file"), "{refusal:?}");
    }
}

#[test]
fn denied_functions_are_refused_in_every_position() {
    let in_select = json!({"type": "SELECT_NODE", "cte_map": {"map": []},
        "select_list": [{"class": "FUNCTION", "function_name": "upper",
            "children": [call("getenv")]}], "from_table": {"type": "EMPTY"}});
    assert_eq!(check(in_select, &RULES).unwrap_err().construct, "getenv");
    let window = json!({"type": "SELECT_NODE", "cte_map": {"map": []},
        "select_list": [{"class": "WINDOW", "function_name": "CURRENT_SETTING"}],
        "from_table": {"type": "EMPTY"}});
    assert_eq!(
        check(window, &RULES).unwrap_err().construct,
        "current_setting"
    );
    let from = select_from(json!({"type": "TABLE_FUNCTION", "function": call("read_csv")}));
    assert_eq!(check(from, &RULES).unwrap_err().construct, "read_csv");
}

#[test]
fn table_functions_follow_the_allowlist_and_catalog_listings_the_privacy_rule() {
    let from = |name: &str| select_from(json!({"type": "TABLE_FUNCTION", "function": call(name)}));
    assert_eq!(check(from("range"), &PRIVATE), Ok(TreeFacts::default()));
    assert_eq!(
        check(from("duckdb_tables"), &RULES),
        Ok(TreeFacts::default())
    );
    assert!(check(from("duckdb_tables"), &PRIVATE).is_err());
    // A name DuckDB has no built-in for is the database's own table macro or nothing: the
    // plan check sees what DuckDB binds it to.
    assert_eq!(check(from("my_macro"), &RULES), Ok(TreeFacts::default()));
    let refusal = check(from("pragma_show"), &RULES).unwrap_err();
    assert_eq!(refusal.kind, ErrorKind::PolicyBlocked);
    assert!(refusal.message.contains("not an allowed table function"));
    let refusal = check(from("read_csv"), &RULES).unwrap_err();
    assert!(refusal.message.contains("reads files"), "{refusal:?}");
}

/// DuckDB files `a.b.c.d` as catalog `a`, schema `c`, table `d`; the part in between is in
/// the full path only, and is checked too.
#[test]
fn every_part_of_a_long_name_is_checked() {
    let table = |path: Json| {
        select_from(json!({"type": "BASE_TABLE", "catalog_name": "health",
                           "schema_name": "c", "table_name": "d",
                           "qualified_name": {"path": path}}))
    };
    assert_eq!(
        check(table(json!(["health", "b", "c", "d"])), &RULES),
        Ok(TreeFacts::default())
    );
    let refusal = check(table(json!(["health", "x.csv", "c", "d"])), &RULES).unwrap_err();
    assert_eq!(refusal.kind, ErrorKind::PolicyBlocked, "{refusal:?}");
}

#[test]
fn show_forms_are_told_apart() {
    let show = |kind: &str, name: &str| {
        select_from(json!({"type": "SHOW_REF", "show_type": kind, "table_name": name}))
    };
    assert_eq!(check(show("SUMMARY", ""), &RULES), Ok(TreeFacts::default()));
    let described = TreeFacts {
        describes: true,
        ..TreeFacts::default()
    };
    assert_eq!(check(show("DESCRIBE", ""), &RULES), Ok(described));
    let shown = TreeFacts {
        describes: true,
        shows_by_name: 1,
        ..TreeFacts::default()
    };
    assert_eq!(check(show("SHOW", "cgm"), &RULES), Ok(shown));
    assert_eq!(
        check(show("SHOW_SPECIAL", "\"tables\""), &RULES),
        Ok(TreeFacts::default())
    );
    assert!(check(show("SHOW_SPECIAL", "\"tables\""), &PRIVATE).is_err());
    assert!(check(show("SHOW_SPECIAL", "\"databases\""), &RULES).is_err());
    assert_eq!(
        check(show("SHOW_FROM", "main"), &RULES),
        Ok(TreeFacts::default())
    );
    assert!(check(show("SHOW_FROM", "main"), &PRIVATE).is_err());
    assert_eq!(
        check(show("SOMETHING_NEW", ""), &RULES).unwrap_err().kind,
        ErrorKind::InternalError
    );
}

#[test]
fn describe_and_show_are_found_anywhere_in_the_tree_but_summarize_is_not() {
    let describe = json!({"statements": [{"node": {"from_table": {"type": "SUBQUERY",
        "subquery": {"from_table": {"type": "SHOW_REF", "show_type": "DESCRIBE"}}}}}]});
    assert_eq!(
        facts(&describe),
        TreeFacts {
            describes: true,
            ..TreeFacts::default()
        }
    );
    let shows = json!([{"type": "SHOW_REF", "show_type": "SHOW", "table_name": "t"},
                       {"type": "SHOW_REF", "show_type": "SHOW", "table_name": "threads"}]);
    assert_eq!(
        facts(&shows),
        TreeFacts {
            describes: true,
            shows_by_name: 2,
            ..TreeFacts::default()
        }
    );
    let summarize = json!({"from_table": {"type": "SHOW_REF", "show_type": "SUMMARY"}});
    assert_eq!(facts(&summarize), TreeFacts::default());
    let plain = json!({"from_table": {"type": "BASE_TABLE", "table_name": "SHOW_REF"}});
    assert_eq!(facts(&plain), TreeFacts::default());
}

#[test]
fn unknown_shapes_fail_closed() {
    let bad = [
        json!({"error": true}),
        json!({"error": false}),
        json!({"error": false, "statements": [{"nothing": 1}]}),
        statement(json!({"type": "SELECT_NODE", "cte_map": {"nope": []}})),
        statement(json!({"type": "SELECT_NODE", "cte_map": {"map": [{"value": {}}]}})),
        statement(select_from(json!({"type": "BASE_TABLE", "table_name": 3}))),
        statement(select_from(
            json!({"type": "TABLE_FUNCTION", "function": {}}),
        )),
        statement(json!({"class": "FUNCTION", "function_name": ["getenv"]})),
        statement(json!({"type": "RECURSIVE_CTE_NODE", "left": {}, "right": {}})),
    ];
    for tree in bad {
        assert!(walk_tree(&tree, &RULES).is_err(), "{tree}");
    }
    let two = json!({"error": false, "statements": [{"node": {}}, {"node": {}}]});
    assert_eq!(
        walk_tree(&two, &RULES).unwrap_err().kind,
        ErrorKind::MultipleStatements
    );
}

#[test]
fn a_deep_chain_is_walked_without_recursion() {
    // Twenty times DuckDB's own expression-depth limit (1000).
    // Built by moving each level into the next: `json!` would re-serialize `expr` (and
    // recurse through it) at every level.
    let mut expr = call("abs");
    for _ in 0..20_000 {
        let mut level = Map::new();
        level.insert("class".into(), Json::from("FUNCTION"));
        level.insert("function_name".into(), Json::from("+"));
        level.insert("children".into(), Json::Array(vec![expr]));
        expr = Json::Object(level);
    }
    let mut select = Map::new();
    select.insert("type".into(), Json::from("SELECT_NODE"));
    select.insert("cte_map".into(), json!({"map": []}));
    select.insert("select_list".into(), Json::Array(vec![expr]));
    select.insert("from_table".into(), json!({"type": "EMPTY"}));
    let mut statement = Map::new();
    statement.insert("node".into(), Json::Object(select));
    let mut tree = Map::new();
    tree.insert("error".into(), Json::Bool(false));
    tree.insert(
        "statements".into(),
        Json::Array(vec![Json::Object(statement)]),
    );
    let tree = Json::Object(tree);
    assert_eq!(walk_tree(&tree, &RULES), Ok(TreeFacts::default()));
    // serde_json drops a Value recursively: drop it where the stack is large enough.
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || drop(tree))
        .unwrap()
        .join()
        .unwrap();
}

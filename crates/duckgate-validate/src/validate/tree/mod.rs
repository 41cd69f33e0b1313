//! The worker's walk of DuckDB's own parse tree: the policy of the parent's validator, applied
//! to what DuckDB's parser made of the SQL, not to what sqlparser made of it.
//!
//! The worker asks DuckDB for its syntax tree of the query (`json_serialize_sql`, the very
//! parser that will run it) and hands it here. This module is pure, like the rest of
//! `validate`: no DuckDB, no I/O, so it is fuzzed on its own (fuzz/). It decides with the same
//! tables as the parent's walk ([`super::functions`]):
//! - exactly one statement, and `json_serialize_sql` serializes `SELECT` statements only (DuckDB
//!   turns `DESCRIBE`, `SHOW`, `SUMMARIZE`, `PIVOT`, `FROM t` and `VALUES` into them);
//! - every function called anywhere (scalar, aggregate, window, table) is checked against the
//!   denylist, and every table function in `FROM` against the allowlist;
//! - every relation named in `FROM` that is not a CTE in scope: never a file or URL, never a
//!   catalog other than the attached database, and DuckDB's system views by the policy table
//!   (`pg_settings` is refused like `duckdb_settings()`); catalog listings are refused while a
//!   privacy rule hides names.
//!
//! CTE scoping follows DuckDB 2.0, not the SQL standard: a CTE is visible to the query it
//! belongs to and to the CTEs written after it; its own name is visible inside its body only in
//! the recursive term of a `WITH RECURSIVE` whose body is a `UNION` (DuckDB's
//! `RECURSIVE_CTE_NODE`). Anywhere else `x` inside `x`'s body is whatever `x` means outside, so
//! it is checked as a relation. Names compare with ASCII case folding only, as DuckDB's do.
//!
//! What it leaves to the plan check: whether a plain name is a table of the attached database
//! (the binder resolves it; a scan must then be of that database, see the worker's plan check).
//! Any shape this walk does not know is refused (fail closed), so a DuckDB upgrade that changes
//! the tree stops queries instead of letting them through.

use serde_json::{Map, Value as Json};

use super::Refusal;
use super::functions::{self, ExpressionUse, RowSource, SystemView, TableUse};
use super::refusals::{
    catalog_listing, denied, empty_sql, file_relation, in_declared_folder, looks_like_path,
    names_a_data_file, no_declared_folders, other_catalog, statement_counter,
    table_function_not_allowed, unknown_relation, unsupported,
};
use crate::error::{ErrorKind, messages};

/// What the walk needs to know about where it runs.
#[derive(Debug, Clone, Copy)]
pub struct TreeRules<'a> {
    /// The catalog names the databases are attached as, the default first (`db.main.t` names
    /// one). Under privacy rules these are the shadow catalogs' public names.
    pub databases: &'a [&'a str],
    /// A privacy rule hides some names: catalog listings are refused.
    pub restricted: bool,
    /// The names of the operator's declared folders: `NAME/…` names a file DuckDB may read,
    /// and the file readers are allowed (the plan check reads which files DuckDB bound).
    pub folders: &'a [String],
}

/// What the walk found out about an accepted query.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TreeFacts {
    /// It holds a `DESCRIBE` or `SHOW <name>`: DuckDB's binder answers those itself, so its
    /// plan shows no scan of what they describe (the privacy check refuses them).
    pub describes: bool,
    /// How many `SHOW <name>` it holds. DuckDB decides by the name whether that lists a
    /// table's columns or reads a setting (`SHOW threads`); only its plan tells them apart, so
    /// the plan check demands one `PRAGMA_SHOW` (a table's columns) for each.
    pub shows_by_name: u32,
    /// Relations named like files (`"a.b.c"`, `exports.csv`), as (catalog, schema, table),
    /// each part empty when unwritten. DuckDB's binder takes a table or view of the database of that name
    /// before it tries a file, and only the attached catalog says whether there is one: the
    /// plan check asks it before anything binds, and refuses a name that is none.
    pub file_like: Vec<(String, String, String)>,
}

impl TreeFacts {
    /// Note what one `SHOW_REF` node describes: a `DESCRIBE` or a `SHOW <name>`, and whether
    /// that name is bare (a setting's name is never qualified, so only a bare one may be one).
    fn note_show(&mut self, map: &Map<String, Json>) {
        let named = |key: &str| {
            map.get(key)
                .and_then(Json::as_str)
                .is_some_and(|p| !p.is_empty())
        };
        match map.get("show_type").and_then(Json::as_str) {
            Some("DESCRIBE") => self.describes = true,
            Some("SHOW") => {
                self.describes = true;
                if !named("catalog_name") && !named("schema_name") {
                    self.shows_by_name += 1;
                }
            }
            _ => {}
        }
    }
}

/// Check DuckDB's syntax tree of one query (the whole `json_serialize_sql` object).
pub fn walk_tree(tree: &Json, rules: &TreeRules<'_>) -> Result<TreeFacts, Refusal> {
    if tree.get("error").and_then(Json::as_bool) != Some(false) {
        return Err(unexpected("the serialized statement is an error"));
    }
    let statements = tree
        .get("statements")
        .and_then(Json::as_array)
        .ok_or_else(|| unexpected("no statement list"))?;
    let statement = match statements.as_slice() {
        [one] => one,
        [] => return Err(empty_sql()),
        _ => {
            return Err(Refusal {
                kind: ErrorKind::MultipleStatements,
                message: messages::MULTIPLE_STATEMENTS.into(),
                construct: ";".into(),
                suggestion: "Send one statement per call.".into(),
                missing: None,
            });
        }
    };
    let node = statement
        .get("node")
        .ok_or_else(|| unexpected("a statement without a query node"))?;
    let mut walk = Walk {
        rules,
        scopes: vec![Scope {
            parent: None,
            name: None,
        }],
        facts: TreeFacts::default(),
    };
    walk.run(node)?;
    Ok(walk.facts)
}

/// The [`TreeFacts`] of DuckDB's syntax tree without judging it, for when the walk itself was
/// switched off (the plan check still needs them).
pub fn facts(tree: &Json) -> TreeFacts {
    let mut facts = TreeFacts::default();
    let mut stack = vec![tree];
    while let Some(value) = stack.pop() {
        match value {
            Json::Object(map) => {
                let node_type = map.get("type").and_then(Json::as_str);
                if node_type == Some("SHOW_REF") {
                    facts.note_show(map);
                }
                let names_a_relation = match node_type {
                    Some("BASE_TABLE") => true,
                    Some("SHOW_REF") => matches!(
                        map.get("show_type").and_then(Json::as_str),
                        Some("DESCRIBE" | "SHOW")
                    ),
                    _ => false,
                };
                if names_a_relation && let Some(name) = file_like_name(map) {
                    facts.file_like.push(name);
                }
                stack.extend(map.values());
            }
            Json::Array(items) => stack.extend(items),
            Json::Null | Json::Bool(_) | Json::Number(_) | Json::String(_) => {}
        }
    }
    facts
}

/// The name of a relation (`BASE_TABLE`, or the subject of a `DESCRIBE` or `SHOW`) that looks
/// like a file, as (catalog, schema, table): a part shaped like a path, of any of the name's
/// parts (a name of four or more parts, nested schemas, carries the others in its full path),
/// or `schema.csv` and the like, which DuckDB's replacement scans read as a file.
fn file_like_name(map: &Map<String, Json>) -> Option<(String, String, String)> {
    file_like_parts(map).map(|(name, _)| name)
}

/// [`file_like_name`], and whether any part of the name is shaped like a path (rather than only
/// ending like a data file's name).
fn file_like_parts(map: &Map<String, Json>) -> Option<((String, String, String), bool)> {
    let part = |key: &str| map.get(key).and_then(Json::as_str).unwrap_or_default();
    let (catalog, schema, table) = (
        part("catalog_name"),
        part("schema_name"),
        part("table_name"),
    );
    let every_part: Vec<&str> = match map.get("qualified_name").and_then(|q| q.get("path")) {
        Some(Json::Array(parts)) => parts.iter().filter_map(Json::as_str).collect(),
        _ => Vec::new(),
    };
    // The last two parts name a data file whatever comes before them: DuckDB's replacement
    // scan reads `tandem.secret.csv`, and a nested schema's `a.b.c.csv`, as the file of that
    // name when no table has it.
    let last_two_name_a_file = match every_part.as_slice() {
        [.., before, last] => names_a_data_file(before, last),
        _ => false,
    };
    let path_shaped = [catalog, schema, table]
        .iter()
        .chain(every_part.iter())
        .any(|p| !p.is_empty() && looks_like_path(p));
    let file_like = path_shaped || names_a_data_file(schema, table) || last_two_name_a_file;
    file_like.then(|| {
        (
            (catalog.to_owned(), schema.to_owned(), table.to_owned()),
            path_shaped,
        )
    })
}

/// DuckDB's own catalogs: its views and functions (`system`), the session's objects (`temp`)
/// and the default in-memory database (`memory`). None holds a schema of the database.
fn is_builtin_catalog(name: &str) -> bool {
    ["system", "temp", "memory"]
        .iter()
        .any(|builtin| name.eq_ignore_ascii_case(builtin))
}

/// A refusal for a tree this walk does not understand: DuckDB changed, or the walk has a gap.
fn unexpected(what: &str) -> Refusal {
    Refusal {
        kind: ErrorKind::InternalError,
        message: format!(
            "DuckDB's syntax tree of this query has a shape duckgate does not know ({what}), so \
             it was not run."
        ),
        construct: what.into(),
        suggestion: "Rewrite the query more plainly; if it is an ordinary query, report it.".into(),
        missing: None,
    }
}

/// One CTE name in scope; scopes form chains towards the root.
struct Scope {
    parent: Option<usize>,
    name: Option<String>,
}

struct Walk<'r, 'a> {
    rules: &'r TreeRules<'a>,
    /// An arena of scope chains; index 0 is the empty root scope.
    scopes: Vec<Scope>,
    facts: TreeFacts,
}

impl Walk<'_, '_> {
    /// Whether `catalog` names one of the attached databases (ASCII case-insensitively, as
    /// DuckDB compares catalog names).
    fn is_database(&self, catalog: &str) -> bool {
        self.rules
            .databases
            .iter()
            .any(|database| catalog.eq_ignore_ascii_case(database))
    }

    fn push_scope(&mut self, parent: usize, name: &str) -> usize {
        self.scopes.push(Scope {
            parent: Some(parent),
            name: Some(name.to_ascii_lowercase()),
        });
        self.scopes.len() - 1
    }

    fn in_scope(&self, mut scope: usize, name: &str) -> bool {
        // Every scope's parent is a scope pushed before it.
        while let Some(entry) = self.scopes.get(scope) {
            if entry
                .name
                .as_deref()
                .is_some_and(|n| n.eq_ignore_ascii_case(name))
            {
                return true;
            }
            match entry.parent {
                Some(parent) => scope = parent,
                None => return false,
            }
        }
        false
    }

    /// Visit every value of the tree once, with the CTE scope it is in. An explicit stack: a
    /// long operator chain nests thousands of levels deep.
    fn run(&mut self, root: &Json) -> Result<(), Refusal> {
        let mut stack: Vec<(&Json, usize)> = vec![(root, 0)];
        while let Some((value, scope)) = stack.pop() {
            match value {
                Json::Array(items) => stack.extend(items.iter().map(|item| (item, scope))),
                Json::Object(map) => self.object(map, scope, &mut stack)?,
                Json::Null | Json::Bool(_) | Json::Number(_) | Json::String(_) => {}
            }
        }
        Ok(())
    }

    fn object<'j>(
        &mut self,
        map: &'j Map<String, Json>,
        scope: usize,
        stack: &mut Vec<(&'j Json, usize)>,
    ) -> Result<(), Refusal> {
        // A query node's CTEs: each body sees the CTEs before it; the node itself sees all.
        let mut body_scope = scope;
        if let Some(cte_map) = map.get("cte_map") {
            let Json::Object(cte_map) = cte_map else {
                return Err(unexpected("a CTE map that is not an object"));
            };
            let entries = cte_map
                .get("map")
                .and_then(Json::as_array)
                .ok_or_else(|| unexpected("a CTE map without entries"))?;
            for entry in entries {
                let name = entry
                    .get("key")
                    .and_then(Json::as_str)
                    .ok_or_else(|| unexpected("a CTE without a name"))?;
                if entry.get("value").is_none() {
                    return Err(unexpected("a CTE without a definition"));
                }
                // The whole entry, so every value in it is visited, in the scope before it.
                stack.push((entry, body_scope));
                body_scope = self.push_scope(body_scope, name);
            }
            stack.extend(
                cte_map
                    .iter()
                    .filter(|(key, _)| key.as_str() != "map")
                    .map(|(_, value)| (value, scope)),
            );
        }
        let node_type = map.get("type").and_then(Json::as_str);
        // The recursive term of `WITH RECURSIVE x AS (anchor UNION recursive)` is the one place
        // where `x` names the CTE inside its own body.
        let mut recursive_term = None;
        match node_type {
            Some("RECURSIVE_CTE_NODE") => {
                let name = map
                    .get("cte_name")
                    .and_then(Json::as_str)
                    .ok_or_else(|| unexpected("a recursive CTE without a name"))?;
                let right = map
                    .get("right")
                    .ok_or_else(|| unexpected("a recursive CTE without a recursive term"))?;
                recursive_term = Some(right);
                let own = self.push_scope(body_scope, name);
                stack.push((right, own));
            }
            Some("BASE_TABLE") => self.base_table(map, body_scope)?,
            Some("TABLE_FUNCTION") => self.table_function(map)?,
            Some("SHOW_REF") => self.show(map)?,
            _ => {}
        }
        // A type named with a catalog must be DuckDB's built-in one (`system`) or the attached
        // database's: any other catalog (the private one under privacy rules, `temp`,
        // `memory`) holds nothing an agent may reach. A function's qualification is no such
        // evidence: DuckDB's parser leaves `d.model.upper()` as `upper` qualified by `d.model`,
        // and its binder reads that as a method call on the column `d.model` when `d` is no
        // catalog. The plan check holds every bound function to DuckDB's built-ins (catalog
        // `system`) and reads a stored macro's expanded body.
        if let (Some("TYPE"), Some(Json::String(catalog))) =
            (map.get("class").and_then(Json::as_str), map.get("catalog"))
            && !catalog.is_empty()
            && !catalog.eq_ignore_ascii_case("system")
            && !self.is_database(catalog)
        {
            let name = map
                .get("type_name")
                .and_then(Json::as_str)
                .unwrap_or_default();
            return Err(other_catalog(&format!("{catalog}.{name}")));
        }
        if let Some(name) = map.get("function_name") {
            let name = name
                .as_str()
                .ok_or_else(|| unexpected("a function whose name is not text"))?;
            match functions::expression_use(name) {
                ExpressionUse::Refused(denial) => {
                    return Err(denied(&name.to_ascii_lowercase(), denial));
                }
                ExpressionUse::CatalogListing if self.rules.restricted => {
                    return Err(catalog_listing(&format!("{}()", name.to_ascii_lowercase())));
                }
                ExpressionUse::CountsStatements if self.rules.restricted => {
                    return Err(statement_counter(&format!(
                        "{}()",
                        name.to_ascii_lowercase()
                    )));
                }
                ExpressionUse::CatalogListing
                | ExpressionUse::CountsStatements
                | ExpressionUse::Allowed
                | ExpressionUse::NotBuiltIn => {}
            }
        }
        for (key, value) in map {
            let already =
                key == "cte_map" || recursive_term.is_some_and(|r| std::ptr::eq(r, value));
            if !already {
                stack.push((value, body_scope));
            }
        }
        Ok(())
    }

    /// A relation named in `FROM`.
    fn base_table(&mut self, map: &Map<String, Json>, scope: usize) -> Result<(), Refusal> {
        let text = |key: &str| {
            map.get(key)
                .and_then(Json::as_str)
                .ok_or_else(|| unexpected("a table reference without its name parts"))
        };
        let (catalog, schema, table) = (
            text("catalog_name")?,
            text("schema_name")?,
            text("table_name")?,
        );
        let written: String = [catalog, schema, table]
            .iter()
            .filter(|part| !part.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join(".");
        if table.is_empty() {
            return Err(file_relation(&written));
        }
        if let Some((name, path_shaped)) = file_like_parts(map) {
            return self.file_like(name, path_shaped, &written);
        }
        if !catalog.is_empty() {
            // Only the attached databases' own tables may be named with a catalog; `system`,
            // `temp` and `memory` hold DuckDB's views and the session's state.
            if self.is_database(catalog) {
                return Ok(());
            }
            // `a.b.t` where `a` is no catalog: DuckDB 2.0 binds the table `t` of the nested
            // schema `a.b` of the database. No other catalog is attached but DuckDB's own, and
            // the plan check refuses a scan of anything but the database. `main` is the
            // top-level schema, so `a.main.t` names a catalog. Under privacy rules no such name
            // is taken: the private catalog's name must never reach the binder.
            if !self.rules.restricted
                && !is_builtin_catalog(catalog)
                && !schema.eq_ignore_ascii_case("main")
            {
                return Ok(());
            }
            return Err(unknown_relation(&written));
        }
        if schema.is_empty() && self.in_scope(scope, table) {
            return Ok(());
        }
        let schema = (!schema.is_empty()).then_some(schema);
        match functions::system_view(schema, table) {
            None | Some(SystemView::Constant) => Ok(()),
            Some(SystemView::Catalog) if self.rules.restricted => Err(catalog_listing(&written)),
            Some(SystemView::Catalog) => Ok(()),
            Some(SystemView::Denied(denial)) => Err(denied(&written, denial)),
        }
    }

    /// A relation named like a file. A table or view of the database may have such a name
    /// (`"a.b.c"`, `exports.csv`), and DuckDB's binder takes it before it tries a file. This
    /// walk runs beside the attach and cannot see the catalog, so the name is noted in
    /// [`TreeFacts::file_like`]: the worker asks the catalog for it as soon as the database is
    /// attached, before anything binds, and the plan check asks again (each holds alone). Under
    /// privacy rules, after one of DuckDB's own catalogs, and with a catalog part written beside
    /// a part shaped like a path, it is refused here. A name that only ends like a data file's
    /// (`tandem.secret.csv`; `s1.s2.tbl`, a nested schema's table to DuckDB 2.0) is the
    /// catalog's to decide, whatever its first part. A file of a declared folder
    /// (`'exports/x.csv'`) is read through the folders' file system, and the plan check judges
    /// the files it bound.
    fn file_like(
        &mut self,
        name: (String, String, String),
        path_shaped: bool,
        written: &str,
    ) -> Result<(), Refusal> {
        if name.0.is_empty() && name.1.is_empty() && in_declared_folder(self.rules.folders, &name.2)
        {
            return Ok(());
        }
        let path_after_a_catalog = path_shaped && !name.0.is_empty();
        if self.rules.restricted || is_builtin_catalog(&name.0) || path_after_a_catalog {
            return Err(file_relation(written));
        }
        self.facts.file_like.push(name);
        Ok(())
    }

    /// A table function in `FROM`: on the allowlist, and not a catalog listing under privacy
    /// rules.
    fn table_function(&self, map: &Map<String, Json>) -> Result<(), Refusal> {
        let called = map
            .get("function")
            .and_then(|f| f.get("function_name"))
            .and_then(Json::as_str)
            .ok_or_else(|| unexpected("a table function without a name"))?
            .to_ascii_lowercase();
        match functions::table_use(&called) {
            TableUse::Refused(denial) => Err(denied(&called, denial)),
            TableUse::PlanOnly => Err(table_function_not_allowed(&called)),
            // The database's own table macro or nothing: the plan check sees what DuckDB binds.
            TableUse::NotBuiltIn => Ok(()),
            TableUse::Allowed(RowSource::Catalog) if self.rules.restricted => {
                Err(catalog_listing(&format!("{called}()")))
            }
            TableUse::Allowed(RowSource::DeclaredFolders) if self.rules.folders.is_empty() => {
                Err(no_declared_folders(&called))
            }
            TableUse::Allowed(
                RowSource::Catalog
                | RowSource::Arguments
                | RowSource::Constant
                | RowSource::DeclaredFolders,
            ) => Ok(()),
        }
    }

    /// `DESCRIBE`, `SHOW`, `SHOW TABLES`, `SUMMARIZE` (DuckDB's `SHOW_REF`).
    fn show(&mut self, map: &Map<String, Json>) -> Result<(), Refusal> {
        let show_type = map
            .get("show_type")
            .and_then(Json::as_str)
            .ok_or_else(|| unexpected("a SHOW without its kind"))?;
        match show_type {
            // Planned as a scan of every column: the plan check sees what it reads.
            "SUMMARY" => Ok(()),
            "DESCRIBE" | "SHOW" => {
                let part = |key: &str| map.get(key).and_then(Json::as_str).unwrap_or_default();
                let parts = [
                    part("catalog_name"),
                    part("schema_name"),
                    part("table_name"),
                ];
                if let Some((name, path_shaped)) = file_like_parts(map) {
                    let written = parts
                        .iter()
                        .filter(|p| !p.is_empty())
                        .copied()
                        .collect::<Vec<_>>()
                        .join(".");
                    self.file_like(name, path_shaped, &written)?;
                }
                self.facts.note_show(map);
                Ok(())
            }
            // `SHOW TABLES FROM schema`: a listing of that schema's tables.
            "SHOW_FROM" if self.rules.restricted => Err(catalog_listing("SHOW TABLES FROM")),
            "SHOW_FROM" => Ok(()),
            "SHOW_SPECIAL" => {
                let table = map
                    .get("table_name")
                    .and_then(Json::as_str)
                    .ok_or_else(|| unexpected("a SHOW without its subject"))?;
                match table.trim_matches('"').to_ascii_lowercase().as_str() {
                    "tables" | "__show_tables_expanded" if self.rules.restricted => {
                        Err(catalog_listing("SHOW TABLES"))
                    }
                    "tables" | "__show_tables_expanded" => Ok(()),
                    "databases" => Err(denied("SHOW DATABASES", functions::READS_SETTINGS)),
                    _ => Err(unsupported(
                        &format!("SHOW {table}"),
                        "use SHOW TABLES, DESCRIBE or list_tables",
                    )),
                }
            }
            other => Err(unexpected(&format!("SHOW of kind {other}"))),
        }
    }
}

#[cfg(test)]
mod tests;

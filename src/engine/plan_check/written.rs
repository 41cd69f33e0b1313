//! What the query writes, judged before DuckDB binds it: the functions DuckDB's binder would
//! evaluate while binding, and the relations named like files, which DuckDB could read as files
//! when no table or view of the database has that name.

use duckdb::Connection;
use serde_json::Value as Json;

use super::super::errors::query_error;
use super::super::own_sql::{Cache, OwnSql};
use super::super::statement::{Sql, prepare_sql};
use super::Refused;
use crate::plan_policy::Attached;
use crate::protocol::Failure;
use duckgate_validate::validate::functions;
use duckgate_validate::validate::refusals;

/// The functions the query writes, refused by the policy before DuckDB binds anything: DuckDB's
/// binder evaluates some calls while it binds (a call with constant arguments that another
/// function's argument must be cast from, `lower(json_serialize_plan('…'))`), so such a call
/// runs before any plan exists and leaves only its result in the plan. The worker's walk of the
/// parse tree refuses these too; this keeps the plan check whole on its own. Under privacy rules
/// the same holds for counters of the process's statements (`txid_current()` in a subquery
/// reached the result while its plan showed no call of it). A file reader binds by reading its
/// files: where no folder is declared it is refused here, before DuckDB opens anything.
pub(crate) fn refuse_written_functions(
    tree: &Json,
    privacy: bool,
    folders_declared: bool,
) -> Result<(), Refused> {
    let mut stack = vec![tree];
    while let Some(value) = stack.pop() {
        match value {
            Json::Object(map) => {
                if let Some(Json::String(name)) = map.get("function_name") {
                    let lower = name.to_ascii_lowercase();
                    let reads_folders = functions::allowed_table_function(name)
                        == Some(functions::RowSource::DeclaredFolders);
                    if reads_folders && !folders_declared {
                        return Err(Refused::Because(
                            refusals::no_declared_folders(&lower).into(),
                        ));
                    }
                    match functions::expression_use(name) {
                        functions::ExpressionUse::Refused(denial) => {
                            return Err(Refused::Because(refusals::denied(&lower, denial).into()));
                        }
                        functions::ExpressionUse::CountsStatements if privacy => {
                            let refused = refusals::statement_counter(&format!("{lower}()"));
                            return Err(Refused::Because(refused.into()));
                        }
                        functions::ExpressionUse::CountsStatements
                        | functions::ExpressionUse::CatalogListing
                        | functions::ExpressionUse::Allowed
                        | functions::ExpressionUse::NotBuiltIn => {}
                    }
                }
                stack.extend(map.values());
            }
            Json::Array(items) => stack.extend(items.iter()),
            Json::Null | Json::Bool(_) | Json::Number(_) | Json::String(_) => {}
        }
    }
    Ok(())
}

/// The first of the relations named like files (`TreeFacts::file_like`) that is no table or
/// view of an attached database, as written: without a catalog, of the default (the first of
/// `attached`), or, written `name.table`, of the database `name`'s `main` schema, as DuckDB's
/// binder tries a schema and then a catalog; with one, of the database it names by its
/// declared name. DuckDB's binder takes a relation of a database before any replacement scan,
/// so only such a name could be read as a file. A file of a declared folder (`'exports/x.csv'`)
/// is none of these: it is read through the folders' file system and its bound files judged by
/// the plan check. Both the worker's walk (once the databases are attached) and this plan check
/// ask it, so each holds alone.
pub(crate) fn first_file_outside(
    conn: &Connection,
    attached: &[Attached],
    folders: &[String],
    file_like: &[(String, String, String)],
) -> Result<Option<String>, Failure> {
    let named = |name: &str| {
        attached
            .iter()
            .find(|database| database.name.eq_ignore_ascii_case(name))
    };
    for name in file_like {
        if in_declared_folder(folders, name) {
            continue;
        }
        let (catalog, schema, table) = name;
        let found = match (catalog.is_empty(), attached.first(), named(catalog)) {
            (_, None, _) => false,
            (true, Some(default), _) => {
                is_relation_of(conn, &default.catalog, schema, table)?
                    || match named(schema) {
                        Some(database) => is_relation_of(conn, &database.catalog, "", table)?,
                        None => false,
                    }
            }
            (false, Some(_), Some(database)) => {
                is_relation_of(conn, &database.catalog, schema, table)?
            }
            // Any other first part is, to DuckDB 2.0, the parent of a nested schema of the
            // default database.
            (false, Some(default), None) => {
                is_nested_relation_of(conn, &default.catalog, catalog, schema, table)?
            }
        };
        if !found {
            return Ok(Some(written_name(name)));
        }
    }
    Ok(None)
}

/// Whether the database attached as `alias` has a table or view `table` in the schema `schema`
/// nested in the schema `parent` (`parent.schema.table`, DuckDB 2.0's nested schemas).
fn is_nested_relation_of(
    conn: &Connection,
    alias: &str,
    parent: &str,
    schema: &str,
    table: &str,
) -> Result<bool, Failure> {
    let nested_relation = OwnSql::fixed(
        "SELECT count(*) > 0 FROM (
             SELECT schema_oid, table_name AS name FROM duckdb_tables() WHERE database_name = $1
             UNION ALL
             SELECT schema_oid, view_name FROM duckdb_views() WHERE database_name = $1
         ) AS relation JOIN duckdb_schemas() AS s ON s.oid = relation.schema_oid
         WHERE s.database_name = $1 AND lower(s.parent_schema) = lower($2)
           AND lower(s.schema_name) = lower($3) AND lower(relation.name) = lower($4)",
    );
    prepare_sql(conn, Sql::Own(&nested_relation), Cache::Keep)
        .and_then(|mut stmt| stmt.query_row([alias, parent, schema, table], |row| row.get(0)))
        .map_err(|e| query_error(&e))
}

/// Whether a relation named like a file is a file of a declared folder (`'exports/x.csv'`):
/// DuckDB reads it through the folders' file system, and the plan check then judges the files
/// it bound.
pub(crate) fn in_declared_folder(
    folders: &[String],
    (catalog, schema, table): &(String, String, String),
) -> bool {
    catalog.is_empty() && schema.is_empty() && refusals::in_declared_folder(folders, table)
}

/// A relation's (catalog, schema, table) as written: its non-empty parts joined by dots.
pub(crate) fn written_name((catalog, schema, table): &(String, String, String)) -> String {
    [catalog, schema, table]
        .iter()
        .filter(|part| !part.is_empty())
        .map(|part| part.as_str())
        .collect::<Vec<_>>()
        .join(".")
}

/// Whether `schema.table` (`main` when no schema is written) is a table or view of the
/// catalog `alias`, as DuckDB's binder looks names up: ASCII case-insensitively.
fn is_relation_of(
    conn: &Connection,
    alias: &str,
    schema: &str,
    table: &str,
) -> Result<bool, Failure> {
    let schema = if schema.is_empty() { "main" } else { schema };
    let relation = OwnSql::fixed(
        "SELECT count(*) > 0 FROM (
             SELECT schema_name, table_name AS name FROM duckdb_tables() WHERE database_name = $1
             UNION ALL
             SELECT schema_name, view_name FROM duckdb_views() WHERE database_name = $1
         ) WHERE lower(schema_name) = lower($2) AND lower(name) = lower($3)",
    );
    prepare_sql(conn, Sql::Own(&relation), Cache::Keep)
        .and_then(|mut stmt| stmt.query_row([alias, schema, table], |row| row.get(0)))
        .map_err(|e| query_error(&e))
}

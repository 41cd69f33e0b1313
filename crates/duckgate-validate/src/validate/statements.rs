//! Statement kinds: which top-level statements are allowed at all.
//!
//! The match over [`Statement`] lists every variant by name (no wildcard), so a statement kind
//! added by a sqlparser upgrade fails the build here until someone decides about it. Only queries
//! and the read-only introspection forms (DESCRIBE, SHOW TABLES, SHOW t, EXPLAIN of a query)
//! and `CALL` of a table function pass; every other statement is refused with the seed message.

use sqlparser::ast::{
    DescribeAlias, Expr, ObjectName, ObjectNamePart, ShowStatementOptions, Statement, UtilityOption,
};

use super::refusals::policy_blocked;
use super::walk::{Walker, unsupported};
use super::{Parsed, Refusal, StatementKind, write_refused};
use crate::error::ErrorKind;

/// Decide one statement, walking what it reads. `show_subject` is the name when the text is
/// exactly `SHOW <name>` (sqlparser's tree of a `SHOW` drops what it cannot read, so the tokens
/// tell).
pub(crate) fn decide_statement(
    statement: &Statement,
    show_subject: Option<&ObjectName>,
    walker: &mut Walker<'_>,
) -> Result<Parsed, Refusal> {
    let walked = |kind| Ok(Parsed::Walked(kind));
    match statement {
        Statement::Query(query) => {
            walker.query(query)?;
            walked(StatementKind::Query)
        }
        Statement::Explain {
            describe_alias,
            analyze,
            verbose,
            query_plan,
            estimate,
            statement,
            format,
            options,
        } => {
            if *verbose || *query_plan || *estimate || format.is_some() {
                return Err(unsupported(
                    "these EXPLAIN options",
                    "use EXPLAIN or EXPLAIN ANALYZE",
                ));
            }
            for UtilityOption { name, arg } in options.iter().flatten() {
                let is_format = name.value.eq_ignore_ascii_case("format")
                    && matches!(arg, Some(Expr::Identifier(_)));
                if !is_format {
                    return Err(unsupported(
                        "this EXPLAIN option",
                        "use EXPLAIN (FORMAT json) or plain EXPLAIN",
                    ));
                }
            }
            let kind = match describe_alias {
                DescribeAlias::Explain => StatementKind::Explain,
                DescribeAlias::Describe | DescribeAlias::Desc => {
                    if *analyze || options.is_some() {
                        return Err(unsupported(
                            "DESCRIBE with options",
                            "use DESCRIBE SELECT ...",
                        ));
                    }
                    StatementKind::Describe
                }
            };
            match statement.as_ref() {
                Statement::Query(query) => walker.query(query)?,
                other => return Err(write_refused(name(other))),
            }
            walked(kind)
        }
        Statement::ExplainTable {
            describe_alias,
            hive_format,
            has_table_keyword: _,
            table_name,
        } => {
            match describe_alias {
                DescribeAlias::Describe | DescribeAlias::Desc => {}
                DescribeAlias::Explain => {
                    return Err(unsupported(
                        "EXPLAIN of a table name",
                        "use DESCRIBE t or EXPLAIN SELECT ...",
                    ));
                }
            }
            if hive_format.is_some() {
                return Err(unsupported("DESCRIBE EXTENDED/FORMATTED", "use DESCRIBE t"));
            }
            // DuckDB reads `DESCRIBE TABLES` (quoted or not) as `SHOW TABLES`, whatever the
            // database holds: a listing, not a relation.
            if let [ObjectNamePart::Identifier(only)] = table_name.0.as_slice()
                && only.value.eq_ignore_ascii_case("tables")
            {
                walker.check_catalog_listing("DESCRIBE TABLES")?;
                return walked(StatementKind::Show);
            }
            walker.relation(table_name)?;
            walked(StatementKind::Describe)
        }
        // DuckDB binds `CALL f(…)` as `SELECT * FROM f(…)`: a table function call, checked as
        // one (the worker runs it in that form).
        Statement::Call(function) => {
            walker.call_statement(function)?;
            walked(StatementKind::Call)
        }
        Statement::ShowTables {
            terse,
            history,
            extended,
            full,
            external,
            show_options,
        } => {
            let ShowStatementOptions {
                show_in,
                starts_with,
                limit,
                limit_from,
                filter_position,
            } = show_options;
            let no_options = !(*terse || *history || *extended || *full || *external)
                && starts_with.is_none()
                && limit.is_none()
                && limit_from.is_none()
                && filter_position.is_none();
            if no_options && show_in.is_some() {
                // `SHOW TABLES FROM schema`: DuckDB resolves the schema (or database) itself;
                // the worker's walk and plan check decide (a listing, refused under privacy
                // rules like every other).
                walker.check_catalog_listing("SHOW TABLES FROM")?;
                return Ok(Parsed::Unparsed);
            }
            if !no_options {
                return Err(unsupported(
                    "SHOW TABLES with options",
                    "use SHOW TABLES, or list_tables",
                ));
            }
            walker.check_catalog_listing("SHOW TABLES")?;
            walked(StatementKind::Show)
        }
        Statement::ShowVariable { variable } => match show_subject {
            // DuckDB reads `SHOW t` as `DESCRIBE t` when `t` is a relation, and shows the
            // setting `t` otherwise.
            Some(subject) => {
                walker.relation(subject).map_err(|refusal| {
                    if refusal.kind == ErrorKind::UnknownName {
                        show_refused(subject)
                    } else {
                        refusal
                    }
                })?;
                walked(StatementKind::Show)
            }
            None => {
                let words: Vec<String> = variable
                    .iter()
                    .map(|i| i.value.to_ascii_lowercase())
                    .collect();
                if words == ["all", "tables"] {
                    walker.check_catalog_listing("SHOW ALL TABLES")?;
                    walked(StatementKind::Show)
                } else {
                    // sqlparser skips what it cannot read after SHOW (`SHOW SELECT 1` becomes
                    // `SHOW SELECT`), so this tree does not say what the statement is.
                    Ok(Parsed::Unparsed)
                }
            }
        },
        // Everything else is refused. `name` below lists every variant without a wildcard, so a
        // statement kind added by a sqlparser upgrade still stops the build for a decision.
        other => Err(write_refused(name(other))),
    }
}

/// `SHOW name` where `name` is no relation of the database: DuckDB would show its setting of
/// that name, if it has one.
fn show_refused(subject: &ObjectName) -> Refusal {
    policy_blocked(
        &format!("SHOW {subject}"),
        format!(
            "SHOW {subject} names no table or view of this database, and DuckDB's own settings are not available."
        ),
        "Use DESCRIBE t (or SHOW t) for a table's columns, SHOW TABLES or list_tables for the tables, and server_info for the server's settings.",
    )
}

/// A readable name for a statement kind (for refusals). Exhaustive: a new kind breaks the build.
pub(crate) fn name(statement: &Statement) -> &'static str {
    match statement {
        Statement::Query { .. } => "SELECT",
        Statement::Explain { .. } => "EXPLAIN",
        Statement::ExplainTable { .. } => "DESCRIBE",
        Statement::ShowTables { .. } => "SHOW TABLES",
        Statement::ShowVariable { .. } => "SHOW",
        Statement::Analyze { .. } => "ANALYZE",
        Statement::Set { .. } => "SET",
        Statement::Truncate { .. } => "TRUNCATE",
        Statement::Msck { .. } => "MSCK",
        Statement::Insert { .. } => "INSERT",
        Statement::Install { .. } => "INSTALL",
        Statement::Load { .. } => "LOAD",
        Statement::Directory { .. } => "DIRECTORY",
        Statement::Case { .. } => "CASE",
        Statement::If { .. } => "IF",
        Statement::While { .. } => "WHILE",
        Statement::Raise { .. } => "RAISE",
        Statement::Call { .. } => "CALL",
        Statement::Copy { .. } => "COPY",
        Statement::CopyIntoSnowflake { .. } => "COPY INTO",
        Statement::Open { .. } => "OPEN",
        Statement::Close { .. } => "CLOSE",
        Statement::Update { .. } => "UPDATE",
        Statement::Delete { .. } => "DELETE",
        Statement::CreateView { .. } => "CREATE VIEW",
        Statement::CreateTable { .. } => "CREATE TABLE",
        Statement::CreateVirtualTable { .. } => "CREATE VIRTUAL TABLE",
        Statement::CreateIndex { .. } => "CREATE INDEX",
        Statement::CreateRole { .. } => "CREATE ROLE",
        Statement::CreateSecret { .. } => "CREATE SECRET",
        Statement::CreateServer { .. } => "CREATE SERVER",
        Statement::CreatePolicy { .. } => "CREATE POLICY",
        Statement::CreateConnector { .. } => "CREATE CONNECTOR",
        Statement::CreateOperator { .. } => "CREATE OPERATOR",
        Statement::CreateOperatorFamily { .. } => "CREATE OPERATOR FAMILY",
        Statement::CreateOperatorClass { .. } => "CREATE OPERATOR CLASS",
        Statement::CreateTextSearch { .. } => "CREATE TEXT SEARCH",
        Statement::AlterTable { .. } => "ALTER TABLE",
        Statement::AlterSchema { .. } => "ALTER SCHEMA",
        Statement::AlterIndex { .. } => "ALTER INDEX",
        Statement::AlterView { .. } => "ALTER VIEW",
        Statement::AlterFunction { .. } => "ALTER FUNCTION",
        Statement::AlterType { .. } => "ALTER TYPE",
        Statement::AlterCollation { .. } => "ALTER COLLATION",
        Statement::AlterOperator { .. } => "ALTER OPERATOR",
        Statement::AlterOperatorFamily { .. } => "ALTER OPERATOR FAMILY",
        Statement::AlterOperatorClass { .. } => "ALTER OPERATOR CLASS",
        Statement::AlterTextSearch { .. } => "ALTER TEXT SEARCH",
        Statement::AlterRole { .. } => "ALTER ROLE",
        Statement::AlterPolicy { .. } => "ALTER POLICY",
        Statement::AlterConnector { .. } => "ALTER CONNECTOR",
        Statement::AlterSession { .. } => "ALTER SESSION",
        Statement::AttachDatabase { .. } => "ATTACH",
        Statement::AttachDuckDBDatabase { .. } => "ATTACH",
        Statement::DetachDuckDBDatabase { .. } => "DETACH",
        Statement::Drop { .. } => "DROP",
        Statement::DropFunction { .. } => "DROP FUNCTION",
        Statement::DropDomain { .. } => "DROP DOMAIN",
        Statement::DropProcedure { .. } => "DROP PROCEDURE",
        Statement::DropSecret { .. } => "DROP SECRET",
        Statement::DropPolicy { .. } => "DROP POLICY",
        Statement::DropConnector { .. } => "DROP CONNECTOR",
        Statement::Declare { .. } => "DECLARE",
        Statement::CreateExtension { .. } => "CREATE EXTENSION",
        Statement::CreateCollation { .. } => "CREATE COLLATION",
        Statement::DropExtension { .. } => "DROP EXTENSION",
        Statement::DropOperator { .. } => "DROP OPERATOR",
        Statement::DropOperatorFamily { .. } => "DROP OPERATOR FAMILY",
        Statement::DropOperatorClass { .. } => "DROP OPERATOR CLASS",
        Statement::Fetch { .. } => "FETCH",
        Statement::Flush { .. } => "FLUSH",
        Statement::Discard { .. } => "DISCARD",
        Statement::ShowFunctions { .. } => "SHOW FUNCTIONS",
        Statement::ShowStatus { .. } => "SHOW STATUS",
        Statement::ShowVariables { .. } => "SHOW VARIABLES",
        Statement::ShowCreate { .. } => "SHOW CREATE",
        Statement::ShowColumns { .. } => "SHOW COLUMNS",
        Statement::ShowCatalogs { .. } => "SHOW CATALOGS",
        Statement::ShowDatabases { .. } => "SHOW DATABASES",
        Statement::ShowProcessList { .. } => "SHOW PROCESS LIST",
        Statement::ShowSchemas { .. } => "SHOW SCHEMAS",
        Statement::ShowCharset { .. } => "SHOW CHARSET",
        Statement::ShowObjects { .. } => "SHOW OBJECTS",
        Statement::ShowViews { .. } => "SHOW VIEWS",
        Statement::ShowCollation { .. } => "SHOW COLLATION",
        Statement::Use { .. } => "USE",
        Statement::StartTransaction { .. } => "BEGIN / START TRANSACTION",
        Statement::Comment { .. } => "COMMENT",
        Statement::Commit { .. } => "COMMIT",
        Statement::Rollback { .. } => "ROLLBACK",
        Statement::CreateSchema { .. } => "CREATE SCHEMA",
        Statement::CreateDatabase { .. } => "CREATE DATABASE",
        Statement::CreateFunction { .. } => "CREATE FUNCTION",
        Statement::CreateTrigger { .. } => "CREATE TRIGGER",
        Statement::DropTrigger { .. } => "DROP TRIGGER",
        Statement::CreateProcedure { .. } => "CREATE PROCEDURE",
        Statement::CreateMacro { .. } => "CREATE MACRO",
        Statement::CreateStage { .. } => "CREATE STAGE",
        Statement::CreateFileFormat { .. } => "CREATE FILE FORMAT",
        Statement::CreateWarehouse { .. } => "CREATE WAREHOUSE",
        Statement::Assert { .. } => "ASSERT",
        Statement::Grant { .. } => "GRANT",
        Statement::Deny { .. } => "DENY",
        Statement::Revoke { .. } => "REVOKE",
        Statement::Deallocate { .. } => "DEALLOCATE",
        Statement::Execute { .. } => "EXECUTE",
        Statement::Prepare { .. } => "PREPARE",
        Statement::Kill { .. } => "KILL",
        Statement::Savepoint { .. } => "SAVEPOINT",
        Statement::ReleaseSavepoint { .. } => "RELEASE SAVEPOINT",
        Statement::Merge { .. } => "MERGE",
        Statement::Cache { .. } => "CACHE",
        Statement::UNCache { .. } => "UNCACHE",
        Statement::CreateSequence { .. } => "CREATE SEQUENCE",
        Statement::CreateDomain { .. } => "CREATE DOMAIN",
        Statement::CreateType { .. } => "CREATE TYPE",
        Statement::Pragma { .. } => "PRAGMA",
        Statement::Lock { .. } => "LOCK",
        Statement::LockTables { .. } => "LOCK TABLES",
        Statement::UnlockTables => "UNLOCK TABLES",
        Statement::Unload { .. } => "UNLOAD",
        Statement::OptimizeTable { .. } => "OPTIMIZE TABLE",
        Statement::LISTEN { .. } => "LISTEN",
        Statement::UNLISTEN { .. } => "UNLISTEN",
        Statement::NOTIFY { .. } => "NOTIFY",
        Statement::LoadData { .. } => "LOAD DATA",
        Statement::RenameTable { .. } => "RENAME TABLE",
        Statement::List { .. } => "LIST",
        Statement::Put { .. } => "PUT",
        Statement::Remove { .. } => "REMOVE",
        Statement::RaisError { .. } => "RAISERROR",
        Statement::Throw { .. } => "THROW",
        Statement::Print { .. } => "PRINT",
        Statement::WaitFor { .. } => "WAIT FOR",
        Statement::Return { .. } => "RETURN",
        Statement::ExportData { .. } => "EXPORT DATA",
        Statement::CreateUser { .. } => "CREATE USER",
        Statement::AlterUser { .. } => "ALTER USER",
        Statement::Vacuum { .. } => "VACUUM",
        Statement::Reset { .. } => "RESET",
    }
}

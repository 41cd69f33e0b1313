//! The worker's check of DuckDB's bound plan: every operator, table, column, function and type
//! DuckDB bound for a statement must be allowed, or the statement is never prepared, let alone
//! run. Under the operator's privacy rules the statement also may read no hidden table, no
//! hidden column and no catalog listing.
//!
//! Why the bound plan. The walks of the SQL (the parent's of sqlparser's tree, the worker's of
//! DuckDB's, `validate::tree`) see names as written; DuckDB's binder decides what they mean. A
//! name can be a CTE, a table, a view or macro stored in the database whose text no walk sees,
//! one of DuckDB's system views (`pg_settings` is a view over `duckdb_settings()`), or a file
//! (a replacement scan). The bound plan has all of that resolved: every table scan names its
//! catalog, schema and table and lists the columns it reads, every function call is bound to
//! the built-in it resolved to (macros expanded), and every value has its type.
//!
//! How it is read. The plan reader (`duckgate_plan_reader`, a C++ visitor compiled with DuckDB)
//! is installed in the worker's DuckDB as an optimizer extension. Once [`PlanJudge::serve`] has
//! given it this request's rules, DuckDB hands it every plan it prepares on the engine's
//! connection, twice: as bound, before any optimizer ran (every reference the statement makes,
//! even one the optimizer would drop, and nothing evaluated: the optimizer's constant folding
//! would run functions on constant arguments), and optimized (what execution will read). The
//! judge decides from DuckDB's own structures; a refusal makes DuckDB's prepare fail. The
//! plan judged is therefore the plan that runs, with no second bind, and every statement the
//! worker prepares from the agent's (the rendering wrapper, `DESCRIBE`, `EXPLAIN`, a rebind at
//! execution) is judged by the same rules.
//!
//! The rules, each failing closed (anything this check does not recognise is refused):
//! - every operator is allowed by `plan_policy::operator_use`, every expression class by
//!   `plan_policy::expression_allowed`, every type by `plan_policy::type_allowed`; a code the
//!   reader does not know, or a part of the plan it could not read, is refused;
//! - a LOGICAL_GET is a scan of a table of the attached database (`seq_scan`) or an allowed
//!   table function of `validate::function_policy`, the one table the two walks read too;
//! - every bound function, aggregate, window function, operator and cast has a row in that
//!   table, and its class allows it; one with no row, such as one a later DuckDB adds, is
//!   refused;
//! - a scan binds no file, unless folders are declared and it is a file reader of theirs
//!   (`Class::ReadsDeclaredFolders`): then the reader's list must be readable here, and every
//!   file on it, its symbolic links resolved, inside a declared folder and a regular file; all
//!   the files a plan binds are at most `--files-max-count`, of at most `--files-max-bytes`
//!   together;
//! - under privacy rules: no scan of a hidden table in the bound plan; no hidden column read by
//!   the optimized plan (see below); nothing lists the catalog; every refusal is the same
//!   [`PLAN_REFUSAL`], naming nothing.
//!
//! Hidden columns are judged on the optimized plan. A view stored in the database may compute
//! some of its columns from hidden ones; the bound plan of a query over it binds every column
//! of the view, and DuckDB's optimizer then drops the columns the query does not use. Under
//! privacy rules the optimizers that decide from the data's statistics are off
//! ([`DATA_DEPENDENT_OPTIMIZERS`]), so every rewrite left is one that holds for all data of the
//! same schema: a column the optimized plan does not read cannot change the answer. A query
//! over a view's visible columns is answered; one whose answer depends on a hidden column (a
//! filter on it, inside the view or out) still reads it, and is refused.
//!
//! Under privacy rules the binder sees a shadow catalog in which hidden objects do not exist
//! (`shadow`): a hidden name fails like a made-up one, and expansions give the visible columns.
//! What the shadow cannot hide is a view or macro stored in the database, whose text may read
//! hidden objects; this check is what stops those, from the column bindings, and it holds even
//! if a query names the private catalog.
//!
//! DuckDB's own errors pass unchanged: matching hidden names in their text (which the agent
//! writes into, `struct_extract({'a': 1}, 'raw_events')`) would itself tell hidden names apart.
//! The worker rewords "not found" errors afterwards (`Engine::private_error`), whatever they
//! name.

use std::sync::{Mutex, MutexGuard};

use duckdb::Connection;
use duckgate_plan_reader::{
    Code, ColumnKind, Fact, FunctionFact, FunctionKind, Judge, Phase, PlanFacts, ScanFacts, Verdict,
};
use serde_json::Value as Json;

use super::errors::{query_error, worker_error};
use super::plan_policy::{self, OperatorUse};
use crate::privacy::{PLAN_REFUSAL, PrivacyPolicy};
use crate::protocol::Failure;
use duckgate_validate::error::ErrorKind;
use duckgate_validate::validate::functions::{self, Class};
use duckgate_validate::validate::refusals;

/// The optimizer that makes plans depend on column statistics; off under privacy rules, so
/// what a query costs, and which columns its optimized plan reads, do not depend on the data of
/// the tables it reads.
pub(crate) const DATA_DEPENDENT_OPTIMIZERS: &str = "statistics_propagation";

/// The privacy refusal; it names nothing and says what to do instead.
pub(crate) fn privacy_refusal() -> Failure {
    Failure {
        refusal: Some(crate::protocol::WorkerRefusal::PrivacyPlan),
        ..worker_error(ErrorKind::PolicyBlocked, PLAN_REFUSAL)
    }
}

/// What the plan check enforces beyond the base rules, for one request.
#[derive(Debug, Clone)]
pub(crate) struct PlanRules {
    /// The catalog name the database file is attached as (under privacy rules, the private one).
    pub(crate) alias: String,
    /// The operator's privacy rules, when there are any.
    pub(crate) privacy: Option<PrivacyPolicy>,
    /// The declared folders and the caps on what one query binds in them.
    pub(crate) folders: std::sync::Arc<crate::folders::FolderRules>,
}

/// Why a plan is refused, before it becomes an error: under privacy rules every reason becomes
/// the one [`PLAN_REFUSAL`].
#[derive(Debug, Clone)]
pub(crate) enum Refused {
    /// A reason worth telling the agent (the refusal the parent would give).
    Because(Failure),
    /// The plan has a shape, or binds something, this check does not allow.
    Unknown(String),
}

impl Refused {
    pub(crate) fn into_error(self, privacy: bool) -> Failure {
        if privacy {
            return privacy_refusal();
        }
        match self {
            Refused::Because(error) => error,
            Refused::Unknown(what) => Failure {
                kind: ErrorKind::PolicyBlocked,
                message: format!(
                    "DuckDB's plan for this query uses {what}, which duckgate does not allow, so \
                     it was not run."
                ),
                construct: Some(what),
                suggestion: Some(
                    "Query the database's tables with plain SELECTs (see list_tables).".into(),
                ),
                missing: None,
                refusal: None,
            },
        }
    }
}

/// The judge the engine's connection is armed with (`duckgate_plan_reader::arm`).
///
/// Until [`PlanJudge::serve`] it allows every plan: the worker's own statements (the attach,
/// the shadow catalog, its warm-up) run before a request's rules exist. `serve` is one way:
/// nothing turns the rules off again, so every statement prepared after it, whoever builds it,
/// is judged.
#[derive(Debug, Default)]
pub(crate) struct PlanJudge {
    state: Mutex<JudgeState>,
}

#[derive(Debug, Default)]
struct JudgeState {
    /// This request's rules, once serving.
    rules: Option<PlanRules>,
    /// The first refusal since [`PlanJudge::begin_statement`].
    refused: Option<Refused>,
    /// `SHOW <table>` scans (`pragma_show`) in the bound plans since then.
    shown_tables: u32,
    /// DuckDB's names of the last optimized plan's result types since then.
    result_types: Option<Vec<String>>,
    /// The scans of every plan prepared while [`PlanJudge::trace_scans`] runs.
    trace: Option<TracedScans>,
}

/// The scans of the plans DuckDB prepared during one [`PlanJudge::trace_scans`], by phase.
#[derive(Debug, Default)]
pub(crate) struct TracedScans {
    /// Scans of the plans as bound: every table and column the statement references.
    pub(crate) bound: Vec<ScanFacts>,
    /// Scans of the optimized plans: what execution would read.
    pub(crate) optimized: Vec<ScanFacts>,
    /// How many plans were traced in each phase.
    pub(crate) plans: (u32, u32),
}

/// What the judge found for one statement's prepare.
#[derive(Debug)]
pub(crate) struct StatementVerdict {
    /// Why a plan was refused, if one was.
    pub(crate) refused: Option<Refused>,
    /// `SHOW <table>` scans the bound plans held.
    pub(crate) shown_tables: u32,
    /// The request's privacy rules hold.
    pub(crate) privacy: bool,
}

impl PlanJudge {
    fn state(&self) -> MutexGuard<'_, JudgeState> {
        // The judge never panics while holding the lock (a panic in a check happens outside
        // it), so a poisoned lock still holds whole state.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Judge every plan from now on by `rules`.
    pub(crate) fn serve(&self, rules: PlanRules) {
        self.state().rules = Some(rules);
    }

    /// Whether the judge has a request's rules.
    pub(crate) fn serving(&self) -> bool {
        self.state().rules.is_some()
    }

    /// Run `work` (the worker's own statements, before any request's rules) and return the
    /// scans of every plan DuckDB prepared meanwhile, as bound and optimized.
    pub(crate) fn trace_scans<T>(&self, work: impl FnOnce() -> T) -> (T, TracedScans) {
        self.state().trace = Some(TracedScans::default());
        let result = work();
        let traced = self.state().trace.take().unwrap_or_default();
        (result, traced)
    }

    /// Forget what the previous statement's plans left.
    pub(crate) fn begin_statement(&self) {
        let mut state = self.state();
        state.refused = None;
        state.shown_tables = 0;
        state.result_types = None;
    }

    /// DuckDB's names of the result column types of the last optimized plan judged since
    /// [`PlanJudge::begin_statement`], when DuckDB had resolved them.
    pub(crate) fn result_types(&self) -> Option<Vec<String>> {
        self.state().result_types.clone()
    }

    /// What the judge found since [`PlanJudge::begin_statement`].
    pub(crate) fn statement_verdict(&self) -> StatementVerdict {
        let mut state = self.state();
        StatementVerdict {
            refused: state.refused.take(),
            shown_tables: state.shown_tables,
            privacy: state
                .rules
                .as_ref()
                .is_some_and(|rules| rules.privacy.is_some()),
        }
    }
}

impl PlanJudge {
    /// The error for a statement DuckDB failed to run: the judge's reason when a plan DuckDB
    /// bound anew while running it was refused, else DuckDB's own error.
    pub(crate) fn error_for(&self, error: &duckdb::Error) -> Failure {
        let verdict = self.statement_verdict();
        match verdict.refused {
            Some(refused) => refused.into_error(verdict.privacy),
            None => query_error(error),
        }
    }
}

impl Judge for PlanJudge {
    fn judge(&self, phase: Phase, facts: &PlanFacts) -> Verdict {
        let rules = {
            let mut state = self.state();
            if phase == Phase::Optimized && !facts.result_types.is_empty() {
                state.result_types = Some(facts.result_types.clone());
            }
            if let Some(trace) = state.trace.as_mut() {
                let (scans, count) = match phase {
                    Phase::Bound => (&mut trace.bound, &mut trace.plans.0),
                    Phase::Optimized => (&mut trace.optimized, &mut trace.plans.1),
                };
                scans.extend(facts.scans.iter().cloned());
                *count += 1;
            }
            state.rules.clone()
        };
        let Some(rules) = rules else {
            return Verdict::Allow;
        };
        let mut shown_tables = 0;
        let checked = match phase {
            Phase::Bound => check_bound(&rules, facts, &mut shown_tables),
            Phase::Optimized => check_optimized(&rules, facts),
        };
        let mut state = self.state();
        state.shown_tables += shown_tables;
        match checked {
            Ok(()) => Verdict::Allow,
            Err(refused) => {
                state.refused.get_or_insert(refused);
                Verdict::Refuse
            }
        }
    }
}

/// The bound plan: everything the statement references.
fn check_bound(rules: &PlanRules, facts: &PlanFacts, shown: &mut u32) -> Result<(), Refused> {
    // The walk meets the root first.
    let mut root = true;
    for fact in &facts.facts {
        let at_root = match fact {
            Fact::Operator(_) => std::mem::replace(&mut root, false),
            _ => false,
        };
        match fact {
            Fact::Operator(Code::Known(operator)) => match plan_policy::operator_use(*operator) {
                OperatorUse::Rows | OperatorUse::Scan => {}
                OperatorUse::RootWrapper if at_root => {}
                OperatorUse::RootWrapper => {
                    return Err(Refused::Unknown(format!(
                        "the operator {} (it is a statement of its own)",
                        operator.duckdb_name()
                    )));
                }
                OperatorUse::Refused(why) => {
                    return Err(Refused::Unknown(format!(
                        "the operator {} ({why})",
                        operator.duckdb_name()
                    )));
                }
            },
            Fact::Expression(Code::Known(class)) => {
                plan_policy::expression_allowed(*class).map_err(|why| {
                    Refused::Unknown(format!(
                        "an expression of class {} ({why})",
                        class.duckdb_name()
                    ))
                })?;
            }
            Fact::Type {
                id: Code::Known(id),
                aggregate_state: _,
            } => {
                plan_policy::type_allowed(*id).map_err(|why| {
                    Refused::Unknown(format!("the type {} ({why})", id.duckdb_name()))
                })?;
            }
            Fact::Function(function) => check_function(rules, function, shown)?,
            Fact::Operator(Code::Unrecognised { label, .. }) => {
                return Err(Refused::Unknown(format!("the operator {label}")));
            }
            Fact::Expression(Code::Unrecognised { label, .. }) => {
                return Err(Refused::Unknown(format!("an expression of class {label}")));
            }
            Fact::Type {
                id: Code::Unrecognised { label, .. },
                ..
            } => return Err(Refused::Unknown(format!("the type {label}"))),
            Fact::Unknown(what) => return Err(Refused::Unknown(what.clone())),
        }
    }
    let mut bound = BoundFiles::default();
    for scan in &facts.scans {
        check_scan(rules, scan, &mut bound)?;
    }
    Ok(())
}

/// What the scans of one plan bound in the declared folders so far.
#[derive(Default)]
struct BoundFiles {
    count: u64,
    bytes: u64,
}

/// The files one scan of a declared folders' reader bound: each inside a folder (links
/// resolved), a regular file, and the plan's total within the caps.
fn check_folder_files(
    rules: &PlanRules,
    files: &[String],
    bound: &mut BoundFiles,
) -> Result<(), Refused> {
    let folders = &rules.folders;
    for file in files {
        let (_, size) = crate::folders::locate(&folders.folders, file)
            .map_err(|why| Refused::Because(refusals::file_outside_folders(file, &why).into()))?;
        bound.count += 1;
        bound.bytes = bound.bytes.saturating_add(size);
        if bound.count > folders.max_files {
            return Err(Refused::Because(
                refusals::too_many_files(folders.max_files, "--files-max-count", "files").into(),
            ));
        }
        if bound.bytes > folders.max_bytes {
            return Err(Refused::Because(
                refusals::too_many_files(folders.max_bytes, "--files-max-bytes", "bytes").into(),
            ));
        }
    }
    Ok(())
}

/// The optimized plan: under privacy rules, what execution reads must be visible.
fn check_optimized(rules: &PlanRules, facts: &PlanFacts) -> Result<(), Refused> {
    let Some(policy) = &rules.privacy else {
        return Ok(());
    };
    for scan in &facts.scans {
        let Some((schema, table)) = scanned_table(rules, scan)? else {
            continue;
        };
        let refused = || Refused::Unknown(format!("a scan of {schema}.{table}"));
        if policy.hides_table(&schema, table) {
            return Err(refused());
        }
        for column in &scan.columns {
            match column.kind {
                ColumnKind::RowId | ColumnKind::Virtual => {}
                ColumnKind::Own if policy.hides_column(&schema, table, &column.name) => {
                    return Err(refused());
                }
                ColumnKind::Own => {}
            }
        }
    }
    Ok(())
}

/// The schema (its path joined by dots) and name of the stored table `scan` reads, if it reads
/// one; a table of any catalog but the attached database's is refused as unknown.
fn scanned_table<'s>(
    rules: &PlanRules,
    scan: &'s ScanFacts,
) -> Result<Option<(String, &'s str)>, Refused> {
    let Some(path) = &scan.table else {
        return Ok(None);
    };
    let (Some((table, qualification)), true) = (path.split_last(), path.len() >= 3) else {
        return Err(Refused::Unknown("a table scan without its table".into()));
    };
    let (catalog, schema_path) = qualification
        .split_first()
        .ok_or_else(|| Refused::Unknown("a table scan without its catalog".into()))?;
    if !catalog.eq_ignore_ascii_case(&rules.alias) {
        return Err(Refused::Because(
            refusals::unknown_relation(&path.join(".")).into(),
        ));
    }
    Ok(Some((schema_path.join("."), table.as_str())))
}

/// What `scans` read from the stored tables of the catalog attached as `alias`: each column of
/// the table's own, or only its rows (row ids and virtual columns). Scans of anything else
/// (table functions) read no stored table.
pub(crate) fn table_reads(alias: &str, scans: &[ScanFacts]) -> Vec<crate::privacy::ReadColumn> {
    let mut reads = Vec::new();
    for scan in scans {
        let Some(path) = &scan.table else {
            continue;
        };
        let [catalog, schema_path @ .., table] = path.as_slice() else {
            continue;
        };
        if !catalog.eq_ignore_ascii_case(alias) {
            continue;
        }
        let schema = schema_path.join(".");
        let read = |column: Option<&str>| crate::privacy::ReadColumn {
            schema: schema.clone(),
            table: table.clone(),
            column: column.map(str::to_owned),
        };
        reads.push(read(None));
        for column in &scan.columns {
            match column.kind {
                ColumnKind::Own => reads.push(read(Some(&column.name))),
                ColumnKind::RowId | ColumnKind::Virtual => {}
            }
        }
    }
    reads.sort_by(|a, b| (&a.schema, &a.table, &a.column).cmp(&(&b.schema, &b.table, &b.column)));
    reads.dedup();
    reads
}

/// One LOGICAL_GET of the bound plan.
fn check_scan(rules: &PlanRules, scan: &ScanFacts, bound: &mut BoundFiles) -> Result<(), Refused> {
    let function: Vec<&str> = scan.function.iter().map(String::as_str).collect();
    let folder_reader = match function.as_slice() {
        [name] | ["system", _, name] => matches!(
            functions::bound_function(name, false),
            Some((_, Class::ReadsDeclaredFolders))
        ),
        _ => false,
    };
    match (&scan.files, folder_reader, rules.folders.folders.is_empty()) {
        // A file reader of the declared folders: its list must be read, and every file on it
        // inside them.
        (Some(files), true, false) => return check_folder_files(rules, files, bound),
        (None, true, false) => {
            return Err(Refused::Unknown(format!(
                "a file reader ({}) whose list of files the check cannot read",
                scan.function.join(".")
            )));
        }
        (Some(files), _, _) => {
            let first = files.first().map_or("a file", String::as_str);
            return Err(Refused::Because(refusals::file_relation(first).into()));
        }
        (None, true, true) => {
            return Err(Refused::Because(
                refusals::no_declared_folders(&scan.function.join(".")).into(),
            ));
        }
        (None, false, _) => {}
    }
    let seq_scan = matches!(scan.function.as_slice(), [.., name] if name == "seq_scan");
    match (seq_scan, scanned_table(rules, scan)?) {
        (true, None) => Err(Refused::Unknown("a table scan without its table".into())),
        (_, Some((schema, table))) => match &rules.privacy {
            Some(policy) if policy.hides_table(&schema, table) => {
                Err(Refused::Unknown(format!("a scan of {schema}.{table}")))
            }
            _ => Ok(()),
        },
        (false, None) => Ok(()),
    }
}

/// A bound function, checked against the policy table. `shown` counts `pragma_show` scans.
fn check_function(
    rules: &PlanRules,
    function: &FunctionFact,
    shown: &mut u32,
) -> Result<(), Refused> {
    let in_expression = match function.kind {
        FunctionKind::Scalar
        | FunctionKind::Cast
        | FunctionKind::Aggregate { .. }
        | FunctionKind::Window => true,
        FunctionKind::Table => false,
    };
    let path: Vec<&str> = function.path.iter().map(String::as_str).collect();
    let name = match path.as_slice() {
        [name] => *name,
        // Built-ins live in the `system` catalog; a function of any other catalog is not one.
        ["system", _schema, name] => *name,
        _ => {
            return Err(Refused::Unknown(format!(
                "the function {}",
                if function.path.is_empty() {
                    function.name.clone()
                } else {
                    function.path.join(".")
                }
            )));
        }
    };
    let Some((name, class)) = functions::bound_function(name, in_expression) else {
        return Err(Refused::Unknown(format!("the function {name}")));
    };
    if let Some(denial) = class.denial() {
        return Err(Refused::Because(refusals::denied(name, denial).into()));
    }
    if class == Class::ReadsDeclaredFolders && rules.folders.folders.is_empty() {
        return Err(Refused::Because(refusals::no_declared_folders(name).into()));
    }
    if class == Class::ListsCatalog && rules.privacy.is_some() {
        return Err(Refused::Because(
            refusals::catalog_listing(&format!("{name}()")).into(),
        ));
    }
    if class == Class::CountsStatements && rules.privacy.is_some() {
        return Err(Refused::Because(
            refusals::statement_counter(&format!("{name}()")).into(),
        ));
    }
    if name == "pragma_show" && !in_expression {
        if rules.privacy.is_some() {
            return Err(Refused::Because(
                refusals::catalog_listing("SHOW <table>").into(),
            ));
        }
        *shown += 1;
    }
    Ok(())
}

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
/// view of the database attached as `alias`, as written. DuckDB's binder takes a relation of
/// the database before any replacement scan, so only such a name could be read as a file.
/// Both the worker's walk (once the database is attached) and this plan check ask it, so each
/// holds alone.
pub(super) fn first_file_outside(
    conn: &Connection,
    alias: &str,
    folders: &[String],
    file_like: &[(String, String, String)],
) -> Result<Option<String>, Failure> {
    for name in file_like {
        if in_declared_folder(folders, name) {
            continue;
        }
        let (catalog, schema, table) = name;
        let known = if catalog.is_empty() || catalog.eq_ignore_ascii_case(alias) {
            is_relation_of(conn, alias, schema, table)?
        } else {
            // Any other first part is, to DuckDB 2.0, the parent of a nested schema.
            is_nested_relation_of(conn, alias, catalog, schema, table)?
        };
        if !known {
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
    conn.prepare_cached(
        "SELECT count(*) > 0 FROM (
             SELECT schema_oid, table_name AS name FROM duckdb_tables() WHERE database_name = $1
             UNION ALL
             SELECT schema_oid, view_name FROM duckdb_views() WHERE database_name = $1
         ) AS relation JOIN duckdb_schemas() AS s ON s.oid = relation.schema_oid
         WHERE s.database_name = $1 AND lower(s.parent_schema) = lower($2)
           AND lower(s.schema_name) = lower($3) AND lower(relation.name) = lower($4)",
    )
    .and_then(|mut stmt| stmt.query_row([alias, parent, schema, table], |row| row.get(0)))
    .map_err(|e| query_error(&e))
}

/// Whether a relation named like a file is a file of a declared folder (`'exports/x.csv'`):
/// DuckDB reads it through the folders' file system, and the plan check then judges the files
/// it bound.
pub(super) fn in_declared_folder(
    folders: &[String],
    (catalog, schema, table): &(String, String, String),
) -> bool {
    catalog.is_empty() && schema.is_empty() && refusals::in_declared_folder(folders, table)
}

/// A relation's (catalog, schema, table) as written: its non-empty parts joined by dots.
pub(super) fn written_name((catalog, schema, table): &(String, String, String)) -> String {
    [catalog, schema, table]
        .iter()
        .filter(|part| !part.is_empty())
        .map(|part| part.as_str())
        .collect::<Vec<_>>()
        .join(".")
}

/// Whether `schema.table` (`main` when no schema is written) is a table or view of the
/// database attached as `alias`, as DuckDB's binder looks names up: ASCII case-insensitively.
fn is_relation_of(
    conn: &Connection,
    alias: &str,
    schema: &str,
    table: &str,
) -> Result<bool, Failure> {
    let schema = if schema.is_empty() { "main" } else { schema };
    conn.prepare_cached(
        "SELECT count(*) > 0 FROM (
             SELECT schema_name, table_name AS name FROM duckdb_tables() WHERE database_name = $1
             UNION ALL
             SELECT schema_name, view_name FROM duckdb_views() WHERE database_name = $1
         ) WHERE lower(schema_name) = lower($2) AND lower(name) = lower($3)",
    )
    .and_then(|mut stmt| stmt.query_row([alias, schema, table], |row| row.get(0)))
    .map_err(|e| query_error(&e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::CheckedQuery;
    use crate::engine::Engine;
    use crate::engine::tests::{TempDir, config, make_db};
    use crate::protocol::database_names::wal_path;

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
        let mut engine = Engine::open(&config("1GiB"), &db, &wal_path(&db)).unwrap();
        engine.enforce_privacy(&policy());
        engine.attach(&db).unwrap();
        (dir, engine)
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
            let a = engine.private_error(a, hidden);
            let b = plan_checked(&mut engine, made_up).unwrap_err();
            let b = engine.private_error(b, made_up);
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
        let mut engine = Engine::open(&config("1GiB"), &db, &wal_path(&db)).unwrap();
        engine.attach(&db).unwrap();
        (dir, engine)
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
        let rules = PlanRules {
            alias: "db".into(),
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
        };
        assert!(judge(vec![], vec![scan("db", vec![])]));
        assert!(!judge(vec![], vec![scan("elsewhere", vec![])]));
        assert!(!judge(vec![], vec![scan("db", vec!["/etc/passwd".into()])]));
        let no_table = ScanFacts {
            table: None,
            ..scan("db", vec![])
        };
        assert!(!judge(vec![], vec![no_table]));
    }
}

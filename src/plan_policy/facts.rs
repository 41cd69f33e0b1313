//! Each fact of a plan against the policy: as bound, every operator, expression class, type and
//! function, and every scan (of the attached database's tables, of an allowed table function,
//! or of the files a declared folders' reader bound, within the caps); optimized, under privacy
//! rules, what execution reads.

use duckgate_plan_facts::{
    Code, ColumnKind, Fact, FunctionFact, FunctionKind, PlanFacts, ScanFacts,
};

use super::enumerations::{self, OperatorUse};
use super::{PlanRules, Refused};
use crate::privacy::PrivacyPolicy;
use duckgate_validate::validate::functions::{self, Class};
use duckgate_validate::validate::refusals;

/// The bound plan: everything the statement references.
pub(crate) fn check_bound(
    rules: &PlanRules,
    facts: &PlanFacts,
    shown: &mut u32,
) -> Result<(), Refused> {
    // The walk meets the root first.
    let mut root = true;
    for fact in &facts.facts {
        let at_root = match fact {
            Fact::Operator(_) => std::mem::replace(&mut root, false),
            _ => false,
        };
        match fact {
            Fact::Operator(Code::Known(operator)) => match enumerations::operator_use(*operator) {
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
                enumerations::expression_allowed(*class).map_err(|why| {
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
                enumerations::type_allowed(*id).map_err(|why| {
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
        let (_, size) = crate::folders::locate(folders, file)
            .map_err(|why| Refused::Because(refusals::file_outside_folders(file, &why).into()))?;
        bound.count += 1;
        bound.bytes = bound.bytes.saturating_add(size);
        if bound.count > folders.max_files {
            return Err(Refused::Visible(
                refusals::too_many_files(folders.max_files, "--files-max-count", "files").into(),
            ));
        }
        if bound.bytes > folders.max_bytes {
            return Err(Refused::Visible(
                refusals::too_many_files(folders.max_bytes, "--files-max-bytes", "bytes").into(),
            ));
        }
    }
    Ok(())
}

/// Every named parameter DuckDB 2.0's Parquet readers (`read_parquet`, `parquet_scan`) accept
/// that keeps each result column bound to the file column of its own name (DuckDB's
/// `MultiFileReader::AddParameters` and `ParquetScanFunction::AddNamedParameters`), each with why:
/// on files a column rule names, a hidden column is out of the file's schema before DuckDB binds
/// (`folders.cpp`, `PrivateColumnsReader`) and these leave it out. The columns some add (a file's
/// name, a row's number, a hive partition) hold what the path or the row's position says, under
/// a name the path or the caller gives, and the optimized plan's check still judges each by its
/// name. A test asks the linked DuckDB that this list and [`PARAMETERS_BINDING_COLUMNS`] together
/// are exactly what it accepts (`src/engine/plan_check/tests.rs`,
/// `every_named_parameter_of_the_parquet_readers_is_classified_for_files_under_column_rules`).
pub(crate) const PARAMETERS_KEEPING_COLUMN_NAMES: [(&str, &str); 17] = [
    (
        "hive_partitioning",
        "adds each key=value directory of the path as a column of that name, holding the path's value",
    ),
    (
        "union_by_name",
        "binds each file's columns by their names into one schema, instead of the first file's",
    ),
    (
        "filename",
        "adds one column holding the file's name, named `filename` or as the caller says",
    ),
    (
        "hive_types",
        "sets the types of hive partition columns (DuckDB refuses a name that is not one)",
    ),
    (
        "hive_types_autocast",
        "whether DuckDB guesses the hive partition columns' types",
    ),
    (
        "file_row_number",
        "adds one column `file_row_number`, the row's number in its file",
    ),
    ("allow_empty", "an empty list of files is no error"),
    ("binary_as_string", "reads BINARY columns as VARCHAR"),
    (
        "debug_use_openssl",
        "deprecated: DuckDB accepts and ignores it",
    ),
    (
        "compression",
        "a writer's option: the reader accepts and ignores it",
    ),
    (
        "explicit_cardinality",
        "the row count the optimizer assumes; it reads no column",
    ),
    (
        "encryption_config",
        "the key an encrypted file is decrypted with; the schema read is still the file's own",
    ),
    (
        "parquet_version",
        "a writer's option: the reader declares it and ignores it",
    ),
    (
        "can_have_nan",
        "whether floating-point statistics may hide a NaN, for skipping row groups",
    ),
    ("prefetch_strategy", "how the reader schedules its reads"),
    (
        "utf8_validation",
        "what the reader does with a string that is not valid UTF-8",
    ),
    ("int96_as", "the type INT96 timestamps are read as"),
];

/// The named parameters of DuckDB 2.0's Parquet readers refused on files a column rule names,
/// each with why: they choose, by the caller's words, which file column a result column is, or
/// what the scan claims of a column by its name.
pub(crate) const PARAMETERS_BINDING_COLUMNS: [(&str, &str); 3] = [
    (
        "schema",
        "maps the files' field ids to names and types the caller chooses: a hidden column could \
         be read under another name",
    ),
    (
        "bound_schema",
        "sets the result's columns, names and types outright, not from the file's schema",
    ),
    (
        "column_statistics",
        "hands the optimizer statistics for columns the caller names, which it trusts unread",
    ),
];

/// `parameter` keeps the files' column names ([`PARAMETERS_KEEPING_COLUMN_NAMES`]); anything
/// else, [`PARAMETERS_BINDING_COLUMNS`] or unknown, is refused on files a column rule names. The
/// one answer both sides give: the plan check here, and DuckDB's own reader as it parses each
/// option (`folders.cpp`, through `FolderPrivacy::refuses_option`).
pub(crate) fn parameter_keeps_column_names(parameter: &str) -> bool {
    PARAMETERS_KEEPING_COLUMN_NAMES
        .iter()
        .any(|(kept, _)| kept.eq_ignore_ascii_case(parameter))
}

/// The readers that bind a file's columns by the names its own schema holds (Parquet's), and so
/// can leave a hidden one out; any other reader can bind columns by position or read a header
/// as a row.
const READERS_BINDING_BY_NAME: [&str; 2] = ["read_parquet", "parquet_scan"];

/// Under privacy rules, a file reader's bound files: none hidden (DuckDB's side makes a hidden
/// file a missing one, so only a plan that got past it meets one); and on files a column rule
/// names, only a reader that binds columns by name, with no parameter that renames them.
fn check_file_privacy(
    policy: &PrivacyPolicy,
    scan: &ScanFacts,
    files: &[String],
) -> Result<(), Refused> {
    if files.iter().any(|file| policy.hides_file(file)) {
        return Err(Refused::Unknown("a hidden file".into()));
    }
    if !files.iter().any(|file| policy.has_file_column_rules(file)) {
        return Ok(());
    }
    let function = scan.function.last().map(String::as_str).unwrap_or_default();
    if !READERS_BINDING_BY_NAME
        .iter()
        .any(|reader| reader.eq_ignore_ascii_case(function))
    {
        return Err(Refused::Unknown(format!(
            "{function} on files whose columns are hidden"
        )));
    }
    match scan
        .named_parameters
        .iter()
        .find(|parameter| !parameter_keeps_column_names(parameter))
    {
        Some(parameter) => {
            let why = PARAMETERS_BINDING_COLUMNS
                .iter()
                .find(|(name, _)| name.eq_ignore_ascii_case(parameter))
                .map_or("not classified", |(_, why)| why);
            Err(Refused::Unknown(format!(
                "the option {parameter} on files whose columns are hidden ({why})"
            )))
        }
        None => Ok(()),
    }
}

/// The optimized plan: under privacy rules, what execution reads must be visible.
pub(crate) fn check_optimized(rules: &PlanRules, facts: &PlanFacts) -> Result<(), Refused> {
    let Some(policy) = &rules.privacy else {
        return Ok(());
    };
    for scan in &facts.scans {
        if let Some(files) = &scan.files {
            // A column of a file is read by its name, as the plan bound it.
            let hidden = scan.columns.iter().any(|column| match column.kind {
                ColumnKind::Own => files
                    .iter()
                    .any(|file| policy.hides_file_column(file, &column.name)),
                ColumnKind::RowId | ColumnKind::Virtual => false,
            });
            if hidden {
                return Err(Refused::Unknown("a hidden column of a file".into()));
            }
        }
        let Some(ScannedTable {
            database,
            schema,
            table,
        }) = scanned_table(rules, scan)?
        else {
            continue;
        };
        let refused = || Refused::Unknown(format!("a scan of {database}.{schema}.{table}"));
        if policy.hides_table(database, &schema, table) {
            return Err(refused());
        }
        for column in &scan.columns {
            match column.kind {
                ColumnKind::RowId | ColumnKind::Virtual => {}
                ColumnKind::Own
                    if policy.hides_column((database, &schema, table), &column.name) =>
                {
                    return Err(refused());
                }
                ColumnKind::Own => {}
            }
        }
    }
    Ok(())
}

/// A stored table a scan reads, by the names the privacy rules know it by.
struct ScannedTable<'s> {
    /// Its database's declared name (never the private catalog's).
    database: &'s str,
    /// Its schema, a nested schema's path joined by dots.
    schema: String,
    table: &'s str,
}

/// The stored table `scan` reads, if it reads one; a table of any catalog but an attached
/// database's is refused as unknown.
fn scanned_table<'s>(
    rules: &'s PlanRules,
    scan: &'s ScanFacts,
) -> Result<Option<ScannedTable<'s>>, Refused> {
    let Some(path) = &scan.table else {
        return Ok(None);
    };
    let (Some((table, qualification)), true) = (path.split_last(), path.len() >= 3) else {
        return Err(Refused::Unknown("a table scan without its table".into()));
    };
    let (catalog, schema_path) = qualification
        .split_first()
        .ok_or_else(|| Refused::Unknown("a table scan without its catalog".into()))?;
    let Some(attached) = rules
        .catalogs
        .iter()
        .find(|attached| catalog.eq_ignore_ascii_case(&attached.catalog))
    else {
        return Err(Refused::Because(
            refusals::unknown_relation(&path.join(".")).into(),
        ));
    };
    Ok(Some(ScannedTable {
        database: &attached.name,
        schema: schema_path.join("."),
        table: table.as_str(),
    }))
}

/// What `scans` read from the stored tables of the attached `catalogs`: each column of the
/// table's own, or only its rows (row ids and virtual columns), by the database's declared
/// name. Scans of anything else (table functions, catalogs not attached) read no stored table.
#[cfg(feature = "engine")]
pub(crate) fn table_reads(
    catalogs: &[super::Attached],
    scans: &[ScanFacts],
) -> Vec<crate::privacy::ReadColumn> {
    let mut reads = Vec::new();
    for scan in scans {
        let Some(path) = &scan.table else {
            continue;
        };
        let [catalog, schema_path @ .., table] = path.as_slice() else {
            continue;
        };
        let Some(attached) = catalogs
            .iter()
            .find(|attached| catalog.eq_ignore_ascii_case(&attached.catalog))
        else {
            continue;
        };
        let schema = schema_path.join(".");
        let read = |column: Option<&str>| crate::privacy::ReadColumn {
            database: attached.name.clone(),
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
    reads.sort_by(|a, b| {
        (&a.database, &a.schema, &a.table, &a.column).cmp(&(
            &b.database,
            &b.schema,
            &b.table,
            &b.column,
        ))
    });
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
    // DuckDB's file readers bind no stored table and its table scan binds no file: a scan
    // holding both is a shape nobody classified, and the file branches below would judge it
    // without its table.
    if scan.table.is_some() && (folder_reader || scan.files.is_some()) {
        return Err(Refused::Unknown(
            "a scan that reads both a stored table and files".into(),
        ));
    }
    match (&scan.files, folder_reader, rules.folders.folders.is_empty()) {
        // A file reader of the declared folders: its list must be read, and every file on it
        // inside them, and visible under the privacy rules.
        (Some(files), true, false) => {
            if let Some(policy) = &rules.privacy {
                check_file_privacy(policy, scan, files)?;
            }
            return check_folder_files(rules, files, bound);
        }
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
        (
            _,
            Some(ScannedTable {
                database,
                schema,
                table,
            }),
        ) => match &rules.privacy {
            Some(policy) if policy.hides_table(database, &schema, table) => Err(Refused::Unknown(
                format!("a scan of {database}.{schema}.{table}"),
            )),
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

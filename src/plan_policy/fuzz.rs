//! The `plan_facts` fuzz target's invariants (fuzz/fuzz_targets/plan_facts.rs is one line): the
//! plan policy's judgement of plans built from arbitrary bytes, without DuckDB. The bytes choose
//! each fact of a bound plan (operators, expression classes, types, functions, things the
//! reader could not read) and its scans (the function, the table, the columns, the files), from
//! DuckDB's codes (known or not) and from names the policy treats in every way it can. Checked
//! on every plan:
//!
//! - the judgement never panics;
//! - privacy rules only add refusals: a plan allowed under them is allowed without them, in both
//!   phases, and every refusal under them is the one refusal that names nothing;
//! - what the policy must always refuse is refused wherever it stands in the plan: a code it does
//!   not know, a part the reader could not read, a function with no row in the function policy
//!   or a denied one, an operator that writes, a scan that binds a file or calls a folders'
//!   reader where no folder is declared, a scan of a table of a catalog no database is attached
//!   as (two are: the default, and a second under a private name);
//! - where a folder is declared (a real one, made once on disk: [`disk`]), a file a reader bound
//!   that is not a regular file inside it once links are resolved (a symbolic link out, `..`, an
//!   absolute path, a directory, a missing file, a hard link to either database file), a file bound
//!   by anything but a folders' reader, a folders' reader whose files the reader could not read,
//!   and files past the count or byte cap are refused;
//! - under privacy rules, a scan of a hidden table is refused in either phase, a hidden column
//!   the optimized plan reads is refused, and so is a function that lists the catalog; a hidden
//!   file, a hidden column of a file, a reader other than Parquet's on files with hidden columns
//!   and an option that renames their columns are refused; the one refusal they may tell is a
//!   cap, and only when the files nobody hides are past it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    reason = "a fuzz harness reports a broken invariant by panicking"
)]

use std::sync::{Arc, OnceLock};

use duckgate_plan_facts::{
    Code, ColumnKind, ExpressionClass, Fact, FunctionFact, FunctionKind, LogicalOperatorType,
    LogicalTypeId, PlanFacts, ScanColumn, ScanFacts,
};

use super::{Attached, PlanRules, Refused, check_bound, check_optimized};
use crate::folders::{DeclaredFolder, FolderRules};
use crate::privacy::{PLAN_REFUSAL, PrivacyPolicy};

/// The catalog the default database is attached as in every judged plan (its declared name
/// too).
const ALIAS: &str = "health";

/// The second database's declared name, which the privacy rules know it by.
const SECOND: &str = "pump";

/// The catalog the second database is attached as: a private name drawn for the request, as
/// under privacy rules, so that a scan must be mapped back to [`SECOND`] before the rules are
/// asked. A scan of the catalog `pump` itself reads nothing attached.
const SECOND_ALIAS: &str = "pump_7f3a";

/// Function names the policy treats in every way: allowed scalars, aggregates and table
/// functions, denied ones, catalog listings, statement counters, a folders' reader, names with
/// no row, and DuckDB's table scan.
const FUNCTIONS: [&str; 18] = [
    "lower",
    "+",
    "sum",
    "count_star",
    "range",
    "seq_scan",
    "getenv",
    "read_text",
    "current_setting",
    "duckdb_tables",
    "txid_current",
    "read_csv",
    "pragma_show",
    "no_such_function",
    "",
    "glob",
    "read_parquet",
    "parquet_scan",
];

/// Schemas, tables and columns of the judged database: some hidden by [`privacy`], some not.
const SCHEMAS: [&str; 3] = ["main", "private", "main.nested"];
const TABLES: [&str; 4] = ["readings", "secrets", "devices", ""];
const COLUMNS: [&str; 6] = [
    "glucose",
    "secret_note",
    "serial_number",
    "id",
    "patient_name",
    "file_row_number",
];
const CATALOGS: [&str; 6] = [ALIAS, "HEALTH", "system", "other", SECOND_ALIAS, SECOND];
/// Files as a reader may have bound them: the first three inside the declared folder, the
/// others each refused for a reason of its own.
const FILES: [&str; 12] = [
    "exports/a.csv",
    "exports/b.parquet",
    "exports/secret.csv",
    "exports/out.csv",
    "exports/health.duckdb",
    "exports/../outside.csv",
    "exports/sub",
    "exports/missing.csv",
    "/etc/passwd",
    "x.parquet",
    "exports",
    "exports/pump.duckdb",
];

/// The files of [`FILES`] that are regular files inside the folder, with their sizes.
const INSIDE: [(&str, u64); 3] = [
    ("exports/a.csv", 100),
    ("exports/b.parquet", 3000),
    ("exports/secret.csv", 100),
];

/// The caps on one plan's files: four files, or two copies of `b.parquet`, are past them.
const MAX_FILES: u64 = 3;
const MAX_BYTES: u64 = 5000;

/// Named parameters a reader may have been called with: some keep the files' column names
/// (adding a column of a name of their own among them), some choose them or claim facts about
/// them, one is no Parquet reader's at all.
const PARAMETERS: [&str; 9] = [
    "hive_partitioning",
    "union_by_name",
    "filename",
    "schema",
    "columns",
    "BINARY_AS_STRING",
    "file_row_number",
    "bound_schema",
    "column_statistics",
];

/// The readers that bind a Parquet file's columns by the names it holds.
const PARQUET_READERS: [&str; 2] = ["read_parquet", "parquet_scan"];

/// The folders' readers among [`FUNCTIONS`].
const FOLDER_READERS: [&str; 4] = ["read_csv", "glob", "read_parquet", "parquet_scan"];

/// The privacy rules of the judged requests: a hidden table, a hidden column, globs, a table
/// and a column hidden in the second database only, a hidden file and a hidden column of the
/// folder's Parquet files.
fn privacy() -> PrivacyPolicy {
    PrivacyPolicy {
        hide_tables: vec![
            "secrets".into(),
            "private.*".into(),
            "pump.devices".into(),
            "exports/secret*.csv".into(),
        ],
        hide_columns: vec![
            "readings.secret_note".into(),
            "*.serial_number".into(),
            "pump.*.id".into(),
            "exports/**/*.parquet.patient_name".into(),
        ],
    }
}

/// The declared folder of the judged requests, made once on disk beside two database files: the
/// files of [`INSIDE`], a symbolic link out of the folder, a hard link to each database file, a
/// subfolder, and a file outside. Its rules hold the caps [`MAX_FILES`] and [`MAX_BYTES`].
fn disk() -> &'static FolderRules {
    static DISK: OnceLock<FolderRules> = OnceLock::new();
    DISK.get_or_init(|| {
        let base = std::env::temp_dir().join(format!("duckgate-plan-facts-{}", std::process::id()));
        let exports = base.join("exports");
        let database = base.join("health.duckdb");
        let second = base.join("pump.duckdb");
        // A run before this one (same pid after a reboot) may have left it.
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(exports.join("sub")).unwrap();
        for (file, size) in INSIDE {
            let size = usize::try_from(size).unwrap();
            std::fs::write(base.join(file), vec![b'x'; size]).unwrap();
        }
        std::fs::write(base.join("outside.csv"), b"secret,1\n").unwrap();
        std::fs::write(&database, b"DUCK").unwrap();
        std::fs::write(&second, b"DUCK").unwrap();
        std::os::unix::fs::symlink("../outside.csv", exports.join("out.csv")).unwrap();
        std::fs::hard_link(&database, exports.join("health.duckdb")).unwrap();
        std::fs::hard_link(&second, exports.join("pump.duckdb")).unwrap();
        FolderRules {
            folders: vec![DeclaredFolder {
                name: "exports".into(),
                dir: std::fs::canonicalize(&exports).unwrap(),
            }],
            max_files: MAX_FILES,
            max_bytes: MAX_BYTES,
            database_files: vec![database, second],
        }
    })
}

/// The bytes, read one choice at a time; when they run out every choice is the first.
struct Choices<'a>(&'a [u8]);

impl Choices<'_> {
    fn byte(&mut self) -> u8 {
        let Some((first, rest)) = self.0.split_first() else {
            return 0;
        };
        self.0 = rest;
        *first
    }

    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[usize::from(self.byte()) % from.len()]
    }

    fn done(&self) -> bool {
        self.0.is_empty()
    }

    /// A code of one of DuckDB's enumerations: mostly one the policy knows, sometimes not.
    fn code<T: Copy>(&mut self, all: &[T]) -> Code<T> {
        let byte = self.byte();
        match all.get(usize::from(byte)) {
            Some(known) if byte < 250 => Code::Known(*known),
            _ => Code::Unrecognised {
                code: u32::from(byte) + 1000,
                label: format!("CODE_{byte}"),
            },
        }
    }

    fn path(&mut self, name: &str) -> Vec<String> {
        match self.byte() % 4 {
            0 => vec![name.to_owned()],
            1 => vec!["system".into(), "main".into(), name.to_owned()],
            2 => vec![
                self.pick(&CATALOGS).to_owned(),
                "main".into(),
                name.to_owned(),
            ],
            _ => Vec::new(),
        }
    }

    fn function(&mut self) -> FunctionFact {
        let name = self.pick(&FUNCTIONS);
        let kind = match self.byte() % 6 {
            0 => FunctionKind::Scalar,
            1 => FunctionKind::Cast,
            2 => FunctionKind::Aggregate {
                exports_state: false,
            },
            3 => FunctionKind::Aggregate {
                exports_state: true,
            },
            4 => FunctionKind::Window,
            _ => FunctionKind::Table,
        };
        FunctionFact {
            kind,
            path: self.path(name),
            name: name.to_owned(),
        }
    }

    fn fact(&mut self) -> Fact {
        match self.byte() % 5 {
            0 => Fact::Operator(self.code(LogicalOperatorType::ALL)),
            1 => Fact::Expression(self.code(ExpressionClass::ALL)),
            2 => Fact::Type {
                id: self.code(LogicalTypeId::ALL),
                aggregate_state: self.byte() % 2 == 1,
            },
            3 => Fact::Function(self.function()),
            _ => Fact::Unknown("a part of the plan".into()),
        }
    }

    fn scan(&mut self) -> ScanFacts {
        let function = self.pick(&FUNCTIONS);
        let table = match self.byte() % 4 {
            0 => None,
            1 => Some(vec![
                self.pick(&CATALOGS).to_owned(),
                self.pick(&SCHEMAS).to_owned(),
                self.pick(&TABLES).to_owned(),
            ]),
            2 => Some(vec![self.pick(&TABLES).to_owned()]),
            _ => Some(vec![
                ALIAS.to_owned(),
                "main".into(),
                "nested".into(),
                self.pick(&TABLES).to_owned(),
            ]),
        };
        let columns = (0..self.byte() % 4)
            .map(|index| ScanColumn {
                kind: self.pick(&[ColumnKind::Own, ColumnKind::RowId, ColumnKind::Virtual]),
                index: u64::from(index),
                name: self.pick(&COLUMNS).to_owned(),
            })
            .collect();
        let files = match self.byte() % 3 {
            0 => None,
            count => Some(
                (0..count)
                    .map(|_| self.pick(&FILES).to_owned())
                    .collect::<Vec<_>>(),
            ),
        };
        let named_parameters = (0..self.byte() % 3)
            .map(|_| self.pick(&PARAMETERS).to_owned())
            .collect();
        ScanFacts {
            function: self.path(function),
            table,
            columns,
            files,
            named_parameters,
        }
    }

    fn plan(&mut self) -> PlanFacts {
        let mut facts = Vec::new();
        let mut scans = Vec::new();
        for _ in 0..64 {
            if self.done() {
                break;
            }
            match self.byte() % 4 {
                0 => scans.push(self.scan()),
                _ => facts.push(self.fact()),
            }
        }
        PlanFacts {
            facts,
            scans,
            result_types: Vec::new(),
        }
    }
}

fn rules(privacy: Option<PrivacyPolicy>, folders: bool) -> PlanRules {
    PlanRules {
        catalogs: vec![
            Attached {
                name: ALIAS.into(),
                catalog: ALIAS.into(),
                file: "health.duckdb".into(),
            },
            Attached {
                name: SECOND.into(),
                catalog: SECOND_ALIAS.into(),
                file: "pump.duckdb".into(),
            },
        ],
        privacy,
        folders: Arc::new(if folders {
            disk().clone()
        } else {
            FolderRules::default()
        }),
    }
}

/// Both phases' judgement of `plan` under `rules`.
fn judge(rules: &PlanRules, plan: &PlanFacts) -> (Result<(), Refused>, Result<(), Refused>) {
    let mut shown = 0;
    (
        check_bound(rules, plan, &mut shown),
        check_optimized(rules, plan),
    )
}

/// The target: a plan from `data`, judged with and without privacy rules.
pub fn plan_facts(data: &[u8]) {
    let plan = Choices(data).plan();
    check_invariants(&plan);
}

/// The invariants on one plan, with no folder declared and with [`disk`]'s.
pub fn check_invariants(plan: &PlanFacts) {
    for folders in [false, true] {
        check_invariants_with(plan, folders);
    }
}

fn check_invariants_with(plan: &PlanFacts, folders: bool) {
    let open = rules(None, folders);
    let private = rules(Some(privacy()), folders);
    let (open_bound, open_optimized) = judge(&open, plan);
    let (private_bound, private_optimized) = judge(&private, plan);

    assert!(
        private_bound.is_err() || open_bound.is_ok(),
        "allowed under privacy rules, refused without: {plan:?} ({open_bound:?})"
    );
    assert!(
        private_optimized.is_err() || open_optimized.is_ok(),
        "optimized plan allowed under privacy rules, refused without: {plan:?}"
    );
    for refused in [&private_bound, &private_optimized]
        .into_iter()
        .filter_map(|verdict| verdict.as_ref().err())
    {
        let error = refused.clone().into_error(true);
        if let Refused::Visible(_) = refused {
            // A cap is told under privacy rules: it must be the visible files that pass it.
            assert!(
                folders && visible_files_past_a_cap(plan),
                "a cap told under privacy rules that the visible files do not pass: {plan:?}"
            );
            assert!(
                FILES.iter().all(|file| !error.message.contains(file)),
                "a cap naming a file: {error:?}"
            );
        } else {
            assert_eq!(error.message, PLAN_REFUSAL, "{plan:?}");
            assert_eq!(error.construct, None, "{plan:?}");
        }
    }

    if let Some(what) = always_refused(plan, folders) {
        assert!(open_bound.is_err(), "{what} allowed: {plan:?}");
        assert!(
            private_bound.is_err(),
            "{what} allowed under privacy rules: {plan:?}"
        );
    }
    if let Some(what) = refused_under_privacy(plan, folders) {
        assert!(
            private_bound.is_err() || private_optimized.is_err(),
            "{what} allowed under privacy rules: {plan:?}"
        );
    }
}

/// The declared name of the database attached as `catalog`, if one is (DuckDB compares catalog
/// names without regard to case).
fn database_of(catalog: &str) -> Option<&'static str> {
    if catalog.eq_ignore_ascii_case(ALIAS) {
        Some(ALIAS)
    } else if catalog.eq_ignore_ascii_case(SECOND_ALIAS) {
        Some(SECOND)
    } else {
        None
    }
}

/// A folders' reader, by its function's path (a built-in: bare or of the `system` catalog).
fn is_folder_reader(scan: &ScanFacts) -> bool {
    let name = match scan.function.as_slice() {
        [name] => name,
        [system, _, name] if system == "system" => name,
        _ => return false,
    };
    FOLDER_READERS.contains(&name.as_str())
}

/// The size of a bound file that is a regular file inside the folder.
fn inside(file: &str) -> Option<u64> {
    INSIDE
        .iter()
        .find(|(name, _)| *name == file)
        .map(|(_, size)| *size)
}

/// Whether the files of the plan's folders' readers that no rule hides pass a cap.
fn visible_files_past_a_cap(plan: &PlanFacts) -> bool {
    let policy = privacy();
    let visible: Vec<u64> = plan
        .scans
        .iter()
        .filter(|scan| is_folder_reader(scan))
        .filter_map(|scan| scan.files.as_ref())
        .flatten()
        .filter(|file| !policy.hides_file(file))
        .filter_map(|file| inside(file))
        .collect();
    visible.len() as u64 > MAX_FILES || visible.iter().sum::<u64>() > MAX_BYTES
}

/// Why the policy must refuse `plan` whatever the privacy rules, with `folders` declared or
/// not, found by a reading of its own.
fn always_refused(plan: &PlanFacts, folders: bool) -> Option<String> {
    for fact in &plan.facts {
        match fact {
            Fact::Operator(Code::Unrecognised { .. })
            | Fact::Expression(Code::Unrecognised { .. })
            | Fact::Type {
                id: Code::Unrecognised { .. },
                ..
            } => return Some("a code the policy does not know".into()),
            Fact::Unknown(_) => return Some("a part the reader could not read".into()),
            Fact::Operator(Code::Known(
                LogicalOperatorType::Insert
                | LogicalOperatorType::Delete
                | LogicalOperatorType::Update
                | LogicalOperatorType::CreateTable,
            )) => return Some("an operator that writes".into()),
            Fact::Function(function) => {
                let name = function.name.as_str();
                let denied = ["getenv", "read_text", "no_such_function", ""].contains(&name);
                let other_catalog = matches!(
                    function.path.as_slice(),
                    [catalog, _, _] if catalog != "system"
                );
                if denied || other_catalog {
                    return Some(format!("the function {:?}", function.path));
                }
            }
            Fact::Operator(Code::Known(_))
            | Fact::Expression(Code::Known(_))
            | Fact::Type {
                id: Code::Known(_), ..
            } => {}
        }
    }
    let mut count = 0;
    let mut bytes = 0;
    for scan in &plan.scans {
        let reader = is_folder_reader(scan);
        match (&scan.files, reader, folders) {
            (Some(_), _, false) => {
                return Some("a scan that binds files, no folder declared".into());
            }
            (None, true, false) => {
                return Some("a folders' reader, no folder declared".into());
            }
            (Some(_), false, true) => return Some("files bound by a non-reader".into()),
            (None, true, true) => return Some("a reader whose files were not read".into()),
            (Some(files), true, true) => {
                for file in files {
                    let Some(size) = inside(file) else {
                        return Some(format!("{file}, not a regular file in the folder"));
                    };
                    count += 1;
                    bytes += size;
                }
            }
            (None, false, _) => {}
        }
        if let Some([catalog, _, _, ..]) = scan.table.as_deref()
            && database_of(catalog).is_none()
        {
            return Some(format!("a scan of {catalog}'s table"));
        }
    }
    if count > MAX_FILES || bytes > MAX_BYTES {
        return Some(format!("{count} files of {bytes} bytes, past a cap"));
    }
    None
}

/// Why the policy must refuse `plan` under [`privacy`], with `folders` declared or not, found
/// by a reading of its own.
fn refused_under_privacy(plan: &PlanFacts, folders: bool) -> Option<String> {
    let policy = privacy();
    for scan in &plan.scans {
        let Some(files) = scan
            .files
            .as_ref()
            .filter(|_| folders && is_folder_reader(scan))
        else {
            continue;
        };
        if let Some(file) = files.iter().find(|file| policy.hides_file(file)) {
            return Some(format!("the hidden file {file}"));
        }
        if !files
            .iter()
            .any(|file| file.starts_with("exports/") && file.ends_with(".parquet"))
        {
            continue;
        }
        let function = scan.function.last().map_or("", String::as_str);
        if !PARQUET_READERS.contains(&function) {
            return Some(format!("{function} on files with a hidden column"));
        }
        if let Some(parameter) = scan.named_parameters.iter().find(|parameter| {
            ["schema", "columns", "bound_schema", "column_statistics"]
                .contains(&parameter.to_ascii_lowercase().as_str())
        }) {
            return Some(format!(
                "the option {parameter} on files with a hidden column"
            ));
        }
        if scan
            .columns
            .iter()
            .any(|column| column.kind == ColumnKind::Own && column.name == "patient_name")
        {
            return Some("the hidden column patient_name of a file".into());
        }
    }
    for fact in &plan.facts {
        if let Fact::Function(function) = fact
            && ["duckdb_tables", "txid_current"].contains(&function.name.as_str())
            && matches!(function.path.as_slice(), [_] | [_, _, _])
        {
            return Some(format!("{}()", function.name));
        }
    }
    for scan in &plan.scans {
        let Some([catalog, schema @ .., table]) = scan.table.as_deref() else {
            continue;
        };
        let Some(database) = database_of(catalog).filter(|_| !schema.is_empty()) else {
            continue;
        };
        let schema = schema.join(".");
        if policy.hides_table(database, &schema, table) {
            return Some(format!("a scan of the hidden {database}.{schema}.{table}"));
        }
        for column in &scan.columns {
            if column.kind == ColumnKind::Own
                && policy.hides_column((database, &schema, table), &column.name)
            {
                return Some(format!(
                    "the hidden column {database}.{schema}.{table}.{}",
                    column.name
                ));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests;

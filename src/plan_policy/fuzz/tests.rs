//! The `plan_facts` harness's own tests: its readings and its seeds.

use super::*;

/// The harness must be able to fail: each reading finds what it looks for.
#[test]
fn the_readings_see_what_must_be_refused() {
    let scan = |table: &[&str], columns: &[&str]| ScanFacts {
        function: vec!["seq_scan".into()],
        table: Some(table.iter().map(|part| (*part).to_owned()).collect()),
        columns: columns
            .iter()
            .map(|name| ScanColumn {
                kind: ColumnKind::Own,
                index: 0,
                name: (*name).to_owned(),
            })
            .collect(),
        files: None,
        named_parameters: Vec::new(),
    };
    let plan = |facts: Vec<Fact>, scans: Vec<ScanFacts>| PlanFacts {
        facts,
        scans,
        result_types: Vec::new(),
    };
    let readings = plan(
        Vec::new(),
        vec![scan(&["health", "main", "readings"], &["glucose"])],
    );
    for folders in [false, true] {
        assert_eq!(always_refused(&readings, folders), None);
        assert_eq!(refused_under_privacy(&readings, folders), None);
    }
    check_invariants(&readings);

    let secret = plan(
        Vec::new(),
        vec![scan(&["health", "main", "readings"], &["secret_note"])],
    );
    assert!(refused_under_privacy(&secret, false).is_some());
    check_invariants(&secret);

    let unknown = plan(vec![Fact::Unknown("x".into())], Vec::new());
    assert!(always_refused(&unknown, false).is_some());
    check_invariants(&unknown);

    let read_csv = |files: &[&str]| ScanFacts {
        function: vec!["read_csv".into()],
        table: None,
        columns: Vec::new(),
        files: Some(files.iter().map(|file| (*file).to_owned()).collect()),
        named_parameters: Vec::new(),
    };
    let link_out = plan(Vec::new(), vec![read_csv(&["exports/out.csv"])]);
    assert!(always_refused(&link_out, true).is_some());
    let hidden_file = plan(Vec::new(), vec![read_csv(&["exports/secret.csv"])]);
    assert_eq!(always_refused(&hidden_file, true), None);
    assert!(refused_under_privacy(&hidden_file, true).is_some());
    let four = plan(
        Vec::new(),
        vec![
            read_csv(&["exports/a.csv", "exports/a.csv"]),
            read_csv(&["exports/a.csv", "exports/a.csv"]),
        ],
    );
    assert!(always_refused(&four, true).is_some());
    assert!(visible_files_past_a_cap(&four));
    let three_and_hidden = plan(
        Vec::new(),
        vec![
            read_csv(&["exports/a.csv", "exports/a.csv"]),
            read_csv(&["exports/a.csv", "exports/secret.csv"]),
        ],
    );
    assert!(!visible_files_past_a_cap(&three_and_hidden));
    for plan in [link_out, hidden_file, four, three_and_hidden] {
        check_invariants(&plan);
    }

    for bytes in [
        &b""[..],
        b"\x00\x01\x02",
        b"\xff\xfe\xfd\xfc\xfb",
        b"\x03\x03\x06\x00",
    ] {
        plan_facts(bytes);
    }
}

/// The index of `name` in `all`, as the byte that picks it.
fn index_of<T: PartialEq>(all: &[T], name: T) -> u8 {
    u8::try_from(all.iter().position(|one| *one == name).unwrap()).unwrap()
}

/// The bytes of a PROJECTION operator fact.
fn projection() -> Vec<u8> {
    vec![
        1,
        0,
        index_of(LogicalOperatorType::ALL, LogicalOperatorType::Projection),
    ]
}

/// The bytes of a plan the policy allows: a projection, the table scan's function, and a
/// scan of `health.main.readings` reading `column` from the catalog `catalog`.
fn readings_plan(catalog: &str, column: &str) -> Vec<u8> {
    let seq_scan = index_of(&FUNCTIONS, "seq_scan");
    let mut bytes = projection();
    bytes.extend([
        1,
        3,
        seq_scan,
        5,
        1, // a fact: seq_scan, a table function of `system.main`
        0,
        seq_scan,
        1, // a scan of seq_scan, its table a catalog, schema and name:
        index_of(&CATALOGS, catalog),
        0, // main
        0, // readings
        1,
        0, // one column of its own:
        index_of(&COLUMNS, column),
        0, // no files
        0, // no named parameters
        1, // its function system.main.seq_scan
    ]);
    bytes
}

/// The bytes of a scan of `function` (a bare name) with no table, reading `columns` from
/// `files` (one or two), called with `parameters` (none, one or two).
fn reader_scan(function: &str, columns: &[&str], files: &[&str], parameters: &[&str]) -> Vec<u8> {
    let mut bytes = vec![0, index_of(&FUNCTIONS, function), 0];
    bytes.push(u8::try_from(columns.len()).unwrap());
    for column in columns {
        bytes.extend([0, index_of(&COLUMNS, column)]);
    }
    bytes.push(u8::try_from(files.len()).unwrap());
    bytes.extend(files.iter().map(|file| index_of(&FILES, file)));
    bytes.push(u8::try_from(parameters.len()).unwrap());
    bytes.extend(
        parameters
            .iter()
            .map(|parameter| index_of(&PARAMETERS, parameter)),
    );
    bytes.push(0); // the function's bare name
    bytes
}

/// A projection over reader scans.
fn reader_plan(scans: &[Vec<u8>]) -> Vec<u8> {
    let mut bytes = projection();
    for scan in scans {
        bytes.extend_from_slice(scan);
    }
    bytes
}

/// Whether a seed's plan is allowed: without and with privacy rules, with no folder
/// declared, then with [`disk`]'s folder.
type Verdicts = [bool; 4];
const ALWAYS: Verdicts = [true; 4];
const NEVER: Verdicts = [false; 4];
const WITHOUT_PRIVACY: Verdicts = [true, false, true, false];
const IN_FOLDERS: Verdicts = [false, false, true, true];
const IN_FOLDERS_WITHOUT_PRIVACY: Verdicts = [false, false, true, false];

/// The seeds, each with its [`Verdicts`].
fn seeds() -> Vec<(&'static str, Vec<u8>, Verdicts)> {
    let insert = index_of(LogicalOperatorType::ALL, LogicalOperatorType::Insert);
    let with = |mut plan: Vec<u8>, more: &[u8]| {
        plan.extend_from_slice(more);
        plan
    };
    let csv = |files: &[&str]| reader_plan(&[reader_scan("read_csv", &["glucose"], files, &[])]);
    let parquet = |columns: &[&str], files: &[&str], parameters: &[&str]| {
        reader_plan(&[reader_scan("read_parquet", columns, files, parameters)])
    };
    let getenv = index_of(&FUNCTIONS, "getenv");
    let txid_current = index_of(&FUNCTIONS, "txid_current");
    vec![
        ("readings-glucose", readings_plan(ALIAS, "glucose"), ALWAYS),
        (
            "readings-secret-note",
            readings_plan(ALIAS, "secret_note"),
            WITHOUT_PRIVACY,
        ),
        (
            "readings-serial-number",
            readings_plan(ALIAS, "serial_number"),
            WITHOUT_PRIVACY,
        ),
        ("other-catalog", readings_plan("other", "glucose"), NEVER),
        (
            "second-database-glucose",
            readings_plan(SECOND_ALIAS, "glucose"),
            ALWAYS,
        ),
        (
            "second-database-id",
            readings_plan(SECOND_ALIAS, "id"),
            WITHOUT_PRIVACY,
        ),
        ("default-database-id", readings_plan(ALIAS, "id"), ALWAYS),
        (
            "second-database-by-its-public-name",
            readings_plan(SECOND, "glucose"),
            NEVER,
        ),
        (
            "unread-part",
            with(readings_plan(ALIAS, "glucose"), &[1, 4]),
            NEVER,
        ),
        (
            "insert",
            with(readings_plan(ALIAS, "glucose"), &[1, 0, insert]),
            NEVER,
        ),
        (
            "unknown-operator",
            with(readings_plan(ALIAS, "glucose"), &[1, 0, 255]),
            NEVER,
        ),
        (
            "getenv",
            with(readings_plan(ALIAS, "glucose"), &[1, 3, getenv, 0, 0]),
            NEVER,
        ),
        (
            "txid-current",
            with(readings_plan(ALIAS, "glucose"), &[1, 3, txid_current, 0, 0]),
            WITHOUT_PRIVACY,
        ),
        (
            "table-scan-binding-files",
            reader_plan(&[reader_scan("seq_scan", &[], &["exports/a.csv"], &[])]),
            NEVER,
        ),
        (
            "csv-in-folder",
            csv(&["exports/a.csv", "exports/a.csv"]),
            IN_FOLDERS,
        ),
        (
            "csv-hidden-file",
            csv(&["exports/secret.csv"]),
            IN_FOLDERS_WITHOUT_PRIVACY,
        ),
        ("symbolic-link-out", csv(&["exports/out.csv"]), NEVER),
        (
            "hard-link-to-database",
            csv(&["exports/health.duckdb"]),
            NEVER,
        ),
        (
            "hard-link-to-second-database",
            csv(&["exports/pump.duckdb"]),
            NEVER,
        ),
        ("dot-dot", csv(&["exports/../outside.csv"]), NEVER),
        ("absolute-path", csv(&["/etc/passwd"]), NEVER),
        ("directory", csv(&["exports/sub"]), NEVER),
        ("missing-file", csv(&["exports/missing.csv"]), NEVER),
        ("no-folder", csv(&["x.parquet"]), NEVER),
        (
            "parquet-visible-columns",
            parquet(
                &["glucose", "id"],
                &["exports/b.parquet"],
                &["hive_partitioning", "BINARY_AS_STRING"],
            ),
            IN_FOLDERS,
        ),
        (
            "parquet-hidden-column",
            parquet(&["glucose", "patient_name"], &["exports/b.parquet"], &[]),
            IN_FOLDERS_WITHOUT_PRIVACY,
        ),
        (
            "parquet-renaming-option",
            parquet(&["glucose"], &["exports/b.parquet"], &["schema"]),
            IN_FOLDERS_WITHOUT_PRIVACY,
        ),
        (
            "parquet-row-number",
            parquet(
                &["glucose", "file_row_number"],
                &["exports/b.parquet"],
                &["file_row_number", "union_by_name"],
            ),
            IN_FOLDERS,
        ),
        (
            "parquet-bound-schema",
            parquet(&["glucose"], &["exports/b.parquet"], &["bound_schema"]),
            IN_FOLDERS_WITHOUT_PRIVACY,
        ),
        (
            "parquet-column-statistics",
            parquet(&["glucose"], &["exports/b.parquet"], &["column_statistics"]),
            IN_FOLDERS_WITHOUT_PRIVACY,
        ),
        (
            "parquet-read-as-csv",
            reader_plan(&[reader_scan(
                "read_csv",
                &["glucose"],
                &["exports/b.parquet"],
                &[],
            )]),
            IN_FOLDERS_WITHOUT_PRIVACY,
        ),
        (
            "past-the-count-cap",
            reader_plan(&[
                reader_scan(
                    "read_csv",
                    &["glucose"],
                    &["exports/a.csv", "exports/a.csv"],
                    &[],
                ),
                reader_scan(
                    "read_csv",
                    &["glucose"],
                    &["exports/a.csv", "exports/a.csv"],
                    &[],
                ),
            ]),
            NEVER,
        ),
        (
            "past-the-byte-cap",
            parquet(
                &["glucose"],
                &["exports/b.parquet", "exports/b.parquet"],
                &[],
            ),
            NEVER,
        ),
    ]
}

/// Each seed builds the plan its name says, judged as it says.
#[test]
fn the_seeds_build_the_plans_they_name() {
    for (name, bytes, verdicts) in seeds() {
        let plan = Choices(&bytes).plan();
        let judged = [
            (None, false),
            (Some(privacy()), false),
            (None, true),
            (Some(privacy()), true),
        ]
        .map(|(privacy, folders)| {
            let (bound, optimized) = judge(&rules(privacy, folders), &plan);
            bound.is_ok() && optimized.is_ok()
        });
        assert_eq!(judged, verdicts, "{name}: {plan:?}");
        check_invariants(&plan);
    }
}

/// A cap is the one refusal told under privacy rules, naming the flag and no file.
#[test]
fn under_privacy_rules_a_cap_is_told_and_names_no_file() {
    let bytes = seeds()
        .into_iter()
        .find(|(name, _, _)| *name == "past-the-count-cap")
        .unwrap()
        .1;
    let plan = Choices(&bytes).plan();
    let (bound, _) = judge(&rules(Some(privacy()), true), &plan);
    let error = bound.unwrap_err().into_error(true);
    assert_eq!(error.construct.as_deref(), Some("--files-max-count"));
    assert!(!error.message.contains("exports"), "{}", error.message);
}

/// Writes `fuzz/corpus/plan_facts/`.
#[test]
#[ignore = "writes fuzz/corpus/plan_facts; run by hand"]
fn write_plan_fuzz_seeds() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/plan_facts");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, bytes, _) in seeds() {
        std::fs::write(dir.join(format!("{name}.bin")), bytes).unwrap();
    }
}

/// The plan check alone, on files a column rule names: a Parquet reader with each parameter
/// that keeps the files' column names answers, with each that chooses them (and with one
/// nobody classified) it is refused, the one privacy refusal; without the rules each answers.
#[test]
fn on_files_under_column_rules_the_judge_keeps_each_classified_parameter_and_refuses_the_rest() {
    use crate::plan_policy::facts::{PARAMETERS_BINDING_COLUMNS, PARAMETERS_KEEPING_COLUMN_NAMES};
    let plan = |parameter: &str| PlanFacts {
        facts: Vec::new(),
        scans: vec![ScanFacts {
            function: vec!["read_parquet".into()],
            table: None,
            columns: vec![ScanColumn {
                kind: ColumnKind::Own,
                index: 0,
                name: "glucose".into(),
            }],
            files: Some(vec!["exports/b.parquet".into()]),
            named_parameters: vec![parameter.to_owned()],
        }],
        result_types: Vec::new(),
    };
    let answers = |privacy: Option<PrivacyPolicy>, parameter: &str| {
        let (bound, optimized) = judge(&rules(privacy, true), &plan(parameter));
        match bound.and(optimized) {
            Ok(()) => Ok(()),
            Err(refused) => Err(refused.into_error(true).message),
        }
    };
    for (parameter, _) in PARAMETERS_KEEPING_COLUMN_NAMES {
        assert_eq!(answers(Some(privacy()), parameter), Ok(()), "{parameter}");
        let upper = parameter.to_ascii_uppercase();
        assert_eq!(answers(Some(privacy()), &upper), Ok(()), "{upper}");
    }
    let refused = PARAMETERS_BINDING_COLUMNS
        .iter()
        .map(|(parameter, _)| *parameter)
        .chain(["columns", "made_up_option"]);
    for parameter in refused {
        assert_eq!(
            answers(Some(privacy()), parameter),
            Err(PLAN_REFUSAL.to_owned()),
            "{parameter}"
        );
        assert_eq!(answers(None, parameter), Ok(()), "{parameter}");
    }
}

//! The refusals both walks give: the parent's walk of sqlparser's tree ([`super::walk`]) and the
//! worker's walk of DuckDB's own tree ([`super::tree`]). One wording for each refusal, so an
//! agent meets the same message and next step whichever layer stopped its query.

use super::Refusal;
use super::functions::{self, Denial};
use crate::error::ErrorKind;

/// A `policy_blocked` refusal of `construct`.
pub fn policy_blocked(construct: &str, message: String, suggestion: &str) -> Refusal {
    Refusal {
        kind: ErrorKind::PolicyBlocked,
        message,
        construct: construct.into(),
        suggestion: suggestion.into(),
        missing: None,
    }
}

/// Nothing to run: the text holds no statement.
pub fn empty_sql() -> Refusal {
    Refusal {
        kind: ErrorKind::SyntaxError,
        message: "The SQL is empty.".into(),
        construct: String::new(),
        suggestion: "Send a query, e.g. SELECT * FROM some_table LIMIT 10.".into(),
        missing: None,
    }
}

/// A construct duckgate does not accept (mostly other dialects' syntax).
pub fn unsupported(construct: &str, instead: &str) -> Refusal {
    policy_blocked(
        construct,
        format!("{construct} is not supported by duckgate; {instead}."),
        &capitalized(instead),
    )
}

/// `text` with a capital first letter and a full stop.
pub fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect::<String>() + ".",
        None => String::new(),
    }
}

/// A function (or system view) refused by the policy table, with its reason.
pub fn denied(name: &str, denial: Denial) -> Refusal {
    policy_blocked(
        name,
        format!("{name} {}; {}.", denial.reason, denial.instead),
        &capitalized(denial.instead),
    )
}

/// A relation written as a file or URL.
pub fn file_relation(name: &str) -> Refusal {
    policy_blocked(
        name,
        format!(
            "'{name}' names a file or URL, not a table: duckgate reads only the database's own tables."
        ),
        "Query the database's tables instead (see list_tables).",
    )
}

/// Whether `name` is a path in one of the declared `folders`: the folder's name, a slash and
/// more. Which file it is, and whether it stays inside the folder, the plan check decides from
/// the files DuckDB bound.
/// A name with a `..` component is none: it would leave the folder.
pub fn in_declared_folder(folders: &[String], name: &str) -> bool {
    let inside = folders.iter().any(|folder| {
        name.len() > folder.len() + 1
            && name.starts_with(folder.as_str())
            && name.as_bytes().get(folder.len()) == Some(&b'/')
    });
    inside && !name.split('/').any(|part| part == "..")
}

/// A file reader called where the operator declared no folder.
pub fn no_declared_folders(name: &str) -> Refusal {
    policy_blocked(
        name,
        format!(
            "{name} reads files, and the operator declared no folder of files (--files NAME=DIR): \
             duckgate reads only the database's own tables."
        ),
        "Query the database's tables instead (see list_tables).",
    )
}

/// A file DuckDB bound outside the declared folders (or not a regular file), with why.
pub fn file_outside_folders(name: &str, why: &str) -> Refusal {
    policy_blocked(
        name,
        format!("duckgate reads only regular files inside the declared folders: {why}."),
        "Name a regular file inside a declared folder, as NAME/path (exports/readings.csv).",
    )
}

/// The files one query binds passed a cap.
pub fn too_many_files(cap: u64, flag: &str, unit: &str) -> Refusal {
    policy_blocked(
        flag,
        format!(
            "The files this query reads hold more than {cap} {unit}, the cap on one query ({flag})."
        ),
        "Name fewer files: one subfolder, a narrower pattern, or a date range of partitions.",
    )
}

/// A relation that is not in the database (and equally one the operator hides).
pub fn unknown_relation(name: &str) -> Refusal {
    Refusal {
        kind: ErrorKind::UnknownName,
        message: format!("Table or view {name} does not exist in this database."),
        construct: name.into(),
        suggestion: "Check the name with list_tables.".into(),
        missing: None,
    }
}

/// A function or type named with a catalog that is neither the database's nor `system`.
pub fn other_catalog(name: &str) -> Refusal {
    Refusal {
        kind: ErrorKind::UnknownName,
        message: format!(
            "{name} does not exist: only this database's own objects and DuckDB's built-ins \
             (catalog system) may be named with a catalog."
        ),
        construct: name.into(),
        suggestion: "Leave the catalog out of the name.".into(),
        missing: None,
    }
}

/// A table function that is not on the allowlist.
pub fn table_function_not_allowed(called: &str) -> Refusal {
    policy_blocked(
        called,
        format!(
            "{called}() is not an allowed table function; allowed: {}.",
            functions::allowed_table_function_list()
        ),
        "Select from the database's tables (see list_tables) or use an allowed table function.",
    )
}

/// A catalog listing (`information_schema`, `duckdb_tables()`, `SHOW TABLES`, …) while a
/// privacy rule hides names it would show.
pub fn catalog_listing(construct: &str) -> Refusal {
    policy_blocked(
        construct,
        format!(
            "{construct} is not available on this server; list_tables, describe_table and search_schema show the schema."
        ),
        "Use list_tables, describe_table or search_schema.",
    )
}

/// A counter of the process's statements (`current_query_id()`, `txid_current()`) while a
/// privacy rule hides something: the worker's own statements, which follow the hidden objects,
/// are counted too.
pub fn statement_counter(construct: &str) -> Refusal {
    policy_blocked(
        construct,
        format!(
            "{construct} is not available on this server: it counts the statements the server \
             ran for this query, which depend on what the server does not show."
        ),
        "Leave the counter out of the query; it says nothing about the data.",
    )
}

/// Whether a relation name can only be a file or URL (DuckDB's replacement scans read those).
pub fn looks_like_path(name: &str) -> bool {
    name.contains(['/', '\\', '.', ':', '*', '?', '~']) || name.is_empty()
}

/// File extensions DuckDB's replacement scans read. An unquoted `data.csv` is a two-part name
/// to a parser, and DuckDB tries it as the file `data.csv` when no such table exists.
const DATA_FILE_EXTENSIONS: &[&str] = &[
    "csv", "tsv", "tbl", "txt", "text", "parquet", "json", "jsonl", "ndjson", "arrow", "ipc",
    "feather", "avro", "orc", "xlsx", "xls", "blob", "gz", "gzip", "zst", "zstd", "bz2", "xz",
    "lz4", "db", "ddb", "duckdb", "geojson", "geojsonl",
];

/// Whether the two-part name `schema.table` (with no such table) is a file DuckDB would read.
pub fn names_a_data_file(schema: &str, table: &str) -> bool {
    !schema.is_empty()
        && DATA_FILE_EXTENSIONS
            .iter()
            .any(|extension| table.eq_ignore_ascii_case(extension))
}

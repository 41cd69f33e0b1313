//! Any other CSV: one table, its columns as DuckDB's CSV reader types them.
//!
//! Its name never comes from the file's name (LibreView names its downloads
//! `<Name>_glucose_<date>.csv`, and a person's name would then be a table name every agent
//! sees): it is `--table NAME` when given, else made from the file's first column names
//! (`csv_date_steps_distance`). Columns that look like identifiers (serial numbers, names, IDs,
//! dates of birth, contact details) are left out, and the summary names them, unless the
//! operator passes `--keep-identifiers`.
//!
//! DuckDB reads the file through the descriptor `files` opened, as `/proc/self/fd/<n>`: its
//! readers take a path as a glob pattern, and this path has no character a pattern could use.

use std::os::fd::AsRawFd;

use duckdb::Connection;

use super::error::{ErrorKind, ImportError};
use super::{FileImport, Load, Source, Unparsed};
use crate::sql_text::{quote_identifier, quote_literal};

/// Words of a column name that make it an identifier (lower case; matched as whole words of
/// the name, or as the whole name without separators).
const IDENTIFIER_WORDS: &[&str] = &[
    "id",
    "uuid",
    "guid",
    "serial",
    "sn",
    "seriennummer",
    "imei",
    "mac",
    "name",
    "names",
    "vorname",
    "nachname",
    "firstname",
    "lastname",
    "fullname",
    "surname",
    "nom",
    "prénom",
    "prenom",
    "nome",
    "cognome",
    "nombre",
    "apellido",
    "apellidos",
    "naam",
    "patient",
    "dob",
    "birth",
    "birthday",
    "birthdate",
    "dateofbirth",
    "geburtsdatum",
    "email",
    "mail",
    "phone",
    "telephone",
    "telefon",
    "mobile",
    "address",
    "adresse",
    "street",
    "zip",
    "postcode",
    "ssn",
    "insurance",
    "mrn",
    "transmitter",
    "userid",
    "patientid",
    "deviceid",
    "serialnumber",
    "username",
    "user",
];

/// Whether a column name looks like it holds an identifier.
pub(super) fn looks_like_identifier(column: &str) -> bool {
    let lower = column.to_lowercase();
    let compact: String = lower.chars().filter(|c| c.is_alphanumeric()).collect();
    IDENTIFIER_WORDS.contains(&compact.as_str())
        || lower
            .split(|c: char| !c.is_alphanumeric())
            .any(|word| IDENTIFIER_WORDS.contains(&word))
}

/// `/proc/self/fd/<n>` of `file`: the open file itself, whatever its name, as a path of digits
/// and slashes only, which DuckDB's readers cannot take for a glob pattern.
pub(super) fn descriptor_path(file: &std::fs::File) -> String {
    let path = format!("/proc/self/fd/{}", file.as_raw_fd());
    debug_assert!(!path.contains(['*', '?', '[', ']', '{', '}']));
    path
}

/// A table name of letters, digits and `_` from `words`, starting with a letter.
fn slug(words: &[String]) -> String {
    let mut name = String::new();
    for word in words {
        for c in word.to_lowercase().chars() {
            if c.is_ascii_alphanumeric() {
                name.push(c);
            } else if !name.ends_with('_') {
                name.push('_');
            }
        }
        if !name.ends_with('_') {
            name.push('_');
        }
    }
    let name: String = name.trim_matches('_').chars().take(40).collect();
    name.trim_end_matches('_').to_string()
}

/// Whether `name` is a plain table name (what `--table` accepts).
pub(super) fn is_plain_name(name: &str) -> bool {
    name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && name.len() <= 63
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// DuckDB's CSV error for the user: its whole reason (every line up to its suggestions of
/// reader options `import` does not have), and the line of the file when it names one.
pub(super) fn csv_error(message: &str) -> String {
    let mut reason: Vec<&str> = Vec::new();
    let mut line = None;
    for text in message.lines().map(str::trim) {
        if text.starts_with("Possible fixes") || text.starts_with("file =") {
            break;
        }
        if text.is_empty() || text.starts_with("Original Line:") || text.contains("/proc/self/fd/")
        {
            continue;
        }
        if let Some(n) = text
            .split("CSV Error on Line:")
            .nth(1)
            .and_then(|n| n.trim().parse::<usize>().ok())
        {
            line = Some(n);
            continue;
        }
        reason.push(text.strip_prefix("Invalid Input Error: ").unwrap_or(text));
    }
    let reason = if reason.is_empty() {
        "DuckDB could not read it".to_string()
    } else {
        reason.join(" ")
    };
    match line {
        Some(n) => format!("DuckDB could not read it as CSV: {reason} (line {n} of the file)"),
        None => format!("DuckDB could not read it as CSV: {reason}"),
    }
}

/// Import `file` as one table, named `table` or from its columns (not among `taken`).
pub(super) fn import(
    conn: &Connection,
    file: &std::fs::File,
    table: Option<&str>,
    taken: &[String],
    keep_identifiers: bool,
) -> Result<FileImport, ImportError> {
    let database = |e: duckdb::Error| ImportError::new(ErrorKind::Database, e.to_string());
    conn.execute_batch(&format!(
        "CREATE OR REPLACE TEMP TABLE dg_generic AS SELECT * FROM read_csv({}, auto_detect = true)",
        quote_literal(&descriptor_path(file))
    ))
    .map_err(|e| ImportError::new(ErrorKind::GenericCsv, csv_error(&e.to_string())))?;
    let columns: Vec<String> = conn
        .prepare("SELECT column_name FROM (DESCRIBE dg_generic)")
        .and_then(|mut s| {
            s.query_map([], |r| r.get::<_, String>(0))?
                .collect::<Result<Vec<_>, _>>()
        })
        .map_err(database)?;
    let (identifiers, kept): (Vec<String>, Vec<String>) = columns
        .iter()
        .cloned()
        .partition(|c| !keep_identifiers && looks_like_identifier(c));
    if kept.is_empty() {
        return Err(ImportError::new(
            ErrorKind::GenericCsv,
            "every column of it looks like an identifier (names, serial numbers, IDs)",
        ));
    }
    let name = match table {
        Some(name) => name.to_string(),
        None => {
            let first_three = kept.get(..3).unwrap_or(&kept);
            let base = format!("csv_{}", slug(first_three));
            let mut name = base.clone();
            let mut n = 2;
            while taken.contains(&name) || reserved(&name) {
                name = format!("{base}_{n}");
                n += 1;
            }
            name
        }
    };
    let quoted = quote_identifier(&name);
    let existed: bool = conn
        .query_row(
            "SELECT count(*) > 0 FROM duckdb_tables() WHERE database_name = current_database() \
             AND schema_name = 'main' AND table_name = ?",
            [&name],
            |r| r.get(0),
        )
        .map_err(database)?;
    let select: Vec<String> = kept.iter().map(|c| quote_identifier(c)).collect();
    conn.execute_batch(&format!(
        "CREATE OR REPLACE TABLE {quoted} AS SELECT {} FROM dg_generic;
         DROP TABLE dg_generic;
         COMMENT ON TABLE {quoted} IS {};",
        select.join(", "),
        quote_literal(
            "Imported by duckgate import from a CSV file it does not know as a vendor export: \
             its columns as DuckDB's CSV reader typed them."
        )
    ))
    .map_err(database)?;
    let rows: i64 = conn
        .query_row(&format!("SELECT count(*) FROM {quoted}"), [], |r| r.get(0))
        .map_err(database)?;
    let mut left_out = Vec::new();
    if !identifiers.is_empty() {
        left_out.push(format!(
            "columns that look like identifiers (names, serial numbers, IDs): {} (add \
             --keep-identifiers to keep them)",
            identifiers.join(", ")
        ));
    }
    if existed {
        left_out.push(format!("the earlier contents of table {name} (replaced)"));
    }
    Ok(FileImport {
        source: Source::Generic,
        unit: None,
        loads: vec![Load {
            table: name,
            added: rows.max(0) as u64,
            already_there: 0,
            unparsed: Unparsed::default(),
        }],
        unparsed: Unparsed::default(),
        left_out,
        notes: Vec::new(),
    })
}

/// Whether `name` is a table or view the vendor formats use.
pub(super) fn reserved(name: &str) -> bool {
    super::rows::Table::ALL.iter().any(|t| t.name() == name)
        || super::store::METRIC_VIEWS.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifier_columns_by_name() {
        for name in [
            "Serial Number",
            "patient_id",
            "userId",
            "First Name",
            "Seriennummer",
            "Date of Birth",
            "E-Mail",
        ] {
            assert!(looks_like_identifier(name), "{name}");
        }
        for name in ["date", "steps", "Glucose", "paid", "identity_score"] {
            assert!(!looks_like_identifier(name), "{name}");
        }
    }

    #[test]
    fn content_names_and_plain_names() {
        assert_eq!(
            slug(&["Date".into(), "Steps (count)".into(), "km".into()]),
            "date_steps_count_km"
        );
        assert!(is_plain_name("walks_2026"));
        assert!(!is_plain_name("2026"));
        assert!(!is_plain_name("a-b"));
        assert!(
            !descriptor_path(&std::fs::File::open("/proc/self/stat").unwrap())
                .contains(['*', '?', '['])
        );
    }

    #[test]
    fn a_csv_error_keeps_duckdbs_whole_reason_without_its_options_or_the_descriptor() {
        let message = "Invalid Input Error: CSV Error on Line: 2\n\
            Original Line: \"a,1\n\
            Value with unterminated quote found.\n\
            \n\
            The quote opened and was never closed.\n\
            \n\
            Possible fixes:\n\
            * Disable the parser's strict mode (strict_mode=false)\n\
              file = /proc/self/fd/7\n";
        assert_eq!(
            csv_error(message),
            "DuckDB could not read it as CSV: Value with unterminated quote found. The quote \
             opened and was never closed. (line 2 of the file)"
        );
    }
}

//! The names both sides of a worker derive from the database's path: the write-ahead log DuckDB
//! keeps beside it (the parent stamps and grants it, the worker attaches it) and the catalog name
//! it is attached under (the worker attaches it so, the parent's validator resolves names by it).

use std::path::{Path, PathBuf};

/// The `.wal` file DuckDB keeps beside a database.
pub fn wal_path(db: &Path) -> PathBuf {
    let mut os = db.as_os_str().to_owned();
    os.push(".wal");
    PathBuf::from(os)
}

/// The catalog name the database is attached as: its file stem when that is a plain
/// identifier (as the DuckDB CLI names it), else `db`.
pub fn database_alias(db_path: &Path) -> String {
    let stem = db_path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    let plain = stem
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && stem.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    // Names DuckDB itself uses for built-in catalogs would clash.
    let reserved = ["memory", "system", "temp", "main"]
        .iter()
        .any(|r| stem.eq_ignore_ascii_case(r));
    if plain && !reserved {
        stem.to_string()
    } else {
        "db".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_alias_is_the_file_stem_when_plain() {
        assert_eq!(database_alias(Path::new("/x/tandem.duckdb")), "tandem");
        assert_eq!(database_alias(Path::new("/x/my data.duckdb")), "db");
        assert_eq!(database_alias(Path::new("/x/memory.duckdb")), "db");
        assert_eq!(database_alias(Path::new("/x/1st.db")), "db");
    }

    #[test]
    fn the_wal_is_the_database_path_with_wal_appended() {
        assert_eq!(
            wal_path(Path::new("/x/tandem.duckdb")),
            Path::new("/x/tandem.duckdb.wal")
        );
    }
}

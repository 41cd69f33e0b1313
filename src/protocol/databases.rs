//! The databases a server serves: each a DuckDB file the operator declared (`--db NAME=PATH`,
//! repeatable; `[databases]` in `--config`; a plain `--db PATH` is named by its file), attached
//! read-only under its name in every worker. The first is the default catalog: its tables are
//! named as before (`cgm_readings`, `main.cgm_readings`); another's with its name
//! (`pump.main.boluses`, or `pump.boluses` for its `main` schema), as DuckDB names them.
//!
//! Pure data, decided once when the command line is read ([`Databases::new`]): every name a
//! plain identifier that no catalog of DuckDB's own uses and no other database has, every file
//! declared once. Workers receive the list as it was decided, never re-derived.

use std::fmt;
use std::path::{Path, PathBuf};

/// One declared database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Database {
    /// Its catalog name: what SQL writes before `.schema.table`, and what every tool shows.
    pub name: String,
    /// The file, as an absolute path (never shown to an agent: no reply carries a host path).
    pub path: PathBuf,
}

impl Database {
    /// Its write-ahead log, which DuckDB keeps beside the file (`<file>.wal`).
    pub fn wal(&self) -> PathBuf {
        wal_path(&self.path)
    }

    /// `NAME=PATH`, as a worker's command line carries it ([`Database::parse_named`]).
    pub fn to_arg(&self) -> std::ffi::OsString {
        let mut arg = std::ffi::OsString::from(format!("{}=", self.name));
        arg.push(self.path.as_os_str());
        arg
    }

    /// A worker's `--db NAME=PATH`: the name is everything before the first `=`, so the path may
    /// hold `=` too. The name is checked again ([`check_name`]).
    pub fn parse_named(text: &str) -> Result<Database, String> {
        let (name, path) = text
            .split_once('=')
            .ok_or_else(|| format!("{text:?} is not NAME=PATH"))?;
        check_name(name)?;
        if path.is_empty() {
            return Err(format!("--db {name}= has no path"));
        }
        Ok(Database {
            name: name.to_owned(),
            path: PathBuf::from(path),
        })
    }
}

/// The name a worker's DuckDB attaches the database `index` (in declared order) by: never a host
/// path. Only the file system over the descriptors the worker opened before it confined itself
/// serves it (`vendor/libduckdb-sys/duckgate/database_files.cpp`, whose `HELD_PREFIX` this
/// begins with), and only during duckgate's own ATTACH. The WAL's is this and `.wal`, as DuckDB
/// derives it.
pub fn held_name(index: usize) -> String {
    format!("duckgate-database://{index}")
}

/// The `.wal` file DuckDB keeps beside a database.
pub fn wal_path(db: &Path) -> PathBuf {
    let mut os = db.as_os_str().to_owned();
    os.push(".wal");
    PathBuf::from(os)
}

/// How the operator wrote one database: `--db PATH` (named by its file, [`name_of_file`]) or
/// `--db NAME=PATH`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declaration {
    /// The name written before `=`; `None` for a plain path.
    pub name: Option<String>,
    /// The path as written (a leading `~/` already expanded by the command line).
    pub path: PathBuf,
}

impl Declaration {
    /// `--db` as the operator writes it: `NAME=PATH` when the text before the first `=` is a
    /// plain name (letters, digits and `_`, not starting with a digit), else the whole text is a
    /// path (`./a=b.duckdb` names a file whose name holds `=`).
    pub fn parse(text: &str) -> Result<Declaration, String> {
        match text.split_once('=') {
            Some((name, path)) if is_plain_name(name) => {
                check_name(name)?;
                if path.is_empty() {
                    return Err(format!("--db {name}= has no path: write --db {name}=PATH"));
                }
                Ok(Declaration {
                    name: Some(name.to_owned()),
                    path: PathBuf::from(path),
                })
            }
            _ if text.is_empty() => Err("--db needs a path (or NAME=PATH)".to_owned()),
            _ => Ok(Declaration {
                name: None,
                path: PathBuf::from(text),
            }),
        }
    }
}

/// The declared databases, the default first. Never empty (the default is a field of its own);
/// names unique (ASCII case-insensitively, as DuckDB compares catalog names); each file declared
/// once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Databases {
    /// The default database: unqualified names are its own.
    default: Database,
    /// The others, in the order declared.
    others: Vec<Database>,
}

/// The longest database name, in bytes.
pub const MAX_NAME_BYTES: usize = 63;

/// Catalog names DuckDB itself uses (`system` holds the built-ins and their views, `temp` the
/// session's temporary objects, `memory` the in-memory default), and the schema names a
/// two-part name could mean instead (`main`, `information_schema`, `pg_catalog`): a database
/// under one of them would be shadowed by, or would shadow, DuckDB's own.
const RESERVED_NAMES: [&str; 6] = [
    "system",
    "temp",
    "memory",
    "main",
    "information_schema",
    "pg_catalog",
];

/// The prefix of the catalogs a worker attaches for itself (the private names under privacy
/// rules, its warm-up database): no declared database may take one.
const RESERVED_PREFIX: &str = "duckgate_";

fn is_plain_name(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether `name` may name a database; the reason when not.
pub fn check_name(name: &str) -> Result<(), String> {
    if !is_plain_name(name) {
        return Err(format!(
            "the database name {name:?} is not a plain name: use letters, digits and _, \
             starting with a letter"
        ));
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(format!(
            "the database name {name:?} is longer than {MAX_NAME_BYTES} bytes"
        ));
    }
    if let Some(reserved) = RESERVED_NAMES
        .iter()
        .find(|reserved| name.eq_ignore_ascii_case(reserved))
    {
        return Err(format!(
            "the database name {name:?} is DuckDB's own ({reserved} is a catalog or schema \
             DuckDB always has): choose another, e.g. --db cgm=PATH"
        ));
    }
    if name.to_ascii_lowercase().starts_with(RESERVED_PREFIX) {
        return Err(format!(
            "the database name {name:?} starts with {RESERVED_PREFIX}, which duckgate keeps for \
             its own catalogs: choose another"
        ));
    }
    Ok(())
}

/// The catalog name of a database declared by its path alone: its file stem when that is a
/// name [`check_name`] accepts (as the DuckDB CLI names an attached file), else `db`.
pub fn name_of_file(path: &Path) -> String {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    if check_name(stem).is_ok() {
        stem.to_owned()
    } else {
        "db".to_owned()
    }
}

impl Databases {
    /// One database, named by its file: what a server with a plain `--db PATH` serves.
    pub fn single(path: &Path) -> Databases {
        Databases {
            default: Database {
                name: name_of_file(path),
                path: path.to_path_buf(),
            },
            others: Vec::new(),
        }
    }

    /// The databases of `declarations`, the first the default: each path made absolute, each
    /// name checked, no name or file twice. At most one declaration may go without a name,
    /// and it must be the first (the caller puts the plain `--db PATH` first).
    pub fn new(declarations: &[Declaration]) -> Result<Databases, String> {
        let mut databases: Vec<Database> = Vec::with_capacity(declarations.len());
        for (at, declaration) in declarations.iter().enumerate() {
            let path = std::path::absolute(&declaration.path)
                .map_err(|e| format!("cannot resolve --db {}: {e}", declaration.path.display()))?;
            // DuckDB takes a path as text, and `allowed_paths` must name it exactly as ATTACH does.
            if path.to_str().is_none() {
                return Err(format!(
                    "--db {} is not valid UTF-8, which DuckDB needs: rename the file or a folder \
                     above it",
                    path.display()
                ));
            }
            let name = match &declaration.name {
                Some(name) => {
                    check_name(name)?;
                    name.clone()
                }
                None if at == 0 => name_of_file(&path),
                None => {
                    return Err(format!(
                        "--db {} has no name, and only the default database (one plain \
                         --db PATH) may go without one: write --db NAME={}",
                        declaration.path.display(),
                        declaration.path.display()
                    ));
                }
            };
            if let Some(other) = databases
                .iter()
                .find(|d| d.name.eq_ignore_ascii_case(&name))
            {
                return Err(format!(
                    "two databases are named {name:?} ({} and {}); DuckDB compares catalog \
                     names without regard to case: name one differently with --db NAME=PATH",
                    describe(other),
                    describe_declared(declaration, &name)
                ));
            }
            if let Some(other) = databases.iter().find(|d| same_file(&d.path, &path)) {
                return Err(format!(
                    "the databases {:?} and {name:?} are the same file ({}): declare it once",
                    other.name,
                    path.display()
                ));
            }
            databases.push(Database { name, path });
        }
        Databases::from_list(databases)
            .ok_or_else(|| "no database: pass --db PATH (or --db NAME=PATH)".to_owned())
    }

    /// `list` as databases, its first the default; `None` when it is empty.
    fn from_list(list: Vec<Database>) -> Option<Databases> {
        let mut list = list.into_iter();
        let default = list.next()?;
        Some(Databases {
            default,
            others: list.collect(),
        })
    }

    /// The default database: unqualified names are its own.
    pub fn default_database(&self) -> &Database {
        &self.default
    }

    /// Every database, the default first.
    pub fn iter(&self) -> AllDatabases<'_> {
        std::iter::once(&self.default).chain(self.others.iter())
    }

    /// How many.
    pub fn len(&self) -> usize {
        1 + self.others.len()
    }

    /// Never true: there is always the default; for clippy's sake.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The database named `name` (ASCII case-insensitively, as DuckDB compares catalogs).
    pub fn named(&self, name: &str) -> Option<&Database> {
        self.iter().find(|d| d.name.eq_ignore_ascii_case(name))
    }

    /// Every database's name, the default first.
    pub fn names(&self) -> Vec<String> {
        self.iter().map(|d| d.name.clone()).collect()
    }

    /// A list a worker was given on its command line, already decided by the server: kept
    /// as given (names checked again; empty refused).
    pub fn from_worker_args(databases: Vec<Database>) -> Result<Databases, String> {
        for database in &databases {
            check_name(&database.name)?;
        }
        Databases::from_list(databases)
            .ok_or_else(|| "a worker needs at least one --db NAME=PATH".to_owned())
    }
}

/// Every database, the default first ([`Databases::iter`]).
pub type AllDatabases<'a> =
    std::iter::Chain<std::iter::Once<&'a Database>, std::slice::Iter<'a, Database>>;

impl<'a> IntoIterator for &'a Databases {
    type Item = &'a Database;
    type IntoIter = AllDatabases<'a>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

fn describe(database: &Database) -> String {
    format!("--db {}={}", database.name, database.path.display())
}

fn describe_declared(declaration: &Declaration, name: &str) -> String {
    match &declaration.name {
        Some(_) => format!("--db {name}={}", declaration.path.display()),
        None => format!(
            "--db {}, named {name} after its file",
            declaration.path.display()
        ),
    }
}

/// Whether two paths name one file: equal as written, or (when both exist) the same inode.
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    if a == b {
        return true;
    }
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

impl fmt::Display for Databases {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.names().join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn declared(texts: &[&str]) -> Result<Databases, String> {
        let declarations: Vec<Declaration> = texts
            .iter()
            .map(|t| Declaration::parse(t))
            .collect::<Result<_, _>>()?;
        Databases::new(&declarations)
    }

    #[test]
    fn a_plain_path_is_named_by_its_file_and_a_named_one_by_its_name() {
        let dbs = declared(&["/data/cgm.duckdb", "pump=/data/pump-2026.duckdb"]).unwrap();
        assert_eq!(dbs.names(), ["cgm", "pump"]);
        assert_eq!(dbs.default_database().path, Path::new("/data/cgm.duckdb"));
        assert_eq!(
            dbs.named("PUMP").unwrap().path,
            Path::new("/data/pump-2026.duckdb")
        );
        // A stem that is no plain name, or DuckDB's own, is `db`, as before.
        assert_eq!(declared(&["/x/my data.duckdb"]).unwrap().names(), ["db"]);
        assert_eq!(declared(&["/x/memory.duckdb"]).unwrap().names(), ["db"]);
        assert_eq!(declared(&["/x/1st.db"]).unwrap().names(), ["db"]);
        // Text before `=` that is no name is part of the path.
        let odd = Declaration::parse("./a b=c.duckdb").unwrap();
        assert_eq!(odd.name, None);
        assert_eq!(odd.path, Path::new("./a b=c.duckdb"));
    }

    #[test]
    fn duckdbs_own_catalogs_and_duckgates_names_are_refused_whatever_their_case() {
        for name in [
            "system",
            "TEMP",
            "Memory",
            "main",
            "information_schema",
            "pg_catalog",
            "duckgate_private_x",
        ] {
            let error = declared(&[&format!("{name}=/x/a.duckdb")]).unwrap_err();
            assert!(error.contains(name), "{error}");
        }
        // A name may not start with a digit, so `1st=…` is a path.
        assert_eq!(Declaration::parse("1st=/x/a.duckdb").unwrap().name, None);
        assert!(check_name(&"x".repeat(MAX_NAME_BYTES + 1)).is_err());
        assert!(check_name(&"x".repeat(MAX_NAME_BYTES)).is_ok());
    }

    #[test]
    fn two_databases_with_one_name_or_one_file_are_refused() {
        let error = declared(&["/x/cgm.duckdb", "CGM=/y/other.duckdb"]).unwrap_err();
        assert!(error.contains("named \"CGM\""), "{error}");
        assert!(
            error.contains("named cgm after its file") || error.contains("--db cgm="),
            "{error}"
        );
        let error = declared(&["a=/x/one.duckdb", "b=/x/one.duckdb"]).unwrap_err();
        assert!(error.contains("same file"), "{error}");
        let error = declared(&["a=/x/one.duckdb", "/x/two.duckdb"]).unwrap_err();
        assert!(error.contains("has no name"), "{error}");
        assert!(declared(&[]).is_err());
        assert!(Declaration::parse("pump=").is_err());
    }

    #[test]
    fn a_workers_argument_keeps_an_equals_sign_in_the_path() {
        let db = Database {
            name: "pump".into(),
            path: PathBuf::from("/data/a=b.duckdb"),
        };
        let arg = db.to_arg();
        assert_eq!(Database::parse_named(arg.to_str().unwrap()).unwrap(), db);
        assert_eq!(db.wal(), Path::new("/data/a=b.duckdb.wal"));
        assert!(Database::parse_named("system=/x").is_err());
    }
}

//! The operator's declared folders (`--files NAME=DIR`, `[files]` in the config file): folders of
//! Parquet, CSV and JSON files an agent may read by their name, `NAME/…`.
//!
//! Who holds the line, each alone (SECURITY.md, "Declared folders"):
//! - the kernel: landlock grants a worker `ReadFile` and `ReadDir` beneath each folder, and
//!   nothing else new (`sandbox::confine::landlock`);
//! - DuckDB: the only file system SQL can reach maps `NAME/…` to its folder, read-only, regular
//!   files only, refusing `..` and symbolic links that lead out
//!   (`vendor/libduckdb-sys/duckgate/folders.cpp`); DuckDB's local file system stays switched off
//!   and `allowed_directories` holds the folders' names (`engine`);
//! - the plan check: every file DuckDB bound is in a folder once its symbolic links are resolved,
//!   and a query binds at most `--files-max-count` files of at most `--files-max-bytes` together
//!   (`engine::plan_check`);
//! - the two walks of the SQL: the file readers only where folders are declared, and a relation
//!   written as a file only when it names one (`validate`).
//!
//! Replies name files as the agent does, `NAME/…`: the host path behind a name never leaves the
//! worker.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One declared folder: its name, and the directory it stands for (absolute, symbolic links
/// resolved).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeclaredFolder {
    /// What the agent writes before the slash.
    pub name: String,
    /// The directory on the host; never shown to the agent.
    pub dir: PathBuf,
}

/// The default `--files-max-count`: the files one query may bind. A million small files would
/// take the reader longer to list than to read.
pub const DEFAULT_MAX_FILES: u64 = 10_000;

/// The default `--files-max-bytes`: what the files one query binds may hold together (64 GiB).
pub const DEFAULT_MAX_FILE_BYTES: u64 = 64 << 30;

/// The longest folder name.
const MAX_NAME_CHARS: usize = 64;

/// What the workers need to know of the folders: the list, and the caps on one query.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FolderRules {
    /// The declared folders, validated ([`validate`]).
    pub folders: Vec<DeclaredFolder>,
    /// The most files one query may bind (`--files-max-count`).
    pub max_files: u64,
    /// The most bytes the files one query binds may hold together (`--files-max-bytes`).
    pub max_bytes: u64,
    /// The database file and its WAL: no folder serves them by any name. A hard link in a
    /// folder is the same inode under a name landlock grants (it grants by path), and reading
    /// it would give SQL the database's raw bytes, hidden tables and columns included, and drop
    /// the worker's lock on the file when it is closed.
    pub database_files: Vec<PathBuf>,
}

impl FolderRules {
    /// The folders' names, as the walks of the SQL take them.
    pub fn names(&self) -> Vec<String> {
        self.folders.iter().map(|f| f.name.clone()).collect()
    }
}

/// `NAME=DIR` as written on the command line (not yet checked against the disk).
pub fn parse_declaration(text: &str) -> Result<(String, PathBuf), String> {
    let Some((name, dir)) = text.split_once('=') else {
        return Err(format!(
            "{text}: a folder is declared as NAME=DIR (e.g. exports=~/health/exports)"
        ));
    };
    Ok((name.to_owned(), PathBuf::from(dir)))
}

/// A database a folder may not hold: its name (for the message), its file and its
/// write-ahead log, as the server declared them.
#[derive(Debug, Clone, Copy)]
pub struct DatabaseFiles<'a> {
    /// The database's name.
    pub name: &'a str,
    /// Its file.
    pub file: &'a Path,
    /// Its write-ahead log (which may not exist yet).
    pub wal: &'a Path,
}

/// Check the declared folders at start-up and resolve them: each name a plain identifier
/// (letters, digits, `_`, not starting with a digit; unique, case-insensitively), each directory
/// an existing directory (made absolute with its symbolic links resolved) whose path DuckDB's
/// glob reads literally (no `*`, `?`, `[`, `{`), containing neither any declared database's file
/// nor its WAL (`databases`), nor the workers' temporary root, and not inside that root. A
/// folder holding a database would let SQL read its raw bytes, hidden tables and columns
/// included, and closing a descriptor of the file would drop the worker's lock on it.
pub fn validate(
    declared: &[(String, PathBuf)],
    databases: &[DatabaseFiles<'_>],
    temp_root: Option<&Path>,
) -> Result<Vec<DeclaredFolder>, String> {
    let mut folders: Vec<DeclaredFolder> = Vec::new();
    let database_files: Vec<(PathBuf, String)> = databases
        .iter()
        .flat_map(|database| {
            [
                (
                    resolved(database.file),
                    format!("the database file of {}", database.name),
                ),
                (
                    resolved(database.wal),
                    format!("the WAL of the database {}", database.name),
                ),
            ]
        })
        .collect();
    let temp = temp_root.map(resolved);
    for (name, dir) in declared {
        check_name(name)?;
        if folders.iter().any(|f| f.name.eq_ignore_ascii_case(name)) {
            return Err(format!(
                "--files {name}=…: the name {name} is declared twice"
            ));
        }
        let canonical = std::fs::canonicalize(dir).map_err(|e| {
            format!(
                "--files {name}={}: cannot use this folder: {e}",
                dir.display()
            )
        })?;
        if !canonical.is_dir() {
            return Err(format!("--files {name}={}: not a directory", dir.display()));
        }
        let Some(text) = canonical.to_str() else {
            return Err(format!(
                "--files {name}={}: the path is not valid UTF-8",
                dir.display()
            ));
        };
        if text.contains(['*', '?', '[', '{']) {
            return Err(format!(
                "--files {name}={}: the path holds a glob character (* ? [ {{), which DuckDB's \
                 file patterns would read as one; move or link the folder to a plain path",
                dir.display()
            ));
        }
        for (file, what) in &database_files {
            if file.starts_with(&canonical) {
                return Err(format!(
                    "--files {name}={}: the folder holds {what}; SQL could then read the \
                     database's raw bytes, hidden tables and columns included. Declare a \
                     folder that holds only the data files (e.g. a subfolder)",
                    dir.display()
                ));
            }
        }
        if let Some(temp) = &temp
            && (temp.starts_with(&canonical) || canonical.starts_with(temp))
        {
            return Err(format!(
                "--files {name}={}: the folder overlaps the workers' temporary directory {} \
                 (--temp-dir); declare another folder or pass another --temp-dir",
                dir.display(),
                temp.display()
            ));
        }
        folders.push(DeclaredFolder {
            name: name.clone(),
            dir: canonical,
        });
    }
    Ok(folders)
}

/// `path` with its symbolic links resolved as far as it exists (a WAL may not exist yet: its
/// folder's resolution and its name).
fn resolved(path: &Path) -> PathBuf {
    if let Ok(canonical) = std::fs::canonicalize(path) {
        return canonical;
    }
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => std::fs::canonicalize(parent)
            .map(|p| p.join(name))
            .unwrap_or_else(|_| path.to_path_buf()),
        _ => path.to_path_buf(),
    }
}

fn check_name(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let plain = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !plain || name.chars().count() > MAX_NAME_CHARS {
        return Err(format!(
            "--files {name}=…: a folder's name is what the agent writes before the slash \
             (exports/readings.csv): letters, digits and _, not starting with a digit, at most \
             {MAX_NAME_CHARS} characters"
        ));
    }
    Ok(())
}

/// Where a file DuckDB bound (`NAME/…`, as the plan holds it) is on the host, if it is inside a
/// declared folder once every symbolic link is resolved, a regular file and not the database
/// (or its WAL) under another name, with its size; why not, otherwise. The plan check's
/// decision, from the file's name as DuckDB bound it, never from the SQL text.
pub fn locate(rules: &FolderRules, bound: &str) -> Result<(PathBuf, u64), String> {
    let Some(folder) = rules.folders.iter().find(|f| {
        bound.len() > f.name.len() + 1
            && bound.starts_with(f.name.as_str())
            && bound.as_bytes().get(f.name.len()) == Some(&b'/')
    }) else {
        return Err(format!("'{bound}' is not in a declared folder"));
    };
    let relative = &bound[folder.name.len() + 1..];
    if Path::new(relative).components().any(|c| {
        !matches!(
            c,
            std::path::Component::Normal(_) | std::path::Component::CurDir
        )
    }) {
        return Err(format!(
            "'{bound}': a path in a declared folder may not hold '..' or start with '/'"
        ));
    }
    let host = folder.dir.join(relative);
    let real = std::fs::canonicalize(&host).map_err(|e| format!("'{bound}': {e}"))?;
    if !real.starts_with(&folder.dir) {
        return Err(format!(
            "'{bound}' is a symbolic link that leads out of the folder {}",
            folder.name
        ));
    }
    let meta = std::fs::metadata(&real).map_err(|e| format!("'{bound}': {e}"))?;
    if !meta.is_file() {
        return Err(format!(
            "'{bound}' is not a regular file (a FIFO, a device or a directory)"
        ));
    }
    if is_database_file(rules, &meta) {
        return Err(format!(
            "'{bound}' is the database file (or its WAL) under another name, a hard link; the \
             database is read through its tables"
        ));
    }
    Ok((real, meta.len()))
}

/// Whether `meta` is the database file or its WAL: the same device and inode, whatever the
/// name. Asked of the kernel each time, since a WAL comes and goes.
fn is_database_file(rules: &FolderRules, meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    rules.database_files.iter().any(|file| {
        std::fs::metadata(file).is_ok_and(|db| db.dev() == meta.dev() && db.ino() == meta.ino())
    })
}

/// One file of a declared folder, as `list_files` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FolderFile {
    /// `NAME/…`, as the agent names it.
    pub path: String,
    /// What DuckDB's readers take it for by its name ([`format_of`]).
    pub format: &'static str,
    /// Its size in bytes.
    pub size_bytes: u64,
    /// When it was last modified, in seconds since 1970 (UTC).
    pub modified_unix: i64,
}

/// The files of the declared folders, as far as one walk went.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Listing {
    /// In the order of their paths.
    pub files: Vec<FolderFile>,
    /// The walk looked at `max_entries` entries and stopped: there may be more.
    pub stopped: bool,
}

/// What DuckDB's readers take a file for by its name (a replacement scan, `FROM 'x.csv'`):
/// `parquet`, `csv` (also `.tsv`), `json` (also `.jsonl`, `.ndjson`), each also compressed
/// (`.gz`, `.zst`), or `other`.
pub fn format_of(path: &str) -> &'static str {
    let lower = path.to_ascii_lowercase();
    let name = lower
        .strip_suffix(".gz")
        .or_else(|| lower.strip_suffix(".zst"))
        .unwrap_or(&lower);
    let extension = name.rsplit_once('.').map_or("", |(_, extension)| extension);
    match extension {
        "parquet" | "parq" => "parquet",
        "csv" | "tsv" => "csv",
        "json" | "jsonl" | "ndjson" => "json",
        _ => "other",
    }
}

/// The regular files of the declared folders (only the one named `only`, when given), as their
/// readers may read them: a symbolic link only when it resolves to a regular file inside its
/// folder (a directory behind a link is never entered), the database and its WAL left out
/// whatever their name (a hard link), and every file `hidden` says is hidden left out. The walk
/// looks at no more than `max_entries` entries of the folders. No host path leaves it: paths are
/// `NAME/…`.
pub fn list_files(
    rules: &FolderRules,
    only: Option<&str>,
    hidden: impl Fn(&str) -> bool,
    max_entries: usize,
) -> Listing {
    let mut listing = Listing::default();
    let mut looked = 0usize;
    for folder in rules
        .folders
        .iter()
        .filter(|f| only.is_none_or(|name| f.name == name))
    {
        // Directories still to read: the host directory and its `NAME/…` path.
        let mut pending = vec![(folder.dir.clone(), folder.name.clone())];
        while let Some((dir, named)) = pending.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                looked += 1;
                if looked > max_entries {
                    listing.stopped = true;
                    break;
                }
                let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                    // DuckDB names files by UTF-8 text: a name that is not cannot be asked for.
                    continue;
                };
                let path = format!("{named}/{name}");
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                if kind.is_dir() {
                    pending.push((entry.path(), path));
                    continue;
                }
                // As the plan check would judge the file if a query named it.
                let Ok((_, size)) = locate(rules, &path) else {
                    continue;
                };
                if hidden(&path) {
                    continue;
                }
                let modified_unix = std::fs::metadata(entry.path())
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .and_then(|d| i64::try_from(d.as_secs()).ok())
                    .unwrap_or(0);
                listing.files.push(FolderFile {
                    format: format_of(&path),
                    path,
                    size_bytes: size,
                    modified_unix,
                });
            }
            if listing.stopped {
                break;
            }
        }
        if listing.stopped {
            break;
        }
    }
    listing.files.sort_by(|a, b| a.path.cmp(&b.path));
    listing
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_declaration_is_name_equals_directory() {
        assert_eq!(
            parse_declaration("exports=/data/x=y").unwrap(),
            ("exports".into(), PathBuf::from("/data/x=y"))
        );
        assert!(parse_declaration("/data/exports").is_err());
    }

    #[test]
    fn names_are_identifiers_and_folders_may_not_hold_any_database() {
        let root = std::env::temp_dir().join(format!("duckgate-folders-{}", std::process::id()));
        let data = root.join("exports");
        let pump_dir = root.join("pump");
        std::fs::create_dir_all(&data).unwrap();
        std::fs::create_dir_all(&pump_dir).unwrap();
        let db = root.join("cgm.duckdb");
        std::fs::write(&db, b"").unwrap();
        let pump = pump_dir.join("pump.duckdb");
        std::fs::write(&pump, b"").unwrap();
        let (db_wal, pump_wal) = (
            root.join("cgm.duckdb.wal"),
            pump_dir.join("pump.duckdb.wal"),
        );
        let cgm_files = DatabaseFiles {
            name: "cgm",
            file: &db,
            wal: &db_wal,
        };
        let one = [cgm_files];
        let two = [
            cgm_files,
            DatabaseFiles {
                name: "pump",
                file: &pump,
                wal: &pump_wal,
            },
        ];
        let ok = validate(&[("exports".into(), data.clone())], &two, None).unwrap();
        assert_eq!(ok[0].dir, std::fs::canonicalize(&data).unwrap());
        for bad in ["", "1x", "a-b", "a/b", "a.b"] {
            assert!(
                validate(&[(bad.into(), data.clone())], &one, None).is_err(),
                "{bad}"
            );
        }
        let holds_db = validate(&[("all".into(), root.clone())], &one, None).unwrap_err();
        assert!(holds_db.contains("the database file of cgm"), "{holds_db}");
        // The second database's folder is refused as the default's is: its raw bytes would
        // show its hidden columns.
        let holds_pump = validate(&[("pumps".into(), pump_dir.clone())], &two, None).unwrap_err();
        assert!(
            holds_pump.contains("the database file of pump"),
            "{holds_pump}"
        );
        assert!(validate(&[("pumps".into(), pump_dir.clone())], &one, None).is_ok());
        let twice = validate(
            &[("x".into(), data.clone()), ("X".into(), data.clone())],
            &one,
            None,
        );
        assert!(twice.is_err());
        let temp = validate(&[("x".into(), data.clone())], &one, Some(&data)).unwrap_err();
        assert!(temp.contains("temporary"), "{temp}");
        assert!(validate(&[("x".into(), root.join("missing"))], &one, None).is_err());
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_bound_file_is_located_inside_its_folder_or_refused() {
        let root =
            std::env::temp_dir().join(format!("duckgate-folders-loc-{}", std::process::id()));
        let data = root.join("exports");
        std::fs::create_dir_all(&data).unwrap();
        std::fs::write(data.join("a.csv"), b"x\n1\n").unwrap();
        std::fs::write(root.join("secret.csv"), b"x\n1\n").unwrap();
        std::os::unix::fs::symlink(root.join("secret.csv"), data.join("out.csv")).unwrap();
        let db = root.join("cgm.duckdb");
        std::fs::write(&db, b"raw bytes").unwrap();
        std::fs::hard_link(&db, data.join("db.csv")).unwrap();
        std::fs::hard_link(root.join("secret.csv"), data.join("hard.csv")).unwrap();
        let folders = FolderRules {
            folders: vec![DeclaredFolder {
                name: "exports".into(),
                dir: std::fs::canonicalize(&data).unwrap(),
            }],
            database_files: vec![db.clone(), root.join("cgm.duckdb.wal")],
            ..FolderRules::default()
        };
        assert_eq!(locate(&folders, "exports/a.csv").unwrap().1, 4);
        // A hard link is the file under a name inside the folder; one of the database is not.
        assert_eq!(locate(&folders, "exports/hard.csv").unwrap().1, 4);
        assert!(
            locate(&folders, "exports/db.csv")
                .unwrap_err()
                .contains("the database file")
        );
        assert!(
            locate(&folders, "exports/out.csv")
                .unwrap_err()
                .contains("leads out")
        );
        assert!(locate(&folders, "exports/../secret.csv").is_err());
        assert!(locate(&folders, "other/a.csv").is_err());
        assert!(locate(&folders, "/etc/passwd").is_err());
        assert!(locate(&folders, "exportsa.csv").is_err());
        std::fs::remove_dir_all(&root).unwrap();
    }
}

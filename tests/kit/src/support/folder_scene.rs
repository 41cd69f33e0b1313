//! The scene of the declared-folder tests: a DuckDB database and, beside it, a folder of files
//! declared as `exports` (`duckgate serve --db DB --files exports=DIR`), whose Parquet, CSV and
//! JSON files in-process DuckDB writes.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use duckgate::mcp_client::McpClient;

use super::{TempDir, exe, make_db};

/// A database and a declared folder `exports` beside it, in a directory removed with the scene.
pub struct FolderScene {
    _dir: TempDir,
    /// The directory holding the database and the folder: what the oracle resolves
    /// `exports/…` against.
    pub root: PathBuf,
    /// The database file.
    pub db: PathBuf,
    /// The folder, declared as `exports`.
    pub exports: PathBuf,
}

impl FolderScene {
    /// `root/DB_FILE` made from `db_sql`, and the folder `root/exports` holding the empty
    /// folders `subfolders` (their files are the test's to write).
    pub fn new(tag: &str, db_file: &str, db_sql: &str, subfolders: &[&str]) -> FolderScene {
        let dir = TempDir::new(tag);
        let root = dir.path().to_path_buf();
        let db = root.join(db_file);
        make_db(&db, db_sql);
        let exports = exports_folder(&root, subfolders);
        FolderScene {
            _dir: dir,
            root,
            db,
            exports,
        }
    }

    /// `duckgate serve --db DB --files exports=EXPORTS extra…` with the test switch's `bypass`
    /// layers off (none when empty), initialised. Server logs go to the test's stderr only when
    /// `DUCKGATE_TEST_LOGS` is set.
    pub async fn serve(&self, bypass: &str, extra: &[&str]) -> McpClient {
        let mut command = tokio::process::Command::new(exe());
        command.arg("serve").arg("--db").arg(&self.db);
        command.args(files_flag(&self.exports)).args(extra);
        if !bypass.is_empty() {
            command.env(duckgate::sandbox::bypass::ENV_VAR, bypass);
        }
        let stderr = if std::env::var_os("DUCKGATE_TEST_LOGS").is_some() {
            Stdio::inherit()
        } else {
            Stdio::null()
        };
        McpClient::spawn_command(command, stderr)
            .await
            .expect("duckgate serve initialises")
    }

    /// [`write_files`] into this scene's folder.
    pub fn write_files(&self, sql: &str) {
        write_files(&self.exports, sql);
    }
}

/// The folder `parent/exports`, created with the empty folders `subfolders` in it.
pub fn exports_folder(parent: &Path, subfolders: &[&str]) -> PathBuf {
    let exports = parent.join("exports");
    std::fs::create_dir_all(&exports).unwrap();
    for sub in subfolders {
        std::fs::create_dir_all(exports.join(sub)).unwrap();
    }
    exports
}

/// Run `sql` on an in-memory DuckDB, `{exports}` standing for the folder's host path: how the
/// tests write the folder's files (`COPY … TO '{exports}/a.parquet' (FORMAT parquet)`).
pub fn write_files(exports: &Path, sql: &str) {
    let sql = sql.replace("{exports}", &exports.display().to_string());
    let conn = duckdb::Connection::open_in_memory().unwrap();
    conn.execute_batch(&sql)
        .unwrap_or_else(|e| panic!("writing the folder's files: {e}\n{sql}"));
}

/// `--files exports=EXPORTS`: the folder declared as `exports`.
pub fn files_flag(exports: &Path) -> [String; 2] {
    [
        "--files".to_owned(),
        format!("exports={}", exports.display()),
    ]
}

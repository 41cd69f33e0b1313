//! A new database is written beside its final path and renamed into place at the end, so a
//! failure never leaves a half-written file where a reader would take it for the real one
//! (`duckgate demo`'s database and `duckgate import`'s).

use std::path::{Path, PathBuf};

use crate::protocol::databases::wal_path;

/// Run `write` on `<path>.partial` (removed first), then rename that file to `path`;
/// `move_failed` turns a failed rename into the caller's error. On any failure the partial
/// file and its WAL are removed.
pub(crate) fn write_beside_then_move<T, E>(
    path: &Path,
    write: impl FnOnce(&Path) -> Result<T, E>,
    move_failed: impl FnOnce(std::io::Error) -> E,
) -> Result<T, E> {
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    let partial = PathBuf::from(partial);
    let _ = std::fs::remove_file(&partial);
    let result = write(&partial).and_then(|written| {
        std::fs::rename(&partial, path).map_err(move_failed)?;
        Ok(written)
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&partial);
        let _ = std::fs::remove_file(wal_path(&partial));
    }
    result
}
